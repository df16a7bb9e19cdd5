//! Float softening: a float type with no register (bf16 before sm_80) is carried as
//! the bits of the integer of its width (reference: "Soften (Float-to-Integer
//! Emulation)"). Moves, loads, stores, negation and absolute value are integer
//! operations on the bits; conversions are integer code (bf16 is the top half of an
//! f32, so widening is a shift and narrowing is round-to-nearest-even on the bits);
//! arithmetic and compares run in the wider float the description's Promote entry
//! names (`promote(f32) FADD : bf16`), rounded back once.
//!
//! Double rounding is avoided where it would change results: f64 -> bf16 and wide
//! integer -> bf16 first round to f32 *to odd*, which composes exactly with the final
//! nearest-even rounding (the intermediate format has more than p + 2 bits).

use target_desc::tables::VtId;

use super::types::{self, TypeAction};
use super::{Cx, LResult};
use crate::mir::{Inst, Operand, ValueId};

/// f32 holding the bf16 whose bits are `bits` (i16): exact.
pub(crate) fn bf16_bits_to_f32(cx: &mut Cx, bits: ValueId) -> LResult<ValueId> {
    let ops = cx.ops;
    let i32t = cx.int(32)?;
    let f32t = cx.named_type("f32")?;
    let wide = cx.op(ops.ZERO_EXTEND, i32t, &[bits]);
    let sixteen = cx.constant(i32t, 16);
    let shifted = cx.op(ops.SHL, i32t, &[wide, sixteen]);
    Ok(cx.op(ops.BITCAST, f32t, &[shifted]))
}

/// The bf16 bits (i16) of an f32 rounded to nearest even; NaNs stay NaN (quiet).
pub(crate) fn f32_to_bf16_bits(cx: &mut Cx, x: ValueId) -> LResult<ValueId> {
    let ops = cx.ops;
    let i32t = cx.int(32)?;
    let i16t = cx.int(16)?;
    let bits = cx.op(ops.BITCAST, i32t, &[x]);
    let sixteen = cx.constant(i32t, 16);
    let upper = cx.op(ops.SRL, i32t, &[bits, sixteen]);
    let one = cx.constant(i32t, 1);
    let lsb = cx.op(ops.AND, i32t, &[upper, one]);
    let half = cx.constant(i32t, 0x7fff);
    let bias = cx.op(ops.ADD, i32t, &[half, lsb]);
    let rounded = cx.op(ops.ADD, i32t, &[bits, bias]);
    let top = cx.op(ops.SRL, i32t, &[rounded, sixteen]);
    let result = cx.op(ops.TRUNCATE, i16t, &[top]);
    let upper16 = cx.op(ops.TRUNCATE, i16t, &[upper]);
    let quiet = cx.constant(i16t, 0x40);
    let nan_bits = cx.op(ops.OR, i16t, &[upper16, quiet]);
    let is_nan = cx.setcc("uno", x, x);
    Ok(cx.select(is_nan, nan_bits, result))
}

/// The bits of a float rounded *to odd* from the bits of its nearest (or truncated)
/// rounding: one ulp toward zero when that rounding went `away` from zero, then the
/// lowest bit set, when the rounding was `inexact`.
fn to_odd(cx: &mut Cx, bits: ValueId, away: Option<ValueId>, inexact: ValueId) -> ValueId {
    let ops = cx.ops;
    let ty = cx.ty(bits);
    let one = cx.constant(ty, 1);
    let truncated = match away {
        Some(away) => {
            let toward_zero = cx.op(ops.SUB, ty, &[bits, one]);
            cx.select(away, toward_zero, bits)
        }
        None => bits,
    };
    let odd = cx.op(ops.OR, ty, &[truncated, one]);
    cx.select(inexact, odd, bits)
}

/// An f64 rounded to f32 *to odd*: truncated toward zero, lowest bit set when
/// inexact. Rounding that to a narrower format gives the correctly rounded result.
pub(crate) fn f64_to_f32_odd(cx: &mut Cx, x: ValueId) -> LResult<ValueId> {
    let ops = cx.ops;
    let i32t = cx.int(32)?;
    let f32t = cx.named_type("f32")?;
    let f64t = cx.named_type("f64")?;
    let nearest = cx.op(ops.FP_ROUND, f32t, &[x]);
    let back = cx.op(ops.FP_EXTEND, f64t, &[nearest]);
    let inexact = cx.setcc("one", back, x);
    let back_abs = cx.op(ops.FABS, f64t, &[back]);
    let x_abs = cx.op(ops.FABS, f64t, &[x]);
    let away = cx.setcc("ogt", back_abs, x_abs);
    let bits = cx.op(ops.BITCAST, i32t, &[nearest]);
    let chosen = to_odd(cx, bits, Some(away), inexact);
    Ok(cx.op(ops.BITCAST, f32t, &[chosen]))
}

