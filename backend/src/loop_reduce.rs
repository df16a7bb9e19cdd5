//! Loop strength reduction (`loop-reduce`, the common cases of LLVM's
//! LoopStrengthReduce; off with `disable-lsr`, llc's flag of the same name): integer
//! induction expressions become PHIs of their own (see "integer induction expressions"
//! below: `row * n + t * 16 + tx` steps by 16), then addresses become pointers that
//! step (below).
//!
//! Where it sits: `combine` -> `loop-reduce` -> `isel`, on generic SSA MIR, so the MIR
//! interpreter checks it (`backend/tests/combine_differential.rs` runs every kernel
//! before and after it).
//!
//! What it does: in a loop whose header has a counter `i = PHI [c, preheader],
//! [i + s, latch]` (c and s literals), an address `PTR_ADD base, ext(i) * S` (or `ext(i) << k`, or
//! `ext(i)`) with `base` defined outside the loop becomes a pointer of its own:
//! `p = PHI [base + ext(c) * S, preheader], [p + s * S, latch]`. One add per iteration
//! replaces a widening multiply and an add, and ptxas can fold the offsets of the
//! copies it unrolls into `[R.64+0x4]` (loop_two_phis: four registers fewer than
//! with the index on sm_60 and sm_90). Addresses with the same base, counter,
//! extension and scale share one pointer. Uses outside the loop keep the old address.
//!
//! A 64-bit counter may also start and step by loop-invariant registers (a
//! grid-stride loop: `i = tid + ctaid * ntid; i += ntid * nctaid`): the start and step
//! in bytes are then one multiply each in the preheader.
//!
//! Exactness: pointer arithmetic wraps at 64 bits, so a 64-bit counter (no extension)
//! needs nothing, whatever its start and step. A narrower counter is extended, and
//! `ext(i + 1) = ext(i) + 1` only when `i + 1` does not wrap in the extension's sense;
//! the pass proves it from the loop's shape (there is no `nsw` flag in MIR): step 1,
//! a constant start, one latch whose branch stays in the loop only while `i` or
//! `i + 1` is below a bound (`lt` for a sign extension, or for a zero extension from
//! a non-negative start; `ult` for a zero extension). Every value the counter takes
//! in the loop is then the previous one plus 1 with no wrap. Anything else is left.
//!
//! Linear: each loop's blocks are scanned once per pass over its candidates, and the
//! loops (natural loops, [`Cfg::loops`]) together are no larger than the function
//! times its nesting depth.

use rustc_hash::FxHashMap as HashMap;
use target_desc::tables::{OpcodeId, SmTables, TargetTables};

use crate::machine::cfg::{Cfg, Loop};
use crate::mir::{Function, Inst, Loc, Module, Opcode, Operand, ValueId};

/// What the pass did, for remarks and tests.
#[derive(Clone, Debug, Default)]
pub struct LsrStats {
    /// Addresses now read from a pointer PHI.
    pub reduced: usize,
    /// Pointer PHIs made.
    pub pointers: usize,
    /// Integer induction expressions made PHIs of their own.
    pub expressions: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

struct Ops {
    phi: OpcodeId,
    add: OpcodeId,
    sub: OpcodeId,
    mul: OpcodeId,
    shl: OpcodeId,
    ptr_add: OpcodeId,
    constant: OpcodeId,
    zext: OpcodeId,
    sext: OpcodeId,
    setcc: OpcodeId,
    brcond: OpcodeId,
}

/// How the counter reaches the offset.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Ext {
    None,
    Zero,
    Sign,
}

/// A counter of a loop: `i = PHI [start, preheader], [i + step, latch]`. Start and
/// step are literals (`Operand::Int`) or, for a 64-bit counter, loop-invariant values
/// (`Operand::Value`: a grid-stride loop's `tid` and `ntid * nctaid`).
struct Counter {
    value: ValueId,
    start: Operand,
    step: Operand,
    bits: u32,
    /// Which extensions of it step without wrapping (see the module comment).
    zext_ok: bool,
    sext_ok: bool,
}

pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables) -> Result<LsrStats, String> {
    let op = |name: &str| tables.opcode(name).ok_or_else(|| format!("the description has no generic opcode {name}, which loop-reduce needs"));
    let ops = Ops {
        phi: op("PHI")?,
        add: op("ADD")?,
        sub: op("SUB")?,
        mul: op("MUL")?,
        shl: op("SHL")?,
        ptr_add: op("PTR_ADD")?,
        constant: op("CONSTANT")?,
        zext: op("ZERO_EXTEND")?,
        sext: op("SIGN_EXTEND")?,
        setcc: op("SETCC")?,
        brcond: op("BRCOND")?,
    };
    let mut stats = LsrStats::default();
    let mut touched = false;
    for f in &mut module.functions {
        if f.ssa && reduce_function(f, tables, sm, &ops, &mut stats) {
            touched = true;
        }
    }
    if touched {
        crate::machine::dce::remove_dead_code(module, tables);
    }
    Ok(stats)
}

/// One address to rewrite: its value, and the pointer it shares.
struct Candidate {
    old: ValueId,
    offset_ty: target_desc::tables::VtId,
    loc: Loc,
    key: (ValueId, ValueId, Ext, i128),
}

