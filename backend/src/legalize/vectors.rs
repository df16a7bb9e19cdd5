//! Vector type legalization: split into halves, scalarize into elements, or widen to a
//! register vector (reference: "Scalarize and Split Vector"; recursive halving, so
//! v8f16 becomes 2 x v4f16 and then 4 x v2f16 on sm_70+, v4f32 becomes f32 elements
//! where no 64-bit float vector exists).
//!
//! Element-wise operations run once per part; loads and stores go part by part (or stay
//! one wide access through the description's Custom hook, see [`super::hooks`]);
//! everything that moves lanes around (BUILD_VECTOR, shuffles, inserts, extracts,
//! concatenation, lane-wise conversions) is rewritten through the list of lane values
//! ([`elements`]) and reassembled into the parts of the result ([`assemble`]).

use target_desc::tables::VtId;

use super::types::{self, TypeAction};
use super::{Cx, LResult};
use crate::mir::{Inst, Operand, ValueId};

/// The lanes of vector `v` as element values.
pub(crate) fn elements(cx: &mut Cx, v: ValueId) -> LResult<Vec<ValueId>> {
    let ty = cx.ty(v);
    let lanes = types::lanes(cx.tables, ty);
    match cx.action(v) {
        TypeAction::Scalarize(_) => Ok(cx.parts(v)),
        TypeAction::Split(_) => {
            let mut out = Vec::new();
            for p in cx.parts(v) {
                out.extend(elements(cx, p)?);
            }
            Ok(out)
        }
        TypeAction::Widen(_) => {
            let p = cx.parts(v)[0];
            let mut all = elements(cx, p)?;
            all.truncate(lanes as usize);
            Ok(all)
        }
        _ => {
            let v = cx.original(v);
            let elem = types::element(cx.tables, ty);
            let i32t = cx.int(32)?;
            let ops = cx.ops;
            let mut out = Vec::new();
            for i in 0..lanes {
                let idx = cx.constant(i32t, i as i128);
                out.push(cx.op(ops.EXTRACT_VECTOR_ELT, elem, &[v, idx]));
            }
            Ok(out)
        }
    }
}

/// `v` as a value of exactly `ty` (integer lanes may come wider, as ISD allows).
fn fit(cx: &mut Cx, v: ValueId, ty: VtId) -> ValueId {
    let have = cx.ty(v);
    if have == ty {
        return v;
    }
    let ops = cx.ops;
    if types::bits(cx.tables, have) > types::bits(cx.tables, ty) {
        cx.op(ops.TRUNCATE, ty, &[v])
    } else {
        cx.op(ops.ANY_EXTEND, ty, &[v])
    }
}

/// Defines vector `def` (replaced this round or not) from its lane values.
pub(crate) fn assemble(cx: &mut Cx, def: ValueId, lanes: Vec<ValueId>) -> LResult<()> {
    let ops = cx.ops;
    match cx.action(def) {
        TypeAction::Scalarize(elem) => {
            let parts = cx.parts(def);
            for (p, l) in parts.into_iter().zip(lanes) {
                let l = fit(cx, l, elem);
                cx.alias(p, l);
            }
        }
        TypeAction::Split(half) => {
            let parts = cx.parts(def);
            let n = types::lanes(cx.tables, half) as usize;
            for (i, p) in parts.into_iter().enumerate() {
                let chunk = lanes[i * n..(i + 1) * n].to_vec();
                cx.op_into(ops.BUILD_VECTOR, p, &chunk);
            }
        }
        TypeAction::Widen(wide) => {
            let part = cx.parts(def)[0];
            let elem = types::element(cx.tables, wide);
            let mut all = lanes;
            while all.len() < types::lanes(cx.tables, wide) as usize {
                let u = cx.op(ops.UNDEF, elem, &[]);
                all.push(u);
            }
            cx.op_into(ops.BUILD_VECTOR, part, &all);
        }
        _ => cx.op_into(ops.BUILD_VECTOR, def, &lanes),
    }
    Ok(())
}

/// The lane index `v` holds, if it is a constant.
fn constant_index(cx: &Cx, v: ValueId) -> Option<usize> {
    cx.constant_value(v).and_then(|c| usize::try_from(c).ok())
}

