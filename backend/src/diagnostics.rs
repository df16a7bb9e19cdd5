//! Located errors for MIR input, rendered for people.
//!
//! Every error names the file, line and column, says what was expected and what was
//! found, and carries the source line so the renderer can show it.

use std::fmt;

/// One located error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// Where in the program, for verifier errors: `function @f, bb.2, instruction 3`.
    pub context: Option<String>,
    /// The text of the line, for rendering.
    pub source_line: Option<String>,
}

impl MirError {
    /// An error at `line`/`column` of `text` (the whole file).
    pub fn at(file: &str, text: &str, line: usize, column: usize, message: impl Into<String>) -> MirError {
        let line = line.max(1);
        MirError {
            file: file.to_string(),
            line,
            column: column.max(1),
            message: message.into(),
            context: None,
            source_line: text.lines().nth(line - 1).map(str::to_string),
        }
    }

    /// The error as text: `file:line:col: error: message`, the context, then the
    /// source line with a caret.
    pub fn render(&self) -> String {
        let mut out = format!("{self}\n");
        if let Some(context) = &self.context {
            out.push_str(&format!("  in {context}\n"));
        }
        if let Some(source) = &self.source_line {
            let number = self.line.to_string();
            let pad = " ".repeat(number.len());
            let caret_at: String = source.chars().take(self.column.saturating_sub(1)).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
            out.push_str(&format!("{pad} |\n{number} | {source}\n{pad} | {caret_at}^\n"));
        }
        out
    }
}

impl fmt::Display for MirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: error: {}", self.file, self.line, self.column, self.message)
    }
}

impl std::error::Error for MirError {}
