//! Execution: kernel launch, threads and warps, the block scheduler, memory accesses
//! and the meaning of every decoded instruction.
//!
//! Where it sits: [`super::Simulator::run`] calls [`run`] on a decoded
//! [`Program`]; integer and float semantics are in [`super::alu`] and [`super::fpu`],
//! addresses in [`super::memory`].
//!
//! Scheduling (the same as the MIR interpreter's, so the two agree on races and on
//! the order of atomics): blocks run one after another in `ctaid` order, x fastest.
//! In a block, each runnable thread runs, in linear thread order, until it exits or
//! reaches a synchronisation point; when none can run, warp operations whose members
//! all wait are completed, else barriers whose participants all arrived are released,
//! else the block is deadlocked (reported as undefined behaviour). A warp is 32
//! consecutive threads of the block.
//!
//! - `.sync` warp operations (`shfl.sync`, `vote.sync`, `bar.warp.sync`,
//!   `match.sync`, `redux.sync`) complete when every lane of the member mask waits at
//!   an operation of the same kind with the same mask. Undefined: the executing lane is
//!   not in its mask, a member lane has exited or does not exist, a shuffle reads a lane
//!   outside the mask.
//! - Warp operations without `.sync` (`shfl`, `vote` before sm_70, `activemask`) take as
//!   their members the lanes of the warp waiting at that same instruction: lanes that
//!   exited or wait elsewhere are the inactive ones.
//! - `bar.sync`/`barrier.sync` without a thread count wait for every thread of the
//!   block (undefined if some thread has exited, as in the interpreter); with a count,
//!   for that many arrivals (`bar.arrive` counts without waiting).
//!
//! Definedness (in the manner of valgrind's memcheck): every register bit, and every
//! byte of local memory and of call parameters, carries a "never written" shadow bit.
//! Moving and bit-manipulating instructions (`mov`, packing, `cvt` between integers,
//! `and`/`or`/`xor`, shifts, `bfe`, `bfi`, `prmt`, `shf`, `selp`, local and parameter
//! memory) carry the shadow bit by bit; any other instruction makes its whole result
//! undefined if any input bit is. Undefined bits are harmless until they are
//! *observed*: a guard or `selp` condition, an address, a value stored to global or
//! shared memory or used by an atomic, a barrier, shuffle or vote control operand, an
//! indirect call target. An observation is reported, naming the register never
//! written (or the local memory never written) the value depends on. LLVM and this
//! compiler leave undefined values (`IMPLICIT_DEF`, the spare lane of a widened
//! vector) unwritten, so reading them is not an error by itself; a spill slot read
//! before its store, or a register used before its definition, is caught when the
//! value is observed.

use super::alu::{self, mask};
use super::decode::{Function, Program};
use super::fpu;
use super::isa::*;
use super::memory::{self as mem, GlobalObject, Location, Range};
use crate::interp::float::{FloatFormat, Rounding};
use crate::interp::{ArgValue, Launch, RunResult};

pub const WARP_SIZE: usize = 32;
const MAX_CALL_DEPTH: usize = 1000;
const MAX_THREADS_PER_BLOCK: u64 = 1024;
/// Local memory a thread may use across its call stack.
const MAX_LOCAL_BYTES: usize = 1 << 24;

/// Launch options beyond the geometry.
#[derive(Clone, Debug)]
pub struct Options {
    /// Executed instructions (all threads together) before [`Fault::OutOfFuel`].
    pub fuel: u64,
    /// Bytes of the `.extern .shared` array.
    pub dynamic_shared_bytes: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options { fuel: 100_000_000, dynamic_shared_bytes: 0 }
    }
}

/// Why an instruction stopped the run; the caller adds the position and thread.
#[derive(Debug)]
pub enum Fault {
    Undefined(String),
    Unsupported(String),
    Trap,
    OutOfFuel,
}

type Step<T> = Result<T, Fault>;

fn undefined<T>(what: impl Into<String>) -> Step<T> {
    Err(Fault::Undefined(what.into()))
}

/// A stopped run: what and where.
#[derive(Debug)]
pub struct Stop {
    pub fault: Fault,
    /// The instruction's byte offset in the PTX text, when there is one.
    pub at: Option<u32>,
    pub function: String,
    /// `thread (5, 0, 0) of block (1, 0, 0)`.
    pub thread: Option<String>,
}

struct Frame {
    function: u32,
    pc: u32,
    regs: Vec<u64>,
    /// Per register: the bits never written (or computed from bits never written).
    undef: Vec<u64>,
    /// Per register: where its undefined bits come from ([`origin`]).
    origin: Vec<u32>,
    params: Vec<Vec<u8>>,
    /// Undefined bits of each parameter byte.
    param_undef: Vec<Vec<u8>>,
    local_base: u32,
    local_ranges: usize,
}

/// Origins of undefined bits: a register never written (`function << 20 | slot`),
/// memory never written, or none.
const ORIGIN_MEMORY: u32 = u32::MAX - 1;
const ORIGIN_NONE: u32 = u32::MAX;

fn origin(function: u32, slot: u32) -> u32 {
    (function << 20) | (slot & 0xF_FFFF)
}

/// A value with its undefined bits and their origin.
#[derive(Copy, Clone, Debug)]
struct V {
    v: u64,
    u: u64,
    o: u32,
}

impl V {
    fn defined(v: u64) -> V {
        V { v, u: 0, o: ORIGIN_NONE }
    }

    /// `value` with every bit of `bits` undefined when any input bit is.
    fn computed(value: u64, bits: u32, inputs: &[V]) -> V {
        match inputs.iter().find(|x| x.u != 0) {
            Some(x) => V { v: value, u: mask(bits), o: x.o },
            None => V::defined(value),
        }
    }

    /// `value` with shadow `u`, the origin of the first undefined input.
    fn with_shadow(value: u64, u: u64, inputs: &[V]) -> V {
        let o = if u == 0 { ORIGIN_NONE } else { inputs.iter().find(|x| x.u != 0).map_or(ORIGIN_MEMORY, |x| x.o) };
        V { v: value, u, o }
    }
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum WaitKind {
    Bar { id: u32, count: Option<u32>, kind: BarKind },
    Shfl(ShflMode),
    Vote(VoteMode),
    WarpSync,
    Activemask,
    Match { all: bool },
    Redux { op: ReduxOp, ty: Ty },
}

#[derive(Copy, Clone, Debug)]
struct Wait {
    kind: WaitKind,
    /// A `.sync` form with an explicit member mask.
    sync: bool,
    mask: u32,
    operands: [u64; 3],
    /// The shuffled value's shadow (a shuffle moves undefined bits like `mov`).
    value_shadow: (u64, u32),
    function: u32,
    pc: u32,
}

#[derive(Copy, Clone, Debug)]
enum State {
    Running,
    Waiting(Wait),
    Exited,
}

struct Thread {
    frames: Vec<Frame>,
    state: State,
    tid: [u32; 3],
    linear: u32,
    carry: bool,
    executed: u64,
    local: Vec<u8>,
    /// Undefined bits of each local byte.
    local_undef: Vec<u8>,
    local_ranges: Vec<Range>,
}

enum Flow {
    Next,
    Jump(u32),
    Call(u32),
    Return,
    Exit,
    Wait(Wait),
}

struct Machine<'p> {
    program: &'p Program,
    globals: Vec<GlobalObject>,
    consts: Vec<u8>,
    const_ranges: Vec<Range>,
    shared: Vec<u8>,
    shared_ranges: Vec<Range>,
    kernel_params: Vec<u8>,
    kernel: &'p Function,
    fuel: u64,
    steps: u64,
    launch: Launch,
    ctaid: [u32; 3],
    dynamic_shared: u32,
    /// `bar.arrive` counts per barrier id, for barriers with a thread count.
    arrivals: [u32; 16],
}

/// Runs kernel `entry` of `program` on `args` (one per parameter).
pub fn run(program: &Program, entry: &str, launch: &Launch, args: &[ArgValue], options: &Options) -> Result<RunResult, Stop> {
    let stop = |fault: Fault, function: &str| Stop { fault, at: None, function: function.to_string(), thread: None };
    let Some((_, kernel)) = program.function(entry).filter(|(_, f)| f.is_entry) else {
        let kernels: Vec<&str> = program.functions.iter().filter(|f| f.is_entry).map(|f| f.name.as_str()).collect();
        return Err(stop(Fault::Unsupported(format!("no kernel `{entry}` in the file (kernels: {})", kernels.join(", "))), entry));
    };
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(stop(Fault::Unsupported(format!("grid {:?} and block {:?} must have no zero dimension", launch.grid, launch.block)), entry));
    }
    let threads: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
    if threads > MAX_THREADS_PER_BLOCK {
        return Err(stop(Fault::Unsupported(format!("{threads} threads per block; at most {MAX_THREADS_PER_BLOCK}")), entry));
    }
    if let Some(max) = kernel.max_threads {
        if threads > max {
            return Err(stop(Fault::Unsupported(format!("{threads} threads per block, but `{entry}` allows at most {max} (.maxntid/.reqntid)")), entry));
        }
    }
    let mut machine = Machine {
        program,
        globals: Vec::new(),
        consts: vec![0; program.const_size as usize],
        const_ranges: Vec::new(),
        shared: Vec::new(),
        shared_ranges: Vec::new(),
        kernel_params: vec![0; kernel.kernel_param_size as usize],
        kernel,
        fuel: options.fuel,
        steps: 0,
        launch: *launch,
        ctaid: [0; 3],
        dynamic_shared: options.dynamic_shared_bytes,
        arrivals: [0; 16],
    };
    machine.lay_out_memory().map_err(|f| stop(f, entry))?;
    let buffers = machine.kernel_arguments(args).map_err(|f| stop(f, entry))?;
    for z in 0..launch.grid[2] {
        for y in 0..launch.grid[1] {
            for x in 0..launch.grid[0] {
                machine.ctaid = [x, y, z];
                machine.shared.iter_mut().for_each(|b| *b = 0);
                machine.arrivals = [0; 16];
                machine.run_block()?;
            }
        }
    }
    let buffers = buffers.iter().map(|&k| std::mem::take(&mut machine.globals[k].bytes)).collect();
    let globals = program.globals.iter().enumerate().map(|(k, g)| (g.name.clone(), machine.globals[k].bytes.clone())).collect();
    Ok(RunResult { buffers, globals, steps: machine.steps })
}

