//! Differential checking of the legalizer by execution: a kernel is run by the
//! reference interpreter ([`crate::interp`]) before and after legalization for an SM on
//! the same inputs, and the output must be the same (NaN payloads aside). Used by the
//! random-program test (`backend/tests/legalize_random.rs`) and the `legalize_random`
//! fuzz target on kernels from [`crate::random_mir`].

use target_desc::tables::{SmTables, TargetTables};

use crate::interp::{self, ArgValue, Launch};
use crate::random_mir::{GeneratedKernel, SeededRandom};

/// Threads per run: enough for two warps' worth of distinct inputs, small enough to be
/// fast.
pub const THREADS: usize = 8;
pub const FUEL: u64 = 2_000_000;

/// What checking one kernel found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Runs compared (before and after, per SM).
    pub compared: u64,
    /// Inputs discarded because the original run was undefined or ran out of fuel.
    pub discarded: u64,
}

/// The arguments of one run: random input bytes, a zeroed output, small scalars (an i1
/// 0 or 1), and random bits for wider parameters (i128, vectors).
fn arguments(kernel: &GeneratedKernel, tables: &TargetTables, seed: u64) -> Vec<ArgValue> {
    let mut rng = SeededRandom::new(seed);
    let input: Vec<u8> = (0..kernel.required_input_bytes(THREADS)).map(|_| rng.next_u64() as u8).collect();
    let output = vec![0u8; kernel.required_output_bytes(THREADS)];
    let mut args = vec![ArgValue::Buffer(input), ArgValue::Buffer(output)];
    for name in &kernel.scalar_params {
        let info = tables.vt(name).and_then(|t| tables.type_info(t));
        let bits = info.map_or(64, |t| t.bits);
        let scalar = info.is_some_and(|t| t.kind != target_desc::tables::TypeKind::Vector);
        let value = match bits {
            1 => u128::from(rng.next_u64() % 2),
            _ if scalar && bits <= 64 => u128::from(rng.next_u64() % 64),
            _ => {
                let wide = u128::from(rng.next_u64()) | (u128::from(rng.next_u64()) << 64);
                if bits >= 128 { wide } else { wide & ((1u128 << bits) - 1) }
            }
        };
        args.push(ArgValue::Scalar(value));
    }
    args
}

/// Runs `kernel` on `inputs` random inputs before legalization and after legalization
/// for each of `sms`; an error names the kernel, SM and input that disagree.
pub fn check_kernel(kernel: &GeneratedKernel, tables: &TargetTables, sms: &[&SmTables], inputs: u64, seed: u64) -> Result<Tally, String> {
    check_generic(kernel, tables, sms, inputs, seed, false)
}

/// As [`check_kernel`], with [`crate::sroa`] before legalization and the combiner
/// ([`crate::combine`]) and loop-reduce after it: the interpreter on the result must
/// agree with it on the input.
pub fn check_kernel_combined(kernel: &GeneratedKernel, tables: &TargetTables, sms: &[&SmTables], inputs: u64, seed: u64) -> Result<Tally, String> {
    check_generic(kernel, tables, sms, inputs, seed, true)
}

fn check_generic(kernel: &GeneratedKernel, tables: &TargetTables, sms: &[&SmTables], inputs: u64, seed: u64, combine: bool) -> Result<Tally, String> {
    let file = format!("<random kernel {}>", kernel.name);
    let module = crate::mir::parser::parse_module(&kernel.text, &file, tables).map_err(|e| e.render())?;
    let launch = Launch { grid: [1, 1, 1], block: [THREADS as u32, 1, 1] };
    let mut tally = Tally::default();
    let mut baseline = Vec::new();
    for i in 0..inputs {
        let args = arguments(kernel, tables, seed.wrapping_mul(1_000_003).wrapping_add(i));
        match interp::run_kernel(&module, tables, &kernel.name, &launch, &args, FUEL) {
            Ok(r) => baseline.push((args, r.buffers[1].clone())),
            Err(_) => tally.discarded += 1,
        }
    }
    let source = crate::mir::verifier::Source { file: &file, text: &kernel.text };
    for sm in sms {
        let mut legal = module.clone();
        if combine {
            crate::sroa::run(&mut legal, tables)?;
        }
        crate::legalize::legalize_module(&mut legal, tables, sm, source, true, false)
            .map_err(|errors| format!("legalizing for {} failed:\n{}\n{}", sm.name, errors.iter().map(|e| e.render()).collect::<String>(), kernel.text))?;
        let mut stage = "legalization";
        if combine {
            crate::combine::run(&mut legal, tables, sm)?;
            crate::loop_reduce::run(&mut legal, tables, sm)?;
            stage = "sroa, legalization, combining and loop-reduce";
        }
        let errors = crate::mir::verifier::verify_module(&legal, tables, source);
        if !errors.is_empty() {
            return Err(format!("the MIR after {stage} for {} does not verify:\n{}", sm.name, errors.iter().map(|e| e.render()).collect::<String>()));
        }
        for (args, expected) in &baseline {
            let after = interp::run_kernel(&legal, tables, &kernel.name, &launch, args, FUEL * 8)
                .map_err(|e| format!("after {stage} for {} the kernel fails where the original ran: {e}\n{}", sm.name, kernel.text))?;
            kernel
                .compare_outputs(expected, &after.buffers[1])
                .map_err(|d| format!("{stage} for {} changes the result: {d}\n{}\n--- after ---\n{}", sm.name, kernel.text, crate::mir::printer::print_module(&legal, tables)))?;
            tally.compared += 1;
        }
    }
    Ok(tally)
}

