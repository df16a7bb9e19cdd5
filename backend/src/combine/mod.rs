//! The combiner: algebraic rewriting of generic MIR after legalization, before
//! instruction selection, in the spirit of LLVM's DAG combiner (which CICC runs after
//! type legalization and again after operation legalization, reference
//! `cicc-type-legalization.txt`, "DAG Combiner runs again to clean up").
//!
//! Where it sits: `legalize` -> `combine` -> `isel`. It works on generic MIR, so the MIR
//! interpreter checks it (`backend/tests/combine_differential.rs` runs every corpus and
//! legalize kernel before and after it).
//!
//! What it does, in one walk over the blocks in dominator-tree preorder (so every
//! operand's facts are known before its users are visited):
//! - constant folding on every type, by the interpreter's own evaluation of the
//!   instruction ([`crate::interp::fold`]), so a folded value is bit for bit what a run
//!   computes; undefined behaviour and approximate functions are never folded;
//! - algebraic identities (`x+0`, `x*1`, `x&0`, `x^x`, shifts by zero, `select c, x, x`),
//!   multiplications and unsigned divisions by powers of two as shifts, unsigned
//!   remainders by powers of two as masks;
//! - chains: `ADD`/`PTR_ADD` of constants re-associated into one, extensions of
//!   extensions, truncations of extensions, bitcasts of bitcasts; a `COPY` is its
//!   operand; a store of a `BITCAST` stores its source, and (after the walk, on the
//!   final use counts) a full-width load read only by a `BITCAST` loads its type;
//! - vector chains: a lane extracted from `BUILD_VECTOR`/`INSERT_VECTOR_ELT`, a vector
//!   rebuilt from all its own lanes, a pair's half from `BUILD_PAIR`;
//! - `SETCC` of a value with itself, `SELECT` of a known condition, `SELECT` of a
//!   compare of its own integer operands as `SMIN`/`SMAX`/`UMIN`/`UMAX`;
//! - early CSE: a pure instruction equal to a dominating one is replaced by it;
//! - FMA contraction of `FADD`/`FSUB` of an `FMUL`, only when both carry the `.contract`
//!   flag (LLVM's `contract` fast-math flag) and the product has no other user: never by
//!   default, since a fused result is rounded once;
//! - address-space inference (LLVM's InferAddressSpaces, one cast deep): a load or store
//!   through a cast to the description's `generic` pointer type uses the specific space
//!   when a pattern of the SM takes it, an offset is added before such a cast, and a
//!   round trip through the generic space is the pointer itself.
//!
//! Every rewrite produces only instructions the SM's action table marks Legal (a new
//! constant or shift is checked), so selection can take them. Dead instructions are
//! removed at the end by the same mark-and-sweep as the machine `dce`. Linear in the
//! function: each instruction is visited once and each rule looks at most one
//! instruction up the def chain.


use rustc_hash::FxHashMap as HashMap;

use target_desc::tables::{props, NodeArg, OpcodeId, PatternOperand, PatternResult, SmTables, TargetTables, TypeKind, VtId};

use crate::interp::fold::{self, Evaluation};
use crate::machine::cfg::Cfg;
use crate::mir::{Function, Inst, Loc, Module, Opcode, Operand, ValueId};

/// What the pass did, for remarks and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub folded: usize,
    pub simplified: usize,
    pub strength_reduced: usize,
    pub reassociated: usize,
    pub vector_chains: usize,
    pub contracted: usize,
    /// Instructions equal to a dominating one (early CSE).
    pub cse: usize,
    /// Memory accesses and casts that use a specific address space instead of the
    /// generic one (address-space inference).
    pub address_spaces: usize,
    /// One per rewrite: function, position, what happened.
    pub remarks: Vec<(String, Loc, String)>,
}

impl Stats {
    pub fn total(&self) -> usize {
        self.folded + self.simplified + self.strength_reduced + self.reassociated + self.vector_chains + self.contracted + self.cse + self.address_spaces
    }
}

/// The generic opcodes the rules name (from the MIR specification, not the target).
struct Ops {
    constant: OpcodeId,
    fconstant: OpcodeId,
    add: OpcodeId,
    sub: OpcodeId,
    mul: OpcodeId,
    and: OpcodeId,
    or: OpcodeId,
    xor: OpcodeId,
    shl: OpcodeId,
    sra: OpcodeId,
    srl: OpcodeId,
    sdiv: OpcodeId,
    udiv: OpcodeId,
    urem: OpcodeId,
    srem: OpcodeId,
    ptr_add: OpcodeId,
    select: OpcodeId,
    setcc: OpcodeId,
    truncate: OpcodeId,
    zext: OpcodeId,
    sext: OpcodeId,
    anyext: OpcodeId,
    bitcast: OpcodeId,
    build_vector: OpcodeId,
    extract_vector_elt: OpcodeId,
    insert_vector_elt: OpcodeId,
    build_pair: OpcodeId,
    extract_element: OpcodeId,
    fneg: OpcodeId,
    fadd: OpcodeId,
    fsub: OpcodeId,
    fmul: OpcodeId,
    fma: OpcodeId,
    addrspacecast: OpcodeId,
    smin: OpcodeId,
    copy: OpcodeId,
    load: OpcodeId,
    store: OpcodeId,
    smax: OpcodeId,
    umin: OpcodeId,
    umax: OpcodeId,
}

impl Ops {
    fn resolve(tables: &TargetTables) -> Result<Ops, String> {
        let op = |name: &str| tables.opcode(name).ok_or_else(|| format!("the description has no generic opcode {name}, which the combiner needs"));
        Ok(Ops {
            constant: op("CONSTANT")?,
            fconstant: op("FCONSTANT")?,
            add: op("ADD")?,
            sub: op("SUB")?,
            mul: op("MUL")?,
            and: op("AND")?,
            or: op("OR")?,
            xor: op("XOR")?,
            shl: op("SHL")?,
            sra: op("SRA")?,
            srl: op("SRL")?,
            sdiv: op("SDIV")?,
            udiv: op("UDIV")?,
            urem: op("UREM")?,
            srem: op("SREM")?,
            ptr_add: op("PTR_ADD")?,
            select: op("SELECT")?,
            setcc: op("SETCC")?,
            truncate: op("TRUNCATE")?,
            zext: op("ZERO_EXTEND")?,
            sext: op("SIGN_EXTEND")?,
            anyext: op("ANY_EXTEND")?,
            bitcast: op("BITCAST")?,
            build_vector: op("BUILD_VECTOR")?,
            extract_vector_elt: op("EXTRACT_VECTOR_ELT")?,
            insert_vector_elt: op("INSERT_VECTOR_ELT")?,
            build_pair: op("BUILD_PAIR")?,
            extract_element: op("EXTRACT_ELEMENT")?,
            fneg: op("FNEG")?,
            fadd: op("FADD")?,
            fsub: op("FSUB")?,
            fmul: op("FMUL")?,
            fma: op("FMA")?,
            addrspacecast: op("ADDRSPACECAST")?,
            smin: op("SMIN")?,
            copy: op("COPY")?,
            load: op("LOAD")?,
            store: op("STORE")?,
            smax: op("SMAX")?,
            umin: op("UMIN")?,
            umax: op("UMAX")?,
        })
    }
}

/// Flags of a load or store that keep it a full-width access of its value's type; the
/// others (`sext.i8`, `trunc.i16`, ...) make its bits depend on the type.
const FULL_WIDTH_FLAGS: &[&str] = &["volatile", "invariant"];

/// The flag that allows contraction (LLVM's `contract` fast-math flag); selection
/// ignores it.
pub const CONTRACT: &str = "contract";

/// Runs the combiner on every function of `module`, with a remark per rewrite.
pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables) -> Result<Stats, String> {
    run_with(module, tables, sm, true)
}

