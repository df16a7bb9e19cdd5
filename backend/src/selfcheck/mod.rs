//! `ptxc audit --verify`: does every cell the legality table calls Legal compile?
//!
//! A Legal cell promises that an instruction of that opcode on that type reaches
//! instruction selection unchanged and comes out as PTX the SM accepts. This module
//! checks the promise for one SM: for every Legal (opcode, type) cell it generates
//! probe kernels ([`probe`]), one per instance (each other operand type, condition
//! code, address space, lane form...), compiles each through the real pipeline
//! (verify, isel, dce, phi-elim with the verifier after every pass, then PTX
//! emission), and assembles the results with ptxas for that SM in a few batched calls
//! ([`ptxas`]). It sits beside the pipeline, not in it: it is a test of the
//! description, run from `ptxc audit` and from the test suite.
//!
//! A cell passes when it has at least one instance and all of them compile and
//! assemble. A cell without any instance is *unprobeable* and listed with the reason;
//! it never counts as passed. Failures name the cell, the instance, the rule that made
//! the cell Legal and the pipeline stage or ptxas message that failed.

pub mod probe;
pub mod ptxas;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use target_desc::tables::{Action, OpcodeId, SmTables, TargetTables, VtId};

use crate::mir::verifier::{verify_module, Source};

/// What happened to one probe kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Compiled and assembled.
    Passed,
    /// Compiled; ptxas was not run.
    Compiled,
    /// The MIR verifier rejects the probed instruction: not an instance of the opcode.
    Invalid(String),
    /// A pipeline stage (`parse`, `verify`, `isel`, ..., `emit`) or `ptxas` failed.
    Failed { stage: String, message: String },
}

#[derive(Debug, Clone)]
pub struct InstanceReport {
    pub label: String,
    pub kernel: String,
    pub outcome: Outcome,
    /// The probe's MIR, kept for failures.
    pub mir: Option<String>,
}

/// One Legal cell.
#[derive(Debug, Clone)]
pub struct CellReport {
    pub op: &'static str,
    pub vt: &'static str,
    /// `file:line` and text of the rule that made the cell Legal.
    pub source: String,
    pub rule: &'static str,
    pub instances: Vec<InstanceReport>,
    /// Instances not generated, with the reason (storage-only operand types).
    pub skipped: Vec<probe::Skipped>,
    /// Why the cell has no instance at all.
    pub unprobeable: Option<String>,
}

impl CellReport {
    fn probed(&self) -> impl Iterator<Item = &InstanceReport> {
        self.instances.iter().filter(|i| !matches!(i.outcome, Outcome::Invalid(_)))
    }

    /// The cell was probed: it has at least one valid instance.
    pub fn checked(&self) -> bool {
        self.unprobeable.is_none() && self.probed().next().is_some()
    }

    pub fn failed(&self) -> bool {
        self.probed().any(|i| matches!(i.outcome, Outcome::Failed { .. }))
    }

    pub fn passed(&self) -> bool {
        self.checked() && !self.failed()
    }

    /// Why the cell was not probed, if it was not.
    pub fn unprobeable_reason(&self) -> Option<String> {
        if let Some(r) = &self.unprobeable {
            return Some(r.clone());
        }
        if self.checked() {
            return None;
        }
        // Every generated instance was rejected by the verifier.
        let mut why = format!("the MIR verifier rejects all {} choices of operand types", self.instances.len());
        if let Some(Outcome::Invalid(m)) = self.instances.first().map(|i| &i.outcome) {
            why.push_str(&format!(" (first: {m})"));
        }
        if !self.skipped.is_empty() {
            let labels: Vec<&str> = self.skipped.iter().map(|s| s.label.as_str()).collect();
            why.push_str(&format!("; skipped: {} ({})", labels.join(", "), self.skipped[0].reason));
        }
        Some(why)
    }
}

/// The self-check of one SM.
#[derive(Debug, Clone)]
pub struct SmReport {
    pub sm: &'static str,
    pub cells: Vec<CellReport>,
    /// Whether ptxas was run.
    pub assembled: bool,
    pub ptxas_runs: usize,
}

