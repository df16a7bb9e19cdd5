//! Parameters and results whose types no register holds whole: the first step of
//! legalization, before the type rounds of [`super::Cx`].
//!
//! Two boundaries, two rules (reference: cicc-type-legalization.txt, "Argument
//! Lowering"; LLVM's NVPTX backend splits arguments the same way):
//!
//! - **Device functions** have no callers outside the module (MIR has no declarations),
//!   so their signature is legalized with them: a parameter or result of an illegal type
//!   becomes the legal types it is carried as ([`carried_types`]: an i128 before sm_70 is
//!   two i64, a v4f32 four f32, an i8 an i16, a bf16 before sm_80 an i16), and an i1, whose
//!   `.pred` register cannot be a `.param` value, travels as its class's `param_carrier`
//!   (register-classes.yaml). Every `CALL` and `RET` splits its values into those parts
//!   and every `ARG` and call result joins them back; the joins and splits are the ones
//!   the type rounds fold away.
//! - **Kernels** are called by the host with the parameter's in-memory image, so their
//!   signature stays: a parameter no register holds whole is declared as bytes
//!   (`.param .align 16 .b8 k_param_1[16]`) and read in parts at byte offsets
//!   (`ARG 1, 8`), each part then legalized like any value.
//!
//! The rewritten module is ordinary MIR: it verifies, prints, parses back and runs in
//! the interpreter with the same results.

use target_desc::tables::{SmTables, TargetTables, VtId};

use super::types::{self, TypeAction};
use super::{Cx, LResult, LegalizeError, Ops};
use crate::mir::{Function, FunctionKind, Inst, Module, Operand, Param, ValueId};

/// The carrier of a register type whose class cannot be a `.param` value (i1 -> i16).
fn carrier(tables: &TargetTables, sm: &SmTables, ty: VtId) -> Option<VtId> {
    tables.register_type(sm, ty).and_then(|(class, _)| class.param_carrier).map(VtId)
}

/// The legal types a value of `ty` crosses a device-function boundary as, in order.
pub fn carried_types(tables: &TargetTables, sm: &SmTables, ty: VtId) -> Result<Vec<VtId>, String> {
    Ok(match types::type_action(tables, sm, ty)? {
        TypeAction::Legal => vec![carrier(tables, sm, ty).unwrap_or(ty)],
        TypeAction::Promote(t) | TypeAction::Soften(t) | TypeAction::Widen(t) => carried_types(tables, sm, t)?,
        TypeAction::Expand(half) | TypeAction::Split(half) => carried_types(tables, sm, half)?.repeat(2),
        TypeAction::Scalarize(element) => carried_types(tables, sm, element)?.repeat(types::lanes(tables, ty) as usize),
    })
}

/// Whether a kernel parameter of `ty` is declared as bytes and read in parts.
pub fn read_as_bytes(tables: &TargetTables, sm: &SmTables, ty: VtId) -> bool {
    match types::type_action(tables, sm, ty) {
        Ok(TypeAction::Legal) => carrier(tables, sm, ty).is_some(),
        // A scalar the type rounds carry whole (`ARG.zext.i8`, a softened float's bits).
        Ok(TypeAction::Promote(_) | TypeAction::Soften(_)) => false,
        Ok(_) => true,
        Err(_) => false,
    }
}

/// The bytes a value of `ty` occupies in memory (an i1 takes a byte).
pub fn store_bytes(tables: &TargetTables, ty: VtId) -> u32 {
    tables.type_info(ty).map_or(1, crate::mir::verifier::store_bytes)
}

/// A device function's legalized signature: per original parameter, how many carried
/// parameters replace it.
struct Signature {
    param_parts: Vec<usize>,
    changed: bool,
}

/// Whether [`legalize_boundaries`] leaves functions with these headers as they are
/// (it rewrites nothing and reports nothing): every device function's parameters and
/// results carried as their own types, and no kernel parameter read as bytes. Reads
/// only the functions' signatures, so headers without bodies answer for the module.
pub fn keeps_boundaries(functions: &[Function], tables: &TargetTables, sm: &SmTables) -> bool {
    functions.iter().all(|f| match f.kind {
        FunctionKind::Device => f.params.iter().map(|p| p.ty).chain(f.returns.iter().copied()).all(|ty| carried_types(tables, sm, ty).is_ok_and(|c| c == [ty])),
        FunctionKind::Kernel => !f.params.iter().any(|p| read_as_bytes(tables, sm, p.ty)),
    })
}

