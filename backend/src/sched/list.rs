//! The list scheduler (`machine-scheduler`, with `nvptx-sched4reg`): reorders each
//! block's region top-down over its dependence graph ([`super::dag`]).
//!
//! Selection follows cicc-instruction-scheduling.txt's three levels: units whose
//! operands are ready at the current cycle first, then the deeper unit (longest latency
//! path to the region's end), then the target priority table of the description, then
//! the narrower ASAP-ALAP window, then program order (so the result is deterministic).
//! Register pressure is tracked per pressure set as units are placed (a definition
//! adds its weight, the last read of a value that is not live out removes it). When the
//! block is over its register target, or `nvptx-sched4reg` is set, the unit that lowers
//! pressure most is taken first among the [`LOOK_AHEAD`] best ready ones, in the manner
//! of LLVM's AMDGPU occupancy scheduler; and whatever the mode, a unit that would lift
//! pressure over the block's allowance waits while another can go.
//!
//! The result is checked with MRPA ([`crate::machine::pressure`]): a block that was over
//! its target keeps the new order only if no set's peak rose; a block under it only if
//! the new peak stays within the target and does not lower the function's occupancy.
//! Otherwise the input order stays. Linear in the region apart from the ready queues
//! (n log n).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use target_desc::tables::{OccupancyInfo, TargetTables};

use crate::machine::pressure::{Pressure, PressureSets};
use crate::mir::{Function, Inst, ValueId};

use super::dag::{region, Dag, MemoryModel};
use super::model::SchedModel;

/// How many of the best ready units the pressure mode compares.
pub const LOOK_AHEAD: usize = 16;

/// What scheduling one block did.
#[derive(Clone, Debug, Default)]
pub struct BlockReport {
    pub block: usize,
    pub units: usize,
    pub edges: usize,
    /// Peak of the general pressure set before and after.
    pub peak_before: u32,
    pub peak_after: u32,
    /// Critical path (cycles) of the input order and of the new order, by the model's
    /// latencies with one unit issued per cycle.
    pub length_before: u32,
    pub length_after: u32,
    pub pressure_mode: bool,
    /// Whether the new order was kept.
    pub kept: bool,
    /// Why not, when it was not.
    pub reverted: Option<&'static str>,
}

/// Knob values the scheduler reads.
#[derive(Clone, Copy, Debug)]
pub struct ListOptions {
    /// `nvptx-sched4reg`: always schedule for pressure.
    pub sched4reg: bool,
    /// `sched-latency-headroom`: registers a block under its target may gain for a
    /// shorter critical path.
    pub headroom: u32,
}

/// Registers-to-warps: the warps per SM that `regs` registers per thread allow.
pub fn warps_for(occupancy: Option<&OccupancyInfo>, regs: u32) -> u32 {
    let Some(o) = occupancy else { return 0 };
    let per_warp = (regs.max(1) * 32).div_ceil(o.reg_alloc_unit) * o.reg_alloc_unit;
    (o.regs_per_sm / per_warp).min(o.max_warps_per_sm)
}

/// Reorders `slice` in place so that position `j` holds what was at `from[j]` (`from`
/// a permutation), by following its cycles: no second copy of a large block, whose
/// instructions are the schedulers' biggest allocation (issue 15's peak memory).
fn permute<T>(slice: &mut [T], from: &[u32]) {
    debug_assert_eq!(slice.len(), from.len());
    let mut placed = vec![false; from.len()];
    for start in 0..from.len() {
        let mut j = start;
        while !placed[j] {
            placed[j] = true;
            let k = from[j] as usize;
            if k == start {
                break;
            }
            // Position j takes what was at k; what j held (the value that started
            // this cycle) moves on to k.
            slice.swap(j, k);
            j = k;
        }
    }
}

/// Cycles to run `order` (unit indices) with one unit issued per cycle, each waiting
/// for its operands.
/// `order` is topological, so a unit's operands are ready once its predecessors have
/// started: each passes its result's time on to its successors.
fn schedule_length(dag: &Dag, order: impl Iterator<Item = usize>) -> u32 {
    let mut ready = vec![0u32; dag.len()];
    let mut cycle = 0u32;
    let mut end = 0u32;
    for u in order {
        cycle = cycle.max(ready[u]);
        for e in &dag.succs[u] {
            let s = e.other as usize;
            ready[s] = ready[s].max(cycle + e.latency);
        }
        end = end.max(cycle + dag.latency[u]);
        cycle += 1;
    }
    end
}

