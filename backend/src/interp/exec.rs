//! Execution: threads, the block scheduler and the meaning of every resolved
//! instruction.
//!
//! Where it sits: [`super::Program::run`] calls [`run`] with the output of
//! [`super::compile`]; values live in per-frame register files of `u128` lanes, memory
//! in [`super::memory`].
//!
//! Scheduling: blocks run one after another. Within a block, each runnable thread runs
//! (in linear thread order, x fastest) until it exits or reaches a synchronisation
//! point; when no thread can run, the synchronisation points are resolved:
//!
//! - Warp operations (`shfl.sync`, `vote.sync`, `bar.warp.sync`): a warp is 32
//!   consecutive threads of the block. The lanes named by the member mask must all
//!   wait at the same instruction (same function and position) with the same mask; then
//!   they all complete together. Undefined: the executing lane is not in its mask, the
//!   mask names a lane that does not exist or has exited, a shuffle reads from a lane
//!   outside the mask.
//! - `barrier0` (and `.popc/.and/.or`): when every thread of the block waits at the
//!   same barrier instruction, all continue. Undefined: some threads of the block have
//!   exited while others wait at a barrier, or threads wait at different barriers
//!   (or at a barrier and at a warp operation that can never complete: a deadlock).
//!
//! Why this order: it makes results a function of the synchronisation structure only,
//! not of how many instructions each thread executes, so a legalized kernel (same
//! synchronisation, different instructions) interleaves exactly as the original.

use super::compile::{
    AtomicOp, BarrierReduction, CompiledFunction, CompiledModule, Cond, Edge, Extension, FailKind, FloatBinary, FloatUnary, Geometry, Inst,
    IntBinary, IntUnary, Intrinsic, Kind, LaneMask, LibCall, Op, Overflow, ShuffleMode, Ty, VoteMode, EQUAL, GREATER, LESS,
};
use super::float::{self, FloatFormat};
use super::int::{self, mask, signed};
use super::memory::{self, Memory, Region};
use super::{ArgValue, InterpError, Launch, RunResult};
use crate::mir::{AddressSpace, Module};

const WARP_SIZE: usize = 32;
const MAX_CALL_DEPTH: usize = 1000;
const MAX_THREADS_PER_BLOCK: u64 = 1024;

/// Why an instruction could not complete; located by the caller.
enum Fault {
    Undefined(String),
    Unsupported(String),
    Malformed(String),
}

type Step<T> = Result<T, Fault>;

fn undefined<T>(what: impl Into<String>) -> Step<T> {
    Err(Fault::Undefined(what.into()))
}

struct Frame {
    function: u32,
    pc: u32,
    regs: Vec<u128>,
    params: Vec<u128>,
    /// Base addresses of this call's frame objects (`FRAME_INDEX`).
    locals: Vec<u64>,
}

/// A synchronisation point a thread waits at.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum SyncKind {
    Barrier(BarrierReduction),
    Shuffle(ShuffleMode),
    Vote(VoteMode),
    WarpSync,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Sync {
    function: u32,
    pc: u32,
    kind: SyncKind,
    /// The member mask of a warp operation.
    mask: u32,
    /// Value operands: the barrier's predicate, the shuffle's value, lane and clamp, the
    /// vote's predicate.
    operands: [u128; 3],
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Running,
    Waiting(Sync),
    Exited,
}

struct Thread {
    frames: Vec<Frame>,
    state: State,
    tid: [u32; 3],
    /// Index in the block, x fastest.
    linear: usize,
}

enum Flow<'p> {
    Next,
    Jump(&'p Edge),
    Call(u32),
    Return,
    Wait(Sync),
}

struct Machine<'p> {
    program: &'p CompiledModule,
    memory: Memory,
    fuel: u64,
    steps: u64,
    launch: Launch,
    ctaid: [u32; 3],
    scratch: Vec<u128>,
}

pub fn run(program: &CompiledModule, module: &Module, entry: &str, launch: &Launch, args: &[ArgValue], fuel: u64) -> Result<RunResult, InterpError> {
    let Some(entry_index) = program.functions.iter().position(|f| f.name == entry) else {
        let names: Vec<&str> = program.functions.iter().filter(|f| f.is_kernel).map(|f| f.name.as_str()).collect();
        return Err(InterpError::BadArguments(format!("no function @{entry} in the module (kernels: {})", names.join(", "))));
    };
    let kernel = &program.functions[entry_index];
    if !kernel.is_kernel {
        return Err(InterpError::BadArguments(format!("@{entry} is a device function; run a kernel")));
    }
    check_launch(kernel, launch)?;
    let mut machine = Machine { program, memory: Memory::default(), fuel, steps: 0, launch: *launch, ctaid: [0; 3], scratch: Vec::new() };
    for g in &program.globals {
        let space = memory::space_number(g.space);
        let region = Region { space, bytes: g.image.clone(), read_only: g.space == AddressSpace::Const, label: format!("@{}", g.name), written: None };
        if machine.memory.add(region).is_none() {
            return Err(InterpError::BadArguments(format!("global @{} is too large", g.name)));
        }
    }
    let (params, buffer_regions) = machine.kernel_params(kernel, module, args)?;
    for z in 0..launch.grid[2] {
        for y in 0..launch.grid[1] {
            for x in 0..launch.grid[0] {
                machine.ctaid = [x, y, z];
                for g in &program.globals {
                    if g.space == AddressSpace::Shared {
                        // Fresh (zeroed) shared memory for each block.
                        machine.memory.regions[g.region as usize].bytes.copy_from_slice(&g.image);
                    }
                }
                machine.run_block(entry_index as u32, &params)?;
            }
        }
    }
    let buffers = buffer_regions.iter().map(|&r| std::mem::take(&mut machine.memory.regions[r].bytes)).collect();
    let globals = program
        .globals
        .iter()
        .filter(|g| g.space == AddressSpace::Global)
        .map(|g| (g.name.clone(), machine.memory.regions[g.region as usize].bytes.clone()))
        .collect();
    Ok(RunResult { buffers, globals, steps: machine.steps })
}

/// Executes one resolved instruction without side effects on `regs` (its results'
/// and operands' lanes at the instruction's slots), for constant folding
/// ([`super::fold`]). The instruction must be one that touches no memory, thread state
/// or control flow; undefined behaviour is an error with its description.
pub(super) fn evaluate_pure(inst: &Inst, regs: Vec<u128>) -> Result<Vec<u128>, String> {
    let program = CompiledModule { functions: Vec::new(), globals: Vec::new() };
    let mut machine = Machine { program: &program, memory: Memory::default(), fuel: 1, steps: 0, launch: Launch::default(), ctaid: [0; 3], scratch: Vec::new() };
    let mut frame = Frame { function: 0, pc: 0, regs, params: Vec::new(), locals: Vec::new() };
    match machine.execute(inst, &mut frame, [0; 3], 0) {
        Ok(Flow::Next) => Ok(frame.regs),
        Ok(_) => Err("not a straight-line instruction".into()),
        Err(Fault::Undefined(what) | Fault::Unsupported(what) | Fault::Malformed(what)) => Err(what),
    }
}

fn check_launch(kernel: &CompiledFunction, launch: &Launch) -> Result<(), InterpError> {
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(InterpError::BadArguments(format!("grid {:?} and block {:?} must have no zero dimension", launch.grid, launch.block)));
    }
    let threads: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
    if threads > MAX_THREADS_PER_BLOCK {
        return Err(InterpError::BadArguments(format!("{threads} threads per block; at most {MAX_THREADS_PER_BLOCK}")));
    }
    if let Some(max) = kernel.max_threads {
        if threads > max {
            return Err(InterpError::BadArguments(format!("{threads} threads per block, but @{} has maxntid {max}", kernel.name)));
        }
    }
    Ok(())
}

impl<'p> Machine<'p> {
    /// The kernel's parameter array, and the region index of each buffer argument.
    fn kernel_params(&mut self, kernel: &CompiledFunction, module: &Module, args: &[ArgValue]) -> Result<(Vec<u128>, Vec<usize>), InterpError> {
        if args.len() != kernel.params.len() {
            return Err(InterpError::BadArguments(format!("@{} takes {} arguments, {} given", kernel.name, kernel.params.len(), args.len())));
        }
        let names: Vec<String> = module.functions.iter().find(|f| f.name == kernel.name).map(|f| f.params.iter().map(|p| p.name.clone()).collect()).unwrap_or_default();
        let mut params = vec![0u128; kernel.param_slots as usize];
        let mut buffers = Vec::new();
        for (k, (arg, ty)) in args.iter().zip(&kernel.params).enumerate() {
            let name = names.get(k).map_or("?", |s| s.as_str());
            let Some(ty) = ty else { return Err(InterpError::BadArguments(format!("parameter {k} (`{name}`) has a type the interpreter does not know"))) };
            let offset = kernel.param_offsets[k] as usize;
            match arg {
                ArgValue::Scalar(bits) => {
                    if ty.total_bits() > 128 {
                        return Err(InterpError::BadArguments(format!("parameter {k} (`{name}`) is wider than 128 bits; scalar arguments hold at most 128")));
                    }
                    for lane in 0..ty.lanes as usize {
                        params[offset + lane] = (bits >> (lane as u32 * ty.bits)) & mask(ty.bits);
                    }
                }
                ArgValue::Buffer(bytes) => {
                    let (space, read_only) = match ty.kind {
                        Kind::Pointer(0 | 1) => (memory::GLOBAL, false),
                        Kind::Pointer(4) => (memory::CONST, true),
                        _ => return Err(InterpError::BadArguments(format!("parameter {k} (`{name}`) is not a p0, p1 or p4 pointer; it cannot take a buffer"))),
                    };
                    let region = Region { space, bytes: bytes.clone(), read_only, label: format!("buffer argument {k} (`{name}`)"), written: None };
                    buffers.push(self.memory.regions.len());
                    let Some(base) = self.memory.add(region) else { return Err(InterpError::BadArguments(format!("buffer argument {k} is too large"))) };
                    params[offset] = u128::from(base);
                }
            }
        }
        Ok((params, buffers))
    }

