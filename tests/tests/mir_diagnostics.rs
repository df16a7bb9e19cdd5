//! Malformed MIR (`tests/mir-errors/*.mir`) and the diagnostics it must get (mir-spec §5).
//!
//! Each case file starts with comment lines: a one-line description of the mistake, then
//! one or more expectations
//!
//! ```text
//! # ERROR: 12:9: unknown opcode `FADDD`
//! ```
//!
//! meaning that some reported error is at exactly that line and column (1-based file
//! positions) and its message contains the text. A case whose current diagnostic is known
//! to be wrong keeps the *correct* expectation and says so on a `# KNOWN-BUG: why` line:
//! it must still be rejected like every other case, and it must not match yet; once it
//! does, the test asks for the `KNOWN-BUG` line to be removed.
//!
//! The parser stops at the first error; the verifier, run only on input that parses,
//! reports all of them. Every case is also run through `ptxc run-pass verify` and
//! `ptxc run-pass machine-cp` (which verifies its input first), and every
//! case truncated at every 7th byte must be rejected or accepted without a panic.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use backend::diagnostics::MirError;
use backend::mir::{parser, verifier};

struct Case {
    path: PathBuf,
    /// The name used in diagnostics: `tests/mir-errors/<file>`.
    name: String,
    text: String,
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("mir-errors");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let name = format!("tests/mir-errors/{}", path.file_name().unwrap().to_string_lossy());
            Case { path, name, text }
        })
        .collect()
}

#[derive(Debug)]
struct Expect {
    line: usize,
    column: usize,
    text: String,
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.text)
    }
}

/// The leading comment lines of a case.
fn header(text: &str) -> impl Iterator<Item = &str> {
    text.lines().take_while(|l| l.starts_with('#'))
}

/// The `# ERROR: LINE:COL: TEXT` lines of a case's header.
fn expectations(case: &Case) -> Result<Vec<Expect>, String> {
    header(&case.text)
        .filter_map(|l| l.strip_prefix("# ERROR:"))
        .map(|rest| {
            let bad = || format!("{}: malformed expectation `# ERROR:{rest}` (want `# ERROR: LINE:COL: TEXT`)", case.name);
            let mut parts = rest.trim_start().splitn(3, ':');
            let line = parts.next().and_then(|s| s.trim().parse().ok()).ok_or_else(bad)?;
            let column = parts.next().and_then(|s| s.trim().parse().ok()).ok_or_else(bad)?;
            let text = parts.next().map(str::trim).filter(|t| !t.is_empty()).ok_or_else(bad)?;
            Ok(Expect { line, column, text: text.to_string() })
        })
        .collect()
}

/// The reason on a `# KNOWN-BUG:` line, if the case has one.
fn known_bug(case: &Case) -> Option<&str> {
    header(&case.text).find_map(|l| l.strip_prefix("# KNOWN-BUG:")).map(str::trim)
}

/// The parser's error, or every error of the verifier.
fn diagnose(text: &str, name: &str) -> Vec<MirError> {
    let tables = tables::nvptx();
    match parser::parse_module(text, name, tables) {
        Err(e) => vec![e],
        Ok(module) => verifier::verify_module(&module, tables, verifier::Source { file: name, text }),
    }
}

fn matches(expect: &Expect, error: &MirError) -> bool {
    error.line == expect.line && error.column == expect.column && error.message.contains(&expect.text)
}

fn listing(errors: &[MirError]) -> String {
    errors.iter().map(|e| format!("\n      {e}")).collect()
}

