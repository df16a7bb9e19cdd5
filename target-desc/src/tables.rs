//! The resolved target tables: what every later pipeline stage reads.
//!
//! One data structure serves both ways of getting a description into the compiler:
//! `codegen-macros` builds it at compile time and prints it as `static` items (plain
//! arrays), and [`crate::load_dir`] builds the very same structure at run time. Every
//! field is a `&'static` slice so the generated literal and the runtime value have one
//! type; the runtime loader leaks its allocations, which is fine for a description that
//! lives as long as the process.
//!
//! The layout of the per-SM tables follows `cicc-type-legalization.txt`:
//! the 259-stride `[type][opcode]` action table (`action = actions[259 * vt + opcode]`),
//! the type-supported array, the 1-D promotion and FSINCOS tables indexed by opcode, and
//! the condition-code table packed as 4-bit nibbles in 32-bit words, 15 words per
//! condition code (`word = cc_actions[15 * cc + (vt >> 3)]`,
//! `action = (word >> (4 * (vt & 7))) & 0xF`).

use std::collections::HashMap;
use std::fmt;

/// Row stride of the action table: 256 generic opcodes plus 3 metadata bytes per row.
pub const OPCODE_STRIDE: usize = 259;
/// Words per condition code in the condition-code table.
pub const CC_STRIDE: usize = 15;
/// Value-type ids must stay below this bound to fit the condition-code nibble table.
pub const MAX_VT_SLOTS: usize = CC_STRIDE * 8;
/// `type_class` value of a type with no register class on an SM.
pub const NO_CLASS: u8 = u8::MAX;

/// A legalization action, stored as one byte in the action table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Action {
    Legal = 0,
    Custom = 1,
    Expand = 2,
    LibCall = 3,
    Promote = 4,
}

impl Action {
    pub const ALL: [Action; 5] =
        [Action::Legal, Action::Custom, Action::Expand, Action::LibCall, Action::Promote];

    pub fn from_byte(byte: u8) -> Option<Action> {
        Action::ALL.get(byte as usize).copied()
    }

    /// The fast-path legality test of the reference notes: bit 2 is a don't-care.
    #[inline]
    pub fn byte_is_legal(byte: u8) -> bool {
        (byte & 0xFB) == 0
    }

