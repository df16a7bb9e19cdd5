//! The PTX `.param` calling convention for device functions: the Custom lowering that
//! the description names with `= custom(param_abi_call)` and
//! `= custom(param_abi_return)` in `target-desc/nvptx/isel.rules`.
//!
//! This is the one place outside the description that writes PTX instruction text,
//! because a call's shape (how many parameters, of which types, at which offsets) is
//! not a fixed template. It follows the layout LLVM's NVPTX backend uses: each argument
//! in its own scalar `.param`, all results in one byte-array `.param` (PTX allows a
//! single return parameter) at offsets aligned to each value's size. A global pointer
//! (`p1`) travels as the global address it is, as llc passes an `addrspace(1)` pointer:
//! the callee uses it with `ld.global`/`st.global` directly, so a `cvta.global` at the
//! call would only cost an instruction.

use target_desc::tables::{TargetTables, VtId};
use super::push_number_after;

/// A register operand of the call or return: its PTX name and type.
pub struct Value {
    pub register: String,
    pub ty: VtId,
}

/// What a hook gets from the emitter.
pub struct HookInput<'a> {
    pub tables: &'a TargetTables,
    pub sm: &'a target_desc::tables::SmTables,
    /// The callee's PTX name (calls only).
    pub callee: Option<String>,
    pub operands: Vec<Value>,
    pub results: Vec<Value>,
    /// Allocates a scratch register of a type.
    pub scratch: &'a mut dyn FnMut(VtId) -> Result<String, String>,
}

/// The `.param` type of a value: its register class's PTX type.
fn param_type(tables: &TargetTables, sm: &target_desc::tables::SmTables, ty: VtId) -> Result<&'static str, String> {
    let (class, _) = tables.register_type(sm, ty).ok_or_else(|| format!("{} is not a register type on {}", type_name(tables, ty), sm.name))?;
    if class.param_carrier.is_some() {
        return Err("an i1 reached a call or return: the legalizer carries it in its class's param_carrier (legalizer bug)".into());
    }
    Ok(class.ptx_type)
}

fn type_name(tables: &TargetTables, ty: VtId) -> &'static str {
    tables.type_info(ty).map(|t| t.name).unwrap_or("?")
}

fn size_of(tables: &TargetTables, ty: VtId) -> u32 {
    tables.type_info(ty).map_or(4, |t| (t.bits as u32).div_ceil(8).max(1))
}

/// Byte offsets of `types` in the return aggregate, its alignment and its size.
pub fn return_layout(tables: &TargetTables, types: &[VtId]) -> (Vec<u32>, u32, u32) {
    let mut offsets = Vec::new();
    let (mut end, mut align) = (0u32, 1u32);
    for &t in types {
        let size = size_of(tables, t);
        end = end.div_ceil(size) * size;
        offsets.push(end);
        end += size;
        align = align.max(size);
    }
    (offsets, align, end.div_ceil(align) * align)
}

/// The return parameter of a function signature, `(.param .align 8 .b8 func_retval0[8]) `.
pub fn return_parameter(tables: &TargetTables, returns: &[VtId]) -> String {
    if returns.is_empty() {
        return String::new();
    }
    let (_, align, size) = return_layout(tables, returns);
    format!("(.param .align {align} .b8 func_retval0[{size}]) ")
}

/// `st.param<ty> [<place><n>], <register>` and a line break (`place` ends in `+` for
/// an offset into the return parameter, or is a parameter's name stem), written
/// piecewise: `writeln!` cost a few hundred instructions a line, a good part of
/// emitting a module of many calls.
fn store_param(out: &mut String, ty: &str, place: &str, n: impl itoa::Integer, register: &str) {
    out.push_str("st.param");
    out.push_str(ty);
    push_number_after(out, place, n);
    out.push_str("], ");
    out.push_str(register);
    out.push('\n');
}

/// Expands a hook into PTX lines (without trailing `;`), each ended by a line break, at
/// the end of `out`: one buffer for all of a call's lines, where a string per line was
/// most of emitting a module of many calls.
pub fn expand(hook: &str, mut input: HookInput<'_>, out: &mut String) -> Result<(), String> {
    use std::fmt::Write as _;
    match hook {
        "param_abi_return" => {
            let types: Vec<VtId> = input.operands.iter().map(|v| v.ty).collect();
            let (offsets, _, _) = return_layout(input.tables, &types);
            for (v, offset) in input.operands.iter().zip(offsets) {
                store_param(out, param_type(input.tables, input.sm, v.ty)?, " [func_retval0+", offset, &v.register);
            }
            out.push_str("ret\n");
            Ok(())
        }
        "param_abi_call" => {
            let callee = input.callee.take().ok_or("a call needs a callee")?;
            out.push_str("{\n");
            for (k, v) in input.operands.iter().enumerate() {
                let ty = param_type(input.tables, input.sm, v.ty)?;
                out.push_str(".param ");
                out.push_str(ty);
                push_number_after(out, " param", k);
                out.push('\n');
                store_param(out, ty, " [param", k, &v.register);
            }
            let types: Vec<VtId> = input.results.iter().map(|v| v.ty).collect();
            let (offsets, align, size) = return_layout(input.tables, &types);
            if input.results.is_empty() {
                let _ = write!(out, "call.uni {callee}, (");
            } else {
                let _ = writeln!(out, ".param .align {align} .b8 retval0[{size}]");
                let _ = write!(out, "call.uni (retval0), {callee}, (");
            }
            for k in 0..input.operands.len() {
                push_number_after(out, if k == 0 { "param" } else { ", param" }, k);
            }
            out.push_str(")\n");
            for (v, offset) in input.results.iter().zip(offsets) {
                let ty = param_type(input.tables, input.sm, v.ty)?;
                out.push_str("ld.param");
                out.push_str(ty);
                out.push(' ');
                out.push_str(&v.register);
                push_number_after(out, ", [retval0+", offset);
                out.push_str("]\n");
            }
            out.push_str("}\n");
            Ok(())
        }
        other => Err(format!("the description names the emission hook `{other}`, which the engine does not have (known: param_abi_call, param_abi_return)")),
    }
}

/// Every hook the engine implements, for the test that the description names only these.
pub const HOOKS: &[&str] = &["param_abi_call", "param_abi_return"];
