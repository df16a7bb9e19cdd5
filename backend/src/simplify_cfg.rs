//! Branch merging (`simplify-cfg`, the FoldBranchToCommonDest step of LLVM's
//! SimplifyCFG, which runs before llc's selection; off with `disable-simplify-cfg`): two
//! conditional branches in a row that share a target become one branch on the AND (or
//! OR) of their conditions.
//!
//! Where it sits: `combine` -> `simplify-cfg` -> `slsr`, on generic SSA MIR, so the MIR
//! interpreter checks it (`backend/tests/combine_differential.rs`).
//!
//! The shape: block A ends in `BRCOND c1, B, X` and B, whose only predecessor is A, holds
//! at most [`BONUS_INSTS`] instructions that may run speculatively (no memory, no side
//! effects, nothing the description marks `unsafe_to_speculate` or `convergent`) and
//! ends in `BRCOND c2, Y, X`. Then A runs B's instructions and ends in
//! `BRCOND (c1 AND c2), Y, X`, and B goes. The mirror shape, `BRCOND c1, X, B` and
//! `BRCOND c2, X, Y`, becomes `BRCOND (c1 OR c2), X, Y`. X's PHIs must read the same
//! value from A and from B (the edge from B goes); Y's read from A instead of B.
//!
//! A loop with two exit tests (mandelbrot_f32: |z|^2 <= 4, then iter < limit) gets one
//! branch per iteration instead of two, as llc's `or.pred` loop has (one SASS
//! instruction fewer in the loop on sm_80 and sm_90). The merged test of the fall-through
//! block costs its speculated instructions on the path that left at the first test, which
//! is why only a few are allowed.
//!
//! Blocks numbered by position are renumbered by position afterwards (bb.3 becomes bb.2
//! when bb.2 goes), so later passes index them directly and the PTX labels stay dense.
//!
//! Linear: each merge deletes a block, and a merged block is tried again at once (a
//! chain of three tests becomes one); each try looks at one block and two PHI lists.

use target_desc::tables::{props, OpcodeId, SmTables, TargetTables, VtId};

use crate::mir::{BlockIndex, Function, Inst, Loc, Module, Opcode, Operand, ValueId};

/// How many instructions besides its branch the second block may have: they run on
/// every path through the first block once merged. LLVM's threshold is one bonus
/// instruction plus the compare that computes the condition.
pub const BONUS_INSTS: usize = 2;

/// What the pass did, for remarks and tests.
#[derive(Clone, Debug, Default)]
pub struct SimplifyCfgStats {
    /// Branches merged into the branch before them.
    pub merged: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

struct Ops {
    brcond: OpcodeId,
    and: OpcodeId,
    or: OpcodeId,
    phi: OpcodeId,
}

pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables) -> Result<SimplifyCfgStats, String> {
    let op = |name: &str| tables.opcode(name).ok_or_else(|| format!("the description has no generic opcode {name}, which simplify-cfg needs"));
    let ops = Ops { brcond: op("BRCOND")?, and: op("AND")?, or: op("OR")?, phi: op("PHI")? };
    let mut stats = SimplifyCfgStats::default();
    for f in &mut module.functions {
        if f.ssa {
            merge_branches(f, tables, sm, &ops, &mut stats);
        }
    }
    Ok(stats)
}

/// `BRCOND c, t, f` as (c, t, f).
fn brcond(inst: Option<&Inst>, ops: &Ops) -> Option<(ValueId, u32, u32)> {
    let inst = inst?;
    match (inst.opcode, inst.operands.as_slice()) {
        (Opcode::Generic(op), [Operand::Value(c), Operand::Block(t), Operand::Block(e)]) if op == ops.brcond => Some((*c, *t, *e)),
        _ => None,
    }
}

fn merge_branches(f: &mut Function, tables: &TargetTables, sm: &SmTables, ops: &Ops, stats: &mut SimplifyCfgStats) {
    let index = BlockIndex::new(f);
    // Edges into each block, by block index (a block's terminator may name one target
    // twice, which counts twice).
    let mut preds = vec![0u32; f.blocks.len()];
    for block in &f.blocks {
        if let Some(last) = block.insts.last() {
            for o in &last.operands {
                if let Operand::Block(n) = o {
                    if let Some(i) = index.get(*n) {
                        preds[i] += 1;
                    }
                }
            }
        }
    }
    let mut deleted = vec![false; f.blocks.len()];
    let mut names: Option<crate::mir::NameSet> = None;
    for a in 0..f.blocks.len() {
        if deleted[a] {
            continue;
        }
        // A merged block may merge again with the block after its new target.
        while let Some(b) = try_merge(f, tables, sm, ops, &index, &mut preds, &deleted, a, &mut names, stats) {
            deleted[b] = true;
        }
    }
    if !deleted.iter().any(|d| *d) {
        return;
    }
    let mut k = 0;
    f.blocks.retain(|_| {
        k += 1;
        !deleted[k - 1]
    });
    // Blocks numbered by position stay so, as branch-folder leaves them.
    if index.positional {
        crate::mir::renumber_blocks_by_position(f);
    }
}

