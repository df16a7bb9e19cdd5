//! MachineLICM: loop-invariant code motion on SSA machine code, after MachineCSE and
//! before PHI elimination (reference: `cicc-machine-passes.txt`, MachineLICM in the
//! pre-RA pipeline; knobs `disable-machine-licm` and `enable-mlicm`, and
//! `sink-insts-to-avoid-spills` for the opposite move, [`sink_into_loops`]).
//!
//! An instruction is invariant in a loop when it only computes its results (the
//! MachineCSE candidates: no store, call, barrier or side effect, loads only of
//! invariant memory) and every value it reads is defined outside the loop or by an
//! instruction already hoisted. Invariant instructions move, in dominance order, to
//! the end of the loop's preheader, so they run once instead of once per iteration.
//! Inner loops go first, and a loop's new preheader belongs to the enclosing loop,
//! so an instruction invariant in both moves out of both.
//!
//! Safety: the preheader always reaches the header, so the header's instructions run
//! at least once wherever they went; an instruction elsewhere in the loop moves
//! only when it is safe to run where the input would not (no load, no opcode with
//! `unsafe_to_speculate` in the description), or when its block dominates every exit
//! of the loop (it ran in the input whenever the loop was entered).
//!
//! A carry chain (`add.cc` and the `addc`s reading its flag) moves whole or not at
//! all, as one unit with the pressure of all its results: half of it moved would read
//! or leave the flag across the loop's own carry chains (random kernel 10510 of
//! `sim_random`: the `sub.cc` of an invariant i128 subtraction hoisted, its `subc`
//! refused by pressure).
//!
//! Pressure: a hoisted value is live across the whole loop. The pass keeps each
//! loop's peak pressure per set (from [`super::pressure`]) plus what it already
//! hoisted, and refuses a hoist that would take the peak past the target (the same
//! targets as MachineCSE: `maxnreg` or `nv-remat-default-max-reg`,
//! `reg-target-adjust`, the predicate limit and `pred-target-adjust`).
//!
//! A loop whose header has one predecessor outside the loop gets a preheader if that
//! predecessor also branches elsewhere: a new block on that edge, laid out just before
//! the header, so the CFG keeps its shape. Loops entered from several blocks are left
//! alone.

use target_desc::tables::{props, SmTables, TargetTables};

use super::cfg::Cfg;
use super::pressure::{Pressure, PressureSets};
use crate::mir::{opcode_info, Block, Function, Inst, Loc, Module, Opcode, Operand, ValueId};
use crate::options::Options;

/// What the pass did, for `--remarks machine-licm` and tests.
#[derive(Clone, Debug, Default)]
pub struct LicmStats {
    pub hoisted: usize,
    pub suppressed_by_pressure: usize,
    pub preheaders_made: usize,
    /// Instructions moved into a loop by `sink-insts-to-avoid-spills`.
    pub sunk: usize,
    /// Loops with invariant instructions but several entering blocks.
    pub no_preheader: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables, options: &Options) -> LicmStats {
    let sets = PressureSets::new(tables, sm);
    let mut stats = LicmStats::default();
    for f in &mut module.functions {
        if f.ssa {
            licm_function(f, tables, tables.sm_index(sm), &sets, options, &mut stats);
        }
    }
    stats
}

/// The preheaders the pass made: block index to the header it enters, and back.
#[derive(Default)]
struct Made {
    header_of: rustc_hash::FxHashMap<usize, usize>,
    preheader_of: rustc_hash::FxHashMap<usize, usize>,
}

fn is_terminator(inst: &Inst, tables: &TargetTables) -> bool {
    opcode_info(inst.opcode, tables).is_some_and(|o| o.props & props::TERMINATOR != 0)
}

fn licm_function(f: &mut Function, tables: &TargetTables, sm_index: usize, sets: &PressureSets, options: &Options, stats: &mut LicmStats) {
    if crate::machine::cfg::branches_only_forward(f, tables) {
        return;
    }
    let targets = sets.targets(f, options);
    hoist_out_of_loops(f, tables, sm_index, sets, &targets, stats);
    if options.flag("sink-insts-to-avoid-spills") == Some(true) {
        sink_into_loops(f, tables, sets, &targets, stats);
    }
}

