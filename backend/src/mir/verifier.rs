//! The MIR verifier: structure, SSA dominance, and types against the description's
//! opcode signatures (spec §3).
//!
//! Runs on parsed input and after every pass in tests (`--verify`). Unlike the parser
//! it does not stop at the first problem: it returns every error, each located at its
//! instruction and naming the function, block and instruction index.

use rustc_hash::FxHashMap as HashMap;

use target_desc::error::did_you_mean;
use target_desc::tables::{props, OperandKind, SigOperand, TargetTables, TypeClass, TypeKind, VtId};

use super::*;
use crate::diagnostics::MirError;

/// Where errors are reported: the file name and its text (for source lines).
#[derive(Copy, Clone)]
pub struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

pub fn verify_module(module: &Module, tables: &TargetTables, source: Source<'_>) -> Vec<MirError> {
    verify_functions(&module.functions, &Callees::new(&module.functions), &module.globals, tables, source)
}

/// What calls are checked against: the functions of the module (whole, or only their
/// headers), and an index of them by name.
pub struct Callees<'a> {
    all: &'a [Function],
    /// A module of many functions each calling others stays linear. The first of
    /// two functions with one name (an error of its own) answers.
    by_name: HashMap<&'a str, usize>,
}

impl<'a> Callees<'a> {
    pub fn new(all: &'a [Function]) -> Callees<'a> {
        Callees { all, by_name: all.iter().enumerate().rev().map(|(i, f)| (f.name.as_str(), i)).collect() }
    }
}

/// [`verify_module`] for some of a module's functions: `functions`, with calls checked
/// against `callees` (every function of the module) and symbols against `globals`. A
/// module compiled a batch of functions at a time verifies each batch this way.
pub fn verify_functions(functions: &[Function], callees: &Callees<'_>, globals: &[Global], tables: &TargetTables, source: Source<'_>) -> Vec<MirError> {
    let mut errors = Vec::new();
    let mut typed = rustc_hash::FxHashSet::default();
    for f in functions {
        Verifier { globals, callees, tables, source, function: f, errors: &mut errors, typed: &mut typed }.run();
    }
    errors
}

/// What the type checks of a generic instruction read, when that is only its opcode,
/// its result types and its operands' types (or condition codes): no flags, no literal
/// operands, at most eight results and operands in all. Such an instruction passes iff
/// every instruction with the same key does, so each key is checked once per module
/// (the checks cost about a thousand instructions each; most keys repeat).
type TypingKey = (u16, u8, u8, [u16; 8]);

fn typing_key(f: &Function, inst: &Inst, opcode: target_desc::tables::OpcodeId) -> Option<TypingKey> {
    if !inst.flags.is_empty() || inst.defs.len() + inst.operands.len() > 8 {
        return None;
    }
    let mut key = [0u16; 8];
    let items = inst.defs.iter().map(|d| Some(u16::from(f.value(*d).ty.0))).chain(inst.operands.iter().map(|o| match o {
        Operand::Value(v) => Some(u16::from(f.value(*v).ty.0)),
        Operand::CondCode(c) => Some(0x100 | u16::from(c.0)),
        _ => None,
    }));
    for (slot, item) in key.iter_mut().zip(items) {
        *slot = item?;
    }
    // Both counts: a zero slot must not pass for a type whatever the description numbers.
    Some((opcode.0, inst.defs.len() as u8, inst.operands.len() as u8, key))
}

struct Verifier<'a> {
    globals: &'a [Global],
    callees: &'a Callees<'a>,
    tables: &'a TargetTables,
    source: Source<'a>,
    function: &'a Function,
    errors: &'a mut Vec<MirError>,
    /// Typings of the module's instructions that passed ([`typing_key`]).
    typed: &'a mut rustc_hash::FxHashSet<TypingKey>,
}

