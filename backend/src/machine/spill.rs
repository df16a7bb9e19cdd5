//! Spilling and stack slot coloring: the last resort of the register-pressure
//! allocator, after block rematerialization and out-of-SSA translation.
//!
//! PTX registers are virtual and ptxas allocates the hardware ones, so a spill here is a
//! decision made for ptxas: when a function has a hard register bound (the kernel's
//! `maxnreg`, `--maxreg`, or the occupancy its `maxntid`/`minnctapersm` ask for; the
//! soft `nv-remat-default-max-reg` target never spills) and its pressure is still
//! over it, values go to `.local` slots that the frame layout places in the
//! function's depot (`emit/frame.rs`), as CICC's greedy allocator and PrologEpilogInserter
//! do (cicc-machine-passes.txt, "Register allocation", "StackSlotColoring").
//!
//! Choice (per block over the target, at each point over it, walking backwards): among
//! the values live across the point and not touched by its instruction, the one with
//! the largest distance to its next use in the block per unit of spill cost, where the
//! cost counts each definition and use weighted 10^loop depth (Belady's rule, damped by
//! what the spill code costs inside loops). Placement is spill-everywhere: a store
//! after every definition, a reload into a fresh register before every reading
//! instruction, so a value live across a loop it does not use costs nothing inside the
//! loop. A value computed from nothing (a constant, a parameter load, a special
//! register) is recomputed before each use instead, and its definition dropped, as
//! LLVM's spiller rematerializes trivial definitions; it counts a quarter of a spill. Rounds repeat on the rewritten function (a reload is itself live for a moment)
//! until no block is over the target or nothing is left to spill.
//!
//! Stack slot coloring (`disable-ssc` skips it): the slots' liveness (a reload reads its
//! slot, a store writes it) gives an interference graph; slots of the same size that
//! never interfere share one frame object, greedily in slot order.
//!
//! Instructions tied by the carry flag (`add.cc`/`addc`) are never split apart: their
//! values are not spilled. The allocation checker (`checker.rs`) follows values through
//! the slots.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use target_desc::tables::{SmTables, TargetTables};

use super::cfg::Cfg;
use super::frame;
use super::pressure::{register_target, PressureSets};
use crate::mir::{FrameObject, Function, Inst, Loc, Module, Opcode, Operand, ValueId};
use crate::options::Options;

/// Rounds of choose-and-rewrite per function.
const MAX_ROUNDS: usize = 8;

#[derive(Default, Debug)]
pub struct SpillStats {
    pub functions: usize,
    pub spilled: usize,
    pub stores: usize,
    pub reloads: usize,
    /// Values recomputed at their uses instead of spilled, and the copies made.
    pub rematerialized: usize,
    pub recomputed: usize,
    /// Slots before and after stack slot coloring, and the bytes they take.
    pub slots: usize,
    pub colored_slots: usize,
    pub bytes: u64,
    pub remarks: Vec<(String, Loc, String)>,
}

pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables, options: &Options) -> SpillStats {
    let sets = PressureSets::new(tables, sm);
    let mut stats = SpillStats::default();
    let color = !options.flag("disable-ssc").unwrap_or(false);
    for f in &mut module.functions {
        let first_slot = f.frame.len();
        spill_function(f, tables, sm, &sets, options, &mut stats);
        if f.frame.len() > first_slot {
            stats.functions += 1;
            stats.slots += f.frame.len() - first_slot;
            if color {
                color_slots(f, tables, first_slot);
            }
            stats.colored_slots += f.frame.len() - first_slot;
            stats.bytes += f.frame[first_slot..].iter().map(|o| o.size).sum::<u64>();
        }
    }
    stats
}

/// Values an instruction tied to its neighbour by a carry flag defines or reads.
fn flag_tied(f: &Function, tables: &TargetTables) -> HashSet<u32> {
    let mut tied = HashSet::default();
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        if inst.writes_carry(tables) || inst.reads_carry(tables) {
            tied.extend(inst.defs.iter().map(|v| v.0).chain(inst.uses().map(|v| v.0)));
        }
    }
    tied
}

