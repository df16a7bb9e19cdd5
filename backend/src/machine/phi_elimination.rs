//! PHI elimination: each PHI becomes copies, leaving the function out of SSA form
//! (`ssa: false`).
//!
//! Every PHI gets a register of its own: each predecessor copies its incoming value
//! into it just before its terminator, and the PHI's block copies it into the PHI's
//! result at its start. Because the register is private to one PHI, copies for several
//! PHIs on the same edge cannot overwrite each other (the swap problem), and a copy on
//! a critical edge is harmless on the other edges, so no edge needs splitting. The copy
//! instruction is the description's pattern for `COPY` on the value's type.

use target_desc::tables::{PatternOperand, SmTables, TargetTables};

use crate::diagnostics::MirError;
use crate::mir::verifier::Source;
use crate::mir::{opcode_info, Function, Inst, Module, Opcode, Operand, ValueInfo};

fn copy_pattern(tables: &TargetTables, sm_index: usize, ty: u8) -> Option<u16> {
    let copy = tables.opcode("COPY")?;
    tables
        .patterns
        .iter()
        .position(|p| {
            p.opcode == copy.0
                && p.sms >> sm_index & 1 == 1
                && p.flags.is_empty()
                && p.result() == Some(ty)
                && p.operands.len() == 1
                && p.operands[0].1 == PatternOperand::Reg(ty)
        })
        .map(|i| i as u16)
}

pub fn eliminate_phis(module: &mut Module, tables: &TargetTables, sm: &SmTables, source: Source<'_>) -> Result<(), Vec<MirError>> {
    let sm_index = tables.sm_index(sm);
    let mut errors = Vec::new();
    for f in &mut module.functions {
        eliminate_in_function(f, tables, sm, sm_index, source, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn eliminate_in_function(f: &mut Function, tables: &TargetTables, sm: &SmTables, sm_index: usize, source: Source<'_>, errors: &mut Vec<MirError>) {
    let is_phi = |inst: &Inst| matches!(inst.opcode, Opcode::Generic(g) if tables.opcode_info(g).is_some_and(|o| o.name == "PHI"));
    let index: std::collections::HashMap<u32, usize> = f.blocks.iter().enumerate().map(|(i, b)| (b.number, i)).collect();
    let mut edge_copies: Vec<(usize, Inst)> = Vec::new();
    for b in 0..f.blocks.len() {
        let phi_count = f.blocks[b].insts.iter().take_while(|i| is_phi(i)).count();
        for k in 0..phi_count {
            let phi = f.blocks[b].insts[k].clone();
            let result = phi.defs[0];
            let ty = f.value(result).ty;
            let Some(copy) = copy_pattern(tables, sm_index, ty.0) else {
                let name = tables.type_info(ty).map(|t| t.name).unwrap_or("?");
                errors.push(MirError::at(source.file, source.text, phi.loc.line as usize, phi.loc.column as usize, format!("no COPY pattern for {name} on {} in the description", sm.name)));
                continue;
            };
            let temp = crate::mir::ValueId(f.values.len() as u32);
            let temp_name = format!("{}.phi", f.value(result).name);
            f.values.push(ValueInfo { name: temp_name, ty });
            for pair in phi.operands.chunks(2) {
                if let [Operand::Value(v), Operand::Block(pred)] = pair {
                    if let Some(&p) = index.get(pred) {
                        let inst = Inst { defs: vec![temp], opcode: Opcode::Machine(copy), flags: Vec::new(), operands: vec![Operand::Value(*v)], loc: phi.loc };
                        edge_copies.push((p, inst));
                    }
                }
            }
            f.blocks[b].insts[k] = Inst { defs: vec![result], opcode: Opcode::Machine(copy), flags: Vec::new(), operands: vec![Operand::Value(temp)], loc: phi.loc };
        }
    }
    for (p, inst) in edge_copies {
        let block = &mut f.blocks[p];
        let terminator_at = block
            .insts
            .iter()
            .position(|i| opcode_info(i.opcode, tables).is_some_and(|o| o.has(target_desc::tables::props::TERMINATOR)))
            .unwrap_or(block.insts.len());
        block.insts.insert(terminator_at, inst);
    }
    f.ssa = false;
}