    pub fn name(self) -> &'static str {
        match self {
            Action::Legal => "Legal",
            Action::Custom => "Custom",
            Action::Expand => "Expand",
            Action::LibCall => "LibCall",
            Action::Promote => "Promote",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Index of a generic opcode (below [`OPCODE_STRIDE`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpcodeId(pub u16);
/// SimpleVT id of a value type (below [`MAX_VT_SLOTS`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VtId(pub u8);
/// Id of a condition code (ISD numbering).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CondCodeId(pub u8);

/// Where a table entry came from: a description file and a 1-based line.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    pub file: &'static str,
    pub line: u32,
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TypeKind {
    Int,
    Float,
    Vector,
    Pointer,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TypeInfo {
    pub id: u8,
    pub name: &'static str,
    pub kind: TypeKind,
    /// Total width in bits (a vector's full width, 64 for pointers).
    pub bits: u16,
    /// Element type id for vectors, the type itself otherwise.
    pub elem: u8,
    /// Lane count for vectors, 1 otherwise.
    pub lanes: u16,
    /// Address space for pointers.
    pub addrspace: u16,
    /// Pointers: whether the memory may be written (stores, atomics); `true` otherwise.
    pub writable: bool,
    /// Pointers: the generic (flat) address space, which reaches every other space.
    pub generic: bool,
    /// Pointers: the space a kernel's generic pointer arguments point into (the
    /// combiner converts such an argument once and its accesses use this space).
    pub kernel_args: bool,
    /// Floats: stored mantissa bits (f16 10, bf16 7, f32 23); 0 otherwise.
    pub mantissa: u8,
    pub source: SourceLoc,
}

/// How an operand or result of an opcode signature is typed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OperandKind {
    /// A value whose type is bound to the signature's type variable with this index.
    TypeVar(u8),
    /// A value of exactly this type.
    Fixed(u8),
    /// An integer immediate (`ARG 0`, `CONSTANT 42`, `align 16`).
    Imm,
    /// A float literal (`FCONSTANT 1.5`).
    FloatImm,
    CondCode,
    Block,
    Symbol,
    ShuffleMask,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SigOperand {
    pub kind: OperandKind,
    /// `true` for a trailing `...`: zero or more further operands of this kind.
    pub variadic: bool,
    /// `true` for an optional operand written `?`.
    pub optional: bool,
}

/// A named class of types a type variable may range over.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TypeClass {
    Any,
    Int,
    ScalarInt,
    Float,
    ScalarFloat,
    Pointer,
    Vector,
    /// `i1`, or a vector of `i1`.
    Bool,
}

impl TypeClass {
    pub const NAMES: [(&'static str, TypeClass); 8] = [
        ("any", TypeClass::Any),
        ("int", TypeClass::Int),
        ("scalar_int", TypeClass::ScalarInt),
        ("float", TypeClass::Float),
        ("scalar_float", TypeClass::ScalarFloat),
        ("ptr", TypeClass::Pointer),
        ("vector", TypeClass::Vector),
        ("bool", TypeClass::Bool),
    ];
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TypeVar {
    pub name: &'static str,
    pub class: TypeClass,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub text: &'static str,
    pub type_vars: &'static [TypeVar],
    pub operands: &'static [SigOperand],
    pub results: &'static [SigOperand],
}

/// Opcode properties (bit flags).
pub mod props {
    pub const TERMINATOR: u16 = 1 << 0;
    pub const SIDE_EFFECTS: u16 = 1 << 1;
    pub const MAY_LOAD: u16 = 1 << 2;
    pub const MAY_STORE: u16 = 1 << 3;
    pub const COMMUTATIVE: u16 = 1 << 4;
    pub const BRANCH: u16 = 1 << 5;
    pub const CALL: u16 = 1 << 6;
    pub const CONVERGENT: u16 = 1 << 7;
    /// Some inputs make the result undefined (integer division by zero), so the
    /// instruction may not run where the input program would not (hoisting it out of a
    /// branch or ahead of a loop's exit test).
    pub const UNSAFE_TO_SPECULATE: u16 = 1 << 8;
    /// The machine schedulers move no instruction across it: ptxas does not either, so
    /// work hoisted above it only lives longer (a block-wide barrier).
    pub const SCHED_BOUNDARY: u16 = 1 << 9;
    pub const NAMES: [(&str, u16); 10] = [
        ("terminator", TERMINATOR),
        ("side_effects", SIDE_EFFECTS),
        ("may_load", MAY_LOAD),
        ("may_store", MAY_STORE),
        ("commutative", COMMUTATIVE),
        ("branch", BRANCH),
        ("call", CALL),
        ("convergent", CONVERGENT),
        ("unsafe_to_speculate", UNSAFE_TO_SPECULATE),
        ("sched_boundary", SCHED_BOUNDARY),
    ];
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OpcodeInfo {
    pub id: u16,
    pub name: &'static str,
    pub signature: Signature,
    /// Bit set of [`props`].
    pub props: u16,
    /// Indices into [`TargetTables::categories`].
    pub categories: &'static [u8],
    /// Flags the opcode accepts (`volatile`, `sext`, ...).
    pub flags: &'static [&'static str],
    /// The operand whose type selects the action-table row; `None` means the first
    /// result's type (and an opcode with no typed result is not in the table).
    pub type_operand: Option<u8>,
    pub source: SourceLoc,
}

impl OpcodeInfo {
    pub fn has(&self, prop: u16) -> bool {
        self.props & prop != 0
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CategoryInfo {
    pub name: &'static str,
    pub help: &'static str,
    pub source: SourceLoc,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CondCodeInfo {
    pub id: u8,
    pub name: &'static str,
    /// PTX `setp` comparison for integer operands (`lt`, `lo`, ...), if any.
    pub int_form: Option<&'static str>,
    /// PTX `setp` comparison for float operands (`lt`, `ltu`, `num`, ...), if any.
    pub float_form: Option<&'static str>,
    /// `s` or `u`: the signedness the integer comparison needs in its type suffix.
    pub int_type: Option<&'static str>,
    pub source: SourceLoc,
}

/// A PTX instruction form's requirements (`ptx-isa.yaml`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PtxRequirementInfo {
    /// `atom.add.f64`: the opcode and the modifier words that select the form.
    pub insn: &'static str,
    /// The lowest SM (index into [`TargetTables::sms`]); it and every SM implying it
    /// have the form.
    pub sm: u8,
    /// The lowest PTX ISA version, major * 10 + minor.
    pub ptx: u16,
    pub source: SourceLoc,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IntrinsicInfo {
    pub name: &'static str,
    pub signature: Signature,
    pub props: u16,
    pub source: SourceLoc,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RegisterClassInfo {
    pub name: &'static str,
    /// PTX register name prefix, `%r`.
    pub prefix: &'static str,
    /// PTX register declaration type, `.b32`.
    pub ptx_type: &'static str,
    /// Every type the class can hold on some SM.
    pub members: &'static [u8],
    /// Per member: the PTX ISA version its registers need (from the features gating the
    /// class or the member; 0 when none). `.b128` registers need PTX 8.3.
    pub member_ptx: &'static [u16],
    pub pressure_weight: u8,
    /// `storage_only: true`: the class's registers can be moved, loaded, stored and
    /// taken apart (`BUILD_PAIR`, `EXTRACT_ELEMENT`) but are no operand of anything else
    /// (PTX's `.b128` registers). An operation whose row is another type but that reads
    /// or produces such a value needs the legalizer to take the value apart first.
    pub storage_only: bool,
    /// `param_carrier: i16`: the class's registers cannot be `.param` values, so a value
    /// crossing a call travels as this integer type (zero-extended out, truncated in),
    /// and a kernel parameter of it is read as its bytes.
    pub param_carrier: Option<u8>,
    /// `pressure_limit: N`: the class's pressure is tracked apart from the others and
    /// checked against N registers (predicates); `None`: it counts towards the general
    /// register target with its `pressure_weight`.
    pub pressure_limit: Option<u16>,
    /// `read_as: [Float32Regs]`: the classes (by index) whose operands a register of this
    /// class may fill; a copy into one of them can be propagated into its readers.
    pub read_as: &'static [u8],
    pub source: SourceLoc,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FeatureInfo {
    pub name: &'static str,
    pub help: &'static str,
    /// Minimum PTX ISA version (major * 10 + minor) code that uses the feature needs.
    pub min_ptx: u16,
    pub source: SourceLoc,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub enum KnobValue {
    Bool(bool),
    Int(i64),
    Str(&'static str),
    List(&'static [&'static str]),
}

impl fmt::Display for KnobValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobValue::Bool(b) => write!(f, "{b}"),
            KnobValue::Int(i) => write!(f, "{i}"),
            KnobValue::Str(s) => f.write_str(s),
            KnobValue::List(items) => write!(f, "[{}]", items.join(", ")),
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct KnobInfo {
    pub name: &'static str,
    pub default: KnobValue,
    /// For enum-like knobs: the allowed values.
    pub choices: &'static [&'static str],
    pub help: &'static str,
    /// The pass or component that reads the knob.
    pub component: &'static str,
    pub source: SourceLoc,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RematInfo {
    /// Category indices whose opcodes are never rematerialized.
    pub excluded_categories: &'static [u8],
    /// Opcode ids excluded from rematerialization, sorted (derived from the categories).
    pub excluded_opcodes: &'static [u16],
    /// Knob indices (into [`TargetTables::knobs`]) that steer rematerialization.
    pub knobs: &'static [u16],
    pub source: SourceLoc,
}

/// One entry of the scheduler's target priority table (level 2 of the selection
/// priority in `cicc-instruction-scheduling.txt`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PriorityEntry {
    pub name: &'static str,
    pub start: u32,
    pub end: u32,
    pub priority: u32,
    pub window: u32,
    pub categories: &'static [u8],
    pub source: SourceLoc,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LatencyClass {
    pub name: &'static str,
    /// The latency where no `by_sm` entry applies (per SM: [`SmTables::latencies`]).
    pub latency: u32,
    /// Cycles the unit is busy per instruction where no `by_sm` entry applies.
    pub issue: u32,
    /// The functional unit (index into [`SchedulingInfo::units`]).
    pub unit: u8,
    pub categories: &'static [u8],
    /// Value type ids the class is limited to (empty: any).
    pub types: &'static [u8],
    /// Pointer type ids (address spaces) a memory access must use for the class
    /// (empty: any).
    pub spaces: &'static [u8],
    pub source: SourceLoc,
}

/// A latency class's figures on one SM: dependence latency and unit busy cycles.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SchedCost {
    pub latency: u32,
    pub issue: u32,
    /// Where the figures come from (the class's line or its `by_sm` entry's).
    pub source: SourceLoc,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SchedulingInfo {
    pub priorities: &'static [PriorityEntry],
    pub latency_classes: &'static [LatencyClass],
    /// Instructions issued per cycle (at least 1).
    pub issue_width: u8,
    /// Functional unit names (the classes' `unit`s, first-use order).
    pub units: &'static [&'static str],
    /// Latency class index used for opcodes no class names.
    pub default_latency_class: u8,
    pub knobs: &'static [u16],
}

/// A non-trivial action's argument: the hook of a Custom entry, the function of a
/// LibCall entry, or the explicit target type of a Promote entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ActionDetail {
    CustomHook(&'static str),
    LibCall(&'static str),
    PromoteTo(u8),
}

/// An operand of an instruction-selection pattern.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PatternOperand {
    /// A register of this type.
    Reg(u8),
    /// An immediate folded from a `CONSTANT`/`FCONSTANT` of this type.
    Imm(u8),
    /// A literal operand of the generic instruction itself (`ARG 0`, `CONSTANT 7`,
    /// `FCONSTANT 1.5`), formatted by the pattern's result type.
    Literal,
    CondCode,
    Block,
    Symbol,
    /// Exactly this symbol (`@llvm.nvvm.read.ptx.sreg.tid.x`), for intrinsics.
    SymbolIs(&'static str),
    /// A literal operand equal to this value (`i: lit.1`: the high half).
    LiteralIs(i64),
    /// An immediate of this type folded from a `CONSTANT` equal to this value
    /// (`i: imm.i32.0`: lane 0).
    ImmIs(u8, i64),
    /// Zero or more registers of any type (the rest of a call's or return's operands).
    Values,
    /// An `i1` value carried implicitly by the hardware (the carry of `add.cc`/`addc`):
    /// the template does not name it and it gets no register.
    Flag,
    /// An immediate of this type folded from a `CONSTANT` whose value, read as a signed
    /// integer of the type's width, lies in `[min, max]` (`b: imm.i64.s32`: an i64
    /// constant that fits a signed 32-bit operand).
    ImmRange(u8, i64, i64),
    /// A `CONSTANT` of this type of the form `2^n - 1` (`0 < n <` the width): the
    /// operand stands for `n`, the mask's length (`len: imm.lowmask`).
    LowMask(u8),
}

impl PatternOperand {
    /// The value type of an operand that is a value in the generic instruction (a
    /// register or a folded constant); `None` for literals, codes, blocks, symbols,
    /// flags and `values`.
    pub fn value_type(self) -> Option<u8> {
        match self {
            PatternOperand::Reg(t) | PatternOperand::Imm(t) | PatternOperand::ImmIs(t, _) | PatternOperand::ImmRange(t, _, _) | PatternOperand::LowMask(t) => Some(t),
            _ => None,
        }
    }

    /// The machine operand a folded constant becomes, if the constant `value` (as the
    /// MIR holds it) of a type of `bits` bits fits the operand: the value itself, or the
    /// mask length of a [`PatternOperand::LowMask`].
    pub fn fold_constant(self, value: i128, bits: u16) -> Option<i128> {
        let bits = u32::from(bits.clamp(1, 128));
        let unsigned = if bits >= 128 { value } else { value & ((1i128 << bits) - 1) };
        let signed = if bits >= 128 || unsigned >> (bits - 1) == 0 { unsigned } else { unsigned - (1i128 << bits) };
        match self {
            PatternOperand::Imm(_) => Some(value),
            PatternOperand::ImmIs(_, n) => (value == i128::from(n)).then_some(value),
            PatternOperand::ImmRange(_, min, max) => (i128::from(min)..=i128::from(max)).contains(&signed).then_some(value),
            PatternOperand::LowMask(_) => {
                let n = (unsigned + 1).trailing_zeros();
                (unsigned != 0 && (unsigned + 1).count_ones() == 1 && n < bits).then_some(i128::from(n))
            }
            _ => None,
        }
    }
}

/// An operand of a pattern node: a leaf (an index into [`PatternInfo::operands`]) or
/// a nested node (an index into [`PatternInfo::nodes`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NodeArg {
    Leaf(u8),
    Node(u8),
}

/// One node of a pattern's tree: a generic instruction the pattern matches.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PatternNode {
    pub opcode: u16,
    /// The flags the instruction must carry, exactly (the root's flag groups are the
    /// pattern's).
    pub flags: &'static [&'static str],
    /// A nested node's result type; `None` for the root (its results are the
    /// pattern's).
    pub ty: Option<u8>,
    /// The instruction's operands in order.
    pub args: &'static [NodeArg],
    /// `shared`: a nested instruction that may have other users (it then stays for
    /// them); otherwise the root must be its only user.
    pub shared: bool,
}

/// A result of an instruction-selection pattern.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PatternResult {
    /// A register of this type.
    Reg(u8),
    /// An `i1` result left implicitly in the hardware (a carry): no register.
    Flag,
}

/// A machine instruction: a generic opcode on operand kinds becomes a PTX template.
///
/// Template placeholders: `{d}` the (first) result, `{d1}`, `{d2}` further results,
/// `{NAME}` an operand, `{T}` the type's
/// suffix from the pattern's `for` clause, `{cc}` the condition code's PTX comparison
/// (integer or float form, from the compared type), `{ccs}` its integer signedness
/// letter (`s`/`u`), `{param}` the parameter symbol of an `ARG`, `{frame}` the depot
/// address (`__local_depot0+16`) of the frame object a `FRAME_INDEX` names, `{tmp.TYPE}` a scratch
/// register of that type private to the instruction (`{tmp.TYPE.N}` a further one),
/// `{GROUP}` / `{GROUP.FIELD}` the text of the instruction's flag in a flag group the
/// opcode names (`ATOMIC_LOAD_ADD.$atom_scope`).
/// `{{` and `}}` are literal braces (`mov.b32 {{{a}, {b}}}`). Lines of a template
/// are separated by `\n`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PatternInfo {
    /// The machine opcode's name in MIR after selection (`ADD_rr_i32`).
    pub name: &'static str,
    pub opcode: u16,
    /// The flags an instruction must carry (`LOAD.volatile` -> `["volatile"]`); every
    /// other flag it carries must belong to one of `flag_groups`.
    pub flags: &'static [&'static str],
    /// Flag groups (indices into [`TargetTables::flag_groups`]): each accepts one of its
    /// flags (or its absence, with a `_` member) and gives the template its text.
    pub flag_groups: &'static [u16],
    /// The machine instruction's operands: the tree's leaves, in preorder (for a
    /// one-node pattern, the generic instruction's operands).
    pub operands: &'static [(&'static str, PatternOperand)],
    /// The tree the pattern matches, in preorder: `nodes[0]` is the root (the
    /// instruction selected), every other node an instruction whose value only the
    /// pattern uses, absorbed into it (`ADD(MUL(a, b), c)` has two nodes). A node's
    /// subtree follows it.
    pub nodes: &'static [PatternNode],
    /// The results in order (`{d}` is the first, `{d1}` the second, ...).
    pub results: &'static [PatternResult],
    /// `-> values`: any number of results of any types (calls).
    pub any_results: bool,
    /// `= custom(NAME)`: an emission hook of the engine writes the instruction instead
    /// of a template (the `.param` calling convention).
    pub hook: Option<&'static str>,
    /// SMs (bit per SM index) where the pattern may be used.
    pub sms: u128,
    /// `when kernel`: only in kernels (entry functions), whose parameters have
    /// addresses in the `.param` space (a device function's would be `.local` copies).
    pub kernel_only: bool,
    /// PTX ISA version (major * 10 + minor) the instruction needs: the largest of the
    /// features its `when` condition requires; 0 when none.
    pub min_ptx: u16,
    pub template: &'static str,
    pub suffix: &'static str,
    /// Higher wins among patterns that match: folded immediates make a pattern more
    /// specific.
    pub priority: u8,
    /// Provenance (index into [`TargetTables::rules`]).
    pub rule: u16,
}

/// The type name of a scratch placeholder `tmp.TYPE` or `tmp.TYPE.N`.
pub fn scratch_type_name(key: &str) -> &str {
    match key.rsplit_once('.') {
        Some((ty, n)) if n.parse::<u32>().is_ok() => ty,
        _ => key,
    }
}

/// A `flags` statement: a set of flags a pattern accepts in one position and the
/// template text each becomes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlagGroupInfo {
    /// Without the `$`.
    pub name: &'static str,
    /// Field names; empty when each member has a single text.
    pub fields: &'static [&'static str],
    pub members: &'static [FlagMember],
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlagMember {
    /// The flag; empty for the member that stands for the flag's absence (`_`).
    pub flag: &'static str,
    /// One text per field.
    pub texts: &'static [&'static str],
    /// SMs (bit per SM index) where the member applies; members of one flag are disjoint.
    pub sms: u128,
    /// PTX ISA version its `when` condition requires (0 when none).
    pub min_ptx: u16,
    /// Provenance (index into [`TargetTables::rules`]): the `flags` statement.
    pub rule: u16,
}

impl FlagGroupInfo {
    /// The member that stands for `flag` (`None`: the flag's absence) on an SM.
    pub fn member(&self, flag: Option<&str>, sm_index: usize) -> Option<&FlagMember> {
        let flag = flag.unwrap_or("");
        self.members.iter().find(|m| m.flag == flag && m.sms >> sm_index & 1 == 1)
    }

    /// Whether `flag` is one of the group's flags (on any SM).
    pub fn has_flag(&self, flag: &str) -> bool {
        !flag.is_empty() && self.members.iter().any(|m| m.flag == flag)
    }

    /// The member's text for a field (`None`: the first field).
    pub fn text(&self, member: &FlagMember, field: Option<&str>) -> Option<&'static str> {
        let index = match field {
            None => 0,
            Some(f) => self.fields.iter().position(|x| *x == f)?,
        };
        member.texts.get(index).copied()
    }
}

impl PatternInfo {
    /// The type of the first result when it is a register (`{d}`).
    pub fn result(&self) -> Option<u8> {
        match self.results.first() {
            Some(PatternResult::Reg(t)) => Some(*t),
            _ => None,
        }
    }

