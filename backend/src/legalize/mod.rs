//! Legalization: rewrites every value type and operation the SM cannot do into ones it
//! can, driven only by the description's tables. Sits between `verify` and `isel`.
//!
//! Follows cicc-type-legalization.txt: a type legalizer iterating to a fixpoint (each
//! round gives every value of an illegal type its replacement parts, see
//! [`types::TypeAction`]; a split can create new illegal types, so rounds repeat), then
//! operation legalization by the [type][opcode] action table: Legal is kept, Promote
//! ([`operations`]), Expand (generic expansions in [`operations`]), LibCall (a call into
//! the small MIR library of [`library`]), Custom (the hook the description names, all in
//! [`hooks`]), and the condition-code table for compares. The two alternate until
//! nothing changes.
//!
//! A value of an illegal type is replaced in one round by its parts; every use is
//! rewritten in the same round. An instruction whose other operands are not handled
//! by its rewrite gets them back through a *join* (TRUNCATE of the promoted value,
//! BUILD_PAIR of halves, CONCAT_VECTORS of halves...) that the next round folds away.
//!
//! With `verify` (on in tests) the legalizer checks that every replaced value's parts
//! are each defined exactly once, no replaced value is still used, legal values were not
//! transformed, and at the end every type is a register type and every (opcode, type)
//! and (condition code, type) is Legal; a violation is an error naming the node.

pub mod abi;
mod expand_integer;
pub mod hooks;
pub mod library;
mod operations;
mod promote_integer;
mod soften_float;
pub mod types;
mod vectors;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use target_desc::tables::{Action, CondCodeId, OpcodeId, SmTables, TargetTables, VtId};

use crate::diagnostics::MirError;
use crate::mir::verifier::Source;
use crate::mir::{Block, Function, Inst, Loc, Module, Opcode, Operand, ValueId, ValueInfo};
use types::TypeAction;

/// Rounds of type and operation legalization before giving up (each round makes
/// progress on every illegal node, so real programs need a handful).
const MAX_ROUNDS: usize = 64;

/// One decision, for `ptxc compile --remarks legalize`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remark {
    pub function: String,
    pub loc: Loc,
    pub message: String,
}

macro_rules! opcode_set {
    ($($name:ident),* $(,)?) => {
        /// The generic opcodes the legalizer creates, resolved by their MIR names
        /// (mir-spec §3.3 and the description's legalization extras).
        #[allow(non_snake_case)]
        pub struct Ops { $(pub $name: OpcodeId,)* }
        impl Ops {
            pub fn resolve(tables: &TargetTables) -> Result<Ops, String> {
                Ok(Ops { $($name: tables.opcode(stringify!($name)).ok_or_else(|| format!("the description defines no opcode {}", stringify!($name)))?,)* })
            }
        }
    };
}

opcode_set!(
    CONSTANT, FCONSTANT, UNDEF, COPY, ARG, PHI, BR, BRCOND, BR_CC, RET, CALL,
    ADD, SUB, MUL, MULHS, MULHU, SMUL_LOHI, UMUL_LOHI, SDIV, UDIV, SREM, UREM, ABS, CTPOP, BSWAP, CTLZ, CTTZ, BITREVERSE,
    AND, OR, XOR, SHL, SRA, SRL, ROTL, ROTR, SMIN, SMAX, UMIN, UMAX, SIGN_EXTEND_INREG,
    UADDO, USUBO, ADDC, ADDE, SUBC, SUBE, SHL_PARTS, SRA_PARTS, SRL_PARTS, BUILD_PAIR, EXTRACT_ELEMENT,
    FADD, FSUB, FMUL, FDIV, FREM, FMA, FNEG, FABS, FMINNUM, FMAXNUM, FMINIMUM, FMAXIMUM,
    FCEIL, FFLOOR, FTRUNC, FRINT, FNEARBYINT, FROUND, FSQRT, FSIN, FCOS, FEXP2, FLOG2, FEXP, FLOG, FPOW, FSINCOS,
    SETCC, SELECT, SELECT_CC,
    SIGN_EXTEND, ZERO_EXTEND, ANY_EXTEND, TRUNCATE, FP_ROUND, FP_EXTEND, FP_TO_SINT, FP_TO_UINT, SINT_TO_FP, UINT_TO_FP, BITCAST,
    LOAD, STORE, PTR_ADD, ATOMIC_LOAD_ADD, ATOMIC_LOAD_FADD, ATOMIC_CMP_SWAP, ATOMIC_LOAD_SUB, ATOMIC_LOAD_AND, ATOMIC_LOAD_OR,
    ATOMIC_LOAD_XOR, ATOMIC_LOAD_MIN, ATOMIC_LOAD_MAX, ATOMIC_LOAD_UMIN, ATOMIC_LOAD_UMAX, ATOMIC_SWAP, LOADV2, LOADV4, STOREV2, STOREV4,
    BUILD_VECTOR, EXTRACT_VECTOR_ELT, INSERT_VECTOR_ELT, CONCAT_VECTORS, EXTRACT_SUBVECTOR, VECTOR_SHUFFLE,
);

