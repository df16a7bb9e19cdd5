//! Writing MIR back as text that parses to the same module (spec §1-§3).
//!
//! Output is deterministic: documents, blocks and instructions in order, parameters in
//! flow style, floats in a form that reads back to the same bits.

use std::fmt::Write;

use target_desc::tables::TargetTables;

use super::*;

pub fn print_module(module: &Module, tables: &TargetTables) -> String {
    let mut out = String::new();
    if module.name.is_some() || !module.globals.is_empty() {
        out.push_str("---\n");
        if let Some(name) = &module.name {
            let _ = writeln!(out, "module: {}", yaml_scalar(name));
        }
        if !module.globals.is_empty() {
            out.push_str("globals:\n");
            for g in &module.globals {
                let _ = write!(out, "  - {{ name: {}, space: {}, type: {}", yaml_scalar(&g.name), g.space.name(), type_name(tables, g.ty));
                if g.count != 1 {
                    let _ = write!(out, ", count: {}", g.count);
                }
                if let Some(a) = g.align {
                    let _ = write!(out, ", align: {a}");
                }
                if let Some(init) = &g.init {
                    let items: Vec<String> = init
                        .iter()
                        .map(|v| match v {
                            InitValue::Int(i) => i.to_string(),
                            InitValue::Float(f) => float_text(*f),
                        })
                        .collect();
                    let _ = write!(out, ", init: [{}]", items.join(", "));
                }
                out.push_str(" }\n");
            }
        }
    }
    for f in &module.functions {
        out.push_str(&print_function(f, tables));
    }
    out
}

pub fn print_function(f: &Function, tables: &TargetTables) -> String {
    let mut out = String::from("---\n");
    let _ = writeln!(out, "name: {}", yaml_scalar(&f.name));
    let _ = writeln!(out, "kind: {}", if f.kind == FunctionKind::Kernel { "kernel" } else { "device" });
    if f.params.is_empty() {
        out.push_str("params: []\n");
    } else {
        out.push_str("params:\n");
        for p in &f.params {
            let noalias = if p.noalias { ", noalias: true" } else { "" };
            let _ = writeln!(out, "  - {{ name: {}, type: {}{noalias} }}", yaml_scalar(&p.name), type_name(tables, p.ty));
        }
    }
    if !f.returns.is_empty() || f.kind == FunctionKind::Device {
        let names: Vec<&str> = f.returns.iter().map(|t| type_name(tables, *t)).collect();
        let _ = writeln!(out, "returns: [{}]", names.join(", "));
    }
    if !f.ssa {
        out.push_str("ssa: false\n");
    }
    if !f.attributes.is_empty() {
        let mut parts = Vec::new();
        if let Some(m) = &f.attributes.maxntid {
            parts.push(format!("maxntid: [{}]", m.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")));
        }
        if let Some(m) = f.attributes.minnctapersm {
            parts.push(format!("minnctapersm: {m}"));
        }
        if let Some(m) = f.attributes.maxnreg {
            parts.push(format!("maxnreg: {m}"));
        }
        let _ = writeln!(out, "attributes: {{ {} }}", parts.join(", "));
    }
    if !f.frame.is_empty() {
        out.push_str("frame:\n");
        for o in &f.frame {
            let mut parts = Vec::new();
            if let Some(n) = &o.name {
                parts.push(format!("name: {}", yaml_scalar(n)));
            }
            parts.push(format!("size: {}", o.size));
            parts.push(format!("align: {}", o.align));
            if o.spill {
                parts.push("spill: true".into());
            }
            let _ = writeln!(out, "  - {{ {} }}", parts.join(", "));
        }
    }
    out.push_str("body: |\n");
    for block in &f.blocks {
        let _ = writeln!(out, "  {}:", block.label());
        for inst in &block.insts {
            let _ = writeln!(out, "    {}", print_inst(f, inst, tables));
        }
    }
    out.push_str("...\n");
    out
}

pub fn print_inst(f: &Function, inst: &Inst, tables: &TargetTables) -> String {
    let mut out = String::new();
    if !inst.defs.is_empty() {
        let defs: Vec<String> =
            inst.defs.iter().map(|d| format!("%{}:{}", f.value(*d).name, type_name(tables, f.value(*d).ty))).collect();
        out.push_str(&defs.join(", "));
        out.push_str(" = ");
    }
    out.push_str(inst.opcode.name(tables));
    let info = inst.opcode.generic().and_then(|g| tables.opcode_info(g));
    for flag in &inst.flags {
        out.push('.');
        out.push_str(flag);
    }
    let is_fconstant = info.is_some_and(|o| o.name == "FCONSTANT");
    let operands: Vec<String> = inst.operands.iter().map(|o| operand_text(f, o, tables, is_fconstant)).collect();
    if !operands.is_empty() {
        out.push(' ');
        out.push_str(&operands.join(", "));
    }
    out
}

fn operand_text(f: &Function, o: &Operand, tables: &TargetTables, raw_bits_in_hex: bool) -> String {
    match o {
        Operand::Value(v) => format!("%{}", f.value(*v).name),
        Operand::Block(b) => format!("%bb.{b}"),
        Operand::Symbol(s) => format!("@{s}"),
        Operand::CondCode(cc) => tables.cond_code_info(*cc).map(|c| c.name).unwrap_or("?").to_string(),
        Operand::Int(i) if raw_bits_in_hex => {
            if i.get() < 0 {
                format!("-0x{:X}", -i.get())
            } else {
                format!("0x{i:X}")
            }
        }
        Operand::Int(i) => i.to_string(),
        Operand::Float(x) => float_text(*x),
        Operand::Mask(lanes) => format!("mask({})", lanes.iter().map(i32::to_string).collect::<Vec<_>>().join(", ")),
        Operand::Align(a) => format!("align {a}"),
    }
}

/// A float literal that reads back to the same value: Rust's shortest round-trip form,
/// always with a `.` or exponent so it is not mistaken for an integer.
pub fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'E']) {
        // `1e-7` is valid MIR; `1e16` prints as `1e16` too.
        s
    } else {
        format!("{s}.0")
    }
}

fn type_name(tables: &TargetTables, vt: target_desc::tables::VtId) -> &'static str {
    tables.type_info(vt).map(|t| t.name).unwrap_or("?")
}

/// Names are written bare when YAML reads them back as the same string.
fn yaml_scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-'))
        && !s.starts_with(['-', '.'])
        && serde_yaml::from_str::<serde_yaml::Value>(s).ok() == Some(serde_yaml::Value::String(s.to_string()));
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
    }
}
