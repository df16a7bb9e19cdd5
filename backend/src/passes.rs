//! The pass manager: named passes over a MIR module, each runnable alone
//! (`ptxc run-pass NAME IN.mir`, like `llc -run-pass`), each printing MIR that parses
//! back.
//!
//! Pipeline: verify, sroa (frame cells to values, -O1 and up), legalize (types and operations the SM cannot do, see
//! [`crate::legalize`]), combine (generic simplification, -O1 and up), simplify-cfg (branch merging), slsr (straight-line strength reduction), loop-reduce (loop strength reduction), ldgxform (read-only loads), isel (instruction selection), nvptx-mem2reg (frame slots back to registers), machine-cse, machine-licm (loop-invariant code motion), machine-sink (off by default), dce (dead-code removal),
//! machine-pipeliner (swing modulo scheduling), nvptx-remat-block (block
//! rematerialization), phi-elim (PHI elimination),
//! machine-scheduler (list scheduling), spill (spilling to `.local` slots under a hard register
//! bound, with stack slot coloring), post-RA-sched, then PTX emission (with the frame layout).

use target_desc::tables::{SmTables, TargetTables};

use crate::diagnostics::MirError;
use crate::mir::parser::Streamed;
use crate::mir::verifier::{verify_functions, verify_module, Callees, Source};
use crate::mir::Module;
use crate::options::{OptLevel, Options};

/// What a pass sees besides the module.
pub struct PassContext<'a> {
    pub tables: &'a TargetTables,
    /// The SM compiled for; passes that need one fail without it.
    pub sm: Option<&'a SmTables>,
    pub source: Source<'a>,
    /// Run the passes' own consistency checks (the legalizer's verification mode).
    pub checks: bool,
    /// Where the legalizer's decisions go, for `--remarks legalize`.
    pub remarks: Option<&'a std::cell::RefCell<Vec<crate::legalize::Remark>>>,
    /// The optimization level and knob values the passes read.
    pub options: Options,
    /// The selector's pattern index for `sm`, built by the first `isel` and shared by
    /// the per-function workers of `-j`.
    pub isel_index: std::sync::Arc<std::sync::OnceLock<crate::isel::Index>>,
    /// What `verify` checks calls against when the module run is one batch of a larger
    /// one ([`compile_streamed`]): every function's header. `None`: the module itself.
    pub callees: Option<&'a Callees<'a>>,
}

impl<'a> PassContext<'a> {
    /// A context with checks on, no remarks, at -O3 with every knob at its default.
    pub fn new(tables: &'a TargetTables, sm: Option<&'a SmTables>, source: Source<'a>) -> PassContext<'a> {
        PassContext { tables, sm, source, checks: true, remarks: None, options: Options::new(tables, OptLevel::O3), isel_index: Default::default(), callees: None }
    }
}

/// What each worker thread of a batched run makes its [`PassContext`] from: the
/// settings of the run's context without its remark sink, which is not shared across
/// threads (batched runs have none).
struct WorkerSettings<'a> {
    tables: &'a TargetTables,
    sm: Option<&'a SmTables>,
    source: Source<'a>,
    checks: bool,
    options: &'a Options,
    isel_index: &'a std::sync::Arc<std::sync::OnceLock<crate::isel::Index>>,
    callees: Option<&'a Callees<'a>>,
}

impl<'a> WorkerSettings<'a> {
    fn of(cx: &'a PassContext<'a>) -> WorkerSettings<'a> {
        WorkerSettings { tables: cx.tables, sm: cx.sm, source: cx.source, checks: cx.checks, options: &cx.options, isel_index: &cx.isel_index, callees: cx.callees }
    }

    fn context(&self) -> PassContext<'a> {
        let WorkerSettings { tables, sm, source, checks, callees, .. } = *self;
        PassContext { tables, sm, source, checks, remarks: None, options: self.options.clone(), isel_index: self.isel_index.clone(), callees }
    }
}

impl PassContext<'_> {
    /// Hands a pass's remarks (function, position, message) and its one-line summary
    /// (reported as function `*`) to `--remarks`, when asked for.
    fn report(&self, remarks: Vec<(String, crate::mir::Loc, String)>, summary: String) {
        if let Some(sink) = self.remarks {
            let mut sink = sink.borrow_mut();
            sink.extend(remarks.into_iter().map(|(function, loc, message)| crate::legalize::Remark { function, loc, message }));
            sink.push(crate::legalize::Remark { function: "*".into(), loc: Default::default(), message: summary });
        }
    }

    fn sm(&self, pass: &str) -> Result<&SmTables, Vec<MirError>> {
        self.sm.ok_or_else(|| vec![MirError::at(self.source.file, self.source.text, 1, 1, format!("pass `{pass}` needs a target SM: add --sm SM"))])
    }
}

pub struct PassInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// The lowest optimization level at which the pass runs (`-O0` passes are the ones
    /// correctness needs).
    pub min_opt: OptLevel,
    /// The knobs (by their registry names) that switch the pass off.
    pub switches: &'static [Switch],
    /// Whether the pass looks beyond one function at a time.
    pub scope: Scope,
    pub run: fn(&mut Module, &PassContext<'_>) -> Result<(), Vec<MirError>>,
}

/// What a pass reads and changes: the whole module (the verifier checks calls against
/// their callees; the legalizer links library functions in and lays out parameters),
/// or each function on its own, so that functions can go through it in parallel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Module,
    Function,
}

