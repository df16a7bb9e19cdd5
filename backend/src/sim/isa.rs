//! The simulator's compact instruction form: PTX types, operands and operations with
//! every modifier already interpreted.
//!
//! Where it sits: [`super::decode`] produces it once per file, [`super::exec`] runs it.
//! Executing an instruction is a match on [`Op`] with operands as register-file slots
//! or resolved symbols: no string is looked at after decoding.

use crate::interp::float::{FloatFormat, Rounding};

/// A PTX fundamental type (`.b32`, `.s64`, `.f16x2`, ...).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Pred,
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    BF16,
    BF16x2,
    F32,
    F64,
    /// Two f32 lanes in a `.b64` register (sm_100).
    F32x2,
    /// `.u16x2`/`.s16x2` packed integers.
    U16x2,
    S16x2,
    /// TensorFloat-32 (an f32 with 10 fraction bits), only in `cvt`.
    TF32,
}

impl Ty {
    pub fn from_word(word: &str) -> Option<Ty> {
        Some(match word {
            "pred" => Ty::Pred,
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "b128" => Ty::B128,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "f16x2" => Ty::F16x2,
            "bf16" => Ty::BF16,
            "bf16x2" => Ty::BF16x2,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "f32x2" => Ty::F32x2,
            "u16x2" => Ty::U16x2,
            "s16x2" => Ty::S16x2,
            "tf32" => Ty::TF32,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Ty::Pred => "pred",
            Ty::B8 => "b8",
            Ty::B16 => "b16",
            Ty::B32 => "b32",
            Ty::B64 => "b64",
            Ty::B128 => "b128",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::S8 => "s8",
            Ty::S16 => "s16",
            Ty::S32 => "s32",
            Ty::S64 => "s64",
            Ty::F16 => "f16",
            Ty::F16x2 => "f16x2",
            Ty::BF16 => "bf16",
            Ty::BF16x2 => "bf16x2",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::F32x2 => "f32x2",
            Ty::U16x2 => "u16x2",
            Ty::S16x2 => "s16x2",
            Ty::TF32 => "tf32",
        }
    }

    /// Width in bits (a predicate is 1).
    pub fn bits(self) -> u32 {
        match self {
            Ty::Pred => 1,
            Ty::B8 | Ty::U8 | Ty::S8 => 8,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::BF16 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 | Ty::U16x2 | Ty::S16x2 | Ty::TF32 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 | Ty::F32x2 => 64,
            Ty::B128 => 128,
        }
    }

    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64 | Ty::S16x2)
    }

    /// Integer types, signed, unsigned or untyped bits.
    pub fn is_int(self) -> bool {
        matches!(self, Ty::B8 | Ty::B16 | Ty::B32 | Ty::B64 | Ty::B128 | Ty::U8 | Ty::U16 | Ty::U32 | Ty::U64 | Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    /// The lane format of a float type.
    pub fn format(self) -> Option<FloatFormat> {
        Some(match self {
            Ty::F16 | Ty::F16x2 => FloatFormat::F16,
            Ty::BF16 | Ty::BF16x2 => FloatFormat::BF16,
            Ty::F32 | Ty::F32x2 | Ty::TF32 => FloatFormat::F32,
            Ty::F64 => FloatFormat::F64,
            _ => return None,
        })
    }

    /// Lanes of a packed type (2 for `.f16x2`), else 1.
    pub fn lanes(self) -> u32 {
        match self {
            Ty::F16x2 | Ty::BF16x2 | Ty::F32x2 | Ty::U16x2 | Ty::S16x2 => 2,
            _ => 1,
        }
    }

    /// Bits of one lane.
    pub fn lane_bits(self) -> u32 {
        self.bits() / self.lanes()
    }
}

/// A state space.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Generic,
    Global,
    Shared,
    Const,
    Local,
    Param,
}

