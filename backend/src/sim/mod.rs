//! `ptxc sim`: a CPU simulator of PTX, the oracle for every pass after instruction
//! selection.
//!
//! Where it sits: beside the pipeline, after it. The MIR interpreter
//! ([`crate::interp`]) runs a kernel before selection; the simulator runs the PTX that
//! `ptxc compile` (or any other compiler, such as LLVM's `llc`) emits for it, with the
//! same arguments, the same launch and the same thread schedule, so that the two
//! outputs can be compared byte for byte.
//!
//! Pipeline of the simulator itself: [`lexer`] (text to tokens), [`parser`] (tokens
//! to a syntax tree), [`decode`] (names resolved, modifiers interpreted, every
//! instruction checked against the SM and `.version` with the description's
//! `ptx-isa.yaml`, state spaces laid out: the compact form of [`isa`]), then [`exec`]
//! runs it, with [`alu`] and [`fpu`] for the arithmetic and [`memory`] for addresses.
//! Decoding happens once; a [`Simulator`] runs any number of launches.
//!
//! Semantics follow the PTX ISA. In brief (details in each module):
//! - Integer operations as PTX defines them, including shift amounts at or above the
//!   width; division by zero and the signed division overflow are undefined behaviour.
//! - IEEE arithmetic in every rounding mode and format, exactly ([`fpu`]); `.approx`
//!   functions are correctly rounded results (within every bound the ISA states);
//!   NaN results are the canonical NaN.
//! - Memory is checked: out-of-bounds, misaligned, null, wrong-space and read-only
//!   accesses are undefined behaviour, reported with the PTX line and the thread; so
//!   are reads of registers or local memory never written ([`exec`]).
//! - Threads run in warps of 32 with the MIR interpreter's deterministic schedule;
//!   barriers, shuffles and votes synchronise as PTX says ([`exec`]).
//! - Memory-model qualifiers (`.acquire`, `.gpu`, fences) are accepted and do not
//!   change results: every access happens in program order.

pub mod alu;
pub mod decode;
pub mod exec;
pub mod fpu;
pub mod isa;
pub mod lexer;
pub mod memory;
pub mod parser;
#[cfg(test)]
mod tests;

use serde_json::{json, Value};
use target_desc::tables::TargetTables;

use crate::interp::{self, ArgValue, Launch, RunResult};
pub use exec::Options;

/// What kind of problem stopped the simulator.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SimErrorKind {
    /// The PTX does not parse or is malformed.
    Syntax,
    /// Something the simulator does not implement (or an unusable launch).
    Unsupported,
    /// An instruction or feature the SM or the `.version` lacks.
    Requirement,
    /// The program's behaviour is undefined on these inputs.
    Undefined,
    /// `trap` or `brkpt` executed.
    Trap,
    OutOfFuel,
}

/// A located simulator error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub kind: SimErrorKind,
    /// Byte offset in the PTX text.
    pub at: Option<u32>,
    pub message: String,
    /// `thread (1, 0, 0) of block (0, 0, 0)`, for run-time errors.
    pub thread: Option<String>,
    pub function: Option<String>,
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(t) = &self.thread {
            write!(f, " (in {t})")?;
        }
        Ok(())
    }
}

impl std::error::Error for SimError {}

impl SimError {
    fn new(kind: SimErrorKind, at: Option<u32>, message: String) -> SimError {
        SimError { kind, at, message, thread: None, function: None }
    }

    pub fn parse(at: usize, message: String) -> SimError {
        SimError::new(SimErrorKind::Syntax, Some(at as u32), message)
    }

    pub fn syntax(at: u32, message: String) -> SimError {
        SimError::new(SimErrorKind::Syntax, Some(at), message)
    }

    pub fn unsupported(at: u32, message: String) -> SimError {
        SimError::new(SimErrorKind::Unsupported, Some(at), message)
    }

    pub fn requirement(at: u32, message: String) -> SimError {
        SimError::new(SimErrorKind::Requirement, Some(at), message)
    }

    /// The error as `file:line:col: error: ...` with the source line and a caret.
    pub fn render(&self, file: &str, text: &str) -> String {
        let what = match self.kind {
            SimErrorKind::Undefined => format!("undefined behaviour: {}", self.message),
            SimErrorKind::Trap => "trap executed".to_string(),
            SimErrorKind::OutOfFuel => format!("{} (raise --fuel)", self.message),
            SimErrorKind::Unsupported => format!("not supported by the simulator: {}", self.message),
            _ => self.message.clone(),
        };
        let Some(at) = self.at else { return format!("error: {what}\n") };
        let (line, column) = lexer::LineIndex::new(text).position(text, at);
        let mut error = crate::diagnostics::MirError::at(file, text, line as usize, column as usize, what);
        error.context = match (&self.function, &self.thread) {
            (Some(f), Some(t)) => Some(format!("function `{f}`, {t}")),
            (Some(f), None) => Some(format!("function `{f}`")),
            _ => None,
        };
        error.render()
    }
}

