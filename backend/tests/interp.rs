//! The MIR reference interpreter on the corpus kernels (`tests/corpus/*.mir`): results
//! checked against expectations computed here in plain Rust from the same inputs,
//! undefined behaviour reported, every corpus kernel runnable, and `ptxc interp`.

use std::path::{Path, PathBuf};

use backend::interp::{self, ArgValue, InterpError, Launch, RunResult};
use backend::mir::Module;

const FUEL: u64 = 10_000_000;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

fn load(name: &str) -> Module {
    let path = corpus_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    backend::mir::parser::parse_module(&text, name, tables::nvptx()).unwrap_or_else(|e| panic!("{}", e.render()))
}

fn run(module: &Module, entry: &str, launch: Launch, args: &[ArgValue]) -> Result<RunResult, InterpError> {
    interp::run_kernel(module, tables::nvptx(), entry, &launch, args, FUEL)
}

#[test]
fn every_corpus_kernel_runs_on_random_arguments() {
    let tables = tables::nvptx();
    let mut kernels = 0;
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "mir") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let module = load(&name);
        let program = interp::Program::new(&module, tables);
        for f in module.functions.iter().filter(|f| f.kind == backend::mir::FunctionKind::Kernel) {
            kernels += 1;
            let threads = f.attributes.maxntid.as_ref().map_or(64, |m| m.iter().product::<u32>().min(64));
            let mut defined = 0;
            for seed in 0..8 {
                let args = interp::random_args(f, tables, seed);
                match program.run(&f.name, &Launch::linear(2, threads), &args, FUEL) {
                    Ok(first) => {
                        defined += 1;
                        let again = program.run(&f.name, &Launch::linear(2, threads), &args, FUEL).unwrap();
                        assert_eq!(first, again, "{name} @{}: runs differ on the same input", f.name);
                    }
                    Err(InterpError::Undefined { .. } | InterpError::OutOfFuel { .. }) => {}
                    Err(e) => panic!("{name} @{} (seed {seed}): {e}", f.name),
                }
            }
            eprintln!("{name} @{}: {defined}/8 inputs defined", f.name);
        }
    }
    assert!(kernels >= 30, "only {kernels} kernels in the corpus");
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn f32_arg(x: f32) -> ArgValue {
    ArgValue::Scalar(u128::from(x.to_bits()))
}

/// Deterministic test data: small values with fractions, both signs.
fn data(n: usize, salt: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32 * 37 + salt * 11) % 97) as f32 * 0.375 - 12.0).collect()
}

#[test]
fn saxpy_over_several_blocks() {
    let module = load("saxpy_f32.mir");
    let (x, y) = (data(96, 1), data(96, 2));
    let (a, n) = (1.75f32, 90);
    let args = [ArgValue::Buffer(f32_bytes(&x)), ArgValue::Buffer(f32_bytes(&y)), f32_arg(a), ArgValue::Scalar(n as u128)];
    let result = run(&module, "saxpy", Launch::linear(3, 32), &args).unwrap();
    let expected: Vec<f32> = (0..96).map(|i| if i < n { a * x[i] + y[i] } else { y[i] }).collect();
    assert_eq!(f32s(&result.buffers[1]), expected);
    assert_eq!(result.buffers[0], f32_bytes(&x), "x is only read");
}

#[test]
fn shared_memory_tree_reduction_with_barriers() {
    let module = load("reduce_shared_sum.mir");
    let (threads, blocks, n) = (128usize, 2usize, 200usize);
    let input = data(threads * blocks, 3);
    let args = [ArgValue::Buffer(f32_bytes(&input)), ArgValue::Buffer(vec![0; 4 * blocks]), ArgValue::Scalar(n as u128)];
    let result = run(&module, "block_sum", Launch::linear(blocks as u32, threads as u32), &args).unwrap();
    // The kernel's own order: partial[t] += partial[t + s] for s = 64, 32, ..., 1.
    let expected: Vec<f32> = (0..blocks)
        .map(|b| {
            let mut partial: Vec<f32> = (0..threads).map(|t| if b * threads + t < n { input[b * threads + t] } else { 0.0 }).collect();
            let mut s = threads / 2;
            while s > 0 {
                for t in 0..s {
                    partial[t] += partial[t + s];
                }
                s /= 2;
            }
            partial[0]
        })
        .collect();
    assert_eq!(f32s(&result.buffers[1]), expected);
}

