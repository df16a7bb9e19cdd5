//! `ptxc audit`: legality per SM, and the description line behind each entry.
//!
//! Works on any [`TargetTables`], the compiled-in NVPTX tables or a description loaded
//! with `--target-desc DIR`, so an edited description can be audited without a
//! rebuild. Queries answer one entry; `dump` lists one SM's whole table; `diff` lists
//! every entry that differs between two SMs. Every answer carries its provenance
//! (`file:line` of the rule, register-class member or default that decided it).

use serde_json::{json, Value};
use target_desc::tables::*;
use thiserror::Error;

/// A bad audit request: an unknown name, with the closest valid ones.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AuditError {
    #[error("unknown {what} `{name}`{}", hint(.suggestions))]
    Unknown { what: &'static str, name: String, suggestions: Vec<String> },
    #[error("{0}")]
    Usage(String),
}

fn hint(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; closest valid names: {}", suggestions.join(", "))
    }
}

pub fn find_sm<'t>(tables: &'t TargetTables, name: &str) -> Result<&'t SmTables, AuditError> {
    tables::find_sm(tables, name).map_err(|e| AuditError::Unknown { what: "SM", name: e.name, suggestions: e.suggestions })
}

pub fn find_opcode(tables: &TargetTables, name: &str) -> Result<OpcodeId, AuditError> {
    tables.opcode(name).or_else(|| tables.opcode(&name.to_ascii_uppercase())).ok_or_else(|| AuditError::Unknown {
        what: "opcode",
        name: name.to_string(),
        suggestions: target_desc::error::closest(name, tables.opcodes.iter().map(|o| o.name)),
    })
}

pub fn find_vt(tables: &TargetTables, name: &str) -> Result<VtId, AuditError> {
    tables.vt(name).or_else(|| tables.vt(&name.to_ascii_lowercase())).ok_or_else(|| AuditError::Unknown {
        what: "value type",
        name: name.to_string(),
        suggestions: target_desc::error::closest(name, tables.types.iter().map(|t| t.name)),
    })
}

pub fn find_cc(tables: &TargetTables, name: &str) -> Result<CondCodeId, AuditError> {
    tables.cond_code(name).or_else(|| tables.cond_code(&name.to_ascii_lowercase())).ok_or_else(|| AuditError::Unknown {
        what: "condition code",
        name: name.to_string(),
        suggestions: target_desc::error::closest(name, tables.cond_codes.iter().map(|c| c.name)),
    })
}

fn opcode_name(tables: &TargetTables, op: OpcodeId) -> &'static str {
    tables.opcode_info(op).map(|o| o.name).unwrap_or("?")
}

fn vt_name(tables: &TargetTables, vt: VtId) -> &'static str {
    tables.type_info(vt).map(|t| t.name).unwrap_or("?")
}

fn detail_json(tables: &TargetTables, detail: Option<ActionDetail>) -> Value {
    match detail {
        Some(ActionDetail::CustomHook(h)) => json!({ "hook": h }),
        Some(ActionDetail::LibCall(f)) => json!({ "function": f }),
        Some(ActionDetail::PromoteTo(t)) => json!({ "promote_to": vt_name(tables, VtId(t)) }),
        None => Value::Null,
    }
}

fn detail_text(tables: &TargetTables, detail: Option<ActionDetail>) -> String {
    match detail {
        Some(ActionDetail::CustomHook(h)) => format!("({h})"),
        Some(ActionDetail::LibCall(f)) => format!("({f})"),
        Some(ActionDetail::PromoteTo(t)) => format!("(to {})", vt_name(tables, VtId(t))),
        None => String::new(),
    }
}

/// One entry of the action table.
pub fn action_query(tables: &TargetTables, sm: &SmTables, op: OpcodeId, vt: VtId) -> Value {
    let d = tables.decide(sm, op, vt);
    json!({
        "sm": sm.name,
        "op": opcode_name(tables, op),
        "vt": vt_name(tables, vt),
        "action": d.action.name(),
        "detail": detail_json(tables, d.detail),
        "source": d.rule.source.to_string(),
        "rule": d.rule.text,
        "default": d.is_default,
    })
}

