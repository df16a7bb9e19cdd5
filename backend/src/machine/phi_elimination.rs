//! Out-of-SSA translation: PHIs become copies, and copies between values that never
//! interfere are coalesced away, leaving the function out of SSA form (`ssa: false`).
//!
//! The last machine pass before emission (reference: `cicc-machine-passes.txt`, PHI
//! elimination with CSSA coalescing, knobs `cssa-coalesce` and `cssa-verbosity`). The
//! method is that of Boissinot et al., "Revisiting Out-of-SSA Translation" (CGO 2009):
//!
//! 1. Make the function conventional (CSSA): each PHI `x = PHI a1, B1, ...` gets a fresh
//!    result `x'` and fresh operands `ai'`; each predecessor copies `ai' = ai` in a
//!    parallel copy just before its terminator, and the PHI's block copies `x = x'` in
//!    a parallel copy after its PHIs. `{x', a1', ...}` is one congruence class (it can
//!    share one register, because the fresh values live only across those copies).
//!    The copies are *virtual*, as the paper proposes: they are listed per block with
//!    the position they would have, and only those that survive coalescing are ever
//!    placed. Most do not, and placing them all cost a second instruction list per
//!    block, then a third (a fifth of the pass on a loop carrying 25k PHIs).
//! 2. Coalesce: visit the copies, innermost loops first, and merge the classes of a
//!    copy's two sides unless some member of one *interferes* with a member of the
//!    other: one is live where the other is defined and they hold different values
//!    (a copy's two sides hold the same value). Liveness is computed per value by
//!    walking up from its uses; the interference test follows the dominance order of
//!    the definitions.
//! 3. Rename every class to one value, drop the PHIs and the copies that became
//!    `r = r`, and turn each parallel copy into a sequence, breaking a cycle (a swap of
//!    loop-carried values) with one temporary.
//!
//! Because copies are placed before the terminator and coalescing refuses a merge
//! whenever a value would be overwritten while live on any outgoing edge, no edge
//! needs splitting and the CFG keeps its structure. `cssa-coalesce=0` keeps every
//! copy of step 1 (one register per PHI and one per incoming value); `2` also
//! coalesces the copies selection produced from `COPY` instructions.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use target_desc::tables::{props, PatternOperand, SmTables, TargetTables};

use crate::diagnostics::MirError;
use crate::machine::cfg::Cfg;
use crate::mir::verifier::Source;
use crate::mir::{opcode_info, Function, Inst, Loc, Module, Opcode, Operand, ValueId};

/// The most member pairs a merge checks one by one (exact, value-aware test). Above it
/// the linear dominance-forest test runs, which is exact only for classes whose members
/// are pairwise disjoint; a merge that fits neither test is refused, which costs a copy
/// but keeps every function linear in its size.
const PAIRWISE_LIMIT: usize = 256;
/// The largest merged class the dominance-forest test examines.
const FOREST_LIMIT: usize = 128;

/// What the pass did, for `--remarks phi-elim`.
#[derive(Default)]
pub struct Stats {
    pub phis: usize,
    /// Copies the conventional form needed (step 1), plus the selected `COPY`s at
    /// `cssa-coalesce=2`.
    pub candidates: usize,
    pub coalesced: usize,
    /// Copies left in the output, cycle temporaries included.
    pub copies_left: usize,
    pub cycles_broken: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

fn copy_pattern(tables: &TargetTables, sm_index: usize, ty: u8) -> Option<u16> {
    let copy = tables.opcode("COPY")?;
    tables
        .patterns
        .iter()
        .position(|p| {
            p.opcode == copy.0
                && p.sms >> sm_index & 1 == 1
                && p.flags.is_empty()
                && p.result() == Some(ty)
                && p.operands.len() == 1
                && p.operands[0].1 == PatternOperand::Reg(ty)
        })
        .map(|i| i as u16)
}

/// Leaves SSA in every function. `coalesce` is the `cssa-coalesce` level and
/// `verbosity` the `cssa-verbosity` level (1: a remark per copy kept, with the values
/// that interfere).
pub fn eliminate_phis(module: &mut Module, tables: &TargetTables, sm: &SmTables, source: Source<'_>, coalesce: i64, verbosity: i64) -> Result<Stats, Vec<MirError>> {
    let sm_index = tables.sm_index(sm);
    let mut copies: HashMap<u8, Option<u16>> = HashMap::default();
    let mut copy_of = |ty: u8| *copies.entry(ty).or_insert_with(|| copy_pattern(tables, sm_index, ty));
    let mut stats = Stats::default();
    let mut errors = Vec::new();
    for f in &mut module.functions {
        let mut pass = OutOfSsa { tables, coalesce, verbosity, stats: &mut stats, copy_of: &mut copy_of };
        if let Err((loc, ty)) = pass.run(f) {
            let name = tables.type_info(ty).map(|t| t.name).unwrap_or("?");
            errors.push(MirError::at(source.file, source.text, loc.line as usize, loc.column as usize, format!("no COPY pattern for {name} on {} in the description", sm.name)));
        }
    }
    if errors.is_empty() {
        Ok(stats)
    } else {
        Err(errors)
    }
}

struct OutOfSsa<'a, 's> {
    tables: &'a TargetTables,
    coalesce: i64,
    verbosity: i64,
    stats: &'s mut Stats,
    copy_of: &'s mut dyn FnMut(u8) -> Option<u16>,
}

/// A value step 1 made, not named yet: `base.phi` (a PHI's new result) or
/// `base.fromN` (its operand from bb.N).
struct Unnamed {
    value: ValueId,
    base: ValueId,
    from: Option<u32>,
}

/// Names the values of `unnamed` that have no name yet, in order.
fn name_values<'u>(f: &mut Function, unnamed: impl Iterator<Item = &'u Unnamed>, names: &mut crate::mir::NameSet) {
    let mut name = String::new();
    for u in unnamed {
        if !f.value(u.value).name.is_empty() {
            continue;
        }
        name.clear();
        name.push_str(&f.value(u.base).name);
        match u.from {
            None => name.push_str(".phi"),
            Some(pred) => {
                name.push_str(".from");
                name.push_str(itoa::Buffer::new().format(pred));
            }
        }
        f.name_fresh_value(names, u.value, &name);
    }
}