#[test]
fn warp_shuffles_reduce_scan_and_broadcast() {
    let module = load("warp_shuffle_i32.mir");
    let threads = 64;
    let input: Vec<i32> = (0..threads).map(|i| (i * 7919 % 1000) - 300).collect();
    let args = [ArgValue::Buffer(i32_bytes(&input)), ArgValue::Buffer(vec![0; 4 * threads as usize])];
    let result = run(&module, "warp_reduce_i32", Launch::threads(threads as u32), &args).unwrap();
    let mut expected = Vec::new();
    for warp in input.chunks(32) {
        // shfl.down with clamp 31: lanes whose source is past lane 31 keep their value.
        let down = |v: &[i32], offset: usize| -> Vec<i32> { (0..32).map(|l| v[l].wrapping_add(if l + offset <= 31 { v[l + offset] } else { v[l] })).collect() };
        let mut sum = warp.to_vec();
        for offset in [16, 8, 4, 2, 1] {
            sum = down(&sum, offset);
        }
        let total = sum[0];
        let y1: Vec<i32> = (0..32).map(|l| warp[l] ^ warp[l ^ 1]).collect();
        let y2: Vec<i32> = (0..32).map(|l| y1[l] ^ y1[l ^ 2]).collect();
        for l in 0..32 {
            let scan = warp[l].wrapping_add(if l >= 1 { warp[l - 1] } else { 0 });
            expected.push(total.wrapping_add(y2[l]).wrapping_add(scan));
        }
    }
    assert_eq!(i32s(&result.buffers[1]), expected);
}

#[test]
fn counted_loop_fills_rows() {
    let module = load("loop_counted.mir");
    let (threads, n, scale) = (32usize, 5usize, 1.5f32);
    let sentinel = -7.0f32;
    let args = [ArgValue::Buffer(f32_bytes(&vec![sentinel; threads * (n + 1)])), f32_arg(scale), ArgValue::Scalar(n as u128)];
    let result = run(&module, "fill_rows", Launch::threads(threads as u32), &args).unwrap();
    let expected: Vec<f32> = (0..threads * (n + 1)).map(|i| if i / threads < n { (i / threads) as f32 * scale } else { sentinel }).collect();
    assert_eq!(f32s(&result.buffers[0]), expected);
    // n = 0 runs the body never; a negative n too (signed compare).
    for n in [0u128, 0xFFFF_FFFF] {
        let args = [ArgValue::Buffer(f32_bytes(&[sentinel; 32])), f32_arg(scale), ArgValue::Scalar(n)];
        let result = run(&module, "fill_rows", Launch::threads(32), &args).unwrap();
        assert_eq!(f32s(&result.buffers[0]), vec![sentinel; 32]);
    }
}

#[test]
fn device_function_calls_with_several_results() {
    let module = load("device_calls.mir");
    let threads = 48usize;
    let xs = data(threads, 4);
    let divisor = 6u32;
    let args = [
        ArgValue::Buffer(f32_bytes(&xs)),
        ArgValue::Buffer(vec![0; 4 * threads]),
        ArgValue::Buffer(vec![0; 8 * threads]),
        ArgValue::Scalar(u128::from(divisor)),
    ];
    let result = run(&module, "calls_kernel", Launch::threads(threads as u32), &args).unwrap();
    let d = divisor | 1;
    let mut ys = Vec::new();
    let mut pairs = Vec::new();
    for (t, &x) in xs.iter().enumerate() {
        let t = t as u32;
        let y = 0.25f32.mul_add(x, -0.5).mul_add(x, 1.0);
        let (q, r) = (t / d, t % d);
        pairs.extend([q as i32, r as i32]);
        let s = q + r;
        let qr = s / d + s % d;
        ys.push(y + qr as f32);
    }
    assert_eq!(f32s(&result.buffers[1]), ys);
    assert_eq!(i32s(&result.buffers[2]), pairs);
}

