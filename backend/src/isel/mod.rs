//! Instruction selection: generic MIR instructions become machine instructions by
//! matching the description's `pattern` statements (target-desc/nvptx/isel.rules).
//!
//! Sits after legalization and before dead-code removal and PHI elimination. A pattern
//! is a tree of generic instructions (`ADD(MUL(a, b), c)`); most are one node. It
//! matches at a root instruction when the root's opcode, exact flag set, operand kinds
//! and types, and result types agree, the pattern is enabled on the SM, and each nested
//! node matches the instruction defining that operand, bottom-up along the SSA def
//! chain. A nested instruction is absorbed only when the root is its only user, it sits
//! earlier in the root's block, and it has no effects and touches no memory (the
//! description's build refuses such nodes), so moving it to the root reorders nothing;
//! an instruction without register operands that may be rematerialized (a `CONSTANT`)
//! is cheap to repeat and matches wherever it is and whoever else uses it. A
//! commutative node's two operands match in either order. Among matching patterns the
//! largest tree wins, then the higher priority (folded immediates first), then
//! description order. Blocks are walked from their end, so a root claims its operands'
//! instructions before they could be selected on their own; absorbed instructions are
//! removed, and the machine instruction's operands are the tree's leaves. Use counts
//! are computed once per function, so selection stays linear in the function's size.
//! No PTX text is written here: the templates live in the description.

use std::borrow::Cow;

use rustc_hash::FxHashMap as HashMap;

use target_desc::tables::{props, Action, NodeArg, OpcodeId, PatternInfo, PatternOperand, PatternResult, SmTables, TargetTables, TypeClass, VtId};

use crate::diagnostics::MirError;
use crate::mir::verifier::{in_class, Source};
use crate::mir::{row_type, Function, Module, Opcode, Operand, ValueId};

/// The selector's view of the description for one SM: its patterns by root opcode and
/// by key type. A compile builds it once and shares it between the functions
/// (`PassContext::isel_index`, which `-j` shares between threads). Building it only
/// buckets the SM's patterns by root opcode; each opcode's candidate lists are ordered
/// and keyed when an instruction of that opcode is first selected, so a small kernel
/// pays for the few opcodes it has, not for every pattern of the description (which
/// was more than half the time of compiling one).
pub struct Index {
    /// The patterns enabled on this SM per root opcode, in description order.
    by_opcode: Vec<Vec<usize>>,
    candidates: Vec<std::sync::OnceLock<Candidates>>,
}

impl Index {
    pub fn new(tables: &TargetTables, sm: &SmTables) -> Index {
        let sm_index = tables.sm_index(sm);
        let mut by_opcode: Vec<Vec<usize>> = vec![Vec::new(); target_desc::tables::OPCODE_STRIDE];
        for (index, p) in tables.patterns.iter().enumerate() {
            if p.sms >> sm_index & 1 == 1 {
                if let Some(list) = by_opcode.get_mut(p.opcode as usize) {
                    list.push(index);
                }
            }
        }
        let candidates = by_opcode.iter().map(|_| std::sync::OnceLock::new()).collect();
        Index { by_opcode, candidates }
    }

    /// The candidate lists of root opcode `op`, built on first use.
    fn of_opcode(&self, tables: &TargetTables, op: OpcodeId) -> &Candidates {
        self.candidates[op.0 as usize].get_or_init(|| Candidates::new(tables, op, &self.by_opcode[op.0 as usize]))
    }
}

pub fn select_module(module: &mut Module, tables: &TargetTables, sm: &SmTables, source: Source<'_>) -> Result<(), Vec<MirError>> {
    select_module_with(module, tables, sm, source, &Index::new(tables, sm))
}