    /// Does the pattern match more than one instruction?
    pub fn is_tree(&self) -> bool {
        self.nodes.len() > 1
    }

    /// The node holding leaf `k` and the leaf's operand position in it.
    pub fn leaf_slot(&self, k: usize) -> Option<(usize, usize)> {
        self.nodes.iter().enumerate().find_map(|(n, node)| node.args.iter().position(|a| *a == NodeArg::Leaf(k as u8)).map(|j| (n, j)))
    }
}

/// Every table for one SM generation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SmTables {
    /// Canonical name, `sm_90a`.
    pub name: &'static str,
    /// Minimum PTX ISA version as major * 10 + minor.
    pub min_ptx: u16,
    /// SMs this one directly implies (indices into [`TargetTables::sms`]).
    pub implies: &'static [u8],
    /// Every feature the SM has, its own and the implied SMs' (feature indices, sorted).
    pub features: &'static [u8],
    pub source: SourceLoc,
    /// `actions[OPCODE_STRIDE * vt + opcode]`.
    pub actions: &'static [u8],
    /// Sorted `(cell, detail)` for Custom, LibCall and explicit Promote entries.
    pub action_details: &'static [(u32, ActionDetail)],
    /// Sorted `(cell, rule)`: the rule that decided each cell a rule decided; other
    /// cells hold the default action.
    pub action_sources: &'static [(u32, u16)],
    /// Register class index per type id, or [`NO_CLASS`].
    pub type_class: &'static [u8],
    /// Sorted `(type id, source index)` for every register type.
    pub type_sources: &'static [(u8, u16)],
    /// 1-D promotion table, indexed by opcode.
    pub promotion: &'static [u8],
    /// 1-D FSINCOS table, indexed by opcode.
    pub fsincos: &'static [u8],
    /// Sorted `(opcode, rule)` sources of the two 1-D tables (promotion first, then
    /// FSINCOS with `opcode + OPCODE_STRIDE`).
    pub one_dim_sources: &'static [(u32, u16)],
    /// Condition-code nibble table, `CC_STRIDE` words per condition code id.
    pub cc_actions: &'static [u32],
    /// Sorted `(cc * MAX_VT_SLOTS + vt, rule)`.
    pub cc_sources: &'static [(u32, u16)],
    /// Register file and residency limits, when the description gives them (own or
    /// inherited through `implies`).
    pub occupancy: Option<OccupancyInfo>,
    /// Per latency class (index into `SchedulingInfo::latency_classes`): the figures on
    /// this SM, its own `by_sm` entry's, the nearest implied SM's, or the class's.
    pub latencies: &'static [SchedCost],
}