    fn run_block(&mut self, entry: u32, params: &[u128]) -> Result<(), InterpError> {
        let [bx, by, bz] = self.launch.block;
        let kernel = &self.program.functions[entry as usize];
        let mut threads = Vec::with_capacity((bx * by * bz) as usize);
        for z in 0..bz {
            for y in 0..by {
                for x in 0..bx {
                    let locals = self.frame_objects(entry).map_err(|what| InterpError::BadArguments(what))?;
                    let frame = Frame { function: entry, pc: 0, regs: vec![0; kernel.slots as usize], params: params.to_vec(), locals };
                    let linear = threads.len();
                    threads.push(Thread { frames: vec![frame], state: State::Running, tid: [x, y, z], linear });
                }
            }
        }
        loop {
            for t in threads.iter_mut() {
                if t.state == State::Running {
                    self.run_thread(t)?;
                }
            }
            if threads.iter().all(|t| t.state == State::Exited) {
                return Ok(());
            }
            if !self.resolve_warps(&mut threads)? {
                self.resolve_barrier(&mut threads)?;
            }
        }
    }

    fn thread_name(&self, thread: &Thread) -> String {
        let [x, y, z] = thread.tid;
        let [a, b, c] = self.ctaid;
        format!("thread ({x}, {y}, {z}) of block ({a}, {b}, {c})")
    }

    /// The error for `fault` at the thread's current instruction.
    fn locate(&self, thread: &Thread, fault: Fault) -> InterpError {
        let (function, block, inst) = self.position(thread);
        match fault {
            Fault::Undefined(what) => InterpError::Undefined { function, block, inst, what, thread: self.thread_name(thread) },
            Fault::Unsupported(what) => InterpError::Unsupported { function, block, inst, what },
            Fault::Malformed(what) => InterpError::Malformed { function, block, inst, what },
        }
    }

    fn position(&self, thread: &Thread) -> (String, String, usize) {
        let Some(frame) = thread.frames.last() else { return (String::new(), String::new(), 0) };
        let function = &self.program.functions[frame.function as usize];
        let inst = &function.insts[frame.pc as usize];
        let block = function.block_labels.get(inst.block as usize).cloned().unwrap_or_default();
        (function.name.clone(), block, inst.index as usize)
    }

    /// Runs `thread` until it exits or waits at a synchronisation point.
    fn run_thread(&mut self, thread: &mut Thread) -> Result<(), InterpError> {
        let program = self.program;
        loop {
            let depth = thread.frames.len();
            let Some(frame) = thread.frames.last_mut() else {
                thread.state = State::Exited;
                return Ok(());
            };
            let function = &program.functions[frame.function as usize];
            let inst = &function.insts[frame.pc as usize];
            if self.steps >= self.fuel {
                let (function, block, inst) = self.position(thread);
                return Err(InterpError::OutOfFuel { steps: self.steps, function, block, inst });
            }
            self.steps += 1;
            let flow = match self.execute(inst, frame, thread.tid, thread.linear) {
                Ok(flow) => flow,
                Err(fault) => return Err(self.locate(thread, fault)),
            };
            match flow {
                Flow::Next => frame.pc += 1,
                Flow::Jump(edge) => {
                    if let Some(what) = &edge.missing {
                        return Err(self.locate(thread, Fault::Undefined(what.to_string())));
                    }
                    self.take_edge(edge, frame);
                }
                Flow::Call(callee) => {
                    if depth >= MAX_CALL_DEPTH {
                        return Err(self.locate(thread, Fault::Undefined(format!("call depth exceeds {MAX_CALL_DEPTH} (unbounded recursion)"))));
                    }
                    let target = &program.functions[callee as usize];
                    let mut params = Vec::with_capacity(target.param_slots as usize);
                    for (&slot, ty) in inst.args.iter().zip(inst.arg_tys.iter()) {
                        params.extend_from_slice(&frame.regs[slot as usize..(slot + ty.lanes) as usize]);
                    }
                    if params.len() != target.param_slots as usize {
                        let what = format!("the call passes {} register lanes to @{}, which takes {}", params.len(), target.name, target.param_slots);
                        return Err(self.locate(thread, Fault::Malformed(what)));
                    }
                    let locals = match self.frame_objects(callee) {
                        Ok(locals) => locals,
                        Err(what) => return Err(self.locate(thread, Fault::Unsupported(what))),
                    };
                    thread.frames.push(Frame { function: callee, pc: 0, regs: vec![0; target.slots as usize], params, locals });
                }
                Flow::Return => {
                    let Some(finished) = thread.frames.pop() else { continue };
                    self.release_frame_objects(&finished);
                    let Some(caller) = thread.frames.last_mut() else {
                        thread.state = State::Exited;
                        return Ok(());
                    };
                    let call = &program.functions[caller.function as usize].insts[caller.pc as usize];
                    for ((&dst, ty), &src) in call.defs.iter().zip(call.def_tys.iter()).zip(inst.args.iter()) {
                        let lanes = ty.lanes as usize;
                        caller.regs[dst as usize..dst as usize + lanes].copy_from_slice(&finished.regs[src as usize..src as usize + lanes]);
                    }
                    caller.pc += 1;
                }
                Flow::Wait(sync) => {
                    thread.state = State::Waiting(sync);
                    return Ok(());
                }
            }
        }
    }

    /// A region per frame object of `function`, for one call.
    fn frame_objects(&mut self, function: u32) -> Result<Vec<u64>, String> {
        let f = &self.program.functions[function as usize];
        let mut locals = Vec::with_capacity(f.frame.len());
        for (k, &(size, ref name)) in f.frame.iter().enumerate() {
            let label = match name {
                Some(n) => format!("frame object {k} (`{n}`) of @{}", f.name),
                None => format!("frame object {k} of @{}", f.name),
            };
            let region = Region { space: memory::LOCAL, bytes: vec![0; size as usize], read_only: false, label, written: Some(vec![false; size as usize]) };
            locals.push(self.memory.add(region).ok_or("too many frame objects allocated (calls times objects exceed the interpreter's 2^24 regions)")?);
        }
        Ok(locals)
    }

    /// A returned call's frame objects become empty: a pointer kept to one no longer
    /// addresses anything.
    fn release_frame_objects(&mut self, frame: &Frame) {
        for &base in &frame.locals {
            let region = &mut self.memory.regions[((base >> 32) & 0xFF_FFFF) as usize];
            region.bytes = Vec::new();
            region.written = Some(Vec::new());
            region.label.push_str(" (its call has returned)");
        }
    }

    fn take_edge(&mut self, edge: &Edge, frame: &mut Frame) {
        match &edge.copies[..] {
            [] => {}
            [(dst, src, 1)] => frame.regs[*dst as usize] = frame.regs[*src as usize],
            copies => {
                // PHIs read their inputs before any of them is written.
                self.scratch.clear();
                for &(_, src, lanes) in copies {
                    self.scratch.extend_from_slice(&frame.regs[src as usize..(src + lanes) as usize]);
                }
                let mut k = 0;
                for &(dst, _, lanes) in copies {
                    frame.regs[dst as usize..(dst + lanes) as usize].copy_from_slice(&self.scratch[k..k + lanes as usize]);
                    k += lanes as usize;
                }
            }
        }
        frame.pc = edge.target_pc;
    }

