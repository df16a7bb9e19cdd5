//! MachineSink: an instruction whose results are only read on one side of a branch
//! moves into that side, so the other paths do not compute it (reference:
//! `cicc-machine-passes.txt`, "Machine LICM, CSE and Sinking" in addPreRegAlloc).
//!
//! Two reaches. The full pass, as on NVPTX, is off by default: it runs only with
//! `nvptx-enable-machine-sink=true`, because sinking can lengthen the live ranges of the
//! sunk instruction's operands. By default only instructions that read no register move:
//! constants, parameter loads, special-register reads. Moving one of those cannot lengthen
//! any live range, only shorten its own, and it keeps the paths that leave early (the
//! bounds check at the top of a kernel) free of work they do not need; ptxas does not sink
//! them itself (on `loop_two_phis` at sm_80 it cost 5 SASS instructions and a register).
//! `disable-machine-sink=true` turns both off.
//!
//! Where it sits: after machine-licm, on SSA machine code (before PHI elimination).
//!
//! What moves: the MachineCSE candidates (an instruction that only computes its
//! results: no store, call, barrier or side effect, loads only of invariant memory,
//! which includes `ld.param`), not a carry producer or consumer. It moves from block B
//! to a successor S when B has several successors, S has B as its only predecessor and
//! is not in a deeper loop, and S dominates every use of its results (a PHI operand is
//! used at the end of its incoming block). It goes to the top of S, after S's PHIs.
//! Blocks go in reverse postorder and each block bottom-up, so an operand whose last
//! use just moved can follow it, and a chain sunk into S can sink again from S.
//!
//! Linear: the use blocks of every value are gathered once and updated as instructions
//! move; each instruction is tested against each successor of its block once.

use target_desc::tables::TargetTables;

use super::cfg::Cfg;
use crate::mir::{Function, Loc, Module, Operand, ValueId};

/// What the pass did, for `--remarks machine-sink` and tests.
#[derive(Clone, Debug, Default)]
pub struct SinkStats {
    pub sunk: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

/// Which instructions may move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Every candidate (`nvptx-enable-machine-sink=true`).
    All,
    /// Only instructions without register operands (the NVPTX default).
    RegisterFree,
}

/// Sinks in every SSA function of `module`; with `want_remarks`, says what moved.
pub fn run(module: &mut Module, tables: &TargetTables, reach: Reach, want_remarks: bool) -> SinkStats {
    let mut stats = SinkStats::default();
    for f in module.functions.iter_mut().filter(|f| f.ssa) {
        sink_function(f, tables, reach, want_remarks, &mut stats);
    }
    stats
}

fn sink_function(f: &mut Function, tables: &TargetTables, reach: Reach, want_remarks: bool, stats: &mut SinkStats) {
    // One block has no block with two successors to sink into.
    if f.blocks.len() < 2 {
        return;
    }
    let cfg = Cfg::new(f, tables);
    if cfg.succs.iter().all(|s| s.len() < 2) {
        return;
    }
    let depth = cfg.loop_depths();
    let index: rustc_hash::FxHashMap<u32, usize> = f.blocks.iter().enumerate().map(|(i, b)| (b.number, i)).collect();
    // The blocks each value is used in (with repeats): a PHI's operand counts in the
    // block it comes from. One flat array, value by value (`first[v]..first[v + 1]`).
    let mut first = vec![0u32; f.values.len() + 1];
    let each_use = |f: &Function, visit: &mut dyn FnMut(ValueId, u32)| {
        for (b, block) in f.blocks.iter().enumerate() {
            for inst in &block.insts {
                if inst.is_phi(tables) {
                    for pair in inst.operands.chunks(2) {
                        if let [Operand::Value(v), Operand::Block(from)] = pair {
                            visit(*v, index.get(from).copied().unwrap_or(b) as u32);
                        }
                    }
                } else {
                    for v in inst.uses() {
                        visit(v, b as u32);
                    }
                }
            }
        }
    };
    each_use(f, &mut |v, _| first[v.0 as usize + 1] += 1);
    for k in 1..first.len() {
        first[k] += first[k - 1];
    }
    let mut use_blocks = vec![0u32; *first.last().unwrap_or(&0) as usize];
    let mut filled = first.clone();
    each_use(f, &mut |v, block| {
        use_blocks[filled[v.0 as usize] as usize] = block;
        filled[v.0 as usize] += 1;
    });
    let uses_of = |v: ValueId| first[v.0 as usize] as usize..first[v.0 as usize + 1] as usize;
    for b in cfg.reverse_postorder() {
        if cfg.succs[b].len() < 2 {
            continue;
        }
        let targets: Vec<usize> = cfg.succs[b].iter().copied().filter(|&s| cfg.preds[s] == [b] && depth[s] <= depth[b]).collect();
        if targets.is_empty() {
            continue;
        }
        // Where each instruction of b goes (None: it stays).
        let mut dest: Vec<Option<usize>> = vec![None; f.blocks[b].insts.len()];
        let mut remarks = Vec::new();
        for i in (0..f.blocks[b].insts.len()).rev() {
            let inst = &f.blocks[b].insts[i];
            if !super::cse::candidate(inst, tables) || inst.tied_by_carry(tables) {
                continue;
            }
            if reach == Reach::RegisterFree && inst.uses().next().is_some() {
                continue;
            }
            let uses: Vec<u32> = inst.defs.iter().flat_map(|d| use_blocks[uses_of(*d)].iter().copied()).collect();
            // A result nobody reads is dce's to remove, not ours to move.
            if uses.is_empty() || uses.iter().any(|&u| u as usize == b) {
                continue;
            }
            let Some(&s) = targets.iter().find(|&&s| uses.iter().all(|&u| cfg.dominates(s, u as usize))) else { continue };
            dest[i] = Some(s);
            for v in inst.uses() {
                if let Some(slot) = use_blocks[uses_of(v)].iter_mut().find(|u| **u as usize == b) {
                    *slot = s as u32;
                }
            }
            stats.sunk += 1;
            if want_remarks {
                let what = inst.defs.iter().map(|d| format!("%{}", f.value(*d).name)).collect::<Vec<_>>().join(", ");
                remarks.push((f.name.clone(), inst.loc, format!("sank {what} from {} into {}", f.blocks[b].label(), f.blocks[s].label())));
            }
        }
        stats.remarks.extend(remarks.into_iter().rev());
        if dest.iter().all(Option::is_none) {
            continue;
        }
        // Move them, in their order, to the top of their block (after its PHIs).
        let mut moving: Vec<(usize, Vec<crate::mir::Inst>)> = targets.iter().map(|&s| (s, Vec::new())).collect();
        let old = std::mem::take(&mut f.blocks[b].insts);
        for (inst, d) in old.into_iter().zip(dest) {
            match d {
                Some(s) => moving.iter_mut().find(|(t, _)| *t == s).expect("a target of b").1.push(inst),
                None => f.blocks[b].insts.push(inst),
            }
        }
        for (s, insts) in moving {
            let at = f.blocks[s].insts.iter().position(|x| !x.is_phi(tables)).unwrap_or(f.blocks[s].insts.len());
            f.blocks[s].insts.splice(at..at, insts);
        }
    }
}