fn reduce_function(f: &mut Function, tables: &TargetTables, sm: &SmTables, ops: &Ops, stats: &mut LsrStats) -> bool {
    if crate::machine::cfg::branches_only_forward(f, tables) {
        return false;
    }
    let cfg = Cfg::new(f, tables);
    let loops = cfg.loops();
    if loops.is_empty() {
        return false;
    }
    let mut site: Vec<Option<(usize, usize)>> = vec![None; f.values.len()];
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            for d in &inst.defs {
                site[d.0 as usize] = Some((b, i));
            }
        }
    }
    let mut names: Option<crate::mir::NameSet> = None;
    let mut changed = false;
    // Induction expressions made PHIs, for their uses outside their loops.
    let mut after_loop: HashMap<ValueId, ValueId> = HashMap::default();
    for l in &loops {
        let Some((preheader, latch)) = entry_and_latch(l, &cfg) else { continue };
        if reduce_induction_expressions(f, tables, sm, ops, &site, l, &cfg, preheader, latch, &mut names, stats, &mut after_loop) {
            changed = true;
            site.resize(f.values.len(), None);
            for b in [l.header, preheader, latch] {
                for (i, inst) in f.blocks[b].insts.iter().enumerate() {
                    for d in &inst.defs {
                        site[d.0 as usize] = Some((b, i));
                    }
                }
            }
        }
        let counters = counters(f, tables, ops, &site, l, preheader, latch);
        if counters.is_empty() {
            continue;
        }
        let by_value: HashMap<ValueId, &Counter> = counters.iter().map(|c| (c.value, c)).collect();
        let mut candidates: Vec<Candidate> = Vec::new();
        for &b in &l.blocks {
            for inst in &f.blocks[b].insts {
                if let Some((key, offset_ty)) = address(f, tables, sm, ops, &site, l, &by_value, inst) {
                    candidates.push(Candidate { old: inst.defs[0], offset_ty, loc: inst.loc, key });
                }
            }
        }
        if candidates.is_empty() {
            continue;
        }
        let names = names.get_or_insert_with(|| crate::mir::NameSet::of(f));
        // One pointer per key, in the order of first appearance.
        let mut pointers: HashMap<(ValueId, ValueId, Ext, i128), ValueId> = HashMap::default();
        let mut replace: HashMap<ValueId, ValueId> = HashMap::default();
        let header_label = f.blocks[l.header].number;
        let (pre_label, latch_label) = (f.blocks[preheader].number, f.blocks[latch].number);
        for c in &candidates {
            let (old, loc, i64_ty) = (c.old, c.loc, c.offset_ty);
            let ty = f.value(old).ty;
            let p = match pointers.get(&c.key) {
                Some(&p) => p,
                None => {
                    let (base, counter, ext, scale) = c.key;
                    let counter = by_value[&counter];
                    let stem = format!("{}.lsr", f.value(old).name);
                    let mut pre_insts = Vec::new();
                    let mut latch_insts = Vec::new();
                    // `v * scale` as a value: a literal's product is folded, a register's
                    // is one multiply in the preheader (none for a scale of 1).
                    #[allow(clippy::too_many_arguments)]
                    let scaled = |f: &mut Function, names: &mut crate::mir::NameSet, v: &Operand, what: &str, ext: Ext, into_latch: bool, pre: &mut Vec<Inst>, latch: &mut Vec<Inst>| -> Option<ValueId> {
                        let name = format!("{stem}.{what}");
                        match *v {
                            Operand::Int(k) => {
                                let product = wrap64(extend(k.get(), counter.bits, ext).wrapping_mul(scale));
                                if product == 0 {
                                    return None;
                                }
                                let c = f.fresh_value(names, &name, i64_ty);
                                let at = if into_latch { latch } else { pre };
                                at.push(inst_of(ops.constant, vec![c], vec![Operand::int(product)], loc));
                                Some(c)
                            }
                            Operand::Value(x) if scale == 1 => Some(x),
                            Operand::Value(x) => {
                                let c = f.fresh_value(names, &format!("{name}.scale"), i64_ty);
                                pre.push(inst_of(ops.constant, vec![c], vec![Operand::int(scale)], loc));
                                let m = f.fresh_value(names, &name, i64_ty);
                                pre.push(inst_of(ops.mul, vec![m], vec![Operand::Value(x), Operand::Value(c)], loc));
                                Some(m)
                            }
                            _ => None,
                        }
                    };
                    // Preheader: the start address (the base itself at offset 0).
                    let start_value = match scaled(f, names, &counter.start, "start.off", ext, false, &mut pre_insts, &mut latch_insts) {
                        None => base,
                        Some(off) => {
                            let s = f.fresh_value(names, &format!("{stem}.start"), ty);
                            pre_insts.push(inst_of(ops.ptr_add, vec![s], vec![Operand::Value(base), Operand::Value(off)], loc));
                            s
                        }
                    };
                    let p = f.fresh_value(names, &stem, ty);
                    let next = f.fresh_value(names, &format!("{stem}.next"), ty);
                    // A step is never 0 here (the counter would not count), but a
                    // product that wraps to 0 still gets its add.
                    let step = match scaled(f, names, &counter.step, "step", Ext::Sign, true, &mut pre_insts, &mut latch_insts) {
                        Some(step) => step,
                        None => {
                            let z = f.fresh_value(names, &format!("{stem}.step"), i64_ty);
                            latch_insts.push(inst_of(ops.constant, vec![z], vec![Operand::int(0)], loc));
                            z
                        }
                    };
                    latch_insts.push(inst_of(ops.ptr_add, vec![next], vec![Operand::Value(p), Operand::Value(step)], loc));
                    let step_text = match counter.step {
                        Operand::Int(k) => format!("{} bytes", wrap64(k.get().wrapping_mul(scale))),
                        Operand::Value(v) => format!("%{} * {scale} bytes", f.value(v).name),
                        _ => String::new(),
                    };
                    insert_before_terminators(f, tables, preheader, pre_insts);
                    insert_before_terminators(f, tables, latch, latch_insts);
                    let mut phi_operands = Vec::new();
                    for &pred in &cfg.preds[l.header] {
                        let (v, label) = if pred == preheader { (start_value, pre_label) } else { (next, latch_label) };
                        phi_operands.push(Operand::Value(v));
                        phi_operands.push(Operand::Block(label));
                    }
                    // New PHIs lead the header, in the order they were made.
                    f.blocks[l.header].insts.insert(pointers.len(), inst_of(ops.phi, vec![p], phi_operands, loc));
                    pointers.insert(c.key, p);
                    stats.pointers += 1;
                    stats.remarks.push((f.name.clone(), loc, format!("%{} steps by {step_text} per iteration of the loop at bb.{header_label}", f.value(p).name)));
                    p
                }
            };
            replace.insert(old, p);
            stats.reduced += 1;
            changed = true;
        }
        // Uses inside the loop read the pointer; those after it keep the address.
        for &b in &l.blocks {
            for inst in &mut f.blocks[b].insts {
                for o in &mut inst.operands {
                    if let Operand::Value(v) = o {
                        if let Some(&p) = replace.get(v) {
                            if !inst.defs.contains(&p) {
                                *o = Operand::Value(p);
                            }
                        }
                    }
                }
            }
        }
        // Later loops see the new layout: positions moved in the blocks touched.
        site.resize(f.values.len(), None);
        for (b, block) in [l.header, preheader, latch].into_iter().map(|b| (b, &f.blocks[b])) {
            for (i, inst) in block.insts.iter().enumerate() {
                for d in &inst.defs {
                    site[d.0 as usize] = Some((b, i));
                }
            }
        }
    }
    // Uses of induction expressions after their loops read the PHI too: it holds the
    // last iteration's value there (the header dominates every exit the value reaches).
    if !after_loop.is_empty() {
        for inst in f.blocks.iter_mut().flat_map(|b| &mut b.insts) {
            for o in &mut inst.operands {
                if let Operand::Value(v) = o {
                    if let Some(&p) = after_loop.get(v) {
                        *o = Operand::Value(p);
                    }
                }
            }
        }
    }
    changed
}

