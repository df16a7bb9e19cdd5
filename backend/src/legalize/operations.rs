//! Operation legalization: every (opcode, type) whose type is legal is looked up in the
//! SM's action table and kept (Legal), promoted to the description's target type
//! (Promote), expanded into other generic operations (Expand), lowered by the named
//! hook (Custom, [`super::hooks`]) or turned into a call of the MIR library (LibCall,
//! [`super::library`]). Compares also consult the condition-code table: an illegal
//! code is swapped or inverted into a legal one. Reference: cicc-type-legalization.txt,
//! "The Legality Table" and "The Four Legalization Actions".
//!
//! [`expand`] holds the generic expansions (SELECT_CC -> SETCC + SELECT, BR_CC ->
//! SETCC + BRCOND, rotates into shifts, CTTZ through CTPOP, carries through compares,
//! bf16 add/sub/mul as FMA, lane-by-lane vector operations, ...). They are written in
//! generic opcodes only; whatever they produce is legalized in the next round.

use target_desc::tables::{Action, ActionDetail, CondCodeId, OpcodeId, VtId};

use super::expand_integer::{self, Expanded, Halves};
use super::promote_integer::{self, Widening};
use super::soften_float;
use super::types;
use super::{Cx, LResult};
use crate::mir::{Inst, Operand, ValueId};

/// Legalizes one instruction whose types are all legal. Returns false when it is kept.
pub(super) fn legalize(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let Some(row) = cx.row_type(inst) else { return Ok(false) };
    let ops = cx.ops;
    if op == ops.TRUNCATE {
        // The table is keyed by the result; a source wider than every integer the SM
        // computes on (i128 in .b128 registers) is taken apart first.
        let src = inst.uses().next().unwrap_or(inst.defs[0]);
        let src_ty = cx.ty(src);
        if types::bits(cx.tables, src_ty) > 64 && !types::is_vector(cx.tables, src_ty) {
            let half = cx.int(types::bits(cx.tables, src_ty) / 2)?;
            let (lo, _) = expand_integer::halves(cx, src, half, &Halves::Extract);
            if row == half {
                cx.alias(inst.defs[0], lo);
            } else {
                cx.op_into(ops.TRUNCATE, inst.defs[0], &[lo]);
            }
            return Ok(true);
        }
    }
    // An extending load into a storage-only register class (i128 in .b128 registers):
    // PTX loads at most 64 bits with an extension, so load the narrow value and extend
    // it as an operation (which the legalizer takes apart).
    if op == ops.LOAD && storage_only(cx, row) {
        let extension = inst.flags.iter().find_map(|f| match *f {
            "sext" => Some(ops.SIGN_EXTEND),
            "zext" => Some(ops.ZERO_EXTEND),
            "anyext" => Some(ops.ANY_EXTEND),
            _ => None,
        });
        let narrow = inst.flags.iter().find_map(|f| cx.tables.vt(f));
        if let (Some(extension), Some(narrow)) = (extension, narrow) {
            let flags: crate::mir::Flags = inst.flags.iter().filter(|f| !matches!(**f, "sext" | "zext" | "anyext") && cx.tables.vt(f).is_none()).cloned().collect();
            let value = cx.derived(inst.defs[0], "narrow", narrow);
            cx.emit(ops.LOAD, flags, inst.operands.clone(), smallvec::smallvec![value]);
            cx.op_into(extension, inst.defs[0], &[value]);
            return Ok(true);
        }
    }
    // A truncating store from a storage-only class: truncate as an operation, then store.
    if op == ops.STORE && inst.has_flag("trunc") && storage_only(cx, row) {
        if let Some(narrow) = inst.flags.iter().find_map(|f| cx.tables.vt(f)) {
            let flags: crate::mir::Flags = inst.flags.iter().filter(|f| **f != "trunc" && cx.tables.vt(f).is_none()).cloned().collect();
            let mut operands = inst.operands.clone();
            if let Some(Operand::Value(v)) = operands.first().cloned() {
                let value = cx.derived(v, "narrow", narrow);
                cx.op_into(ops.TRUNCATE, value, &[v]);
                operands[0] = Operand::Value(value);
                cx.emit(ops.STORE, flags, operands, Vec::new());
                return Ok(true);
            }
        }
    }
    // Conversions between floats and integers wider than any conversion instruction
    // (i128): the table row is the float, so the integer side is checked here.
    let int_side = if op == ops.SINT_TO_FP || op == ops.UINT_TO_FP { inst.uses().next() } else if op == ops.FP_TO_SINT || op == ops.FP_TO_UINT { inst.defs.first().copied() } else { None };
    if let Some(v) = int_side {
        if types::bits(cx.tables, cx.ty(v)) > 64 && !types::is_vector(cx.tables, cx.ty(v)) {
            return wide_int_conversion(cx, inst);
        }
    }
    // The cell's action and detail; its rule (a binary search) only for a remark.
    let (action, detail) = (cx.sm.action(op, row), cx.sm.action_detail(op, row));
    let describe = |cx: &Cx, what: &str| {
        let rule = cx.tables.decide(cx.sm, op, row).rule;
        format!("{} {} on {}: {what} ({}: {})", cx.opcode_name(op), cx.type_name(row), cx.sm.name, rule.source, rule.text)
    };
    match action {
        Action::Legal => {
            if let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() {
                return condition_code(cx, inst, cc, row);
            }
            Ok(false)
        }
        Action::Custom => {
            let hook = match detail {
                Some(ActionDetail::CustomHook(h)) => h,
                _ => "?",
            };
            cx.remark(|cx| describe(cx, &format!("Custom, hook {hook}")));
            if super::hooks::run_operation_hook(cx, hook, inst)? {
                return Ok(true);
            }
            // A hook may decline a case it does not improve; the generic expansion runs.
            expand_or_fail(cx, inst, row)
        }
        Action::Promote => {
            cx.remark(|cx| describe(cx, "Promote"));
            promote(cx, inst, row, detail)
        }
        Action::Expand => {
            cx.remark(|cx| describe(cx, "Expand"));
            expand_or_fail(cx, inst, row)
        }
        Action::LibCall => {
            let Some(ActionDetail::LibCall(function)) = detail else {
                return Err(cx.error(format!("{} {} is LibCall without a function name", cx.opcode_name(op), cx.type_name(row))));
            };
            cx.remark(|cx| describe(cx, &format!("LibCall {function}")));
            let ops = cx.ops;
            let mut operands = vec![Operand::Symbol(function.to_string().into())];
            operands.extend(inst.uses().map(Operand::Value));
            cx.emit(ops.CALL, Default::default(), operands, inst.defs.clone());
            cx.library_calls.insert(function.to_string());
            Ok(true)
        }
    }
}

fn expand_or_fail(cx: &mut Cx, inst: &Inst, row: VtId) -> LResult<bool> {
    if expand(cx, inst)? {
        return Ok(true);
    }
    let op = inst.opcode.generic().map(|o| cx.opcode_name(o)).unwrap_or("?");
    let decision = inst.opcode.generic().map(|o| cx.tables.decide(cx.sm, o, row));
    let why = decision.map(|d| format!(" (the description makes it {} at {}: {})", d.action, d.rule.source, d.rule.text)).unwrap_or_default();
    Err(cx.error(format!("cannot legalize {op} on {} for {}: no expansion for this operation{why}", cx.type_name(row), cx.sm.name)))
}

