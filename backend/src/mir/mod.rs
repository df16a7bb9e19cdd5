//! MIR: the textual machine IR of `docs/mir-spec.md`, in memory.
//!
//! The front end of the pipeline: [`parser`] reads a `.mir` file (YAML documents via
//! serde_yaml, bodies via [`syntax`]: a line scanner checked against the pest grammar
//! in `body.pest`, which decides every case the scanner is unsure of), [`verifier`] checks it, and
//! [`printer`] writes it back in a form that parses to the same module, so every stage
//! of the pipeline can be printed and re-read. Opcode, type, condition-code and
//! intrinsic names are resolved through the target tables: the vocabulary comes from
//! the description, not from this module.

mod header;
pub mod parser;
pub mod printer;
pub mod syntax;
pub mod verifier;

use target_desc::tables::{CondCodeId, OpcodeId, VtId};

/// A 1-based position in the input file.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub name: Option<String>,
    pub globals: Vec<Global>,
    pub functions: Vec<Function>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AddressSpace {
    Global,
    Shared,
    Const,
}

impl AddressSpace {
    pub const ALL: [AddressSpace; 3] = [AddressSpace::Global, AddressSpace::Shared, AddressSpace::Const];

    pub fn name(self) -> &'static str {
        match self {
            AddressSpace::Global => "global",
            AddressSpace::Shared => "shared",
            AddressSpace::Const => "const",
        }
    }

    /// The pointer address space number (`p1`, `p3`, `p4`).
    pub fn number(self) -> u16 {
        match self {
            AddressSpace::Global => 1,
            AddressSpace::Shared => 3,
            AddressSpace::Const => 4,
        }
    }
}

