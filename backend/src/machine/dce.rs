//! Dead-code removal: drops instructions whose results are unused and that have no
//! effect besides them (typically `CONSTANT`s folded into immediates by selection).
//!
//! Mark and sweep, linear in the function's size: instructions with effects are live,
//! and so is every instruction defining a value a live instruction uses. (Peeling dead
//! instructions one use-count round at a time would be quadratic on long dead chains.)

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
        // Defining instructions of each value (several after PHI elimination), as one
        // array sliced per value (`starts`), so no allocation per value.
        let nvalues = f.values.len();
        let mut starts = vec![0u32; nvalues + 1];
        for inst in f.blocks.iter().flat_map(|b| &b.insts) {
            for d in &inst.defs {
                starts[d.0 as usize + 1] += 1;
            }
        }
        for v in 0..nvalues {
            starts[v + 1] += starts[v];
        }
        let mut fill = starts.clone();
        let mut sites = vec![(0u32, 0u32); starts[nvalues] as usize];
        let mut live: Vec<Vec<bool>> = f.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
        let mut work = Vec::new();
        for (b, block) in f.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                for d in &inst.defs {
                    sites[fill[d.0 as usize] as usize] = (b as u32, i as u32);
                    fill[d.0 as usize] += 1;
                }
                let pure = opcode_info(inst.opcode, tables).is_some_and(|o| o.props & effects == 0);
                if !pure || inst.defs.is_empty() {
                    live[b][i] = true;
                    work.push((b, i));
                }
            }
        }
        let defs = |v: u32| &sites[starts[v as usize] as usize..starts[v as usize + 1] as usize];
        while let Some((b, i)) = work.pop() {
            for v in f.blocks[b].insts[i].uses() {
                for &(db, di) in defs(v.0) {
                    let (db, di) = (db as usize, di as usize);
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
