//! Pre-resolution of MIR functions into the interpreter's compact form.
//!
//! Where it sits: the first step of every run ([`super::Program::new`]); [`super::exec`]
//! executes its output. Every opcode name, flag, type and condition code is looked up
//! here once, so that executing an instruction is a match on a small enum with operands
//! as register-file offsets, never a string comparison.
//!
//! Why instructions that cannot run still compile: an unsupported or malformed
//! instruction becomes [`Op::Fail`], reported only if a thread executes it, so a kernel
//! with such an instruction on a path it never takes still runs. Shape checks made here
//! (operand counts, lane counts) are what lets the executor index registers without
//! bounds failures.

use std::collections::HashMap;

use target_desc::tables::{TargetTables, TypeKind, VtId};

use super::float::{FloatFormat, Rounding};
use super::int::PartsShift;
use super::memory;
use crate::mir::{self, AddressSpace, Function, FunctionKind, InitValue, Module, Opcode, Operand};

/// The kind of a type's lanes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float(FloatFormat),
    /// A pointer into this address space.
    Pointer(u16),
}

/// A value type: lane kind, lane width and lane count (1 for scalars).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ty {
    pub kind: Kind,
    pub bits: u32,
    pub lanes: u32,
}

impl Ty {
    /// Bytes in memory: each lane rounded up to whole bytes (an i1 takes one).
    pub fn store_bytes(&self) -> u32 {
        self.bits.div_ceil(8).max(1) * self.lanes
    }

    pub fn from_vt(tables: &TargetTables, vt: VtId) -> Option<Ty> {
        let info = tables.type_info(vt)?;
        let (element, lanes) = if info.kind == TypeKind::Vector {
            (tables.type_info(VtId(info.elem))?, u32::from(info.lanes))
        } else {
            (info, 1)
        };
        let kind = match element.kind {
            TypeKind::Int => Kind::Int,
            TypeKind::Float => Kind::Float(FloatFormat::from_name(element.name)?),
            TypeKind::Pointer => Kind::Pointer(element.addrspace),
            TypeKind::Vector => return None,
        };
        let bits = if let Kind::Pointer(_) = kind { 64 } else { u32::from(element.bits) };
        if bits == 0 || bits > 128 || lanes == 0 {
            return None;
        }
        Some(Ty { kind, bits, lanes })
    }

    pub fn format(self) -> Option<FloatFormat> {
        match self.kind {
            Kind::Float(f) => Some(f),
            _ => None,
        }
    }

    pub fn is_int(self) -> bool {
        self.kind == Kind::Int
    }

    pub fn space(self) -> Option<u16> {
        match self.kind {
            Kind::Pointer(s) => Some(s),
            _ => None,
        }
    }

    /// Width of the whole value in bits.
    pub fn total_bits(self) -> u32 {
        self.bits * self.lanes
    }
}

/// Integer operations of two operands of one type.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntBinary {
    Add,
    Sub,
    Mul,
    MulHighSigned,
    MulHighUnsigned,
    SignedDiv,
    UnsignedDiv,
    SignedRem,
    UnsignedRem,
    And,
    Or,
    Xor,
    Shl,
    Sra,
    Srl,
    Rotl,
    Rotr,
    SignedMin,
    SignedMax,
    UnsignedMin,
    UnsignedMax,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntUnary {
    Abs,
    Ctpop,
    Bswap,
    Ctlz,
    Cttz,
    Bitreverse,
}

/// Arithmetic with an overflow or carry result.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Unsigned add; carry out (UADDO, ADDC).
    UnsignedAdd,
    UnsignedSub,
    SignedAdd,
    SignedSub,
    /// With a carry in as the third operand (ADDE, UADDO_CARRY).
    AddCarry,
    SubBorrow,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FloatBinary {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    MinNum,
    MaxNum,
    Minimum,
    Maximum,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FloatUnary {
    Neg,
    Abs,
    Sqrt,
    Sin,
    Cos,
    Exp2,
    Log2,
    Exp,
    Log,
    Ceil,
    Floor,
    Trunc,
    /// FRINT and FNEARBYINT: to nearest, ties to even.
    RoundEven,
    /// FROUND: to nearest, ties away from zero.
    RoundAway,
}

/// A condition code: which of less/equal/greater make it true, and for floats whether
/// it is true on unordered (NaN) operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cond {
    pub relations: u8,
    pub unordered: bool,
    /// `Some(signed)` when the code has an integer meaning.
    pub int_signed: Option<bool>,
}

pub const LESS: u8 = 1;
pub const EQUAL: u8 = 2;
pub const GREATER: u8 = 4;

impl Cond {
    /// The meaning of a condition code of the description, by name (`None` for a name
    /// the interpreter does not know).
    pub fn from_name(name: &str) -> Option<Cond> {
        let c = |relations, unordered, int_signed| Some(Cond { relations, unordered, int_signed });
        match name {
            "eq" => c(EQUAL, false, Some(false)),
            "ne" => c(LESS | GREATER, false, Some(false)),
            "lt" => c(LESS, false, Some(true)),
            "le" => c(LESS | EQUAL, false, Some(true)),
            "gt" => c(GREATER, false, Some(true)),
            "ge" => c(GREATER | EQUAL, false, Some(true)),
            "ult" => c(LESS, true, Some(false)),
            "ule" => c(LESS | EQUAL, true, Some(false)),
            "ugt" => c(GREATER, true, Some(false)),
            "uge" => c(GREATER | EQUAL, true, Some(false)),
            "oeq" => c(EQUAL, false, None),
            "ogt" => c(GREATER, false, None),
            "oge" => c(GREATER | EQUAL, false, None),
            "olt" => c(LESS, false, None),
            "ole" => c(LESS | EQUAL, false, None),
            "one" => c(LESS | GREATER, false, None),
            "ord" => c(LESS | EQUAL | GREATER, false, None),
            "uno" => c(0, true, None),
            "ueq" => c(EQUAL, true, None),
            "une" => c(LESS | GREATER, true, None),
            _ => None,
        }
    }
}

/// How a load extends or a store truncates.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Extension {
    None,
    Sign,
    /// `.zext` and `.anyext`.
    Zero,
}

/// A memory access: the type in memory, the extension, the alignment required.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MemAccess {
    /// The type in memory (lane width possibly narrower than the value's).
    pub memory: Ty,
    pub extension: Extension,
    pub size: u64,
    pub align: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Min,
    Max,
    UnsignedMin,
    UnsignedMax,
    FloatAdd,
    Swap,
    CompareSwap,
}

