//! Instruction scheduling (cicc-instruction-scheduling.txt): the dependence graph
//! ([`dag`]), the cost model read from the description ([`model`]), the
//! pressure-driven list scheduler ([`list`], passes `machine-scheduler` before the
//! spiller and `post-RA-sched` after it) and the swing modulo scheduler
//! ([`pipeliner`], pass `machine-pipeliner`, on SSA before PHI elimination).

pub mod dag;
pub mod list;
pub mod model;
pub mod pipeliner;

use target_desc::tables::{SmTables, TargetTables};

use crate::machine::pressure::PressureSets;
use crate::mir::{Loc, Module};
use crate::options::Options;

/// What a list-scheduling pass did, for `--remarks`.
#[derive(Default)]
pub struct SchedStats {
    pub blocks: usize,
    pub reordered: usize,
    pub reverted: usize,
    pub pressure_mode: usize,
    pub units: usize,
    pub edges: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

/// Runs the list scheduler over every function of `module`; with `remarks`, a line per
/// block in the stats.
pub fn run_list_scheduler(
    module: &mut Module,
    tables: &TargetTables,
    sm: &SmTables,
    options: &Options,
    remarks: bool,
) -> SchedStats {
    let model = model::SchedModel::new(tables, sm);
    let sets = PressureSets::new(tables, sm);
    let list_options = list::ListOptions {
        sched4reg: options.flag("nvptx-sched4reg") == Some(true),
        headroom: options
            .int("sched-latency-headroom")
            .unwrap_or(0)
            .clamp(0, 255) as u32,
    };
    let mut stats = SchedStats::default();
    for f in &mut module.functions {
        let reports = list::schedule_function(f, tables, &model, &sets, options, list_options);
        for r in reports {
            stats.blocks += 1;
            stats.units += r.units;
            stats.edges += r.edges;
            stats.pressure_mode += usize::from(r.pressure_mode);
            if r.kept {
                stats.reordered += 1;
            } else if r.reverted != Some("already in order") {
                stats.reverted += 1;
            }
            if !remarks {
                continue;
            }
            let block = &f.blocks[r.block];
            // A reverted order's figures are the ones it would have had.
            let outcome = match r.reverted {
                None => "reordered".to_string(),
                Some("already in order") => "kept the input order (already in order)".to_string(),
                Some(why) => format!("kept the input order ({why}; the new order would have had pressure {} and critical path {})", r.peak_after, r.length_after),
            };
            let (peak_after, length_after) = if r.kept {
                (r.peak_after, r.length_after)
            } else {
                (r.peak_before, r.length_before)
            };
            let message = format!(
                "{}: {} units, {} edges, {} mode: pressure {} -> {}, critical path {} -> {} cycles; {}",
                block.label(),
                r.units,
                r.edges,
                if r.pressure_mode { "pressure" } else { "latency" },
                r.peak_before,
                peak_after,
                r.length_before,
                length_after,
                outcome
            );
            stats.remarks.push((f.name.clone(), block.loc, message));
        }
    }
    stats
}
