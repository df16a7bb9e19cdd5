//! MachineCSE, pressure-aware (cicc-machine-passes.txt, "RP-Aware MachineCSE"): after
//! instruction selection, on SSA machine code, a machine instruction equal to one in a
//! dominating position (same machine opcode, flags, operands and result types) is
//! removed and its users read the earlier result.
//!
//! Candidates have no effects: no store, call, barrier, terminator or side effect, and
//! a load only when it reads invariant memory; intrinsics use the properties of their
//! description entry. Instructions of carry chains (`add.cc`/`addc`) are not: an
//! `addc` reading an earlier `add.cc`'s flag would read whatever `.cc` instruction ran
//! last. The walk is a preorder of the dominator tree with a scoped hash table, so
//! each instruction is hashed once.
//!
//! With `rp-aware-mcse` a CSE is suppressed when keeping the earlier result live down
//! to the later instruction would push a block's peak pressure (from
//! [`super::pressure`]) past the target: the function's `maxnreg`, else
//! `nv-remat-default-max-reg`, plus `reg-target-adjust`; predicates are checked against
//! their class's limit plus `pred-target-adjust` when `pred-aware-mcse` is on. After
//! each CSE the analysis is updated incrementally (`incremental-update-mcse`) or
//! recomputed, and `verify-update-mcse` compares the two (`print-verify` adds the
//! per-set figures to the error). With `copy-prop-mcse` off, the later instruction
//! becomes a copy of the earlier result instead of disappearing.

use rustc_hash::FxHashMap as HashMap;

use target_desc::tables::{props, SmTables, TargetTables};

use super::cfg::Cfg;
use super::pressure::{Pressure, PressureSets};
use crate::mir::{opcode_info, Function, Inst, Module, Opcode, Operand, ValueId};
use crate::options::Options;

/// What the pass did, for remarks and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CseStats {
    pub eliminated: usize,
    pub suppressed_by_pressure: usize,
    pub incremental_updates: usize,
    pub full_recomputations: usize,
    /// Incremental updates checked against a recomputation (`verify-update-mcse`).
    pub verified_updates: usize,
    /// One per decision: function, the later instruction's position, what happened.
    pub remarks: Vec<(String, crate::mir::Loc, String)>,
}

/// The knobs the pass reads.
struct Settings {
    rp_aware: bool,
    pred_aware: bool,
    copy_prop: bool,
    incremental: bool,
    verify_update: bool,
    print_verify: bool,
    /// For the pressure targets ([`PressureSets::targets`]).
    options: Options,
    sm_index: usize,
}

impl Settings {
    fn read(options: &Options, sm_index: usize) -> Settings {
        let flag = |name: &str, default: bool| options.flag(name).unwrap_or(default);
        Settings {
            rp_aware: flag("rp-aware-mcse", false),
            pred_aware: flag("pred-aware-mcse", false),
            copy_prop: flag("copy-prop-mcse", true),
            incremental: flag("incremental-update-mcse", true),
            verify_update: flag("verify-update-mcse", false),
            print_verify: flag("print-verify", false),
            options: options.clone(),
            sm_index,
        }
    }
}

/// Dominator paths longer than this are not walked for the pressure check; the CSE is
/// then suppressed (keeps the pass linear on deep dominator trees).
const MAX_PATH: usize = 64;

pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables, options: &Options) -> Result<CseStats, String> {
    let settings = Settings::read(options, tables.sm_index(sm));
    let sets = PressureSets::new(tables, sm);
    let mut stats = CseStats::default();
    for f in &mut module.functions {
        if f.ssa {
            cse_function(f, tables, &sets, &settings, &mut stats)?;
        }
    }
    Ok(stats)
}

/// Whether `inst` may be replaced by an equal instruction that dominates it (or, for
/// MachineLICM, computed once before its loop): it only computes its results.
pub(crate) fn candidate(inst: &Inst, tables: &TargetTables) -> bool {
    let Opcode::Machine(_) = inst.opcode else { return false };
    let Some(info) = opcode_info(inst.opcode, tables) else { return false };
    if inst.defs.is_empty() || matches!(info.name, "PHI" | "UNDEF" | "COPY") {
        return false;
    }
    let effects = props::TERMINATOR | props::SIDE_EFFECTS | props::MAY_STORE | props::CALL | props::CONVERGENT;
    // A selected load keeps `invariant` in its pattern's flags, not its own.
    let invariant = inst.has_flag("invariant") || matches!(inst.opcode, Opcode::Machine(m) if tables.patterns.get(m as usize).is_some_and(|p| p.flags.contains(&"invariant")));
    if info.props & effects != 0 || (info.props & props::MAY_LOAD != 0 && !invariant) {
        return false;
    }
    if info.name == "INTRINSIC" {
        let Some(Operand::Symbol(name)) = inst.operands.first() else { return false };
        let Some(intrinsic) = tables.intrinsics.iter().find(|i| i.name == &**name) else { return false };
        return intrinsic.props & (effects | props::MAY_LOAD) == 0;
    }
    true
}