fn spill_function(f: &mut Function, tables: &TargetTables, sm: &SmTables, sets: &PressureSets, options: &Options, stats: &mut SpillStats) {
    if f.blocks.iter().flat_map(|b| &b.insts).any(|i| i.is_phi(tables)) {
        return; // runs after phi-elim
    }
    let bound = register_target(f, sets.occupancy.as_ref(), options);
    if bound.source == "nv-remat-default-max-reg" {
        return;
    }
    let limit = sets.targets(f, options)[0];
    let sm_index = tables.sm_index(sm);
    let tied = flag_tied(f, tables);
    // The value names (for fresh reload names), made when the first spill needs them.
    let mut names: Option<crate::mir::NameSet> = None;
    let mut reloads: HashSet<u32> = HashSet::default();
    let mut spilled: HashSet<u32> = HashSet::default();
    let mut patterns: HashMap<u8, Option<(u16, u16)>> = HashMap::default();
    let weight = |f: &Function, v: u32| sets.of(f, ValueId(v)).filter(|(s, _)| *s == 0).map_or(0, |(_, w)| i64::from(w));
    // Values computed from nothing (a constant, a kernel parameter, a special register:
    // one pure definition without register operands) are recomputed at their uses
    // instead of going through memory, as LLVM's spiller rematerializes trivial
    // definitions; they cost a quarter of a spill.
    let remat_def = |f: &Function| -> HashMap<u32, Inst> {
        let mut defs: HashMap<u32, (usize, Option<Inst>)> = HashMap::default();
        for inst in f.blocks.iter().flat_map(|b| &b.insts) {
            for d in &inst.defs {
                let e = defs.entry(d.0).or_insert((0, None));
                e.0 += 1;
                if inst.defs.len() == 1 && inst.uses().next().is_none() && super::cse::candidate(inst, tables) {
                    e.1 = Some(inst.clone());
                }
            }
        }
        defs.into_iter().filter_map(|(v, (n, i))| if n == 1 { i.map(|i| (v, i)) } else { None }).collect()
    };
    for _ in 0..MAX_ROUNDS {
        let trivial = remat_def(f);
        let cfg = Cfg::new(f, tables);
        let live_out = live_out_sets(f, &cfg);
        let depth = cfg.loop_depths();
        // Dense per-value cost (value ids are dense): no hashing on the hot path.
        let mut cost: Vec<f64> = vec![0.0; f.values.len()];
        for (b, block) in f.blocks.iter().enumerate() {
            let w = 10f64.powi(depth[b].min(6) as i32);
            for inst in &block.insts {
                for v in inst.defs.iter().copied().chain(inst.uses()) {
                    cost[v.0 as usize] += w;
                }
            }
        }
        let mut chosen: Vec<u32> = Vec::new();
        let mut chosen_set: HashSet<u32> = HashSet::default();
        // Per value, its next use in the block being walked (dense, stamped by block).
        let mut next_use: Vec<usize> = vec![0; f.values.len()];
        let mut next_use_block: Vec<usize> = vec![usize::MAX; f.values.len()];
        for b in 0..f.blocks.len() {
            let insts = &f.blocks[b].insts;
            let mut live = live_out[b].clone();
            let mut live_weight: i64 = live.iter().filter(|v| !chosen_set.contains(v)).map(|&v| weight(f, v)).sum();
            let mut defs: Vec<u32> = Vec::new();
            let mut uses: Vec<u32> = Vec::new();
            for i in (0..insts.len()).rev() {
                let inst = &insts[i];
                defs.clear();
                defs.extend(inst.defs.iter().map(|d| d.0));
                uses.clear();
                uses.extend(inst.uses().map(|u| u.0));
                let dead_defs: i64 = defs.iter().filter(|d| !live.contains(d) && !chosen_set.contains(d)).map(|&d| weight(f, d)).sum();
                let mut at = live_weight + dead_defs;
                if at > limit {
                    let mut candidates: Vec<(f64, u32)> = live
                        .iter()
                        .copied()
                        .filter(|v| !chosen_set.contains(v) && !spilled.contains(v) && !reloads.contains(v) && !tied.contains(v) && !defs.contains(v) && !uses.contains(v))
                        .filter(|&v| weight(f, v) > 0)
                        .filter(|&v| trivial.contains_key(&v) || *patterns.entry(f.value(ValueId(v)).ty.0).or_insert_with(|| frame::spill_patterns(tables, sm_index, f.value(ValueId(v)).ty.0)) != None)
                        .map(|v| {
                            let distance = if next_use_block[v as usize] == b { next_use[v as usize] - i } else { 2 * insts.len() - i };
                            // A 64-bit value frees two registers for the same spill code.
                            let cost = if trivial.contains_key(&v) { cost[v as usize] / 4.0 } else { cost[v as usize] };
                            (distance as f64 * weight(f, v) as f64 / cost.max(1.0), v)
                        })
                        .collect();
                    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    for (_, v) in candidates {
                        if at <= limit {
                            break;
                        }
                        let w = weight(f, v);
                        at -= w;
                        live_weight -= w;
                        chosen.push(v);
                        chosen_set.insert(v);
                    }
                }
                for d in &defs {
                    if live.remove(d) && !chosen_set.contains(d) {
                        live_weight -= weight(f, *d);
                    }
                }
                for u in &uses {
                    if live.insert(*u) && !chosen_set.contains(u) {
                        live_weight += weight(f, *u);
                    }
                    next_use[*u as usize] = i;
                    next_use_block[*u as usize] = b;
                }
            }
        }
        if chosen.is_empty() {
            break;
        }
        chosen.sort_unstable();
        // Where each chosen value is first defined, for the remarks (one walk).
        let mut def_loc: HashMap<u32, Loc> = HashMap::default();
        for inst in f.blocks.iter().flat_map(|b| &b.insts) {
            for d in inst.defs.iter().filter(|d| chosen_set.contains(&d.0)) {
                def_loc.entry(d.0).or_insert(inst.loc);
            }
        }
        let mut slot_of: HashMap<u32, Home> = HashMap::default();
        for &v in &chosen {
            if let Some(def) = trivial.get(&v) {
                slot_of.insert(v, Home::Remat(def.clone()));
                let message = format!("rematerialized %{} at its uses instead of spilling it (spill cost {})", f.value(ValueId(v)).name, cost[v as usize]);
                stats.remarks.push((f.name.clone(), def_loc.get(&v).copied().unwrap_or(f.loc), message));
                spilled.insert(v);
                stats.rematerialized += 1;
                continue;
            }
            let ty = f.value(ValueId(v)).ty;
            let Some(Some((store, load))) = patterns.get(&ty.0).copied() else { continue };
            let size = u64::from(crate::legalize::abi::store_bytes(tables, ty)).max(1);
            let align = (size.next_power_of_two().min(16)) as u32;
            f.frame.push(FrameObject { name: None, size, align, spill: true });
            slot_of.insert(v, Home::Slot { slot: f.frame.len() - 1, store, load });
            let message = format!("spilled %{} to frame object {} (spill cost {})", f.value(ValueId(v)).name, f.frame.len() - 1, cost[v as usize]);
            stats.remarks.push((f.name.clone(), def_loc.get(&v).copied().unwrap_or(f.loc), message));
            spilled.insert(v);
            stats.spilled += 1;
        }
        let names = names.get_or_insert_with(|| crate::mir::NameSet::of(f));
        rewrite(f, &slot_of, names, &mut reloads, stats);
    }
}

