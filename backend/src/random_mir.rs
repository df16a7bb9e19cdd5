//! Random MIR kernels for differential testing.
//!
//! What: [`generate`] writes the MIR text of one module holding one kernel that loads
//! values of many types, computes a random data-flow graph of generic operations on
//! them (optionally across an if/else diamond and a counted loop) and stores every
//! result to memory. [`generate_from_bytes`] does the same with fuzzer bytes as the
//! random stream, so a cargo-fuzz target can steer it.
//!
//! Where it sits in the pipeline: outside it, as a source of inputs. The text is meant
//! to be read by [`crate::mir::parser`], checked by [`crate::mir::verifier`], and then
//! run by the reference interpreter before and after legalization (and compiled by the
//! rest of the pipeline): both runs must leave the same bytes in the output buffer.
//!
//! Why it looks the way it does: a differential test is only useful when almost every
//! generated kernel has one defined result. So the generator
//!
//! - keeps every memory access in bounds and naturally aligned: thread `tid.x` reads
//!   `input + tid * input_stride + offset` and writes `output + tid * output_stride +
//!   offset`, at distinct offsets (see [`GeneratedKernel::required_input_bytes`]);
//! - guards every operation the MIR spec (§3.4) leaves undefined: divisors are ORed
//!   with 1, signed division either clears the dividend's sign bit or clears bit 1 of
//!   the (odd) divisor so it is never -1, shift and rotate amounts are ANDed with
//!   `width - 1`, float-to-integer conversions read a value clamped with
//!   FMINNUM/FMAXNUM to a range the integer type and the float's precision both hold;
//! - never lets an unspecified bit reach memory: an ANY_EXTEND result is masked back
//!   to its source bits and an UNDEF vector is fully overwritten before anything reads
//!   it; `i1` is stored but never loaded (which bits of a random byte an `i1` load
//!   sees is a convention, not a value);
//! - by default leaves out what has no single right answer: the PTX `.approx`
//!   functions (FSIN FCOS FEXP2 FLOG2) and the float forms of the integer condition
//!   codes (`eq ne lt le gt ge`, whose result on NaN operands ISD leaves unspecified).
//!   Both can be turned on in [`GeneratorConfig`].
//!
//! Float results may be NaN; which NaN payload an operation produces is not specified,
//! so [`GeneratedKernel::compare_outputs`] treats any two NaNs in a float lane as equal
//! and compares every other byte exactly.
//!
//! Each kernel focuses on a random subset of [`GeneratorConfig::types`]: arithmetic only
//! produces values of those types. Besides them a kernel only holds `i1` conditions,
//! the element types of its vector types, `i32`/`i64` indices, shift amounts and loop
//! counters, and `p1` addresses.
//!
//! A differential test, in outline:
//!
//! ```
//! use backend::random_mir::{generate, GeneratorConfig};
//!
//! let tables = tables::nvptx();
//! let kernel = generate(42, &GeneratorConfig::only(&["i128", "bf16"]), tables).unwrap();
//! let module = backend::mir::parser::parse_module(&kernel.text, "random.mir", tables).unwrap();
//! let threads = 32; // one block; each thread uses tid.x
//! let input = vec![0x5a_u8; kernel.required_input_bytes(threads)]; // any bytes are valid
//! let output = vec![0_u8; kernel.required_output_bytes(threads)];
//! // Parameters: 0 = input, 1 = output, then one scalar per `kernel.scalar_params`.
//! // Run `module`'s `kernel.name` before and after legalization from these buffers,
//! // then `kernel.compare_outputs(&before, &after)`.
//! # let _ = (module, input);
//! assert_eq!(kernel.compare_outputs(&output, &output), Ok(()));
//! ```

use std::collections::HashMap;
use std::fmt;

use target_desc::tables::{TargetTables, TypeKind, VtId};

/// Every type the generator can work with, in the order the coverage tests list them.
pub const ALL_TYPES: [&str; 26] = [
    "i1", "i8", "i16", "i32", "i64", "i128", "f16", "bf16", "f32", "f64", "v2i8", "v3i8", "v4i8", "v2i16", "v4i16",
    "v2i32", "v4i32", "v2i64", "v2f16", "v4f16", "v8f16", "v2bf16", "v4bf16", "v2f32", "v4f32", "v2f64",
];

/// What kernels to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratorConfig {
    /// Names of the value types kernels may focus on (see [`ALL_TYPES`]).
    pub types: Vec<String>,
    /// How many of `types` one kernel focuses on: a random count in this inclusive
    /// range, clamped to `1..=types.len()`.
    pub types_per_kernel: (usize, usize),
    /// How many random operations one kernel gets, inclusive range. Loads, constants,
    /// stores and the guards against undefined behaviour come on top.
    pub operations: (usize, usize),
    /// Allow an if/else diamond with PHIs at the join (BRCOND or BR_CC).
    pub if_else: bool,
    /// Allow a counted loop with an induction PHI and accumulator PHIs.
    pub loops: bool,
    /// Also generate FSIN, FCOS, FEXP2 and FLOG2 (approximate in PTX: compare results
    /// with a tolerance).
    pub approximate_functions: bool,
    /// Also generate FREM (exact, but a libcall on NVPTX).
    pub float_remainder: bool,
    /// Also compare floats with `eq ne lt le gt ge`, whose result on a NaN operand ISD
    /// leaves unspecified (a legalizer may swap or invert them and get another answer).
    pub nan_unspecified_float_codes: bool,
    /// At most this many scalar kernel parameters after the two buffers (see
    /// [`GeneratedKernel::scalar_params`]); any focus type of at most 128 bits, so
    /// vectors, i128 and i1 exercise the kernel parameter ABI.
    pub max_scalar_params: usize,
    /// Allow calls of device functions that take values of the focus types (and i1)
    /// and return them in reverse order, exercising the device-function ABI.
    pub calls: bool,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            types: ALL_TYPES.iter().map(|t| t.to_string()).collect(),
            types_per_kernel: (1, 4),
            operations: (8, 40),
            if_else: true,
            loops: true,
            approximate_functions: false,
            float_remainder: true,
            nan_unspecified_float_codes: false,
            max_scalar_params: 2,
            calls: true,
        }
    }
}

impl GeneratorConfig {
    /// Kernels that focus on exactly `types` (for tests such as "i128 only").
    pub fn only(types: &[&str]) -> GeneratorConfig {
        GeneratorConfig {
            types: types.iter().map(|t| t.to_string()).collect(),
            types_per_kernel: (types.len(), types.len()),
            ..GeneratorConfig::default()
        }
    }

    /// Everything on: every optional opcode and condition code (for coverage).
    pub fn everything() -> GeneratorConfig {
        GeneratorConfig { approximate_functions: true, nan_unspecified_float_codes: true, ..GeneratorConfig::default() }
    }
}

/// A configuration the generator cannot honour (an unknown or unsupported type name, or
/// no types at all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "random MIR generator: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

/// One store of a generated kernel: `size` bytes at `offset` in each thread's output
/// region, holding `lanes` elements of type `element`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSlot {
    pub offset: usize,
    pub size: usize,
    /// The stored type (`v4f16`), or the memory type of a truncating store (`i8`).
    pub ty: &'static str,
    /// The element type (the type itself for scalars).
    pub element: &'static str,
    pub lanes: usize,
}

/// A generated kernel and what a test needs to run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedKernel {
    /// The MIR text of a module with one kernel.
    pub text: String,
    /// The kernel's name (the entry point to run).
    pub name: String,
    /// The types this kernel's arithmetic works on.
    pub focus_types: Vec<&'static str>,
    /// Parameter 0 is the input buffer and parameter 1 the output buffer (both `p1`);
    /// these are the types of the scalar parameters 2, 3, ... that follow.
    pub scalar_params: Vec<&'static str>,
    /// Bytes of input each thread reads, from `input + tid.x * input_stride`.
    pub input_stride: usize,
    /// Bytes of output each thread owns, from `output + tid.x * output_stride`.
    pub output_stride: usize,
    /// Every store, in the order the kernel's text names them.
    pub outputs: Vec<OutputSlot>,
}

impl GeneratedKernel {
    /// The input buffer a launch of `threads` threads in one block (`tid.x` from 0 to
    /// `threads - 1`) needs: every byte may be read, any contents are valid.
    pub fn required_input_bytes(&self, threads: usize) -> usize {
        self.input_stride * threads
    }

    /// The output buffer such a launch needs. Bytes no store covers keep their initial
    /// contents, so start both runs of a differential test from the same buffer.
    pub fn required_output_bytes(&self, threads: usize) -> usize {
        self.output_stride * threads
    }

