//! Accuracy of the LibCall library's approximate functions (`target-desc/nvptx/library.mir`:
//! `__nv_sin`, `__nv_cos`, `__nv_exp2`, `__nv_exp`, `__nv_log2`, `__nv_log`, `__nv_pow` in
//! f64, `__nv_powf`). mir-spec §3.4 calls FEXP2/FLOG2
//! approximate, so the differential tests cannot compare them bit for bit; here a kernel
//! applying the operation to a buffer runs in the reference interpreter before
//! legalization (the host's libm) and after (the library's MIR, legalized for the SM), on
//! special values and on inputs spread over every binade, and the distance in ulps is
//! bounded. The figures print with `-- --nocapture`.

use backend::interp::{self, ArgValue, Launch};
use backend::mir::verifier::Source;

const THREADS: u32 = 128;

/// Xorshift: deterministic inputs without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// A kernel reading `operands` values of `ty` per thread from `input` and writing
/// `OP(values)` to `output`.
fn kernel(op: &str, ty: &str, operands: usize) -> String {
    let size = if ty == "f64" { 8 } else { 4 };
    let mut body = format!(
        "    %input:p1 = ARG 0\n    %output:p1 = ARG 1\n    %tid:i32 = INTRINSIC @llvm.nvvm.read.ptx.sreg.tid.x\n    %ctaid:i32 = INTRINSIC @llvm.nvvm.read.ptx.sreg.ctaid.x\n    %n:i32 = CONSTANT {THREADS}\n    %base:i32 = MUL %ctaid, %n\n    %g:i32 = ADD %base, %tid\n    %t:i64 = ZERO_EXTEND %g\n    %size:i64 = CONSTANT {size}\n    %count:i64 = CONSTANT {operands}\n    %stride:i64 = MUL %size, %count\n    %inoff:i64 = MUL %t, %stride\n    %outoff:i64 = MUL %t, %size\n    %in:p1 = PTR_ADD %input, %inoff\n    %out:p1 = PTR_ADD %output, %outoff\n"
    );
    let mut names = Vec::new();
    for k in 0..operands {
        body += &format!("    %o{k}:i64 = CONSTANT {}\n    %p{k}:p1 = PTR_ADD %in, %o{k}\n    %x{k}:{ty} = LOAD %p{k}\n", k * size);
        names.push(format!("%x{k}"));
    }
    body += &format!("    %r:{ty} = {op} {}\n    STORE %r, %out\n    RET\n", names.join(", "));
    format!("---\nname: k\nkind: kernel\nparams:\n  - {{ name: input, type: p1 }}\n  - {{ name: output, type: p1 }}\nbody: |\n  bb.0.entry:\n{body}...\n")
}

/// The distance in representable values between two floats of `bits` bits (0 when both
/// are NaN, `u64::MAX` when one is).
fn ulps(a: u64, b: u64, bits: u32) -> u64 {
    let sign = 1u64 << (bits - 1);
    let is_nan = |x: u64| {
        let exponent = ((1u64 << (bits - 1)) - 1) & !(if bits == 64 { (1u64 << 52) - 1 } else { (1u64 << 23) - 1 });
        x & exponent == exponent && x & (if bits == 64 { (1u64 << 52) - 1 } else { (1u64 << 23) - 1 }) != 0
    };
    match (is_nan(a), is_nan(b)) {
        (true, true) => return 0,
        (true, false) | (false, true) => return u64::MAX,
        _ => {}
    }
    // Map to a line where adjacent floats are adjacent integers.
    let line = |x: u64| -> i128 { if x & sign != 0 { -((x & !sign) as i128) } else { x as i128 } };
    (line(a) - line(b)).unsigned_abs() as u64
}