/// `a * b + c` for f64 operands holding narrow floats (so the product is exact), rounded
/// to odd: the f64 sum's rounding error (TwoSum, exact) says whether it is inexact and
/// in which direction it rounded. Rounding the result once more to f16 or bf16 then
/// gives the correctly rounded fused multiply-add, which a plain f64 FMA does not when
/// the addend is far smaller than the product.
pub(crate) fn narrow_fma_to_odd(cx: &mut Cx, a: ValueId, b: ValueId, c: ValueId) -> LResult<ValueId> {
    let ops = cx.ops;
    let f64t = cx.named_type("f64")?;
    let i64t = cx.int(64)?;
    let p = cx.op(ops.FMUL, f64t, &[a, b]);
    let s = cx.op(ops.FADD, f64t, &[p, c]);
    let virtual_c = cx.op(ops.FSUB, f64t, &[s, p]);
    let virtual_p = cx.op(ops.FSUB, f64t, &[s, virtual_c]);
    let p_error = cx.op(ops.FSUB, f64t, &[p, virtual_p]);
    let c_error = cx.op(ops.FSUB, f64t, &[c, virtual_c]);
    let error = cx.op(ops.FADD, f64t, &[p_error, c_error]);
    let zero = cx.fconstant(f64t, 0.0);
    let inexact = cx.setcc("one", error, zero);
    let s_bits = cx.op(ops.BITCAST, i64t, &[s]);
    let e_bits = cx.op(ops.BITCAST, i64t, &[error]);
    let signs = cx.op(ops.XOR, i64t, &[s_bits, e_bits]);
    let zero_i = cx.constant(i64t, 0);
    // The error has the other sign: the sum was rounded away from zero.
    let away = cx.setcc("lt", signs, zero_i);
    let chosen = to_odd(cx, s_bits, Some(away), inexact);
    Ok(cx.op(ops.BITCAST, f64t, &[chosen]))
}

/// An integer converted to f32 rounded to odd (for a final rounding to bf16).
pub(crate) fn int_to_f32_odd(cx: &mut Cx, v: ValueId, signed: bool) -> LResult<ValueId> {
    let ops = cx.ops;
    let f64t = cx.named_type("f64")?;
    let bits = types::bits(cx.tables, cx.ty(v));
    let convert = if signed { ops.SINT_TO_FP } else { ops.UINT_TO_FP };
    let as_f64 = if bits <= 32 {
        // Exact in f64.
        cx.op(convert, f64t, &[v])
    } else {
        let i64t = cx.int(64)?;
        let v64 = if bits == 64 { v } else { cx.op(ops.TRUNCATE, i64t, &[v]) };
        let toward_zero = cx.new_value("rz", f64t);
        cx.emit(convert, thin_vec::thin_vec!["rz"], vec![Operand::Value(v64)], smallvec::smallvec![toward_zero]);
        let back_op = if signed { ops.FP_TO_SINT } else { ops.FP_TO_UINT };
        let back = cx.op(back_op, i64t, &[toward_zero]);
        let inexact = cx.setcc("ne", back, v64);
        let raw = cx.op(ops.BITCAST, i64t, &[toward_zero]);
        let chosen = to_odd(cx, raw, None, inexact);
        cx.op(ops.BITCAST, f64t, &[chosen])
    };
    f64_to_f32_odd(cx, as_f64)
}

/// The bf16 bits of a float of another type, correctly rounded.
pub(crate) fn float_to_bf16_bits(cx: &mut Cx, x: ValueId) -> LResult<ValueId> {
    let ops = cx.ops;
    let f32t = cx.named_type("f32")?;
    let ty = cx.ty(x);
    let as_f32 = match types::bits(cx.tables, ty) {
        32 => x,
        64 => f64_to_f32_odd(cx, x)?,
        // f16 (and other narrow floats) widen to f32 exactly.
        _ => cx.op(ops.FP_EXTEND, f32t, &[x]),
    };
    f32_to_bf16_bits(cx, as_f32)
}