/// Schedules every block of `f`. Returns one report per block with a region of two or
/// more units.
pub fn schedule_function(
    f: &mut Function,
    tables: &TargetTables,
    model: &SchedModel<'_>,
    sets: &PressureSets,
    options: &crate::options::Options,
    list: ListOptions,
) -> Vec<BlockReport> {
    let memory = MemoryModel::new(model);
    let cfg = crate::machine::cfg::Cfg::new(f, tables);
    let pressure = Pressure::compute(f, &cfg.preds, sets, tables);
    let targets = sets.targets(f, options);
    let function_peak = pressure.function_peak(0);
    let warps_before = warps_for(sets.occupancy.as_ref(), function_peak);
    let headroom = list.headroom;
    let mut reports = Vec::new();
    let values = f.values.len();
    let mut scratch = Scratch { remaining: vec![0; values], read_here: vec![false; values], live_after: vec![false; values], defined: vec![0; values], counted: vec![0; values], reads: Vec::new(), unit_delta: Vec::new(), last_reads: Vec::new() };
    for b in 0..f.blocks.len() {
        let range = region(&f.blocks[b], tables);
        if range.len() < 2 {
            continue;
        }
        let insts = &f.blocks[b].insts[range.clone()];
        let dag = Dag::build(f, insts, range.start, model, &memory);
        if dag.len() < 2 {
            continue;
        }
        // Values read after the region (by its terminators) count as live out of it. A
        // list (a value may come twice): it is only walked.
        let mut after: Vec<u32> = pressure.live_out_of(f, b, &cfg.succs, tables).into_iter().collect();
        for inst in &f.blocks[b].insts[range.end..] {
            after.extend(inst.uses().map(|v| v.0));
        }
        let before_peak = pressure.peak[b].clone();
        let over = before_peak
            .iter()
            .zip(&targets)
            .any(|(p, t)| i64::from(*p) > *t);
        let pressure_mode = over || list.sched4reg;
        // The most the general set may reach: with `sched-latency-headroom` 0 (the
        // default) the block's own peak, since ptxas schedules for latency again and
        // keeps whatever pressure our order implies; more lets latency win up to the
        // target, never lowering the function's occupancy.
        let mut allowance = (before_peak[0] + headroom)
            .min(targets[0].max(0) as u32)
            .max(before_peak[0]);
        if !over {
            while allowance > function_peak
                && allowance > before_peak[0]
                && warps_for(sets.occupancy.as_ref(), allowance) < warps_before
            {
                allowance -= 1;
            }
        }
        // Live at the region's start: what it or later code reads that it does not define.
        // Marked per value with the block's stamp, not gathered in hash sets (two sets of
        // 25k values per block on a loop carrying 25k PHIs: 4% of the scheduler).
        let start_pressure = {
            let stamp = b as u32 + 1;
            let Scratch { defined, counted, .. } = &mut scratch;
            for d in insts.iter().flat_map(|i| &i.defs) {
                defined[d.0 as usize] = stamp;
            }
            let mut sum = 0u32;
            for v in after.iter().copied().chain(insts.iter().flat_map(|i| i.uses()).map(|v| v.0)) {
                if defined[v as usize] != stamp && counted[v as usize] != stamp {
                    counted[v as usize] = stamp;
                    sum += sets.of(f, ValueId(v)).filter(|(s, _)| *s == 0).map_or(0, |(_, w)| w);
                }
            }
            sum
        };
        let order = list_schedule(
            f,
            insts,
            &dag,
            model,
            sets,
            &after,
            pressure_mode,
            start_pressure,
            allowance,
            &mut scratch,
        );
        let mut report = BlockReport {
            block: b,
            units: dag.len(),
            edges: dag.edge_count(),
            peak_before: before_peak[0],
            peak_after: before_peak[0],
            length_before: schedule_length(&dag, 0..dag.len()),
            length_after: schedule_length(&dag, order.iter().map(|&u| u as usize)),
            pressure_mode,
            kept: false,
            reverted: None,
        };
        if order.iter().enumerate().all(|(j, &u)| u as usize == j) {
            report.length_after = report.length_before;
            report.reverted = Some("already in order");
            reports.push(report);
            continue;
        }
        // Apply (moving, not cloning, the instructions), then check with MRPA.
        // `moved[j]` is the region index of the instruction now at region position j.
        let moved: Vec<u32> = order.iter().flat_map(|&u| dag.units[u as usize].clone()).map(|i| i as u32).collect();
        drop(order);
        permute(&mut f.blocks[b].insts[range.clone()], &moved);
        let after_peak = pressure.block_peak(f, b, &cfg.succs, sets, tables);
        let reason = if over {
            after_peak
                .iter()
                .zip(&before_peak)
                .any(|(a, p)| a > p)
                .then_some("pressure would rise in a block over its target")
        } else if after_peak[0] > allowance
            || after_peak
                .iter()
                .zip(&before_peak)
                .skip(1)
                .any(|(a, p)| a > p)
        {
            Some("pressure would rise")
        } else if after_peak
            .iter()
            .zip(&targets)
            .any(|(a, t)| i64::from(*a) > *t)
        {
            Some("pressure would exceed the target")
        } else if after_peak[0] > function_peak
            && warps_for(sets.occupancy.as_ref(), after_peak[0]) < warps_before
        {
            Some("occupancy would drop")
        } else if report.length_after >= report.length_before && after_peak[0] >= before_peak[0] {
            Some("no gain")
        } else {
            None
        };
        report.peak_after = after_peak[0];
        match reason {
            Some(r) => {
                let mut inverse = vec![0u32; moved.len()];
                for (j, &k) in moved.iter().enumerate() {
                    inverse[k as usize] = j as u32;
                }
                permute(&mut f.blocks[b].insts[range.clone()], &inverse);
                report.reverted = Some(r);
            }
            None => report.kept = true,
        }
        reports.push(report);
    }
    super::dag::release_large_scratch();
    reports
}