fn inst_of(op: OpcodeId, defs: Vec<ValueId>, operands: Vec<Operand>, loc: Loc) -> Inst {
    Inst { defs: defs.into(), opcode: Opcode::Generic(op), flags: Default::default(), operands, loc }
}

fn insert_before_terminators(f: &mut Function, tables: &TargetTables, b: usize, insts: Vec<Inst>) {
    let block = &mut f.blocks[b];
    let at = block
        .insts
        .iter()
        .position(|i| crate::mir::opcode_info(i.opcode, tables).is_some_and(|o| o.props & target_desc::tables::props::TERMINATOR != 0))
        .unwrap_or(block.insts.len());
    block.insts.splice(at..at, insts);
}

/// The loop's one entering block and its one latch, when it has exactly those.
fn entry_and_latch(l: &Loop, cfg: &Cfg) -> Option<(usize, usize)> {
    let (mut outside, mut inside) = (Vec::new(), Vec::new());
    for &p in &cfg.preds[l.header] {
        if l.contains(p) {
            inside.push(p);
        } else if cfg.reachable(p) {
            outside.push(p);
        }
    }
    match (outside.as_slice(), inside.as_slice()) {
        ([pre], [latch]) if cfg.preds[l.header].len() == 2 => Some((*pre, *latch)),
        _ => None,
    }
}

fn def<'f>(f: &'f Function, site: &[Option<(usize, usize)>], v: ValueId) -> Option<&'f Inst> {
    let (b, i) = site.get(v.0 as usize).copied().flatten()?;
    f.blocks.get(b)?.insts.get(i)
}

fn constant(f: &Function, ops: &Ops, site: &[Option<(usize, usize)>], v: ValueId) -> Option<i128> {
    let d = def(f, site, v)?;
    match (d.opcode, d.operands.first()) {
        (Opcode::Generic(op), Some(Operand::Int(k))) if op == ops.constant => Some(k.get()),
        _ => None,
    }
}

fn int_bits(f: &Function, tables: &TargetTables, v: ValueId) -> Option<u32> {
    tables.type_info(f.value(v).ty).filter(|t| t.kind == target_desc::tables::TypeKind::Int).map(|t| u32::from(t.bits))
}

/// Whether `v` is defined outside loop `l` (or is a constant anywhere).
fn invariant(site: &[Option<(usize, usize)>], l: &Loop, v: ValueId) -> bool {
    site.get(v.0 as usize).copied().flatten().is_none_or(|(b, _)| !l.contains(b))
}

/// The header PHIs of loop `l` that count: `i = PHI [start, preheader], [next, latch]`
/// with `next = ADD i, step` (either operand order), as (i, start, next, step, bits).
fn header_counters(f: &Function, tables: &TargetTables, ops: &Ops, site: &[Option<(usize, usize)>], l: &Loop, preheader: usize, latch: usize) -> Vec<(ValueId, ValueId, ValueId, ValueId, u32)> {
    let (pre_label, latch_label) = (f.blocks[preheader].number, f.blocks[latch].number);
    let mut out = Vec::new();
    for inst in &f.blocks[l.header].insts {
        if inst.opcode != Opcode::Generic(ops.phi) {
            break;
        }
        let (Some(&phi), [Operand::Value(a), Operand::Block(la), Operand::Value(b), Operand::Block(lb)]) = (inst.defs.first(), inst.operands.as_slice()) else { continue };
        let (start, next) = match (*la, *lb) {
            (x, y) if x == pre_label && y == latch_label => (*a, *b),
            (x, y) if x == latch_label && y == pre_label => (*b, *a),
            _ => continue,
        };
        let Some(bits) = int_bits(f, tables, phi) else { continue };
        let Some(inc) = def(f, site, next).filter(|d| d.opcode == Opcode::Generic(ops.add) && d.defs.len() == 1) else { continue };
        let step = match inc.operands.as_slice() {
            [Operand::Value(x), Operand::Value(k)] | [Operand::Value(k), Operand::Value(x)] if *x == phi => *k,
            _ => continue,
        };
        out.push((phi, start, next, step, bits));
    }
    out
}