impl SmReport {
    pub fn legal_cells(&self) -> usize {
        self.cells.len()
    }
    pub fn checked(&self) -> usize {
        self.cells.iter().filter(|c| c.checked()).count()
    }
    pub fn passed(&self) -> usize {
        self.cells.iter().filter(|c| c.passed()).count()
    }
    pub fn failed(&self) -> usize {
        self.cells.iter().filter(|c| c.failed()).count()
    }
    pub fn unprobeable(&self) -> usize {
        self.cells.iter().filter(|c| !c.checked()).count()
    }
    pub fn probes(&self) -> usize {
        self.cells.iter().map(|c| c.probed().count()).sum()
    }
}

fn failed(stage: &str, message: String) -> Outcome {
    Outcome::Failed { stage: stage.into(), message }
}

fn render(errors: &[crate::diagnostics::MirError]) -> String {
    errors.iter().map(|e| e.render()).collect()
}

/// Parses and verifies one probe. Errors at the probed instruction only mean the
/// instance is not valid MIR; any other error is a failure (of the generator).
fn check(tables: &TargetTables, p: &probe::Probe) -> Result<crate::mir::Module, Outcome> {
    let file = format!("{}.mir", p.kernel);
    let module = crate::mir::parser::parse_module(&p.mir, &file, tables).map_err(|e| failed("parse", e.render()))?;
    let errors = verify_module(&module, tables, Source { file: &file, text: &p.mir });
    if errors.is_empty() {
        Ok(module)
    } else if errors.iter().all(|e| e.line == p.line) {
        Err(Outcome::Invalid(errors.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("; ")))
    } else {
        Err(failed("verify", render(&errors)))
    }
}

/// Compiles one probe through the pipeline; `Ok` holds the PTX.
fn compile(tables: &TargetTables, sm: &SmTables, p: &probe::Probe) -> Result<String, Outcome> {
    let file = format!("{}.mir", p.kernel);
    let mut module = check(tables, p)?;
    let source = Source { file: &file, text: &p.mir };
    let cx = crate::passes::PassContext::new(tables, Some(sm), source);
    for pass in crate::passes::PASSES.iter().filter(|p| p.name != "verify") {
        (pass.run)(&mut module, &cx).map_err(|e| failed(pass.name, render(&e)))?;
        let errors = verify_module(&module, tables, source);
        if !errors.is_empty() {
            return Err(failed(&format!("verify after {}", pass.name), render(&errors)));
        }
    }
    crate::emit::emit_module(&module, tables, sm, &file).map_err(|e| failed("emit", render(&e)))
}

/// Splits emitted PTX into its `.version` and the body after the header.
fn split_header(ptx: &str) -> Option<(&str, &str)> {
    let version = ptx.lines().find_map(|l| l.strip_prefix(".version "))?.trim();
    let at = ptx.find(".address_size")?;
    let body = &ptx[at..];
    let body = &body[body.find('\n')? + 1..];
    Some((version, body))
}

/// Every Legal (opcode, type) cell of `sm`, in table order.
pub fn legal_cells(tables: &TargetTables, sm: &SmTables) -> Vec<(OpcodeId, VtId)> {
    let mut out = Vec::new();
    for op in tables.opcodes.iter().filter(|o| crate::audit::has_table_row(o)) {
        for t in tables.types {
            if tables.decide(sm, OpcodeId(op.id), VtId(t.id)).action == Action::Legal {
                out.push((OpcodeId(op.id), VtId(t.id)));
            }
        }
    }
    out
}