/// How a knob switches a pass: `disable-machine-cse=true` or `enable-mcse=false` turn
/// MachineCSE off.
#[derive(Clone, Copy, Debug)]
pub enum Switch {
    DisabledBy(&'static str),
    EnabledBy(&'static str),
}

impl PassInfo {
    /// Whether the pass runs under `options`: at or above its level and not switched
    /// off by a knob.
    pub fn enabled(&self, options: &Options) -> bool {
        options.opt_level >= self.min_opt
            && !options.skip.iter().any(|s| s == self.name)
            && self.switches.iter().all(|s| match *s {
                Switch::DisabledBy(knob) => options.flag(knob) != Some(true),
                Switch::EnabledBy(knob) => options.flag(knob) != Some(false),
            })
    }
}

fn verify(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let errors = match cx.callees {
        Some(callees) => verify_functions(&module.functions, callees, &module.globals, cx.tables, cx.source),
        None => verify_module(module, cx.tables, cx.source),
    };
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn sroa(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::sroa::run(module, cx.tables).map_err(|e| vec![MirError::at(cx.source.file, cx.source.text, 1, 1, e)])?;
    let summary = format!(
        "promoted cells {}, loads removed {}, stores removed {}, frame objects removed {}",
        stats.promoted_cells, stats.loads_removed, stats.stores_removed, stats.objects_removed
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

fn legalize(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let checks = cx.checks || cx.options.flag("enable-legalize-types-checking") == Some(true);
    let remarks = crate::legalize::legalize_module(module, cx.tables, cx.sm("legalize")?, cx.source, checks, cx.remarks.is_some())?;
    if let Some(sink) = cx.remarks {
        sink.borrow_mut().extend(remarks);
    }
    Ok(())
}

fn combine(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::combine::run_with(module, cx.tables, cx.sm("combine")?, cx.remarks.is_some()).map_err(|e| vec![MirError::at(cx.source.file, cx.source.text, 1, 1, e)])?;
    let summary = format!(
        "folded {}, simplified {}, strength-reduced {}, re-associated {}, vector chains {}, contracted {}, cse {}, address spaces {}",
        stats.folded, stats.simplified, stats.strength_reduced, stats.reassociated, stats.vector_chains, stats.contracted, stats.cse, stats.address_spaces
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

fn simplify_cfg(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::simplify_cfg::run(module, cx.tables, cx.sm("simplify-cfg")?).map_err(|e| vec![MirError::at(cx.source.file, cx.source.text, 1, 1, e)])?;
    cx.report(stats.remarks, format!("branches merged {}", stats.merged));
    Ok(())
}

fn slsr(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::slsr::run(module, cx.tables, cx.sm("slsr")?).map_err(|e| vec![MirError::at(cx.source.file, cx.source.text, 1, 1, e)])?;
    cx.report(stats.remarks, format!("rewritten {}, bumps made {}", stats.rewritten, stats.bumps));
    Ok(())
}

fn loop_reduce(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::loop_reduce::run(module, cx.tables, cx.sm("loop-reduce")?).map_err(|e| vec![MirError::at(cx.source.file, cx.source.text, 1, 1, e)])?;
    let summary = format!("induction expressions made PHIs {}, addresses reduced {}, pointers made {}", stats.expressions, stats.reduced, stats.pointers);
    cx.report(stats.remarks, summary);
    Ok(())
}

fn ldgxform(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::ldgxform::run(module, cx.tables);
    cx.report(stats.remarks, format!("loads made read-only {}, noalias parameters read-only {}, written or escaping {}", stats.loads, stats.read_only, stats.written));
    Ok(())
}

fn isel(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let sm = cx.sm("isel")?;
    let index = cx.isel_index.get_or_init(|| crate::isel::Index::new(cx.tables, sm));
    crate::isel::select_module_with(module, cx.tables, sm, cx.source, index)
}

fn machine_cse(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::machine::cse::run(module, cx.tables, cx.sm("machine-cse")?, &cx.options).map_err(|e| vec![MirError::at(cx.source.file, cx.source.text, 1, 1, e)])?;
    let summary = format!(
        "eliminated {}, suppressed by pressure {}, incremental pressure updates {}, full recomputations {}, verified updates {}",
        stats.eliminated, stats.suppressed_by_pressure, stats.incremental_updates, stats.full_recomputations, stats.verified_updates
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

fn machine_licm(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::machine::licm::run(module, cx.tables, cx.sm("machine-licm")?, &cx.options);
    let summary = format!(
        "hoisted {}, suppressed by pressure {}, preheaders made {}, loops without a preheader {}, sunk into loops {}",
        stats.hoisted, stats.suppressed_by_pressure, stats.preheaders_made, stats.no_preheader, stats.sunk
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

fn machine_sink(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let reach = if cx.options.flag("nvptx-enable-machine-sink") == Some(true) { crate::machine::sink::Reach::All } else { crate::machine::sink::Reach::RegisterFree };
    let stats = crate::machine::sink::run(module, cx.tables, reach, cx.remarks.is_some());
    cx.report(stats.remarks, format!("sunk {}", stats.sunk));
    Ok(())
}

fn machine_cp(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::machine::copy_prop::run(module, cx.tables, cx.sm("machine-cp")?, cx.remarks.is_some());
    cx.report(stats.remarks, format!("operands propagated {}, copies removed {}, kept {}", stats.propagated, stats.removed, stats.kept));
    Ok(())
}

fn dce(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    crate::machine::dce::remove_dead_code(module, cx.tables);
    Ok(())
}

/// With checks on, proves with [`crate::machine::checker`] that every function of
/// `module` reads what it read before (`before`, the module as the pass got it).
fn check_allocation(before: Option<Module>, module: &Module, cx: &PassContext<'_>, pass: &str) -> Result<(), Vec<MirError>> {
    let Some(before) = before else { return Ok(()) };
    let mut errors = Vec::new();
    for (input, output) in before.functions.iter().zip(&module.functions) {
        if let Err(e) = crate::machine::checker::check(input, output, cx.tables) {
            let at = output.blocks.iter().find(|b| e.first().is_some_and(|e| e.block == b.label()));
            let loc = at.and_then(|b| e.first().and_then(|e| b.insts.get(e.inst)).map(|i| i.loc)).unwrap_or(output.loc);
            errors.push(MirError::at(cx.source.file, cx.source.text, loc.line.max(1) as usize, loc.column.max(1) as usize, format!("after `{pass}` (a compiler bug): {}", e[0])));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn remat_block(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let before = cx.checks.then(|| module.clone());
    let stats = crate::machine::remat::run(module, cx.tables, cx.sm("nvptx-remat-block")?, &cx.options);
    check_allocation(before, module, cx, "nvptx-remat-block")?;
    let summary = format!(
        "pulled {}, cloned {}, removed {}, from second chance {}, iterations {}, functions skipped {}",
        stats.pulled, stats.cloned, stats.removed, stats.second_chance, stats.iterations, stats.skipped_functions
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

fn phi_elim(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    // Coalescing is an optimization: -O0 keeps every copy unless the knob is given.
    let coalesce = if cx.options.opt_level == OptLevel::O0 && !cx.options.is_set("cssa-coalesce") { 0 } else { cx.options.int("cssa-coalesce").unwrap_or(1) };
    let verbosity = cx.options.int("cssa-verbosity").unwrap_or(0);
    let before = cx.checks.then(|| module.clone());
    let stats = crate::machine::phi_elimination::eliminate_phis(module, cx.tables, cx.sm("phi-elim")?, cx.source, coalesce, verbosity)?;
    check_allocation(before, module, cx, "phi-elim")?;
    let summary = format!(
        "phis {}, copies {} before coalescing, coalesced {}, left {}, cycles broken {}",
        stats.phis, stats.candidates, stats.coalesced, stats.copies_left, stats.cycles_broken
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

fn mem2reg(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::machine::mem2reg::run(module, cx.tables);
    let summary = format!(
        "promoted cells {}, loads removed {}, stores removed {}, frame objects removed {}",
        stats.promoted_cells, stats.loads_removed, stats.stores_removed, stats.objects_removed
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

fn spill(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let before = cx.checks.then(|| module.clone());
    let stats = crate::machine::spill::run(module, cx.tables, cx.sm("spill")?, &cx.options);
    check_allocation(before, module, cx, "spill")?;
    let summary = format!(
        "functions {}, values spilled {}, stores {}, reloads {}, slots {} ({} after coloring, {} bytes), rematerialized {} ({} copies)",
        stats.functions, stats.spilled, stats.stores, stats.reloads, stats.slots, stats.colored_slots, stats.bytes, stats.rematerialized, stats.recomputed
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

fn list_scheduler(module: &mut Module, cx: &PassContext<'_>, pass: &str) -> Result<(), Vec<MirError>> {
    let stats = crate::sched::run_list_scheduler(module, cx.tables, cx.sm(pass)?, &cx.options, cx.remarks.is_some());
    let summary = format!(
        "blocks {}, reordered {}, kept in input order (no gain or pressure) {}, in pressure mode {}, units {}, edges {}",
        stats.blocks, stats.reordered, stats.reverted, stats.pressure_mode, stats.units, stats.edges
    );
    cx.report(stats.remarks, summary);
    Ok(())
}

/// The pre-RA list scheduler: part of the full pipeline (`usedessa` 2), not of the
/// simple one (1).
fn machine_scheduler(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    if cx.options.int("usedessa") == Some(1) {
        cx.report(Vec::new(), "skipped: usedessa=1 selects the simple pipeline (post-RA scheduling only)".into());
        return Ok(());
    }
    list_scheduler(module, cx, "machine-scheduler")
}

/// The post-RA list scheduler: the only scheduler of the simple pipeline (`usedessa`
/// 1); in the full one only with `misched-postra`.
fn post_ra_scheduler(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    if cx.options.int("usedessa") != Some(1) && cx.options.flag("misched-postra") != Some(true) {
        cx.report(Vec::new(), "skipped: the full pipeline (usedessa=2) schedules before allocation; misched-postra=true adds this pass".into());
        return Ok(());
    }
    list_scheduler(module, cx, "post-RA-sched")
}

fn branch_folder(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::machine::branch_fold::run(module, cx.tables, cx.remarks.is_some());
    cx.report(stats.remarks, format!("instructions hoisted {}, blocks folded {}", stats.hoisted, stats.folded));
    Ok(())
}

fn pipeliner(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let stats = crate::sched::pipeliner::run(module, cx.tables, cx.sm("machine-pipeliner")?, &cx.options);
    let summary = format!("loops {}, pipelined {}, annotated {}", stats.loops, stats.pipelined, stats.annotated);
    cx.report(stats.remarks, summary);
    Ok(())
}

/// Every pass, in pipeline order.
pub const PASSES: &[PassInfo] = &[
    PassInfo {
        name: "verify",
        description: "check structure, SSA dominance and types against the description's signatures",
        min_opt: OptLevel::O0,
        switches: &[],
        scope: Scope::Module,
        run: verify,
    },
    PassInfo {
        name: "sroa",
        description: "scalar replacement of frame cells: a cell of a non-escaping frame object stored once before its loads (or within one block) becomes the stored value",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-sroa")],
        scope: Scope::Module,
        run: sroa,
    },
    PassInfo {
        name: "legalize",
        description: "rewrite the types and operations the SM cannot do into ones it can (the description's action tables)",
        min_opt: OptLevel::O0,
        switches: &[],
        scope: Scope::Module,
        run: legalize,
    },
    PassInfo {
        name: "combine",
        description: "fold constants and simplify generic MIR (identities, strength reduction, constant chains, vector chains, FMA contraction of .contract)",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-combine")],
        scope: Scope::Function,
        run: combine,
    },
    PassInfo {
        name: "simplify-cfg",
        description: "branch merging: BRCOND c1 to a block of a few speculatable instructions and BRCOND c2 with a target in common becomes one BRCOND on c1 AND c2 (or c1 OR c2)",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-simplify-cfg")],
        scope: Scope::Function,
        run: simplify_cfg,
    },
    PassInfo {
        name: "slsr",
        description: "straight-line strength reduction: (B + c2) * S and Y + (B + c2) * S dominated by the same expression with c1 become it plus S << k when c2 - c1 is 2^k",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-slsr")],
        scope: Scope::Function,
        run: slsr,
    },
    PassInfo {
        name: "loop-reduce",
        description: "loop strength reduction: an address base + ext(i) * S in a loop becomes a pointer stepped by S each iteration",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-lsr")],
        scope: Scope::Function,
        run: loop_reduce,
    },
    PassInfo {
        name: "ldgxform",
        description: "loads of memory only noalias kernel parameters reach, which the kernel never writes through and whose pointers never escape, use the read-only data cache (LOAD.invariant, ld.global.nc)",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-ldgxform")],
        scope: Scope::Function,
        run: ldgxform,
    },
    PassInfo { name: "isel", description: "select machine instructions from the description's patterns", min_opt: OptLevel::O0, switches: &[], scope: Scope::Function, run: isel },
    PassInfo {
        name: "nvptx-mem2reg",
        description: "machine mem2reg: a frame slot stored once, before every load of it, with no escaping address, becomes a register",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("nv-disable-mem2reg")],
        scope: Scope::Function,
        run: mem2reg,
    },
    PassInfo {
        name: "machine-cse",
        description: "remove machine instructions equal to a dominating one, unless that raises register pressure past the target",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-machine-cse"), Switch::EnabledBy("enable-mcse")],
        scope: Scope::Function,
        run: machine_cse,
    },
    PassInfo {
        name: "machine-licm",
        description: "hoist loop-invariant machine instructions into the loop's preheader, unless that raises the loop's pressure past the target",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-machine-licm"), Switch::EnabledBy("enable-mlicm")],
        scope: Scope::Function,
        run: machine_licm,
    },
    PassInfo {
        name: "machine-sink",
        description: "move an instruction whose results are read on one side of a branch only into that side (MachineSink; by default, as on NVPTX, only instructions that read no register; all with nvptx-enable-machine-sink)",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-machine-sink")],
        scope: Scope::Function,
        run: machine_sink,
    },
    PassInfo {
        name: "dce",
        description: "dead machine instruction elimination: remove instructions whose results are unused",
        min_opt: OptLevel::O0,
        switches: &[Switch::DisabledBy("disable-machine-dce")],
        scope: Scope::Function,
        run: dce,
    },
    PassInfo {
        name: "machine-cp",
        description: "machine copy propagation: readers of a copy or bitcast read its source where the description lets its register class stand there; copies left unread go",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-copyprop")],
        scope: Scope::Function,
        run: machine_cp,
    },
    PassInfo {
        name: "machine-pipeliner",
        description: "swing modulo scheduling of single-block loops: overlap iterations in a prologue, kernel and epilogue (MachinePipeliner)",
        min_opt: OptLevel::O2,
        switches: &[Switch::EnabledBy("enable-pipeliner")],
        scope: Scope::Function,
        run: pipeliner,
    },
    PassInfo {
        name: "nvptx-remat-block",
        description: "block rematerialization: where more registers cross a block boundary than the target allows, recompute cheap values at their uses",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("nv-disable-remat")],
        scope: Scope::Function,
        run: remat_block,
    },
    PassInfo {
        name: "phi-elim",
        description: "leave SSA form: PHIs become parallel copies, and copies between values that never interfere are coalesced",
        min_opt: OptLevel::O0,
        switches: &[],
        scope: Scope::Function,
        run: phi_elim,
    },
    PassInfo {
        name: "machine-scheduler",
        description: "list scheduling of each block for latency and register pressure, kept only where pressure does not get worse (nvptx-sched4reg)",
        min_opt: OptLevel::O1,
        switches: &[Switch::EnabledBy("enable-misched")],
        scope: Scope::Function,
        run: machine_scheduler,
    },
    PassInfo {
        name: "spill",
        description: "where pressure stays over a hard register bound (maxnreg, --maxreg, occupancy), store values to .local slots and reload them at their uses; slots with disjoint lifetimes share memory (stack slot coloring)",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-spill")],
        scope: Scope::Function,
        run: spill,
    },
    PassInfo {
        name: "post-RA-sched",
        description: "the list scheduler again after spilling (usedessa=1, or misched-postra)",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-post-ra")],
        scope: Scope::Function,
        run: post_ra_scheduler,
    },
    PassInfo {
        name: "branch-folder",
        description: "move a block's few cheap instructions above its only predecessor's branch where the other side does not read them, and remove blocks that only jump (their branches go to the target)",
        min_opt: OptLevel::O1,
        switches: &[Switch::DisabledBy("disable-branch-fold")],
        scope: Scope::Function,
        run: branch_folder,
    },
];

/// Runs every pass on `module` and emits its PTX (what `ptxc compile` does, without
/// printing or stopping early). A module of several functions goes through its
/// function-scoped passes and emission in batches ([`compile_per_function`]).
pub fn compile_module(module: &mut Module, cx: &PassContext<'_>) -> Result<String, Vec<MirError>> {
    apply_maxreg(module, &cx.options);
    // `verify-machineinstrs`: the verifier after every pass, as `--verify` does on the
    // command line (the random differential tests turn it on).
    let verify_each = cx.options.flag("verify-machineinstrs") == Some(true);
    let enabled: Vec<&'static PassInfo> = PASSES.iter().filter(|p| p.enabled(&cx.options)).collect();
    for (k, pass) in enabled.iter().enumerate() {
        if pass.scope == Scope::Function && per_function(module, cx) && !verify_each {
            return compile_per_function(module, cx, &enabled[k..]).map(|(ptx, _)| ptx);
        }
        (pass.run)(module, cx)?;
        if verify_each && pass.name != "verify" {
            let mut errors = verify_module(module, cx.tables, cx.source);
            if !errors.is_empty() {
                for e in &mut errors {
                    e.message = format!("after `{}` (a compiler bug): {}", pass.name, e.message);
                }
                return Err(errors);
            }
        }
    }
    crate::emit::emit_module_jobs(module, cx.tables, cx.sm("emit")?, cx.source.file, cx.options.jobs)
}

/// Whether the rest of the pipeline runs per batch of functions
/// ([`compile_per_function`]): more than one function, and no remark sink (remarks keep
/// the order of a pass over the whole module).
pub fn per_function(module: &Module, cx: &PassContext<'_>) -> bool {
    module.functions.len() > 1 && cx.remarks.is_none()
}

/// [`run_per_function`] with each function emitted in its batch and dropped: the
/// module's PTX, and the time of each pass and of emission, summed over the batches.
pub fn compile_per_function(module: &mut Module, cx: &PassContext<'_>, passes: &[&'static PassInfo]) -> Result<(String, Vec<std::time::Duration>), Vec<MirError>> {
    let sm = cx.sm("emit")?;
    let (tables, file) = (cx.tables, cx.source.file);
    let templates = crate::emit::Templates::new(tables);
    let (mut times, parts) = run_per_function(module, cx, passes, |index, f| crate::emit::emit_function_part(&f, index, tables, sm, file, &templates))?;
    let started = std::time::Instant::now();
    let ptx = crate::emit::assemble_module(&module.globals, parts, tables, sm, file)?;
    *times.last_mut().expect("emission's time is last") += started.elapsed();
    Ok((ptx, times))
}

/// Runs `passes` (all [`Scope::Function`]) over the functions of `module` in batches of
/// consecutive functions, on up to `options.jobs` threads, then hands each function
/// with its index in the module to `then`, in the batch's thread. Each batch goes
/// through the passes in a module of its own (with the globals), which a
/// function-scoped pass cannot tell from the whole module, so the result is the one of
/// running each pass over the whole module in turn (tests compare the PTX byte for
/// byte). Returns what `then` made of the functions, in module order, and the time of
/// each pass and then of `then`, summed over the batches. On errors, those of the first
/// pass that failed, from every batch it failed in (as that pass reports them over the
/// whole module); `module` is left without its functions.
///
/// Batches serve one thread as well as several: a batch's functions stay in the cache
/// from one pass to the next (a pass over a whole module of small functions streams all
/// of it through the cache), and a function emitted in its batch is freed there, so the
/// next batch reuses its memory instead of faulting in new pages.
fn run_per_function<R: Send>(module: &mut Module, cx: &PassContext<'_>, passes: &[&'static PassInfo], then: impl Fn(usize, crate::mir::Function) -> R + Sync) -> Result<(Vec<std::time::Duration>, Vec<R>), Vec<MirError>> {
    debug_assert!(passes.iter().all(|p| p.scope == Scope::Function));
    let batches = batches(std::mem::take(&mut module.functions), cx.options.jobs, instructions);
    let firsts: Vec<usize> = batches.iter().scan(0, |next, b| Some(std::mem::replace(next, *next + b.len()))).collect();
    let (name, globals) = (module.name.clone(), &module.globals);
    // `per_function` keeps remark runs to whole-module passes, so the workers have no
    // remark sink. Each thread makes its own context.
    let settings = WorkerSettings::of(cx);
    let results = crate::parallel::map_owned(batches, cx.options.jobs, || settings.context(), |local, batch, functions| {
        let mut alone = Module { name: name.clone(), globals: globals.clone(), functions };
        let mut times = Vec::with_capacity(passes.len() + 1);
        for (k, pass) in passes.iter().enumerate() {
            let started = std::time::Instant::now();
            let result = (pass.run)(&mut alone, local);
            times.push(started.elapsed());
            if let Err(e) = result {
                return (Vec::new(), times, Some((k, e)));
            }
        }
        let started = std::time::Instant::now();
        let made: Vec<R> = alone.functions.into_iter().enumerate().map(|(k, f)| then(firsts[batch] + k, f)).collect();
        times.push(started.elapsed());
        (made, times, None)
    });
    // The errors of the first pass that failed, from every batch it failed in, in
    // module order: what that pass reports run over the whole module.
    if let Some(first) = results.iter().filter_map(|(_, _, e)| e.as_ref().map(|(k, _)| *k)).min() {
        return Err(results.into_iter().filter_map(|(_, _, e)| e.filter(|(k, _)| *k == first)).flat_map(|(_, errors)| errors).collect());
    }
    let mut totals = vec![std::time::Duration::ZERO; passes.len() + 1];
    let mut made = Vec::new();
    for (batch, times, _) in results {
        for (total, t) in totals.iter_mut().zip(times) {
            *total += t;
        }
        made.extend(batch);
    }
    Ok((totals, made))
}

/// How long each stage took (reading, each pass, emission), in pipeline order.
pub type StageTimes = Vec<(&'static str, std::time::Duration)>;

/// The whole pipeline over a module still being read ([`Streamed`]), a batch of
/// consecutive functions at a time: each batch is parsed, verified (calls against every
/// function's header), taken through every pass and emitted before the next is read,
/// on up to `cx.options.jobs` threads. The MIR of a module of thousands of functions
/// is then never all in memory, and a batch's memory is reused by the next instead of
/// faulting in new pages.
///
/// The result is the PTX [`compile_module`] gives for the module read whole (tests
/// compare them byte for byte), and the time of reading and of each pass and emission,
/// summed over the batches. `None` when streaming does not answer for the whole module,
/// and nothing is reported: a function-scoped pass before a module-scoped one other
/// than `verify`, `sroa` and `legalize`, signatures that legalization rewrites, a
/// library function to link, or an error anywhere. The caller then compiles the module
/// whole, which reports what it reports.
pub fn compile_streamed(streamed: &Streamed<'_>, cx: &PassContext<'_>) -> Option<(String, StageTimes)> {
    let sm = cx.sm.filter(|_| cx.remarks.is_none())?;
    let tables = cx.tables;
    let passes: Vec<&'static PassInfo> = PASSES.iter().filter(|p| p.enabled(&cx.options)).collect();
    // The module-scoped passes must run first and see one function at a time: they
    // then give a batch what they give the whole module. `legalize` rewrites across
    // functions only at boundaries (checked below) and when it links library functions
    // (the batch grows: checked after it runs).
    let module_scoped = passes.iter().take_while(|p| p.scope == Scope::Module).count();
    if passes[module_scoped..].iter().any(|p| p.scope == Scope::Module) || !passes[..module_scoped].iter().all(|p| matches!(p.name, "verify" | "sroa" | "legalize")) {
        return None;
    }
    if !crate::legalize::abi::keeps_boundaries(&streamed.signatures, tables, sm) {
        return None;
    }
    let callees = Callees::new(&streamed.signatures);
    let sizes: Vec<usize> = (0..streamed.signatures.len()).map(|k| streamed.body_lines(k)).collect();
    let batches = batches((0..sizes.len()).collect(), cx.options.jobs, |&k| sizes[k]);
    let templates = crate::emit::Templates::new(tables);
    let source = cx.source;
    let settings = WorkerSettings { callees: Some(&callees), ..WorkerSettings::of(cx) };
    let results = crate::parallel::map_owned(batches, cx.options.jobs, || settings.context(), |local, _, batch| -> Option<(Vec<crate::emit::FunctionPtx>, Vec<std::time::Duration>)> {
        let mut times = Vec::with_capacity(passes.len() + 2);
        let started = std::time::Instant::now();
        let first = *batch.first()?;
        let functions = batch.iter().map(|&k| streamed.function(k, tables)).collect::<Result<Vec<_>, _>>().ok()?;
        times.push(started.elapsed());
        let mut alone = Module { name: streamed.module.name.clone(), globals: streamed.module.globals.clone(), functions };
        apply_maxreg(&mut alone, &local.options);
        for pass in &passes {
            let started = std::time::Instant::now();
            let count = alone.functions.len();
            (pass.run)(&mut alone, local).ok()?;
            // A pass that adds functions (legalization linking a library function)
            // adds them to the module's end, which a batch is not.
            if alone.functions.len() != count {
                return None;
            }
            times.push(started.elapsed());
        }
        let started = std::time::Instant::now();
        let parts: Vec<crate::emit::FunctionPtx> = alone.functions.into_iter().enumerate().map(|(j, f)| crate::emit::emit_function_part(&f, first + j, tables, sm, source.file, &templates)).collect();
        times.push(started.elapsed());
        Some((parts, times))
    });
    let mut totals = vec![std::time::Duration::ZERO; passes.len() + 2];
    let mut parts = Vec::with_capacity(sizes.len());
    for result in results {
        let (batch, times) = result?;
        for (total, t) in totals.iter_mut().zip(times) {
            *total += t;
        }
        parts.extend(batch);
    }
    let started = std::time::Instant::now();
    let ptx = crate::emit::assemble_module(&streamed.module.globals, parts, tables, sm, source.file).ok()?;
    *totals.last_mut()? += started.elapsed();
    let names = std::iter::once("parse").chain(passes.iter().map(|p| p.name)).chain(["emit"]);
    Some((ptx, names.zip(totals).collect()))
}

/// Batches per thread of [`run_per_function`]: enough that a thread which drew large
/// functions does not leave the others idle at the end, few enough that what each pass
/// pays once per module (its tables, knobs and summary) is paid a few times, not once
/// per function (a module of 4,000 small functions spent a sixth of its time on that).
const BATCHES_PER_THREAD: usize = 8;

/// The most instructions in a batch of several functions: small enough that the batch
/// stays in the cache through the passes. On the 100k-instruction benchmark module of
/// 4,167 small functions with one thread, batches of 1.5k-6k instructions took 5-8% less
/// CPU time than 8 batches of 12k.
const BATCH_INSTRUCTIONS: usize = 4096;

/// A function's size for [`batches`]: its instructions and labels.
fn instructions(f: &crate::mir::Function) -> usize {
    f.blocks.iter().map(|b| b.insts.len() + 1).sum::<usize>() + 1
}

/// `functions` cut into runs of consecutive functions of about equal size (in
/// instructions), at least `jobs` x [`BATCHES_PER_THREAD`] of them and none over
/// [`BATCH_INSTRUCTIONS`] but a single function larger than that, which is a batch of
/// its own.
fn batches<T>(functions: Vec<T>, jobs: usize, size: impl Fn(&T) -> usize) -> Vec<Vec<T>> {
    let total: usize = functions.iter().map(&size).sum();
    let share = total.div_ceil(jobs.max(1) * BATCHES_PER_THREAD).clamp(1, BATCH_INSTRUCTIONS);
    let mut out = Vec::new();
    let mut current = Vec::new();
    let mut filled = 0;
    for f in functions {
        filled += size(&f);
        current.push(f);
        if filled >= share {
            out.push(std::mem::take(&mut current));
            filled = 0;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// `--maxreg N` travels to ptxas as `.maxnreg N` on every kernel (a kernel's own
/// smaller `maxnreg` stays), like nvcc's `-maxrregcount`.
pub fn apply_maxreg(module: &mut Module, options: &Options) {
    if let Some(n) = options.maxreg {
        for f in module.functions.iter_mut().filter(|f| f.kind == crate::mir::FunctionKind::Kernel) {
            f.attributes.maxnreg = Some(f.attributes.maxnreg.map_or(n, |m| m.min(n)));
        }
    }
}

pub fn find(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}

/// Knobs read inside passes (beyond the [`PassInfo::switches`] that turn passes off),
/// with the pass that reads each.
pub const KNOBS_READ: &[(&str, &str)] = &[
    ("rp-aware-mcse", "machine-cse"),
    ("nvptx-enable-machine-sink", "machine-sink (every candidate, not only register-free ones)"),
    ("sink-insts-to-avoid-spills", "machine-licm (sink register-free instructions into loops over the register target)"),
    ("pred-aware-mcse", "machine-cse"),
    ("copy-prop-mcse", "machine-cse"),
    ("incremental-update-mcse", "machine-cse"),
    ("verify-update-mcse", "machine-cse"),
    ("print-verify", "machine-cse"),
    ("reg-target-adjust", "machine-cse, machine-licm and nvptx-remat-block (the register pressure target)"),
    ("pred-target-adjust", "machine-cse and machine-licm (the predicate pressure target)"),
    ("nv-remat-default-max-reg", "machine-cse, machine-licm, nvptx-remat-block and --stats (the register target when no maxnreg, --maxreg or occupancy bound is given)"),
    ("enable-legalize-types-checking", "legalize"),
    ("cssa-coalesce", "phi-elim"),
    ("nv-remat-block", "nvptx-remat-block"),
    ("nv-remat-max-times", "nvptx-remat-block"),
    ("nv-remat-block-single-cost", "nvptx-remat-block"),
    ("nv-remat-block-map-size-limit", "nvptx-remat-block"),
    ("nv-remat-block-max-cost", "nvptx-remat-block"),
    ("nv-remat-block-liveout-min-percentage", "nvptx-remat-block"),
    ("nv-remat-block-loop-cost-factor", "nvptx-remat-block"),
    ("nv-remat-block-load-cost", "nvptx-remat-block"),
    ("nv-remat-threshold-for-spec-reg", "nvptx-remat-block"),
    ("nv-dump-remat-block", "nvptx-remat-block"),
    ("nv-remat-check-internal-live", "nvptx-remat-block"),
    ("max-reg-kind", "nvptx-remat-block"),
    ("no-mi-remat", "nvptx-remat-block"),
    ("load-remat", "nvptx-remat-block"),
    ("vasp-fix1", "nvptx-remat-block"),
    ("remat-load-param", "nvptx-remat-block (whether kernel-parameter loads may be cloned)"),
    ("cssa-verbosity", "phi-elim"),
    ("disable-ssc", "spill (stack slot coloring)"),
    ("verify-machineinstrs", "the pass manager (verifies after every pass)"),
    ("usedessa", "machine-scheduler and post-RA-sched (1: post-RA scheduling only; 2: the pre-RA scheduler)"),
    ("misched-postra", "post-RA-sched (also in the full pipeline)"),
    ("nvptx-sched4reg", "machine-scheduler and post-RA-sched (schedule every block for pressure)"),
    ("sched-latency-headroom", "machine-scheduler and post-RA-sched (registers latency may cost)"),
    ("pipeliner-max-mii", "machine-pipeliner"),
    ("pipeliner-force-ii", "machine-pipeliner"),
    ("pipeliner-max-stages", "machine-pipeliner"),
    ("pipeliner-prune-deps", "machine-pipeliner"),
    ("pipeliner-prune-loop-carried", "machine-pipeliner"),
    ("pipeliner-ignore-recmii", "machine-pipeliner"),
    ("pipeliner-show-mask", "machine-pipeliner (the reservation table in the remark)"),
    ("pipeliner-dbg-res", "machine-pipeliner (resource use in the remark)"),
    ("pipeliner-annotate-for-testing", "machine-pipeliner"),
    ("pipeliner-ii-search-range", "machine-pipeliner"),
    ("pipeliner-register-pressure", "machine-pipeliner"),
    ("pipeliner-register-pressure-margin", "machine-pipeliner"),
    ("pipeliner-enable-copytophi", "machine-pipeliner"),
    ("pipeliner-skip-hidden-latency", "machine-pipeliner"),
    ("pipeliner-stage-latency", "machine-pipeliner"),
    ("pipeliner-force-issue-width", "machine-pipeliner"),
    ("pipeliner-mve-cg", "machine-pipeliner (accepted; as in the reference, the MVE generator serves only single-stage schedules, which are never expanded)"),
    ("pipeliner-experimental-cg", "machine-pipeliner (accepted; every expanded loop uses the peeling generator, the reference's fallthrough)"),
    ("enable-pipeliner-opt-size", "machine-pipeliner (accepted; there is no size-optimizing level)"),
];

/// The pass (or component) of this backend that reads knob `name`, if any.
pub fn knob_reader(name: &str) -> Option<&'static str> {
    PASSES
        .iter()
        .find(|p| p.switches.iter().any(|s| matches!(*s, Switch::DisabledBy(k) | Switch::EnabledBy(k) if k == name)))
        .map(|p| p.name)
        .or_else(|| KNOBS_READ.iter().find(|(k, _)| *k == name).map(|(_, p)| *p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails on every function whose name starts with `prefix`, one error each.
    fn fail_on(module: &Module, cx: &PassContext<'_>, prefix: &str) -> Result<(), Vec<MirError>> {
        let errors: Vec<MirError> = module.functions.iter().filter(|f| f.name.starts_with(prefix)).map(|f| MirError::at(cx.source.file, cx.source.text, f.loc.line as usize, 1, format!("@{}", f.name))).collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    static FIRST: PassInfo = PassInfo { name: "first", description: "", min_opt: OptLevel::O0, switches: &[], scope: Scope::Function, run: |m, cx| fail_on(m, cx, "bad") };
    static SECOND: PassInfo = PassInfo { name: "second", description: "", min_opt: OptLevel::O0, switches: &[], scope: Scope::Function, run: |m, cx| fail_on(m, cx, "late") };

    /// Batched, a module reports what running each pass over the whole module reports:
    /// the errors of the first pass that fails, from every function it fails on, in
    /// module order (not only those of the first batch that failed).
    #[test]
    fn batches_report_the_first_failing_pass_over_every_function() {
        let tables = crate::load_tables(None).unwrap();
        let sm = crate::audit::find_sm(tables, "80").unwrap();
        let text = crate::synth::calls(300 * 24);
        let source = crate::mir::verifier::Source { file: "calls.mir", text: &text };
        let mut module = crate::mir::parser::parse_module(&text, "calls.mir", tables).unwrap();
        assert!(module.functions.len() >= 300);
        // A later pass fails first in module order; the first pass fails far apart.
        for (k, name) in [(5, "late5"), (10, "bad10"), (280, "bad280")] {
            module.functions[k].name = name.into();
        }
        for jobs in [1, 2, 4] {
            let mut cx = PassContext::new(tables, Some(sm), source);
            cx.options.jobs = jobs;
            assert!(batches(module.functions.clone(), jobs, instructions).len() > 2, "one batch only");
            let errors = run_per_function(&mut module.clone(), &cx, &[&FIRST, &SECOND], |_, f| f).unwrap_err();
            let messages: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
            assert_eq!(messages, ["@bad10", "@bad280"], "-j {jobs}");
        }
    }

    /// The module compiled a batch at a time as it is read, or `None` where streaming
    /// gives up.
    fn streamed(text: &str, jobs: usize) -> Option<String> {
        let tables = crate::load_tables(None).unwrap();
        let sm = crate::audit::find_sm(tables, "80").unwrap();
        let streamed = Streamed::new(text, "m.mir", tables)?;
        let mut cx = PassContext::new(tables, Some(sm), Source { file: "m.mir", text });
        cx.options.jobs = jobs;
        compile_streamed(&streamed, &cx).map(|(ptx, _)| ptx)
    }

    /// The module read whole and compiled by [`compile_module`].
    fn whole(text: &str) -> Result<String, Vec<MirError>> {
        let tables = crate::load_tables(None).unwrap();
        let sm = crate::audit::find_sm(tables, "80").unwrap();
        let mut module = crate::mir::parser::parse_module(text, "m.mir", tables).map_err(|e| vec![e])?;
        compile_module(&mut module, &PassContext::new(tables, Some(sm), Source { file: "m.mir", text }))
    }

    /// Streaming gives the PTX of the whole-module pipeline byte for byte, on any
    /// number of threads: on a generated module of 300 functions and on every
    /// multi-function file of the corpus it accepts.
    #[test]
    fn streamed_compiles_are_whole_module_compiles() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
        let mut texts = vec![crate::synth::calls(300 * 24)];
        let mut files: Vec<_> = std::fs::read_dir(corpus).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "mir")).collect();
        files.sort();
        texts.extend(files.iter().map(|p| std::fs::read_to_string(p).unwrap()).filter(|t| t.matches("\nkind:").count() > 1));
        let mut streamed_files = 0;
        for text in &texts {
            let Some(ptx) = streamed(text, 1) else { continue };
            streamed_files += 1;
            assert_eq!(Ok(&ptx), whole(text).as_ref().map_err(|e| e.len()), "{}", &text[..200.min(text.len())]);
            assert_eq!(streamed(text, 3).as_ref(), Some(&ptx), "3 threads");
        }
        assert!(streamed_files > 8, "only {streamed_files} of {} modules streamed", texts.len());
    }

    /// Where a batch cannot answer for the whole module, streaming gives up (and the
    /// module is compiled whole): signatures that legalization rewrites (every caller
    /// changes with them), a library function to link (it joins the module's end), an
    /// error (the whole read reports the first in file order), a header that needs the
    /// YAML parser, one function only.
    #[test]
    fn streaming_gives_up_where_a_batch_cannot_answer_for_the_module() {
        let base = crate::synth::calls(3 * 24);
        assert!(streamed(&base, 1).is_some(), "the base module streams");
        let device = |name: &str, ty: &str, body: &str| format!("---\nname: {name}\nkind: device\nparams:\n  - {{ name: x, type: {ty} }}\nreturns: [{ty}]\nbody: |\n  bb.0:\n    %x:{ty} = ARG 0\n{body}    RET %r\n...\n");
        // sm_80 carries an i128 whole (`.b128`), so that module still streams; an i1
        // parameter travels as an i16.
        let wide = format!("{base}{}", device("wide", "i128", "    %r:i128 = ADD %x, %x\n"));
        assert_eq!(streamed(&wide, 1), whole(&wide).ok(), "an i128 parameter");
        let flag = format!("{base}{}", device("flag", "i1", "    %r:i1 = XOR %x, %x\n"));
        let library = format!("{base}{}", device("rem", "f32", "    %r:f32 = FREM %x, %x\n"));
        for (what, text) in [("an i1 parameter", &flag), ("a library call", &library)] {
            assert!(whole(text).is_ok(), "{what}: the whole module compiles");
            assert_eq!(streamed(text, 1), None, "{what}");
        }
        let broken = format!("{base}{}", device("broken", "f32", "    %r:f32 = FADD %x, %nope\n"));
        assert!(whole(&broken).is_err());
        assert_eq!(streamed(&broken, 1), None, "an undefined value");
        let quoted = base.replacen("name: f1\n", "name: \"f1\"\n", 1);
        assert_ne!(quoted, base);
        assert!(whole(&quoted).is_ok());
        assert_eq!(streamed(&quoted, 1), None, "a quoted name");
        let one = crate::synth::calls(24);
        let one = &one[one.rfind("---\nname:").unwrap()..];
        assert_eq!(streamed(one, 1), None, "one function");
    }

    /// Random modules with device functions (the generator's calls, returning their
    /// parameters reversed): where streaming answers, it answers the whole-module PTX.
    /// Most give up (an i1 parameter, a library call): 39 of the 395 with calls here
    /// stream, so the count checks that enough do.
    #[test]
    fn streamed_random_modules_are_whole_module_compiles() {
        let tables = crate::load_tables(None).unwrap();
        let config = crate::random_mir::GeneratorConfig { calls: true, ..Default::default() };
        let (mut answered, mut with_calls) = (0, 0);
        for seed in 0..600 {
            let Ok(kernel) = crate::random_mir::generate(seed, &config, tables) else { continue };
            if !kernel.text.contains("\nkind: device") {
                continue;
            }
            with_calls += 1;
            if let Some(ptx) = streamed(&kernel.text, 1) {
                answered += 1;
                assert_eq!(Some(ptx), whole(&kernel.text).ok(), "seed {seed}");
            }
        }
        assert!(answered >= 30, "{answered} of {with_calls} modules with calls streamed");
    }
}