/// Lane `idx` (a value) of `lanes`: a constant index picks, a variable one selects.
fn pick(cx: &mut Cx, lanes: &[ValueId], idx: ValueId) -> LResult<ValueId> {
    if let Some(k) = constant_index(cx, idx) {
        return lanes.get(k).copied().ok_or_else(|| cx.error(format!("lane index {k} is out of range ({} lanes)", lanes.len())));
    }
    let idx = cx.original(idx);
    let idx_ty = cx.ty(idx);
    let mut result = lanes[0];
    for (k, lane) in lanes.iter().enumerate().skip(1) {
        let kv = cx.constant(idx_ty, k as i128);
        let hit = cx.setcc("eq", idx, kv);
        result = cx.select(hit, *lane, result);
    }
    Ok(result)
}

/// Rewrites the lane-moving operations and lane-wise conversions through lane lists.
/// Returns false for opcodes it does not know.
pub(crate) fn lanewise(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    let values: Vec<ValueId> = inst.uses().collect();
    let Some(def) = inst.defs.first().copied() else { return Ok(false) };
    let def_ty = cx.ty(def);
    let conversions = [
        ops.SIGN_EXTEND, ops.ZERO_EXTEND, ops.ANY_EXTEND, ops.TRUNCATE, ops.FP_EXTEND, ops.FP_ROUND, ops.FP_TO_SINT, ops.FP_TO_UINT, ops.SINT_TO_FP,
        ops.UINT_TO_FP,
    ];
    if op == ops.EXTRACT_VECTOR_ELT {
        let lanes = elements(cx, values[0])?;
        let lane = pick(cx, &lanes, values[1])?;
        define_scalar(cx, def, lane)?;
        return Ok(true);
    }
    if op == ops.BITCAST {
        return bitcast(cx, values[0], def);
    }
    if op == ops.SETCC && types::is_vector(cx.tables, def_ty) {
        let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() else { return Ok(false) };
        let a = elements(cx, values[0])?;
        let b = elements(cx, values[1])?;
        let lanes: Vec<ValueId> = a.iter().zip(&b).map(|(x, y)| cx.setcc_id(cc, *x, *y)).collect();
        assemble(cx, def, lanes)?;
        return Ok(true);
    }
    if !types::is_vector(cx.tables, def_ty) {
        return Ok(false);
    }
    let lanes = if op == ops.BUILD_VECTOR {
        let mut l = Vec::new();
        for v in &values {
            l.push(cx.original(*v));
        }
        l
    } else if op == ops.INSERT_VECTOR_ELT {
        let mut lanes = elements(cx, values[0])?;
        let elem = cx.original(values[1]);
        match constant_index(cx, values[2]) {
            Some(k) if k < lanes.len() => lanes[k] = elem,
            Some(k) => return Err(cx.error(format!("lane index {k} is out of range"))),
            None => {
                let idx = cx.original(values[2]);
                let idx_ty = cx.ty(idx);
                for (k, lane) in lanes.iter_mut().enumerate() {
                    let kv = cx.constant(idx_ty, k as i128);
                    let hit = cx.setcc("eq", idx, kv);
                    *lane = cx.select(hit, elem, *lane);
                }
            }
        }
        lanes
    } else if op == ops.CONCAT_VECTORS {
        let mut lanes = Vec::new();
        for v in &values {
            lanes.extend(elements(cx, *v)?);
        }
        lanes
    } else if op == ops.EXTRACT_SUBVECTOR {
        let all = elements(cx, values[0])?;
        let Some(start) = constant_index(cx, values[1]) else { return Err(cx.error("EXTRACT_SUBVECTOR needs a constant index")) };
        let n = types::lanes(cx.tables, def_ty) as usize;
        all.get(start..start + n).map(|s| s.to_vec()).ok_or_else(|| cx.error("EXTRACT_SUBVECTOR reads past the end of its vector"))?
    } else if op == ops.VECTOR_SHUFFLE {
        let Some(Operand::Mask(mask)) = inst.operands.iter().find(|o| matches!(o, Operand::Mask(_))).cloned() else { return Ok(false) };
        let mut all = elements(cx, values[0])?;
        all.extend(elements(cx, values[1])?);
        let elem = types::element(cx.tables, def_ty);
        let mut lanes = Vec::new();
        for m in mask {
            if m < 0 {
                lanes.push(cx.op(ops.UNDEF, elem, &[]));
            } else {
                lanes.push(*all.get(m as usize).ok_or_else(|| cx.error(format!("shuffle lane {m} is out of range")))?);
            }
        }
        lanes
    } else if conversions.contains(&op) {
        let src = elements(cx, values[0])?;
        let elem = types::element(cx.tables, def_ty);
        let mut lanes = Vec::new();
        for s in src {
            let d = cx.new_value("lane", elem);
            cx.emit(op, inst.flags.clone(), vec![Operand::Value(s)], smallvec::smallvec![d]);
            lanes.push(d);
        }
        lanes
    } else {
        return Ok(false);
    };
    assemble(cx, def, lanes)?;
    Ok(true)
}

