//! The MIR reference interpreter: runs a kernel of a [`Module`] on given arguments and
//! returns the final memory, with exact, deterministic semantics.
//!
//! Where it sits: beside the pipeline, not in it. It runs MIR at any stage before
//! instruction selection (generic opcodes, SSA or after PHI elimination); machine
//! opcodes are reported as [`InterpError::Unsupported`]. `ptxc interp` is its command
//! line (see [`spec`] for the argument syntax and the JSON output).
//!
//! Why: it is the oracle of differential testing. A legalized kernel must compute
//! bit-identical results to the original on the same inputs, so every operation has
//! one exact meaning here (mir-spec §3.4 and ISD semantics), and undefined behaviour is
//! reported ([`InterpError::Undefined`]) instead of being given some value: a test
//! skips inputs on which the original kernel is undefined.
//!
//! # Semantics in brief
//!
//! - Values are raw bits: an `iN` lane is a `u128` with the bits above `N` zero, floats
//!   are their IEEE bit patterns, pointers 64-bit addresses. Vectors are per-lane.
//! - Integers wrap. Undefined: division or remainder by zero, `SDIV`/`SREM` of the
//!   minimum by -1, shift amounts not below the width (`*_PARTS`: not below twice the
//!   half width), out-of-range vector indices, fp-to-int of NaN, infinity or values
//!   outside the integer type (without `.sat`), a branch to a block whose PHI has no
//!   entry for the predecessor, reaching `UNREACHABLE`, `TRAP`.
//! - `UNDEF` reads as zero and `ANY_EXTEND` (also `LOAD.anyext`) zero-extends: both
//!   are deterministic choices, not undefined behaviour. Undefined shuffle-mask lanes
//!   (`-1`) and the lanes `SCALAR_TO_VECTOR` leaves undefined are zero too.
//! - Floats: IEEE 754, round to nearest even, correctly rounded `+ - * / sqrt fma` and
//!   conversions in every format (see [`float`]); `.ftz` flushes subnormal f32 inputs
//!   and results to a zero of the same sign (f32 only, as PTX). `FMINNUM`/`FMAXNUM`
//!   return the non-NaN operand, `FMINIMUM`/`FMAXIMUM` propagate NaN; all four order
//!   -0 below +0. `FSIN FCOS FEXP2 FLOG2 FEXP FLOG FPOW` use the host's libm (they are
//!   approximate operations: compare them with a tolerance); `.approx` division and
//!   square root are computed exactly. NaN results of the 16-bit formats and f32 are
//!   the canonical quiet NaN; f64 NaNs are what the host produces. Compare float
//!   outputs after [`canonicalize_nans`]. Float condition codes without `o`/`u` (`eq`,
//!   `lt`, ...) compare ordered (false on NaN), as PTX's `setp.eq.f32` does. f128 values
//!   can be moved, stored and converted, but f128 arithmetic is `Unsupported`.
//! - Memory: see [`memory`]. Little-endian; every access is bounds- and
//!   alignment-checked against the object it points into (alignment: the `align N`
//!   operand if given, else the natural alignment of the memory type). Uninitialised
//!   memory (shared memory, module globals without `init`) reads as zero. An `i1` in
//!   memory is one byte, read by its low bit and written as 0 or 1; vectors of `i1`
//!   are bit-packed (lane 0 in bit 0).
//! - Threads: blocks run one after another in `ctaid` order (x fastest); in a block,
//!   each thread runs until it exits or reaches a synchronisation point (barrier, warp
//!   shuffle or vote), in thread order, so results do not depend on how many
//!   instructions a thread executes between synchronisation points (a legalized kernel
//!   interleaves exactly like the original, races included). See `exec.rs` for the
//!   barrier and warp rules.
//! - Fuel: one unit per executed instruction (PHIs, evaluated on block entry, are
//!   free), across all threads; [`InterpError::OutOfFuel`] when it runs out.

pub mod args;
mod compile;
mod exec;
pub mod float;
pub mod fold;
pub mod int;
pub mod memory;
pub mod spec;
#[cfg(test)]
mod tests;

use target_desc::tables::TargetTables;

use crate::mir::{Function, Module};

pub use args::{canonicalize_nans, random_args};
pub use compile::{Cond, Kind, Ty, EQUAL, GREATER, LESS};
pub use float::FloatFormat;

/// The launch geometry: blocks per grid and threads per block, in x, y, z.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

impl Launch {
    /// One block of `threads` threads along x.
    pub fn threads(threads: u32) -> Launch {
        Launch { grid: [1, 1, 1], block: [threads, 1, 1] }
    }

    /// `blocks` blocks of `threads` threads, both along x.
    pub fn linear(blocks: u32, threads: u32) -> Launch {
        Launch { grid: [blocks, 1, 1], block: [threads, 1, 1] }
    }
}

impl Default for Launch {
    fn default() -> Launch {
        Launch::threads(1)
    }
}