/// Runs the self-check on one SM. Without `ptxas` the probes are only compiled.
pub fn verify_sm(tables: &TargetTables, sm: &SmTables, ptxas: Option<&Path>) -> SmReport {
    let mut cells = Vec::new();
    // (cell, instance) of every compiled probe, with its PTX version and body.
    let mut compiled: Vec<(usize, usize, String, String)> = Vec::new();
    for (c, (op, vt)) in legal_cells(tables, sm).into_iter().enumerate() {
        let info = tables.opcode_info(op).expect("cells come from the opcode table");
        let d = tables.decide(sm, op, vt);
        let prefix = format!("probe_{}_{}_", info.name.to_ascii_lowercase(), probe::vt_name(tables, vt));
        let mut cell = CellReport {
            op: info.name,
            vt: probe::vt_name(tables, vt),
            source: d.rule.source.to_string(),
            rule: d.rule.text,
            instances: Vec::new(),
            skipped: Vec::new(),
            unprobeable: None,
        };
        match probe::plan(tables, sm, info, vt, &prefix) {
            probe::Plan::Unprobeable(reason) => cell.unprobeable = Some(reason),
            probe::Plan::Probes { probes, skipped } => {
                cell.skipped = skipped;
                for p in probes {
                    if let Some(reason) = &p.skip {
                        match check(tables, &p) {
                            Ok(_) => cell.skipped.push(probe::Skipped { label: p.label, reason: reason.clone() }),
                            Err(outcome) => cell.instances.push(InstanceReport { label: p.label, kernel: p.kernel, outcome, mir: Some(p.mir) }),
                        }
                        continue;
                    }
                    let outcome = match compile(tables, sm, &p) {
                        Ok(ptx) => match split_header(&ptx) {
                            Some((version, body)) => {
                                compiled.push((c, cell.instances.len(), version.to_string(), body.to_string()));
                                Outcome::Compiled
                            }
                            None => Outcome::Failed { stage: "emit".into(), message: format!("no PTX header in:\n{ptx}") },
                        },
                        Err(o) => o,
                    };
                    cell.instances.push(InstanceReport { label: p.label, kernel: p.kernel, outcome, mir: Some(p.mir) });
                }
            }
        }
        cells.push(cell);
    }
    let mut runs = 0;
    if let Some(ptxas) = ptxas {
        let mut by_version: BTreeMap<&str, Vec<ptxas::Unit<'_>>> = BTreeMap::new();
        for (id, (_, _, version, body)) in compiled.iter().enumerate() {
            by_version.entry(version.as_str()).or_default().push(ptxas::Unit { id, body });
        }
        let mut assembler = ptxas::Assembler { ptxas, sm: sm.name, runs: 0 };
        let mut results = BTreeMap::new();
        for (version, units) in &by_version {
            results.extend(assembler.check(version, units));
        }
        runs = assembler.runs;
        for (id, (c, i, _, _)) in compiled.iter().enumerate() {
            cells[*c].instances[*i].outcome = match results.remove(&id) {
                Some(Ok(())) => Outcome::Passed,
                Some(Err(message)) => Outcome::Failed { stage: "ptxas".into(), message },
                None => Outcome::Failed { stage: "ptxas".into(), message: "not assembled".into() },
            };
        }
    }
    for cell in &mut cells {
        for i in &mut cell.instances {
            if !matches!(i.outcome, Outcome::Failed { .. }) {
                i.mir = None;
            }
        }
    }
    SmReport { sm: sm.name, cells, assembled: ptxas.is_some(), ptxas_runs: runs }
}

/// Runs the self-check on several SMs, two at a time.
pub fn verify_sms(tables: &TargetTables, sms: &[&SmTables], ptxas: Option<&Path>) -> Vec<SmReport> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 2);
    let mut reports: Vec<Option<SmReport>> = vec![None; sms.len()];
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(sm) = sms.get(k) else { break };
                        done.push((k, verify_sm(tables, sm, ptxas)));
                    }
                    done
                })
            })
            .collect();
        for h in handles {
            if let Ok(done) = h.join() {
                for (k, r) in done {
                    reports[k] = Some(r);
                }
            }
        }
    });
    reports.into_iter().flatten().collect()
}

/// Does `ptxas --version` run?
pub fn runs(ptxas: &Path) -> bool {
    std::process::Command::new(ptxas).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The ptxas to use: `explicit`, else `$PTXAS`, else `ptxas` on `PATH`.
pub fn find_ptxas(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("PTXAS").map(PathBuf::from).filter(|p| p.is_file()) {
        return Some(p);
    }
    let on_path = std::process::Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success());
    on_path.then(|| PathBuf::from("ptxas"))
}

fn outcome_json(o: &Outcome) -> (&'static str, Value, Value) {
    match o {
        Outcome::Passed => ("passed", Value::Null, Value::Null),
        Outcome::Compiled => ("compiled", Value::Null, Value::Null),
        Outcome::Invalid(m) => ("invalid", Value::Null, json!(m)),
        Outcome::Failed { stage, message } => ("failed", json!(stage), json!(message)),
    }
}

