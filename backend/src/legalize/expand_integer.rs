//! Integer expansion: an integer wider than every register integer (i128 before sm_70)
//! is carried as (low, high) halves (reference: "Expand (Type Splitting)"): carry
//! chains for add/sub (ADDC/ADDE, which select to `add.cc`/`addc`), the schoolbook
//! product from MULHU for multiplies, `*_PARTS` nodes for shifts (lowered by the
//! description's Custom hook), two-step compares. On SMs where the wide type is a
//! register type but its arithmetic is Expand (i128 on sm_70+), the same rewrites run
//! on halves taken with EXTRACT_ELEMENT and joined with BUILD_PAIR
//! ([`super::operations`]).

use target_desc::tables::{CondCodeId, VtId};

use super::types::TypeAction;
use super::{Cx, LResult};
use crate::mir::{Inst, Operand, ValueId};

/// How [`expand_op`] gets the halves of a wide operand.
pub(crate) enum Halves {
    /// This type round's parts.
    Parts,
    /// EXTRACT_ELEMENT of a legal wide value.
    Extract,
}

pub(crate) fn halves(cx: &mut Cx, v: ValueId, half: VtId, how: &Halves) -> (ValueId, ValueId) {
    match how {
        Halves::Parts => {
            let p = cx.parts(v);
            (p[0], p[1])
        }
        Halves::Extract => {
            if let Some(pair) = cx.pairs.get(&v).or_else(|| cx.extracted.get(&v)) {
                return *pair;
            }
            let ops = cx.ops;
            let lo = cx.derived(v, "lo", half);
            let hi = cx.derived(v, "hi", half);
            cx.emit(ops.EXTRACT_ELEMENT, Default::default(), vec![Operand::Value(v), Operand::int(0)], smallvec::smallvec![lo]);
            cx.emit(ops.EXTRACT_ELEMENT, Default::default(), vec![Operand::Value(v), Operand::int(1)], smallvec::smallvec![hi]);
            // Only reused in this block: elsewhere the extraction may not dominate.
            cx.extracted.insert(v, (lo, hi));
            (lo, hi)
        }
    }
}

/// The result of an expanded operation: halves of a wide result, or a legal value.
pub(crate) enum Expanded {
    Pair(ValueId, ValueId),
    Value(ValueId),
}

fn cc_name(cx: &Cx, cc: CondCodeId) -> &'static str {
    cx.tables.cond_code_info(cc).map(|c| c.name).unwrap_or("?")
}

/// Compares two (lo, hi) pairs with an integer condition code.
pub(crate) fn compare_pairs(cx: &mut Cx, cc: &str, a: (ValueId, ValueId), b: (ValueId, ValueId), half: VtId) -> LResult<ValueId> {
    let ops = cx.ops;
    match cc {
        "eq" | "ne" => {
            let x = cx.op(ops.XOR, half, &[a.0, b.0]);
            let y = cx.op(ops.XOR, half, &[a.1, b.1]);
            let any = cx.op(ops.OR, half, &[x, y]);
            let zero = cx.constant(half, 0);
            Ok(cx.setcc(cc, any, zero))
        }
        "lt" | "le" | "gt" | "ge" | "ult" | "ule" | "ugt" | "uge" => {
            let unsigned = cc.starts_with('u');
            let base = cc.trim_start_matches('u');
            let strict = match base {
                "lt" | "le" => "lt",
                _ => "gt",
            };
            let hi_cc = if unsigned { format!("u{strict}") } else { strict.to_string() };
            let lo_cc = format!("u{base}");
            let hi_cmp = cx.setcc(&hi_cc, a.1, b.1);
            let hi_eq = cx.setcc("eq", a.1, b.1);
            let lo_cmp = cx.setcc(&lo_cc, a.0, b.0);
            Ok(cx.select(hi_eq, lo_cmp, hi_cmp))
        }
        other => Err(cx.error(format!("condition code {other} does not apply to integers"))),
    }
}

