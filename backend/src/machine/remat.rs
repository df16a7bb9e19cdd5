//! Block rematerialization (`nvptx-remat-block`, NVPTXBlockRemat in
//! cicc-machine-passes.txt): where more registers cross a block boundary than the
//! register target allows, recompute cheap values next to their uses instead of
//! keeping them live across the block. Runs on SSA machine code after MachineLICM
//! and dead-code removal, before out-of-SSA translation.
//!
//! The reference's outer loop, bounded by `nv-remat-max-times`: compute each block's
//! pressure (by default the weighted size of its live-in and live-out sets;
//! `nv-remat-check-internal-live` uses the peak inside the block too) and stop when
//! the function's maximum is within the target. For each block over the target, the
//! values live out of it are classified:
//!
//! - *pullable*: one definition, an opcode outside the description's
//!   `non_rematerializable` categories and without side effects, loads only when
//!   `load-remat` is on and the load is invariant, no PHI reads; its operands either
//!   live where the clone goes or pullable themselves (recursively, to depth 50, at
//!   most `nv-remat-block-map-size-limit` instructions per clone);
//! - *second chance*: rejected only because an operand is not live where the clone
//!   would go, though it is live out of the block under pressure. When the block's
//!   excess is larger than the pullable list, these are taken too (the clone then
//!   extends that operand's range past the block, where it was live anyway).
//!
//! Cost of one clone site: each instruction costs 1 (a load
//! `nv-remat-block-load-cost`), twice for a 64-bit result, times
//! `nv-remat-block-loop-cost-factor` when the clone runs in a deeper loop than the
//! original. A value is pulled only if every site costs at most
//! `nv-remat-block-single-cost` and all together at most `nv-remat-block-max-cost`;
//! cheapest first (values live out of at least `nv-remat-block-liveout-min-percentage`
//! percent of the blocks first among equals), until the block's excess is covered.
//! Pulling clones the value's definition before its first use in every other block
//! that reads it and renames those reads; the original dies if nothing else reads it
//! (removed with whatever only it kept alive).
//!
//! `nv-remat-block` selects what may be pulled (bit 0: special-register reads, only
//! when a block's excess is at least `nv-remat-threshold-for-spec-reg`; bit 1:
//! instructions without register operands; bit 2: instructions with register
//! operands; bit 3: invariant loads). `vasp-fix1` keeps address-space conversions and
//! volatile instructions out. `max-reg-kind` 1 ignores the function's bounds and
//! takes `nv-remat-default-max-reg`. `no-mi-remat` names functions to skip;
//! `nv-dump-remat-block` reports every step through `--remarks nvptx-remat-block`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use target_desc::tables::{props, SmTables, TargetTables};

use super::cfg::Cfg;
use super::pressure::{Pressure, PressureSets};
use crate::mir::{opcode_info, Function, Inst, Loc, Module, Opcode, Operand, ValueId};
use crate::options::Options;

/// The reference's recursion limit on operand chains.
const MAX_DEPTH: usize = 50;