/// -O3 with `--maxreg 16` and block rematerialization of everything it may pull:
/// every mode (special registers too, at any excess) and clones in loops at no extra
/// cost.
pub fn low_limit_options(tables: &TargetTables) -> crate::options::Options {
    let mut o = crate::options::Options::new(tables, crate::options::OptLevel::O3);
    o.maxreg = Some(16);
    // The machine verifier after every pass too (`--verify`): rematerialization and
    // spilling insert instructions, and must not split a carry pair.
    for k in ["nv-remat-block=15", "nv-remat-threshold-for-spec-reg=0", "nv-remat-block-loop-cost-factor=1", "verify-machineinstrs=true"] {
        o.set(k).expect("a knob of the registry");
    }
    o
}

/// Checks the whole pipeline on a random kernel: for each input the interpreter runs
/// the kernel before compilation and the simulator runs its PTX for each of `sms`, and
/// the outputs must agree ([`GeneratedKernel::compare_outputs`]: approximate results
/// within a tolerance, NaNs equal). Odd seeds compile under a low register limit
/// ([`low_limit_options`]), so rematerialization, spilling (with stack slot coloring)
/// and the allocation checker run on random code too; seeds 2 mod 4 compile with
/// `sroa` off, so frame cells reach the machine passes. Returns the runs compared and
/// the inputs discarded (undefined in the interpreter).
pub fn check_kernel_end_to_end(kernel: &GeneratedKernel, tables: &TargetTables, sms: &[&SmTables], inputs: u64, seed: u64) -> Result<Tally, String> {
    let file = format!("<random kernel {}>", kernel.name);
    let module = crate::mir::parser::parse_module(&kernel.text, &file, tables).map_err(|e| e.render())?;
    let launch = Launch { grid: [1, 1, 1], block: [THREADS as u32, 1, 1] };
    let program = interp::Program::new(&module, tables);
    let mut tally = Tally::default();
    let mut baseline = Vec::new();
    for i in 0..inputs {
        let args = arguments(kernel, tables, seed.wrapping_mul(1_000_003).wrapping_add(i));
        match program.run(&kernel.name, &launch, &args, FUEL) {
            Ok(r) => baseline.push((args, r.buffers[1].clone())),
            Err(_) => tally.discarded += 1,
        }
    }
    let options = crate::sim::Options { fuel: FUEL * 64, ..crate::sim::Options::default() };
    for sm in sms {
        let compile_options = match seed % 4 {
            1 | 3 => low_limit_options(tables),
            // sroa takes every frame round trip the generator writes; with it off, the
            // cells reach selection, nvptx-mem2reg and `.local` memory.
            2 => {
                let mut o = crate::options::Options::new(tables, crate::options::OptLevel::O3);
                o.set("disable-sroa=true").expect("a knob of the registry");
                o
            }
            _ => crate::options::Options::new(tables, crate::options::OptLevel::O3),
        };
        let ptx = end_to_end::compile_with(&module, &kernel.text, &file, tables, sm, compile_options).map_err(|e| format!("compiling for {} failed (seed {seed}):\n{e}\n{}", sm.name, kernel.text))?;
        let ptx_file = format!("{}.{}.ptx", kernel.name, sm.name);
        let simulator = crate::sim::Simulator::new(&ptx, &ptx_file, tables, None)
            .map_err(|e| format!("the simulator rejects the PTX for {}:\n{}\n{}\n--- PTX ---\n{ptx}", sm.name, e.render(&ptx_file, &ptx), kernel.text))?;
        for (args, expected) in &baseline {
            let got = simulator
                .run(&crate::emit::sanitize(&kernel.name), &launch, args, &options)
                .map_err(|e| format!("on {} the PTX fails where the MIR runs:\n{}\n{}\n--- PTX ---\n{ptx}", sm.name, simulator.render_error(&e), kernel.text))?;
            kernel
                .compare_outputs(expected, &got.buffers[1])
                .map_err(|d| format!("on {} the PTX computes something else: {d}\n{}\n--- PTX ---\n{ptx}", sm.name, kernel.text))?;
            tally.compared += 1;
        }
    }
    Ok(tally)
}