fn unnamed_value(f: &mut Function, ty: target_desc::tables::VtId) -> ValueId {
    f.values.push(crate::mir::ValueInfo { name: crate::mir::ValueName::default(), ty });
    ValueId(f.values.len() as u32 - 1)
}

/// A copy that coalescing may remove: its two sides, where it is (its index in the
/// block as if step 1's copies were placed) and how deep in loops.
struct Candidate {
    block: usize,
    index: usize,
    depth: u32,
    dst: ValueId,
    src: ValueId,
    loc: Loc,
}

/// One copy of a parallel copy of step 1, not placed in its block.
#[derive(Clone)]
struct GroupCopy {
    dst: ValueId,
    src: ValueId,
    loc: Loc,
}

/// Per block, the two parallel copies of step 1 and where they go. With both placed,
/// the block would read: its PHIs, `start`, the instructions from `phis` up to `term`,
/// `end`, the terminators. [`Groups::body_pos`] and the others give those positions,
/// which the interference tests compare.
#[derive(Clone, Default)]
struct Groups {
    phis: usize,
    /// The index of the first terminator (at least `phis`; the block's length when it
    /// has none).
    term: usize,
    /// `x = x'` copies, right after the PHIs.
    start: Vec<GroupCopy>,
    /// `ai' = ai` copies, right before the terminator.
    end: Vec<GroupCopy>,
}

impl Groups {
    /// The position of the instruction at `i`, not a PHI (PHIs all sit at 0).
    fn body_pos(&self, i: usize) -> usize {
        if i < self.term {
            i + self.start.len()
        } else {
            i + self.start.len() + self.end.len()
        }
    }

    /// The position of the start copies (all of them: a parallel copy happens at once).
    fn start_pos(&self) -> usize {
        self.phis
    }

    fn end_pos(&self) -> usize {
        self.term + self.start.len()
    }
}

impl OutOfSsa<'_, '_> {
    fn is_phi(&self, inst: &Inst) -> bool {
        inst.is_phi(self.tables)
    }

    fn is_copy(&self, inst: &Inst) -> bool {
        inst.is_copy(self.tables)
    }

    fn run(&mut self, f: &mut Function) -> Result<(), (Loc, target_desc::tables::VtId)> {
        let has_phis = f.blocks.iter().any(|b| b.insts.first().is_some_and(|i| self.is_phi(i)));
        if !has_phis && self.coalesce < 2 {
            f.ssa = false;
            return Ok(());
        }
        let original_values = f.values.len();
        let mut names: crate::mir::NameSet = crate::mir::NameSet::of(f);
        let (groups, unnamed) = self.make_conventional(f)?;
        if self.verbosity >= 1 {
            // The remarks name the copies' values as they are made.
            name_values(f, unnamed.iter(), &mut names);
        }
        let cfg = Cfg::new(f, self.tables);
        let mut candidates = Vec::new();
        let depth = cfg.loop_depths();
        for (b, block) in f.blocks.iter().enumerate() {
            let g = &groups[b];
            let depth = depth[b];
            for (k, c) in g.start.iter().enumerate() {
                candidates.push(Candidate { block: b, index: g.start_pos() + k, depth, dst: c.dst, src: c.src, loc: c.loc });
            }
            if self.coalesce >= 2 {
                for (i, inst) in block.insts.iter().enumerate().skip(g.phis) {
                    if self.is_copy(inst) {
                        let src = inst.uses().next().expect("a copy reads one value");
                        candidates.push(Candidate { block: b, index: g.body_pos(i), depth, dst: inst.defs[0], src, loc: inst.loc });
                    }
                }
            }
            for (k, c) in g.end.iter().enumerate() {
                candidates.push(Candidate { block: b, index: g.end_pos() + k, depth, dst: c.dst, src: c.src, loc: c.loc });
            }
        }
        self.stats.candidates += candidates.len();
        let mut classes = Classes::new(f);
        // Each PHI's web {x', a1', ...} is one class from the start.
        for block in &f.blocks {
            for inst in block.insts.iter().take_while(|i| self.is_phi(i)) {
                for v in inst.uses() {
                    classes.union(inst.defs[0], v);
                }
            }
        }
        if self.coalesce > 0 {
            let facts = Facts::new(f, &cfg, &groups, self.tables);
            classes.sort_members(&facts);
            // Innermost loops first: a copy left there runs most often.
            candidates.sort_by_key(|c| (std::cmp::Reverse(c.depth), c.block, c.index));
            for c in &candidates {
                let (d, s) = (c.dst, c.src);
                match classes.try_merge(d, s, &facts) {
                    Ok(()) => self.stats.coalesced += 1,
                    Err(Some((x, y))) if self.verbosity >= 1 => {
                        let message = format!("kept `%{} = COPY %{}`: %{} interferes with %{}", f.value(d).name, f.value(s).name, f.value(x).name, f.value(y).name);
                        self.stats.remarks.push((f.name.clone(), c.loc, message));
                    }
                    Err(_) => {}
                }
            }
        }
        self.rename_and_sequentialize(f, &groups, &mut classes, original_values, &unnamed, &mut names);
        f.ssa = false;
        Ok(())
    }