    /// Compares two output buffers of this kernel: equal bytes everywhere, except that
    /// two NaNs in the same float lane are equal whatever their sign and payload.
    /// The error names the first difference: thread, store and bytes.
    pub fn compare_outputs(&self, expected: &[u8], actual: &[u8]) -> Result<(), String> {
        if expected.len() != actual.len() {
            return Err(format!("output sizes differ: {} bytes expected, {} found", expected.len(), actual.len()));
        }
        let (mut expected, mut actual) = (expected.to_vec(), actual.to_vec());
        let stride = self.output_stride.max(1);
        for base in (0..expected.len()).step_by(stride) {
            for slot in &self.outputs {
                let Some(bytes) = float_bytes(slot.element) else { continue };
                for lane in 0..slot.lanes {
                    let at = base + slot.offset + lane * bytes;
                    let (Some(e), Some(a)) = (expected.get(at..at + bytes), actual.get(at..at + bytes)) else { continue };
                    if is_nan(slot.element, e) && is_nan(slot.element, a) {
                        expected[at..at + bytes].fill(0);
                        actual[at..at + bytes].fill(0);
                    }
                }
            }
        }
        let Some(at) = expected.iter().zip(&actual).position(|(e, a)| e != a) else { return Ok(()) };
        let (thread, within) = (at / stride, at % stride);
        let what = match self.outputs.iter().find(|s| (s.offset..s.offset + s.size).contains(&within)) {
            Some(s) => {
                let start = thread * stride + s.offset;
                format!(
                    "the {} stored at offset {} (expected bytes {:02x?}, found {:02x?})",
                    s.ty,
                    s.offset,
                    &expected[start..start + s.size],
                    &actual[start..start + s.size]
                )
            }
            None => format!("a byte no store writes (expected {:#04x}, found {:#04x})", expected[at], actual[at]),
        };
        Err(format!("thread {thread}: output differs at byte {within} of its region: {what}"))
    }
}

/// The byte width of a float element type, `None` for integers.
fn float_bytes(element: &str) -> Option<usize> {
    match element {
        "f16" | "bf16" => Some(2),
        "f32" => Some(4),
        "f64" => Some(8),
        _ => None,
    }
}

/// Whether little-endian `bytes` hold a NaN of the float type `element`.
fn is_nan(element: &str, bytes: &[u8]) -> bool {
    let bits = bytes.iter().rev().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    let Some(format) = FloatFormat::of(element) else { return false };
    let exponent = (bits >> format.mantissa_bits) & ((1 << format.exponent_bits) - 1);
    let mantissa = bits & ((1 << format.mantissa_bits) - 1);
    exponent == (1 << format.exponent_bits) - 1 && mantissa != 0
}

// ---------------------------------------------------------------------------------
// Random streams
// ---------------------------------------------------------------------------------

/// Where the generator's decisions come from.
pub trait RandomSource {
    /// A number in `0..bound`; 0 when `bound` is 0 or 1.
    fn below(&mut self, bound: u64) -> u64;
}

/// A seeded generator (xoshiro256**, seeded through splitmix64): the same seed gives the
/// same kernel on every machine.
#[derive(Clone, Debug)]
pub struct SeededRandom {
    state: [u64; 4],
}

impl SeededRandom {
    pub fn new(seed: u64) -> SeededRandom {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        SeededRandom { state: [next(), next(), next(), next()] }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

impl RandomSource for SeededRandom {
    fn below(&mut self, bound: u64) -> u64 {
        if bound <= 1 {
            return 0;
        }
        // Multiply-shift: the bias is below 2^-64 * bound, far below what tests notice.
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }
}

/// Fuzzer bytes as the random stream: each decision takes one byte (two or eight for
/// wide ranges); once the bytes run out every decision is 0, which ends generation
/// quickly with the first choice everywhere.
#[derive(Clone, Debug)]
pub struct ByteRandom<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> ByteRandom<'a> {
    pub fn new(bytes: &'a [u8]) -> ByteRandom<'a> {
        ByteRandom { bytes, position: 0 }
    }
}

impl RandomSource for ByteRandom<'_> {
    fn below(&mut self, bound: u64) -> u64 {
        if bound <= 1 {
            return 0;
        }
        let width = if bound <= 1 << 8 {
            1
        } else if bound <= 1 << 16 {
            2
        } else {
            8
        };
        let mut value = 0u64;
        for _ in 0..width {
            let byte = self.bytes.get(self.position).copied().unwrap_or(0);
            self.position = self.position.saturating_add(1);
            value = (value << 8) | u64::from(byte);
        }
        value % bound
    }
}

/// One kernel from `seed`.
pub fn generate(seed: u64, config: &GeneratorConfig, tables: &TargetTables) -> Result<GeneratedKernel, ConfigError> {
    let mut random = SeededRandom::new(seed);
    generate_with(&mut random, config, tables, &format!("seed {seed}"))
}

/// One kernel with `bytes` as the random stream (for fuzzing: any bytes give a kernel
/// that parses and verifies).
pub fn generate_from_bytes(bytes: &[u8], config: &GeneratorConfig, tables: &TargetTables) -> Result<GeneratedKernel, ConfigError> {
    let mut random = ByteRandom::new(bytes);
    generate_with(&mut random, config, tables, &format!("{} fuzzer bytes", bytes.len()))
}

/// One kernel from any random source; `origin` is written into the text's header
/// comment (how to reproduce it).
pub fn generate_with(
    random: &mut dyn RandomSource,
    config: &GeneratorConfig,
    tables: &TargetTables,
    origin: &str,
) -> Result<GeneratedKernel, ConfigError> {
    let universe = resolve_types(config, tables)?;
    let mut generator = Generator::new(random, config, tables, universe)?;
    Ok(generator.run(origin))
}

// ---------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Class {
    Bool,
    Int,
    Float,
    IntVector,
    FloatVector,
}

/// A value type as the generator sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct Ty {
    vt: VtId,
    name: &'static str,
    class: Class,
    /// The element type's name (the type itself for scalars).
    element: &'static str,
    element_bits: u32,
    lanes: u32,
}

impl Ty {
    fn is_vector(self) -> bool {
        matches!(self.class, Class::IntVector | Class::FloatVector)
    }

    fn is_float(self) -> bool {
        matches!(self.class, Class::Float | Class::FloatVector)
    }

    fn total_bits(self) -> u32 {
        self.element_bits * self.lanes
    }

    /// Bytes a store of this type writes (an `i1` is one byte).
    fn store_bytes(self) -> usize {
        if self.class == Class::Bool {
            1
        } else {
            (self.total_bits() / 8) as usize
        }
    }

    /// Alignment of the type's memory slots: its size rounded up to a power of two, at
    /// most 16 (`v3i8` gets 4 bytes, aligned to 4).
    fn slot_align(self) -> usize {
        self.store_bytes().next_power_of_two().min(16)
    }
}

fn resolve(tables: &TargetTables, name: &str) -> Option<Ty> {
    let vt = tables.vt(name)?;
    let info = tables.type_info(vt)?;
    let (class, element, element_bits, lanes) = match info.kind {
        TypeKind::Int if info.bits == 1 => (Class::Bool, info.name, 1, 1),
        TypeKind::Int if info.bits % 8 == 0 => (Class::Int, info.name, u32::from(info.bits), 1),
        TypeKind::Float if FloatFormat::of(info.name).is_some() => (Class::Float, info.name, u32::from(info.bits), 1),
        TypeKind::Vector => {
            let e = tables.type_info(VtId(info.elem))?;
            let class = match e.kind {
                TypeKind::Int if e.bits % 8 == 0 => Class::IntVector,
                TypeKind::Float if FloatFormat::of(e.name).is_some() => Class::FloatVector,
                _ => return None,
            };
            (class, e.name, u32::from(e.bits), u32::from(info.lanes))
        }
        _ => return None,
    };
    Some(Ty { vt, name: info.name, class, element, element_bits, lanes })
}