/// What the pass did, for `--remarks nvptx-remat-block` and tests.
#[derive(Clone, Debug, Default)]
pub struct RematStats {
    /// Values no longer live across the blocks they were pulled out of.
    pub pulled: usize,
    /// Instructions inserted (clones).
    pub cloned: usize,
    /// Originals removed because nothing read them any more.
    pub removed: usize,
    /// Values taken from the second-chance list.
    pub second_chance: usize,
    /// Outer iterations run, over all functions.
    pub iterations: usize,
    pub skipped_functions: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

/// The knobs, read once.
struct Settings {
    mask: i64,
    max_times: i64,
    single_cost: i64,
    map_limit: usize,
    max_cost: i64,
    liveout_pct: i64,
    loop_factor: i64,
    load_cost: i64,
    spec_threshold: i64,
    dump: bool,
    internal_live: bool,
    max_reg_kind: i64,
    skip: Vec<String>,
    load_remat: bool,
    vasp_fix: bool,
    load_param: bool,
    reg_adjust: i64,
    default_max_reg: i64,
}

impl Settings {
    fn read(o: &Options) -> Settings {
        let int = |k: &str, d: i64| o.int(k).unwrap_or(d);
        let flag = |k: &str, d: bool| o.flag(k).unwrap_or(d);
        Settings {
            mask: int("nv-remat-block", 14),
            max_times: int("nv-remat-max-times", 10),
            single_cost: int("nv-remat-block-single-cost", 10),
            map_limit: int("nv-remat-block-map-size-limit", 6).max(1) as usize,
            max_cost: int("nv-remat-block-max-cost", 100),
            liveout_pct: int("nv-remat-block-liveout-min-percentage", 70),
            loop_factor: int("nv-remat-block-loop-cost-factor", 20).max(1),
            load_cost: int("nv-remat-block-load-cost", 10),
            spec_threshold: int("nv-remat-threshold-for-spec-reg", 20),
            dump: flag("nv-dump-remat-block", false),
            internal_live: flag("nv-remat-check-internal-live", false),
            max_reg_kind: int("max-reg-kind", 0),
            skip: o.list("no-mi-remat").unwrap_or_default().iter().map(|s| s.to_string()).collect(),
            load_remat: flag("load-remat", true),
            vasp_fix: flag("vasp-fix1", false),
            load_param: flag("remat-load-param", true),
            reg_adjust: int("reg-target-adjust", 0).clamp(-10, 10),
            default_max_reg: int("nv-remat-default-max-reg", 70),
        }
    }
}

pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables, options: &Options) -> RematStats {
    let settings = Settings::read(options);
    let sets = PressureSets::new(tables, sm);
    let mut stats = RematStats::default();
    for f in &mut module.functions {
        if !f.ssa || f.blocks.len() < 2 {
            continue;
        }
        if settings.skip.contains(&f.name) {
            stats.skipped_functions += 1;
            stats.remarks.push((f.name.clone(), f.loc, format!("Skip machine-instruction rematerialization on {}", f.name)));
            continue;
        }
        // The general set's target, as MachineCSE and MachineLICM take it.
        let target = if settings.max_reg_kind == 1 { settings.default_max_reg + settings.reg_adjust } else { sets.targets(f, options)[0] };
        remat_function(f, tables, &sets, &settings, target, &mut stats);
    }
    stats
}

/// Where each value is defined and read, and the loop depth of every block: dense
/// arrays by value id (a hash map of a vector per value was most of the pass's time on
/// a 100k-instruction loop). Values made after the facts (clones) have none.
struct Facts {
    /// (block, index) of each value's definition; `NO_DEF` for none.
    def: Vec<(u32, u32)>,
    /// The blocks with a non-PHI read of value `v` (increasing):
    /// `use_blocks[use_starts[v]..use_starts[v + 1]]`.
    use_starts: Vec<u32>,
    use_blocks: Vec<u32>,
    phi_read: Vec<bool>,
    depth: Vec<u32>,
}

const NO_DEF: (u32, u32) = (u32::MAX, u32::MAX);

