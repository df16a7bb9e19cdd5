//! Dead-code removal: drops instructions whose results are unused and that have no
//! effect besides them (typically `CONSTANT`s folded into immediates by selection).
//!
//! Mark and sweep, linear in the function's size: instructions with effects are live,
//! and so is every instruction defining a value a live instruction uses. (Peeling dead
//! instructions one use-count round at a time would be quadratic on long dead chains.)
//! The marking follows program order backwards rather than def-use chains, for locality
//! on large blocks (see [`remove_dead_in_function`]).

use target_desc::tables::{props, TargetTables};

use crate::mir::{opcode_info, Module};

pub fn remove_dead_code(module: &mut Module, tables: &TargetTables) {
    for f in &mut module.functions {
        remove_dead_in_function(f, tables);
    }
}

/// Removes the instructions of `f` whose results nothing reads (transitively); returns
/// how many.
///
/// The marking walks the function backwards (blocks and instructions in reverse), so in
/// straight-line code an instruction's readers are marked before it is reached and it
/// is decided on the spot, from a bit per value (`needed`) that stays in cache. Only a
/// definition the walk has already passed when its value becomes needed (one that
/// follows a reader: a loop's back edge, PHI inputs) goes through the worklist, by its
/// definition sites. A depth-first marking from every root alone visits a block of
/// millions of instructions in the order of its def-use chains, a cache miss per step.
pub fn remove_dead_in_function(f: &mut crate::mir::Function, tables: &TargetTables) -> usize {
    let effects = props::TERMINATOR | props::SIDE_EFFECTS | props::MAY_STORE | props::CALL | props::CONVERGENT;
    // Defining instructions of each value (several after PHI elimination), as one array
    // sliced per value (`starts`), so no allocation per value.
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
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            for d in &inst.defs {
                sites[fill[d.0 as usize] as usize] = (b as u32, i as u32);
                fill[d.0 as usize] += 1;
            }
        }
    }
    drop(fill);
    let defs = |v: u32| &sites[starts[v as usize] as usize..starts[v as usize + 1] as usize];
    let mut needed = Bits::new(nvalues);
    let mut live: Vec<Vec<bool>> = f.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    let mut work: Vec<(u32, u32)> = Vec::new();
    for b in (0..f.blocks.len()).rev() {
        for i in (0..f.blocks[b].insts.len()).rev() {
            if live[b][i] {
                continue;
            }
            let inst = &f.blocks[b].insts[i];
            let pure = opcode_info(inst.opcode, tables).is_some_and(|o| o.props & effects == 0);
            if pure && !inst.defs.is_empty() && !inst.defs.iter().any(|d| needed.get(d.0)) {
                continue;
            }
            live[b][i] = true;
            work.push((b as u32, i as u32));
            // The instructions made live here and, through them, every definition
            // already passed that they need; definitions still ahead are found by the
            // walk when it reaches them.
            while let Some((lb, li)) = work.pop() {
                for v in f.blocks[lb as usize].insts[li as usize].uses() {
                    if needed.get(v.0) {
                        continue;
                    }
                    needed.set(v.0);
                    for &(db, di) in defs(v.0) {
                        let passed = (db as usize, di as usize) > (b, i);
                        if passed && !live[db as usize][di as usize] {
                            live[db as usize][di as usize] = true;
                            work.push((db, di));
                        }
                    }
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

/// A fixed set of value numbers, a bit each.
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }

    fn get(&self, i: u32) -> bool {
        self.0[i as usize / 64] >> (i % 64) & 1 == 1
    }

    fn set(&mut self, i: u32) {
        self.0[i as usize / 64] |= 1 << (i % 64);
    }
}