impl Space {
    pub fn from_word(word: &str) -> Option<Space> {
        Some(match word.split("::").next().unwrap_or(word) {
            "global" => Space::Global,
            "shared" => Space::Shared,
            "const" => Space::Const,
            "local" => Space::Local,
            "param" => Space::Param,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Space::Generic => "generic",
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Const => "const",
            Space::Local => "local",
            Space::Param => "param",
        }
    }
}

/// A special register.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    LaneMaskEq,
    LaneMaskLe,
    LaneMaskLt,
    LaneMaskGe,
    LaneMaskGt,
    /// `%clock`, `%clock64`: the thread's executed-instruction count (deterministic).
    Clock,
    ClockHi,
    Clock64,
    /// `%globaltimer`: nanoseconds, here 1 per executed instruction of the kernel.
    GlobalTimer,
    GlobalTimerLo,
    GlobalTimerHi,
    TotalSmemSize,
    DynamicSmemSize,
    /// `%envregN`, `%pmN`: always zero.
    Zero,
}

impl Special {
    pub fn from_name(name: &str) -> Option<Special> {
        let dim = |c: &str| match c {
            "x" => Some(0),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some((base, c)) = name.split_once('.') {
            let d = dim(c)?;
            return Some(match base {
                "%tid" => Special::Tid(d),
                "%ntid" => Special::Ntid(d),
                "%ctaid" => Special::Ctaid(d),
                "%nctaid" => Special::Nctaid(d),
                _ => return None,
            });
        }
        Some(match name {
            "%laneid" => Special::LaneId,
            "%warpid" => Special::WarpId,
            "%nwarpid" => Special::NWarpId,
            "%smid" => Special::SmId,
            "%nsmid" => Special::NSmId,
            "%gridid" => Special::GridId,
            "%lanemask_eq" => Special::LaneMaskEq,
            "%lanemask_le" => Special::LaneMaskLe,
            "%lanemask_lt" => Special::LaneMaskLt,
            "%lanemask_ge" => Special::LaneMaskGe,
            "%lanemask_gt" => Special::LaneMaskGt,
            "%clock" => Special::Clock,
            "%clock_hi" => Special::ClockHi,
            "%clock64" => Special::Clock64,
            "%globaltimer" => Special::GlobalTimer,
            "%globaltimer_lo" => Special::GlobalTimerLo,
            "%globaltimer_hi" => Special::GlobalTimerHi,
            "%total_smem_size" => Special::TotalSmemSize,
            "%dynamic_smem_size" => Special::DynamicSmemSize,
            _ if name.starts_with("%envreg") || name.starts_with("%pm") => Special::Zero,
            _ => return None,
        })
    }
}

/// A symbol resolved to what its address is relative to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sym {
    /// A global-space object (index into the machine's global objects).
    Global(u32),
    /// A const-space variable at this const-bank offset.
    Const(u32),
    /// A shared-space variable at this offset of the block's shared window.
    Shared(u32),
    /// A local variable at this offset of the current frame's locals.
    Local(u32),
    /// The kernel's parameter at this offset of the kernel parameter image.
    KernelParam(u32),
    /// A parameter object of the current frame (own parameter, own return value, or
    /// a `.param` declared in a call scope), by index.
    FrameParam(u32),
    /// A function (its address is an opaque token).
    Function(u32),
}

/// A value operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Src {
    /// A register slot; a `.b128` register spans this slot and the next.
    Reg(u32),
    /// `!%p`.
    NotPred(u32),
    Imm(u64),
    Special(Special),
    /// The address of a symbol plus an offset, generic when the flag is set.
    Addr(Sym, i64, bool),
}

/// A destination operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dst {
    Reg(u32),
    /// `_`.
    Sink,
}

/// `[base+offset]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AddrBase {
    None,
    Reg(u32),
    Sym(Sym),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Address {
    pub base: AddrBase,
    pub offset: i64,
}

/// Integer comparisons and float comparisons (ordered and unordered).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