impl Facts {
    fn new(f: &Function, cfg: &Cfg, tables: &TargetTables) -> Facts {
        let n = f.values.len();
        let mut def = vec![NO_DEF; n];
        let mut phi_read = vec![false; n];
        // (value, block) of each non-PHI read, once per block (blocks come in order,
        // so the last block recorded per value tells a repeat).
        let mut reads: Vec<(u32, u32)> = Vec::new();
        let mut last_block = vec![u32::MAX; n];
        for (b, block) in f.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                for d in &inst.defs {
                    if let Some(slot) = def.get_mut(d.0 as usize) {
                        *slot = (b as u32, i as u32);
                    }
                }
                let phi = inst.is_phi(tables);
                for v in inst.uses().filter(|v| (v.0 as usize) < n) {
                    if phi {
                        phi_read[v.0 as usize] = true;
                    } else if std::mem::replace(&mut last_block[v.0 as usize], b as u32) != b as u32 {
                        reads.push((v.0, b as u32));
                    }
                }
            }
        }
        // Grouped by value, a stable counting sort: each value's blocks stay increasing.
        let mut use_starts = vec![0u32; n + 1];
        for &(v, _) in &reads {
            use_starts[v as usize + 1] += 1;
        }
        for k in 0..n {
            use_starts[k + 1] += use_starts[k];
        }
        let mut next = use_starts.clone();
        let mut use_blocks = vec![0u32; reads.len()];
        for (v, b) in reads {
            use_blocks[next[v as usize] as usize] = b;
            next[v as usize] += 1;
        }
        Facts { def, use_starts, use_blocks, phi_read, depth: cfg.loop_depths() }
    }

    /// Where `v` is defined.
    fn def(&self, v: ValueId) -> Option<(usize, usize)> {
        self.def.get(v.0 as usize).filter(|&&d| d != NO_DEF).map(|&(b, i)| (b as usize, i as usize))
    }

    /// The blocks with a non-PHI read of `v`, increasing.
    fn use_blocks(&self, v: ValueId) -> &[u32] {
        let k = v.0 as usize;
        match (self.use_starts.get(k), self.use_starts.get(k + 1)) {
            (Some(&from), Some(&to)) => &self.use_blocks[from as usize..to as usize],
            _ => &[],
        }
    }

    fn phi_read(&self, v: ValueId) -> bool {
        self.phi_read.get(v.0 as usize).copied().unwrap_or(false)
    }
}

/// A decided pull: the value and, per block that reads it, the instructions to clone
/// there (operands before users).
struct Plan {
    value: ValueId,
    sites: Vec<(usize, Vec<Inst>)>,
    /// Values the clones read without cloning them (they must stay live there).
    leaves: HashSet<u32>,
    cost: i64,
    max_site_cost: i64,
    weight: u32,
    frequent: bool,
}

/// Why a value cannot be pulled; `SecondChance` when only an operand's liveness at a
/// clone site stands in the way.
enum Refusal {
    No,
    SecondChance,
    /// Pullable, but over `nv-remat-block-single-cost` or `nv-remat-block-max-cost`
    /// (found while planning, which stops there: a value read in many blocks costs at
    /// most the cost limit to plan).
    TooCostly,
}

struct Planner<'a> {
    f: &'a Function,
    tables: &'a TargetTables,
    sets: &'a PressureSets,
    s: &'a Settings,
    facts: &'a Facts,
    pressure: &'a Pressure,
    /// Live out of the block under pressure (second-chance operands may be these).
    live_out_b: &'a HashSet<u32>,
    /// Values pulled earlier in this iteration (their reads are renamed: no clone may
    /// rely on them staying live) and values earlier clones rely on (not pulled).
    pulled: &'a HashSet<u32>,
    relied: &'a HashSet<u32>,
    excess: i64,
}

