//! The allocator's checker, as regalloc2 keeps one beside its allocator: after block
//! rematerialization and after out-of-SSA translation, a symbolic execution proves
//! that every instruction of the output reads the values its input counterpart read.
//!
//! The output must keep the input's blocks and, within each block, its instructions
//! in order; it may rename registers, drop `COPY`s, add copies (register to register)
//! and add *clones*: instructions that recompute a value the input computes (same
//! opcode, flags and immediates, reading registers that hold the same values as the
//! input's operands), pure ones only. PHIs may stay (in SSA output, matched in order)
//! or go (their values then arrive in whatever registers hold the incoming values).
//! An output instruction without register operands whose twin is among the pure input
//! instructions ahead is a clone of the twin's value (the spiller recomputes a `TID_X`
//! or a parameter load at its use and drops the original).
//!
//! The abstract state maps each output register to the set of input values it surely
//! holds. An input `COPY` makes its result another name of its source's value; an
//! output copy copies the set; a matched instruction checks that each register it
//! reads holds the input operand's value and sets its result registers to the input
//! results. On an edge, each input PHI of the successor adds its result to the
//! registers holding the incoming value. At a join the sets are intersected; the
//! states are iterated to a fixed point, then one last walk reports the first wrong
//! read, naming the block, the instruction and the operand.
//!
//! Spill code is followed through its slots: a store to a spill slot the output added
//! copies the stored register's set to the slot, a reload copies the slot's set to
//! its register, so a reload that reads the wrong slot (or a slot shared by two values
//! whose lifetimes overlap) is caught at the reload's user.

use std::collections::{BTreeSet, HashMap};

use target_desc::tables::TargetTables;

use super::cfg::Cfg;
use crate::mir::{Function, Inst, Operand, ValueId};

type State = HashMap<u32, BTreeSet<u32>>;

/// A read the checker could not prove.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckError {
    pub function: String,
    pub block: String,
    /// Index of the instruction in the output block.
    pub inst: usize,
    pub message: String,
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "checker: @{} {} instruction {}: {}", self.function, self.block, self.inst + 1, self.message)
    }
}

struct Checker<'a> {
    input: &'a Function,
    output: &'a Function,
    tables: &'a TargetTables,
    /// Pure single-result input instructions by opcode and non-value operands: what a
    /// clone may recompute.
    clones_of: HashMap<String, Vec<(usize, usize)>>,
    /// Each input value's representative: equal pure computations of equal values
    /// (two loads of the same parameter, two equal constants) and copies are one
    /// value, so a clone may stand for either.
    canon: Vec<u32>,
    /// The input is in SSA form. Out of SSA (the spiller's input) a register may be
    /// defined several times, so such a register's name is a value only until its next
    /// definition: only registers defined once are value-numbered, copies are matched
    /// like any other instruction, and a definition of a register defined several times
    /// removes its name from every register and slot that held the previous value.
    ssa_input: bool,
    /// Definitions of each input register (out of SSA, a register defined more than
    /// once is a variable, not a value).
    def_count: Vec<u32>,
    /// Representatives that stand for more than one input value.
    shared_rep: Vec<bool>,
}