impl<'p> Machine<'p> {
    /// Places the module's variables: global objects first (their index is their
    /// symbol), the const bank, the shared window; then applies initializer
    /// relocations.
    fn lay_out_memory(&mut self) -> Step<()> {
        let program = self.program;
        for g in &program.globals {
            self.globals.push(GlobalObject { bytes: g.init.clone(), read_only: false, label: format!("`{}`", g.name) });
        }
        let mut consts: Vec<&super::decode::DataObject> = program.consts.iter().collect();
        consts.sort_by_key(|c| c.offset);
        for c in &consts {
            let start = c.offset as usize;
            self.consts[start..start + c.init.len()].copy_from_slice(&c.init);
            self.const_ranges.push(Range { start: c.offset, size: c.size as u32, label: c.name.clone() });
        }
        let mut shared: Vec<(usize, &super::decode::DataObject)> = program.shared.iter().enumerate().collect();
        shared.sort_by_key(|(_, s)| s.offset);
        let mut end = 0u64;
        for (k, s) in shared {
            let size = if program.dynamic_shared == Some(k) { u64::from(self.dynamic_shared) } else { s.size };
            // The dynamic array comes last in the window, whatever its declaration order.
            let start = if program.dynamic_shared == Some(k) { end.max(u64::from(s.offset)).div_ceil(u64::from(s.align)) * u64::from(s.align) } else { u64::from(s.offset) };
            end = end.max(start + size);
            self.shared_ranges.push(Range { start: start as u32, size: size as u32, label: s.name.clone() });
        }
        self.shared_ranges.sort_by_key(|r| r.start);
        if end > 1 << 32 {
            return Err(Fault::Unsupported("shared memory larger than 4 GiB".into()));
        }
        self.shared = vec![0; end as usize];
        // Relocations: addresses of symbols stored in initializers.
        let mut patches = Vec::new();
        for (k, g) in program.globals.iter().enumerate() {
            for &(offset, sym, addend, generic, width) in &g.relocations {
                patches.push((Location::Global { object: k as u32, offset }, sym, addend, generic, width));
            }
        }
        for c in &program.consts {
            for &(offset, sym, addend, generic, width) in &c.relocations {
                patches.push((Location::Const { offset: c.offset + offset }, sym, addend, generic, width));
            }
        }
        for (location, sym, addend, generic, width) in patches {
            let value = self.static_symbol_address(sym, addend, generic)?;
            let bytes = value.to_le_bytes();
            match location {
                Location::Global { object, offset } => self.globals[object as usize].bytes[offset as usize..(offset + width) as usize].copy_from_slice(&bytes[..width as usize]),
                Location::Const { offset } => self.consts[offset as usize..(offset + width) as usize].copy_from_slice(&bytes[..width as usize]),
                _ => {}
            }
        }
        Ok(())
    }

    fn static_symbol_address(&self, sym: Sym, addend: i64, generic: bool) -> Step<u64> {
        let (space, address) = match sym {
            Sym::Global(k) => (Space::Global, mem::global_address(k, addend as u64)),
            Sym::Const(o) => (Space::Const, u64::from(o).wrapping_add(addend as u64)),
            Sym::Shared(o) => (Space::Shared, u64::from(o).wrapping_add(addend as u64)),
            Sym::Function(f) => return Ok((mem::FUNCTION_TAG << 56) | u64::from(f)),
            _ => return Err(Fault::Unsupported("an initializer holds the address of a local or parameter variable".into())),
        };
        if generic {
            mem::to_generic(space, address).ok_or_else(|| Fault::Undefined("an initializer address is out of range".into()))
        } else {
            Ok(address)
        }
    }

    /// Writes the kernel parameter image; returns the global objects of buffer
    /// arguments, in parameter order.
    fn kernel_arguments(&mut self, args: &[ArgValue]) -> Step<Vec<usize>> {
        let kernel = self.kernel;
        if args.len() != kernel.params.len() {
            return Err(Fault::Unsupported(format!("`{}` takes {} arguments, {} given", kernel.name, kernel.params.len(), args.len())));
        }
        let mut buffers = Vec::new();
        for (k, (arg, spec)) in args.iter().zip(&kernel.params).enumerate() {
            let start = spec.offset as usize;
            let size = spec.size as usize;
            let bytes: Vec<u8> = match arg {
                ArgValue::Scalar(bits) => {
                    if size > 16 {
                        return Err(Fault::Unsupported(format!("parameter {k} (`{}`) has {size} bytes; a scalar argument fills at most 16", spec.name)));
                    }
                    bits.to_le_bytes()[..size].to_vec()
                }
                ArgValue::Buffer(data) if spec.ty.is_none() => {
                    // A byte-array parameter takes its bytes directly.
                    if data.len() != size {
                        return Err(Fault::Unsupported(format!("parameter {k} (`{}`) is {size} bytes; {} given", spec.name, data.len())));
                    }
                    data.clone()
                }
                ArgValue::Buffer(data) => {
                    if spec.size != 8 {
                        return Err(Fault::Unsupported(format!("parameter {k} (`{}`) is not a 64-bit pointer; it cannot take a buffer", spec.name)));
                    }
                    let object = self.globals.len();
                    if object >= 1 << 24 || data.len() as u64 > 1 << 32 {
                        return Err(Fault::Unsupported(format!("buffer argument {k} is too large")));
                    }
                    self.globals.push(GlobalObject { bytes: data.clone(), read_only: false, label: format!("buffer argument {k} (`{}`)", spec.name) });
                    buffers.push(object);
                    mem::global_address(object as u32, 0).to_le_bytes().to_vec()
                }
            };
            self.kernel_params[start..start + size].copy_from_slice(&bytes);
        }
        Ok(buffers)
    }

    fn new_frame(&self, function: u32, thread: &mut Thread) -> Step<Frame> {
        let f = &self.program.functions[function as usize];
        let base = thread.local.len().div_ceil(16) * 16;
        let top = base + f.local_size as usize;
        if top > MAX_LOCAL_BYTES {
            return undefined(format!("the call stack needs more than {MAX_LOCAL_BYTES} bytes of local memory"));
        }
        thread.local.resize(top, 0);
        thread.local_undef.resize(top, 0xFF);
        let ranges = thread.local_ranges.len();
        for (offset, size, name) in &f.locals {
            thread.local_ranges.push(Range { start: (base as u32) + offset, size: *size, label: format!("{name} of `{}`", f.name) });
        }
        let slots = f.slot_names.len();
        Ok(Frame {
            function,
            pc: 0,
            regs: vec![0; slots],
            undef: vec![u64::MAX; slots],
            origin: (0..slots as u32).map(|s| origin(function, s)).collect(),
            params: f.frame_params.iter().map(|&s| vec![0; s as usize]).collect(),
            param_undef: f.frame_params.iter().map(|&s| vec![0xFF; s as usize]).collect(),
            local_base: base as u32,
            local_ranges: ranges,
        })
    }

    fn run_block(&mut self) -> Result<(), Stop> {
        let [bx, by, bz] = self.launch.block;
        let entry = self.program.functions.iter().position(|f| std::ptr::eq(f, self.kernel)).unwrap_or(0) as u32;
        let mut threads = Vec::with_capacity((bx * by * bz) as usize);
        for z in 0..bz {
            for y in 0..by {
                for x in 0..bx {
                    let mut t = Thread {
                        frames: Vec::new(),
                        state: State::Running,
                        tid: [x, y, z],
                        linear: threads.len() as u32,
                        carry: false,
                        executed: 0,
                        local: Vec::new(),
                        local_undef: Vec::new(),
                        local_ranges: Vec::new(),
                    };
                    let frame = self.new_frame(entry, &mut t).map_err(|f| self.stop(&t, f))?;
                    t.frames.push(frame);
                    threads.push(t);
                }
            }
        }
        loop {
            for t in threads.iter_mut() {
                if matches!(t.state, State::Running) {
                    self.run_thread(t)?;
                }
            }
            if threads.iter().all(|t| matches!(t.state, State::Exited)) {
                return Ok(());
            }
            if self.resolve_warps(&mut threads)? {
                continue;
            }
            if self.resolve_barriers(&mut threads)? {
                continue;
            }
            let first = threads.iter().position(|t| matches!(t.state, State::Waiting(_))).unwrap_or(0);
            let others: Vec<String> = threads
                .iter()
                .filter_map(|t| match t.state {
                    State::Waiting(w) => Some(format!("{} at line {}", short_thread(t), self.line_of(w.function, w.pc))),
                    _ => None,
                })
                .take(4)
                .collect();
            let fault = Fault::Undefined(format!("deadlock: no synchronisation point can complete (waiting: {}{})", others.join(", "), if others.len() == 4 { ", ..." } else { "" }));
            return Err(self.stop(&threads[first], fault));
        }
    }

    fn line_of(&self, function: u32, pc: u32) -> u32 {
        let f = &self.program.functions[function as usize];
        let at = f.insts.get(pc as usize).map_or(f.at, |i| i.at);
        self.program.lines.position(&self.program.text, at).0
    }

    fn stop(&self, thread: &Thread, fault: Fault) -> Stop {
        let (function, at) = match thread.frames.last() {
            Some(frame) => {
                let f = &self.program.functions[frame.function as usize];
                (f.name.clone(), f.insts.get(frame.pc as usize).map(|i| i.at))
            }
            None => (self.kernel.name.clone(), None),
        };
        let [x, y, z] = thread.tid;
        let [a, b, c] = self.ctaid;
        Stop { fault, at, function, thread: Some(format!("thread ({x}, {y}, {z}) of block ({a}, {b}, {c})")) }
    }

    /// Runs `thread` until it exits or waits.
    fn run_thread(&mut self, thread: &mut Thread) -> Result<(), Stop> {
        let program = self.program;
        loop {
            let Some(frame) = thread.frames.last() else {
                thread.state = State::Exited;
                return Ok(());
            };
            let function = &program.functions[frame.function as usize];
            let Some(inst) = function.insts.get(frame.pc as usize) else {
                return Err(self.stop(thread, Fault::Undefined("execution ran past the end of the function".into())));
            };
            if self.steps >= self.fuel {
                return Err(self.stop(thread, Fault::OutOfFuel));
            }
            self.steps += 1;
            thread.executed += 1;
            if let Some((slot, negated)) = inst.guard {
                let guard = self.read(thread, Src::Reg(slot));
                let value = match self.observe(guard, "the guard predicate") {
                    Ok(v) => v,
                    Err(fault) => return Err(self.stop(thread, fault)),
                };
                if (value & 1 == 1) == negated {
                    thread.frames.last_mut().expect("frame").pc += 1;
                    continue;
                }
            }
            let flow = match self.execute(inst, thread) {
                Ok(flow) => flow,
                Err(fault) => return Err(self.stop(thread, fault)),
            };
            match flow {
                Flow::Next => thread.frames.last_mut().expect("frame").pc += 1,
                Flow::Jump(pc) => thread.frames.last_mut().expect("frame").pc = pc,
                Flow::Call(callee) => {
                    if thread.frames.len() >= MAX_CALL_DEPTH {
                        return Err(self.stop(thread, Fault::Undefined(format!("call depth exceeds {MAX_CALL_DEPTH} (unbounded recursion)"))));
                    }
                    let Op::Call(call) = &inst.op else { unreachable!("a call flow comes from a call") };
                    let mut frame = match self.new_frame(callee, thread) {
                        Ok(f) => f,
                        Err(fault) => return Err(self.stop(thread, fault)),
                    };
                    let caller = thread.frames.last().expect("frame");
                    let target = &program.functions[callee as usize];
                    if call.args.len() != target.params.len() || call.results.len() != target.returns.len() {
                        let fault = Fault::Undefined(format!(
                            "`{}` takes {} argument(s) and returns {} value(s); the call passes {} and receives {}",
                            target.name,
                            target.params.len(),
                            target.returns.len(),
                            call.args.len(),
                            call.results.len()
                        ));
                        return Err(self.stop(thread, fault));
                    }
                    for (k, &arg) in call.args.iter().enumerate() {
                        let n = caller.params[arg as usize].len().min(frame.params[k].len());
                        frame.params[k][..n].copy_from_slice(&caller.params[arg as usize][..n]);
                        frame.param_undef[k][..n].copy_from_slice(&caller.param_undef[arg as usize][..n]);
                    }
                    thread.frames.push(frame);
                }
                Flow::Return => {
                    let finished = thread.frames.pop().expect("frame");
                    thread.local_ranges.truncate(finished.local_ranges);
                    thread.local.truncate(finished.local_base as usize);
                    thread.local_undef.truncate(finished.local_base as usize);
                    let Some(caller) = thread.frames.last_mut() else {
                        thread.state = State::Exited;
                        return Ok(());
                    };
                    let callee = &program.functions[finished.function as usize];
                    let call = &program.functions[caller.function as usize].insts[caller.pc as usize];
                    if let Op::Call(call) = &call.op {
                        for (k, &result) in call.results.iter().enumerate() {
                            let from = callee.params.len() + k;
                            let n = finished.params[from].len().min(caller.params[result as usize].len());
                            caller.params[result as usize][..n].copy_from_slice(&finished.params[from][..n]);
                            caller.param_undef[result as usize][..n].copy_from_slice(&finished.param_undef[from][..n]);
                        }
                    }
                    caller.pc += 1;
                }
                Flow::Exit => {
                    thread.state = State::Exited;
                    return Ok(());
                }
                Flow::Wait(wait) => {
                    thread.state = State::Waiting(wait);
                    return Ok(());
                }
            }
        }
    }
}