fn hoist_out_of_loops(f: &mut Function, tables: &TargetTables, sm_index: usize, sets: &PressureSets, targets: &[i64], stats: &mut LicmStats) {
    let cfg = Cfg::new(f, tables);
    let mut loops = cfg.loops();
    if loops.is_empty() {
        return;
    }
    // Inner loops first (a nested loop has fewer blocks than the loops around it).
    loops.sort_by_key(|l| (l.blocks.len(), l.header));
    let original_blocks = f.blocks.len();
    // Each block's peak pressure per set, with what hoisting has added so far; new
    // blocks start with their header's peak. Computed at the first loop-invariant
    // instruction, before anything has moved: most loops have none.
    let mut peak: Option<Vec<Vec<i64>>> = None;
    let mut def_block = vec![usize::MAX; f.values.len()];
    for (b, block) in f.blocks.iter().enumerate() {
        for inst in &block.insts {
            for d in &inst.defs {
                def_block[d.0 as usize] = b;
            }
        }
    }
    // New preheaders: the header each enters, and the reverse.
    let mut made = Made::default();
    let mut next_number = f.blocks.iter().map(|b| b.number).max().unwrap_or(0) + 1;
    // `mark[b] == k + 1`: block `b` is in the k-th loop (the one being processed).
    let mut mark = vec![0usize; original_blocks];
    for (k, l) in loops.iter().enumerate() {
        for &b in &l.blocks {
            mark[b] = k + 1;
        }
        let in_loop = |b: usize| mark[b] == k + 1;
        // The new preheaders of inner loops are in this loop too.
        let member = |b: usize| if b < original_blocks { in_loop(b) } else { made.header_of.get(&b).is_some_and(|&h| in_loop(h) && h != l.header) };
        let exiting: Vec<usize> = l.blocks.iter().copied().filter(|&b| cfg.succs[b].iter().any(|&s| !in_loop(s))).collect();
        let guaranteed = |b: usize| {
            let b = if b < original_blocks { b } else { made.header_of[&b] };
            exiting.iter().all(|&e| cfg.dominates(b, e))
        };
        // Blocks in dominance order, each new preheader just before its header.
        let mut by_dominance = l.blocks.clone();
        by_dominance.sort_by_key(|&b| cfg.preorder_number(b));
        let mut order = Vec::with_capacity(l.blocks.len());
        for b in by_dominance {
            if b != l.header {
                order.extend(made.preheader_of.get(&b).copied());
            }
            order.push(b);
        }
        let loop_blocks: Vec<usize> = order.clone();
        let mut loop_peak: Option<Vec<i64>> = None;
        let mut added = vec![0i64; sets.names.len()];
        let mut hoist: Vec<(usize, usize)> = Vec::new();
        let mut hoisted_here = rustc_hash::FxHashSet::default();
        for &b in &order {
            let insts = &f.blocks[b].insts;
            // One instruction, or a carry chain, which moves whole or not at all.
            for unit in crate::mir::carry_units(insts, tables) {
                let chain = &insts[unit.clone()];
                // A reader without its writer before it is not a unit to move.
                if chain[0].reads_carry(tables) || chain.iter().any(|inst| inst.is_phi(tables) || !super::cse::candidate(inst, tables)) {
                    continue;
                }
                let defined_here = |v: ValueId| chain.iter().any(|inst| inst.defs.contains(&v));
                let invariant = chain.iter().flat_map(|inst| inst.uses()).all(|v| {
                    let d = def_block[v.0 as usize];
                    (d != usize::MAX && !member(d)) || hoisted_here.contains(&v.0) || defined_here(v)
                });
                if !invariant {
                    continue;
                }
                let speculatable = chain.iter().all(|inst| {
                    let info = opcode_info(inst.opcode, tables).expect("candidates have an opcode");
                    info.props & (props::MAY_LOAD | props::UNSAFE_TO_SPECULATE) == 0
                });
                if !speculatable && !guaranteed(b) {
                    continue;
                }
                let peak = peak.get_or_insert_with(|| {
                    let pressure = Pressure::compute(f, &cfg.preds, sets, tables);
                    pressure.peak.iter().map(|p| p.iter().map(|&x| i64::from(x)).collect()).collect()
                });
                let loop_peak = loop_peak.get_or_insert_with(|| (0..sets.names.len()).map(|s| loop_blocks.iter().map(|&b| peak[b][s]).max().unwrap_or(0)).collect());
                let mut weight = vec![0i64; sets.names.len()];
                for d in chain.iter().flat_map(|inst| &inst.defs) {
                    if let Some((s, w)) = sets.of(f, *d) {
                        weight[s] += i64::from(w);
                    }
                }
                if let Some(s) = (0..weight.len()).find(|&s| weight[s] > 0 && loop_peak[s] + weight[s] > targets[s]) {
                    stats.suppressed_by_pressure += 1;
                    let message = format!("not hoisted: {} pressure in the loop would reach {}, above the target {}", sets.names[s], loop_peak[s] + weight[s], targets[s]);
                    stats.remarks.push((f.name.clone(), chain[0].loc, message));
                    continue;
                }
                for s in 0..weight.len() {
                    loop_peak[s] += weight[s];
                    added[s] += weight[s];
                }
                hoisted_here.extend(chain.iter().flat_map(|inst| inst.defs.iter().map(|d| d.0)));
                hoist.extend(unit.map(|k| (b, k)));
            }
        }
        if hoist.is_empty() {
            continue;
        }
        let Some(preheader) = preheader(f, &cfg, l, tables, sm_index, &mut made, &mut next_number) else {
            stats.no_preheader += 1;
            continue;
        };
        let peak = peak.as_mut().expect("a hoisted instruction computed the peaks");
        if preheader >= peak.len() {
            stats.preheaders_made += 1;
            peak.push(peak[l.header].clone());
        }
        for &b in &loop_blocks {
            for s in 0..added.len() {
                peak[b][s] += added[s];
            }
        }
        // Move the instructions, keeping their order.
        let mut moved = Vec::with_capacity(hoist.len());
        for &(b, i) in &hoist {
            let inst = f.blocks[b].insts[i].clone();
            let message = format!("hoisted to bb.{}", f.blocks[preheader].number);
            stats.remarks.push((f.name.clone(), inst.loc, message));
            for d in &inst.defs {
                def_block[d.0 as usize] = preheader;
            }
            moved.push(inst);
        }
        stats.hoisted += moved.len();
        let mut by_block: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for &(b, i) in &hoist {
            by_block.entry(b).or_default().push(i);
        }
        for (b, indices) in by_block {
            let mut k = 0;
            let mut at = 0;
            f.blocks[b].insts.retain(|_| {
                let drop = indices.get(k) == Some(&at);
                if drop {
                    k += 1;
                }
                at += 1;
                !drop
            });
        }
        let block = &mut f.blocks[preheader];
        let at = block.insts.iter().position(|i| is_terminator(i, tables)).unwrap_or(block.insts.len());
        block.insts.splice(at..at, moved);
    }
    // Lay each new preheader out just before its header.
    if !made.header_of.is_empty() {
        let new_blocks: Vec<Block> = f.blocks.drain(original_blocks..).collect();
        let mut by_header: rustc_hash::FxHashMap<usize, Block> = new_blocks.into_iter().enumerate().map(|(k, blk)| (made.header_of[&(original_blocks + k)], blk)).collect();
        let old = std::mem::take(&mut f.blocks);
        for (b, block) in old.into_iter().enumerate() {
            if let Some(pre) = by_header.remove(&b) {
                f.blocks.push(pre);
            }
            f.blocks.push(block);
        }
    }
}