impl Cmp {
    pub fn from_word(w: &str) -> Option<Cmp> {
        Some(match w {
            "eq" => Cmp::Eq,
            "ne" => Cmp::Ne,
            "lt" => Cmp::Lt,
            "le" => Cmp::Le,
            "gt" => Cmp::Gt,
            "ge" => Cmp::Ge,
            "lo" => Cmp::Lo,
            "ls" => Cmp::Ls,
            "hi" => Cmp::Hi,
            "hs" => Cmp::Hs,
            "equ" => Cmp::Equ,
            "neu" => Cmp::Neu,
            "ltu" => Cmp::Ltu,
            "leu" => Cmp::Leu,
            "gtu" => Cmp::Gtu,
            "geu" => Cmp::Geu,
            "num" => Cmp::Num,
            "nan" => Cmp::Nan,
            _ => return None,
        })
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Integer and bitwise operations of two operands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntBin {
    Add,
    Sub,
    MulLo,
    MulHi,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Mul24Lo,
    Mul24Hi,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntUn {
    Abs,
    Neg,
    Not,
    Cnot,
    Popc,
    Clz,
    Brev,
    Bfind,
    BfindShiftAmt,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FloatBin {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    Copysign,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FloatUn {
    Abs,
    Neg,
    Sqrt,
    Rcp,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Tanh,
}

/// How `cvt` rounds: to a float result or to an integral value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CvtRound {
    None,
    Float(Rounding),
    /// `.rna`: to nearest, ties away from zero (tf32 only).
    NearestAway,
    Integer(Rounding),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PrmtMode {
    Default,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BarKind {
    Sync,
    Arrive,
    RedPopc,
    RedAnd,
    RedOr,
}

/// Float modifiers shared by the arithmetic instructions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FloatMods {
    pub rounding: Rounding,
    pub ftz: bool,
    pub sat: bool,
    /// `.relu`: negative results (and NaN) become +0.
    pub relu: bool,
}

impl Default for FloatMods {
    fn default() -> FloatMods {
        FloatMods { rounding: Rounding::NearestEven, ftz: false, sat: false, relu: false }
    }
}

/// One operation with its modifiers; operand order is in each variant's comment.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// d = a op b. `sat` for `add.sat.s32`/`sub.sat.s32`; `carry_in`/`carry_out` for
    /// `addc`/`.cc`.
    Int { op: IntBin, ty: Ty, sat: bool, carry_in: bool, carry_out: bool },
    /// d = a op b with a result twice as wide (`mul.wide`).
    MulWide { ty: Ty },
    /// d = a * b + c: `lo`, `hi` or `wide` (`mad.lo`, `mad.hi.sat.s32`, `madc.hi.cc`).
    Mad { ty: Ty, hi: bool, wide: bool, sat: bool, carry_in: bool, carry_out: bool },
    Mad24 { ty: Ty, hi: bool, sat: bool },
    /// d = c + |a - b|.
    Sad { ty: Ty },
    IntUn { op: IntUn, ty: Ty },
    /// bfe d, a, pos, len.
    Bfe { ty: Ty },
    /// bfi d, insert, base, pos, len.
    Bfi { ty: Ty },
    /// prmt d, a, b, selector.
    Prmt { mode: PrmtMode },
    /// shf d, a, b, c.
    Shf { left: bool, clamp: bool, ty: Ty },
    /// lop3 d, a, b, c, lut.
    Lop3,
    /// bmsk d, a (start), b (width).
    Bmsk { clamp: bool },
    /// szext d, a, b (width).
    Szext { clamp: bool, signed: bool },
    /// dp4a/dp2a d, a, b, c.
    Dp4a { a_signed: bool, b_signed: bool },
    Dp2a { a_signed: bool, b_signed: bool, hi: bool },
    /// d = a op b on floats (also packed lanes).
    Float { op: FloatBin, ty: Ty, m: FloatMods, nan: bool, xorsign_abs: bool, approx: bool },
    /// d = a * b + c, fused.
    Fma { ty: Ty, m: FloatMods },
    /// Mixed precision (sm_100, PTX 8.6): `add`/`sub{.rnd}{.sat}.f32.src d, a, c` is
    /// d = f32(a) op c, with `a` of the 16-bit format `src` (`.f16` or `.bf16`) converted
    /// exactly; `op` is `Add` or `Sub`.
    MixedFloat { op: FloatBin, src: Ty, m: FloatMods },
    /// Mixed precision `fma.rnd{.sat}.f32.src d, a, b, c`: d = f32(a) * f32(b) + c, fused.
    MixedFma { src: Ty, m: FloatMods },
    FloatUn { op: FloatUn, ty: Ty, m: FloatMods, approx: bool },
    /// testp.op p, a.
    Testp { class: u8, ty: Ty },
    /// setp p[|q], a, b[, c].
    Setp { cmp: Cmp, ty: Ty, bool_op: Option<BoolOp>, ftz: bool },
    /// set d, a, b[, c] with a boolean (`.u32`/`.s32` all ones, `.f32` 1.0) result.
    Set { cmp: Cmp, dty: Ty, ty: Ty, bool_op: Option<BoolOp>, ftz: bool },
    /// selp d, a, b, p.
    Selp { ty: Ty },
    /// slct d, a, b, c: c >= 0 ? a : b.
    Slct { ty: Ty, cty: Ty, ftz: bool },
    Cvt { dty: Ty, sty: Ty, round: CvtRound, ftz: bool, sat: bool, relu: bool },
    /// cvt.rn.f16x2.f32 d, a, b (a in the upper half).
    CvtPack { dty: Ty, round: CvtRound, relu: bool },
    /// cvta d, a: `to` converts generic to `space`, else `space` to generic.
    Cvta { space: Space, to: bool, ty: Ty },
    Isspacep { space: Space },
    /// mov d, a (register, immediate, special register or symbol address).
    Mov { ty: Ty },
    /// mov d, {a, b, ...}: lanes lowest first.
    Pack { ty: Ty, lanes: u32 },
    /// mov {a, b, ...}, s.
    Unpack { ty: Ty, lanes: u32 },
    /// ld d(s), [a]. `vec` destinations of `ty`.
    Ld { space: Space, ty: Ty, vec: u32, volatile: bool },
    St { space: Space, ty: Ty, vec: u32, volatile: bool },
    /// atom d, [a], b[, c] or red [a], b.
    Atom { space: Space, op: AtomOp, ty: Ty, red: bool, vec: u32 },
    /// Orders nothing here (the simulator runs memory operations in program order).
    Fence,
    Nop,
    /// bar d?, id, count?, pred?: see the operand list.
    Bar { kind: BarKind, has_count: bool },
    BarWarpSync,
    Shfl { mode: ShflMode, sync: bool },
    Vote { mode: VoteMode, sync: bool },
    Activemask,
    Match { all: bool, ty: Ty },
    Redux { op: ReduxOp, ty: Ty },
    /// bra target.
    Bra { target: u32 },
    /// call: see [`Call`].
    Call(Box<Call>),
    Ret,
    Exit,
    Trap,
}

/// A call's resolved parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// Direct callee, or `None` for an indirect call through `target`.
    pub callee: Option<u32>,
    pub target: Option<Src>,
    /// Frame parameter objects of the caller passed as arguments, and receiving results.
    pub args: Vec<u32>,
    pub results: Vec<u32>,
}

/// An instruction ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub op: Op,
    /// `@p` / `@!p`: the predicate slot and whether it is negated.
    pub guard: Option<(u32, bool)>,
    pub dsts: Vec<Dst>,
    pub srcs: Vec<Src>,
    pub addr: Option<Address>,
    /// Byte offset of the instruction in the PTX text, for messages.
    pub at: u32,
}