fn short_thread(t: &Thread) -> String {
    let [x, y, z] = t.tid;
    format!("thread ({x}, {y}, {z})")
}

/// Operand access.
impl Machine<'_> {
    /// A value operand with its undefined bits.
    fn read(&self, thread: &Thread, src: Src) -> V {
        let frame = thread.frames.last().expect("frame");
        match src {
            Src::Reg(slot) => V { v: frame.regs[slot as usize], u: frame.undef[slot as usize], o: frame.origin[slot as usize] },
            Src::NotPred(slot) => V { v: (frame.regs[slot as usize] & 1) ^ 1, u: frame.undef[slot as usize] & 1, o: frame.origin[slot as usize] },
            Src::Imm(v) => V::defined(v),
            Src::Special(s) => V::defined(self.special(thread, s)),
            Src::Addr(sym, offset, generic) => match self.symbol_address(thread, sym, offset, generic) {
                Ok(a) => V::defined(a),
                // An address outside its space: surfaces when the value is used.
                Err(_) => V::defined(0),
            },
        }
    }

    /// The value of an operand whose every bit must be defined (a control operand).
    fn need(&self, thread: &Thread, src: Src, what: &str) -> Step<u64> {
        if let Src::Addr(sym, offset, generic) = src {
            return self.symbol_address(thread, sym, offset, generic);
        }
        self.observe(self.read(thread, src), what)
    }

    /// `v`'s bits, or an error when some are undefined: `what` observes them.
    fn observe(&self, v: V, what: &str) -> Step<u64> {
        if v.u == 0 {
            return Ok(v.v);
        }
        undefined(format!("{what} depends on {}", self.origin_name(v.o)))
    }

    fn origin_name(&self, o: u32) -> String {
        match o {
            ORIGIN_MEMORY => "local or parameter memory that was never written".to_string(),
            ORIGIN_NONE => "bits that were never written".to_string(),
            _ => {
                let f = &self.program.functions[(o >> 20) as usize];
                let name = f.slot_names.get((o & 0xF_FFFF) as usize).map_or("?", |s| s.as_str());
                format!("`{name}`{}, which was never written", if f.is_entry { String::new() } else { format!(" of `{}`", f.name) })
            }
        }
    }

    /// A 128-bit register operand (value, undefined bits, origin).
    fn read128(&self, thread: &Thread, src: Src) -> (u128, u128, u32) {
        match src {
            Src::Reg(slot) => {
                let frame = thread.frames.last().expect("frame");
                let s = slot as usize;
                let hi = frame.regs.get(s + 1).copied().unwrap_or(0);
                let hu = frame.undef.get(s + 1).copied().unwrap_or(0);
                ((u128::from(hi) << 64) | u128::from(frame.regs[s]), (u128::from(hu) << 64) | u128::from(frame.undef[s]), frame.origin[s])
            }
            other => {
                let v = self.read(thread, other);
                (u128::from(v.v), u128::from(v.u), v.o)
            }
        }
    }

    fn special(&self, thread: &Thread, s: Special) -> u64 {
        let lane = thread.linear as u64 % WARP_SIZE as u64;
        match s {
            Special::Tid(d) => u64::from(thread.tid[d as usize]),
            Special::Ntid(d) => u64::from(self.launch.block[d as usize]),
            Special::Ctaid(d) => u64::from(self.ctaid[d as usize]),
            Special::Nctaid(d) => u64::from(self.launch.grid[d as usize]),
            Special::LaneId => lane,
            Special::WarpId => u64::from(thread.linear) / WARP_SIZE as u64,
            Special::NWarpId => 64,
            Special::SmId => 0,
            Special::NSmId => 1,
            Special::GridId => 1,
            Special::LaneMaskEq => 1 << lane,
            Special::LaneMaskLe => (2u64 << lane) - 1,
            Special::LaneMaskLt => (1u64 << lane) - 1,
            Special::LaneMaskGe => !((1u64 << lane) - 1) & 0xFFFF_FFFF,
            Special::LaneMaskGt => !((2u64 << lane) - 1) & 0xFFFF_FFFF,
            Special::Clock => thread.executed & 0xFFFF_FFFF,
            Special::ClockHi => thread.executed >> 32,
            Special::Clock64 => thread.executed,
            Special::GlobalTimer => self.steps,
            Special::GlobalTimerLo => self.steps & 0xFFFF_FFFF,
            Special::GlobalTimerHi => self.steps >> 32,
            Special::TotalSmemSize => self.shared.len() as u64,
            Special::DynamicSmemSize => u64::from(self.dynamic_shared),
            Special::Zero => 0,
        }
    }

    fn symbol_address(&self, thread: &Thread, sym: Sym, offset: i64, generic: bool) -> Step<u64> {
        let frame = thread.frames.last().expect("frame");
        let add = |base: u64| base.wrapping_add(offset as u64);
        let (space, address) = match sym {
            Sym::Global(k) => (Space::Global, mem::global_address(k, offset as u64)),
            Sym::Const(o) => (Space::Const, add(u64::from(o))),
            Sym::Shared(o) => (Space::Shared, add(u64::from(o))),
            Sym::Local(o) => (Space::Local, add(u64::from(frame.local_base + o))),
            Sym::KernelParam(o) => (Space::Param, add(u64::from(o))),
            Sym::FrameParam(k) => (Space::Param, mem::frame_param_address(thread.frames.len() - 1, k, offset as u32)),
            Sym::Function(f) => return Ok((mem::FUNCTION_TAG << 56) | u64::from(f)),
        };
        if generic {
            mem::to_generic(space, address).ok_or_else(|| Fault::Undefined(format!("the address {address:#x} is outside the {} space", space.name())))
        } else {
            Ok(address)
        }
    }

    fn write(thread: &mut Thread, dst: Dst, value: V) {
        if let Dst::Reg(slot) = dst {
            let frame = thread.frames.last_mut().expect("frame");
            let s = slot as usize;
            frame.regs[s] = value.v;
            frame.undef[s] = value.u;
            frame.origin[s] = value.o;
        }
    }

    fn write128(thread: &mut Thread, dst: Dst, value: u128, undef: u128, o: u32) {
        if let Dst::Reg(slot) = dst {
            let frame = thread.frames.last_mut().expect("frame");
            let s = slot as usize;
            frame.regs[s] = value as u64;
            frame.undef[s] = undef as u64;
            frame.origin[s] = o;
            if s + 1 < frame.regs.len() {
                frame.regs[s + 1] = (value >> 64) as u64;
                frame.undef[s + 1] = (undef >> 64) as u64;
                frame.origin[s + 1] = o;
            }
        }
    }
}

/// Memory.
impl Machine<'_> {
    /// The address an instruction's `[...]` operand denotes, as a specific address of
    /// `space` (or a generic address when `space` is generic).
    fn effective_address(&self, thread: &Thread, address: Address, space: Space) -> Step<u64> {
        match address.base {
            AddrBase::None => Ok(address.offset as u64),
            AddrBase::Reg(slot) => Ok(self.need(thread, Src::Reg(slot), "the address")?.wrapping_add(address.offset as u64)),
            AddrBase::Sym(sym) => self.symbol_address(thread, sym, address.offset, space == Space::Generic),
        }
    }

    /// Checks an access of `size` bytes at `address` in `space` (bounds, alignment to
    /// `align`, writability) and says where it lands.
    fn locate(&self, thread: &Thread, space: Space, address: u64, size: u32, align: u32, write: bool) -> Step<Location> {
        let (space, address) = if space == Space::Generic {
            match mem::from_generic(address) {
                Some(resolved) => resolved,
                None if address == 0 => return undefined("access through a null generic address"),
                None => return undefined(format!("{address:#x} is not a generic address of any state space")),
            }
        } else {
            (space, address)
        };
        let misaligned = |offset: u64| -> Step<()> {
            if align > 1 && offset % u64::from(align) != 0 {
                return undefined(format!("misaligned {size}-byte {} access at {address:#x} (needs {align}-byte alignment)", space.name()));
            }
            Ok(())
        };
        let small = |address: u64| -> Step<u32> {
            u32::try_from(address).map_err(|_| Fault::Undefined(format!("{address:#x} is not a .{} address (a generic address used with a .{} access?)", space.name(), space.name())))
        };
        match space {
            Space::Global | Space::Generic => {
                if mem::tag(address) != mem::GLOBAL_TAG {
                    return undefined(if address == 0 { "access through a null pointer".to_string() } else { format!("{address:#x} is not a global address") });
                }
                let object = ((address >> 32) & 0xFF_FFFF) as u32;
                let offset = address & 0xFFFF_FFFF;
                let Some(o) = self.globals.get(object as usize) else { return undefined(format!("{address:#x} points to no global object")) };
                if offset + u64::from(size) > o.bytes.len() as u64 {
                    return undefined(format!("out-of-bounds {size}-byte access at offset {offset} of {} ({} bytes)", o.label, o.bytes.len()));
                }
                misaligned(offset)?;
                if write && o.read_only {
                    return undefined(format!("write to read-only {}", o.label));
                }
                Ok(Location::Global { object, offset: offset as u32 })
            }
            Space::Shared => {
                let offset = small(address)?;
                mem::find_range(&self.shared_ranges, u64::from(offset), u64::from(size), "shared").map_err(Fault::Undefined)?;
                misaligned(u64::from(offset))?;
                Ok(Location::Shared { offset })
            }
            Space::Const => {
                let offset = small(address)?;
                mem::find_range(&self.const_ranges, u64::from(offset), u64::from(size), "const").map_err(Fault::Undefined)?;
                misaligned(u64::from(offset))?;
                if write {
                    return undefined("write to the const space");
                }
                Ok(Location::Const { offset })
            }
            Space::Local => {
                let offset = small(address)?;
                mem::find_range(&thread.local_ranges, u64::from(offset), u64::from(size), "local").map_err(Fault::Undefined)?;
                misaligned(u64::from(offset))?;
                Ok(Location::Local { offset })
            }
            Space::Param => {
                if mem::tag(address) == mem::FRAME_PARAM_TAG {
                    let depth = ((address >> 40) & 0xFFFF) as u32;
                    let object = ((address >> 32) & 0xFF) as u32;
                    let offset = (address & 0xFFFF_FFFF) as u32;
                    let Some(frame) = thread.frames.get(depth as usize) else { return undefined("a parameter address of a function that has returned") };
                    let Some(p) = frame.params.get(object as usize) else { return undefined("a parameter address of no parameter") };
                    if u64::from(offset) + u64::from(size) > p.len() as u64 {
                        return undefined(format!("out-of-bounds {size}-byte access at offset {offset} of a {}-byte parameter", p.len()));
                    }
                    misaligned(u64::from(offset))?;
                    return Ok(Location::FrameParam { depth, object, offset });
                }
                let offset = small(address)?;
                if u64::from(offset) + u64::from(size) > self.kernel_params.len() as u64 {
                    return undefined(format!("out-of-bounds {size}-byte access at offset {offset} of the {}-byte kernel parameters", self.kernel_params.len()));
                }
                misaligned(u64::from(offset))?;
                if write {
                    return undefined("write to a kernel parameter");
                }
                Ok(Location::KernelParam { offset })
            }
        }
    }

    /// Reads `out.len()` bytes at `location` and their undefined bits (only local and
    /// call-parameter memory has any).
    fn load(&self, thread: &Thread, location: Location, out: &mut [u8], shadow: &mut [u8]) {
        let n = out.len();
        shadow.iter_mut().for_each(|b| *b = 0);
        match location {
            Location::Global { object, offset } => out.copy_from_slice(&self.globals[object as usize].bytes[offset as usize..offset as usize + n]),
            Location::Shared { offset } => out.copy_from_slice(&self.shared[offset as usize..offset as usize + n]),
            Location::Const { offset } => out.copy_from_slice(&self.consts[offset as usize..offset as usize + n]),
            Location::KernelParam { offset } => out.copy_from_slice(&self.kernel_params[offset as usize..offset as usize + n]),
            Location::Local { offset } => {
                let range = offset as usize..offset as usize + n;
                out.copy_from_slice(&thread.local[range.clone()]);
                shadow.copy_from_slice(&thread.local_undef[range]);
            }
            Location::FrameParam { depth, object, offset } => {
                let frame = &thread.frames[depth as usize];
                let range = offset as usize..offset as usize + n;
                out.copy_from_slice(&frame.params[object as usize][range.clone()]);
                shadow.copy_from_slice(&frame.param_undef[object as usize][range]);
            }
        }
    }

    /// Writes `data` (with undefined bits `shadow`, from `origin`) at `location`:
    /// local and parameter memory keep the shadow; storing undefined bits anywhere else
    /// observes them.
    fn store(&mut self, thread: &mut Thread, location: Location, data: &[u8], shadow: &[u8], origin: u32) -> Step<()> {
        let n = data.len();
        match location {
            Location::Local { offset } => {
                thread.local[offset as usize..offset as usize + n].copy_from_slice(data);
                thread.local_undef[offset as usize..offset as usize + n].copy_from_slice(shadow);
                return Ok(());
            }
            Location::FrameParam { depth, object, offset } => {
                let frame = &mut thread.frames[depth as usize];
                frame.params[object as usize][offset as usize..offset as usize + n].copy_from_slice(data);
                frame.param_undef[object as usize][offset as usize..offset as usize + n].copy_from_slice(shadow);
                return Ok(());
            }
            _ => {}
        }
        if shadow.iter().any(|&b| b != 0) {
            return undefined(format!("the stored value depends on {}", self.origin_name(origin)));
        }
        match location {
            Location::Global { object, offset } => self.globals[object as usize].bytes[offset as usize..offset as usize + n].copy_from_slice(data),
            Location::Shared { offset } => self.shared[offset as usize..offset as usize + n].copy_from_slice(data),
            _ => {}
        }
        Ok(())
    }
}