fn resolve_types(config: &GeneratorConfig, tables: &TargetTables) -> Result<Vec<Ty>, ConfigError> {
    let mut types: Vec<Ty> = Vec::new();
    for name in &config.types {
        let ty = match resolve(tables, name) {
            Some(t) => t,
            None if tables.vt(name).is_some() => {
                return Err(ConfigError(format!("type `{name}` is not one the generator can compute with (supported: {})", ALL_TYPES.join(" "))))
            }
            None => return Err(ConfigError(format!("unknown type `{name}`"))),
        };
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    if types.is_empty() {
        return Err(ConfigError("no types to generate: `types` is empty".into()));
    }
    Ok(types)
}

/// The layout of a binary floating-point format.
#[derive(Copy, Clone, Debug)]
struct FloatFormat {
    bits: u32,
    exponent_bits: u32,
    mantissa_bits: u32,
}

impl FloatFormat {
    fn of(name: &str) -> Option<FloatFormat> {
        let (bits, exponent_bits, mantissa_bits) = match name {
            "f16" => (16, 5, 10),
            "bf16" => (16, 8, 7),
            "f32" => (32, 8, 23),
            "f64" => (64, 11, 52),
            _ => return None,
        };
        Some(FloatFormat { bits, exponent_bits, mantissa_bits })
    }

    /// Significand bits including the implicit one.
    fn precision(self) -> u32 {
        self.mantissa_bits + 1
    }

    /// Interesting bit patterns: zeros, one, halves, infinities, a quiet NaN,
    /// subnormals, the largest finite value, the first integer that is not exact.
    fn interesting_bits(self) -> [u64; 14] {
        let bias = (1u64 << (self.exponent_bits - 1)) - 1;
        let m = self.mantissa_bits;
        let sign = 1u64 << (self.bits - 1);
        let one = bias << m;
        let infinity = ((1u64 << self.exponent_bits) - 1) << m;
        [
            0,
            sign,
            one,
            one | sign,
            (bias - 1) << m,
            one | (1 << (m - 1)),
            infinity,
            infinity | sign,
            infinity | (1 << (m - 1)),
            1,
            (1 << m) - 1,
            infinity - 1,
            (bias + u64::from(self.precision())) << m | 1,
            (bias + 3) << m | 0x5,
        ]
    }
}

// ---------------------------------------------------------------------------------
// Operation tables
// ---------------------------------------------------------------------------------

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Shape {
    Unary,
    Binary,
    Ternary,
    /// The second operand is an amount, masked below the width.
    Shift,
    /// The divisor is made non-zero (and never -1 for signed division).
    Division { signed: bool },
    /// `(T, T) -> (T, i1)`
    Overflow,
}

const INTEGER_OPS: &[(&str, Shape)] = &[
    ("ADD", Shape::Binary),
    ("SUB", Shape::Binary),
    ("MUL", Shape::Binary),
    ("AND", Shape::Binary),
    ("OR", Shape::Binary),
    ("XOR", Shape::Binary),
    ("SMIN", Shape::Binary),
    ("SMAX", Shape::Binary),
    ("UMIN", Shape::Binary),
    ("UMAX", Shape::Binary),
    ("MULHS", Shape::Binary),
    ("MULHU", Shape::Binary),
    ("SDIV", Shape::Division { signed: true }),
    ("UDIV", Shape::Division { signed: false }),
    ("SREM", Shape::Division { signed: true }),
    ("UREM", Shape::Division { signed: false }),
    ("SHL", Shape::Shift),
    ("SRA", Shape::Shift),
    ("SRL", Shape::Shift),
    ("ROTL", Shape::Shift),
    ("ROTR", Shape::Shift),
    ("ABS", Shape::Unary),
];

/// Scalar-only integer operations: bit counts and byte swaps (BSWAP needs whole
/// 16-bit units) and the carry-out forms.
const SCALAR_INTEGER_OPS: &[(&str, Shape)] = &[
    ("CTLZ", Shape::Unary),
    ("CTTZ", Shape::Unary),
    ("CTPOP", Shape::Unary),
    ("BITREVERSE", Shape::Unary),
    ("BSWAP", Shape::Unary),
    ("UADDO", Shape::Overflow),
    ("USUBO", Shape::Overflow),
];

const BOOL_OPS: &[(&str, Shape)] = &[("AND", Shape::Binary), ("OR", Shape::Binary), ("XOR", Shape::Binary)];

const FLOAT_OPS: &[(&str, Shape)] = &[
    ("FADD", Shape::Binary),
    ("FSUB", Shape::Binary),
    ("FMUL", Shape::Binary),
    ("FDIV", Shape::Binary),
    ("FMA", Shape::Ternary),
    ("FNEG", Shape::Unary),
    ("FABS", Shape::Unary),
    ("FSQRT", Shape::Unary),
    ("FMINNUM", Shape::Binary),
    ("FMAXNUM", Shape::Binary),
    ("FCEIL", Shape::Unary),
    ("FFLOOR", Shape::Unary),
    ("FTRUNC", Shape::Unary),
    ("FRINT", Shape::Unary),
];

const FLOAT_REMAINDER_OPS: &[(&str, Shape)] = &[("FREM", Shape::Binary)];

const APPROXIMATE_OPS: &[(&str, Shape)] =
    &[("FSIN", Shape::Unary), ("FCOS", Shape::Unary), ("FEXP2", Shape::Unary), ("FLOG2", Shape::Unary)];

/// Operations that fold a loop accumulator with a new value.
const INTEGER_ACCUMULATE: &[&str] = &["ADD", "SUB", "XOR", "MUL", "UMAX", "SMIN"];
const BOOL_ACCUMULATE: &[&str] = &["XOR", "AND", "OR"];
const FLOAT_ACCUMULATE: &[&str] = &["FADD", "FMUL", "FSUB", "FMINNUM", "FMAXNUM"];

/// Operations that move bits without computing on floats: a NaN keeps its payload.
const BIT_EXACT_OPS: &[&str] = &[
    "COPY", "SELECT", "SELECT_CC", "FNEG", "FABS", "BITCAST", "BUILD_VECTOR", "EXTRACT_VECTOR_ELT", "INSERT_VECTOR_ELT",
    "VECTOR_SHUFFLE", "CONCAT_VECTORS", "EXTRACT_SUBVECTOR", "UNDEF",
];

/// Float condition codes whose result on a NaN operand ISD leaves unspecified.
const NAN_UNSPECIFIED_CODES: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge"];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Conversion {
    SignExtend,
    ZeroExtend,
    /// ANY_EXTEND, then AND with the source's bit mask so no unspecified bit survives.
    AnyExtendMasked,
    Truncate,
    FloatExtend,
    FloatRound,
    SignedToFloat,
    UnsignedToFloat,
    /// Clamped into range first.
    FloatToSigned,
    FloatToUnsigned,
    Bitcast,
}

// ---------------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------------

struct Value {
    name: String,
    ty: Ty,
    /// The scope (straight-line region) that defines the value; it is visible while the
    /// scope is on the stack. Scope 0 is the chain of blocks that dominate the exit.
    scope: usize,
    uses: u32,
    /// May be picked as a random operand, and is stored when nothing uses it. Constants,
    /// guard intermediates and values with unspecified bits are not.
    pooled: bool,
    /// Its bits are fully specified, NaN payloads included: true for integers and for
    /// floats that only loads, constants and bit moves (COPY, SELECT, FNEG, shuffles,
    /// ...) produced. Float arithmetic and conversions leave a NaN's payload
    /// unspecified, so only exact values may be BITCAST to a type compared exactly.
    exact: bool,
}

struct BlockText {
    name: &'static str,
    lines: Vec<String>,
}

enum Arg {
    Value(usize),
    Text(String),
}