/// A literal of a global's initializer.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum InitValue {
    Int(i128),
    Float(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub name: String,
    pub space: AddressSpace,
    pub ty: VtId,
    pub count: u32,
    pub align: Option<u32>,
    pub init: Option<Vec<InitValue>>,
    pub loc: Loc,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// `.entry`
    Kernel,
    /// `.func`
    Device,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: VtId,
    /// `noalias: true` (docs/mir-extensions.md): a kernel pointer parameter no other
    /// pointer of the kernel reaches, as LLVM's `noalias` (CUDA's `__restrict__`).
    pub noalias: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attributes {
    pub maxntid: Option<Vec<u32>>,
    pub minnctapersm: Option<u32>,
    pub maxnreg: Option<u32>,
}

impl Attributes {
    pub fn is_empty(&self) -> bool {
        self.maxntid.is_none() && self.minnctapersm.is_none() && self.maxnreg.is_none()
    }
}

/// An object of a function's `.local` frame (docs/mir-extensions.md, "Frame objects"):
/// a local array of the input, or a spill slot the allocator made. `FRAME_INDEX k`
/// yields the `p5` address of object `k`; the emitter lays the objects out in one
/// `__local_depotN` array.
/// The largest frame object: the local memory a PTX thread may use is far smaller
/// (512 KiB on current SMs), and the simulator's frame limit is 16 MiB.
pub const MAX_FRAME_OBJECT_BYTES: u64 = 1 << 24;

#[derive(Clone, Debug, PartialEq)]
pub struct FrameObject {
    pub name: Option<String>,
    pub size: u64,
    pub align: u32,
    /// Made by the spiller: only its own loads and stores touch it.
    pub spill: bool,
}

/// A value's name: a string stored inline when it is at most 24 bytes long.
pub type ValueName = compact_str::CompactString;

/// Index of a virtual register in [`Function::values`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValueId(pub u32);

#[derive(Clone, Debug, PartialEq)]
pub struct ValueInfo {
    /// The name without `%`. Kept inline up to 24 bytes (every name the legalizer and
    /// the passes derive, `%q.lo.3`, fits): a heap string per value was an allocation
    /// for each of the million values a 100k-line kernel's legalization makes.
    pub name: ValueName,
    pub ty: VtId,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub kind: FunctionKind,
    pub params: Vec<Param>,
    pub returns: Vec<VtId>,
    pub attributes: Attributes,
    /// The `.local` frame objects, indexed by `FRAME_INDEX`.
    pub frame: Vec<FrameObject>,
    pub values: Vec<ValueInfo>,
    pub blocks: Vec<Block>,
    /// Where `returns:` and `attributes:` are written, for errors about them.
    pub returns_loc: Option<Loc>,
    pub attributes_loc: Option<Loc>,
    /// `false` once PHI elimination has run: a register may then be defined more than
    /// once (written `ssa: false` in the function document).
    pub ssa: bool,
    pub loc: Loc,
}

impl Function {
    /// Removes the instructions at `sites` ((block, index) pairs, any order, no
    /// repeats), one pass over each block touched.
    pub fn remove_insts(&mut self, mut sites: Vec<(usize, usize)>) {
        sites.sort_unstable();
        let mut at = 0;
        while at < sites.len() {
            let b = sites[at].0;
            let (mut i, mut next) = (0, at);
            self.blocks[b].insts.retain(|_| {
                let drop = sites.get(next) == Some(&(b, i));
                next += usize::from(drop);
                i += 1;
                !drop
            });
            at = next;
        }
    }

    pub fn value(&self, id: ValueId) -> &ValueInfo {
        &self.values[id.0 as usize]
    }

    /// A new value of type `ty` named `base`, or `base.N` with the first `N` that is not
    /// in `names` (the function's value names; the new one is added).
    pub fn fresh_value(&mut self, names: &mut NameSet, base: &str, ty: VtId) -> ValueId {
        self.values.push(ValueInfo { name: names.fresh(base), ty });
        ValueId(self.values.len() as u32 - 1)
    }

    /// Names value `id` as [`Function::fresh_value`] would: `base`, or `base.N` with
    /// the first `N` not in `names` (the new name is added).
    pub fn name_fresh_value(&mut self, names: &mut NameSet, id: ValueId, base: &str) {
        self.values[id.0 as usize].name = names.fresh(base);
    }

    /// The layout index of block `bb.number`: constant time when blocks are numbered
    /// by their position (what the front end and most passes produce), else a scan.
    pub fn block_index(&self, number: u32) -> Option<usize> {
        if self.blocks.get(number as usize).is_some_and(|b| b.number == number) {
            return Some(number as usize);
        }
        self.blocks.iter().position(|b| b.number == number)
    }
}

/// Block numbers to layout positions: the number itself when blocks are numbered by
/// position (what the front end and most passes leave), else a map built once. For
/// passes that look blocks up by number many times ([`Function::block_index`] scans
/// when the numbering is not positional).
pub struct BlockIndex {
    pub positional: bool,
    len: usize,
    map: rustc_hash::FxHashMap<u32, usize>,
}

impl BlockIndex {
    pub fn new(f: &Function) -> BlockIndex {
        let positional = f.blocks.iter().enumerate().all(|(i, b)| b.number as usize == i);
        let map = if positional { Default::default() } else { f.blocks.iter().enumerate().map(|(i, b)| (b.number, i)).collect() };
        BlockIndex { positional, len: f.blocks.len(), map }
    }

    pub fn get(&self, number: u32) -> Option<usize> {
        if self.positional {
            ((number as usize) < self.len).then_some(number as usize)
        } else {
            self.map.get(&number).copied()
        }
    }
}

/// Numbers the blocks of `f` by position (block i becomes bb.i) and rewrites every block
/// operand (branch targets, PHI predecessors) to match, after a pass removed blocks:
/// later passes then index blocks directly and the PTX labels stay dense.
pub fn renumber_blocks_by_position(f: &mut Function) {
    let renumber: rustc_hash::FxHashMap<u32, u32> = f.blocks.iter().enumerate().map(|(i, b)| (b.number, i as u32)).collect();
    for (i, block) in f.blocks.iter_mut().enumerate() {
        block.number = i as u32;
        for inst in &mut block.insts {
            for o in &mut inst.operands {
                if let Operand::Block(n) = o {
                    if let Some(&m) = renumber.get(n) {
                        *n = m;
                    }
                }
            }
        }
    }
}

/// Inserts each `(block, index, instruction)` before the instruction at `index` of its
/// block (`index` = the block's length appends), those for one place in the order given:
/// how passes that make instructions while walking a function (combine, slsr) add them
/// at the end without moving any index the walk uses. Linear in the blocks touched.
pub fn insert_before_each(f: &mut Function, inserts: Vec<(usize, usize, Inst)>) {
    let mut by_block: rustc_hash::FxHashMap<usize, Vec<(usize, Inst)>> = Default::default();
    for (b, i, inst) in inserts {
        by_block.entry(b).or_default().push((i, inst));
    }
    for (b, mut list) in by_block {
        list.sort_by_key(|(i, _)| *i); // stable: creation order within an index
        let old = std::mem::take(&mut f.blocks[b].insts);
        let mut merged = Vec::with_capacity(old.len() + list.len());
        let mut pending = list.into_iter().peekable();
        for (i, inst) in old.into_iter().enumerate() {
            while let Some((_, x)) = pending.next_if(|(at, _)| *at == i) {
                merged.push(x);
            }
            merged.push(inst);
        }
        merged.extend(pending.map(|(_, x)| x));
        f.blocks[b].insts = merged;
    }
}

/// Suffixes `N` of numbered names are below this ([`NameSet`]).
const NUMBERED_BELOW: u32 = 1_000_000_000;

/// The value names of a function, for passes that make fresh ones
/// ([`NameSet::fresh`], [`Function::fresh_value`]).
///
/// Only the names' hashes are kept: copying every name of a large function into a set
/// of strings was most of the cost of the passes that add a few values (PHI
/// elimination, rematerialization). A hash collision makes a free name look taken, so a
/// fresh name skips it: names stay unique, and the choice depends only on the names
/// (the hash is fixed), so output stays deterministic.
///
/// A numbered name, `BASE.N` with `N` in decimal as [`NameSet::fresh`] writes it, is a
/// bit in a word keyed by the hash of `BASE` and `N / 64`. The temporaries the
/// legalizer makes (`%t.1`, `%t.2`, ... millions of them on a large function) then
/// take one bit each in words that stay in cache, where one set of all the names
/// took a cache miss per name, the growth of a table of hundreds of MB, and 16% of
/// the compile of a 1M-instruction i128/v8f16/bf16 kernel.
#[derive(Clone, Debug, Default)]
pub struct NameSet {
    /// The names that are not numbered, by hash.
    hashes: rustc_hash::FxHashSet<u64>,
    /// The numbered names: per (hash of the base, `N / 64`), a bit per `N % 64`.
    numbered: rustc_hash::FxHashMap<(u64, u32), u64>,
    /// Per base name (by hash), the first `.N` suffix [`NameSet::fresh`] has not tried.
    next_suffix: rustc_hash::FxHashMap<u64, u32>,
}

impl NameSet {
    pub fn of(f: &Function) -> NameSet {
        Self::of_values(&f.values)
    }

    /// The names of `values`.
    pub fn of_values(values: &[ValueInfo]) -> NameSet {
        let mut names = NameSet::default();
        // Sized for the names kept by hash: after legalization most are numbered.
        names.hashes.reserve(values.iter().filter(|v| Self::numbered(&v.name).is_none()).count());
        for v in values {
            names.insert(&v.name);
        }
        names
    }

    fn hash(name: &str) -> u64 {
        use std::hash::BuildHasher;
        rustc_hash::FxBuildHasher.hash_one(name)
    }

    /// `name` as `(BASE, N)` when it is `BASE.N` with `N` written as [`NameSet::fresh`]
    /// writes it (decimal, no leading zero, below `NUMBERED_BELOW`); every other name is kept by
    /// its hash. The two forms never meet: each name has exactly one.
    fn numbered(name: &str) -> Option<(&str, u32)> {
        let dot = name.rfind('.')?;
        let digits = &name[dot + 1..];
        let canonical = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
        let n: u32 = if canonical { digits.parse().ok()? } else { return None };
        (n < NUMBERED_BELOW).then(|| (&name[..dot], n))
    }

    /// Sets the bit of `BASE.n` (`base` the base's hash); whether it was clear.
    fn insert_numbered(&mut self, base: u64, n: u32) -> bool {
        let word = self.numbered.entry((base, n / 64)).or_insert(0);
        let clear = *word >> (n % 64) & 1 == 0;
        *word |= 1 << (n % 64);
        clear
    }

    /// Whether `name` is (or may be) taken.
    pub fn contains(&self, name: &str) -> bool {
        match Self::numbered(name) {
            Some((base, n)) => self.numbered.get(&(Self::hash(base), n / 64)).is_some_and(|word| word >> (n % 64) & 1 != 0),
            None => self.hashes.contains(&Self::hash(name)),
        }
    }

    /// Adds `name`; whether it was free.
    pub fn insert(&mut self, name: &str) -> bool {
        match Self::numbered(name) {
            Some((base, n)) => self.insert_numbered(Self::hash(base), n),
            None => self.hashes.insert(Self::hash(name)),
        }
    }

    /// Room for `additional` more names that are not numbered.
    pub fn reserve(&mut self, additional: usize) {
        self.hashes.reserve(additional);
    }

    /// A free name, now taken: `base` if it is free, else `base.N` with the first `N`
    /// not taken. The search resumes where the last one for this base stopped: every
    /// suffix below it was taken then and names are never released, so the name is
    /// the same, and naming N values after one base is linear in N (a constant the
    /// combiner makes in each of 30,000 blocks took a minute; a 1000-line kernel of
    /// i128/v8f16/bf16 arithmetic took 0.8 s to legalize).
    pub fn fresh(&mut self, base: &str) -> ValueName {
        if self.insert(base) {
            return ValueName::from(base);
        }
        let key = Self::hash(base);
        let mut next = self.next_suffix.get(&key).copied().unwrap_or(1);
        let mut name = ValueName::default();
        let write = |name: &mut ValueName, n: u32| {
            name.clear();
            name.push_str(base);
            name.push('.');
            name.push_str(itoa::Buffer::new().format(n));
        };
        loop {
            let n = next;
            next += 1;
            // A numbered name (see `numbered`) has `base` as its base: its bit is set
            // without writing and hashing the whole name.
            let free = if n < NUMBERED_BELOW {
                self.insert_numbered(key, n)
            } else {
                write(&mut name, n);
                self.insert(&name)
            };
            if free {
                write(&mut name, n);
                break;
            }
        }
        self.next_suffix.insert(key, next);
        name
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub number: u32,
    pub name: Option<String>,
    pub insts: Vec<Inst>,
    pub loc: Loc,
}

impl Block {
    /// `bb.3.loop`
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("bb.{}.{n}", self.number),
            None => format!("bb.{}", self.number),
        }
    }
}

