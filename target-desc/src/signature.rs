//! Opcode and intrinsic signatures: `(T, T) -> T`, `(cc, L, L) -> B`, `(P, imm?) -> T`.
//!
//! An operand is a type variable declared in the entry's `types:` map, a concrete type
//! name, or one of the non-value kinds `imm`, `fimm`, `cc`, `bb`, `sym`, `mask`. A
//! trailing `...` makes an operand repeat zero or more times; `?` makes it optional.
//! Results are one operand, a parenthesised list, or `()`; without `->` there are none.
//! The MIR verifier checks instructions against these signatures.

use crate::tables::{OperandKind, SigOperand, TypeClass};

#[derive(Debug)]
pub struct ParsedSignature {
    pub type_vars: Vec<(String, TypeClass)>,
    pub operands: Vec<SigOperand>,
    pub results: Vec<SigOperand>,
}

/// Parses `text`; `vars` maps type-variable names to class names, `type_id` resolves
/// concrete type names. Errors are plain messages; the caller adds the location.
pub fn parse(
    text: &str,
    vars: &std::collections::BTreeMap<String, String>,
    type_id: &dyn Fn(&str) -> Option<u8>,
) -> Result<ParsedSignature, String> {
    let mut type_vars = Vec::new();
    for (name, class) in vars {
        let class = TypeClass::NAMES
            .iter()
            .find(|(n, _)| n == class)
            .map(|(_, c)| *c)
            .ok_or_else(|| {
                let known: Vec<_> = TypeClass::NAMES.iter().map(|(n, _)| *n).collect();
                format!("unknown type class `{class}` for `{name}` (known: {})", known.join(", "))
            })?;
        type_vars.push((name.clone(), class));
    }
    let (args, results) = match text.split_once("->") {
        Some((a, r)) => (a.trim(), Some(r.trim())),
        None => (text.trim(), None),
    };
    let args = args
        .strip_prefix('(')
        .and_then(|a| a.strip_suffix(')'))
        .ok_or_else(|| format!("signature `{text}` must start with a parenthesised operand list"))?;
    let mut used = vec![false; type_vars.len()];
    let operands = parse_list(args, &type_vars, &mut used, type_id)?;
    let results = match results {
        None => Vec::new(),
        Some(r) => {
            let inner = r.strip_prefix('(').and_then(|r| r.strip_suffix(')')).unwrap_or(r);
            parse_list(inner, &type_vars, &mut used, type_id)?
        }
    };
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(format!("type variable `{}` is declared but not used in `{text}`", type_vars[i].0));
    }
    Ok(ParsedSignature { type_vars, operands, results })
}

fn parse_list(
    list: &str,
    vars: &[(String, TypeClass)],
    used: &mut [bool],
    type_id: &dyn Fn(&str) -> Option<u8>,
) -> Result<Vec<SigOperand>, String> {
    let mut out = Vec::new();
    for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, variadic) = match raw.strip_suffix("...") {
            Some(n) => (n.trim(), true),
            None => (raw, false),
        };
        let (name, optional) = match name.strip_suffix('?') {
            Some(n) => (n.trim(), true),
            None => (name, false),
        };
        let kind = match name {
            "imm" => OperandKind::Imm,
            "fimm" => OperandKind::FloatImm,
            "cc" => OperandKind::CondCode,
            "bb" => OperandKind::Block,
            "sym" => OperandKind::Symbol,
            "mask" => OperandKind::ShuffleMask,
            _ => {
                if let Some(i) = vars.iter().position(|(v, _)| v == name) {
                    used[i] = true;
                    OperandKind::TypeVar(i as u8)
                } else if let Some(id) = type_id(name) {
                    OperandKind::Fixed(id)
                } else {
                    return Err(format!(
                        "`{name}` in a signature is neither a declared type variable, a type, nor one of imm, fimm, cc, bb, sym, mask"
                    ));
                }
            }
        };
        out.push(SigOperand { kind, variadic, optional });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn parses_operands_results_and_modifiers() {
        let ids = |n: &str| (n == "i64").then_some(6u8);
        let sig = parse("(P, i64, imm?) -> (P, B)", &vars(&[("P", "ptr"), ("B", "bool")]), &ids).unwrap();
        assert_eq!(sig.operands.len(), 3);
        assert_eq!(sig.operands[1].kind, OperandKind::Fixed(6));
        assert!(sig.operands[2].optional);
        assert_eq!(sig.results.len(), 2);
        let call = parse("(sym, A...) -> R...", &vars(&[("A", "any"), ("R", "any")]), &ids).unwrap();
        assert!(call.operands[1].variadic && call.results[0].variadic);
    }

    #[test]
    fn rejects_unknown_names_and_unused_variables() {
        let ids = |n: &str| (n == "i32").then_some(5u8);
        assert!(parse("(X) -> T", &vars(&[("T", "int")]), &ids).unwrap_err().contains("`X`"));
        assert!(parse("() -> i32", &vars(&[("T", "int")]), &ids).unwrap_err().contains("not used"));
        assert!(parse("(T)", &vars(&[("T", "integer")]), &ids).unwrap_err().contains("unknown type class"));
    }
}