/// Operation-level promotion: compute in the description's target type (or the next
/// wider type that is not Custom), then narrow the result.
fn promote(cx: &mut Cx, inst: &Inst, row: VtId, detail: Option<ActionDetail>) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    let target = match detail {
        Some(ActionDetail::PromoteTo(t)) => VtId(t),
        _ => next_wider(cx, op, row).ok_or_else(|| cx.error(format!("{} {} is Promote but no wider type can do it", cx.opcode_name(op), cx.type_name(row))))?,
    };
    if types::is_float(cx.tables, row) {
        // Floats: FP_EXTEND the operands of the row type, operate, FP_ROUND back.
        let mut operands = Vec::new();
        for o in &inst.operands {
            operands.push(match o {
                Operand::Value(v) if cx.ty(*v) == row => Operand::Value(extend_float(cx, *v, target)?),
                other => other.clone(),
            });
        }
        let mut defs = Vec::new();
        let mut narrow_back = Vec::new();
        for d in &inst.defs {
            if cx.ty(*d) == row {
                let wide = cx.derived(*d, "wide", target);
                defs.push(wide);
                narrow_back.push((*d, wide));
            } else {
                defs.push(*d);
            }
        }
        if op == ops.FMA && types::bits(cx.tables, target) == 64 && narrow_back.len() == 1 {
            // One rounding from an f64 FMA is not enough for a correctly rounded narrow
            // FMA: round the f64 sum to odd first.
            let args: Vec<ValueId> = operands.iter().filter_map(|o| if let Operand::Value(v) = o { Some(*v) } else { None }).collect();
            let odd = soften_float::narrow_fma_to_odd(cx, args[0], args[1], args[2])?;
            cx.alias(narrow_back[0].1, odd);
        } else {
            cx.emit(op, inst.flags.clone(), operands, defs);
        }
        for (d, wide) in narrow_back {
            let narrow = round_float(cx, wide, row)?;
            cx.alias(d, narrow);
        }
        return Ok(true);
    }
    if op == ops.SETCC {
        let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() else { return Ok(false) };
        let ext = promote_integer::cc_ext(cx, cc);
        let values: Vec<ValueId> = inst.uses().collect();
        let a = promote_integer::widen(cx, values[0], row, target, ext, Widening::Extend)?;
        let b = promote_integer::widen(cx, values[1], row, target, ext, Widening::Extend)?;
        cx.emit(ops.SETCC, Default::default(), vec![Operand::CondCode(cc), Operand::Value(a), Operand::Value(b)], inst.defs.clone());
        return Ok(true);
    }
    match promote_integer::promoted_op(cx, inst, row, target, Widening::Extend)? {
        Some(wide) => {
            let def = inst.defs[0];
            cx.op_into(ops.TRUNCATE, def, &[wide]);
            Ok(true)
        }
        None => expand_or_fail(cx, inst, row),
    }
}

/// The next wider type of the same kind whose action for `op` is not Custom.
fn next_wider(cx: &Cx, op: OpcodeId, row: VtId) -> Option<VtId> {
    let kind = types::kind(cx.tables, row);
    let bits = types::bits(cx.tables, row);
    let mut candidates: Vec<_> = cx.tables.types.iter().filter(|t| t.kind == kind && t.bits > bits && cx.sm.type_supported(VtId(t.id))).collect();
    candidates.sort_by_key(|t| t.bits);
    candidates.into_iter().map(|t| VtId(t.id)).find(|t| cx.sm.action(op, *t) != Action::Custom)
}

/// A float widened exactly to `target`.
fn extend_float(cx: &mut Cx, v: ValueId, target: VtId) -> LResult<ValueId> {
    let ops = cx.ops;
    let ty = cx.ty(v);
    let f32t = cx.named_type("f32")?;
    if types::is_f32_top_half(cx.tables, ty) && target != f32t {
        // bf16 widens through f32 (the direct conversions need newer SMs).
        let f = cx.op(ops.FP_EXTEND, f32t, &[v]);
        return Ok(cx.op(ops.FP_EXTEND, target, &[f]));
    }
    Ok(cx.op(ops.FP_EXTEND, target, &[v]))
}

/// A wide float rounded once to `narrow`.
fn round_float(cx: &mut Cx, wide: ValueId, narrow: VtId) -> LResult<ValueId> {
    let ops = cx.ops;
    if types::is_f32_top_half(cx.tables, narrow) && types::bits(cx.tables, cx.ty(wide)) > 32 {
        let odd = soften_float::f64_to_f32_odd(cx, wide)?;
        return Ok(cx.op(ops.FP_ROUND, narrow, &[odd]));
    }
    Ok(cx.op(ops.FP_ROUND, narrow, &[wide]))
}

/// A splat of the float `value` of type `ty` (scalar or vector).
fn float_splat(cx: &mut Cx, ty: VtId, value: f64) -> LResult<ValueId> {
    let ops = cx.ops;
    if types::is_vector(cx.tables, ty) {
        let elem = types::element(cx.tables, ty);
        let c = float_splat(cx, elem, value)?;
        let lanes = vec![c; types::lanes(cx.tables, ty) as usize];
        return Ok(cx.op(ops.BUILD_VECTOR, ty, &lanes));
    }
    if types::is_f32_top_half(cx.tables, ty) {
        return Ok(cx.fconstant_bits(ty, soften_float::bf16_bits_of(value) as u64));
    }
    Ok(cx.fconstant(ty, value))
}

/// An integer splat (scalar or vector) of `value` in each lane.
fn int_splat(cx: &mut Cx, ty: VtId, value: i128) -> LResult<ValueId> {
    let ops = cx.ops;
    if types::is_vector(cx.tables, ty) {
        let elem = types::element(cx.tables, ty);
        let c = int_splat(cx, elem, value)?;
        let lanes = vec![c; types::lanes(cx.tables, ty) as usize];
        return Ok(cx.op(ops.BUILD_VECTOR, ty, &lanes));
    }
    Ok(cx.constant(ty, value))
}

/// Rewrites a compare whose condition code the table does not allow on its type.
fn condition_code(cx: &mut Cx, inst: &Inst, cc: CondCodeId, row: VtId) -> LResult<bool> {
    let d = cx.tables.decide_cc(cx.sm, cc, row);
    if d.action == Action::Legal {
        return Ok(false);
    }
    let Some(info) = cx.tables.cond_code_info(cc) else { return Ok(false) };
    let name = info.name;
    cx.remark(|cx| format!("condition code {name} on {} for {}: {} ({}: {})", cx.type_name(row), cx.sm.name, d.action, d.rule.source, d.rule.text));
    let ops = cx.ops;
    let op = inst.opcode.generic().unwrap_or(ops.SETCC);
    if op != ops.SETCC {
        // SELECT_CC and BR_CC go through SETCC first.
        return expand(cx, inst);
    }
    let values: Vec<ValueId> = inst.uses().collect();
    let legal = |cx: &Cx, n: &str| cx.tables.cond_code(n).is_some_and(|c| cx.sm.cc_action(c, row) == Action::Legal);
    if let Some(swapped) = swapped(name).filter(|s| legal(cx, s)) {
        let c = cx.cond_code(swapped);
        cx.emit(ops.SETCC, Default::default(), vec![Operand::CondCode(c), Operand::Value(values[1]), Operand::Value(values[0])], inst.defs.clone());
        return Ok(true);
    }
    if let Some(inverse) = inverse(name, types::is_float(cx.tables, row)).filter(|s| legal(cx, s)) {
        let i1 = cx.i1();
        let r = cx.setcc(inverse, values[0], values[1]);
        let t = cx.constant(i1, 1);
        cx.op_into(ops.XOR, inst.defs[0], &[r, t]);
        return Ok(true);
    }
    if d.action == Action::Promote && types::is_float(cx.tables, row) {
        let f32t = cx.named_type("f32")?;
        let a = extend_float(cx, values[0], f32t)?;
        let b = extend_float(cx, values[1], f32t)?;
        cx.emit(ops.SETCC, Default::default(), vec![Operand::CondCode(cc), Operand::Value(a), Operand::Value(b)], inst.defs.clone());
        return Ok(true);
    }
    if !types::is_float(cx.tables, row) {
        // Float-only codes on integers and pointers: ordering is meaningless.
        let int_form = match name {
            "oeq" | "ueq" => Some("eq"),
            "one" | "une" => Some("ne"),
            _ => None,
        };
        if let Some(f) = int_form.filter(|s| legal(cx, s)) {
            let c = cx.cond_code(f);
            cx.emit(ops.SETCC, Default::default(), vec![Operand::CondCode(c), Operand::Value(values[0]), Operand::Value(values[1])], inst.defs.clone());
            return Ok(true);
        }
    }
    Err(cx.error(format!("condition code {name} on {} cannot be legalized for {} ({}: {})", cx.type_name(row), cx.sm.name, d.rule.source, d.rule.text)))
}