/// Sign- or zero-extends a loaded element of `ty` to 64 bits.
fn extend_loaded(ty: Ty, value: u64) -> u64 {
    if ty.is_signed() && ty.bits() < 64 {
        alu::sext(value, ty.bits()) as u64
    } else {
        value
    }
}

fn lanes_of(ty: Ty, a: u64, b: u64, mut f: impl FnMut(u64, u64) -> u64) -> u64 {
    let (lanes, bits) = (ty.lanes(), ty.lane_bits());
    let m = mask(bits);
    (0..lanes).fold(0, |acc, i| acc | ((f((a >> (i * bits)) & m, (b >> (i * bits)) & m) & m) << (i * bits)))
}

fn lanes_of3(ty: Ty, a: u64, b: u64, c: u64, f: impl Fn(u64, u64, u64) -> u64) -> u64 {
    let (lanes, bits) = (ty.lanes(), ty.lane_bits());
    let m = mask(bits);
    (0..lanes).fold(0, |acc, i| acc | ((f((a >> (i * bits)) & m, (b >> (i * bits)) & m, (c >> (i * bits)) & m) & m) << (i * bits)))
}

fn format_of(ty: Ty) -> Step<FloatFormat> {
    ty.format().ok_or_else(|| Fault::Unsupported(format!(".{} is not a float type", ty.name())))
}

fn finish_float(format: FloatFormat, m: FloatMods, r: u64) -> u64 {
    let r = fpu::flush(format, m.ftz, r);
    let r = if m.sat { fpu::saturate(format, r) } else { r };
    if m.relu {
        fpu::relu(format, r)
    } else {
        r
    }
}

fn float_binary(op: FloatBin, format: FloatFormat, m: FloatMods, nan: bool, xorsign_abs: bool, approx: bool, a: u64, b: u64) -> u64 {
    if op == FloatBin::Copysign {
        let sign = 1u64 << (format.bits() - 1);
        return (b & !sign) | (a & sign);
    }
    let (a, b) = (fpu::flush(format, m.ftz, a), fpu::flush(format, m.ftz, b));
    let mode = if approx { Rounding::NearestEven } else { m.rounding };
    let r = match op {
        FloatBin::Add => fpu::add(format, a, b, mode),
        FloatBin::Sub => fpu::sub(format, a, b, mode),
        FloatBin::Mul => fpu::mul(format, a, b, mode),
        FloatBin::Div => fpu::div(format, a, b, mode),
        FloatBin::Min | FloatBin::Max if xorsign_abs => fpu::min_max_xorsign_abs(format, a, b, op == FloatBin::Max, nan),
        FloatBin::Min | FloatBin::Max => fpu::min_max(format, a, b, op == FloatBin::Max, nan),
        FloatBin::Copysign => unreachable!("handled above"),
    };
    finish_float(format, m, r)
}

fn float_unary(op: FloatUn, format: FloatFormat, m: FloatMods, approx: bool, a: u64) -> u64 {
    let sign = 1u64 << (format.bits() - 1);
    let a = fpu::flush(format, m.ftz, a);
    let r = match op {
        // "For abs.f64, NaN input is passed through unchanged" (PTX ISA, abs).
        FloatUn::Abs if format == FloatFormat::F64 && fpu::is_nan(format, a) => a,
        FloatUn::Abs => a & !sign,
        FloatUn::Neg => a ^ sign,
        FloatUn::Sqrt if !approx => fpu::sqrt(format, a, m.rounding),
        FloatUn::Rcp if !approx => fpu::div(format, fpu::from_f64(format, 1.0), a, m.rounding),
        FloatUn::Rcp if format == FloatFormat::F64 => {
            // rcp.approx.ftz.f64: the reciprocal of the upper word, low word zero.
            let upper = a & 0xFFFF_FFFF_0000_0000;
            let upper = fpu::flush(FloatFormat::F64, true, upper);
            let r = fpu::div(FloatFormat::F64, 1f64.to_bits(), upper, Rounding::TowardZero);
            if fpu::is_nan(FloatFormat::F64, r) {
                0x7FFF_FFFF_0000_0000
            } else {
                fpu::flush(FloatFormat::F64, true, r & 0xFFFF_FFFF_0000_0000)
            }
        }
        FloatUn::Sqrt | FloatUn::Rcp => {
            let mode = Rounding::NearestEven;
            if op == FloatUn::Sqrt {
                fpu::sqrt(format, a, mode)
            } else {
                fpu::div(format, fpu::from_f64(format, 1.0), a, mode)
            }
        }
        _ => fpu::approximate(op, format, a),
    };
    if matches!(op, FloatUn::Abs | FloatUn::Neg) {
        return fpu::flush(format, m.ftz, r);
    }
    finish_float(format, m, r)
}