#[test]
fn there_are_enough_annotated_cases() {
    let cases = cases();
    assert!(cases.len() >= 30, "only {} case files in tests/mir-errors", cases.len());
    let mut problems = Vec::new();
    for case in &cases {
        match expectations(case) {
            Err(e) => problems.push(e),
            Ok(expects) if expects.is_empty() => problems.push(format!("{}: no `# ERROR: LINE:COL: TEXT` line", case.name)),
            Ok(_) => {}
        }
        if header(&case.text).next().is_none_or(|l| l.starts_with("# ERROR:") || l.starts_with("# KNOWN-BUG:")) {
            problems.push(format!("{}: the first line must describe the mistake", case.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_case_gets_its_expected_diagnostics() {
    let mut failures = Vec::new();
    let mut known = Vec::new();
    for case in cases() {
        let Ok(expects) = expectations(&case) else { continue };
        let errors = diagnose(&case.text, &case.name);
        let lines: Vec<&str> = case.text.lines().collect();

        if errors.is_empty() {
            failures.push(format!("{}: accepted, but it is malformed (expected {})", case.name, expects.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")));
            continue;
        }
        for e in &errors {
            if e.file != case.name {
                failures.push(format!("{}: error names file `{}`: {e}", case.name, e.file));
            }
            let actual = e.line.checked_sub(1).and_then(|i| lines.get(i)).copied();
            if actual.is_none() || e.source_line.as_deref() != actual {
                failures.push(format!(
                    "{}: error at line {} carries source line {:?}, but the file's line is {:?}: {e}",
                    case.name, e.line, e.source_line, actual
                ));
            }
        }

        let missing: Vec<&Expect> = expects.iter().filter(|x| !errors.iter().any(|e| matches(x, e))).collect();
        match (known_bug(&case), missing.is_empty()) {
            (None, false) => failures.push(format!(
                "{}: no reported error matches\n    {}\n  reported:{}",
                case.name,
                missing.iter().map(|x| format!("# ERROR: {x}")).collect::<Vec<_>>().join("\n    "),
                listing(&errors)
            )),
            (Some(why), true) => failures.push(format!(
                "{}: matches its expectations now; the known bug ({why}) is fixed: remove its `# KNOWN-BUG:` line",
                case.name
            )),
            (Some(why), false) => known.push(format!("{}: {why}{}", case.name, listing(&errors))),
            (None, true) => {}
        }

        // The command line: exit code 1, nothing on stdout, each error located in stderr;
        // the same from a pass that rewrites its input (run-pass verifies the input
        // first, so no pass sees MIR that breaks the verifier's rules).
        let path = case.path.to_string_lossy().to_string();
        for command in [&["run-pass", "verify"][..], &["run-pass", "machine-cp", "--sm", "80"][..]] {
            let shown = format!("ptxc {}", command.join(" "));
            let out = backend::cli::run(["ptxc"].iter().chain(command).copied().chain([path.as_str()]));
            if out.code != 1 {
                failures.push(format!("{}: `{shown}` exited with {} (expected 1)\n{}", case.name, out.code, out.stderr));
            }
            if !out.stdout.is_empty() {
                failures.push(format!("{}: `{shown}` printed on stdout:\n{}", case.name, out.stdout));
            }
            for e in &errors {
                let located = format!("{path}:{}:{}: error: {}", e.line, e.column, e.message);
                if !out.stderr.contains(&located) {
                    failures.push(format!("{}: stderr of `{shown}` lacks `{located}`:\n{}", case.name, out.stderr));
                }
            }
        }
    }
    if !known.is_empty() {
        eprintln!("known wrong diagnostics (cases marked KNOWN-BUG):\n  {}", known.join("\n  "));
    }
    assert!(failures.is_empty(), "{} problem(s):\n  {}", failures.len(), failures.join("\n  "));
}

#[test]
fn truncated_cases_never_panic() {
    let mut panics = Vec::new();
    for case in cases() {
        let mut cuts: Vec<usize> = (0..=case.text.len()).step_by(7).collect();
        cuts.push(case.text.len());
        let mut last = None;
        for mut cut in cuts {
            while !case.text.is_char_boundary(cut) {
                cut -= 1;
            }
            if last == Some(cut) {
                continue;
            }
            last = Some(cut);
            let text = &case.text[..cut];
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                for e in diagnose(text, &case.name) {
                    let _ = e.render();
                }
            }));
            if outcome.is_err() {
                panics.push(format!("{} truncated to {cut} bytes", case.name));
            }
        }
    }
    assert!(panics.is_empty(), "the front end panicked on:\n  {}", panics.join("\n  "));
}