    /// Step 1: fresh PHI results and operands, and the two parallel copies per block,
    /// listed, not placed. The fresh values get their names in step 3, and only those
    /// that survive coalescing (most do not); the list says what each would be called.
    fn make_conventional(&mut self, f: &mut Function) -> Result<(Vec<Groups>, Vec<Unnamed>), (Loc, target_desc::tables::VtId)> {
        let mut unnamed = Vec::new();
        let index: HashMap<u32, usize> = f.blocks.iter().enumerate().map(|(i, b)| (b.number, i)).collect();
        let n = f.blocks.len();
        let mut groups = vec![Groups::default(); n];
        // Every list below reserved at its final size: grown by doubling, they (and the
        // function's values) were copied over and over on a loop carrying thousands of
        // PHIs.
        let mut incoming = vec![0usize; n];
        let mut fresh = 0;
        for (b, block) in f.blocks.iter().enumerate() {
            let phis = block.insts.iter().take_while(|i| self.is_phi(i)).count();
            let term = block.insts.iter().position(|i| opcode_info(i.opcode, self.tables).is_some_and(|o| o.has(props::TERMINATOR))).unwrap_or(block.insts.len()).max(phis);
            groups[b].phis = phis;
            groups[b].term = term;
            for phi in &block.insts[..phis] {
                fresh += 1;
                for pair in phi.operands.chunks(2) {
                    if let [Operand::Value(_), Operand::Block(pred)] = pair {
                        if let Some(&p) = index.get(pred) {
                            incoming[p] += 1;
                            fresh += 1;
                        }
                    }
                }
            }
        }
        f.values.reserve(fresh);
        unnamed.reserve(fresh);
        for (g, &incoming) in groups.iter_mut().zip(&incoming) {
            g.start.reserve(g.phis);
            g.end.reserve(incoming);
        }
        for b in 0..n {
            for k in 0..groups[b].phis {
                let (x, loc) = (f.blocks[b].insts[k].defs[0], f.blocks[b].insts[k].loc);
                let ty = f.value(x).ty;
                // Only checked here, so that a missing COPY pattern is reported at the PHI;
                // step 3 looks it up again for the copies it places.
                (self.copy_of)(ty.0).ok_or((loc, ty))?;
                self.stats.phis += 1;
                let x_in = unnamed_value(f, ty);
                unnamed.push(Unnamed { value: x_in, base: x, from: None });
                // The PHI is rewritten in place: `x' = PHI a1', B1, ...`.
                for j in (0..f.blocks[b].insts[k].operands.len()).step_by(2) {
                    let (Operand::Value(v), Some(&Operand::Block(pred))) = (&f.blocks[b].insts[k].operands[j], f.blocks[b].insts[k].operands.get(j + 1)) else { continue };
                    let Some(&p) = index.get(&pred) else { continue };
                    let v = *v;
                    let a = unnamed_value(f, ty);
                    unnamed.push(Unnamed { value: a, base: x, from: Some(pred) });
                    groups[p].end.push(GroupCopy { dst: a, src: v, loc });
                    f.blocks[b].insts[k].operands[j] = Operand::Value(a);
                }
                groups[b].start.push(GroupCopy { dst: x, src: x_in, loc });
                f.blocks[b].insts[k].defs[0] = x_in;
            }
        }
        Ok((groups, unnamed))
    }

