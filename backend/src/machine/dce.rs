//! Dead-code removal: drops instructions whose results are unused and that have no
//! effect besides them (typically `CONSTANT`s folded into immediates by selection).
//!
//! Mark and sweep, linear in the function's size: instructions with effects are live,
//! and so is every instruction defining a value a live instruction uses. (Peeling dead
//! instructions one use-count round at a time would be quadratic on long dead chains.)

use rustc_hash::FxHashMap as HashMap;

use target_desc::tables::{props, TargetTables};

use crate::mir::{opcode_info, Module};

pub fn remove_dead_code(module: &mut Module, tables: &TargetTables) {
    for f in &mut module.functions {
        remove_dead_in_function(f, tables);
    }
}

/// Removes the instructions of `f` whose results nothing reads (transitively); returns
/// how many.
pub fn remove_dead_in_function(f: &mut crate::mir::Function, tables: &TargetTables) -> usize {
    let effects = props::TERMINATOR | props::SIDE_EFFECTS | props::MAY_STORE | props::CALL | props::CONVERGENT;
    {
        // Defining instructions of each value (several after PHI elimination).
        let mut defs: HashMap<u32, Vec<(usize, usize)>> = HashMap::default();
        let mut live: Vec<Vec<bool>> = f.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
        let mut work = Vec::new();
        for (b, block) in f.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                for d in &inst.defs {
                    defs.entry(d.0).or_default().push((b, i));
                }
                let pure = opcode_info(inst.opcode, tables).is_some_and(|o| o.props & effects == 0);
                if !pure || inst.defs.is_empty() {
                    live[b][i] = true;
                    work.push((b, i));
                }
            }
        }
        while let Some((b, i)) = work.pop() {
            for v in f.blocks[b].insts[i].uses() {
                for &(db, di) in defs.get(&v.0).map(Vec::as_slice).unwrap_or(&[]) {
                    if !live[db][di] {
                        live[db][di] = true;
                        work.push((db, di));
                    }
                }
            }
        }
        let before: usize = f.blocks.iter().map(|b| b.insts.len()).sum();
        for (block, keep) in f.blocks.iter_mut().zip(live) {
            let mut keep = keep.into_iter();
            block.insts.retain(|_| keep.next().unwrap_or(true));
        }
        before - f.blocks.iter().map(|b| b.insts.len()).sum::<usize>()
    }
}