/// bf16 bits of an f64 literal, correctly rounded (for FCONSTANT).
pub(crate) fn bf16_bits_of(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7fc0 | if x.is_sign_negative() { 0x8000 } else { 0 };
    }
    let nearest = x as f32;
    let mut bits = nearest.to_bits();
    if f64::from(nearest) != x {
        if f64::from(nearest).abs() > x.abs() {
            bits -= 1;
        }
        bits |= 1;
    }
    let lsb = (bits >> 16) & 1;
    (bits.wrapping_add(0x7fff + lsb) >> 16) as u16
}

fn is_float_arith(cx: &Cx, op: target_desc::tables::OpcodeId) -> bool {
    let o = cx.ops;
    [
        o.FADD, o.FSUB, o.FMUL, o.FDIV, o.FREM, o.FMA, o.FMINNUM, o.FMAXNUM, o.FMINIMUM, o.FMAXIMUM, o.FCEIL, o.FFLOOR, o.FTRUNC, o.FRINT, o.FNEARBYINT,
        o.FROUND, o.FSQRT, o.FSIN, o.FCOS, o.FEXP2, o.FLOG2, o.FEXP, o.FLOG, o.FPOW,
    ]
    .contains(&op)
}

/// The float type arithmetic on `ty` is done in: the description's promotion target
/// for `(op, ty)`, else f32.
pub(crate) fn promoted_float(cx: &Cx, op: target_desc::tables::OpcodeId, ty: VtId) -> LResult<VtId> {
    match cx.tables.promotion_target(cx.sm, op, ty) {
        Some(t) if types::is_float(cx.tables, t) => Ok(t),
        _ => cx.named_type("f32"),
    }
}

