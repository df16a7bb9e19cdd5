//! Machine register pressure analysis (MRPA, `machine-rpa` in
//! cicc-machine-passes.txt): per block, the peak number of live registers of each
//! pressure set, for the pressure-aware passes (MachineCSE now; the scheduler and
//! rematerialization later).
//!
//! Pressure sets come from the description's register classes: every class without a
//! `pressure_limit` counts towards the general set with its `pressure_weight` (a
//! 64-bit register weighs two); each class with a limit (predicates) is a set of its
//! own. Liveness is computed on SSA form by walking from each use up to the
//! definition (cost proportional to the live ranges, not blocks x values), and a
//! value's live range can be extended later ([`Pressure::extend`]) with only the
//! blocks whose liveness changed re-scanned: the incremental update the reference
//! describes, checkable against a full recomputation.

use rustc_hash::FxHashSet as HashSet;

use target_desc::tables::{OccupancyInfo, SmTables, TargetTables};

use crate::mir::{Function, Operand, ValueId};

/// What a value weighs and where.
#[derive(Clone, Debug)]
pub struct PressureSets {
    /// Set names: `general`, then each limited class's name.
    pub names: Vec<&'static str>,
    /// Per value type id: (set, weight); `None` for types no class holds.
    by_type: Vec<Option<(usize, u32)>>,
    /// Per set: the limit the description gives (`None` for the general set).
    pub limits: Vec<Option<u32>>,
    /// The SM's register file and residency limits.
    pub occupancy: Option<OccupancyInfo>,
}

impl PressureSets {
    pub fn new(tables: &TargetTables, sm: &SmTables) -> PressureSets {
        let mut names = vec!["general"];
        let mut limits = vec![None];
        let mut by_type = vec![None; 256];
        for class in tables.register_classes {
            let set = match class.pressure_limit {
                Some(limit) => {
                    names.push(class.name);
                    limits.push(Some(u32::from(limit)));
                    names.len() - 1
                }
                None => 0,
            };
            for &m in class.members {
                if by_type[m as usize].is_none() {
                    by_type[m as usize] = Some((set, u32::from(class.pressure_weight)));
                }
            }
        }
        PressureSets { names, by_type, limits, occupancy: sm.occupancy }
    }

    /// Sets given directly: `by_type[type id]` is the (set, weight) of a value type.
    pub fn from_parts(names: Vec<&'static str>, by_type: Vec<Option<(usize, u32)>>, occupancy: Option<OccupancyInfo>) -> PressureSets {
        let limits = vec![None; names.len()];
        PressureSets { names, by_type, limits, occupancy }
    }

    /// The pressure target of each set for `f`: the general set's is
    /// [`register_target`]'s plus `reg-target-adjust`; a limited set's is its class's
    /// limit plus `pred-target-adjust` (both adjustments clamped to -10..10, as the
    /// reference's are).
    pub fn targets(&self, f: &Function, options: &crate::options::Options) -> Vec<i64> {
        let reg_adjust = options.int("reg-target-adjust").unwrap_or(0).clamp(-10, 10);
        let pred_adjust = options.int("pred-target-adjust").unwrap_or(0).clamp(-10, 10);
        let reg_target = i64::from(register_target(f, self.occupancy.as_ref(), options).regs) + reg_adjust;
        self.limits.iter().map(|l| l.map_or(reg_target, |l| i64::from(l) + pred_adjust)).collect()
    }

    pub fn of(&self, f: &Function, v: ValueId) -> Option<(usize, u32)> {
        self.by_type.get(f.value(v).ty.0 as usize).copied().flatten()
    }
}

/// A function's register target (registers per thread) and what set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterTarget {
    pub regs: u32,
    /// `maxnreg`, `--maxreg`, `occupancy` or `nv-remat-default-max-reg`.
    pub source: &'static str,
}

/// The register target of `f`: the smallest of the bounds given (the kernel's
/// `maxnreg`, `--maxreg`, and the registers with which `minnctapersm` blocks of
/// `maxntid` threads fit on one SM, from the description's occupancy data), else
/// `nv-remat-default-max-reg`.
pub fn register_target(f: &Function, occupancy: Option<&OccupancyInfo>, options: &crate::options::Options) -> RegisterTarget {
    // `--maxreg` first: the driver also writes it into each kernel's `maxnreg`.
    let mut bounds: Vec<RegisterTarget> = Vec::new();
    if let Some(m) = options.maxreg {
        bounds.push(RegisterTarget { regs: m, source: "--maxreg" });
    }
    if let Some(m) = f.attributes.maxnreg {
        bounds.push(RegisterTarget { regs: m, source: "maxnreg" });
    }
    if let (Some(o), Some(ntid)) = (occupancy, &f.attributes.maxntid) {
        let threads = ntid.iter().product::<u32>();
        if let Some(regs) = o.register_target(threads, f.attributes.minnctapersm.unwrap_or(1)) {
            bounds.push(RegisterTarget { regs, source: "occupancy" });
        }
    }
    bounds.into_iter().min_by_key(|t| t.regs).unwrap_or_else(|| {
        let regs = options.int("nv-remat-default-max-reg").unwrap_or(70).clamp(1, i64::from(u32::MAX)) as u32;
        RegisterTarget { regs, source: "nv-remat-default-max-reg" }
    })
}

