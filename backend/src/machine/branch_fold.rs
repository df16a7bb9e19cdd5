//! Branch folding (`branch-folder`, LLVM's BranchFolding; cicc-machine-passes.txt,
//! "Post-RA Optimization"): the last machine pass, on code out of SSA form.
//!
//! PHI elimination leaves the copies of a PHI in its predecessors, so an if-then-else
//! that chose a value becomes blocks holding one move and a jump, and a side whose copy
//! was coalesced away becomes a block holding only a jump. ptxas keeps the branches
//! (a `bra.uni` to a `bra.uni` costs a SASS branch each). Two rewrites:
//!
//! - Hoisting into the branch: a block B whose only predecessor P ends in a
//!   conditional branch to B or O, and which holds at most [`MAX_HOISTED`] cheap
//!   instructions before its jump, has them moved above P's branch when none of their
//!   results is live into O (so running them on the way to O changes nothing) and the
//!   branch does not read them. They must be safe to run on the other path: no memory
//!   access, no effects, no carry flag, nothing the description marks
//!   `unsafe_to_speculate`. This is where llc's PHI elimination puts such a copy (`mov.b32
//!   %r3, -1; @%p1 bra $L__BB1_3;`). One block per predecessor, so the work added to
//!   the other path stays at [`MAX_HOISTED`] instructions (the check itself looks at
//!   the code as it is after earlier hoists: once one side of a diamond has moved up,
//!   the other side's register is read on the way to the emptied block). Nor when the
//!   other side is as small and jumps to the same block: ptxas turns that
//!   diamond into a `SEL` (on `nested_branches` a hoist there cost a SASS instruction);
//!   nor above a loop's back edge (the other side earlier in the layout), where the
//!   copies of the loop's exit would run on every iteration.
//! - Folding empty blocks: a block (not the entry) that only jumps to T is removed and
//!   every branch to it goes to T (chains followed, a cycle of empty blocks left
//!   alone); a conditional branch whose two targets become one is a jump, and the
//!   compare that only it read goes too.
//!
//! Blocks are renumbered by position afterwards, so the PTX labels stay dense. Neither
//! rewrite changes the loop structure: an empty block is an edge, and a hoist moves
//! code from a block into its only predecessor. Functions still holding PHIs (the pass
//! run alone on SSA MIR) are left alone: their PHIs name predecessor blocks.
//!
//! Linear: a bounded search per candidate for whether the other side reads what
//! would move, and a constant amount of work per block and branch.
//! `disable-branch-fold=true` turns the pass off; `--remarks branch-folder` lists what
//! moved and what was removed.

use target_desc::tables::{props, TargetTables};

use crate::mir::{opcode_info, Function, Inst, Loc, Module, Operand, ValueId};

/// The most instructions moved above a branch from one block (LLVM's tail duplication
/// size for a block ending in a jump is 2 as well).
pub const MAX_HOISTED: usize = 2;

/// What the pass did, for `--remarks branch-folder` and tests.
#[derive(Clone, Debug, Default)]
pub struct BranchFoldStats {
    pub hoisted: usize,
    pub folded: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exit {
    /// An unconditional branch to the block numbered so.
    Jump(u32),
    /// A conditional branch (two targets).
    Cond(u32, u32),
    /// A return, several terminators, or no branch: left alone.
    Other,
}

fn is_terminator(inst: &Inst, tables: &TargetTables) -> bool {
    opcode_info(inst.opcode, tables).is_some_and(|o| o.props & props::TERMINATOR != 0)
}

/// The terminators that end a block (only they name blocks once PHIs are gone).
fn terminators<'a>(insts: &'a [Inst], tables: &TargetTables) -> &'a [Inst] {
    let count = insts.iter().rev().take_while(|i| is_terminator(i, tables)).count();
    &insts[insts.len() - count..]
}

fn exit(insts: &[Inst], tables: &TargetTables) -> Exit {
    let Some(last) = insts.last() else { return Exit::Other };
    let branch = opcode_info(last.opcode, tables).is_some_and(|o| o.props & props::BRANCH != 0);
    if terminators(insts, tables).len() != 1 || !branch {
        return Exit::Other;
    }
    let mut targets = last.block_operands();
    match (targets.next(), targets.next(), targets.next()) {
        (Some(t), None, None) if last.uses().next().is_none() => Exit::Jump(t),
        (Some(a), Some(b), None) => Exit::Cond(a, b),
        _ => Exit::Other,
    }
}

/// Whether `inst` may run on a path the input did not run it on.
fn hoistable(inst: &Inst, tables: &TargetTables) -> bool {
    let Some(info) = opcode_info(inst.opcode, tables) else { return false };
    let is_copy = info.name == "COPY";
    (is_copy || super::cse::candidate(inst, tables))
        && info.props & (props::MAY_LOAD | props::UNSAFE_TO_SPECULATE) == 0
        && !inst.reads_carry(tables)
        && !inst.writes_carry(tables)
}