/// Merges the branch of the block after `a` into `a`'s when the shape allows; returns
/// the merged block's index.
#[allow(clippy::too_many_arguments)]
fn try_merge(
    f: &mut Function,
    tables: &TargetTables,
    sm: &SmTables,
    ops: &Ops,
    index: &BlockIndex,
    preds: &mut [u32],
    deleted: &[bool],
    a: usize,
    names: &mut Option<crate::mir::NameSet>,
    stats: &mut SimplifyCfgStats,
) -> Option<usize> {
    let (c1, t1, e1) = brcond(f.blocks[a].insts.last(), ops)?;
    let a_number = f.blocks[a].number;
    // The AND shape (B on the true side) first, then the OR shape (B on the false side).
    for and_shape in [true, false] {
        let (b_number, x) = if and_shape { (t1, e1) } else { (e1, t1) };
        let Some(b) = index.get(b_number) else { continue };
        if b == a || deleted[b] || preds[b] != 1 || b_number == x {
            continue;
        }
        let Some((c2, t2, e2)) = brcond(f.blocks[b].insts.last(), ops) else { continue };
        // B must leave to X on the same side as A: false for AND, true for OR.
        let (shared, y) = if and_shape { (e2, t2) } else { (t2, e2) };
        if shared != x || y == x || y == b_number {
            continue;
        }
        let body = &f.blocks[b].insts[..f.blocks[b].insts.len() - 1];
        if body.len() > BONUS_INSTS || !body.iter().all(|i| speculatable(i, tables, ops)) {
            continue;
        }
        let vt: VtId = f.value(c1).ty;
        if f.value(c2).ty != vt {
            continue;
        }
        let combine_op = if and_shape { ops.and } else { ops.or };
        if !sm.is_legal(combine_op, vt) {
            continue;
        }
        // X's PHIs must agree on the edges from A and from B.
        let xi = index.get(x)?;
        if !phis_agree(&f.blocks[xi].insts, ops, a_number, b_number) {
            continue;
        }
        // Merge: B's body runs in A, then the combined branch.
        let mut moved: Vec<Inst> = std::mem::take(&mut f.blocks[b].insts);
        moved.pop(); // B's branch: the combined one replaces it
        let names = names.get_or_insert_with(|| crate::mir::NameSet::of(f));
        let base = format!("{}.{}", f.value(c1).name, if and_shape { "and" } else { "or" });
        let both = f.fresh_value(names, &base, vt);
        let loc = f.blocks[a].insts.last().map(|i| i.loc).unwrap_or_default();
        let a_branch = f.blocks[a].insts.pop().expect("A ends in its branch");
        moved.push(Inst { defs: vec![both].into(), opcode: Opcode::Generic(combine_op), flags: Default::default(), operands: vec![Operand::Value(c1), Operand::Value(c2)], loc });
        let targets = if and_shape { (y, x) } else { (x, y) };
        moved.push(Inst { defs: Default::default(), opcode: a_branch.opcode, flags: a_branch.flags.clone(), operands: vec![Operand::Value(both), Operand::Block(targets.0), Operand::Block(targets.1)], loc: a_branch.loc });
        f.blocks[a].insts.extend(moved);
        // X loses the edge from B; Y's edge from B now comes from A.
        preds[xi] -= 1;
        for inst in f.blocks[xi].insts.iter_mut().take_while(|i| i.opcode == Opcode::Generic(ops.phi)) {
            drop_incoming(inst, b_number);
        }
        if let Some(yi) = index.get(y) {
            for inst in f.blocks[yi].insts.iter_mut().take_while(|i| i.opcode == Opcode::Generic(ops.phi)) {
                for k in (1..inst.operands.len()).step_by(2) {
                    if inst.operands[k] == Operand::Block(b_number) {
                        inst.operands[k] = Operand::Block(a_number);
                    }
                }
            }
        }
        stats.merged += 1;
        let (c1_name, c2_name) = (f.value(c1).name.clone(), f.value(c2).name.clone());
        stats.remarks.push((f.name.clone(), loc, format!("bb.{b_number}'s branch merged into bb.{a_number}'s: %{} = {} %{c1_name}, %{c2_name}", f.value(both).name, if and_shape { "AND" } else { "OR" })));
        return Some(b);
    }
    None
}

/// Whether `inst` may run on a path where the input would not run it, cheaply.
fn speculatable(inst: &Inst, tables: &TargetTables, ops: &Ops) -> bool {
    if inst.opcode == Opcode::Generic(ops.phi) || !matches!(inst.opcode, Opcode::Generic(_)) || inst.has_flag("volatile") {
        return false;
    }
    let unsafe_props = props::TERMINATOR | props::SIDE_EFFECTS | props::MAY_LOAD | props::MAY_STORE | props::CALL | props::CONVERGENT | props::UNSAFE_TO_SPECULATE | props::BRANCH;
    crate::sched::model::properties(inst, tables).is_some_and(|p| p & unsafe_props == 0)
}

/// Whether every PHI of `insts` reads the same value on the edges from `a` and `b`.
fn phis_agree(insts: &[Inst], ops: &Ops, a: u32, b: u32) -> bool {
    insts.iter().take_while(|i| i.opcode == Opcode::Generic(ops.phi)).all(|phi| {
        let incoming = |label: u32| phi.operands.chunks(2).find(|pair| pair.get(1) == Some(&Operand::Block(label))).map(|pair| pair[0].clone());
        matches!((incoming(a), incoming(b)), (Some(x), Some(y)) if x == y)
    })
}

fn drop_incoming(phi: &mut Inst, label: u32) {
    let mut kept = Vec::with_capacity(phi.operands.len());
    for pair in phi.operands.chunks(2) {
        if pair.get(1) != Some(&Operand::Block(label)) {
            kept.extend(pair.iter().cloned());
        }
    }
    phi.operands = kept;
}