/// An i32 shift amount from any integer amount (the halves' shifts take i32).
fn shift_amount(cx: &mut Cx, v: ValueId, how: &Halves, half: VtId) -> LResult<ValueId> {
    let ops = cx.ops;
    let i32t = cx.int(32)?;
    let amount = if cx.is_replaced(v) && matches!(how, Halves::Parts) {
        match cx.action(v) {
            TypeAction::Expand(_) => cx.parts(v)[0],
            TypeAction::Promote(_) => {
                let p = cx.parts(v)[0];
                let narrow = cx.ty(v);
                super::promote_integer::in_register(cx, p, narrow, super::promote_integer::Ext::Zero)?
            }
            _ => cx.original(v),
        }
    } else if matches!(how, Halves::Extract) && super::types::bits(cx.tables, cx.ty(v)) > super::types::bits(cx.tables, half) {
        halves(cx, v, half, how).0
    } else {
        cx.original(v)
    };
    let bits = super::types::bits(cx.tables, cx.ty(amount));
    Ok(match bits.cmp(&32) {
        std::cmp::Ordering::Equal => amount,
        std::cmp::Ordering::Greater => cx.op(ops.TRUNCATE, i32t, &[amount]),
        std::cmp::Ordering::Less => cx.op(ops.ZERO_EXTEND, i32t, &[amount]),
    })
}