fn int_compare(cmp: Cmp, ty: Ty, a: u64, b: u64) -> bool {
    let signed = ty.is_signed() && !matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs);
    let (x, y) = if signed { (alu::widen(a, ty), alu::widen(b, ty)) } else { (i128::from(a & mask(ty.bits())), i128::from(b & mask(ty.bits()))) };
    match cmp {
        Cmp::Eq | Cmp::Equ => x == y,
        Cmp::Ne | Cmp::Neu => x != y,
        Cmp::Lt | Cmp::Lo | Cmp::Ltu => x < y,
        Cmp::Le | Cmp::Ls | Cmp::Leu => x <= y,
        Cmp::Gt | Cmp::Hi | Cmp::Gtu => x > y,
        Cmp::Ge | Cmp::Hs | Cmp::Geu => x >= y,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// The comparison of `setp`/`set` on one lane.
fn compare(cmp: Cmp, ty: Ty, ftz: bool, a: u64, b: u64) -> bool {
    match ty.format() {
        Some(format) => fpu::compare(format, cmp, fpu::flush(format, ftz, a), fpu::flush(format, ftz, b)),
        None => int_compare(cmp, ty, a, b),
    }
}

fn combine(bool_op: Option<BoolOp>, r: bool, c: bool) -> bool {
    match bool_op {
        None => r,
        Some(BoolOp::And) => r && c,
        Some(BoolOp::Or) => r || c,
        Some(BoolOp::Xor) => r ^ c,
    }
}

/// `cvt` on one value.
fn convert(dty: Ty, sty: Ty, round: CvtRound, ftz: bool, sat: bool, relu: bool, a: u64) -> u64 {
    let sm = mask(sty.bits());
    let a = a & sm;
    let dm = mask(dty.bits());
    let clamp = |v: i128| -> u64 {
        let (lo, hi) = if dty.is_signed() { (-(1i128 << (dty.bits() - 1)), (1i128 << (dty.bits() - 1)) - 1) } else { (0, (1i128 << dty.bits()) - 1) };
        v.clamp(lo, hi) as u64 & dm
    };
    let mode = |r: CvtRound| match r {
        CvtRound::Float(m) | CvtRound::Integer(m) => m,
        _ => Rounding::NearestEven,
    };
    match (dty.format(), sty.format()) {
        (None, None) => {
            let v = alu::widen(a, sty);
            if sat {
                clamp(v)
            } else {
                v as u64 & dm
            }
        }
        (None, Some(sf)) => {
            let x = fpu::flush(sf, ftz, a);
            match fpu::round_to_integer(sf, x, mode(round)) {
                // NaN: "Zero if source is not .f64 and destination is not .s64, .u64.
                // Otherwise 1 << (BitWidth(dst) - 1)" (PTX ISA, cvt, integer notes).
                None if sf == FloatFormat::F64 || dty.bits() == 64 => 1u64 << (dty.bits() - 1),
                None => 0,
                Some((negative, magnitude)) => {
                    let v = if magnitude > i128::MAX as u128 { if negative { i128::MIN } else { i128::MAX } } else if negative { -(magnitude as i128) } else { magnitude as i128 };
                    clamp(v)
                }
            }
        }
        (Some(df), None) => {
            let v = alu::widen(a, sty);
            let r = fpu::from_integer(df, v < 0, v.unsigned_abs(), mode(round));
            let r = fpu::flush(df, ftz, r);
            if sat {
                fpu::saturate(df, r)
            } else {
                r
            }
        }
        (Some(df), Some(sf)) => {
            if dty == Ty::TF32 {
                return fpu::to_tf32(fpu::flush(sf, ftz, a));
            }
            let x = fpu::flush(sf, ftz, a);
            let r = match round {
                CvtRound::Integer(m) => fpu::round_to_integral(sf, x, m),
                other => fpu::convert(sf, df, x, mode(other)),
            };
            let r = fpu::flush(df, ftz, r);
            let r = if sat { fpu::saturate(df, r) } else { r };
            if relu {
                fpu::relu(df, r)
            } else {
                r
            }
        }
    }
}

/// `v` restricted to its low `bits` bits.
fn low(v: V, bits: u32) -> V {
    let m = mask(bits);
    V { v: v.v & m, u: v.u & m, o: v.o }
}

/// Undefined bits of `a & b`: a defined 0 on either side defines the result bit.
fn and_shadow(a: V, b: V) -> u64 {
    (a.u | b.u) & (a.v | a.u) & (b.v | b.u)
}

/// Undefined bits of `a | b`: a defined 1 on either side defines the result bit.
fn or_shadow(a: V, b: V) -> u64 {
    (a.u | b.u) & (!a.v | a.u) & (!b.v | b.u)
}

/// The instructions.
impl Machine<'_> {
    #[allow(clippy::too_many_lines)]
    fn execute(&mut self, inst: &Inst, thread: &mut Thread) -> Step<Flow> {
        let src = |k: usize| inst.srcs[k];
        match &inst.op {
            &Op::Int { op, ty, sat, carry_in, carry_out } => {
                let bits = ty.bits();
                let a = low(self.read(thread, src(0)), bits);
                let b = self.read(thread, src(1));
                let shift = op == IntBin::Shl || op == IntBin::Shr;
                let b = if shift { low(b, 32) } else { low(b, bits) };
                let value = if carry_in || carry_out {
                    let (r, c) = alu::add_with_carry(ty, a.v, b.v, carry_in && thread.carry, op == IntBin::Sub);
                    if carry_out {
                        thread.carry = c;
                    }
                    r
                } else if ty.lanes() == 2 {
                    let lane_ty = if ty.is_signed() { Ty::S16 } else { Ty::U16 };
                    let mut failure = None;
                    let r = lanes_of(ty, a.v, b.v, |x, y| {
                        alu::int_binary(op, lane_ty, x, y, sat).unwrap_or_else(|e| {
                            failure = Some(e);
                            0
                        })
                    });
                    if let Some(e) = failure {
                        return undefined(e);
                    }
                    r
                } else {
                    if matches!(op, IntBin::Div | IntBin::Rem) && b.u != 0 {
                        self.observe(b, "the divisor")?;
                    }
                    alu::int_binary(op, ty, a.v, b.v, sat).map_err(Fault::Undefined)?
                };
                let result = match op {
                    IntBin::And if !carry_in => V::with_shadow(value, and_shadow(a, b), &[a, b]),
                    IntBin::Or if !carry_in => V::with_shadow(value, or_shadow(a, b), &[a, b]),
                    IntBin::Xor => V::with_shadow(value, a.u | b.u, &[a, b]),
                    IntBin::Shl | IntBin::Shr if b.u == 0 => {
                        let u = alu::int_binary(op, ty, a.u, b.v, false).unwrap_or(0) & mask(bits);
                        V::with_shadow(value, u, &[a])
                    }
                    _ => V::computed(value, bits, &[a, b]),
                };
                Self::write(thread, inst.dsts[0], result);
            }
            &Op::MulWide { ty } => {
                let (a, b) = (low(self.read(thread, src(0)), ty.bits()), low(self.read(thread, src(1)), ty.bits()));
                let product = alu::full_product(ty, a.v, b.v);
                Self::write(thread, inst.dsts[0], V::computed(product as u64 & mask(2 * ty.bits()), 2 * ty.bits(), &[a, b]));
            }
            &Op::Mad { ty, hi, wide, sat, carry_in, carry_out } => {
                let bits = ty.bits();
                let (a, b) = (low(self.read(thread, src(0)), bits), low(self.read(thread, src(1)), bits));
                let product = alu::full_product(ty, a.v, b.v);
                let (term, width) = if wide {
                    (product as u64 & mask(2 * bits), 2 * bits)
                } else if hi {
                    ((product >> bits) as u64 & mask(bits), bits)
                } else {
                    (product as u64 & mask(bits), bits)
                };
                let c = low(self.read(thread, src(2)), width);
                let value = if sat && ty == Ty::S32 && hi {
                    let v = i128::from(alu::sext(term, 32)) + i128::from(alu::sext(c.v, 32));
                    v.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as u64 & mask(bits)
                } else if carry_in || carry_out {
                    let add_ty = if width == 64 { Ty::U64 } else { Ty::U32 };
                    let (r, carry) = alu::add_with_carry(add_ty, term, c.v, carry_in && thread.carry, false);
                    if carry_out {
                        thread.carry = carry;
                    }
                    r
                } else {
                    term.wrapping_add(c.v) & mask(width)
                };
                Self::write(thread, inst.dsts[0], V::computed(value, width, &[a, b, c]));
            }
            &Op::Mad24 { ty, hi, sat } => {
                let (a, b, c) = (self.read(thread, src(0)), self.read(thread, src(1)), low(self.read(thread, src(2)), 32));
                let op = if hi { IntBin::Mul24Hi } else { IntBin::Mul24Lo };
                let t = alu::int_binary(op, ty, a.v, b.v, false).map_err(Fault::Undefined)?;
                let value = if sat && ty.is_signed() {
                    (i128::from(alu::sext(t, 32)) + i128::from(alu::sext(c.v, 32))).clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as u64 & 0xFFFF_FFFF
                } else {
                    t.wrapping_add(c.v) & 0xFFFF_FFFF
                };
                Self::write(thread, inst.dsts[0], V::computed(value, 32, &[low(a, 32), low(b, 32), c]));
            }
            &Op::Sad { ty } => {
                let bits = ty.bits();
                let (a, b, c) = (low(self.read(thread, src(0)), bits), low(self.read(thread, src(1)), bits), low(self.read(thread, src(2)), bits));
                let d = (alu::widen(a.v, ty) - alu::widen(b.v, ty)).unsigned_abs() as u64;
                Self::write(thread, inst.dsts[0], V::computed(c.v.wrapping_add(d) & mask(bits), bits, &[a, b, c]));
            }
            &Op::IntUn { op, ty } => {
                let a = low(self.read(thread, src(0)), ty.bits());
                let value = alu::int_unary(op, ty, a.v);
                let result = match op {
                    IntUn::Not => V::with_shadow(value, a.u, &[a]),
                    IntUn::Brev => V::with_shadow(value, alu::int_unary(IntUn::Brev, ty, a.u), &[a]),
                    IntUn::Popc | IntUn::Clz | IntUn::Bfind | IntUn::BfindShiftAmt => V::computed(value, 32, &[a]),
                    _ => V::computed(value, ty.bits(), &[a]),
                };
                Self::write(thread, inst.dsts[0], result);
            }
            &Op::Bfe { ty } => {
                let a = low(self.read(thread, src(0)), ty.bits());
                let (p, l) = (self.read(thread, src(1)), self.read(thread, src(2)));
                let value = alu::bfe(ty, a.v, p.v, l.v);
                let result = if p.u | l.u == 0 { V::with_shadow(value, alu::bfe(ty, a.u, p.v, l.v), &[a]) } else { V::computed(value, ty.bits(), &[a, p, l]) };
                Self::write(thread, inst.dsts[0], result);
            }
            &Op::Bfi { ty } => {
                let bits = ty.bits();
                let (a, b) = (low(self.read(thread, src(0)), bits), low(self.read(thread, src(1)), bits));
                let (p, l) = (self.read(thread, src(2)), self.read(thread, src(3)));
                let value = alu::bfi(ty, a.v, b.v, p.v, l.v);
                let result = if p.u | l.u == 0 { V::with_shadow(value, alu::bfi(ty, a.u, b.u, p.v, l.v), &[a, b]) } else { V::computed(value, bits, &[a, b, p, l]) };
                Self::write(thread, inst.dsts[0], result);
            }
            &Op::Prmt { mode } => {
                let (a, b, c) = (low(self.read(thread, src(0)), 32), low(self.read(thread, src(1)), 32), self.read(thread, src(2)));
                let value = alu::prmt(mode, a.v, b.v, c.v);
                let result = if c.u == 0 { V::with_shadow(value, alu::prmt(mode, a.u, b.u, c.v), &[a, b]) } else { V::computed(value, 32, &[a, b, c]) };
                Self::write(thread, inst.dsts[0], result);
            }
            &Op::Shf { left, clamp, .. } => {
                let (a, b, c) = (low(self.read(thread, src(0)), 32), low(self.read(thread, src(1)), 32), self.read(thread, src(2)));
                let value = alu::shf(left, clamp, a.v, b.v, c.v);
                let result = if c.u == 0 { V::with_shadow(value, alu::shf(left, clamp, a.u, b.u, c.v), &[a, b]) } else { V::computed(value, 32, &[a, b, c]) };
                Self::write(thread, inst.dsts[0], result);
            }
            Op::Lop3 => {
                let (a, b, c, lut) = (low(self.read(thread, src(0)), 32), low(self.read(thread, src(1)), 32), low(self.read(thread, src(2)), 32), self.read(thread, src(3)));
                let value = alu::lop3(a.v, b.v, c.v, lut.v & 0xFF);
                Self::write(thread, inst.dsts[0], V::with_shadow(value, a.u | b.u | c.u, &[a, b, c]));
            }
            &Op::Bmsk { clamp } => {
                let (a, b) = (self.read(thread, src(0)), self.read(thread, src(1)));
                Self::write(thread, inst.dsts[0], V::computed(alu::bmsk(clamp, a.v, b.v), 32, &[low(a, 32), low(b, 32)]));
            }
            &Op::Szext { clamp, signed } => {
                let (a, b) = (low(self.read(thread, src(0)), 32), self.read(thread, src(1)));
                let value = alu::szext(clamp, signed, a.v, b.v);
                let result = if b.u == 0 { V::with_shadow(value, alu::szext(clamp, signed, a.u, b.v), &[a]) } else { V::computed(value, 32, &[a, b]) };
                Self::write(thread, inst.dsts[0], result);
            }
            &Op::Dp4a { a_signed, b_signed } => {
                let (a, b, c) = (low(self.read(thread, src(0)), 32), low(self.read(thread, src(1)), 32), low(self.read(thread, src(2)), 32));
                Self::write(thread, inst.dsts[0], V::computed(alu::dp4a(a_signed, b_signed, a.v, b.v, c.v), 32, &[a, b, c]));
            }
            &Op::Dp2a { a_signed, b_signed, hi } => {
                let (a, b, c) = (low(self.read(thread, src(0)), 32), low(self.read(thread, src(1)), 32), low(self.read(thread, src(2)), 32));
                Self::write(thread, inst.dsts[0], V::computed(alu::dp2a(a_signed, b_signed, hi, a.v, b.v, c.v), 32, &[a, b, c]));
            }
            &Op::Float { op, ty, m, nan, xorsign_abs, approx } => {
                let format = format_of(ty)?;
                let bits = ty.bits();
                let (a, b) = (low(self.read(thread, src(0)), bits), low(self.read(thread, src(1)), bits));
                let value = lanes_of(ty, a.v, b.v, |x, y| float_binary(op, format, m, nan, xorsign_abs, approx, x, y));
                Self::write(thread, inst.dsts[0], V::computed(value, bits, &[a, b]));
            }
            &Op::Fma { ty, m } => {
                let format = format_of(ty)?;
                let bits = ty.bits();
                let (a, b, c) = (low(self.read(thread, src(0)), bits), low(self.read(thread, src(1)), bits), low(self.read(thread, src(2)), bits));
                let value = lanes_of3(ty, a.v, b.v, c.v, |x, y, z| {
                    let (x, y, z) = (fpu::flush(format, m.ftz, x), fpu::flush(format, m.ftz, y), fpu::flush(format, m.ftz, z));
                    finish_float(format, m, fpu::fma(format, x, y, z, m.rounding))
                });
                Self::write(thread, inst.dsts[0], V::computed(value, bits, &[a, b, c]));
            }
            &Op::MixedFloat { op, src: sty, m } => {
                let format = format_of(sty)?;
                let (a, c) = (low(self.read(thread, src(0)), sty.bits()), low(self.read(thread, src(1)), 32));
                // The 16-bit source widens to f32 exactly; then one f32 operation.
                let wide = fpu::convert(format, FloatFormat::F32, a.v, Rounding::NearestEven);
                let value = float_binary(op, FloatFormat::F32, m, false, false, false, wide, c.v);
                Self::write(thread, inst.dsts[0], V::computed(value, 32, &[a, c]));
            }
            &Op::MixedFma { src: sty, m } => {
                let format = format_of(sty)?;
                let bits = sty.bits();
                let (a, b, c) = (low(self.read(thread, src(0)), bits), low(self.read(thread, src(1)), bits), low(self.read(thread, src(2)), 32));
                let (wa, wb) = (fpu::convert(format, FloatFormat::F32, a.v, Rounding::NearestEven), fpu::convert(format, FloatFormat::F32, b.v, Rounding::NearestEven));
                let value = finish_float(FloatFormat::F32, m, fpu::fma(FloatFormat::F32, wa, wb, c.v, m.rounding));
                Self::write(thread, inst.dsts[0], V::computed(value, 32, &[a, b, c]));
            }
            &Op::FloatUn { op, ty, m, approx } => {
                let format = format_of(ty)?;
                let a = low(self.read(thread, src(0)), ty.bits());
                let value = lanes_of(ty, a.v, 0, |x, _| float_unary(op, format, m, approx, x));
                let result = if matches!(op, FloatUn::Neg | FloatUn::Abs) && !m.ftz { V::with_shadow(value, a.u, &[a]) } else { V::computed(value, ty.bits(), &[a]) };
                Self::write(thread, inst.dsts[0], result);
            }
            &Op::Testp { class, ty } => {
                let format = format_of(ty)?;
                let a = low(self.read(thread, src(0)), ty.bits());
                Self::write(thread, inst.dsts[0], V::computed(u64::from(fpu::test_class(format, class, a.v)), 1, &[a]));
            }
            &Op::Setp { cmp, ty, bool_op, ftz } => {
                let (a, b) = (low(self.read(thread, src(0)), ty.bits()), low(self.read(thread, src(1)), ty.bits()));
                let c = if bool_op.is_some() { low(self.read(thread, src(2)), 1) } else { V::defined(0) };
                let cv = c.v & 1 == 1;
                if ty.lanes() == 2 {
                    let bits = ty.lane_bits();
                    let lane_ty = match ty.format() {
                        Some(FloatFormat::F16) => Ty::F16,
                        Some(_) => Ty::BF16,
                        None => Ty::U16,
                    };
                    let r0 = compare(cmp, lane_ty, ftz, a.v & mask(bits), b.v & mask(bits));
                    let r1 = compare(cmp, lane_ty, ftz, (a.v >> bits) & mask(bits), (b.v >> bits) & mask(bits));
                    let (lo, hi) = (low(a, bits), low(b, bits));
                    let (ahi, bhi) = (V { v: a.v >> bits, u: a.u >> bits, o: a.o }, V { v: b.v >> bits, u: b.u >> bits, o: b.o });
                    Self::write(thread, inst.dsts[0], V::computed(u64::from(combine(bool_op, r0, cv)), 1, &[lo, hi, c]));
                    if let Some(&q) = inst.dsts.get(1) {
                        Self::write(thread, q, V::computed(u64::from(combine(bool_op, r1, cv)), 1, &[ahi, bhi, c]));
                    }
                } else {
                    let r = compare(cmp, ty, ftz, a.v, b.v);
                    Self::write(thread, inst.dsts[0], V::computed(u64::from(combine(bool_op, r, cv)), 1, &[a, b, c]));
                    if let Some(&q) = inst.dsts.get(1) {
                        Self::write(thread, q, V::computed(u64::from(combine(bool_op, !r, cv)), 1, &[a, b, c]));
                    }
                }
            }
            &Op::Set { cmp, dty, ty, bool_op, ftz } => {
                let (a, b) = (low(self.read(thread, src(0)), ty.bits()), low(self.read(thread, src(1)), ty.bits()));
                let c = if bool_op.is_some() { low(self.read(thread, src(2)), 1) } else { V::defined(0) };
                let r = combine(bool_op, compare(cmp, ty, ftz, a.v, b.v), c.v & 1 == 1);
                let value = match dty.format() {
                    Some(f) if r => fpu::from_f64(f, 1.0),
                    Some(_) => 0,
                    None if r => mask(dty.bits()),
                    None => 0,
                };
                Self::write(thread, inst.dsts[0], V::computed(value, dty.bits(), &[a, b, c]));
            }
            &Op::Selp { ty } => {
                let c = self.need(thread, src(2), "the `selp` condition")? & 1 == 1;
                let chosen = if c { src(0) } else { src(1) };
                if ty == Ty::B128 {
                    let (v, u, o) = self.read128(thread, chosen);
                    Self::write128(thread, inst.dsts[0], v, u, o);
                } else {
                    Self::write(thread, inst.dsts[0], low(self.read(thread, chosen), ty.bits()));
                }
            }
            &Op::Slct { ty, cty, ftz } => {
                let c = self.need(thread, src(2), "the `slct` condition")?;
                let take_a = match cty.format() {
                    Some(f) => {
                        let c = fpu::flush(f, ftz, c & mask(cty.bits()));
                        !fpu::is_nan(f, c) && (c & (1 << (cty.bits() - 1)) == 0 || fpu::to_f64(f, c) == 0.0)
                    }
                    None => alu::widen(c, cty) >= 0,
                };
                let v = self.read(thread, if take_a { src(0) } else { src(1) });
                Self::write(thread, inst.dsts[0], low(v, ty.bits()));
            }
            &Op::Cvt { dty, sty, round, ftz, sat, relu } => {
                let a = low(self.read(thread, src(0)), sty.bits());
                let value = convert(dty, sty, round, ftz, sat, relu, a.v);
                // "The result of conversion is sign-extended to the destination register
                // width for signed integers" (PTX ISA, cvt notes), as `ld` does.
                let extend = |v: u64| if dty.is_signed() { alu::sext(v, dty.bits()) as u64 } else { v };
                let value = extend(value);
                let result = if dty.format().is_none() && sty.format().is_none() && !sat {
                    // Integer to integer moves bits: truncation or (sign) extension.
                    let u = if sty.is_signed() { alu::sext(a.u, sty.bits()) as u64 } else { a.u };
                    V::with_shadow(value, extend(u & mask(dty.bits())), &[a])
                } else {
                    V::computed(value, if dty.is_signed() { 64 } else { dty.bits() }, &[a])
                };
                Self::write(thread, inst.dsts[0], result);
            }
            &Op::CvtPack { dty, round, relu } => {
                let (a, b) = (low(self.read(thread, src(0)), 32), low(self.read(thread, src(1)), 32));
                let lane = if dty == Ty::F16x2 { Ty::F16 } else { Ty::BF16 };
                let hi = convert(lane, Ty::F32, round, false, false, relu, a.v);
                let lo = convert(lane, Ty::F32, round, false, false, relu, b.v);
                let u = (if a.u != 0 { 0xFFFF_0000 } else { 0 }) | (if b.u != 0 { 0xFFFF } else { 0 });
                Self::write(thread, inst.dsts[0], V::with_shadow((hi << 16) | lo, u, &[a, b]));
            }
            &Op::Cvta { space, to, ty } => {
                let a = self.need(thread, src(0), "the converted address")?;
                let r = match (space, to) {
                    (Space::Global, _) => a,
                    (_, false) => match mem::to_generic(space, a & mask(ty.bits())) {
                        Some(g) => g,
                        None => return undefined(format!("cvta: {a:#x} is not a .{} address", space.name())),
                    },
                    (_, true) => match mem::from_generic(a) {
                        Some((s, specific)) if s == space => specific,
                        _ => return undefined(format!("cvta.to.{}: {a:#x} is not a generic address of the .{} space", space.name(), space.name())),
                    },
                };
                if ty.bits() == 32 && r > 0xFFFF_FFFF {
                    return undefined(format!("cvta: the address {r:#x} does not fit .u32"));
                }
                Self::write(thread, inst.dsts[0], V::defined(r));
            }
            &Op::Isspacep { space } => {
                let a = self.need(thread, src(0), "the tested address")?;
                let r = matches!(mem::from_generic(a), Some((s, _)) if s == space);
                Self::write(thread, inst.dsts[0], V::defined(u64::from(r)));
            }
            &Op::Mov { ty } => {
                if ty == Ty::B128 {
                    let (v, u, o) = self.read128(thread, src(0));
                    Self::write128(thread, inst.dsts[0], v, u, o);
                } else {
                    if let Src::Addr(sym, offset, generic) = src(0) {
                        let address = self.symbol_address(thread, sym, offset, generic)?;
                        Self::write(thread, inst.dsts[0], V::defined(address & mask(ty.bits())));
                    } else {
                        Self::write(thread, inst.dsts[0], low(self.read(thread, src(0)), ty.bits()));
                    }
                }
            }
            &Op::Pack { ty, lanes } => {
                let part = ty.bits() / lanes;
                let (mut value, mut undef, mut o) = (0u128, 0u128, ORIGIN_NONE);
                for k in 0..lanes as usize {
                    let v = low(self.read(thread, src(k)), part);
                    value |= u128::from(v.v) << (k as u32 * part);
                    undef |= u128::from(v.u) << (k as u32 * part);
                    if v.u != 0 && o == ORIGIN_NONE {
                        o = v.o;
                    }
                }
                if ty == Ty::B128 {
                    Self::write128(thread, inst.dsts[0], value, undef, o);
                } else {
                    Self::write(thread, inst.dsts[0], V { v: value as u64, u: undef as u64, o });
                }
            }
            &Op::Unpack { ty, lanes } => {
                let part = ty.bits() / lanes;
                let (value, undef, o) = if ty == Ty::B128 {
                    self.read128(thread, src(0))
                } else {
                    let v = low(self.read(thread, src(0)), ty.bits());
                    (u128::from(v.v), u128::from(v.u), v.o)
                };
                for (k, &d) in inst.dsts.iter().enumerate() {
                    let shift = k as u32 * part;
                    let u = (undef >> shift) as u64 & mask(part);
                    Self::write(thread, d, V { v: (value >> shift) as u64 & mask(part), u, o: if u == 0 { ORIGIN_NONE } else { o } });
                }
            }
            &Op::Ld { space, ty, vec, .. } => {
                let address = self.effective_address(thread, inst.addr.expect("an address"), space)?;
                let size = ty.bytes() * vec;
                let location = self.locate(thread, space, address, size, size, false)?;
                let (mut bytes, mut shadow) = ([0u8; 128], [0u8; 128]);
                self.load(thread, location, &mut bytes[..size as usize], &mut shadow[..size as usize]);
                let element = ty.bytes() as usize;
                for (k, &d) in inst.dsts.iter().enumerate() {
                    let range = k * element..(k + 1) * element;
                    if ty == Ty::B128 {
                        let v = u128::from_le_bytes(bytes[range.clone()].try_into().expect("16 bytes"));
                        let u = u128::from_le_bytes(shadow[range].try_into().expect("16 bytes"));
                        Self::write128(thread, d, v, u, ORIGIN_MEMORY);
                    } else {
                        let (mut raw, mut raw_u) = ([0u8; 8], [0u8; 8]);
                        raw[..element].copy_from_slice(&bytes[range.clone()]);
                        raw_u[..element].copy_from_slice(&shadow[range]);
                        let (v, u) = (u64::from_le_bytes(raw), u64::from_le_bytes(raw_u));
                        Self::write(thread, d, V { v: extend_loaded(ty, v), u: extend_loaded(ty, u), o: if u == 0 { ORIGIN_NONE } else { ORIGIN_MEMORY } });
                    }
                }
            }
            &Op::St { space, ty, vec, .. } => {
                let address = self.effective_address(thread, inst.addr.expect("an address"), space)?;
                let size = ty.bytes() * vec;
                let location = self.locate(thread, space, address, size, size, true)?;
                let (mut bytes, mut shadow) = ([0u8; 128], [0u8; 128]);
                let element = ty.bytes() as usize;
                let mut o = ORIGIN_NONE;
                for k in 0..vec as usize {
                    let range = k * element..(k + 1) * element;
                    if ty == Ty::B128 {
                        let (v, u, origin) = self.read128(thread, src(k));
                        bytes[range.clone()].copy_from_slice(&v.to_le_bytes());
                        shadow[range].copy_from_slice(&u.to_le_bytes());
                        if u != 0 && o == ORIGIN_NONE {
                            o = origin;
                        }
                    } else {
                        let v = self.read(thread, src(k));
                        bytes[range.clone()].copy_from_slice(&v.v.to_le_bytes()[..element]);
                        shadow[range].copy_from_slice(&v.u.to_le_bytes()[..element]);
                        if v.u & mask(ty.bits()) != 0 && o == ORIGIN_NONE {
                            o = v.o;
                        }
                    }
                }
                self.store(thread, location, &bytes[..size as usize], &shadow[..size as usize], o)?;
            }
            &Op::Atom { space, op, ty, vec, .. } => self.atomic(inst, thread, space, op, ty, vec)?,
            Op::Fence | Op::Nop => {}
            &Op::Bar { kind, has_count } => {
                let id = self.need(thread, src(0), "the barrier number")? as u32;
                if id >= 16 {
                    return undefined(format!("barrier {id} does not exist (0..15)"));
                }
                let count = if has_count { Some(self.need(thread, src(1), "the barrier thread count")? as u32) } else { None };
                if let Some(c) = count {
                    if c == 0 || c % WARP_SIZE as u32 != 0 {
                        return undefined(format!("a barrier thread count is a positive multiple of the warp size, found {c}"));
                    }
                }
                if kind == BarKind::Arrive {
                    if count.is_none() {
                        return undefined("`bar.arrive` needs a thread count");
                    }
                    self.arrivals[id as usize] += 1;
                    return Ok(Flow::Next);
                }
                let predicate = if matches!(kind, BarKind::RedPopc | BarKind::RedAnd | BarKind::RedOr) { self.need(thread, *inst.srcs.last().expect("predicate"), "the barrier reduction predicate")? & 1 } else { 0 };
                return Ok(Flow::Wait(self.wait(thread, WaitKind::Bar { id, count, kind }, true, 0, [predicate, 0, 0], (0, ORIGIN_NONE))));
            }
            Op::BarWarpSync => {
                let mask = self.need(thread, src(0), "the member mask")? as u32;
                return Ok(Flow::Wait(self.wait(thread, WaitKind::WarpSync, true, mask, [0; 3], (0, ORIGIN_NONE))));
            }
            &Op::Shfl { mode, sync } => {
                let a = low(self.read(thread, src(0)), 32);
                let b = self.need(thread, src(1), "the shuffle lane")?;
                let c = self.need(thread, src(2), "the shuffle clamp")?;
                let mask = if sync { self.need(thread, src(3), "the member mask")? as u32 } else { 0 };
                return Ok(Flow::Wait(self.wait(thread, WaitKind::Shfl(mode), sync, mask, [a.v, b, c], (a.u, a.o))));
            }
            &Op::Vote { mode, sync } => {
                let p = self.need(thread, src(0), "the vote predicate")? & 1;
                let mask = if sync { self.need(thread, src(1), "the member mask")? as u32 } else { 0 };
                return Ok(Flow::Wait(self.wait(thread, WaitKind::Vote(mode), sync, mask, [p, 0, 0], (0, ORIGIN_NONE))));
            }
            Op::Activemask => return Ok(Flow::Wait(self.wait(thread, WaitKind::Activemask, false, 0, [0; 3], (0, ORIGIN_NONE)))),
            &Op::Match { all, ty } => {
                let a = self.need(thread, src(0), "the matched value")? & mask(ty.bits());
                let mask = self.need(thread, src(1), "the member mask")? as u32;
                return Ok(Flow::Wait(self.wait(thread, WaitKind::Match { all }, true, mask, [a, 0, 0], (0, ORIGIN_NONE))));
            }
            &Op::Redux { op, ty } => {
                let a = self.need(thread, src(0), "the reduced value")? & mask(ty.bits());
                let mask = self.need(thread, src(1), "the member mask")? as u32;
                return Ok(Flow::Wait(self.wait(thread, WaitKind::Redux { op, ty }, true, mask, [a, 0, 0], (0, ORIGIN_NONE))));
            }
            &Op::Bra { target } => return Ok(Flow::Jump(target)),
            Op::Call(call) => {
                let callee = match (call.callee, call.target) {
                    (Some(f), _) => f,
                    (None, Some(target)) => {
                        let v = self.need(thread, target, "the call target")?;
                        if mem::tag(v) != mem::FUNCTION_TAG || (v & 0xFFFF_FFFF) as usize >= self.program.functions.len() {
                            return undefined(format!("indirect call through {v:#x}, which is not a function address"));
                        }
                        (v & 0xFFFF_FFFF) as u32
                    }
                    (None, None) => return Err(Fault::Unsupported("a call without a target".into())),
                };
                let f = &self.program.functions[callee as usize];
                if f.declared_only {
                    return Err(Fault::Unsupported(format!("`{}` is declared but not defined in this file", f.name)));
                }
                if f.is_entry {
                    return undefined(format!("`{}` is a kernel; kernels cannot be called", f.name));
                }
                return Ok(Flow::Call(callee));
            }
            Op::Ret => return Ok(Flow::Return),
            Op::Exit => return Ok(Flow::Exit),
            Op::Trap => return Err(Fault::Trap),
        }
        Ok(Flow::Next)
    }

    fn wait(&self, thread: &Thread, kind: WaitKind, sync: bool, mask: u32, operands: [u64; 3], value_shadow: (u64, u32)) -> Wait {
        let frame = thread.frames.last().expect("frame");
        Wait { kind, sync, mask, operands, value_shadow, function: frame.function, pc: frame.pc }
    }

    fn atomic(&mut self, inst: &Inst, thread: &mut Thread, space: Space, op: AtomOp, ty: Ty, vec: u32) -> Step<()> {
        let address = self.effective_address(thread, inst.addr.expect("an address"), space)?;
        let element = ty.bytes();
        let size = element * vec;
        let location = self.locate(thread, space, address, size, size, true)?;
        let in_global = matches!(location, Location::Global { .. });
        let (mut bytes, mut shadow) = ([0u8; 32], [0u8; 32]);
        self.load(thread, location, &mut bytes[..size as usize], &mut shadow[..size as usize]);
        let operands_per_lane = if op == AtomOp::Cas { 2 } else { 1 };
        for lane in 0..vec as usize {
            let chunk = lane * element as usize..(lane + 1) * element as usize;
            if ty == Ty::B128 {
                let old = u128::from_le_bytes(bytes[chunk.clone()].try_into().expect("16 bytes"));
                let (b, bu, bo) = self.read128(thread, inst.srcs[0]);
                if bu != 0 {
                    return undefined(format!("the atomic operand depends on {}", self.origin_name(bo)));
                }
                let new = match op {
                    AtomOp::Exch => b,
                    AtomOp::Cas => {
                        let (c, cu, co) = self.read128(thread, inst.srcs[1]);
                        if cu != 0 {
                            return undefined(format!("the atomic operand depends on {}", self.origin_name(co)));
                        }
                        if old == b {
                            c
                        } else {
                            old
                        }
                    }
                    _ => return Err(Fault::Unsupported(format!("atom.{op:?}.b128"))),
                };
                bytes[chunk].copy_from_slice(&new.to_le_bytes());
                if let Some(&d) = inst.dsts.first() {
                    Self::write128(thread, d, old, 0, ORIGIN_NONE);
                }
                continue;
            }
            let mut raw = [0u8; 8];
            raw[..element as usize].copy_from_slice(&bytes[chunk.clone()]);
            let old = u64::from_le_bytes(raw);
            let m = mask(ty.bits());
            let b = self.need(thread, inst.srcs[lane * operands_per_lane], "the atomic operand")? & m;
            let new = match (op, ty.format()) {
                (AtomOp::Add, Some(f)) => {
                    // atom.add.f32 on global memory flushes subnormals (PTX ISA, atom).
                    let ftz = f == FloatFormat::F32 && in_global;
                    lanes_of(ty, old, b, |x, y| fpu::flush(f, ftz, fpu::add(f, fpu::flush(f, ftz, x), fpu::flush(f, ftz, y), Rounding::NearestEven)))
                }
                (AtomOp::Min | AtomOp::Max, Some(f)) => lanes_of(ty, old, b, |x, y| fpu::min_max(f, x, y, op == AtomOp::Max, false)),
                (AtomOp::Add, None) => old.wrapping_add(b) & m,
                (AtomOp::Min | AtomOp::Max, None) => {
                    let (x, y) = (alu::widen(old, ty), alu::widen(b, ty));
                    if (op == AtomOp::Min) == (x <= y) {
                        old
                    } else {
                        b
                    }
                }
                (AtomOp::Inc, _) => {
                    if old >= b {
                        0
                    } else {
                        old + 1
                    }
                }
                (AtomOp::Dec, _) => {
                    if old == 0 || old > b {
                        b
                    } else {
                        old - 1
                    }
                }
                (AtomOp::And, _) => old & b,
                (AtomOp::Or, _) => old | b,
                (AtomOp::Xor, _) => old ^ b,
                (AtomOp::Exch, _) => b,
                (AtomOp::Cas, _) => {
                    let c = self.need(thread, inst.srcs[lane * 2 + 1], "the atomic operand")? & m;
                    if old == b {
                        c
                    } else {
                        old
                    }
                }
            };
            bytes[chunk].copy_from_slice(&new.to_le_bytes()[..element as usize]);
            if let Some(&d) = inst.dsts.get(lane) {
                Self::write(thread, d, V::defined(extend_loaded(ty, old)));
            }
        }
        let zeros = [0u8; 32];
        self.store(thread, location, &bytes[..size as usize], &zeros[..size as usize], ORIGIN_NONE)
    }
}