/// [`run`], writing the per-rewrite remarks only when `remarks` is set (a remark per
/// rewrite is an allocation or two, a good part of the pass's time when nobody reads
/// them; the counts are kept either way).
pub fn run_with(module: &mut Module, tables: &TargetTables, sm: &SmTables, remarks: bool) -> Result<Stats, String> {
    let ops = Ops::resolve(tables)?;
    let mut stats = Stats::default();
    for f in &mut module.functions {
        if !f.ssa {
            continue;
        }
        let mut cx = Combiner::new(tables, sm, &ops, f);
        cx.want_remarks = remarks;
        cx.run(f);
        stats.folded += cx.stats.folded;
        stats.simplified += cx.stats.simplified;
        stats.strength_reduced += cx.stats.strength_reduced;
        stats.reassociated += cx.stats.reassociated;
        stats.vector_chains += cx.stats.vector_chains;
        stats.contracted += cx.stats.contracted;
        stats.cse += cx.stats.cse;
        stats.address_spaces += cx.stats.address_spaces;
        stats.remarks.append(&mut cx.stats.remarks);
    }
    crate::machine::dce::remove_dead_code(module, tables);
    // Loads read by one bitcast only, counted on the final code: a rule of the walk
    // may still give a value more readers after its visit (a lane of a vector).
    for f in &mut module.functions {
        let bitcast = Opcode::Generic(ops.bitcast);
        if !f.ssa || !f.blocks.iter().any(|b| b.insts.iter().any(|i| i.opcode == bitcast)) {
            continue;
        }
        let mut cx = Combiner::new(tables, sm, &ops, f);
        cx.want_remarks = remarks;
        cx.fold_bitcast_loads(f);
        stats.simplified += cx.stats.simplified;
        stats.remarks.append(&mut cx.stats.remarks);
    }
    Ok(stats)
}

/// What a rule decided for the instruction at hand.
enum Rewrite {
    /// Its (single) result is this existing value.
    Value(ValueId),
    /// Its result is this scalar constant (lanes of its type).
    Constant(u128),
    /// The instruction becomes this opcode, flags and operands (same result).
    Inst(OpcodeId, crate::mir::Flags, Vec<Operand>),
}

/// An instruction value numbering has seen: its expression key, where it is, its
/// result, and the next site seen with the same key ([`NO_NEXT`] at the end).
#[derive(Copy, Clone)]
struct ExpressionSite {
    key: u64,
    block: u32,
    index: u32,
    value: ValueId,
    next: u32,
}

/// [`ExpressionSite::next`] of the last site of a key.
const NO_NEXT: u32 = u32::MAX;

/// At most this many sites are kept per expression key.
const SITES_PER_KEY: usize = 8;