/// An SM's register file and residency limits (the description's `occupancy:`
/// profiles): what turns `maxntid`/`minnctapersm` into a register target and a
/// register count into an occupancy.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OccupancyInfo {
    /// The profile's name.
    pub name: &'static str,
    pub regs_per_sm: u32,
    pub regs_per_block: u32,
    pub max_regs_per_thread: u32,
    pub reg_alloc_unit: u32,
    pub sub_partitions: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    pub source: SourceLoc,
}

/// Warps per thread block and the threads of a warp.
const WARP: u32 = 32;

impl OccupancyInfo {
    /// Warps in a block of `threads` threads.
    pub fn warps_per_block(&self, threads: u32) -> u32 {
        threads.div_ceil(WARP)
    }

    /// Registers one warp is given for `regs` registers per thread.
    fn regs_per_warp(&self, regs: u32) -> u32 {
        (regs * WARP).div_ceil(self.reg_alloc_unit) * self.reg_alloc_unit
    }

    /// Blocks of `threads` threads that fit on one SM when each thread uses `regs`
    /// registers, as `cudaOccMaxBlocksPerSMRegsLimit` and the warp and block limits
    /// compute it; 0 when one block does not fit.
    pub fn blocks_per_sm(&self, regs: u32, threads: u32) -> u32 {
        if threads == 0 || threads > self.max_threads_per_block || regs > self.max_regs_per_thread {
            return 0;
        }
        let warps = self.warps_per_block(threads);
        let per_warp = self.regs_per_warp(regs.max(1));
        // The hardware checks a block's registers as if its warps were spread over
        // every partition.
        let assumed = per_warp * warps.div_ceil(self.sub_partitions) * self.sub_partitions;
        if assumed > self.regs_per_block || per_warp * warps > self.regs_per_block {
            return 0;
        }
        let warps_by_regs = (self.regs_per_sm / self.sub_partitions / per_warp) * self.sub_partitions;
        let by_regs = warps_by_regs / warps;
        let by_warps = self.max_warps_per_sm / warps;
        by_regs.min(by_warps).min(self.max_blocks_per_sm)
    }