/// Per-block liveness and peak pressure of one function.
#[derive(Clone, Debug)]
pub struct Pressure {
    /// Values live on entry to each block (PHI results excluded: they are defined at
    /// the block's start).
    live_in: Vec<HashSet<u32>>,
    /// The blocks each value is live into (the inverse of `live_in`), for the
    /// incremental updates only: made at the first one ([`Pressure::live_blocks`]), so
    /// the passes that only read the analysis do not pay for it.
    live_blocks: Option<rustc_hash::FxHashMap<u32, Vec<usize>>>,
    /// The walk of [`Pressure::mark_live_in`], kept between calls.
    stack: Vec<usize>,
    /// Peak pressure per block and set.
    pub peak: Vec<Vec<u32>>,
    /// The live set of [`Pressure::scan_block`], dense: per value, the number of the
    /// scan that last saw it live (a hash set per scan was most of this analysis on
    /// functions with many long live ranges). Scans count from 1; 0 is never live.
    scan_marks: std::cell::RefCell<(u32, Vec<u32>)>,
}


/// PHI uses as (value, predecessor block index). PHIs come first in a block (the
/// verifier's rule), so the walk stops at the first other instruction: the scans ask
/// for each successor's PHIs, and read a large successor whole each time otherwise.
fn phi_uses<'a>(f: &'a Function, b: usize, tables: &'a TargetTables) -> impl Iterator<Item = (ValueId, usize)> + 'a {
    f.blocks[b].insts.iter().take_while(move |i| i.is_phi(tables)).flat_map(move |inst| {
        inst.operands.chunks(2).filter_map(move |pair| match pair {
            [Operand::Value(v), Operand::Block(p)] => f.block_index(*p).map(|p| (*v, p)),
            _ => None,
        })
    })
}

impl Pressure {
    /// Full computation over `f`, in SSA form or out of it (after PHI elimination a
    /// value may have several definitions; a use is live up to the nearest one on each
    /// path).
    pub fn compute(f: &Function, preds: &[Vec<usize>], sets: &PressureSets, tables: &TargetTables) -> Pressure {
        let n = f.blocks.len();
        let defs = Defs::new(f);
        let mut p = Pressure { live_in: vec![HashSet::default(); n], live_blocks: None, stack: Vec::new(), peak: vec![vec![0; sets.names.len()]; n], scan_marks: Default::default() };
        // `defined_in[v] == b + 1` once `v` is defined earlier in block `b`: a use
        // after that is not upward exposed.
        let mut defined_in = vec![0u32; f.values.len()];
        // Which blocks became live is not needed here: one buffer, cleared each time.
        let mut changed = Vec::new();
        for (b, block) in f.blocks.iter().enumerate() {
            for inst in &block.insts {
                if !inst.is_phi(tables) {
                    for v in inst.uses() {
                        if sets.of(f, v).is_some() && defined_in.get(v.0 as usize) != Some(&(b as u32 + 1)) {
                            p.mark_live_in(v, b, preds, &defs, &mut changed);
                            changed.clear();
                        }
                    }
                }
                for d in &inst.defs {
                    if let Some(slot) = defined_in.get_mut(d.0 as usize) {
                        *slot = b as u32 + 1;
                    }
                }
            }
            for (v, pred) in phi_uses(f, b, tables) {
                if sets.of(f, v).is_some() {
                    p.mark_live_out(v, pred, preds, &defs, &mut changed);
                    changed.clear();
                }
            }
        }
        let succs = successors(preds);
        for b in 0..n {
            p.peak[b] = p.scan_block(f, b, &succs, sets, tables);
        }
        p
    }

    /// Marks `v` live into `b` (used there, defined elsewhere) and up its
    /// predecessors to the definition; records newly live blocks in `changed`.
    fn mark_live_up(&mut self, v: ValueId, b: usize, preds: &[Vec<usize>], defs: &impl DefBlock, changed: &mut Vec<usize>) {
        if !defs.defines(v, b) {
            self.mark_live_in(v, b, preds, defs, changed);
        }
    }