/// A libdevice function implemented natively.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LibCall {
    Unary(FloatUnary, FloatFormat),
    Binary(FloatBinary, FloatFormat),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Geometry {
    Tid,
    Ntid,
    Ctaid,
    Nctaid,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LaneMask {
    Eq,
    Le,
    Lt,
    Ge,
    Gt,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ShuffleMode {
    Up,
    Down,
    Butterfly,
    Index,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uniform,
    Ballot,
}

/// The reduction of `barrier0.popc/.and/.or`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BarrierReduction {
    None,
    Popc,
    And,
    Or,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Intrinsic {
    Geometry(Geometry, usize),
    LaneId,
    WarpSize,
    WarpId,
    LaneMask(LaneMask),
    Barrier(BarrierReduction),
    WarpSync,
    MemoryBarrier,
    Shuffle(ShuffleMode),
    Vote(VoteMode),
}

/// A control-flow edge: where execution continues and the PHI copies it performs.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub target_block: u32,
    /// The first instruction after the target's PHIs.
    pub target_pc: u32,
    /// `(destination slot, source slot, lanes)` of each PHI of the target.
    pub copies: Box<[(u32, u32, u32)]>,
    /// Set when a PHI of the target has no entry for this edge's source block.
    pub missing: Option<Box<str>>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FailKind {
    Unsupported,
    Malformed,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Constant(u128),
    Undef,
    Copy,
    Arg(u32),
    GlobalAddr(u64),
    /// The address of the current call's frame object.
    FrameIndex(u32),
    Binary(IntBinary),
    Unary(IntUnary),
    SignExtendInReg(u32),
    MulLoHi { signed: bool },
    Overflow(Overflow),
    ShiftParts(PartsShift),
    BuildPair,
    ExtractElement(u32),
    FloatBinary(FloatBinary),
    FloatUnary(FloatUnary),
    Fma { fused: bool },
    CopySign,
    SinCos,
    SetCC(Cond),
    Select,
    SelectCC(Cond),
    SignExtend,
    ZeroExtend,
    Truncate,
    FpConvert(Rounding),
    FpToInt { signed: bool, saturate: bool },
    IntToFp { signed: bool, mode: Rounding },
    Bitcast,
    AddrSpaceCast,
    Load(MemAccess),
    Store(MemAccess),
    /// ARG of an integer parameter of this many bits, sign-extended into the result.
    ArgSext(u32, u32),
    /// PRMT: byte i of the result is byte `selector` nibble i (low 3 bits) of a:b, or
    /// that byte's sign replicated when the nibble's bit 3 is set (PTX `prmt.b32`).
    Prmt(u32),
    /// `ARG index, offset`: `read` taken from the bytes of a parameter of type `whole`
    /// at `offset`, extended into the result (signed when `sext`) when `read` is narrower.
    ArgAt { index: u32, offset: u32, whole: Ty, read: Ty, sext: bool },
    /// LOADV2/LOADV4 and STOREV2/STOREV4: consecutive elements of `access`'s type in
    /// one access aligned (and bounds-checked) as a whole.
    LoadVector(MemAccess, u32),
    StoreVector(MemAccess, u32),
    PtrAdd,
    Atomic(AtomicOp, MemAccess),
    Fence,
    BuildVector,
    ExtractVectorElt,
    InsertVectorElt,
    ScalarToVector,
    ConcatVectors,
    ExtractSubvector,
    InsertSubvector,
    Shuffle(Box<[i32]>),
    /// A PHI at the start of a block, reached without an edge (function entry).
    Phi,
    Br(Box<Edge>),
    BrCond(Box<[Edge; 2]>),
    BrCC(Cond, Box<[Edge; 2]>),
    Ret,
    Trap,
    Unreachable,
    Call(u32),
    LibCall(LibCall),
    Intrinsic(Intrinsic),
    Fail(FailKind, Box<str>),
}

/// One resolved instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub op: Op,
    /// Register-file offsets of the results.
    pub defs: Box<[u32]>,
    pub def_tys: Box<[Ty]>,
    /// Register-file offsets of the value operands, in order.
    pub args: Box<[u32]>,
    pub arg_tys: Box<[Ty]>,
    /// `.ftz` on an f32 operation.
    pub ftz: bool,
    /// Block index and index in the block, for error locations.
    pub block: u32,
    pub index: u32,
}

impl Inst {
    /// The first result's type (every op that reads it has one).
    #[inline]
    pub fn ty(&self) -> Ty {
        self.def_tys[0]
    }
}

pub struct CompiledFunction {
    pub name: String,
    pub is_kernel: bool,
    pub insts: Vec<Inst>,
    pub block_labels: Vec<String>,
    /// Register-file size (one slot per lane of every value).
    pub slots: u32,
    pub params: Vec<Option<Ty>>,
    /// Offset of each parameter in the frame's parameter array.
    pub param_offsets: Vec<u32>,
    pub param_slots: u32,
    /// `maxntid` product, when the kernel gives one.
    pub max_threads: Option<u64>,
    /// Size and name of each frame object, allocated per call.
    pub frame: Vec<(u64, Option<String>)>,
}

/// A module global's place in memory.
pub struct GlobalLayout {
    pub name: String,
    pub space: AddressSpace,
    pub region: u32,
    /// Initial contents (zeros where there is no `init`).
    pub image: Vec<u8>,
}

pub struct CompiledModule {
    pub functions: Vec<CompiledFunction>,
    pub globals: Vec<GlobalLayout>,
}

pub fn compile_module(module: &Module, tables: &TargetTables) -> CompiledModule {
    let globals: Vec<GlobalLayout> = module.globals.iter().enumerate().map(|(i, g)| layout_global(g, i as u32, tables)).collect();
    let function_index: HashMap<&str, u32> = module.functions.iter().enumerate().map(|(i, f)| (f.name.as_str(), i as u32)).collect();
    let global_index: HashMap<&str, usize> = module.globals.iter().enumerate().map(|(i, g)| (g.name.as_str(), i)).collect();
    let context = Context { module, tables, function_index, global_index, globals: &globals };
    let functions = module.functions.iter().map(|f| context.function(f)).collect();
    CompiledModule { functions, globals }
}

fn layout_global(g: &mir::Global, region: u32, tables: &TargetTables) -> GlobalLayout {
    let ty = Ty::from_vt(tables, g.ty);
    let (lane_bytes, lanes) = ty.map_or((1, 1), |t| (u64::from(t.bits.div_ceil(8)), u64::from(t.lanes)));
    let elements = u64::from(g.count) * lanes;
    let size = (elements * lane_bytes).min(memory::MAX_REGION_BYTES);
    let mut image = vec![0u8; size as usize];
    if let (Some(init), Some(t)) = (&g.init, ty) {
        for (k, value) in init.iter().enumerate().take(elements as usize) {
            let bits = match (t.kind, value) {
                (Kind::Float(f), InitValue::Float(x)) => super::float::from_f64(f, *x),
                (Kind::Float(f), InitValue::Int(i)) => super::float::from_f64(f, *i as f64),
                (_, InitValue::Int(i)) => *i as u128,
                (_, InitValue::Float(x)) => *x as i128 as u128,
            };
            let start = k * lane_bytes as usize;
            if let Some(slot) = image.get_mut(start..start + lane_bytes as usize) {
                let masked = bits & super::int::mask(t.bits);
                slot.copy_from_slice(&masked.to_le_bytes()[..lane_bytes as usize]);
            }
        }
    }
    // Every object starts at offset 0 of its region, so any `align` is met.
    GlobalLayout { name: g.name.clone(), space: g.space, region, image }
}

struct Context<'a> {
    module: &'a Module,
    tables: &'a TargetTables,
    function_index: HashMap<&'a str, u32>,
    global_index: HashMap<&'a str, usize>,
    globals: &'a [GlobalLayout],
}

/// What an instruction compiles to before its operands are attached.
type Compiled = Result<Op, (FailKind, String)>;

fn malformed<T>(what: impl Into<String>) -> Result<T, (FailKind, String)> {
    Err((FailKind::Malformed, what.into()))
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, (FailKind, String)> {
    Err((FailKind::Unsupported, what.into()))
}

/// The per-function view while compiling.
struct FunctionContext<'a> {
    function: &'a Function,
    slots: Vec<u32>,
    tys: Vec<Option<Ty>>,
    block_of_number: HashMap<u32, usize>,
    /// Per block: how many PHIs it starts with.
    leading_phis: Vec<usize>,
    block_starts: Vec<u32>,
}

