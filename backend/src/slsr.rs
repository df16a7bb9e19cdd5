//! Straight-line strength reduction (`slsr`, LLVM's StraightLineStrengthReduce, which
//! llc's NVPTX pipeline runs before selection; off with `disable-slsr`): of two index
//! computations that differ only by a constant in one factor, the later one is the
//! earlier one plus a shifted stride.
//!
//! Where it sits: `combine` -> `slsr` -> `loop-reduce` -> `isel`, on generic SSA MIR, so
//! the MIR interpreter checks it (`backend/tests/combine_differential.rs` runs every
//! kernel before and after it).
//!
//! The candidates, with `c` a literal (`B + c` is `ADD B, c`, `ADD c, B` or `SUB B, -c`;
//! a factor that is neither is `B + 0`) and `S` any non-literal value:
//! - multiply form `X = (B + c) * S`;
//! - multiply-add form `X = Y + (B + c) * S`, the multiply read by nothing else (it is
//!   one `mad` after selection), which covers `a[(row + j) * n + col]` of an unrolled
//!   tile loop.
//!
//! When a candidate `X2` with `c2` is dominated by one `X1` of the same `(Y, B, S)` with
//! `c1`, then `X2 = X1 + (c2 - c1) * S`, exact at any width since integer arithmetic
//! wraps. The bump `(c2 - c1) * S` is `S << k` when `c2 - c1` is `2^k` (a `SUB` of it when
//! `c1 - c2` is), shared by every rewrite it dominates; other differences are left alone.
//! The basis is the nearest dominating candidate, so an unrolled sequence becomes a
//! chain `X1 + 8n + 8n + ...` as in llc (transpose: four `mad.lo` become one and three
//! `add`s of one `shl`).
//!
//! It rewrites only when it removes at least as much as it adds: the multiply (one
//! `mad`/`mul`, several XMADs on sm_5x/6x) goes, and `B + c2` goes too when nothing else
//! reads it; a new bump costs one shift. So a rewrite that would keep `B + c2` alive and
//! need a new shift is skipped.
//!
//! Linear: one scan for the pairs (B, S) some multiply reads with an offset (a function
//! with none stops there), then one walk over the blocks in dominator-tree preorder
//! recording only candidates of those pairs; each looks at most [`SCAN`] earlier
//! candidates of its key for a dominating one.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use target_desc::tables::{OpcodeId, SmTables, TargetTables, VtId};

use crate::machine::cfg::Cfg;
use crate::mir::{Function, Inst, Loc, Module, Opcode, Operand, ValueId};

/// How many earlier candidates (or bumps) of one key are tried for a dominating one:
/// the nearest dominating one is almost always the last; the bound keeps a function
/// with many sibling blocks linear.
const SCAN: usize = 8;

/// What the pass did, for remarks and tests.
#[derive(Clone, Debug, Default)]
pub struct SlsrStats {
    /// Candidates rewritten as an earlier one plus a bump.
    pub rewritten: usize,
    /// Bumps (`S << k`) made.
    pub bumps: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

struct Ops {
    add: OpcodeId,
    sub: OpcodeId,
    mul: OpcodeId,
    shl: OpcodeId,
    constant: OpcodeId,
}

/// `(Y or none, B, S, type)`.
type Key = (Option<ValueId>, ValueId, ValueId, VtId);

pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables) -> Result<SlsrStats, String> {
    let op = |name: &str| tables.opcode(name).ok_or_else(|| format!("the description has no generic opcode {name}, which slsr needs"));
    let ops = Ops { add: op("ADD")?, sub: op("SUB")?, mul: op("MUL")?, shl: op("SHL")?, constant: op("CONSTANT")? };
    let i32_ty = tables.vt("i32").ok_or("the description has no type i32, which slsr needs for shift amounts")?;
    let mut stats = SlsrStats::default();
    let mut touched = false;
    for f in &mut module.functions {
        if f.ssa && reduce_function(f, tables, sm, &ops, i32_ty, &mut stats) {
            touched = true;
        }
    }
    if touched {
        crate::machine::dce::remove_dead_code(module, tables);
    }
    Ok(stats)
}