impl Planner<'_> {
    /// Whether instruction `inst` may be cloned at all (its operands aside).
    fn cloneable(&self, inst: &Inst) -> bool {
        // What only computes its result (MachineCSE's candidates: no effects, loads
        // only of invariant memory, pure intrinsics), with one result.
        // Part of a carry chain reads or leaves the flag of its neighbour: a clone
        // elsewhere would read whatever carry was left there.
        if inst.defs.len() != 1 || !super::cse::candidate(inst, self.tables) || inst.tied_by_carry(self.tables) {
            return false;
        }
        let (Opcode::Machine(m), Some(info)) = (inst.opcode, opcode_info(inst.opcode, self.tables)) else { return false };
        let pattern_flags = self.tables.patterns.get(m as usize).map_or(&[][..], |p| p.flags);
        let has_flag = |flag: &str| inst.has_flag(flag) || pattern_flags.contains(&flag);
        if self.s.vasp_fix && (info.name == "ADDRSPACECAST" || has_flag("volatile")) {
            return false;
        }
        if info.name == "ARG" {
            return self.s.load_param && self.s.mask & 2 != 0;
        }
        if info.props & props::MAY_LOAD != 0 {
            return self.s.mask & 8 != 0 && self.s.load_remat && !has_flag("volatile");
        }
        if self.tables.remat.excluded_opcodes.binary_search(&info.id).is_ok() {
            return false;
        }
        let registers = inst.uses().next().is_some();
        // A pure intrinsic without operands reads the thread's position: a special
        // register.
        if info.name == "INTRINSIC" && !registers {
            return self.s.mask & 1 != 0 && self.excess >= self.s.spec_threshold;
        }
        if registers {
            self.s.mask & 4 != 0
        } else {
            self.s.mask & 2 != 0
        }
    }

    /// The clone chain of `v` for a clone at the top of block `site` (before its first
    /// read of `v`), operands first.
    #[allow(clippy::too_many_arguments)]
    fn chain(&self, v: ValueId, site: usize, relaxed: bool, depth: usize, out: &mut Vec<Inst>, leaves: &mut HashSet<u32>, done: &mut HashSet<u32>) -> Result<(), Refusal> {
        if depth > MAX_DEPTH || out.len() >= self.s.map_limit {
            return Err(Refusal::No);
        }
        let Some((db, di)) = self.facts.def(v) else { return Err(Refusal::No) };
        let inst = &self.f.blocks[db].insts[di];
        if !self.cloneable(inst) {
            return Err(Refusal::No);
        }
        for u in inst.uses() {
            if done.contains(&u.0) || leaves.contains(&u.0) {
                continue;
            }
            let live_at_site = self.pressure.is_live_in(u, site) && !self.pulled.contains(&u.0);
            if live_at_site {
                leaves.insert(u.0);
                continue;
            }
            match self.chain(u, site, relaxed, depth + 1, out, leaves, done) {
                Ok(()) => {}
                Err(_) if self.live_out_b.contains(&u.0) && !self.pulled.contains(&u.0) => {
                    if !relaxed {
                        return Err(Refusal::SecondChance);
                    }
                    leaves.insert(u.0);
                }
                Err(e) => return Err(e),
            }
        }
        if out.len() >= self.s.map_limit {
            return Err(Refusal::No);
        }
        done.insert(v.0);
        out.push(inst.clone());
        Ok(())
    }

    fn inst_cost(&self, inst: &Inst) -> i64 {
        let load = opcode_info(inst.opcode, self.tables).is_some_and(|o| o.props & props::MAY_LOAD != 0);
        let base = if load { self.s.load_cost } else { 1 };
        let wide = inst.defs.first().and_then(|d| self.sets.of(self.f, *d)).is_some_and(|(_, w)| w > 1);
        if wide {
            base * 2
        } else {
            base
        }
    }

    /// The plan for pulling `v` out of the block under pressure.
    fn plan(&self, v: ValueId, relaxed: bool, blocks: usize, freq: &[u32]) -> Result<Plan, Refusal> {
        let Some((set, weight)) = self.sets.of(self.f, v) else { return Err(Refusal::No) };
        if set != 0 || self.facts.phi_read(v) || self.pulled.contains(&v.0) || self.relied.contains(&v.0) {
            return Err(Refusal::No);
        }
        let Some((def_block, _)) = self.facts.def(v) else { return Err(Refusal::No) };
        let sites: Vec<usize> = self.facts.use_blocks(v).iter().map(|&b| b as usize).filter(|&b| b != def_block).collect();
        if sites.is_empty() {
            return Err(Refusal::No);
        }
        // Every clone site costs at least 1.
        if sites.len() as i64 > self.s.max_cost {
            return Err(Refusal::TooCostly);
        }
        let mut plan = Plan { value: v, sites: Vec::new(), leaves: HashSet::default(), cost: 0, max_site_cost: 0, weight, frequent: false };
        for site in sites {
            let (mut chain, mut done) = (Vec::new(), HashSet::default());
            self.chain(v, site, relaxed, 0, &mut chain, &mut plan.leaves, &mut done)?;
            let mut cost: i64 = chain.iter().map(|i| self.inst_cost(i)).sum();
            if self.facts.depth[site] > self.facts.depth[def_block] {
                cost *= self.s.loop_factor;
            }
            plan.cost += cost;
            plan.max_site_cost = plan.max_site_cost.max(cost);
            plan.sites.push((site, chain));
            if plan.max_site_cost > self.s.single_cost || plan.cost > self.s.max_cost {
                return Err(Refusal::TooCostly);
            }
        }
        let count = freq.get(v.0 as usize).map_or(0, |&c| c as usize);
        plan.frequent = (count * 100) as i64 >= self.s.liveout_pct * blocks as i64;
        Ok(plan)
    }
}