/// The kernel applying OP, its input buffer for `inputs`, and its launch.
fn setup(op: &str, ty: &str, operands: usize, inputs: &[Vec<f64>]) -> (String, [ArgValue; 2], Launch, usize) {
    let text = kernel(op, ty, operands);
    let blocks = inputs.len().div_ceil(THREADS as usize) as u32;
    let total = (blocks * THREADS) as usize;
    let mut bytes = Vec::new();
    for k in 0..total {
        for v in inputs.get(k).cloned().unwrap_or_else(|| vec![1.0; operands]) {
            if ty == "f64" {
                bytes.extend_from_slice(&v.to_le_bytes());
            } else {
                bytes.extend_from_slice(&(v as f32).to_le_bytes());
            }
        }
    }
    let size = if ty == "f64" { 8 } else { 4 };
    let args = [ArgValue::Buffer(bytes), ArgValue::Buffer(vec![0; total * size])];
    (text, args, Launch { grid: [blocks, 1, 1], block: [THREADS, 1, 1] }, size)
}

const FUEL: u64 = 50_000_000;

/// The output bits of OP on `inputs` after legalization for `sm_name` (the library's
/// function), one per input.
fn legalized_outputs(op: &str, ty: &str, operands: usize, inputs: &[Vec<f64>], sm_name: &str) -> Vec<u64> {
    let tables = tables::nvptx();
    let (text, args, launch, size) = setup(op, ty, operands, inputs);
    let module = backend::mir::parser::parse_module(&text, "accuracy.mir", tables).unwrap_or_else(|e| panic!("{}", e.render()));
    let sm = tables.sms.iter().find(|s| s.name == sm_name).unwrap_or_else(|| panic!("no {sm_name}"));
    let mut legal = module.clone();
    backend::legalize::legalize_module(&mut legal, tables, sm, Source { file: "accuracy.mir", text: &text }, true, false)
        .unwrap_or_else(|e| panic!("{}", e.iter().map(|e| e.render()).collect::<String>()));
    assert!(legal.functions.len() > 1, "{op} on {ty} is not a library call on {sm_name}: the test measures nothing");
    let got = interp::run_kernel(&legal, tables, "k", &launch, &args, FUEL * 20).unwrap_or_else(|e| panic!("{op} after legalization for {sm_name}: {e}"));
    bits_of(&got.buffers[1], size, inputs.len())
}

fn bits_of(buffer: &[u8], size: usize, count: usize) -> Vec<u64> {
    buffer.chunks(size).take(count).map(|c| if size == 8 { u64::from_le_bytes(c.try_into().unwrap()) } else { u64::from(u32::from_le_bytes(c.try_into().unwrap())) }).collect()
}

/// Runs OP on `inputs` (each `operands` values) before legalization (the host's libm)
/// and after for each SM; returns the worst distance and the input that gave it.
fn measure(op: &str, ty: &str, operands: usize, inputs: &[Vec<f64>], sms: &[&str]) -> (u64, Vec<f64>) {
    let tables = tables::nvptx();
    let (text, args, launch, size) = setup(op, ty, operands, inputs);
    let module = backend::mir::parser::parse_module(&text, "accuracy.mir", tables).unwrap_or_else(|e| panic!("{}", e.render()));
    let expected = interp::run_kernel(&module, tables, "k", &launch, &args, FUEL).unwrap_or_else(|e| panic!("{op} before legalization: {e}"));
    let expected = bits_of(&expected.buffers[1], size, inputs.len());
    let mut worst = (0, Vec::new());
    for sm_name in sms {
        let got = legalized_outputs(op, ty, operands, inputs, sm_name);
        for (k, (a, b)) in expected.iter().zip(&got).enumerate() {
            let d = ulps(*a, *b, 8 * size as u32);
            if d > worst.0 {
                worst = (d, inputs[k].clone());
            }
        }
    }
    worst
}

fn specials() -> Vec<f64> {
    vec![0.0, -0.0, 1.0, -1.0, 2.0, 0.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MIN_POSITIVE, 5e-324, f64::MAX, -f64::MAX, 1e-310, 3.0, -3.0]
}

#[test]
fn exp2_f64_is_within_two_ulps() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let mut inputs: Vec<Vec<f64>> = specials().into_iter().map(|x| vec![x]).collect();
    for x in [1023.0, 1023.99, 1024.0, -1022.0, -1074.0, -1075.0, -1074.5, -1060.3, 0.5, -0.5, 1e-17, -1e-17] {
        inputs.push(vec![x]);
    }
    for _ in 0..1500 {
        inputs.push(vec![rng.uniform(-1080.0, 1030.0)]);
        inputs.push(vec![rng.uniform(-2.0, 2.0)]);
    }
    let (worst, at) = measure("FEXP2", "f64", 1, &inputs, &["sm_50", "sm_80"]);
    println!("__nv_exp2: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 2, "__nv_exp2 is {worst} ulp off at {at:?}");
}