/// A generic opcode of the description, or a machine instruction (an instantiated
/// instruction-selection pattern, by index into `TargetTables::patterns`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    Generic(OpcodeId),
    Machine(u16),
}

impl Opcode {
    pub fn name(self, tables: &target_desc::tables::TargetTables) -> &'static str {
        match self {
            Opcode::Generic(op) => tables.opcode_info(op).map(|o| o.name).unwrap_or("?"),
            Opcode::Machine(m) => tables.patterns.get(m as usize).map(|p| p.name).unwrap_or("?"),
        }
    }

    pub fn generic(self) -> Option<OpcodeId> {
        match self {
            Opcode::Generic(op) => Some(op),
            Opcode::Machine(_) => None,
        }
    }
}

/// An instruction's results: inline up to two (a heap vector per instruction was an
/// allocation every time a pass built one).
pub type Defs = smallvec::SmallVec<[ValueId; 2]>;

/// An instruction's flags (`LOAD.volatile.sext.i8`), in the order written. Every flag
/// is a name of the description (the parser and the passes take them from the
/// tables), so a flag is a `&'static str`, and the vector is one word with no heap
/// block while it is empty.
pub type Flags = thin_vec::ThinVec<&'static str>;

/// An integer literal: an `i128` kept as two 64-bit words, so that it does not align
/// [`Operand`] to 16 bytes. It prints, hashes and compares as its `i128`.
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct Imm {
    lo: u64,
    hi: u64,
}