/// The hash key: opcode, flags, operands and result types. A hit is confirmed with
/// [`same`] (the table keeps one instruction per hash; a collision only misses a reuse).
fn key(f: &Function, inst: &Inst) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    inst.expression_hash().hash(&mut h);
    for d in &inst.defs {
        f.value(*d).ty.0.hash(&mut h);
    }
    h.finish()
}

/// Whether `a` and `b` compute the same expression into results of the same types.
fn same(f: &Function, a: &Inst, b: &Inst) -> bool {
    a.same_expression(b) && a.defs.len() == b.defs.len() && a.defs.iter().zip(&b.defs).all(|(x, y)| f.value(*x).ty == f.value(*y).ty)
}

/// Whether the chain `later` computes what `earlier` does, instruction by instruction,
/// reading the earlier chain's results where it reads its own.
fn same_chain(f: &Function, earlier: &[Inst], later: &[Inst]) -> bool {
    let mut renamed: Vec<(ValueId, ValueId)> = Vec::new();
    earlier.len() == later.len()
        && earlier.iter().zip(later).all(|(a, b)| {
            let mut b = b.clone();
            for o in &mut b.operands {
                if let Operand::Value(v) = o {
                    if let Some(&(_, e)) = renamed.iter().find(|(l, _)| l == v) {
                        *v = e;
                    }
                }
            }
            renamed.extend(b.defs.iter().copied().zip(a.defs.iter().copied()));
            same(f, a, &b)
        })
}

/// Each value's use sites (block, instruction) and defining block.
type UseIndex = (HashMap<u32, Vec<(usize, usize)>>, HashMap<u32, usize>);

