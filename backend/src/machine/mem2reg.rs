//! Machine mem2reg (`nvptx-mem2reg`, "Mem2Reg on Machine Instructions to remove local
//! stack objects", cicc-machine-passes.txt; off with `nv-disable-mem2reg`): frame slots
//! that are plain registers in disguise go back to registers.
//!
//! Runs on SSA machine code right after selection (the reference lists it pre-RA), so
//! every later pass sees the registers; functions with frame objects get a dead-code
//! sweep first, so address arithmetic selection absorbed does not count as an escape. A frame object qualifies when no address of
//! it escapes (every instruction naming it is a whole-register load or store at a
//! constant offset: `ld.local [__local_depot0+8]`) and its accessed cells do not
//! partially overlap. A cell with exactly one store that dominates every load of it,
//! all of the stored register's type, is promoted: each load's register becomes the
//! stored register, and the loads and the store go. A cell that is stored but never
//! loaded loses its stores. An object left without accesses is removed from the
//! frame (the remaining ones are renumbered).

use rustc_hash::FxHashMap as HashMap;

use target_desc::tables::TargetTables;

use super::cfg::Cfg;
use super::frame;
use crate::mir::{Function, Loc, Module, Operand, ValueId};

#[derive(Default, Debug)]
pub struct Mem2RegStats {
    pub promoted_cells: usize,
    pub loads_removed: usize,
    pub stores_removed: usize,
    pub objects_removed: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

pub fn run(module: &mut Module, tables: &TargetTables) -> Mem2RegStats {
    let mut stats = Mem2RegStats::default();
    for f in module.functions.iter_mut().filter(|f| !f.frame.is_empty() && f.ssa) {
        promote(f, tables, &mut stats);
    }
    stats
}

/// One access: block, index, the access.
type Site = (usize, usize, frame::Access);

fn promote(f: &mut Function, tables: &TargetTables, stats: &mut Mem2RegStats) {
    // Selection leaves the address arithmetic its patterns absorbed (`shared` nodes)
    // for dce; without it, a dead `PTR_ADD` of a frame address would look like an escape.
    super::dce::remove_dead_in_function(f, tables);
    let objects = f.frame.len();
    let mut escaped = vec![false; objects];
    let mut sites: Vec<Vec<Site>> = vec![Vec::new(); objects];
    // Address computations nothing reads (selection leaves them for dce): not an escape,
    // and removed with their object.
    let mut dead_refs: Vec<Vec<(usize, usize)>> = vec![Vec::new(); objects];
    let read: rustc_hash::FxHashSet<u32> = f.blocks.iter().flat_map(|b| &b.insts).flat_map(|i| i.uses()).map(|v| v.0).collect();
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            let Some(k) = frame::frame_object(inst, tables) else { continue };
            if k >= objects {
                continue;
            }
            match frame::access(inst, tables) {
                Some(a) => sites[k].push((b, i, a)),
                None if !inst.defs.is_empty() && inst.defs.iter().all(|d| !read.contains(&d.0)) => dead_refs[k].push((b, i)),
                None => escaped[k] = true,
            }
        }
    }
    let cfg = Cfg::new(f, tables);
    let size = |f: &Function, v: ValueId| i64::from(crate::legalize::abi::store_bytes(tables, f.value(v).ty));
    let mut rename: HashMap<u32, ValueId> = HashMap::default();
    let mut remove: Vec<(usize, usize)> = Vec::new();
    for k in 0..objects {
        if escaped[k] || sites[k].is_empty() {
            continue;
        }
        // Cells by offset; every access of a cell has the same size, and cells are disjoint.
        let mut cells: std::collections::BTreeMap<i64, Vec<Site>> = std::collections::BTreeMap::new();
        for s in &sites[k] {
            cells.entry(s.2.offset).or_default().push(*s);
        }
        let mut disjoint = true;
        let mut end = i64::MIN;
        for (offset, list) in &cells {
            let sizes: Vec<i64> = list.iter().map(|s| size(f, s.2.value)).collect();
            if sizes.iter().any(|&s| s != sizes[0]) || *offset < end {
                disjoint = false;
                break;
            }
            end = offset + sizes[0];
        }
        if !disjoint {
            continue;
        }
        for (offset, list) in &cells {
            let stores: Vec<&Site> = list.iter().filter(|s| s.2.store).collect();
            let loads: Vec<&Site> = list.iter().filter(|s| !s.2.store).collect();
            if loads.is_empty() {
                remove.extend(stores.iter().map(|s| (s.0, s.1)));
                stats.stores_removed += stores.len();
                continue;
            }
            let [store] = stores.as_slice() else { continue };
            let value = store.2.value;
            let ty = f.value(value).ty;
            let dominates = |l: &Site| if l.0 == store.0 { store.1 < l.1 } else { cfg.dominates(store.0, l.0) };
            if !loads.iter().all(|l| dominates(l) && f.value(l.2.value).ty == ty) {
                continue;
            }
            for l in &loads {
                rename.insert(l.2.value.0, value);
                remove.push((l.0, l.1));
            }
            remove.push((store.0, store.1));
            stats.promoted_cells += 1;
            stats.loads_removed += loads.len();
            stats.stores_removed += 1;
            let object = f.frame[k].name.as_ref().map_or(format!("frame object {k}"), |n| format!("frame object {k} (`{n}`)"));
            let loc = f.blocks[store.0].insts[store.1].loc;
            let message = format!("promoted {object} at offset {offset} to %{} ({} load(s))", f.value(value).name, loads.len());
            stats.remarks.push((f.name.clone(), loc, message));
        }
    }
    // Objects nothing will name any more leave the frame, with their dead addresses.
    remove.sort_unstable();
    let mut used = vec![false; objects];
    for k in 0..objects {
        used[k] = escaped[k] || sites[k].iter().any(|s| remove.binary_search(&(s.0, s.1)).is_err());
        if !used[k] {
            remove.extend(dead_refs[k].iter().copied());
        }
    }
    if remove.is_empty() && used.iter().all(|&u| u) {
        return;
    }
    // A load's register may itself be what another promoted cell stored.
    let resolve = |mut v: ValueId| {
        while let Some(&to) = rename.get(&v.0) {
            v = to;
        }
        v
    };
    remove.sort_unstable();
    for (b, block) in f.blocks.iter_mut().enumerate() {
        let mut i = 0;
        block.insts.retain(|_| {
            i += 1;
            remove.binary_search(&(b, i - 1)).is_err()
        });
        for inst in &mut block.insts {
            for o in &mut inst.operands {
                if let Operand::Value(v) = o {
                    *v = resolve(*v);
                }
            }
        }
    }
    stats.objects_removed += frame::remove_unused_objects(f, tables, &used);
}
