//! Integer promotion: an integer narrower than every register integer (i8) is carried
//! in the next wider one (i16), and operations run there (reference: "Promote (Type
//! Widening)"). The bits above the narrow width are unspecified; an operation that
//! reads them gets its operands sign- or zero-extended in register first (signed
//! divide, unsigned compare, right shifts...), as the reference's ANY/ZERO/SIGN_EXTEND
//! choice describes. The same rewrites serve operation-level promotion (an i16 CTLZ done
//! in i32) in [`super::operations`], where the narrow value is extended explicitly.

use target_desc::tables::{OpcodeId, VtId};

use super::types::{self, TypeAction};
use super::{Cx, LResult};
use crate::mir::{Inst, Operand, ValueId};

/// Which high bits an operation needs of a promoted operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ext {
    Any,
    Sign,
    Zero,
}

/// Where the wide operands come from: the parts of this type round, or explicit
/// extensions of legal narrow values (operation-level promotion).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Widening {
    Parts,
    Extend,
}

/// `v` (of type `narrow`) as a `wide` value whose high bits follow `ext`.
pub(crate) fn widen(cx: &mut Cx, v: ValueId, narrow: VtId, wide: VtId, ext: Ext, how: Widening) -> LResult<ValueId> {
    let ops = cx.ops;
    match how {
        Widening::Extend => {
            let op = match ext {
                Ext::Any => ops.ANY_EXTEND,
                Ext::Sign => ops.SIGN_EXTEND,
                Ext::Zero => ops.ZERO_EXTEND,
            };
            Ok(cx.op(op, wide, &[v]))
        }
        Widening::Parts => {
            let p = if cx.is_replaced(v) { cx.parts(v)[0] } else { v };
            if cx.ty(p) != wide {
                return Err(cx.error(format!("legalizer bug: promoted %{} has type {}, expected {}", cx.values[v.0 as usize].name, cx.type_name(cx.ty(p)), cx.type_name(wide))));
            }
            in_register(cx, p, narrow, ext)
        }
    }
}

/// Makes the bits of `p` above `narrow`'s width follow `ext`.
pub(crate) fn in_register(cx: &mut Cx, p: ValueId, narrow: VtId, ext: Ext) -> LResult<ValueId> {
    let ops = cx.ops;
    let wide = cx.ty(p);
    let bits = types::bits(cx.tables, narrow);
    match ext {
        Ext::Any => Ok(p),
        Ext::Sign => {
            let d = cx.new_value("sx", wide);
            let flag = cx.type_name(narrow);
            cx.emit(ops.SIGN_EXTEND_INREG, thin_vec::thin_vec![flag], vec![Operand::Value(p)], smallvec::smallvec![d]);
            Ok(d)
        }
        Ext::Zero => {
            let mask = cx.constant(wide, (1i128 << bits) - 1);
            Ok(cx.op(ops.AND, wide, &[p, mask]))
        }
    }
}

/// The extension a signed or unsigned condition code needs.
pub(crate) fn cc_ext(cx: &Cx, cc: target_desc::tables::CondCodeId) -> Ext {
    let name = cx.tables.cond_code_info(cc).map(|c| c.name).unwrap_or("eq");
    if matches!(name, "lt" | "le" | "gt" | "ge") {
        Ext::Sign
    } else {
        Ext::Zero
    }
}

/// An i32 shift amount of `n`.
fn amount(cx: &mut Cx, n: i128) -> LResult<ValueId> {
    let i32t = cx.int(32)?;
    Ok(cx.constant(i32t, n))
}