    /// Step 3: one name per class, no PHIs, no `r = r` copies, the parallel copies that
    /// are left placed and in order. Each block is rewritten in place.
    fn rename_and_sequentialize(&mut self, f: &mut Function, groups: &[Groups], classes: &mut Classes, original_values: usize, unnamed: &[Unnamed], names: &mut crate::mir::NameSet) {
        let phi_results: HashSet<u32> = groups.iter().flat_map(|g| g.start.iter().map(|c| c.dst.0)).collect();
        let rename = classes.representatives(original_values, &phi_results);
        // Only a class's representative appears from here on; the swap temporaries
        // below are named after it, so it is named first.
        name_values(f, unnamed.iter().filter(|u| rename[u.value.0 as usize] == u.value), names);
        let mut parallel: Vec<(ValueId, ValueId, Loc)> = Vec::new();
        let (mut head, mut tail) = (Vec::new(), Vec::new());
        for (b, g) in groups.iter().enumerate() {
            let mut insts = std::mem::take(&mut f.blocks[b].insts);
            for inst in &mut insts[g.phis..] {
                for d in &mut inst.defs {
                    *d = rename[d.0 as usize];
                }
                for o in &mut inst.operands {
                    if let Operand::Value(v) = o {
                        *v = rename[v.0 as usize];
                    }
                }
            }
            for (group, out) in [(&g.start, &mut head), (&g.end, &mut tail)] {
                parallel.extend(group.iter().map(|c| (rename[c.dst.0 as usize], rename[c.src.0 as usize], c.loc)).filter(|(d, s, _)| d != s));
                self.sequentialize(f, &mut parallel, out, names);
            }
            // Drop the PHIs and the copies that became `r = r`, moving the rest down.
            let mut kept = 0;
            let mut term = None;
            for i in g.phis..insts.len() {
                if i == g.term {
                    term = Some(kept);
                }
                if self.is_copy(&insts[i]) {
                    if insts[i].uses().next() == Some(insts[i].defs[0]) {
                        continue;
                    }
                    if self.coalesce >= 2 {
                        self.stats.copies_left += 1;
                    }
                }
                insts.swap(kept, i);
                kept += 1;
            }
            insts.truncate(kept);
            let term = term.unwrap_or(kept);
            if !tail.is_empty() {
                insts.splice(term..term, tail.drain(..));
            }
            if !head.is_empty() {
                insts.splice(0..0, head.drain(..));
            }
            f.blocks[b].insts = insts;
        }
    }

    /// Emits a parallel copy as a sequence of the description's copies, with one
    /// temporary per type for the cycles.
    fn sequentialize(&mut self, f: &mut Function, parallel: &mut Vec<(ValueId, ValueId, Loc)>, out: &mut Vec<Inst>, names: &mut crate::mir::NameSet) {
        if parallel.is_empty() {
            return;
        }
        let copies: Vec<(ValueId, ValueId)> = parallel.iter().map(|&(d, s, _)| (d, s)).collect();
        let loc = parallel[0].2;
        parallel.clear();
        let mut temps: HashMap<u8, ValueId> = HashMap::default();
        let sequence = sequentialize(&copies, |v| {
            let ty = f.value(v).ty;
            if let Some(&t) = temps.get(&ty.0) {
                return t;
            }
            let name = format!("{}.swap", f.value(v).name);
            let t = f.fresh_value(names, &name, ty);
            temps.insert(ty.0, t);
            t
        });
        self.stats.cycles_broken += sequence.len() - copies.len();
        for (d, s) in sequence {
            let copy = (self.copy_of)(f.value(d).ty.0).expect("a copy of this type was made in step 1");
            out.push(Inst { defs: smallvec::smallvec![d], opcode: Opcode::Machine(copy), flags: Default::default(), operands: vec![Operand::Value(s)], loc });
            self.stats.copies_left += 1;
        }
    }
}

/// Orders a parallel copy `(destination, source)` (destinations distinct and never
/// their own source; a source may feed several) into a sequence of copies with the
/// same effect. A copy whose destination no pending copy still reads goes first;
/// what remains are cycles, each broken by saving one destination in `temp(that
/// destination)`, a spare location of its kind. One copy more than the input per cycle.
pub(crate) fn sequentialize<T: Copy + Eq + std::hash::Hash>(copies: &[(T, T)], mut temp: impl FnMut(T) -> T) -> Vec<(T, T)> {
    let mut out = Vec::with_capacity(copies.len() + 1);
    // `location[v]`: where the value `v` held before the parallel copy is now.
    let mut location: HashMap<T, T> = HashMap::default();
    let mut source_of: HashMap<T, T> = HashMap::default();
    for &(d, s) in copies {
        location.insert(s, s);
        source_of.insert(d, s);
    }
    let mut ready: Vec<T> = copies.iter().rev().map(|c| c.0).filter(|d| !location.contains_key(d)).collect();
    let mut to_do: Vec<T> = copies.iter().rev().map(|c| c.0).collect();
    let mut written: HashSet<T> = HashSet::default();
    loop {
        while let Some(d) = ready.pop() {
            let s = source_of[&d];
            // A source no copy overwrites is read in place, even after it was copied.
            let at = if source_of.contains_key(&s) { location[&s] } else { s };
            out.push((d, at));
            written.insert(d);
            location.insert(s, d);
            // `s` still held its own value, now saved in `d`: it may be overwritten.
            if at == s && source_of.contains_key(&s) && !written.contains(&s) {
                ready.push(s);
            }
        }
        let Some(next) = to_do.pop() else { break };
        if !written.contains(&next) {
            // Nothing is ready, so every copy left is in a cycle, one through `next`.
            let t = temp(next);
            out.push((t, next));
            location.insert(next, t);
            ready.push(next);
        }
    }
    out
}