fn cse_function(f: &mut Function, tables: &TargetTables, sets: &PressureSets, s: &Settings, stats: &mut CseStats) -> Result<(), String> {
    let cfg = Cfg::new(f, tables);
    // Pressure (when `rp_aware`) is computed at the first instruction found redundant,
    // from the function as it still is then: most functions have none.
    let mut pressure: Option<Pressure> = None;
    let targets = sets.targets(f, &s.options);

    // Use sites and defining block of each value, to rename a CSE'd result's users and
    // update pressure: built at the first elimination (most functions have none), from
    // the function as it still is then.
    let mut index: Option<UseIndex> = None;
    let build_index = |f: &Function| -> UseIndex {
        let mut uses: HashMap<u32, Vec<(usize, usize)>> = HashMap::default();
        let mut def_block: HashMap<u32, usize> = HashMap::default();
        for (b, block) in f.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                for v in inst.uses() {
                    uses.entry(v.0).or_default().push((b, i));
                }
                for d in &inst.defs {
                    def_block.insert(d.0, b);
                }
            }
        }
        (uses, def_block)
    };
    let mut removed: Vec<Vec<bool>> = f.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    // Expression key -> (block, index) of the instruction computing it. Sized for every
    // instruction up front: growing by doubling rehashes the whole table each time,
    // random accesses all, on a block of millions of instructions.
    let mut table: HashMap<u64, (u32, u32)> = HashMap::default();
    table.reserve(f.blocks.iter().map(|b| b.insts.len()).sum());
    // Scope undo log: (key, previous entry). The entry block's scope is never left
    // before the walk ends, so its insertions are not logged.
    let mut undo: Vec<(u64, Option<(u32, u32)>)> = Vec::new();
    // Dominator-tree walk: (block, entering?) with the undo-log height to restore.
    let mut stack: Vec<(usize, Option<usize>)> = if f.blocks.is_empty() { Vec::new() } else { vec![(0, None)] };
    while let Some((b, leave)) = stack.pop() {
        if let Some(height) = leave {
            while undo.len() > height {
                let (k, prev) = undo.pop().unwrap();
                match prev {
                    Some(p) => table.insert(k, p),
                    None => table.remove(&k),
                };
            }
            continue;
        }
        stack.push((b, Some(undo.len())));
        for &c in cfg.children[b].iter().rev() {
            stack.push((c, None));
        }
        // Instructions tied by the carry flag (an `add.cc` and the `addc`s reading it)
        // are one unit: a chain is reused whole, when an earlier chain computes the
        // same expressions in the same order, or not at all (reusing the `add.cc` alone
        // would leave its `addc`s reading whatever flag ran last).
        for unit in crate::mir::carry_units(&f.blocks[b].insts, tables) {
            let insts = &f.blocks[b].insts[unit.clone()];
            let chain = unit.len() > 1;
            if !insts.iter().all(|inst| candidate(inst, tables)) || (!chain && insts[0].tied_by_carry(tables)) || (chain && !s.copy_prop) {
                continue;
            }
            // A chain is found by its first instruction; the rest must match with the
            // later chain's results read as the earlier one's (its flag values).
            let k = key(f, &insts[0]) ^ (unit.len() as u64 - 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let hit = table.get(&k).map(|&(eb, ei)| (eb as usize, ei as usize)).filter(|&(eb, ei)| {
                let earlier = &f.blocks[eb].insts;
                ei + unit.len() <= earlier.len()
                    && (ei..ei + unit.len()).all(|e| !removed[eb][e])
                    && same_chain(f, &earlier[ei..ei + unit.len()], insts)
                    // The earlier chain ends where this one does: no reader of its flag follows.
                    && earlier.get(ei + unit.len()).is_none_or(|next| !next.reads_carry(tables))
            });
            let Some((eb, ei)) = hit else {
                let prev = table.insert(k, (b as u32, unit.start as u32));
                if b != 0 {
                    undo.push((k, prev));
                }
                continue;
            };
            if s.rp_aware && pressure.is_none() {
                pressure = Some(Pressure::compute(f, &cfg.preds, sets, tables));
            }
            let earlier: Vec<ValueId> = f.blocks[eb].insts[ei..ei + unit.len()].iter().flat_map(|inst| inst.defs.iter().copied()).collect();
            let later: Vec<ValueId> = f.blocks[b].insts[unit.clone()].iter().flat_map(|inst| inst.defs.iter().copied()).collect();
            if let Some(p) = &pressure {
                if let Some(reason) = too_much_pressure(f, p, &cfg, sets, &targets, s, &earlier, eb, b) {
                    stats.suppressed_by_pressure += 1;
                    let loc = f.blocks[b].insts[unit.start].loc;
                    stats.remarks.push((f.name.clone(), loc, format!("{}: kept {}: {reason}", f.blocks[b].label(), value_names(f, &later))));
                    continue;
                }
            }
            for (ei, i) in (ei..ei + unit.len()).zip(unit.clone()) {
                let earlier = f.blocks[eb].insts[ei].defs.clone();
                let later = f.blocks[b].insts[i].defs.clone();
                let label = f.blocks[b].label();
                let loc = f.blocks[b].insts[i].loc;
                let (uses, def_block) = index.get_or_insert_with(|| build_index(f));
                stats.eliminated += 1;
                stats.remarks.push((f.name.clone(), loc, format!("{label}: {} reuses {}", value_names(f, &later), value_names(f, &earlier))));
                let mut used = vec![false; later.len()];
                if s.copy_prop {
                    for (n, (from, into)) in later.iter().zip(&earlier).enumerate() {
                        let sites = uses.remove(&from.0).unwrap_or_default();
                        used[n] = !sites.is_empty();
                        for site in sites {
                            let inst = &mut f.blocks[site.0].insts[site.1];
                            for o in &mut inst.operands {
                                if *o == Operand::Value(*from) {
                                    *o = Operand::Value(*into);
                                }
                            }
                            uses.entry(into.0).or_default().push(site);
                        }
                    }
                    let inst = &mut f.blocks[b].insts[i];
                    inst.defs.clear();
                    let read: Vec<ValueId> = std::mem::take(&mut inst.operands).into_iter().filter_map(|o| if let Operand::Value(v) = o { Some(v) } else { None }).collect();
                    removed[b][i] = true;
                    // The removed instruction's operands may now die earlier.
                    if let (Some(p), true) = (&mut pressure, s.incremental) {
                        let mut read = read;
                        read.sort_unstable_by_key(|v| v.0);
                        read.dedup();
                        for u in read {
                            let Some(&def) = def_block.get(&u.0) else { continue };
                            let sites: Vec<(usize, bool)> = reads_of(f, tables, u, uses.get(&u.0).map(Vec::as_slice).unwrap_or(&[]));
                            p.reset_value(f, u, def, &sites, &cfg, sets, tables);
                        }
                    }
                } else {
                    // The later instruction becomes `COPY earlier` (left for copy propagation).
                    let Some(copy) = copy_for(f, tables, s.sm_index, &later, &earlier) else { continue };
                    let inst = &mut f.blocks[b].insts[i];
                    inst.opcode = copy;
                    inst.flags.clear();
                    inst.operands = vec![Operand::Value(earlier[0])];
                    uses.entry(earlier[0].0).or_default().push((b, i));
                }
                if let Some(p) = &mut pressure {
                    if s.copy_prop {
                        for (n, (from, into)) in later.iter().zip(&earlier).enumerate() {
                            if s.incremental {
                                p.merge(f, *from, *into, eb, b, used[n], &cfg, sets, tables);
                                stats.incremental_updates += 1;
                            }
                        }
                    }
                    if !s.incremental || !s.copy_prop {
                        *p = Pressure::compute(f, &cfg.preds, sets, tables);
                        stats.full_recomputations += 1;
                    } else if s.verify_update {
                        let full = Pressure::compute(f, &cfg.preds, sets, tables);
                        stats.verified_updates += 1;
                        if full.peak != p.peak {
                            let mut message = format!("Incorrect RP info from incremental MRPA update in @{} after the CSE in {label}", f.name);
                            if s.print_verify {
                                for (blk, (a, b)) in p.peak.iter().zip(&full.peak).enumerate() {
                                    if a != b {
                                        message.push_str(&format!("\n  {}: incremental {a:?}, recomputed {b:?} ({})", f.blocks[blk].label(), sets.names.join(", ")));
                                    }
                                }
                            }
                            return Err(message);
                        }
                    }
                }
            }
        }
    }
    for (block, gone) in f.blocks.iter_mut().zip(removed) {
        let mut gone = gone.into_iter();
        block.insts.retain(|_| !gone.next().unwrap_or(false));
    }
    Ok(())
}