fn swapped(cc: &str) -> Option<&'static str> {
    Some(match cc {
        "eq" => "eq",
        "ne" => "ne",
        "lt" => "gt",
        "gt" => "lt",
        "le" => "ge",
        "ge" => "le",
        "ult" => "ugt",
        "ugt" => "ult",
        "ule" => "uge",
        "uge" => "ule",
        "olt" => "ogt",
        "ogt" => "olt",
        "ole" => "oge",
        "oge" => "ole",
        "oeq" => "oeq",
        "one" => "one",
        "ord" => "ord",
        "uno" => "uno",
        "ueq" => "ueq",
        "une" => "une",
        _ => return None,
    })
}

fn inverse(cc: &str, float: bool) -> Option<&'static str> {
    Some(match (cc, float) {
        ("eq", _) => "ne",
        ("ne", _) => "eq",
        ("lt", false) => "ge",
        ("ge", false) => "lt",
        ("gt", false) => "le",
        ("le", false) => "gt",
        ("ult", false) => "uge",
        ("uge", false) => "ult",
        ("ugt", false) => "ule",
        ("ule", false) => "ugt",
        ("oeq", true) => "une",
        ("une", true) => "oeq",
        ("one", true) => "ueq",
        ("ueq", true) => "one",
        ("olt", true) => "uge",
        ("uge", true) => "olt",
        ("ogt", true) => "ule",
        ("ule", true) => "ogt",
        ("ole", true) => "ugt",
        ("ugt", true) => "ole",
        ("oge", true) => "ult",
        ("ult", true) => "oge",
        ("ord", true) => "uno",
        ("uno", true) => "ord",
        _ => return None,
    })
}