struct Walk<'a> {
    tables: &'a TargetTables,
    sm: &'a SmTables,
    ops: &'a Ops,
    i32_ty: VtId,
    site: Vec<Option<(usize, usize)>>,
    uses: Vec<u32>,
    /// Per value, whether its last reader (its only one when it has one) is an `ADD`.
    read_by_add: Vec<bool>,
    cfg: Cfg,
    /// The (B, S) pairs read by two multiplies or more, one `(B + c) * S` with `c != 0`.
    offset_pairs: HashSet<(ValueId, ValueId)>,
    /// Per key, the newest candidate seen so far, an index into `arena`.
    candidates: HashMap<Key, u32>,
    /// Candidates: (block, c, value, the previous candidate of the key or `u32::MAX`).
    arena: Vec<(usize, i128, ValueId, u32)>,
    /// Per (S, k, type), the bumps `S << k` made so far: (block, value).
    bumps: HashMap<(ValueId, u32, VtId), Vec<(usize, ValueId)>>,
    /// Instructions to insert before (block, index), in creation order.
    inserts: Vec<(usize, usize, Inst)>,
    names: Option<crate::mir::NameSet>,
}

fn reduce_function(f: &mut Function, tables: &TargetTables, sm: &SmTables, ops: &Ops, i32_ty: VtId, stats: &mut SlsrStats) -> bool {
    let mut site: Vec<Option<(usize, usize)>> = vec![None; f.values.len()];
    let mut uses = vec![0u32; f.values.len()];
    let mut read_by_add = vec![false; f.values.len()];
    let mut any_mul = false;
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            for d in &inst.defs {
                site[d.0 as usize] = Some((b, i));
            }
            let is_add = inst.opcode == Opcode::Generic(ops.add);
            for o in &inst.operands {
                if let Operand::Value(v) = o {
                    uses[v.0 as usize] += 1;
                    read_by_add[v.0 as usize] = is_add;
                }
            }
            any_mul |= inst.opcode == Opcode::Generic(ops.mul);
        }
    }
    // No multiply, no candidate: most device functions stop here before the CFG is built.
    if !any_mul {
        return false;
    }
    // Only a pair (B, S) that two multiplies read, one of them as (B + c) * S with
    // c != 0, can be rewritten (a difference of 0 is no rewrite, and a pair read once has
    // no basis): the walk records candidates of those pairs only, and a function with
    // none stops here. Recording every multiply was most of the pass's time on large
    // straight-line functions, whose pairs are almost all read once.
    let cfg = Cfg::new(f, tables);
    let mut w = Walk { tables, sm, ops, i32_ty, site, uses, read_by_add, cfg, offset_pairs: HashSet::default(), candidates: HashMap::default(), arena: Vec::new(), bumps: HashMap::default(), inserts: Vec::new(), names: None };
    let mut pairs: HashMap<(ValueId, ValueId), (u32, bool)> = HashMap::default();
    for block in &f.blocks {
        for inst in &block.insts {
            if let Some((x, y)) = w.binary(inst, ops.mul) {
                for fa in w.factors(f, x, y) {
                    let e = pairs.entry((fa.base, fa.stride)).or_default();
                    e.0 += 1;
                    e.1 |= fa.offset != 0;
                }
            }
        }
    }
    w.offset_pairs = pairs.into_iter().filter(|(_, (n, offset))| *n >= 2 && *offset).map(|(k, _)| k).collect();
    if w.offset_pairs.is_empty() {
        return false;
    }
    let order = w.cfg.dom_preorder();
    let before = stats.rewritten;
    for b in order {
        for i in 0..f.blocks[b].insts.len() {
            w.visit(f, b, i, stats);
        }
    }
    if stats.rewritten == before {
        return false;
    }
    // Bumps go before the instruction that first asked for them, in creation order.
    crate::mir::insert_before_each(f, std::mem::take(&mut w.inserts));
    true
}

/// A factor `B + c` of a multiply: which operand is `B`, and `c`.
struct Factor {
    /// The multiply's operand that is `B + c` (for the use count of `B + c` itself).
    whole: ValueId,
    base: ValueId,
    offset: i128,
    /// The other operand of the multiply.
    stride: ValueId,
}