fn trig_inputs(seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng(seed);
    let mut inputs: Vec<Vec<f64>> = specials().into_iter().map(|x| vec![x]).collect();
    // Near multiples of pi/2 (the hard cases of the reduction), at both reduction paths.
    for x in [std::f64::consts::FRAC_PI_2, std::f64::consts::PI, 3.0 * std::f64::consts::FRAC_PI_2, 1e6, 1048575.9, 1048576.0, 1e22, 1e-300, 1e-8] {
        inputs.push(vec![x]);
        inputs.push(vec![-x]);
    }
    for _ in 0..1000 {
        inputs.push(vec![rng.uniform(-10.0, 10.0)]);
        inputs.push(vec![rng.uniform(-1e6, 1e6)]);
        // every binade up to the largest double
        let bits = rng.next() & 0x7fef_ffff_ffff_ffff | (rng.next() & (1 << 63));
        inputs.push(vec![f64::from_bits(bits)]);
    }
    inputs
}

/// (x, sin x, cos x) correctly rounded, from a 400-digit evaluation independent of the
/// library and of libm (`python3 scripts/gen-library-math.py --trig-references`). The
/// first is the double closest to a multiple of pi/2, where glibc's cos is 7 ulp off.
const TRIG_REFERENCES: &[(f64, f64, f64)] = &[
    (5.319372648326541e+255, 1.0, -4.687165924254628e-19),
    (1e+22, -0.8522008497671888, 0.523214785395139),
    (1e+300, -0.8178819121159085, -0.5753861119575491),
    (8.98846567431158e+307, 0.563127779850884, -0.826369834614148),
    (1048576.0, 0.3304931400217347, 0.943808393901312),
    (1048575.9, 0.2346184343169496, 0.9720875424974148),
    (1000000.0, -0.34999350217129294, 0.9367521275331447),
];

#[test]
fn sin_and_cos_are_within_one_ulp_of_independent_values_at_the_hard_cases() {
    let inputs: Vec<Vec<f64>> = TRIG_REFERENCES.iter().flat_map(|&(x, _, _)| [vec![x], vec![-x]]).collect();
    for (op, pick) in [("FSIN", 1usize), ("FCOS", 2)] {
        for sm in ["sm_50", "sm_80"] {
            let got = legalized_outputs(op, "f64", 1, &inputs, sm);
            for (k, &(x, s, c)) in TRIG_REFERENCES.iter().enumerate() {
                let expected = if pick == 1 { s } else { c };
                // sin is odd, cos even
                let negated = if pick == 1 { -expected } else { expected };
                for (bits, want, at) in [(got[2 * k], expected, x), (got[2 * k + 1], negated, -x)] {
                    let d = ulps(bits, want.to_bits(), 64);
                    assert!(d <= 1, "{op}({at:e}) on {sm} is {} ({d} ulp from {want:e})", f64::from_bits(bits));
                }
            }
        }
    }
}

