//! Assembling probe kernels with ptxas: many kernels per call, failures attributed.
//!
//! Kernels are concatenated into one PTX module per `.version` (a kernel must be
//! assembled at the version the emitter chose for it alone, or a missing feature
//! requirement would hide behind a neighbour's higher version). ptxas names the line
//! of each error, and each kernel's line range names the kernel; those kernels are
//! assembled again alone for their own message, and the rest again together. A failure
//! that names no line is bisected. Usually one call per `.version` suffices.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A PTX module body (globals and kernels, without the header) to assemble.
pub struct Unit<'a> {
    pub id: usize,
    pub body: &'a str,
}

/// Runs ptxas for one SM.
pub struct Assembler<'a> {
    pub ptxas: &'a Path,
    /// `sm_80`
    pub sm: &'a str,
    pub runs: usize,
}

static SERIAL: AtomicUsize = AtomicUsize::new(0);

/// Why a ptxas call failed.
enum Run {
    /// ptxas rejected the module; its diagnostics.
    Rejected(String),
    /// ptxas could not be run (or its input not written).
    NotRun(String),
}

struct TempFiles(Vec<PathBuf>);

impl Drop for TempFiles {
    fn drop(&mut self) {
        for f in &self.0 {
            let _ = std::fs::remove_file(f);
        }
    }
}

impl Assembler<'_> {
    /// Assembles every unit (all at PTX `version`, `"8.3"`); the result per unit id is
    /// `Err(ptxas's messages)` for the ones ptxas rejects.
    pub fn check(&mut self, version: &str, units: &[Unit<'_>]) -> BTreeMap<usize, Result<(), String>> {
        let mut out = BTreeMap::new();
        self.check_into(version, units, &mut out);
        out
    }

    fn check_into(&mut self, version: &str, units: &[Unit<'_>], out: &mut BTreeMap<usize, Result<(), String>>) {
        if units.is_empty() {
            return;
        }
        let (text, ranges) = module(self.sm, version, units);
        let errors = match self.run(&text) {
            Ok(()) => {
                out.extend(units.iter().map(|u| (u.id, Ok(()))));
                return;
            }
            // ptxas did not run at all: no kernel can be told apart, none passes.
            Err(Run::NotRun(e)) => {
                out.extend(units.iter().map(|u| (u.id, Err(e.clone()))));
                return;
            }
            Err(Run::Rejected(e)) => e,
        };
        if units.len() == 1 {
            out.insert(units[0].id, Err(errors));
            return;
        }
        // Kernels named by an error line are assembled alone; the rest again together.
        let named: Vec<usize> = error_lines(&errors)
            .filter_map(|line| ranges.iter().position(|&(start, end)| line >= start && line < end))
            .collect();
        if named.is_empty() {
            let (left, right) = units.split_at(units.len() / 2);
            self.check_into(version, left, out);
            self.check_into(version, right, out);
            return;
        }
        let mut rest = Vec::new();
        for (k, u) in units.iter().enumerate() {
            if named.contains(&k) {
                let alone = Unit { id: u.id, body: u.body };
                let (text, _) = module(self.sm, version, std::slice::from_ref(&alone));
                let result = match self.run(&text) {
                    Err(Run::Rejected(e) | Run::NotRun(e)) => Err(e),
                    // It fails only next to the others: keep the message that named it.
                    Ok(()) => Err(errors.clone()),
                };
                out.insert(u.id, result);
            } else {
                rest.push(Unit { id: u.id, body: u.body });
            }
        }
        self.check_into(version, &rest, out);
    }

    /// One ptxas call on `text`: `Err` holds its diagnostics.
    fn run(&mut self, text: &str) -> Result<(), Run> {
        self.runs += 1;
        let n = SERIAL.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir();
        let stem = format!("ptxc-selfcheck-{}-{n}", std::process::id());
        let input = dir.join(format!("{stem}.ptx"));
        let output = dir.join(format!("{stem}.cubin"));
        let _cleanup = TempFiles(vec![input.clone(), output.clone()]);
        std::fs::write(&input, text).map_err(|e| Run::NotRun(format!("cannot write {}: {e}", input.display())))?;
        let result = Command::new(self.ptxas)
            .arg(format!("-arch={}", self.sm))
            .arg("-O0")
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output()
            .map_err(|e| Run::NotRun(format!("cannot run {}: {e}", self.ptxas.display())))?;
        if result.status.success() {
            Ok(())
        } else {
            let text = String::from_utf8_lossy(&result.stderr).replace(&input.display().to_string(), "probe.ptx");
            Err(Run::Rejected(text.trim_end().to_string()))
        }
    }
}

/// The module text and each unit's line range (1-based, end exclusive).
fn module(sm: &str, version: &str, units: &[Unit<'_>]) -> (String, Vec<(usize, usize)>) {
    let mut text = format!(".version {version}\n.target {sm}\n.address_size 64\n\n");
    let mut line = 5;
    let mut ranges = Vec::new();
    for u in units {
        let lines = u.body.lines().count();
        ranges.push((line, line + lines));
        text.push_str(u.body);
        if !u.body.ends_with('\n') {
            text.push('\n');
        }
        line += lines;
    }
    (text, ranges)
}

/// The line numbers ptxas names: `ptxas probe.ptx, line 12; error   : ...`.
fn error_lines(messages: &str) -> impl Iterator<Item = usize> + '_ {
    messages.lines().filter(|l| l.contains("error")).filter_map(|l| {
        let rest = &l[l.find(", line ")? + 7..];
        rest[..rest.find(';')?].trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_are_read_from_ptxas_messages() {
        let text = "ptxas probe.ptx, line 12; error   : Feature 'x' requires .target sm_90\nptxas probe.ptx, line 7; warning : y\nptxas fatal   : Ptx assembly aborted due to errors";
        assert_eq!(error_lines(text).collect::<Vec<_>>(), vec![12]);
    }

    #[test]
    fn module_ranges_cover_each_unit() {
        let units = [Unit { id: 0, body: "a\nb\n" }, Unit { id: 1, body: "c\n" }];
        let (text, ranges) = module("sm_80", "7.0", &units);
        assert_eq!(ranges, vec![(5, 7), (7, 8)]);
        assert_eq!(text.lines().nth(4), Some("a"));
        assert_eq!(text.lines().nth(6), Some("c"));
    }
}