/// Where each value is defined, where it is live, and which value it holds, in the
/// conventional form of step 1. Uses and liveness are kept per value (a few blocks
/// each), not per block: a large block's lists would make every interference query a
/// binary search over all the values it touches.
struct Facts {
    /// Where each value is defined, with its block's dominator-tree numbers: the
    /// coalescing tests ask millions of dominance questions on long chains of
    /// diamonds, and one record per value answers each from one place.
    at: Vec<DefAt>,
    /// Per value, the blocks at whose end it is live, sorted: `live_out[live_at[v]..live_at[v + 1]]`.
    live_at: Vec<u32>,
    live_out: Vec<u32>,
    /// Per value, (block, position of its last use in the block) for the blocks where a
    /// non-PHI instruction uses it, sorted by block: `last_use[use_at[v]..use_at[v + 1]]`.
    use_at: Vec<u32>,
    last_use: Vec<(u32, u32)>,
    /// The value each value holds: a copy's destination holds its source's.
    value: Vec<u32>,
}

/// A value's definition: block (`u32::MAX`: never defined), position in it, and the
/// block's preorder and postorder numbers in the dominator tree (`reachable` false for
/// a block the entry does not reach).
#[derive(Clone, Copy)]
struct DefAt {
    block: u32,
    pos: u32,
    pre: u32,
    post: u32,
    reachable: bool,
}

/// Lists grouped by key in one buffer (compressed sparse rows), filled in the order the
/// items come: counts, then offsets, then items, so nothing is sorted.
fn group_by_key<T: Copy + Default>(keys: usize, items: &[(u32, T)]) -> (Vec<u32>, Vec<T>) {
    let mut at = vec![0u32; keys + 1];
    for &(k, _) in items {
        at[k as usize + 1] += 1;
    }
    for k in 0..keys {
        at[k + 1] += at[k];
    }
    let mut next = at.clone();
    let mut out = vec![T::default(); items.len()];
    for &(k, item) in items {
        out[next[k as usize] as usize] = item;
        next[k as usize] += 1;
    }
    (at, out)
}

/// What [`walk`] reports, in the order of the block as if step 1's copies were placed:
/// a definition or a non-PHI use (value, block, position), a PHI operand (value,
/// predecessor block), a copy (destination, source).
enum Event {
    Def(u32, u32, u32),
    Use(u32, u32, u32),
    PhiUse(u32, u32),
    Copy(u32, u32),
}

/// Reports every definition, use and copy of the function in conventional form, block
/// by block, so that each value's uses come in block and position order.
fn walk(f: &Function, groups: &[Groups], index: &HashMap<u32, usize>, tables: &TargetTables, mut on: impl FnMut(Event)) {
    for (b, block) in f.blocks.iter().enumerate() {
        let g = &groups[b];
        let bn = b as u32;
        for phi in &block.insts[..g.phis] {
            on(Event::Def(phi.defs[0].0, bn, 0));
            for pair in phi.operands.chunks(2) {
                if let [Operand::Value(v), Operand::Block(pred)] = pair {
                    if let Some(&p) = index.get(pred) {
                        on(Event::PhiUse(v.0, p as u32));
                    }
                }
            }
        }
        // The members of a parallel copy all sit at its first position.
        let copies = |group: &[GroupCopy], pos: usize, on: &mut dyn FnMut(Event)| {
            for c in group {
                on(Event::Def(c.dst.0, bn, pos as u32));
                on(Event::Use(c.src.0, bn, pos as u32));
                on(Event::Copy(c.dst.0, c.src.0));
            }
        };
        copies(&g.start, g.start_pos(), &mut on);
        for (i, inst) in block.insts.iter().enumerate().skip(g.phis) {
            if i == g.term {
                copies(&g.end, g.end_pos(), &mut on);
            }
            let pos = g.body_pos(i) as u32;
            for d in &inst.defs {
                on(Event::Def(d.0, bn, pos));
            }
            for v in inst.uses() {
                on(Event::Use(v.0, bn, pos));
            }
            if inst.is_copy(tables) {
                if let [Operand::Value(s)] = inst.operands.as_slice() {
                    on(Event::Copy(inst.defs[0].0, s.0));
                }
            }
        }
        if g.term == block.insts.len() {
            copies(&g.end, g.end_pos(), &mut on);
        }
    }
}