/// Per-value arrays of the list scheduler, sized once per function and left zeroed
/// between blocks (so a block costs its own size, not the function's).
struct Scratch {
    remaining: Vec<u32>,
    read_here: Vec<bool>,
    live_after: Vec<bool>,
    /// Per value, the stamp (block number + 1) of the last block whose region defines
    /// it, and of the last whose start pressure counted it.
    defined: Vec<u32>,
    counted: Vec<u32>,
    reads: Vec<u32>,
    /// Per unit of the block: its fixed pressure change (a few registers per result,
    /// so 32 bits, which keep the entry at 16 bytes) and its range of `last_reads`.
    unit_delta: Vec<Option<(i32, u32, u32)>>,
    /// Values units read, not read after the region: (value, reads in the unit).
    last_reads: Vec<(u32, u32)>,
}

/// The static part of a unit's rank, the larger the better: deeper, higher target
/// priority, narrower window, earlier in the input. Packed into one integer, most
/// significant field first, so that two ranks compare in one instruction: the ready
/// queues compare them millions of times on a block of 25k units (a tuple compared
/// field by field was a third of the scheduler's own time there). The unit is the low
/// word, so the queues hold the rank alone.
type Rank = u128;

fn pack_rank(height: u32, priority: u32, window: u32, unit: u32) -> Rank {
    (u128::from(height) << 96) | (u128::from(priority) << 64) | (u128::from(!window) << 32) | u128::from(!unit)
}

fn unit_of(rank: Rank) -> u32 {
    !(rank as u32)
}