    /// Marks `v` live into `b` (read there before any definition in it) and up its
    /// predecessors until a block that defines it.
    fn mark_live_in(&mut self, v: ValueId, b: usize, preds: &[Vec<usize>], defs: &impl DefBlock, changed: &mut Vec<usize>) {
        // Most reads are of a value already known live here.
        if self.live_in[b].contains(&v.0) {
            return;
        }
        let mut stack = std::mem::take(&mut self.stack);
        stack.push(b);
        while let Some(x) = stack.pop() {
            if !self.live_in[x].insert(v.0) {
                continue;
            }
            if let Some(blocks) = &mut self.live_blocks {
                blocks.entry(v.0).or_default().push(x);
            }
            changed.push(x);
            stack.extend(preds[x].iter().copied().filter(|&p| !defs.defines(v, p)));
        }
        self.stack = stack;
    }

    /// The inverse of `live_in`, made at the first incremental update.
    fn live_blocks(&mut self) -> &mut rustc_hash::FxHashMap<u32, Vec<usize>> {
        let live_in = &self.live_in;
        self.live_blocks.get_or_insert_with(|| {
            let mut blocks: rustc_hash::FxHashMap<u32, Vec<usize>> = Default::default();
            for (b, values) in live_in.iter().enumerate() {
                for &v in values {
                    blocks.entry(v).or_default().push(b);
                }
            }
            blocks
        })
    }

    /// Marks `v` live out of `b` (a PHI of a successor reads it on that edge).
    fn mark_live_out(&mut self, v: ValueId, b: usize, preds: &[Vec<usize>], defs: &impl DefBlock, changed: &mut Vec<usize>) {
        changed.push(b);
        self.mark_live_up(v, b, preds, defs, changed);
    }

    /// Values live out of `b`: live into a successor, or read by a successor's PHI on
    /// the edge from `b`.
    fn live_out(&self, f: &Function, b: usize, succs: &[Vec<usize>], tables: &TargetTables) -> HashSet<u32> {
        let mut out = HashSet::default();
        for &s in &succs[b] {
            out.extend(self.live_in[s].iter().copied());
            for (v, pred) in phi_uses(f, s, tables) {
                if pred == b {
                    out.insert(v.0);
                }
            }
        }
        out
    }

    /// The peak pressure of block `b`, scanning backwards from its live-out set.
    fn scan_block(&self, f: &Function, b: usize, succs: &[Vec<usize>], sets: &PressureSets, tables: &TargetTables) -> Vec<u32> {
        let mut marks = self.scan_marks.borrow_mut();
        let (scan, mark) = &mut *marks;
        *scan = scan.wrapping_add(1);
        if *scan == 0 {
            mark.iter_mut().for_each(|m| *m = 0);
            *scan = 1;
        }
        let scan = *scan;
        if mark.len() < f.values.len() {
            mark.resize(f.values.len(), 0);
        }
        let mut current = vec![0u32; sets.names.len()];
        // Live out: live into a successor, or read by a successor's PHI on this edge.
        let mut enter = |v: u32, current: &mut Vec<u32>| {
            if mark[v as usize] != scan {
                if let Some((s, w)) = sets.of(f, ValueId(v)) {
                    mark[v as usize] = scan;
                    current[s] += w;
                }
            }
        };
        for &succ in &succs[b] {
            for &v in &self.live_in[succ] {
                enter(v, &mut current);
            }
            for (v, pred) in phi_uses(f, succ, tables) {
                if pred == b {
                    enter(v.0, &mut current);
                }
            }
        }
        let mut peak = current.clone();
        for inst in f.blocks[b].insts.iter().rev() {
            // A result occupies its register at its definition even if never read.
            for d in &inst.defs {
                if let Some((s, w)) = sets.of(f, *d) {
                    if mark[d.0 as usize] != scan {
                        current[s] += w;
                    }
                }
            }
            for (p, c) in peak.iter_mut().zip(&current) {
                *p = (*p).max(*c);
            }
            for d in &inst.defs {
                if let Some((s, w)) = sets.of(f, *d) {
                    mark[d.0 as usize] = 0;
                    current[s] -= w;
                }
            }
            if inst.is_phi(tables) {
                continue;
            }
            for v in inst.uses() {
                if let Some((s, w)) = sets.of(f, v) {
                    if mark[v.0 as usize] != scan {
                        mark[v.0 as usize] = scan;
                        current[s] += w;
                    }
                }
            }
            for (p, c) in peak.iter_mut().zip(&current) {
                *p = (*p).max(*c);
            }
        }
        peak
    }