/// Defines a scalar `def` (maybe replaced this round) as `value`.
fn define_scalar(cx: &mut Cx, def: ValueId, value: ValueId) -> LResult<()> {
    let want = cx.ty(def);
    let value = fit(cx, value, want);
    if cx.is_replaced(def) {
        cx.define_parts_from(def, value)
    } else {
        cx.alias(def, value);
        Ok(())
    }
}

fn is_elementwise(cx: &Cx, inst: &Inst) -> bool {
    let Some(op) = inst.opcode.generic() else { return false };
    let Some(info) = cx.tables.opcode_info(op) else { return false };
    let Some(def) = inst.defs.first() else { return false };
    let ty = cx.ty(*def);
    let categories: Vec<&str> = info.categories.iter().filter_map(|c| cx.tables.categories.get(*c as usize).map(|c| c.name)).collect();
    inst.defs.len() == 1 && categories.iter().any(|c| matches!(*c, "arith" | "float" | "sfu")) && op != cx.ops.PTR_ADD && inst.uses().all(|u| cx.ty(u) == ty)
}

fn is_trapping(cx: &Cx, inst: &Inst) -> bool {
    let o = cx.ops;
    inst.opcode.generic().is_some_and(|op| [o.SDIV, o.UDIV, o.SREM, o.UREM].contains(&op))
}

/// A per-part copy of `inst` for each of `def`'s parts; `part_of(v, i)` gives operand
/// parts.
fn per_part(cx: &mut Cx, inst: &Inst, def: ValueId) {
    let parts = cx.parts(def);
    for (i, p) in parts.iter().enumerate() {
        let operands = inst.operands.iter().map(|o| match o {
            Operand::Value(v) if cx.is_replaced(*v) && cx.action(*v) == cx.action(def) => Operand::Value(cx.parts(*v)[i]),
            Operand::Value(v) => Operand::Value(cx.original(*v)),
            other => other.clone(),
        }).collect();
        cx.emit(inst.opcode.generic().unwrap_or(cx.ops.COPY), inst.flags.clone(), operands, smallvec::smallvec![*p]);
    }
}

fn align_of(inst: &Inst) -> Option<u64> {
    super::expand_integer::align_of(inst)
}

/// The alignment of `base + offset` when base is aligned to `align`.
fn offset_align(align: u64, offset: u64) -> u64 {
    if offset == 0 {
        align
    } else {
        align.min(1 << offset.trailing_zeros())
    }
}

fn address(cx: &mut Cx, ptr: ValueId, offset: u64) -> LResult<ValueId> {
    if offset == 0 {
        return Ok(ptr);
    }
    let ops = cx.ops;
    let i64t = cx.int(64)?;
    let off = cx.constant(i64t, offset as i128);
    let ty = cx.ty(ptr);
    Ok(cx.op(ops.PTR_ADD, ty, &[ptr, off]))
}

fn memory_flags(inst: &Inst) -> Option<crate::mir::Flags> {
    if inst.flags.iter().any(|f| matches!(*f, "sext" | "zext" | "anyext" | "trunc")) {
        return None;
    }
    Some(inst.flags.clone())
}

