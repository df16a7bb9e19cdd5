//! Scalar replacement of frame cells (`sroa`: the constant-offset case of LLVM's SROA,
//! with mem2reg's two fast paths for placing values; off with `disable-sroa`, ptxc's
//! own knob, as the reference names none).
//!
//! Where it sits: `verify` -> `sroa` -> `legalize`, on the input's generic SSA MIR, as
//! llc's NVPTX pipeline runs SROA in its IR passes before InferAddressSpaces. The
//! conversions it writes (truncations, extensions, bitcasts of the input's types) are
//! then legalized like the input's own instructions, and the MIR interpreter checks the
//! pass on every test kernel and on random kernels (`backend/tests/combine_differential.rs`).
//! The machine-level `nvptx-mem2reg` (CICC's pass, after selection) stays for the slots
//! selection itself creates and for `-O` levels or knobs that skip this pass.
//!
//! What it does: a frame object whose address never escapes (it reaches only `LOAD`s and
//! `STORE`s, through `PTR_ADD`s of constants and `ADDRSPACECAST`s, so a generic pointer
//! to it counts too) is cut into cells, one per accessed offset. Every access of a cell
//! has the cell's width; cells do not overlap. A cell is promoted when all its stores
//! are in one block and each load either follows a store in that block (it reads the
//! latest one) or sits in a block that block dominates (it reads the last one). This
//! covers mem2reg's single-store and single-block cases.
//!
//! A promoted load becomes the stored value: the value itself for the same type, a
//! `BITCAST` for another scalar of the width, a `TRUNCATE` when the store truncated
//! (`STORE.trunc.i8` of an i32 read by `LOAD i8`), and for an extending load
//! (`LOAD.zext.i8`) the stored value truncated to the memory width and extended again
//! (`anyext` as a zero extension, which is what the interpreter reads). A cell stored
//! but never loaded loses its stores. Objects left without accesses leave the frame.
//! Cells the two cases do not cover (stores in several blocks feeding a load through a
//! join) stay in memory: that needs PHI placement, which this pass does not do.
//!
//! Linear: one sweep resolves every address to its object and offset (memoized along
//! each chain of address arithmetic), one sweep classifies the uses, and each cell's
//! accesses are sorted once.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use target_desc::tables::{OpcodeId, TargetTables, TypeKind, VtId};

use crate::machine::cfg::Cfg;
use crate::mir::{Function, Inst, Loc, Module, Opcode, Operand, ValueId};

/// What the pass did, for remarks and tests.
#[derive(Clone, Debug, Default)]
pub struct SroaStats {
    pub promoted_cells: usize,
    pub loads_removed: usize,
    pub stores_removed: usize,
    pub objects_removed: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

struct Ops {
    frame_index: OpcodeId,
    ptr_add: OpcodeId,
    cast: OpcodeId,
    constant: OpcodeId,
    load: OpcodeId,
    store: OpcodeId,
    truncate: OpcodeId,
    zext: OpcodeId,
    sext: OpcodeId,
    bitcast: OpcodeId,
}

pub fn run(module: &mut Module, tables: &TargetTables) -> Result<SroaStats, String> {
    let op = |name: &str| tables.opcode(name).ok_or_else(|| format!("the description has no generic opcode {name}, which sroa needs"));
    let ops = Ops {
        frame_index: op("FRAME_INDEX")?,
        ptr_add: op("PTR_ADD")?,
        cast: op("ADDRSPACECAST")?,
        constant: op("CONSTANT")?,
        load: op("LOAD")?,
        store: op("STORE")?,
        truncate: op("TRUNCATE")?,
        zext: op("ZERO_EXTEND")?,
        sext: op("SIGN_EXTEND")?,
        bitcast: op("BITCAST")?,
    };
    let mut stats = SroaStats::default();
    for f in module.functions.iter_mut().filter(|f| f.ssa && !f.frame.is_empty()) {
        promote_function(f, tables, &ops, &mut stats);
    }
    Ok(stats)
}

/// How a load widens what memory holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Ext {
    None,
    Zero,
    Sign,
}

/// One load or store of a frame cell.
#[derive(Copy, Clone, Debug)]
struct Access {
    block: usize,
    index: usize,
    store: bool,
    offset: i128,
    /// Bits of memory accessed: the memory type's for a truncating store or an
    /// extending load, else the value type's.
    bits: u32,
    /// The stored value, or the loaded result.
    value: ValueId,
    /// `STORE.trunc`: only the low `bits` of the value reach memory.
    truncating: bool,
    ext: Ext,
}

/// Where a pointer value points: a frame object and a byte offset into it.
type Place = Option<(usize, i128)>;

#[derive(Copy, Clone)]
enum Memo {
    Unknown,
    InProgress,
    Done(Place),
}