/// The registers live out of each block, out of SSA (a register may have several
/// definitions): the classic backward dataflow over per-block upward-exposed uses and
/// definitions, iterated in postorder to a fixed point. Only the live sets are hashed;
/// "is v defined in b" is a binary search in one sorted (value, block) list, so long
/// blocks cost no per-value hashing.
fn live_out_sets(f: &Function, cfg: &Cfg) -> Vec<HashSet<u32>> {
    let n = f.blocks.len();
    let mut upward: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut def_sites: Vec<(u32, u32)> = Vec::new();
    // Per value, the block and position of its last definition seen in this block's
    // forward walk (a use after it in the block is not upward-exposed).
    let mut defined_at: Vec<u32> = vec![u32::MAX; f.values.len()];
    let mut seen_use: Vec<u32> = vec![u32::MAX; f.values.len()];
    for (b, block) in f.blocks.iter().enumerate() {
        let b32 = b as u32;
        for inst in &block.insts {
            for u in inst.uses() {
                let k = u.0 as usize;
                if defined_at[k] != b32 && seen_use[k] != b32 {
                    seen_use[k] = b32;
                    upward[b].push(u.0);
                }
            }
            for d in &inst.defs {
                if defined_at[d.0 as usize] != b32 {
                    defined_at[d.0 as usize] = b32;
                    def_sites.push((d.0, b32));
                }
            }
        }
    }
    def_sites.sort_unstable();
    let defined_in = |v: u32, b: usize| def_sites.binary_search(&(v, b as u32)).is_ok();
    let mut live_in: Vec<HashSet<u32>> = upward.into_iter().map(|u| u.into_iter().collect()).collect();
    let mut live_out: Vec<HashSet<u32>> = vec![HashSet::default(); n];
    let order = cfg.reverse_postorder();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().rev() {
            let mut out = std::mem::take(&mut live_out[b]);
            for &s in &cfg.succs[b] {
                out.extend(live_in[s].iter().copied());
            }
            let grew: Vec<u32> = out.iter().copied().filter(|&v| !live_in[b].contains(&v) && !defined_in(v, b)).collect();
            if !grew.is_empty() {
                live_in[b].extend(grew);
                changed = true;
            }
            live_out[b] = out;
        }
    }
    live_out
}