/// The slot of `key` in [`Combiner::expressions`]: the key is already a hash, but its
/// low bits (which pick the slot) are mixed first.
fn expression_slot_hash(key: u64) -> u64 {
    let x = (key ^ (key >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^ (x >> 33)
}

/// [`Combiner::konst`] of a value that is not a known constant.
const NOT_CONSTANT: u32 = u32::MAX;

struct Combiner<'a> {
    tables: &'a TargetTables,
    sm: &'a SmTables,
    ops: &'a Ops,
    function: String,
    /// Per value: its lanes when a constant, as an index into `spans` ([`NOT_CONSTANT`]
    /// for none): a word per value, where an `Option<Vec>` took three for the few
    /// constants among millions of values.
    konst: Vec<u32>,
    /// Each constant's lanes, `(start, count)` in `lanes`: one vector for all of them,
    /// not a heap block per constant (a module of small functions folds thousands).
    spans: Vec<(u32, u32)>,
    lanes: Vec<u128>,
    /// Where [`Combiner::constant`] writes a new constant's name.
    name_buffer: String,
    /// Per value: where it is defined (block, index), in the original layout (none for
    /// the values this pass makes).
    site: crate::mir::DefSites,
    /// Per value: the value replacing it (itself when none).
    repl: Vec<ValueId>,
    uses: Vec<u32>,
    /// New instructions to insert before (block, index), applied at the end.
    inserts: Vec<(usize, usize, Inst)>,
    /// The function's value names, built when the first new value needs a fresh name
    /// (most functions get none, and copying every name was a fifth of the pass).
    names: Option<crate::mir::NameSet>,
    /// Constants created by this pass, by (type, literal), so each is made once per
    /// block.
    made: HashMap<(usize, u16, i128), ValueId>,
    /// Divisions seen, by (opcode, dividend, divisor): where, and their result.
    divisions: HashMap<(OpcodeId, ValueId, ValueId), Vec<(usize, usize, ValueId)>>,
    /// Pure instructions seen, by expression hash (with the result type): the index in
    /// `expression_sites` of the first site of each key, whose sites are chained in the
    /// order seen; a candidate is confirmed with `Inst::same_expression`. A slot is 4
    /// bytes and a site 24, where a map of keys to lists of sites took 32 bytes per
    /// slot (528 MB on a 1M-instruction kernel).
    expressions: hashbrown::HashTable<u32>,
    expression_sites: Vec<ExpressionSite>,
    cfg: Option<Cfg>,
    stats: Stats,
    /// [`Combiner::selectable`]'s answers by (opcode, flags, result and operand types).
    selectable_shapes: HashMap<(u16, String, Vec<i32>), bool>,
    want_remarks: bool,
}

impl<'a> Combiner<'a> {
    fn new(tables: &'a TargetTables, sm: &'a SmTables, ops: &'a Ops, f: &Function) -> Combiner<'a> {
        let n = f.values.len();
        let (site, uses) = crate::mir::DefSites::with_uses(f);
        Combiner {
            tables,
            sm,
            ops,
            function: f.name.clone(),
            konst: vec![NOT_CONSTANT; n],
            spans: Vec::new(),
            lanes: Vec::new(),
            name_buffer: String::new(),
            site,
            repl: (0..n as u32).map(ValueId).collect(),
            uses,
            inserts: Vec::new(),
            names: None,
            made: HashMap::default(),
            divisions: HashMap::default(),
            expressions: hashbrown::HashTable::new(),
            expression_sites: Vec::new(),
            cfg: None,
            stats: Stats::default(),
            selectable_shapes: HashMap::default(),
            want_remarks: true,
        }
    }

    fn run(&mut self, f: &mut Function) {
        self.kernel_pointers_to_global(f);
        let cfg = Cfg::new(f, self.tables);
        let mut order = cfg.dom_preorder();
        self.cfg = Some(cfg);
        let mut seen = vec![false; f.blocks.len()];
        for &b in &order {
            seen[b] = true;
        }
        order.extend((0..f.blocks.len()).filter(|b| !seen[*b]));
        for b in order {
            for i in 0..f.blocks[b].insts.len() {
                self.resolve_operands(&mut f.blocks[b].insts[i]);
                self.access_specific_space(f, b, i);
                self.store_bitcast_source(f, b, i);
                // A rewrite may enable another on the same instruction (an extract
                // of an insert of an insert): a few rounds, each looking one step up.
                for _ in 0..4 {
                    if !self.combine(f, b, i) {
                        break;
                    }
                }
                self.value_number(f, b, i);
            }
        }
        // PHI operands from back edges were visited before their definitions changed.
        for block in &mut f.blocks {
            for inst in &mut block.insts {
                self.resolve_operands(inst);
            }
        }
        // New instructions go before the instruction that asked for them, in the
        // order they were made (a constant before the FMA reading it).
        crate::mir::insert_before_each(f, std::mem::take(&mut self.inserts));
    }

    /// The lanes of `v` when it is a constant.
    fn konst(&self, v: ValueId) -> Option<&[u128]> {
        let index = *self.konst.get(v.0 as usize)?;
        let &(start, count) = self.spans.get(index as usize)?;
        self.lanes.get(start as usize..(start + count) as usize)
    }

    fn set_konst(&mut self, v: ValueId, lanes: Option<&[u128]>) {
        self.konst[v.0 as usize] = match lanes {
            Some(lanes) => {
                self.spans.push((self.lanes.len() as u32, lanes.len() as u32));
                self.lanes.extend_from_slice(lanes);
                self.spans.len() as u32 - 1
            }
            None => NOT_CONSTANT,
        };
    }

    fn resolve(&self, mut v: ValueId) -> ValueId {
        while self.repl[v.0 as usize] != v {
            v = self.repl[v.0 as usize];
        }
        v
    }

    fn resolve_operands(&self, inst: &mut Inst) {
        for o in &mut inst.operands {
            if let Operand::Value(v) = o {
                *v = self.resolve(*v);
            }
        }
    }

    fn ty(&self, f: &Function, v: ValueId) -> VtId {
        f.value(v).ty
    }

    /// Scalar integer width of `vt` (None for vectors, floats, pointers).
    fn int_bits(&self, vt: VtId) -> Option<u32> {
        self.tables.type_info(vt).filter(|t| t.kind == TypeKind::Int).map(|t| u32::from(t.bits))
    }

    fn scalar(&self, v: ValueId) -> Option<u128> {
        match self.konst(v)? {
            [lane] => Some(*lane),
            _ => None,
        }
    }

    fn def<'f>(&self, f: &'f Function, v: ValueId) -> Option<&'f Inst> {
        let (b, i) = self.site.get(v)?;
        f.blocks.get(b)?.insts.get(i)
    }

    fn is(&self, inst: &Inst, op: OpcodeId) -> bool {
        inst.opcode == Opcode::Generic(op)
    }

    /// `select (setcc x, y, <), x, y` is `min x, y` for integers (LLVM's DAG combine of
    /// a select of a compare of its own operands), `>` gives `max`, swapped operands
    /// the other one; `<=`/`>=` pick the same value when the two are equal. The
    /// signedness is the condition code's. The compare stays for its other users.
    fn min_max(&self, f: &Function, cond: ValueId, x: ValueId, y: ValueId, vt: VtId) -> Option<Rewrite> {
        use crate::interp::{EQUAL, GREATER, LESS};
        if self.tables.type_info(vt)?.kind != TypeKind::Int {
            return None;
        }
        let compare = self.def(f, cond).filter(|d| self.is(d, self.ops.setcc))?;
        let operands: Vec<ValueId> = compare.uses().collect();
        let cc = compare.cond_code()?;
        let meaning = crate::interp::Cond::from_name(self.tables.cond_code_info(cc)?.name)?;
        let signed = meaning.int_signed?;
        let x_when_less = match meaning.relations & !EQUAL {
            LESS => true,
            GREATER => false,
            _ => return None,
        };
        let min = match operands.as_slice() {
            [a, b] if (*a, *b) == (x, y) => x_when_less,
            [a, b] if (*a, *b) == (y, x) => !x_when_less,
            _ => return None,
        };
        let op = match (signed, min) {
            (true, true) => self.ops.smin,
            (true, false) => self.ops.smax,
            (false, true) => self.ops.umin,
            (false, false) => self.ops.umax,
        };
        self.legal(op, vt).then(|| Rewrite::Inst(op, Default::default(), vec![Operand::Value(x), Operand::Value(y)]))
    }

    fn legal(&self, op: OpcodeId, vt: VtId) -> bool {
        self.sm.is_legal(op, vt)
    }

    /// The literal of a constant of type `vt` with bits `value` (sign-extended for
    /// integers, raw bits for floats).
    fn literal(&self, vt: VtId, value: u128) -> Option<(OpcodeId, Operand)> {
        let t = self.tables.type_info(vt)?;
        let bits = u32::from(t.bits);
        match t.kind {
            TypeKind::Int if (1..=128).contains(&bits) && self.legal(self.ops.constant, vt) => {
                let shift = 128 - bits;
                Some((self.ops.constant, Operand::int(((value << shift) as i128) >> shift)))
            }
            TypeKind::Float if self.legal(self.ops.fconstant, vt) => Some((self.ops.fconstant, Operand::int(value as i128))),
            _ => None,
        }
    }

    /// A vector whose lanes are all known (`BUILD_VECTOR` of constants, a splat) becomes
    /// a `BITCAST` of one integer constant of its width, lane 0 in the low bits as the
    /// interpreter lays vectors out: `mov.b32 %r1, -1140802560` instead of a constant
    /// per lane and a pack, as llc writes a v2f16 splat. Only where the SM has the
    /// integer constant and a pattern selecting the bitcast.
    fn pack_vector_constant(&mut self, f: &mut Function, b: usize, i: usize, lanes: &[u128]) -> bool {
        let d = f.blocks[b].insts[i].defs[0];
        let vt = self.ty(f, d);
        let (Some(t), sm_index) = (self.tables.type_info(vt), self.tables.sm_index(self.sm)) else { return false };
        let Some(e) = self.tables.type_info(VtId(t.elem)) else { return false };
        let (width, lane_bits) = (u32::from(t.bits), u32::from(e.bits));
        if usize::from(t.lanes) != lanes.len() || width > 64 || lane_bits * lanes.len() as u32 != width || !self.legal(self.ops.bitcast, vt) {
            return false;
        }
        let Some(int) = self.tables.types.iter().find(|x| x.kind == TypeKind::Int && x.lanes == 1 && u32::from(x.bits) == width) else { return false };
        let selects = self.tables.patterns.iter().any(|p| {
            p.opcode == self.ops.bitcast.0 && p.sms >> sm_index & 1 == 1 && p.result() == Some(vt.0) && matches!(p.operands, [(_, PatternOperand::Reg(x))] if *x == int.id)
        });
        if !selects {
            return false;
        }
        let mask = crate::interp::int::mask(lane_bits);
        let packed = lanes.iter().enumerate().fold(0u128, |acc, (k, l)| acc | (l & mask) << (k as u32 * lane_bits));
        let Some(c) = self.constant(f, b, i, VtId(int.id), packed) else { return false };
        let loc = f.blocks[b].insts[i].loc;
        let name = f.blocks[b].insts[i].opcode.name(self.tables);
        let inst = &mut f.blocks[b].insts[i];
        inst.opcode = Opcode::Generic(self.ops.bitcast);
        inst.flags.clear();
        inst.operands = vec![Operand::Value(c)];
        self.uses[c.0 as usize] += 1;
        self.stats.folded += 1;
        self.remark(loc, || format!("folded {name} to a bitcast of the constant {packed:#x}"));
        true
    }

    /// A value holding the constant `value` of type `vt`, inserted before (b, i).
    fn constant(&mut self, f: &mut Function, b: usize, i: usize, vt: VtId, value: u128) -> Option<ValueId> {
        let (op, literal) = self.literal(vt, value)?;
        let key_literal = match literal {
            Operand::Int(x) => x.get(),
            _ => return None,
        };
        // A constant made earlier in this block is reused (blocks are walked in order,
        // so it sits before this position).
        if let Some(&v) = self.made.get(&(b, vt.0 as u16, key_literal)) {
            return Some(v);
        }
        // The name is written into a buffer kept for it: a fresh string per constant
        // was a heap block each in a module that folds thousands.
        let mut base = std::mem::take(&mut self.name_buffer);
        base.clear();
        base.push('k');
        base.push_str(itoa::Buffer::new().format(key_literal.unsigned_abs()));
        let v = self.new_value(f, vt, &base, Some(&[value]));
        self.name_buffer = base;
        let loc = f.blocks[b].insts[i].loc;
        self.inserts.push((b, i, Inst { defs: smallvec::smallvec![v], opcode: Opcode::Generic(op), flags: Default::default(), operands: vec![literal], loc }));
        self.made.insert((b, vt.0 as u16, key_literal), v);
        Some(v)
    }

    /// Early CSE: a pure instruction equal to one in a dominating position (same
    /// opcode, flags, operands and result type) is replaced by it, as LLVM's EarlyCSE
    /// and the DAG's node uniquing do before selection; so selection sees one
    /// `MUL(ZERO_EXTEND(t), 4)` with several users, not several copies it would fold
    /// into several `mad.wide`s. Each key keeps at most a few candidates, so the walk
    /// stays linear.
    fn value_number(&mut self, f: &Function, b: usize, i: usize) {
        let inst = &f.blocks[b].insts[i];
        let Opcode::Generic(op) = inst.opcode else { return };
        let effects = props::TERMINATOR | props::SIDE_EFFECTS | props::MAY_LOAD | props::MAY_STORE | props::CALL | props::CONVERGENT | props::BRANCH;
        let Some(info) = self.tables.opcode_info(op) else { return };
        if info.props & effects != 0 || inst.defs.len() != 1 || matches!(info.name, "PHI" | "UNDEF" | "INTRINSIC" | "ARG") {
            return;
        }
        let d = inst.defs[0];
        if self.repl[d.0 as usize] != d {
            return; // already replaced by a rule
        }
        let key = inst.expression_hash() ^ (f.value(d).ty.0 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let sites = &self.expression_sites;
        let head = self.expressions.find(expression_slot_hash(key), |&s| sites[s as usize].key == key).copied();
        // The sites of this key in the order seen: the first that computes the same
        // expression and comes before (same block) or dominates this one.
        let (mut at, mut seen, mut last) = (head, 0, None);
        let mut earlier = None;
        while let Some(s) = at {
            let site = sites[s as usize];
            let (eb, ei, v) = (site.block as usize, site.index as usize, site.value);
            if f.value(v).ty == f.value(d).ty
                && f.blocks[eb].insts[ei].same_expression(inst)
                && ((eb == b && ei < i) || (eb != b && self.cfg.as_ref().is_some_and(|c| c.dominates(eb, b))))
            {
                earlier = Some(v);
                break;
            }
            seen += 1;
            last = Some(s);
            at = (site.next != NO_NEXT).then_some(site.next);
        }
        match earlier {
            Some(v) => {
                self.repl[d.0 as usize] = v;
                // `d`'s readers now read `v` (an overcount: the dead instruction's own
                // read of `v` stays counted, which only makes single-use rules wait).
                self.uses[v.0 as usize] += self.uses[d.0 as usize];
                self.konst[d.0 as usize] = self.konst[v.0 as usize];
                self.stats.cse += 1;
                let loc = inst.loc;
                let tables = self.tables;
                self.remark(loc, || format!("cse: {} is %{}", inst.opcode.name(tables), f.value(v).name));
            }
            None if seen < SITES_PER_KEY => {
                let new = self.expression_sites.len() as u32;
                self.expression_sites.push(ExpressionSite { key, block: b as u32, index: i as u32, value: d, next: NO_NEXT });
                match last {
                    Some(s) => self.expression_sites[s as usize].next = new,
                    None => {
                        let sites = &self.expression_sites;
                        self.expressions.insert_unique(expression_slot_hash(key), new, |&s| expression_slot_hash(sites[s as usize].key));
                    }
                }
            }
            None => {}
        }
    }

    fn dominates(&self, a: usize, b: usize) -> bool {
        self.cfg.as_ref().is_some_and(|c| c.dominates(a, b))
    }

    fn remark(&mut self, loc: Loc, message: impl FnOnce() -> String) {
        if self.want_remarks {
            self.stats.remarks.push((self.function.clone(), loc, message()));
        }
    }

    /// Tries one rewrite of the instruction at (b, i); true when it changed.
    fn combine(&mut self, f: &mut Function, b: usize, i: usize) -> bool {
        let inst = &f.blocks[b].insts[i];
        let Opcode::Generic(op) = inst.opcode else { return false };
        if inst.defs.len() != 1 {
            return false;
        }
        let d = inst.defs[0];
        // An integer CONSTANT's value is its literal in the type's bits (what the
        // interpreter computes, without resolving the instruction for it).
        if op == self.ops.constant {
            if let (Some(t), [Operand::Int(x)]) = (self.tables.type_info(self.ty(f, d)), inst.operands.as_slice()) {
                if t.kind == TypeKind::Int && t.lanes == 1 {
                    self.set_konst(d, Some(&[x.get() as u128 & crate::interp::int::mask(u32::from(t.bits))]));
                    return false;
                }
            }
        }
        // Constant folding, by the interpreter's evaluation.
        // Lanes are copied only when every operand is a constant (most instructions
        // have a variable one, and collecting into an Option copied until it).
        let operands: Option<Vec<Vec<u128>>> = if inst.uses().all(|v| self.konst(v).is_some()) { inst.uses().map(|v| self.konst(v).map(<[u128]>::to_vec)).collect() } else { None };
        if let Some(operands) = operands {
            if let Evaluation::Values(values) = fold::evaluate(self.tables, f, inst, &operands) {
                let lanes = values.into_iter().next().unwrap_or_default();
                self.set_konst(d, Some(&lanes));
                if lanes.len() > 1 && op != self.ops.bitcast {
                    return self.pack_vector_constant(f, b, i, &lanes);
                }
                if op == self.ops.constant || op == self.ops.fconstant || lanes.len() != 1 {
                    return false;
                }
                let vt = self.ty(f, d);
                if let Some((cop, literal)) = self.literal(vt, lanes[0]) {
                    let loc = inst.loc;
                    let name = inst.opcode.name(self.tables);
                    let inst = &mut f.blocks[b].insts[i];
                    inst.opcode = Opcode::Generic(cop);
                    inst.flags.clear();
                    inst.operands = vec![literal];
                    self.stats.folded += 1;
                    self.remark(loc, || format!("folded {name} to a constant"));
                    return true;
                }
                return false;
            }
        }
        let Some((rewrite, kind)) = self.rule(f, b, i, op, d) else {
            if op == self.ops.sdiv || op == self.ops.udiv {
                let v: Vec<ValueId> = f.blocks[b].insts[i].uses().collect();
                if let [x, y] = v[..] {
                    let list = self.divisions.entry((op, x, y)).or_default();
                    if !list.iter().any(|e| e.2 == d) {
                        list.push((b, i, d));
                    }
                }
            }
            return false;
        };
        let loc = f.blocks[b].insts[i].loc;
        let name = f.blocks[b].insts[i].opcode.name(self.tables);
        match rewrite {
            Rewrite::Value(v) => {
                if self.ty(f, v) != self.ty(f, d) || v == d {
                    return false;
                }
                self.repl[d.0 as usize] = v;
                self.konst[d.0 as usize] = self.konst[v.0 as usize];
                self.remark(loc, || format!("{kind}: {name} is %{}", f.value(v).name));
                // The instruction is now dead; the final sweep removes it. Stop here.
                self.count(kind);
                return false;
            }
            Rewrite::Constant(value) => {
                let vt = self.ty(f, d);
                let Some((cop, literal)) = self.literal(vt, value) else { return false };
                let inst = &mut f.blocks[b].insts[i];
                inst.opcode = Opcode::Generic(cop);
                inst.flags.clear();
                inst.operands = vec![literal];
                self.set_konst(d, Some(&[value]));
                self.remark(loc, || format!("{kind}: {name} is a constant"));
            }
            Rewrite::Inst(new_op, flags, operands) => {
                let inst = &mut f.blocks[b].insts[i];
                let new_name = Opcode::Generic(new_op).name(self.tables);
                inst.opcode = Opcode::Generic(new_op);
                inst.flags = flags;
                for o in &operands {
                    if let Operand::Value(v) = o {
                        self.uses[v.0 as usize] += 1;
                    }
                }
                inst.operands = operands;
                self.remark(loc, || format!("{kind}: {name} becomes {new_name}"));
            }
        }
        self.count(kind);
        true
    }

    /// `x` when `p` is `ADDRSPACECAST x` from a specific address space to the generic
    /// one (the description's `generic: true` pointer type).
    fn specific_source(&self, f: &Function, p: ValueId) -> Option<ValueId> {
        let cast = self.def(f, p).filter(|d| self.is(d, self.ops.addrspacecast))?;
        let x = cast.uses().next()?;
        let info = |v: ValueId| self.tables.type_info(self.ty(f, v));
        let (to, from) = (info(p)?, info(x)?);
        (to.generic && !from.generic && from.kind == TypeKind::Pointer).then_some(x)
    }

    /// A kernel's generic pointer arguments point to global memory (LLVM's
    /// NVPTXLowerArgs for CUDA: kernel arguments come from the host, which can name
    /// only global memory; shared and local memory do not exist before the kernel
    /// starts; the description says which space, `kernel_args`). A generic (`p0`)
    /// argument whose every use is the base of a `PTR_ADD` chain ending in memory
    /// accesses, or a cast to `p1`, is converted once (`cvta.to.global`) and its
    /// address arithmetic and accesses move to the global space: `st [p+256]` becomes
    /// `st.global [p+256]`, which skips the hardware's generic-address window check.
    /// Only when at least one access moves, every use moves (no generic copy is left
    /// to convert back, which would cost a `cvta.global` more) and each access is
    /// selectable in the global space on this SM. Runs before the walk, on the
    /// original layout; the new cast is inserted at the end with the pass's others.
    fn kernel_pointers_to_global(&mut self, f: &mut Function) {
        if f.kind != crate::mir::FunctionKind::Kernel || !f.ssa {
            return;
        }
        // The generic pointer type and the one kernel arguments point into are
        // description facts (`generic`, `kernel_args` in value-types.yaml).
        let pointer = |fact: fn(&target_desc::tables::TypeInfo) -> bool| self.tables.types.iter().find(|t| t.kind == TypeKind::Pointer && fact(t)).map(|t| VtId(t.id));
        let (Some(generic), Some(global), Some(arg)) = (pointer(|t| t.generic), pointer(|t| t.kernel_args), self.tables.opcode("ARG")) else { return };
        let Some(entry) = f.blocks.first() else { return };
        let args: Vec<(usize, ValueId)> = entry.insts.iter().enumerate().filter(|(_, inst)| self.is(inst, arg) && inst.defs.len() == 1 && self.ty(f, inst.defs[0]) == generic).map(|(i, inst)| (i, inst.defs[0])).collect();
        if args.is_empty() || !self.legal(self.ops.ptr_add, global) {
            return;
        }
        // Every value's users, (block, index) per read, in one array (CSR).
        let mut start = vec![0u32; f.values.len() + 1];
        for inst in f.blocks.iter().flat_map(|b| &b.insts) {
            for v in inst.uses() {
                start[v.0 as usize + 1] += 1;
            }
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut users = vec![(0u32, 0u32); start[f.values.len()] as usize];
        let mut next = start.clone();
        for (b, block) in f.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                for v in inst.uses() {
                    users[next[v.0 as usize] as usize] = (b as u32, i as u32);
                    next[v.0 as usize] += 1;
                }
            }
        }
        for (at, a) in args {
            // The address tree of `a`: values (`a` first, then `PTR_ADD`s on it), the
            // accesses through them (block, index, address slot), the casts to `p1`.
            let mut tree = vec![a];
            let mut accesses: Vec<(usize, usize, usize)> = Vec::new();
            let mut casts: Vec<(ValueId, ValueId)> = Vec::new();
            let mut k = 0;
            let mut movable = true;
            'walk: while k < tree.len() {
                let v = tree[k];
                k += 1;
                for &(b, i) in &users[start[v.0 as usize] as usize..start[v.0 as usize + 1] as usize] {
                    let inst = &f.blocks[b as usize].insts[i as usize];
                    let Opcode::Generic(op) = inst.opcode else {
                        movable = false;
                        break 'walk;
                    };
                    let slots: smallvec::SmallVec<[usize; 2]> = inst.operands.iter().enumerate().filter(|(_, o)| **o == Operand::Value(v)).map(|(s, _)| s).collect();
                    let def = (inst.defs.len() == 1).then(|| inst.defs[0]);
                    let info = self.tables.opcode_info(op);
                    let address = info.and_then(|info| crate::mir::address_slots(info.name).map(|s| s.0).or_else(|| crate::mir::pointer_operand_slot(info)));
                    match def {
                        Some(d) if op == self.ops.ptr_add && slots[..] == [0] && self.ty(f, d) == generic => tree.push(d),
                        Some(d) if op == self.ops.addrspacecast && self.ty(f, d) == global => casts.push((d, v)),
                        _ if address.is_some_and(|s| slots[..] == [s]) => accesses.push((b as usize, i as usize, slots[0])),
                        _ => {
                            movable = false;
                            break 'walk;
                        }
                    }
                }
            }
            if !movable || accesses.is_empty() {
                continue;
            }
            // Every access must select in the global space: asked with the tree retyped.
            for &v in &tree {
                f.values[v.0 as usize].ty = global;
            }
            let selectable = accesses.iter().all(|&(b, i, _)| {
                let inst = f.blocks[b].insts[i].clone();
                let Opcode::Generic(op) = inst.opcode else { return false };
                self.selectable(f, &inst, op)
            });
            f.values[a.0 as usize].ty = generic;
            if !selectable {
                for &v in &tree[1..] {
                    f.values[v.0 as usize].ty = generic;
                }
                continue;
            }
            let name = format!("{}.global", f.value(a).name);
            let g = self.insert(f, 0, at + 1, self.ops.addrspacecast, vec![Operand::Value(a)], global, &name);
            let direct = &users[start[a.0 as usize] as usize..start[a.0 as usize + 1] as usize];
            for &(b, i) in direct {
                for o in &mut f.blocks[b as usize].insts[i as usize].operands {
                    if *o == Operand::Value(a) {
                        *o = Operand::Value(g);
                    }
                }
            }
            self.uses[g.0 as usize] = direct.len() as u32;
            self.uses[a.0 as usize] -= direct.len() as u32;
            // A cast to `p1` of a value now in `p1` is that value; the cast, left
            // without readers, goes with the pass's dead code.
            let cast_count = casts.len();
            for (c, v) in casts {
                let v = if v == a { g } else { v };
                self.repl[c.0 as usize] = v;
                self.uses[v.0 as usize] += self.uses[c.0 as usize].saturating_sub(1);
                self.uses[c.0 as usize] = 0;
            }
            let loc = f.blocks[0].insts[at].loc;
            self.count("address space");
            let (count, cast_count) = (accesses.len(), cast_count);
            self.remark(loc, || format!("address space: kernel argument %{} points to global memory: converted once, its accesses ({count}) and casts to p1 ({cast_count}) use the global space", f.value(a).name));
        }
    }

    /// Address-space inference (LLVM's InferAddressSpaces, one cast deep): a load,
    /// store or atomic through a generic pointer cast from a specific space accesses
    /// that space directly, `ld [cvta.shared(p)]` becoming `ld.shared [p]`, when the
    /// description has a pattern for the access in that space on this SM, flags
    /// included (never a write to read-only memory). Exact: the generic address of a
    /// byte and its specific address name the same byte, and an atomic's ordering and
    /// scope do not depend on how its address is written.
    fn access_specific_space(&mut self, f: &mut Function, b: usize, i: usize) {
        let inst = &f.blocks[b].insts[i];
        let Opcode::Generic(op) = inst.opcode else { return };
        let Some(info) = self.tables.opcode_info(op) else { return };
        let Some(slot) = crate::mir::address_slots(info.name).map(|s| s.0).or_else(|| crate::mir::pointer_operand_slot(info)) else { return };
        let Some(&Operand::Value(p)) = inst.operands.get(slot) else { return };
        let Some(x) = self.specific_source(f, p) else { return };
        let xt = self.ty(f, x);
        let writes = self.tables.opcode_info(op).is_some_and(|o| o.props & props::MAY_STORE != 0);
        if writes && !self.tables.type_info(xt).is_some_and(|t| t.writable) {
            return;
        }
        let mut changed = inst.clone();
        changed.operands[slot] = Operand::Value(x);
        if !self.selectable(f, &changed, op) {
            return;
        }
        let loc = changed.loc;
        let name = changed.opcode.name(self.tables);
        self.uses[x.0 as usize] += 1;
        f.blocks[b].insts[i] = changed;
        self.count("address space");
        let space = self.tables.type_info(xt).map_or("?", |t| t.name);
        self.remark(loc, || format!("address space: {name} through %{} accesses {space} directly", f.value(p).name));
    }

    /// A full-width load whose only user is a `BITCAST` to `vt` loads `vt` instead (LLVM's
    /// DAG combine of `bitcast (load)`): memory holds bits, and a load of either type
    /// reads the same ones, so the register that would be copied is written directly.
    /// Only plain, volatile and invariant loads (an extending load's bits depend on its
    /// type), and only where the SM can select the load of `vt`. Retypes `x` in place.
    fn load_as(&mut self, f: &mut Function, x: ValueId, vt: VtId) -> bool {
        let Some(load) = self.def(f, x).filter(|d| self.is(d, self.ops.load)).cloned() else { return false };
        if self.uses[x.0 as usize] != 1 || load.defs.len() != 1 || !load.flags.iter().all(|fl| FULL_WIDTH_FLAGS.contains(&*fl)) || !self.legal(self.ops.load, vt) {
            return false;
        }
        let old = self.ty(f, x);
        f.values[x.0 as usize].ty = vt;
        if self.selectable(f, &load, self.ops.load) {
            return true;
        }
        f.values[x.0 as usize].ty = old;
        false
    }

    /// Every `BITCAST` of a load it alone reads becomes that load ([`Self::load_as`]).
    /// Runs on dead-code-free code with fresh use counts, so a single reader is exact.
    fn fold_bitcast_loads(&mut self, f: &mut Function) {
        let mut folded = Vec::new();
        for b in 0..f.blocks.len() {
            for i in 0..f.blocks[b].insts.len() {
                let inst = &f.blocks[b].insts[i];
                let (true, [d], [Operand::Value(x)]) = (self.is(inst, self.ops.bitcast), inst.defs.as_slice(), inst.operands.as_slice()) else { continue };
                let (d, x, loc) = (*d, *x, inst.loc);
                if self.load_as(f, x, self.ty(f, d)) {
                    self.repl[d.0 as usize] = x;
                    folded.push((b, i));
                    self.count("bitcast of a load");
                    self.remark(loc, || format!("bitcast of a load: %{} loads {}", f.value(x).name, f.value(d).name));
                }
            }
        }
        if folded.is_empty() {
            return;
        }
        for block in &mut f.blocks {
            for inst in &mut block.insts {
                self.resolve_operands(inst);
            }
        }
        f.remove_insts(folded);
    }

    /// A store of a `BITCAST` stores the bitcast's source instead (the bits in memory are
    /// the same), when the SM can select that store: the copy into another register
    /// class goes away once the bitcast has no other user.
    fn store_bitcast_source(&mut self, f: &mut Function, b: usize, i: usize) {
        let inst = &f.blocks[b].insts[i];
        if !self.is(inst, self.ops.store) || !inst.flags.iter().all(|fl| FULL_WIDTH_FLAGS.contains(&*fl)) {
            return;
        }
        let Some(&Operand::Value(v)) = inst.operands.first() else { return };
        let Some(cast) = self.def(f, v).filter(|d| self.is(d, self.ops.bitcast)) else { return };
        let Some(x) = cast.uses().next() else { return };
        let mut changed = inst.clone();
        changed.operands[0] = Operand::Value(x);
        if !self.selectable(f, &changed, self.ops.store) {
            return;
        }
        let loc = changed.loc;
        self.uses[x.0 as usize] += 1;
        self.uses[v.0 as usize] = self.uses[v.0 as usize].saturating_sub(1);
        f.blocks[b].insts[i] = changed;
        self.count("bitcast of a store");
        self.remark(loc, || format!("bitcast of a store: STORE of %{} stores %{}", f.value(v).name, f.value(x).name));
    }

    /// Whether some pattern of the SM could select `inst` (root opcode, flags, and the
    /// types of its results and register operands; nested trees are not looked at).
    /// Answers are kept per shape, so a kernel of many such accesses scans the
    /// patterns once per shape.
    fn selectable(&mut self, f: &Function, inst: &Inst, op: OpcodeId) -> bool {
        let operands: Vec<&Operand> = inst.operands.iter().filter(|o| !matches!(o, Operand::Align(_))).collect();
        let shape = |o: &Operand| match o {
            Operand::Value(v) => i32::from(self.ty(f, *v).0),
            _ => -1,
        };
        let key = (op.0, inst.flags.join("."), inst.defs.iter().map(|d| i32::from(self.ty(f, *d).0)).chain(operands.iter().map(|o| shape(o))).collect::<Vec<i32>>());
        if let Some(&known) = self.selectable_shapes.get(&key) {
            return known;
        }
        let answer = self.any_pattern_selects(f, inst, op, &operands);
        self.selectable_shapes.insert(key, answer);
        answer
    }

    fn any_pattern_selects(&self, f: &Function, inst: &Inst, op: OpcodeId, operands: &[&Operand]) -> bool {
        let sm_index = self.tables.sm_index(self.sm);
        let mut flags: Vec<&str> = inst.flags.iter().copied().collect();
        flags.sort_unstable();
        self.tables.patterns.iter().filter(|p| p.opcode == op.0 && p.sms >> sm_index & 1 == 1).any(|p| {
            let Some(root) = p.nodes.first() else { return false };
            let flags_fit = p.flags.iter().all(|fl| flags.contains(fl))
                && flags.iter().all(|fl| p.flags.contains(fl) || p.flag_groups.iter().any(|&g| self.tables.flag_groups[g as usize].has_flag(fl)))
                // Each flag group needs a member for these flags on this SM (`.sys`
                // before sm_60 has none), as selection will.
                && (p.flag_groups.is_empty() || self.tables.match_flags(p, &flags, sm_index).is_some());
            let results_fit = p.any_results
                || (p.results.len() == inst.defs.len()
                    && p.results.iter().zip(&inst.defs).all(|(r, d)| match r {
                        PatternResult::Reg(t) => self.ty(f, *d).0 == *t,
                        PatternResult::Flag => true,
                    }));
            let args_fit = root.args.len() <= operands.len()
                && root.args.iter().zip(operands).all(|(arg, actual)| {
                    let want = match *arg {
                        NodeArg::Leaf(l) => match p.operands.get(l as usize).map(|o| o.1) {
                            Some(PatternOperand::Reg(t) | PatternOperand::Imm(t) | PatternOperand::ImmIs(t, _) | PatternOperand::ImmRange(t, ..) | PatternOperand::LowMask(t)) => Some(t),
                            _ => None,
                        },
                        NodeArg::Node(m) => p.nodes.get(m as usize).and_then(|n| n.ty),
                    };
                    match (want, actual) {
                        (Some(t), Operand::Value(v)) => self.ty(f, *v).0 == t,
                        (Some(_), _) => false,
                        (None, _) => true,
                    }
                });
            flags_fit && results_fit && args_fit
        })
    }

    fn count(&mut self, kind: &str) {
        match kind {
            "identity" => self.stats.simplified += 1,
            "strength reduction" => self.stats.strength_reduced += 1,
            "reassociation" => self.stats.reassociated += 1,
            "vector chain" => self.stats.vector_chains += 1,
            "contraction" => self.stats.contracted += 1,
            "address space" => self.stats.address_spaces += 1,
            _ => self.stats.simplified += 1,
        }
    }

    /// The rules, by opcode. Returns the rewrite and its kind (for statistics).
    fn rule(&mut self, f: &mut Function, b: usize, i: usize, op: OpcodeId, d: ValueId) -> Option<(Rewrite, &'static str)> {
        // The instruction is lent to the rules, which may insert constants into `f`
        // (cloning it for every attempt was 2% of a compile of many small functions).
        // What stays in its place has its position, which is all an insertion reads.
        let slot = &mut f.blocks[b].insts[i];
        let placeholder = Inst { defs: Default::default(), opcode: slot.opcode, flags: Default::default(), operands: Vec::new(), loc: slot.loc };
        let inst = std::mem::replace(slot, placeholder);
        let found = self.rule_for(f, b, i, op, d, &inst);
        f.blocks[b].insts[i] = inst;
        found
    }

    fn rule_for(&mut self, f: &mut Function, b: usize, i: usize, op: OpcodeId, d: ValueId, inst: &Inst) -> Option<(Rewrite, &'static str)> {
        let ops = self.ops;
        // Inline: this runs for every instruction (a heap vector each was most of the
        // combiner's allocations).
        let vals: smallvec::SmallVec<[ValueId; 4]> = inst.uses().collect();
        let vt = self.ty(f, d);
        let bits = self.int_bits(vt);
        let ones = bits.map(|n| if n >= 128 { u128::MAX } else { (1u128 << n) - 1 });
        let c = |k: usize| vals.get(k).and_then(|v| self.scalar(*v));
        let identity = |r: Rewrite| Some((r, "identity"));
        if bits.is_some() && [ops.add, ops.sub, ops.mul, ops.and, ops.or, ops.xor, ops.shl, ops.sra, ops.srl, ops.sdiv, ops.udiv, ops.urem, ops.srem].contains(&op) && vals.len() == 2 {
            let (x, y) = (vals[0], vals[1]);
            let (cx, cy) = (c(0), c(1));
            let commutative = [ops.add, ops.mul, ops.and, ops.or, ops.xor].contains(&op);
            // For a commutative operation, look at the constant on either side.
            let (var, k) = match (cx, cy) {
                (_, Some(k)) => (Some(x), Some(k)),
                (Some(k), None) if commutative => (Some(y), Some(k)),
                _ => (None, None),
            };
            let ones = ones?;
            if op == ops.add || op == ops.or || op == ops.xor {
                if k == Some(0) {
                    return identity(Rewrite::Value(var?));
                }
            }
            if op == ops.sub && cy == Some(0) {
                return identity(Rewrite::Value(x));
            }
            if (op == ops.sub || op == ops.xor) && x == y {
                return identity(Rewrite::Constant(0));
            }
            if (op == ops.and || op == ops.or) && x == y {
                return identity(Rewrite::Value(x));
            }
            if op == ops.and && k == Some(0) || op == ops.mul && k == Some(0) {
                return identity(Rewrite::Constant(0));
            }
            if op == ops.and && k == Some(ones) {
                return identity(Rewrite::Value(var?));
            }
            if op == ops.or && k == Some(ones) {
                return identity(Rewrite::Constant(ones));
            }
            if (op == ops.mul || op == ops.sdiv || op == ops.udiv) && (if op == ops.mul { k } else { cy }) == Some(1) {
                return identity(Rewrite::Value(if op == ops.mul { var? } else { x }));
            }
            if (op == ops.shl || op == ops.sra || op == ops.srl) && cy == Some(0) {
                return identity(Rewrite::Value(x));
            }
            // Powers of two: x * 2^n = x << n, x /u 2^n = x >>u n, x %u 2^n = x & (2^n - 1).
            let power = |k: u128| (k != 0 && k & (k - 1) == 0).then(|| k.trailing_zeros());
            // Not of an extended value: `MUL(SIGN_EXTEND(a), 2^n)` is one `mul.wide`
            // for the selector's tree patterns.
            let extended = var.and_then(|v| self.def(f, v)).is_some_and(|d| self.is(d, ops.sext) || self.is(d, ops.zext));
            if op == ops.mul && !extended && k.is_some_and(|k| power(k).is_some_and(|n| n > 0)) {
                let n = power(k?)?;
                let amount = self.shift_amount(f, b, i, vt, n)?;
                return Some((Rewrite::Inst(ops.shl, Default::default(), vec![Operand::Value(var?), Operand::Value(amount)]), "strength reduction"));
            }
            if op == ops.udiv && cy.is_some_and(|k| power(k).is_some_and(|n| n > 0)) && self.legal(ops.srl, vt) {
                let amount = self.shift_amount(f, b, i, vt, power(cy?)?)?;
                return Some((Rewrite::Inst(ops.srl, Default::default(), vec![Operand::Value(x), Operand::Value(amount)]), "strength reduction"));
            }
            if op == ops.urem && cy.is_some_and(|k| power(k).is_some()) && self.legal(ops.and, vt) {
                let mask = self.constant(f, b, i, vt, cy? - 1)?;
                return Some((Rewrite::Inst(ops.and, Default::default(), vec![Operand::Value(x), Operand::Value(mask)]), "strength reduction"));
            }
            // x rem y next to a dominating x div y: x - (x div y) * y, one division.
            if (op == ops.srem || op == ops.urem) && self.legal(ops.mul, vt) && self.legal(ops.sub, vt) {
                let div_op = if op == ops.srem { ops.sdiv } else { ops.udiv };
                let found = self.divisions.get(&(div_op, x, y)).and_then(|list| {
                    list.iter().find(|(db, di, _)| (*db == b && *di < i) || (*db != b && self.dominates(*db, b))).map(|e| e.2)
                });
                if let Some(q) = found {
                    let base = format!("{}.mul", f.value(d).name);
                    let product = self.insert(f, b, i, ops.mul, vec![Operand::Value(q), Operand::Value(y)], vt, &base);
                    return Some((Rewrite::Inst(ops.sub, Default::default(), vec![Operand::Value(x), Operand::Value(product)]), "strength reduction"));
                }
            }
            // (x + c1) + c2 = x + (c1 + c2).
            if op == ops.add {
                if let (Some(var), Some(k2)) = (var, k) {
                    let inner = self.def(f, var).filter(|d| self.is(d, ops.add)).map(|d| {
                        let mut uses = d.uses();
                        (uses.next(), uses.next())
                    });
                    if let Some((Some(u0), Some(u1))) = inner {
                        let iv = [u0, u1];
                        let (ix, k1) = match (self.scalar(iv[0]), self.scalar(iv[1])) {
                            (_, Some(k1)) => (iv[0], k1),
                            (Some(k1), None) => (iv[1], k1),
                            _ => return None,
                        };
                        let sum = self.constant(f, b, i, vt, k1.wrapping_add(k2) & ones)?;
                        return Some((Rewrite::Inst(ops.add, inst.flags.clone(), vec![Operand::Value(ix), Operand::Value(sum)]), "reassociation"));
                    }
                }
            }
            return None;
        }
        if op == ops.addrspacecast && vals.len() == 1 {
            // A round trip through the generic space: cvta.to.shared(cvta.shared(x)) = x.
            let inner = self.def(f, vals[0]).filter(|d| self.is(d, ops.addrspacecast))?;
            let x = inner.uses().next()?;
            return (self.ty(f, x) == vt).then_some((Rewrite::Value(x), "address space"));
        }
        if op == ops.ptr_add && vals.len() == 2 {
            // An offset from a pointer cast to the generic space is taken in the
            // specific space first: the cast then reaches the accesses, which use the
            // specific space directly (see `access_specific_space`). When the cast has
            // other users it stays for them, so only a constant offset (which the
            // accesses fold into their address) is moved.
            let movable = self.uses[vals[0].0 as usize] == 1 || self.scalar(vals[1]).is_some();
            if let Some(x) = self.specific_source(f, vals[0]).filter(|_| movable) {
                let xt = self.ty(f, x);
                let same_width = self.tables.type_info(xt).map(|t| t.bits) == self.tables.type_info(vt).map(|t| t.bits);
                if same_width && self.legal(ops.ptr_add, xt) && self.legal(ops.addrspacecast, vt) {
                    let base = format!("{}.sp", f.value(d).name);
                    let specific = self.insert(f, b, i, ops.ptr_add, vec![Operand::Value(x), Operand::Value(vals[1])], xt, &base);
                    return Some((Rewrite::Inst(ops.addrspacecast, Default::default(), vec![Operand::Value(specific)]), "address space"));
                }
            }
        }
        if op == ops.ptr_add && vals.len() == 2 {
            let (p, off) = (vals[0], vals[1]);
            let k2 = self.scalar(off)?;
            if k2 == 0 {
                return identity(Rewrite::Value(p));
            }
            let inner = self.def(f, p).filter(|d| self.is(d, ops.ptr_add)).cloned()?;
            let iv: Vec<ValueId> = inner.uses().collect();
            let k1 = self.scalar(iv[1])?;
            let off_ty = self.ty(f, off);
            let sum = self.constant(f, b, i, off_ty, k1.wrapping_add(k2) & u128::from(u64::MAX))?;
            return Some((Rewrite::Inst(ops.ptr_add, inst.flags.clone(), vec![Operand::Value(iv[0]), Operand::Value(sum)]), "reassociation"));
        }
        if op == ops.select && vals.len() == 3 {
            let (cond, x, y) = (vals[0], vals[1], vals[2]);
            if x == y {
                return identity(Rewrite::Value(x));
            }
            if let Some(k) = self.scalar(cond) {
                return identity(Rewrite::Value(if k & 1 == 1 { x } else { y }));
            }
            // select c, true, false = c (booleans).
            if self.ty(f, cond) == vt && self.scalar(x) == Some(1) && self.scalar(y) == Some(0) {
                return identity(Rewrite::Value(cond));
            }
            return self.min_max(f, cond, x, y, vt).map(|r| (r, "min/max"));
        }
        if op == ops.setcc && vals.len() == 2 && vals[0] == vals[1] {
            let cc = inst.cond_code()?;
            // Only integers and pointers: a float compared with itself is unordered
            // when it is NaN.
            let operand_kind = self.tables.type_info(self.ty(f, vals[0]))?.kind;
            if !matches!(operand_kind, TypeKind::Int | TypeKind::Pointer) {
                return None;
            }
            let cond = crate::interp::Cond::from_name(self.tables.cond_code_info(cc)?.name)?;
            let holds = cond.relations & crate::interp::EQUAL != 0;
            return identity(Rewrite::Constant(u128::from(holds)));
        }
        if [ops.zext, ops.sext, ops.anyext, ops.truncate].contains(&op) && vals.len() == 1 {
            let x = vals[0];
            let inner = self.def(f, x).cloned()?;
            let Opcode::Generic(iop) = inner.opcode else { return None };
            let src = inner.uses().next()?;
            let (src_bits, mid_bits, dst_bits) = (self.int_bits(self.ty(f, src))?, self.int_bits(self.ty(f, x))?, bits?);
            if op == ops.truncate && [ops.zext, ops.sext, ops.anyext].contains(&iop) {
                // trunc(ext(y)) is y when the widths match, a narrower extension or
                // truncation of y otherwise.
                if src_bits == dst_bits {
                    return identity(Rewrite::Value(src));
                }
                let new_op = if dst_bits < src_bits { ops.truncate } else { iop };
                if self.legal(new_op, vt) && dst_bits <= mid_bits {
                    return identity(Rewrite::Inst(new_op, Default::default(), vec![Operand::Value(src)]));
                }
                return None;
            }
            if op == ops.truncate && iop == ops.truncate && self.legal(ops.truncate, vt) {
                return identity(Rewrite::Inst(ops.truncate, Default::default(), vec![Operand::Value(src)]));
            }
            // ext(ext(y)): zext of zext, sext of sext, sext of zext (the inner one
            // already cleared the sign) are one extension of y.
            let same = (op == ops.zext && iop == ops.zext) || (op == ops.sext && (iop == ops.sext || iop == ops.zext)) || (op == ops.anyext && iop == ops.anyext);
            if same && src_bits < mid_bits && self.legal(iop, vt) {
                return identity(Rewrite::Inst(iop, Default::default(), vec![Operand::Value(src)]));
            }
            return None;
        }
        if op == ops.copy && vals.len() == 1 && self.ty(f, vals[0]) == vt {
            return identity(Rewrite::Value(vals[0]));
        }
        if op == ops.bitcast && vals.len() == 1 {
            let x = vals[0];
            if self.ty(f, x) == vt {
                return identity(Rewrite::Value(x));
            }
            let inner = self.def(f, x).filter(|d| self.is(d, ops.bitcast)).cloned()?;
            let src = inner.uses().next()?;
            if self.ty(f, src) == vt {
                return identity(Rewrite::Value(src));
            }
            if self.legal(ops.bitcast, vt) {
                return identity(Rewrite::Inst(ops.bitcast, Default::default(), vec![Operand::Value(src)]));
            }
            return None;
        }
        if op == ops.extract_vector_elt && vals.len() == 2 {
            let (v, index) = (vals[0], vals[1]);
            let lane = self.scalar(index)? as usize;
            let inner = self.def(f, v).cloned()?;
            if self.is(&inner, ops.build_vector) {
                let elements: Vec<ValueId> = inner.uses().collect();
                let e = *elements.get(lane)?;
                return Some((Rewrite::Value(e), "vector chain"));
            }
            if self.is(&inner, ops.insert_vector_elt) {
                let iv: Vec<ValueId> = inner.uses().collect();
                let at = self.scalar(iv[2])? as usize;
                if at == lane {
                    return Some((Rewrite::Value(iv[1]), "vector chain"));
                }
                let mut operands = inst.operands.clone();
                operands[0] = Operand::Value(iv[0]);
                return Some((Rewrite::Inst(ops.extract_vector_elt, inst.flags.clone(), operands), "vector chain"));
            }
            return None;
        }
        if op == ops.build_vector && !vals.is_empty() {
            // A vector rebuilt from all its own lanes, in order, is that vector.
            let mut source = None;
            for (lane, e) in vals.iter().enumerate() {
                let ex = self.def(f, *e).filter(|d| self.is(d, ops.extract_vector_elt))?;
                let ev: Vec<ValueId> = ex.uses().collect();
                if self.scalar(ev[1]) != Some(lane as u128) || source.is_some_and(|s| s != ev[0]) {
                    return None;
                }
                source = Some(ev[0]);
            }
            let source = source?;
            let lanes = self.tables.type_info(self.ty(f, source)).map(|t| t.lanes as usize);
            if self.ty(f, source) == vt && lanes == Some(vals.len()) {
                return Some((Rewrite::Value(source), "vector chain"));
            }
            return None;
        }
        if op == ops.insert_vector_elt && vals.len() == 3 {
            // insert(v, extract(v, i), i) is v.
            let (v, e, index) = (vals[0], vals[1], vals[2]);
            let lane = self.scalar(index)?;
            let ex = self.def(f, e).filter(|d| self.is(d, ops.extract_vector_elt))?;
            let ev: Vec<ValueId> = ex.uses().collect();
            if ev[0] == v && self.scalar(ev[1]) == Some(lane) {
                return Some((Rewrite::Value(v), "vector chain"));
            }
            return None;
        }
        if op == ops.extract_element && vals.len() == 1 {
            let pair = self.def(f, vals[0]).filter(|d| self.is(d, ops.build_pair))?;
            let halves: Vec<ValueId> = pair.uses().collect();
            let which = inst.operands.iter().find_map(|o| if let Operand::Int(k) = o { Some(*k) } else { None })?;
            return Some((Rewrite::Value(*halves.get(usize::try_from(which.get()).ok()?)?), "vector chain"));
        }
        if op == ops.fneg && vals.len() == 1 && inst.flags.is_empty() {
            let inner = self.def(f, vals[0]).filter(|d| self.is(d, ops.fneg) && d.flags.is_empty())?;
            return identity(Rewrite::Value(inner.uses().next()?));
        }
        if (op == ops.fadd || op == ops.fsub) && inst.has_flag(CONTRACT) && vals.len() == 2 && self.legal(ops.fma, vt) {
            return self.contract(f, b, i, inst, op, &vals, vt);
        }
        None
    }

    /// FADD.contract(FMUL.contract(a, b), c) = FMA(a, b, c), and the FSUB forms with an
    /// FNEG, when the product has no other user (else both would be computed).
    #[allow(clippy::too_many_arguments)]
    fn contract(&mut self, f: &mut Function, b: usize, i: usize, inst: &Inst, op: OpcodeId, vals: &[ValueId], vt: VtId) -> Option<(Rewrite, &'static str)> {
        let ops = self.ops;
        let flags: crate::mir::Flags = inst.flags.iter().filter(|x| **x != CONTRACT).cloned().collect();
        let product = |v: ValueId| -> Option<(ValueId, ValueId)> {
            let m = self.def(f, v).filter(|d| self.is(d, ops.fmul) && d.has_flag(CONTRACT))?;
            let mflags: Vec<&&str> = m.flags.iter().filter(|x| **x != CONTRACT).collect();
            if self.uses[v.0 as usize] != 1 || mflags.len() != flags.len() || !mflags.iter().all(|x| flags.contains(x)) {
                return None;
            }
            let mv: Vec<ValueId> = m.uses().collect();
            Some((mv[0], mv[1]))
        };
        let (x, y) = (vals[0], vals[1]);
        let fma = |a: ValueId, m: ValueId, c: ValueId| Rewrite::Inst(ops.fma, flags.clone(), vec![Operand::Value(a), Operand::Value(m), Operand::Value(c)]);
        if let Some((a, m)) = product(x) {
            if op == ops.fadd {
                return Some((fma(a, m, y), "contraction"));
            }
            // a*m - y = fma(a, m, -y)
            let neg = self.negate(f, b, i, y, vt)?;
            return Some((fma(a, m, neg), "contraction"));
        }
        if let Some((a, m)) = product(y) {
            if op == ops.fadd {
                return Some((fma(a, m, x), "contraction"));
            }
            // x - a*m = fma(-a, m, x)
            let neg = self.negate(f, b, i, a, vt)?;
            return Some((fma(neg, m, x), "contraction"));
        }
        None
    }

    /// A new `FNEG v` inserted before (b, i) (exact: it flips the sign bit).
    fn negate(&mut self, f: &mut Function, b: usize, i: usize, v: ValueId, vt: VtId) -> Option<ValueId> {
        if !self.legal(self.ops.fneg, vt) {
            return None;
        }
        let base = format!("{}.neg", f.value(v).name);
        Some(self.insert(f, b, i, self.ops.fneg, vec![Operand::Value(v)], vt, &base))
    }

    /// A new value of type `vt` named after `base` (made unique), with the pass's
    /// per-value facts.
    fn new_value(&mut self, f: &mut Function, vt: VtId, base: &str, konst: Option<&[u128]>) -> ValueId {
        let names = self.names.get_or_insert_with(|| crate::mir::NameSet::of(f));
        let v = f.fresh_value(names, base, vt);
        self.konst.push(NOT_CONSTANT);
        self.set_konst(v, konst);
        self.site.push_undefined();
        self.repl.push(v);
        self.uses.push(0);
        v
    }

    /// A new instruction `op operands` of type `vt` inserted before (b, i), its result
    /// named after `base`.
    #[allow(clippy::too_many_arguments)]
    fn insert(&mut self, f: &mut Function, b: usize, i: usize, op: OpcodeId, operands: Vec<Operand>, vt: VtId, base: &str) -> ValueId {
        let v = self.new_value(f, vt, base, None);
        self.uses[v.0 as usize] = 1;
        for o in &operands {
            if let Operand::Value(u) = o {
                self.uses[u.0 as usize] += 1;
            }
        }
        let loc = f.blocks[b].insts[i].loc;
        self.inserts.push((b, i, Inst { defs: smallvec::smallvec![v], opcode: Opcode::Generic(op), flags: Default::default(), operands, loc }));
        v
    }

    /// The shift amount `n` for a shift of a `vt` value: a constant of the type the
    /// description's SHL takes for `vt` (the legalizer uses i32).
    fn shift_amount(&mut self, f: &mut Function, b: usize, i: usize, vt: VtId, n: u32) -> Option<ValueId> {
        if !self.legal(self.ops.shl, vt) {
            return None;
        }
        let i32_ty = self.tables.vt("i32")?;
        self.constant(f, b, i, i32_ty, u128::from(n))
    }
}

#[cfg(test)]
mod tests;
