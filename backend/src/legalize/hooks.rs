//! The Custom lowerings the description names (`custom(NAME)` in legality.rules): the
//! only place the legalizer does target-specific work in Rust. Each hook is called with
//! the instruction the action table marked Custom; it emits generic MIR (and the
//! description's target-specific generic nodes such as LOADV4) and returns true, or
//! declines (false) so the generic expansion runs instead.
//!
//! - `lower_vector_load_store`: a vector load/store whose type is split keeps one wide
//!   access (`ld.global.v4.f32`, `ld.global.v2.f64`) when it is aligned to its size and
//!   the description makes LOADV2/LOADV4 (STOREV2/STOREV4) legal on the part type.
//! - `lower_shift_parts`: SHL/SRA/SRL_PARTS (double-word shifts from expanded i128)
//!   become word shifts and selects on the amount.
//! - `lower_fround`: round-half-away-from-zero from FTRUNC, a compare and an add.
//! - `lower_v4i8_shuffle_prmt`: a shuffle of two v4i8 is one PRMT (`prmt.b32`) whose
//!   selector is the mask, a nibble per byte; undefined lanes (zero, as the
//!   interpreter defines them) take a byte of a zero register, through a second PRMT
//!   when the mask reads both sources.

use super::types::{self, TypeAction};
use super::{Cx, LResult};
use crate::mir::{Inst, Operand, ValueId};

/// Hooks called during type legalization (the instruction has an illegal type).
pub(super) fn run_type_hook(cx: &mut Cx, hook: &str, inst: &Inst) -> LResult<bool> {
    match hook {
        "lower_vector_load_store" => vector_load_store(cx, inst),
        _ => Ok(false),
    }
}

/// Hooks called during operation legalization (all types legal).
pub(super) fn run_operation_hook(cx: &mut Cx, hook: &str, inst: &Inst) -> LResult<bool> {
    match hook {
        "lower_shift_parts" => shift_parts(cx, inst),
        "lower_fround" => fround(cx, inst),
        "lower_v4i8_shuffle_prmt" => v4i8_shuffle_prmt(cx, inst),
        "lower_vector_load_store" => Ok(false),
        other => Err(cx.error(format!("the description names Custom hook `{other}`, which the legalizer does not have (hooks: lower_vector_load_store, lower_shift_parts, lower_fround, lower_v4i8_shuffle_prmt)"))),
    }
}

/// The register type a vector ends up in after repeated splitting, if it gets there
/// without promotion, softening or widening.
fn leaf_type(cx: &Cx, mut ty: target_desc::tables::VtId) -> Option<target_desc::tables::VtId> {
    for _ in 0..8 {
        match types::type_action(cx.tables, cx.sm, ty).ok()? {
            TypeAction::Legal => return Some(ty),
            TypeAction::Split(h) => ty = h,
            TypeAction::Scalarize(e) => ty = e,
            _ => return None,
        }
    }
    None
}

/// `v` cut into values of type `leaf`.
fn pieces(cx: &mut Cx, v: ValueId, leaf: target_desc::tables::VtId) -> LResult<Vec<ValueId>> {
    let ty = cx.ty(v);
    if ty == leaf {
        return Ok(vec![v]);
    }
    if matches!(cx.action(v), TypeAction::Split(_) | TypeAction::Scalarize(_)) {
        let mut out = Vec::new();
        for p in cx.parts(v) {
            out.extend(pieces(cx, p, leaf)?);
        }
        return Ok(out);
    }
    let ops = cx.ops;
    let i32t = cx.int(32)?;
    let leaf_lanes = types::lanes(cx.tables, leaf) as i128;
    let n = types::lanes(cx.tables, ty) as i128 / leaf_lanes;
    let mut out = Vec::new();
    for i in 0..n {
        let idx = cx.constant(i32t, i * leaf_lanes);
        let op = if types::is_vector(cx.tables, leaf) { ops.EXTRACT_SUBVECTOR } else { ops.EXTRACT_VECTOR_ELT };
        out.push(cx.op(op, leaf, &[v, idx]));
    }
    Ok(out)
}