impl Verifier<'_> {
    fn error(&mut self, loc: Loc, block: Option<usize>, inst: Option<usize>, message: String) {
        let mut e = MirError::at(self.source.file, self.source.text, loc.line as usize, loc.column as usize, message);
        let mut context = format!("function @{}", self.function.name);
        if let Some(b) = block {
            context.push_str(&format!(", {}", self.function.blocks[b].label()));
        }
        if let Some(i) = inst {
            context.push_str(&format!(", instruction {}", i + 1));
        }
        e.context = Some(context);
        self.errors.push(e);
    }

    /// `i32, f32`: a type list for "expected (...), found (...)" messages.
    fn type_list(&self, types: &[VtId]) -> String {
        types.iter().map(|t| self.ty_name(*t)).collect::<Vec<_>>().join(", ")
    }

    fn ty_name(&self, vt: VtId) -> &'static str {
        self.tables.type_info(vt).map(|t| t.name).unwrap_or("?")
    }

    /// The generic opcode's name (a machine instruction's source opcode).
    fn op_name(&self, inst: &Inst) -> &'static str {
        opcode_info(inst.opcode, self.tables).map(|o| o.name).unwrap_or("?")
    }

    fn run(&mut self) {
        let f = self.function;
        if f.kind == FunctionKind::Kernel && !f.returns.is_empty() {
            self.error(f.returns_loc.unwrap_or(f.loc), None, None, "a kernel cannot return values: expected `returns: []`".into());
        }
        if f.kind == FunctionKind::Device && !f.attributes.is_empty() {
            self.error(f.attributes_loc.unwrap_or(f.loc), None, None, "`attributes` (maxntid, minnctapersm, maxnreg) are for kernels only".into());
        }
        if let Some(m) = &f.attributes.maxntid {
            if m.is_empty() || m.len() > 3 || m.contains(&0) {
                self.error(f.attributes_loc.unwrap_or(f.loc), None, None, format!("expected 1 to 3 positive numbers in `maxntid`, found {m:?}"));
            }
        }
        let successors = self.structure();
        if f.ssa {
            let defs = self.definitions();
            self.dominance(&successors, &defs);
        }
        for (b, block) in f.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                self.types(b, i, inst);
            }
        }
    }

    /// Terminators and branch targets; returns each block's successor indices.
    fn structure(&mut self) -> Vec<Vec<usize>> {
        let f = self.function;
        let index = block_indices(f);
        let mut successors = vec![Vec::new(); f.blocks.len()];
        for (b, block) in f.blocks.iter().enumerate() {
            let is_term = |inst: &Inst| opcode_info(inst.opcode, self.tables).is_some_and(|o| o.has(props::TERMINATOR));
            match block.insts.last() {
                None => self.error(block.loc, Some(b), None, format!("expected a terminator at the end of {}, found an empty block", block.label())),
                Some(last) if !is_term(last) => {
                    let name = self.op_name(last);
                    self.error(last.loc, Some(b), Some(block.insts.len() - 1), format!("expected a terminator (BR, BRCOND, BR_CC, RET, TRAP, UNREACHABLE) at the end of {}, found {name}", block.label()))
                }
                _ => {}
            }
            for (i, inst) in block.insts.iter().enumerate() {
                if i + 1 < block.insts.len() && is_term(inst) {
                    let name = self.op_name(inst);
                    self.error(inst.loc, Some(b), Some(i), format!("{name} is a terminator but is not the last instruction of {}", block.label()));
                }
                let phi = self.op_name(inst) == "PHI";
                for target in inst.block_operands() {
                    match index.get(&target).copied() {
                        Some(t) => {
                            if !phi && is_term(inst) && !successors[b].contains(&t) {
                                successors[b].push(t);
                            }
                        }
                        None if phi => self.error(inst.loc, Some(b), Some(i), format!("PHI names %bb.{target}, which does not exist")),
                        None => self.error(inst.loc, Some(b), Some(i), format!("branch target %bb.{target} does not exist")),
                    }
                }
            }
        }
        successors
    }

    /// Where each value is defined: (block, instruction), by value id (the last
    /// definition of a value written more than once).
    fn definitions(&mut self) -> Definitions {
        let mut defs = Definitions(vec![None; self.function.values.len()]);
        for (b, block) in self.function.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                for d in &inst.defs {
                    if let Some(slot) = defs.0.get_mut(d.0 as usize) {
                        *slot = Some((b as u32, i as u32));
                    }
                }
            }
        }
        defs
    }

    fn dominance(&mut self, successors: &[Vec<usize>], defs: &Definitions) {
        let f = self.function;
        let n = f.blocks.len();
        let mut preds = vec![Vec::new(); n];
        for (b, succ) in successors.iter().enumerate() {
            for &s in succ {
                preds[s].push(b);
            }
        }
        let idom = dominators(successors, &preds);
        // Pre/post numbers of the dominator tree make each query O(1): a dominates b
        // iff b's interval lies within a's.
        let (pre, post) = dominator_intervals(&idom);
        let index = block_indices(f);
        let dominates = |a: usize, b: usize| -> bool {
            idom[a].is_some() && idom[b].is_some() && pre[a] <= pre[b] && post[b] <= post[a]
        };
        for (b, block) in f.blocks.iter().enumerate() {
            let reachable = idom[b].is_some();
            let mut seen_non_phi = false;
            for (i, inst) in block.insts.iter().enumerate() {
                let is_phi = self.op_name(inst) == "PHI";
                if is_phi {
                    if seen_non_phi {
                        self.error(inst.loc, Some(b), Some(i), "PHI must come before every other instruction of its block".into());
                    }
                    self.phi(b, i, inst, &preds[b], defs, &dominates, reachable, &index);
                    continue;
                }
                seen_non_phi = true;
                if !reachable {
                    continue;
                }
                for v in inst.uses() {
                    let Some((db, di)) = defs.get(v) else { continue };
                    let ok = if db == b { di < i } else { idom[db].is_some() && dominates(db, b) };
                    if !ok {
                        let name = &f.value(v).name;
                        let where_ = f.blocks[db].label();
                        self.error(inst.loc, Some(b), Some(i), format!("use of %{name} is not dominated by its definition (in {where_})"));
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn phi(
        &mut self,
        b: usize,
        i: usize,
        inst: &Inst,
        preds: &[usize],
        defs: &Definitions,
        dominates: &dyn Fn(usize, usize) -> bool,
        reachable: bool,
        index: &HashMap<u32, usize>,
    ) {
        let f = self.function;
        if inst.operands.len() < 2 || inst.operands.len() % 2 != 0 {
            self.error(inst.loc, Some(b), Some(i), "expected PHI operands in pairs: `PHI %value, %bb.N, ...`".into());
            return;
        }
        let mut covered = Vec::new();
        for pair in inst.operands.chunks(2) {
            let (Operand::Value(v), Operand::Block(pb)) = (&pair[0], &pair[1]) else {
                self.error(inst.loc, Some(b), Some(i), "expected PHI operands in pairs of a value and a block: `PHI %value, %bb.N, ...`".into());
                return;
            };
            let Some(&p) = index.get(pb) else { continue };
            if !preds.contains(&p) {
                self.error(inst.loc, Some(b), Some(i), format!("PHI names %bb.{pb}, which is not a predecessor of {}", f.blocks[b].label()));
                continue;
            }
            if covered.contains(&p) {
                self.error(inst.loc, Some(b), Some(i), format!("PHI names predecessor %bb.{pb} twice"));
            }
            covered.push(p);
            if reachable {
                if let Some((db, _)) = defs.get(*v) {
                    if !dominates(db, p) {
                        let name = &f.value(*v).name;
                        self.error(inst.loc, Some(b), Some(i), format!("PHI operand %{name} is not available at the end of %bb.{pb}"));
                    }
                }
            }
        }
        for p in preds {
            if !covered.contains(p) {
                self.error(inst.loc, Some(b), Some(i), format!("PHI has no value for predecessor %bb.{}", f.blocks[*p].number));
            }
        }
    }

    /// A machine instruction reading an implicit flag (the carry of `addc`) must directly
    /// follow the instruction that left it there: the flag has no register, and anything
    /// in between could overwrite it.
    fn carry_flag(&mut self, b: usize, i: usize, inst: &Inst, m: u16) {
        let Some(p) = self.tables.patterns.get(m as usize) else { return };
        let f = self.function;
        for (k, (_, kind)) in p.operands.iter().enumerate() {
            if *kind != target_desc::tables::PatternOperand::Flag {
                continue;
            }
            let Some(Operand::Value(v)) = inst.operands.get(k) else { continue };
            let previous = i.checked_sub(1).map(|j| &f.blocks[b].insts[j]);
            let produced = previous.is_some_and(|prev| {
                prev.defs.iter().position(|d| d == v).is_some_and(|r| match prev.opcode {
                    Opcode::Machine(pm) => self.tables.patterns.get(pm as usize).is_some_and(|pp| matches!(pp.results.get(r), Some(target_desc::tables::PatternResult::Flag))),
                    Opcode::Generic(_) => false,
                })
            });
            if !produced {
                let name = f.value(*v).name.clone();
                self.error(inst.loc, Some(b), Some(i), format!("{}: the carry flag %{name} must be left by the instruction just before (a flag has no register)", p.name));
            }
        }
    }

    fn types(&mut self, b: usize, i: usize, inst: &Inst) {
        if let Opcode::Machine(m) = inst.opcode {
            self.carry_flag(b, i, inst, m);
            return self.machine(b, i, inst, m);
        }
        let Some(info) = opcode_info(inst.opcode, self.tables) else { return };
        let f = self.function;
        let name = info.name;
        // Flags: at most one ordering, one scope; memory-type flags need sext/zext/trunc.
        let orderings = ["relaxed", "acquire", "release", "acq_rel", "seq_cst"];
        let scopes = ["cta", "gpu", "sys"];
        for (kind, set) in [("memory-ordering", &orderings[..]), ("scope", &scopes[..])] {
            let found: Vec<String> = inst.flags.iter().filter(|f| set.contains(f)).map(|f| format!(".{f}")).collect();
            if found.len() > 1 {
                self.error(inst.loc, Some(b), Some(i), format!("{name}: expected at most one {kind} flag, found {}", found.join(" and ")));
            }
        }
        match name {
            "PHI" => {
                if let (Some(d), Some(Operand::Value(v))) = (inst.defs.first(), inst.operands.first()) {
                    let ty = f.value(*d).ty;
                    for pair in inst.operands.chunks(2) {
                        if let Operand::Value(v) = &pair[0] {
                            if f.value(*v).ty != ty {
                                let (vn, vt, dt) = (&f.value(*v).name, self.ty_name(f.value(*v).ty), self.ty_name(ty));
                                self.error(inst.loc, Some(b), Some(i), format!("PHI of type {dt} has operand %{vn} of type {vt}"));
                            }
                        }
                    }
                    let _ = v;
                }
                if inst.defs.len() != 1 {
                    self.error(inst.loc, Some(b), Some(i), "PHI defines exactly one value".into());
                }
                return;
            }
            "CALL" => return self.call(b, i, inst),
            "INTRINSIC" => return self.intrinsic(b, i, inst),
            "RET" => return self.ret(b, i, inst),
            _ => {}
        }
        let key = match inst.opcode {
            Opcode::Generic(op) => typing_key(f, inst, op),
            Opcode::Machine(_) => None,
        };
        if key.is_some_and(|k| self.typed.contains(&k)) {
            return;
        }
        // Signatures have a few type variables and instructions one result: both on the
        // stack in the common case (two allocations per instruction otherwise).
        let vars = info.signature.type_vars.len();
        let mut small_bindings = [None; 4];
        let mut large_bindings = Vec::new();
        let bindings: &mut [Option<VtId>] = if vars <= small_bindings.len() {
            &mut small_bindings[..vars]
        } else {
            large_bindings.resize(vars, None);
            &mut large_bindings
        };
        if let Err(message) = self.match_list(info.signature.operands, &inst.operands, bindings, &info.signature.type_vars, false) {
            self.error(inst.loc, Some(b), Some(i), format!("{name}: {message} (signature `{}`)", info.signature.text));
            return;
        }
        let one_def;
        let many_defs: Vec<Operand>;
        let defs: &[Operand] = if let [d] = inst.defs[..] {
            one_def = [Operand::Value(d)];
            &one_def
        } else {
            many_defs = inst.defs.iter().map(|d| Operand::Value(*d)).collect();
            &many_defs
        };
        if let Err(message) = self.match_list(info.signature.results, defs, bindings, &info.signature.type_vars, true) {
            self.error(inst.loc, Some(b), Some(i), format!("{name}: {message} (signature `{}`)", info.signature.text));
            return;
        }
        if let Err(message) = self.opcode_rules(name, inst).and_then(|()| self.element_rules(name, inst)).and_then(|()| self.write_rules(info, inst)) {
            self.error(inst.loc, Some(b), Some(i), format!("{name}: {message}"));
            return;
        }
        if let Some(k) = key {
            self.typed.insert(k);
        }
    }

    /// Memory writes (stores, atomics) need a writable address space: the description
    /// marks read-only pointer types (`writable: false`, constant and parameter memory).
    /// The address is the operand the signature types as a pointer (`P: ptr`).
    fn write_rules(&self, info: &target_desc::tables::OpcodeInfo, inst: &Inst) -> Result<(), String> {
        if !info.has(props::MAY_STORE) || info.has(props::CALL) {
            return Ok(());
        }
        let f = self.function;
        for (s, o) in info.signature.operands.iter().zip(&inst.operands) {
            let OperandKind::TypeVar(var) = s.kind else { continue };
            let is_address = info.signature.type_vars.get(var as usize).is_some_and(|tv| tv.class == TypeClass::Pointer);
            if let (true, Operand::Value(v)) = (is_address, o) {
                if let Some(t) = self.tables.type_info(f.value(*v).ty) {
                    if t.kind == TypeKind::Pointer && !t.writable {
                        return Err(format!("%{} of type {} points to read-only memory ({}), which {} would write", f.value(*v).name, t.name, t.source, info.name));
                    }
                }
            }
        }
        Ok(())
    }

    /// ISD rules a signature cannot say: halves of pairs, vector elements (an integer
    /// element may be given or taken in a wider integer, implicitly truncated or
    /// extended), the narrow type of an in-register sign extension, shift amounts with
    /// the shifted value's lane count, and address-space casts that change the space
    /// (as LLVM's IR verifier requires).
    fn element_rules(&self, name: &str, inst: &Inst) -> Result<(), String> {
        let f = self.function;
        let info = |v: ValueId| self.tables.type_info(f.value(v).ty).copied();
        let values: Vec<ValueId> = inst.uses().collect();
        let result = inst.defs.first().and_then(|d| info(*d));
        // `e` may stand for an element of vector `v`: the element type, or a wider
        // scalar integer for an integer element.
        let element_ok = |v: &target_desc::tables::TypeInfo, e: &target_desc::tables::TypeInfo| {
            let Some(elem) = self.tables.type_info(VtId(v.elem)) else { return false };
            e.id == elem.id || (elem.kind == TypeKind::Int && e.kind == TypeKind::Int && e.bits > elem.bits)
        };
        let element_error = |v: &target_desc::tables::TypeInfo, e: &target_desc::tables::TypeInfo| {
            let elem = self.tables.type_info(VtId(v.elem)).map_or("?", |t| t.name);
            format!("an element of {} is {elem} (or, for integers, a wider integer), found {}", v.name, e.name)
        };
        match name {
            "BUILD_PAIR" => {
                if let (Some(w), Some(h)) = (result, values.first().and_then(|v| info(*v))) {
                    if w.bits != 2 * h.bits {
                        return Err(format!("the halves of {} are {}-bit values, found {}", w.name, w.bits / 2, h.name));
                    }
                }
            }
            "EXTRACT_ELEMENT" => {
                if let (Some(h), Some(w)) = (result, values.first().and_then(|v| info(*v))) {
                    if w.bits != 2 * h.bits {
                        return Err(format!("a half of {} is a {}-bit value, found {}", w.name, w.bits / 2, h.name));
                    }
                }
                if let Some(Operand::Int(index)) = inst.operands.get(1) {
                    if !(0..=1).contains(&index.get()) {
                        return Err(format!("expected the index 0 (low half) or 1 (high half), found {index}"));
                    }
                }
            }
            "BUILD_VECTOR" => {
                if let Some(v) = result {
                    if values.len() != v.lanes as usize {
                        return Err(format!("{} has {} elements, found {} operands", v.name, v.lanes, values.len()));
                    }
                    if let Some(e) = values.iter().filter_map(|x| info(*x)).find(|e| !element_ok(&v, e)) {
                        return Err(element_error(&v, &e));
                    }
                }
            }
            "EXTRACT_VECTOR_ELT" | "INSERT_VECTOR_ELT" | "SCALAR_TO_VECTOR" => {
                let (v, e) = match name {
                    "EXTRACT_VECTOR_ELT" => (values.first().and_then(|x| info(*x)), result),
                    "INSERT_VECTOR_ELT" => (result, values.get(1).and_then(|x| info(*x))),
                    _ => (result, values.first().and_then(|x| info(*x))),
                };
                if let (Some(v), Some(e)) = (v, e) {
                    if !element_ok(&v, &e) {
                        return Err(element_error(&v, &e));
                    }
                }
            }
            "ADDRSPACECAST" => {
                if let (Some(r), Some(a)) = (result, values.first().and_then(|x| info(*x))) {
                    if r.id == a.id {
                        return Err(format!("a cast from {} to {} does not change the address space (use COPY)", a.name, r.name));
                    }
                }
            }
            "SHL" | "SRA" | "SRL" | "ROTL" | "ROTR" => {
                if let (Some(r), Some(a)) = (result, values.get(1).and_then(|x| info(*x))) {
                    if r.lanes != a.lanes {
                        return Err(format!("the shift amount of a {} value needs {} lane{}, found {}", r.name, r.lanes, if r.lanes == 1 { "" } else { "s" }, a.name));
                    }
                }
            }
            "SIGN_EXTEND_INREG" => {
                let narrow: Vec<target_desc::tables::TypeInfo> =
                    inst.flags.iter().filter_map(|fl| self.tables.vt(fl).and_then(|t| self.tables.type_info(t).copied())).collect();
                match (narrow.as_slice(), result) {
                    ([n], Some(r)) if n.bits >= r.bits => return Err(format!("the type flag .{} must be narrower than {}", n.name, r.name)),
                    ([_], _) => {}
                    _ => return Err("expected exactly one type flag naming the narrow type (`SIGN_EXTEND_INREG.i8 %x`)".into()),
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn match_list(
        &self,
        sig: &[SigOperand],
        actual: &[Operand],
        bindings: &mut [Option<VtId>],
        vars: &[target_desc::tables::TypeVar],
        results: bool,
    ) -> Result<(), String> {
        let what = if results { "result" } else { "operand" };
        let mut k = 0;
        for (s, sop) in sig.iter().enumerate() {
            let take = |k: usize| actual.get(k).filter(|a| kind_matches(sop.kind, a));
            if sop.variadic {
                while let Some(a) = take(k) {
                    self.bind(sop.kind, a, bindings, vars, k, what)?;
                    k += 1;
                }
            } else if let Some(a) = take(k) {
                self.bind(sop.kind, a, bindings, vars, k, what)?;
                k += 1;
            } else if !sop.optional {
                let expected = kind_text(sop.kind, vars, self.tables);
                return Err(match actual.get(k) {
                    Some(a) => format!("expected {expected} as {what} {}, found {}", k + 1, self.operand_text(a)),
                    None => format!("expected {expected} as {what} {}, found only {} {what}{}", s + 1, actual.len(), if actual.len() == 1 { "" } else { "s" }),
                });
            }
        }
        if k < actual.len() {
            return Err(format!("expected {} {what}s at most, found {} (extra: {})", k, actual.len(), self.operand_text(&actual[k])));
        }
        Ok(())
    }

    fn operand_text(&self, o: &Operand) -> String {
        match o {
            Operand::Value(v) => format!("%{} of type {}", self.function.value(*v).name, self.ty_name(self.function.value(*v).ty)),
            Operand::Block(b) => format!("%bb.{b}"),
            Operand::Symbol(s) => format!("@{s}"),
            Operand::CondCode(_) => "a condition code".into(),
            Operand::Int(i) => format!("the integer {i}"),
            Operand::Float(x) => format!("the float {x}"),
            Operand::Mask(_) => "a mask".into(),
            Operand::Align(a) => format!("`align {a}`"),
        }
    }

    fn bind(
        &self,
        kind: OperandKind,
        actual: &Operand,
        bindings: &mut [Option<VtId>],
        vars: &[target_desc::tables::TypeVar],
        index: usize,
        what: &str,
    ) -> Result<(), String> {
        let Operand::Value(v) = actual else { return Ok(()) };
        let ty = self.function.value(*v).ty;
        match kind {
            OperandKind::Fixed(t) if t != ty.0 => Err(format!(
                "expected {} as {what} {}, found %{} of type {}",
                self.ty_name(VtId(t)),
                index + 1,
                self.function.value(*v).name,
                self.ty_name(ty)
            )),
            OperandKind::TypeVar(var) => {
                let var = var as usize;
                let Some(tv) = vars.get(var) else { return Ok(()) };
                if !in_class(self.tables, ty, tv.class) {
                    return Err(format!(
                        "expected {} ({}) as {what} {}, found %{} of type {}",
                        class_text(tv.class),
                        tv.name,
                        index + 1,
                        self.function.value(*v).name,
                        self.ty_name(ty)
                    ));
                }
                match bindings[var] {
                    Some(bound) if bound != ty => Err(format!(
                        "expected {what} {} to have type {} like the other `{}` values, found %{} of type {}",
                        index + 1,
                        self.ty_name(bound),
                        tv.name,
                        self.function.value(*v).name,
                        self.ty_name(ty)
                    )),
                    _ => {
                        bindings[var] = Some(ty);
                        Ok(())
                    }
                }
            }
            _ => Ok(()),
        }
    }

    /// Rules a signature cannot say: widths of conversions, lanes, memory flags,
    /// argument indices and symbols.
    fn opcode_rules(&self, name: &str, inst: &Inst) -> Result<(), String> {
        let f = self.function;
        let ty = |o: &Operand| match o {
            Operand::Value(v) => self.tables.type_info(f.value(*v).ty).copied(),
            _ => None,
        };
        let result = inst.defs.first().and_then(|d| self.tables.type_info(f.value(*d).ty).copied());
        let first = inst.operands.first().and_then(ty);
        let lanes = |t: &target_desc::tables::TypeInfo| t.lanes;
        let scalar_bits = |t: &target_desc::tables::TypeInfo| {
            if t.kind == TypeKind::Vector { self.tables.type_info(VtId(t.elem)).map_or(0, |e| e.bits) } else { t.bits }
        };
        match name {
            "SIGN_EXTEND" | "ZERO_EXTEND" | "ANY_EXTEND" | "FP_EXTEND" | "TRUNCATE" | "FP_ROUND" => {
                if let (Some(r), Some(s)) = (result, first) {
                    let widening = !matches!(name, "TRUNCATE" | "FP_ROUND");
                    let ok = if widening { scalar_bits(&r) > scalar_bits(&s) } else { scalar_bits(&r) < scalar_bits(&s) };
                    if !ok {
                        let dir = if widening { "wider" } else { "narrower" };
                        return Err(format!("expected a result {dir} than the operand, found {} from {}", r.name, s.name));
                    }
                    if lanes(&r) != lanes(&s) {
                        return Err(format!("expected the same lane count, found {} from {}", r.name, s.name));
                    }
                }
            }
            "BITCAST" => {
                if let (Some(r), Some(s)) = (result, first) {
                    if r.bits != s.bits {
                        return Err(format!("expected types of the same width, found {} ({} bits) from {} ({} bits)", r.name, r.bits, s.name, s.bits));
                    }
                }
            }
            "FP_TO_SINT" | "FP_TO_UINT" | "SINT_TO_FP" | "UINT_TO_FP" | "SETCC" => {
                let operand = if name == "SETCC" { inst.operands.get(1).and_then(ty) } else { first };
                if let (Some(r), Some(s)) = (result, operand) {
                    if lanes(&r) != lanes(&s) {
                        return Err(format!("expected the same lane count, found {} from {}", r.name, s.name));
                    }
                }
            }
            "ARG" => {
                let Some(Operand::Int(index)) = inst.operands.first() else { return Ok(()) };
                let Some(param) = usize::try_from(index.get()).ok().and_then(|i| f.params.get(i)) else {
                    return Err(format!("expected a parameter index below {}, found {index}", f.params.len()));
                };
                if let (Some(r), Some(Operand::Int(offset))) = (result, inst.operands.get(1)) {
                    // A part of the parameter's in-memory image (docs/mir-extensions.md).
                    let narrow = inst.flags.iter().find_map(|fl| self.tables.vt(fl));
                    let read = narrow.and_then(|n| self.tables.type_info(n).copied()).unwrap_or(r);
                    let (size, whole) = (store_bytes(&read), self.tables.type_info(param.ty).map_or(0, store_bytes));
                    if offset.get() < 0 || offset.get() % i128::from(size) != 0 || offset.get() + i128::from(size) > i128::from(whole) {
                        return Err(format!(
                            "parameter {index} (`{}`, {whole} bytes) has no {} part at byte offset {offset} (offsets are multiples of the part's size)",
                            param.name, read.name
                        ));
                    }
                    return Ok(());
                }
                if let Some(r) = result {
                    let p = self.tables.type_info(param.ty);
                    let narrow = inst.flags.iter().find_map(|fl| self.tables.vt(fl));
                    let extends = inst.flags.iter().any(|fl| matches!(*fl, "sext" | "zext" | "anyext"));
                    // The legalized carriers of a parameter (docs/mir-extensions.md).
                    let carried = match (extends, narrow, p) {
                        (true, Some(n), Some(p)) => n == param.ty && r.kind == TypeKind::Int && p.kind == TypeKind::Int && r.bits > p.bits,
                        (false, None, Some(p)) => p.kind == TypeKind::Float && r.kind == TypeKind::Int && r.bits == p.bits,
                        _ => false,
                    };
                    if r.id != param.ty.0 && !carried {
                        return Err(format!("parameter {index} (`{}`) has type {}, but the result is {}", param.name, self.ty_name(param.ty), r.name));
                    }
                }
            }
            "FRAME_INDEX" => {
                let Some(Operand::Int(index)) = inst.operands.first() else { return Ok(()) };
                frame_object(f, index.get())?;
                if let Some(r) = result {
                    if r.addrspace != LOCAL_SPACE {
                        return Err(format!("a frame object is local memory: expected a result of type p{LOCAL_SPACE}, found {}", r.name));
                    }
                }
            }
            "GLOBAL_ADDR" => {
                let Some(Operand::Symbol(s)) = inst.operands.first() else { return Ok(()) };
                let Some(g) = self.globals.iter().find(|g| *g.name == **s) else {
                    let hint = did_you_mean(s, self.globals.iter().map(|g| g.name.as_str()), |n| format!("@{n}"));
                    return Err(format!("unknown global @{s}{hint}"));
                };
                if let Some(r) = result {
                    if r.addrspace != g.space.number() {
                        return Err(format!("@{s} is a {} global: expected a result of type p{}, found {}", g.space.name(), g.space.number(), r.name));
                    }
                }
            }
            "LOAD" | "STORE" => {
                let mem = inst.flags.iter().find_map(|fl| self.tables.vt(fl).and_then(|v| self.tables.type_info(v).copied()));
                let ext = inst.flags.iter().any(|fl| matches!(*fl, "sext" | "zext" | "anyext" | "trunc"));
                let value = if name == "LOAD" { result } else { first };
                match (mem, ext, value) {
                    (Some(m), true, Some(v)) if m.bits >= scalar_bits(&v) => {
                        return Err(format!("the memory type {} must be narrower than the value type {}", m.name, v.name))
                    }
                    (Some(m), false, _) => return Err(format!("a memory type flag (.{}) needs .sext, .zext, .anyext (LOAD) or .trunc (STORE)", m.name)),
                    (None, true, _) => return Err("an extending load or truncating store needs a memory type flag (.i8, .i16, .i32)".into()),
                    _ => {}
                }
                if name == "LOAD" && inst.has_flag("trunc") || name == "STORE" && inst.flags.iter().any(|f| matches!(*f, "sext" | "zext" | "anyext")) {
                    return Err("LOAD extends (.sext/.zext/.anyext) and STORE truncates (.trunc), not the other way round".into());
                }
            }
            "CONSTANT" => {
                if let (Some(Operand::Int(v)), Some(r)) = (inst.operands.first(), result) {
                    let bits = r.bits as u32;
                    if bits < 128 {
                        let (min, max) = (-(1i128 << (bits - 1)), (1i128 << bits) - 1);
                        if v.get() < min || v.get() > max {
                            return Err(format!("the constant {v} does not fit in {}", r.name));
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A machine instruction against its pattern's operand kinds and result type.
    fn machine(&mut self, b: usize, i: usize, inst: &Inst, m: u16) {
        let Some(p) = self.tables.patterns.get(m as usize) else { return };
        let f = self.function;
        let operands: Vec<&Operand> = inst.operands.iter().filter(|o| !matches!(o, Operand::Align(_))).collect();
        let variadic = p.operands.last().is_some_and(|(_, k)| *k == target_desc::tables::PatternOperand::Values);
        let fixed = if variadic { p.operands.len() - 1 } else { p.operands.len() };
        if operands.len() < fixed || (!variadic && operands.len() != fixed) {
            return self.error(inst.loc, Some(b), Some(i), format!("{}: expected {} operands, found {}", p.name, p.operands.len(), operands.len()));
        }
        if variadic {
            if let Some(bad) = operands[fixed..].iter().find(|o| !matches!(o, Operand::Value(_))) {
                let found = self.operand_text(bad);
                return self.error(inst.loc, Some(b), Some(i), format!("{}: expected registers after operand {fixed}, found {found}", p.name));
            }
        }
        for (k, ((name, kind), actual)) in p.operands.iter().zip(&operands).enumerate() {
            use target_desc::tables::PatternOperand as K;
            let ok = match (kind, actual) {
                // Or a register of a class the description lets stand in for `t`'s
                // (`read_as`; machine copy propagation leaves such operands).
                (K::Reg(t), Operand::Value(v)) => f.value(*v).ty.0 == *t || self.tables.register_reads_as_somewhere(f.value(*v).ty, VtId(*t)),
                (K::Flag, Operand::Value(v)) => in_class(self.tables, f.value(*v).ty, TypeClass::Bool),
                (K::Imm(_), Operand::Int(_) | Operand::Float(_)) | (K::Literal, Operand::Int(_) | Operand::Float(_)) => true,
                (K::ImmIs(_, n) | K::LiteralIs(n), Operand::Int(i)) => i.get() == *n as i128,
                (K::ImmRange(t, ..), Operand::Int(i)) => kind.fold_constant(i.get(), self.tables.type_info(VtId(*t)).map_or(64, |x| x.bits)).is_some(),
                // The operand is the mask's length.
                (K::LowMask(t), Operand::Int(n)) => n.get() > 0 && n.get() < i128::from(self.tables.type_info(VtId(*t)).map_or(64, |x| x.bits)),
                (K::SymbolIs(name), Operand::Symbol(s)) => **s == **name,
                (K::Values, _) => true,
                (K::CondCode, Operand::CondCode(_)) | (K::Block, Operand::Block(_)) | (K::Symbol, Operand::Symbol(_)) => true,
                _ => false,
            };
            if !ok {
                let expected = match kind {
                    K::Reg(t) => format!("a {} register", self.ty_name(VtId(*t))),
                    K::Imm(t) => format!("a {} immediate", self.ty_name(VtId(*t))),
                    K::Literal => "an integer literal".into(),
                    K::LiteralIs(n) => format!("the literal {n}"),
                    K::ImmIs(t, n) => format!("the {} immediate {n}", self.ty_name(VtId(*t))),
                    K::ImmRange(t, min, max) => format!("a {} immediate in [{min}, {max}]", self.ty_name(VtId(*t))),
                    K::LowMask(t) => format!("the length of a {} low-bit mask", self.ty_name(VtId(*t))),
                    K::CondCode => "a condition code".into(),
                    K::Block => "a block".into(),
                    K::Symbol => "a symbol".into(),
                    K::SymbolIs(name) => format!("@{name}"),
                    K::Values => "registers".into(),
                    K::Flag => "an i1 flag".into(),
                };
                let found = self.operand_text(actual);
                return self.error(inst.loc, Some(b), Some(i), format!("{}: expected {expected} for `{name}` (operand {}), found {found}", p.name, k + 1));
            }
        }
        // A FRAME_INDEX the pattern absorbed names a frame object.
        if let Some(Operand::Int(index)) = inst.frame_operand(self.tables).and_then(|k| inst.operands.get(k)) {
            if let Err(message) = frame_object(f, index.get()) {
                return self.error(inst.loc, Some(b), Some(i), format!("{}: {message}", p.name));
            }
        }
        let result: Vec<VtId> = inst.defs.iter().map(|d| f.value(*d).ty).collect();
        // A flag result is any bool type; show the one the instruction has there.
        let expected: Vec<VtId> = p
            .results
            .iter()
            .enumerate()
            .map(|(k, r)| match r {
                target_desc::tables::PatternResult::Reg(t) => VtId(*t),
                target_desc::tables::PatternResult::Flag => {
                    result.get(k).copied().filter(|&t| in_class(self.tables, t, TypeClass::Bool)).unwrap_or(VtId(0))
                }
            })
            .collect();
        if result != expected && !p.any_results {
            let (e, a) = (self.type_list(&expected), self.type_list(&result));
            self.error(inst.loc, Some(b), Some(i), format!("{}: expected results ({}), found ({})", p.name, e, a));
        }
    }

    fn call(&mut self, b: usize, i: usize, inst: &Inst) {
        let f = self.function;
        let Some(Operand::Symbol(callee)) = inst.operands.first() else {
            return self.error(inst.loc, Some(b), Some(i), "CALL: expected the callee `@name` as the first operand".into());
        };
        let Some(target) = self.callees.by_name.get(&**callee).map(|&i| &self.callees.all[i]) else {
            let hint = did_you_mean(callee, self.callees.all.iter().map(|g| g.name.as_str()), |n| format!("@{n}"));
            return self.error(inst.loc, Some(b), Some(i), format!("CALL: unknown function @{callee}{hint}"));
        };
        if target.kind == FunctionKind::Kernel {
            return self.error(inst.loc, Some(b), Some(i), format!("CALL: @{callee} is a kernel; only device functions can be called"));
        }
        let args: Vec<VtId> = inst.operands[1..].iter().filter_map(|o| if let Operand::Value(v) = o { Some(f.value(*v).ty) } else { None }).collect();
        if args.len() != inst.operands.len() - 1 {
            return self.error(inst.loc, Some(b), Some(i), "CALL: arguments must be values".into());
        }
        let expected: Vec<VtId> = target.params.iter().map(|p| p.ty).collect();
        if args != expected {
            let (e, a) = (self.type_list(&expected), self.type_list(&args));
            self.error(inst.loc, Some(b), Some(i), format!("CALL @{callee}: expected arguments ({}), found ({})", e, a));
        }
        let results: Vec<VtId> = inst.defs.iter().map(|d| f.value(*d).ty).collect();
        if results != target.returns {
            let (e, a) = (self.type_list(&target.returns), self.type_list(&results));
            self.error(inst.loc, Some(b), Some(i), format!("CALL @{callee}: expected results ({}), found ({})", e, a));
        }
    }

    fn intrinsic(&mut self, b: usize, i: usize, inst: &Inst) {
        let Some(Operand::Symbol(name)) = inst.operands.first() else {
            return self.error(inst.loc, Some(b), Some(i), "INTRINSIC: expected the intrinsic `@name` as the first operand".into());
        };
        let Some(info) = self.tables.intrinsics.iter().find(|x| x.name == &**name) else {
            let hint = did_you_mean(name, self.tables.intrinsics.iter().map(|x| x.name), |n| format!("@{n}"));
            return self.error(inst.loc, Some(b), Some(i), format!("INTRINSIC: unknown intrinsic @{name}{hint}"));
        };
        let mut bindings = vec![None; info.signature.type_vars.len()];
        let defs: Vec<Operand> = inst.defs.iter().map(|d| Operand::Value(*d)).collect();
        let checked = self
            .match_list(info.signature.operands, &inst.operands[1..], &mut bindings, info.signature.type_vars, false)
            .and_then(|_| self.match_list(info.signature.results, &defs, &mut bindings, info.signature.type_vars, true));
        if let Err(message) = checked {
            self.error(inst.loc, Some(b), Some(i), format!("INTRINSIC @{name}: {message} (signature `{}`)", info.signature.text));
        }
    }

    fn ret(&mut self, b: usize, i: usize, inst: &Inst) {
        let f = self.function;
        let values: Vec<VtId> = inst.operands.iter().filter_map(|o| if let Operand::Value(v) = o { Some(f.value(*v).ty) } else { None }).collect();
        if values.len() != inst.operands.len() {
            return self.error(inst.loc, Some(b), Some(i), "RET: operands must be values".into());
        }
        // A kernel returns nothing, whatever its (already reported) `returns` says.
        let expected: &[VtId] = if f.kind == FunctionKind::Kernel { &[] } else { &f.returns };
        if values != expected {
            let (e, a) = (self.type_list(&expected), self.type_list(&values));
            let what = if f.kind == FunctionKind::Kernel { "a kernel returns nothing" } else { "the function's `returns`" };
            self.error(inst.loc, Some(b), Some(i), format!("RET: expected ({}) ({what}), found ({})", e, a));
        }
    }
}

fn kind_matches(kind: OperandKind, actual: &Operand) -> bool {
    matches!(
        (kind, actual),
        (OperandKind::TypeVar(_) | OperandKind::Fixed(_), Operand::Value(_))
            | (OperandKind::Imm, Operand::Int(_) | Operand::Align(_))
            | (OperandKind::FloatImm, Operand::Float(_) | Operand::Int(_))
            | (OperandKind::CondCode, Operand::CondCode(_))
            | (OperandKind::Block, Operand::Block(_))
            | (OperandKind::Symbol, Operand::Symbol(_))
            | (OperandKind::ShuffleMask, Operand::Mask(_))
    )
}

fn kind_text(kind: OperandKind, vars: &[target_desc::tables::TypeVar], tables: &TargetTables) -> String {
    match kind {
        OperandKind::TypeVar(v) => vars.get(v as usize).map_or("a value".into(), |tv| format!("{} value ({})", class_text(tv.class), tv.name)),
        OperandKind::Fixed(t) => format!("a {} value", tables.type_info(VtId(t)).map_or("?", |t| t.name)),
        OperandKind::Imm => "an integer literal".into(),
        OperandKind::FloatImm => "a float literal".into(),
        OperandKind::CondCode => "a condition code".into(),
        OperandKind::Block => "a block (%bb.N)".into(),
        OperandKind::Symbol => "a symbol (@name)".into(),
        OperandKind::ShuffleMask => "a mask(...)".into(),
    }
}

fn class_text(class: TypeClass) -> &'static str {
    match class {
        TypeClass::Any => "a",
        TypeClass::Int => "an integer",
        TypeClass::ScalarInt => "a scalar integer",
        TypeClass::Float => "a float",
        TypeClass::ScalarFloat => "a scalar float",
        TypeClass::Pointer => "a pointer",
        TypeClass::Vector => "a vector",
        TypeClass::Bool => "an i1",
    }
}

pub fn in_class(tables: &TargetTables, vt: VtId, class: TypeClass) -> bool {
    let Some(t) = tables.type_info(vt) else { return false };
    let elem = tables.type_info(VtId(t.elem)).map(|e| e.kind);
    match class {
        TypeClass::Any => true,
        TypeClass::Int => t.kind == TypeKind::Int || (t.kind == TypeKind::Vector && elem == Some(TypeKind::Int)),
        TypeClass::ScalarInt => t.kind == TypeKind::Int,
        TypeClass::Float => t.kind == TypeKind::Float || (t.kind == TypeKind::Vector && elem == Some(TypeKind::Float)),
        TypeClass::ScalarFloat => t.kind == TypeKind::Float,
        TypeClass::Pointer => t.kind == TypeKind::Pointer,
        TypeClass::Vector => t.kind == TypeKind::Vector,
        TypeClass::Bool => t.name == "i1" || (t.kind == TypeKind::Vector && tables.type_info(VtId(t.elem)).is_some_and(|e| e.name == "i1")),
    }
}

/// Where each value is defined, indexed by value id (ids are dense).
struct Definitions(Vec<Option<(u32, u32)>>);

impl Definitions {
    /// The (block, instruction) of `v`'s definition.
    fn get(&self, v: ValueId) -> Option<(usize, usize)> {
        self.0.get(v.0 as usize).copied().flatten().map(|(b, i)| (b as usize, i as usize))
    }
}

/// Block number -> index in layout order.
fn block_indices(f: &Function) -> HashMap<u32, usize> {
    f.blocks.iter().enumerate().map(|(i, b)| (b.number, i)).collect()
}

/// Preorder and postorder numbers of each block in the dominator tree (unreachable
/// blocks get 0 and are excluded by the caller).
fn dominator_intervals(idom: &[Option<usize>]) -> (Vec<usize>, Vec<usize>) {
    let n = idom.len();
    let mut children = vec![Vec::new(); n];
    for (b, parent) in idom.iter().enumerate() {
        if let Some(p) = parent {
            if *p != b {
                children[*p].push(b);
            }
        }
    }
    let (mut pre, mut post) = (vec![0; n], vec![0; n]);
    if n == 0 {
        return (pre, post);
    }
    let mut clock = 0;
    let mut stack = vec![(0usize, 0usize)];
    pre[0] = clock;
    while let Some((b, next)) = stack.pop() {
        if next < children[b].len() {
            stack.push((b, next + 1));
            let c = children[b][next];
            clock += 1;
            pre[c] = clock;
            stack.push((c, 0));
        } else {
            clock += 1;
            post[b] = clock;
        }
    }
    (pre, post)
}

/// Immediate dominators by the iterative algorithm of Cooper, Harvey and Kennedy;
/// `None` for blocks unreachable from the entry (block 0), `Some(0)` for the entry.
/// Blocks reachable from the entry (block 0) in reverse postorder of a depth-first
/// walk: every block after its predecessors except along back edges.
pub fn reverse_postorder(successors: &[Vec<usize>]) -> Vec<usize> {
    let n = successors.len();
    let mut order = Vec::with_capacity(n);
    if n == 0 {
        return order;
    }
    let mut visited = vec![false; n];
    let mut stack = vec![(0usize, 0usize)];
    visited[0] = true;
    while let Some((b, next)) = stack.pop() {
        if let Some(&s) = successors[b].get(next) {
            stack.push((b, next + 1));
            if !visited[s] {
                visited[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();
    order
}

pub fn dominators(successors: &[Vec<usize>], preds: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = successors.len();
    if n == 0 {
        return Vec::new();
    }
    let order = reverse_postorder(successors);
    let mut rpo_index = vec![usize::MAX; n];
    for (i, &b) in order.iter().enumerate() {
        rpo_index[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[0] = Some(0);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut a) => {
                        let mut c = p;
                        while a != c {
                            while rpo_index[a] > rpo_index[c] {
                                a = idom[a].unwrap_or(0);
                            }
                            while rpo_index[c] > rpo_index[a] {
                                c = idom[c].unwrap_or(0);
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// The bytes a value of a type occupies in memory (an i1 takes a byte).
pub fn store_bytes(t: &target_desc::tables::TypeInfo) -> u32 {
    let lanes = u32::from(t.lanes.max(1));
    let element = if t.kind == TypeKind::Vector { u32::from(t.bits) / lanes } else { u32::from(t.bits) };
    element.div_ceil(8).max(1) * lanes
}

/// PTX's local state space: where frame objects live.
const LOCAL_SPACE: u16 = 5;

/// `FRAME_INDEX index` names one of the function's frame objects.
fn frame_object(f: &Function, index: i128) -> Result<(), String> {
    if index < 0 || index >= f.frame.len() as i128 {
        return Err(match f.frame.len() {
            0 => format!("frame object {index} does not exist: the function has no `frame:` list"),
            n => format!("frame object {index} does not exist: the `frame:` list has {n} object(s), 0 to {}", n - 1),
        });
    }
    Ok(())
}
