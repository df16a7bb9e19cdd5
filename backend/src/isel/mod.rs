//! Instruction selection: generic MIR instructions become machine instructions by
//! matching the description's `pattern` statements (target-desc/nvptx/isel.rules).
//!
//! Sits after verification (and, later, legalization) and before PHI elimination. A
//! pattern matches an instruction when its opcode, exact flag set, operand kinds and
//! types, and result type agree and the pattern is enabled on the SM; among matches the
//! highest priority wins (folded immediates first), then description order. An operand
//! defined by `CONSTANT`/`FCONSTANT` may be folded into an `imm` operand. No PTX text is
//! written here: the templates live in the description.

use std::collections::HashMap;

use target_desc::tables::{Action, PatternInfo, PatternOperand, PatternResult, SmTables, TargetTables, TypeClass, VtId};

use crate::diagnostics::MirError;
use crate::mir::verifier::{in_class, Source};
use crate::mir::{row_type, Function, Module, Opcode, Operand, ValueId};

pub fn select_module(module: &mut Module, tables: &TargetTables, sm: &SmTables, source: Source<'_>) -> Result<(), Vec<MirError>> {
    let sm_index = tables.sm_index(sm);
    // Candidate patterns per generic opcode, enabled on this SM, in description order.
    let mut by_opcode: Vec<Vec<usize>> = vec![Vec::new(); target_desc::tables::OPCODE_STRIDE];
    for (index, p) in tables.patterns.iter().enumerate() {
        if p.sms >> sm_index & 1 == 1 {
            if let Some(list) = by_opcode.get_mut(p.opcode as usize) {
                list.push(index);
            }
        }
    }
    let mut errors = Vec::new();
    for f in &mut module.functions {
        // `.contract` permits the combiner to fuse; no machine instruction depends on it.
        for inst in f.blocks.iter_mut().flat_map(|b| &mut b.insts) {
            inst.flags.retain(|fl| fl != crate::combine::CONTRACT);
        }
        select_function(f, tables, sm, &by_opcode, source, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The literal of every value defined by a `CONSTANT` or `FCONSTANT` (selected or not:
/// a constant keeps its literal as operand 0).
fn constants(f: &Function, tables: &TargetTables) -> HashMap<ValueId, Operand> {
    let mut out = HashMap::new();
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        let name = crate::mir::opcode_info(inst.opcode, tables).map(|o| o.name);
        if matches!(name, Some("CONSTANT" | "FCONSTANT")) {
            if let (Some(d), Some(literal)) = (inst.defs.first(), inst.operands.first()) {
                out.insert(*d, literal.clone());
            }
        }
    }
    out
}

/// The machine operands if `p` matches the instruction's operands, else `None`.
fn match_pattern(p: &PatternInfo, tables: &TargetTables, f: &Function, constants: &HashMap<ValueId, Operand>, operands: &[Operand], defs: &[ValueId]) -> Option<Vec<Operand>> {
    let is_bool = |v: &ValueId| in_class(tables, f.value(*v).ty, TypeClass::Bool);
    // A trailing `values` operand takes every remaining register.
    let variadic = p.operands.last().is_some_and(|(_, k)| *k == PatternOperand::Values);
    let fixed = if variadic { p.operands.len() - 1 } else { p.operands.len() };
    if operands.len() < fixed || (!variadic && operands.len() != fixed) {
        return None;
    }
    if variadic && !operands[fixed..].iter().all(|o| matches!(o, Operand::Value(_))) {
        return None;
    }
    let mut out = Vec::with_capacity(operands.len());
    for ((_, kind), actual) in p.operands[..fixed].iter().zip(operands) {
        let operand = match (kind, actual) {
            (PatternOperand::Reg(t), Operand::Value(v)) if f.value(*v).ty.0 == *t => actual.clone(),
            (PatternOperand::Flag, Operand::Value(v)) if is_bool(v) => actual.clone(),
            (PatternOperand::Imm(t), Operand::Value(v)) if f.value(*v).ty.0 == *t => constants.get(v)?.clone(),
            (PatternOperand::ImmIs(t, n), Operand::Value(v)) if f.value(*v).ty.0 == *t && constants.get(v) == Some(&Operand::Int(*n as i128)) => {
                Operand::Int(*n as i128)
            }
            (PatternOperand::LiteralIs(n), Operand::Int(i)) if *i == *n as i128 => actual.clone(),
            (PatternOperand::SymbolIs(name), Operand::Symbol(s)) if s == name => actual.clone(),
            (PatternOperand::Literal, Operand::Int(_) | Operand::Float(_))
            | (PatternOperand::CondCode, Operand::CondCode(_))
            | (PatternOperand::Block, Operand::Block(_))
            | (PatternOperand::Symbol, Operand::Symbol(_)) => actual.clone(),
            _ => return None,
        };
        out.push(operand);
    }
    out.extend(operands[fixed..].iter().cloned());
    if p.any_results {
        return Some(out);
    }
    let results_match = defs.len() == p.results.len()
        && defs.iter().zip(p.results).all(|(d, r)| match r {
            PatternResult::Reg(t) => f.value(*d).ty.0 == *t,
            PatternResult::Flag => is_bool(d),
        });
    results_match.then_some(out)
}

fn select_function(f: &mut Function, tables: &TargetTables, sm: &SmTables, by_opcode: &[Vec<usize>], source: Source<'_>, errors: &mut Vec<MirError>) {
    let constants = constants(f, tables);
    for b in 0..f.blocks.len() {
        for i in 0..f.blocks[b].insts.len() {
            let inst = &f.blocks[b].insts[i];
            let Opcode::Generic(op) = inst.opcode else { continue };
            let info = tables.opcode_info(op).expect("parsed opcodes exist");
            if info.name == "PHI" {
                continue; // Lowered by PHI elimination.
            }
            let operands: Vec<Operand> = inst.operands.iter().filter(|o| !matches!(o, Operand::Align(_))).cloned().collect();
            let mut flags: Vec<&str> = inst.flags.iter().map(String::as_str).collect();
            flags.sort();
            let sm_index = tables.sm_index(sm);
            let mut best: Option<(usize, Vec<Operand>, Vec<String>)> = None;
            for &index in &by_opcode[op.0 as usize] {
                let p = &tables.patterns[index];
                let Some(kept) = tables.match_flags(p, &flags, sm_index) else { continue };
                if let Some(ops) = match_pattern(p, tables, f, &constants, &operands, &inst.defs) {
                    if best.as_ref().is_none_or(|(bi, _, _)| p.priority > tables.patterns[*bi].priority) {
                        best = Some((index, ops, kept.iter().map(|k| k.to_string()).collect()));
                    }
                }
            }
            match best {
                Some((index, ops, kept)) => {
                    let inst = &mut f.blocks[b].insts[i];
                    inst.opcode = Opcode::Machine(index as u16);
                    // Flags a flag group took stay on the machine instruction: emission
                    // turns them into the group's text, and the MIR printout keeps them.
                    inst.flags = kept;
                    inst.operands = ops;
                }
                None => {
                    let inst = &f.blocks[b].insts[i];
                    // A pattern whose operands fit but one of whose flag groups has no
                    // member for the flag on this SM (`.sys` before sm_60) says why.
                    let flag_gap = by_opcode[op.0 as usize].iter().find_map(|&index| {
                        let p = &tables.patterns[index];
                        if p.flag_groups.is_empty() || tables.match_flags(p, &flags, sm_index).is_some() {
                            return None;
                        }
                        let every_flag_placed = flags.iter().all(|fl| p.flags.contains(fl) || p.flag_groups.iter().any(|&g| tables.flag_groups[g as usize].has_flag(fl)));
                        if !every_flag_placed || match_pattern(p, tables, f, &constants, &operands, &inst.defs).is_none() {
                            return None;
                        }
                        let (group, flag) = p.flag_groups.iter().map(|&g| &tables.flag_groups[g as usize]).find_map(|g| {
                            let flag = flags.iter().copied().find(|fl| g.has_flag(fl));
                            g.member(flag, sm_index).is_none().then_some((g, flag))
                        })?;
                        let rule = &tables.rules[group.members.first()?.rule as usize];
                        let name = inst.opcode.name(tables);
                        let shown: String = inst.flags.iter().map(|f| format!(".{f}")).collect();
                        let what = flag.map_or("the absence of a flag".to_string(), |fl| format!("`.{fl}`"));
                        Some(format!("cannot compile {name}{shown} on {}: flag group ${} ({}) has no member for {what} there", sm.name, group.name, rule.source))
                    });
                    let message = flag_gap.unwrap_or_else(|| cannot_select(f, inst, tables, sm));
                    let mut e = MirError::at(source.file, source.text, inst.loc.line as usize, inst.loc.column as usize, message);
                    e.context = Some(format!("function @{}, {}, instruction {}", f.name, f.blocks[b].label(), i + 1));
                    errors.push(e);
                }
            }
        }
    }
}

fn cannot_select(f: &Function, inst: &crate::mir::Inst, tables: &TargetTables, sm: &SmTables) -> String {
    let name = inst.opcode.name(tables);
    let flags: String = inst.flags.iter().map(|f| format!(".{f}")).collect();
    let types: Vec<&str> = inst
        .defs
        .iter()
        .chain(inst.uses().collect::<Vec<_>>().iter())
        .map(|v| tables.type_info(f.value(*v).ty).map(|t| t.name).unwrap_or("?"))
        .collect();
    let ty_text = if types.is_empty() { String::new() } else { format!(" ({})", types.join(", ")) };
    if let (Some(vt), Some(op)) = (row_type(f, inst, tables), inst.opcode.generic()) {
        let d = tables.decide(sm, op, vt);
        if d.action != Action::Legal {
            let ty = tables.type_info(VtId(vt.0)).map(|t| t.name).unwrap_or("?");
            return format!(
                "cannot compile {name}{flags} on {ty} for {}: the description makes it {} ({}: `{}`), and the legalizer that would rewrite it is not implemented yet",
                sm.name, d.action, d.rule.source, d.rule.text
            );
        }
    }
    format!("no instruction-selection pattern for {name}{flags}{ty_text} on {} in the description", sm.name)
}

#[cfg(test)]
mod tests {
    /// The flag-group matcher on the NVPTX description's atomics: each extra flag goes
    /// to a distinct group whose member applies on the SM; a group left without a flag
    /// needs its `_` member.
    #[test]
    fn flag_groups_take_one_flag_each_on_the_sms_that_have_it() {
        let tables = tables::nvptx();
        let pattern = tables.patterns.iter().find(|p| p.name == "ATOM_ADD_GLOBAL_i32").expect("pattern");
        let index = |name: &str| tables.sm_index(tables.find_sm(name).unwrap());
        let (sm50, sm60, sm70) = (index("50"), index("60"), index("70"));
        assert_eq!(tables.match_flags(pattern, &[], sm50), Some(vec![]));
        assert_eq!(tables.match_flags(pattern, &["acquire", "gpu"], sm70), Some(vec!["acquire", "gpu"]));
        assert_eq!(tables.match_flags(pattern, &["cta", "gpu"], sm70), None, "two scopes");
        assert_eq!(tables.match_flags(pattern, &["volatile"], sm70), None, "not a group's flag");
        assert_eq!(tables.match_flags(pattern, &["sys"], sm50), None, "no .sys member before sm_60");
        assert!(tables.match_flags(pattern, &["sys"], sm60).is_some());

        let resolve = |flags: &[&str], sm| tables.resolve_flag_groups(pattern, flags, sm).unwrap();
        assert_eq!(resolve(&[], sm70), "atom.global.add.{T} {d}, [{p}], {v}");
        assert_eq!(resolve(&["gpu", "seq_cst"], sm70), "fence.sc.gpu\natom.acquire.gpu.global.add.{T} {d}, [{p}], {v}");
        assert_eq!(resolve(&["acq_rel", "cta"], sm60), "membar.cta\natom.cta.global.add.{T} {d}, [{p}], {v}\nmembar.cta");
        assert_eq!(resolve(&["acquire"], sm50), "atom.global.add.{T} {d}, [{p}], {v}\nmembar.gl");
        assert!(tables.resolve_flag_groups(pattern, &["sys"], sm50).unwrap_err().contains("no member for `.sys`"));
    }
}