/// One kernel argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArgValue {
    /// Raw bits in the low bits: an `i1` is 0 or 1, f16/bf16 are 16 bits, f32 its bits;
    /// a vector of at most 128 bits is its lanes packed with lane 0 lowest; a pointer
    /// is an address (0 for null).
    Scalar(u128),
    /// For a pointer parameter: a fresh buffer with these bytes, in global memory for a
    /// `p0`/`p1` parameter, in constant memory (read-only) for `p4`.
    Buffer(Vec<u8>),
}

/// What a kernel run leaves behind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunResult {
    /// Final contents of each [`ArgValue::Buffer`] argument, in parameter order.
    pub buffers: Vec<Vec<u8>>,
    /// Final contents of the module's global-space globals, in module order.
    pub globals: Vec<(String, Vec<u8>)>,
    /// Executed instructions, across all threads.
    pub steps: u64,
}

impl RunResult {
    /// Replaces every NaN in buffer `buffer`, read as elements of `format`, by the
    /// canonical NaN, so that two runs compare equal whatever NaN payloads they made.
    pub fn canonicalize_buffer(&mut self, buffer: usize, format: FloatFormat) {
        if let Some(bytes) = self.buffers.get_mut(buffer) {
            canonicalize_nans(bytes, format);
        }
    }

    /// Buffers and globals equal after NaN canonicalization of the named buffers
    /// (`(buffer index, element format)`); `steps` is not compared.
    pub fn same_outputs(&self, other: &RunResult, float_buffers: &[(usize, FloatFormat)]) -> bool {
        let (mut a, mut b) = (self.clone(), other.clone());
        for &(index, format) in float_buffers {
            a.canonicalize_buffer(index, format);
            b.canonicalize_buffer(index, format);
        }
        a.buffers == b.buffers && a.globals == b.globals
    }
}

/// Why a run stopped without a result.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum InterpError {
    /// The program's behaviour is undefined on these inputs (division by zero, an
    /// out-of-bounds access, a barrier some threads of the block never reach, ...).
    #[error("undefined behaviour in @{function}, {block}, instruction {inst_number} ({thread}): {what}", inst_number = inst + 1)]
    Undefined {
        function: String,
        /// The block's label, `bb.2.loop`.
        block: String,
        /// Index of the instruction in its block, from 0.
        inst: usize,
        what: String,
        /// The thread: `thread (5, 0, 0) of block (1, 0, 0)`.
        thread: String,
    },
    /// More instructions would run than the fuel allows.
    #[error("out of fuel after {steps} instructions (in @{function}, {block}, instruction {inst_number})", inst_number = inst + 1)]
    OutOfFuel { steps: u64, function: String, block: String, inst: usize },
    /// An operation the interpreter does not implement (machine opcodes, f128
    /// arithmetic, clock registers, ...).
    #[error("unsupported in @{function}, {block}, instruction {inst_number}: {what}", inst_number = inst + 1)]
    Unsupported { function: String, block: String, inst: usize, what: String },
    /// MIR the verifier would reject (wrong operand count or types, missing callee).
    #[error("malformed MIR in @{function}, {block}, instruction {inst_number}: {what}", inst_number = inst + 1)]
    Malformed { function: String, block: String, inst: usize, what: String },
    /// The entry, the launch or the arguments do not fit the kernel.
    #[error("bad arguments: {0}")]
    BadArguments(String),
}

impl InterpError {
    /// `(function, block label, instruction index)` of the error, when it has one.
    pub fn location(&self) -> Option<(&str, &str, usize)> {
        match self {
            InterpError::Undefined { function, block, inst, .. }
            | InterpError::OutOfFuel { function, block, inst, .. }
            | InterpError::Unsupported { function, block, inst, .. }
            | InterpError::Malformed { function, block, inst, .. } => Some((function, block, *inst)),
            InterpError::BadArguments(_) => None,
        }
    }
}

/// A module prepared for running: instructions resolved into a compact form once, so
/// that many runs (one per input) skip that work.
pub struct Program<'m> {
    module: &'m Module,
    compiled: compile::CompiledModule,
}

impl<'m> Program<'m> {
    pub fn new(module: &'m Module, tables: &TargetTables) -> Program<'m> {
        Program { module, compiled: compile::compile_module(module, tables) }
    }

    /// Runs kernel `entry`; see [`run_kernel`].
    pub fn run(&self, entry: &str, launch: &Launch, args: &[ArgValue], fuel: u64) -> Result<RunResult, InterpError> {
        exec::run(&self.compiled, self.module, entry, launch, args, fuel)
    }
}

/// Runs kernel `entry` of `module` on a `launch` grid with `args` (one per parameter),
/// executing at most `fuel` instructions.
pub fn run_kernel(module: &Module, tables: &TargetTables, entry: &str, launch: &Launch, args: &[ArgValue], fuel: u64) -> Result<RunResult, InterpError> {
    Program::new(module, tables).run(entry, launch, args, fuel)
}

/// The function named `name`, for [`random_args`].
pub fn find_function<'m>(module: &'m Module, name: &str) -> Option<&'m Function> {
    module.functions.iter().find(|f| f.name == name)
}
