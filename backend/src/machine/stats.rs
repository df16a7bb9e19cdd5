//! `ptxc compile --stats`: per function, the register pressure the machine code asks
//! of ptxas, before and after the allocator (out-of-SSA translation and coalescing),
//! the register target and what set it, and the occupancy that pressure allows.
//!
//! Max-live figures come from [`super::pressure`] (MRPA): per register class the
//! largest number of values live at once, and the general set weighted by the
//! description's `pressure_weight` (a 64-bit register counts two), which is what a
//! per-thread register count compares with.

use std::collections::HashSet;

use serde::Serialize;
use target_desc::tables::{OccupancyInfo, SmTables, TargetTables, NO_CLASS};

use super::cfg::Cfg;
use super::pressure::{register_target, Pressure, PressureSets, RegisterTarget};
use crate::mir::{Function, FunctionKind, Module};
use crate::options::Options;

/// Pressure of one function at one point of the pipeline.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PressureSummary {
    /// Max live values per register class (unweighted), classes with none left out.
    #[serde(serialize_with = "as_map")]
    pub max_live: Vec<(String, u32)>,
    /// Max live of the general set, weighted: the registers per thread it needs.
    pub weighted: u32,
    /// Max live predicates.
    pub predicates: u32,
    /// Virtual registers per class (distinct values), what emission declares.
    #[serde(serialize_with = "as_map")]
    pub virtual_registers: Vec<(String, u32)>,
}

/// Class-to-count lists as JSON objects, in class order.
fn as_map<S: serde::Serializer>(items: &[(String, u32)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(items.iter().map(|(k, v)| (k, v)))
}

/// The occupancy that `regs` registers per thread allow.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct OccupancyReport {
    /// The description's profile for the SM.
    pub profile: String,
    pub regs_per_thread: u32,
    /// Threads per block: the kernel's `maxntid`, else 256 (said in `assumed_block`).
    pub threads_per_block: u32,
    pub assumed_block: bool,
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
    pub max_warps_per_sm: u32,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FunctionStats {
    pub name: String,
    pub kernel: bool,
    pub blocks: usize,
    pub instructions: usize,
    pub register_target: u32,
    pub register_target_source: String,
    pub before_allocation: Option<PressureSummary>,
    pub after_allocation: Option<PressureSummary>,
    pub occupancy: Option<OccupancyReport>,
    /// The `.local` depot: its bytes (frame layout), objects, and how many are spill slots.
    pub frame_bytes: u64,
    pub frame_objects: usize,
    pub spill_slots: usize,
}

/// The pressure of every function of `module`.
pub fn summarize(module: &Module, tables: &TargetTables, sm: &SmTables) -> Vec<PressureSummary> {
    let sets = PressureSets::new(tables, sm);
    let classes = ClassSets::new(tables, sm);
    module.functions.iter().map(|f| summarize_function(f, tables, &sets, &classes)).collect()
}

/// The statistics of every function: `before` is [`summarize`] taken before the
/// allocator ran, `module` the final machine code.
pub fn collect(module: &Module, before: Option<&[PressureSummary]>, tables: &TargetTables, sm: &SmTables, options: &Options) -> Vec<FunctionStats> {
    let after = summarize(module, tables, sm);
    module
        .functions
        .iter()
        .zip(after)
        .enumerate()
        .map(|(i, (f, after))| {
            let RegisterTarget { regs, source } = register_target(f, sm.occupancy.as_ref(), options);
            let occupancy = sm.occupancy.as_ref().filter(|_| f.kind == FunctionKind::Kernel).map(|o| occupancy(o, f, after.weighted.max(1)));
            FunctionStats {
                name: f.name.clone(),
                kernel: f.kind == FunctionKind::Kernel,
                blocks: f.blocks.len(),
                instructions: f.blocks.iter().map(|b| b.insts.len()).sum(),
                register_target: regs,
                register_target_source: source.to_string(),
                before_allocation: before.and_then(|b| b.get(i).cloned()),
                after_allocation: Some(after),
                occupancy,
                frame_bytes: if f.frame.is_empty() { 0 } else { crate::emit::frame::layout(f).size },
                frame_objects: f.frame.len(),
                spill_slots: f.frame.iter().filter(|o| o.spill).count(),
            }
        })
        .collect()
}

fn occupancy(o: &OccupancyInfo, f: &Function, regs: u32) -> OccupancyReport {
    let (threads, assumed) = match &f.attributes.maxntid {
        Some(ntid) => (ntid.iter().product::<u32>(), false),
        None => (256, true),
    };
    let blocks = o.blocks_per_sm(regs, threads);
    OccupancyReport {
        profile: o.name.to_string(),
        regs_per_thread: regs,
        threads_per_block: threads,
        assumed_block: assumed,
        blocks_per_sm: blocks,
        warps_per_sm: blocks * o.warps_per_block(threads),
        max_warps_per_sm: o.max_warps_per_sm,
    }
}

/// One pressure set per register class of the SM, each register weighing one: the
/// per-class max-live figures.
struct ClassSets {
    sets: PressureSets,
}

impl ClassSets {
    fn new(tables: &TargetTables, sm: &SmTables) -> ClassSets {
        let names: Vec<&'static str> = tables.register_classes.iter().map(|c| c.name).collect();
        let by_type = sm.type_class.iter().map(|&c| (c != NO_CLASS).then_some((c as usize, 1))).collect();
        ClassSets { sets: PressureSets::from_parts(names, by_type, sm.occupancy) }
    }
}

fn summarize_function(f: &Function, tables: &TargetTables, sets: &PressureSets, classes: &ClassSets) -> PressureSummary {
    let cfg = Cfg::new(f, tables);
    let weighted = Pressure::compute(f, &cfg.preds, sets, tables);
    let per_class = Pressure::compute(f, &cfg.preds, &classes.sets, tables);
    let predicates = (1..sets.names.len()).map(|s| weighted.function_peak(s)).sum();
    let max_live = classes.sets.names.iter().enumerate().map(|(s, name)| (name.to_string(), per_class.function_peak(s))).filter(|(_, n)| *n > 0).collect();
    let mut seen: HashSet<u32> = HashSet::new();
    let mut counts = vec![0u32; classes.sets.names.len()];
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        for v in inst.defs.iter().copied().chain(inst.uses()) {
            if seen.insert(v.0) {
                if let Some((s, _)) = classes.sets.of(f, v) {
                    counts[s] += 1;
                }
            }
        }
    }
    let virtual_registers = classes.sets.names.iter().zip(counts).filter(|(_, n)| *n > 0).map(|(name, n)| (name.to_string(), n)).collect();
    PressureSummary { max_live, weighted: weighted.function_peak(0), predicates, virtual_registers }
}