#[test]
fn module_globals_in_const_global_and_shared_space() {
    let module = load("globals_const_shared.mir");
    let threads = 32usize;
    let input = data(threads, 5);
    let args = [ArgValue::Buffer(f32_bytes(&input)), ArgValue::Buffer(vec![0; 4 * threads])];
    let result = run(&module, "use_tables", Launch::linear(2, threads as u32), &args).unwrap();
    let weights = [0.5f32, 0.25, 0.125, 0.0625];
    let expected: Vec<f32> = (0..threads)
        .map(|t| {
            let lut = ((t & 7) * (t & 7)) as f64;
            let xw = input[t].mul_add(weights[t & 3], 1.5);
            (f64::from(xw) * 2.5 + lut) as f32
        })
        .collect();
    assert_eq!(f32s(&result.buffers[1]), expected);
    // The global-space globals: `bias` unchanged, `calls` counted every thread of both blocks.
    assert_eq!(result.globals, vec![("bias".to_string(), 1.5f32.to_le_bytes().to_vec()), ("calls".to_string(), 64u32.to_le_bytes().to_vec())]);
}

#[test]
fn generic_addressing_through_casts() {
    let module = load("addrspace_casts.mir");
    let threads = 64usize;
    let data: Vec<i32> = (0..threads as i32).map(|i| i * 3 - 50).collect();
    let args = [ArgValue::Buffer(i32_bytes(&data)), ArgValue::Buffer(vec![0; 4 * 2 * threads])];
    let result = run(&module, "casts_kernel", Launch::threads(threads as u32), &args).unwrap();
    let a: Vec<i32> = data.iter().map(|d| d + 1).collect();
    assert_eq!(i32s(&result.buffers[0]), a, "generic_inc on the global element");
    // b = 2a (generic_inc of the shared slot by a), b2 reads it back, k = 1000.
    let mut expected: Vec<i32> = a.iter().map(|a| 4 * a + 1000).collect();
    expected.extend(&a);
    assert_eq!(i32s(&result.buffers[1]), expected);
}

#[test]
fn undefined_behaviour_in_corpus_kernels_is_reported() {
    // saxpy with n beyond the buffers: the first thread past the end reads out of bounds.
    let module = load("saxpy_f32.mir");
    let args = [ArgValue::Buffer(f32_bytes(&[1.0; 8])), ArgValue::Buffer(f32_bytes(&[2.0; 8])), f32_arg(1.0), ArgValue::Scalar(16)];
    match run(&module, "saxpy", Launch::threads(16), &args) {
        Err(InterpError::Undefined { function, block, what, thread, .. }) => {
            assert_eq!(function, "saxpy");
            assert_eq!(block, "bb.1.body");
            assert!(what.contains("out-of-bounds"), "{what}");
            assert!(thread.starts_with("thread (8, 0, 0)"), "{thread}");
        }
        other => panic!("expected an out-of-bounds access, got {other:?}"),
    }
    // reduce_shared_sum with more threads than its maxntid: a bad launch.
    let module = load("reduce_shared_sum.mir");
    let err = run(&module, "block_sum", Launch::threads(512), &[ArgValue::Buffer(vec![0; 2048]), ArgValue::Buffer(vec![0; 4]), ArgValue::Scalar(4)]);
    assert!(matches!(err, Err(InterpError::BadArguments(ref m)) if m.contains("maxntid")), "{err:?}");
    // Wrong argument count and kinds.
    assert!(matches!(run(&module, "block_sum", Launch::threads(4), &[]), Err(InterpError::BadArguments(_))));
    assert!(matches!(run(&module, "nope", Launch::threads(4), &[]), Err(InterpError::BadArguments(_))));
}

fn ptxc(args: &[&str]) -> backend::cli::Output {
    backend::cli::run(std::iter::once("ptxc").chain(args.iter().copied()))
}