fn vector_load_store(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    let is_load = op == ops.LOAD;
    let values: Vec<ValueId> = inst.uses().collect();
    let value = if is_load { inst.defs[0] } else { values[0] };
    if inst.flags.iter().any(|f| matches!(*f, "sext" | "zext" | "anyext" | "trunc")) || !cx.is_replaced(value) {
        return Ok(false);
    }
    let vty = cx.ty(value);
    let Some(leaf) = leaf_type(cx, vty) else { return Ok(false) };
    let total = types::bits(cx.tables, vty) as u64;
    let n = total / types::bits(cx.tables, leaf).max(1) as u64;
    let bytes = total / 8;
    let align = super::expand_integer::align_of(inst).unwrap_or(bytes);
    if !(n == 2 || n == 4) || bytes > 16 || align < bytes {
        return Ok(false);
    }
    let vop = match (is_load, n) {
        (true, 2) => ops.LOADV2,
        (true, _) => ops.LOADV4,
        (false, 2) => ops.STOREV2,
        (false, _) => ops.STOREV4,
    };
    if !cx.sm.is_legal(vop, leaf) {
        return Ok(false);
    }
    cx.remark(|cx| format!("{} {} on {}: one {}-byte access as {} x {} (Custom lower_vector_load_store)", cx.opcode_name(op), cx.type_name(vty), cx.sm.name, bytes, n, cx.type_name(leaf)));
    let ptr = cx.original(if is_load { values[0] } else { values[1] });
    if is_load {
        let leaves: Vec<ValueId> = (0..n).map(|i| cx.derived(value, &format!("v{i}"), leaf)).collect();
        cx.emit(vop, inst.flags.clone(), vec![Operand::Value(ptr), Operand::Align(align)], leaves.clone());
        // Build the parts of the result from the loaded pieces.
        let mut rest = leaves.as_slice();
        for p in cx.parts(value) {
            let k = (types::bits(cx.tables, cx.ty(p)) / types::bits(cx.tables, leaf)) as usize;
            let (chunk, tail) = rest.split_at(k.min(rest.len()));
            rest = tail;
            if k == 1 {
                cx.alias(p, chunk[0]);
            } else {
                let join = if types::is_vector(cx.tables, leaf) { ops.CONCAT_VECTORS } else { ops.BUILD_VECTOR };
                cx.op_into(join, p, chunk);
            }
        }
    } else {
        let mut operands: Vec<Operand> = pieces(cx, value, leaf)?.into_iter().map(Operand::Value).collect();
        operands.push(Operand::Value(ptr));
        operands.push(Operand::Align(align));
        cx.emit(vop, inst.flags.clone(), operands, Vec::new());
    }
    Ok(true)
}

/// (lo, hi) shifted as one double-width value by an amount below twice the width.
fn shift_parts(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    let values: Vec<ValueId> = inst.uses().collect();
    let (lo, hi, amount) = (values[0], values[1], values[2]);
    let ty = cx.ty(lo);
    let w = types::bits(cx.tables, ty) as i128;
    let i32t = cx.int(32)?;
    let amount = match types::bits(cx.tables, cx.ty(amount)).cmp(&32) {
        std::cmp::Ordering::Equal => amount,
        std::cmp::Ordering::Greater => cx.op(ops.TRUNCATE, i32t, &[amount]),
        std::cmp::Ordering::Less => cx.op(ops.ZERO_EXTEND, i32t, &[amount]),
    };
    let mask = cx.constant(i32t, w - 1);
    let a = cx.op(ops.AND, i32t, &[amount, mask]);
    // w - 1 - a, so that (x >> 1) >> (w - 1 - a) moves bits across without a shift by w.
    let rest = cx.op(ops.XOR, i32t, &[a, mask]);
    let one = cx.constant(i32t, 1);
    let width = cx.constant(i32t, w);
    let big = cx.setcc("uge", amount, width);
    let zero = cx.constant(ty, 0);
    let (new_lo, new_hi) = if op == ops.SHL_PARTS {
        let lo_shifted = cx.op(ops.SHL, ty, &[lo, a]);
        let lo_half = cx.op(ops.SRL, ty, &[lo, one]);
        let carried = cx.op(ops.SRL, ty, &[lo_half, rest]);
        let hi_shifted = cx.op(ops.SHL, ty, &[hi, a]);
        let hi_small = cx.op(ops.OR, ty, &[hi_shifted, carried]);
        let new_hi = cx.select(big, lo_shifted, hi_small);
        let new_lo = cx.select(big, zero, lo_shifted);
        (new_lo, new_hi)
    } else {
        let arith = op == ops.SRA_PARTS;
        let right = if arith { ops.SRA } else { ops.SRL };
        let lo_shifted = cx.op(ops.SRL, ty, &[lo, a]);
        let hi_double = cx.op(ops.SHL, ty, &[hi, one]);
        let carried = cx.op(ops.SHL, ty, &[hi_double, rest]);
        let lo_small = cx.op(ops.OR, ty, &[lo_shifted, carried]);
        let hi_shifted = cx.op(right, ty, &[hi, a]);
        let fill = if arith {
            let top = cx.constant(i32t, w - 1);
            cx.op(ops.SRA, ty, &[hi, top])
        } else {
            zero
        };
        let new_lo = cx.select(big, hi_shifted, lo_small);
        let new_hi = cx.select(big, fill, hi_shifted);
        (new_lo, new_hi)
    };
    cx.alias(inst.defs[0], new_lo);
    cx.alias(inst.defs[1], new_hi);
    Ok(true)
}