fn counters(f: &Function, tables: &TargetTables, ops: &Ops, site: &[Option<(usize, usize)>], l: &Loop, preheader: usize, latch: usize) -> Vec<Counter> {
    // The latch's test: stays in the loop while `a cc bound`.
    let stay = latch_test(f, tables, ops, site, l, latch);
    let mut out = Vec::new();
    for (phi, start, next, step_value, bits) in header_counters(f, tables, ops, site, l, preheader, latch) {
        let step_k = constant(f, ops, site, step_value);
        let start_k = constant(f, ops, site, start);
        let (mut zext_ok, mut sext_ok) = (bits == 64, bits == 64);
        if bits < 64 {
            if let (Some(c), Some((a, cc))) = (start_k, stay.as_ref()) {
                let tested = *a == phi || *a == next;
                let max_s = (1i128 << (bits - 1)) - 1;
                let max_u = (1i128 << bits) - 1;
                let unsigned_c = c & max_u;
                if step_k == Some(1) && tested {
                    match *cc {
                        "lt" => {
                            sext_ok = c < max_s;
                            zext_ok = (0..max_s).contains(&c);
                        }
                        "ult" => zext_ok = unsigned_c < max_u,
                        _ => {}
                    }
                }
            }
        }
        if !zext_ok && !sext_ok {
            continue;
        }
        // A 64-bit counter may start and step by loop-invariant registers; a narrower
        // one got here only with literals.
        let start = start_k.map_or(Operand::Value(start), |k| Operand::int(k));
        let step = match step_k {
            Some(k) => Operand::int(k),
            None if invariant(site, l, step_value) => Operand::Value(step_value),
            None => continue,
        };
        if bits < 64 && (matches!(start, Operand::Value(_)) || matches!(step, Operand::Value(_))) {
            continue;
        }
        out.push(Counter { value: phi, start, step, bits, zext_ok, sext_ok });
    }
    out
}

/// The latch's exit test as `(a, cc)`: the loop continues exactly while `a cc bound`
/// holds for a loop-invariant `bound`.
fn latch_test(f: &Function, tables: &TargetTables, ops: &Ops, site: &[Option<(usize, usize)>], l: &Loop, latch: usize) -> Option<(ValueId, &'static str)> {
    let term = f.blocks[latch].insts.iter().rev().find(|i| i.opcode == Opcode::Generic(ops.brcond))?;
    let [Operand::Value(c), Operand::Block(t), Operand::Block(e)] = term.operands.as_slice() else { return None };
    let header = f.blocks[l.header].number;
    let setcc = def(f, site, *c).filter(|d| d.opcode == Opcode::Generic(ops.setcc))?;
    let [Operand::CondCode(cc), Operand::Value(a), Operand::Value(bound)] = setcc.operands.as_slice() else { return None };
    if !invariant(site, l, *bound) {
        return None;
    }
    // Only `BRCOND cond, header, exit` (the loop continues when the test holds).
    let cc = tables.cond_code_info(*cc)?.name;
    (*t == header && *e != header).then_some((*a, cc))
}

/// The rewrite key of `inst` when it is a reducible address: (base, counter, extension,
/// scale in bytes), and the type of its offset.
#[allow(clippy::too_many_arguments)]
fn address(f: &Function, tables: &TargetTables, sm: &SmTables, ops: &Ops, site: &[Option<(usize, usize)>], l: &Loop, counters: &HashMap<ValueId, &Counter>, inst: &Inst) -> Option<((ValueId, ValueId, Ext, i128), target_desc::tables::VtId)> {
    if inst.opcode != Opcode::Generic(ops.ptr_add) || inst.defs.len() != 1 {
        return None;
    }
    let [Operand::Value(base), Operand::Value(off)] = inst.operands.as_slice() else { return None };
    if !invariant(site, l, *base) || int_bits(f, tables, *off) != Some(64) {
        return None;
    }
    let pointer_ty = f.value(inst.defs[0]).ty;
    if !sm.is_legal(ops.phi, pointer_ty) || !sm.is_legal(ops.ptr_add, pointer_ty) || !sm.is_legal(ops.constant, f.value(*off).ty) {
        return None;
    }
    // off = x * S, x << k, or x; x = ext(i) or i.
    let off_def = def(f, site, *off)?;
    let (x, scale) = match (off_def.opcode, off_def.operands.as_slice()) {
        (Opcode::Generic(op), [Operand::Value(a), Operand::Value(b)]) if op == ops.mul => match (constant(f, ops, site, *a), constant(f, ops, site, *b)) {
            (_, Some(k)) => (*a, k),
            (Some(k), None) => (*b, k),
            _ => return None,
        },
        (Opcode::Generic(op), [Operand::Value(a), Operand::Value(b)]) if op == ops.shl => {
            let k = constant(f, ops, site, *b)?;
            if !(0..64).contains(&k) {
                return None;
            }
            (*a, 1i128 << k)
        }
        _ => (*off, 1),
    };
    let (counter, ext) = match def(f, site, x).map(|d| (d.opcode, d.operands.as_slice())) {
        Some((Opcode::Generic(op), [Operand::Value(i)])) if op == ops.zext => (*i, Ext::Zero),
        Some((Opcode::Generic(op), [Operand::Value(i)])) if op == ops.sext => (*i, Ext::Sign),
        _ => (x, Ext::None),
    };
    let c = counters.get(&counter)?;
    let fits = match ext {
        Ext::None => c.bits == 64,
        Ext::Zero => c.zext_ok,
        Ext::Sign => c.sext_ok,
    };
    fits.then_some(((*base, counter, ext, scale), f.value(*off).ty))
}