#[test]
fn ptxc_interp_prints_buffers_as_json() {
    let path = corpus_dir().join("saxpy_f32.mir");
    let path = path.to_str().unwrap();
    let out = ptxc(&["interp", path, "--entry", "saxpy", "--block", "4", "--arg", "f32[1,2,3,4]", "--arg", "f32[10;4]", "--arg", "2", "--arg", "3"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["buffers"][1]["param"], "y");
    assert_eq!(report["buffers"][1]["values"], serde_json::json!([12.0, 14.0, 16.0, 10.0]));
    assert!(report["steps"].as_u64().unwrap() > 0);

    // Random arguments from a seed: the same seed prints the same report.
    let random = ptxc(&["interp", path, "--entry", "saxpy", "--grid", "2", "--block", "32", "--seed", "3", "--view", "f32"]);
    assert_eq!(random.code, 0, "{}", random.stderr);
    assert_eq!(random.stdout, ptxc(&["interp", path, "--entry", "saxpy", "--grid", "2", "--block", "32", "--seed", "3", "--view", "f32"]).stdout);
    let report: serde_json::Value = serde_json::from_str(&random.stdout).unwrap();
    assert_eq!(report["buffers"][0]["type"], "f32");

    // Undefined behaviour: one located diagnostic, exit code 1.
    let bad = ptxc(&["interp", path, "--entry", "saxpy", "--block", "4", "--arg", "f32[1,2]", "--arg", "f32[0;4]", "--arg", "2", "--arg", "4"]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("saxpy_f32.mir:32:5: error: undefined behaviour in thread (2, 0, 0)"), "{}", bad.stderr);
    assert!(bad.stderr.contains("%vx:f32 = LOAD.invariant %px"), "{}", bad.stderr);

    // Bad argument specs are reported, not guessed.
    let spec = ptxc(&["interp", path, "--entry", "saxpy", "--arg", "f32[1", "--arg", "f32[1]", "--arg", "2", "--arg", "1"]);
    assert_eq!(spec.code, 1);
    assert!(spec.stderr.contains("--arg 1"), "{}", spec.stderr);
    let count = ptxc(&["interp", path, "--entry", "saxpy", "--arg", "1"]);
    assert!(count.stderr.contains("takes 4 arguments"), "{}", count.stderr);
}

#[test]
fn mutated_modules_never_panic() {
    // Corpus kernels with one random operand, type, operand count or opcode changed:
    // whatever the verifier would say, the interpreter reports an error or runs, and
    // never panics or hangs.
    let tables = tables::nvptx();
    let mut rng = interp::args::Rng::new(99);
    let generic: Vec<backend::mir::Opcode> = tables.opcodes.iter().map(|o| backend::mir::Opcode::Generic(target_desc::tables::OpcodeId(o.id))).collect();
    let mut runs = 0;
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "mir") {
            continue;
        }
        let original = load(&path.file_name().unwrap().to_string_lossy());
        for _ in 0..40 {
            let mut module = original.clone();
            let f = rng.below(module.functions.len() as u64) as usize;
            let function = &mut module.functions[f];
            let values = function.values.len() as u64;
            let b = rng.below(function.blocks.len() as u64) as usize;
            let block = &mut function.blocks[b];
            let i = rng.below(block.insts.len() as u64) as usize;
            let inst = &mut block.insts[i];
            match rng.below(4) {
                0 => {
                    if let Some(backend::mir::Operand::Value(v)) = inst.operands.iter_mut().find(|o| matches!(o, backend::mir::Operand::Value(_))) {
                        *v = backend::mir::ValueId(rng.below(values) as u32);
                    }
                }
                1 => {
                    if let Some(d) = inst.defs.first() {
                        let ty = tables.types[rng.below(tables.types.len() as u64) as usize].id;
                        function.values[d.0 as usize].ty = target_desc::tables::VtId(ty);
                    }
                }
                2 => {
                    inst.operands.pop();
                }
                _ => inst.opcode = generic[rng.below(generic.len() as u64) as usize],
            }
            for kernel in module.functions.iter().filter(|f| f.kind == backend::mir::FunctionKind::Kernel) {
                let args = interp::random_args(kernel, tables, runs);
                let _ = interp::run_kernel(&module, tables, &kernel.name, &Launch::linear(2, 40), &args, 200_000);
                runs += 1;
            }
        }
    }
    assert!(runs > 1000);
}