/// Is a type a register type on an SM, in which class, and which line says so. For a
/// type that is not, the source is the class member that gates it elsewhere, if any.
pub fn type_query(tables: &TargetTables, sm: &SmTables, vt: VtId) -> Value {
    match tables.register_type(sm, vt) {
        Some((class, rule)) => json!({
            "sm": sm.name,
            "vt": vt_name(tables, vt),
            "type_supported": true,
            "register_class": class.name,
            "prefix": class.prefix,
            "source": rule.source.to_string(),
        }),
        None => {
            let gate = tables.sms.iter().find_map(|other| tables.register_type(other, vt).map(|(_, rule)| rule));
            json!({
                "sm": sm.name,
                "vt": vt_name(tables, vt),
                "type_supported": false,
                "register_class": Value::Null,
                "source": gate.map(|r| Value::String(r.source.to_string())).unwrap_or(Value::Null),
            })
        }
    }
}

pub fn cc_query(tables: &TargetTables, sm: &SmTables, cc: CondCodeId, vt: VtId) -> Value {
    let d = tables.decide_cc(sm, cc, vt);
    json!({
        "sm": sm.name,
        "cc": tables.cond_code_info(cc).map(|c| c.name).unwrap_or("?"),
        "vt": vt_name(tables, vt),
        "action": d.action.name(),
        "source": d.rule.source.to_string(),
        "rule": d.rule.text,
        "default": d.is_default,
    })
}

/// A summary of one SM: PTX version, features, implied SMs, register types, occupancy
/// data (with the profile's source line).
pub fn sm_summary(tables: &TargetTables, sm: &SmTables) -> Value {
    let features: Vec<&str> = sm.features.iter().map(|&f| tables.features[f as usize].name).collect();
    let implies: Vec<&str> = sm.implies.iter().map(|&s| tables.sms[s as usize].name).collect();
    let register_types: Vec<Value> = tables
        .types
        .iter()
        .filter_map(|t| {
            tables.register_type(sm, VtId(t.id)).map(|(c, _)| json!({ "vt": t.name, "register_class": c.name }))
        })
        .collect();
    json!({
        "sm": sm.name,
        "min_ptx": format!("{}.{}", sm.min_ptx / 10, sm.min_ptx % 10),
        "implies": implies,
        "features": features,
        "register_types": register_types,
        "occupancy": sm.occupancy.map(|o| json!({
            "profile": o.name,
            "regs_per_sm": o.regs_per_sm,
            "regs_per_block": o.regs_per_block,
            "max_regs_per_thread": o.max_regs_per_thread,
            "reg_alloc_unit": o.reg_alloc_unit,
            "sub_partitions": o.sub_partitions,
            "max_warps_per_sm": o.max_warps_per_sm,
            "max_blocks_per_sm": o.max_blocks_per_sm,
            "max_threads_per_block": o.max_threads_per_block,
            "source": o.source.to_string(),
        })),
        "source": sm.source.to_string(),
    })
}

/// A row of a dump or a diff side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `action`, `condcode`, `type`, `promotion`, `fsincos`.
    pub kind: &'static str,
    /// The opcode, condition code or (for `type`) empty.
    pub key: &'static str,
    pub vt: &'static str,
    /// The action name, or `supported`/`unsupported` (with the class) for types.
    pub value: String,
    pub source: String,
}