fn promote_function(f: &mut Function, tables: &TargetTables, ops: &Ops, stats: &mut SroaStats) {
    let objects = f.frame.len();
    let mut site: Vec<Option<(usize, usize)>> = vec![None; f.values.len()];
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            for d in &inst.defs {
                site[d.0 as usize] = Some((b, i));
            }
        }
    }
    let constant = |v: ValueId| -> Option<i128> {
        let (b, i) = site[v.0 as usize]?;
        let inst = &f.blocks[b].insts[i];
        match (inst.opcode.generic(), inst.operands.as_slice()) {
            (Some(g), [Operand::Int(c)]) if g == ops.constant => Some(c.get()),
            _ => None,
        }
    };
    // Every value's place, resolved down its chain of address arithmetic once.
    let mut memo = vec![Memo::Unknown; f.values.len()];
    let place = |v: ValueId, memo: &mut Vec<Memo>| -> Place {
        let mut chain: Vec<(ValueId, i128)> = Vec::new();
        let mut cur = v;
        let mut base: Place = loop {
            match memo[cur.0 as usize] {
                Memo::Done(p) => break p,
                // A cycle of address arithmetic (only unreachable code can hold one).
                Memo::InProgress => break None,
                Memo::Unknown => {}
            }
            memo[cur.0 as usize] = Memo::InProgress;
            let Some((b, i)) = site[cur.0 as usize] else { break None };
            let inst = &f.blocks[b].insts[i];
            let g = inst.opcode.generic();
            match inst.operands.as_slice() {
                [Operand::Int(k)] if g == Some(ops.frame_index) => {
                    break usize::try_from(k.get()).ok().filter(|&k| k < objects).map(|k| (k, 0));
                }
                [Operand::Value(p), Operand::Value(c)] if g == Some(ops.ptr_add) => match constant(*c) {
                    Some(c) => {
                        chain.push((cur, c));
                        cur = *p;
                    }
                    None => break None,
                },
                [Operand::Value(p)] if g == Some(ops.cast) => {
                    chain.push((cur, 0));
                    cur = *p;
                }
                _ => break None,
            }
        };
        memo[cur.0 as usize] = Memo::Done(base);
        for &(value, delta) in chain.iter().rev() {
            base = base.map(|(k, o)| (k, o.saturating_add(delta)));
            memo[value.0 as usize] = Memo::Done(base);
        }
        base
    };

    let cfg = Cfg::new(f, tables);
    let mut escaped = vec![false; objects];
    let mut accesses: Vec<Vec<Access>> = vec![Vec::new(); objects];
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            for (slot, operand) in inst.operands.iter().enumerate() {
                let Operand::Value(u) = operand else { continue };
                let Some((k, offset)) = place(*u, &mut memo) else { continue };
                let g = inst.opcode.generic();
                let derived = (g == Some(ops.ptr_add) && slot == 0 || g == Some(ops.cast)) && inst.defs.first().is_some_and(|d| place(*d, &mut memo).is_some());
                if derived {
                    continue;
                }
                match access(f, tables, ops, inst, slot, b, i, offset) {
                    Some(a) if cfg.reachable(b) && a.offset >= 0 && a.offset * 8 + i128::from(a.bits) <= i128::from(f.frame[k].size) * 8 => accesses[k].push(a),
                    _ => escaped[k] = true,
                }
            }
        }
    }

    // Per promoted load, what replaces it: a value (renaming its result) or instructions
    // defining its result.
    let mut rename: HashMap<u32, ValueId> = HashMap::default();
    let mut replace: HashMap<(usize, usize), Vec<Inst>> = HashMap::default();
    let mut remove: HashSet<(usize, usize)> = HashSet::default();
    let mut names: Option<crate::mir::NameSet> = None;
    for k in 0..objects {
        if escaped[k] || accesses[k].is_empty() {
            continue;
        }
        let list = &mut accesses[k];
        list.sort_by_key(|a| (a.offset, a.block, a.index));
        // Cells: runs of one offset; all of one width, and disjoint.
        let mut cells: Vec<&[Access]> = Vec::new();
        let mut start = 0;
        let mut disjoint = true;
        for j in 1..=list.len() {
            if j == list.len() || list[j].offset != list[start].offset {
                let cell = &list[start..j];
                let bits = cell[0].bits;
                if cell.iter().any(|a| a.bits != bits) || (j < list.len() && list[j].offset * 8 < cell[0].offset * 8 + i128::from(bits)) {
                    disjoint = false;
                }
                cells.push(cell);
                start = j;
            }
        }
        if !disjoint {
            continue;
        }
        for cell in cells {
            let stores: Vec<&Access> = cell.iter().filter(|a| a.store).collect();
            let loads: Vec<&Access> = cell.iter().filter(|a| !a.store).collect();
            if loads.is_empty() {
                remove.extend(stores.iter().map(|s| (s.block, s.index)));
                stats.stores_removed += stores.len();
                continue;
            }
            let Some(pairs) = reaching_stores(&stores, &loads, &cfg) else { continue };
            let names = names.get_or_insert_with(|| crate::mir::NameSet::of(f));
            if !pairs.iter().all(|(store, load)| converts(f, tables, store, load)) {
                continue; // a width or type this pass does not convert: the cell stays
            }
            let mut made: Vec<(&Access, Result<ValueId, Vec<Inst>>)> = Vec::new();
            for (store, load) in &pairs {
                match convert(f, tables, ops, names, store, load) {
                    Some(r) => made.push((load, r)),
                    None => break,
                }
            }
            if made.len() < pairs.len() {
                continue; // unreachable: `converts` said yes for every pair
            }
            for (load, r) in made {
                match r {
                    Ok(v) => {
                        rename.insert(load.value.0, v);
                        remove.insert((load.block, load.index));
                    }
                    Err(insts) => {
                        replace.insert((load.block, load.index), insts);
                    }
                }
            }
            remove.extend(stores.iter().map(|s| (s.block, s.index)));
            stats.promoted_cells += 1;
            stats.loads_removed += loads.len();
            stats.stores_removed += stores.len();
            let object = f.frame[k].name.as_ref().map_or(format!("frame object {k}"), |n| format!("frame object {k} (`{n}`)"));
            let loc = f.blocks[stores[0].block].insts[stores[0].index].loc;
            let sources: Vec<String> = stores.iter().map(|s| format!("%{}", f.value(s.value).name)).collect();
            stats.remarks.push((f.name.clone(), loc, format!("promoted {object} at offset {} to {} ({} load(s))", cell[0].offset, sources.join(", "), loads.len())));
        }
    }
    if remove.is_empty() && replace.is_empty() {
        return;
    }
    // A load's result may itself be what another promoted cell stored.
    let resolve = |mut v: ValueId| {
        while let Some(&to) = rename.get(&v.0) {
            v = to;
        }
        v
    };
    for (b, block) in f.blocks.iter_mut().enumerate() {
        let old = std::mem::take(&mut block.insts);
        for (i, inst) in old.into_iter().enumerate() {
            if let Some(insts) = replace.remove(&(b, i)) {
                block.insts.extend(insts);
            } else if !remove.contains(&(b, i)) {
                block.insts.push(inst);
            }
        }
        for inst in &mut block.insts {
            for o in &mut inst.operands {
                if let Operand::Value(v) = o {
                    *v = resolve(*v);
                }
            }
        }
    }
    // The address arithmetic of the promoted cells is dead now; objects nothing names
    // any more leave the frame, and the rest are renumbered.
    crate::machine::dce::remove_dead_in_function(f, tables);
    let mut used = vec![false; objects];
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        if let Some(k) = inst.frame_operand(tables) {
            if let Some(Operand::Int(k)) = inst.operands.get(k) {
                if let Some(u) = usize::try_from(k.get()).ok().and_then(|k| used.get_mut(k)) {
                    *u = true;
                }
            }
        }
    }
    stats.objects_removed += crate::machine::frame::remove_unused_objects(f, tables, &used);
}