/// The end-to-end check of the whole pipeline: the MIR interpreter on a kernel before
/// compilation and the PTX simulator ([`crate::sim`]) on the PTX compiled from it, on
/// the same arguments and launch. Used by the corpus tests, the random-program tests
/// and the `sim_random` fuzz target.
pub mod end_to_end {
    use target_desc::tables::{SmTables, TargetTables};

    use crate::interp::{self, ArgValue, FloatFormat, Launch, RunResult, Ty};
    use crate::mir::{Function, Module};

    /// Opcodes whose results are approximate (mir-spec §3.4): kernels using them are
    /// compared within [`TOLERANCE_ULPS`].
    pub const APPROXIMATE: &[&str] = &["FSIN", "FCOS", "FEXP2", "FLOG2", "FEXP", "FLOG", "FPOW", "FSINCOS"];

    /// The tolerance of approximate operations, in units in the last place of the
    /// buffer's float type (the library's functions are within 2).
    pub const TOLERANCE_ULPS: i128 = 2;

    /// Compiles `module` (a parsed copy of `text`) for `sm` through the default
    /// pipeline, with the verifier's and the legalizer's checks on; returns the PTX.
    pub fn compile(module: &Module, text: &str, file: &str, tables: &TargetTables, sm: &SmTables) -> Result<String, String> {
        compile_with(module, text, file, tables, sm, crate::options::Options::new(tables, crate::options::OptLevel::O3))
    }

    /// [`compile`] with the given optimization level, knobs and skipped passes.
    pub fn compile_with(module: &Module, text: &str, file: &str, tables: &TargetTables, sm: &SmTables, options: crate::options::Options) -> Result<String, String> {
        let mut module = module.clone();
        let source = crate::mir::verifier::Source { file, text };
        let mut cx = crate::passes::PassContext::new(tables, Some(sm), source);
        cx.options = options;
        crate::passes::compile_module(&mut module, &cx).map_err(|e| e.iter().map(|e| e.render()).collect::<String>())
    }

    /// How the outputs of one kernel are compared.
    pub struct Comparison {
        /// Per buffer argument: the element type the kernel reads or writes it as.
        element: Vec<Option<Ty>>,
        /// Global-space globals of the module: `(MIR name, PTX name, element type)`.
        globals: Vec<(String, String, Option<Ty>)>,
        approximate: bool,
    }