impl Walk<'_> {
    fn def<'f>(&self, f: &'f Function, v: ValueId) -> Option<&'f Inst> {
        let (b, i) = self.site.get(v.0 as usize).copied().flatten()?;
        f.blocks.get(b)?.insts.get(i)
    }

    fn literal(&self, f: &Function, v: ValueId) -> Option<i128> {
        let d = self.def(f, v)?;
        match (d.opcode, d.operands.first()) {
            (Opcode::Generic(op), Some(Operand::Int(k))) if op == self.ops.constant => Some(k.get()),
            _ => None,
        }
    }

    fn binary(&self, inst: &Inst, op: OpcodeId) -> Option<(ValueId, ValueId)> {
        match (inst.opcode, inst.operands.as_slice()) {
            (Opcode::Generic(o), [Operand::Value(a), Operand::Value(b)]) if o == op && inst.defs.len() == 1 => Some((*a, *b)),
            _ => None,
        }
    }

    /// `v` as `B + c`.
    fn split(&self, f: &Function, v: ValueId) -> (ValueId, i128) {
        if let Some(d) = self.def(f, v) {
            if let Some((a, b)) = self.binary(d, self.ops.add) {
                if let Some(k) = self.literal(f, b) {
                    return (a, k);
                }
                if let Some(k) = self.literal(f, a) {
                    return (b, k);
                }
            }
            if let Some((a, b)) = self.binary(d, self.ops.sub) {
                if let Some(k) = self.literal(f, b) {
                    return (a, k.wrapping_neg());
                }
            }
        }
        (v, 0)
    }

    /// The ways to read multiply `m = x * y` as `(B + c) * S`: a factor with a literal
    /// offset is `B + c`; with none, both orders are (the multiply is commutative).
    fn factors(&self, f: &Function, x: ValueId, y: ValueId) -> Vec<Factor> {
        let mut out = Vec::with_capacity(2);
        for (whole, stride) in [(x, y), (y, x)] {
            if self.literal(f, stride).is_some() || self.literal(f, whole).is_some() {
                continue;
            }
            let (base, offset) = self.split(f, whole);
            out.push(Factor { whole, base, offset, stride });
        }
        if out.iter().any(|fa| fa.offset != 0) {
            out.retain(|fa| fa.offset != 0);
        }
        out
    }

    fn visit(&mut self, f: &mut Function, b: usize, i: usize, stats: &mut SlsrStats) {
        let inst = &f.blocks[b].insts[i];
        let Some(&d) = inst.defs.first() else { return };
        let vt = f.value(d).ty;
        let Some(bits) = self.tables.type_info(vt).filter(|t| t.kind == target_desc::tables::TypeKind::Int && t.lanes <= 1).map(|t| u32::from(t.bits)) else { return };
        if !(1..=64).contains(&bits) {
            return;
        }
        // Multiply-add form: X = Y + M, M = (B + c) * S read only here.
        let mut forms: Vec<(Option<ValueId>, Option<ValueId>, Factor)> = Vec::new();
        if let Some((p, q)) = self.binary(inst, self.ops.add) {
            for (y, m) in [(p, q), (q, p)] {
                if self.uses[m.0 as usize] != 1 {
                    continue;
                }
                if let Some((x1, x2)) = self.def(f, m).and_then(|md| self.binary(md, self.ops.mul)) {
                    for fa in self.factors(f, x1, x2) {
                        forms.push((Some(y), Some(m), fa));
                    }
                }
            }
        } else if let Some((x1, x2)) = self.binary(inst, self.ops.mul) {
            // A multiply that only feeds an add is that add's candidate (one `mad`).
            let feeds_add = self.uses[d.0 as usize] == 1 && self.read_by_add[d.0 as usize];
            if !feeds_add {
                for fa in self.factors(f, x1, x2) {
                    forms.push((None, None, fa));
                }
            }
        }
        forms.retain(|(_, _, fa)| self.offset_pairs.contains(&(fa.base, fa.stride)));
        if forms.is_empty() {
            return;
        }
        let mask: u128 = (1u128 << bits) - 1;
        let mut done = false;
        for (y, m, fa) in &forms {
            let key: Key = (*y, fa.base, fa.stride, vt);
            if !done {
                if let Some((x1, c1)) = self.basis(&key, b) {
                    done = self.rewrite(f, b, i, d, vt, mask, x1, c1, *y, *m, fa, stats);
                }
            }
        }
        // Every reading of X is a basis for later candidates (rewritten or not, X is
        // still the value of the expression).
        for (y, _, fa) in forms {
            let next = self.arena.len() as u32;
            let previous = self.candidates.insert((y, fa.base, fa.stride, vt), next).unwrap_or(u32::MAX);
            self.arena.push((b, fa.offset, d, previous));
        }
    }

    /// The nearest earlier candidate of `key` whose block dominates `b`.
    fn basis(&self, key: &Key, b: usize) -> Option<(ValueId, i128)> {
        let mut at = *self.candidates.get(key)?;
        for _ in 0..SCAN {
            let &(cb, c, v, previous) = self.arena.get(at as usize)?;
            if self.cfg.dominates(cb, b) {
                return Some((v, c));
            }
            at = previous;
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn rewrite(&mut self, f: &mut Function, b: usize, i: usize, d: ValueId, vt: VtId, mask: u128, x1: ValueId, c1: i128, y: Option<ValueId>, m: Option<ValueId>, fa: &Factor, stats: &mut SlsrStats) -> bool {
        let delta = (fa.offset.wrapping_sub(c1) as u128) & mask;
        if delta == 0 {
            return false;
        }
        let power = |k: u128| (k != 0 && k & (k - 1) == 0).then(|| k.trailing_zeros());
        let (op, k) = match (power(delta), power(delta.wrapping_neg() & mask)) {
            (Some(k), _) => (self.ops.add, k),
            (None, Some(k)) => (self.ops.sub, k),
            _ => return false,
        };
        if !self.sm.is_legal(op, vt) || (k > 0 && !self.sm.is_legal(self.ops.shl, vt)) {
            return false;
        }
        let existing = if k == 0 { Some(fa.stride) } else { self.bumps.get(&(fa.stride, k, vt)).and_then(|list| list.iter().rev().take(SCAN).find(|(bb, _)| self.cfg.dominates(*bb, b)).map(|e| e.1)) };
        // What goes: the multiply, and `B + c2` when nothing else reads it; what comes: a
        // new bump.
        let whole_dies = fa.offset != 0 && self.uses[fa.whole.0 as usize] == 1;
        if !whole_dies && existing.is_none() {
            return false;
        }
        let loc = f.blocks[b].insts[i].loc;
        let bump = match existing {
            Some(v) => v,
            None => {
                let names = self.names.get_or_insert_with(|| crate::mir::NameSet::of(f));
                let stride_name = f.value(fa.stride).name.clone();
                let amount = f.fresh_value(names, &format!("{stride_name}.sh"), self.i32_ty);
                let bump = f.fresh_value(names, &format!("{stride_name}.x{}", 1u128 << k), vt);
                self.inserts.push((b, i, Inst { defs: vec![amount].into(), opcode: Opcode::Generic(self.ops.constant), flags: Default::default(), operands: vec![Operand::int(i128::from(k))], loc }));
                self.inserts.push((b, i, Inst { defs: vec![bump].into(), opcode: Opcode::Generic(self.ops.shl), flags: Default::default(), operands: vec![Operand::Value(fa.stride), Operand::Value(amount)], loc }));
                self.uses.resize(f.values.len(), 0);
                self.uses[fa.stride.0 as usize] += 1;
                self.bumps.entry((fa.stride, k, vt)).or_default().push((b, bump));
                stats.bumps += 1;
                bump
            }
        };
        // The old operands lose a reader: the multiply (multiply-add form) or `B + c2`
        // and `S` (multiply form).
        match (y, m) {
            (Some(y), Some(m)) => {
                self.uses[y.0 as usize] -= 1;
                self.uses[m.0 as usize] -= 1;
                self.uses[fa.whole.0 as usize] -= 1;
                self.uses[fa.stride.0 as usize] -= 1;
            }
            _ => {
                self.uses[fa.whole.0 as usize] -= 1;
                self.uses[fa.stride.0 as usize] -= 1;
            }
        }
        self.uses[x1.0 as usize] += 1;
        self.uses[bump.0 as usize] += 1;
        let inst = &mut f.blocks[b].insts[i];
        inst.opcode = Opcode::Generic(op);
        inst.flags = Default::default();
        inst.operands = vec![Operand::Value(x1), Operand::Value(bump)];
        stats.rewritten += 1;
        let sign = if op == self.ops.add { "+" } else { "-" };
        stats.remarks.push((f.name.clone(), loc, format!("%{} = %{} {sign} %{} << {k}", f.value(d).name, f.value(x1).name, f.value(fa.stride).name)));
        true
    }
}