/// The access `inst` makes through its operand `slot` at `offset` into a frame object:
/// `None` when that use is not a plain load or store through the pointer operand (an
/// escape), or is volatile.
#[allow(clippy::too_many_arguments)]
fn access(f: &Function, tables: &TargetTables, ops: &Ops, inst: &Inst, slot: usize, block: usize, index: usize, offset: i128) -> Option<Access> {
    let g = inst.opcode.generic()?;
    let store = g == ops.store;
    if !(store || g == ops.load) || inst.has_flag("volatile") {
        return None;
    }
    let (pointer_slot, offset_slot) = if store { (1, 2) } else { (0, 1) };
    if slot != pointer_slot {
        return None;
    }
    let extra = match inst.operands.get(offset_slot) {
        Some(Operand::Int(c)) => c.get(),
        _ => 0,
    };
    let value = if store {
        match inst.operands.first()? {
            Operand::Value(v) => *v,
            _ => return None,
        }
    } else {
        *inst.defs.first()?
    };
    let memory = inst.flags.iter().find_map(|fl| tables.vt(fl));
    let truncating = store && inst.has_flag("trunc");
    let ext = if inst.has_flag("sext") {
        Ext::Sign
    } else if inst.has_flag("zext") || inst.has_flag("anyext") {
        Ext::Zero
    } else {
        Ext::None
    };
    let value_info = tables.type_info(f.value(value).ty)?;
    let bits = match memory {
        Some(m) if truncating || ext != Ext::None => u32::from(tables.type_info(m)?.bits),
        None if !truncating && ext == Ext::None => u32::from(value_info.bits),
        _ => return None,
    };
    // Whole bytes only: an i1 in memory is a byte whose other bits the store defines.
    if bits % 8 != 0 || bits == 0 {
        return None;
    }
    Some(Access { block, index, store, offset: offset.checked_add(extra)?, bits, value, truncating, ext })
}