/// Loads `pieces` of the given types laid out back to back from `ptr`.
fn load_pieces(cx: &mut Cx, inst: &Inst, ptr: ValueId, defs: &[ValueId], natural: u64) -> LResult<bool> {
    let Some(flags) = memory_flags(inst) else { return Ok(false) };
    let align = align_of(inst).unwrap_or(natural);
    let mut offset = 0u64;
    for d in defs {
        let bytes = types::bits(cx.tables, cx.ty(*d)) as u64 / 8;
        let p = address(cx, ptr, offset)?;
        let ops = cx.ops;
        cx.emit(ops.LOAD, flags.clone(), vec![Operand::Value(p), Operand::Align(offset_align(align, offset).min(bytes.max(1)))], smallvec::smallvec![*d]);
        offset += bytes;
    }
    Ok(true)
}

fn store_pieces(cx: &mut Cx, inst: &Inst, ptr: ValueId, pieces: &[ValueId], natural: u64) -> LResult<bool> {
    let Some(flags) = memory_flags(inst) else { return Ok(false) };
    let align = align_of(inst).unwrap_or(natural);
    let mut offset = 0u64;
    for v in pieces {
        let bytes = types::bits(cx.tables, cx.ty(*v)) as u64 / 8;
        let p = address(cx, ptr, offset)?;
        let ops = cx.ops;
        cx.emit(ops.STORE, flags.clone(), vec![Operand::Value(*v), Operand::Value(p), Operand::Align(offset_align(align, offset).min(bytes.max(1)))], Vec::new());
        offset += bytes;
    }
    Ok(true)
}

/// Split and Scalarize.
pub(super) fn split(cx: &mut Cx, inst: &Inst, value: ValueId, is_result: bool) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    if super::operations::is_atomic(ops, op) {
        // Each lane at its own address: operations::atomic_vector, in the original type.
        return Ok(false);
    }
    let values: Vec<ValueId> = inst.uses().collect();
    let natural = types::bits(cx.tables, cx.ty(value)) as u64 / 8;
    if is_result {
        let def = value;
        if op == ops.UNDEF {
            for p in cx.parts(def) {
                cx.emit(ops.UNDEF, Default::default(), Vec::new(), smallvec::smallvec![p]);
            }
        } else if op == ops.COPY {
            let src = cx.parts(values[0]);
            cx.alias_all(def, &src);
        } else if op == ops.PHI || op == ops.SELECT && types::bits(cx.tables, cx.ty(values[0])) == 1 && !types::is_vector(cx.tables, cx.ty(values[0])) {
            per_part(cx, inst, def);
        } else if op == ops.LOAD {
            let ptr = cx.original(values[0]);
            let parts = cx.parts(def);
            return load_pieces(cx, inst, ptr, &parts, natural);
        } else if is_elementwise(cx, inst) {
            per_part(cx, inst, def);
        } else {
            return lanewise(cx, inst);
        }
        return Ok(true);
    }
    if op == ops.STORE {
        if values[0] != value {
            return Ok(false);
        }
        let ptr = cx.original(values[1]);
        let parts = cx.parts(value);
        return store_pieces(cx, inst, ptr, &parts, natural);
    }
    lanewise(cx, inst)
}

/// Widen.
pub(super) fn widen(cx: &mut Cx, inst: &Inst, value: ValueId, is_result: bool) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    if super::operations::is_atomic(ops, op) {
        return Ok(false);
    }
    let values: Vec<ValueId> = inst.uses().collect();
    let narrow = cx.ty(value);
    let elem = types::element(cx.tables, narrow);
    let elem_bytes = (types::bits(cx.tables, elem) as u64 / 8).max(1);
    if is_result {
        let def = value;
        if op == ops.UNDEF {
            let p = cx.parts(def)[0];
            cx.emit(ops.UNDEF, Default::default(), Vec::new(), smallvec::smallvec![p]);
        } else if op == ops.COPY {
            let src = cx.parts(values[0]);
            cx.alias_all(def, &src);
        } else if op == ops.PHI || op == ops.SELECT && !types::is_vector(cx.tables, cx.ty(values[0])) {
            per_part(cx, inst, def);
        } else if op == ops.LOAD {
            // Only the real lanes may be read: element loads, then the wide vector.
            let ptr = cx.original(values[0]);
            let lanes: Vec<ValueId> = (0..types::lanes(cx.tables, narrow)).map(|i| cx.derived(def, &format!("l{i}"), elem)).collect();
            if !load_pieces(cx, inst, ptr, &lanes, elem_bytes * lanes.len() as u64)? {
                return Ok(false);
            }
            assemble(cx, def, lanes)?;
        } else if is_elementwise(cx, inst) && !is_trapping(cx, inst) {
            per_part(cx, inst, def);
        } else if is_elementwise(cx, inst) {
            // Division must not run on the undefined extra lanes.
            let mut operand_lanes = Vec::new();
            for v in &values {
                operand_lanes.push(elements(cx, *v)?);
            }
            let mut lanes = Vec::new();
            for i in 0..types::lanes(cx.tables, narrow) as usize {
                let args: Vec<ValueId> = operand_lanes.iter().map(|l| l[i]).collect();
                let d = cx.new_value("lane", elem);
                cx.emit(op, inst.flags.clone(), args.into_iter().map(Operand::Value).collect(), smallvec::smallvec![d]);
                lanes.push(d);
            }
            assemble(cx, def, lanes)?;
        } else {
            return lanewise(cx, inst);
        }
        return Ok(true);
    }
    if op == ops.STORE {
        if values[0] != value {
            return Ok(false);
        }
        let ptr = cx.original(values[1]);
        let lanes = elements(cx, value)?;
        return store_pieces(cx, inst, ptr, &lanes, elem_bytes * lanes.len() as u64);
    }
    lanewise(cx, inst)
}

