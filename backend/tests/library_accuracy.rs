//! Accuracy of the LibCall library's approximate functions (`target-desc/nvptx/library.mir`:
//! `__nv_exp2`, `__nv_exp`, `__nv_log2`, `__nv_log`, `__nv_pow` in f64, `__nv_powf`). mir-spec §3.4 calls FEXP2/FLOG2
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

/// Runs OP on `inputs` (each `operands` values) before and after legalization for each
/// SM; returns the worst distance and the input that gave it.
fn measure(op: &str, ty: &str, operands: usize, inputs: &[Vec<f64>], sms: &[&str]) -> (u64, Vec<f64>) {
    let tables = tables::nvptx();
    let text = kernel(op, ty, operands);
    let module = backend::mir::parser::parse_module(&text, "accuracy.mir", tables).unwrap_or_else(|e| panic!("{}", e.render()));
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
    let launch = Launch { grid: [blocks, 1, 1], block: [THREADS, 1, 1] };
    let fuel = 50_000_000;
    let expected = interp::run_kernel(&module, tables, "k", &launch, &args, fuel).unwrap_or_else(|e| panic!("{op} before legalization: {e}"));
    let mut worst = (0, Vec::new());
    for sm_name in sms {
        let sm = tables.sms.iter().find(|s| s.name == *sm_name).unwrap_or_else(|| panic!("no {sm_name}"));
        let mut legal = module.clone();
        backend::legalize::legalize_module(&mut legal, tables, sm, Source { file: "accuracy.mir", text: &text }, true)
            .unwrap_or_else(|e| panic!("{}", e.iter().map(|e| e.render()).collect::<String>()));
        assert!(legal.functions.len() > 1, "{op} on {ty} is not a library call on {sm_name}: the test measures nothing");
        let got = interp::run_kernel(&legal, tables, "k", &launch, &args, fuel * 20).unwrap_or_else(|e| panic!("{op} after legalization for {sm_name}: {e}"));
        for (k, (a, b)) in expected.buffers[1].chunks(size).zip(got.buffers[1].chunks(size)).enumerate().take(inputs.len()) {
            let (a, b, bits) = if size == 8 {
                (u64::from_le_bytes(a.try_into().unwrap()), u64::from_le_bytes(b.try_into().unwrap()), 64)
            } else {
                (u64::from(u32::from_le_bytes(a.try_into().unwrap())), u64::from(u32::from_le_bytes(b.try_into().unwrap())), 32)
            };
            let d = ulps(a, b, bits);
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

#[test]
fn exp_f64_is_within_two_ulps() {
    let mut rng = Rng(0x51afd7ed558ccd);
    let mut inputs: Vec<Vec<f64>> = specials().into_iter().map(|x| vec![x]).collect();
    for x in [709.78, 709.8, -708.4, -744.5, -745.2, 1e-17, 0.6931471805599453] {
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

#[test]
fn log_f64_is_within_two_ulps() {
    let mut rng = Rng(0x94d049bb133111eb);
    let mut inputs: Vec<Vec<f64>> = specials().into_iter().map(|x| vec![x]).collect();
    for _ in 0..1500 {
        let bits = rng.next() & 0x7fef_ffff_ffff_ffff;
        inputs.push(vec![f64::from_bits(bits)]);
        inputs.push(vec![rng.uniform(0.5, 2.0)]);
    }
    let (worst, at) = measure("FLOG", "f64", 1, &inputs, &["sm_50", "sm_80"]);
    println!("__nv_log: {} inputs, worst {worst} ulp at {at:?}", inputs.len());
    assert!(worst <= 2, "__nv_log is {worst} ulp off at {at:?}");
}

#[test]
fn log2_f64_is_within_two_ulps() {
    let mut rng = Rng(0x2545f4914f6cdd1d);
    let mut inputs: Vec<Vec<f64>> = specials().into_iter().map(|x| vec![x]).collect();
    for x in [1.0 + f64::EPSILON, 1.0 - f64::EPSILON / 2.0, std::f64::consts::SQRT_2, 0.7071067811865476, 0.999, 1.001] {
        inputs.push(vec![x]);
    }
    for _ in 0..1500 {
        // Every binade, subnormals included: random positive bit patterns.
        let bits = rng.next() & 0x7fef_ffff_ffff_ffff;
        inputs.push(vec![f64::from_bits(bits)]);
        inputs.push(vec![rng.uniform(0.5, 2.0)]);
    }
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