impl Imm {
    pub const fn new(value: i128) -> Imm {
        Imm { lo: value as u64, hi: (value >> 64) as u64 }
    }

    pub const fn get(self) -> i128 {
        ((self.hi as i128) << 64) | self.lo as i128
    }
}

impl From<i128> for Imm {
    fn from(value: i128) -> Imm {
        Imm::new(value)
    }
}

impl std::hash::Hash for Imm {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.get().hash(state);
    }
}

impl std::fmt::Debug for Imm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.get(), f)
    }
}

impl PartialOrd for Imm {
    fn partial_cmp(&self, other: &Imm) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Imm {
    fn cmp(&self, other: &Imm) -> std::cmp::Ordering {
        self.get().cmp(&other.get())
    }
}

impl std::fmt::UpperHex for Imm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::UpperHex::fmt(&self.get(), f)
    }
}

impl std::fmt::Display for Imm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.get(), f)
    }
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Operand>() == 24, "an operand grew");

// Every pass walks vectors of instructions, and a legalization-heavy compile holds
// millions of them (issue 15): results 24 bytes, operands 24, flags 8, position 8,
// opcode 4. It was 88 bytes with a `Vec<String>` of flags.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Inst>() <= 72, "an instruction grew");

#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub defs: Defs,
    pub opcode: Opcode,
    pub flags: Flags,
    pub operands: Vec<Operand>,
    pub loc: Loc,
}

