//! Typed errors of the description loader, located at a file, line and column.
//!
//! The same error feeds two audiences: `codegen-macros` turns it into a
//! `compile_error!` whose text starts with `file:line:col`, and the runtime loader
//! (`ptxc --target-desc DIR`) renders it with miette, source line included.

use miette::{Diagnostic, NamedSource, SourceSpan};
use std::fmt;
use thiserror::Error;

/// What went wrong, without where.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DescErrorKind {
    #[error("cannot read description file: {0}")]
    Io(String),
    #[error("invalid YAML: {0}")]
    Yaml(String),
    #[error("rule syntax error: expected {expected}, found {found}")]
    RuleSyntax { expected: String, found: String },
    #[error("unknown {what} `{name}`{}", suggestion_suffix(.suggestions))]
    Unknown { what: &'static str, name: String, suggestions: Vec<String> },
    #[error("duplicate {what} `{name}` (first defined at {first})")]
    Duplicate { what: &'static str, name: String, first: String },
    #[error("{0}")]
    Invalid(String),
    #[error("rule conflicts with the rule at {other}, and neither is more specific: on {sm}, {op} on {ty} would be both `{this_action}` and `{other_action}` (this rule applies on {this_sms}; the other on {other_sms})")]
    Conflict {
        other: String,
        sm: String,
        op: String,
        ty: String,
        this_action: String,
        other_action: String,
        this_sms: String,
        other_sms: String,
    },
    #[error("rule never applies: {0}")]
    NeverApplies(String),
    #[error("cycle in the SM graph: {0}")]
    SmCycle(String),
}

fn suggestion_suffix(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", suggestions.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
    }
}

/// An error with its place in a description file.
#[derive(Debug, Clone)]
pub struct DescError {
    pub kind: DescErrorKind,
    /// The file's display path (relative to the repository root where known).
    pub file: String,
    /// 1-based line and column.
    pub line: usize,
    pub column: usize,
    /// The file's text, for rendering the source line.
    pub text: Option<std::sync::Arc<str>>,
}

impl fmt::Display for DescError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.kind)
    }
}

impl DescError {
    pub fn new(kind: DescErrorKind, file: &str, line: usize, column: usize) -> DescError {
        DescError { kind, file: file.to_string(), line: line.max(1), column: column.max(1), text: None }
    }

    /// Byte offset of the error position in `text`.
    fn offset(&self, text: &str) -> usize {
        let mut offset = 0;
        for (index, line) in text.split_inclusive('\n').enumerate() {
            if index + 1 == self.line {
                let column_bytes: usize =
                    line.chars().take(self.column.saturating_sub(1)).map(char::len_utf8).sum();
                return (offset + column_bytes).min(text.len());
            }
            offset += line.len();
        }
        text.len()
    }
}

impl std::error::Error for DescError {}

/// A renderable form of a [`DescError`] with its source text attached.
#[derive(Debug, Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(code(target_desc))]
pub struct RenderedDescError {
    pub message: String,
    #[source_code]
    pub source_code: NamedSource<String>,
    #[label("here")]
    pub span: SourceSpan,
}

impl DescError {
    /// Attaches the source text so the error renders with its line under miette.
    pub fn to_diagnostic(&self) -> RenderedDescError {
        let text = self.text.as_deref().unwrap_or("").to_string();
        let offset = self.offset(&text);
        RenderedDescError {
            message: self.to_string(),
            source_code: NamedSource::new(self.file.clone(), text),
            span: SourceSpan::from((offset, 0)),
        }
    }
}

pub type DescResult<T> = Result<T, DescError>;

/// Up to three known names closest to `name`, for "did you mean" hints.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .map(|c| (strsim::normalized_damerau_levenshtein(&name.to_ascii_lowercase(), &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(b.1)));
    scored.into_iter().take(3).map(|(_, c)| c.to_string()).collect()
}

/// ` (did you mean `a`, `b`?)` for the names closest to `name`, or nothing. `style`
/// writes each suggestion: `|n| format!("`{n}`")`, `|n| format!("@{n}")`.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>, style: impl Fn(&str) -> String) -> String {
    let suggestions = closest(name, candidates);
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", suggestions.iter().map(|s| style(s)).collect::<Vec<_>>().join(", "))
    }
}