impl Context<'_> {
    fn function(&self, f: &Function) -> CompiledFunction {
        let tys: Vec<Option<Ty>> = f.values.iter().map(|v| Ty::from_vt(self.tables, v.ty)).collect();
        let mut slots = Vec::with_capacity(tys.len());
        let mut next = 0u32;
        for ty in &tys {
            slots.push(next);
            next = next.saturating_add(ty.map_or(1, |t| t.lanes));
        }
        let phi_opcode = self.tables.opcode("PHI");
        let is_phi = |inst: &mir::Inst| inst.opcode.generic().is_some() && inst.opcode.generic() == phi_opcode;
        let leading_phis: Vec<usize> = f.blocks.iter().map(|b| b.insts.iter().take_while(|i| is_phi(i)).count()).collect();
        // Block start offsets in the flat instruction list; a block without a terminator
        // gets one extra (failing) instruction.
        let mut block_starts = Vec::with_capacity(f.blocks.len());
        let mut pc = 0u32;
        for b in &f.blocks {
            block_starts.push(pc);
            let terminated = b.insts.last().is_some_and(|i| mir::opcode_info(i.opcode, self.tables).is_some_and(|o| o.has(target_desc::tables::props::TERMINATOR)));
            pc += b.insts.len() as u32 + u32::from(!terminated);
        }
        let fx = FunctionContext {
            function: f,
            slots,
            tys,
            block_of_number: f.blocks.iter().enumerate().map(|(i, b)| (b.number, i)).collect(),
            leading_phis,
            block_starts,
        };
        let mut insts = Vec::with_capacity(pc as usize);
        for (b, block) in f.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                insts.push(self.inst(&fx, b, i, inst));
            }
            if insts.len() as u32 != fx.block_starts.get(b + 1).copied().unwrap_or(pc) {
                insts.push(failing(FailKind::Malformed, format!("{} does not end with a terminator", block.label()), b, block.insts.len()));
            }
        }
        if insts.is_empty() {
            insts.push(failing(FailKind::Malformed, "the function has no blocks".into(), 0, 0));
        }
        let params: Vec<Option<Ty>> = f.params.iter().map(|p| Ty::from_vt(self.tables, p.ty)).collect();
        let mut param_offsets = Vec::with_capacity(params.len());
        let mut param_slots = 0u32;
        for p in &params {
            param_offsets.push(param_slots);
            param_slots += p.map_or(1, |t| t.lanes);
        }
        CompiledFunction {
            name: f.name.clone(),
            is_kernel: f.kind == FunctionKind::Kernel,
            insts,
            block_labels: f.blocks.iter().map(|b| b.label()).collect(),
            slots: next,
            params,
            param_offsets,
            param_slots,
            max_threads: f.attributes.maxntid.as_ref().map(|m| m.iter().map(|&x| u64::from(x)).product()),
            frame: f.frame.iter().map(|o| (o.size, o.name.clone())).collect(),
        }
    }

    fn inst(&self, fx: &FunctionContext<'_>, b: usize, i: usize, inst: &mir::Inst) -> Inst {
        let mut defs = Vec::with_capacity(inst.defs.len());
        let mut def_tys = Vec::with_capacity(inst.defs.len());
        let mut args = Vec::new();
        let mut arg_tys = Vec::new();
        let mut bad_value = None;
        for d in &inst.defs {
            match fx.value(d.0) {
                Some((slot, ty)) => {
                    defs.push(slot);
                    def_tys.push(ty);
                }
                None => bad_value = Some(d.0),
            }
        }
        for v in inst.uses() {
            match fx.value(v.0) {
                Some((slot, ty)) => {
                    args.push(slot);
                    arg_tys.push(ty);
                }
                None => bad_value = Some(v.0),
            }
        }
        let compiled = match bad_value {
            Some(v) => malformed(format!("value %{} has no type the interpreter knows", fx.function.values.get(v as usize).map_or("?", |x| x.name.as_str()))),
            None => self.op(fx, b, i, inst, &def_tys, &arg_tys),
        };
        let ftz = inst.has_flag("ftz");
        let (op, ftz) = match compiled {
            Ok(op) => (op, ftz),
            Err((kind, what)) => (Op::Fail(kind, what.into()), false),
        };
        Inst { op, defs: defs.into(), def_tys: def_tys.into(), args: args.into(), arg_tys: arg_tys.into(), ftz, block: b as u32, index: i as u32 }
    }

    #[allow(clippy::too_many_lines)]
    fn op(&self, fx: &FunctionContext<'_>, b: usize, i: usize, inst: &mir::Inst, defs: &[Ty], args: &[Ty]) -> Compiled {
        let Opcode::Generic(opcode) = inst.opcode else {
            return unsupported(format!("machine instruction {} (the interpreter runs MIR before instruction selection)", inst.opcode.name(self.tables)));
        };
        let Some(info) = self.tables.opcode_info(opcode) else { return malformed("unknown opcode") };
        let name = info.name;
        let shape = |n_defs: usize, n_args: usize| -> Result<(), (FailKind, String)> {
            if defs.len() != n_defs || args.len() != n_args {
                return malformed(format!("{name}: expected {n_defs} result(s) and {n_args} value operand(s), found {} and {}", defs.len(), args.len()));
            }
            Ok(())
        };
        // Every listed type has the same lane count.
        let same_lanes = |tys: &[Ty]| -> Result<(), (FailKind, String)> {
            if tys.windows(2).any(|w| w[0].lanes != w[1].lanes) {
                return malformed(format!("{name}: operands and results must have the same lane count"));
            }
            Ok(())
        };
        let same_type = |tys: &[Ty]| -> Result<(), (FailKind, String)> {
            if tys.windows(2).any(|w| w[0] != w[1]) {
                return malformed(format!("{name}: operands and result must have the same type"));
            }
            Ok(())
        };
        let all_int = |tys: &[Ty]| -> Result<(), (FailKind, String)> {
            if tys.iter().any(|t| !t.is_int()) {
                return malformed(format!("{name}: expected integer operands"));
            }
            Ok(())
        };
        let all_float = |tys: &[Ty]| -> Result<(), (FailKind, String)> {
            match tys.iter().find(|t| t.format().is_none()) {
                Some(_) => malformed(format!("{name}: expected float operands")),
                None => match tys.iter().find(|t| !t.format().is_some_and(|f| f.has_arithmetic())) {
                    Some(t) => unsupported(format!("{name} on {} (f128 arithmetic)", t.format().map_or("?", |f| f.name()))),
                    None => Ok(()),
                },
            }
        };
        let is_bool = |t: Ty| t.is_int() && t.bits == 1;
        let int_binary = |op: IntBinary| -> Compiled {
            shape(1, 2)?;
            all_int(&[defs[0], args[0], args[1]])?;
            match op {
                IntBinary::Shl | IntBinary::Sra | IntBinary::Srl | IntBinary::Rotl | IntBinary::Rotr => {
                    same_type(&[defs[0], args[0]])?;
                    same_lanes(&[defs[0], args[1]])?;
                }
                _ => same_type(&[defs[0], args[0], args[1]])?,
            }
            Ok(Op::Binary(op))
        };
        let float_binary = |op: FloatBinary| -> Compiled {
            shape(1, 2)?;
            same_type(&[defs[0], args[0], args[1]])?;
            all_float(&[defs[0]])?;
            Ok(Op::FloatBinary(op))
        };
        let float_unary = |op: FloatUnary| -> Compiled {
            shape(1, 1)?;
            same_type(&[defs[0], args[0]])?;
            if matches!(op, FloatUnary::Neg | FloatUnary::Abs) {
                // Sign operations work on the bits of any format, f128 included.
                if defs[0].format().is_none() {
                    return malformed(format!("{name}: expected float operands"));
                }
            } else {
                all_float(&[defs[0]])?;
            }
            Ok(Op::FloatUnary(op))
        };
        let overflow = |op: Overflow, carry_in: bool| -> Compiled {
            shape(2, if carry_in { 3 } else { 2 })?;
            same_type(&[defs[0], args[0], args[1]])?;
            all_int(&[defs[0], defs[1]])?;
            same_lanes(&[defs[0], defs[1]])?;
            if !is_bool(defs[1]) || (carry_in && (!is_bool(args[2]) || args[2].lanes != defs[0].lanes)) {
                return malformed(format!("{name}: the carry is an i1 value (per lane)"));
            }
            Ok(Op::Overflow(op))
        };
        let rounding = || -> Rounding {
            if inst.has_flag("rz") {
                Rounding::TowardZero
            } else if inst.has_flag("rm") {
                Rounding::Down
            } else if inst.has_flag("rp") {
                Rounding::Up
            } else {
                Rounding::NearestEven
            }
        };
        let cond = || -> Result<Cond, (FailKind, String)> {
            let Some(Operand::CondCode(cc)) = inst.operands.first() else { return malformed(format!("{name}: expected a condition code first")) };
            let cc_name = self.tables.cond_code_info(*cc).map_or("?", |c| c.name);
            Cond::from_name(cc_name).ok_or_else(|| (FailKind::Unsupported, format!("condition code `{cc_name}`")))
        };
        let check_cond = |c: Cond, compared: Ty| -> Result<(), (FailKind, String)> {
            match compared.kind {
                Kind::Float(f) if !f.has_arithmetic() => unsupported("comparison of f128 values"),
                Kind::Float(_) => Ok(()),
                _ if c.int_signed.is_none() => malformed(format!("{name}: this condition code compares floats only")),
                _ => Ok(()),
            }
        };
        let edge = |target: &Operand| -> Result<Edge, (FailKind, String)> {
            let Operand::Block(number) = target else { return malformed(format!("{name}: expected a block operand")) };
            fx.edge(b, *number)
        };
        let blocks: Vec<&Operand> = inst.operands.iter().filter(|o| matches!(o, Operand::Block(_))).collect();
        let integer_immediate = || inst.operands.iter().find_map(|o| if let Operand::Int(v) = o { Some(v.get()) } else { None });
        match name {
            "CONSTANT" => {
                shape(1, 0)?;
                let Some(v) = integer_immediate() else { return malformed("CONSTANT: expected an integer literal") };
                match defs[0].kind {
                    Kind::Int => Ok(Op::Constant(v as u128 & super::int::mask(defs[0].bits))),
                    _ => malformed("CONSTANT: expected an integer type"),
                }
            }
            "FCONSTANT" => {
                shape(1, 0)?;
                let Some(format) = defs[0].format() else { return malformed("FCONSTANT: expected a float type") };
                match inst.operands.first() {
                    Some(Operand::Float(x)) => Ok(Op::Constant(super::float::from_f64(format, *x))),
                    Some(Operand::Int(bits)) => Ok(Op::Constant(bits.get() as u128 & super::int::mask(format.bits()))),
                    _ => malformed("FCONSTANT: expected a float literal or raw bits"),
                }
            }
            "UNDEF" => {
                shape(1, 0)?;
                Ok(Op::Undef)
            }
            "COPY" => {
                shape(1, 1)?;
                same_type(&[defs[0], args[0]])?;
                Ok(Op::Copy)
            }
            "ARG" => {
                shape(1, 0)?;
                let Some(index) = integer_immediate() else { return malformed("ARG: expected an index") };
                let param = usize::try_from(index).ok().and_then(|k| fx.function.params.get(k));
                // A legalized ARG may carry the parameter in a wider integer (`.zext.i8`,
                // `.sext.i8`) or a float's bits in an integer of its width.
                let carried = |p: &crate::mir::Param| {
                    let Some(pt) = Ty::from_vt(self.tables, p.ty) else { return false };
                    let extends = inst.has_flag("sext") || inst.has_flag("zext") || inst.has_flag("anyext");
                    (extends && pt.is_int() && defs[0].is_int() && defs[0].bits > pt.bits && defs[0].lanes == 1)
                        || (!extends && !pt.is_int() && defs[0].is_int() && defs[0].bits == pt.bits && pt.lanes == 1)
                };
                // `ARG i, offset`: a part of the parameter's in-memory image.
                if let (Some(Operand::Int(offset)), Some(p)) = (inst.operands.get(1), param) {
                    let Some(whole) = Ty::from_vt(self.tables, p.ty) else { return unsupported("ARG of a parameter type the interpreter does not model") };
                    let narrow = inst.flags.iter().find_map(|f| self.tables.vt(f)).and_then(|n| Ty::from_vt(self.tables, n));
                    let read = narrow.unwrap_or(defs[0]);
                    let (size, total) = (read.store_bytes(), whole.store_bytes());
                    let Ok(offset) = u32::try_from(offset.get()) else { return malformed("ARG: a negative byte offset") };
                    if offset % size != 0 || offset + size > total || (narrow.is_some() && (read.lanes != 1 || defs[0].lanes != 1)) {
                        return malformed(format!("ARG {index}, {offset}: no {}-byte part there in a {total}-byte parameter", size));
                    }
                    return Ok(Op::ArgAt { index: index as u32, offset, whole, read, sext: inst.has_flag("sext") });
                }
                match param {
                    Some(p) if Ty::from_vt(self.tables, p.ty) == Some(defs[0]) => Ok(Op::Arg(index as u32)),
                    Some(p) if carried(p) => {
                        let bits = Ty::from_vt(self.tables, p.ty).map_or(0, |t| t.bits);
                        Ok(if inst.has_flag("sext") { Op::ArgSext(index as u32, bits) } else { Op::Arg(index as u32) })
                    }
                    Some(_) => malformed(format!("ARG {index}: the result type differs from the parameter's")),
                    None => malformed(format!("ARG {index}: the function has {} parameters", fx.function.params.len())),
                }
            }
            "GLOBAL_ADDR" => {
                shape(1, 0)?;
                let Some(Operand::Symbol(symbol)) = inst.operands.first() else { return malformed("GLOBAL_ADDR: expected @global") };
                let Some(&g) = self.global_index.get(&**symbol) else { return malformed(format!("GLOBAL_ADDR: unknown global @{symbol}")) };
                let layout = &self.globals[g];
                Ok(Op::GlobalAddr(memory::address(memory::space_number(layout.space), layout.region, 0)))
            }
            "FRAME_INDEX" => {
                shape(1, 0)?;
                match inst.operands.first() {
                    Some(Operand::Int(k)) if k.get() >= 0 && (k.get() as usize) < fx.function.frame.len() => Ok(Op::FrameIndex(k.get() as u32)),
                    _ => malformed(format!("FRAME_INDEX: expected the index of one of the function's {} frame objects", fx.function.frame.len())),
                }
            }
            "ADD" => int_binary(IntBinary::Add),
            "SUB" => int_binary(IntBinary::Sub),
            "MUL" => int_binary(IntBinary::Mul),
            "MULHS" => int_binary(IntBinary::MulHighSigned),
            "MULHU" => int_binary(IntBinary::MulHighUnsigned),
            "SDIV" => int_binary(IntBinary::SignedDiv),
            "UDIV" => int_binary(IntBinary::UnsignedDiv),
            "SREM" => int_binary(IntBinary::SignedRem),
            "UREM" => int_binary(IntBinary::UnsignedRem),
            "AND" => int_binary(IntBinary::And),
            "OR" => int_binary(IntBinary::Or),
            "XOR" => int_binary(IntBinary::Xor),
            "SHL" => int_binary(IntBinary::Shl),
            "SRA" => int_binary(IntBinary::Sra),
            "SRL" => int_binary(IntBinary::Srl),
            "ROTL" => int_binary(IntBinary::Rotl),
            "ROTR" => int_binary(IntBinary::Rotr),
            "SMIN" => int_binary(IntBinary::SignedMin),
            "SMAX" => int_binary(IntBinary::SignedMax),
            "UMIN" => int_binary(IntBinary::UnsignedMin),
            "UMAX" => int_binary(IntBinary::UnsignedMax),
            "ABS" | "CTPOP" | "BSWAP" | "CTLZ" | "CTTZ" | "BITREVERSE" => {
                shape(1, 1)?;
                same_type(&[defs[0], args[0]])?;
                all_int(&[defs[0]])?;
                let op = match name {
                    "ABS" => IntUnary::Abs,
                    "CTPOP" => IntUnary::Ctpop,
                    "BSWAP" => IntUnary::Bswap,
                    "CTLZ" => IntUnary::Ctlz,
                    "CTTZ" => IntUnary::Cttz,
                    _ => IntUnary::Bitreverse,
                };
                if op == IntUnary::Bswap && !defs[0].bits.is_multiple_of(16) {
                    return malformed(format!("BSWAP of i{}: the width must be a multiple of 16", defs[0].bits));
                }
                Ok(Op::Unary(op))
            }
            "SIGN_EXTEND_INREG" => {
                shape(1, 1)?;
                same_type(&[defs[0], args[0]])?;
                all_int(&[defs[0]])?;
                let from = inst.flags.iter().find_map(|f| f.strip_prefix('i').and_then(|n| n.parse::<u32>().ok()));
                match from {
                    Some(from) if from >= 1 && from <= defs[0].bits => Ok(Op::SignExtendInReg(from)),
                    _ => malformed("SIGN_EXTEND_INREG: expected a narrower type flag (.i8, .i16, ...)"),
                }
            }
            "SMUL_LOHI" | "UMUL_LOHI" => {
                shape(2, 2)?;
                same_type(&[defs[0], defs[1], args[0], args[1]])?;
                all_int(&[defs[0]])?;
                Ok(Op::MulLoHi { signed: name == "SMUL_LOHI" })
            }
            "UADDO" | "ADDC" => overflow(Overflow::UnsignedAdd, false),
            "USUBO" | "SUBC" => overflow(Overflow::UnsignedSub, false),
            "SADDO" => overflow(Overflow::SignedAdd, false),
            "SSUBO" => overflow(Overflow::SignedSub, false),
            "ADDE" | "UADDO_CARRY" => overflow(Overflow::AddCarry, true),
            "SUBE" | "USUBO_CARRY" => overflow(Overflow::SubBorrow, true),
            "SHL_PARTS" | "SRA_PARTS" | "SRL_PARTS" => {
                shape(2, 3)?;
                same_type(&[defs[0], defs[1], args[0], args[1]])?;
                all_int(&[defs[0], args[2]])?;
                if defs[0].lanes != 1 || args[2].lanes != 1 {
                    return malformed(format!("{name}: expected scalar integers"));
                }
                Ok(Op::ShiftParts(match name {
                    "SHL_PARTS" => PartsShift::Left,
                    "SRA_PARTS" => PartsShift::RightArithmetic,
                    _ => PartsShift::RightLogical,
                }))
            }
            "BUILD_PAIR" => {
                shape(1, 2)?;
                same_type(&[args[0], args[1]])?;
                all_int(&[defs[0], args[0]])?;
                if defs[0].lanes != 1 || args[0].lanes != 1 || defs[0].bits != 2 * args[0].bits {
                    return malformed("BUILD_PAIR: the result must be twice as wide as each half");
                }
                Ok(Op::BuildPair)
            }
            "EXTRACT_ELEMENT" => {
                shape(1, 1)?;
                all_int(&[defs[0], args[0]])?;
                let index = integer_immediate().unwrap_or(-1);
                let half = defs[0].bits;
                if defs[0].lanes != 1 || args[0].lanes != 1 || index < 0 || (index as u64 + 1) * u64::from(half) > u64::from(args[0].bits) {
                    return malformed(format!("EXTRACT_ELEMENT: index {index} of i{half} parts does not fit in i{}", args[0].bits));
                }
                Ok(Op::ExtractElement(index as u32))
            }
            "FADD" => float_binary(FloatBinary::Add),
            "FSUB" => float_binary(FloatBinary::Sub),
            "FMUL" => float_binary(FloatBinary::Mul),
            "FDIV" => float_binary(FloatBinary::Div),
            "FREM" => float_binary(FloatBinary::Rem),
            "FPOW" => float_binary(FloatBinary::Pow),
            "FMINNUM" => float_binary(FloatBinary::MinNum),
            "FMAXNUM" => float_binary(FloatBinary::MaxNum),
            "FMINIMUM" => float_binary(FloatBinary::Minimum),
            "FMAXIMUM" => float_binary(FloatBinary::Maximum),
            "FMA" | "FMAD" => {
                shape(1, 3)?;
                same_type(&[defs[0], args[0], args[1], args[2]])?;
                all_float(&[defs[0]])?;
                Ok(Op::Fma { fused: name == "FMA" })
            }
            "FNEG" => float_unary(FloatUnary::Neg),
            "FABS" => float_unary(FloatUnary::Abs),
            "FSQRT" => float_unary(FloatUnary::Sqrt),
            "FSIN" => float_unary(FloatUnary::Sin),
            "FCOS" => float_unary(FloatUnary::Cos),
            "FEXP2" => float_unary(FloatUnary::Exp2),
            "FLOG2" => float_unary(FloatUnary::Log2),
            "FEXP" => float_unary(FloatUnary::Exp),
            "FLOG" => float_unary(FloatUnary::Log),
            "FCEIL" => float_unary(FloatUnary::Ceil),
            "FFLOOR" => float_unary(FloatUnary::Floor),
            "FTRUNC" => float_unary(FloatUnary::Trunc),
            "FRINT" | "FNEARBYINT" => float_unary(FloatUnary::RoundEven),
            "FROUND" => float_unary(FloatUnary::RoundAway),
            "FCOPYSIGN" => {
                shape(1, 2)?;
                same_type(&[defs[0], args[0]])?;
                same_lanes(&[defs[0], args[1]])?;
                if defs[0].format().is_none() || args[1].format().is_none() {
                    return malformed("FCOPYSIGN: expected float operands");
                }
                Ok(Op::CopySign)
            }
            "FSINCOS" => {
                shape(2, 1)?;
                same_type(&[defs[0], defs[1], args[0]])?;
                all_float(&[defs[0]])?;
                Ok(Op::SinCos)
            }
            "SETCC" => {
                shape(1, 2)?;
                let c = cond()?;
                same_type(&[args[0], args[1]])?;
                same_lanes(&[defs[0], args[0]])?;
                if !is_bool(defs[0]) {
                    return malformed("SETCC: the result is i1 (per lane)");
                }
                check_cond(c, args[0])?;
                Ok(Op::SetCC(c))
            }
            "SELECT" | "VSELECT" => {
                shape(1, 3)?;
                same_type(&[defs[0], args[1], args[2]])?;
                if !is_bool(args[0]) || (args[0].lanes != 1 && args[0].lanes != defs[0].lanes) {
                    return malformed(format!("{name}: the condition is i1 or a vector of i1 with the result's lane count"));
                }
                Ok(Op::Select)
            }
            "SELECT_CC" => {
                shape(1, 4)?;
                let c = cond()?;
                same_type(&[args[0], args[1]])?;
                same_type(&[defs[0], args[2], args[3]])?;
                if args[0].lanes != 1 && args[0].lanes != defs[0].lanes {
                    return malformed("SELECT_CC: the compared values have the result's lane count or are scalars");
                }
                check_cond(c, args[0])?;
                Ok(Op::SelectCC(c))
            }
            "SIGN_EXTEND" | "ZERO_EXTEND" | "ANY_EXTEND" | "TRUNCATE" => {
                shape(1, 1)?;
                all_int(&[defs[0], args[0]])?;
                same_lanes(&[defs[0], args[0]])?;
                let widening = name != "TRUNCATE";
                if (widening && defs[0].bits < args[0].bits) || (!widening && defs[0].bits > args[0].bits) {
                    return malformed(format!("{name}: from i{} to i{}", args[0].bits, defs[0].bits));
                }
                Ok(match name {
                    "SIGN_EXTEND" => Op::SignExtend,
                    "TRUNCATE" => Op::Truncate,
                    _ => Op::ZeroExtend,
                })
            }
            "FP_EXTEND" | "FP_ROUND" => {
                shape(1, 1)?;
                same_lanes(&[defs[0], args[0]])?;
                if defs[0].format().is_none() || args[0].format().is_none() {
                    return malformed(format!("{name}: expected float types"));
                }
                Ok(Op::FpConvert(rounding()))
            }
            "FP_TO_SINT" | "FP_TO_UINT" => {
                shape(1, 1)?;
                same_lanes(&[defs[0], args[0]])?;
                all_int(&[defs[0]])?;
                if args[0].format().is_none() {
                    return malformed(format!("{name}: expected a float operand"));
                }
                Ok(Op::FpToInt { signed: name == "FP_TO_SINT", saturate: inst.has_flag("sat") })
            }
            "SINT_TO_FP" | "UINT_TO_FP" => {
                shape(1, 1)?;
                same_lanes(&[defs[0], args[0]])?;
                all_int(&[args[0]])?;
                if defs[0].format().is_none() {
                    return malformed(format!("{name}: expected a float result"));
                }
                Ok(Op::IntToFp { signed: name == "SINT_TO_FP", mode: rounding() })
            }
            "BITCAST" => {
                shape(1, 1)?;
                if defs[0].total_bits() != args[0].total_bits() {
                    return malformed("BITCAST: the types differ in width");
                }
                Ok(Op::Bitcast)
            }
            "ADDRSPACECAST" => {
                shape(1, 1)?;
                if defs[0].space().is_none() || args[0].space().is_none() || defs[0].lanes != 1 || args[0].lanes != 1 {
                    return malformed("ADDRSPACECAST: expected pointers");
                }
                Ok(Op::AddrSpaceCast)
            }
            "PTR_ADD" => {
                shape(1, 2)?;
                same_type(&[defs[0], args[0]])?;
                if defs[0].space().is_none() || defs[0].lanes != 1 || args[1].lanes != 1 || !args[1].is_int() {
                    return malformed("PTR_ADD: expected a pointer and an integer offset");
                }
                Ok(Op::PtrAdd)
            }
            "LOAD" => {
                shape(1, 1)?;
                if args[0].space().is_none() || args[0].lanes != 1 {
                    return malformed("LOAD: expected a pointer operand");
                }
                let access = self.access(inst, defs[0], true)?;
                Ok(Op::Load(access))
            }
            "STORE" => {
                shape(0, 2)?;
                if args[1].space().is_none() || args[1].lanes != 1 {
                    return malformed("STORE: expected a pointer as the second operand");
                }
                let access = self.access(inst, args[0], false)?;
                Ok(Op::Store(access))
            }
            "LOADV2" | "LOADV4" | "STOREV2" | "STOREV4" => {
                let count: usize = if name.ends_with('2') { 2 } else { 4 };
                let load = name.starts_with("LOAD");
                let values: Vec<Ty> = if load {
                    shape(count, 1)?;
                    defs.to_vec()
                } else {
                    shape(0, count + 1)?;
                    args[..count].to_vec()
                };
                let pointer = if load { args[0] } else { args[count] };
                if pointer.space().is_none() || pointer.lanes != 1 {
                    return malformed(format!("{name}: expected a pointer operand"));
                }
                same_type(&values)?;
                let element = self.access(inst, values[0], load)?;
                let size = element.size * count as u64;
                let explicit = inst.operands.iter().find_map(|o| match o {
                    Operand::Align(a) => Some(*a),
                    _ => None,
                });
                let whole = MemAccess { size, align: explicit.unwrap_or(size.next_power_of_two()), ..element };
                Ok(if load { Op::LoadVector(whole, count as u32) } else { Op::StoreVector(whole, count as u32) })
            }
            "ATOMIC_LOAD_ADD" | "ATOMIC_LOAD_SUB" | "ATOMIC_LOAD_AND" | "ATOMIC_LOAD_OR" | "ATOMIC_LOAD_XOR" | "ATOMIC_LOAD_MIN"
            | "ATOMIC_LOAD_MAX" | "ATOMIC_LOAD_UMIN" | "ATOMIC_LOAD_UMAX" | "ATOMIC_LOAD_FADD" | "ATOMIC_SWAP" | "ATOMIC_CMP_SWAP" => {
                let compare = name == "ATOMIC_CMP_SWAP";
                shape(1, if compare { 3 } else { 2 })?;
                if args[0].space().is_none() || args[0].lanes != 1 {
                    return malformed(format!("{name}: expected a pointer as the first operand"));
                }
                same_type(&args[1..].iter().copied().chain([defs[0]]).collect::<Vec<_>>())?;
                // A vector is updated lane by lane in one step (a compare-and-swap compares
                // the whole vector).
                let ty = defs[0];
                if ty.lanes > 16 {
                    return unsupported(format!("{name} on a vector of more than 16 lanes"));
                }
                let op = match name {
                    "ATOMIC_LOAD_ADD" if ty.format().is_some() => AtomicOp::FloatAdd,
                    "ATOMIC_LOAD_ADD" => AtomicOp::Add,
                    "ATOMIC_LOAD_SUB" => AtomicOp::Sub,
                    "ATOMIC_LOAD_AND" => AtomicOp::And,
                    "ATOMIC_LOAD_OR" => AtomicOp::Or,
                    "ATOMIC_LOAD_XOR" => AtomicOp::Xor,
                    "ATOMIC_LOAD_MIN" => AtomicOp::Min,
                    "ATOMIC_LOAD_MAX" => AtomicOp::Max,
                    "ATOMIC_LOAD_UMIN" => AtomicOp::UnsignedMin,
                    "ATOMIC_LOAD_UMAX" => AtomicOp::UnsignedMax,
                    "ATOMIC_LOAD_FADD" => AtomicOp::FloatAdd,
                    "ATOMIC_SWAP" => AtomicOp::Swap,
                    _ => AtomicOp::CompareSwap,
                };
                let needs_int = !matches!(op, AtomicOp::FloatAdd | AtomicOp::Swap | AtomicOp::CompareSwap);
                if needs_int && !ty.is_int() {
                    return malformed(format!("{name}: expected an integer value"));
                }
                if op == AtomicOp::FloatAdd {
                    all_float(&[ty])?;
                }
                let access = memory_access(ty, ty, Extension::None, None);
                Ok(Op::Atomic(op, access))
            }
            "ATOMIC_FENCE" => Ok(Op::Fence),
            "BUILD_VECTOR" => {
                if defs.len() != 1 || args.len() != defs[0].lanes as usize {
                    return malformed(format!("BUILD_VECTOR: expected {} operands", defs.first().map_or(0, |d| d.lanes)));
                }
                if args.iter().any(|a| a.lanes != 1 || a.bits < defs[0].bits) {
                    return malformed("BUILD_VECTOR: expected scalar operands at least as wide as the element");
                }
                Ok(Op::BuildVector)
            }
            "EXTRACT_VECTOR_ELT" => {
                shape(1, 2)?;
                if defs[0].lanes != 1 || args[1].lanes != 1 || !args[1].is_int() || defs[0].bits < args[0].bits {
                    return malformed("EXTRACT_VECTOR_ELT: expected (vector, integer index) -> element");
                }
                Ok(Op::ExtractVectorElt)
            }
            "INSERT_VECTOR_ELT" => {
                shape(1, 3)?;
                same_type(&[defs[0], args[0]])?;
                if args[1].lanes != 1 || args[1].bits < defs[0].bits || args[2].lanes != 1 || !args[2].is_int() {
                    return malformed("INSERT_VECTOR_ELT: expected (vector, element, integer index)");
                }
                Ok(Op::InsertVectorElt)
            }
            "SCALAR_TO_VECTOR" => {
                shape(1, 1)?;
                if args[0].lanes != 1 || args[0].bits < defs[0].bits {
                    return malformed("SCALAR_TO_VECTOR: expected a scalar at least as wide as the element");
                }
                Ok(Op::ScalarToVector)
            }
            "CONCAT_VECTORS" => {
                if defs.len() != 1 || args.is_empty() {
                    return malformed("CONCAT_VECTORS: expected vectors to concatenate");
                }
                let lanes: u32 = args.iter().map(|a| a.lanes).sum();
                if args.iter().any(|a| a.bits != defs[0].bits || a.kind != defs[0].kind) || lanes != defs[0].lanes {
                    return malformed("CONCAT_VECTORS: the operands' lanes must make up the result");
                }
                Ok(Op::ConcatVectors)
            }
            "EXTRACT_SUBVECTOR" => {
                shape(1, 2)?;
                if defs[0].bits != args[0].bits || defs[0].lanes > args[0].lanes || args[1].lanes != 1 || !args[1].is_int() {
                    return malformed("EXTRACT_SUBVECTOR: expected (vector, index) -> narrower vector of the same element");
                }
                Ok(Op::ExtractSubvector)
            }
            "INSERT_SUBVECTOR" => {
                shape(1, 3)?;
                same_type(&[defs[0], args[0]])?;
                if args[1].bits != defs[0].bits || args[1].lanes > defs[0].lanes || args[2].lanes != 1 || !args[2].is_int() {
                    return malformed("INSERT_SUBVECTOR: expected (vector, subvector, index)");
                }
                Ok(Op::InsertSubvector)
            }
            "PRMT" => {
                shape(1, 2)?;
                same_type(&[args[0], args[1], defs[0]])?;
                if defs[0].bits * defs[0].lanes != 32 || defs[0].bits % 8 != 0 {
                    return unsupported("PRMT on a type other than 32 bits of whole-byte lanes");
                }
                let Some(selector) = integer_immediate() else { return malformed("PRMT: expected a selector") };
                Ok(Op::Prmt(selector as u32 & 0xffff))
            }
            "VECTOR_SHUFFLE" => {
                shape(1, 2)?;
                same_type(&[args[0], args[1]])?;
                let Some(Operand::Mask(mask)) = inst.operands.iter().find(|o| matches!(o, Operand::Mask(_))) else {
                    return malformed("VECTOR_SHUFFLE: expected a mask(...)");
                };
                if mask.len() != defs[0].lanes as usize || defs[0].bits != args[0].bits {
                    return malformed("VECTOR_SHUFFLE: the mask has one entry per result lane");
                }
                let limit = 2 * args[0].lanes as i32;
                if let Some(bad) = mask.iter().find(|&&m| m < -1 || m >= limit) {
                    return malformed(format!("VECTOR_SHUFFLE: mask index {bad} is outside 0..{limit}"));
                }
                Ok(Op::Shuffle(mask.clone()))
            }
            "PHI" => {
                if i >= fx.leading_phis[b] {
                    return malformed("PHI must come before every other instruction of its block");
                }
                Ok(Op::Phi)
            }
            "BR" => {
                let [target] = blocks[..] else { return malformed("BR: expected one block") };
                Ok(Op::Br(Box::new(edge(target)?)))
            }
            "BRCOND" => {
                shape(0, 1)?;
                if !is_bool(args[0]) || args[0].lanes != 1 {
                    return malformed("BRCOND: the condition is an i1");
                }
                let [t, f] = blocks[..] else { return malformed("BRCOND: expected two blocks") };
                Ok(Op::BrCond(Box::new([edge(t)?, edge(f)?])))
            }
            "BR_CC" => {
                shape(0, 2)?;
                let c = cond()?;
                same_type(&[args[0], args[1]])?;
                if args[0].lanes != 1 {
                    return malformed("BR_CC: expected scalar operands");
                }
                check_cond(c, args[0])?;
                let [t, f] = blocks[..] else { return malformed("BR_CC: expected two blocks") };
                Ok(Op::BrCC(c, Box::new([edge(t)?, edge(f)?])))
            }
            "RET" => {
                let expected: Vec<Option<Ty>> = if fx.function.kind == FunctionKind::Kernel {
                    Vec::new()
                } else {
                    fx.function.returns.iter().map(|r| Ty::from_vt(self.tables, *r)).collect()
                };
                if !defs.is_empty() || expected.len() != args.len() || expected.iter().zip(args).any(|(e, a)| *e != Some(*a)) {
                    return malformed("RET: the returned values do not match the function's `returns`");
                }
                Ok(Op::Ret)
            }
            "TRAP" => Ok(Op::Trap),
            "UNREACHABLE" => Ok(Op::Unreachable),
            "CALL" => self.call(inst, defs, args),
            "INTRINSIC" => self.intrinsic(inst, defs, args),
            other => unsupported(format!("opcode {other}")),
        }
    }

    fn access(&self, inst: &mir::Inst, value: Ty, load: bool) -> Result<MemAccess, (FailKind, String)> {
        let narrow = inst.flags.iter().find_map(|f| self.tables.vt(f).and_then(|v| Ty::from_vt(self.tables, v)));
        let extension = if inst.has_flag("sext") {
            Extension::Sign
        } else if inst.has_flag("zext") || inst.has_flag("anyext") {
            Extension::Zero
        } else {
            Extension::None
        };
        let explicit_align = inst.operands.iter().find_map(|o| match o {
            Operand::Align(a) => Some(*a),
            _ => None,
        });
        if explicit_align.is_some_and(|a| a == 0 || !a.is_power_of_two()) {
            return malformed("`align N` must be a power of two");
        }
        let changes_width = extension != Extension::None || inst.has_flag("trunc");
        let memory = match (narrow, changes_width) {
            (Some(n), true) => {
                if !value.is_int() || !n.is_int() || n.bits >= value.bits {
                    return malformed("an extending load or truncating store needs an integer value wider than the memory type");
                }
                Ty { kind: Kind::Int, bits: n.bits, lanes: value.lanes }
            }
            (None, false) => value,
            _ => return malformed(if load { "LOAD: .sext/.zext/.anyext go with a memory type flag (.i8, .i16, .i32)" } else { "STORE: .trunc goes with a memory type flag" }),
        };
        Ok(memory_access(memory, value, extension, explicit_align))
    }

    fn call(&self, inst: &mir::Inst, defs: &[Ty], args: &[Ty]) -> Compiled {
        let Some(Operand::Symbol(callee)) = inst.operands.first() else { return malformed("CALL: expected @callee first") };
        if let Some(&index) = self.function_index.get(&**callee) {
            let target = &self.module.functions[index as usize];
            if target.kind == FunctionKind::Kernel {
                return malformed(format!("CALL: @{callee} is a kernel"));
            }
            let params: Vec<Option<Ty>> = target.params.iter().map(|p| Ty::from_vt(self.tables, p.ty)).collect();
            let returns: Vec<Option<Ty>> = target.returns.iter().map(|r| Ty::from_vt(self.tables, *r)).collect();
            let matches = |expected: &[Option<Ty>], actual: &[Ty]| expected.len() == actual.len() && expected.iter().zip(actual).all(|(e, a)| *e == Some(*a));
            if !matches(&params, args) || !matches(&returns, defs) {
                return malformed(format!("CALL @{callee}: arguments or results do not match its signature"));
            }
            return Ok(Op::Call(index));
        }
        let Some(libcall) = libcall(callee) else {
            return unsupported(format!("CALL of @{callee}, which the module does not define and is not a known libdevice function"));
        };
        let (format, arity) = match libcall {
            LibCall::Unary(_, f) => (f, 1),
            LibCall::Binary(_, f) => (f, 2),
        };
        let expected = Ty { kind: Kind::Float(format), bits: format.bits(), lanes: 1 };
        if defs != [expected] || args.len() != arity || args.iter().any(|a| *a != expected) {
            return malformed(format!("CALL @{callee}: expected {arity} {} argument(s) and one {} result", format.name(), format.name()));
        }
        Ok(Op::LibCall(libcall))
    }

    fn intrinsic(&self, inst: &mir::Inst, defs: &[Ty], args: &[Ty]) -> Compiled {
        let Some(Operand::Symbol(name)) = inst.operands.first() else { return malformed("INTRINSIC: expected @name first") };
        let i32_ty = Ty { kind: Kind::Int, bits: 32, lanes: 1 };
        let i1_ty = Ty { kind: Kind::Int, bits: 1, lanes: 1 };
        let f32_ty = Ty { kind: Kind::Float(FloatFormat::F32), bits: 32, lanes: 1 };
        let signature = |expected_args: &[Ty], expected_defs: &[Ty]| -> Result<(), (FailKind, String)> {
            if args != expected_args || defs != expected_defs {
                return malformed(format!("INTRINSIC @{name}: operands or results do not match its signature"));
            }
            Ok(())
        };
        let axis = |suffix: &str| match suffix {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some(register) = name.strip_prefix("llvm.nvvm.read.ptx.sreg.") {
            signature(&[], &[if register == "clock64" || register == "globaltimer" { Ty { bits: 64, ..i32_ty } } else { i32_ty }])?;
            if let Some((which, suffix)) = register.split_once('.') {
                let geometry = match which {
                    "tid" => Some(Geometry::Tid),
                    "ntid" => Some(Geometry::Ntid),
                    "ctaid" => Some(Geometry::Ctaid),
                    "nctaid" => Some(Geometry::Nctaid),
                    _ => None,
                };
                if let (Some(g), Some(a)) = (geometry, axis(suffix)) {
                    return Ok(Op::Intrinsic(Intrinsic::Geometry(g, a)));
                }
                if which == "lanemask" {
                    let kind = match suffix {
                        "eq" => LaneMask::Eq,
                        "le" => LaneMask::Le,
                        "lt" => LaneMask::Lt,
                        "ge" => LaneMask::Ge,
                        "gt" => LaneMask::Gt,
                        _ => return unsupported(format!("intrinsic @{name}")),
                    };
                    return Ok(Op::Intrinsic(Intrinsic::LaneMask(kind)));
                }
            }
            return match register {
                "laneid" => Ok(Op::Intrinsic(Intrinsic::LaneId)),
                "warpsize" => Ok(Op::Intrinsic(Intrinsic::WarpSize)),
                "warpid" => Ok(Op::Intrinsic(Intrinsic::WarpId)),
                _ => unsupported(format!("intrinsic @{name}: its value depends on the hardware and timing")),
            };
        }
        if let Some(rest) = name.strip_prefix("llvm.nvvm.shfl.sync.") {
            let (mode, ty) = rest.split_once('.').unwrap_or((rest, ""));
            let mode = match mode {
                "up" => ShuffleMode::Up,
                "down" => ShuffleMode::Down,
                "bfly" => ShuffleMode::Butterfly,
                "idx" => ShuffleMode::Index,
                _ => return unsupported(format!("intrinsic @{name}")),
            };
            let value = match ty {
                "i32" => i32_ty,
                "f32" => f32_ty,
                _ => return unsupported(format!("intrinsic @{name}")),
            };
            signature(&[i32_ty, value, i32_ty, i32_ty], &[value])?;
            return Ok(Op::Intrinsic(Intrinsic::Shuffle(mode)));
        }
        match &**name {
            "llvm.nvvm.barrier0" => {
                signature(&[], &[])?;
                Ok(Op::Intrinsic(Intrinsic::Barrier(BarrierReduction::None)))
            }
            "llvm.nvvm.barrier0.popc" | "llvm.nvvm.barrier0.and" | "llvm.nvvm.barrier0.or" => {
                signature(&[i32_ty], &[i32_ty])?;
                let reduction = match &**name {
                    "llvm.nvvm.barrier0.popc" => BarrierReduction::Popc,
                    "llvm.nvvm.barrier0.and" => BarrierReduction::And,
                    _ => BarrierReduction::Or,
                };
                Ok(Op::Intrinsic(Intrinsic::Barrier(reduction)))
            }
            "llvm.nvvm.bar.warp.sync" => {
                signature(&[i32_ty], &[])?;
                Ok(Op::Intrinsic(Intrinsic::WarpSync))
            }
            "llvm.nvvm.membar.cta" | "llvm.nvvm.membar.gl" | "llvm.nvvm.membar.sys" => {
                signature(&[], &[])?;
                Ok(Op::Intrinsic(Intrinsic::MemoryBarrier))
            }
            "llvm.nvvm.vote.all.sync" | "llvm.nvvm.vote.any.sync" | "llvm.nvvm.vote.uni.sync" | "llvm.nvvm.vote.ballot.sync" => {
                let ballot = &**name == "llvm.nvvm.vote.ballot.sync";
                signature(&[i32_ty, i1_ty], &[if ballot { i32_ty } else { i1_ty }])?;
                let mode = match &**name {
                    "llvm.nvvm.vote.all.sync" => VoteMode::All,
                    "llvm.nvvm.vote.any.sync" => VoteMode::Any,
                    "llvm.nvvm.vote.uni.sync" => VoteMode::Uniform,
                    _ => VoteMode::Ballot,
                };
                Ok(Op::Intrinsic(Intrinsic::Vote(mode)))
            }
            "llvm.nvvm.activemask" => unsupported("intrinsic @llvm.nvvm.activemask: the set of active lanes depends on the hardware's divergence handling"),
            _ => unsupported(format!("intrinsic @{name}")),
        }
    }
}