    /// The most registers per thread (a multiple of the allocation granule, at most
    /// `max_regs_per_thread`) with which `blocks` blocks of `threads` threads still
    /// fit on one SM; `None` when even the fewest registers do not.
    pub fn register_target(&self, threads: u32, blocks: u32) -> Option<u32> {
        let granule = (self.reg_alloc_unit / WARP).max(1);
        let mut best = None;
        let mut regs = granule;
        while regs <= self.max_regs_per_thread {
            if self.blocks_per_sm(regs, threads) >= blocks.max(1) {
                best = Some(regs);
            }
            regs += granule;
        }
        if best == Some(self.max_regs_per_thread / granule * granule) && self.blocks_per_sm(self.max_regs_per_thread, threads) >= blocks.max(1) {
            best = Some(self.max_regs_per_thread);
        }
        best
    }
}

/// A name-to-id map: a compile-time perfect hash map for the generated tables, a hash
/// map for descriptions loaded at run time.
#[derive(Clone, Debug)]
pub enum NameMap {
    Static(&'static phf::Map<&'static str, u16>),
    Dynamic(HashMap<&'static str, u16>),
}

impl NameMap {
    #[inline]
    pub fn get(&self, name: &str) -> Option<u16> {
        match self {
            NameMap::Static(map) => map.get(name).copied(),
            NameMap::Dynamic(map) => map.get(name).copied(),
        }
    }

    /// All entries, sorted by name.
    pub fn entries(&self) -> Vec<(&'static str, u16)> {
        let mut out: Vec<(&'static str, u16)> = match self {
            NameMap::Static(map) => map.entries().map(|(k, v)| (*k, *v)).collect(),
            NameMap::Dynamic(map) => map.iter().map(|(k, v)| (*k, *v)).collect(),
        };
        out.sort();
        out
    }
}

impl PartialEq for NameMap {
    fn eq(&self, other: &Self) -> bool {
        self.entries() == other.entries()
    }
}

/// Name-to-id maps for every kind of name in the description.
#[derive(Clone, Debug, PartialEq)]
pub struct NameMaps {
    pub opcodes: NameMap,
    pub types: NameMap,
    pub register_classes: NameMap,
    /// Accepts the canonical `sm_90a` only; see [`TargetTables::find_sm`] for `90a`.
    pub sms: NameMap,
    pub features: NameMap,
    pub cond_codes: NameMap,
    pub intrinsics: NameMap,
    pub knobs: NameMap,
    /// Machine opcodes (pattern instances) by name, indexing `patterns`.
    pub machine_ops: NameMap,
}

/// A rule of the description, as the provenance tables point to it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RuleInfo {
    pub source: SourceLoc,
    /// The rule's text, for remarks and the audit tool.
    pub text: &'static str,
}

/// Every table generated from one target description.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetTables {
    pub target: &'static str,
    /// Description files, as paths relative to the repository root when known.
    pub files: &'static [&'static str],
    /// Number of rows of each action table (largest type id + 1).
    pub vt_slots: u16,
    pub types: &'static [TypeInfo],
    pub opcodes: &'static [OpcodeInfo],
    /// For each opcode id, 1 + its index in `opcodes` (0: no opcode has the id), so
    /// that [`TargetTables::opcode_info`], on every pass's hot path, is one index.
    pub opcode_slots: &'static [u16],
    pub categories: &'static [CategoryInfo],
    pub cond_codes: &'static [CondCodeInfo],
    pub intrinsics: &'static [IntrinsicInfo],
    pub register_classes: &'static [RegisterClassInfo],
    pub features: &'static [FeatureInfo],
    pub sms: &'static [SmTables],
    pub knobs: &'static [KnobInfo],
    pub remat: RematInfo,
    pub scheduling: SchedulingInfo,
    /// Rules and other provenance points; the `*_sources` tables index into it.
    pub rules: &'static [RuleInfo],
    /// The default entries of the action and condition-code tables.
    pub default_action: (Action, u16),
    pub default_cc_action: (Action, u16),
    /// Instruction-selection patterns, in description order.
    pub patterns: &'static [PatternInfo],
    /// Flag groups the patterns refer to (`flags` statements), in description order.
    pub flag_groups: &'static [FlagGroupInfo],
    /// PTX instruction forms and the SM and PTX version they need (`ptx-isa.yaml`).
    pub ptx_isa: &'static [PtxRequirementInfo],
    pub names: NameMaps,
}

/// `TargetTables::opcode_slots` for an opcode table.
pub fn opcode_slots(opcodes: &[OpcodeInfo]) -> Vec<u16> {
    let len = opcodes.iter().map(|o| o.id as usize + 1).max().unwrap_or(0);
    let mut slots = vec![0u16; len];
    for (i, o) in opcodes.iter().enumerate() {
        slots[o.id as usize] = i as u16 + 1;
    }
    slots
}