/// Rewrites every device function's signature and every kernel's byte-image
/// parameters. Errors name the function they are in.
pub(super) fn legalize_boundaries(module: &mut Module, tables: &TargetTables, sm: &SmTables, ops: &Ops) -> Result<(), Vec<(usize, LegalizeError)>> {
    if keeps_boundaries(&module.functions, tables, sm) {
        return Ok(());
    }
    let mut errors = Vec::new();
    // New signatures first: callers are rewritten against them.
    let mut signatures = std::collections::HashMap::new();
    for (index, f) in module.functions.iter().enumerate() {
        if f.kind != FunctionKind::Device {
            continue;
        }
        let carried = |ty: VtId| carried_types(tables, sm, ty).map_err(|m| LegalizeError { loc: f.loc, message: m });
        let mut parts = Vec::new();
        let mut changed = false;
        for p in &f.params {
            match carried(p.ty) {
                Ok(c) => {
                    changed |= c != [p.ty];
                    parts.push(c.len());
                }
                Err(e) => errors.push((index, e)),
            }
        }
        for &r in &f.returns {
            match carried(r) {
                Ok(c) => changed |= c != [r],
                Err(e) => errors.push((index, e)),
            }
        }
        signatures.insert(f.name.clone(), Signature { param_parts: parts, changed });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for (index, f) in module.functions.iter_mut().enumerate() {
        let mut cx = Cx::new(tables, sm, ops, f, false);
        cx.values = std::mem::take(&mut f.values);
        let own = signatures.get(&f.name).filter(|s| s.changed);
        let kernel = f.kind == FunctionKind::Kernel;
        let mut result = Ok(());
        'blocks: for block in &mut f.blocks {
            cx.out = Vec::with_capacity(block.insts.len());
            for inst in std::mem::take(&mut block.insts) {
                cx.loc = inst.loc;
                if let Err(e) = rewrite(&mut cx, &inst, own, kernel, &f.params, &signatures) {
                    result = Err(e);
                    break 'blocks;
                }
            }
            block.insts = std::mem::take(&mut cx.out);
        }
        if let (Ok(()), Some(_)) = (&result, own) {
            result = rewrite_signature(&cx, f);
        }
        f.values = std::mem::take(&mut cx.values);
        if let Err(e) = result {
            errors.push((index, e));
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// The function's own parameter and result lists, carried.
fn rewrite_signature(cx: &Cx, f: &mut crate::mir::Function) -> LResult<()> {
    let mut params = Vec::new();
    for p in &f.params {
        let carried = carried_types(cx.tables, cx.sm, p.ty).map_err(|m| cx.error(m))?;
        if carried == [p.ty] {
            params.push(p.clone());
            continue;
        }
        for (k, ty) in carried.into_iter().enumerate() {
            let mut name = format!("{}.{k}", p.name);
            while f.params.iter().chain(&params).any(|q| q.name == name) {
                name.push('_');
            }
            params.push(Param { name, ty, noalias: false });
        }
    }
    let mut returns = Vec::new();
    for &r in &f.returns {
        returns.extend(carried_types(cx.tables, cx.sm, r).map_err(|m| cx.error(m))?);
    }
    f.params = params;
    f.returns = returns;
    Ok(())
}

fn rewrite(
    cx: &mut Cx,
    inst: &Inst,
    own: Option<&Signature>,
    kernel: bool,
    params: &[Param],
    signatures: &std::collections::HashMap<String, Signature>,
) -> LResult<()> {
    let ops = cx.ops;
    let Some(op) = inst.opcode.generic() else {
        cx.out.push(inst.clone());
        return Ok(());
    };
    let arg_index = match inst.operands.first() {
        Some(Operand::Int(i)) if op == ops.ARG && inst.operands.len() == 1 && inst.flags.is_empty() => usize::try_from(i.get()).ok(),
        _ => None,
    };
    if let (Some(i), Some(signature), Some(&def)) = (arg_index, own, inst.defs.first()) {
        // A device function's parameter: read its carried parts and join them.
        let base: usize = signature.param_parts.iter().take(i).sum();
        let ty = cx.ty(def);
        let carried = carried_types(cx.tables, cx.sm, ty).map_err(|m| cx.error(m))?;
        if carried == [ty] {
            cx.emit(ops.ARG, Default::default(), vec![Operand::int(base as i128)], smallvec::smallvec![def]);
            return Ok(());
        }
        let mut leaves = Vec::new();
        for (k, part_ty) in carried.into_iter().enumerate() {
            let leaf = cx.derived(def, &format!("arg{k}"), part_ty);
            cx.emit(ops.ARG, Default::default(), vec![Operand::int((base + k) as i128)], smallvec::smallvec![leaf]);
            leaves.push(leaf);
        }
        join(cx, ty, &mut leaves.into_iter(), Some(def))?;
        return Ok(());
    }
    if let (Some(i), true, Some(&def)) = (arg_index, kernel, inst.defs.first()) {
        let ty = cx.ty(def);
        if params.get(i).is_some_and(|p| p.ty == ty) && read_as_bytes(cx.tables, cx.sm, ty) {
            read_image(cx, i as i128, ty, 0, Some(def))?;
            return Ok(());
        }
    }
    if op == ops.RET && own.is_some() {
        let mut operands = Vec::new();
        for o in &inst.operands {
            match o {
                Operand::Value(v) => operands.extend(split(cx, *v)?.into_iter().map(Operand::Value)),
                other => operands.push(other.clone()),
            }
        }
        cx.emit(op, inst.flags.clone(), operands, Vec::new());
        return Ok(());
    }
    if op == ops.CALL {
        let callee = match inst.operands.first() {
            Some(Operand::Symbol(s)) => signatures.get(&**s).filter(|s| s.changed),
            _ => None,
        };
        if callee.is_some() {
            let mut operands = Vec::new();
            for o in &inst.operands {
                match o {
                    Operand::Value(v) => operands.extend(split(cx, *v)?.into_iter().map(Operand::Value)),
                    other => operands.push(other.clone()),
                }
            }
            let mut defs = Vec::new();
            let mut joins = Vec::new();
            for &d in &inst.defs {
                let ty = cx.ty(d);
                let carried = carried_types(cx.tables, cx.sm, ty).map_err(|m| cx.error(m))?;
                if carried == [ty] {
                    defs.push(d);
                    continue;
                }
                let leaves: Vec<ValueId> = carried.iter().enumerate().map(|(k, t)| cx.derived(d, &format!("ret{k}"), *t)).collect();
                defs.extend(&leaves);
                joins.push((d, ty, leaves));
            }
            cx.emit(op, inst.flags.clone(), operands, defs);
            for (d, ty, leaves) in joins {
                join(cx, ty, &mut leaves.into_iter(), Some(d))?;
            }
            return Ok(());
        }
    }
    cx.out.push(inst.clone());
    Ok(())
}

/// The parts `v` is carried as, emitting the instructions that take it apart.
fn split(cx: &mut Cx, v: ValueId) -> LResult<Vec<ValueId>> {
    let ops = cx.ops;
    let ty = cx.ty(v);
    let action = types::type_action(cx.tables, cx.sm, ty).map_err(|m| cx.error(m))?;
    let i32t = cx.int(32)?;
    Ok(match action {
        TypeAction::Legal => match carrier(cx.tables, cx.sm, ty) {
            Some(c) => vec![cx.op(ops.ZERO_EXTEND, c, &[v])],
            None => vec![v],
        },
        TypeAction::Promote(wide) => {
            let x = cx.op(ops.ANY_EXTEND, wide, &[v]);
            split(cx, x)?
        }
        TypeAction::Soften(int) => {
            let x = cx.op(ops.BITCAST, int, &[v]);
            split(cx, x)?
        }
        TypeAction::Expand(half) => {
            let mut parts = Vec::new();
            for k in 0..2 {
                let h = cx.derived(v, if k == 0 { "lo" } else { "hi" }, half);
                cx.emit(ops.EXTRACT_ELEMENT, Default::default(), vec![Operand::Value(v), Operand::int(k)], smallvec::smallvec![h]);
                parts.extend(split(cx, h)?);
            }
            parts
        }
        TypeAction::Split(half) => {
            let mut parts = Vec::new();
            let half_lanes = i128::from(types::lanes(cx.tables, half));
            for k in 0..2 {
                let index = cx.constant(i32t, k * half_lanes);
                let h = cx.op(ops.EXTRACT_SUBVECTOR, half, &[v, index]);
                parts.extend(split(cx, h)?);
            }
            parts
        }
        TypeAction::Scalarize(element) => {
            let mut parts = Vec::new();
            for k in 0..types::lanes(cx.tables, ty) {
                let index = cx.constant(i32t, i128::from(k));
                let e = cx.op(ops.EXTRACT_VECTOR_ELT, element, &[v, index]);
                parts.extend(split(cx, e)?);
            }
            parts
        }
        TypeAction::Widen(wide) => {
            let element = types::element(cx.tables, wide);
            let lanes = types::lanes(cx.tables, ty);
            let mut elements = Vec::new();
            for k in 0..types::lanes(cx.tables, wide) {
                if k < lanes {
                    let index = cx.constant(i32t, i128::from(k));
                    elements.push(cx.op(ops.EXTRACT_VECTOR_ELT, element, &[v, index]));
                } else {
                    elements.push(cx.op(ops.UNDEF, element, &[]));
                }
            }
            let w = cx.op(ops.BUILD_VECTOR, wide, &elements);
            split(cx, w)?
        }
    })
}

/// A value of `ty` rebuilt from its carried parts (taken from `leaves`), defined as
/// `into` when given.
fn join(cx: &mut Cx, ty: VtId, leaves: &mut dyn Iterator<Item = ValueId>, into: Option<ValueId>) -> LResult<ValueId> {
    let ops = cx.ops;
    let action = types::type_action(cx.tables, cx.sm, ty).map_err(|m| cx.error(m))?;
    let def = |cx: &mut Cx| into.unwrap_or_else(|| cx.new_value("abi", ty));
    let (opcode, operands) = match action {
        TypeAction::Legal => {
            let leaf = leaves.next().ok_or_else(|| cx.error("legalizer bug: too few carried parts"))?;
            if carrier(cx.tables, cx.sm, ty).is_some() {
                (ops.TRUNCATE, vec![leaf])
            } else if into.is_some() {
                (ops.COPY, vec![leaf])
            } else {
                return Ok(leaf);
            }
        }
        TypeAction::Promote(wide) => (ops.TRUNCATE, vec![join(cx, wide, leaves, None)?]),
        TypeAction::Soften(int) => (ops.BITCAST, vec![join(cx, int, leaves, None)?]),
        TypeAction::Expand(half) => (ops.BUILD_PAIR, vec![join(cx, half, leaves, None)?, join(cx, half, leaves, None)?]),
        TypeAction::Split(half) => (ops.CONCAT_VECTORS, vec![join(cx, half, leaves, None)?, join(cx, half, leaves, None)?]),
        TypeAction::Scalarize(element) => {
            let mut elements = Vec::new();
            for _ in 0..types::lanes(cx.tables, ty) {
                elements.push(join(cx, element, leaves, None)?);
            }
            (ops.BUILD_VECTOR, elements)
        }
        TypeAction::Widen(wide) => {
            let w = join(cx, wide, leaves, None)?;
            let zero = cx.constant(cx.int(32)?, 0);
            (ops.EXTRACT_SUBVECTOR, vec![w, zero])
        }
    };
    let d = def(cx);
    cx.op_into(opcode, d, &operands);
    Ok(d)
}

/// A kernel parameter of `ty` (or a part of it at byte `offset`) read from its
/// in-memory image, defined as `into` when given.
fn read_image(cx: &mut Cx, index: i128, ty: VtId, offset: u32, into: Option<ValueId>) -> LResult<ValueId> {
    let ops = cx.ops;
    let action = types::type_action(cx.tables, cx.sm, ty).map_err(|m| cx.error(m))?;
    let def = |cx: &mut Cx| into.unwrap_or_else(|| cx.new_value("param", ty));
    let at = |offset: u32| vec![Operand::int(index), Operand::int(i128::from(offset))];
    match action {
        TypeAction::Legal if carrier(cx.tables, cx.sm, ty).is_some() => {
            // An i1 is its byte.
            let byte = cx.int(8 * store_bytes(cx.tables, ty) as u16)?;
            let raw = cx.new_value("param.byte", byte);
            cx.emit(ops.ARG, Default::default(), at(offset), smallvec::smallvec![raw]);
            let d = def(cx);
            cx.op_into(ops.TRUNCATE, d, &[raw]);
            Ok(d)
        }
        TypeAction::Legal | TypeAction::Promote(_) | TypeAction::Soften(_) => {
            let d = def(cx);
            cx.emit(ops.ARG, Default::default(), at(offset), smallvec::smallvec![d]);
            Ok(d)
        }
        TypeAction::Expand(half) | TypeAction::Split(half) => {
            let size = store_bytes(cx.tables, half);
            let lo = read_image(cx, index, half, offset, None)?;
            let hi = read_image(cx, index, half, offset + size, None)?;
            let d = def(cx);
            let opcode = if matches!(action, TypeAction::Expand(_)) { ops.BUILD_PAIR } else { ops.CONCAT_VECTORS };
            cx.op_into(opcode, d, &[lo, hi]);
            Ok(d)
        }
        TypeAction::Scalarize(_) | TypeAction::Widen(_) => {
            // Lane by lane: a widened vector's extra lanes are not in the image.
            let element = types::element(cx.tables, ty);
            let size = store_bytes(cx.tables, element);
            let mut elements = Vec::new();
            for k in 0..u32::from(types::lanes(cx.tables, ty)) {
                elements.push(read_image(cx, index, element, offset + k * size, None)?);
            }
            let d = def(cx);
            cx.op_into(ops.BUILD_VECTOR, d, &elements);
            Ok(d)
        }
    }
}