impl FunctionContext<'_> {
    fn value(&self, index: u32) -> Option<(u32, Ty)> {
        let ty = (*self.tys.get(index as usize)?)?;
        Some((self.slots[index as usize], ty))
    }

    /// The edge from block `from` to the block numbered `target`, with its PHI copies.
    fn edge(&self, from: usize, target: u32) -> Result<Edge, (FailKind, String)> {
        let Some(&to) = self.block_of_number.get(&target) else { return malformed(format!("branch to %bb.{target}, which does not exist")) };
        let from_number = self.function.blocks[from].number;
        let block = &self.function.blocks[to];
        let mut copies = Vec::new();
        let mut missing = None;
        for phi in &block.insts[..self.leading_phis[to]] {
            let Some(dst) = phi.defs.first().and_then(|d| self.value(d.0)) else { return malformed("PHI without a typed result") };
            let incoming = phi.operands.chunks(2).find_map(|pair| match pair {
                [Operand::Value(v), Operand::Block(p)] if *p == from_number => Some(*v),
                _ => None,
            });
            match incoming {
                Some(v) => {
                    let Some(src) = self.value(v.0) else { return malformed("PHI operand without a type") };
                    if src.1 != dst.1 {
                        return malformed("PHI operand and result differ in type");
                    }
                    copies.push((dst.0, src.0, dst.1.lanes));
                }
                None => {
                    let name = &self.function.values[phi.defs[0].0 as usize].name;
                    missing.get_or_insert_with(|| format!("branch from {} to {}: PHI %{name} has no value for this predecessor", self.function.blocks[from].label(), block.label()).into_boxed_str());
                }
            }
        }
        Ok(Edge { target_block: to as u32, target_pc: self.block_starts[to] + self.leading_phis[to] as u32, copies: copies.into(), missing })
    }
}