/// A decoded PTX file, ready to run kernels.
pub struct Simulator {
    program: decode::Program,
}

/// A kernel parameter, as `ptxc sim` needs it to read arguments.
#[derive(Clone, Debug)]
pub struct KernelParam {
    pub name: String,
    /// The type a scalar argument is parsed as (an array parameter of up to 16 bytes
    /// takes an integer of its size).
    pub ty: Option<interp::Ty>,
    /// A 64-bit parameter: may take a buffer (its address is passed).
    pub pointer_sized: bool,
    /// A byte array (`.param .align A .b8 p[S]`).
    pub bytes: Option<u32>,
}

impl Simulator {
    /// Parses and decodes `text` (named `file` in messages) for `sm` (default: the
    /// file's `.target`), checking every instruction against the description's
    /// requirements.
    pub fn new(text: &str, file: &str, tables: &TargetTables, sm: Option<&str>) -> Result<Simulator, SimError> {
        let tokens = lexer::tokenize(text)?;
        let module = parser::parse(text, &tokens)?;
        let sm_name = match sm {
            Some(s) => s.to_string(),
            None => match &module.target {
                Some((words, _)) => words.first().cloned().unwrap_or_default(),
                None => return Err(SimError::syntax(0, "the file has no `.target` directive".into())),
            },
        };
        let Some(sm_tables) = tables.find_sm(&sm_name) else {
            let at = module.target.as_ref().map_or(0, |t| t.1);
            let names: Vec<&str> = tables.sms.iter().map(|s| s.name).collect();
            return Err(SimError::requirement(at, format!("unknown SM `{sm_name}` (the description knows {})", names.join(", "))));
        };
        let requirements = tables
            .ptx_isa
            .iter()
            .map(|r| {
                let mut words = r.insn.split('.');
                let opcode = words.next().unwrap_or("").to_string();
                decode::Requirement {
                    opcode,
                    words: words.map(str::to_string).collect(),
                    sm: tables.sms.get(r.sm as usize).map_or("", |s| s.name).to_string(),
                    ptx: (u32::from(r.ptx / 10), u32::from(r.ptx % 10)),
                    source: r.source.to_string(),
                }
            })
            .collect();
        let target = decode::Target { tables, sm: sm_tables, requirements };
        let program = decode::decode(&module, &target, text, file)?;
        Ok(Simulator { program })
    }

    /// `error` rendered at its line of this simulator's PTX.
    pub fn render_error(&self, error: &SimError) -> String {
        error.render(&self.program.file, &self.program.text)
    }

    /// The SM the file was decoded for.
    pub fn sm(&self) -> &str {
        &self.program.sm
    }

    pub fn kernels(&self) -> Vec<&str> {
        self.program.functions.iter().filter(|f| f.is_entry).map(|f| f.name.as_str()).collect()
    }

    /// The parameters of kernel `entry`.
    pub fn kernel_params(&self, entry: &str) -> Option<Vec<KernelParam>> {
        let (_, f) = self.program.function(entry).filter(|(_, f)| f.is_entry)?;
        Some(
            f.params
                .iter()
                .map(|p| {
                    let ty = match p.ty {
                        Some(t) => ptx_value_type(t),
                        None if p.size <= 16 && p.size > 0 => Some(interp::Ty { kind: interp::Kind::Int, bits: p.size * 8, lanes: 1 }),
                        None => None,
                    };
                    KernelParam { name: p.name.clone(), ty, pointer_sized: p.ty.is_some_and(|t| t.bits() == 64 && t.format().is_none()), bytes: if p.ty.is_none() { Some(p.size) } else { None } }
                })
                .collect(),
        )
    }

    /// Runs kernel `entry`: one argument per parameter (a buffer for a 64-bit
    /// parameter is a fresh global allocation whose address is passed; for a byte
    /// array it is the parameter's bytes).
    pub fn run(&self, entry: &str, launch: &Launch, args: &[ArgValue], options: &Options) -> Result<RunResult, SimError> {
        exec::run(&self.program, entry, launch, args, options).map_err(|stop| {
            let (kind, message) = match stop.fault {
                exec::Fault::Undefined(m) => (SimErrorKind::Undefined, m),
                exec::Fault::Unsupported(m) => (SimErrorKind::Unsupported, m),
                exec::Fault::Trap => (SimErrorKind::Trap, "trap".into()),
                exec::Fault::OutOfFuel => (SimErrorKind::OutOfFuel, format!("out of fuel after {} instructions", options.fuel)),
            };
            SimError { kind, at: stop.at, message, thread: stop.thread, function: Some(stop.function) }
        })
    }