/// The entry of `table` whose id is `id`: at `id - 1` when the table is numbered from 1
/// in order (the loader's numbering), else found by a scan.
fn by_id<T>(table: &[T], id: usize, id_of: impl Fn(&T) -> usize) -> Option<&T> {
    match id.checked_sub(1).and_then(|i| table.get(i)) {
        Some(entry) if id_of(entry) == id => Some(entry),
        // Ids have gaps (the opcode table's follow LLVM's ISD numbering), and tables
        // list them in increasing order: a binary search, with a scan for a table
        // that is not sorted.
        _ => match table.binary_search_by_key(&id, &id_of) {
            Ok(i) => Some(&table[i]),
            Err(_) => table.iter().find(|e| id_of(e) == id),
        },
    }
}

/// The answer to "what does this SM do with this opcode on this type, and why".
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub action: Action,
    pub detail: Option<ActionDetail>,
    /// The rule that decided the entry (the default rule when no other did).
    pub rule: RuleInfo,
    pub is_default: bool,
}

impl SmTables {
    /// The action byte for `(opcode, vt)`: one indexed load.
    #[inline]
    pub fn action_byte(&self, opcode: OpcodeId, vt: VtId) -> u8 {
        self.actions[OPCODE_STRIDE * vt.0 as usize + opcode.0 as usize]
    }

    #[inline]
    pub fn action(&self, opcode: OpcodeId, vt: VtId) -> Action {
        // The builder only ever stores valid action bytes.
        Action::from_byte(self.action_byte(opcode, vt)).unwrap_or(Action::Expand)
    }

    /// Exactly `Legal`.
    #[inline]
    pub fn is_legal(&self, opcode: OpcodeId, vt: VtId) -> bool {
        self.action_byte(opcode, vt) == Action::Legal as u8
    }

    /// The reference's fast-path test `(a & 0xFB) == 0`: Legal, or Promote (bit 2 is a
    /// don't-care), i.e. "no lowering needed at this type's register width".
    #[inline]
    pub fn passes_fast_legal_check(&self, opcode: OpcodeId, vt: VtId) -> bool {
        Action::byte_is_legal(self.action_byte(opcode, vt))
    }

    #[inline]
    pub fn type_supported(&self, vt: VtId) -> bool {
        self.type_class.get(vt.0 as usize).is_some_and(|&c| c != NO_CLASS)
    }

    /// Reads one nibble of the condition-code table.
    #[inline]
    pub fn cc_action_nibble(&self, cc: CondCodeId, vt: VtId) -> u8 {
        let word = self.cc_actions[CC_STRIDE * cc.0 as usize + (vt.0 as usize >> 3)];
        ((word >> (4 * (vt.0 as u32 & 7))) & 0xF) as u8
    }

    pub fn cc_action(&self, cc: CondCodeId, vt: VtId) -> Action {
        Action::from_byte(self.cc_action_nibble(cc, vt)).unwrap_or(Action::Expand)
    }

    pub fn action_detail(&self, opcode: OpcodeId, vt: VtId) -> Option<ActionDetail> {
        let cell = (OPCODE_STRIDE * vt.0 as usize + opcode.0 as usize) as u32;
        lookup_sorted(self.action_details, cell).copied()
    }

    pub fn has_feature(&self, feature: u8) -> bool {
        self.features.binary_search(&feature).is_ok()
    }

    /// Canonical number of the SM, `90a` for `sm_90a`.
    pub fn number(&self) -> &'static str {
        self.name.strip_prefix("sm_").unwrap_or(self.name)
    }
}

fn lookup_sorted<K: Ord + Copy, V>(table: &[(K, V)], key: K) -> Option<&V> {
    table.binary_search_by(|(k, _)| k.cmp(&key)).ok().map(|i| &table[i].1)
}

/// Packs per-type 4-bit actions into the condition-code words of one condition code.
pub fn pack_cc_nibbles(actions: &[u8]) -> [u32; CC_STRIDE] {
    let mut words = [0u32; CC_STRIDE];
    for (vt, &action) in actions.iter().enumerate().take(MAX_VT_SLOTS) {
        words[vt >> 3] |= u32::from(action & 0xF) << (4 * (vt & 7));
    }
    words
}