    /// Updates the analysis after a CSE made value `from` (defined in block `at`) an
    /// alias of `into` (defined in block `def`, dominating `at`), every use of `from`
    /// now reading `into`: `into` takes over `from`'s live range and becomes live from
    /// its definition down to `at`. Only blocks whose liveness changed (and their
    /// predecessors, whose live-out changed) are re-scanned. Returns how many.
    #[allow(clippy::too_many_arguments)]
    pub fn merge(&mut self, f: &Function, from: ValueId, into: ValueId, def: usize, at: usize, from_was_used: bool, cfg: &super::cfg::Cfg, sets: &PressureSets, tables: &TargetTables) -> usize {
        let mut changed: Vec<usize> = vec![at, def];
        for b in self.live_blocks().remove(&from.0).unwrap_or_default() {
            self.live_in[b].remove(&from.0);
            if self.live_in[b].insert(into.0) {
                self.live_blocks().entry(into.0).or_default().push(b);
            }
            changed.push(b);
        }
        // Where `from` was read, `into` is now: at least from the start of `at`.
        if from_was_used {
            self.mark_live_up(into, at, &cfg.preds, &OneDef { value: into.0, block: def }, &mut changed);
        }
        let mut rescan: Vec<usize> = Vec::with_capacity(changed.len() * 2);
        for &b in &changed {
            rescan.push(b);
            rescan.extend(cfg.preds[b].iter().copied());
        }
        rescan.sort_unstable();
        rescan.dedup();
        for &b in &rescan {
            self.peak[b] = self.scan_block(f, b, &cfg.succs, sets, tables);
        }
        rescan.len()
    }

    /// Updates the analysis after value `v` (defined in block `def`) lost a use: its
    /// liveness is re-derived from its remaining reads (`(block, false)` a read inside
    /// the block, `(block, true)` a PHI read on the edge out of it), and the blocks whose
    /// liveness changed are re-scanned. Returns how many.
    #[allow(clippy::too_many_arguments)]
    pub fn reset_value(&mut self, f: &Function, v: ValueId, def: usize, reads: &[(usize, bool)], cfg: &super::cfg::Cfg, sets: &PressureSets, tables: &TargetTables) -> usize {
        let mut changed: Vec<usize> = vec![def];
        for b in self.live_blocks().remove(&v.0).unwrap_or_default() {
            self.live_in[b].remove(&v.0);
            changed.push(b);
        }
        let one = OneDef { value: v.0, block: def };
        for &(b, edge) in reads {
            if edge {
                self.mark_live_out(v, b, &cfg.preds, &one, &mut changed);
            } else {
                self.mark_live_up(v, b, &cfg.preds, &one, &mut changed);
            }
        }
        let mut rescan: Vec<usize> = Vec::with_capacity(changed.len() * 2);
        for &b in &changed {
            rescan.push(b);
            rescan.extend(cfg.preds[b].iter().copied());
        }
        rescan.sort_unstable();
        rescan.dedup();
        for &b in &rescan {
            self.peak[b] = self.scan_block(f, b, &cfg.succs, sets, tables);
        }
        rescan.len()
    }

    /// Re-scans block `b` (after its instructions were reordered; liveness across
    /// blocks is unchanged by that) and returns its peak per set, without storing it.
    pub fn block_peak(&self, f: &Function, b: usize, succs: &[Vec<usize>], sets: &PressureSets, tables: &TargetTables) -> Vec<u32> {
        self.scan_block(f, b, succs, sets, tables)
    }

    /// The largest peak of set `s` over `blocks`.
    pub fn max_over(&self, blocks: &[usize], s: usize) -> u32 {
        blocks.iter().map(|&b| self.peak[b][s]).max().unwrap_or(0)
    }

    /// The largest peak of set `s` over the whole function.
    pub fn function_peak(&self, s: usize) -> u32 {
        self.peak.iter().map(|p| p[s]).max().unwrap_or(0)
    }

    /// Values live out of block `b` (into a successor, or read by a successor's PHI on
    /// the edge from `b`).
    pub fn live_out_of(&self, f: &Function, b: usize, succs: &[Vec<usize>], tables: &TargetTables) -> HashSet<u32> {
        self.live_out(f, b, succs, tables)
    }

    /// Values live into block `b` (PHI results excluded).
    pub fn live_in_of(&self, b: usize) -> &HashSet<u32> {
        &self.live_in[b]
    }