pub fn run(module: &mut Module, tables: &TargetTables, remarks: bool) -> BranchFoldStats {
    let mut stats = BranchFoldStats::default();
    for f in &mut module.functions {
        // PHIs open their block.
        if f.blocks.iter().any(|b| b.insts.first().is_some_and(|i| i.is_phi(tables))) {
            continue;
        }
        hoist(f, tables, remarks, &mut stats);
        fold(f, tables, remarks, &mut stats);
    }
    stats
}

fn hoist(f: &mut Function, tables: &TargetTables, remarks: bool, stats: &mut BranchFoldStats) {
    let n = f.blocks.len();
    // Per block: how many branch edges reach it, and from which block the last one.
    let mut edges_in = vec![0u32; n];
    let mut from = vec![0usize; n];
    for (i, block) in f.blocks.iter().enumerate() {
        for t in terminators(&block.insts, tables).iter().flat_map(|inst| inst.block_operands()) {
            if let Some(t) = f.block_index(t) {
                edges_in[t] += 1;
                from[t] = i;
            }
        }
    }
    let mut hoisted_into = vec![false; n];
    for b in 1..n {
        let p = from[b];
        if edges_in[b] != 1 || p == b || hoisted_into[p] {
            continue;
        }
        let Exit::Cond(t0, t1) = exit(&f.blocks[p].insts, tables) else { continue };
        let here = f.blocks[b].number;
        let other = if t0 == here { t1 } else { t0 };
        if other == here || (t0 != here && t1 != here) {
            continue;
        }
        let Exit::Jump(target) = exit(&f.blocks[b].insts, tables) else { continue };
        let body = &f.blocks[b].insts[..f.blocks[b].insts.len() - 1];
        if target == here || body.is_empty() || body.len() > MAX_HOISTED || !body.iter().all(|i| hoistable(i, tables)) {
            continue;
        }
        let Some(o) = f.block_index(other) else { continue };
        // A branch back to an earlier block is a loop's back edge (blocks are laid out
        // with each loop's header first): moving the exit's copies above it would run
        // them on every iteration.
        if o <= p {
            continue;
        }
        // Both sides small and meeting again: ptxas turns such a diamond into a select
        // (`SEL`), and a hoisted side would leave it a move and a predicated move.
        let small = |insts: &[Inst]| insts.len() <= MAX_HOISTED && insts.iter().all(|i| hoistable(i, tables));
        let other_insts = &f.blocks[o].insts;
        if exit(other_insts, tables) == Exit::Jump(target) && small(&other_insts[..other_insts.len() - 1]) {
            continue;
        }
        let branch = f.blocks[p].insts.last().expect("a conditional branch ends the block");
        // Every result must be dead on entry to the other side and not the branch's
        // condition.
        let safe = body.iter().flat_map(|i| i.defs.iter()).all(|&d| !branch.uses().any(|u| u == d) && dead_on_entry(f, tables, o, d));
        if !safe {
            continue;
        }
        let body_len = f.blocks[b].insts.len() - 1;
        let moved: Vec<Inst> = f.blocks[b].insts.drain(..body_len).collect();
        if remarks {
            let what = if moved.len() == 1 { "1 instruction".to_string() } else { format!("{} instructions", moved.len()) };
            stats.remarks.push((f.name.clone(), moved[0].loc, format!("hoisted {what} of {} above the branch of {}", f.blocks[b].label(), f.blocks[p].label())));
        }
        stats.hoisted += moved.len();
        let at = f.blocks[p].insts.len() - 1;
        f.blocks[p].insts.splice(at..at, moved);
        hoisted_into[p] = true;
    }
}

/// How far [`dead_on_entry`] looks: blocks, and instructions in all.
const SEARCH_BLOCKS: usize = 8;
const SEARCH_INSTRUCTIONS: usize = 512;

/// Whether every path from the start of block `start` writes `v` before reading it
/// (or leaves the function without reading it), found within [`SEARCH_BLOCKS`] blocks
/// and [`SEARCH_INSTRUCTIONS`] instructions; past that the answer is no. A bounded
/// search instead of the function's liveness keeps the pass a constant amount of work
/// per candidate (the liveness analysis was a tenth of a compile of many diamonds).
fn dead_on_entry(f: &Function, tables: &TargetTables, start: usize, v: ValueId) -> bool {
    let mut work = vec![start];
    let mut seen = vec![start];
    let mut scanned = 0;
    while let Some(b) = work.pop() {
        let insts = &f.blocks[b].insts;
        scanned += insts.len();
        if scanned > SEARCH_INSTRUCTIONS {
            return false;
        }
        let mut written = false;
        for inst in insts {
            if inst.uses().any(|u| u == v) {
                return false;
            }
            if inst.defs.contains(&v) {
                written = true;
                break;
            }
        }
        if written {
            continue;
        }
        for t in terminators(insts, tables).iter().flat_map(|inst| inst.block_operands()) {
            let Some(t) = f.block_index(t) else { return false };
            if !seen.contains(&t) {
                if seen.len() == SEARCH_BLOCKS {
                    return false;
                }
                seen.push(t);
                work.push(t);
            }
        }
    }
    true
}