/// The generic expansions. Returns false when the opcode has none.
pub(super) fn expand(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    let values: Vec<ValueId> = inst.uses().collect();
    let def = inst.defs.first().copied();
    let ty = def.map(|d| cx.ty(d));
    let i1 = cx.i1();

    if op == ops.SELECT_CC {
        let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() else { return Ok(false) };
        let c = cx.setcc_id(cc, values[0], values[1]);
        cx.op_into(ops.SELECT, inst.defs[0], &[c, values[2], values[3]]);
        return Ok(true);
    }
    if op == ops.BR_CC {
        let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() else { return Ok(false) };
        let c = cx.setcc_id(cc, values[0], values[1]);
        let blocks: Vec<Operand> = inst.operands.iter().filter(|o| matches!(o, Operand::Block(_))).cloned().collect();
        let mut operands = vec![Operand::Value(c)];
        operands.extend(blocks);
        cx.emit(ops.BRCOND, Default::default(), operands, Vec::new());
        return Ok(true);
    }
    let (Some(def), Some(ty)) = (def, ty) else { return Ok(false) };
    let bits = types::bits(cx.tables, ty) as i128;
    let is_vector = types::is_vector(cx.tables, ty);

    // i128 arithmetic on SMs that hold i128 in registers but compute in halves.
    let row = cx.row_type(inst).unwrap_or(ty);
    if types::kind(cx.tables, row) == target_desc::tables::TypeKind::Int && types::bits(cx.tables, row) > 64 && cx.sm.type_supported(row) {
        let half = cx.int(types::bits(cx.tables, row) / 2)?;
        if let Some(results) = expand_integer::expand_op(cx, inst, row, half, Halves::Extract)? {
            for (d, r) in inst.defs.iter().zip(results) {
                match r {
                    Expanded::Pair(lo, hi) => {
                        cx.op_into(ops.BUILD_PAIR, *d, &[lo, hi]);
                        cx.pairs.insert(*d, (lo, hi));
                    }
                    Expanded::Value(v) => cx.alias(*d, v),
                }
            }
            return Ok(true);
        }
    }

    if op == ops.SELECT && bits == 1 && !is_vector {
        let t = cx.constant(i1, 1);
        let not_c = cx.op(ops.XOR, i1, &[values[0], t]);
        let a = cx.op(ops.AND, i1, &[values[0], values[1]]);
        let b = cx.op(ops.AND, i1, &[not_c, values[2]]);
        cx.op_into(ops.OR, def, &[a, b]);
        return Ok(true);
    }
    if op == ops.SETCC && types::bits(cx.tables, row) == 1 && !types::is_vector(cx.tables, row) {
        let Some(Operand::CondCode(cc)) = inst.operands.first().cloned() else { return Ok(false) };
        let name = cx.tables.cond_code_info(cc).map(|c| c.name).unwrap_or("?");
        let (a, b) = (values[0], values[1]);
        let t = cx.constant(i1, 1);
        let not = |cx: &mut Cx, v: ValueId| cx.op(ops.XOR, i1, &[v, t]);
        // i1 true is -1 when signed and 1 when unsigned.
        let r = match name {
            "eq" => {
                let x = cx.op(ops.XOR, i1, &[a, b]);
                not(cx, x)
            }
            "ne" => cx.op(ops.XOR, i1, &[a, b]),
            "lt" | "ugt" => {
                let nb = not(cx, b);
                cx.op(ops.AND, i1, &[a, nb])
            }
            "gt" | "ult" => {
                let na = not(cx, a);
                cx.op(ops.AND, i1, &[na, b])
            }
            "le" | "uge" => {
                let nb = not(cx, b);
                cx.op(ops.OR, i1, &[a, nb])
            }
            "ge" | "ule" => {
                let na = not(cx, a);
                cx.op(ops.OR, i1, &[na, b])
            }
            other => return Err(cx.error(format!("condition code {other} does not apply to i1"))),
        };
        cx.alias(def, r);
        return Ok(true);
    }

    if is_vector && atomic_combiner(ops, op).is_some() {
        return atomic_vector(cx, inst);
    }
    // Vector operations with no vector instruction: lane by lane.
    if is_vector && unroll(cx, inst)? {
        return Ok(true);
    }

    if op == ops.TRUNCATE && bits == 1 && !is_vector {
        // To i1: the lowest bit.
        let src_ty = cx.ty(values[0]);
        let one = cx.constant(src_ty, 1);
        let low = cx.op(ops.AND, src_ty, &[values[0], one]);
        let zero = cx.constant(src_ty, 0);
        let r = cx.setcc("ne", low, zero);
        cx.alias(def, r);
        return Ok(true);
    }
    let min_max = [(ops.SMIN, "lt"), (ops.SMAX, "gt"), (ops.UMIN, "ult"), (ops.UMAX, "ugt")];
    if let Some((_, cc)) = min_max.iter().find(|(o, _)| *o == op) {
        let c = cx.setcc(cc, values[0], values[1]);
        cx.op_into(ops.SELECT, def, &[c, values[0], values[1]]);
        return Ok(true);
    }
    let i32t = cx.int(32)?;
    if op == ops.ROTL || op == ops.ROTR {
        let x = values[0];
        let amount = shift_amount_i32(cx, values[1])?;
        let mask = cx.constant(i32t, bits - 1);
        let a = cx.op(ops.AND, i32t, &[amount, mask]);
        let zero = cx.constant(i32t, 0);
        let neg = cx.op(ops.SUB, i32t, &[zero, a]);
        let b = cx.op(ops.AND, i32t, &[neg, mask]);
        let (first, second) = if op == ops.ROTL { (ops.SHL, ops.SRL) } else { (ops.SRL, ops.SHL) };
        let p = cx.op(first, ty, &[x, a]);
        let q = cx.op(second, ty, &[x, b]);
        cx.op_into(ops.OR, def, &[p, q]);
        return Ok(true);
    }
    if op == ops.CTTZ {
        // Trailing zeros are the ones of (~x & (x - 1)).
        let x = values[0];
        let ones = cx.constant(ty, -1);
        let one = cx.constant(ty, 1);
        let not_x = cx.op(ops.XOR, ty, &[x, ones]);
        let below = cx.op(ops.SUB, ty, &[x, one]);
        let mask = cx.op(ops.AND, ty, &[not_x, below]);
        cx.op_into(ops.CTPOP, def, &[mask]);
        return Ok(true);
    }
    if op == ops.BSWAP && bits == 16 {
        let x = values[0];
        let eight = cx.constant(i32t, 8);
        let l = cx.op(ops.SHL, ty, &[x, eight]);
        let r = cx.op(ops.SRL, ty, &[x, eight]);
        cx.op_into(ops.OR, def, &[l, r]);
        return Ok(true);
    }
    if (op == ops.BSWAP || op == ops.BITREVERSE) && bits == 64 {
        let x = values[0];
        let thirty_two = cx.constant(i32t, 32);
        let lo = cx.op(ops.TRUNCATE, i32t, &[x]);
        let shifted = cx.op(ops.SRL, ty, &[x, thirty_two]);
        let hi = cx.op(ops.TRUNCATE, i32t, &[shifted]);
        let lo_r = cx.op(op, i32t, &[lo]);
        let hi_r = cx.op(op, i32t, &[hi]);
        let new_hi = cx.op(ops.ZERO_EXTEND, ty, &[lo_r]);
        let new_lo = cx.op(ops.ZERO_EXTEND, ty, &[hi_r]);
        let up = cx.op(ops.SHL, ty, &[new_hi, thirty_two]);
        cx.op_into(ops.OR, def, &[up, new_lo]);
        return Ok(true);
    }
    if op == ops.SIGN_EXTEND_INREG {
        let from = inst.flags.iter().find_map(|f| f.strip_prefix('i').and_then(|b| b.parse::<i128>().ok())).unwrap_or(bits);
        let n = cx.constant(i32t, bits - from);
        let up = cx.op(ops.SHL, ty, &[values[0], n]);
        cx.op_into(ops.SRA, def, &[up, n]);
        return Ok(true);
    }
    if op == ops.UADDO || op == ops.USUBO {
        let (a, b) = (values[0], values[1]);
        if op == ops.UADDO {
            cx.op_into(ops.ADD, def, &[a, b]);
            let c = cx.setcc("ult", def, a);
            cx.alias(inst.defs[1], c);
        } else {
            cx.op_into(ops.SUB, def, &[a, b]);
            let c = cx.setcc("ult", a, b);
            cx.alias(inst.defs[1], c);
        }
        return Ok(true);
    }
    if op == ops.ADDC || op == ops.SUBC {
        let (a, b) = (values[0], values[1]);
        let (arith, carry_of) = if op == ops.ADDC { (ops.ADD, true) } else { (ops.SUB, false) };
        cx.op_into(arith, def, &[a, b]);
        let c = if carry_of { cx.setcc("ult", def, a) } else { cx.setcc("ult", a, b) };
        cx.alias(inst.defs[1], c);
        return Ok(true);
    }
    if op == ops.ADDE || op == ops.SUBE {
        let (a, b, c_in) = (values[0], values[1], values[2]);
        let c = cx.op(ops.ZERO_EXTEND, ty, &[c_in]);
        if op == ops.ADDE {
            let s1 = cx.op(ops.ADD, ty, &[a, b]);
            cx.op_into(ops.ADD, def, &[s1, c]);
            let c1 = cx.setcc("ult", s1, a);
            let c2 = cx.setcc("ult", def, s1);
            let out = cx.op(ops.OR, i1, &[c1, c2]);
            cx.alias(inst.defs[1], out);
        } else {
            let d1 = cx.op(ops.SUB, ty, &[a, b]);
            cx.op_into(ops.SUB, def, &[d1, c]);
            let b1 = cx.setcc("ult", a, b);
            let b2 = cx.setcc("ult", d1, c);
            let out = cx.op(ops.OR, i1, &[b1, b2]);
            cx.alias(inst.defs[1], out);
        }
        return Ok(true);
    }
    if op == ops.SMUL_LOHI || op == ops.UMUL_LOHI {
        let high = if op == ops.SMUL_LOHI { ops.MULHS } else { ops.MULHU };
        cx.op_into(ops.MUL, def, &[values[0], values[1]]);
        cx.op_into(high, inst.defs[1], &[values[0], values[1]]);
        return Ok(true);
    }
    if types::is_float(cx.tables, ty) {
        let fma_legal = cx.sm.is_legal(ops.FMA, ty);
        if (op == ops.FADD || op == ops.FSUB || op == ops.FMUL) && fma_legal {
            // Exactly rounded through a fused multiply-add: a*1+b, b*(-1)+a, a*b+(-0).
            let (x, y, z) = if op == ops.FADD {
                (values[0], float_splat(cx, ty, 1.0)?, values[1])
            } else if op == ops.FSUB {
                (values[1], float_splat(cx, ty, -1.0)?, values[0])
            } else {
                (values[0], values[1], float_splat(cx, ty, -0.0)?)
            };
            cx.emit(ops.FMA, inst.flags.clone(), vec![Operand::Value(x), Operand::Value(y), Operand::Value(z)], smallvec::smallvec![def]);
            return Ok(true);
        }
        if op == ops.FSUB && cx.sm.is_legal(ops.FADD, ty) {
            let neg = cx.op(ops.FNEG, ty, &[values[1]]);
            cx.emit(ops.FADD, inst.flags.clone(), vec![Operand::Value(values[0]), Operand::Value(neg)], smallvec::smallvec![def]);
            return Ok(true);
        }
        if op == ops.FNEG || op == ops.FABS {
            // The sign bit, on the bits.
            let int_ty = cx.int(bits as u16)?;
            let raw = cx.op(ops.BITCAST, int_ty, &[values[0]]);
            let sign = 1i128 << (bits - 1);
            let (logic, mask) = if op == ops.FNEG { (ops.XOR, sign - (1i128 << bits)) } else { (ops.AND, sign - 1) };
            let m = cx.constant(int_ty, mask);
            let r = cx.op(logic, int_ty, &[raw, m]);
            cx.op_into(ops.BITCAST, def, &[r]);
            return Ok(true);
        }
        if op == ops.FEXP || op == ops.FLOG {
            let ln2 = std::f64::consts::LN_2;
            if op == ops.FEXP {
                let k = cx.fconstant(ty, std::f64::consts::LOG2_E);
                let scaled = cx.op(ops.FMUL, ty, &[values[0], k]);
                cx.emit(ops.FEXP2, inst.flags.clone(), vec![Operand::Value(scaled)], smallvec::smallvec![def]);
            } else {
                let l = cx.op(ops.FLOG2, ty, &[values[0]]);
                let k = cx.fconstant(ty, ln2);
                cx.op_into(ops.FMUL, def, &[l, k]);
            }
            return Ok(true);
        }
        if op == ops.FSINCOS {
            cx.emit(ops.FSIN, inst.flags.clone(), vec![Operand::Value(values[0])], smallvec::smallvec![def]);
            cx.emit(ops.FCOS, inst.flags.clone(), vec![Operand::Value(values[0])], vec![inst.defs[1]]);
            return Ok(true);
        }
    }
    if op == ops.SINT_TO_FP || op == ops.UINT_TO_FP {
        // An integer to bf16 where no direct conversion exists: through f32, rounded
        // to odd first so the final rounding is exact.
        if types::is_f32_top_half(cx.tables, ty) && types::bits(cx.tables, cx.ty(values[0])) <= 64 {
            let odd = soften_float::int_to_f32_odd(cx, values[0], op == ops.SINT_TO_FP)?;
            cx.op_into(ops.FP_ROUND, def, &[odd]);
            return Ok(true);
        }
        let src_bits = types::bits(cx.tables, cx.ty(values[0]));
        if src_bits < 16 {
            let i16t = cx.int(16)?;
            let ext = if op == ops.SINT_TO_FP { ops.SIGN_EXTEND } else { ops.ZERO_EXTEND };
            let w = cx.op(ext, i16t, &[values[0]]);
            cx.emit(op, inst.flags.clone(), vec![Operand::Value(w)], smallvec::smallvec![def]);
            return Ok(true);
        }
    }
    if (op == ops.FP_TO_SINT || op == ops.FP_TO_UINT) && types::is_f32_top_half(cx.tables, cx.ty(values[0])) {
        let f32t = cx.named_type("f32")?;
        let f = cx.op(ops.FP_EXTEND, f32t, &[values[0]]);
        cx.emit(op, inst.flags.clone(), vec![Operand::Value(f)], smallvec::smallvec![def]);
        return Ok(true);
    }
    if op == ops.FP_ROUND && types::is_f32_top_half(cx.tables, ty) && types::bits(cx.tables, cx.ty(values[0])) > 32 {
        let odd = soften_float::f64_to_f32_odd(cx, values[0])?;
        cx.op_into(ops.FP_ROUND, def, &[odd]);
        return Ok(true);
    }
    if is_one_of(op, &[ops.SINT_TO_FP, ops.UINT_TO_FP, ops.FP_TO_SINT, ops.FP_TO_UINT]) {
        let int_side = if op == ops.SINT_TO_FP || op == ops.UINT_TO_FP { values[0] } else { def };
        if types::bits(cx.tables, cx.ty(int_side)) > 64 {
            return wide_int_conversion(cx, inst);
        }
    }
    if is_one_of(op, &[ops.UDIV, ops.UREM, ops.SDIV, ops.SREM]) && types::kind(cx.tables, ty) == target_desc::tables::TypeKind::Int && bits > 64 {
        return divide_by_shifting(cx, inst);
    }
    if atomic_combiner(ops, op).is_some() && !types::is_vector(cx.tables, ty) && bits < 32 {
        return atomic_partword(cx, inst);
    }
    if is_one_of(op, &[ops.ATOMIC_LOAD_ADD, ops.ATOMIC_LOAD_FADD]) && types::is_float(cx.tables, ty) {
        return atomic_through_compare_swap(cx, inst);
    }
    if op == ops.INSERT_VECTOR_ELT || op == ops.CONCAT_VECTORS || op == ops.EXTRACT_SUBVECTOR || op == ops.VECTOR_SHUFFLE || op == ops.EXTRACT_VECTOR_ELT {
        return super::vectors::lanewise(cx, inst);
    }
    let _ = int_splat;
    Ok(false)
}