    /// Completes every warp operation whose members are all waiting for it; returns
    /// whether any did.
    fn resolve_warps(&mut self, threads: &mut [Thread]) -> Result<bool, InterpError> {
        let mut progress = false;
        for warp_start in (0..threads.len()).step_by(WARP_SIZE) {
            let warp_end = (warp_start + WARP_SIZE).min(threads.len());
            for lane in 0..warp_end - warp_start {
                let State::Waiting(sync) = threads[warp_start + lane].state else { continue };
                if matches!(sync.kind, SyncKind::Barrier(_)) {
                    continue;
                }
                if sync.mask & (1 << lane) == 0 {
                    let fault = Fault::Undefined(format!("lane {lane} executes a warp operation with member mask {:#010x}, which does not include it", sync.mask));
                    return Err(self.locate(&threads[warp_start + lane], fault));
                }
                let mut ready = true;
                for member in 0..WARP_SIZE {
                    if sync.mask & (1 << member) == 0 {
                        continue;
                    }
                    let Some(other) = threads.get(warp_start + member).filter(|_| warp_start + member < warp_end) else {
                        let fault = Fault::Undefined(format!("member mask {:#010x} names lane {member}, which does not exist in this block", sync.mask));
                        return Err(self.locate(&threads[warp_start + lane], fault));
                    };
                    match other.state {
                        State::Exited => {
                            let fault = Fault::Undefined(format!("member mask {:#010x} names lane {member}, which has exited", sync.mask));
                            return Err(self.locate(&threads[warp_start + lane], fault));
                        }
                        State::Waiting(o) if o.function == sync.function && o.pc == sync.pc && o.mask == sync.mask => {}
                        _ => ready = false,
                    }
                }
                if ready {
                    self.complete_warp_operation(threads, warp_start, sync)?;
                    progress = true;
                }
            }
        }
        Ok(progress)
    }

    fn complete_warp_operation(&mut self, threads: &mut [Thread], warp_start: usize, sync: Sync) -> Result<(), InterpError> {
        let members: Vec<usize> = (0..WARP_SIZE).filter(|m| sync.mask & (1 << m) != 0).collect();
        let operands: Vec<[u128; 3]> = members.iter().map(|&m| match threads[warp_start + m].state {
            State::Waiting(s) => s.operands,
            _ => [0; 3],
        }).collect();
        let operand_of = |lane: usize| members.iter().position(|&m| m == lane).map(|i| operands[i]);
        let mut results = Vec::with_capacity(members.len());
        for (i, &lane) in members.iter().enumerate() {
            let result = match sync.kind {
                SyncKind::Shuffle(mode) => {
                    let [_, b, c] = operands[i];
                    let source = shuffle_source(mode, lane as u32, b as u32, c as u32) as usize;
                    match operand_of(source) {
                        Some(o) => o[0],
                        None => {
                            let fault = Fault::Undefined(format!("shuffle reads lane {source}, which is not in the member mask {:#010x}", sync.mask));
                            return Err(self.locate(&threads[warp_start + lane], fault));
                        }
                    }
                }
                SyncKind::Vote(mode) => {
                    let predicates = operands.iter().map(|o| o[0] & 1 == 1);
                    match mode {
                        VoteMode::All => u128::from(predicates.clone().all(|p| p)),
                        VoteMode::Any => u128::from(predicates.clone().any(|p| p)),
                        VoteMode::Uniform => u128::from(predicates.clone().all(|p| p) || !predicates.clone().any(|p| p)),
                        VoteMode::Ballot => members.iter().zip(predicates).filter(|(_, p)| *p).map(|(&m, _)| 1u128 << m).sum(),
                    }
                }
                SyncKind::WarpSync | SyncKind::Barrier(_) => 0,
            };
            results.push(result);
        }
        for (&lane, result) in members.iter().zip(results) {
            self.resume(&mut threads[warp_start + lane], result);
        }
        Ok(())
    }

    /// Releases the block's barrier when every live thread waits at it.
    fn resolve_barrier(&mut self, threads: &mut [Thread]) -> Result<(), InterpError> {
        let first = threads.iter().position(|t| t.state != State::Exited);
        let Some(first) = first else { return Ok(()) };
        let State::Waiting(sync) = threads[first].state else { return Ok(()) };
        if let Some(exited) = threads.iter().find(|t| t.state == State::Exited) {
            let fault = Fault::Undefined(format!(
                "barrier reached by some threads of the block while {} (and possibly others) exited",
                self.thread_name(exited).split(" of ").next().unwrap_or("a thread")
            ));
            return Err(self.locate(&threads[first], fault));
        }
        if let Some(other) = threads.iter().find(|t| match t.state {
            State::Waiting(o) => o.function != sync.function || o.pc != sync.pc || !matches!(o.kind, SyncKind::Barrier(_)),
            _ => true,
        }) {
            let (function, block, inst) = self.position(other);
            let fault = Fault::Undefined(format!(
                "deadlock: threads of the block wait at different synchronisation points ({} waits at @{function}, {block}, instruction {})",
                self.thread_name(other).split(" of ").next().unwrap_or("a thread"),
                inst + 1
            ));
            return Err(self.locate(&threads[first], fault));
        }
        let predicates: Vec<bool> = threads.iter().map(|t| match t.state {
            State::Waiting(s) => s.operands[0] != 0,
            _ => false,
        }).collect();
        let result = match sync.kind {
            SyncKind::Barrier(BarrierReduction::Popc) => predicates.iter().filter(|&&p| p).count() as u128,
            SyncKind::Barrier(BarrierReduction::And) => u128::from(predicates.iter().all(|&p| p)),
            SyncKind::Barrier(BarrierReduction::Or) => u128::from(predicates.iter().any(|&p| p)),
            _ => 0,
        };
        for t in threads.iter_mut() {
            self.resume(t, result);
        }
        Ok(())
    }

    /// Writes a synchronisation result to the waiting instruction's result and moves on.
    fn resume(&self, thread: &mut Thread, result: u128) {
        let Some(frame) = thread.frames.last_mut() else { return };
        let inst = &self.program.functions[frame.function as usize].insts[frame.pc as usize];
        if let (Some(&dst), Some(ty)) = (inst.defs.first(), inst.def_tys.first()) {
            frame.regs[dst as usize] = result & mask(ty.bits);
        }
        frame.pc += 1;
        thread.state = State::Running;
    }

