//! Dead-code removal: drops instructions whose results are unused and that have no
//! effect besides them (typically `CONSTANT`s folded into immediates by selection).

use target_desc::tables::{props, TargetTables};

use crate::mir::{opcode_info, Module};

pub fn remove_dead_code(module: &mut Module, tables: &TargetTables) {
    let effects = props::TERMINATOR | props::SIDE_EFFECTS | props::MAY_STORE | props::CALL | props::CONVERGENT;
    for f in &mut module.functions {
        loop {
            let mut uses = vec![0usize; f.values.len()];
            for block in &f.blocks {
                for inst in &block.insts {
                    for v in inst.uses() {
                        uses[v.0 as usize] += 1;
                    }
                }
            }
            let mut changed = false;
            for block in &mut f.blocks {
                block.insts.retain(|inst| {
                    let pure = opcode_info(inst.opcode, tables).is_some_and(|o| o.props & effects == 0);
                    let dead = pure && !inst.defs.is_empty() && inst.defs.iter().all(|d| uses[d.0 as usize] == 0);
                    changed |= dead;
                    !dead
                });
            }
            if !changed {
                break;
            }
        }
    }
}