impl Inst {
    /// An instruction that holds nothing (no heap storage): what a pass rewriting a
    /// vector in place leaves in a slot it has taken the instruction out of.
    pub fn hole() -> Inst {
        Inst { defs: Defs::new(), opcode: Opcode::Machine(0), flags: Flags::new(), operands: Vec::new(), loc: Loc::default() }
    }

    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains(&flag)
    }

    /// The condition code among the operands (of a `SETCC`, or a machine instruction
    /// selected from one).
    pub fn cond_code(&self) -> Option<target_desc::tables::CondCodeId> {
        self.operands.iter().find_map(|o| if let Operand::CondCode(cc) = o { Some(*cc) } else { None })
    }

    /// Whether this is a `PHI`.
    pub fn is_phi(&self, tables: &target_desc::tables::TargetTables) -> bool {
        matches!(self.opcode, Opcode::Generic(g) if tables.opcode_info(g).is_some_and(|o| o.name == "PHI"))
    }

    /// Whether this is a register-to-register copy: a machine instruction selected from
    /// `COPY`, one result, one register operand.
    pub fn is_copy(&self, tables: &target_desc::tables::TargetTables) -> bool {
        let Opcode::Machine(m) = self.opcode else { return false };
        // By the generic opcode's name, not `tables.opcode("COPY")`: a name-map lookup
        // hashes the string, and this is asked of every instruction by several passes.
        self.defs.len() == 1
            && matches!(self.operands.as_slice(), [Operand::Value(_)])
            && tables.patterns.get(m as usize).and_then(|p| tables.opcode_info(OpcodeId(p.opcode))).is_some_and(|o| o.name == "COPY")
    }

    /// The operand index of the `FRAME_INDEX` literal this instruction names: the
    /// generic `FRAME_INDEX`'s own, or the one of a machine instruction whose pattern
    /// absorbed one.
    pub fn frame_operand(&self, tables: &target_desc::tables::TargetTables) -> Option<usize> {
        let is_frame_index = |op: u16| tables.opcode_info(OpcodeId(op)).is_some_and(|o| o.name == "FRAME_INDEX");
        match self.opcode {
            Opcode::Generic(g) => is_frame_index(g.0).then_some(0),
            Opcode::Machine(m) => {
                let p = tables.patterns.get(m as usize)?;
                let k = (0..p.operands.len()).find(|&k| p.leaf_slot(k).is_some_and(|(n, _)| is_frame_index(p.nodes[n].opcode)))?;
                // Operand k of the pattern is the k-th operand that is not an `align`.
                self.operands.iter().enumerate().filter(|(_, o)| !matches!(o, Operand::Align(_))).nth(k).map(|(i, _)| i)
            }
        }
    }

    /// Whether this machine instruction reads the hardware carry flag the instruction
    /// before it left (a pattern operand of kind `flag`: addc after add.cc), so nothing
    /// may be placed between the two.
    pub fn reads_carry(&self, tables: &target_desc::tables::TargetTables) -> bool {
        let Opcode::Machine(m) = self.opcode else { return false };
        tables.patterns.get(m as usize).is_some_and(|p| p.operands.iter().any(|(_, k)| *k == target_desc::tables::PatternOperand::Flag))
    }

    /// Whether this machine instruction leaves a carry flag for the next one (add.cc).
    pub fn writes_carry(&self, tables: &target_desc::tables::TargetTables) -> bool {
        let Opcode::Machine(m) = self.opcode else { return false };
        tables.patterns.get(m as usize).is_some_and(|p| p.results.contains(&target_desc::tables::PatternResult::Flag))
    }

    /// Whether this machine instruction is part of a carry chain (writes or reads the
    /// flag). The flag is one hardware register that every `.cc` instruction writes, so
    /// a pass that moves, merges or repeats instructions moves a chain whole or leaves
    /// it: a hoisted `sub.cc` left its `subc` in the loop reading whatever carry the
    /// loop's own chains left (random kernel 10510 of `sim_random`).
    pub fn tied_by_carry(&self, tables: &target_desc::tables::TargetTables) -> bool {
        self.writes_carry(tables) || self.reads_carry(tables)
    }

    /// A hash of what the instruction computes: opcode, flags and operands (floats by
    /// their bits), for value numbering. Equal expressions ([`Inst::same_expression`])
    /// hash equally; callers confirm a hit with `same_expression`.
    pub fn expression_hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        self.opcode.hash(&mut h);
        self.flags.hash(&mut h);
        for o in &self.operands {
            std::mem::discriminant(o).hash(&mut h);
            match o {
                Operand::Value(v) => v.hash(&mut h),
                Operand::Block(b) => b.hash(&mut h),
                Operand::Symbol(s) => s.hash(&mut h),
                Operand::CondCode(c) => c.0.hash(&mut h),
                Operand::Int(i) => i.hash(&mut h),
                Operand::Float(x) => x.to_bits().hash(&mut h),
                Operand::Mask(m) => m.hash(&mut h),
                Operand::Align(a) => a.hash(&mut h),
            }
        }
        h.finish()
    }

    /// Whether the two instructions compute the same expression: same opcode, flags and
    /// operands, floats compared by bits (so `-0.0` is not `0.0` and a NaN is itself).
    pub fn same_expression(&self, other: &Inst) -> bool {
        self.opcode == other.opcode
            && self.flags == other.flags
            && self.operands.len() == other.operands.len()
            && self.operands.iter().zip(&other.operands).all(|(a, b)| match (a, b) {
                (Operand::Float(x), Operand::Float(y)) => x.to_bits() == y.to_bits(),
                _ => a == b,
            })
    }

    /// The values this instruction reads.
    pub fn uses(&self) -> impl Iterator<Item = ValueId> + '_ {
        self.operands.iter().filter_map(|o| match o {
            Operand::Value(v) => Some(*v),
            _ => None,
        })
    }

    /// The blocks this instruction names.
    pub fn block_operands(&self) -> impl Iterator<Item = u32> + '_ {
        self.operands.iter().filter_map(|o| match o {
            Operand::Block(b) => Some(*b),
            _ => None,
        })
    }
}