    #[allow(clippy::too_many_lines)]
    fn execute(&mut self, inst: &'p Inst, frame: &mut Frame, tid: [u32; 3], linear: usize) -> Step<Flow<'p>> {
        let here = (frame.function, frame.pc);
        let regs = &mut frame.regs;
        let arg = |k: usize| inst.args[k] as usize;
        match &inst.op {
            Op::Constant(bits) => {
                let d = inst.defs[0] as usize;
                regs[d..d + inst.ty().lanes as usize].fill(*bits);
            }
            Op::Undef => {
                let d = inst.defs[0] as usize;
                regs[d..d + inst.ty().lanes as usize].fill(0);
            }
            Op::Copy => {
                let (d, s) = (inst.defs[0] as usize, arg(0));
                regs.copy_within(s..s + inst.ty().lanes as usize, d);
            }
            Op::Arg(index) => {
                let function = &self.program.functions[frame.function as usize];
                let offset = function.param_offsets[*index as usize] as usize;
                let lanes = inst.ty().lanes as usize;
                let d = inst.defs[0] as usize;
                let Some(source) = frame.params.get(offset..offset + lanes) else {
                    return Err(Fault::Malformed(format!("ARG {index}: the caller passed {} register lanes, too few for this parameter", frame.params.len())));
                };
                regs[d..d + lanes].copy_from_slice(source);
            }
            Op::ArgSext(index, bits) => {
                let function = &self.program.functions[frame.function as usize];
                let offset = function.param_offsets[*index as usize] as usize;
                let ty = inst.ty();
                let Some(&source) = frame.params.get(offset) else {
                    return Err(Fault::Malformed(format!("ARG {index}: the caller passed {} register lanes, too few for this parameter", frame.params.len())));
                };
                regs[inst.defs[0] as usize] = int::sign_extend(source, *bits, ty.bits) & mask(ty.bits);
            }
            Op::ArgAt { index, offset, whole, read, sext } => {
                let function = &self.program.functions[frame.function as usize];
                let start = function.param_offsets[*index as usize] as usize;
                // The parameter's in-memory image, little-endian lane after lane.
                let lane_bytes = whole.bits.div_ceil(8).max(1) as usize;
                let mut image = Vec::with_capacity(lane_bytes * whole.lanes as usize);
                let Some(lanes) = frame.params.get(start..start + whole.lanes as usize) else {
                    return Err(Fault::Malformed(format!("ARG {index}: the caller passed {} register lanes, too few for this parameter", frame.params.len())));
                };
                for lane in lanes {
                    image.extend_from_slice(&lane.to_le_bytes()[..lane_bytes]);
                }
                let read_bytes = read.bits.div_ceil(8).max(1) as usize;
                let ty = inst.ty();
                let d = inst.defs[0] as usize;
                for l in 0..read.lanes as usize {
                    let at = *offset as usize + l * read_bytes;
                    let mut raw = [0u8; 16];
                    raw[..read_bytes].copy_from_slice(&image[at..at + read_bytes]);
                    let value = u128::from_le_bytes(raw) & mask(read.bits);
                    regs[d + l] = if *sext { int::sign_extend(value, read.bits, ty.bits) & mask(ty.bits) } else { value };
                }
            }
            Op::GlobalAddr(address) => regs[inst.defs[0] as usize] = u128::from(*address),
            Op::FrameIndex(k) => regs[inst.defs[0] as usize] = u128::from(frame.locals[*k as usize]),
            Op::Binary(op) => {
                let ty = inst.ty();
                let (x, y, d) = (arg(0), arg(1), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    regs[d + l] = int_binary(*op, regs[x + l], regs[y + l], ty.bits)?;
                }
            }
            Op::Unary(op) => {
                let ty = inst.ty();
                let (x, d) = (arg(0), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    regs[d + l] = int_unary(*op, regs[x + l], ty.bits);
                }
            }
            Op::SignExtendInReg(from) => {
                let ty = inst.ty();
                let (x, d) = (arg(0), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    regs[d + l] = int::sign_extend(regs[x + l], *from, ty.bits);
                }
            }
            Op::MulLoHi { signed } => {
                let ty = inst.ty();
                let (x, y, low, high) = (arg(0), arg(1), inst.defs[0] as usize, inst.defs[1] as usize);
                for l in 0..ty.lanes as usize {
                    let (lo, hi) = int::multiply_full(regs[x + l], regs[y + l], ty.bits, *signed);
                    regs[low + l] = lo;
                    regs[high + l] = hi;
                }
            }
            Op::Overflow(op) => {
                let ty = inst.ty();
                let (x, y, d, carry) = (arg(0), arg(1), inst.defs[0] as usize, inst.defs[1] as usize);
                for l in 0..ty.lanes as usize {
                    let carry_in = if inst.args.len() > 2 { regs[arg(2) + l] & 1 } else { 0 };
                    let (value, out) = overflow(*op, regs[x + l], regs[y + l], carry_in, ty.bits);
                    regs[d + l] = value;
                    regs[carry + l] = u128::from(out);
                }
            }
            Op::ShiftParts(kind) => {
                let bits = inst.ty().bits;
                let amount = regs[arg(2)];
                if amount >= u128::from(2 * bits) {
                    return undefined(format!("shift amount {amount} is not below {} (twice the width of the parts)", 2 * bits));
                }
                let (low, high) = int::shift_parts(regs[arg(0)], regs[arg(1)], bits, amount as u32, *kind);
                regs[inst.defs[0] as usize] = low;
                regs[inst.defs[1] as usize] = high;
            }
            Op::BuildPair => {
                let half = inst.arg_tys[0].bits;
                regs[inst.defs[0] as usize] = regs[arg(0)] | (regs[arg(1)] << half);
            }
            Op::ExtractElement(index) => {
                let half = inst.ty().bits;
                regs[inst.defs[0] as usize] = (regs[arg(0)] >> (index * half)) & mask(half);
            }
            Op::FloatBinary(op) => {
                let ty = inst.ty();
                let format = float_format(ty)?;
                let (x, y, d) = (arg(0), arg(1), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    regs[d + l] = float_binary(*op, format, regs[x + l], regs[y + l], inst.ftz);
                }
            }
            Op::FloatUnary(op) => {
                let ty = inst.ty();
                let format = float_format(ty)?;
                let (x, d) = (arg(0), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    regs[d + l] = float_unary(*op, format, regs[x + l], inst.ftz);
                }
            }
            Op::Fma { fused } => {
                let ty = inst.ty();
                let format = float_format(ty)?;
                let (x, y, z, d) = (arg(0), arg(1), arg(2), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    regs[d + l] = fma(format, regs[x + l], regs[y + l], regs[z + l], *fused, inst.ftz);
                }
            }
            Op::CopySign => {
                let ty = inst.ty();
                let (magnitude_format, sign_format) = (float_format(ty)?, float_format(inst.arg_tys[1])?);
                let (x, y, d) = (arg(0), arg(1), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    let magnitude = float::absolute(magnitude_format, regs[x + l]);
                    regs[d + l] = if float::is_negative(sign_format, regs[y + l]) { float::negate(magnitude_format, magnitude) } else { magnitude };
                }
            }
            Op::SinCos => {
                let ty = inst.ty();
                let format = float_format(ty)?;
                let (x, sin, cos) = (arg(0), inst.defs[0] as usize, inst.defs[1] as usize);
                for l in 0..ty.lanes as usize {
                    let value = regs[x + l];
                    regs[sin + l] = float_unary(FloatUnary::Sin, format, value, inst.ftz);
                    regs[cos + l] = float_unary(FloatUnary::Cos, format, value, inst.ftz);
                }
            }
            Op::SetCC(cond) => {
                let compared = inst.arg_tys[0];
                let (x, y, d) = (arg(0), arg(1), inst.defs[0] as usize);
                for l in 0..compared.lanes as usize {
                    regs[d + l] = u128::from(compare(*cond, compared, regs[x + l], regs[y + l])?);
                }
            }
            Op::Select => {
                let ty = inst.ty();
                let (c, t, f, d) = (arg(0), arg(1), arg(2), inst.defs[0] as usize);
                let per_lane = inst.arg_tys[0].lanes > 1;
                for l in 0..ty.lanes as usize {
                    let condition = regs[c + if per_lane { l } else { 0 }] & 1 == 1;
                    regs[d + l] = if condition { regs[t + l] } else { regs[f + l] };
                }
            }
            Op::SelectCC(cond) => {
                let ty = inst.ty();
                let compared = inst.arg_tys[0];
                let (x, y, t, f, d) = (arg(0), arg(1), arg(2), arg(3), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    let k = if compared.lanes > 1 { l } else { 0 };
                    let condition = compare(*cond, compared, regs[x + k], regs[y + k])?;
                    regs[d + l] = if condition { regs[t + l] } else { regs[f + l] };
                }
            }
            Op::SignExtend | Op::ZeroExtend | Op::Truncate => {
                let (ty, from) = (inst.ty(), inst.arg_tys[0]);
                let (x, d) = (arg(0), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    regs[d + l] = match inst.op {
                        Op::SignExtend => int::sign_extend(regs[x + l], from.bits, ty.bits),
                        _ => regs[x + l] & mask(ty.bits),
                    };
                }
            }
            Op::FpConvert(mode) => {
                let (to, from) = (float_format(inst.ty())?, float_format(inst.arg_tys[0])?);
                let (x, d) = (arg(0), inst.defs[0] as usize);
                for l in 0..inst.ty().lanes as usize {
                    let mut value = regs[x + l];
                    if inst.ftz && from == FloatFormat::F32 {
                        value = float::flush_subnormal(from, value);
                    }
                    let mut result = float::convert(from, to, value, *mode);
                    if inst.ftz && to == FloatFormat::F32 {
                        result = float::flush_subnormal(to, result);
                    }
                    regs[d + l] = result;
                }
            }
            Op::FpToInt { signed, saturate } => {
                let (ty, from) = (inst.ty(), float_format(inst.arg_tys[0])?);
                let (x, d) = (arg(0), inst.defs[0] as usize);
                for l in 0..ty.lanes as usize {
                    let mut value = regs[x + l];
                    if inst.ftz && from == FloatFormat::F32 {
                        value = float::flush_subnormal(from, value);
                    }
                    regs[d + l] = float_to_int(from, value, ty.bits, *signed, *saturate)?;
                }
            }
            Op::IntToFp { signed, mode } => {
                let (to, from) = (float_format(inst.ty())?, inst.arg_tys[0]);
                let (x, d) = (arg(0), inst.defs[0] as usize);
                for l in 0..from.lanes as usize {
                    let value = regs[x + l];
                    let (negative, magnitude) = if *signed {
                        let v = int::signed(value, from.bits);
                        (v < 0, v.unsigned_abs())
                    } else {
                        (false, value)
                    };
                    regs[d + l] = float::encode(to, negative, magnitude, 0, false, *mode);
                }
            }
            Op::Bitcast => {
                let (from, to) = (inst.arg_tys[0], inst.ty());
                let (x, d) = (arg(0), inst.defs[0] as usize);
                let packed = pack(&regs[x..x + from.lanes as usize], from.bits);
                for l in 0..to.lanes as usize {
                    regs[d + l] = unpack(packed, l as u32 * to.bits, to.bits);
                }
            }
            Op::AddrSpaceCast => {
                let (from, to) = (inst.arg_tys[0].space().unwrap_or(0), inst.ty().space().unwrap_or(0));
                let value = regs[arg(0)];
                let address_space = memory::space_of(value as u64);
                if value != 0 && from != to && to != 0 && (from != 0 || address_space != to) {
                    return undefined(format!(
                        "ADDRSPACECAST to p{to} of address {value:#x}, which is a {} address (from p{from})",
                        memory::space_name(address_space)
                    ));
                }
                regs[inst.defs[0] as usize] = value;
            }
            Op::PtrAdd => {
                let offset = int::sign_extend(regs[arg(1)], inst.arg_tys[1].bits, 64);
                regs[inst.defs[0] as usize] = regs[arg(0)].wrapping_add(offset) & mask(64);
            }
            Op::Load(access) => {
                let pointer = regs[arg(0)] as u64;
                let space = inst.arg_tys[0].space().unwrap_or(0);
                let (region, offset) = self.memory.resolve(pointer, access.size, access.align, space, false).map_err(Fault::Undefined)?;
                self.memory.check_written(region, offset, access.size as usize).map_err(Fault::Undefined)?;
                let ty = inst.ty();
                let d = inst.defs[0] as usize;
                let lanes = &mut regs[d..d + ty.lanes as usize];
                memory::decode_lanes(self.memory.bytes(region, offset, access.size as usize), access.memory, lanes);
                if access.extension == Extension::Sign {
                    for lane in lanes.iter_mut() {
                        *lane = int::sign_extend(*lane, access.memory.bits, ty.bits);
                    }
                }
            }
            Op::Store(access) => {
                let pointer = regs[arg(1)] as u64;
                let space = inst.arg_tys[1].space().unwrap_or(0);
                let (region, offset) = self.memory.resolve(pointer, access.size, access.align, space, true).map_err(Fault::Undefined)?;
                let x = arg(0);
                let lanes = &regs[x..x + inst.arg_tys[0].lanes as usize];
                memory::encode_lanes(lanes, access.memory, self.memory.bytes_mut(region, offset, access.size as usize));
            }
            Op::LoadVector(access, count) => {
                let pointer = regs[arg(0)] as u64;
                let space = inst.arg_tys[0].space().unwrap_or(0);
                let (region, offset) = self.memory.resolve(pointer, access.size, access.align, space, false).map_err(Fault::Undefined)?;
                self.memory.check_written(region, offset, access.size as usize).map_err(Fault::Undefined)?;
                let element = access.size / u64::from(*count);
                for i in 0..*count as usize {
                    let ty = inst.def_tys[i];
                    let d = inst.defs[i] as usize;
                    let bytes = self.memory.bytes(region, offset + i * element as usize, element as usize);
                    memory::decode_lanes(bytes, access.memory, &mut regs[d..d + ty.lanes as usize]);
                }
            }
            Op::StoreVector(access, count) => {
                let n = *count as usize;
                let pointer = regs[arg(n)] as u64;
                let space = inst.arg_tys[n].space().unwrap_or(0);
                let (region, offset) = self.memory.resolve(pointer, access.size, access.align, space, true).map_err(Fault::Undefined)?;
                let element = access.size / u64::from(*count);
                for i in 0..n {
                    let x = arg(i);
                    let lanes = regs[x..x + inst.arg_tys[i].lanes as usize].to_vec();
                    memory::encode_lanes(&lanes, access.memory, self.memory.bytes_mut(region, offset + i * element as usize, element as usize));
                }
            }
            Op::Atomic(op, access) => {
                let pointer = regs[arg(0)] as u64;
                let space = inst.arg_tys[0].space().unwrap_or(0);
                let (region, offset) = self.memory.resolve(pointer, access.size, access.align, space, true).map_err(Fault::Undefined)?;
                self.memory.check_written(region, offset, access.size as usize).map_err(Fault::Undefined)?;
                let ty = inst.ty();
                let lanes = ty.lanes as usize;
                let mut old = [0u128; 16];
                memory::decode_lanes(self.memory.bytes(region, offset, access.size as usize), access.memory, &mut old[..lanes]);
                let (value, d) = (arg(1), inst.defs[0] as usize);
                let swap_whole = *op == AtomicOp::CompareSwap && old[..lanes] == regs[value..value + lanes];
                let mut new = [0u128; 16];
                for l in 0..lanes {
                    let (old, value) = (old[l], regs[value + l]);
                    new[l] = match op {
                        AtomicOp::Add => old.wrapping_add(value) & mask(ty.bits),
                        AtomicOp::Sub => old.wrapping_sub(value) & mask(ty.bits),
                        AtomicOp::And => old & value,
                        AtomicOp::Or => old | value,
                        AtomicOp::Xor => old ^ value,
                        AtomicOp::Min => if signed(value, ty.bits) < signed(old, ty.bits) { value } else { old },
                        AtomicOp::Max => if signed(value, ty.bits) > signed(old, ty.bits) { value } else { old },
                        AtomicOp::UnsignedMin => old.min(value),
                        AtomicOp::UnsignedMax => old.max(value),
                        AtomicOp::FloatAdd => float_binary(FloatBinary::Add, float_format(ty)?, old, value, false),
                        AtomicOp::Swap => value,
                        AtomicOp::CompareSwap => if swap_whole { regs[arg(2) + l] } else { old },
                    };
                }
                memory::encode_lanes(&new[..lanes], access.memory, self.memory.bytes_mut(region, offset, access.size as usize));
                regs[d..d + lanes].copy_from_slice(&old[..lanes]);
            }
            Op::Fence => {}
            Op::BuildVector => {
                let ty = inst.ty();
                let d = inst.defs[0] as usize;
                self.scratch.clear();
                self.scratch.extend(inst.args.iter().map(|&s| regs[s as usize] & mask(ty.bits)));
                regs[d..d + ty.lanes as usize].copy_from_slice(&self.scratch);
            }
            Op::ExtractVectorElt => {
                let vector = inst.arg_tys[0];
                let index = regs[arg(1)];
                if index >= u128::from(vector.lanes) {
                    return undefined(format!("EXTRACT_VECTOR_ELT index {index} is out of range for {} lanes", vector.lanes));
                }
                regs[inst.defs[0] as usize] = regs[arg(0) + index as usize] & mask(vector.bits);
            }
            Op::InsertVectorElt => {
                let ty = inst.ty();
                let index = regs[arg(2)];
                if index >= u128::from(ty.lanes) {
                    return undefined(format!("INSERT_VECTOR_ELT index {index} is out of range for {} lanes", ty.lanes));
                }
                let element = regs[arg(1)] & mask(ty.bits);
                let d = inst.defs[0] as usize;
                regs.copy_within(arg(0)..arg(0) + ty.lanes as usize, d);
                regs[d + index as usize] = element;
            }
            Op::ScalarToVector => {
                let ty = inst.ty();
                let element = regs[arg(0)] & mask(ty.bits);
                let d = inst.defs[0] as usize;
                regs[d..d + ty.lanes as usize].fill(0);
                regs[d] = element;
            }
            Op::ConcatVectors => {
                self.scratch.clear();
                for (&s, ty) in inst.args.iter().zip(inst.arg_tys.iter()) {
                    self.scratch.extend_from_slice(&regs[s as usize..(s + ty.lanes) as usize]);
                }
                let d = inst.defs[0] as usize;
                regs[d..d + self.scratch.len()].copy_from_slice(&self.scratch);
            }
            Op::ExtractSubvector => {
                let (ty, source) = (inst.ty(), inst.arg_tys[0]);
                let index = regs[arg(1)];
                if !index.is_multiple_of(u128::from(ty.lanes)) || index + u128::from(ty.lanes) > u128::from(source.lanes) {
                    return undefined(format!("EXTRACT_SUBVECTOR of {} lanes at index {index} from {} lanes", ty.lanes, source.lanes));
                }
                let from = arg(0) + index as usize;
                regs.copy_within(from..from + ty.lanes as usize, inst.defs[0] as usize);
            }
            Op::InsertSubvector => {
                let (ty, sub) = (inst.ty(), inst.arg_tys[1]);
                let index = regs[arg(2)];
                if !index.is_multiple_of(u128::from(sub.lanes)) || index + u128::from(sub.lanes) > u128::from(ty.lanes) {
                    return undefined(format!("INSERT_SUBVECTOR of {} lanes at index {index} into {} lanes", sub.lanes, ty.lanes));
                }
                self.scratch.clear();
                self.scratch.extend_from_slice(&regs[arg(0)..arg(0) + ty.lanes as usize]);
                self.scratch[index as usize..index as usize + sub.lanes as usize].copy_from_slice(&regs[arg(1)..arg(1) + sub.lanes as usize]);
                let d = inst.defs[0] as usize;
                regs[d..d + ty.lanes as usize].copy_from_slice(&self.scratch);
            }
            Op::Prmt(selector) => {
                let ty = inst.ty();
                let (lanes, lane_bits) = (ty.lanes as usize, ty.bits);
                let word = |base: usize| (0..lanes).fold(0u64, |w, l| w | (((regs[base + l] & mask(lane_bits)) as u64) << (l as u32 * lane_bits)));
                let source = word(arg(0)) | (word(arg(1)) << 32);
                let mut result = 0u64;
                for i in 0..4 {
                    let nibble = (selector >> (4 * i)) & 0xf;
                    let byte = (source >> (8 * (nibble & 7))) & 0xff;
                    let byte = if nibble & 8 != 0 { if byte & 0x80 != 0 { 0xff } else { 0 } } else { byte };
                    result |= byte << (8 * i);
                }
                let d = inst.defs[0] as usize;
                for l in 0..lanes {
                    regs[d + l] = u128::from(result >> (l as u32 * lane_bits)) & mask(lane_bits);
                }
            }
            Op::Shuffle(selectors) => {
                let n = inst.arg_tys[0].lanes as usize;
                self.scratch.clear();
                self.scratch.extend(selectors.iter().map(|&m| match m {
                    -1 => 0,
                    m if (m as usize) < n => regs[arg(0) + m as usize],
                    m => regs[arg(1) + m as usize - n],
                }));
                let d = inst.defs[0] as usize;
                regs[d..d + selectors.len()].copy_from_slice(&self.scratch);
            }
            Op::Phi => return undefined("a PHI of the entry block runs on function entry, where it has no incoming value"),
            Op::Br(edge) => return Ok(Flow::Jump(edge)),
            Op::BrCond(edges) => return Ok(Flow::Jump(if regs[arg(0)] & 1 == 1 { &edges[0] } else { &edges[1] })),
            Op::BrCC(cond, edges) => {
                let taken = compare(*cond, inst.arg_tys[0], regs[arg(0)], regs[arg(1)])?;
                return Ok(Flow::Jump(if taken { &edges[0] } else { &edges[1] }));
            }
            Op::Ret => return Ok(Flow::Return),
            Op::Trap => return undefined("TRAP: the kernel aborts"),
            Op::Unreachable => return undefined("UNREACHABLE reached"),
            Op::Call(callee) => return Ok(Flow::Call(*callee)),
            Op::LibCall(call) => {
                let d = inst.defs[0] as usize;
                regs[d] = match *call {
                    LibCall::Unary(op, format) => float_unary(op, format, regs[arg(0)], false),
                    LibCall::Binary(op, format) => float_binary(op, format, regs[arg(0)], regs[arg(1)], false),
                };
            }
            Op::Intrinsic(intrinsic) => {
                let lane = (linear % WARP_SIZE) as u32;
                let value: u128 = match *intrinsic {
                    Intrinsic::Geometry(which, axis) => u128::from(match which {
                        Geometry::Tid => tid[axis],
                        Geometry::Ntid => self.launch.block[axis],
                        Geometry::Ctaid => self.ctaid[axis],
                        Geometry::Nctaid => self.launch.grid[axis],
                    }),
                    Intrinsic::LaneId => u128::from(lane),
                    Intrinsic::WarpSize => WARP_SIZE as u128,
                    Intrinsic::WarpId => (linear / WARP_SIZE) as u128,
                    Intrinsic::LaneMask(kind) => {
                        let below = (1u128 << lane) - 1;
                        let up_to = (1u128 << (lane + 1)) - 1;
                        match kind {
                            LaneMask::Eq => 1 << lane,
                            LaneMask::Lt => below,
                            LaneMask::Le => up_to,
                            LaneMask::Ge => !below & 0xFFFF_FFFF,
                            LaneMask::Gt => !up_to & 0xFFFF_FFFF,
                        }
                    }
                    Intrinsic::MemoryBarrier => return Ok(Flow::Next),
                    Intrinsic::Barrier(reduction) => {
                        let predicate = if inst.args.is_empty() { 0 } else { regs[arg(0)] };
                        return Ok(Flow::Wait(sync(here, SyncKind::Barrier(reduction), 0, [predicate, 0, 0])));
                    }
                    Intrinsic::WarpSync => {
                        return Ok(Flow::Wait(sync(here, SyncKind::WarpSync, regs[arg(0)] as u32, [0; 3])));
                    }
                    Intrinsic::Shuffle(mode) => {
                        let operands = [regs[arg(1)], regs[arg(2)], regs[arg(3)]];
                        return Ok(Flow::Wait(sync(here, SyncKind::Shuffle(mode), regs[arg(0)] as u32, operands)));
                    }
                    Intrinsic::Vote(mode) => {
                        return Ok(Flow::Wait(sync(here, SyncKind::Vote(mode), regs[arg(0)] as u32, [regs[arg(1)], 0, 0])));
                    }
                };
                regs[inst.defs[0] as usize] = value;
            }
            Op::Fail(FailKind::Unsupported, what) => return Err(Fault::Unsupported(what.to_string())),
            Op::Fail(FailKind::Malformed, what) => return Err(Fault::Malformed(what.to_string())),
        }
        Ok(Flow::Next)
    }

}

fn sync((function, pc): (u32, u32), kind: SyncKind, mask: u32, operands: [u128; 3]) -> Sync {
    Sync { function, pc, kind, mask, operands }
}

/// The lane a `shfl.sync` reads from (its own when the source is out of range), per
/// the PTX ISA: `c` packs the clamp value (bits 0-4) and the segment mask (bits 8-12).
fn shuffle_source(mode: ShuffleMode, lane: u32, b: u32, c: u32) -> u32 {
    let b = b & 0x1F;
    let clamp = c & 0x1F;
    let segment_mask = (c >> 8) & 0x1F;
    let max_lane = (lane & segment_mask) | (clamp & !segment_mask);
    let min_lane = lane & segment_mask;
    let (j, valid) = match mode {
        ShuffleMode::Up => {
            let j = lane as i32 - b as i32;
            (j, j >= max_lane as i32)
        }
        ShuffleMode::Down => {
            let j = (lane + b) as i32;
            (j, j <= max_lane as i32)
        }
        ShuffleMode::Butterfly => {
            let j = (lane ^ b) as i32;
            (j, j <= max_lane as i32)
        }
        ShuffleMode::Index => {
            let j = (min_lane | (b & !segment_mask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if valid {
        j as u32
    } else {
        lane
    }
}

fn float_format(ty: Ty) -> Step<FloatFormat> {
    match ty.format() {
        Some(f) => Ok(f),
        None => Err(Fault::Malformed("expected a float type".into())),
    }
}

fn int_binary(op: IntBinary, a: u128, b: u128, bits: u32) -> Step<u128> {
    let m = mask(bits);
    Ok(match op {
        IntBinary::Add => a.wrapping_add(b) & m,
        IntBinary::Sub => a.wrapping_sub(b) & m,
        IntBinary::Mul => a.wrapping_mul(b) & m,
        IntBinary::MulHighSigned => int::multiply_full(a, b, bits, true).1,
        IntBinary::MulHighUnsigned => int::multiply_full(a, b, bits, false).1,
        IntBinary::SignedDiv | IntBinary::SignedRem => {
            if b == 0 {
                return undefined("signed division by zero");
            }
            let (x, y) = (signed(a, bits), signed(b, bits));
            if y == -1 && a == 1u128 << (bits - 1) {
                return undefined(format!("signed division overflow: the minimum i{bits} divided by -1"));
            }
            (if op == IntBinary::SignedDiv { x.wrapping_div(y) } else { x.wrapping_rem(y) }) as u128 & m
        }
        IntBinary::UnsignedDiv => {
            if b == 0 {
                return undefined("unsigned division by zero");
            }
            a / b
        }
        IntBinary::UnsignedRem => {
            if b == 0 {
                return undefined("unsigned remainder by zero");
            }
            a % b
        }
        IntBinary::And => a & b,
        IntBinary::Or => a | b,
        IntBinary::Xor => a ^ b,
        IntBinary::Shl | IntBinary::Sra | IntBinary::Srl => {
            if b >= u128::from(bits) {
                return undefined(format!("shift amount {b} is not below the width {bits}"));
            }
            let b = b as u32;
            match op {
                IntBinary::Shl => (a << b) & m,
                IntBinary::Sra => (signed(a, bits) >> b) as u128 & m,
                _ => a >> b,
            }
        }
        IntBinary::Rotl => int::rotate_left(a, b, bits),
        IntBinary::Rotr => int::rotate_right(a, b, bits),
        IntBinary::SignedMin => if signed(a, bits) <= signed(b, bits) { a } else { b },
        IntBinary::SignedMax => if signed(a, bits) >= signed(b, bits) { a } else { b },
        IntBinary::UnsignedMin => a.min(b),
        IntBinary::UnsignedMax => a.max(b),
    })
}

fn int_unary(op: IntUnary, a: u128, bits: u32) -> u128 {
    match op {
        IntUnary::Abs => signed(a, bits).wrapping_abs() as u128 & mask(bits),
        IntUnary::Ctpop => u128::from(a.count_ones()),
        IntUnary::Bswap => int::swap_bytes(a, bits),
        IntUnary::Ctlz => int::count_leading_zeros(a, bits),
        IntUnary::Cttz => int::count_trailing_zeros(a, bits),
        IntUnary::Bitreverse => int::reverse_bits(a, bits),
    }
}

/// `(result, carry or overflow)` of an overflow-reporting operation on `bits`-bit lanes.
fn overflow(op: Overflow, a: u128, b: u128, carry_in: u128, bits: u32) -> (u128, bool) {
    let m = mask(bits);
    match op {
        Overflow::UnsignedAdd | Overflow::AddCarry => {
            let (sum, c1) = a.overflowing_add(b);
            let (sum, c2) = sum.overflowing_add(carry_in);
            let carry = if bits == 128 { c1 || c2 } else { sum >> bits != 0 };
            (sum & m, carry)
        }
        Overflow::UnsignedSub | Overflow::SubBorrow => {
            let (difference, b1) = a.overflowing_sub(b);
            let (difference, b2) = difference.overflowing_sub(carry_in);
            (difference & m, b1 || b2)
        }
        Overflow::SignedAdd | Overflow::SignedSub => {
            let (x, y) = (signed(a, bits), signed(b, bits));
            let (result, wrapped) = if op == Overflow::SignedAdd { x.overflowing_add(y) } else { x.overflowing_sub(y) };
            let fits = bits == 128 || result == signed(result as u128 & m, bits);
            (result as u128 & m, wrapped || !fits)
        }
    }
}

/// A condition code on two lanes of type `ty`.
fn compare(cond: Cond, ty: Ty, a: u128, b: u128) -> Step<bool> {
    let relation = match ty.kind {
        Kind::Float(format) => {
            let (x, y) = (float::to_f64(format, a), float::to_f64(format, b));
            if x.is_nan() || y.is_nan() {
                return Ok(cond.unordered);
            }
            if x < y {
                LESS
            } else if x > y {
                GREATER
            } else {
                EQUAL
            }
        }
        Kind::Int | Kind::Pointer(_) => {
            let Some(is_signed) = cond.int_signed else { return Err(Fault::Malformed("a float-only condition code on integers".into())) };
            let ordering = if is_signed { signed(a, ty.bits).cmp(&signed(b, ty.bits)) } else { a.cmp(&b) };
            match ordering {
                std::cmp::Ordering::Less => LESS,
                std::cmp::Ordering::Equal => EQUAL,
                std::cmp::Ordering::Greater => GREATER,
            }
        }
    };
    Ok(cond.relations & relation != 0)
}

fn float_binary(op: FloatBinary, format: FloatFormat, a: u128, b: u128, ftz: bool) -> u128 {
    let flush = ftz && format == FloatFormat::F32;
    let (a, b) = if flush { (float::flush_subnormal(format, a), float::flush_subnormal(format, b)) } else { (a, b) };
    let result = match op {
        FloatBinary::MinNum | FloatBinary::MaxNum | FloatBinary::Minimum | FloatBinary::Maximum => min_max(op, format, a, b),
        _ => {
            let (x, y) = (float::to_f64(format, a), float::to_f64(format, b));
            let value = match op {
                FloatBinary::Add => x + y,
                FloatBinary::Sub => x - y,
                FloatBinary::Mul => x * y,
                FloatBinary::Div => x / y,
                FloatBinary::Rem => x % y,
                _ => x.powf(y),
            };
            float::from_f64(format, value)
        }
    };
    if flush {
        float::flush_subnormal(format, result)
    } else {
        result
    }
}

/// FMINNUM/FMAXNUM (NaN loses) and FMINIMUM/FMAXIMUM (NaN wins); -0 < +0 for all.
fn min_max(op: FloatBinary, format: FloatFormat, a: u128, b: u128) -> u128 {
    let (a_nan, b_nan) = (float::is_nan(format, a), float::is_nan(format, b));
    let propagate = matches!(op, FloatBinary::Minimum | FloatBinary::Maximum);
    if a_nan || b_nan {
        return match (propagate, a_nan, b_nan) {
            (false, true, false) => b,
            (false, false, true) => a,
            _ => float::canonical_nan(format),
        };
    }
    let want_min = matches!(op, FloatBinary::MinNum | FloatBinary::Minimum);
    let (x, y) = (float::to_f64(format, a), float::to_f64(format, b));
    if x == y {
        // Equal values differ only for zeros: the negative one is smaller.
        let a_negative = float::is_negative(format, a);
        return if a_negative == want_min { a } else { b };
    }
    if (x < y) == want_min {
        a
    } else {
        b
    }
}

fn float_unary(op: FloatUnary, format: FloatFormat, a: u128, ftz: bool) -> u128 {
    let flush = ftz && format == FloatFormat::F32;
    let a = if flush { float::flush_subnormal(format, a) } else { a };
    let result = match op {
        FloatUnary::Neg => float::negate(format, a),
        FloatUnary::Abs => float::absolute(format, a),
        _ => {
            let x = float::to_f64(format, a);
            let value = match op {
                FloatUnary::Sqrt => x.sqrt(),
                FloatUnary::Sin => x.sin(),
                FloatUnary::Cos => x.cos(),
                FloatUnary::Exp2 => x.exp2(),
                FloatUnary::Log2 => x.log2(),
                FloatUnary::Exp => x.exp(),
                FloatUnary::Log => x.ln(),
                FloatUnary::Ceil => x.ceil(),
                FloatUnary::Floor => x.floor(),
                FloatUnary::Trunc => x.trunc(),
                FloatUnary::RoundEven => x.round_ties_even(),
                _ => x.round(),
            };
            float::from_f64(format, value)
        }
    };
    if flush {
        float::flush_subnormal(format, result)
    } else {
        result
    }
}

fn fma(format: FloatFormat, a: u128, b: u128, c: u128, fused: bool, ftz: bool) -> u128 {
    if !fused {
        let product = float_binary(FloatBinary::Mul, format, a, b, ftz);
        return float_binary(FloatBinary::Add, format, product, c, ftz);
    }
    let flush = ftz && format == FloatFormat::F32;
    let f = |x: u128| if flush { float::flush_subnormal(format, x) } else { x };
    let (a, b, c) = (f(a), f(b), f(c));
    let result = match format {
        FloatFormat::F32 => {
            let r = f32::from_bits(a as u32).mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32));
            if r.is_nan() { float::canonical_nan(format) } else { u128::from(r.to_bits()) }
        }
        FloatFormat::F64 => u128::from(f64::from_bits(a as u64).mul_add(f64::from_bits(b as u64), f64::from_bits(c as u64)).to_bits()),
        _ => float::fma_narrow(format, float::to_f64(format, a), float::to_f64(format, b), float::to_f64(format, c)),
    };
    f(result)
}

/// FP_TO_SINT / FP_TO_UINT of one lane: truncation toward zero; NaN, infinities and
/// values outside the integer type are undefined unless `saturate` (then NaN is 0 and
/// the rest clamp).
fn float_to_int(format: FloatFormat, value: u128, bits: u32, is_signed: bool, saturate: bool) -> Step<u128> {
    let (minimum_magnitude, maximum) = if is_signed { (1u128 << (bits - 1), mask(bits - 1)) } else { (0, mask(bits)) };
    let negative = float::is_negative(format, value);
    let clamp = |negative: bool| if negative { (minimum_magnitude.wrapping_neg()) & mask(bits) } else { maximum };
    if float::is_nan(format, value) {
        return if saturate { Ok(0) } else { undefined("conversion of NaN to an integer") };
    }
    let Some((negative, magnitude)) = float::truncate_to_integer(format, value).map(|(_, m)| (negative, m)) else {
        return if saturate { Ok(clamp(negative)) } else { undefined(format!("conversion of {} to i{bits} is out of range", float::to_f64(format, value))) };
    };
    let in_range = if negative { magnitude <= minimum_magnitude } else { magnitude <= maximum };
    if !in_range {
        return if saturate {
            Ok(clamp(negative))
        } else {
            undefined(format!("conversion of {} to {}i{bits} is out of range", float::to_f64(format, value), if is_signed { "" } else { "unsigned " }))
        };
    }
    Ok(if negative { magnitude.wrapping_neg() & mask(bits) } else { magnitude })
}

/// Packs lanes of `bits` bits into 256 bits, lane 0 lowest.
fn pack(lanes: &[u128], bits: u32) -> [u128; 2] {
    let mut out = [0u128; 2];
    for (l, &value) in lanes.iter().enumerate() {
        let position = l as u32 * bits;
        let word = (position / 128) as usize;
        let shift = position % 128;
        if word < 2 {
            out[word] |= value << shift;
            if shift + bits > 128 && word + 1 < 2 {
                out[word + 1] |= value >> (128 - shift);
            }
        }
    }
    out
}

/// `bits` bits at `position` of a packed value.
fn unpack(packed: [u128; 2], position: u32, bits: u32) -> u128 {
    let word = (position / 128) as usize;
    let shift = position % 128;
    let mut value = packed.get(word).copied().unwrap_or(0) >> shift;
    if shift + bits > 128 && shift != 0 {
        value |= packed.get(word + 1).copied().unwrap_or(0) << (128 - shift);
    }
    value & mask(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_sources_follow_the_ptx_pseudocode() {
        // Full warp, clamp 31 for down/bfly/idx and 0 for up (the CUDA conventions).
        assert_eq!(shuffle_source(ShuffleMode::Down, 3, 16, 0x1F), 19);
        assert_eq!(shuffle_source(ShuffleMode::Down, 20, 16, 0x1F), 20, "past the clamp: own value");
        assert_eq!(shuffle_source(ShuffleMode::Up, 3, 1, 0), 2);
        assert_eq!(shuffle_source(ShuffleMode::Up, 0, 1, 0), 0, "below lane 0: own value");
        assert_eq!(shuffle_source(ShuffleMode::Butterfly, 5, 1, 0x1F), 4);
        assert_eq!(shuffle_source(ShuffleMode::Index, 9, 0, 0x1F), 0);
        // Width-8 segments (__shfl_down_sync(..., width = 8): c = ((32 - 8) << 8) | 0x1F).
        let c = (24 << 8) | 0x1F;
        assert_eq!(shuffle_source(ShuffleMode::Down, 5, 2, c), 7);
        assert_eq!(shuffle_source(ShuffleMode::Down, 6, 2, c), 6, "stays in its segment");
        assert_eq!(shuffle_source(ShuffleMode::Index, 13, 2, c), 10, "index within the segment");
    }

    #[test]
    fn division_and_shift_undefined_cases() {
        assert!(int_binary(IntBinary::SignedDiv, 5, 0, 32).is_err());
        assert!(int_binary(IntBinary::UnsignedRem, 5, 0, 8).is_err());
        assert!(int_binary(IntBinary::SignedDiv, 0x8000_0000, 0xFFFF_FFFF, 32).is_err());
        assert!(int_binary(IntBinary::SignedRem, 1 << 127, u128::MAX, 128).is_err());
        assert!(int_binary(IntBinary::Shl, 1, 32, 32).is_err());
        assert!(int_binary(IntBinary::Sra, 1, 8, 8).is_err());
        assert_eq!(int_binary(IntBinary::Shl, 1, 31, 32).ok(), Some(0x8000_0000));
        assert_eq!(int_binary(IntBinary::Sra, 0x80, 7, 8).ok(), Some(0xFF));
        assert_eq!(int_binary(IntBinary::Srl, 0x80, 7, 8).ok(), Some(1));
        // Truncating signed division and remainder: -7 / 2 = -3, -7 % 2 = -1.
        let minus_seven = (-7i128) as u128 & mask(32);
        assert_eq!(int_binary(IntBinary::SignedDiv, minus_seven, 2, 32).ok(), Some((-3i128) as u128 & mask(32)));
        assert_eq!(int_binary(IntBinary::SignedRem, minus_seven, 2, 32).ok(), Some(mask(32)));
    }

    #[test]
    fn i128_arithmetic() {
        let a: u128 = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210;
        let b: u128 = 0xF0F0_0000_0000_0001;
        assert_eq!(int_binary(IntBinary::Mul, a, b, 128).ok(), Some(a.wrapping_mul(b)));
        assert_eq!(int_binary(IntBinary::UnsignedDiv, a, b, 128).ok(), Some(a / b));
        assert_eq!(int_binary(IntBinary::UnsignedRem, a, b, 128).ok(), Some(a % b));
        let negative = (-(a as i128)) as u128;
        assert_eq!(int_binary(IntBinary::SignedDiv, negative, b, 128).ok(), Some((-(a as i128) / b as i128) as u128));
        // MULHU of 2^127 * 4 = 2^129: high part 2.
        assert_eq!(int_binary(IntBinary::MulHighUnsigned, 1 << 127, 4, 128).ok(), Some(2));
        // MULHS of -2^127 * 4 = -2^129: high part -2.
        assert_eq!(int_binary(IntBinary::MulHighSigned, 1 << 127, 4, 128).ok(), Some((-2i128) as u128));
    }

    #[test]
    fn carries_and_overflow_flags() {
        assert_eq!(overflow(Overflow::UnsignedAdd, 0xFF, 1, 0, 8), (0, true));
        assert_eq!(overflow(Overflow::UnsignedAdd, 0xFE, 1, 0, 8), (0xFF, false));
        assert_eq!(overflow(Overflow::AddCarry, 0xFF, 0, 1, 8), (0, true));
        assert_eq!(overflow(Overflow::AddCarry, u128::MAX, u128::MAX, 1, 128), (u128::MAX, true));
        assert_eq!(overflow(Overflow::UnsignedSub, 0, 1, 0, 32), (mask(32), true));
        assert_eq!(overflow(Overflow::SubBorrow, 5, 5, 1, 32), (mask(32), true));
        assert_eq!(overflow(Overflow::SubBorrow, 5, 4, 1, 32), (0, false));
        assert_eq!(overflow(Overflow::SignedAdd, 0x7F, 1, 0, 8), (0x80, true));
        assert_eq!(overflow(Overflow::SignedAdd, 0xFF, 1, 0, 8), (0, false), "-1 + 1 does not overflow");
        assert_eq!(overflow(Overflow::SignedSub, 0x80, 1, 0, 8), (0x7F, true));
        assert_eq!(overflow(Overflow::SignedAdd, i128::MAX as u128, 1, 0, 128), (1 << 127, true));
        // A 64-bit add built from 32-bit halves with ADDC/ADDE equals the 64-bit add.
        let (x, y) = (0x0000_0001_FFFF_FFFFu128, 0x0000_0002_0000_0001u128);
        let (low, carry) = overflow(Overflow::UnsignedAdd, x & mask(32), y & mask(32), 0, 32);
        let (high, _) = overflow(Overflow::AddCarry, x >> 32, y >> 32, u128::from(carry), 32);
        assert_eq!(low | (high << 32), x + y);
    }

    #[test]
    fn sign_extend_in_register() {
        assert_eq!(int::sign_extend(0x1_80, 8, 32), 0xFFFF_FF80, "only the low 8 bits count");
        assert_eq!(int::sign_extend(0x7F, 8, 32), 0x7F);
        assert_eq!(int::sign_extend(1, 1, 16), 0xFFFF);
    }

    #[test]
    fn float_min_max_and_zero_signs() {
        use FloatFormat::F32;
        let bits = |x: f32| u128::from(x.to_bits());
        let nan = float::canonical_nan(F32);
        assert_eq!(min_max(FloatBinary::MinNum, F32, nan, bits(2.0)), bits(2.0));
        assert_eq!(min_max(FloatBinary::Minimum, F32, nan, bits(2.0)), nan);
        assert_eq!(min_max(FloatBinary::MinNum, F32, bits(0.0), bits(-0.0)), bits(-0.0));
        assert_eq!(min_max(FloatBinary::MaxNum, F32, bits(-0.0), bits(0.0)), bits(0.0));
        assert_eq!(min_max(FloatBinary::Maximum, F32, bits(1.0), bits(3.0)), bits(3.0));
    }

    #[test]
    fn ftz_flushes_f32_subnormals() {
        use FloatFormat::F32;
        let tiny = u128::from(f32::from_bits(1).to_bits());
        assert_eq!(float_binary(FloatBinary::Add, F32, tiny, tiny, false), 2);
        assert_eq!(float_binary(FloatBinary::Add, F32, tiny, tiny, true), 0);
        let negative_tiny = tiny | 0x8000_0000;
        assert_eq!(float_binary(FloatBinary::Mul, F32, negative_tiny, u128::from(1.0f32.to_bits()), true), 0x8000_0000);
    }

    #[test]
    fn float_to_int_ranges() {
        use FloatFormat::{F32, F64};
        let f = |x: f64| u128::from(x.to_bits());
        assert_eq!(float_to_int(F64, f(-1.9), 32, true, false).ok(), Some(mask(32)));
        assert_eq!(float_to_int(F64, f(-0.9), 32, false, false).ok(), Some(0), "truncates to 0, in range");
        assert!(float_to_int(F64, f(-1.0), 32, false, false).is_err());
        assert!(float_to_int(F64, f(2147483648.0), 32, true, false).is_err());
        assert_eq!(float_to_int(F64, f(-2147483648.0), 32, true, false).ok(), Some(0x8000_0000));
        assert!(float_to_int(F64, f(f64::NAN), 32, true, false).is_err());
        assert_eq!(float_to_int(F64, f(f64::NAN), 32, true, true).ok(), Some(0));
        assert_eq!(float_to_int(F64, f(1e30), 16, true, true).ok(), Some(0x7FFF));
        assert_eq!(float_to_int(F64, f(-1e30), 16, true, true).ok(), Some(0x8000));
        assert_eq!(float_to_int(F32, u128::from(f32::INFINITY.to_bits()), 8, false, true).ok(), Some(0xFF));
    }

    #[test]
    fn bitcast_packing() {
        // v2i16 [0x1111, 0x2222] is the i32 0x22221111.
        let packed = pack(&[0x1111, 0x2222], 16);
        assert_eq!(unpack(packed, 0, 32), 0x2222_1111);
        // v2i128 to v4i64 and back.
        let wide = pack(&[u128::MAX, 5], 128);
        assert_eq!(unpack(wide, 128, 64), 5);
        assert_eq!(unpack(wide, 64, 64), u128::from(u64::MAX));
    }
}