fn shift_amount_i32(cx: &mut Cx, v: ValueId) -> LResult<ValueId> {
    let ops = cx.ops;
    let i32t = cx.int(32)?;
    let bits = types::bits(cx.tables, cx.ty(v));
    Ok(match bits.cmp(&32) {
        std::cmp::Ordering::Equal => v,
        std::cmp::Ordering::Greater => cx.op(ops.TRUNCATE, i32t, &[v]),
        std::cmp::Ordering::Less => cx.op(ops.ZERO_EXTEND, i32t, &[v]),
    })
}

/// A vector operation done lane by lane: EXTRACT_VECTOR_ELT of each vector operand,
/// the scalar operation, BUILD_VECTOR of the results.
fn unroll(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let ops = cx.ops;
    if [ops.BUILD_VECTOR, ops.EXTRACT_VECTOR_ELT, ops.INSERT_VECTOR_ELT, ops.CONCAT_VECTORS, ops.EXTRACT_SUBVECTOR, ops.VECTOR_SHUFFLE, ops.LOAD, ops.STORE, ops.PHI, ops.COPY, ops.UNDEF, ops.BITCAST, ops.SETCC]
        .contains(&op)
        || inst.defs.len() != 1
    {
        return Ok(false);
    }
    let def = inst.defs[0];
    let ty = cx.ty(def);
    let lanes = types::lanes(cx.tables, ty) as usize;
    let elem = types::element(cx.tables, ty);
    let mut operand_lanes: Vec<Option<Vec<ValueId>>> = Vec::new();
    for o in &inst.operands {
        operand_lanes.push(match o {
            Operand::Value(v) if types::is_vector(cx.tables, cx.ty(*v)) => {
                if types::lanes(cx.tables, cx.ty(*v)) as usize != lanes {
                    return Ok(false);
                }
                Some(super::vectors::elements(cx, *v)?)
            }
            _ => None,
        });
    }
    let mut results = Vec::new();
    for i in 0..lanes {
        let operands = inst.operands.iter().zip(&operand_lanes).map(|(o, l)| match l {
            Some(l) => Operand::Value(l[i]),
            None => o.clone(),
        }).collect();
        let d = cx.derived(def, &format!("l{i}"), elem);
        cx.emit(op, inst.flags.clone(), operands, smallvec::smallvec![d]);
        results.push(d);
    }
    cx.op_into(ops.BUILD_VECTOR, def, &results);
    Ok(true)
}

fn is_one_of(op: OpcodeId, list: &[OpcodeId]) -> bool {
    list.contains(&op)
}

/// A float atomic add the SM has no instruction for, as a compare-and-swap loop on
/// the bits (the reference's "Atomic CAS Expansion"):
///
/// ```text
///   %init = LOAD %p ; BR loop
/// loop:
///   %old = PHI %init, entry, %seen, loop
///   %seen = ATOMIC_CMP_SWAP %p, %old, bits(float(%old) + %v)
///   BRCOND %seen != %old, loop, done
/// done:
///   %result = float(%old)
/// ```
fn atomic_through_compare_swap(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let ops = cx.ops;
    let values: Vec<ValueId> = inst.uses().collect();
    let (ptr, v) = (values[0], values[1]);
    let def = inst.defs[0];
    let ty = cx.ty(def);
    let int_ty = cx.int(types::bits(cx.tables, ty))?;
    if !cx.sm.is_legal(ops.ATOMIC_CMP_SWAP, int_ty) {
        return Ok(false);
    }
    let old = compare_swap_loop(cx, inst, ptr, int_ty, |cx, old| {
        let old_f = cx.op(ops.BITCAST, ty, &[old]);
        let new_f = cx.op(ops.FADD, ty, &[old_f, v]);
        Ok(cx.op(ops.BITCAST, int_ty, &[new_f]))
    })?;
    cx.op_into(ops.BITCAST, def, &[old]);
    Ok(true)
}