    /// Whether `v` is live into `b`.
    pub fn is_live_in(&self, v: ValueId, b: usize) -> bool {
        self.live_in[b].contains(&v.0)
    }
}

/// Where values are defined: every value's blocks, or just one value's.
trait DefBlock {
    fn defines(&self, v: ValueId, b: usize) -> bool;
}

/// Every value's defining blocks: one per value in SSA form, more after PHI
/// elimination (kept aside so the SSA case stays a vector lookup). Blocks are u32
/// (`u32::MAX` for none): a word per value of a kernel with millions of them.
struct Defs {
    first: Vec<u32>,
    more: HashSet<(u32, usize)>,
}

impl Defs {
    fn new(f: &Function) -> Defs {
        let mut defs = Defs { first: vec![u32::MAX; f.values.len()], more: HashSet::default() };
        for (b, block) in f.blocks.iter().enumerate() {
            for inst in &block.insts {
                for d in &inst.defs {
                    match defs.first.get_mut(d.0 as usize) {
                        Some(slot) if *slot == u32::MAX => *slot = b as u32,
                        Some(slot) if *slot as usize == b => {}
                        _ => {
                            defs.more.insert((d.0, b));
                        }
                    }
                }
            }
        }
        defs
    }
}

impl DefBlock for Defs {
    fn defines(&self, v: ValueId, b: usize) -> bool {
        self.first.get(v.0 as usize).is_some_and(|&first| first as usize == b) || (!self.more.is_empty() && self.more.contains(&(v.0, b)))
    }
}

struct OneDef {
    value: u32,
    block: usize,
}

impl DefBlock for OneDef {
    fn defines(&self, v: ValueId, b: usize) -> bool {
        v.0 == self.value && b == self.block
    }
}

fn successors(preds: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut succs = vec![Vec::new(); preds.len()];
    for (b, ps) in preds.iter().enumerate() {
        for &p in ps {
            succs[p].push(b);
        }
    }
    succs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::cfg::Cfg;

    /// Out of SSA, a value with several definitions is live up to the nearest one on
    /// each path: `%t` is redefined in the loop before it is read, so it is live out of
    /// the loop (read after it) but not into it, and its first definition is dead.
    #[test]
    fn liveness_out_of_ssa_stops_at_the_nearest_definition() {
        let text = "---
name: k
kind: kernel
params:
  - { name: n, type: i32 }
  - { name: out, type: p1 }
ssa: false
body: |
  bb.0:
    %n:i32 = LDPARAM_i32 0
    %out:p1 = LDPARAM_GLOBAL_PTR 1
    %i:i32 = MOV_IMM_i32 0
    %acc:i32 = MOV_i32 %i
    %t:i32 = MOV_IMM_i32 7
    BRA %bb.1
  bb.1.loop:
    %t:i32 = ADD_IMM_i32 %i, 3
    %acc:i32 = ADD_i32 %acc, %t
    %i:i32 = ADD_IMM_i32 %i, 1
    %more:i1 = SETP_i32 lt, %i, %n
    BRA_COND %more, %bb.1, %bb.2
  bb.2:
    ST_GLOBAL_i32 %acc, %out
    ST_GLOBAL_i32 %t, %out
    RET_VOID
...
";
        let tables = tables::nvptx();
        let sm = tables.find_sm("sm_80").unwrap();
        let module = crate::mir::parser::parse_module(text, "t.mir", tables).unwrap_or_else(|e| panic!("{}", e.render()));
        let f = &module.functions[0];
        let value = |name: &str| ValueId(f.values.iter().position(|v| v.name == name).unwrap() as u32);
        let cfg = Cfg::new(f, tables);
        let sets = PressureSets::new(tables, sm);
        let p = Pressure::compute(f, &cfg.preds, &sets, tables);
        for name in ["n", "out", "i", "acc"] {
            assert!(p.is_live_in(value(name), 1), "%{name} is live into the loop");
        }
        assert!(!p.is_live_in(value("t"), 1), "%t is defined in the loop before its read");
        for name in ["acc", "out", "t"] {
            assert!(p.is_live_in(value(name), 2), "%{name} is live after the loop");
        }
        assert!(!p.is_live_in(value("i"), 2));
        // In the loop: %n, %i, %acc, %t (one each) and %out (64-bit, two).
        assert_eq!(p.peak[1][0], 6);
        // Entry: %n, %out, %i, %acc and the dead first %t at its definition.
        assert_eq!(p.peak[0][0], 6);
        assert_eq!(p.peak[1][1], 1, "one predicate");
    }
}