/// The arithmetic of one instruction on (lo, hi) halves. None when the opcode has
/// no expansion here (the caller falls back to the generic operation expansion).
pub(crate) fn expand_op(cx: &mut Cx, inst: &Inst, wide: VtId, half: VtId, how: Halves) -> LResult<Option<Vec<Expanded>>> {
    let Some(op) = inst.opcode.generic() else { return Ok(None) };
    let ops = cx.ops;
    let values: Vec<ValueId> = inst.uses().collect();
    let half_bits = super::types::bits(cx.tables, half) as i128;
    let pair = |cx: &mut Cx, i: usize| -> (ValueId, ValueId) { halves(cx, values[i], half, &how) };
    let result = if op == ops.CONSTANT {
        let Some(Operand::Int(v)) = inst.operands.first().cloned() else { return Ok(None) };
        let (lo, hi) = split_constant(v.get(), half_bits);
        let lo = cx.constant(half, lo);
        let hi = cx.constant(half, hi);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.ADD || op == ops.SUB {
        let (a, b) = (pair(cx, 0), pair(cx, 1));
        let (lo, hi) = carry_chain(cx, op == ops.ADD, a, b, half);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.MUL {
        let (a, b) = (pair(cx, 0), pair(cx, 1));
        let lo = cx.op(ops.MUL, half, &[a.0, b.0]);
        let h1 = cx.op(ops.MULHU, half, &[a.0, b.0]);
        let h2 = cx.op(ops.MUL, half, &[a.0, b.1]);
        let h3 = cx.op(ops.MUL, half, &[a.1, b.0]);
        let s = cx.op(ops.ADD, half, &[h1, h2]);
        let hi = cx.op(ops.ADD, half, &[s, h3]);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.MULHU || op == ops.MULHS {
        let (a, b) = (pair(cx, 0), pair(cx, 1));
        let (mut lo, mut hi) = high_product(cx, a, b, half)?;
        if op == ops.MULHS {
            // signed high = unsigned high - (a < 0 ? b : 0) - (b < 0 ? a : 0)
            let n = cx.int(32)?;
            let top = cx.constant(n, half_bits - 1);
            for (x, y) in [(a, b), (b, a)] {
                let sign = cx.op(ops.SRA, half, &[x.1, top]);
                let ylo = cx.op(ops.AND, half, &[y.0, sign]);
                let yhi = cx.op(ops.AND, half, &[y.1, sign]);
                let (l, h) = carry_chain(cx, false, (lo, hi), (ylo, yhi), half);
                lo = l;
                hi = h;
            }
        }
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.AND || op == ops.OR || op == ops.XOR {
        let (a, b) = (pair(cx, 0), pair(cx, 1));
        let lo = cx.op(op, half, &[a.0, b.0]);
        let hi = cx.op(op, half, &[a.1, b.1]);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.SHL || op == ops.SRA || op == ops.SRL {
        let a = pair(cx, 0);
        let amount = shift_amount(cx, values[1], &how, half)?;
        let parts_op = if op == ops.SHL { ops.SHL_PARTS } else if op == ops.SRA { ops.SRA_PARTS } else { ops.SRL_PARTS };
        let lo = cx.new_value("lo", half);
        let hi = cx.new_value("hi", half);
        cx.op_into_many(parts_op, &[lo, hi], &[a.0, a.1, amount]);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.SETCC {
        let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() else { return Ok(None) };
        let (a, b) = (pair(cx, 0), pair(cx, 1));
        let name = cc_name(cx, cc);
        vec![Expanded::Value(compare_pairs(cx, name, a, b, half)?)]
    } else if op == ops.SELECT {
        let c = cx.original(values[0]);
        let (t, f) = (pair(cx, 1), pair(cx, 2));
        let lo = cx.op(ops.SELECT, half, &[c, t.0, f.0]);
        let hi = cx.op(ops.SELECT, half, &[c, t.1, f.1]);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.ABS {
        let a = pair(cx, 0);
        let n = cx.int(32)?;
        let top = cx.constant(n, half_bits - 1);
        let sign = cx.op(ops.SRA, half, &[a.1, top]);
        let xlo = cx.op(ops.XOR, half, &[a.0, sign]);
        let xhi = cx.op(ops.XOR, half, &[a.1, sign]);
        let (lo, hi) = carry_chain(cx, false, (xlo, xhi), (sign, sign), half);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.CTPOP {
        let a = pair(cx, 0);
        let l = cx.op(ops.CTPOP, half, &[a.0]);
        let h = cx.op(ops.CTPOP, half, &[a.1]);
        let lo = cx.op(ops.ADD, half, &[l, h]);
        let hi = cx.constant(half, 0);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.CTLZ || op == ops.CTTZ {
        // Count in the half that decides; add the half width when it is all zero.
        let a = pair(cx, 0);
        let (first, second) = if op == ops.CTLZ { (a.1, a.0) } else { (a.0, a.1) };
        let zero = cx.constant(half, 0);
        let first_zero = cx.setcc("eq", first, zero);
        let in_first = cx.op(op, half, &[first]);
        let in_second = cx.op(op, half, &[second]);
        let width = cx.constant(half, half_bits);
        let past = cx.op(ops.ADD, half, &[in_second, width]);
        let lo = cx.select(first_zero, past, in_first);
        let hi = cx.constant(half, 0);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.BSWAP || op == ops.BITREVERSE {
        let a = pair(cx, 0);
        let lo = cx.op(op, half, &[a.1]);
        let hi = cx.op(op, half, &[a.0]);
        vec![Expanded::Pair(lo, hi)]
    } else if op == ops.UADDO || op == ops.USUBO {
        let (a, b) = (pair(cx, 0), pair(cx, 1));
        let (lo, hi) = carry_chain(cx, op == ops.UADDO, a, b, half);
        // The carry flag is consumed by the chain; the overflow is recomputed.
        let overflow = if op == ops.UADDO { compare_pairs(cx, "ult", (lo, hi), a, half)? } else { compare_pairs(cx, "ult", a, b, half)? };
        vec![Expanded::Pair(lo, hi), Expanded::Value(overflow)]
    } else if op == ops.SIGN_EXTEND || op == ops.ZERO_EXTEND || op == ops.ANY_EXTEND {
        let src = cx.original(values[0]);
        let src_ty = cx.ty(src);
        let lo = if src_ty == half { src } else { cx.op(op, half, &[src]) };
        let hi = if op == ops.SIGN_EXTEND {
            let n = cx.int(32)?;
            let top = cx.constant(n, half_bits - 1);
            cx.op(ops.SRA, half, &[lo, top])
        } else if op == ops.ZERO_EXTEND {
            cx.constant(half, 0)
        } else {
            cx.op(ops.UNDEF, half, &[])
        };
        let _ = wide;
        vec![Expanded::Pair(lo, hi)]
    } else {
        return Ok(None);
    };
    Ok(Some(result))
}

/// Type-level expansion of one instruction.
pub(super) fn legalize(cx: &mut Cx, inst: &Inst, value: ValueId, is_result: bool) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    let wide = cx.ty(value);
    let TypeAction::Expand(half) = cx.action(value) else { return Ok(false) };
    let half_bytes = super::types::bits(cx.tables, half) as i128 / 8;
    let half_bits = super::types::bits(cx.tables, half) as i128;

    if is_result {
        let parts = cx.parts(value);
        if op == ops.CONSTANT {
            let Some(Operand::Int(v)) = inst.operands.first().cloned() else { return Ok(false) };
            let (lo, hi) = split_constant(v.get(), half_bits);
            cx.emit(ops.CONSTANT, Default::default(), vec![Operand::int(lo)], vec![parts[0]]);
            cx.emit(ops.CONSTANT, Default::default(), vec![Operand::int(hi)], vec![parts[1]]);
            return Ok(true);
        }
        if op == ops.UNDEF {
            for p in parts {
                cx.emit(ops.UNDEF, Default::default(), Vec::new(), smallvec::smallvec![p]);
            }
            return Ok(true);
        }
        if op == ops.COPY {
            let src = inst.uses().next().unwrap_or(value);
            let src_parts = cx.parts(src);
            cx.alias_all(value, &src_parts);
            return Ok(true);
        }
        if op == ops.PHI {
            for (i, p) in parts.iter().enumerate() {
                let operands = inst.operands.iter().map(|o| match o {
                    Operand::Value(v) => Operand::Value(cx.parts(*v)[i]),
                    other => other.clone(),
                }).collect();
                cx.emit(ops.PHI, Default::default(), operands, smallvec::smallvec![*p]);
            }
            return Ok(true);
        }
        if op == ops.BUILD_PAIR {
            let values: Vec<ValueId> = inst.uses().collect();
            let lo = cx.original(values[0]);
            let hi = cx.original(values[1]);
            if cx.ty(lo) == half && cx.ty(hi) == half {
                cx.alias_all(value, &[lo, hi]);
                return Ok(true);
            }
            return Ok(false);
        }
        if op == ops.BITCAST {
            return super::vectors::bitcast(cx, inst.uses().next().unwrap_or(value), value);
        }
        if op == ops.LOAD {
            let extension = inst.flags.iter().find(|f| matches!(**f, "sext" | "zext" | "anyext")).cloned();
            if let Some(extension) = extension {
                // An extending load into the wide type: the low half loads (extending
                // from the memory type unless it is the half type), the high half is
                // the sign or zero.
                let memory_bits = inst.flags.iter().find_map(|f| f.strip_prefix('i').and_then(|b| b.parse::<i128>().ok())).unwrap_or(half_bits);
                let ptr = cx.original(inst.uses().next().unwrap_or(value));
                let mut flags: crate::mir::Flags = inst.flags.iter().filter(|f| matches!(**f, "volatile" | "invariant")).cloned().collect();
                if memory_bits < half_bits {
                    flags.push(extension);
                    flags.push(cx.type_name(cx.int(memory_bits as u16)?));
                }
                let mut operands = vec![Operand::Value(ptr)];
                operands.extend(inst.operands.iter().filter(|o| matches!(o, Operand::Align(_))).cloned());
                cx.emit(ops.LOAD, flags, operands, vec![parts[0]]);
                if extension == "sext" {
                    let n = cx.int(32)?;
                    let top = cx.constant(n, half_bits - 1);
                    cx.op_into(ops.SRA, parts[1], &[parts[0], top]);
                } else {
                    cx.emit(ops.CONSTANT, Default::default(), vec![Operand::int(0)], vec![parts[1]]);
                }
                return Ok(true);
            }
            let ptr = inst.uses().next().unwrap_or(value);
            let ptr = cx.original(ptr);
            let align = align_of(inst).unwrap_or(2 * half_bytes as u64);
            let (p_lo, p_hi) = addresses(cx, ptr, half_bytes)?;
            cx.emit(ops.LOAD, inst.flags.clone(), vec![Operand::Value(p_lo), Operand::Align(align.min(half_bytes as u64))], vec![parts[0]]);
            cx.emit(ops.LOAD, inst.flags.clone(), vec![Operand::Value(p_hi), Operand::Align(align.min(half_bytes as u64))], vec![parts[1]]);
            return Ok(true);
        }
        let Some(results) = expand_op(cx, inst, wide, half, Halves::Parts)? else { return Ok(false) };
        finish(cx, inst, results);
        return Ok(true);
    }

    // `value` is an operand.
    if op == ops.STORE {
        let values: Vec<ValueId> = inst.uses().collect();
        if values[0] != value {
            return Ok(false);
        }
        let (lo, hi) = (cx.parts(value)[0], cx.parts(value)[1]);
        let ptr = cx.original(values[1]);
        let align = align_of(inst).unwrap_or(2 * half_bytes as u64);
        let mut flags: crate::mir::Flags = inst.flags.iter().filter(|f| !matches!(**f, "trunc" | "i8" | "i16" | "i32" | "i64")).cloned().collect();
        let trunc_bits = inst.flags.iter().find_map(|f| f.strip_prefix('i').and_then(|b| b.parse::<i128>().ok()));
        match trunc_bits {
            Some(bits) if bits <= half_bits => {
                if bits < half_bits {
                    flags.push("trunc");
                    flags.push(cx.type_name(cx.int(bits as u16)?));
                }
                cx.emit(ops.STORE, flags, vec![Operand::Value(lo), Operand::Value(ptr), Operand::Align(align)], Vec::new());
            }
            Some(_) => return Ok(false),
            None => {
                let (p_lo, p_hi) = addresses(cx, ptr, half_bytes)?;
                let a = align.min(half_bytes as u64);
                cx.emit(ops.STORE, flags.clone(), vec![Operand::Value(lo), Operand::Value(p_lo), Operand::Align(a)], Vec::new());
                cx.emit(ops.STORE, flags, vec![Operand::Value(hi), Operand::Value(p_hi), Operand::Align(a)], Vec::new());
            }
        }
        return Ok(true);
    }
    if op == ops.BITCAST {
        return super::vectors::bitcast(cx, value, inst.defs[0]);
    }
    if op == ops.TRUNCATE {
        let def = inst.defs[0];
        let lo = cx.parts(value)[0];
        let def_ty = cx.ty(def);
        if def_ty == half {
            cx.alias(def, lo);
        } else {
            cx.op_into(ops.TRUNCATE, def, &[lo]);
        }
        return Ok(true);
    }
    if op == ops.EXTRACT_ELEMENT {
        let Some(Operand::Int(i)) = inst.operands.get(1).cloned() else { return Ok(false) };
        let part = cx.parts(value)[i.get() as usize & 1];
        cx.alias(inst.defs[0], part);
        return Ok(true);
    }
    if op == ops.SETCC {
        let Some(results) = expand_op(cx, inst, wide, half, Halves::Parts)? else { return Ok(false) };
        finish(cx, inst, results);
        return Ok(true);
    }
    if op == ops.SHL || op == ops.SRA || op == ops.SRL {
        // A wide shift amount of a legal value: its low half is enough.
        let values: Vec<ValueId> = inst.uses().collect();
        if values[1] == value && values[0] != value {
            let a = cx.original(values[0]);
            let amount = shift_amount(cx, value, &Halves::Parts, half)?;
            cx.op_into(op, inst.defs[0], &[a, amount]);
            return Ok(true);
        }
    }
    Ok(false)
}

/// Defines an instruction's results from expanded results (type level).
fn finish(cx: &mut Cx, inst: &Inst, results: Vec<Expanded>) {
    for (def, r) in inst.defs.iter().zip(results) {
        match r {
            Expanded::Pair(lo, hi) => cx.alias_all(*def, &[lo, hi]),
            Expanded::Value(v) => cx.alias(*def, v),
        }
    }
}

pub(crate) fn align_of(inst: &Inst) -> Option<u64> {
    inst.operands.iter().find_map(|o| match o {
        Operand::Align(a) => Some(*a),
        _ => None,
    })
}

/// `ptr` and `ptr + offset`.
fn addresses(cx: &mut Cx, ptr: ValueId, offset: i128) -> LResult<(ValueId, ValueId)> {
    let ops = cx.ops;
    let i64t = cx.int(64)?;
    let off = cx.constant(i64t, offset);
    let ty = cx.ty(ptr);
    let hi = cx.op(ops.PTR_ADD, ty, &[ptr, off]);
    Ok((ptr, hi))
}

/// The (low, high) halves of a wide literal, each written signed so it reads back in
/// the half type's range.
fn split_constant(v: i128, half_bits: i128) -> (i128, i128) {
    let mask = (1i128 << half_bits) - 1;
    let signed = |x: i128| if x >> (half_bits - 1) != 0 { x - (1i128 << half_bits) } else { x };
    (signed(v & mask), signed((v >> half_bits) & mask))
}

/// (lo, hi) + or - (lo, hi) as a carry chain: ADDC then ADDE (SUBC then SUBE), the
/// second directly after the first (the carry is a flag in PTX, `add.cc`/`addc`).
fn carry_chain(cx: &mut Cx, add: bool, a: (ValueId, ValueId), b: (ValueId, ValueId), half: VtId) -> (ValueId, ValueId) {
    let ops = cx.ops;
    let i1 = cx.i1();
    let (first, next) = if add { (ops.ADDC, ops.ADDE) } else { (ops.SUBC, ops.SUBE) };
    let lo = cx.new_value("lo", half);
    let carry = cx.new_value("carry", i1);
    cx.op_into_many(first, &[lo, carry], &[a.0, b.0]);
    let hi = cx.new_value("hi", half);
    let carry_out = cx.new_value("carry", i1);
    cx.op_into_many(next, &[hi, carry_out], &[a.1, b.1, carry]);
    (lo, hi)
}

/// The high double word of the unsigned product of two (lo, hi) pairs: the four
/// half-width products, with the carries of the middle column added in.
fn high_product(cx: &mut Cx, a: (ValueId, ValueId), b: (ValueId, ValueId), half: VtId) -> LResult<(ValueId, ValueId)> {
    let ops = cx.ops;
    let h00 = cx.op(ops.MULHU, half, &[a.0, b.0]);
    let l01 = cx.op(ops.MUL, half, &[a.0, b.1]);
    let h01 = cx.op(ops.MULHU, half, &[a.0, b.1]);
    let l10 = cx.op(ops.MUL, half, &[a.1, b.0]);
    let h10 = cx.op(ops.MULHU, half, &[a.1, b.0]);
    let l11 = cx.op(ops.MUL, half, &[a.1, b.1]);
    let h11 = cx.op(ops.MULHU, half, &[a.1, b.1]);
    // Carries out of the middle column (bits half..2*half of the full product).
    let carry = |cx: &mut Cx, x: ValueId, y: ValueId| -> (ValueId, ValueId) {
        let sum = cx.op(ops.ADD, half, &[x, y]);
        let wrapped = cx.setcc("ult", sum, x);
        let c = cx.op(ops.ZERO_EXTEND, half, &[wrapped]);
        (sum, c)
    };
    let (t1, c1) = carry(cx, h00, l01);
    let (_, c2) = carry(cx, t1, l10);
    let middle = cx.op(ops.ADD, half, &[c1, c2]);
    let (u1, d1) = carry(cx, l11, h01);
    let (u2, d2) = carry(cx, u1, h10);
    let (lo, d3) = carry(cx, u2, middle);
    let s1 = cx.op(ops.ADD, half, &[h11, d1]);
    let s2 = cx.op(ops.ADD, half, &[s1, d2]);
    let hi = cx.op(ops.ADD, half, &[s2, d3]);
    Ok((lo, hi))
}