/// The loop every compare-and-swap expansion shares: reads the word at `ptr` (of
/// `int_ty`), computes the new word from the old one with `update` inside the loop,
/// swaps it in with `inst`'s ordering and scope flags, and repeats until the word was
/// not changed meanwhile. Returns the old word, valid in the block after the loop.
fn compare_swap_loop(cx: &mut Cx, inst: &Inst, ptr: ValueId, int_ty: VtId, update: impl FnOnce(&mut Cx, ValueId) -> LResult<ValueId>) -> LResult<ValueId> {
    let ops = cx.ops;
    let def = inst.defs[0];
    let entry = cx.current_block();
    let body = cx.reserve_block();
    let done = cx.reserve_block();
    let init = cx.derived(def, "init", int_ty);
    cx.emit(ops.LOAD, thin_vec::thin_vec!["volatile"], vec![Operand::Value(ptr)], smallvec::smallvec![init]);
    cx.emit(ops.BR, Default::default(), vec![Operand::Block(body)], Vec::new());
    cx.switch_to_block(body, "atomic.loop");
    let old = cx.derived(def, "old", int_ty);
    let seen = cx.derived(def, "seen", int_ty);
    cx.emit(ops.PHI, Default::default(), vec![Operand::Value(init), Operand::Block(entry), Operand::Value(seen), Operand::Block(body)], smallvec::smallvec![old]);
    let new = update(cx, old)?;
    cx.emit(ops.ATOMIC_CMP_SWAP, inst.flags.clone(), vec![Operand::Value(ptr), Operand::Value(old), Operand::Value(new)], smallvec::smallvec![seen]);
    let again = cx.setcc("ne", seen, old);
    cx.emit(ops.BRCOND, Default::default(), vec![Operand::Value(again), Operand::Block(body), Operand::Block(done)], Vec::new());
    cx.switch_to_block(done, "atomic.done");
    Ok(old)
}

/// How a read-modify-write atomic combines the value in memory with its operand.
#[derive(Copy, Clone)]
enum Combine {
    /// An integer operation (ADD, AND, SMIN, ...); for a float type, ADD is FADD.
    Op(OpcodeId),
    Swap,
    CompareSwap,
}

fn atomic_combiner(ops: &super::Ops, op: OpcodeId) -> Option<Combine> {
    let pairs = [
        (ops.ATOMIC_LOAD_ADD, ops.ADD),
        (ops.ATOMIC_LOAD_FADD, ops.FADD),
        (ops.ATOMIC_LOAD_SUB, ops.SUB),
        (ops.ATOMIC_LOAD_AND, ops.AND),
        (ops.ATOMIC_LOAD_OR, ops.OR),
        (ops.ATOMIC_LOAD_XOR, ops.XOR),
        (ops.ATOMIC_LOAD_MIN, ops.SMIN),
        (ops.ATOMIC_LOAD_MAX, ops.SMAX),
        (ops.ATOMIC_LOAD_UMIN, ops.UMIN),
        (ops.ATOMIC_LOAD_UMAX, ops.UMAX),
    ];
    if op == ops.ATOMIC_SWAP {
        return Some(Combine::Swap);
    }
    if op == ops.ATOMIC_CMP_SWAP {
        return Some(Combine::CompareSwap);
    }
    pairs.iter().find(|(atomic, _)| *atomic == op).map(|(_, combine)| Combine::Op(*combine))
}

pub(super) fn is_atomic(ops: &super::Ops, op: OpcodeId) -> bool {
    atomic_combiner(ops, op).is_some()
}

/// An atomic on a vector. Up to 64 bits the vector is one integer word and the update a
/// compare-and-swap loop on it, so the whole vector changes atomically (a 16-bit word
/// then becomes a part-word loop in turn); a wider vector is updated lane by lane, each
/// lane atomic at its own address, as PTX defines its own vector `atom`. A wider
/// compare-and-swap has no lane-by-lane meaning and is an error.
///
/// ```text
///   %init = LOAD.volatile %p (as the integer) ; BR loop
/// loop:
///   %old = PHI %init, entry, %seen, loop
///   %new = bits(combine(vector(%old), %v))
///   %seen = ATOMIC_CMP_SWAP %p, %old, %new ; BRCOND %seen != %old, loop, done
/// done:
///   %result = vector(%old)
/// ```
fn atomic_vector(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let ops = cx.ops;
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let Some(combine) = atomic_combiner(ops, op) else { return Ok(false) };
    let values: Vec<ValueId> = inst.uses().collect();
    let def = inst.defs[0];
    let ty = cx.ty(def);
    let bits = types::bits(cx.tables, ty);
    let element = types::element(cx.tables, ty);
    let ptr = values[0];
    if bits > 64 {
        if matches!(combine, Combine::CompareSwap) {
            return Err(cx.error(format!("a compare-and-swap of {} ({bits} bits) has no instruction and no lane-by-lane meaning", cx.type_name(ty))));
        }
        let i64t = cx.int(64)?;
        let element_bytes = i128::from(types::bits(cx.tables, element) / 8);
        let operand = super::vectors::elements(cx, values[1])?;
        let mut results = Vec::new();
        for (k, lane) in operand.into_iter().enumerate() {
            let offset = cx.constant(i64t, k as i128 * element_bytes);
            let address = cx.op(ops.PTR_ADD, cx.ty(ptr), &[ptr, offset]);
            let d = cx.derived(def, &format!("l{k}"), element);
            cx.emit(op, inst.flags.clone(), vec![Operand::Value(address), Operand::Value(lane)], smallvec::smallvec![d]);
            results.push(d);
        }
        cx.op_into(ops.BUILD_VECTOR, def, &results);
        return Ok(true);
    }
    let int_ty = cx.int(bits)?;
    let float_elements = types::is_float(cx.tables, element);
    let old = compare_swap_loop(cx, inst, ptr, int_ty, |cx, old| {
        Ok(match combine {
            Combine::Swap => cx.op(ops.BITCAST, int_ty, &[values[1]]),
            Combine::CompareSwap => {
                let expected = cx.op(ops.BITCAST, int_ty, &[values[1]]);
                let replacement = cx.op(ops.BITCAST, int_ty, &[values[2]]);
                let equal = cx.setcc("eq", old, expected);
                cx.select(equal, replacement, old)
            }
            Combine::Op(combine) => {
                let combine = if combine == ops.ADD && float_elements { ops.FADD } else { combine };
                let current = cx.op(ops.BITCAST, ty, &[old]);
                let updated = cx.op(combine, ty, &[current, values[1]]);
                cx.op(ops.BITCAST, int_ty, &[updated])
            }
        })
    })?;
    cx.op_into(ops.BITCAST, def, &[old]);
    Ok(true)
}