fn list(items: &[(String, u32)]) -> String {
    if items.is_empty() {
        return "none".into();
    }
    items.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}

/// The statistics as text, one block per function (what `--stats` prints).
pub fn render(stats: &[FunctionStats]) -> String {
    let mut out = String::new();
    for s in stats {
        out.push_str(&format!(
            "stats: @{} ({}): {} instructions in {} blocks; register target {} ({})\n",
            s.name,
            if s.kernel { "kernel" } else { "function" },
            s.instructions,
            s.blocks,
            s.register_target,
            s.register_target_source
        ));
        for (when, summary) in [("before allocation", &s.before_allocation), ("after allocation", &s.after_allocation)] {
            if let Some(p) = summary {
                out.push_str(&format!(
                    "  {when}: max live {} registers (weighted), {} predicates; per class: {}; virtual registers: {}\n",
                    p.weighted,
                    p.predicates,
                    list(&p.max_live),
                    list(&p.virtual_registers)
                ));
            }
        }
        if s.frame_objects > 0 {
            out.push_str(&format!("  frame: {} bytes of local memory; frame objects {}, of them spill slots {}\n", s.frame_bytes, s.frame_objects, s.spill_slots));
        }
        if let Some(o) = &s.occupancy {
            out.push_str(&format!(
                "  occupancy ({}): {} registers per thread, blocks of {} threads{}: {} blocks, {} of {} warps per SM ({}%)\n",
                o.profile,
                o.regs_per_thread,
                o.threads_per_block,
                if o.assumed_block { " (assumed; no maxntid)" } else { "" },
                o.blocks_per_sm,
                o.warps_per_sm,
                o.max_warps_per_sm,
                o.warps_per_sm * 100 / o.max_warps_per_sm.max(1)
            ));
        }
    }
    out
}
