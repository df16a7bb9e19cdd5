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
    /// One entry per pattern that matches more than one generic instruction (a tree,
    /// or folded constants) enabled on the SM: `op` is the machine instruction, `vt` its
    /// first result's type (`-` for none). Its probes hold exactly the pattern's shape
    /// and pass when selection picks that pattern and ptxas accepts the result.
    pub patterns: Vec<CellReport>,
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
    /// Probed patterns whose probes all passed.
    pub fn patterns_passed(&self) -> usize {
        self.patterns.iter().filter(|c| c.passed()).count()
    }
    pub fn patterns_failed(&self) -> usize {
        self.patterns.iter().filter(|c| c.failed()).count()
    }
    /// Patterns without a probe.
    pub fn patterns_unprobed(&self) -> usize {
        self.patterns.iter().filter(|c| !c.checked()).count()
    }
    pub fn pattern_probes(&self) -> usize {
        self.patterns.iter().map(|c| c.probed().count()).sum()
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

/// The selector's index of one SM, shared by the compiles of its probes.
type IselIndex = std::sync::Arc<std::sync::OnceLock<crate::isel::Index>>;

/// Compiles one probe through the pipeline; `Ok` holds the PTX. With `selects`, the
/// probed instruction must come out of selection as that pattern. `index` is the
/// selector's index for `sm`, shared by all its probes: ordering and keying an opcode's
/// patterns costs more than compiling a probe, and each opcode is done once per SM.
fn compile(tables: &TargetTables, sm: &SmTables, p: &probe::Probe, selects: Option<usize>, index: &IselIndex) -> Result<String, Outcome> {
    let file = format!("{}.mir", p.kernel);
    let mut module = check(tables, p)?;
    let source = Source { file: &file, text: &p.mir };
    // At -O0: a probe holds the shape of one cell or pattern on purpose (a select of
    // two constants, a compare of a value with itself), which the combiner would fold.
    let mut cx = crate::passes::PassContext::new(tables, Some(sm), source);
    cx.isel_index = index.clone();
    cx.options = crate::options::Options::new(tables, crate::options::OptLevel::O0);
    for pass in crate::passes::PASSES.iter().filter(|p| p.name != "verify" && p.enabled(&cx.options)) {
        (pass.run)(&mut module, &cx).map_err(|e| failed(pass.name, render(&e)))?;
        let errors = verify_module(&module, tables, source);
        if !errors.is_empty() {
            return Err(failed(&format!("verify after {}", pass.name), render(&errors)));
        }
        if let (Some(index), "isel") = (selects, pass.name) {
            let probed = module.functions.iter().flat_map(|f| &f.blocks).flat_map(|b| &b.insts).find(|i| i.loc.line as usize == p.line);
            if probed.is_none_or(|i| i.opcode != crate::mir::Opcode::Machine(index as u16)) {
                let got = probed.map_or("nothing".to_string(), |i| i.opcode.name(tables).to_string());
                return Err(failed("isel", format!("the probe's shape was selected as {got}, not as {}:\n{}", tables.patterns[index].name, crate::mir::printer::print_module(&module, tables))));
            }
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

/// Is `p` probed on its own: a tree, or a pattern folding a constant (the cells'
/// probes give every operand in a register)?
pub fn probes_pattern(p: &target_desc::tables::PatternInfo) -> bool {
    use target_desc::tables::PatternOperand as K;
    p.is_tree() || p.operands.iter().any(|(_, o)| matches!(o, K::Imm(_) | K::ImmIs(..) | K::ImmRange(..) | K::LowMask(_)))
}

/// Runs the self-check on one SM. Without `ptxas` the probes are only compiled.
pub fn verify_sm(tables: &TargetTables, sm: &SmTables, ptxas: Option<&Path>) -> SmReport {
    let isel_index = IselIndex::default();
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
                    let outcome = match compile(tables, sm, &p, None, &isel_index) {
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
    // Patterns of several generic instructions, tree patterns and those folding
    // constants: each probed with its own shape, which selection must pick it for.
    let mut trees = Vec::new();
    let sm_index = tables.sm_index(sm);
    for (index, p) in tables.patterns.iter().enumerate().filter(|(_, p)| probes_pattern(p) && p.sms >> sm_index & 1 == 1) {
        let rule = &tables.rules[p.rule as usize];
        let vt = p.result().map_or("-", |t| probe::vt_name(tables, VtId(t)));
        let mut cell = CellReport { op: p.name, vt, source: rule.source.to_string(), rule: rule.text, instances: Vec::new(), skipped: Vec::new(), unprobeable: None };
        let slot = cells.len() + trees.len();
        match probe::tree_plan(tables, sm, p, &format!("pattern_{}_", p.name.to_ascii_lowercase())) {
            probe::Plan::Unprobeable(reason) => cell.unprobeable = Some(reason),
            probe::Plan::Probes { probes, .. } => {
                for pr in probes {
                    let outcome = match compile(tables, sm, &pr, Some(index), &isel_index) {
                        Ok(ptx) => match split_header(&ptx) {
                            Some((version, body)) => {
                                compiled.push((slot, cell.instances.len(), version.to_string(), body.to_string()));
                                Outcome::Compiled
                            }
                            None => Outcome::Failed { stage: "emit".into(), message: format!("no PTX header in:\n{ptx}") },
                        },
                        Err(o) => o,
                    };
                    cell.instances.push(InstanceReport { label: pr.label, kernel: pr.kernel, outcome, mir: Some(pr.mir) });
                }
            }
        }
        trees.push(cell);
    }
    let cell_count = cells.len();
    cells.extend(trees);
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
    let patterns = cells.split_off(cell_count);
    SmReport { sm: sm.name, cells, patterns, assembled: ptxas.is_some(), ptxas_runs: runs }
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
    let pattern_json: Vec<Value> = r
        .patterns
        .iter()
        .map(|c| {
            let status = if !c.checked() {
                "unprobed"
            } else if c.failed() {
                "failed"
            } else if r.assembled {
                "passed"
            } else {
                "compiled"
            };
            let failures: Vec<Value> = c
                .probed()
                .filter_map(|i| match &i.outcome {
                    Outcome::Failed { stage, message } => Some(json!({ "instance": i.label, "kernel": i.kernel, "stage": stage, "error": message, "mir": i.mir })),
                    _ => None,
                })
                .collect();
            json!({ "pattern": c.op, "vt": c.vt, "source": c.source, "status": status, "probes": c.probed().count(), "reason": c.unprobeable, "failures": failures })
        })
        .collect();
    json!({
        "sm": r.sm,
        "assembled": r.assembled,
        "patterns": r.patterns.len(),
        "patterns_passed": r.patterns_passed(),
        "patterns_failed": r.patterns_failed(),
        "patterns_unprobed": r.patterns_unprobed(),
        "pattern_probes": r.pattern_probes(),
        "pattern_reports": pattern_json,
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
            "patterns_passed": sum(SmReport::patterns_passed),
            "patterns_failed": sum(SmReport::patterns_failed),
            "patterns_unprobed": sum(SmReport::patterns_unprobed),
            "pattern_probes": sum(SmReport::pattern_probes),
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
        out.push_str(&format!(
            "{}: {} patterns of several instructions (trees, folded constants: {} probe kernels), {} passed, {} failed, {} unprobed\n",
            r.sm,
            r.patterns.len(),
            r.pattern_probes(),
            r.patterns_passed(),
            r.patterns_failed(),
            r.patterns_unprobed()
        ));
        for c in &r.patterns {
            for i in c.probed() {
                if let Outcome::Failed { stage, message } = &i.outcome {
                    let instance = if i.label.is_empty() { String::new() } else { format!(" ({})", i.label) };
                    out.push_str(&format!("  FAIL pattern {}{instance} on {}: {stage} failed  [{}] {}\n", c.op, r.sm, c.source, c.rule));
                    for line in message.lines() {
                        out.push_str(&format!("      {line}\n"));
                    }
                }
            }
            if let Some(reason) = &c.unprobeable {
                out.push_str(&format!("  UNPROBED pattern {} on {}: {reason}  [{}]\n", c.op, r.sm, c.source));
            }
        }
    }
    if reports.len() > 1 {
        let sum = |f: fn(&SmReport) -> usize| reports.iter().map(f).sum::<usize>();
        out.push_str(&format!(
            "total: {} SMs, {} Legal cells, {} checked, {} passed, {} failed, {} unprobeable; patterns of several instructions: {} passed, {} failed, {} unprobed\n",
            reports.len(),
            sum(SmReport::legal_cells),
            sum(SmReport::checked),
            sum(SmReport::passed),
            sum(SmReport::failed),
            sum(SmReport::unprobeable),
            sum(SmReport::patterns_passed),
            sum(SmReport::patterns_failed),
            sum(SmReport::patterns_unprobed)
        ));
    }
    out
}