impl Checker<'_> {
    fn is_copy(&self, inst: &Inst) -> bool {
        inst.is_copy(self.tables)
    }

    fn is_phi(&self, inst: &Inst) -> bool {
        inst.is_phi(self.tables)
    }

    /// The representative of input value `v`.
    fn c(&self, v: ValueId) -> u32 {
        self.canon.get(v.0 as usize).copied().unwrap_or(v.0)
    }

    /// Value numbering of the input, in dominator-tree preorder (definitions before
    /// their non-PHI uses).
    fn number_values(&mut self, cfg: &Cfg) {
        self.canon = (0..self.input.values.len() as u32).collect();
        // Out of SSA, only registers defined once are values (and numbered), and only
        // computations of such registers; copies are matched, not aliased.
        let single = |v: &ValueId| self.ssa_input || self.def_count.get(v.0 as usize).is_some_and(|&n| n == 1);
        let mut table: HashMap<String, u32> = HashMap::new();
        for b in cfg.dom_preorder() {
            for inst in &self.input.blocks[b].insts {
                let Some(&d) = inst.defs.first() else { continue };
                if !self.ssa_input && (self.is_copy(inst) || !inst.defs.iter().all(single) || !inst.uses().all(|u| single(&u))) {
                    continue;
                }
                if self.is_copy(inst) {
                    if let [Operand::Value(u)] = inst.operands.as_slice() {
                        self.canon[d.0 as usize] = self.c(*u);
                    }
                    continue;
                }
                if self.is_phi(inst) || !self.pure(inst) {
                    continue;
                }
                let operands: Vec<String> = inst.operands.iter().map(|o| if let Operand::Value(u) = o { format!("v{}", self.c(*u)) } else { format!("{o:?}") }).collect();
                let key = format!("{:?}|{:?}|{}|{:?}", inst.opcode, inst.flags, operands.join(","), self.input.value(d).ty);
                let rep = *table.entry(key).or_insert(d.0);
                self.canon[d.0 as usize] = rep;
            }
        }
    }

    /// Opcode, flags and non-value operands: what must be equal for two instructions
    /// to be the same computation.
    fn shape(inst: &Inst) -> String {
        let ops: Vec<String> = inst.operands.iter().map(|o| if matches!(o, Operand::Value(_)) { "_".to_string() } else { format!("{o:?}") }).collect();
        format!("{:?}|{:?}|{}|{}", inst.opcode, inst.flags, ops.join(","), inst.defs.len())
    }

    /// A computation only of its operands (MachineCSE's candidates) with one result:
    /// what a clone may repeat and what may be dropped when nothing reads it.
    fn pure(&self, inst: &Inst) -> bool {
        inst.defs.len() == 1 && super::cse::candidate(inst, self.tables)
    }

    /// The state on the edge `p -> b`: the input PHIs of `b` take their incoming values.
    fn edge(&self, out: &State, p: usize, b: usize) -> State {
        let mut state = out.clone();
        let pred_number = self.input.blocks[p].number;
        let in_phis: Vec<&Inst> = self.input.blocks[b].insts.iter().filter(|i| self.is_phi(i)).collect();
        let out_phis: Vec<&Inst> = self.output.blocks[b].insts.iter().filter(|i| self.is_phi(i)).collect();
        let incoming = |phi: &Inst| -> Option<ValueId> {
            phi.operands.chunks(2).find_map(|pair| match pair {
                [Operand::Value(v), Operand::Block(n)] if *n == pred_number => Some(*v),
                _ => None,
            })
        };
        for (k, phi) in in_phis.iter().enumerate() {
            let (Some(a), Some(&x)) = (incoming(phi), phi.defs.first()) else { continue };
            match out_phis.get(k) {
                // An output PHI: its register holds x if its incoming register held a.
                Some(o) => {
                    let held = match (incoming(o), o.defs.first()) {
                        (Some(s), Some(_)) => out.get(&s.0).is_some_and(|set| set.contains(&self.c(a))),
                        _ => false,
                    };
                    if let Some(r) = o.defs.first() {
                        state.insert(r.0, if held { BTreeSet::from([self.c(x)]) } else { BTreeSet::new() });
                    }
                }
                // PHIs eliminated: x arrives wherever a is.
                None => {
                    for (reg, set) in out {
                        if set.contains(&self.c(a)) {
                            state.entry(*reg).or_default().insert(self.c(x));
                        }
                    }
                }
            }
        }
        state
    }

    /// Runs block `b` from `state`; with `errors`, reports unproven reads.
    fn run_block(&self, b: usize, mut state: State, errors: &mut Option<&mut Vec<CheckError>>) -> State {
        let input: Vec<&Inst> = self.input.blocks[b].insts.iter().filter(|i| !self.is_phi(i)).collect();
        let mut fi = 0;
        let label = self.output.blocks[b].label();
        let mut report = |k: usize, message: String| {
            if let Some(errors) = errors.as_deref_mut() {
                errors.push(CheckError { function: self.output.name.clone(), block: label.clone(), inst: k, message });
            }
        };
        // Input COPYs need no counterpart: value numbering made a copy's result the
        // same value as its source.
        let skip_copies = |fi: &mut usize| {
            while self.ssa_input && *fi < input.len() && self.is_copy(input[*fi]) {
                *fi += 1;
            }
        };
        for (k, g) in self.output.blocks[b].insts.iter().enumerate() {
            if self.is_phi(g) {
                continue;
            }
            // Spill code: a slot the output added holds what was stored to it, like a
            // register (regalloc2's checker tracks spill slots the same way).
            if let Some(a) = super::frame::access(g, self.tables).filter(|a| self.is_spill_slot(a.object)) {
                let key = spill_slot_key(a.object, a.offset);
                if a.store {
                    let held = state.get(&a.value.0).cloned().unwrap_or_default();
                    state.insert(key, held);
                } else {
                    let held = state.get(&key).cloned().unwrap_or_default();
                    state.insert(a.value.0, held);
                }
                continue;
            }
            skip_copies(&mut fi);
            if self.ssa_input && self.is_copy(g) {
                let (Some(r), [Operand::Value(s)]) = (g.defs.first(), g.operands.as_slice()) else { continue };
                let held = state.get(&s.0).cloned().unwrap_or_default();
                state.insert(r.0, held);
                continue;
            }
            // The input's next instruction, or a later one when the ones before it are
            // pure and were dropped (nothing read them) or copies.
            let window = (fi..input.len()).take_while(|&j| j == fi || self.pure(input[j - 1]) || (self.ssa_input && self.is_copy(input[j - 1])));
            // In order: the input's next instruction; a later one of the window, for an
            // instruction with register operands (what they hold tells them apart); a
            // clone (the same computation as a pure input instruction, on registers
            // holding its operands), before any later window instruction for one
            // without operands (a recomputed `TID_X` is not the input's `TID_X` a few
            // pure instructions on); else the input instruction it stands for, with the
            // wrong reads reported.
            let matches = |j: usize| Self::shape(g) == Self::shape(input[j]) && self.reads_same(g, input[j], &state);
            let from_nothing = g.uses().next().is_none();
            // Out of SSA, an instruction without operands that defines a register the
            // input defines more than once (a loop counter's `mov.b32 %i, 0`) is that
            // register's definition in the window, not the input's next instruction of
            // its shape nor a clone of it (an equal constant): either would give the
            // register only the constant's value, and the counter's spill slot would
            // then disagree with what its loop's back edge stores there. The spiller
            // keeps the input's register names, so the name tells the definition; none
            // of the skipped input instructions may read the register's previous value,
            // which the output has already overwritten.
            let mut target = None;
            if let (true, false, Some(r)) = (from_nothing, self.ssa_input, g.defs.first()) {
                let name = &self.output.value(*r).name;
                let defines = |j: usize| input[j].defs.first().copied().filter(|d| self.def_count.get(d.0 as usize).is_some_and(|&n| n > 1) && self.input.value(*d).name == *name);
                target = window
                    .clone()
                    .find_map(|j| defines(j).filter(|_| matches(j)).map(|d| (j, d)))
                    .filter(|&(j, d)| input[fi..j].iter().all(|i| i.uses().all(|u| u != d)))
                    .map(|(j, _)| j);
            }
            if target.is_none() {
                target = (fi < input.len() && matches(fi)).then_some(fi);
            }
            if target.is_none() && !from_nothing {
                target = window.clone().find(|&j| matches(j));
            }
            // An instruction without operands that the window holds too, after pure
            // input instructions the output dropped or moved (the spiller recomputes
            // a `TID_X` at its use and drops the original): a clone of that window
            // instruction's value, which does not depend on where it is computed.
            // The window instruction stays unmatched; later output may still match it.
            // Every such window instruction computes the same value (two `mov.b32 %r, 0`
            // of the input are one value twice), so the clone holds all of them.
            if target.is_none() && from_nothing {
                let value = |j: usize| input[j].defs.first().filter(|d| self.ssa_input || self.def_count.get(d.0 as usize) == Some(&1));
                if let Some(r) = g.defs.first() {
                    let held: BTreeSet<u32> = window.clone().filter(|&j| self.pure(input[j]) && matches(j)).filter_map(|j| value(j).map(|d| self.c(*d))).collect();
                    if !held.is_empty() {
                        state.insert(r.0, held);
                        continue;
                    }
                }
            }
            if target.is_none() {
                if let (Some(held), Some(r)) = (self.clone_of(g, &state), g.defs.first()) {
                    state.insert(r.0, held);
                    continue;
                }
                if from_nothing {
                    target = window.clone().find(|&j| matches(j));
                }
            }
            if target.is_none() {
                target = window.clone().find(|&j| Self::shape(g) == Self::shape(input[j]));
            }
            let Some(j) = target else {
                let next = input.get(fi).map_or("the end of the block".to_string(), |f| format!("`{}`", f.opcode.name(self.tables)));
                report(k, format!("`{}` is neither the input's next instruction ({next}) nor a recomputation of an input value", g.opcode.name(self.tables)));
                for r in &g.defs {
                    state.insert(r.0, BTreeSet::new());
                }
                continue;
            };
            fi = j;
            let f = input[fi];
            for (n, (go, fo)) in g.operands.iter().zip(&f.operands).enumerate() {
                if let (Operand::Value(r), Operand::Value(u)) = (go, fo) {
                    if !state.get(&r.0).is_some_and(|s| s.contains(&self.c(*u))) {
                        report(k, self.wrong_read(g, n, *r, *u, &state));
                    }
                }
            }
            for (r, d) in g.defs.iter().zip(&f.defs) {
                // A value other registers may hold under its representative (equal
                // computations) keeps them; any other definition replaces the old value.
                if !self.ssa_input && !self.shared_rep.get(self.c(*d) as usize).is_some_and(|&s| s) {
                    for set in state.values_mut() {
                        set.remove(&self.c(*d));
                    }
                }
                state.insert(r.0, BTreeSet::from([self.c(*d)]));
            }
            fi += 1;
        }
        skip_copies(&mut fi);
        if let Some(f) = input.get(fi..).and_then(|rest| rest.iter().find(|i| !(self.ssa_input && self.is_copy(i)) && !self.pure(i))) {
            report(self.output.blocks[b].insts.len(), format!("the input's `{}` has no counterpart in the output", f.opcode.name(self.tables)));
        }
        state
    }

    /// Whether frame object `k` of the output is a spill slot the input did not have.
    fn is_spill_slot(&self, k: usize) -> bool {
        k >= self.input.frame.len() && self.output.frame.get(k).is_some_and(|o| o.spill)
    }

    /// Whether every register `g` reads holds the value `f` reads there.
    fn reads_same(&self, g: &Inst, f: &Inst, state: &State) -> bool {
        g.operands.iter().zip(&f.operands).all(|(go, fo)| match (go, fo) {
            (Operand::Value(r), Operand::Value(u)) => state.get(&r.0).is_some_and(|s| s.contains(&self.c(*u))),
            _ => true,
        })
    }

    /// The input values `g` recomputes: every pure input instruction of its shape that
    /// reads the same values computes the same value. Out of SSA a register defined
    /// more than once is a variable, which holds that value only after this definition:
    /// the first such match stands, as it always did, but the values (registers
    /// defined once) are all kept, so a rematerialized `mov.b32 %r, 0` is also the
    /// constant it recomputes, not only a loop counter that happens to start at 0.
    fn clone_of(&self, g: &Inst, state: &State) -> Option<BTreeSet<u32>> {
        let mut held = BTreeSet::new();
        let mut first = true;
        for &(bb, ii) in self.clones_of.get(&Self::shape(g))? {
            let f = &self.input.blocks[bb].insts[ii];
            if !self.reads_same(g, f, state) {
                continue;
            }
            let value = self.ssa_input || self.def_count.get(f.defs[0].0 as usize) == Some(&1);
            if value || first {
                held.insert(self.c(f.defs[0]));
            }
            first = false;
        }
        (!held.is_empty()).then_some(held)
    }

    fn wrong_read(&self, g: &Inst, n: usize, r: ValueId, u: ValueId, state: &State) -> String {
        let name = |v: u32, f: &Function| f.values.get(v as usize).map_or(format!("v{v}"), |i| format!("%{}", i.name));
        let held: Vec<String> = state.get(&r.0).map(|s| s.iter().map(|&v| name(v, self.input)).collect()).unwrap_or_default();
        format!(
            "`{}` operand {} reads {}, which holds {}, but the input reads {} here",
            g.opcode.name(self.tables),
            n + 1,
            name(r.0, self.output),
            if held.is_empty() { "no known value".to_string() } else { format!("{{{}}}", held.join(", ")) },
            name(self.c(u), self.input)
        )
    }
}