/// The machine `COPY` for the later result's type (one result only).
fn copy_for(f: &Function, tables: &TargetTables, sm_index: usize, later: &[ValueId], earlier: &[ValueId]) -> Option<Opcode> {
    if later.len() != 1 || earlier.len() != 1 {
        return None;
    }
    let ty = f.value(later[0]).ty.0;
    let copy = tables.opcode("COPY")?;
    tables
        .patterns
        .iter()
        .position(|p| p.opcode == copy.0 && p.sms >> sm_index & 1 == 1 && p.flags.is_empty() && p.result() == Some(ty) && p.operands.len() == 1)
        .map(|i| Opcode::Machine(i as u16))
}

/// Where `v` is still read, from its use sites (which may list instructions that no
/// longer read it): a block, or a PHI's incoming edge out of a block.
fn reads_of(f: &Function, tables: &TargetTables, v: ValueId, sites: &[(usize, usize)]) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    for &(b, i) in sites {
        let inst = &f.blocks[b].insts[i];
        if inst.is_phi(tables) {
            for pair in inst.operands.chunks(2) {
                if let [Operand::Value(x), Operand::Block(p)] = pair {
                    if *x == v {
                        if let Some(p) = f.block_index(*p) {
                            out.push((p, true));
                        }
                    }
                }
            }
        } else if inst.uses().any(|x| x == v) {
            out.push((b, false));
        }
    }
    out
}

fn value_names(f: &Function, values: &[ValueId]) -> String {
    values.iter().map(|v| format!("%{}", f.value(*v).name)).collect::<Vec<_>>().join(", ")
}

/// Why reusing `earlier` (defined in `eb`) down to block `b` would exceed a target.
#[allow(clippy::too_many_arguments)]
fn too_much_pressure(f: &Function, p: &Pressure, cfg: &Cfg, sets: &PressureSets, targets: &[i64], s: &Settings, earlier: &[ValueId], eb: usize, b: usize) -> Option<String> {
    let mut path = vec![b];
    let mut x = b;
    while x != eb {
        x = cfg.idom[x]?;
        path.push(x);
        if path.len() > MAX_PATH {
            return Some(format!("the dominator path is longer than {MAX_PATH} blocks"));
        }
    }
    for v in earlier {
        let Some((set, weight)) = sets.of(f, *v) else { continue };
        if sets.limits[set].is_some() && !s.pred_aware {
            continue;
        }
        if p.is_live_in(*v, b) {
            continue; // Already live through the later instruction's block.
        }
        let peak = i64::from(p.max_over(&path, set)) + i64::from(weight);
        if peak > targets[set] {
            return Some(format!("{} pressure would reach {peak}, above the target {}", sets.names[set], targets[set]));
        }
    }
    None
}