#[test]
fn sin_f64_is_within_one_ulp_at_every_magnitude() {
    let inputs = trig_inputs(0x1357_9bdf_2468_ace0);
    let (worst, at) = measure("FSIN", "f64", 1, &inputs, &["sm_50", "sm_80"]);
    println!("__nv_sin: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 1, "__nv_sin is {worst} ulp off at {at:?}");
}

#[test]
fn cos_f64_is_within_one_ulp_at_every_magnitude() {
    let inputs = trig_inputs(0x0fed_cba9_8765_4321);
    let (worst, at) = measure("FCOS", "f64", 1, &inputs, &["sm_50", "sm_80"]);
    println!("__nv_cos: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 1, "__nv_cos is {worst} ulp off at {at:?}");
}

#[test]
fn exp_f64_is_within_two_ulps() {
    let mut rng = Rng(0x51afd7ed558ccd);
    let mut inputs: Vec<Vec<f64>> = specials().into_iter().map(|x| vec![x]).collect();
    for x in [709.78, 709.8, -708.4, -744.5, -745.2, 1e-17, std::f64::consts::LN_2] {
        inputs.push(vec![x]);
    }
    for _ in 0..1500 {
        inputs.push(vec![rng.uniform(-750.0, 712.0)]);
        inputs.push(vec![rng.uniform(-2.0, 2.0)]);
    }
    let (worst, at) = measure("FEXP", "f64", 1, &inputs, &["sm_50", "sm_80"]);
    println!("__nv_exp: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 2, "__nv_exp is {worst} ulp off at {at:?}");
}

/// Positive inputs for log and log2: the special values, `near` (around 1), random bit
/// patterns over every binade (subnormals included) and values in [0.5, 2].
fn log_inputs(seed: u64, near: &[f64]) -> Vec<Vec<f64>> {
    let mut rng = Rng(seed);
    let mut inputs: Vec<Vec<f64>> = specials().into_iter().chain(near.iter().copied()).map(|x| vec![x]).collect();
    for _ in 0..1500 {
        let bits = rng.next() & 0x7fef_ffff_ffff_ffff;
        inputs.push(vec![f64::from_bits(bits)]);
        inputs.push(vec![rng.uniform(0.5, 2.0)]);
    }
    inputs
}

#[test]
fn log_f64_is_within_two_ulps() {
    let inputs = log_inputs(0x94d049bb133111eb, &[]);
    let (worst, at) = measure("FLOG", "f64", 1, &inputs, &["sm_50", "sm_80"]);
    println!("__nv_log: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 2, "__nv_log is {worst} ulp off at {at:?}");
}

#[test]
fn log2_f64_is_within_two_ulps() {
    let near = [1.0 + f64::EPSILON, 1.0 - f64::EPSILON / 2.0, std::f64::consts::SQRT_2, std::f64::consts::FRAC_1_SQRT_2, 0.999, 1.001];
    let inputs = log_inputs(0x2545f4914f6cdd1d, &near);
    let (worst, at) = measure("FLOG2", "f64", 1, &inputs, &["sm_50", "sm_80"]);
    println!("__nv_log2: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 2, "__nv_log2 is {worst} ulp off at {at:?}");
}

#[test]
fn pow_f64_is_within_two_ulps_and_follows_c99_special_cases() {
    let mut rng = Rng(0x0123456789abcdef);
    let specials = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-310, 1e300];
    let mut inputs = Vec::new();
    for &x in &specials {
        for &y in &specials {
            inputs.push(vec![x, y]);
        }
    }
    for _ in 0..1500 {
        inputs.push(vec![rng.uniform(0.0, 4.0), rng.uniform(-300.0, 300.0)]);
        inputs.push(vec![rng.uniform(-4.0, 4.0), (rng.uniform(-200.0, 200.0)).round()]);
        inputs.push(vec![rng.uniform(0.0, 1e30), rng.uniform(-10.0, 10.0)]);
        inputs.push(vec![rng.uniform(0.99, 1.01), rng.uniform(-1e5, 1e5)]);
    }
    let (worst, at) = measure("FPOW", "f64", 2, &inputs, &["sm_50", "sm_80"]);
    println!("__nv_pow: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 2, "__nv_pow is {worst} ulp off at {at:?}");
}

#[test]
fn powf_is_within_one_ulp_and_follows_c99_special_cases() {
    let mut rng = Rng(0xdeadbeefcafef00d);
    let specials = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-40];
    let mut inputs = Vec::new();
    for &x in &specials {
        for &y in &specials {
            inputs.push(vec![x, y]);
        }
    }
    for _ in 0..1500 {
        inputs.push(vec![rng.uniform(0.0, 4.0), rng.uniform(-30.0, 30.0)]);
        inputs.push(vec![rng.uniform(-4.0, 4.0), (rng.uniform(-20.0, 20.0)).round()]);
        inputs.push(vec![rng.uniform(0.0, 1e10), rng.uniform(-4.0, 4.0)]);
    }
    let (worst, at) = measure("FPOW", "f32", 2, &inputs, &["sm_80"]);
    println!("__nv_powf: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 1, "__nv_powf is {worst} ulp off at {at:?}");
}