/// Every entry of one SM's tables: each opcode that has a table row on each type, each
/// condition code on each type, each type's register class, and the 1-D tables.
pub fn entries(tables: &TargetTables, sm: &SmTables) -> Vec<Entry> {
    let mut out = Vec::new();
    for t in tables.types {
        let vt = VtId(t.id);
        let (value, source) = match tables.register_type(sm, vt) {
            Some((class, rule)) => (format!("supported {}", class.name), rule.source.to_string()),
            None => ("unsupported".to_string(), String::new()),
        };
        out.push(Entry { kind: "type", key: "", vt: t.name, value, source });
    }
    for op in tables.opcodes {
        if !has_table_row(op) {
            continue;
        }
        for t in tables.types {
            let d = tables.decide(sm, OpcodeId(op.id), VtId(t.id));
            let value = format!("{}{}", d.action.name(), detail_text(tables, d.detail));
            out.push(Entry { kind: "action", key: op.name, vt: t.name, value, source: d.rule.source.to_string() });
        }
    }
    for cc in tables.cond_codes {
        for t in tables.types {
            let d = tables.decide_cc(sm, CondCodeId(cc.id), VtId(t.id));
            out.push(Entry { kind: "condcode", key: cc.name, vt: t.name, value: d.action.name().to_string(), source: d.rule.source.to_string() });
        }
    }
    for (kind, fsincos) in [("promotion", false), ("fsincos", true)] {
        for op in tables.opcodes {
            let d = tables.decide_one_dim(sm, fsincos, OpcodeId(op.id));
            if !d.is_default {
                out.push(Entry { kind, key: op.name, vt: "", value: d.action.name().to_string(), source: d.rule.source.to_string() });
            }
        }
    }
    out
}

/// Opcodes whose signature has a typed value to select a row: a result, or the named
/// type operand. Branches, returns and calls are not in the table.
pub fn has_table_row(op: &OpcodeInfo) -> bool {
    let typed = |o: &SigOperand| matches!(o.kind, OperandKind::TypeVar(_) | OperandKind::Fixed(_)) && !o.variadic;
    match op.type_operand {
        Some(i) => op.signature.operands.get(i as usize).is_some_and(typed),
        None => op.signature.results.first().is_some_and(typed),
    }
}

pub fn entry_json(sm: &str, e: &Entry) -> Value {
    json!({ "sm": sm, "kind": e.kind, "key": e.key, "vt": e.vt, "value": e.value, "source": e.source })
}

pub fn dump_text(sm: &SmTables, entries: &[Entry]) -> String {
    let mut out = format!("# {}: kind key vt value source\n", sm.name);
    for e in entries {
        out.push_str(&format!("{:<9} {:<20} {:<7} {:<30} {}\n", e.kind, e.key, e.vt, e.value, e.source));
    }
    out
}