/// A bitcast with a vector side that is being split, scalarized or widened: through
/// the integer of the total width, lane 0 in the low bits (little-endian, as memory).
pub(crate) fn bitcast(cx: &mut Cx, src: ValueId, def: ValueId) -> LResult<bool> {
    let ops = cx.ops;
    let src_ty = cx.ty(src);
    let def_ty = cx.ty(def);
    let total = types::bits(cx.tables, src_ty);
    if total != types::bits(cx.tables, def_ty) {
        return Err(cx.error("BITCAST between types of different widths"));
    }
    let wide = cx.int(total)?;
    let i32t = cx.int(32)?;
    // The source as one integer.
    let bits = if types::is_vector(cx.tables, src_ty) {
        let elem = types::element(cx.tables, src_ty);
        let elem_bits = types::bits(cx.tables, elem);
        let elem_int = cx.int(elem_bits)?;
        let mut acc: Option<ValueId> = None;
        for (i, lane) in elements(cx, src)?.into_iter().enumerate() {
            let lane = fit(cx, lane, elem);
            let as_int = if types::is_float(cx.tables, elem) { cx.op(ops.BITCAST, elem_int, &[lane]) } else { lane };
            let widened = if elem_bits == total { as_int } else { cx.op(ops.ZERO_EXTEND, wide, &[as_int]) };
            let placed = if i == 0 {
                widened
            } else {
                let shift = cx.constant(i32t, (i as i128) * elem_bits as i128);
                cx.op(ops.SHL, wide, &[widened, shift])
            };
            acc = Some(match acc {
                None => placed,
                Some(a) => cx.op(ops.OR, wide, &[a, placed]),
            });
        }
        acc.ok_or_else(|| cx.error("BITCAST of an empty vector"))?
    } else {
        let v = cx.original(src);
        if types::is_float(cx.tables, src_ty) {
            cx.op(ops.BITCAST, wide, &[v])
        } else {
            v
        }
    };
    if types::is_vector(cx.tables, def_ty) {
        let elem = types::element(cx.tables, def_ty);
        let elem_bits = types::bits(cx.tables, elem);
        let elem_int = cx.int(elem_bits)?;
        let mut lanes = Vec::new();
        for i in 0..types::lanes(cx.tables, def_ty) {
            let shifted = if i == 0 {
                bits
            } else {
                let shift = cx.constant(i32t, i as i128 * elem_bits as i128);
                cx.op(ops.SRL, wide, &[bits, shift])
            };
            let narrow = if elem_bits == total { shifted } else { cx.op(ops.TRUNCATE, elem_int, &[shifted]) };
            let lane = if types::is_float(cx.tables, elem) { cx.op(ops.BITCAST, elem, &[narrow]) } else { narrow };
            lanes.push(lane);
        }
        assemble(cx, def, lanes)?;
    } else {
        let value = if types::is_float(cx.tables, def_ty) { cx.op(ops.BITCAST, def_ty, &[bits]) } else { bits };
        define_scalar(cx, def, value)?;
    }
    Ok(true)
}