/// `sink-insts-to-avoid-spills` (LLVM's `MachineLICM::SinkIntoLoop`, which also runs
/// before register allocation only): where a loop's pressure is over the target, an
/// instruction outside it that reads no register and whose value only the loop reads
/// (a constant, a parameter or special-register read, a symbol's address) moves to
/// the nearest block dominating its readers, before the first of them. The value is
/// then live from there, not across the whole loop; the instruction runs once per
/// iteration instead of once, which is what a reload from a spill slot would cost
/// anyway, and such reads are nearly free on the GPU (ptxas folds constants and
/// parameters into their readers as constant-bank operands). As in LLVM the target
/// is the readers' nearest common dominator, inside a nested loop if all readers are.
/// Values read by a PHI or outside the loops stay.
fn sink_into_loops(f: &mut Function, tables: &TargetTables, sets: &PressureSets, targets: &[i64], stats: &mut LicmStats) {
    let cfg = Cfg::new(f, tables);
    let loops = cfg.loops();
    if loops.is_empty() {
        return;
    }
    let pressure = Pressure::compute(f, &cfg.preds, sets, tables);
    // Each loop's peak per set, lowered as values leave it.
    let mut loop_peak: Vec<Vec<i64>> = loops.iter().map(|l| (0..sets.names.len()).map(|s| l.blocks.iter().map(|&b| i64::from(pressure.peak[b][s])).max().unwrap_or(0)).collect()).collect();
    let mut loops_of: Vec<Vec<usize>> = vec![Vec::new(); f.blocks.len()];
    for (k, l) in loops.iter().enumerate() {
        for &b in &l.blocks {
            loops_of[b].push(k);
        }
    }
    // Per value: the nearest common dominator of the blocks reading it (outside PHIs),
    // and whether a PHI or an unreachable block reads it.
    let n = f.values.len();
    let mut readers: Vec<Option<usize>> = vec![None; n];
    let mut pinned = vec![false; n];
    for (b, block) in f.blocks.iter().enumerate() {
        for inst in &block.insts {
            let phi = inst.is_phi(tables);
            for v in inst.uses() {
                let v = v.0 as usize;
                if phi || !cfg.reachable(b) {
                    pinned[v] = true;
                } else {
                    readers[v] = Some(readers[v].map_or(b, |r| cfg.nearest_common_dominator(r, b)));
                }
            }
        }
    }
    // The moves: (source block, index, target block), in program order.
    let mut moves: Vec<(usize, usize, usize)> = Vec::new();
    for (b, block) in f.blocks.iter().enumerate() {
        if !cfg.reachable(b) {
            continue;
        }
        for (i, inst) in block.insts.iter().enumerate() {
            let [d] = inst.defs.as_slice() else { continue };
            let v = d.0 as usize;
            let Some(r) = readers[v] else { continue };
            if pinned[v] || inst.uses().next().is_some() || inst.is_phi(tables) || inst.tied_by_carry(tables) || !super::cse::candidate(inst, tables) {
                continue;
            }
            let info = opcode_info(inst.opcode, tables).expect("candidates have an opcode");
            if info.props & props::MAY_LOAD != 0 {
                continue;
            }
            // The loops the value would enter; it leaves their pressure.
            let entered: Vec<usize> = loops_of[r].iter().copied().filter(|&k| !loops[k].contains(b)).collect();
            let Some((s, w)) = sets.of(f, *d) else { continue };
            if !entered.iter().any(|&k| loop_peak[k][s] > targets[s]) {
                continue;
            }
            for &k in &entered {
                loop_peak[k][s] -= i64::from(w);
            }
            moves.push((b, i, r));
        }
    }
    if moves.is_empty() {
        return;
    }
    // Take the instructions out, then put each before the first reader in its target
    // block (before that reader's carry chain), or before the block's terminators.
    let mut pending: Vec<Vec<Inst>> = vec![Vec::new(); f.blocks.len()];
    let mut by_block: std::collections::BTreeMap<usize, Vec<(usize, usize)>> = Default::default();
    for &(b, i, r) in &moves {
        by_block.entry(b).or_default().push((i, r));
    }
    for (b, list) in by_block {
        let mut k = 0;
        let mut taken = Vec::new();
        let insts = std::mem::take(&mut f.blocks[b].insts);
        for (at, inst) in insts.into_iter().enumerate() {
            if list.get(k).is_some_and(|&(i, _)| i == at) {
                taken.push((list[k].1, inst));
                k += 1;
            } else {
                f.blocks[b].insts.push(inst);
            }
        }
        for (r, inst) in taken {
            let message = format!("sunk into bb.{} (the loop's pressure is over the target)", f.blocks[r].number);
            stats.remarks.push((f.name.clone(), inst.loc, message));
            pending[r].push(inst);
        }
    }
    stats.sunk += moves.len();
    for (r, mut waiting) in pending.into_iter().enumerate() {
        if waiting.is_empty() {
            continue;
        }
        let old = std::mem::take(&mut f.blocks[r].insts);
        let units = crate::mir::carry_units(&old, tables);
        let mut old = old.into_iter();
        let mut out = Vec::with_capacity(units.len() + waiting.len());
        for unit in units {
            let chain: Vec<Inst> = old.by_ref().take(unit.len()).collect();
            if is_terminator(&chain[0], tables) {
                out.append(&mut waiting);
            } else if !chain[0].is_phi(tables) {
                let read = |x: &Inst| chain.iter().flat_map(|c| c.uses()).any(|v| x.defs.contains(&v));
                let mut j = 0;
                while j < waiting.len() {
                    if read(&waiting[j]) {
                        out.push(waiting.remove(j));
                    } else {
                        j += 1;
                    }
                }
            }
            out.extend(chain);
        }
        out.append(&mut waiting);
        f.blocks[r].insts = out;
    }
}