/// Spill everywhere: a store after each definition of a spilled value, a reload into
/// a fresh register before each instruction reading it.
/// Where a chosen value lives between its definition and its uses.
enum Home {
    /// A frame object: stored after each definition, reloaded before each use.
    Slot { slot: usize, store: u16, load: u16 },
    /// Recomputed before each use by a copy of its one definition, which goes.
    Remat(Inst),
}

fn rewrite(f: &mut Function, slot_of: &HashMap<u32, Home>, names: &mut crate::mir::NameSet, reloads: &mut HashSet<u32>, stats: &mut SpillStats) {
    for b in 0..f.blocks.len() {
        if !f.blocks[b].insts.iter().any(|i| i.defs.iter().any(|v| slot_of.contains_key(&v.0)) || i.uses().any(|v| slot_of.contains_key(&v.0))) {
            continue;
        }
        let insts = std::mem::take(&mut f.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len() + 4);
        for mut inst in insts {
            // The definition of a rematerialized value goes: every use has its own copy.
            if matches!(inst.defs.as_slice(), [d] if matches!(slot_of.get(&d.0), Some(Home::Remat(_)))) {
                continue;
            }
            let mut reloaded: Vec<(u32, ValueId)> = Vec::new();
            for o in inst.operands.iter_mut() {
                let Operand::Value(v) = o else { continue };
                let Some(home) = slot_of.get(&v.0) else { continue };
                let t = match reloaded.iter().find(|(s, _)| *s == v.0) {
                    Some(&(_, t)) => t,
                    None => {
                        // `x.reload`, `x.reload.1`, ...: the name set resumes each base's
                        // suffix search, so a value read a thousand times is named in
                        // linear time.
                        let (base, ty) = (format!("{}.reload", f.values[v.0 as usize].name), f.values[v.0 as usize].ty);
                        let t = f.fresh_value(names, &base, ty);
                        reloads.insert(t.0);
                        reloaded.push((v.0, t));
                        match home {
                            Home::Slot { slot, load, .. } => {
                                out.push(Inst { defs: smallvec::smallvec![t], opcode: Opcode::Machine(*load), flags: Default::default(), operands: vec![Operand::int(*slot as i128)], loc: inst.loc });
                                stats.reloads += 1;
                            }
                            Home::Remat(def) => {
                                out.push(Inst { defs: smallvec::smallvec![t], loc: inst.loc, ..def.clone() });
                                stats.recomputed += 1;
                            }
                        }
                        t
                    }
                };
                *v = t;
            }
            let stores: Vec<Inst> = inst
                .defs
                .iter()
                .filter_map(|d| match slot_of.get(&d.0) {
                    Some(Home::Slot { slot, store, .. }) => Some(Inst { defs: Default::default(), opcode: Opcode::Machine(*store), flags: Default::default(), operands: vec![Operand::Value(*d), Operand::int(*slot as i128)], loc: inst.loc }),
                    _ => None,
                })
                .collect();
            stats.stores += stores.len();
            out.push(inst);
            out.extend(stores);
        }
        f.blocks[b].insts = out;
    }
}