impl Facts {
    fn new(f: &Function, cfg: &Cfg, groups: &[Groups], tables: &TargetTables) -> Facts {
        let nv = f.values.len();
        let nb = f.blocks.len();
        let never = DefAt { block: u32::MAX, pos: 0, pre: u32::MAX, post: 0, reachable: false };
        let mut at = vec![never; nv];
        // (value, block) for PHI operands, which are used at the end of their predecessor.
        let mut phi_uses: Vec<(u32, u32)> = Vec::new();
        let mut value: Vec<u32> = (0..nv as u32).collect();
        let mut copy_source: Vec<u32> = vec![u32::MAX; nv];
        let index: HashMap<u32, usize> = f.blocks.iter().enumerate().map(|(i, b)| (b.number, i)).collect();
        // Per value, the last use in each block where a non-PHI instruction uses it, in
        // two walks: the first counts the blocks per value (a value's uses in one block
        // come together), the second fills the lists. A list of every use, grouped
        // afterwards, was three times the memory.
        let mut use_at = vec![0u32; nv + 1];
        let mut seen = vec![u32::MAX; nv];
        walk(f, groups, &index, tables, |event| match event {
            Event::Def(v, b, pos) => {
                at[v as usize].block = b;
                at[v as usize].pos = pos;
            }
            Event::Use(v, b, _) => {
                if seen[v as usize] != b {
                    seen[v as usize] = b;
                    use_at[v as usize + 1] += 1;
                }
            }
            Event::PhiUse(v, p) => phi_uses.push((v, p)),
            Event::Copy(d, s) => copy_source[d as usize] = s,
        });
        for v in 0..nv {
            use_at[v + 1] += use_at[v];
        }
        let mut last_use = vec![(0u32, 0u32); use_at[nv] as usize];
        let mut next: Vec<u32> = use_at[..nv].to_vec();
        seen.fill(u32::MAX);
        walk(f, groups, &index, tables, |event| {
            if let Event::Use(v, b, pos) = event {
                let v = v as usize;
                if seen[v] != b {
                    seen[v] = b;
                    last_use[next[v] as usize] = (b, pos);
                    next[v] += 1;
                } else {
                    let last = &mut last_use[next[v] as usize - 1].1;
                    *last = (*last).max(pos);
                }
            }
        });
        drop((next, seen));
        let (phi_start, phi_list) = group_by_key(nv, &phi_uses);
        drop(phi_uses);
        // A copy's source is defined before it in dominance order, so resolving values
        // along copy chains (with path compression) terminates.
        let mut chain = Vec::new();
        for v in 0..nv {
            chain.clear();
            let mut at = v as u32;
            while copy_source[at as usize] != u32::MAX {
                if value[at as usize] != at || chain.len() > nv {
                    break;
                }
                chain.push(at);
                at = copy_source[at as usize];
            }
            let root = value[at as usize];
            for &c in &chain {
                value[c as usize] = root;
            }
        }
        drop(copy_source);
        // Liveness by walking up from each value's uses.
        let mut live_at = Vec::with_capacity(nv + 1);
        let mut live_out: Vec<u32> = Vec::new();
        live_at.push(0);
        let (mut stamp_in, mut stamp_out) = (vec![u32::MAX; nb], vec![u32::MAX; nb]);
        let mut work = Vec::new();
        for v in 0..nv as u32 {
            let first = live_out.len();
            let db = at[v as usize].block;
            let enter = |b: u32, work: &mut Vec<u32>, stamp_in: &mut Vec<u32>| {
                if b != db && stamp_in[b as usize] != v {
                    stamp_in[b as usize] = v;
                    work.push(b);
                }
            };
            for &(b, _) in &last_use[use_at[v as usize] as usize..use_at[v as usize + 1] as usize] {
                enter(b, &mut work, &mut stamp_in);
            }
            for &p in &phi_list[phi_start[v as usize] as usize..phi_start[v as usize + 1] as usize] {
                if stamp_out[p as usize] != v {
                    stamp_out[p as usize] = v;
                    live_out.push(p);
                }
                enter(p, &mut work, &mut stamp_in);
            }
            while let Some(b) = work.pop() {
                for &q in &cfg.preds[b as usize] {
                    if stamp_out[q] != v {
                        stamp_out[q] = v;
                        live_out.push(q as u32);
                    }
                    enter(q as u32, &mut work, &mut stamp_in);
                }
            }
            live_out[first..].sort_unstable();
            live_at.push(live_out.len() as u32);
        }
        for d in &mut at {
            if d.block != u32::MAX {
                let b = d.block as usize;
                (d.pre, d.post, d.reachable) = (cfg.preorder_number(b) as u32, cfg.postorder_number(b) as u32, cfg.reachable(b));
            }
        }
        Facts { at, live_at, live_out, use_at, last_use, value }
    }

    fn reachable(&self, v: u32) -> bool {
        self.at[v as usize].reachable
    }

    /// The dominance order of definitions: dominators first.
    fn order_key(&self, v: u32) -> (u32, u32, u32) {
        let d = &self.at[v as usize];
        (d.pre, d.pos, v)
    }

    /// Whether `a`'s definition dominates `b`'s (or is at the same point).
    fn dominates(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.at[a as usize], &self.at[b as usize]);
        if x.block == y.block {
            x.pos <= y.pos
        } else {
            x.reachable && y.reachable && x.pre <= y.pre && y.post <= x.post
        }
    }

    /// Whether `a` is live just after the definition of `b`, assuming `a`'s definition
    /// dominates `b`'s. A use at the same point (a parallel copy reading `a` while
    /// writing `b`) does not count.
    fn live_after_def(&self, a: u32, b: u32) -> bool {
        let DefAt { block, pos, .. } = self.at[b as usize];
        let a = a as usize;
        let live_out = &self.live_out[self.live_at[a] as usize..self.live_at[a + 1] as usize];
        let uses = &self.last_use[self.use_at[a] as usize..self.use_at[a + 1] as usize];
        live_out.binary_search(&block).is_ok() || uses.binary_search_by_key(&block, |&(b, _)| b).is_ok_and(|i| uses[i].1 > pos)
    }

    /// Whether the live ranges of `a` and `b` overlap (in strict SSA, only when one's
    /// definition dominates the other's and it is live there).
    fn intersect(&self, a: u32, b: u32) -> bool {
        if self.dominates(a, b) && self.live_after_def(a, b) {
            return true;
        }
        self.dominates(b, a) && self.live_after_def(b, a)
    }
}