/// [`select_module`] with an index built beforehand for `sm`.
pub fn select_module_with(module: &mut Module, tables: &TargetTables, sm: &SmTables, source: Source<'_>, index: &Index) -> Result<(), Vec<MirError>> {
    let mut errors = Vec::new();
    for f in &mut module.functions {
        // `.contract` permits the combiner to fuse; no machine instruction depends on it.
        for inst in f.blocks.iter_mut().flat_map(|b| &mut b.insts) {
            inst.flags.retain(|fl| *fl != crate::combine::CONTRACT);
        }
        select_function(f, tables, sm, index, source, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The candidate patterns of an instruction of one root opcode, by its key type: the
/// type of the operand that selects its legality row (or of its first result). Patterns
/// are written once per type, so a store of f32 would otherwise try every store of
/// every type and space; here it tries the f32 stores and the patterns whose key
/// position takes any type (flags, variadic leaves), in the same best-first order.
struct Candidates {
    /// The opcode's patterns, best first: larger trees, then higher priority, then
    /// description order.
    ordered: Vec<usize>,
    /// By (key type, address-space type): the patterns an instruction with those types
    /// can match. The space is the type of a memory access's pointer operand
    /// ([`space_slot`]), [`ANY_SPACE`] for the list of every space (an instruction
    /// whose space no pattern names, or an opcode without one): a store weighs only the
    /// forms of its own address space, not those of all eight.
    keyed: HashMap<(u8, u8), Vec<usize>>,
    /// The patterns without a key type: all an instruction whose key position holds
    /// no register can match.
    unkeyed: Vec<usize>,
    /// The opcode's address operand ([`space_slot`]).
    space_slot: Option<usize>,
}

const ANY_SPACE: u8 = u8::MAX;

impl Candidates {
    /// `patterns`: the opcode's patterns enabled on the SM, in description order.
    fn new(tables: &TargetTables, op: OpcodeId, patterns: &[usize]) -> Candidates {
        let info = tables.opcode_info(op).expect("patterns name opcodes of the table");
        let slot = space_slot(info);
        // Sorted on keys read once (each comparison reading two patterns was most of the
        // cost); the stable sort keeps description order among equals and is linear on
        // the long runs of one-node patterns of equal priority.
        let mut keyed_order: Vec<(std::cmp::Reverse<(usize, i32)>, usize)> = patterns.iter().map(|&i| (std::cmp::Reverse((tables.patterns[i].nodes.len(), tables.patterns[i].priority as i32)), i)).collect();
        keyed_order.sort_by_key(|&(k, _)| k);
        let ordered: Vec<usize> = keyed_order.into_iter().map(|(_, i)| i).collect();
        // The positions in `ordered` of the patterns of each key (`None` at 0, type t
        // at t + 1) and their spaces. Every list below merges a few of these groups back
        // into `ordered` order, so building is linear in the patterns and the lists
        // made, not types x spaces x patterns.
        let mut by_key: Vec<Vec<u32>> = vec![Vec::new(); 257];
        let mut spaces: Vec<Option<u8>> = Vec::with_capacity(ordered.len());
        let (mut has_type, mut has_space) = ([false; 256], [false; 256]);
        for (pos, &i) in ordered.iter().enumerate() {
            let (key, space) = (pattern_key(info, &tables.patterns[i]), slot.and_then(|slot| pattern_space(slot, &tables.patterns[i])));
            by_key[key.map_or(0, |k| k as usize + 1)].push(pos as u32);
            spaces.push(space);
            if let Some(k) = key {
                has_type[k as usize] = true;
            }
            if let Some(s) = space {
                has_space[s as usize] = true;
            }
        }
        let types: Vec<u8> = (0..=255u8).filter(|&t| has_type[t as usize]).collect();
        let named: Vec<u8> = (0..=255u8).filter(|&s| has_space[s as usize]).collect();
        let in_space = |group: &[u32], space: u8| -> Vec<u32> { group.iter().copied().filter(|&pos| spaces[pos as usize].is_none_or(|s| s == space)).collect() };
        // Each group is in increasing position; the groups are disjoint.
        let merge = |groups: &[&[u32]]| -> Vec<usize> {
            let mut heads: Vec<&[u32]> = groups.iter().copied().filter(|g| !g.is_empty()).collect();
            let mut out = Vec::with_capacity(heads.iter().map(|g| g.len()).sum());
            while let Some(k) = (0..heads.len()).min_by_key(|&k| heads[k][0]) {
                out.push(ordered[heads[k][0] as usize]);
                heads[k] = &heads[k][1..];
                if heads[k].is_empty() {
                    heads.swap_remove(k);
                }
            }
            out
        };
        let mut keyed: HashMap<(u8, u8), Vec<usize>> = HashMap::default();
        let unkeyed_in: Vec<Vec<u32>> = named.iter().map(|&space| in_space(&by_key[0], space)).collect();
        for &t in &types {
            let group = &by_key[t as usize + 1];
            for (&space, unkeyed_here) in named.iter().zip(&unkeyed_in) {
                keyed.insert((t, space), merge(&[unkeyed_here, &in_space(group, space)]));
            }
            keyed.insert((t, ANY_SPACE), merge(&[&by_key[0], group]));
        }
        let unkeyed = merge(&[&by_key[0]]);
        Candidates { ordered, keyed, unkeyed, space_slot: slot }
    }

    fn of(&self, f: &Function, inst: &crate::mir::Inst, tables: &TargetTables) -> &[usize] {
        let Some(t) = inst_key(f, inst, tables) else { return &self.unkeyed };
        let space = self.space_slot.and_then(|slot| inst_space(f, inst, slot)).unwrap_or(ANY_SPACE);
        match self.keyed.get(&(t, space)).or_else(|| self.keyed.get(&(t, ANY_SPACE))) {
            Some(list) => list,
            None => &self.unkeyed,
        }
    }
}

/// The operand slot of a memory access's address (LOAD, STORE and their vector forms,
/// atomics), whose pointer type names the address space.
fn space_slot(info: &target_desc::tables::OpcodeInfo) -> Option<usize> {
    crate::mir::address_slots(info.name).map(|s| s.0).or_else(|| crate::mir::pointer_operand_slot(info))
}

/// The address-space type a pattern requires of its root's address operand: the
/// register's type or the nested node's (`PTR_ADD(p: p1, ...)`, `GLOBAL_ADDR : p3`).
fn pattern_space(slot: usize, p: &PatternInfo) -> Option<u8> {
    match *p.nodes.first()?.args.get(slot)? {
        NodeArg::Leaf(l) => match p.operands.get(l as usize)?.1 {
            PatternOperand::Reg(t) => Some(t),
            _ => None,
        },
        NodeArg::Node(m) => p.nodes.get(m as usize)?.ty,
    }
}

/// The type of an instruction's address operand (see [`pattern_space`]).
fn inst_space(f: &Function, inst: &crate::mir::Inst, slot: usize) -> Option<u8> {
    match value_operands(&inst.operands).get(slot)? {
        Operand::Value(v) => Some(f.value(*v).ty.0),
        _ => None,
    }
}

/// The type a pattern requires at its opcode's key position, when it requires one
/// (see [`Candidates`]). Must never name a type an instruction the pattern matches
/// could lack: the matcher checks exactly these types.
fn pattern_key(info: &target_desc::tables::OpcodeInfo, p: &PatternInfo) -> Option<u8> {
    let root = p.nodes.first()?;
    let arg_type = |k: usize| -> Option<u8> {
        match *root.args.get(k)? {
            NodeArg::Leaf(l) => match p.operands.get(l as usize)?.1 {
                PatternOperand::Reg(t) | PatternOperand::Imm(t) | PatternOperand::ImmIs(t, _) | PatternOperand::ImmRange(t, ..) | PatternOperand::LowMask(t) => Some(t),
                _ => None,
            },
            NodeArg::Node(m) => p.nodes.get(m as usize)?.ty,
        }
    };
    match info.type_operand {
        Some(i) => {
            let i = i as usize;
            let t = arg_type(i)?;
            // A commutative root also matches with its first two operands swapped.
            let commutative = info.has(props::COMMUTATIVE) && i < 2 && root.args.len() >= 2;
            if commutative && arg_type(1 - i) != Some(t) {
                return None;
            }
            // A trailing `values` leaf at the key position takes any registers.
            Some(t)
        }
        None if p.any_results => None,
        None => match p.results.first()? {
            PatternResult::Reg(t) => Some(*t),
            PatternResult::Flag => None,
        },
    }
}

/// An instruction's key type (see [`Candidates`]); `None` when its key position holds
/// no register, which only patterns without a key type can match.
fn inst_key(f: &Function, inst: &crate::mir::Inst, tables: &TargetTables) -> Option<u8> {
    let info = tables.opcode_info(inst.opcode.generic()?)?;
    match info.type_operand {
        Some(i) => match value_operands(&inst.operands).get(i as usize)? {
            Operand::Value(v) => Some(f.value(*v).ty.0),
            _ => None,
        },
        None => inst.defs.first().map(|d| f.value(*d).ty.0),
    }
}

/// What the matcher knows about a function: constants, where each value is defined and
/// how often it is used (counted once, before selection changes anything).
struct Matcher<'a> {
    tables: &'a TargetTables,
    f: &'a Function,
    /// The (block, index) of each value's defining instruction.
    site: crate::mir::DefSites,
    uses: Vec<u32>,
    /// Per opcode id: whether the description marks it commutative.
    commutative: Vec<bool>,
    /// The buffers of one attempt, reused: an instruction tries about five
    /// candidates, and allocating them per attempt was a fifth of selection.
    scratch: std::cell::RefCell<Scratch>,
}

#[derive(Default)]
struct Scratch {
    leaves: Vec<Option<Operand>>,
    absorbed: Vec<(usize, usize)>,
    rest: Vec<Operand>,
}

/// A successful match: the machine operands and the instructions the tree absorbed.
/// A pattern's match: how many operands it appended to the caller's list (the
/// machine instruction's, in order), and the instructions it absorbed.
struct Match {
    operands: usize,
    absorbed: Vec<(usize, usize)>,
}

/// The operands selection looks at (the `align` of a memory access is dropped); most
/// instructions have none, and their operands are borrowed as they are.
fn value_operands(operands: &[Operand]) -> Cow<'_, [Operand]> {
    if operands.iter().any(|o| matches!(o, Operand::Align(_))) {
        Cow::Owned(operands.iter().filter(|o| !matches!(o, Operand::Align(_))).cloned().collect())
    } else {
        Cow::Borrowed(operands)
    }
}

impl<'a> Matcher<'a> {
    fn new(f: &'a Function, tables: &'a TargetTables) -> Matcher<'a> {
        let (site, uses) = crate::mir::DefSites::with_uses(f);
        let mut commutative = vec![false; target_desc::tables::OPCODE_STRIDE];
        for o in tables.opcodes {
            if let Some(c) = commutative.get_mut(o.id as usize) {
                *c = o.has(props::COMMUTATIVE);
            }
        }
        Matcher { tables, f, site, uses, commutative, scratch: Default::default() }
    }

    /// The literal of `v` when a `CONSTANT` or `FCONSTANT` defines it (selected or not:
    /// a constant keeps its literal as operand 0).
    fn constant(&self, v: &ValueId) -> Option<&Operand> {
        let (b, i) = self.site.get(*v)?;
        let inst = &self.f.blocks[b].insts[i];
        let name = crate::mir::opcode_info(inst.opcode, self.tables).map(|o| o.name);
        if matches!(name, Some("CONSTANT" | "FCONSTANT")) && inst.defs.first() == Some(v) {
            inst.operands.first()
        } else {
            None
        }
    }

    fn is_bool(&self, v: ValueId) -> bool {
        in_class(self.tables, self.f.value(v).ty, TypeClass::Bool)
    }

    /// Pattern `p` at the root instruction `(b, i)`, whose flags already fit; its
    /// operands are appended to `out` (nothing is when it does not match). One list
    /// for a function's selections, not a vector per instruction: those were the most
    /// allocations after the parser's on a module of small functions.
    fn match_root(&self, p: &PatternInfo, b: usize, i: usize, out: &mut Vec<Operand>) -> Option<Match> {
        let inst = &self.f.blocks[b].insts[i];
        // Results first: patterns come one per type, so this rejects most candidates.
        if !p.any_results {
            let results_match = inst.defs.len() == p.results.len()
                && inst.defs.iter().zip(p.results).all(|(d, r)| match r {
                    PatternResult::Reg(t) => self.f.value(*d).ty.0 == *t,
                    PatternResult::Flag => self.is_bool(*d),
                });
            if !results_match {
                return None;
            }
        }
        let operands = value_operands(&inst.operands);
        if !self.may_match(p, &operands) {
            return None;
        }
        let mut scratch = self.scratch.borrow_mut();
        let Scratch { leaves, absorbed, rest } = &mut *scratch;
        leaves.clear();
        leaves.resize(p.operands.len(), None);
        absorbed.clear();
        rest.clear();
        if !self.match_node(p, 0, &operands, (b, i), leaves, absorbed, rest) {
            return None;
        }
        // `values` is the last leaf: the remaining registers follow the others.
        let start = out.len();
        out.extend(leaves.drain(..).flatten());
        out.append(rest);
        Some(Match { operands: out.len() - start, absorbed: absorbed.clone() })
    }

    /// A necessary condition for tree pattern `p` on a root with `operands`, cheap to
    /// test: each nested node of the root names the opcode defining its operand, and
    /// that instruction could be absorbed (a single use) or repeated (`shared`, or no
    /// register operands), as [`Matcher::nested`] requires. Most tree candidates that
    /// fail, fail here, before the match buffers are touched (on straight-line integer
    /// code every `mad` candidate of an `add` whose product has two readers).
    fn may_match(&self, p: &PatternInfo, operands: &[Operand]) -> bool {
        let root = &p.nodes[0];
        if !root.args.iter().any(|a| matches!(a, NodeArg::Node(_))) {
            return true;
        }
        let fits = |swap: bool| {
            root.args.iter().enumerate().all(|(j, arg)| {
                let NodeArg::Node(m) = *arg else { return true };
                let k = if swap && j < 2 { 1 - j } else { j };
                let Some(Operand::Value(v)) = operands.get(k) else { return false };
                let Some((db, di)) = self.site.get(*v) else { return false };
                let def = &self.f.blocks[db].insts[di];
                let node = &p.nodes[m as usize];
                def.opcode == Opcode::Generic(OpcodeId(node.opcode))
                    && (node.shared || self.uses[v.0 as usize] == 1 || !def.operands.iter().any(|o| matches!(o, Operand::Value(_))))
            })
        };
        fits(false) || (self.commutative.get(root.opcode as usize).copied().unwrap_or(false) && operands.len() >= 2 && root.args.len() >= 2 && fits(true))
    }

    /// Node `n` of `p` on an instruction's `operands`, in their order or, for a
    /// commutative opcode, with the first two swapped.
    #[allow(clippy::too_many_arguments)]
    fn match_node(&self, p: &PatternInfo, n: usize, operands: &[Operand], root: (usize, usize), leaves: &mut Vec<Option<Operand>>, absorbed: &mut Vec<(usize, usize)>, rest: &mut Vec<Operand>) -> bool {
        let node = &p.nodes[n];
        if self.match_args(p, node.args, operands, false, root, leaves, absorbed, rest) {
            return true;
        }
        if self.commutative.get(node.opcode as usize).copied().unwrap_or(false) && operands.len() >= 2 && node.args.len() >= 2 {
            return self.match_args(p, node.args, operands, true, root, leaves, absorbed, rest);
        }
        false
    }

    #[allow(clippy::too_many_arguments)]
    fn match_args(&self, p: &PatternInfo, args: &[NodeArg], operands: &[Operand], swap: bool, root: (usize, usize), leaves: &mut Vec<Option<Operand>>, absorbed: &mut Vec<(usize, usize)>, rest: &mut Vec<Operand>) -> bool {
        // Leaves a failed attempt set need no undoing: a later successful match of the
        // same node sets every leaf of its subtree again.
        let absorbed_before = absorbed.len();
        let ok = self.try_args(p, args, operands, swap, root, leaves, absorbed, rest);
        if !ok {
            absorbed.truncate(absorbed_before);
            rest.clear();
        }
        ok
    }

    #[allow(clippy::too_many_arguments)]
    /// The operands of one node against its arguments; with `swap`, the first two
    /// operands are taken in the other order (a commutative node).
    fn try_args(&self, p: &PatternInfo, args: &[NodeArg], operands: &[Operand], swap: bool, root: (usize, usize), leaves: &mut Vec<Option<Operand>>, absorbed: &mut Vec<(usize, usize)>, rest: &mut Vec<Operand>) -> bool {
        // A trailing `values` leaf takes every remaining register.
        let variadic = matches!(args.last(), Some(NodeArg::Leaf(k)) if p.operands[*k as usize].1 == PatternOperand::Values);
        let fixed = if variadic { args.len() - 1 } else { args.len() };
        if operands.len() < fixed || (!variadic && operands.len() != fixed) {
            return false;
        }
        let at = |j: usize| if swap && j < 2 { &operands[1 - j] } else { &operands[j] };
        if variadic {
            if !(fixed..operands.len()).all(|j| matches!(at(j), Operand::Value(_))) {
                return false;
            }
            rest.clear();
            rest.extend((fixed..operands.len()).map(|j| at(j).clone()));
        }
        for (j, arg) in args[..fixed].iter().enumerate() {
            let actual = at(j);
            match *arg {
                NodeArg::Leaf(k) => match self.leaf(p.operands[k as usize].1, actual) {
                    Some(o) => leaves[k as usize] = Some(o),
                    None => return false,
                },
                NodeArg::Node(m) => {
                    let Operand::Value(v) = actual else { return false };
                    if !self.nested(p, m as usize, *v, root, leaves, absorbed) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Nested node `m` on the instruction defining `v`.
    fn nested(&self, p: &PatternInfo, m: usize, v: ValueId, root: (usize, usize), leaves: &mut Vec<Option<Operand>>, absorbed: &mut Vec<(usize, usize)>) -> bool {
        let node = &p.nodes[m];
        let Some((db, di)) = self.site.get(v) else { return false };
        let inst = &self.f.blocks[db].insts[di];
        if inst.opcode != Opcode::Generic(OpcodeId(node.opcode)) || inst.defs.len() != 1 || Some(self.f.value(v).ty.0) != node.ty {
            return false;
        }
        if inst.flags.len() != node.flags.len() || !inst.flags.iter().all(|fl| node.flags.contains(&*fl)) {
            return false;
        }
        let operands = value_operands(&inst.operands);
        // Cheap to repeat: a `shared` node (the root's instruction does its work for
        // free), or one without register operands that the description lets be
        // rematerialized, but not an ARG: repeated, it is a second read of the parameter
        // (a select of two parameters' addresses whose values are read anyway costs six
        // SASS instructions more than selecting the values). Anything else must be the
        // root's alone and come before it in its block.
        let is_arg = crate::mir::opcode_info(inst.opcode, self.tables).is_some_and(|o| o.name == "ARG");
        let cheap = node.shared || (!is_arg && !operands.iter().any(|o| matches!(o, Operand::Value(_))) && !self.tables.remat_excluded(OpcodeId(node.opcode)));
        let exclusive = db == root.0 && di < root.1 && self.uses[v.0 as usize] == 1 && !absorbed.contains(&(db, di));
        if !cheap && !exclusive {
            return false;
        }
        let mut unused = Vec::new();
        if !self.match_node(p, m, &operands, root, leaves, absorbed, &mut unused) {
            return false;
        }
        if exclusive {
            absorbed.push((db, di));
        }
        true
    }

    /// The machine operand for a leaf of kind `kind`, if `actual` fits it.
    fn leaf(&self, kind: PatternOperand, actual: &Operand) -> Option<Operand> {
        let ty = |v: &ValueId| self.f.value(*v).ty.0;
        Some(match (kind, actual) {
            (PatternOperand::Reg(t), Operand::Value(v)) if ty(v) == t => actual.clone(),
            (PatternOperand::Flag, Operand::Value(v)) if self.is_bool(*v) => actual.clone(),
            (PatternOperand::Imm(t), Operand::Value(v)) if ty(v) == t => self.constant(v)?.clone(),
            (PatternOperand::ImmIs(t, n), Operand::Value(v)) if ty(v) == t && self.constant(v) == Some(&Operand::int(n as i128)) => Operand::int(n as i128),
            // A float constant written as a value (`FCONSTANT 1.0`) against the bits.
            (PatternOperand::ImmIs(t, n), Operand::Value(v)) if ty(v) == t && matches!(self.constant(v), Some(Operand::Float(x)) if float_bits(self.tables, t, *x) == Some(n)) => Operand::int(n as i128),
            (PatternOperand::ImmRange(t, ..) | PatternOperand::LowMask(t), Operand::Value(v)) if ty(v) == t => {
                let Some(Operand::Int(value)) = self.constant(v) else { return None };
                let bits = self.tables.type_info(VtId(t)).map_or(64, |i| i.bits);
                Operand::int(kind.fold_constant(value.get(), bits)?)
            }
            (PatternOperand::LiteralIs(n), Operand::Int(i)) if i.get() == n as i128 => actual.clone(),
            (PatternOperand::SymbolIs(name), Operand::Symbol(s)) if **s == *name => actual.clone(),
            (PatternOperand::Literal, Operand::Int(_) | Operand::Float(_))
            | (PatternOperand::CondCode, Operand::CondCode(_))
            | (PatternOperand::Block, Operand::Block(_))
            | (PatternOperand::Symbol, Operand::Symbol(_)) => actual.clone(),
            _ => return None,
        })
    }
}

/// The bits of `x` in float type `t` (f32 and f64; `None` for other types).
fn float_bits(tables: &TargetTables, t: u8, x: f64) -> Option<i64> {
    match tables.type_info(VtId(t)).map(|i| i.name) {
        Some("f32") => Some(i64::from((x as f32).to_bits())),
        Some("f64") => Some(x.to_bits() as i64),
        _ => None,
    }
}

fn select_function(f: &mut Function, tables: &TargetTables, sm: &SmTables, index: &Index, source: Source<'_>, errors: &mut Vec<MirError>) {
    let sm_index = tables.sm_index(sm);
    // At most one selection per instruction: sized once, not grown through a large
    // function by reallocation.
    let mut selected: Vec<(u32, u32, u16, crate::mir::Flags, usize)> = Vec::with_capacity(f.blocks.iter().map(|b| b.insts.len()).sum());
    // The selected instructions' operands, one after the other in `selected`'s order.
    let mut chosen_operands: Vec<Operand> = Vec::new();
    let mut trial = Vec::new();
    let mut absorbed: Vec<Vec<bool>> = f.blocks.iter().map(|b| vec![false; b.insts.len()]).collect();
    {
        let matcher = Matcher::new(f, tables);
        for b in 0..f.blocks.len() {
            // From the block's end: a root claims its operands' instructions first.
            for i in (0..f.blocks[b].insts.len()).rev() {
                if absorbed[b][i] {
                    continue;
                }
                let inst = &f.blocks[b].insts[i];
                let Opcode::Generic(op) = inst.opcode else { continue };
                let info = tables.opcode_info(op).expect("parsed opcodes exist");
                if info.name == "PHI" {
                    continue; // Lowered by PHI elimination.
                }
                let mut flags: Vec<&'static str> = inst.flags.iter().copied().collect();
                flags.sort();
                let candidates = index.of_opcode(tables, op);
                let is_kernel = f.kind == crate::mir::FunctionKind::Kernel;
                let best = candidates.of(f, inst, tables).iter().find_map(|&index| {
                    let p = &tables.patterns[index];
                    if p.kernel_only && !is_kernel {
                        return None;
                    }
                    let kept = tables.match_flags(p, &flags, sm_index)?;
                    let m = matcher.match_root(p, b, i, &mut chosen_operands)?;
                    Some((index, m, kept.into_iter().collect::<crate::mir::Flags>()))
                });
                match best {
                    Some((index, m, kept)) => {
                        for &(ab, ai) in &m.absorbed {
                            absorbed[ab][ai] = true;
                        }
                        selected.push((b as u32, i as u32, index as u16, kept, m.operands));
                    }
                    None => {
                        // A pattern whose operands fit but one of whose flag groups has no
                        // member for the flag on this SM (`.sys` before sm_60) says why.
                        let flag_gap = candidates.ordered.iter().find_map(|&index| {
                            let p = &tables.patterns[index];
                            if p.flag_groups.is_empty() || tables.match_flags(p, &flags, sm_index).is_some() {
                                return None;
                            }
                            let every_flag_placed = flags.iter().all(|fl| p.flags.contains(fl) || p.flag_groups.iter().any(|&g| tables.flag_groups[g as usize].has_flag(fl)));
                            trial.clear();
                            if !every_flag_placed || matcher.match_root(p, b, i, &mut trial).is_none() {
                                return None;
                            }
                            let (group, flag) = p.flag_groups.iter().map(|&g| &tables.flag_groups[g as usize]).find_map(|g| {
                                let flag = flags.iter().copied().find(|fl| g.has_flag(fl));
                                g.member(flag, sm_index).is_none().then_some((g, flag))
                            })?;
                            let rule = &tables.rules[group.members.first()?.rule as usize];
                            let name = inst.opcode.name(tables);
                            let shown: String = inst.flags.iter().map(|f| format!(".{f}")).collect();
                            let what = flag.map_or("the absence of a flag".to_string(), |fl| format!("`.{fl}`"));
                            Some(format!("cannot compile {name}{shown} on {}: flag group ${} ({}) has no member for {what} there", sm.name, group.name, rule.source))
                        });
                        let message = flag_gap.unwrap_or_else(|| cannot_select(f, inst, tables, sm));
                        let mut e = MirError::at(source.file, source.text, inst.loc.line as usize, inst.loc.column as usize, message);
                        e.context = Some(format!("function @{}, {}, instruction {}", f.name, f.blocks[b].label(), i + 1));
                        errors.push(e);
                    }
                }
            }
        }
    }
    let mut chosen_operands = chosen_operands.into_iter();
    for (b, i, index, kept, count) in selected {
        let inst = &mut f.blocks[b as usize].insts[i as usize];
        inst.opcode = Opcode::Machine(index);
        // Flags a flag group took stay on the machine instruction: emission turns them
        // into the group's text, and the MIR printout keeps them.
        inst.flags = kept;
        // Written into the generic instruction's own vector (a new one only when the
        // pattern's operands do not fit in it).
        inst.operands.clear();
        inst.operands.extend(chosen_operands.by_ref().take(count));
    }
    for (block, gone) in f.blocks.iter_mut().zip(absorbed) {
        let mut gone = gone.into_iter();
        block.insts.retain(|_| !gone.next().unwrap_or(false));
    }
}

fn cannot_select(f: &Function, inst: &crate::mir::Inst, tables: &TargetTables, sm: &SmTables) -> String {
    let name = inst.opcode.name(tables);
    let flags: String = inst.flags.iter().map(|f| format!(".{f}")).collect();
    let types: Vec<&str> = inst
        .defs
        .iter()
        .chain(inst.uses().collect::<Vec<_>>().iter())
        .map(|v| tables.type_info(f.value(*v).ty).map(|t| t.name).unwrap_or("?"))
        .collect();
    let ty_text = if types.is_empty() { String::new() } else { format!(" ({})", types.join(", ")) };
    if let (Some(vt), Some(op)) = (row_type(f, inst, tables), inst.opcode.generic()) {
        let d = tables.decide(sm, op, vt);
        if d.action != Action::Legal {
            let ty = tables.type_info(VtId(vt.0)).map(|t| t.name).unwrap_or("?");
            return format!(
                "cannot compile {name}{flags} on {ty} for {}: the description makes it {} ({}: `{}`), and the legalizer that would rewrite it is not implemented yet",
                sm.name, d.action, d.rule.source, d.rule.text
            );
        }
    }
    format!("no instruction-selection pattern for {name}{flags}{ty_text} on {} in the description", sm.name)
}

#[cfg(test)]
mod tests {
    /// The flag-group matcher on the NVPTX description's atomics: each extra flag goes
    /// to a distinct group whose member applies on the SM; a group left without a flag
    /// needs its `_` member.
    #[test]
    fn flag_groups_take_one_flag_each_on_the_sms_that_have_it() {
        let tables = tables::nvptx();
        let pattern = tables.patterns.iter().find(|p| p.name == "ATOM_ADD_GLOBAL_i32").expect("pattern");
        let index = |name: &str| tables.sm_index(tables.find_sm(name).unwrap());
        let (sm50, sm60, sm70) = (index("50"), index("60"), index("70"));
        assert_eq!(tables.match_flags(pattern, &[], sm50), Some(vec![]));
        assert_eq!(tables.match_flags(pattern, &["acquire", "gpu"], sm70), Some(vec!["acquire", "gpu"]));
        assert_eq!(tables.match_flags(pattern, &["cta", "gpu"], sm70), None, "two scopes");
        assert_eq!(tables.match_flags(pattern, &["volatile"], sm70), None, "not a group's flag");
        assert_eq!(tables.match_flags(pattern, &["sys"], sm50), None, "no .sys member before sm_60");
        assert!(tables.match_flags(pattern, &["sys"], sm60).is_some());

        let resolve = |flags: &[&str], sm| tables.resolve_flag_groups(pattern, flags, sm).unwrap();
        assert_eq!(resolve(&[], sm70), "atom.global.add.{T} {d}, [{p}], {v}");
        assert_eq!(resolve(&["gpu", "seq_cst"], sm70), "fence.sc.gpu\natom.acquire.gpu.global.add.{T} {d}, [{p}], {v}");
        assert_eq!(resolve(&["acq_rel", "cta"], sm60), "membar.cta\natom.cta.global.add.{T} {d}, [{p}], {v}\nmembar.cta");
        assert_eq!(resolve(&["acquire"], sm50), "atom.global.add.{T} {d}, [{p}], {v}\nmembar.gl");
        assert!(tables.resolve_flag_groups(pattern, &["sys"], sm50).unwrap_err().contains("no member for `.sys`"));
    }
}