/// An atomic on an 8- or 16-bit value (integer or float) the SM has no instruction
/// for: a compare-and-swap loop on the aligned 32-bit word that holds it, as LLVM's
/// AtomicExpand does for part-word atomics (the reference's "Atomic CAS Expansion"):
///
/// ```text
///   %word = %p - (%p & 3) ; %shift = (%p & 3) * 8 ; %mask = ((1 << bits) - 1) << %shift
///   %init = LOAD.volatile %word ; BR loop
/// loop:
///   %old = PHI %init, entry, %seen, loop
///   %part = TRUNCATE (%old >> %shift)            ; the value in memory
///   %new = (%old & ~%mask) | (ZERO_EXTEND combine(%part, %v) << %shift)
///   %seen = ATOMIC_CMP_SWAP %word, %old, %new     ; same ordering and scope flags
///   BRCOND %seen != %old, loop, done
/// done:
///   %result = %part
/// ```
///
/// A compare-and-swap whose comparison fails writes the word back unchanged. The loop's
/// narrow operations are legalized like any others (an i8 is promoted to i16 after).
fn atomic_partword(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let ops = cx.ops;
    let Some(op) = inst.opcode.generic() else { return Ok(false) };
    let Some(combine) = atomic_combiner(ops, op) else { return Ok(false) };
    let values: Vec<ValueId> = inst.uses().collect();
    let def = inst.defs[0];
    let ty = cx.ty(def);
    let bits = types::bits(cx.tables, ty);
    let (i32t, i64t) = (cx.int(32)?, cx.int(64)?);
    if !cx.sm.is_legal(ops.ATOMIC_CMP_SWAP, i32t) {
        return Ok(false);
    }
    let part_int = cx.int(bits)?;
    let is_float = types::is_float(cx.tables, ty);
    let ptr = values[0];
    let ptr_ty = cx.ty(ptr);
    // The aligned word and where the part sits in it (little-endian).
    let address = cx.op(ops.BITCAST, i64t, &[ptr]);
    let three = cx.constant(i64t, 3);
    let low = cx.op(ops.AND, i64t, &[address, three]);
    let zero64 = cx.constant(i64t, 0);
    let back = cx.op(ops.SUB, i64t, &[zero64, low]);
    let word = cx.op(ops.PTR_ADD, ptr_ty, &[ptr, back]);
    let low32 = cx.op(ops.TRUNCATE, i32t, &[low]);
    let three32 = cx.constant(i32t, 3);
    let shift = cx.op(ops.SHL, i32t, &[low32, three32]);
    let ones = cx.constant(i32t, (1i128 << bits) - 1);
    let mask = cx.op(ops.SHL, i32t, &[ones, shift]);
    let all = cx.constant(i32t, -1);
    let keep = cx.op(ops.XOR, i32t, &[mask, all]);
    let as_int = |cx: &mut Cx, v: ValueId| if is_float { cx.op(ops.BITCAST, part_int, &[v]) } else { v };

    let old = compare_swap_loop(cx, inst, word, i32t, |cx, old| {
        let shifted = cx.op(ops.SRL, i32t, &[old, shift]);
        let part = cx.op(ops.TRUNCATE, part_int, &[shifted]);
        let new_part = match combine {
            Combine::Swap => as_int(cx, values[1]),
            Combine::CompareSwap => {
                let (expected, replacement) = (as_int(cx, values[1]), as_int(cx, values[2]));
                let equal = cx.setcc("eq", part, expected);
                cx.select(equal, replacement, part)
            }
            Combine::Op(combine) if is_float => {
                let float_op = if combine == ops.ADD { ops.FADD } else { combine };
                let current = cx.op(ops.BITCAST, ty, &[part]);
                let sum = cx.op(float_op, ty, &[current, values[1]]);
                cx.op(ops.BITCAST, part_int, &[sum])
            }
            Combine::Op(combine) => cx.op(combine, part_int, &[part, values[1]]),
        };
        let widened = cx.op(ops.ZERO_EXTEND, i32t, &[new_part]);
        let placed = cx.op(ops.SHL, i32t, &[widened, shift]);
        let kept = cx.op(ops.AND, i32t, &[old, keep]);
        Ok(cx.op(ops.OR, i32t, &[kept, placed]))
    })?;
    let result = cx.op(ops.SRL, i32t, &[old, shift]);
    if is_float {
        let bits_value = cx.op(ops.TRUNCATE, part_int, &[result]);
        cx.op_into(ops.BITCAST, def, &[bits_value]);
    } else {
        cx.op_into(ops.TRUNCATE, def, &[result]);
    }
    Ok(true)
}

/// Division and remainder of integers wider than any divide instruction (i128), as a
/// restoring shift-and-subtract loop, one quotient bit per iteration (signed forms
/// divide the magnitudes and fix the signs). The loop's wide operations are legalized
/// like any others.
///
/// ```text
///   BR loop
/// loop:
///   %q, %r, %i = PHI ...          ; 0, 0, width - 1 on entry
///   %r1 = (%r << 1) | ((%n >> %i) & 1)
///   %ge = %r1 >=u %d
///   %r2 = %ge ? %r1 - %d : %r1 ;  %q2 = (%q << 1) | %ge
///   BRCOND %i != 0, loop, done     ; %i2 = %i - 1
/// ```
fn divide_by_shifting(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let ops = cx.ops;
    let op = inst.opcode.generic().unwrap_or(ops.UDIV);
    let values: Vec<ValueId> = inst.uses().collect();
    let (n, d) = (values[0], values[1]);
    let def = inst.defs[0];
    let ty = cx.ty(def);
    let bits = types::bits(cx.tables, ty) as i128;
    let i32t = cx.int(32)?;
    let signed = op == ops.SDIV || op == ops.SREM;
    let remainder = op == ops.UREM || op == ops.SREM;
    let zero = cx.constant(ty, 0);
    let (un, ud, signs) = if signed {
        let neg_n = cx.setcc("lt", n, zero);
        let neg_d = cx.setcc("lt", d, zero);
        let minus_n = cx.op(ops.SUB, ty, &[zero, n]);
        let minus_d = cx.op(ops.SUB, ty, &[zero, d]);
        let un = cx.select(neg_n, minus_n, n);
        let ud = cx.select(neg_d, minus_d, d);
        (un, ud, Some((neg_n, neg_d)))
    } else {
        (n, d, None)
    };
    let top = cx.constant(i32t, bits - 1);
    let entry = cx.current_block();
    let body = cx.reserve_block();
    let done = cx.reserve_block();
    cx.emit(ops.BR, Default::default(), vec![Operand::Block(body)], Vec::new());
    cx.switch_to_block(body, "divide.loop");
    let (q, r, i) = (cx.derived(def, "q", ty), cx.derived(def, "r", ty), cx.derived(def, "bit", i32t));
    let (q2, r2, i2) = (cx.derived(def, "q", ty), cx.derived(def, "r", ty), cx.derived(def, "bit", i32t));
    for (phi, init, next) in [(q, zero, q2), (r, zero, r2), (i, top, i2)] {
        cx.emit(ops.PHI, Default::default(), vec![Operand::Value(init), Operand::Block(entry), Operand::Value(next), Operand::Block(body)], smallvec::smallvec![phi]);
    }
    let one = cx.constant(ty, 1);
    let one32 = cx.constant(i32t, 1);
    let zero32 = cx.constant(i32t, 0);
    let shifted_n = cx.op(ops.SRL, ty, &[un, i]);
    let bit = cx.op(ops.AND, ty, &[shifted_n, one]);
    let r_shifted = cx.op(ops.SHL, ty, &[r, one32]);
    let r1 = cx.op(ops.OR, ty, &[r_shifted, bit]);
    let ge = cx.setcc("uge", r1, ud);
    let reduced = cx.op(ops.SUB, ty, &[r1, ud]);
    cx.op_into(ops.SELECT, r2, &[ge, reduced, r1]);
    let q_shifted = cx.op(ops.SHL, ty, &[q, one32]);
    let q_bit = cx.select(ge, one, zero);
    cx.op_into(ops.OR, q2, &[q_shifted, q_bit]);
    cx.op_into(ops.SUB, i2, &[i, one32]);
    let more = cx.setcc("ne", i, zero32);
    cx.emit(ops.BRCOND, Default::default(), vec![Operand::Value(more), Operand::Block(body), Operand::Block(done)], Vec::new());
    cx.switch_to_block(done, "divide.done");
    let magnitude = if remainder { r2 } else { q2 };
    let result = match signs {
        None => magnitude,
        Some((neg_n, neg_d)) => {
            let negative = if remainder { neg_n } else { cx.op(ops.XOR, cx.i1(), &[neg_n, neg_d]) };
            let minus = cx.op(ops.SUB, ty, &[zero, magnitude]);
            cx.select(negative, minus, magnitude)
        }
    };
    cx.alias(def, result);
    Ok(true)
}