impl TargetTables {
    /// Whether an instruction's `flags` (sorted) fit pattern `p` on an SM: every flag the
    /// pattern requires is there and each other flag is taken by a distinct flag group
    /// of the pattern, whose member applies on the SM (a group left without a flag needs
    /// a `_` member). Returns the flags the machine instruction keeps (the groups').
    pub fn match_flags<'a>(&self, p: &PatternInfo, flags: &[&'a str], sm_index: usize) -> Option<Vec<&'a str>> {
        if p.flag_groups.is_empty() {
            return (p.flags == flags).then(Vec::new);
        }
        if !p.flags.iter().all(|f| flags.contains(f)) {
            return None;
        }
        let mut kept = Vec::new();
        let mut taken = vec![false; p.flag_groups.len()];
        for f in flags.iter().filter(|f| !p.flags.contains(f)) {
            let g = p.flag_groups.iter().position(|&g| self.flag_groups[g as usize].has_flag(f))?;
            if taken[g] {
                return None;
            }
            self.flag_groups[p.flag_groups[g] as usize].member(Some(f), sm_index)?;
            taken[g] = true;
            kept.push(*f);
        }
        for (g, &group) in p.flag_groups.iter().enumerate() {
            if !taken[g] {
                self.flag_groups[group as usize].member(None, sm_index)?;
            }
        }
        Some(kept)
    }

    /// The flag-group members a selected instruction with `flags` uses on an SM, one per
    /// group of the pattern, in the pattern's group order.
    pub fn flag_members<S: AsRef<str>>(&self, p: &PatternInfo, flags: &[S], sm_index: usize) -> Result<Vec<(&FlagGroupInfo, &FlagMember)>, String> {
        p.flag_groups
            .iter()
            .map(|&g| {
                let group = &self.flag_groups[g as usize];
                let flag = flags.iter().map(AsRef::as_ref).find(|f| group.has_flag(f));
                group.member(flag, sm_index).map(|m| (group, m)).ok_or_else(|| {
                    let what = flag.map_or("no flag".to_string(), |f| format!("`.{f}`"));
                    format!("{}: flag group ${} has no member for {what} on this SM", p.name, group.name)
                })
            })
            .collect()
    }

    /// Pattern `p`'s template with every flag-group placeholder (`{GROUP}`,
    /// `{GROUP.FIELD}`) replaced by the text of the instruction's flag on the SM. A
    /// member's text may itself name another group of the pattern (`fence.sc{scope.fence}`).
    pub fn resolve_flag_groups<S: AsRef<str>>(&self, p: &PatternInfo, flags: &[S], sm_index: usize) -> Result<String, String> {
        let members = self.flag_members(p, flags, sm_index)?;
        let mut text = p.template.to_string();
        // The builder rejects cycles, so each round removes one level of nesting.
        for _ in 0..=members.len() {
            let mut changed = false;
            for (group, member) in &members {
                let whole = format!("{{{}}}", group.name);
                if text.contains(&whole) {
                    text = text.replace(&whole, group.text(member, None).unwrap_or(""));
                    changed = true;
                }
                for field in group.fields {
                    let key = format!("{{{}.{field}}}", group.name);
                    if text.contains(&key) {
                        text = text.replace(&key, group.text(member, Some(field)).unwrap_or(""));
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        Ok(text)
    }

    /// Finds an SM by `80`, `sm_80`, `SM_80`, `90a`, `compute_90a`.
    pub fn find_sm(&self, name: &str) -> Option<&SmTables> {
        let lower = name.trim().to_ascii_lowercase();
        let bare = lower
            .strip_prefix("sm_")
            .or_else(|| lower.strip_prefix("compute_"))
            .or_else(|| lower.strip_prefix("sm"))
            .unwrap_or(&lower);
        let canonical = format!("sm_{bare}");
        self.names.sms.get(&canonical).map(|i| &self.sms[i as usize])
    }

    pub fn sm_index(&self, sm: &SmTables) -> usize {
        self.sms.iter().position(|s| s.name == sm.name).unwrap_or(0)
    }

    pub fn opcode(&self, name: &str) -> Option<OpcodeId> {
        self.names.opcodes.get(name).map(OpcodeId)
    }

    pub fn vt(&self, name: &str) -> Option<VtId> {
        self.names.types.get(name).map(|v| VtId(v as u8))
    }

    pub fn cond_code(&self, name: &str) -> Option<CondCodeId> {
        self.names.cond_codes.get(name).map(|v| CondCodeId(v as u8))
    }

    // The three lookups below are on every pass's hot path. Opcode ids have gaps (they
    // follow LLVM's ISD numbering), so they go through `opcode_slots`; type and
    // condition-code ids are numbered from 1 in table order by the loader (0 is never
    // an id), so the entry at `id - 1` is the answer.
    pub fn opcode_info(&self, op: OpcodeId) -> Option<&'static OpcodeInfo> {
        let slot = *self.opcode_slots.get(op.0 as usize)?;
        self.opcodes.get(usize::from(slot).checked_sub(1)?)
    }

    pub fn type_info(&self, vt: VtId) -> Option<&TypeInfo> {
        by_id(self.types, vt.0 as usize, |t| t.id as usize)
    }

    pub fn cond_code_info(&self, cc: CondCodeId) -> Option<&CondCodeInfo> {
        by_id(self.cond_codes, cc.0 as usize, |c| c.id as usize)
    }

    pub fn knob(&self, name: &str) -> Option<&KnobInfo> {
        self.names.knobs.get(name).map(|i| &self.knobs[i as usize])
    }

    /// The action of `(opcode, vt)` on `sm` and the description rule that decided it.
    pub fn decide(&self, sm: &SmTables, opcode: OpcodeId, vt: VtId) -> Decision {
        let cell = (OPCODE_STRIDE * vt.0 as usize + opcode.0 as usize) as u32;
        let (rule, is_default) = match lookup_sorted(sm.action_sources, cell) {
            Some(&rule) => (rule, false),
            None => (self.default_action.1, true),
        };
        Decision {
            action: sm.action(opcode, vt),
            detail: sm.action_detail(opcode, vt),
            rule: self.rules[rule as usize],
            is_default,
        }
    }

    /// The condition-code action of `(cc, vt)` on `sm` and its rule.
    pub fn decide_cc(&self, sm: &SmTables, cc: CondCodeId, vt: VtId) -> Decision {
        let cell = cc.0 as u32 * MAX_VT_SLOTS as u32 + vt.0 as u32;
        let (rule, is_default) = match lookup_sorted(sm.cc_sources, cell) {
            Some(&rule) => (rule, false),
            None => (self.default_cc_action.1, true),
        };
        Decision {
            action: sm.cc_action(cc, vt),
            detail: None,
            rule: self.rules[rule as usize],
            is_default,
        }
    }

    /// The register class holding `vt` on `sm`, and the description line that put it
    /// there.
    pub fn register_type(
        &self,
        sm: &SmTables,
        vt: VtId,
    ) -> Option<(&RegisterClassInfo, RuleInfo)> {
        let class = *sm.type_class.get(vt.0 as usize)?;
        if class == NO_CLASS {
            return None;
        }
        let source = lookup_sorted(sm.type_sources, vt.0).copied()?;
        Some((&self.register_classes[class as usize], self.rules[source as usize]))
    }

    /// Whether a register holding `have` may be the operand where the instruction
    /// expects a `want` register on `sm`: the same class, or a class the description
    /// lets stand in for `want`'s (`read_as`).
    pub fn register_reads_as(&self, sm: &SmTables, have: VtId, want: VtId) -> bool {
        let class = |t: VtId| sm.type_class.get(t.0 as usize).copied().filter(|&c| c != NO_CLASS);
        match (class(have), class(want)) {
            (Some(h), Some(w)) => h == w || self.register_classes[h as usize].read_as.contains(&w),
            _ => false,
        }
    }

    /// [`Self::register_reads_as`] on some SM (for checks that do not know the SM).
    pub fn register_reads_as_somewhere(&self, have: VtId, want: VtId) -> bool {
        self.sms.iter().any(|sm| self.register_reads_as(sm, have, want))
    }

    /// The entry of the promotion table (BSWAP, CTLZ, ...) or the FSINCOS table.
    pub fn decide_one_dim(&self, sm: &SmTables, fsincos: bool, opcode: OpcodeId) -> Decision {
        let table = if fsincos { sm.fsincos } else { sm.promotion };
        let key = opcode.0 as u32 + if fsincos { OPCODE_STRIDE as u32 } else { 0 };
        let (rule, is_default) = match lookup_sorted(sm.one_dim_sources, key) {
            Some(&rule) => (rule, false),
            None => (self.default_action.1, true),
        };
        Decision {
            action: Action::from_byte(table[opcode.0 as usize]).unwrap_or(Action::Expand),
            detail: None,
            rule: self.rules[rule as usize],
            is_default,
        }
    }

    /// The description's custom promotion target for `(opcode, vt)` on `sm`, if any.
    pub fn promotion_target(&self, sm: &SmTables, opcode: OpcodeId, vt: VtId) -> Option<VtId> {
        match sm.action_detail(opcode, vt) {
            Some(ActionDetail::PromoteTo(t)) => Some(VtId(t)),
            _ => None,
        }
    }

    /// Is `opcode` in the rematerialization exclusion set?
    pub fn remat_excluded(&self, opcode: OpcodeId) -> bool {
        self.remat.excluded_opcodes.binary_search(&opcode.0).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibble_packing_round_trips_every_slot() {
        // A distinct pattern per slot so a shifted or swapped nibble shows up.
        let actions: Vec<u8> = (0..MAX_VT_SLOTS).map(|i| ((i * 7 + 3) % 5) as u8).collect();
        let words = pack_cc_nibbles(&actions);
        for (vt, &expected) in actions.iter().enumerate() {
            let word = words[vt >> 3];
            let got = ((word >> (4 * (vt & 7))) & 0xF) as u8;
            assert_eq!(got, expected, "slot {vt}");
        }
    }

    #[test]
    fn nibble_packing_puts_two_types_per_byte() {
        let mut actions = vec![0u8; MAX_VT_SLOTS];
        actions[0] = 2;
        actions[1] = 4;
        actions[9] = 3;
        let words = pack_cc_nibbles(&actions);
        assert_eq!(words[0] & 0xFF, 0x42, "types 0 and 1 share the low byte");
        assert_eq!((words[1] >> 4) & 0xF, 3, "type 9 is nibble 1 of word 1");
    }

    #[test]
    fn folded_constants_fit_ranges_and_masks_at_their_width() {
        let s32 = PatternOperand::ImmRange(0, -(1 << 31), (1 << 31) - 1);
        let u32 = PatternOperand::ImmRange(0, 0, (1 << 32) - 1);
        assert_eq!(s32.fold_constant(2147483647, 64), Some(2147483647));
        assert_eq!(s32.fold_constant(2147483648, 64), None);
        assert_eq!(s32.fold_constant(-2147483648, 64), Some(-2147483648));
        assert_eq!(u32.fold_constant(4294967295, 64), Some(4294967295));
        assert_eq!(u32.fold_constant(-1, 64), None, "-1 as an i64 is no u32");
        // A value is read at its type's width: 0xffff_ffff of an i32 is -1.
        assert_eq!(s32.fold_constant(0xffff_ffff, 32), Some(0xffff_ffff));
        let s16 = PatternOperand::ImmRange(0, -(1 << 15), (1 << 15) - 1);
        assert_eq!(s16.fold_constant(0xffff_8000, 32), Some(0xffff_8000));
        assert_eq!(s16.fold_constant(0x8000, 32), None);
        let mask = PatternOperand::LowMask(0);
        assert_eq!(mask.fold_constant(0xff, 32), Some(8));
        assert_eq!(mask.fold_constant(1, 32), Some(1));
        assert_eq!(mask.fold_constant(0x7fff_ffff, 32), Some(31));
        assert_eq!(mask.fold_constant(0xffff_ffff, 32), None, "all ones is no proper mask");
        assert_eq!(mask.fold_constant(-1, 64), None);
        assert_eq!(mask.fold_constant(0, 32), None);
        assert_eq!(mask.fold_constant(0xf0, 32), None);
    }

    #[test]
    fn legal_predicate_ignores_bit_two() {
        assert!(Action::byte_is_legal(0));
        assert!(Action::byte_is_legal(4));
        assert!(!Action::byte_is_legal(1));
        assert!(!Action::byte_is_legal(2));
        assert!(!Action::byte_is_legal(3));
    }
}

#[cfg(test)]
mod occupancy_tests {
    use super::{OccupancyInfo, SourceLoc};

    fn profile(max_warps: u32, max_blocks: u32, sub_partitions: u32, regs_per_block: u32) -> OccupancyInfo {
        OccupancyInfo {
            name: "test",
            regs_per_sm: 65536,
            regs_per_block,
            max_regs_per_thread: 255,
            reg_alloc_unit: 256,
            sub_partitions,
            max_warps_per_sm: max_warps,
            max_blocks_per_sm: max_blocks,
            max_threads_per_block: 1024,
            source: SourceLoc { file: "test", line: 1 },
        }
    }

    #[test]
    fn blocks_follow_the_register_warp_and_block_limits() {
        let a100 = profile(64, 32, 4, 65536);
        // 32 registers: 1024 per warp, 16 warps per partition, 64 warps = 8 blocks of 8.
        assert_eq!(a100.blocks_per_sm(32, 256), 8);
        // 33 registers round up to 40 (1280 per warp): 12 warps per partition, 48 warps.
        assert_eq!(a100.blocks_per_sm(33, 256), 6);
        // 255 registers: 8192 per warp, 2 warps per partition; a 1024-thread block
        // needs 32 warps (256K registers): it does not fit.
        assert_eq!(a100.blocks_per_sm(255, 1024), 0);
        assert_eq!(a100.blocks_per_sm(64, 1024), 1);
        // Tiny blocks stop at the block limit.
        assert_eq!(a100.blocks_per_sm(8, 32), 32);
        assert_eq!(a100.blocks_per_sm(8, 2048), 0);
    }

    #[test]
    fn register_target_is_the_largest_granule_that_keeps_the_blocks() {
        let a100 = profile(64, 32, 4, 65536);
        assert_eq!(a100.register_target(256, 4), Some(64));
        assert_eq!(a100.register_target(1024, 2), Some(32));
        assert_eq!(a100.register_target(1024, 1), Some(64));
        // One warp needs nothing of the register file: the per-thread maximum.
        assert_eq!(a100.register_target(32, 1), Some(255));
        // 64 blocks cannot be resident on a 32-block SM.
        assert_eq!(a100.register_target(32, 64), None);
        let ga10x = profile(48, 16, 4, 65536);
        assert_eq!(ga10x.register_target(256, 3), Some(80));
        // sm_60's two partitions: a 96-thread block (3 warps) is checked as 4 warps.
        let gp100 = profile(64, 32, 2, 65536);
        assert_eq!(gp100.blocks_per_sm(255, 96), 2);
        // Half the registers per block on Tegra parts.
        let tegra = profile(64, 32, 4, 32768);
        assert_eq!(tegra.register_target(1024, 1), Some(32));
    }
}