/// Each value's defining instruction as (block, index), in the layout it was built
/// from: two u32 per value (an `Option<(usize, usize)>` was 24 bytes, a quarter of a
/// gigabyte on a kernel of ten million values). For SSA functions, one definition each.
pub struct DefSites(Vec<(u32, u32)>);

/// A value no instruction defines (an argument, or a value made after the table).
const NO_SITE: (u32, u32) = (u32::MAX, u32::MAX);

impl DefSites {
    /// The definition sites of `f`'s values, and how many operands read each value.
    pub fn with_uses(f: &Function) -> (DefSites, Vec<u32>) {
        let mut site = vec![NO_SITE; f.values.len()];
        let mut uses = vec![0u32; f.values.len()];
        for (b, block) in f.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                for d in &inst.defs {
                    site[d.0 as usize] = (b as u32, i as u32);
                }
                for v in inst.uses() {
                    uses[v.0 as usize] += 1;
                }
            }
        }
        (DefSites(site), uses)
    }

    /// Where `v` is defined, as (block, index).
    pub fn get(&self, v: ValueId) -> Option<(usize, usize)> {
        let site = self.0.get(v.0 as usize).copied()?;
        (site != NO_SITE).then_some((site.0 as usize, site.1 as usize))
    }

    /// Room for a value made after the table was built, defined nowhere in it.
    pub fn push_undefined(&mut self) {
        self.0.push(NO_SITE);
    }
}

/// `insts` cut into the units that move together: one instruction, or an `add.cc`
/// with the `addc`s that read its flag after it (a reader joins the unit before it).
/// The schedulers' nodes and MachineLICM's hoists.
pub fn carry_units(insts: &[Inst], tables: &target_desc::tables::TargetTables) -> Vec<std::ops::Range<usize>> {
    let mut units: Vec<std::ops::Range<usize>> = Vec::with_capacity(insts.len());
    for (i, inst) in insts.iter().enumerate() {
        match units.last_mut() {
            Some(u) if inst.reads_carry(tables) => u.end = i + 1,
            _ => units.push(i..i + 1),
        }
    }
    units
}