/// Conversions between floats and 128-bit integers, through 64-bit conversions.
///
/// To float: a value whose high half is zero converts directly; otherwise the top 64
/// bits (with a sticky bit for everything shifted out, so the one rounding is still
/// correct) convert and are scaled back by an exact power of two. Signed values convert
/// their magnitude. From float: the high half is the float scaled by 2^-64 and
/// truncated, the low half what remains (exact: both are multiples of the float's ulp).
fn wide_int_conversion(cx: &mut Cx, inst: &Inst) -> LResult<bool> {
    let ops = cx.ops;
    let op = inst.opcode.generic().unwrap_or(ops.SINT_TO_FP);
    let x = inst.uses().next().ok_or_else(|| cx.error("conversion without an operand"))?;
    let def = inst.defs[0];
    let i64t = cx.int(64)?;
    let i32t = cx.int(32)?;
    if op == ops.SINT_TO_FP || op == ops.UINT_TO_FP {
        let wide = cx.ty(x);
        let float = cx.ty(def);
        let zero = cx.constant(wide, 0);
        let (magnitude, negative) = if op == ops.SINT_TO_FP {
            let negative = cx.setcc("lt", x, zero);
            let minus = cx.op(ops.SUB, wide, &[zero, x]);
            (cx.select(negative, minus, x), Some(negative))
        } else {
            (x, None)
        };
        let sixty_four = cx.constant(i32t, 64);
        let high = cx.op(ops.SRL, wide, &[magnitude, sixty_four]);
        let high64 = cx.op(ops.TRUNCATE, i64t, &[high]);
        let low64 = cx.op(ops.TRUNCATE, i64t, &[magnitude]);
        let direct = cx.op(ops.UINT_TO_FP, float, &[low64]);
        // shift = 64 - clz(high), in 1..=64 when high != 0 (and 1 otherwise, so the
        // unused path's shifts stay defined)
        let zero64 = cx.constant(i64t, 0);
        let fits = cx.setcc("eq", high64, zero64);
        let leading = cx.op(ops.CTLZ, i64t, &[high64]);
        let leading32 = cx.op(ops.TRUNCATE, i32t, &[leading]);
        let exact_shift = cx.op(ops.SUB, i32t, &[sixty_four, leading32]);
        let one_shift = cx.constant(i32t, 1);
        let shift = cx.select(fits, one_shift, exact_shift);
        let top = cx.op(ops.SRL, wide, &[magnitude, shift]);
        let top64 = cx.op(ops.TRUNCATE, i64t, &[top]);
        let one = cx.constant(wide, 1);
        let bit = cx.op(ops.SHL, wide, &[one, shift]);
        let mask = cx.op(ops.SUB, wide, &[bit, one]);
        let lost = cx.op(ops.AND, wide, &[magnitude, mask]);
        let inexact = cx.setcc("ne", lost, zero);
        let sticky = cx.op(ops.ZERO_EXTEND, i64t, &[inexact]);
        let rounded_input = cx.op(ops.OR, i64t, &[top64, sticky]);
        let converted = cx.op(ops.UINT_TO_FP, float, &[rounded_input]);
        // * 2^(shift - 1) * 2, both exact powers of two
        let one32 = cx.constant(i32t, 1);
        let shift_less = cx.op(ops.SUB, i32t, &[shift, one32]);
        let one64 = cx.constant(i64t, 1);
        let power = cx.op(ops.SHL, i64t, &[one64, shift_less]);
        let scale = cx.op(ops.UINT_TO_FP, float, &[power]);
        let two = float_splat(cx, float, 2.0)?;
        let scaled = cx.op(ops.FMUL, float, &[converted, scale]);
        let scaled = cx.op(ops.FMUL, float, &[scaled, two]);
        let unsigned = cx.select(fits, direct, scaled);
        let result = match negative {
            Some(n) => {
                let flipped = cx.op(ops.FNEG, float, &[unsigned]);
                cx.select(n, flipped, unsigned)
            }
            None => unsigned,
        };
        cx.alias(def, result);
        return Ok(true);
    }
    // Float to a 128-bit integer (values out of range are undefined, as in the spec,
    // unless `.sat` clamps them: NaN to 0, beyond the range to its ends).
    let wide = cx.ty(def);
    let float = cx.ty(x);
    let f32t = cx.named_type("f32")?;
    let unclamped = if types::bits(cx.tables, float) < 32 { cx.op(ops.FP_EXTEND, f32t, &[x]) } else { x };
    let ft = cx.ty(unclamped);
    let zero_f = float_splat(cx, ft, 0.0)?;
    let signed = op == ops.FP_TO_SINT;
    let saturation = if inst.has_flag("sat") {
        let bits = i32::from(types::bits(cx.tables, wide));
        // 2^127 (2^128 unsigned; inf in f32, above every finite f32) is the first value
        // too large; below -2^127 (below 0 unsigned) too small.
        let limit = float_splat(cx, ft, 2f64.powi(if signed { bits - 1 } else { bits }))?;
        let floor = if signed { float_splat(cx, ft, -(2f64.powi(bits - 1)))? } else { zero_f };
        let too_big = cx.setcc("oge", unclamped, limit);
        let too_small = cx.setcc("olt", unclamped, floor);
        let nan = cx.setcc("uno", unclamped, unclamped);
        let out_of_range = cx.op(ops.OR, cx.i1(), &[too_big, too_small]);
        let bad = cx.op(ops.OR, cx.i1(), &[out_of_range, nan]);
        Some((too_big, too_small, nan, bad))
    } else {
        None
    };
    let source = match saturation {
        Some((_, _, _, bad)) => cx.select(bad, zero_f, unclamped),
        None => unclamped,
    };
    let negative = cx.setcc("olt", source, zero_f);
    let magnitude = if signed { cx.op(ops.FABS, ft, &[source]) } else { source };
    let inverse = float_splat(cx, ft, 2f64.powi(-64))?;
    let two64 = float_splat(cx, ft, 2f64.powi(64))?;
    let scaled = cx.op(ops.FMUL, ft, &[magnitude, inverse]);
    let high_f = cx.op(ops.FTRUNC, ft, &[scaled]);
    let high = cx.op(ops.FP_TO_UINT, i64t, &[high_f]);
    let back = cx.op(ops.FMUL, ft, &[high_f, two64]);
    let rest = cx.op(ops.FSUB, ft, &[magnitude, back]);
    let low = cx.op(ops.FP_TO_UINT, i64t, &[rest]);
    let high_w = cx.op(ops.ZERO_EXTEND, wide, &[high]);
    let sixty_four = cx.constant(i32t, 64);
    let high_part = cx.op(ops.SHL, wide, &[high_w, sixty_four]);
    let low_w = cx.op(ops.ZERO_EXTEND, wide, &[low]);
    let unsigned = cx.op(ops.OR, wide, &[high_part, low_w]);
    let mut result = if signed {
        let zero = cx.constant(wide, 0);
        let minus = cx.op(ops.SUB, wide, &[zero, unsigned]);
        cx.select(negative, minus, unsigned)
    } else {
        unsigned
    };
    if let Some((too_big, too_small, nan, _)) = saturation {
        let (max, min) = if signed { (i128::MAX, i128::MIN) } else { (-1, 0) };
        let (max, min, zero) = (cx.constant(wide, max), cx.constant(wide, min), cx.constant(wide, 0));
        result = cx.select(nan, zero, result);
        result = cx.select(too_small, min, result);
        result = cx.select(too_big, max, result);
    }
    cx.alias(def, result);
    Ok(true)
}

/// Whether `ty`'s register class on the SM holds values only to move, load and store.
fn storage_only(cx: &Cx, ty: VtId) -> bool {
    cx.tables.register_type(cx.sm, ty).is_some_and(|(class, _)| class.storage_only)
}