/// `k` (a literal of a `bits`-wide counter) extended to 64 bits.
fn extend(k: i128, bits: u32, ext: Ext) -> i128 {
    if bits >= 64 {
        return k;
    }
    let mask = (1i128 << bits) - 1;
    let low = k & mask;
    match ext {
        Ext::Zero => low,
        Ext::Sign | Ext::None => {
            let shift = 128 - bits;
            (low << shift) >> shift
        }
    }
}

/// `k` as the literal of an i64 constant (wrapped to 64 bits, sign-extended).
fn wrap64(k: i128) -> i128 {
    i128::from(k as i64)
}

// ---- integer induction expressions ----
//
// An integer value computed in the loop as `a * i + b` from a counter
// `i = PHI [start, preheader], [i + step, latch]` (step loop-invariant) by ADD, SUB,
// MUL by an invariant and SHL by a constant, with `a` and `b` loop-invariant, becomes a
// PHI of its own: `e = PHI [a * start + b, preheader], [e + a * step, latch]`, the start
// computed by a copy of its expression in the preheader and the step folded where it is
// a literal (LLVM's LoopStrengthReduce does the same on i32 indices: a tiled matrix
// multiply's `row * n + t * 16 + tx` steps by 16, `(t * 16 + ty) * n + col` by `16 * n`).
// Exact at any width with no proof: integer arithmetic wraps modulo 2^bits, and
// `e(i + step) = e(i) + a * step` holds modulo 2^bits. Only expressions of two or more
// operations are rewritten (one add per iteration replaces them); every use reads the
// new PHI, as it holds the expression's value from the header on (uses after the loop
// see the last iteration's value either way).

/// The most operations an induction expression (with the invariant ones inside it) may
/// have; more are left as they are.
const MAX_EXPRESSION_OPS: u32 = 64;

/// What a value of the loop is, for the induction-expression rewrite.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Shape {
    /// Loop-invariant; `ops` instructions of the loop compute it (0 when defined outside).
    Invariant { ops: u32 },
    /// `a * counter + b`; `ops` instructions of the loop compute it from the counter.
    Affine { counter: ValueId, ops: u32 },
    Other,
}

/// A loop-invariant term of the preheader's arithmetic, folded where it is a literal.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Term {
    Zero,
    Const(i128),
    Value(ValueId),
}

/// `k` wrapped to a `bits`-wide integer, as the sign-extended literal of a CONSTANT.
fn wrap_to(k: i128, bits: u32) -> i128 {
    if bits >= 128 {
        return k;
    }
    let shift = 128 - bits;
    (k << shift) >> shift
}

/// The preheader code of one loop's rewrites: copies of expressions at the counter's
/// start, and the steps, shared between the expressions of the loop.
struct Preheader<'a> {
    ops: &'a Ops,
    loc: Loc,
    insts: Vec<Inst>,
    start_of: HashMap<ValueId, ValueId>,
    step_of: HashMap<ValueId, Term>,
    /// The literal of each CONSTANT made here, for folding.
    literal: HashMap<ValueId, i128>,
}