#[allow(clippy::too_many_arguments)]
fn list_schedule(
    f: &Function,
    insts: &[Inst],
    dag: &Dag,
    model: &SchedModel<'_>,
    sets: &PressureSets,
    live_after: &[u32],
    pressure_mode: bool,
    start_pressure: u32,
    allowance: u32,
    scratch: &mut Scratch,
) -> Vec<u32> {
    let n = dag.len();
    let heights = dag.heights();
    let asap = dag.asap();
    let critical = heights
        .iter()
        .zip(&asap)
        .map(|(h, a)| h + a)
        .max()
        .unwrap_or(0);
    let rank = |u: u32| -> Rank {
        let i = u as usize;
        let alap = critical - heights[i];
        let inst = &insts[dag.units[i].start];
        pack_rank(heights[i], model.priority(inst, asap[i]), alap - asap[i], u)
    };
    // Remaining reads of each value inside the region, and whether it has any; values
    // read after it never die. Dense per value id (`scratch` is the function's, reset
    // on the way out), so no hashing per step.
    let Scratch { remaining, read_here, live_after: after_flag, reads, unit_delta, last_reads, .. } = scratch;
    for inst in insts {
        for v in inst.uses() {
            remaining[v.0 as usize] += 1;
            read_here[v.0 as usize] = true;
        }
    }
    for &v in live_after {
        after_flag[v as usize] = true;
    }
    let weight = |v: ValueId| sets.of(f, v).filter(|(s, _)| *s == 0).map_or(0i64, |(_, w)| i64::from(w));
    // Pressure change of the general set if `u` went next: what its results add (a
    // result nobody reads is freed at once), less the values it reads for the last
    // time. The first part and the reads grouped by value are the same at every step,
    // so they are made once per unit, when the unit is first considered (a unit is
    // weighed at every step it waits in the window); only `remaining` changes.
    unit_delta.clear();
    unit_delta.resize(n, None);
    last_reads.clear();
    let mut delta = |u: u32, remaining: &[u32], reads: &mut Vec<u32>| -> i64 {
        let (fixed, from, to) = *unit_delta[u as usize].get_or_insert_with(|| {
            let mut fixed = 0i64;
            reads.clear();
            for inst in &insts[dag.units[u as usize].clone()] {
                for def in &inst.defs {
                    if read_here[def.0 as usize] || after_flag[def.0 as usize] {
                        fixed += weight(*def);
                    }
                }
                reads.extend(inst.uses().map(|v| v.0));
            }
            reads.sort_unstable();
            let from = last_reads.len() as u32;
            let mut i = 0;
            while i < reads.len() {
                let v = reads[i];
                let mut count = 0;
                while i < reads.len() && reads[i] == v {
                    count += 1;
                    i += 1;
                }
                // A value read after the region never dies here.
                if !after_flag[v as usize] {
                    last_reads.push((v, count));
                }
            }
            (fixed as i32, from, last_reads.len() as u32)
        });
        let mut d = i64::from(fixed);
        for &(v, count) in &last_reads[from as usize..to as usize] {
            if remaining[v as usize] == count {
                d -= weight(ValueId(v));
            }
        }
        d
    };
    let mut preds_left: Vec<u32> = dag.in_degrees();
    let mut earliest = vec![0u32; n];
    // Pending: waiting for operands (by cycle); available: ready now (by rank).
    let mut pending: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new();
    let mut available: BinaryHeap<Rank> = BinaryHeap::new();
    for u in 0..n {
        if preds_left[u] == 0 {
            pending.push(Reverse((0, u as u32)));
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut cycle = 0u32;
    let mut current = i64::from(start_pressure);
    // The window: the best (up to) LOOK_AHEAD available units, kept across steps; the
    // heap holds the rest, none of them better than the window's worst. The worst's
    // place is remembered until the window changes: a block whose units all become
    // ready at once admits thousands in a row, nearly all straight to the heap.
    let mut held: Vec<Rank> = Vec::with_capacity(LOOK_AHEAD);
    let mut worst: Option<usize> = None;
    let admit = |x: Rank, held: &mut Vec<Rank>, worst: &mut Option<usize>, available: &mut BinaryHeap<Rank>| {
        if worst.is_none() {
            *worst = (0..held.len()).min_by_key(|&i| held[i]);
        }
        match *worst {
            Some(w) if x > held[w] => {
                if held.len() == LOOK_AHEAD {
                    available.push(held.swap_remove(w));
                }
                held.push(x);
                *worst = None;
            }
            _ => available.push(x),
        }
    };
    let mut deltas: Vec<i64> = Vec::with_capacity(LOOK_AHEAD);
    while order.len() < n {
        // Pressure mode ignores latency: every unit whose operands are computed is a
        // candidate. Latency mode takes what is ready at this cycle, waiting when
        // nothing is.
        while let Some(&Reverse((c, u))) = pending.peek() {
            if c > cycle && !(available.is_empty() && held.is_empty()) && !pressure_mode {
                break;
            }
            pending.pop();
            cycle = cycle.max(c);
            admit(rank(u), &mut held, &mut worst, &mut available);
        }
        // Among the best few: in pressure mode the largest drop; otherwise the best
        // rank that stays within the allowance, waiting for later units (stalling
        // rather than lifting pressure) when none does.
        let pick = loop {
            while held.len() < LOOK_AHEAD {
                match available.pop() {
                    Some(x) => {
                        held.push(x);
                        worst = None;
                    }
                    None => break,
                }
            }
            deltas.clear();
            deltas.extend(held.iter().map(|&r| delta(unit_of(r), remaining, reads)));
            if pressure_mode {
                let i = (0..held.len()).min_by_key(|&i| (deltas[i], Reverse(held[i]))).unwrap_or(0);
                break (i, deltas[i]);
            }
            if let Some(i) = (0..held.len()).filter(|&i| current + deltas[i] <= i64::from(allowance)).max_by_key(|&i| held[i]) {
                break (i, deltas[i]);
            }
            match (held.len() < LOOK_AHEAD).then(|| pending.pop()).flatten() {
                Some(Reverse((c, u))) => {
                    cycle = cycle.max(c);
                    admit(rank(u), &mut held, &mut worst, &mut available);
                }
                None => {
                    let i = (0..held.len()).min_by_key(|&i| (deltas[i], Reverse(held[i]))).unwrap_or(0);
                    break (i, deltas[i]);
                }
            }
        };
        let (pick, pick_delta) = pick;
        let u = unit_of(held.swap_remove(pick)) as usize;
        worst = None;
        current += pick_delta;
        for inst in &insts[dag.units[u].clone()] {
            for v in inst.uses() {
                remaining[v.0 as usize] = remaining[v.0 as usize].saturating_sub(1);
            }
        }
        order.push(u as u32);
        let start = cycle;
        cycle += 1;
        for e in &dag.succs[u] {
            let s = e.other as usize;
            earliest[s] = earliest[s].max(start + e.latency);
            preds_left[s] -= 1;
            if preds_left[s] == 0 {
                pending.push(Reverse((earliest[s], s as u32)));
            }
        }
    }
    // Leave the scratch arrays clean for the next block.
    for inst in insts {
        for v in inst.uses() {
            remaining[v.0 as usize] = 0;
            read_here[v.0 as usize] = false;
        }
    }
    for &v in live_after {
        after_flag[v as usize] = false;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::{pack_rank, permute, unit_of};
    use proptest::prelude::*;
    use std::cmp::Reverse;

    proptest! {
        /// Packed ranks order as the tuple they pack (deeper, higher priority, narrower
        /// window, earlier unit first), and give their unit back.
        #[test]
        fn packed_ranks_order_as_their_fields(
            a in any::<[u32; 4]>(),
            b in any::<[u32; 4]>(),
            // Small fields too, so that the leading fields tie.
            c in prop::array::uniform4(0u32..3),
            d in prop::array::uniform4(0u32..3),
        ) {
            for (x, y) in [(a, b), (c, d)] {
                let key = |r: [u32; 4]| (r[0], r[1], Reverse(r[2]), Reverse(r[3]));
                let (px, py) = (pack_rank(x[0], x[1], x[2], x[3]), pack_rank(y[0], y[1], y[2], y[3]));
                prop_assert_eq!(px.cmp(&py), key(x).cmp(&key(y)));
                prop_assert_eq!(unit_of(px), x[3]);
            }
        }
    }

    #[test]
    fn permute_places_each_element_and_its_inverse_restores_the_order() {
        // Several cycles, a fixed point and a long cycle.
        let from: [u32; 10] = [3, 0, 1, 2, 4, 7, 5, 6, 9, 8];
        let mut v: Vec<u32> = (0..10).map(|i| i * 10).collect();
        permute(&mut v, &from);
        let expected: Vec<u32> = from.iter().map(|&k| k * 10).collect();
        assert_eq!(v, expected);
        let mut inverse = vec![0u32; from.len()];
        for (j, &k) in from.iter().enumerate() {
            inverse[k as usize] = j as u32;
        }
        permute(&mut v, &inverse);
        assert_eq!(v, (0..10).map(|i| i * 10).collect::<Vec<u32>>());
    }
}