/// The loop's preheader: the single block outside the loop entering the header,
/// when it branches only there; else a new block on that edge (its index is pushed
/// in `made`). `None` when several blocks outside the loop enter it.
fn preheader(f: &mut Function, cfg: &Cfg, l: &super::cfg::Loop, tables: &TargetTables, sm_index: usize, made: &mut Made, next_number: &mut u32) -> Option<usize> {
    if let Some(&p) = made.preheader_of.get(&l.header) {
        return Some(p);
    }
    let outside: Vec<usize> = cfg.preds[l.header].iter().copied().filter(|&p| !l.contains(p)).collect();
    let [p] = outside.as_slice() else { return None };
    let p = *p;
    if !cfg.reachable(p) {
        return None;
    }
    if cfg.succs[p].len() == 1 {
        return Some(p);
    }
    let header_number = f.blocks[l.header].number;
    let number = *next_number;
    *next_number += 1;
    // Redirect p's branches to the header, and the header's PHIs, to the new block.
    let p_number = f.blocks[p].number;
    for inst in f.blocks[p].insts.iter_mut().filter(|i| is_terminator(i, tables)) {
        for o in &mut inst.operands {
            if *o == Operand::Block(header_number) {
                *o = Operand::Block(number);
            }
        }
    }
    for inst in f.blocks[l.header].insts.iter_mut().take_while(|i| i.is_phi(tables)) {
        for pair in inst.operands.chunks_mut(2) {
            if pair.len() == 2 && pair[1] == Operand::Block(p_number) {
                pair[1] = Operand::Block(number);
            }
        }
    }
    let br_opcode = tables.opcode("BR")?;
    let br = tables.patterns.iter().position(|pat| pat.opcode == br_opcode.0 && pat.sms >> sm_index & 1 == 1)?;
    let loc = f.blocks[l.header].loc;
    f.blocks.push(Block { number, name: None, insts: vec![Inst { defs: Default::default(), opcode: Opcode::Machine(br as u16), flags: Default::default(), operands: vec![Operand::Block(header_number)], loc }], loc });
    let index = f.blocks.len() - 1;
    made.preheader_of.insert(l.header, index);
    made.header_of.insert(index, l.header);
    Some(index)
}