/// An operand is 24 bytes (its payloads are at most two words, aligned to 8): most
/// instructions keep two or three in a heap block of their own, millions of them on a
/// legalization-heavy compile (issue 15). It was 32 with an `i128` field and strings.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Value(ValueId),
    /// `%bb.N`
    Block(u32),
    /// `@name`
    Symbol(Box<str>),
    CondCode(CondCodeId),
    /// An integer literal (also the raw bits of an `FCONSTANT` written in hex).
    Int(Imm),
    Float(f64),
    /// `mask(0, 5, -1)`
    Mask(Box<[i32]>),
    /// `align N`
    Align(u64),
}

impl Operand {
    /// An integer literal operand.
    pub const fn int(value: i128) -> Operand {
        Operand::Int(Imm::new(value))
    }
}

impl Module {
    /// The module with every source position cleared, for comparing two modules
    /// read from different texts.
    pub fn without_locs(&self) -> Module {
        let mut m = self.clone();
        for g in &mut m.globals {
            g.loc = Loc::default();
        }
        for f in &mut m.functions {
            f.loc = Loc::default();
            f.returns_loc = None;
            f.attributes_loc = None;
            for b in &mut f.blocks {
                b.loc = Loc::default();
                for i in &mut b.insts {
                    i.loc = Loc::default();
                }
            }
        }
        m
    }
}

/// The generic opcode's description entry; a machine instruction reports the generic
/// opcode it was selected from (so it keeps its properties: terminator, memory, ...).
pub fn opcode_info(op: Opcode, tables: &target_desc::tables::TargetTables) -> Option<&'static target_desc::tables::OpcodeInfo> {
    let generic = match op {
        Opcode::Generic(g) => g,
        Opcode::Machine(m) => OpcodeId(tables.patterns.get(m as usize)?.opcode),
    };
    tables.opcode_info(generic)
}

/// The action-table row type of an instruction: its `type_operand`'s type, else its
/// first result's; `None` for instructions outside the table (branches, calls).
/// The pointer and offset operand slots of the generic memory opcodes, and their lane
/// count (MIR spec §3.3: `LOAD (P, imm?)`, `STORE (T, P, imm?)`, ...).
pub fn address_slots(name: &str) -> Option<(usize, usize, u64)> {
    Some(match name {
        "LOAD" => (0, 1, 1),
        "LOADV2" => (0, 1, 2),
        "LOADV4" => (0, 1, 4),
        "STORE" => (1, 2, 1),
        "STOREV2" => (2, 3, 2),
        "STOREV4" => (4, 5, 4),
        _ => return None,
    })
}

/// The operand slot of the address of a memory access that [`address_slots`] does not
/// describe (atomics): the operand its signature types as a pointer (`P: ptr`), for an
/// opcode that loads or stores and is not a call.
pub fn pointer_operand_slot(info: &target_desc::tables::OpcodeInfo) -> Option<usize> {
    use target_desc::tables::{props, OperandKind, TypeClass};
    if info.props & (props::MAY_LOAD | props::MAY_STORE) == 0 || info.props & props::CALL != 0 {
        return None;
    }
    info.signature.operands.iter().position(|o| match o.kind {
        OperandKind::TypeVar(var) => !o.variadic && info.signature.type_vars.get(var as usize).is_some_and(|tv| tv.class == TypeClass::Pointer),
        _ => false,
    })
}