fn fold(f: &mut Function, tables: &TargetTables, remarks: bool, stats: &mut BranchFoldStats) {
    let n = f.blocks.len();
    // Per block index: the block number an empty block jumps to.
    let forward: Vec<Option<u32>> = f
        .blocks
        .iter()
        .enumerate()
        .map(|(i, block)| match (i, block.insts.as_slice()) {
            (0, _) => None,
            (_, [only]) => match exit(std::slice::from_ref(only), tables) {
                Exit::Jump(t) if t != block.number => Some(t),
                _ => None,
            },
            _ => None,
        })
        .collect();
    if forward.iter().all(Option::is_none) {
        return;
    }
    // Where a branch to each block number ends up: chains of empty blocks followed to
    // their end; a cycle of empty blocks is not folded.
    let position: rustc_hash::FxHashMap<u32, usize> = f.blocks.iter().enumerate().map(|(i, b)| (b.number, i)).collect();
    let numbers: Vec<u32> = f.blocks.iter().map(|b| b.number).collect();
    let index = |number: u32| position.get(&number).copied();
    let mut resolved: Vec<Option<u32>> = vec![None; n];
    for start in 0..n {
        if forward[start].is_none() || resolved[start].is_some() {
            continue;
        }
        let mut path = vec![start];
        let mut at = start;
        let end = loop {
            let Some(next) = forward[at].and_then(index) else { break Some(numbers[at]) };
            if let Some(r) = resolved[next] {
                break Some(r);
            }
            if forward[next].is_none() {
                break Some(numbers[next]);
            }
            if path.contains(&next) || path.len() > n {
                break None;
            }
            path.push(next);
            at = next;
        };
        for &b in &path {
            // A block of a cycle forwards to itself: kept.
            resolved[b] = Some(end.unwrap_or(numbers[b]));
        }
    }
    let removed: Vec<bool> = (0..n).map(|b| resolved[b].is_some_and(|r| r != numbers[b])).collect();
    if !removed.iter().any(|&r| r) {
        return;
    }
    // An unconditional branch to copy when a conditional one loses a target.
    let jump = (0..n).find(|&b| removed[b]).map(|b| f.blocks[b].insts[0].clone()).expect("a removed block ends in a jump");
    let target_of = |number: u32| index(number).and_then(|b| resolved[b]).unwrap_or(number);
    let retarget: Vec<(usize, Option<u32>)> = (0..n)
        .filter(|&b| !removed[b])
        .filter_map(|b| match exit(&f.blocks[b].insts, tables) {
            Exit::Jump(t) => Some((b, Some(target_of(t)))),
            Exit::Cond(x, y) if target_of(x) == target_of(y) => Some((b, Some(target_of(x)))),
            Exit::Cond(..) => Some((b, None)),
            Exit::Other => None,
        })
        .collect();
    // A branch that became a jump may leave its compare unread.
    let mut lost_condition = false;
    for (b, single) in retarget {
        let last = f.blocks[b].insts.last_mut().expect("a branch ends the block");
        match single {
            Some(t) if last.block_operands().count() == 2 => {
                lost_condition = true;
                let mut j = jump.clone();
                j.loc = last.loc;
                set_targets(&mut j, |_| t);
                *last = j;
            }
            _ => set_targets(last, target_of),
        }
    }
    if lost_condition {
        super::dce::remove_dead_in_function(f, tables);
    }
    for b in 0..n {
        if removed[b] && remarks {
            let to = resolved[b].expect("removed blocks are resolved");
            let label = index(to).map_or_else(|| format!("bb.{to}"), |t| f.blocks[t].label());
            stats.remarks.push((f.name.clone(), f.blocks[b].loc, format!("folded {} (a jump to {label}) into the branches to it", f.blocks[b].label())));
        }
    }
    stats.folded += removed.iter().filter(|&&r| r).count();
    let mut k = 0;
    f.blocks.retain(|_| {
        k += 1;
        !removed[k - 1]
    });
    // Dense numbers again: block i is bb.i.
    crate::mir::renumber_blocks_by_position(f);
}

fn set_targets(inst: &mut Inst, mut to: impl FnMut(u32) -> u32) {
    for op in &mut inst.operands {
        if let Operand::Block(t) = op {
            *t = to(*t);
        }
    }
}