/// Congruence classes: every member of a class will be one register.
///
/// Four bytes per value besides `class`: most values stay alone in their class, and a
/// list header per value (24 bytes) was 4 MB of fresh pages on a loop carrying 25k PHIs.
struct Classes {
    class: Vec<u32>,
    /// Per class, the index of its member list in `lists` (`ALONE`: the class is its
    /// one value).
    list_of: Vec<u32>,
    /// Members of each class with more than one, in dominance order of definitions.
    lists: Vec<Vec<u32>>,
    /// Lists of classes merged away, empty, reused by later merges.
    free: Vec<u32>,
    /// Per class: it holds two members whose live ranges overlap (with the same value),
    /// so the dominance-forest test is not exact for it.
    overlapping: Vec<bool>,
    /// The walk of [`Classes::forest_test`] and the merged list of
    /// [`Classes::try_merge`], kept between merges.
    stack: Vec<(u32, bool)>,
    merged: Vec<u32>,
}

const ALONE: u32 = u32::MAX;

impl Classes {
    fn new(f: &Function) -> Classes {
        let n = f.values.len();
        Classes { class: (0..n as u32).collect(), list_of: vec![ALONE; n], lists: Vec::new(), free: Vec::new(), overlapping: vec![false; n], stack: Vec::new(), merged: Vec::new() }
    }

    /// The members of class `c` (`one` holds `c`, for a class of one value). Of the
    /// two fields, not `self`, so that `class` and the scratch lists can change while
    /// they are read.
    fn members<'a>(list_of: &[u32], lists: &'a [Vec<u32>], c: u32, one: &'a [u32; 1]) -> &'a [u32] {
        match list_of[c as usize] {
            ALONE => one,
            l => &lists[l as usize],
        }
    }

    fn size(&self, c: u32) -> usize {
        match self.list_of[c as usize] {
            ALONE => 1,
            l => self.lists[l as usize].len(),
        }
    }

    /// Gives class `keep` the members in `self.merged` and drops class `gone`, whose
    /// list (if any) is kept for reuse.
    fn replace_members(&mut self, keep: u32, gone: u32) {
        let l = match self.list_of[keep as usize] {
            ALONE => {
                let l = self.free.pop().unwrap_or_else(|| {
                    self.lists.push(Vec::new());
                    self.lists.len() as u32 - 1
                });
                self.list_of[keep as usize] = l;
                l
            }
            l => l,
        };
        std::mem::swap(&mut self.lists[l as usize], &mut self.merged);
        self.merged.clear();
        let g = std::mem::replace(&mut self.list_of[gone as usize], ALONE);
        if g != ALONE {
            self.lists[g as usize].clear();
            self.free.push(g);
        }
    }

    /// Joins two classes without an interference check (a PHI's web, which step 1 made
    /// interference-free). Members are re-sorted later, when facts exist.
    fn union(&mut self, a: ValueId, b: ValueId) {
        let (ca, cb) = (self.class[a.0 as usize], self.class[b.0 as usize]);
        if ca == cb {
            return;
        }
        let (keep, gone) = if self.size(ca) >= self.size(cb) { (ca, cb) } else { (cb, ca) };
        let (one_keep, one_gone) = ([keep], [gone]);
        let moved = Self::members(&self.list_of, &self.lists, gone, &one_gone);
        for &m in moved {
            self.class[m as usize] = keep;
        }
        self.merged.extend_from_slice(Self::members(&self.list_of, &self.lists, keep, &one_keep));
        self.merged.extend_from_slice(moved);
        self.merged.sort_unstable();
        self.replace_members(keep, gone);
    }

    /// Puts every class's members in dominance order of their definitions, the order
    /// [`Classes::try_merge`] keeps.
    fn sort_members(&mut self, facts: &Facts) {
        for list in &mut self.lists {
            list.sort_by_key(|&v| facts.order_key(v));
        }
    }

    /// Merges the classes of `d` and `s` unless they interfere; on refusal, names the
    /// two values that interfere when the test found them.
    fn try_merge(&mut self, d: ValueId, s: ValueId, facts: &Facts) -> Result<(), Option<(ValueId, ValueId)>> {
        let (cd, cs) = (self.class[d.0 as usize], self.class[s.0 as usize]);
        if cd == cs {
            return Ok(());
        }
        let (na, nb) = (self.size(cd), self.size(cs));
        let pairwise = na * nb <= PAIRWISE_LIMIT;
        let forest = na + nb <= FOREST_LIMIT && !self.overlapping[cd as usize] && !self.overlapping[cs as usize];
        if !pairwise && !forest {
            return Err(None);
        }
        // The two member lists, read in place: most merges join small classes, and
        // copying them out cost more than the test.
        let (one_d, one_s) = ([cd], [cs]);
        let (a, b) = (Self::members(&self.list_of, &self.lists, cd, &one_d), Self::members(&self.list_of, &self.lists, cs, &one_s));
        let verdict = if a.iter().chain(b).any(|&v| !facts.reachable(v)) {
            Err(None)
        } else if pairwise {
            Self::pairwise_test(a, b, facts)
        } else {
            Self::forest_test(a, b, facts, &mut self.stack).map(|()| false)
        };
        let same_value_overlap = verdict?;
        // Union by size, so a value changes class O(log n) times.
        let (keep, gone, moved) = if a.len() >= b.len() { (cd, cs, b) } else { (cs, cd, a) };
        merge_sorted(a, b, |&v| facts.order_key(v), &mut self.merged);
        for &m in moved {
            self.class[m as usize] = keep;
        }
        self.replace_members(keep, gone);
        if same_value_overlap | std::mem::replace(&mut self.overlapping[gone as usize], false) {
            self.overlapping[keep as usize] = true;
        }
        Ok(())
    }