fn remat_function(f: &mut Function, tables: &TargetTables, sets: &PressureSets, s: &Settings, target: i64, stats: &mut RematStats) {
    // The function's value names, for naming clones: read at the first pull (nothing
    // changes the function before it), since most functions pull nothing.
    let mut names: Option<crate::mir::NameSet> = None;
    let mut any = false;
    for iteration in 1..=s.max_times.max(0) {
        let cfg = Cfg::new(f, tables);
        let pressure = Pressure::compute(f, &cfg.preds, sets, tables);
        let n = f.blocks.len();
        let weight = |set: &HashSet<u32>| -> i64 {
            set.iter().filter_map(|&v| sets.of(f, ValueId(v))).filter(|(s, _)| *s == 0).map(|(_, w)| i64::from(w)).sum()
        };
        let live_out: Vec<HashSet<u32>> = (0..n).map(|b| pressure.live_out_of(f, b, &cfg.succs, tables)).collect();
        let block_pressure: Vec<i64> = (0..n)
            .map(|b| {
                let boundary = weight(pressure.live_in_of(b)).max(weight(&live_out[b]));
                if s.internal_live {
                    boundary.max(i64::from(pressure.peak[b][0]))
                } else {
                    boundary
                }
            })
            .collect();
        let max_live = block_pressure.iter().copied().max().unwrap_or(0);
        stats.iterations += 1;
        if s.dump {
            stats.remarks.push((f.name.clone(), f.loc, format!("iteration {iteration}: Max-Live-Function({n}) = {max_live}, target {target}")));
        }
        if max_live <= target {
            break;
        }
        let facts = Facts::new(f, &cfg, tables);
        // Per value, how many blocks it is live out of: a vector over the values, as a
        // hash map it was a tenth of the pass on a loop carrying 25k values.
        let mut freq = vec![0u32; f.values.len()];
        for out in &live_out {
            for &v in out {
                if let Some(count) = freq.get_mut(v as usize) {
                    *count += 1;
                }
            }
        }
        let (mut pulled, mut relied): (HashSet<u32>, HashSet<u32>) = (HashSet::default(), HashSet::default());
        let mut chosen: Vec<Plan> = Vec::new();
        for b in 0..n {
            if block_pressure[b] <= target {
                continue;
            }
            let excess = block_pressure[b] - target;
            let planner = Planner { f, tables, sets, s, facts: &facts, pressure: &pressure, live_out_b: &live_out[b], pulled: &pulled, relied: &relied, excess };
            let mut candidates: Vec<u32> = live_out[b].iter().copied().collect();
            candidates.sort_unstable();
            let (mut pullable, mut second, mut costly) = (Vec::new(), Vec::new(), 0usize);
            for &v in &candidates {
                match planner.plan(ValueId(v), false, n, &freq) {
                    Ok(p) => pullable.push(p),
                    Err(Refusal::SecondChance) => second.push(v),
                    Err(Refusal::TooCostly) => costly += 1,
                    Err(Refusal::No) => {}
                }
            }
            if s.dump {
                let label = f.blocks[b].label();
                stats.remarks.push((f.name.clone(), f.blocks[b].loc, format!("{label}: pressure {} over target {target} by {excess}; live out {}, pullable {} ({costly} over the cost limits), second chance {}", block_pressure[b], candidates.len(), pullable.len() + costly, second.len())));
            }
            let mut from_second = 0;
            if excess > pullable.iter().map(|p| i64::from(p.weight)).sum::<i64>() && !second.is_empty() {
                for &v in &second {
                    if let Ok(p) = planner.plan(ValueId(v), true, n, &freq) {
                        pullable.push(p);
                        from_second += 1;
                    }
                }
                if s.dump {
                    stats.remarks.push((f.name.clone(), f.blocks[b].loc, format!("ADD {from_second} candidates from second-chance")));
                }
            }
            pullable.sort_by_key(|p| (p.cost, !p.frequent, p.value.0));
            let mut covered = 0i64;
            let mut total_cost = 0i64;
            let mut taken: Vec<Plan> = Vec::new();
            for p in pullable {
                if covered >= excess {
                    break;
                }
                // Plans were made before this block's earlier pulls.
                if pulled.contains(&p.value.0) || relied.contains(&p.value.0) || p.leaves.iter().any(|l| pulled.contains(l)) {
                    continue;
                }
                covered += i64::from(p.weight);
                total_cost += p.cost;
                pulled.insert(p.value.0);
                relied.extend(p.leaves.iter().copied());
                taken.push(p);
            }
            stats.second_chance += taken.iter().filter(|p| second.contains(&p.value.0)).count();
            if s.dump {
                stats.remarks.push((f.name.clone(), f.blocks[b].loc, format!("Really Final Pull-in: {} ({total_cost})", taken.len())));
            }
            for p in &taken {
                let sites: Vec<String> = p.sites.iter().map(|(site, _)| f.blocks[*site].label()).collect();
                let name = &f.value(p.value).name;
                stats.remarks.push((
                    f.name.clone(),
                    f.blocks[b].loc,
                    format!("pulled %{name} out of {} (pressure {} > {target}): cloned into {} at cost {}", f.blocks[b].label(), block_pressure[b], sites.join(", "), p.cost),
                ));
            }
            chosen.extend(taken);
        }
        if chosen.is_empty() {
            break;
        }
        let names = names.get_or_insert_with(|| crate::mir::NameSet::of(f));
        for plan in &chosen {
            apply(f, plan, names, tables, stats);
        }
        stats.pulled += chosen.len();
        any = true;
    }
    if any {
        stats.removed += super::dce::remove_dead_in_function(f, tables);
    }
}