pub(super) fn legalize(cx: &mut Cx, inst: &Inst, value: ValueId, is_result: bool) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    let soft_ty = cx.ty(value);
    let TypeAction::Soften(int_ty) = cx.action(value) else { return Ok(false) };
    if !types::is_f32_top_half(cx.tables, soft_ty) {
        return Err(cx.error(format!("softening {} is not supported (only a float that is the top half of an f32, like bf16)", cx.type_name(soft_ty))));
    }
    let values: Vec<ValueId> = inst.uses().collect();
    // The bits of an operand: its part if softened, else itself.
    let soft = |cx: &mut Cx, v: ValueId| if cx.is_replaced(v) && cx.action(v) == TypeAction::Soften(int_ty) { cx.parts(v)[0] } else { cx.original(v) };
    // An operand as the float the arithmetic runs in.
    let widened = |cx: &mut Cx, v: ValueId, target: VtId| -> LResult<ValueId> {
        let b = soft(cx, v);
        let f = bf16_bits_to_f32(cx, b)?;
        if types::bits(cx.tables, target) > 32 {
            let ops = cx.ops;
            Ok(cx.op(ops.FP_EXTEND, target, &[f]))
        } else {
            Ok(f)
        }
    };

    if is_result {
        let part = cx.parts(value)[0];
        if op == ops.FCONSTANT {
            let literal = match inst.operands.first() {
                Some(Operand::Int(raw)) => raw.get() as u16 as i128,
                Some(Operand::Float(x)) => bf16_bits_of(*x) as i128,
                _ => return Ok(false),
            };
            let signed = if literal >= 0x8000 { literal - 0x10000 } else { literal };
            cx.emit(ops.CONSTANT, Default::default(), vec![Operand::int(signed)], smallvec::smallvec![part]);
        } else if op == ops.UNDEF {
            cx.emit(ops.UNDEF, Default::default(), Vec::new(), smallvec::smallvec![part]);
        } else if op == ops.ARG {
            // The parameter's bits, in the integer of its width.
            cx.emit(ops.ARG, Default::default(), inst.operands.clone(), smallvec::smallvec![part]);
        } else if op == ops.COPY {
            let s = soft(cx, values[0]);
            cx.alias(part, s);
        } else if op == ops.PHI {
            let operands = inst.operands.iter().map(|o| match o {
                Operand::Value(v) => Operand::Value(cx.parts(*v)[0]),
                other => other.clone(),
            }).collect();
            cx.emit(ops.PHI, Default::default(), operands, smallvec::smallvec![part]);
        } else if op == ops.SELECT {
            let c = cx.original(values[0]);
            let t = soft(cx, values[1]);
            let f = soft(cx, values[2]);
            cx.op_into(ops.SELECT, part, &[c, t, f]);
        } else if op == ops.LOAD {
            let operands = inst.operands.iter().map(|o| match o {
                Operand::Value(v) => Operand::Value(cx.original(*v)),
                other => other.clone(),
            }).collect();
            cx.emit(ops.LOAD, inst.flags.clone(), operands, smallvec::smallvec![part]);
        } else if op == ops.BITCAST {
            let src = cx.original(values[0]);
            if cx.ty(src) == int_ty {
                cx.alias(part, src);
            } else {
                cx.op_into(ops.BITCAST, part, &[src]);
            }
        } else if op == ops.FNEG || op == ops.FABS {
            let s = soft(cx, values[0]);
            let (logic, mask) = if op == ops.FNEG { (ops.XOR, -0x8000) } else { (ops.AND, 0x7fff) };
            let m = cx.constant(int_ty, mask);
            cx.op_into(logic, part, &[s, m]);
        } else if op == ops.FP_ROUND {
            let src = cx.original(values[0]);
            let r = float_to_bf16_bits(cx, src)?;
            cx.alias(part, r);
        } else if (op == ops.SINT_TO_FP || op == ops.UINT_TO_FP) && types::bits(cx.tables, cx.ty(values[0])) <= 64 {
            let src = cx.original(values[0]);
            let odd = int_to_f32_odd(cx, src, op == ops.SINT_TO_FP)?;
            let r = f32_to_bf16_bits(cx, odd)?;
            cx.alias(part, r);
        } else if is_float_arith(cx, op) {
            let target = promoted_float(cx, op, soft_ty)?;
            let mut args = Vec::new();
            for v in &values {
                args.push(widened(cx, *v, target)?);
            }
            let r = if op == ops.FMA && types::bits(cx.tables, target) == 64 {
                narrow_fma_to_odd(cx, args[0], args[1], args[2])?
            } else {
                let r = cx.new_value("wide", target);
                cx.emit(op, inst.flags.clone(), args.into_iter().map(Operand::Value).collect(), smallvec::smallvec![r]);
                r
            };
            let bits = float_to_bf16_bits(cx, r)?;
            cx.alias(part, bits);
        } else {
            return Ok(false);
        }
        return Ok(true);
    }

    // `value` is an operand.
    if op == ops.STORE {
        let operands = inst.operands.iter().map(|o| match o {
            Operand::Value(v) => Operand::Value(soft(cx, *v)),
            other => other.clone(),
        }).collect();
        cx.emit(ops.STORE, inst.flags.clone(), operands, Vec::new());
        return Ok(true);
    }
    if op == ops.SETCC {
        let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() else { return Ok(false) };
        let f32t = cx.named_type("f32")?;
        let a = widened(cx, values[0], f32t)?;
        let b = widened(cx, values[1], f32t)?;
        cx.emit(ops.SETCC, Default::default(), vec![Operand::CondCode(cc), Operand::Value(a), Operand::Value(b)], inst.defs.clone());
        return Ok(true);
    }
    let Some(def) = inst.defs.first().copied() else { return Ok(false) };
    let def_ty = cx.ty(def);
    if op == ops.FP_EXTEND || op == ops.FP_ROUND {
        // bf16 -> f32 is exact; other targets convert from there (f16 rounds once).
        let f32t = cx.named_type("f32")?;
        let f = widened(cx, value, f32t)?;
        if def_ty == f32t {
            cx.alias(def, f);
        } else {
            cx.emit(op, inst.flags.clone(), vec![Operand::Value(f)], smallvec::smallvec![def]);
        }
        return Ok(true);
    }
    if op == ops.FP_TO_SINT || op == ops.FP_TO_UINT {
        let f32t = cx.named_type("f32")?;
        let f = widened(cx, value, f32t)?;
        cx.emit(op, inst.flags.clone(), vec![Operand::Value(f)], smallvec::smallvec![def]);
        return Ok(true);
    }
    if op == ops.BITCAST {
        let s = soft(cx, value);
        if def_ty == int_ty {
            cx.alias(def, s);
        } else {
            cx.op_into(ops.BITCAST, def, &[s]);
        }
        return Ok(true);
    }
    Ok(false)
}