impl Preheader<'_> {
    fn value(&mut self, f: &mut Function, names: &mut crate::mir::NameSet, t: Term, ty: target_desc::tables::VtId, name: &str) -> ValueId {
        match t {
            Term::Value(v) => v,
            Term::Zero | Term::Const(_) => {
                let k = if let Term::Const(k) = t { k } else { 0 };
                let c = f.fresh_value(names, name, ty);
                self.insts.push(inst_of(self.ops.constant, vec![c], vec![Operand::int(k)], self.loc));
                self.literal.insert(c, k);
                c
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(&mut self, f: &mut Function, names: &mut crate::mir::NameSet, op: OpcodeId, a: ValueId, b: ValueId, ty: target_desc::tables::VtId, name: &str) -> ValueId {
        let d = f.fresh_value(names, name, ty);
        self.insts.push(inst_of(op, vec![d], vec![Operand::Value(a), Operand::Value(b)], self.loc));
        d
    }
}

/// Rewrites the induction expressions of loop `l` (see above); returns whether it did.
#[allow(clippy::too_many_arguments)]
fn reduce_induction_expressions(
    f: &mut Function,
    tables: &TargetTables,
    sm: &SmTables,
    ops: &Ops,
    site: &[Option<(usize, usize)>],
    l: &Loop,
    cfg: &Cfg,
    preheader: usize,
    latch: usize,
    names: &mut Option<crate::mir::NameSet>,
    stats: &mut LsrStats,
    after_loop: &mut HashMap<ValueId, ValueId>,
) -> bool {
    let (pre_label, latch_label) = (f.blocks[preheader].number, f.blocks[latch].number);
    // The counters: `i = PHI [start, preheader], [i + step, latch]`, step invariant.
    let mut counter_of: HashMap<ValueId, (ValueId, Term)> = HashMap::default();
    let mut increments: Vec<ValueId> = Vec::new();
    for (phi, start, next, step, _) in header_counters(f, tables, ops, site, l, preheader, latch) {
        let step = match constant(f, ops, site, step) {
            Some(k) => Term::Const(k),
            None if invariant(site, l, step) => Term::Value(step),
            None => continue,
        };
        counter_of.insert(phi, (start, step));
        increments.push(next);
    }
    if counter_of.is_empty() {
        return false;
    }
    // Most loops have nothing to do: no arithmetic on a counter but its increment. Say
    // so before any map is built (a function of many small loops pays per loop).
    let arithmetic = [ops.add, ops.sub, ops.mul, ops.shl];
    let reads_counter = l.blocks.iter().flat_map(|&b| &f.blocks[b].insts).any(|inst| {
        matches!(inst.opcode, Opcode::Generic(op) if arithmetic.contains(&op))
            && !inst.defs.first().is_some_and(|d| increments.contains(d))
            && inst.operands.iter().any(|o| matches!(o, Operand::Value(v) if counter_of.contains_key(v)))
    });
    if !reads_counter {
        return false;
    }
    // Shapes, in layout order (an operand defined later in the layout is `Other`).
    let mut shape: HashMap<ValueId, Shape> = HashMap::default();
    let shape_of = |shape: &HashMap<ValueId, Shape>, v: ValueId| -> Shape {
        if counter_of.contains_key(&v) {
            return Shape::Affine { counter: v, ops: 0 };
        }
        if invariant(site, l, v) {
            return Shape::Invariant { ops: 0 };
        }
        shape.get(&v).copied().unwrap_or(Shape::Other)
    };
    let mut blocks: Vec<usize> = l.blocks.to_vec();
    blocks.sort_unstable();
    for &b in &blocks {
        for inst in &f.blocks[b].insts {
            let [d] = inst.defs.as_slice() else { continue };
            let Opcode::Generic(op) = inst.opcode else { continue };
            if counter_of.contains_key(d) {
                continue;
            }
            let Some(bits) = int_bits(f, tables, *d) else { continue };
            let same_width = |v: &ValueId| int_bits(f, tables, *v) == Some(bits);
            let s = match inst.operands.as_slice() {
                [Operand::Int(_)] if op == ops.constant => Shape::Invariant { ops: 0 },
                [Operand::Value(x), Operand::Value(y)] if (op == ops.add || op == ops.sub || op == ops.mul || op == ops.shl) && same_width(x) && same_width(y) => {
                    match (shape_of(&shape, *x), shape_of(&shape, *y)) {
                        (Shape::Invariant { ops: a }, Shape::Invariant { ops: b }) => Shape::Invariant { ops: a + b + 1 },
                        (Shape::Affine { counter, ops: a }, Shape::Invariant { ops: b }) => {
                            let shift_ok = op != ops.shl || constant(f, ops, site, *y).is_some_and(|k| (0..i128::from(bits)).contains(&k));
                            if shift_ok { Shape::Affine { counter, ops: a + b + 1 } } else { Shape::Other }
                        }
                        (Shape::Invariant { ops: a }, Shape::Affine { counter, ops: b }) if op != ops.shl => Shape::Affine { counter, ops: a + b + 1 },
                        (Shape::Affine { counter: c1, ops: a }, Shape::Affine { counter: c2, ops: b }) if c1 == c2 && (op == ops.add || op == ops.sub) => Shape::Affine { counter: c1, ops: a + b + 1 },
                        _ => Shape::Other,
                    }
                }
                _ => Shape::Other,
            };
            // The preheader copies recurse over an expression's operations: a bound on
            // their number bounds that depth (a chain of a million adds is left).
            let s = match s {
                Shape::Invariant { ops: n } | Shape::Affine { ops: n, .. } if n > MAX_EXPRESSION_OPS => Shape::Other,
                s => s,
            };
            if s != Shape::Other {
                shape.insert(*d, s);
            }
        }
    }
    // Roots: affine values of two or more operations that something of the loop other
    // than an affine operation reads (only the loop is scanned, to stay linear: a value
    // read only after the loop is left).
    let interior = |inst: &Inst| inst.defs.first().is_some_and(|d| matches!(shape.get(d), Some(Shape::Affine { .. })));
    let mut root_set: HashMap<ValueId, ()> = HashMap::default();
    for &b in &blocks {
        for inst in &f.blocks[b].insts {
            if interior(inst) {
                continue;
            }
            for o in &inst.operands {
                if let Operand::Value(v) = o {
                    if let Some(Shape::Affine { ops: n, .. }) = shape.get(v) {
                        if *n >= 2 {
                            root_set.insert(*v, ());
                        }
                    }
                }
            }
        }
    }
    // Affine values read by another affine value are roots too when escaping; in
    // layout order, for a deterministic result.
    let mut roots: Vec<ValueId> = Vec::new();
    for &b in &blocks {
        for inst in &f.blocks[b].insts {
            if let Some(d) = inst.defs.first() {
                if root_set.contains_key(d) {
                    roots.push(*d);
                }
            }
        }
    }
    if roots.is_empty() {
        return false;
    }
    // Fresh names only now: the set costs a pass over the function's values.
    let names = names.get_or_insert_with(|| crate::mir::NameSet::of(f));
    let ty_ok = |ty| [ops.phi, ops.add, ops.sub, ops.mul, ops.shl, ops.constant].iter().all(|&op| sm.is_legal(op, ty));
    let loc = f.blocks[l.header].insts.first().map_or(Loc::default(), |i| i.loc);
    let mut pre = Preheader { ops, loc, insts: Vec::new(), start_of: HashMap::default(), step_of: HashMap::default(), literal: HashMap::default() };
    let mut latch_insts = Vec::new();
    let mut replace: HashMap<ValueId, ValueId> = HashMap::default();
    let mut new_phis = Vec::new();
    for &r in &roots {
        let ty = f.value(r).ty;
        if !ty_ok(ty) {
            continue;
        }
        let bits = int_bits(f, tables, r).unwrap_or(64);
        let Some(step) = step_term(f, ops, site, l, &counter_of, &mut pre, names, r, bits) else { continue };
        if step == Term::Zero || step == Term::Const(0) {
            continue;
        }
        let Some(start) = start_value(f, ops, site, l, &counter_of, &mut pre, names, r, bits) else { continue };
        let stem = format!("{}.lsr", f.value(r).name);
        let step_v = pre.value(f, names, step, ty, &format!("{stem}.step"));
        let p = f.fresh_value(names, &stem, ty);
        let next = f.fresh_value(names, &format!("{stem}.next"), ty);
        latch_insts.push(inst_of(ops.add, vec![next], vec![Operand::Value(p), Operand::Value(step_v)], loc));
        let mut phi_operands = Vec::new();
        for &pred in &cfg.preds[l.header] {
            let (v, label) = if pred == preheader { (start, pre_label) } else { (next, latch_label) };
            phi_operands.push(Operand::Value(v));
            phi_operands.push(Operand::Block(label));
        }
        let root_loc = def(f, site, r).map_or(loc, |d| d.loc);
        new_phis.push(inst_of(ops.phi, vec![p], phi_operands, root_loc));
        let step_text = match step {
            Term::Const(k) => format!("{k}"),
            Term::Value(v) => format!("%{}", f.value(v).name),
            Term::Zero => "0".into(),
        };
        stats.remarks.push((f.name.clone(), root_loc, format!("%{} steps by {step_text} per iteration of the loop at bb.{} (was %{})", f.value(p).name, f.blocks[l.header].number, f.value(r).name)));
        stats.expressions += 1;
        replace.insert(r, p);
    }
    if replace.is_empty() {
        return false;
    }
    insert_before_terminators(f, tables, preheader, std::mem::take(&mut pre.insts));
    insert_before_terminators(f, tables, latch, latch_insts);
    let header = l.header;
    for (k, phi) in new_phis.into_iter().enumerate() {
        f.blocks[header].insts.insert(k, phi);
    }
    // Every use in the loop reads the PHI now (the new PHIs read their start and next
    // only); those after the loop at the end of the function, in one sweep.
    for &b in &blocks {
        for inst in &mut f.blocks[b].insts {
            for o in &mut inst.operands {
                if let Operand::Value(v) = o {
                    if let Some(&p) = replace.get(v) {
                        *o = Operand::Value(p);
                    }
                }
            }
        }
    }
    after_loop.extend(replace);
    true
}

/// The value of `v`'s expression at the counter's start, computed in the preheader.
#[allow(clippy::too_many_arguments)]
fn start_value(f: &mut Function, ops: &Ops, site: &[Option<(usize, usize)>], l: &Loop, counters: &HashMap<ValueId, (ValueId, Term)>, pre: &mut Preheader<'_>, names: &mut crate::mir::NameSet, v: ValueId, bits: u32) -> Option<ValueId> {
    if let Some(&(start, _)) = counters.get(&v) {
        return Some(start);
    }
    if invariant(site, l, v) {
        return Some(v);
    }
    if let Some(&s) = pre.start_of.get(&v) {
        return Some(s);
    }
    let d = def(f, site, v)?.clone();
    let Opcode::Generic(op) = d.opcode else { return None };
    let ty = f.value(v).ty;
    let name = format!("{}.start", f.value(v).name);
    let s = match d.operands.as_slice() {
        [Operand::Int(k)] if op == ops.constant => pre.value(f, names, Term::Const(k.get()), ty, &name),
        [Operand::Value(x), Operand::Value(y)] => {
            let a = start_value(f, ops, site, l, counters, pre, names, *x, bits)?;
            let b = start_value(f, ops, site, l, counters, pre, names, *y, bits)?;
            let lit = |v: ValueId| pre.literal.get(&v).copied().or_else(|| constant(f, ops, site, v)).map(|k| wrap_to(k, bits));
            match fold(ops, op, lit(a), lit(b), bits) {
                Folded::Literal(k) => pre.value(f, names, Term::Const(k), ty, &name),
                Folded::Left => a,
                Folded::Right => b,
                Folded::No => pre.emit(f, names, op, a, b, ty, &name),
            }
        }
        _ => return None,
    };
    pre.start_of.insert(v, s);
    Some(s)
}

/// How much `v`'s expression grows per iteration (`a * step`), folded where literal;
/// the instructions it needs go to the preheader.
#[allow(clippy::too_many_arguments)]
fn step_term(f: &mut Function, ops: &Ops, site: &[Option<(usize, usize)>], l: &Loop, counters: &HashMap<ValueId, (ValueId, Term)>, pre: &mut Preheader<'_>, names: &mut crate::mir::NameSet, v: ValueId, bits: u32) -> Option<Term> {
    if let Some(&(_, step)) = counters.get(&v) {
        return Some(match step {
            Term::Const(k) => Term::Const(wrap_to(k, bits)),
            t => t,
        });
    }
    if invariant(site, l, v) {
        return Some(Term::Zero);
    }
    if let Some(&t) = pre.step_of.get(&v) {
        return Some(t);
    }
    let d = def(f, site, v)?.clone();
    let Opcode::Generic(op) = d.opcode else { return None };
    let ty = f.value(v).ty;
    let name = format!("{}.step", f.value(v).name);
    let t = match d.operands.as_slice() {
        [Operand::Int(_)] if op == ops.constant => Term::Zero,
        [Operand::Value(x), Operand::Value(y)] => {
            let a = step_term(f, ops, site, l, counters, pre, names, *x, bits)?;
            let b = step_term(f, ops, site, l, counters, pre, names, *y, bits)?;
            if op == ops.add || op == ops.sub {
                let sub = op == ops.sub;
                match (a, b) {
                    (a, Term::Zero) => a,
                    (Term::Zero, b) if !sub => b,
                    (Term::Const(p), Term::Const(q)) => Term::Const(wrap_to(if sub { p - q } else { p + q }, bits)),
                    (a, b) => {
                        let av = pre.value(f, names, a, ty, &format!("{name}.a"));
                        let bv = pre.value(f, names, b, ty, &format!("{name}.b"));
                        Term::Value(pre.emit(f, names, op, av, bv, ty, &name))
                    }
                }
            } else if op == ops.mul {
                // One side is invariant (its step is zero); the other is scaled by it.
                let (grow, by) = if b == Term::Zero { (a, *y) } else { (b, *x) };
                match (grow, constant(f, ops, site, by)) {
                    (Term::Zero, _) => Term::Zero,
                    (Term::Const(p), Some(q)) => Term::Const(wrap_to(p.wrapping_mul(q), bits)),
                    (Term::Const(1), None) => Term::Value(start_value(f, ops, site, l, counters, pre, names, by, bits)?),
                    (g, _) => {
                        let gv = pre.value(f, names, g, ty, &format!("{name}.a"));
                        let byv = start_value(f, ops, site, l, counters, pre, names, by, bits)?;
                        Term::Value(pre.emit(f, names, ops.mul, gv, byv, ty, &name))
                    }
                }
            } else if op == ops.shl {
                let k = constant(f, ops, site, *y)?;
                match a {
                    Term::Zero => Term::Zero,
                    Term::Const(p) => Term::Const(wrap_to(p << k, bits)),
                    Term::Value(g) => {
                        let kv = pre.value(f, names, Term::Const(k), ty, &format!("{name}.k"));
                        Term::Value(pre.emit(f, names, ops.shl, g, kv, ty, &name))
                    }
                }
            } else {
                return None;
            }
        }
        _ => return None,
    };
    pre.step_of.insert(v, t);
    Some(t)
}

/// What a preheader operation on two values comes to when one or both are literals.
enum Folded {
    Literal(i128),
    /// The left operand itself (`x + 0`, `x * 1`, `x << 0`).
    Left,
    Right,
    No,
}

fn fold(ops: &Ops, op: OpcodeId, a: Option<i128>, b: Option<i128>, bits: u32) -> Folded {
    if let (Some(p), Some(q)) = (a, b) {
        let k = if op == ops.add {
            Some(p + q)
        } else if op == ops.sub {
            Some(p - q)
        } else if op == ops.mul {
            Some(p.wrapping_mul(q))
        } else if op == ops.shl && (0..i128::from(bits)).contains(&q) {
            Some(p << q)
        } else {
            None
        };
        if let Some(k) = k {
            return Folded::Literal(wrap_to(k, bits));
        }
    }
    match (a, b) {
        (_, Some(0)) if op == ops.add || op == ops.sub || op == ops.shl => Folded::Left,
        (Some(0), _) if op == ops.add => Folded::Right,
        (Some(0), _) | (_, Some(0)) if op == ops.mul => Folded::Literal(0),
        (Some(0), _) if op == ops.shl => Folded::Literal(0),
        (_, Some(1)) if op == ops.mul => Folded::Left,
        (Some(1), _) if op == ops.mul => Folded::Right,
        _ => Folded::No,
    }
}

#[cfg(test)]
mod tests {
    /// A loop whose index is `i` plus a chain of `adds` increments of 1, stored through.
    fn chain(adds: usize) -> String {
        let mut body = String::from("  bb.0.entry:\n    %out:p1 = ARG 0\n    %n:i32 = ARG 1\n    %zero:i32 = CONSTANT 0\n    %one:i32 = CONSTANT 1\n    %has:i1 = SETCC gt, %n, %zero\n    BRCOND %has, %bb.1, %bb.2\n  bb.1.loop:\n    %i:i32 = PHI %zero, %bb.0, %inext, %bb.1\n    %x0:i32 = ADD %i, %one\n");
        for k in 1..adds {
            body.push_str(&format!("    %x{k}:i32 = ADD %x{}, %one\n", k - 1));
        }
        body.push_str(&format!("    STORE %x{}, %out\n    %inext:i32 = ADD %i, %one\n    %more:i1 = SETCC lt, %inext, %n\n    BRCOND %more, %bb.1, %bb.2\n  bb.2.exit:\n    RET\n", adds - 1));
        format!("---\nname: chain\nkind: kernel\nparams:\n  - {{ name: out, type: p1 }}\n  - {{ name: n, type: i32 }}\nbody: |\n{body}...\n")
    }

    fn expressions(adds: usize) -> usize {
        let tables = tables::nvptx();
        let mut module = crate::mir::parser::parse_module(&chain(adds), "chain.mir", tables).unwrap_or_else(|e| panic!("{}", e.render()));
        super::run(&mut module, tables, tables.find_sm("80").unwrap()).unwrap().expressions
    }

    #[test]
    fn long_expression_chains_are_cut_without_deep_recursion() {
        // A chain within the bound becomes one PHI. A longer one is cut at the bound: its
        // first MAX_EXPRESSION_OPS operations become the PHI, the rest stay adds. At
        // 200,000 adds (deep enough to overflow a test thread's stack if the preheader
        // copy recursed over the whole chain) the result is the same.
        for adds in [10, super::MAX_EXPRESSION_OPS as usize + 1, 200_000] {
            assert_eq!(expressions(adds), 1, "{adds} adds");
        }
    }
}