/// The access of a value of type `value` stored as `memory`.
fn memory_access(memory: Ty, _value: Ty, extension: Extension, explicit_align: Option<u64>) -> MemAccess {
    let size = memory::stored_size(memory);
    let natural = size.next_power_of_two().max(1);
    MemAccess { memory, extension, size, align: explicit_align.unwrap_or(natural) }
}

fn failing(kind: FailKind, what: String, block: usize, index: usize) -> Inst {
    Inst {
        op: Op::Fail(kind, what.into()),
        defs: Box::new([]),
        def_tys: Box::new([]),
        args: Box::new([]),
        arg_tys: Box::new([]),
        ftz: false,
        block: block as u32,
        index: index as u32,
    }
}

/// The libdevice functions implemented natively (legality.rules `libcall(...)` names,
/// plus their f32/f64 siblings).
pub fn libcall(name: &str) -> Option<LibCall> {
    use FloatFormat::{F32, F64};
    Some(match name {
        "__nv_sin" => LibCall::Unary(FloatUnary::Sin, F64),
        "__nv_sinf" => LibCall::Unary(FloatUnary::Sin, F32),
        "__nv_cos" => LibCall::Unary(FloatUnary::Cos, F64),
        "__nv_cosf" => LibCall::Unary(FloatUnary::Cos, F32),
        "__nv_exp2" => LibCall::Unary(FloatUnary::Exp2, F64),
        "__nv_exp2f" => LibCall::Unary(FloatUnary::Exp2, F32),
        "__nv_log2" => LibCall::Unary(FloatUnary::Log2, F64),
        "__nv_log2f" => LibCall::Unary(FloatUnary::Log2, F32),
        "__nv_fmod" => LibCall::Binary(FloatBinary::Rem, F64),
        "__nv_fmodf" => LibCall::Binary(FloatBinary::Rem, F32),
        "__nv_pow" => LibCall::Binary(FloatBinary::Pow, F64),
        "__nv_powf" => LibCall::Binary(FloatBinary::Pow, F32),
        _ => return None,
    })
}

/// Resolves one instruction on its own, outside any function layout, for constant
/// folding ([`super::fold`]): the same resolution a run uses, so the folded value is the
/// value a run computes. Only for opcodes that need no function context (the caller
/// refuses ARG, PHI, branches, calls and memory before asking).
pub(crate) fn resolve_pure(tables: &TargetTables, function: &Function, inst: &mir::Inst, defs: &[Ty], args: &[Ty]) -> Result<Op, String> {
    let module = Module { name: None, globals: Vec::new(), functions: Vec::new() };
    let context = Context { module: &module, tables, function_index: HashMap::new(), global_index: HashMap::new(), globals: &[] };
    let fx = FunctionContext { function, slots: Vec::new(), tys: Vec::new(), block_of_number: HashMap::new(), leading_phis: Vec::new(), block_starts: Vec::new() };
    context.op(&fx, 0, 0, inst, defs, args).map_err(|(_, what)| what)
}