/// A legalization failure at an instruction.
#[derive(Clone, Debug)]
pub(crate) struct LegalizeError {
    pub loc: Loc,
    pub message: String,
}

pub(crate) type LResult<T> = Result<T, LegalizeError>;

/// Legalizes every function of `module` for `sm`. With `remarks_on`, returns a remark
/// per decision (`--remarks legalize`); without, none are made.
pub fn legalize_module(module: &mut Module, tables: &TargetTables, sm: &SmTables, source: Source<'_>, verify: bool, remarks_on: bool) -> Result<Vec<Remark>, Vec<MirError>> {
    let ops = Ops::resolve(tables).map_err(|m| vec![MirError::at(source.file, source.text, 1, 1, m)])?;
    let mut remarks = Vec::new();
    let mut errors = Vec::new();
    if let Err(failures) = abi::legalize_boundaries(module, tables, sm, &ops) {
        for (index, e) in failures {
            let mut error = MirError::at(source.file, source.text, e.loc.line as usize, e.loc.column as usize, e.message);
            error.context = Some(format!("function @{} (legalizing for {})", module.functions[index].name, sm.name));
            errors.push(error);
        }
        return Err(errors);
    }
    let mut used_library = std::collections::BTreeSet::new();
    for f in &mut module.functions {
        let mut cx = Cx::new(tables, sm, &ops, f, remarks_on);
        let result = cx.run(f, verify);
        remarks.append(&mut cx.remarks);
        used_library.extend(cx.library_calls.iter().cloned());
        if let Err(e) = result {
            let mut error = MirError::at(source.file, source.text, e.loc.line as usize, e.loc.column as usize, e.message);
            error.context = Some(format!("function @{} (legalizing for {})", f.name, sm.name));
            errors.push(error);
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if !used_library.is_empty() {
        library::link(module, tables, sm, &used_library, verify).map_err(|m| vec![MirError::at(source.file, source.text, 1, 1, m)])?;
    }
    Ok(remarks)
}

/// The legalizer's state for one function: the tables, the value list being grown,
/// the instructions being emitted, and the current type round's replacement parts.
pub(crate) struct Cx<'a> {
    pub tables: &'a TargetTables,
    pub sm: &'a SmTables,
    pub ops: &'a Ops,
    pub function: String,
    pub values: Vec<ValueInfo>,
    /// The names taken ([`crate::mir::NameSet`]): legalization makes most of a
    /// function's values (about a million on a 100k-line kernel of i128/v8f16/bf16
    /// arithmetic), most of them temporaries `%t.N` and `%c.N`.
    /// Made at the first new value: most functions of a module of small ones are legal
    /// as they are and make none.
    names: Option<crate::mir::NameSet>,
    /// Instructions emitted for the instruction being rewritten (and those before it).
    pub out: Vec<Inst>,
    /// Where the instruction being rewritten came from; new instructions inherit it.
    pub loc: Loc,
    /// Per value at the start of the type round: its action (Legal beyond the end).
    actions: Vec<TypeAction>,
    /// Per value at the start of the type round: its replacement parts, the values
    /// `first..first + count` (a value's parts are made one after the other); empty
    /// for a legal value. Two words per value instead of a vector each: a type round
    /// holds one entry for every value of the function, legal or not.
    parts: Vec<(u32, u32)>,
    /// Parts that turned out to be an existing value (`part -> value`), substituted
    /// at the end of the round.
    aliases: HashMap<ValueId, ValueId>,
    /// CONSTANT values by register, for lane indices and shift amounts.
    constants: HashMap<ValueId, i128>,
    /// BUILD_PAIR halves by register, so halves are not extracted again.
    pub pairs: HashMap<ValueId, (ValueId, ValueId)>,
    /// Halves extracted in the block being rewritten.
    pub extracted: HashMap<ValueId, (ValueId, ValueId)>,
    /// The block being written in an operation round (number, name, location), the
    /// blocks a lowering has finished before it, and the next free block number.
    current: (u32, Option<String>, Loc),
    split_blocks: Vec<Block>,
    next_block: u32,
    pub remarks: Vec<Remark>,
    /// Whether remarks are kept (`--remarks`): their text is made only then.
    pub remarks_on: bool,
    /// Library functions called by LibCall lowerings.
    pub library_calls: HashSet<String>,
}

impl<'a> Cx<'a> {
    fn new(tables: &'a TargetTables, sm: &'a SmTables, ops: &'a Ops, f: &Function, remarks_on: bool) -> Cx<'a> {
        Cx {
            tables,
            sm,
            ops,
            function: f.name.clone(),
            values: Vec::new(),
            names: None,
            out: Vec::new(),
            loc: f.loc,
            actions: Vec::new(),
            parts: Vec::new(),
            aliases: HashMap::default(),
            constants: HashMap::default(),
            pairs: HashMap::default(),
            extracted: HashMap::default(),
            current: (0, None, Loc::default()),
            split_blocks: Vec::new(),
            next_block: 0,
            remarks: Vec::new(),
            remarks_on,
            library_calls: HashSet::default(),
        }
    }

    fn run(&mut self, f: &mut Function, verify: bool) -> LResult<()> {
        self.values = std::mem::take(&mut f.values);
        let mut result = self.run_rounds(&mut f.blocks, verify);
        if result.is_ok() && verify {
            result = self.check_all_legal(&f.blocks);
        }
        f.values = std::mem::take(&mut self.values);
        result
    }

    fn run_rounds(&mut self, blocks: &mut Vec<Block>, verify: bool) -> LResult<()> {
        let size = |blocks: &[Block]| blocks.iter().map(|b| b.insts.len()).sum::<usize>();
        // Legalization multiplies a function's size by a bounded factor (an i128
        // divide-free expansion, a v8f16 split); runaway growth is a legalizer bug.
        let limit = size(blocks).max(64) * 400;
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            let mut type_rounds = 0;
            while self.type_round(blocks, verify)? {
                if size(blocks) > limit {
                    return Err(self.stuck(blocks, "type legalization does not converge (the function keeps growing)"));
                }
                changed = true;
                type_rounds += 1;
                if type_rounds > MAX_ROUNDS {
                    return Err(self.stuck(blocks, "type legalization does not converge"));
                }
            }
            if self.operation_round(blocks)? {
                changed = true;
            }
            if !changed {
                return Ok(());
            }
        }
        Err(self.stuck(blocks, "operation legalization does not converge"))
    }

    fn stuck(&self, blocks: &[Block], what: &str) -> LegalizeError {
        // Name the first node that is still not legal.
        for b in blocks {
            for inst in &b.insts {
                if let Some(problem) = self.illegal_node(inst) {
                    return LegalizeError { loc: inst.loc, message: format!("{what}: {problem}") };
                }
            }
        }
        LegalizeError { loc: self.loc, message: what.to_string() }
    }

    // ---- values and instructions ----

    pub fn ty(&self, v: ValueId) -> VtId {
        self.values[v.0 as usize].ty
    }

    pub fn type_name(&self, ty: VtId) -> &'static str {
        self.tables.type_info(ty).map(|t| t.name).unwrap_or("?")
    }

    pub fn opcode_name(&self, op: OpcodeId) -> &'static str {
        self.tables.opcode_info(op).map(|o| o.name).unwrap_or("?")
    }

    /// The names taken: the function's (its values are this context's by the time a
    /// name is asked for) and those made since.
    fn names(&mut self) -> &mut crate::mir::NameSet {
        let values = &self.values;
        self.names.get_or_insert_with(|| crate::mir::NameSet::of_values(values))
    }

    /// A fresh value named after `hint` (`%x.lo`, `%x.lo.1` if taken).
    ///
    /// Most names are free at the first try (a part's name extends its value's unique
    /// name), and those take one probe of the set of names; only a hint already taken
    /// reads and advances its next suffix.
    pub fn new_value(&mut self, hint: &str, ty: VtId) -> ValueId {
        let name = self.names().fresh(hint);
        self.values.push(ValueInfo { name, ty });
        ValueId(self.values.len() as u32 - 1)
    }

    /// A fresh value named after an existing one.
    pub fn derived(&mut self, from: ValueId, suffix: &str, ty: VtId) -> ValueId {
        let name = compact_str::format_compact!("{}.{suffix}", self.values[from.0 as usize].name);
        self.new_value(&name, ty)
    }

    pub fn emit(&mut self, op: OpcodeId, flags: crate::mir::Flags, operands: Vec<Operand>, defs: impl Into<crate::mir::Defs>) {
        self.out.push(Inst { defs: defs.into(), opcode: Opcode::Generic(op), flags, operands, loc: self.loc });
    }

    /// `%d:ty = OP operands...` with value operands and no flags.
    pub fn op(&mut self, op: OpcodeId, ty: VtId, args: &[ValueId]) -> ValueId {
        let d = self.new_value("t", ty);
        self.emit(op, Default::default(), args.iter().map(|a| Operand::Value(*a)).collect(), smallvec::smallvec![d]);
        d
    }

    pub fn op_into_many(&mut self, op: OpcodeId, defs: &[ValueId], args: &[ValueId]) {
        self.emit(op, Default::default(), args.iter().map(|a| Operand::Value(*a)).collect(), defs.to_vec());
    }

    pub fn op_into(&mut self, op: OpcodeId, def: ValueId, args: &[ValueId]) {
        self.emit(op, Default::default(), args.iter().map(|a| Operand::Value(*a)).collect(), smallvec::smallvec![def]);
    }

    pub fn constant(&mut self, ty: VtId, value: i128) -> ValueId {
        let d = self.new_value("c", ty);
        let ops = self.ops;
        self.emit(ops.CONSTANT, Default::default(), vec![Operand::int(value)], smallvec::smallvec![d]);
        self.constants.insert(d, value);
        d
    }

    /// An `FCONSTANT` from a float literal (of a scalar float type).
    pub fn fconstant(&mut self, ty: VtId, value: f64) -> ValueId {
        let d = self.new_value("c", ty);
        let ops = self.ops;
        self.emit(ops.FCONSTANT, Default::default(), vec![Operand::Float(value)], smallvec::smallvec![d]);
        d
    }

    /// The value of `v` if a CONSTANT defines it.
    pub fn constant_value(&self, v: ValueId) -> Option<i128> {
        self.constants.get(&v).copied()
    }

    fn collect_constants(&mut self, blocks: &[Block]) {
        self.constants.clear();
        self.pairs.clear();
        for b in blocks {
            for inst in &b.insts {
                if inst.opcode == Opcode::Generic(self.ops.BUILD_PAIR) {
                    if let (Some(d), [Operand::Value(lo), Operand::Value(hi)]) = (inst.defs.first(), inst.operands.as_slice()) {
                        self.pairs.insert(*d, (*lo, *hi));
                    }
                }
                if inst.opcode == Opcode::Generic(self.ops.CONSTANT) {
                    if let (Some(d), Some(Operand::Int(v))) = (inst.defs.first(), inst.operands.first()) {
                        self.constants.insert(*d, v.get());
                    }
                }
            }
        }
    }

    /// An `FCONSTANT` from raw bits.
    pub fn fconstant_bits(&mut self, ty: VtId, bits: u64) -> ValueId {
        let d = self.new_value("c", ty);
        let ops = self.ops;
        self.emit(ops.FCONSTANT, Default::default(), vec![Operand::int(bits as i128)], smallvec::smallvec![d]);
        d
    }

    pub fn cond_code(&self, name: &str) -> CondCodeId {
        self.tables.cond_code(name).unwrap_or(CondCodeId(0))
    }

    pub fn setcc(&mut self, cc: &str, a: ValueId, b: ValueId) -> ValueId {
        let cc = self.cond_code(cc);
        self.setcc_id(cc, a, b)
    }

    pub fn setcc_id(&mut self, cc: CondCodeId, a: ValueId, b: ValueId) -> ValueId {
        let i1 = self.i1();
        let d = self.new_value("cmp", i1);
        let ops = self.ops;
        self.emit(ops.SETCC, Default::default(), vec![Operand::CondCode(cc), Operand::Value(a), Operand::Value(b)], smallvec::smallvec![d]);
        d
    }

    pub fn select(&mut self, c: ValueId, t: ValueId, f: ValueId) -> ValueId {
        let ty = self.ty(t);
        let ops = self.ops;
        self.op(ops.SELECT, ty, &[c, t, f])
    }

    pub fn i1(&self) -> VtId {
        types::int_type(self.tables, 1).unwrap_or(VtId(1))
    }

    pub fn int(&self, bits: u16) -> LResult<VtId> {
        types::int_type(self.tables, bits).ok_or_else(|| self.error(format!("the description defines no i{bits}")))
    }

    pub fn named_type(&self, name: &str) -> LResult<VtId> {
        types::named(self.tables, name).ok_or_else(|| self.error(format!("the description defines no type {name}")))
    }

    pub fn error(&self, message: impl Into<String>) -> LegalizeError {
        LegalizeError { loc: self.loc, message: message.into() }
    }

    /// Keeps `message()` as a remark when remarks are on; otherwise makes no text.
    pub fn remark(&mut self, message: impl FnOnce(&Self) -> String) {
        if self.remarks_on {
            let message = message(self);
            self.remarks.push(Remark { function: self.function.clone(), loc: self.loc, message });
        }
    }

    /// The row type of an instruction in the action table.
    pub fn row_type(&self, inst: &Inst) -> Option<VtId> {
        let op = inst.opcode.generic()?;
        let info = self.tables.opcode_info(op)?;
        match info.type_operand {
            Some(i) => match inst.operands.get(i as usize)? {
                Operand::Value(v) => Some(self.ty(*v)),
                _ => None,
            },
            None => {
                let first = info.signature.results.first()?;
                if first.variadic {
                    return None;
                }
                inst.defs.first().map(|d| self.ty(*d))
            }
        }
    }

    // ---- the type round ----

    /// The action for `v` in this type round (values created during the round are
    /// left for the next one).
    pub fn action(&self, v: ValueId) -> TypeAction {
        self.actions.get(v.0 as usize).copied().unwrap_or(TypeAction::Legal)
    }

    pub fn is_replaced(&self, v: ValueId) -> bool {
        self.action(v) != TypeAction::Legal
    }

    /// The parts replacing `v` this round.
    pub fn parts(&self, v: ValueId) -> Vec<ValueId> {
        let (first, count) = self.parts.get(v.0 as usize).copied().unwrap_or((0, 0));
        (first..first + count).map(ValueId).collect()
    }

    /// Makes part `part` the existing value `value` instead of defining it.
    pub fn alias(&mut self, part: ValueId, value: ValueId) {
        self.aliases.insert(part, value);
    }

    /// Defines every part of `def` as the corresponding value of `from`.
    pub fn alias_all(&mut self, def: ValueId, from: &[ValueId]) {
        for (p, v) in self.parts(def).into_iter().zip(from.iter().copied()) {
            self.alias(p, v);
        }
    }

    /// A value of the original type of `v`, rebuilt from its parts when `v` is
    /// being replaced (the join the next round folds away).
    pub fn original(&mut self, v: ValueId) -> ValueId {
        let action = self.action(v);
        if action == TypeAction::Legal {
            return v;
        }
        let ty = self.ty(v);
        let parts = self.parts(v);
        let ops = self.ops;
        let op = match action {
            TypeAction::Legal => unreachable!(),
            TypeAction::Promote(_) => ops.TRUNCATE,
            TypeAction::Expand(_) => ops.BUILD_PAIR,
            TypeAction::Soften(_) => ops.BITCAST,
            TypeAction::Split(_) => ops.CONCAT_VECTORS,
            TypeAction::Scalarize(_) => ops.BUILD_VECTOR,
            TypeAction::Widen(_) => {
                let zero = self.constant(self.int(32).unwrap_or(VtId(5)), 0);
                let d = self.derived(v, "orig", ty);
                self.emit(ops.EXTRACT_SUBVECTOR, Default::default(), vec![Operand::Value(parts[0]), Operand::Value(zero)], smallvec::smallvec![d]);
                return d;
            }
        };
        let d = self.derived(v, "orig", ty);
        self.emit(op, Default::default(), parts.iter().map(|p| Operand::Value(*p)).collect(), smallvec::smallvec![d]);
        d
    }

    /// Defines the parts of `def` (being replaced) from `value`, a new value of the
    /// same illegal type: the split the next round folds away.
    pub fn define_parts_from(&mut self, def: ValueId, value: ValueId) -> LResult<()> {
        let parts = self.parts(def);
        let ops = self.ops;
        match self.action(def) {
            TypeAction::Legal => {}
            TypeAction::Promote(_) => self.op_into(ops.ANY_EXTEND, parts[0], &[value]),
            TypeAction::Soften(_) => self.op_into(ops.BITCAST, parts[0], &[value]),
            TypeAction::Expand(_) => {
                for (i, p) in parts.iter().enumerate() {
                    self.emit(ops.EXTRACT_ELEMENT, Default::default(), vec![Operand::Value(value), Operand::int(i as i128)], smallvec::smallvec![*p]);
                }
            }
            TypeAction::Split(half) => {
                let i32t = self.int(32)?;
                let half_lanes = types::lanes(self.tables, half) as i128;
                for (i, p) in parts.iter().enumerate() {
                    let idx = self.constant(i32t, i as i128 * half_lanes);
                    self.op_into(ops.EXTRACT_SUBVECTOR, *p, &[value, idx]);
                }
            }
            TypeAction::Scalarize(_) => {
                let i32t = self.int(32)?;
                for (i, p) in parts.iter().enumerate() {
                    let idx = self.constant(i32t, i as i128);
                    self.op_into(ops.EXTRACT_VECTOR_ELT, *p, &[value, idx]);
                }
            }
            TypeAction::Widen(wide) => {
                let i32t = self.int(32)?;
                let lanes = types::lanes(self.tables, self.ty(def));
                let elem = types::element(self.tables, wide);
                let mut elems = Vec::new();
                for i in 0..types::lanes(self.tables, wide) {
                    if i < lanes {
                        let idx = self.constant(i32t, i as i128);
                        elems.push(self.op(ops.EXTRACT_VECTOR_ELT, elem, &[value, idx]));
                    } else {
                        elems.push(self.op(ops.UNDEF, elem, &[]));
                    }
                }
                self.op_into(ops.BUILD_VECTOR, parts[0], &elems);
            }
        }
        Ok(())
    }

    /// One type round: returns false when every value already has a legal type.
    fn type_round(&mut self, blocks: &mut Vec<Block>, verify: bool) -> LResult<bool> {
        let n = self.values.len();
        // Values replaced in earlier rounds stay in the value list; only the ones the
        // blocks still mention are legalized.
        let mut present = vec![false; n];
        for b in blocks.iter() {
            for inst in &b.insts {
                for v in inst.defs.iter().copied().chain(inst.uses()) {
                    present[v.0 as usize] = true;
                }
            }
        }
        let mut actions = Vec::with_capacity(n);
        let mut any = false;
        for v in 0..n {
            if !present[v] {
                actions.push(TypeAction::Legal);
                continue;
            }
            let ty = self.values[v].ty;
            let action = types::type_action(self.tables, self.sm, ty).map_err(|m| self.error(format!("%{}: {m}", self.values[v].name)))?;
            any |= action != TypeAction::Legal;
            actions.push(action);
        }
        if !any {
            return Ok(false);
        }
        let mut parts = Vec::with_capacity(n);
        // The parts' names go into the name sets at once: reserved, not grown by
        // doubling (and rehashing) through a large function.
        let illegal = actions.iter().filter(|a| **a != TypeAction::Legal).count();
        self.names().reserve(2 * illegal);
        for (v, action) in actions.iter().enumerate() {
            if *action == TypeAction::Legal {
                parts.push((0, 0));
                continue;
            }
            let ty = self.values[v].ty;
            let part_types = action.part_types(self.tables, ty);
            let suffixes: Vec<String> = match action {
                TypeAction::Expand(_) | TypeAction::Split(_) => vec!["lo".into(), "hi".into()],
                TypeAction::Scalarize(_) => (0..part_types.len()).map(|i| format!("e{i}")).collect(),
                TypeAction::Promote(_) => vec!["p".into()],
                TypeAction::Soften(_) => vec!["s".into()],
                TypeAction::Widen(_) => vec!["w".into()],
                TypeAction::Legal => unreachable!(),
            };
            let first = self.values.len() as u32;
            for (t, s) in part_types.iter().zip(&suffixes) {
                self.derived(ValueId(v as u32), s, *t);
            }
            parts.push((first, self.values.len() as u32 - first));
        }
        self.actions = actions;
        self.parts = parts;
        self.aliases.clear();
        self.collect_constants(blocks);
        self.rewrite_blocks(blocks, |cx, inst| {
            cx.legalize_types(inst)?;
            Ok(true)
        })?;
        self.resolve_aliases(blocks);
        if verify {
            self.check_round(blocks)?;
        }
        self.actions.clear();
        self.parts.clear();
        Ok(true)
    }

    fn resolve_aliases(&mut self, blocks: &mut [Block]) {
        if self.aliases.is_empty() {
            return;
        }
        let resolve = |aliases: &HashMap<ValueId, ValueId>, mut v: ValueId| {
            let mut steps = 0;
            while let Some(&next) = aliases.get(&v) {
                v = next;
                steps += 1;
                if steps > aliases.len() {
                    break;
                }
            }
            v
        };
        for block in blocks.iter_mut() {
            for inst in &mut block.insts {
                for op in &mut inst.operands {
                    if let Operand::Value(v) = op {
                        *v = resolve(&self.aliases, *v);
                    }
                }
            }
        }
    }

    /// Verification of one type round: every part defined exactly once (or aliased),
    /// no replaced value defined or used any more.
    fn check_round(&self, blocks: &[Block]) -> LResult<()> {
        let mut defined: HashMap<ValueId, u32> = HashMap::default();
        for b in blocks {
            for inst in &b.insts {
                for d in &inst.defs {
                    *defined.entry(*d).or_default() += 1;
                }
                for u in inst.uses() {
                    if self.is_replaced(u) {
                        return Err(LegalizeError { loc: inst.loc, message: format!("legalizer bug: %{} ({}) was replaced but is still used", self.values[u.0 as usize].name, self.action(u).name()) });
                    }
                }
            }
        }
        for v in 0..self.parts.len() {
            let parts = self.parts(ValueId(v as u32));
            if parts.is_empty() {
                continue;
            }
            let name = &self.values[v].name;
            if defined.contains_key(&ValueId(v as u32)) {
                return Err(self.error(format!("legalizer bug: %{name} was replaced but is still defined")));
            }
            for p in &parts {
                let count = defined.get(p).copied().unwrap_or(0) + u32::from(self.aliases.contains_key(p));
                if count != 1 {
                    return Err(self.error(format!("legalizer bug: part %{} of %{name} is defined {count} times", self.values[p.0 as usize].name)));
                }
            }
        }
        Ok(())
    }

    /// Rewrites one instruction whose results or operands have illegal types; copies it
    /// unchanged otherwise.
    fn legalize_types(&mut self, owned: Inst) -> LResult<()> {
        let inst = &owned;
        let mut result = inst.defs.iter().copied().find(|d| self.is_replaced(*d));
        let operand = inst.uses().find(|u| self.is_replaced(*u));
        // Taking lanes out of a vector that is being split: the split decides (its
        // lanes are the answer), whatever happens to the result type.
        let extracts = [self.ops.EXTRACT_VECTOR_ELT, self.ops.EXTRACT_SUBVECTOR];
        if inst.opcode.generic().is_some_and(|op| extracts.contains(&op)) && inst.uses().next().is_some_and(|v| self.is_replaced(v)) {
            result = None;
        }
        let Some(value) = result.or(operand) else {
            self.out.push(owned);
            return Ok(());
        };
        let action = self.action(value);
        self.remark(|cx| {
            let op_name = inst.opcode.name(cx.tables);
            let ty = cx.ty(value);
            let why = match action {
                TypeAction::Promote(t) | TypeAction::Expand(t) | TypeAction::Soften(t) | TypeAction::Split(t) | TypeAction::Scalarize(t) | TypeAction::Widen(t) => cx.type_name(t),
                TypeAction::Legal => "",
            };
            let gate = cx.tables.sms.iter().find_map(|other| cx.tables.register_type(other, ty).map(|(_, rule)| rule.source));
            let type_why = match gate {
                Some(source) => format!("{} is not a register type on {}; {source} gates it", cx.type_name(ty), cx.sm.name),
                None => format!("no register class of the description holds {}", cx.type_name(ty)),
            };
            let cell = match (inst.opcode.generic(), cx.row_type(inst)) {
                (Some(op), Some(row)) => {
                    let d = cx.tables.decide(cx.sm, op, row);
                    format!("; {op_name} {} is {} at {}: {}", cx.type_name(row), d.action, d.rule.source, d.rule.text)
                }
                _ => String::new(),
            };
            format!("{op_name} {} on {}: {} {} to {why} ({type_why}{cell})", cx.type_name(ty), cx.sm.name, if result.is_some() { "result" } else { "operand" }, action.name())
        });
        if let Some(op) = inst.opcode.generic() {
            // A Custom entry gets the first say, as in LLVM's custom type legalization.
            if let Some(row) = self.row_type(inst) {
                if self.sm.action(op, row) == Action::Custom {
                    if let Some(target_desc::tables::ActionDetail::CustomHook(hook)) = self.sm.action_detail(op, row) {
                        if hooks::run_type_hook(self, hook, inst)? {
                            return Ok(());
                        }
                    }
                }
            }
        }
        let handled = match action {
            TypeAction::Legal => false,
            TypeAction::Promote(_) => promote_integer::legalize(self, inst, value, result.is_some())?,
            TypeAction::Expand(_) => expand_integer::legalize(self, inst, value, result.is_some())?,
            TypeAction::Soften(_) => soften_float::legalize(self, inst, value, result.is_some())?,
            TypeAction::Split(_) | TypeAction::Scalarize(_) => vectors::split(self, inst, value, result.is_some())?,
            TypeAction::Widen(_) => vectors::widen(self, inst, value, result.is_some())?,
        };
        if handled {
            return Ok(());
        }
        // No rewrite for this opcode on this type: expand the operation in the
        // original types (through joins) and legalize the pieces in later rounds.
        let mut copy = inst.clone();
        for op in &mut copy.operands {
            if let Operand::Value(v) = op {
                *v = self.original(*v);
            }
        }
        let mut pending = Vec::new();
        for d in &mut copy.defs {
            if self.is_replaced(*d) {
                let fresh = self.derived(*d, "x", self.ty(*d));
                pending.push((*d, fresh));
                *d = fresh;
            }
        }
        if !operations::expand(self, &copy)? {
            return Err(self.error(format!(
                "cannot legalize {} with {} {} on {}: no {} rule for this opcode",
                inst.opcode.name(self.tables),
                if result.is_some() { "result" } else { "operand" },
                self.type_name(self.ty(value)),
                self.sm.name,
                action.name()
            )));
        }
        for (d, fresh) in pending {
            self.define_parts_from(d, fresh)?;
        }
        Ok(())
    }

    // ---- the operation round ----

    fn operation_round(&mut self, blocks: &mut Vec<Block>) -> LResult<bool> {
        self.aliases.clear();
        self.collect_constants(blocks);
        let changed = self.rewrite_blocks(blocks, |cx, inst| {
            if operations::legalize(cx, &inst)? {
                Ok(true)
            } else {
                cx.out.push(inst);
                Ok(false)
            }
        })?;
        self.resolve_aliases(blocks);
        Ok(changed)
    }

    /// Rewrites every instruction with `rewrite` (which emits into `self.out` and says
    /// whether it changed anything). A rewrite may split the block it is in
    /// ([`Cx::switch_to_block`]), for lowerings that need control flow. The rewrite owns
    /// the instruction, so one it leaves alone moves to the output, not a copy of it.
    ///
    /// A block is rewritten in place: what the rewrite of an instruction emits goes
    /// where the instructions already read were, and when it emits more than there is
    /// room for, the unread rest moves back to open a gap of half the block (so the
    /// moves cost amortized constant time per instruction, as a vector's doubling).
    /// Holding a round's input and output vectors at once was the peak of a compile
    /// that legalizes most of its instructions (issue 15: 80 of 130 MB at 30k
    /// instructions). A block that a lowering splits goes on out of place from the
    /// split: the instructions already written become the first part, and the unread
    /// rest is moved out once.
    fn rewrite_blocks(&mut self, blocks: &mut Vec<Block>, rewrite: impl Fn(&mut Self, Inst) -> LResult<bool>) -> LResult<bool> {
        let mut changed = false;
        self.next_block = blocks.iter().map(|b| b.number + 1).max().unwrap_or(0);
        let original: HashSet<u32> = blocks.iter().map(|b| b.number).collect();
        let mut renamed: HashMap<u32, u32> = HashMap::default();
        let mut result = Vec::with_capacity(blocks.len());
        for mut block in std::mem::take(blocks) {
            let mut insts = std::mem::take(&mut block.insts);
            self.out.clear();
            self.current = (block.number, block.name.clone(), block.loc);
            self.extracted.clear();
            // Written: insts[..written]; not read yet: insts[next..]; between: holes.
            let (mut written, mut next) = (0, 0);
            let mut rest = None;
            while next < insts.len() {
                let inst = std::mem::replace(&mut insts[next], Inst::hole());
                next += 1;
                self.loc = inst.loc;
                let splits = self.split_blocks.len();
                changed |= rewrite(self, inst)?;
                if self.split_blocks.len() != splits {
                    let unread = insts.split_off(next);
                    insts.truncate(written);
                    let first = &mut self.split_blocks[splits].insts;
                    insts.append(first);
                    *first = std::mem::take(&mut insts);
                    rest = Some(unread);
                    break;
                }
                let emitted = self.out.len();
                if written + emitted > next {
                    let gap = (written + emitted - next).max(insts.len() / 2).max(16);
                    let unread_end = insts.len();
                    insts.reserve_exact(gap);
                    insts.resize_with(unread_end + gap, Inst::hole);
                    // Each unread instruction moves `gap` slots on, from the last, into
                    // the hole the one after it left: one streaming pass (a rotation by
                    // `gap` follows cycles of stride `gap`, a cache miss per step on a
                    // block of millions of instructions).
                    for i in (next..unread_end).rev() {
                        insts.swap(i, i + gap);
                    }
                    next += gap;
                }
                for (slot, inst) in insts[written..written + emitted].iter_mut().zip(self.out.drain(..)) {
                    *slot = inst;
                }
                written += emitted;
            }
            match rest {
                None => {
                    insts.truncate(written);
                    self.out = insts;
                }
                Some(unread) => {
                    for inst in unread {
                        self.loc = inst.loc;
                        changed |= rewrite(self, inst)?;
                    }
                }
            }
            result.append(&mut self.split_blocks);
            let (number, name, loc) = self.current.clone();
            if number != block.number {
                renamed.insert(block.number, number);
            }
            result.push(Block { number, name, insts: std::mem::take(&mut self.out), loc });
        }
        // A split block's terminator now ends its last part: PHIs of the original
        // successors name that part as their predecessor.
        if !renamed.is_empty() {
            let phi = Opcode::Generic(self.ops.PHI);
            for b in result.iter_mut().filter(|b| original.contains(&b.number)) {
                for inst in b.insts.iter_mut().filter(|i| i.opcode == phi) {
                    for o in &mut inst.operands {
                        if let Operand::Block(n) = o {
                            if let Some(r) = renamed.get(n) {
                                *n = *r;
                            }
                        }
                    }
                }
            }
        }
        *blocks = result;
        Ok(changed)
    }

    /// The number of the block being written.
    pub fn current_block(&self) -> u32 {
        self.current.0
    }

    /// A fresh block number for control flow a lowering creates.
    pub fn reserve_block(&mut self) -> u32 {
        self.next_block += 1;
        self.next_block - 1
    }

    /// Ends the block being written (the caller has emitted its terminator) and
    /// continues in block `number`.
    pub fn switch_to_block(&mut self, number: u32, name: &str) {
        let (old_number, old_name, loc) = std::mem::replace(&mut self.current, (number, Some(name.to_string()), self.loc));
        self.split_blocks.push(Block { number: old_number, name: old_name, insts: std::mem::take(&mut self.out), loc });
    }

    /// Why `inst` is not legal yet, if it is not.
    fn illegal_node(&self, inst: &Inst) -> Option<String> {
        for v in inst.defs.iter().copied().chain(inst.uses()) {
            let ty = self.ty(v);
            if !self.sm.type_supported(ty) {
                return Some(format!("{} uses %{} of type {}, which is not a register type on {}", inst.opcode.name(self.tables), self.values[v.0 as usize].name, self.type_name(ty), self.sm.name));
            }
        }
        let op = inst.opcode.generic()?;
        let row = self.row_type(inst)?;
        let decision = self.tables.decide(self.sm, op, row);
        if decision.action != Action::Legal {
            return Some(format!(
                "{} {} is {} on {} ({}: {})",
                self.opcode_name(op),
                self.type_name(row),
                decision.action,
                self.sm.name,
                decision.rule.source,
                decision.rule.text
            ));
        }
        if let Some(Operand::CondCode(cc)) = inst.operands.first() {
            let d = self.tables.decide_cc(self.sm, *cc, row);
            if d.action != Action::Legal {
                let name = self.tables.cond_code_info(*cc).map(|c| c.name).unwrap_or("?");
                return Some(format!("condition code {name} on {} is {} on {} ({}: {})", self.type_name(row), d.action, self.sm.name, d.rule.source, d.rule.text));
            }
        }
        None
    }

    /// The verification mode's final check.
    fn check_all_legal(&self, blocks: &[Block]) -> LResult<()> {
        for b in blocks {
            for inst in &b.insts {
                if let Some(problem) = self.illegal_node(inst) {
                    return Err(LegalizeError { loc: inst.loc, message: format!("not legal after legalization: {problem}") });
                }
            }
        }
        Ok(())
    }
}