/// A single-result integer operation on `narrow` values computed in `wide`. Returns
/// the wide result (high bits unspecified), or None when the opcode has no promoted
/// form (the caller expands it instead).
pub(crate) fn promoted_op(cx: &mut Cx, inst: &Inst, narrow: VtId, wide: VtId, how: Widening) -> LResult<Option<ValueId>> {
    let Some(op) = inst.opcode.generic() else { return Ok(None) };
    let ops = cx.ops;
    let narrow_bits = types::bits(cx.tables, narrow) as i128;
    let wide_bits = types::bits(cx.tables, wide) as i128;
    let values: Vec<ValueId> = inst.uses().collect();
    let same = |list: &[OpcodeId]| list.contains(&op);
    let arg = |cx: &mut Cx, i: usize, ext: Ext| -> LResult<ValueId> {
        let v = values[i];
        if cx.ty(v) == narrow || (how == Widening::Parts && cx.is_replaced(v)) {
            widen(cx, v, narrow, wide, ext, how)
        } else {
            Ok(cx.original(v))
        }
    };
    let result = if same(&[ops.ADD, ops.SUB, ops.MUL, ops.AND, ops.OR, ops.XOR]) {
        let a = arg(cx, 0, Ext::Any)?;
        let b = arg(cx, 1, Ext::Any)?;
        cx.op(op, wide, &[a, b])
    } else if same(&[ops.SDIV, ops.SREM, ops.SMIN, ops.SMAX]) {
        let a = arg(cx, 0, Ext::Sign)?;
        let b = arg(cx, 1, Ext::Sign)?;
        cx.op(op, wide, &[a, b])
    } else if same(&[ops.UDIV, ops.UREM, ops.UMIN, ops.UMAX]) {
        let a = arg(cx, 0, Ext::Zero)?;
        let b = arg(cx, 1, Ext::Zero)?;
        cx.op(op, wide, &[a, b])
    } else if same(&[ops.SHL, ops.SRA, ops.SRL]) {
        let ext = if op == ops.SHL { Ext::Any } else if op == ops.SRA { Ext::Sign } else { Ext::Zero };
        let a = arg(cx, 0, ext)?;
        let b = arg(cx, 1, Ext::Zero)?;
        cx.op(op, wide, &[a, b])
    } else if op == ops.ABS {
        let a = arg(cx, 0, Ext::Sign)?;
        cx.op(op, wide, &[a])
    } else if same(&[ops.MULHS, ops.MULHU]) {
        let (ext, shift) = if op == ops.MULHS { (Ext::Sign, ops.SRA) } else { (Ext::Zero, ops.SRL) };
        let a = arg(cx, 0, ext)?;
        let b = arg(cx, 1, ext)?;
        let product = cx.op(ops.MUL, wide, &[a, b]);
        let n = amount(cx, narrow_bits)?;
        cx.op(shift, wide, &[product, n])
    } else if op == ops.CTLZ {
        let a = arg(cx, 0, Ext::Zero)?;
        let count = cx.op(ops.CTLZ, wide, &[a]);
        let extra = cx.constant(wide, wide_bits - narrow_bits);
        cx.op(ops.SUB, wide, &[count, extra])
    } else if op == ops.CTPOP {
        let a = arg(cx, 0, Ext::Zero)?;
        cx.op(ops.CTPOP, wide, &[a])
    } else if op == ops.CTTZ {
        // A set bit just above the narrow width caps the count at the narrow width.
        let a = arg(cx, 0, Ext::Any)?;
        let stop = cx.constant(wide, 1i128 << narrow_bits);
        let capped = cx.op(ops.OR, wide, &[a, stop]);
        cx.op(ops.CTTZ, wide, &[capped])
    } else if same(&[ops.BITREVERSE, ops.BSWAP]) {
        let a = arg(cx, 0, Ext::Zero)?;
        let r = cx.op(op, wide, &[a]);
        let n = amount(cx, wide_bits - narrow_bits)?;
        cx.op(ops.SRL, wide, &[r, n])
    } else {
        return Ok(None);
    };
    Ok(Some(result))
}