/// For each load of a cell, the store whose value it reads: all stores must be in one
/// block; a load there reads the latest store before it, and a load in a block that
/// block dominates reads its last store. `None` when some load has no such store.
fn reaching_stores<'a>(stores: &[&'a Access], loads: &[&'a Access], cfg: &Cfg) -> Option<Vec<(&'a Access, &'a Access)>> {
    let home = stores.first()?.block;
    if stores.iter().any(|s| s.block != home) {
        return None;
    }
    // `stores` is in program order: the cell's accesses are sorted by (offset, block, index).
    let last = *stores.last()?;
    loads
        .iter()
        .map(|l| {
            let store = if l.block == home {
                *stores.iter().rev().find(|s| s.index < l.index)?
            } else if cfg.dominates(home, l.block) {
                last
            } else {
                return None;
            };
            Some((store, *l))
        })
        .collect()
}

/// How a load reads what a store wrote, when the types convert.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Conversion {
    /// The stored value itself.
    Same,
    Bitcast,
    Truncate,
    /// An extending load: the stored value made the memory's integer type (by
    /// `narrow`, unless it already is), then extended.
    Extend { narrow: Option<Narrow> },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Narrow {
    Truncate,
    Bitcast,
}

fn conversion(f: &Function, tables: &TargetTables, store: &Access, load: &Access) -> Option<Conversion> {
    let (ti, li) = (tables.type_info(f.value(store.value).ty)?, tables.type_info(f.value(load.value).ty)?);
    let scalar = |k: TypeKind| matches!(k, TypeKind::Int | TypeKind::Float);
    let bits = load.bits;
    if load.ext == Ext::None {
        return if !store.truncating && ti.id == li.id {
            Some(Conversion::Same)
        } else if !store.truncating && scalar(ti.kind) && scalar(li.kind) && ti.bits == li.bits {
            Some(Conversion::Bitcast)
        } else if store.truncating && ti.kind == TypeKind::Int && li.kind == TypeKind::Int && u32::from(li.bits) == bits {
            Some(Conversion::Truncate)
        } else {
            None
        };
    }
    if li.kind != TypeKind::Int || !scalar(ti.kind) {
        return None;
    }
    tables.vt(&format!("i{bits}"))?;
    let narrow = if ti.kind == TypeKind::Int && u32::from(ti.bits) == bits {
        None
    } else if ti.kind == TypeKind::Int && u32::from(ti.bits) > bits {
        Some(Narrow::Truncate)
    } else if !store.truncating && u32::from(ti.bits) == bits {
        Some(Narrow::Bitcast)
    } else {
        return None;
    };
    Some(Conversion::Extend { narrow })
}

fn converts(f: &Function, tables: &TargetTables, store: &Access, load: &Access) -> bool {
    conversion(f, tables, store, load).is_some()
}

/// What replaces `load` given the value `store` wrote: the value itself (`Ok`), or the
/// instructions that define the load's result from it (`Err`); `None` when the types do
/// not convert.
fn convert(f: &mut Function, tables: &TargetTables, ops: &Ops, names: &mut crate::mir::NameSet, store: &Access, load: &Access) -> Option<Result<ValueId, Vec<Inst>>> {
    let (v, l) = (store.value, load.value);
    let loc = f.blocks[load.block].insts[load.index].loc;
    let one = |op: OpcodeId, def: ValueId, from: ValueId| Inst { defs: smallvec::smallvec![def], opcode: Opcode::Generic(op), flags: Default::default(), operands: vec![Operand::Value(from)], loc };
    Some(match conversion(f, tables, store, load)? {
        Conversion::Same => Ok(v),
        Conversion::Bitcast => Err(vec![one(ops.bitcast, l, v)]),
        Conversion::Truncate => Err(vec![one(ops.truncate, l, v)]),
        Conversion::Extend { narrow } => {
            let mut insts = Vec::new();
            let x = match narrow {
                None => v,
                Some(how) => {
                    let ty: VtId = tables.vt(&format!("i{}", load.bits))?;
                    let x = f.fresh_value(names, &format!("{}.sroa", f.value(l).name), ty);
                    insts.push(one(if how == Narrow::Truncate { ops.truncate } else { ops.bitcast }, x, v));
                    x
                }
            };
            insts.push(one(if load.ext == Ext::Sign { ops.sext } else { ops.zext }, l, x));
            Err(insts)
        }
    })
}