/// Clones `plan`'s chains at their sites and renames the reads there.
fn apply(f: &mut Function, plan: &Plan, names: &mut crate::mir::NameSet, tables: &TargetTables, stats: &mut RematStats) {
    for (site, chain) in &plan.sites {
        let mut rename: HashMap<u32, ValueId> = HashMap::default();
        let mut clones = Vec::with_capacity(chain.len());
        for inst in chain {
            let mut clone = inst.clone();
            for op in &mut clone.operands {
                if let Operand::Value(u) = op {
                    if let Some(&n) = rename.get(&u.0) {
                        *u = n;
                    }
                }
            }
            let old = clone.defs[0];
            let base = format!("{}.remat", f.value(old).name);
            let ty = f.value(old).ty;
            let fresh = f.fresh_value(names, &base, ty);
            clone.defs[0] = fresh;
            rename.insert(old.0, fresh);
            clones.push(clone);
        }
        let Some(&new_v) = rename.get(&plan.value.0) else { continue };
        let block = &mut f.blocks[*site];
        let mut at = block.insts.iter().position(|i| i.uses().any(|u| u == plan.value)).unwrap_or(0);
        // A reader of the carry flag (addc) stays right after its producer (add.cc):
        // the clones go before the producer.
        while at > 0 && block.insts[at].reads_carry(tables) {
            at -= 1;
        }
        for inst in &mut block.insts[at..] {
            for op in &mut inst.operands {
                if matches!(op, Operand::Value(u) if *u == plan.value) {
                    *op = Operand::Value(new_v);
                }
            }
        }
        stats.cloned += clones.len();
        block.insts.splice(at..at, clones);
    }
}