/// Type-level promotion of one instruction; `value` is the promoted value that made it
/// illegal (a result when `is_result`).
pub(super) fn legalize(cx: &mut Cx, inst: &Inst, value: ValueId, is_result: bool) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    let narrow = cx.ty(value);
    let TypeAction::Promote(wide) = cx.action(value) else { return Ok(false) };
    let narrow_name = cx.type_name(narrow);
    let p = |cx: &Cx, v: ValueId| cx.parts(v)[0];

    if is_result {
        let part = p(cx, value);
        if op == ops.CONSTANT {
            cx.emit(ops.CONSTANT, inst.flags.clone(), inst.operands.clone(), smallvec::smallvec![part]);
        } else if op == ops.ARG && inst.flags.is_empty() {
            // A narrow parameter is read zero-extended into its carrier.
            cx.emit(ops.ARG, thin_vec::thin_vec!["zext", narrow_name], inst.operands.clone(), smallvec::smallvec![part]);
        } else if op == ops.UNDEF {
            cx.emit(ops.UNDEF, Default::default(), Vec::new(), smallvec::smallvec![part]);
        } else if op == ops.COPY {
            let src = inst.uses().next().unwrap_or(value);
            let src_part = p(cx, src);
            cx.alias(part, src_part);
        } else if op == ops.PHI {
            let operands = inst.operands.iter().map(|o| match o {
                Operand::Value(v) => Operand::Value(p(cx, *v)),
                other => other.clone(),
            }).collect();
            cx.emit(ops.PHI, Default::default(), operands, smallvec::smallvec![part]);
        } else if op == ops.SELECT {
            let values: Vec<ValueId> = inst.uses().collect();
            let c = cx.original(values[0]);
            let (t, f) = (p(cx, values[1]), p(cx, values[2]));
            cx.op_into(ops.SELECT, part, &[c, t, f]);
        } else if op == ops.LOAD {
            if inst.flags.iter().any(|f| matches!(*f, "sext" | "zext" | "anyext")) {
                return Ok(false);
            }
            let mut flags = inst.flags.clone();
            flags.push("zext");
            flags.push(narrow_name);
            let operands = inst.operands.iter().map(|o| match o {
                Operand::Value(v) => Operand::Value(cx.original(*v)),
                other => other.clone(),
            }).collect();
            cx.emit(ops.LOAD, flags, operands, smallvec::smallvec![part]);
        } else if op == ops.SIGN_EXTEND || op == ops.ZERO_EXTEND || op == ops.ANY_EXTEND {
            // From a narrower type (i1): the same extension, to the wide type.
            let src = inst.uses().next().unwrap_or(value);
            let src = cx.original(src);
            cx.op_into(op, part, &[src]);
        } else if op == ops.TRUNCATE {
            let src = inst.uses().next().unwrap_or(value);
            let src = cx.original(src);
            let src_ty = cx.ty(src);
            if src_ty == wide {
                cx.alias(part, src);
            } else if types::bits(cx.tables, src_ty) > types::bits(cx.tables, wide) {
                cx.op_into(ops.TRUNCATE, part, &[src]);
            } else {
                cx.op_into(ops.ANY_EXTEND, part, &[src]);
            }
        } else if op == ops.FP_TO_SINT || op == ops.FP_TO_UINT {
            let src = inst.uses().next().unwrap_or(value);
            let src = cx.original(src);
            let saturate = inst.has_flag("sat");
            let converted = if saturate { cx.new_value("cvt", wide) } else { part };
            cx.emit(op, inst.flags.clone(), vec![Operand::Value(src)], smallvec::smallvec![converted]);
            if saturate {
                // The wide conversion saturates to the wide range; clamp to the narrow one.
                let bits = types::bits(cx.tables, narrow) as i128;
                let (lo, hi, min, max) = if op == ops.FP_TO_SINT { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1, ops.SMAX, ops.SMIN) } else { (0, (1i128 << bits) - 1, ops.UMAX, ops.UMIN) };
                let lo = cx.constant(wide, lo);
                let hi = cx.constant(wide, hi);
                let clamped = cx.op(max, wide, &[converted, lo]);
                cx.op_into(min, part, &[clamped, hi]);
            }
        } else if op == ops.EXTRACT_VECTOR_ELT {
            // The element comes out any-extended into the wide register.
            let operands: Vec<ValueId> = inst.uses().collect();
            let v = cx.original(operands[0]);
            let i = cx.original(operands[1]);
            cx.op_into(ops.EXTRACT_VECTOR_ELT, part, &[v, i]);
        } else if op == ops.UADDO || op == ops.USUBO {
            let values: Vec<ValueId> = inst.uses().collect();
            let a = widen(cx, values[0], narrow, wide, Ext::Zero, Widening::Parts)?;
            let b = widen(cx, values[1], narrow, wide, Ext::Zero, Widening::Parts)?;
            let carry = inst.defs[1];
            if op == ops.UADDO {
                cx.op_into(ops.ADD, part, &[a, b]);
                let bits = types::bits(cx.tables, narrow);
                let bit = cx.constant(wide, 1i128 << bits);
                let out = cx.op(ops.AND, wide, &[part, bit]);
                let zero = cx.constant(wide, 0);
                let c = cx.setcc("ne", out, zero);
                cx.alias(carry, c);
            } else {
                cx.op_into(ops.SUB, part, &[a, b]);
                let c = cx.setcc("ult", a, b);
                cx.alias(carry, c);
            }
        } else if let Some(r) = promoted_op(cx, inst, narrow, wide, Widening::Parts)? {
            cx.alias(part, r);
        } else {
            return Ok(false);
        }
        return Ok(true);
    }

    // `value` is an operand.
    let def = inst.defs.first().copied();
    if op == ops.STORE {
        if inst.has_flag("trunc") {
            // Already a truncating store to a narrower memory type.
            let operands = inst.operands.iter().map(|o| match o {
                Operand::Value(v) if *v == value => Operand::Value(p(cx, *v)),
                Operand::Value(v) => Operand::Value(cx.original(*v)),
                other => other.clone(),
            }).collect();
            cx.emit(ops.STORE, inst.flags.clone(), operands, Vec::new());
            return Ok(true);
        }
        let mut flags = inst.flags.clone();
        flags.push("trunc");
        flags.push(narrow_name);
        let operands = inst.operands.iter().enumerate().map(|(i, o)| match o {
            Operand::Value(v) if i == 0 => Operand::Value(p(cx, *v)),
            Operand::Value(v) => Operand::Value(cx.original(*v)),
            other => other.clone(),
        }).collect();
        cx.emit(ops.STORE, flags, operands, Vec::new());
        return Ok(true);
    }
    if op == ops.SETCC {
        let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() else { return Ok(false) };
        let ext = cc_ext(cx, cc);
        let values: Vec<ValueId> = inst.uses().collect();
        let a = widen(cx, values[0], narrow, wide, ext, Widening::Parts)?;
        let b = widen(cx, values[1], narrow, wide, ext, Widening::Parts)?;
        cx.emit(ops.SETCC, Default::default(), vec![Operand::CondCode(cc), Operand::Value(a), Operand::Value(b)], inst.defs.clone());
        return Ok(true);
    }
    let Some(def) = def else { return Ok(false) };
    let def_ty = cx.ty(def);
    if op == ops.SIGN_EXTEND || op == ops.ZERO_EXTEND || op == ops.ANY_EXTEND {
        let ext = if op == ops.SIGN_EXTEND { Ext::Sign } else if op == ops.ZERO_EXTEND { Ext::Zero } else { Ext::Any };
        let w = widen(cx, value, narrow, wide, ext, Widening::Parts)?;
        if def_ty == wide {
            cx.alias(def, w);
        } else {
            cx.op_into(op, def, &[w]);
        }
        return Ok(true);
    }
    if op == ops.TRUNCATE {
        let w = p(cx, value);
        if def_ty == wide {
            cx.alias(def, w);
        } else {
            cx.op_into(ops.TRUNCATE, def, &[w]);
        }
        return Ok(true);
    }
    if op == ops.SINT_TO_FP || op == ops.UINT_TO_FP {
        let ext = if op == ops.SINT_TO_FP { Ext::Sign } else { Ext::Zero };
        let w = widen(cx, value, narrow, wide, ext, Widening::Parts)?;
        cx.emit(op, inst.flags.clone(), vec![Operand::Value(w)], smallvec::smallvec![def]);
        return Ok(true);
    }
    if op == ops.BUILD_VECTOR || op == ops.INSERT_VECTOR_ELT {
        // Integer elements may be given wider than the element type (ISD).
        let operands = inst.operands.iter().map(|o| match o {
            Operand::Value(v) if cx.is_replaced(*v) && cx.action(*v) == cx.action(value) => Operand::Value(p(cx, *v)),
            Operand::Value(v) => Operand::Value(cx.original(*v)),
            other => other.clone(),
        }).collect();
        cx.emit(op, inst.flags.clone(), operands, inst.defs.clone());
        return Ok(true);
    }
    if op == ops.SHL || op == ops.SRA || op == ops.SRL || op == ops.ROTL || op == ops.ROTR {
        // A narrow shift amount of a legal value.
        let values: Vec<ValueId> = inst.uses().collect();
        if values[1] == value && values[0] != value {
            let a = cx.original(values[0]);
            let amount = widen(cx, value, narrow, wide, Ext::Zero, Widening::Parts)?;
            cx.op_into(op, def, &[a, amount]);
            return Ok(true);
        }
    }
    Ok(false)
}