pub fn row_type(f: &Function, inst: &Inst, tables: &target_desc::tables::TargetTables) -> Option<VtId> {
    let info = tables.opcode_info(inst.opcode.generic()?)?;
    match info.type_operand {
        Some(i) => match inst.operands.get(i as usize)? {
            Operand::Value(v) => Some(f.value(*v).ty),
            _ => None,
        },
        None => {
            let first = info.signature.results.first()?;
            if first.variadic {
                return None;
            }
            inst.defs.first().map(|d| f.value(*d).ty)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body-less device function whose values have `names`.
    fn with_values(names: &[&str], ty: VtId) -> Function {
        Function {
            name: "f".into(),
            kind: FunctionKind::Device,
            params: Vec::new(),
            returns: Vec::new(),
            attributes: Attributes::default(),
            frame: Vec::new(),
            values: names.iter().map(|n| ValueInfo { name: (*n).into(), ty }).collect(),
            blocks: Vec::new(),
            returns_loc: None,
            attributes_loc: None,
            ssa: true,
            loc: Loc::default(),
        }
    }

    /// Fresh names skip every name the function has and every name made before.
    #[test]
    fn fresh_values_get_unused_names() {
        let ty = VtId(0);
        let mut f = with_values(&["x", "x.1", "y.phi"], ty);
        let mut names = NameSet::of(&f);
        let made: Vec<String> = ["x", "x", "y.phi", "z"].iter().map(|base| {
            let v = f.fresh_value(&mut names, base, ty);
            f.value(v).name.to_string()
        }).collect();
        assert_eq!(made, ["x.2", "x.3", "y.phi.1", "z"]);
        assert!(names.contains("x.3") && !names.contains("x.4"));
    }

    /// The search for a free `base.N` resumes where the last one for that base stopped
    /// (linear in the values named): it must pick what a search from `.1` picks, with
    /// gaps among the taken suffixes, bases interleaved, and a base that is itself a
    /// suffixed name.
    #[test]
    fn resumed_suffix_search_picks_the_first_free_suffix() {
        let ty = VtId(0);
        let taken = ["k", "k.1", "k.3", "k.4", "k.7", "m", "k.2.1"];
        let mut f = with_values(&taken, ty);
        let mut names = NameSet::of(&f);
        let bases = ["k", "m", "k", "k", "k.2", "k", "m", "k.2", "k"];
        let made: Vec<String> = bases.iter().map(|base| {
            let v = f.fresh_value(&mut names, base, ty);
            f.value(v).name.to_string()
        }).collect();
        // A search from `.1` against everything taken so far, for comparison.
        let mut seen: Vec<String> = taken.iter().map(|n| n.to_string()).collect();
        let expected: Vec<String> = bases.iter().map(|base| {
            let mut name = base.to_string();
            let mut n = 1;
            while seen.contains(&name) {
                name = format!("{base}.{n}");
                n += 1;
            }
            seen.push(name.clone());
            name
        }).collect();
        assert_eq!(made, expected);
        assert_eq!(made, ["k.2", "m.1", "k.5", "k.6", "k.2.2", "k.8", "m.2", "k.2.3", "k.9"]);
    }

    /// Numbered names (`t.7`) and the others (`t.07`, `t.x`, `t.`, `t.1234567890`) are
    /// kept apart; each is found where it was put, and nothing else is.
    #[test]
    fn name_set_keeps_numbered_and_other_names_apart() {
        let mut names = NameSet::default();
        for name in ["t.7", "t.07", "t.x", "t.", "t.1234567890", "u.7.3", "0", ".5"] {
            assert!(!names.contains(name), "{name}");
            assert!(names.insert(name), "{name}");
            assert!(names.contains(name) && !names.insert(name), "{name}");
        }
        for free in ["t.8", "t.6", "t.007", "t.70", "u.7", "u.3", "t.123456789", "1", ".4", "t"] {
            assert!(!names.contains(free), "{free}");
        }
        assert_eq!(names.fresh("t").as_str(), "t");
        assert_eq!(names.fresh("t").as_str(), "t.1");
        assert_eq!(names.fresh("u.7").as_str(), "u.7");
        assert_eq!(names.fresh("u.7").as_str(), "u.7.1");
    }

    proptest::proptest! {
        /// The set answers like a set of the strings themselves: every name inserted is
        /// taken, and (hash collisions aside) no other; fresh names are free before.
        #[test]
        fn name_set_agrees_with_a_set_of_strings(
            ops in proptest::collection::vec(("[ab]{1,2}(\\.(0|[1-9][0-9]{0,2}|0[0-9]|[a-z]|[0-9]{10}))?", proptest::bool::ANY), 1..200)
        ) {
            let mut names = NameSet::default();
            let mut strings = std::collections::HashSet::new();
            for (name, fresh) in &ops {
                if *fresh {
                    let made = names.fresh(name).to_string();
                    proptest::prop_assert!(strings.insert(made.clone()), "fresh name {} was taken", made);
                } else {
                    proptest::prop_assert_eq!(names.insert(name), strings.insert(name.clone()));
                }
                for probe in strings.iter() {
                    proptest::prop_assert!(names.contains(probe));
                }
                for k in 0..64 {
                    let probe = format!("{name}.{k}");
                    proptest::prop_assert_eq!(names.contains(&probe), strings.contains(&probe));
                }
            }
        }
    }
}