    impl Comparison {
        pub fn new(module: &Module, function: &Function, tables: &TargetTables) -> Comparison {
            let stored = interp::args::buffer_stored_types(function, tables);
            let element = function
                .params
                .iter()
                .enumerate()
                .filter(|(_, p)| tables.type_info(p.ty).is_some_and(|t| t.kind == target_desc::tables::TypeKind::Pointer))
                .map(|(k, _)| stored.get(k).copied().flatten())
                .collect();
            let globals = module
                .globals
                .iter()
                .filter(|g| g.space == crate::mir::AddressSpace::Global)
                .map(|g| (g.name.clone(), crate::emit::sanitize(&g.name), Ty::from_vt(tables, g.ty).map(|t| Ty { lanes: 1, ..t })))
                .collect();
            let approximate = module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter())).any(|i| APPROXIMATE.contains(&i.opcode.name(tables)));
            Comparison { element, globals, approximate }
        }

        /// Whether the kernel uses approximate operations.
        pub fn approximate(&self) -> bool {
            self.approximate
        }

        /// Compares the interpreter's run (`expected`) with the simulator's (`got`):
        /// buffers in order and the module's global-space globals by name, floats with
        /// NaNs canonicalized, approximate kernels within the tolerance. The error
        /// names the first difference.
        pub fn check(&self, expected: &RunResult, got: &RunResult) -> Result<(), String> {
            if expected.buffers.len() != got.buffers.len() {
                return Err(format!("{} buffers expected, the simulator returned {}", expected.buffers.len(), got.buffers.len()));
            }
            for (k, (e, g)) in expected.buffers.iter().zip(&got.buffers).enumerate() {
                self.compare_bytes(e, g, self.element.get(k).copied().flatten()).map_err(|d| format!("buffer {k}: {d}"))?;
            }
            for ((mir_name, ptx_name, ty), (name, e)) in self.globals.iter().zip(&expected.globals) {
                debug_assert_eq!(mir_name, name);
                let Some((_, g)) = got.globals.iter().find(|(n, _)| n == ptx_name) else {
                    return Err(format!("global @{mir_name} is missing from the PTX (as `{ptx_name}`)"));
                };
                self.compare_bytes(e, g, *ty).map_err(|d| format!("global @{mir_name}: {d}"))?;
            }
            Ok(())
        }

        fn compare_bytes(&self, expected: &[u8], got: &[u8], element: Option<Ty>) -> Result<(), String> {
            if expected.len() != got.len() {
                return Err(format!("{} bytes expected, {} found", expected.len(), got.len()));
            }
            let format = element.and_then(|t| t.format()).filter(|f| *f != FloatFormat::F128);
            let Some(format) = format else {
                return compare_untyped(expected, got);
            };
            let size = (format.bits() / 8) as usize;
            for (i, (e, g)) in expected.chunks(size).zip(got.chunks(size)).enumerate() {
                if e == g || e.len() < size {
                    if e != g {
                        return Err(format!("differs in the trailing bytes at {}", i * size));
                    }
                    continue;
                }
                let bits = |c: &[u8]| {
                    let mut raw = [0u8; 16];
                    raw[..size].copy_from_slice(c);
                    u128::from_le_bytes(raw)
                };
                let (eb, gb) = (bits(e), bits(g));
                let (en, gn) = (interp::float::is_nan(format, eb), interp::float::is_nan(format, gb));
                if en && gn {
                    continue;
                }
                let ordinal = |b: u128| -> i128 {
                    let sign = 1u128 << (format.bits() - 1);
                    if b & sign != 0 { -((b & !sign) as i128) } else { b as i128 }
                };
                if self.approximate && !en && !gn && (ordinal(eb) - ordinal(gb)).abs() <= TOLERANCE_ULPS {
                    continue;
                }
                let show = |b: u128| format!("{:#x} ({})", b, interp::float::to_f64(format, b));
                return Err(format!("{} element {i} differs: expected {}, found {}", format.name(), show(eb), show(gb)));
            }
            Ok(())
        }
    }

    /// Compares buffers of mixed or unknown element types byte by byte, except that
    /// two NaNs of the same format at the same aligned place are equal whatever their
    /// bits (the interpreter's quiet NaN is not the GPU's canonical NaN).
    fn compare_untyped(expected: &[u8], got: &[u8]) -> Result<(), String> {
        let mut i = 0;
        while i < expected.len() {
            if expected[i] == got[i] {
                i += 1;
                continue;
            }
            let both_nan = [(8, FloatFormat::F64), (4, FloatFormat::F32), (2, FloatFormat::F16), (2, FloatFormat::BF16)].into_iter().find_map(|(size, format)| {
                let start = i - i % size;
                let end = start + size;
                if end > expected.len() {
                    return None;
                }
                let bits = |c: &[u8]| {
                    let mut raw = [0u8; 16];
                    raw[..size].copy_from_slice(c);
                    u128::from_le_bytes(raw)
                };
                let nan = |c: &[u8]| interp::float::is_nan(format, bits(c));
                (nan(&expected[start..end]) && nan(&got[start..end])).then_some(end)
            });
            match both_nan {
                Some(end) => i = end,
                None => return Err(format!("differs at byte {i}: expected {:#04x}, found {:#04x}", expected[i], got[i])),
            }
        }
        Ok(())
    }

    /// What checking one kernel on one SM found.
    #[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
    pub struct Tally {
        /// Inputs on which both ran and agreed.
        pub agreed: u64,
        /// Inputs discarded because the interpreter's run was undefined or out of fuel.
        pub discarded: u64,
    }

    /// Runs kernel `entry` of `module` in the interpreter and its PTX (the kernel named
    /// as the emitter names it) in the simulator on each input, comparing outputs; the
    /// error describes the first disagreement (a run the interpreter completes but the
    /// simulator does not is one).
    #[allow(clippy::too_many_arguments)]
    pub fn check_inputs(
        module: &Module,
        tables: &TargetTables,
        simulator: &crate::sim::Simulator,
        entry: &str,
        launch: &Launch,
        inputs: &[Vec<ArgValue>],
        fuel: u64,
        comparison: &Comparison,
    ) -> Result<Tally, String> {
        let program = interp::Program::new(module, tables);
        let mut tally = Tally::default();
        let options = crate::sim::Options { fuel: fuel.saturating_mul(64), ..crate::sim::Options::default() };
        for (k, args) in inputs.iter().enumerate() {
            let Ok(expected) = program.run(entry, launch, args, fuel) else {
                tally.discarded += 1;
                continue;
            };
            let got = simulator.run(&crate::emit::sanitize(entry), launch, args, &options).map_err(|e| format!("input {k}: the interpreter runs, the simulator stops:\n{}", simulator.render_error(&e)))?;
            comparison.check(&expected, &got).map_err(|d| format!("input {k}: {d}"))?;
            tally.agreed += 1;
        }
        Ok(tally)
    }
}