struct Generator<'a> {
    random: &'a mut dyn RandomSource,
    config: &'a GeneratorConfig,
    tables: &'a TargetTables,
    universe: Vec<Ty>,
    focus: Vec<Ty>,
    /// Opcode names the description defines (an operation it lacks is never chosen).
    integer_ops: Vec<(&'static str, Shape)>,
    scalar_integer_ops: Vec<(&'static str, Shape)>,
    float_ops: Vec<(&'static str, Shape)>,
    integer_codes: Vec<&'static str>,
    float_codes: Vec<&'static str>,
    values: Vec<Value>,
    blocks: Vec<BlockText>,
    current: usize,
    /// Entry-block lines that define constants (they dominate every use).
    constants: Vec<String>,
    constant_cache: HashMap<(VtId, String), usize>,
    scope_stack: Vec<usize>,
    next_scope: usize,
    next_name: usize,
    input_bytes: usize,
    output_bytes: usize,
    /// Bytes of the kernel's frame object (`scratch`, FRAME_INDEX 0) in use.
    frame_bytes: usize,
    outputs: Vec<OutputSlot>,
    scalar_params: Vec<Ty>,
    /// The device functions the kernel calls: each returns its parameters reversed.
    helpers: Vec<Vec<Ty>>,
    /// `%tid`, for conditions when no scalar type is in focus.
    tid: usize,
}

impl<'a> Generator<'a> {
    fn new(
        random: &'a mut dyn RandomSource,
        config: &'a GeneratorConfig,
        tables: &'a TargetTables,
        universe: Vec<Ty>,
    ) -> Result<Generator<'a>, ConfigError> {
        let i32_type = resolve(tables, "i32").ok_or_else(|| ConfigError("the description has no i32 type".into()))?;
        let defined = |ops: &[(&'static str, Shape)]| -> Vec<(&'static str, Shape)> {
            ops.iter().copied().filter(|(name, _)| tables.opcode(name).is_some()).collect()
        };
        let mut float_ops = defined(FLOAT_OPS);
        if config.float_remainder {
            float_ops.extend(defined(FLOAT_REMAINDER_OPS));
        }
        if config.approximate_functions {
            float_ops.extend(defined(APPROXIMATE_OPS));
        }
        let integer_codes = tables.cond_codes.iter().filter(|c| c.int_form.is_some()).map(|c| c.name).collect();
        let float_codes = tables
            .cond_codes
            .iter()
            .filter(|c| c.float_form.is_some())
            .filter(|c| config.nan_unspecified_float_codes || !NAN_UNSPECIFIED_CODES.contains(&c.name))
            .map(|c| c.name)
            .collect();
        let mut generator = Generator {
            random,
            config,
            tables,
            universe,
            focus: Vec::new(),
            integer_ops: defined(INTEGER_OPS),
            scalar_integer_ops: defined(SCALAR_INTEGER_OPS),
            float_ops,
            integer_codes,
            float_codes,
            values: Vec::new(),
            blocks: vec![BlockText { name: "entry", lines: Vec::new() }],
            current: 0,
            constants: Vec::new(),
            constant_cache: HashMap::new(),
            scope_stack: vec![0],
            next_scope: 1,
            next_name: 0,
            input_bytes: 0,
            output_bytes: 0,
            frame_bytes: 0,
            outputs: Vec::new(),
            scalar_params: Vec::new(),
            helpers: Vec::new(),
            tid: 0,
        };
        generator.tid = generator.push_value("tid".into(), i32_type, false);
        Ok(generator)
    }

    // ---- random helpers ----

    fn below(&mut self, bound: usize) -> usize {
        self.random.below(bound as u64) as usize
    }

    /// True with probability `numerator / denominator`.
    fn chance(&mut self, numerator: usize, denominator: usize) -> bool {
        self.below(denominator) < numerator
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        if items.is_empty() {
            return None;
        }
        let i = self.below(items.len());
        items.get(i).copied()
    }

    fn in_range(&mut self, (low, high): (usize, usize)) -> usize {
        let high = high.max(low);
        low + self.below(high - low + 1)
    }

    fn random_u64(&mut self) -> u64 {
        self.random.below(u64::MAX)
    }

    // ---- values and text ----

    fn push_value(&mut self, name: String, ty: Ty, pooled: bool) -> usize {
        let scope = self.scope_stack.last().copied().unwrap_or(0);
        self.values.push(Value { name, ty, scope, uses: 0, pooled, exact: true });
        self.values.len() - 1
    }

    fn fresh_name(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    fn new_value(&mut self, prefix: &str, ty: Ty, pooled: bool) -> usize {
        let name = self.fresh_name(prefix);
        self.push_value(name, ty, pooled)
    }

    fn line(&mut self, text: String) {
        if let Some(block) = self.blocks.get_mut(self.current) {
            block.lines.push(text);
        }
    }

    /// `%name:ty = ...` of value `v`.
    fn def_text(&self, v: usize) -> String {
        let value = &self.values[v];
        format!("%{}:{}", value.name, value.ty.name)
    }

    /// The operand list, counting a use of each value.
    fn args_text(&mut self, args: &[Arg]) -> String {
        let mut parts = Vec::with_capacity(args.len());
        for a in args {
            match a {
                Arg::Value(v) => {
                    self.values[*v].uses += 1;
                    parts.push(format!("%{}", self.values[*v].name));
                }
                Arg::Text(t) => parts.push(t.clone()),
            }
        }
        parts.join(", ")
    }

    /// Emits `%new:ty = OPCODE args` in the current block.
    fn op(&mut self, ty: Ty, opcode: &str, args: &[Arg], pooled: bool) -> usize {
        let exact = !ty.is_float()
            || BIT_EXACT_OPS.contains(&opcode) && args.iter().all(|a| !matches!(a, Arg::Value(v) if !self.values[*v].exact));
        let v = self.new_value("v", ty, pooled);
        self.values[v].exact = exact;
        let args = self.args_text(args);
        let def = self.def_text(v);
        self.line(if args.is_empty() { format!("{def} = {opcode}") } else { format!("{def} = {opcode} {args}") });
        v
    }

    fn visible(&self, scope: usize) -> bool {
        self.scope_stack.contains(&scope)
    }

    // ---- constants (all in the entry block, shared) ----

    /// A scalar integer constant (wrapped to the type's width), or a splat for an
    /// integer vector.
    fn int_constant(&mut self, ty: Ty, value: i128) -> usize {
        let lanes = vec![value; ty.lanes as usize];
        self.int_vector_constant(ty, &lanes)
    }

    fn int_vector_constant(&mut self, ty: Ty, lanes: &[i128]) -> usize {
        let bits = ty.element_bits;
        let lanes: Vec<i128> = lanes.iter().map(|v| wrap_signed(*v, bits)).collect();
        let key = (ty.vt, lanes.iter().map(i128::to_string).collect::<Vec<_>>().join(","));
        if let Some(&v) = self.constant_cache.get(&key) {
            return v;
        }
        let v = if ty.is_vector() {
            let Some(element) = self.element_type(ty) else { return self.tid };
            let mut parts = Vec::with_capacity(lanes.len());
            for lane in &lanes {
                let k = self.int_constant(element, *lane);
                parts.push(format!("%{}", self.values[k].name));
            }
            let v = self.constant_value(ty);
            self.constants.push(format!("{} = BUILD_VECTOR {}", self.def_text(v), parts.join(", ")));
            v
        } else {
            let v = self.constant_value(ty);
            let value = lanes.first().copied().unwrap_or(0);
            self.constants.push(format!("{} = CONSTANT {value}", self.def_text(v)));
            v
        };
        self.constant_cache.insert(key, v);
        v
    }

    /// A float constant: a literal (`1.5`, `inf`) or raw bits; a splat for vectors.
    fn float_constant(&mut self, ty: Ty, literal: &str) -> usize {
        let key = (ty.vt, literal.to_string());
        if let Some(&v) = self.constant_cache.get(&key) {
            return v;
        }
        let v = if ty.is_vector() {
            let Some(element) = self.element_type(ty) else { return self.tid };
            let lane = self.float_constant(element, literal);
            let parts = vec![format!("%{}", self.values[lane].name); ty.lanes as usize];
            let v = self.constant_value(ty);
            self.constants.push(format!("{} = BUILD_VECTOR {}", self.def_text(v), parts.join(", ")));
            v
        } else {
            let v = self.constant_value(ty);
            self.constants.push(format!("{} = FCONSTANT {literal}", self.def_text(v)));
            v
        };
        self.constant_cache.insert(key, v);
        v
    }

    /// A value for a constant: defined in the entry block, visible everywhere.
    fn constant_value(&mut self, ty: Ty) -> usize {
        let name = self.fresh_name("k");
        self.values.push(Value { name, ty, scope: 0, uses: 0, pooled: false, exact: true });
        self.values.len() - 1
    }

    fn element_type(&self, ty: Ty) -> Option<Ty> {
        resolve(self.tables, ty.element)
    }

    fn type_named(&self, name: &str) -> Option<Ty> {
        resolve(self.tables, name)
    }

    /// An interesting integer for a `bits`-wide type.
    fn interesting_int(&mut self, bits: u32) -> i128 {
        let signed_min = if bits >= 128 { i128::MIN } else { -(1i128 << (bits - 1)) };
        let random = (i128::from(self.random_u64()) << 64) | i128::from(self.random_u64());
        let choices = [0, 1, 2, 3, -1, -2, 7, 100, signed_min, !signed_min, 1i128 << (bits / 2), random, random, random];
        self.pick(&choices).unwrap_or(0)
    }

    fn interesting_float(&mut self, ty: Ty) -> String {
        const LITERALS: [&str; 10] = ["0.5", "1.0", "1.5", "2.0", "-3.0", "0.25", "10.0", "100.0", "-0.0", "inf"];
        let Some(format) = FloatFormat::of(ty.element) else { return "1.0".into() };
        if self.chance(1, 2) {
            return self.pick(&LITERALS).unwrap_or("1.0").to_string();
        }
        let mask = if format.bits >= 64 { u64::MAX } else { (1u64 << format.bits) - 1 };
        let random = self.random_u64() & mask;
        let bits = if self.chance(1, 5) { random } else { self.pick(&format.interesting_bits()).unwrap_or(0) };
        format!("0x{bits:X}")
    }

    // ---- memory ----

    fn reserve(total: &mut usize, bytes: usize, align: usize) -> usize {
        let offset = total.div_ceil(align) * align;
        *total = offset + bytes.div_ceil(align) * align;
        offset
    }

    /// `%p = PTR_ADD %base, offset` (or the base itself at offset 0).
    fn address(&mut self, base: &str, offset: usize) -> String {
        if offset == 0 {
            return format!("%{base}");
        }
        let Some(i64_type) = self.type_named("i64") else { return format!("%{base}") };
        let k = self.int_constant(i64_type, offset as i128);
        let name = self.fresh_name(if base == "input.base" { "in." } else { "out." });
        let k_name = self.values[k].name.clone();
        self.values[k].uses += 1;
        self.line(format!("%{name}:p1 = PTR_ADD %{base}, %{k_name}"));
        format!("%{name}")
    }

    fn align_suffix(ty: Ty) -> String {
        if ty.is_vector() {
            format!(", align {}", ty.slot_align())
        } else {
            String::new()
        }
    }

    /// A fresh load of `ty` from the thread's input region.
    fn load(&mut self, ty: Ty) -> usize {
        let offset = Self::reserve(&mut self.input_bytes, ty.store_bytes(), ty.slot_align());
        let address = self.address("input.base", offset);
        let flags = if self.chance(1, 4) { ".invariant" } else { "" };
        let v = self.new_value("ld", ty, true);
        let def = self.def_text(v);
        self.line(format!("{def} = LOAD{flags} {address}{}", Self::align_suffix(ty)));
        v
    }

    /// An extending load into the scalar integer `ty` from a narrower memory type.
    fn extending_load(&mut self, ty: Ty) -> usize {
        let widths: Vec<u32> = [8, 16, 32].into_iter().filter(|w| *w < ty.element_bits).collect();
        let Some(bits) = self.pick(&widths) else { return self.load(ty) };
        let offset = Self::reserve(&mut self.input_bytes, (bits / 8) as usize, (bits / 8) as usize);
        let address = self.address("input.base", offset);
        let extension = self.pick(&["sext", "zext", "anyext"]).unwrap_or("zext");
        let masked = extension == "anyext";
        let v = self.new_value("ld", ty, !masked);
        let def = self.def_text(v);
        self.line(format!("{def} = LOAD.{extension}.i{bits} {address}"));
        if !masked {
            return v;
        }
        let mask = self.int_constant(ty, (1i128 << bits) - 1);
        self.op(ty, "AND", &[Arg::Value(v), Arg::Value(mask)], true)
    }

    /// `v` stored to a fresh cell of the kernel's frame object and loaded back; half the
    /// time stored twice, so machine mem2reg must leave the cell in local memory.
    fn through_frame(&mut self, v: usize) -> usize {
        let ty = self.values[v].ty;
        let Some(i64_type) = self.type_named("i64") else { return v };
        if ty.element_bits == 1 {
            return v; // predicates are not memory values the generator loads
        }
        let offset = Self::reserve(&mut self.frame_bytes, ty.store_bytes(), ty.slot_align());
        let address = if offset == 0 {
            "%frame".to_string()
        } else {
            let k = self.int_constant(i64_type, offset as i128);
            let k_name = self.values[k].name.clone();
            self.values[k].uses += 1;
            let name = self.fresh_name("fr.");
            self.line(format!("%{name}:p5 = PTR_ADD %frame, %{k_name}"));
            format!("%{name}")
        };
        let value = self.args_text(&[Arg::Value(v)]);
        let times = if self.chance(1, 2) { 2 } else { 1 };
        for _ in 0..times {
            self.line(format!("STORE {value}, {address}{}", Self::align_suffix(ty)));
        }
        // Not pooled: the frame round trip may sit in a block later code does not see.
        let r = self.new_value("fl", ty, false);
        let def = self.def_text(r);
        self.line(format!("{def} = LOAD {address}{}", Self::align_suffix(ty)));
        r
    }

    /// Stores `v` to a fresh slot of the output region (and sometimes also a truncated
    /// copy of a scalar integer); now and then by way of the frame.
    fn store(&mut self, v: usize) {
        let v = if self.chance(1, 6) { self.through_frame(v) } else { v };
        let ty = self.values[v].ty;
        let offset = Self::reserve(&mut self.output_bytes, ty.store_bytes(), ty.slot_align());
        let address = self.address("output.base", offset);
        let value = self.args_text(&[Arg::Value(v)]);
        self.line(format!("STORE {value}, {address}{}", Self::align_suffix(ty)));
        self.outputs.push(OutputSlot { offset, size: ty.store_bytes(), ty: ty.name, element: ty.element, lanes: ty.lanes as usize });
        if ty.class == Class::Int && ty.element_bits > 8 && self.chance(1, 4) {
            let widths: Vec<u32> = [8, 16, 32].into_iter().filter(|w| *w < ty.element_bits).collect();
            let Some(bits) = self.pick(&widths) else { return };
            let bytes = (bits / 8) as usize;
            let offset = Self::reserve(&mut self.output_bytes, bytes, bytes);
            let address = self.address("output.base", offset);
            let value = self.args_text(&[Arg::Value(v)]);
            self.line(format!("STORE.trunc.i{bits} {value}, {address}"));
            let memory = match bits {
                8 => "i8",
                16 => "i16",
                _ => "i32",
            };
            self.outputs.push(OutputSlot { offset, size: bytes, ty: memory, element: memory, lanes: 1 });
        }
    }

    /// Stores every pooled value of `scope` that nothing uses.
    fn store_unused(&mut self, scope: usize) {
        let unused: Vec<usize> =
            (0..self.values.len()).filter(|&v| self.values[v].scope == scope && self.values[v].pooled && self.values[v].uses == 0).collect();
        for v in unused {
            self.store(v);
        }
    }

    // ---- operands ----

    /// A value of `ty` for an operand: usually an existing visible one (preferring
    /// values nothing uses yet, so the graph stays connected), else a fresh leaf.
    fn operand(&mut self, ty: Ty) -> usize {
        self.operand_where(ty, false, &[])
    }

    /// Operands for one instruction: mostly distinct (`SUB %x, %x` is a constant),
    /// sometimes not.
    fn operands<const N: usize>(&mut self, ty: Ty) -> [usize; N] {
        let mut chosen = [0; N];
        for i in 0..N {
            let avoid = if self.chance(1, 10) { &[][..] } else { &chosen[..i] };
            let avoid = avoid.to_vec();
            chosen[i] = self.operand_where(ty, false, &avoid);
        }
        chosen
    }

    /// [`Self::operand`], limited to bit-exact values when `exact_only` and to values
    /// not in `avoid`.
    fn operand_where(&mut self, ty: Ty, exact_only: bool, avoid: &[usize]) -> usize {
        let visible: Vec<usize> = (0..self.values.len())
            .filter(|&v| {
                let value = &self.values[v];
                value.pooled && value.ty == ty && self.visible(value.scope) && (value.exact || !exact_only) && !avoid.contains(&v)
            })
            .collect();
        if !visible.is_empty() && !self.chance(1, 4) {
            let unused: Vec<usize> = visible.iter().copied().filter(|&v| self.values[v].uses == 0).collect();
            if !unused.is_empty() && self.chance(2, 3) {
                return self.pick(&unused).unwrap_or(visible[0]);
            }
            return self.pick(&visible).unwrap_or(visible[0]);
        }
        self.leaf(ty)
    }

    /// A value of `ty` that needs no other generated value: a load, a constant, or
    /// (for `i1`) a comparison of loads. Never recurses back into itself.
    fn leaf(&mut self, ty: Ty) -> usize {
        if ty.class == Class::Bool {
            let compared: Vec<Ty> = self.focus.iter().copied().filter(|t| matches!(t.class, Class::Int | Class::Float)).collect();
            if self.chance(1, 6) {
                let value = self.below(2) as i128;
                return self.int_constant(ty, value);
            }
            return match self.pick(&compared) {
                Some(c) => {
                    let (code, l, r) = self.comparison_of(c);
                    self.op(ty, "SETCC", &[Arg::Text(code.into()), Arg::Value(l), Arg::Value(r)], true)
                }
                None => match self.type_named("i8") {
                    Some(i8_type) => {
                        let byte = self.load(i8_type);
                        self.values[byte].pooled = false;
                        self.op(ty, "TRUNCATE", &[Arg::Value(byte)], true)
                    }
                    None => self.int_constant(ty, 1),
                },
            };
        }
        let r = self.below(10);
        if r < 2 {
            return self.constant_leaf(ty);
        }
        if r < 4 && ty.class == Class::Int && ty.element_bits > 8 {
            return self.extending_load(ty);
        }
        self.load(ty)
    }

    fn constant_leaf(&mut self, ty: Ty) -> usize {
        if ty.is_float() {
            let literal = self.interesting_float(ty);
            return self.float_constant(ty, &literal);
        }
        if ty.is_vector() && self.chance(1, 2) {
            let lanes: Vec<i128> = (0..ty.lanes).map(|_| self.interesting_int(ty.element_bits)).collect();
            return self.int_vector_constant(ty, &lanes);
        }
        let value = self.interesting_int(ty.element_bits);
        self.int_constant(ty, value)
    }

    /// A condition code and two operands of the scalar type `ty`.
    fn comparison_of(&mut self, ty: Ty) -> (&'static str, usize, usize) {
        let codes = if ty.is_float() { self.float_codes.clone() } else { self.integer_codes.clone() };
        let code = self.pick(&codes).unwrap_or("eq");
        let [l, r] = self.operands(ty);
        (code, l, r)
    }

    /// A comparison on a focus scalar type, or of `%tid` against a constant when the
    /// kernel focuses on vectors only.
    fn comparison(&mut self) -> (&'static str, usize, usize) {
        let scalars: Vec<Ty> = self.focus.iter().copied().filter(|t| !t.is_vector()).collect();
        if let Some(ty) = self.pick(&scalars) {
            return self.comparison_of(ty);
        }
        let codes = self.integer_codes.clone();
        let code = self.pick(&codes).unwrap_or("eq");
        let tid_type = self.values[self.tid].ty;
        let bound = self.below(33) as i128;
        let k = self.int_constant(tid_type, bound);
        (code, self.tid, k)
    }

    /// An `i1` condition that is used right away (not pooled).
    fn condition(&mut self) -> usize {
        let Some(bool_type) = self.type_named("i1") else { return self.tid };
        let (code, l, r) = self.comparison();
        self.op(bool_type, "SETCC", &[Arg::Text(code.into()), Arg::Value(l), Arg::Value(r)], false)
    }

    // ---- one random operation ----

    fn step(&mut self) {
        let Some(ty) = self.pick(&self.focus.clone()) else { return };
        let vectors: Vec<Ty> = self.focus.iter().copied().filter(|t| t.is_vector()).collect();
        // Weights out of 100: compare/select 14, conversion 14, vector structure 14 on a
        // vector type (plus 6 on any focus vector), COPY 2, extending load 4 on wide
        // scalar integers, arithmetic the rest.
        let r = self.below(100);
        match r {
            0..=13 => self.select(ty),
            14..=27 => self.conversion(ty),
            28..=41 if ty.is_vector() => self.vector(ty),
            42..=47 if !vectors.is_empty() => {
                if let Some(v) = self.pick(&vectors) {
                    self.vector(v);
                }
            }
            48..=49 => {
                let x = self.operand(ty);
                self.op(ty, "COPY", &[Arg::Value(x)], true);
            }
            50..=53 if ty.class == Class::Int && ty.element_bits > 8 => {
                self.extending_load(ty);
            }
            54..=57 if self.config.calls => self.call(ty),
            _ => self.arithmetic(ty),
        }
    }

    /// `%r.. = CALL @helperN, a, b, ...` of a device function returning its parameters
    /// in reverse order: `ty`, maybe another focus type, maybe an i1.
    fn call(&mut self, ty: Ty) {
        let mut types = vec![ty];
        if let Some(other) = self.pick(&self.focus.clone()) {
            if self.chance(1, 2) {
                types.push(other);
            }
        }
        if let Some(bool_ty) = self.type_named("i1") {
            if self.chance(1, 3) {
                types.push(bool_ty);
            }
        }
        let args: Vec<usize> = types.iter().map(|&t| if t.class == Class::Bool { self.condition() } else { self.operand(t) }).collect();
        let helper = self.helpers.iter().position(|h| *h == types).unwrap_or_else(|| {
            self.helpers.push(types.clone());
            self.helpers.len() - 1
        });
        let results: Vec<usize> = args
            .iter()
            .rev()
            .map(|&a| {
                let (t, exact) = (self.values[a].ty, self.values[a].exact);
                let v = self.new_value("v", t, true);
                self.values[v].exact = exact;
                v
            })
            .collect();
        let operands = self.args_text(&args.iter().map(|&a| Arg::Value(a)).collect::<Vec<_>>());
        let defs: Vec<String> = results.iter().map(|&v| self.def_text(v)).collect();
        self.line(format!("{} = CALL @helper{helper}, {operands}", defs.join(", ")));
    }

    fn ops_for(&self, ty: Ty) -> Vec<(&'static str, Shape)> {
        match ty.class {
            Class::Bool => BOOL_OPS.iter().copied().filter(|(n, _)| self.tables.opcode(n).is_some()).collect(),
            Class::Int => {
                let mut ops = self.integer_ops.clone();
                ops.extend(self.scalar_integer_ops.iter().copied().filter(|(n, _)| *n != "BSWAP" || ty.element_bits.is_multiple_of(16)));
                ops
            }
            Class::IntVector => self.integer_ops.clone(),
            Class::Float | Class::FloatVector => self.float_ops.clone(),
        }
    }

    fn arithmetic(&mut self, ty: Ty) {
        if ty.class == Class::Bool && self.chance(1, 3) {
            return self.select(ty);
        }
        let ops = self.ops_for(ty);
        let Some((name, shape)) = self.pick(&ops) else { return };
        match shape {
            Shape::Unary => {
                let x = self.operand(ty);
                self.op(ty, name, &[Arg::Value(x)], true);
            }
            Shape::Binary => {
                let [a, b] = self.operands(ty);
                self.op(ty, name, &[Arg::Value(a), Arg::Value(b)], true);
            }
            Shape::Ternary => {
                let [a, b, c] = self.operands(ty);
                self.op(ty, name, &[Arg::Value(a), Arg::Value(b), Arg::Value(c)], true);
            }
            Shape::Shift => {
                let amount_type = match self.type_named("i32") {
                    Some(i32_type) if !ty.is_vector() && self.chance(1, 3) => i32_type,
                    _ => ty,
                };
                let x = self.operand(ty);
                let raw = self.operand(amount_type);
                let mask = self.int_constant(amount_type, i128::from(ty.element_bits) - 1);
                let amount = self.op(amount_type, "AND", &[Arg::Value(raw), Arg::Value(mask)], false);
                self.op(ty, name, &[Arg::Value(x), Arg::Value(amount)], true);
            }
            Shape::Division { signed } => {
                let one = self.int_constant(ty, 1);
                let raw = self.operand(ty);
                let mut divisor = self.op(ty, "OR", &[Arg::Value(raw), Arg::Value(one)], false);
                let mut dividend = self.operand(ty);
                if signed {
                    // MIN / -1 overflows: either the dividend is not negative, or the
                    // divisor (odd, bit 1 clear) is not -1.
                    if self.chance(1, 2) {
                        let max = self.int_constant(ty, signed_max(ty.element_bits));
                        dividend = self.op(ty, "AND", &[Arg::Value(dividend), Arg::Value(max)], false);
                    } else {
                        let clear_bit_one = self.int_constant(ty, -3);
                        divisor = self.op(ty, "AND", &[Arg::Value(divisor), Arg::Value(clear_bit_one)], false);
                    }
                }
                self.op(ty, name, &[Arg::Value(dividend), Arg::Value(divisor)], true);
            }
            Shape::Overflow => {
                let Some(bool_type) = self.type_named("i1") else { return };
                let [a, b] = self.operands(ty);
                let bool_in_focus = self.focus.contains(&bool_type);
                let sum = self.new_value("v", ty, true);
                let carry = self.new_value("v", bool_type, bool_in_focus);
                let args = self.args_text(&[Arg::Value(a), Arg::Value(b)]);
                let defs = format!("{}, {}", self.def_text(sum), self.def_text(carry));
                self.line(format!("{defs} = {name} {args}"));
                if !bool_in_focus {
                    if self.chance(1, 2) {
                        self.op(ty, "ZERO_EXTEND", &[Arg::Value(carry)], true);
                    } else {
                        let other = self.operand(ty);
                        self.op(ty, "SELECT", &[Arg::Value(carry), Arg::Value(other), Arg::Value(sum)], true);
                    }
                }
            }
        }
    }

    /// SETCC (an `i1` result), SELECT on a comparison, or SELECT_CC, producing `ty`.
    fn select(&mut self, ty: Ty) {
        if ty.class == Class::Bool && self.chance(1, 2) {
            let (code, l, r) = self.comparison();
            self.op(ty, "SETCC", &[Arg::Text(code.into()), Arg::Value(l), Arg::Value(r)], true);
        } else if self.chance(1, 2) {
            let c = self.condition();
            let [a, b] = self.operands(ty);
            self.op(ty, "SELECT", &[Arg::Value(c), Arg::Value(a), Arg::Value(b)], true);
        } else {
            let (code, l, r) = self.comparison();
            let [a, b] = self.operands(ty);
            self.op(ty, "SELECT_CC", &[Arg::Text(code.into()), Arg::Value(l), Arg::Value(r), Arg::Value(a), Arg::Value(b)], true);
        }
    }

    /// The conversions from `source` to `target` the MIR allows.
    fn conversions(source: Ty, target: Ty) -> Vec<Conversion> {
        use Class::*;
        use Conversion::*;
        let mut out = Vec::new();
        if source == target {
            return out;
        }
        let same_lanes = source.lanes == target.lanes;
        match (source.class, target.class) {
            (Int | Bool, Int | Bool) | (IntVector, IntVector) if same_lanes => {
                if source.element_bits < target.element_bits {
                    out.extend([SignExtend, ZeroExtend, AnyExtendMasked]);
                } else if source.element_bits > target.element_bits {
                    out.push(Truncate);
                }
            }
            (Float, Float) | (FloatVector, FloatVector) if same_lanes => {
                if source.element_bits < target.element_bits {
                    out.push(FloatExtend);
                } else if source.element_bits > target.element_bits {
                    out.push(FloatRound);
                }
            }
            (Int | Bool, Float) => out.extend([SignedToFloat, UnsignedToFloat]),
            (Float, Int) => out.extend([FloatToSigned, FloatToUnsigned]),
            _ => {}
        }
        if source.class != Bool && target.class != Bool && source.total_bits() == target.total_bits() {
            out.push(Bitcast);
        }
        out
    }

    fn conversion(&mut self, target: Ty) {
        let mut choices = Vec::new();
        for source in self.focus.clone() {
            for c in Self::conversions(source, target) {
                choices.push((source, c));
            }
        }
        let Some((source, conversion)) = self.pick(&choices) else { return self.arithmetic(target) };
        // A BITCAST shows a float's NaN payload as plain bits: only exact sources.
        let x = self.operand_where(source, conversion == Conversion::Bitcast, &[]);
        let opcode = match conversion {
            Conversion::SignExtend => "SIGN_EXTEND",
            Conversion::ZeroExtend => "ZERO_EXTEND",
            Conversion::Truncate => "TRUNCATE",
            Conversion::FloatExtend => "FP_EXTEND",
            Conversion::FloatRound => "FP_ROUND",
            Conversion::SignedToFloat => "SINT_TO_FP",
            Conversion::UnsignedToFloat => "UINT_TO_FP",
            Conversion::Bitcast => "BITCAST",
            Conversion::AnyExtendMasked => {
                let wide = self.op(target, "ANY_EXTEND", &[Arg::Value(x)], false);
                let mask = self.int_constant(target, (1i128 << source.element_bits) - 1);
                self.op(target, "AND", &[Arg::Value(wide), Arg::Value(mask)], true);
                return;
            }
            Conversion::FloatToSigned | Conversion::FloatToUnsigned => {
                let signed = conversion == Conversion::FloatToSigned;
                let Some(format) = FloatFormat::of(source.element) else { return };
                // The largest 2^k - 1 both the integer type and the float's precision
                // hold exactly; NaN clamps to the upper bound (FMINNUM prefers numbers).
                let integer_bits = if signed { target.element_bits - 1 } else { target.element_bits };
                let k = integer_bits.min(format.precision()).min(62);
                let high = (1u64 << k) - 1;
                let low = if signed { -(high as f64) } else { 0.0 };
                let high_constant = self.float_constant(source, &float_literal(high as f64));
                let low_constant = self.float_constant(source, &float_literal(low));
                let below_high = self.op(source, "FMINNUM", &[Arg::Value(x), Arg::Value(high_constant)], false);
                let clamped = self.op(source, "FMAXNUM", &[Arg::Value(below_high), Arg::Value(low_constant)], false);
                let opcode = if signed { "FP_TO_SINT" } else { "FP_TO_UINT" };
                self.op(target, opcode, &[Arg::Value(clamped)], true);
                return;
            }
        };
        self.op(target, opcode, &[Arg::Value(x)], true);
    }

    /// A vector operation producing or reading `ty`.
    fn vector(&mut self, ty: Ty) {
        let Some(element) = self.element_type(ty) else { return };
        let wider = self.focus.iter().copied().find(|t| t.class == ty.class && t.element == ty.element && t.lanes == 2 * ty.lanes);
        let narrower = self.focus.iter().copied().find(|t| t.class == ty.class && t.element == ty.element && 2 * t.lanes == ty.lanes);
        let index = |g: &mut Self, lane: u32| {
            let index_type = if g.chance(1, 5) { g.type_named("i64") } else { g.type_named("i32") };
            match index_type {
                Some(t) => g.int_constant(t, i128::from(lane)),
                None => g.tid,
            }
        };
        let lanes = ty.lanes as usize;
        match self.below(7) {
            0 => {
                let parts: Vec<Arg> = (0..lanes).map(|_| Arg::Value(self.operand(element))).collect();
                self.op(ty, "BUILD_VECTOR", &parts, true);
            }
            1 | 2 => {
                let v = self.operand(ty);
                let lane = self.below(lanes) as u32;
                let i = index(self, lane);
                self.op(element, "EXTRACT_VECTOR_ELT", &[Arg::Value(v), Arg::Value(i)], true);
            }
            3 => {
                let v = self.operand(ty);
                let e = self.operand(element);
                let lane = self.below(lanes) as u32;
                let i = index(self, lane);
                self.op(ty, "INSERT_VECTOR_ELT", &[Arg::Value(v), Arg::Value(e), Arg::Value(i)], true);
            }
            4 => {
                let [a, b] = self.operands(ty);
                let mask: Vec<String> = (0..lanes).map(|_| self.below(2 * lanes).to_string()).collect();
                self.op(ty, "VECTOR_SHUFFLE", &[Arg::Value(a), Arg::Value(b), Arg::Text(format!("mask({})", mask.join(", ")))], true);
            }
            5 => {
                // UNDEF, then every lane overwritten: nothing unspecified remains.
                let mut v = self.op(ty, "UNDEF", &[], false);
                for lane in 0..ty.lanes {
                    let e = self.operand(element);
                    let i = index(self, lane);
                    v = self.op(ty, "INSERT_VECTOR_ELT", &[Arg::Value(v), Arg::Value(e), Arg::Value(i)], lane + 1 == ty.lanes);
                }
            }
            _ => match (wider, narrower) {
                (Some(w), _) if self.chance(1, 2) || narrower.is_none() => {
                    let [a, b] = self.operands(ty);
                    self.op(w, "CONCAT_VECTORS", &[Arg::Value(a), Arg::Value(b)], true);
                }
                (_, Some(n)) => {
                    let v = self.operand(ty);
                    let half = self.below(2) as u32 * n.lanes;
                    let i = index(self, half);
                    self.op(n, "EXTRACT_SUBVECTOR", &[Arg::Value(v), Arg::Value(i)], true);
                }
                _ => self.arithmetic(ty),
            },
        }
    }

    // ---- control flow ----

    fn new_block(&mut self, name: &'static str) -> usize {
        self.blocks.push(BlockText { name, lines: Vec::new() });
        self.blocks.len() - 1
    }

    fn enter_scope(&mut self) -> usize {
        let scope = self.next_scope;
        self.next_scope += 1;
        self.scope_stack.push(scope);
        scope
    }

    /// A two-way branch on a random comparison: BRCOND on a SETCC, or BR_CC.
    fn branch(&mut self, taken: usize, not_taken: usize) {
        if self.chance(1, 2) {
            let c = self.condition();
            let c = self.args_text(&[Arg::Value(c)]);
            self.line(format!("BRCOND {c}, %bb.{taken}, %bb.{not_taken}"));
        } else {
            let (code, l, r) = self.comparison();
            let args = self.args_text(&[Arg::Value(l), Arg::Value(r)]);
            self.line(format!("BR_CC {code}, {args}, %bb.{taken}, %bb.{not_taken}"));
        }
    }

    /// if/else: each arm computes a few values; the join merges some with PHIs; arm
    /// values nothing uses are stored in their arm.
    fn diamond(&mut self) {
        let then_block = self.new_block("then");
        let else_block = self.new_block("else");
        let join_block = self.new_block("join");
        self.branch(then_block, else_block);
        let mut arms = Vec::new();
        for block in [then_block, else_block] {
            self.current = block;
            let scope = self.enter_scope();
            let steps = self.below(4);
            for _ in 0..steps {
                self.step();
            }
            self.scope_stack.pop();
            arms.push((block, scope));
        }
        // PHI operands are chosen in each arm (loads they need land there); the PHI
        // values are created afterwards so no arm can see them.
        let phi_count = 1 + self.below(3);
        let mut phis = Vec::new();
        for _ in 0..phi_count {
            let Some(ty) = self.pick(&self.focus.clone()) else { break };
            let mut incoming = Vec::new();
            for &(block, scope) in &arms {
                self.current = block;
                self.scope_stack.push(scope);
                let locals: Vec<usize> = (0..self.values.len())
                    .filter(|&v| self.values[v].scope == scope && self.values[v].pooled && self.values[v].ty == ty)
                    .collect();
                let v = match self.pick(&locals) {
                    Some(v) if self.chance(3, 4) => v,
                    _ => self.operand(ty),
                };
                self.scope_stack.pop();
                incoming.push((v, block));
            }
            phis.push((ty, incoming));
        }
        let mut phi_lines = Vec::new();
        for (ty, incoming) in phis {
            let phi = self.new_value("phi", ty, true);
            self.values[phi].exact = incoming.iter().all(|&(v, _)| self.values[v].exact);
            let args: Vec<Arg> = incoming.iter().flat_map(|&(v, b)| [Arg::Value(v), Arg::Text(format!("%bb.{b}"))]).collect();
            let args = self.args_text(&args);
            phi_lines.push(format!("{} = PHI {args}", self.def_text(phi)));
        }
        for &(block, scope) in &arms {
            self.current = block;
            self.store_unused(scope);
            self.line(format!("BR %bb.{join_block}"));
        }
        self.current = join_block;
        for l in phi_lines {
            self.line(l);
        }
    }

    /// A counted loop: `for (i = 0; i < trip; i++)` with 1-2 accumulators carried in
    /// PHIs; the trip count (0-4) is a constant or depends on `%tid`.
    fn counted_loop(&mut self) {
        let (Some(i32_type), Some(bool_type)) = (self.type_named("i32"), self.type_named("i1")) else { return };
        let zero = self.int_constant(i32_type, 0);
        let one = self.int_constant(i32_type, 1);
        let trip = if self.chance(1, 2) {
            let count = self.below(5) as i128;
            self.int_constant(i32_type, count)
        } else {
            let three = self.int_constant(i32_type, 3);
            self.op(i32_type, "AND", &[Arg::Value(self.tid), Arg::Value(three)], false)
        };
        let accumulators: Vec<(Ty, usize)> = (0..1 + self.below(2))
            .filter_map(|_| {
                let ty = self.pick(&self.focus.clone())?;
                Some((ty, self.operand(ty)))
            })
            .collect();
        let preheader = self.current;
        let header = self.new_block("header");
        let body = self.new_block("body");
        let exit = self.new_block("exit");
        self.line(format!("BR %bb.{header}"));
        // Header values belong to scope 0: the header dominates the body and the exit.
        let counter = self.new_value("i", i32_type, false);
        let phis: Vec<(usize, usize)> = accumulators.iter().map(|&(ty, init)| (self.new_value("acc", ty, true), init)).collect();
        // A float accumulator is folded with float arithmetic: its NaN payload is not exact.
        for &(phi, _) in &phis {
            let ty = self.values[phi].ty;
            self.values[phi].exact = !ty.is_float();
        }

        self.current = body;
        let scope = self.enter_scope();
        let steps = 1 + self.below(4);
        for _ in 0..steps {
            self.step();
        }
        let mut next_values = Vec::new();
        for &(phi, _) in &phis {
            let ty = self.values[phi].ty;
            let ops: &[&str] = match ty.class {
                Class::Bool => BOOL_ACCUMULATE,
                Class::Int | Class::IntVector => INTEGER_ACCUMULATE,
                Class::Float | Class::FloatVector => FLOAT_ACCUMULATE,
            };
            let name = self.pick(ops).unwrap_or(ops[0]);
            let other = self.operand(ty);
            next_values.push(self.op(ty, name, &[Arg::Value(phi), Arg::Value(other)], true));
        }
        let next_counter = self.op(i32_type, "ADD", &[Arg::Value(counter), Arg::Value(one)], false);
        // The PHIs are written now so their uses count before unused values are stored.
        let mut header_lines = Vec::new();
        let args = self.args_text(&[Arg::Value(zero), Arg::Text(format!("%bb.{preheader}")), Arg::Value(next_counter), Arg::Text(format!("%bb.{body}"))]);
        header_lines.push(format!("{} = PHI {args}", self.def_text(counter)));
        for (&(phi, init), &next) in phis.iter().zip(&next_values) {
            let args = self.args_text(&[Arg::Value(init), Arg::Text(format!("%bb.{preheader}")), Arg::Value(next), Arg::Text(format!("%bb.{body}"))]);
            header_lines.push(format!("{} = PHI {args}", self.def_text(phi)));
        }
        self.store_unused(scope);
        self.line(format!("BR %bb.{header}"));
        self.scope_stack.pop();

        self.current = header;
        for l in header_lines {
            self.line(l);
        }
        if self.chance(1, 2) {
            let c = self.op(bool_type, "SETCC", &[Arg::Text("ult".into()), Arg::Value(counter), Arg::Value(trip)], false);
            let c = self.args_text(&[Arg::Value(c)]);
            self.line(format!("BRCOND {c}, %bb.{body}, %bb.{exit}"));
        } else {
            let args = self.args_text(&[Arg::Value(counter), Arg::Value(trip)]);
            self.line(format!("BR_CC ult, {args}, %bb.{body}, %bb.{exit}"));
        }
        self.current = exit;
        // The accumulators' final values are the loop's result: observe them.
        for &(phi, _) in &phis {
            self.store(phi);
        }
    }

    // ---- the whole kernel ----

    fn choose_focus(&mut self) {
        let mut pool = self.universe.clone();
        let (low, high) = self.config.types_per_kernel;
        let count = self.in_range((low.max(1), high.max(1))).min(pool.len());
        for _ in 0..count {
            let i = self.below(pool.len());
            if i < pool.len() {
                self.focus.push(pool.remove(i));
            }
        }
        if self.focus.is_empty() {
            self.focus.extend(pool.first().copied());
        }
    }

    fn choose_scalar_params(&mut self) {
        let eligible: Vec<Ty> = self.focus.iter().copied().filter(|t| t.total_bits() <= 128).collect();
        if eligible.is_empty() {
            return;
        }
        let count = self.below(self.config.max_scalar_params + 1);
        for index in 0..count {
            let Some(ty) = self.pick(&eligible) else { break };
            self.push_value(format!("arg{}", index + 2), ty, true);
            self.scalar_params.push(ty);
        }
    }

    fn run(&mut self, origin: &str) -> GeneratedKernel {
        self.choose_focus();
        self.choose_scalar_params();
        let operations = self.in_range(self.config.operations);
        let diamond_at = (self.config.if_else && self.chance(1, 2)).then(|| self.below(operations + 1));
        let loop_at = (self.config.loops && self.chance(1, 2)).then(|| self.below(operations + 1));
        for i in 0..=operations {
            if diamond_at == Some(i) {
                self.diamond();
            }
            if loop_at == Some(i) {
                self.counted_loop();
            }
            if i < operations {
                self.step();
            }
        }
        self.store_unused(0);
        self.line("RET".into());
        self.finish(origin)
    }

    fn finish(&mut self, origin: &str) -> GeneratedKernel {
        let input_stride = self.input_bytes.div_ceil(16).max(1) * 16;
        let output_stride = self.output_bytes.div_ceil(16).max(1) * 16;
        let focus: Vec<&'static str> = self.focus.iter().map(|t| t.name).collect();
        let name = "random_kernel".to_string();
        let mut text = String::new();
        text.push_str(&format!("# Generated by backend::random_mir ({origin}); focus types: {}.\n", focus.join(" ")));
        text.push_str(&format!(
            "# Thread tid.x reads input[tid * {input_stride} ..][..{input_stride}] and writes output[tid * {output_stride} ..][..{output_stride}].\n"
        ));
        text.push_str(&format!("---\nname: {name}\nkind: kernel\nparams:\n  - {{ name: input, type: p1 }}\n  - {{ name: output, type: p1 }}\n"));
        for (i, ty) in self.scalar_params.iter().enumerate() {
            text.push_str(&format!("  - {{ name: arg{}, type: {} }}\n", i + 2, ty.name));
        }
        if self.frame_bytes > 0 {
            text.push_str(&format!("frame:\n  - {{ name: scratch, size: {}, align: 16 }}\n", self.frame_bytes.div_ceil(16) * 16));
        }
        text.push_str("body: |\n  bb.0.entry:\n");
        let mut prologue = vec!["%input:p1 = ARG 0".to_string(), "%output:p1 = ARG 1".to_string()];
        if self.frame_bytes > 0 {
            prologue.push("%frame:p5 = FRAME_INDEX 0".to_string());
        }
        for (i, ty) in self.scalar_params.iter().enumerate() {
            prologue.push(format!("%arg{}:{} = ARG {}", i + 2, ty.name, i + 2));
        }
        prologue.extend([
            "%tid:i32 = INTRINSIC @llvm.nvvm.read.ptx.sreg.tid.x".to_string(),
            "%tid.wide:i64 = ZERO_EXTEND %tid".to_string(),
            format!("%input.stride:i64 = CONSTANT {input_stride}"),
            "%input.offset:i64 = MUL %tid.wide, %input.stride".to_string(),
            "%input.base:p1 = PTR_ADD %input, %input.offset".to_string(),
            format!("%output.stride:i64 = CONSTANT {output_stride}"),
            "%output.offset:i64 = MUL %tid.wide, %output.stride".to_string(),
            "%output.base:p1 = PTR_ADD %output, %output.offset".to_string(),
        ]);
        for l in prologue.iter().chain(&self.constants) {
            text.push_str(&format!("    {l}\n"));
        }
        for (number, block) in self.blocks.iter().enumerate() {
            if number > 0 {
                text.push_str(&format!("  bb.{number}.{}:\n", block.name));
            }
            for l in &block.lines {
                text.push_str(&format!("    {l}\n"));
            }
        }
        text.push_str("...\n");
        for (k, types) in self.helpers.iter().enumerate() {
            let names: Vec<&str> = types.iter().map(|t| t.name).collect();
            let returns: Vec<&str> = names.iter().rev().copied().collect();
            text.push_str(&format!("---\nname: helper{k}\nkind: device\nparams:\n"));
            for (i, name) in names.iter().enumerate() {
                text.push_str(&format!("  - {{ name: p{i}, type: {name} }}\n"));
            }
            text.push_str(&format!("returns: [{}]\nbody: |\n  bb.0.entry:\n", returns.join(", ")));
            for (i, name) in names.iter().enumerate() {
                text.push_str(&format!("    %p{i}:{name} = ARG {i}\n"));
            }
            let reversed: Vec<String> = (0..names.len()).rev().map(|i| format!("%p{i}")).collect();
            text.push_str(&format!("    RET {}\n...\n", reversed.join(", ")));
        }
        GeneratedKernel {
            text,
            name,
            focus_types: focus,
            scalar_params: self.scalar_params.iter().map(|t| t.name).collect(),
            input_stride,
            output_stride,
            outputs: std::mem::take(&mut self.outputs),
        }
    }
}

/// `value` wrapped to `bits` and written so the verifier accepts it for the type:
/// negative when the top bit is set (`i1` stays 0 or 1).
fn wrap_signed(value: i128, bits: u32) -> i128 {
    if bits >= 128 {
        return value;
    }
    let low = value & ((1i128 << bits) - 1);
    if bits > 1 && (low >> (bits - 1)) & 1 == 1 {
        low - (1i128 << bits)
    } else {
        low
    }
}

fn signed_max(bits: u32) -> i128 {
    if bits >= 128 {
        i128::MAX
    } else {
        (1i128 << (bits - 1)) - 1
    }
}

/// A float literal the MIR parser reads back exactly (`-0.0`, `2047.0`).
fn float_literal(x: f64) -> String {
    crate::mir::printer::float_text(x)
}

#[cfg(test)]
mod tests;