/// The state key of a spill slot's cell: far above any register number.
fn spill_slot_key(object: usize, offset: i64) -> u32 {
    u32::MAX - ((object as u32) << 8) - (offset as u32 & 0xFF)
}

/// Checks that `output` reads what `input` reads (see the module comment).
pub fn check(input: &Function, output: &Function, tables: &TargetTables) -> Result<(), Vec<CheckError>> {
    let fail = |message: String| Err(vec![CheckError { function: output.name.clone(), block: String::new(), inst: 0, message }]);
    if input.blocks.len() != output.blocks.len() || input.blocks.iter().zip(&output.blocks).any(|(a, b)| a.number != b.number) {
        return fail("the output's blocks are not the input's".into());
    }
    let ssa_input = input.ssa;
    let mut def_count = vec![0u32; input.values.len()];
    for d in input.blocks.iter().flat_map(|b| &b.insts).flat_map(|i| &i.defs) {
        def_count[d.0 as usize] += 1;
    }
    let mut checker = Checker { input, output, tables, clones_of: HashMap::new(), canon: Vec::new(), ssa_input, def_count, shared_rep: Vec::new() };
    for (b, block) in input.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            if checker.pure(inst) && !checker.is_copy(inst) {
                checker.clones_of.entry(Checker::shape(inst)).or_default().push((b, i));
            }
        }
    }
    let cfg = Cfg::new(input, tables);
    checker.number_values(&cfg);
    let mut members = vec![0u32; input.values.len()];
    for &r in &checker.canon {
        members[r as usize] += 1;
    }
    checker.shared_rep = members.iter().map(|&m| m > 1).collect();
    let checker = checker;
    let order = cfg.reverse_postorder();
    let n = input.blocks.len();
    let mut outs: Vec<Option<State>> = vec![None; n];
    let entry_state = |b: usize, outs: &[Option<State>]| -> State {
        let mut merged: Option<State> = None;
        for &p in &cfg.preds[b] {
            let Some(out) = &outs[p] else { continue };
            let e = checker.edge(out, p, b);
            merged = Some(match merged {
                None => e,
                Some(m) => m.into_iter().filter_map(|(r, s)| e.get(&r).map(|t| (r, s.intersection(t).copied().collect()))).collect(),
            });
        }
        merged.unwrap_or_default()
    };
    // The sets only shrink once every predecessor has been seen; each pass over the
    // blocks in reverse postorder settles at least one more loop level.
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds <= n + 1 {
        changed = false;
        rounds += 1;
        for &b in &order {
            let state = entry_state(b, &outs);
            let out = checker.run_block(b, state, &mut None);
            if outs[b].as_ref() != Some(&out) {
                outs[b] = Some(out);
                changed = true;
            }
        }
    }
    let mut errors = Vec::new();
    for &b in &order {
        let state = entry_state(b, &outs);
        checker.run_block(b, state, &mut Some(&mut errors));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUT: &str = "---
name: k
kind: kernel
params:
  - { name: n, type: i32 }
  - { name: out, type: p1 }
  - { name: b, type: i32 }
body: |
  bb.0:
    %n:i32 = LDPARAM_i32 0
    %out:p1 = LDPARAM_GLOBAL_PTR 1
    %b:i32 = LDPARAM_i32 2
    %zero:i32 = MOV_IMM_i32 0
    BRA %bb.1
  bb.1:
    %i:i32 = PHI %zero, %bb.0, %next, %bb.1
    %acc:i32 = PHI %zero, %bb.0, %sum, %bb.1
    %sum:i32 = ADD_i32 %acc, %i
    %next:i32 = ADD_IMM_i32 %i, 1
    %more:i1 = SETP_i32 lt, %next, %n
    BRA_COND %more, %bb.1, %bb.2
  bb.2:
    %r:i32 = ADD_i32 %sum, %b
    ST_GLOBAL_i32 %r, %out
    RET_VOID
...
";

    /// The input out of SSA, with `exit` as the exit block's body.
    fn output(exit: &str) -> String {
        format!(
            "---
name: k
kind: kernel
params:
  - {{ name: n, type: i32 }}
  - {{ name: out, type: p1 }}
  - {{ name: b, type: i32 }}
ssa: false
body: |
  bb.0:
    %n:i32 = LDPARAM_i32 0
    %out:p1 = LDPARAM_GLOBAL_PTR 1
    %i:i32 = MOV_IMM_i32 0
    %acc:i32 = MOV_i32 %i
    BRA %bb.1
  bb.1:
    %acc:i32 = ADD_i32 %acc, %i
    %i:i32 = ADD_IMM_i32 %i, 1
    %more:i1 = SETP_i32 lt, %i, %n
    BRA_COND %more, %bb.1, %bb.2
  bb.2:
{exit}
    ST_GLOBAL_i32 %r, %out
    RET_VOID
...
"
        )
    }

    /// A test module, or a panic with its diagnostic.
    fn parse(text: &str) -> crate::mir::Module {
        crate::mir::parser::parse_module(text, "t.mir", tables::nvptx()).unwrap_or_else(|e| panic!("{}", e.render()))
    }

    fn run(output: &str) -> Result<(), Vec<CheckError>> {
        let tables = tables::nvptx();
        let (input, output) = (parse(INPUT), parse(output));
        check(&input.functions[0], &output.functions[0], tables)
    }

    #[test]
    fn coalesced_registers_and_a_recomputed_parameter_pass() {
        // %b's load dropped from the entry and recomputed in the exit block.
        run(&output("    %b.remat:i32 = LDPARAM_i32 2\n    %r:i32 = ADD_i32 %acc, %b.remat")).unwrap();
    }

    #[test]
    fn a_read_of_the_wrong_register_is_named() {
        let errors = run(&output("    %b.remat:i32 = LDPARAM_i32 2\n    %r:i32 = ADD_i32 %i, %b.remat")).unwrap_err();
        assert_eq!(errors[0].block, "bb.2");
        assert_eq!(errors[0].inst, 1);
        assert!(errors[0].message.contains("`ADD_i32` operand 1 reads %i, which holds {%next}, but the input reads %sum here"), "{}", errors[0]);
    }

    #[test]
    fn a_clone_of_the_wrong_value_is_caught() {
        // LDPARAM_i32 0 recomputes %n, not %b.
        let errors = run(&output("    %b.remat:i32 = LDPARAM_i32 0\n    %r:i32 = ADD_i32 %acc, %b.remat")).unwrap_err();
        assert!(errors[0].message.contains("reads %b.remat, which holds {%n}, but the input reads %b here"), "{}", errors[0]);
    }

    #[test]
    fn an_instruction_the_input_lacks_is_named() {
        let errors = run(&output("    %b.remat:i32 = LDPARAM_i32 2\n    %x:i32 = MUL_i32 %acc, %acc\n    %r:i32 = ADD_i32 %acc, %b.remat")).unwrap_err();
        assert!(errors[0].message.contains("`MUL_i32` is neither the input's next instruction"), "{}", errors[0]);
    }

    /// Out of SSA, a recomputed constant stands for the values computed by an equal
    /// instruction, not for a variable that also starts at that constant: %z's
    /// `mov 0` rematerialized at its use is %z, not the loop counter %i.
    #[test]
    fn a_recomputed_constant_is_not_a_variable_with_the_same_start() {
        let tables = tables::nvptx();
        let function = |entry: &str, exit: &str| {
            format!(
                "---\nname: k\nkind: kernel\nparams:\n  - {{ name: n, type: i32 }}\n  - {{ name: out, type: p1 }}\nssa: false\nbody: |\n  bb.0:\n    %n:i32 = LDPARAM_i32 0\n    %out:p1 = LDPARAM_GLOBAL_PTR 1\n    %i:i32 = MOV_IMM_i32 0\n{entry}    BRA %bb.1\n  bb.1:\n    %i:i32 = ADD_IMM_i32 %i, 1\n    %more:i1 = SETP_i32 lt, %i, %n\n    BRA_COND %more, %bb.1, %bb.2\n  bb.2:\n{exit}    ST_GLOBAL_i32 %r, %out\n    RET_VOID\n...\n"
            )
        };
        let input = parse(&function("    %z:i32 = MOV_IMM_i32 0\n", "    %r:i32 = ADD_i32 %i, %z\n"));
        let remat = parse(&function("", "    %z.remat:i32 = MOV_IMM_i32 0\n    %r:i32 = ADD_i32 %i, %z.remat\n"));
        assert_eq!(check(&input.functions[0], &remat.functions[0], tables), Ok(()));
        // Reading the counter where the input reads %z is still caught.
        let wrong = parse(&function("    %z:i32 = MOV_IMM_i32 0\n", "    %r:i32 = ADD_i32 %i, %i\n"));
        assert!(check(&input.functions[0], &wrong.functions[0], tables).is_err());
    }

    /// Spill code is followed through its slot: the spiller's own output passes; a
    /// reload placed after the slot was reused for another value is caught at its user.
    #[test]
    fn spill_slots_are_followed_and_a_stale_reload_is_caught() {
        let tables = tables::nvptx();
        let body = |middle: &str, tail: &str| {
            format!(
                "---\nname: k\nkind: kernel\nparams:\n  - {{ name: p, type: p1 }}\n  - {{ name: q, type: p1 }}\n  - {{ name: a, type: i32 }}\nframe:\n  - {{ size: 8, align: 8, spill: true }}\nbody: |\n  bb.0:\n    %p:p1 = LDPARAM_GLOBAL_PTR 0\n    ST_FRAME_p1 %p, 0\n    %a:i32 = LDPARAM_i32 2\n{middle}    %q:p1 = LDPARAM_GLOBAL_PTR 1\n    ST_FRAME_p1 %q, 0\n{tail}    RET\n...\n"
            )
        };
        let input = "---\nname: k\nkind: kernel\nparams:\n  - { name: p, type: p1 }\n  - { name: q, type: p1 }\n  - { name: a, type: i32 }\nbody: |\n  bb.0:\n    %p:p1 = LDPARAM_GLOBAL_PTR 0\n    %a:i32 = LDPARAM_i32 2\n    ST_GLOBAL_i32 %a, %p\n    %q:p1 = LDPARAM_GLOBAL_PTR 1\n    ST_GLOBAL_i32 %a, %q\n    RET\n...\n";
        let input = parse(input);
        let good = parse(&body("    %p.reload:p1 = LD_FRAME_p1 0\n    ST_GLOBAL_i32 %a, %p.reload\n", "    %q.reload:p1 = LD_FRAME_p1 0\n    ST_GLOBAL_i32 %a, %q.reload\n"));
        assert_eq!(check(&input.functions[0], &good.functions[0], tables), Ok(()));
        // %p's reload after %q took the slot: it reads %q.
        let stale_late = parse(&body("", "    %p.reload:p1 = LD_FRAME_p1 0\n    ST_GLOBAL_i32 %a, %p.reload\n    %q.reload:p1 = LD_FRAME_p1 0\n    ST_GLOBAL_i32 %a, %q.reload\n"));
        let errors = check(&input.functions[0], &stale_late.functions[0], tables).unwrap_err();
        assert!(errors[0].message.contains("reads %p.reload, which holds {%q}, but the input reads %p"), "{}", errors[0]);
    }

    /// A loop counter spilled around its loop, whose `mov 0` the spiller left ahead of
    /// an equal constant it moved to its use (random kernels 2459, 4911 and 5669 of the
    /// long `sim_random` run): the counter's definition is the counter's, not a clone
    /// of the constant, so the slot holds the counter on both edges into the loop.
    #[test]
    fn a_spilled_counter_starting_at_an_equal_constant_is_the_counter() {
        let tables = tables::nvptx();
        let head = "---\nname: k\nkind: kernel\nparams:\n  - { name: n, type: i32 }\n  - { name: out, type: p1 }\nssa: false\n";
        let input = parse(&format!(
            "{head}body: |\n  bb.0:\n    %n:i32 = LDPARAM_i32 0\n    %out:p1 = LDPARAM_GLOBAL_PTR 1\n    %z:i32 = MOV_IMM_i32 0\n    %i:i32 = MOV_IMM_i32 0\n    BRA %bb.1\n  bb.1:\n    %more:i1 = SETP_i32 lt, %i, %n\n    BRA_COND %more, %bb.2, %bb.3\n  bb.2:\n    %i:i32 = ADD_IMM_i32 %i, 1\n    BRA %bb.1\n  bb.3:\n    %r:i32 = ADD_i32 %i, %z\n    ST_GLOBAL_i32 %r, %out\n    RET_VOID\n...\n"
        ));
        let output = |entry: &str| {
            parse(&format!(
                "{head}frame:\n  - {{ size: 4, align: 4, spill: true }}\nbody: |\n  bb.0:\n    %n:i32 = LDPARAM_i32 0\n    %out:p1 = LDPARAM_GLOBAL_PTR 1\n{entry}    BRA %bb.1\n  bb.1:\n    %i.reload:i32 = LD_FRAME_i32 0\n    %more:i1 = SETP_i32 lt, %i.reload, %n\n    BRA_COND %more, %bb.2, %bb.3\n  bb.2:\n    %i.reload.1:i32 = LD_FRAME_i32 0\n    %i:i32 = ADD_IMM_i32 %i.reload.1, 1\n    ST_FRAME_i32 %i, 0\n    BRA %bb.1\n  bb.3:\n    %i.reload.2:i32 = LD_FRAME_i32 0\n    %z.remat:i32 = MOV_IMM_i32 0\n    %r:i32 = ADD_i32 %i.reload.2, %z.remat\n    ST_GLOBAL_i32 %r, %out\n    RET_VOID\n...\n"
            ))
        };
        assert_eq!(check(&input.functions[0], &output("    %i:i32 = MOV_IMM_i32 0\n    ST_FRAME_i32 %i, 0\n").functions[0], tables), Ok(()));
        // Spilling the constant's register instead is still caught, at the loop's test.
        let wrong = output("    %z:i32 = MOV_IMM_i32 0\n    %i:i32 = MOV_IMM_i32 0\n    ST_FRAME_i32 %z, 0\n");
        assert!(check(&input.functions[0], &wrong.functions[0], tables).is_err());
    }
}