/// Synchronisation.
impl Machine<'_> {
    /// Completes every warp operation whose members all wait for it; returns whether
    /// any did.
    fn resolve_warps(&mut self, threads: &mut [Thread]) -> Result<bool, Stop> {
        let mut progress = false;
        for warp_start in (0..threads.len()).step_by(WARP_SIZE) {
            let warp_end = (warp_start + WARP_SIZE).min(threads.len());
            for lane in 0..warp_end - warp_start {
                let State::Waiting(wait) = threads[warp_start + lane].state else { continue };
                if matches!(wait.kind, WaitKind::Bar { .. }) {
                    continue;
                }
                let members: u32 = if wait.sync {
                    if wait.mask & (1 << lane) == 0 {
                        let fault = Fault::Undefined(format!("lane {lane} executes a warp operation with member mask {:#010x}, which does not include it", wait.mask));
                        return Err(self.stop(&threads[warp_start + lane], fault));
                    }
                    let mut ready = true;
                    for member in 0..WARP_SIZE {
                        if wait.mask & (1 << member) == 0 {
                            continue;
                        }
                        if warp_start + member >= warp_end {
                            let fault = Fault::Undefined(format!("member mask {:#010x} names lane {member}, which does not exist in this block", wait.mask));
                            return Err(self.stop(&threads[warp_start + lane], fault));
                        }
                        match threads[warp_start + member].state {
                            State::Exited => {
                                let fault = Fault::Undefined(format!("member mask {:#010x} names lane {member}, which has exited", wait.mask));
                                return Err(self.stop(&threads[warp_start + lane], fault));
                            }
                            State::Waiting(o) if same_operation(&o.kind, &wait.kind) && o.sync && o.mask == wait.mask => {}
                            _ => ready = false,
                        }
                    }
                    if !ready {
                        continue;
                    }
                    wait.mask
                } else {
                    // The lanes of the warp waiting at this very instruction.
                    (0..warp_end - warp_start)
                        .filter(|&m| matches!(threads[warp_start + m].state, State::Waiting(o) if !o.sync && o.function == wait.function && o.pc == wait.pc))
                        .fold(0u32, |acc, m| acc | (1 << m))
                };
                self.complete_warp_operation(threads, warp_start, wait, members)?;
                progress = true;
            }
        }
        Ok(progress)
    }

    fn complete_warp_operation(&mut self, threads: &mut [Thread], warp_start: usize, wait: Wait, members: u32) -> Result<(), Stop> {
        let lanes: Vec<usize> = (0..WARP_SIZE).filter(|m| members & (1 << m) != 0).collect();
        let operand = |threads: &[Thread], lane: usize| match threads[warp_start + lane].state {
            State::Waiting(w) => w.operands,
            _ => [0; 3],
        };
        let mut results: Vec<(usize, V, Option<bool>)> = Vec::with_capacity(lanes.len());
        for &lane in &lanes {
            let [a, b, c] = operand(threads, lane);
            let result = match wait.kind {
                WaitKind::Shfl(mode) => {
                    let (source, valid) = shuffle_source(mode, lane as u32, b as u32, c as u32);
                    if members & (1 << source) == 0 {
                        let fault = Fault::Undefined(format!("shuffle reads lane {source}, which is not among the participating lanes {members:#010x}"));
                        return Err(self.stop(&threads[warp_start + lane], fault));
                    }
                    let (u, o) = match threads[warp_start + source as usize].state {
                        State::Waiting(w) => w.value_shadow,
                        _ => (0, ORIGIN_NONE),
                    };
                    (V { v: operand(threads, source as usize)[0], u, o }, Some(valid))
                }
                WaitKind::Vote(mode) => {
                    let predicates: Vec<bool> = lanes.iter().map(|&l| operand(threads, l)[0] == 1).collect();
                    let v = match mode {
                        VoteMode::All => u64::from(predicates.iter().all(|&p| p)),
                        VoteMode::Any => u64::from(predicates.iter().any(|&p| p)),
                        VoteMode::Uni => u64::from(predicates.iter().all(|&p| p) || !predicates.iter().any(|&p| p)),
                        VoteMode::Ballot => lanes.iter().zip(&predicates).filter(|(_, p)| **p).fold(0, |acc, (&l, _)| acc | (1 << l)),
                    };
                    (V::defined(v), None)
                }
                WaitKind::Activemask => (V::defined(u64::from(members)), None),
                WaitKind::WarpSync => (V::defined(0), None),
                WaitKind::Match { all } => {
                    let same: u64 = lanes.iter().filter(|&&l| operand(threads, l)[0] == a).fold(0, |acc, &l| acc | (1 << l));
                    if all {
                        let everyone = same == u64::from(members);
                        (V::defined(if everyone { u64::from(members) } else { 0 }), Some(everyone))
                    } else {
                        (V::defined(same), None)
                    }
                }
                WaitKind::Redux { op, ty } => {
                    let values: Vec<u64> = lanes.iter().map(|&l| operand(threads, l)[0]).collect();
                    let v = match op {
                        ReduxOp::Add => values.iter().fold(0u64, |acc, &v| acc.wrapping_add(v)) & mask(ty.bits()),
                        ReduxOp::And => values.iter().fold(u64::MAX, |acc, &v| acc & v) & mask(ty.bits()),
                        ReduxOp::Or => values.iter().fold(0, |acc, &v| acc | v),
                        ReduxOp::Xor => values.iter().fold(0, |acc, &v| acc ^ v),
                        ReduxOp::Min | ReduxOp::Max => {
                            let pick = values.iter().copied().reduce(|x, y| {
                                let (p, q) = (alu::widen(x, ty), alu::widen(y, ty));
                                if (op == ReduxOp::Min) == (p <= q) { x } else { y }
                            });
                            pick.unwrap_or(0)
                        }
                    };
                    (V::defined(v), None)
                }
                WaitKind::Bar { .. } => (V::defined(0), None),
            };
            results.push((lane, result.0, result.1));
        }
        for (lane, value, predicate) in results {
            let t = &mut threads[warp_start + lane];
            self.resume(t, value, predicate);
        }
        Ok(())
    }

    /// Releases every barrier whose participants have all arrived.
    fn resolve_barriers(&mut self, threads: &mut [Thread]) -> Result<bool, Stop> {
        let mut progress = false;
        for id in 0..16u32 {
            let waiting: Vec<usize> = threads
                .iter()
                .enumerate()
                .filter(|(_, t)| matches!(t.state, State::Waiting(w) if matches!(w.kind, WaitKind::Bar { id: i, .. } if i == id)))
                .map(|(k, _)| k)
                .collect();
            let Some(&first) = waiting.first() else { continue };
            let State::Waiting(wait) = threads[first].state else { continue };
            let WaitKind::Bar { count, kind, .. } = wait.kind else { continue };
            let needed = match count {
                Some(c) => c as usize,
                None => {
                    if let Some(exited) = threads.iter().find(|t| matches!(t.state, State::Exited)) {
                        let fault = Fault::Undefined(format!("barrier {id} is reached by some threads of the block while {} has exited", short_thread(exited)));
                        return Err(self.stop(&threads[first], fault));
                    }
                    threads.len()
                }
            };
            let arrived = waiting.len() + if count.is_some() { self.arrivals[id as usize] as usize } else { 0 };
            if arrived < needed {
                continue;
            }
            let predicates: Vec<bool> = waiting
                .iter()
                .map(|&k| match threads[k].state {
                    State::Waiting(w) => w.operands[0] == 1,
                    _ => false,
                })
                .collect();
            let result = match kind {
                BarKind::RedPopc => predicates.iter().filter(|&&p| p).count() as u64,
                BarKind::RedAnd => u64::from(predicates.iter().all(|&p| p)),
                BarKind::RedOr => u64::from(predicates.iter().any(|&p| p)),
                _ => 0,
            };
            self.arrivals[id as usize] = 0;
            for k in waiting {
                self.resume(&mut threads[k], V::defined(result), None);
            }
            progress = true;
        }
        Ok(progress)
    }

    /// Writes a synchronisation result to the waiting instruction's destinations and
    /// moves on.
    fn resume(&self, thread: &mut Thread, value: V, predicate: Option<bool>) {
        let Some(frame) = thread.frames.last() else { return };
        let inst = &self.program.functions[frame.function as usize].insts[frame.pc as usize];
        if let Some(&d) = inst.dsts.first() {
            Self::write(thread, d, value);
        }
        if let (Some(&p), Some(v)) = (inst.dsts.get(1), predicate) {
            Self::write(thread, p, V::defined(u64::from(v)));
        }
        thread.frames.last_mut().expect("frame").pc += 1;
        thread.state = State::Running;
    }
}