    /// Every pair: exact, values included. `Ok(true)` when some pair overlaps with the
    /// same value (allowed, but the merged class is then not overlap-free).
    fn pairwise_test(a: &[u32], b: &[u32], facts: &Facts) -> Result<bool, Option<(ValueId, ValueId)>> {
        let mut same_value_overlap = false;
        for &x in a {
            for &y in b {
                if facts.intersect(x, y) {
                    if facts.value[x as usize] != facts.value[y as usize] {
                        return Err(Some((ValueId(x), ValueId(y))));
                    }
                    same_value_overlap = true;
                }
            }
        }
        Ok(same_value_overlap)
    }

    /// Budimlic's test, linear in the two classes: when each class is free of overlaps,
    /// the union has one iff some value overlaps its nearest dominating member.
    fn forest_test(a: &[u32], b: &[u32], facts: &Facts, stack: &mut Vec<(u32, bool)>) -> Result<(), Option<(ValueId, ValueId)>> {
        stack.clear();
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let take_a = j == b.len() || (i < a.len() && facts.order_key(a[i]) <= facts.order_key(b[j]));
            let (v, red) = if take_a {
                i += 1;
                (a[i - 1], true)
            } else {
                j += 1;
                (b[j - 1], false)
            };
            while stack.last().is_some_and(|&(top, _)| !facts.dominates(top, v)) {
                stack.pop();
            }
            if let Some(&(parent, parent_red)) = stack.last() {
                if parent_red != red && facts.live_after_def(parent, v) {
                    return Err(Some((ValueId(parent), ValueId(v))));
                }
            }
            stack.push((v, red));
        }
        Ok(())
    }

    /// The value each value is renamed to, so that printed MIR keeps the user's names:
    /// a class is named after its first PHI result when it has one (a loop counter
    /// after the counter, not after its initial constant), else after its first value
    /// from the input, else after its first value.
    fn representatives(&self, original_values: usize, phi_results: &HashSet<u32>) -> Vec<ValueId> {
        let mut rename: Vec<ValueId> = (0..self.class.len() as u32).map(ValueId).collect();
        for members in self.lists.iter().filter(|l| !l.is_empty()) {
            let best = members.iter().copied().min_by_key(|&m| (!phi_results.contains(&m), m as usize >= original_values, m)).expect("classes are not empty");
            for &m in members {
                rename[m as usize] = ValueId(best);
            }
        }
        rename
    }
}

/// Appends to `out` the merge of two lists sorted by `key`.
fn merge_sorted<K: Ord>(a: &[u32], b: &[u32], key: impl Fn(&u32) -> K, out: &mut Vec<u32>) {
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if key(&a[i]) <= key(&b[j]) {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
}

#[cfg(test)]
mod tests {
    use super::sequentialize;
    use proptest::prelude::*;

    /// Runs a sequence of copies on registers that start out holding their own number.
    fn run(copies: &[(u32, u32)], registers: usize) -> Vec<u32> {
        let mut r: Vec<u32> = (0..registers as u32).collect();
        for &(d, s) in copies {
            r[d as usize] = r[s as usize];
        }
        r
    }

    proptest! {
        /// Any parallel copy (cycles, chains, fan-out) becomes a sequence that leaves
        /// every register as the parallel copy would, with one extra copy per cycle.
        #[test]
        fn sequences_do_what_the_parallel_copy_does(sources in proptest::collection::vec(proptest::option::of(0u32..8), 8)) {
            const TEMP: u32 = 8;
            let copies: Vec<(u32, u32)> = sources.iter().enumerate().filter_map(|(d, s)| s.filter(|&s| s != d as u32).map(|s| (d as u32, s))).collect();
            let sequence = sequentialize(&copies, |_| TEMP);
            let mut expected: Vec<u32> = (0..=TEMP).collect();
            for &(d, s) in &copies {
                expected[d as usize] = s;
            }
            let got = run(&sequence, TEMP as usize + 1);
            prop_assert_eq!(&got[..TEMP as usize], &expected[..TEMP as usize], "sequence {:?} of {:?}", sequence, copies);
            // A permutation of k registers in c cycles needs k + c copies, never more.
            prop_assert!(sequence.len() <= copies.len() + copies.len() / 2);
        }
    }

    #[test]
    fn a_swap_takes_three_copies() {
        let sequence = sequentialize(&[(0, 1), (1, 0)], |_| 9);
        assert_eq!(sequence.len(), 3);
        assert_eq!(run(&sequence, 10)[..2], [1, 0]);
        // A chain needs no temporary, whatever order the copies come in.
        assert_eq!(sequentialize(&[(1, 0), (2, 1)], |_| 9), vec![(2, 1), (1, 0)]);
    }
}