pub fn dump_csv(sm: &SmTables, entries: &[Entry]) -> String {
    let mut out = String::from("sm,kind,key,vt,value,source\n");
    for e in entries {
        out.push_str(&format!("{},{},{},{},{},{}\n", sm.name, e.kind, e.key, e.vt, csv_field(&e.value), csv_field(&e.source)));
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The entries that differ between two SMs, as `(from, to)` pairs.
pub fn diff(tables: &TargetTables, from: &SmTables, to: &SmTables) -> Vec<(Entry, Entry)> {
    let a = entries(tables, from);
    let b = entries(tables, to);
    let mut by_key: std::collections::HashMap<(&str, &str, &str), &Entry> = std::collections::HashMap::new();
    for e in &b {
        by_key.insert((e.kind, e.key, e.vt), e);
    }
    let mut out = Vec::new();
    let empty = |e: &Entry| Entry { value: "(none)".into(), source: String::new(), ..e.clone() };
    for e in &a {
        match by_key.remove(&(e.kind, e.key, e.vt)) {
            Some(other) if other.value != e.value => out.push((e.clone(), other.clone())),
            Some(_) => {}
            None => out.push((e.clone(), empty(e))),
        }
    }
    // Entries only the second SM has (1-D table entries without a rule on the first).
    let mut rest: Vec<&Entry> = by_key.into_values().collect();
    rest.sort_by_key(|e| (e.kind, e.key, e.vt));
    for e in rest {
        out.push((empty(e), e.clone()));
    }
    out
}

pub fn diff_json(from: &SmTables, to: &SmTables, rows: &[(Entry, Entry)]) -> Value {
    let differences: Vec<Value> = rows
        .iter()
        .map(|(a, b)| {
            json!({
                "kind": a.kind, "key": a.key, "vt": a.vt,
                "from": { "value": a.value, "source": a.source },
                "to": { "value": b.value, "source": b.source },
            })
        })
        .collect();
    json!({ "from": from.name, "to": to.name, "count": rows.len(), "differences": differences })
}

pub fn diff_text(from: &SmTables, to: &SmTables, rows: &[(Entry, Entry)]) -> String {
    let mut out = format!("# {} -> {}: {} differences\n", from.name, to.name, rows.len());
    for (a, b) in rows {
        out.push_str(&format!(
            "{:<9} {:<20} {:<7} {:<24} -> {:<24} [{} -> {}]\n",
            a.kind,
            a.key,
            a.vt,
            a.value,
            b.value,
            if a.source.is_empty() { "-" } else { &a.source },
            if b.source.is_empty() { "-" } else { &b.source },
        ));
    }
    out
}

/// The human-readable form of a query answer.
pub fn query_text(v: &Value) -> String {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    if v.get("type_supported").is_some() {
        let supported = v["type_supported"].as_bool().unwrap_or(false);
        let class = if supported { format!("register type in {} ({})", s("register_class"), s("prefix")) } else { "not a register type".into() };
        let source = if s("source").is_empty() { String::new() } else { format!("  [{}]", s("source")) };
        format!("{} {}: {class}{source}\n", s("sm"), s("vt"))
    } else if v.get("cc").is_some() {
        format!("{} condcode {} on {}: {}  [{}] {}\n", s("sm"), s("cc"), s("vt"), s("action"), s("source"), s("rule"))
    } else {
        let detail = match v.get("detail") {
            Some(Value::Object(m)) => m.values().next().and_then(Value::as_str).map(|d| format!(" ({d})")).unwrap_or_default(),
            _ => String::new(),
        };
        format!("{} {} on {}: {}{detail}  [{}] {}\n", s("sm"), s("op"), s("vt"), s("action"), s("source"), s("rule"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_suggest_close_ones() {
        let t = tables::nvptx();
        match find_opcode(t, "FAD").unwrap_err() {
            AuditError::Unknown { suggestions, .. } => assert!(suggestions.contains(&"FADD".to_string()), "{suggestions:?}"),
            other => panic!("{other:?}"),
        }
        match find_vt(t, "v2bf61").unwrap_err() {
            AuditError::Unknown { suggestions, .. } => assert!(suggestions.contains(&"v2bf16".to_string()), "{suggestions:?}"),
            other => panic!("{other:?}"),
        }
        assert!(find_sm(t, "sm_81").unwrap_err().to_string().contains("sm_8"));
    }

    #[test]
    fn diff_between_75_and_80_shows_bf16_appearing() {
        let t = tables::nvptx();
        let rows = diff(t, find_sm(t, "75").unwrap(), find_sm(t, "80").unwrap());
        assert!(rows.iter().any(|(a, b)| a.kind == "type" && a.vt == "bf16" && a.value == "unsupported" && b.value.starts_with("supported")));
        assert!(rows.iter().any(|(a, b)| a.kind == "action" && a.key == "FMA" && a.vt == "v2bf16" && b.value == "Legal" && a.value != "Legal"));
        // Nothing that is the same on both SMs is listed.
        assert!(rows.iter().all(|(a, b)| a.value != b.value));
        assert!(!rows.iter().any(|(a, _)| a.kind == "action" && a.key == "ADD" && a.vt == "i32"));
    }

    #[test]
    fn dump_lists_every_row_once() {
        let t = tables::nvptx();
        let sm = find_sm(t, "80").unwrap();
        let rows = entries(t, sm);
        let rowed = t.opcodes.iter().filter(|o| has_table_row(o)).count();
        let actions = rows.iter().filter(|e| e.kind == "action").count();
        assert_eq!(actions, rowed * t.types.len());
        let csv = dump_csv(sm, &rows);
        assert_eq!(csv.lines().count(), rows.len() + 1);
    }
}