    /// The module's `.global` variables with their PTX element type, in order.
    pub fn globals(&self) -> Vec<(String, String)> {
        self.program.globals.iter().map(|g| (g.name.clone(), g.ty.clone())).collect()
    }

    /// The JSON report of a run, in `ptxc interp`'s format: buffers by parameter,
    /// `.global` variables, executed instructions.
    pub fn result_json(&self, entry: &str, args: &[interp::spec::ParsedArg], view: Option<(interp::Ty, &str)>, result: &RunResult) -> Value {
        let params = self.kernel_params(entry).unwrap_or_default();
        let mut buffers = Vec::new();
        let mut contents = result.buffers.iter();
        for (k, arg) in args.iter().enumerate() {
            let is_buffer = matches!(arg.value, ArgValue::Buffer(_)) && params.get(k).is_none_or(|p| p.bytes.is_none());
            if !is_buffer {
                continue;
            }
            let Some(bytes) = contents.next() else { break };
            let name = params.get(k).map_or("?", |p| p.name.as_str());
            let (ty, ty_name) = match (arg.view, view) {
                (Some(t), _) => (Some(t), arg.view_name.as_deref()),
                (None, Some((t, n))) => (Some(t), Some(n)),
                _ => (None, None),
            };
            buffers.push(match (ty, ty_name) {
                (Some(t), Some(n)) => json!({ "param": name, "index": k, "type": n, "values": interp::spec::decode_values(bytes, t) }),
                _ => json!({ "param": name, "index": k, "hex": hex(bytes) }),
            });
        }
        let globals: Vec<Value> = result
            .globals
            .iter()
            .zip(&self.program.globals)
            .map(|((name, bytes), g)| match isa::Ty::from_word(&g.ty).and_then(ptx_value_type) {
                Some(t) => json!({ "name": name, "type": interp_type_name(t), "values": interp::spec::decode_values(bytes, t) }),
                None => json!({ "name": name, "hex": hex(bytes) }),
            })
            .collect();
        json!({ "entry": entry, "steps": result.steps, "buffers": buffers, "globals": globals })
    }
}

/// Random arguments for `ptxc sim` without `--arg`: a buffer of
/// [`interp::args::RANDOM_BUFFER_BYTES`] random bytes for each 64-bit integer
/// parameter (it may be a pointer), random bytes for a byte array, and small random
/// values (as [`interp::args::random_lane`] draws them) for other scalars.
pub fn random_args(params: &[KernelParam], seed: u64) -> Vec<ArgValue> {
    let mut rng = interp::args::Rng::new(seed);
    let tame = rng.below(2) == 0;
    params
        .iter()
        .map(|p| match (p.pointer_sized, p.bytes, p.ty) {
            (true, _, _) => ArgValue::Buffer(rng.bytes(interp::args::RANDOM_BUFFER_BYTES)),
            (_, Some(n), _) => ArgValue::Buffer(rng.bytes(n as usize)),
            (_, None, Some(ty)) => ArgValue::Scalar(interp::args::random_lane(&mut rng, ty, tame)),
            (_, None, None) => ArgValue::Scalar(0),
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The MIR value type a PTX scalar type holds, for reading and printing values.
pub fn ptx_value_type(ty: isa::Ty) -> Option<interp::Ty> {
    use interp::float::FloatFormat;
    use isa::Ty as T;
    let (kind, bits) = match ty {
        T::B8 | T::U8 | T::S8 => (interp::Kind::Int, 8),
        T::B16 | T::U16 | T::S16 => (interp::Kind::Int, 16),
        T::B32 | T::U32 | T::S32 => (interp::Kind::Int, 32),
        T::B64 | T::U64 | T::S64 => (interp::Kind::Int, 64),
        T::B128 => (interp::Kind::Int, 128),
        T::F16 => (interp::Kind::Float(FloatFormat::F16), 16),
        T::BF16 => (interp::Kind::Float(FloatFormat::BF16), 16),
        T::F32 => (interp::Kind::Float(FloatFormat::F32), 32),
        T::F64 => (interp::Kind::Float(FloatFormat::F64), 64),
        _ => return None,
    };
    Some(interp::Ty { kind, bits, lanes: 1 })
}

fn interp_type_name(t: interp::Ty) -> String {
    match t.kind {
        interp::Kind::Float(f) => f.name().to_string(),
        _ => format!("i{}", t.bits),
    }
}