/// Stack slot coloring over the spill slots `first..` of `f`.
fn color_slots(f: &mut Function, tables: &TargetTables, first: usize) {
    let count = f.frame.len() - first;
    let n = f.blocks.len();
    let cfg = Cfg::new(f, tables);
    // Per block, the slots read before being written (gen) and the slots written (kill).
    let slot = |inst: &Inst| frame::access(inst, tables).filter(|a| a.object >= first).map(|a| (a.object - first, a.store));
    let mut gen = vec![HashSet::<usize>::default(); n];
    let mut kill = vec![HashSet::<usize>::default(); n];
    for b in 0..n {
        for inst in f.blocks[b].insts.iter().rev() {
            if let Some((s, store)) = slot(inst) {
                if store {
                    gen[b].remove(&s);
                    kill[b].insert(s);
                } else {
                    gen[b].insert(s);
                }
            }
        }
    }
    let mut live_in = gen.clone();
    let order = cfg.reverse_postorder();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().rev() {
            let out: HashSet<usize> = cfg.succs[b].iter().flat_map(|&s| live_in[s].iter().copied()).collect();
            let mut new: HashSet<usize> = out.difference(&kill[b]).copied().collect();
            new.extend(gen[b].iter().copied());
            if new.len() != live_in[b].len() {
                live_in[b] = new;
                changed = true;
            }
        }
    }
    let mut interferes = vec![HashSet::<usize>::default(); count];
    for b in 0..n {
        let mut live: HashSet<usize> = cfg.succs[b].iter().flat_map(|&s| live_in[s].iter().copied()).collect();
        for inst in f.blocks[b].insts.iter().rev() {
            if let Some((s, store)) = slot(inst) {
                if store {
                    for &t in &live {
                        if t != s {
                            interferes[s].insert(t);
                            interferes[t].insert(s);
                        }
                    }
                    live.remove(&s);
                } else {
                    live.insert(s);
                }
            }
        }
    }
    // Greedy coloring in slot order; a color is a frame object of one size.
    let mut color_of = vec![0usize; count];
    let mut colors: Vec<(u64, u32, Vec<usize>)> = Vec::new();
    for s in 0..count {
        let (size, align) = (f.frame[first + s].size, f.frame[first + s].align);
        let c = colors.iter().position(|(sz, al, members)| *sz == size && *al == align && members.iter().all(|m| !interferes[s].contains(m)));
        let c = c.unwrap_or_else(|| {
            colors.push((size, align, Vec::new()));
            colors.len() - 1
        });
        colors[c].2.push(s);
        color_of[s] = c;
    }
    let map: Vec<usize> = (0..f.frame.len()).map(|k| if k < first { k } else { first + color_of[k - first] }).collect();
    f.frame.truncate(first);
    f.frame.extend(colors.iter().map(|(size, align, _)| FrameObject { name: None, size: *size, align: *align, spill: true }));
    for inst in f.blocks.iter_mut().flat_map(|b| b.insts.iter_mut()) {
        frame::renumber(inst, tables, &map);
    }
}