/// One SM's report as JSON.
pub fn sm_json(r: &SmReport) -> Value {
    let mut failures = Vec::new();
    let mut unprobeable = Vec::new();
    let mut skipped = Vec::new();
    for c in &r.cells {
        for i in c.probed() {
            if let Outcome::Failed { stage, message } = &i.outcome {
                failures.push(json!({
                    "sm": r.sm, "op": c.op, "vt": c.vt, "source": c.source, "rule": c.rule,
                    "instance": i.label, "kernel": i.kernel, "stage": stage, "error": message, "mir": i.mir,
                }));
            }
        }
        if let Some(reason) = c.unprobeable_reason() {
            unprobeable.push(json!({ "op": c.op, "vt": c.vt, "source": c.source, "rule": c.rule, "reason": reason }));
        }
        for s in &c.skipped {
            skipped.push(json!({ "op": c.op, "vt": c.vt, "instance": s.label, "reason": s.reason }));
        }
    }
    let cells: Vec<Value> = r
        .cells
        .iter()
        .map(|c| {
            let status = if !c.checked() {
                "unprobeable"
            } else if c.failed() {
                "failed"
            } else if r.assembled {
                "passed"
            } else {
                "compiled"
            };
            let instances: Vec<Value> = c
                .instances
                .iter()
                .map(|i| {
                    let (s, stage, message) = outcome_json(&i.outcome);
                    json!({ "instance": i.label, "kernel": i.kernel, "status": s, "stage": stage, "message": message })
                })
                .collect();
            json!({ "op": c.op, "vt": c.vt, "source": c.source, "status": status, "instances": instances })
        })
        .collect();
    json!({
        "sm": r.sm,
        "assembled": r.assembled,
        "legal_cells": r.legal_cells(),
        "checked": r.checked(),
        "passed": r.passed(),
        "failed": r.failed(),
        "unprobeable": r.unprobeable(),
        "probes": r.probes(),
        "ptxas_runs": r.ptxas_runs,
        "failures": failures,
        "unprobeable_cells": unprobeable,
        "skipped_instances": skipped,
        "cells": cells,
    })
}

/// Several SMs' reports and their totals as JSON.
pub fn report_json(reports: &[SmReport]) -> Value {
    let sum = |f: fn(&SmReport) -> usize| reports.iter().map(f).sum::<usize>();
    json!({
        "sms": reports.iter().map(sm_json).collect::<Vec<_>>(),
        "total": {
            "sms": reports.len(),
            "legal_cells": sum(SmReport::legal_cells),
            "checked": sum(SmReport::checked),
            "passed": sum(SmReport::passed),
            "failed": sum(SmReport::failed),
            "unprobeable": sum(SmReport::unprobeable),
            "probes": sum(SmReport::probes),
            "ptxas_runs": sum(|r| r.ptxas_runs),
        },
    })
}

/// The report as text: one summary line per SM, then each failure and each
/// unprobeable cell; a total line for several SMs.
pub fn report_text(reports: &[SmReport]) -> String {
    let mut out = String::new();
    for r in reports {
        let how = if r.assembled { format!("{} ptxas runs", r.ptxas_runs) } else { "not assembled: no ptxas".into() };
        out.push_str(&format!(
            "{}: {} Legal cells, {} checked ({} probe kernels, {how}), {} passed, {} failed, {} unprobeable\n",
            r.sm,
            r.legal_cells(),
            r.checked(),
            r.probes(),
            r.passed(),
            r.failed(),
            r.unprobeable()
        ));
        for c in &r.cells {
            for i in c.probed() {
                if let Outcome::Failed { stage, message } = &i.outcome {
                    let instance = if i.label.is_empty() { String::new() } else { format!(" ({})", i.label) };
                    out.push_str(&format!("  FAIL {} {}{instance} on {}: {stage} failed  [{}] {}\n", c.op, c.vt, r.sm, c.source, c.rule));
                    for line in message.lines() {
                        out.push_str(&format!("      {line}\n"));
                    }
                }
            }
        }
        for c in &r.cells {
            if let Some(reason) = c.unprobeable_reason() {
                out.push_str(&format!("  UNPROBEABLE {} {} on {}: {reason}  [{}]\n", c.op, c.vt, r.sm, c.source));
            }
        }
    }
    if reports.len() > 1 {
        let sum = |f: fn(&SmReport) -> usize| reports.iter().map(f).sum::<usize>();
        out.push_str(&format!(
            "total: {} SMs, {} Legal cells, {} checked, {} passed, {} failed, {} unprobeable\n",
            reports.len(),
            sum(SmReport::legal_cells),
            sum(SmReport::checked),
            sum(SmReport::passed),
            sum(SmReport::failed),
            sum(SmReport::unprobeable)
        ));
    }
    out
}