fn same_operation(a: &WaitKind, b: &WaitKind) -> bool {
    a == b
}

/// The lane a shuffle reads from and whether it was in range (else the lane's own
/// value), per the PTX ISA: `c` packs the clamp value (bits 0-4) and the segment mask
/// (bits 8-12).
fn shuffle_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let b = b & 0x1F;
    let clamp = c & 0x1F;
    let segment_mask = (c >> 8) & 0x1F;
    let max_lane = (lane & segment_mask) | (clamp & !segment_mask);
    let min_lane = lane & segment_mask;
    let (j, valid) = match mode {
        ShflMode::Up => {
            let j = lane as i32 - b as i32;
            (j, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = (lane + b) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Bfly => {
            let j = (lane ^ b) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Idx => {
            let j = (min_lane | (b & !segment_mask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if valid {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_sources_follow_the_ptx_pseudocode() {
        // CUDA's __shfl_down_sync(m, v, 1) is shfl.sync.down.b32 with c = 0x1f.
        assert_eq!(shuffle_source(ShflMode::Down, 5, 1, 0x1F), (6, true));
        assert_eq!(shuffle_source(ShflMode::Down, 31, 1, 0x1F), (31, false));
        // __shfl_up_sync: c = 0.
        assert_eq!(shuffle_source(ShflMode::Up, 0, 1, 0), (0, false));
        assert_eq!(shuffle_source(ShflMode::Up, 3, 2, 0), (1, true));
        assert_eq!(shuffle_source(ShflMode::Bfly, 6, 4, 0x1F), (2, true));
        // Width 8 segments: c = ((32 - 8) << 8) | 0x1f.
        assert_eq!(shuffle_source(ShflMode::Idx, 13, 3, (24 << 8) | 0x1F), (11, true));
    }

    #[test]
    fn conversions() {
        let f32_bits = |x: f32| u64::from(x.to_bits());
        // Float to integer saturates; NaN gives 0.
        assert_eq!(convert(Ty::S32, Ty::F32, CvtRound::Integer(Rounding::TowardZero), false, false, false, f32_bits(3e10)), 0x7FFF_FFFF);
        assert_eq!(convert(Ty::U8, Ty::F32, CvtRound::Integer(Rounding::NearestEven), false, false, false, f32_bits(-5.0)), 0);
        assert_eq!(convert(Ty::S32, Ty::F32, CvtRound::Integer(Rounding::TowardZero), false, false, false, f32_bits(f32::NAN)), 0);
        assert_eq!(convert(Ty::S64, Ty::F64, CvtRound::Integer(Rounding::Down), false, false, false, (-2.5f64).to_bits()), (-3i64) as u64);
        // Integer to integer: truncation, or saturation with .sat.
        assert_eq!(convert(Ty::U8, Ty::S32, CvtRound::None, false, false, false, 0x1FF), 0xFF);
        assert_eq!(convert(Ty::U8, Ty::S32, CvtRound::None, false, true, false, 0x1FF), 0xFF);
        assert_eq!(convert(Ty::U8, Ty::S32, CvtRound::None, false, true, false, (-3i32) as u32 as u64), 0);
        assert_eq!(convert(Ty::S64, Ty::S32, CvtRound::None, false, false, false, 0xFFFF_FFFF), u64::MAX);
        // Integer to float rounds in the given direction: 2^24 + 1.
        assert_eq!(convert(Ty::F32, Ty::U32, CvtRound::Float(Rounding::Up), false, false, false, (1 << 24) + 1), f32_bits(16_777_218.0));
        assert_eq!(convert(Ty::F32, Ty::U32, CvtRound::Float(Rounding::NearestEven), false, false, false, (1 << 24) + 1), f32_bits(16_777_216.0));
        // f32 -> f16 rounding, and .sat clamping to [0, 1].
        assert_eq!(convert(Ty::F16, Ty::F32, CvtRound::Float(Rounding::NearestEven), false, false, false, f32_bits(1.0)), 0x3C00);
        assert_eq!(convert(Ty::F32, Ty::F32, CvtRound::None, false, true, false, f32_bits(7.5)), f32_bits(1.0));
        assert_eq!(convert(Ty::F32, Ty::F32, CvtRound::Integer(Rounding::NearestEven), false, false, false, f32_bits(2.5)), f32_bits(2.0));
        // .ftz flushes a subnormal f32 input.
        assert_eq!(convert(Ty::F64, Ty::F32, CvtRound::None, true, false, false, 1), 0);
        assert_ne!(convert(Ty::F64, Ty::F32, CvtRound::None, false, false, false, 1), 0);
    }
}