/// FROUND: trunc(x), plus copysign(1, x) when |x - trunc(x)| >= 0.5 (exact for every
/// float: x - trunc(x) is exact and the add only happens below 2^mantissa).
fn fround(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let ops = cx.ops;
    let x = inst.uses().next().ok_or_else(|| cx.error("FROUND without an operand"))?;
    let ty = cx.ty(x);
    if types::is_vector(cx.tables, ty) {
        return Ok(false);
    }
    let t = cx.op(ops.FTRUNC, ty, &[x]);
    let diff = cx.op(ops.FSUB, ty, &[x, t]);
    let dist = cx.op(ops.FABS, ty, &[diff]);
    let half = cx.fconstant(ty, 0.5);
    let round_up = cx.setcc("oge", dist, half);
    let zero = cx.fconstant(ty, 0.0);
    let negative = cx.setcc("olt", x, zero);
    let one = cx.fconstant(ty, 1.0);
    let minus_one = cx.fconstant(ty, -1.0);
    let step = cx.select(negative, minus_one, one);
    let away = cx.op(ops.FADD, ty, &[t, step]);
    let r = cx.select(round_up, away, t);
    cx.alias(inst.defs[0], r);
    Ok(true)
}

/// VECTOR_SHUFFLE of two v4i8 as PRMT: result byte i takes byte mask[i] of a:b, which
/// is exactly prmt's selector nibble i (bytes 0-3 of a, 4-7 of b).
///
/// An undefined lane (`-1`) is zero, as the MIR interpreter reads it, so the result
/// is the same value before and after: when the mask leaves one input unused, that
/// input becomes a zero register and the undefined lanes take its byte; otherwise a
/// second PRMT against zero clears them (2 instructions, where the lane-by-lane
/// expansion took about 12).
fn v4i8_shuffle_prmt(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let Some(Operand::Mask(mask)) = inst.operands.iter().find(|o| matches!(o, Operand::Mask(_))) else { return Ok(false) };
    let mut values: Vec<ValueId> = inst.uses().collect();
    if mask.len() != 4 || values.len() != 2 || mask.iter().any(|&m| !(-1..8).contains(&m)) {
        return Ok(false);
    }
    let Some(prmt) = cx.tables.opcode("PRMT") else { return Ok(false) };
    let nibbles = |lanes: &[i32], undefined: i32| lanes.iter().enumerate().fold(0i128, |s, (i, &m)| s | (i128::from(if m < 0 { undefined } else { m }) << (4 * i)));
    if !mask.contains(&-1) {
        cx.emit(prmt, Default::default(), vec![Operand::Value(values[0]), Operand::Value(values[1]), Operand::int(nibbles(mask, 0))], inst.defs.clone());
        return Ok(true);
    }
    let ty = cx.ty(inst.defs[0]);
    let zero = {
        let (i32_ty, bitcast) = (cx.tables.vt("i32"), cx.ops.BITCAST);
        let Some(i32_ty) = i32_ty else { return Ok(false) };
        let c = cx.constant(i32_ty, 0);
        cx.op(bitcast, ty, &[c])
    };
    let uses_a = mask.iter().any(|&m| (0..4).contains(&m));
    let uses_b = mask.iter().any(|&m| (4..8).contains(&m));
    let (operands, selector) = if !uses_b {
        values[1] = zero;
        (values, nibbles(mask, 4))
    } else if !uses_a {
        values[0] = zero;
        (values, nibbles(mask, 0))
    } else {
        let both = cx.new_value("t", ty);
        cx.emit(prmt, Default::default(), vec![Operand::Value(values[0]), Operand::Value(values[1]), Operand::int(nibbles(mask, 0))], smallvec::smallvec![both]);
        let keep: Vec<i32> = mask.iter().enumerate().map(|(i, &m)| if m < 0 { 4 } else { i as i32 }).collect();
        (vec![both, zero], nibbles(&keep, 4))
    };
    cx.emit(prmt, Default::default(), vec![Operand::Value(operands[0]), Operand::Value(operands[1]), Operand::int(selector)], inst.defs.clone());
    Ok(true)
}
