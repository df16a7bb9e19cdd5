//! Per-instruction-family unit tests of the PTX simulator (`ptxc sim`).
//!
//! Each test runs a tiny hand-written PTX kernel that applies one instruction family
//! to table-driven inputs (one thread per table row, the operands read from global
//! buffers, the results stored to global buffers) and compares the results with
//! values computed INDEPENDENTLY of the simulator: hex constants worked out by hand
//! from the PTX ISA and IEEE 754, Rust's own integer and float arithmetic (`i128`
//! products, `f32::mul_add`, `u32::leading_zeros`, `reverse_bits`, ...), and the
//! `half` crate's f32 to f16/bf16 rounding. "ISA 9.7.1.8 div" cites a section of the PTX
//! ISA ("Parallel Thread Execution ISA", 9.x numbering); where the numbering differs
//! between ISA versions the section is cited by its title.
//!
//! Every kernel is also assembled with ptxas (`-arch=sm_90`) when it is available
//! (`$PTXAS`, the project-local `.tools/` install, or `PATH`), so the PTX under test
//! is PTX that the real toolchain accepts.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::process::Command;

use backend::interp::{ArgValue, Launch, RunResult};
use backend::sim::{Options, SimError, SimErrorKind, Simulator};

// ---------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------

const HEADER: &str = ".version 8.5\n.target sm_90\n.address_size 64\n\n";

fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS").map(PathBuf::from) {
        if p.is_file() {
            return Some(p);
        }
    }
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas");
    if local.is_file() {
        return Some(local);
    }
    let on_path = Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success());
    on_path.then(|| PathBuf::from("ptxas"))
}

/// Asserts that ptxas accepts `ptx` for sm_90 (skipped when ptxas is not installed,
/// except under CI, where a missing ptxas fails the test).
fn assert_assembles(ptx: &str) {
    let Some(ptxas) = find_ptxas() else {
        assert!(std::env::var_os("CI").is_none(), "ptxas not found (set PTXAS or run scripts/test.sh, which installs it); CI is set, so this is a failure, not a skip");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("k.ptx");
    let output = dir.path().join("k.cubin");
    std::fs::write(&input, ptx).unwrap();
    let out = Command::new(&ptxas).arg("-arch=sm_90").arg(&input).arg("-o").arg(&output).output().expect("run ptxas");
    assert!(out.status.success(), "ptxas rejects the test kernel:\n{}\n--- PTX ---\n{}", String::from_utf8_lossy(&out.stderr), numbered(ptx));
}

fn numbered(text: &str) -> String {
    text.lines().enumerate().map(|(i, l)| format!("{:4} | {l}\n", i + 1)).collect()
}

/// Runs kernel `k` of `ptx` (checked with ptxas first).
fn simulate(ptx: &str, grid: u32, block: u32, args: &[ArgValue]) -> Result<RunResult, (SimError, String)> {
    assert_assembles(ptx);
    let sim = Simulator::new(ptx, "t.ptx", tables::nvptx(), Some("sm_90")).unwrap_or_else(|e| panic!("{}\n{}", e.render("t.ptx", ptx), numbered(ptx)));
    let launch = Launch { grid: [grid, 1, 1], block: [block, 1, 1] };
    sim.run("k", &launch, args, &Options::default()).map_err(|e| {
        let rendered = sim.render_error(&e);
        (e, rendered)
    })
}

fn run_ok(ptx: &str, grid: u32, block: u32, args: &[ArgValue]) -> RunResult {
    simulate(ptx, grid, block, args).unwrap_or_else(|(_, rendered)| panic!("{rendered}\n{}", numbered(ptx)))
}

fn bytes_of(values: &[u64], size: usize) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()[..size].to_vec()).collect()
}

fn values_of(bytes: &[u8], size: usize) -> Vec<u64> {
    bytes
        .chunks(size)
        .map(|c| {
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(c);
            u64::from_le_bytes(raw)
        })
        .collect()
}

/// The size in bytes of a PTX register type (`b16`, `f32`, `b64`, ...).
fn size_of(ty: &str) -> usize {
    let digits: String = ty.chars().filter(|c| c.is_ascii_digit()).collect();
    digits.parse::<usize>().unwrap() / 8
}

/// An elementwise kernel: thread `i` loads operand `%a{k}` (of type `ins[k]`) from
/// row `i` of buffer `in{k}`, runs `body`, and stores `%d{k}` (type `outs[k]`) to row
/// `i` of buffer `out{k}`. Scratch registers: `%p<16>` (pred), `%h<16>` (b16),
/// `%r<32>` (b32), `%rd<32>` (b64), `%f<16>` (f32), `%fd<16>` (f64).
fn map_kernel(ins: &[&str], outs: &[&str], body: &str, rows: usize) -> String {
    let mut params = Vec::new();
    for k in 0..ins.len() {
        params.push(format!(".param .u64 in{k}"));
    }
    for k in 0..outs.len() {
        params.push(format!(".param .u64 out{k}"));
    }
    let mut s = String::from(HEADER);
    s += &format!(".visible .entry k({})\n{{\n", params.join(", "));
    s += "\t.reg .pred %p<16>;\n\t.reg .b16 %h<16>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<32>;\n\t.reg .f32 %f<16>;\n\t.reg .f64 %fd<16>;\n";
    s += "\t.reg .b32 %idx, %nthreads, %block;\n\t.reg .b64 %ptr, %off;\n\t.reg .pred %out_of_range;\n";
    for (k, t) in ins.iter().enumerate() {
        s += &format!("\t.reg .{t} %a{k};\n");
    }
    for (k, t) in outs.iter().enumerate() {
        s += &format!("\t.reg .{t} %d{k};\n");
    }
    s += "\tmov.u32 %idx, %tid.x;\n\tmov.u32 %nthreads, %ntid.x;\n\tmov.u32 %block, %ctaid.x;\n\tmad.lo.s32 %idx, %block, %nthreads, %idx;\n";
    s += &format!("\tsetp.ge.u32 %out_of_range, %idx, {rows};\n\t@%out_of_range ret;\n");
    for (k, t) in ins.iter().enumerate() {
        let size = size_of(t);
        s += &format!("\tld.param.u64 %ptr, [in{k}];\n\tcvta.to.global.u64 %ptr, %ptr;\n\tmul.wide.u32 %off, %idx, {size};\n\tadd.s64 %ptr, %ptr, %off;\n\tld.global.{t} %a{k}, [%ptr];\n");
    }
    s += "\t// ---- body ----\n";
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        s += &format!("\t{line}\n");
    }
    s += "\t// ---- end ----\n";
    for (k, t) in outs.iter().enumerate() {
        let size = size_of(t);
        s += &format!("\tld.param.u64 %ptr, [out{k}];\n\tcvta.to.global.u64 %ptr, %ptr;\n\tmul.wide.u32 %off, %idx, {size};\n\tadd.s64 %ptr, %ptr, %off;\n\tst.global.{t} [%ptr], %d{k};\n");
    }
    s += "\tret;\n}\n";
    s
}

/// Runs [`map_kernel`] on `columns` (one per input operand, all of the same length)
/// and returns one column per output.
fn map(ins: &[&str], outs: &[&str], body: &str, columns: &[Vec<u64>]) -> Vec<Vec<u64>> {
    assert_eq!(ins.len(), columns.len());
    let rows = columns[0].len();
    assert!(columns.iter().all(|c| c.len() == rows));
    let ptx = map_kernel(ins, outs, body, rows);
    let mut args: Vec<ArgValue> = ins.iter().zip(columns).map(|(t, c)| ArgValue::Buffer(bytes_of(c, size_of(t)))).collect();
    args.extend(outs.iter().map(|t| ArgValue::Buffer(vec![0xA5; rows * size_of(t)])));
    let block = rows.min(256) as u32;
    let grid = rows.div_ceil(256) as u32;
    let result = run_ok(&ptx, grid, block, &args);
    outs.iter().enumerate().map(|(k, t)| values_of(&result.buffers[ins.len() + k], size_of(t))).collect()
}

/// How a result is compared with its expectation.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Eq {
    /// Bit for bit.
    Bits,
    /// Bit for bit, except that any NaN of the format matches any NaN.
    F16,
    BF16,
    F32,
    F64,
}

fn is_nan_bits(kind: Eq, v: u64) -> bool {
    match kind {
        Eq::F16 => v & 0x7C00 == 0x7C00 && v & 0x3FF != 0,
        Eq::BF16 => v & 0x7F80 == 0x7F80 && v & 0x7F != 0,
        Eq::F32 => f32::from_bits(v as u32).is_nan(),
        Eq::F64 => f64::from_bits(v).is_nan(),
        Eq::Bits => false,
    }
}

fn same(kind: Eq, got: u64, expected: u64) -> bool {
    got == expected || (is_nan_bits(kind, got) && is_nan_bits(kind, expected))
}

/// Compares a column of results with expectations, reporting every mismatching row
/// with its inputs.
fn check(what: &str, kind: Eq, inputs: &[Vec<u64>], got: &[u64], expected: &[u64]) {
    assert_eq!(got.len(), expected.len(), "{what}: row counts");
    let mut failures = Vec::new();
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        if !same(kind, g, e) {
            let operands: Vec<String> = inputs.iter().map(|c| format!("{:#x}", c[i])).collect();
            failures.push(format!("  row {i}: inputs ({}) expected {e:#x}, got {g:#x}", operands.join(", ")));
        }
    }
    assert!(failures.is_empty(), "{what}: {} of {} rows differ:\n{}", failures.len(), got.len(), failures.join("\n"));
}

/// Deterministic pseudo-random 64-bit values (xorshift64*), to widen the tables.
fn pseudo_random(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            s.wrapping_mul(0x2545_F491_4F6C_DD1D)
        })
        .collect()
}

/// All ordered pairs of `values` as two columns.
fn pairs(values: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in values {
        for &y in values {
            a.push(x);
            b.push(y);
        }
    }
    (a, b)
}

fn f32_bits(x: f32) -> u64 {
    u64::from(x.to_bits())
}

fn f64_bits(x: f64) -> u64 {
    x.to_bits()
}

fn as_f32(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

fn as_f64(v: u64) -> f64 {
    f64::from_bits(v)
}

/// Interesting 32-bit integers: zero, ones, the signed extremes, powers of two and
/// their neighbours, plus pseudo-random values.
fn int32_corners(seed: u64, random: usize) -> Vec<u64> {
    let mut v: Vec<u64> = vec![0, 1, 2, 3, 7, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0xFFFF_FFFF, 0xFFFF_FFFE, 0xFFFF_FFF9, 0x0001_0000, 0xFFFF, 0x1234_5678, 0xDEAD_BEEF];
    v.extend(pseudo_random(seed, random).into_iter().map(|x| x & 0xFFFF_FFFF));
    v
}

fn int64_corners(seed: u64, random: usize) -> Vec<u64> {
    let mut v: Vec<u64> = vec![0, 1, 3, u64::MAX, u64::MAX - 1, i64::MAX as u64, i64::MIN as u64, (i64::MIN as u64) + 1, 0xFFFF_FFFF, 0x1_0000_0000, 0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210];
    v.extend(pseudo_random(seed, random));
    v
}

fn s32(v: u64) -> i32 {
    v as u32 as i32
}

fn u32v(x: i64) -> u64 {
    u64::from(x as u32)
}

// ---------------------------------------------------------------------------------
// Integer arithmetic (ISA 9.7.1)
// ---------------------------------------------------------------------------------

/// ISA 9.7.1.1 add, 9.7.1.2 sub (`.sat` clamps to MININT..MAXINT, s32 only), 9.7.1.3
/// mul (`.hi`: t<2n-1..n>, `.lo`: t<n-1..0>, `.wide`: the whole 2n-bit product).
#[test]
fn integer_add_sub_mul_lo_hi_wide_32_bit() {
    let (a, b) = pairs(&int32_corners(1, 6));
    let body = "
        add.s32 %d0, %a0, %a1;
        sub.s32 %d1, %a0, %a1;
        add.sat.s32 %d2, %a0, %a1;
        sub.sat.s32 %d3, %a0, %a1;
        mul.lo.s32 %d4, %a0, %a1;
        mul.hi.s32 %d5, %a0, %a1;
        mul.hi.u32 %d6, %a0, %a1;
        mul.wide.s32 %d7, %a0, %a1;
        mul.wide.u32 %d8, %a0, %a1;
        add.u32 %d9, %a0, %a1;
    ";
    let outs = ["b32", "b32", "b32", "b32", "b32", "b32", "b32", "b64", "b64", "b32"];
    let got = map(&["b32", "b32"], &outs, body, &[a.clone(), b.clone()]);
    let inputs = [a.clone(), b.clone()];
    let rows = || a.iter().zip(&b).map(|(&x, &y)| (s32(x), s32(y), x as u32, y as u32));
    let sat = |v: i64| u32v(v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)));
    check("add.s32", Eq::Bits, &inputs, &got[0], &rows().map(|(x, y, _, _)| u32v(i64::from(x.wrapping_add(y)))).collect::<Vec<_>>());
    check("sub.s32", Eq::Bits, &inputs, &got[1], &rows().map(|(x, y, _, _)| u32v(i64::from(x.wrapping_sub(y)))).collect::<Vec<_>>());
    check("add.sat.s32", Eq::Bits, &inputs, &got[2], &rows().map(|(x, y, _, _)| sat(i64::from(x) + i64::from(y))).collect::<Vec<_>>());
    check("sub.sat.s32", Eq::Bits, &inputs, &got[3], &rows().map(|(x, y, _, _)| sat(i64::from(x) - i64::from(y))).collect::<Vec<_>>());
    check("mul.lo.s32", Eq::Bits, &inputs, &got[4], &rows().map(|(x, y, _, _)| u32v(i64::from(x.wrapping_mul(y)))).collect::<Vec<_>>());
    check("mul.hi.s32", Eq::Bits, &inputs, &got[5], &rows().map(|(x, y, _, _)| u32v((i64::from(x) * i64::from(y)) >> 32)).collect::<Vec<_>>());
    check("mul.hi.u32", Eq::Bits, &inputs, &got[6], &rows().map(|(_, _, x, y)| (u64::from(x) * u64::from(y)) >> 32).collect::<Vec<_>>());
    check("mul.wide.s32", Eq::Bits, &inputs, &got[7], &rows().map(|(x, y, _, _)| (i64::from(x) * i64::from(y)) as u64).collect::<Vec<_>>());
    check("mul.wide.u32", Eq::Bits, &inputs, &got[8], &rows().map(|(_, _, x, y)| u64::from(x) * u64::from(y)).collect::<Vec<_>>());
    check("add.u32", Eq::Bits, &inputs, &got[9], &rows().map(|(_, _, x, y)| u64::from(x.wrapping_add(y))).collect::<Vec<_>>());
    // Hand-worked corners: 0x7fffffff + 1 saturates; (-2^31) * (-2^31) = 2^62.
    let row = a.iter().zip(&b).position(|(&x, &y)| x == 0x7FFF_FFFF && y == 1).unwrap();
    assert_eq!((got[0][row], got[2][row]), (0x8000_0000, 0x7FFF_FFFF));
    let row = a.iter().zip(&b).position(|(&x, &y)| x == 0x8000_0000 && y == 0x8000_0000).unwrap();
    assert_eq!((got[5][row], got[6][row], got[7][row]), (0x4000_0000, 0x4000_0000, 0x4000_0000_0000_0000));
}

/// ISA 9.7.1.1-9.7.1.3 on 64-bit operands: `mul.hi` of s64/u64 is bits 127..64 of the
/// 128-bit product.
#[test]
fn integer_add_sub_mul_64_bit() {
    let (a, b) = pairs(&int64_corners(2, 5));
    let body = "
        add.s64 %d0, %a0, %a1;
        sub.s64 %d1, %a0, %a1;
        mul.lo.s64 %d2, %a0, %a1;
        mul.hi.s64 %d3, %a0, %a1;
        mul.hi.u64 %d4, %a0, %a1;
        mul.lo.u64 %d5, %a0, %a1;
    ";
    let got = map(&["b64", "b64"], &["b64"; 6], body, &[a.clone(), b.clone()]);
    let inputs = [a.clone(), b.clone()];
    let rows = || a.iter().zip(&b).map(|(&x, &y)| (x, y));
    check("add.s64", Eq::Bits, &inputs, &got[0], &rows().map(|(x, y)| x.wrapping_add(y)).collect::<Vec<_>>());
    check("sub.s64", Eq::Bits, &inputs, &got[1], &rows().map(|(x, y)| x.wrapping_sub(y)).collect::<Vec<_>>());
    check("mul.lo.s64", Eq::Bits, &inputs, &got[2], &rows().map(|(x, y)| (x as i64).wrapping_mul(y as i64) as u64).collect::<Vec<_>>());
    check("mul.hi.s64", Eq::Bits, &inputs, &got[3], &rows().map(|(x, y)| ((i128::from(x as i64) * i128::from(y as i64)) >> 64) as u64).collect::<Vec<_>>());
    check("mul.hi.u64", Eq::Bits, &inputs, &got[4], &rows().map(|(x, y)| ((u128::from(x) * u128::from(y)) >> 64) as u64).collect::<Vec<_>>());
    check("mul.lo.u64", Eq::Bits, &inputs, &got[5], &rows().map(|(x, y)| x.wrapping_mul(y)).collect::<Vec<_>>());
    // (2^64 - 1)^2 = 2^128 - 2^65 + 1: high word 0xffff_ffff_ffff_fffe.
    let row = rows().position(|(x, y)| x == u64::MAX && y == u64::MAX).unwrap();
    assert_eq!(got[4][row], 0xFFFF_FFFF_FFFF_FFFE);
    assert_eq!(got[3][row], 0, "(-1) * (-1) = 1: signed high word 0");
}

/// ISA 9.7.1.4 mad: `t = a * b; d = t<n-1..0> + c` (`.lo`), `t<2n-1..n> + c` (`.hi`),
/// `t + c` with a 2n-bit `c` (`.wide`); `.sat` (`mad.hi.sat.s32` only) clamps the sum to
/// MININT..MAXINT.
#[test]
fn integer_mad_lo_hi_wide_and_hi_sat() {
    let corners = int32_corners(3, 4);
    let (a, b) = pairs(&corners);
    let c: Vec<u64> = (0..a.len()).map(|i| corners[(i * 7 + 3) % corners.len()]).collect();
    let wide = int64_corners(4, 3);
    let c64: Vec<u64> = (0..a.len()).map(|i| wide[(i * 5 + 1) % wide.len()]).collect();
    let body = "
        mad.lo.s32 %d0, %a0, %a1, %a2;
        mad.hi.s32 %d1, %a0, %a1, %a2;
        mad.hi.u32 %d2, %a0, %a1, %a2;
        mad.wide.s32 %d3, %a0, %a1, %a3;
        mad.wide.u32 %d4, %a0, %a1, %a3;
        mad.hi.sat.s32 %d5, %a0, %a1, %a2;
    ";
    let columns = [a.clone(), b.clone(), c.clone(), c64.clone()];
    let got = map(&["b32", "b32", "b32", "b64"], &["b32", "b32", "b32", "b64", "b64", "b32"], body, &columns);
    let n = a.len();
    let (sa, sb, sc) = (|i: usize| i64::from(s32(a[i])), |i: usize| i64::from(s32(b[i])), |i: usize| i64::from(s32(c[i])));
    let (ua, ub) = (|i: usize| a[i], |i: usize| b[i]);
    let expect = |f: &dyn Fn(usize) -> u64| (0..n).map(f).collect::<Vec<_>>();
    check("mad.lo.s32", Eq::Bits, &columns, &got[0], &expect(&|i| u32v((sa(i) * sb(i)).wrapping_add(sc(i)))));
    check("mad.hi.s32", Eq::Bits, &columns, &got[1], &expect(&|i| u32v(((sa(i) * sb(i)) >> 32) + sc(i))));
    check("mad.hi.u32", Eq::Bits, &columns, &got[2], &expect(&|i| ((ua(i) * ub(i)) >> 32).wrapping_add(c[i]) & 0xFFFF_FFFF));
    check("mad.wide.s32", Eq::Bits, &columns, &got[3], &expect(&|i| ((sa(i) * sb(i)) as u64).wrapping_add(c64[i])));
    check("mad.wide.u32", Eq::Bits, &columns, &got[4], &expect(&|i| (ua(i) * ub(i)).wrapping_add(c64[i])));
    check("mad.hi.sat.s32", Eq::Bits, &columns, &got[5], &expect(&|i| u32v((((sa(i) * sb(i)) >> 32) + sc(i)).clamp(i64::from(i32::MIN), i64::from(i32::MAX)))));

    // 64-bit mad (the product's halves from i128 arithmetic).
    let (a, b) = pairs(&int64_corners(5, 3));
    let c: Vec<u64> = (0..a.len()).map(|i| a[(i * 3 + 1) % a.len()] ^ 0x5555_5555_5555_5555).collect();
    let body = "
        mad.lo.s64 %d0, %a0, %a1, %a2;
        mad.hi.s64 %d1, %a0, %a1, %a2;
        mad.hi.u64 %d2, %a0, %a1, %a2;
    ";
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b64"; 3], &["b64"; 3], body, &columns);
    let n = a.len();
    let expect = |f: &dyn Fn(usize) -> u64| (0..n).map(f).collect::<Vec<_>>();
    check("mad.lo.s64", Eq::Bits, &columns, &got[0], &expect(&|i| a[i].wrapping_mul(b[i]).wrapping_add(c[i])));
    check("mad.hi.s64", Eq::Bits, &columns, &got[1], &expect(&|i| (((i128::from(a[i] as i64) * i128::from(b[i] as i64)) >> 64) as u64).wrapping_add(c[i])));
    check("mad.hi.u64", Eq::Bits, &columns, &got[2], &expect(&|i| (((u128::from(a[i]) * u128::from(b[i])) >> 64) as u64).wrapping_add(c[i])));
}

/// ISA 9.7.1.8 div and 9.7.1.9 rem on defined inputs: the quotient truncates toward
/// zero and the remainder takes the dividend's sign (the ISA calls negative
/// remainders machine-dependent; NVIDIA GPUs, like C, truncate).
#[test]
fn integer_div_rem_truncate_toward_zero() {
    let (a, b) = pairs(&int32_corners(6, 5));
    let keep: Vec<usize> = (0..a.len()).filter(|&i| b[i] != 0 && !(a[i] == 0x8000_0000 && b[i] == 0xFFFF_FFFF)).collect();
    let (a, b): (Vec<u64>, Vec<u64>) = keep.iter().map(|&i| (a[i], b[i])).unzip();
    let body = "
        div.s32 %d0, %a0, %a1;
        rem.s32 %d1, %a0, %a1;
        div.u32 %d2, %a0, %a1;
        rem.u32 %d3, %a0, %a1;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["b32", "b32"], &["b32"; 4], body, &columns);
    let rows = || a.iter().zip(&b).map(|(&x, &y)| (s32(x), s32(y), x as u32, y as u32));
    check("div.s32", Eq::Bits, &columns, &got[0], &rows().map(|(x, y, _, _)| u32v(i64::from(x / y))).collect::<Vec<_>>());
    check("rem.s32", Eq::Bits, &columns, &got[1], &rows().map(|(x, y, _, _)| u32v(i64::from(x % y))).collect::<Vec<_>>());
    check("div.u32", Eq::Bits, &columns, &got[2], &rows().map(|(_, _, x, y)| u64::from(x / y)).collect::<Vec<_>>());
    check("rem.u32", Eq::Bits, &columns, &got[3], &rows().map(|(_, _, x, y)| u64::from(x % y)).collect::<Vec<_>>());
    // -7 / 2 = -3 remainder -1 (hand-worked).
    let row = rows().position(|(x, y, _, _)| x == -7 && y == 2).unwrap();
    assert_eq!((got[0][row], got[1][row]), (0xFFFF_FFFD, 0xFFFF_FFFF));

    let (a, b) = pairs(&int64_corners(7, 4));
    let keep: Vec<usize> = (0..a.len()).filter(|&i| b[i] != 0 && !(a[i] == i64::MIN as u64 && b[i] == u64::MAX)).collect();
    let (a, b): (Vec<u64>, Vec<u64>) = keep.iter().map(|&i| (a[i], b[i])).unzip();
    let body = "
        div.s64 %d0, %a0, %a1;
        rem.s64 %d1, %a0, %a1;
        div.u64 %d2, %a0, %a1;
        rem.u64 %d3, %a0, %a1;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["b64", "b64"], &["b64"; 4], body, &columns);
    let rows = || a.iter().zip(&b).map(|(&x, &y)| (x, y));
    check("div.s64", Eq::Bits, &columns, &got[0], &rows().map(|(x, y)| ((x as i64) / (y as i64)) as u64).collect::<Vec<_>>());
    check("rem.s64", Eq::Bits, &columns, &got[1], &rows().map(|(x, y)| ((x as i64) % (y as i64)) as u64).collect::<Vec<_>>());
    check("div.u64", Eq::Bits, &columns, &got[2], &rows().map(|(x, y)| x / y).collect::<Vec<_>>());
    check("rem.u64", Eq::Bits, &columns, &got[3], &rows().map(|(x, y)| x % y).collect::<Vec<_>>());

    // 16-bit: -32768 / 3 = -10922 rem -2; 0xffff / 7 (unsigned) = 9362 rem 1.
    let a = vec![0x8000u64, 0xFFFF, 0x7FFF, 0x0064];
    let b = vec![0x0003u64, 0x0007, 0xFFFF, 0xFFF9];
    let body = "
        div.s16 %d0, %a0, %a1;
        rem.s16 %d1, %a0, %a1;
        div.u16 %d2, %a0, %a1;
        rem.u16 %d3, %a0, %a1;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["b16", "b16"], &["b16"; 4], body, &columns);
    let s16 = |v: u64| v as u16 as i16;
    let rows = || a.iter().zip(&b).map(|(&x, &y)| (x, y));
    check("div.s16", Eq::Bits, &columns, &got[0], &rows().map(|(x, y)| u64::from((s16(x) / s16(y)) as u16)).collect::<Vec<_>>());
    check("rem.s16", Eq::Bits, &columns, &got[1], &rows().map(|(x, y)| u64::from((s16(x) % s16(y)) as u16)).collect::<Vec<_>>());
    check("div.u16", Eq::Bits, &columns, &got[2], &rows().map(|(x, y)| x / y).collect::<Vec<_>>());
    check("rem.u16", Eq::Bits, &columns, &got[3], &rows().map(|(x, y)| x % y).collect::<Vec<_>>());
    assert_eq!((got[0][0], got[1][0]), (u64::from((-10922i16) as u16), u64::from((-2i16) as u16)));
    assert_eq!((got[2][1], got[3][1]), (9362, 1));
}

/// ISA 9.7.1.8/9.7.1.9: "Division by zero yields an unspecified, machine-specific
/// value", and the ISA gives no value for the signed overflow MININT / -1 either. The
/// simulator is stricter by design (backend/src/sim/mod.rs: "division by zero and the
/// signed division overflow are undefined behaviour") and reports both, located.
#[test]
fn integer_division_by_zero_and_signed_overflow_are_reported() {
    for (op, ty, a, b, needle) in [
        ("div", "u32", 5u64, 0u64, "division by zero"),
        ("rem", "s32", 5, 0, "remainder by zero"),
        ("div", "s64", 1, 0, "division by zero"),
        ("div", "s32", 0x8000_0000, 0xFFFF_FFFF, "overflows"),
        ("rem", "s32", 0x8000_0000, 0xFFFF_FFFF, "overflows"),
    ] {
        let reg = if ty.ends_with("64") { "b64" } else { "b32" };
        let ptx = map_kernel(&[reg, reg], &[reg], &format!("{op}.{ty} %d0, %a0, %a1;"), 1);
        let size = size_of(reg);
        let args = [ArgValue::Buffer(bytes_of(&[a], size)), ArgValue::Buffer(bytes_of(&[b], size)), ArgValue::Buffer(vec![0; size])];
        match simulate(&ptx, 1, 1, &args) {
            Ok(_) => panic!("{op}.{ty} {a:#x}, {b:#x}: the simulator did not report it"),
            Err((e, rendered)) => {
                assert_eq!(e.kind, SimErrorKind::Undefined, "{rendered}");
                assert!(e.message.contains(needle), "{op}.{ty}: {rendered}");
                assert!(rendered.contains(&format!("{op}.{ty} %d0, %a0, %a1")), "the error shows the instruction's line:\n{rendered}");
            }
        }
    }
}

/// ISA 9.7.1.10 abs, 9.7.1.11 neg, 9.7.1.12 min, 9.7.1.13 max. abs and neg of MININT
/// are MININT (two's complement, no saturation); `max.relu.s32` clamps negative
/// results to 0.
#[test]
fn integer_min_max_abs_neg_with_int_min() {
    let (a, b) = pairs(&int32_corners(8, 4));
    let body = "
        min.s32 %d0, %a0, %a1;
        max.s32 %d1, %a0, %a1;
        min.u32 %d2, %a0, %a1;
        max.u32 %d3, %a0, %a1;
        abs.s32 %d4, %a0;
        neg.s32 %d5, %a0;
        max.relu.s32 %d6, %a0, %a1;
        min.relu.s32 %d7, %a0, %a1;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["b32", "b32"], &["b32"; 8], body, &columns);
    let rows = || a.iter().zip(&b).map(|(&x, &y)| (s32(x), s32(y), x as u32, y as u32));
    check("min.s32", Eq::Bits, &columns, &got[0], &rows().map(|(x, y, _, _)| u32v(i64::from(x.min(y)))).collect::<Vec<_>>());
    check("max.s32", Eq::Bits, &columns, &got[1], &rows().map(|(x, y, _, _)| u32v(i64::from(x.max(y)))).collect::<Vec<_>>());
    check("min.u32", Eq::Bits, &columns, &got[2], &rows().map(|(_, _, x, y)| u64::from(x.min(y))).collect::<Vec<_>>());
    check("max.u32", Eq::Bits, &columns, &got[3], &rows().map(|(_, _, x, y)| u64::from(x.max(y))).collect::<Vec<_>>());
    check("abs.s32", Eq::Bits, &columns, &got[4], &rows().map(|(x, _, _, _)| u32v(i64::from(x.wrapping_abs()))).collect::<Vec<_>>());
    check("neg.s32", Eq::Bits, &columns, &got[5], &rows().map(|(x, _, _, _)| u32v(i64::from(x.wrapping_neg()))).collect::<Vec<_>>());
    check("max.relu.s32", Eq::Bits, &columns, &got[6], &rows().map(|(x, y, _, _)| u32v(i64::from(x.max(y).max(0)))).collect::<Vec<_>>());
    check("min.relu.s32", Eq::Bits, &columns, &got[7], &rows().map(|(x, y, _, _)| u32v(i64::from(x.min(y).max(0)))).collect::<Vec<_>>());
    let row = a.iter().position(|&x| x == 0x8000_0000).unwrap();
    assert_eq!((got[4][row], got[5][row]), (0x8000_0000, 0x8000_0000), "abs/neg of MININT");

    let (a, b) = pairs(&int64_corners(9, 3));
    let body = "
        min.s64 %d0, %a0, %a1;
        max.u64 %d1, %a0, %a1;
        abs.s64 %d2, %a0;
        neg.s64 %d3, %a0;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["b64", "b64"], &["b64"; 4], body, &columns);
    let rows = || a.iter().zip(&b).map(|(&x, &y)| (x, y));
    check("min.s64", Eq::Bits, &columns, &got[0], &rows().map(|(x, y)| (x as i64).min(y as i64) as u64).collect::<Vec<_>>());
    check("max.u64", Eq::Bits, &columns, &got[1], &rows().map(|(x, y)| x.max(y)).collect::<Vec<_>>());
    check("abs.s64", Eq::Bits, &columns, &got[2], &rows().map(|(x, _)| (x as i64).wrapping_abs() as u64).collect::<Vec<_>>());
    check("neg.s64", Eq::Bits, &columns, &got[3], &rows().map(|(x, _)| (x as i64).wrapping_neg() as u64).collect::<Vec<_>>());
}

/// ISA 9.7.8.8 shl and 9.7.8.9 shr: "Shift amounts greater than the register width N
/// are clamped to N" (the amount is an unsigned 32-bit value whatever the type): shl
/// and shr.u give 0, shr.s the sign bit everywhere.
#[test]
fn shifts_clamp_amounts_at_the_register_width() {
    let values = [0x8000_0001u64, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x1234_5678, 1];
    let amounts = [0u64, 1, 4, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256, 0x8000_0000, 0xFFFF_FFFF];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &v in &values {
        for &s in &amounts {
            a.push(v);
            b.push(s);
        }
    }
    // 32-bit.
    let body = "
        shl.b32 %d0, %a0, %a1;
        shr.u32 %d1, %a0, %a1;
        shr.s32 %d2, %a0, %a1;
        shr.b32 %d3, %a0, %a1;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["b32", "b32"], &["b32"; 4], body, &columns);
    let rows = || a.iter().zip(&b).map(|(&x, &s)| (x as u32, s as u32));
    check("shl.b32", Eq::Bits, &columns, &got[0], &rows().map(|(x, s)| u64::from(x.checked_shl(s).unwrap_or(0))).collect::<Vec<_>>());
    check("shr.u32", Eq::Bits, &columns, &got[1], &rows().map(|(x, s)| u64::from(x.checked_shr(s).unwrap_or(0))).collect::<Vec<_>>());
    check("shr.s32", Eq::Bits, &columns, &got[2], &rows().map(|(x, s)| u64::from(((x as i32) >> s.min(31)) as u32)).collect::<Vec<_>>());
    check("shr.b32", Eq::Bits, &columns, &got[3], &rows().map(|(x, s)| u64::from(x.checked_shr(s).unwrap_or(0))).collect::<Vec<_>>());
    // 64-bit values (the 32-bit values replicated with a twist), amount still .u32.
    let a64: Vec<u64> = a.iter().map(|&x| (x << 32) | (x ^ 0xA5A5_A5A5)).collect();
    let body = "
        shl.b64 %d0, %a0, %a1;
        shr.u64 %d1, %a0, %a1;
        shr.s64 %d2, %a0, %a1;
    ";
    let columns = [a64.clone(), b.clone()];
    let got = map(&["b64", "b32"], &["b64"; 3], body, &columns);
    let rows = || a64.iter().zip(&b).map(|(&x, &s)| (x, s as u32));
    check("shl.b64", Eq::Bits, &columns, &got[0], &rows().map(|(x, s)| x.checked_shl(s).unwrap_or(0)).collect::<Vec<_>>());
    check("shr.u64", Eq::Bits, &columns, &got[1], &rows().map(|(x, s)| x.checked_shr(s).unwrap_or(0)).collect::<Vec<_>>());
    check("shr.s64", Eq::Bits, &columns, &got[2], &rows().map(|(x, s)| ((x as i64) >> s.min(63)) as u64).collect::<Vec<_>>());
    // 16-bit.
    let a16: Vec<u64> = a.iter().map(|&x| x & 0xFFFF).collect();
    let body = "
        shl.b16 %d0, %a0, %a1;
        shr.u16 %d1, %a0, %a1;
        shr.s16 %d2, %a0, %a1;
    ";
    let columns = [a16.clone(), b.clone()];
    let got = map(&["b16", "b32"], &["b16"; 3], body, &columns);
    let rows = || a16.iter().zip(&b).map(|(&x, &s)| (x as u16, s as u32));
    check("shl.b16", Eq::Bits, &columns, &got[0], &rows().map(|(x, s)| u64::from(x.checked_shl(s).unwrap_or(0))).collect::<Vec<_>>());
    check("shr.u16", Eq::Bits, &columns, &got[1], &rows().map(|(x, s)| u64::from(x.checked_shr(s).unwrap_or(0))).collect::<Vec<_>>());
    check("shr.s16", Eq::Bits, &columns, &got[2], &rows().map(|(x, s)| u64::from(((x as i16) >> s.min(15)) as u16)).collect::<Vec<_>>());
}

/// ISA 9.7.8.7 shf: `n = .clamp ? min(c, 32) : c & 0x1f`; shf.l gives the upper 32
/// bits of `{b, a} << n`, shf.r the lower 32 bits of `{b, a} >> n`.
#[test]
fn funnel_shifts_wrap_and_clamp() {
    let lo = [0x8765_4321u64, 0xFFFF_FFFF, 0, 0x0000_0001];
    let hi = [0x1234_5678u64, 0x8000_0000, 0xFFFF_FFFF];
    let amounts = [0u64, 1, 8, 31, 32, 33, 40, 63, 64, 0xFFFF_FFFF];
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &x in &lo {
        for &y in &hi {
            for &n in &amounts {
                a.push(x);
                b.push(y);
                c.push(n);
            }
        }
    }
    let body = "
        shf.l.wrap.b32 %d0, %a0, %a1, %a2;
        shf.l.clamp.b32 %d1, %a0, %a1, %a2;
        shf.r.wrap.b32 %d2, %a0, %a1, %a2;
        shf.r.clamp.b32 %d3, %a0, %a1, %a2;
    ";
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b32"; 3], &["b32"; 4], body, &columns);
    let joined = |i: usize| (u128::from(b[i]) << 32) | u128::from(a[i]);
    let n = a.len();
    let left = |i: usize, k: u64| ((joined(i) << k) >> 32) as u64 & 0xFFFF_FFFF;
    let right = |i: usize, k: u64| (joined(i) >> k) as u64 & 0xFFFF_FFFF;
    check("shf.l.wrap", Eq::Bits, &columns, &got[0], &(0..n).map(|i| left(i, c[i] & 31)).collect::<Vec<_>>());
    check("shf.l.clamp", Eq::Bits, &columns, &got[1], &(0..n).map(|i| left(i, c[i].min(32))).collect::<Vec<_>>());
    check("shf.r.wrap", Eq::Bits, &columns, &got[2], &(0..n).map(|i| right(i, c[i] & 31)).collect::<Vec<_>>());
    check("shf.r.clamp", Eq::Bits, &columns, &got[3], &(0..n).map(|i| right(i, c[i].min(32))).collect::<Vec<_>>());
    // Hand-worked: {0x12345678, 0x87654321} shf.l by 8 = 0x34567887; clamp 40 -> 32 -> a.
    let row = (0..n).position(|i| a[i] == 0x8765_4321 && b[i] == 0x1234_5678 && c[i] == 8).unwrap();
    assert_eq!((got[0][row], got[2][row]), (0x3456_7887, 0x7887_6543));
    let row = (0..n).position(|i| a[i] == 0x8765_4321 && b[i] == 0x1234_5678 && c[i] == 40).unwrap();
    assert_eq!((got[0][row], got[1][row], got[3][row]), (0x3456_7887, 0x8765_4321, 0x1234_5678));
}

/// The ISA 9.7.1.19 bfe pseudocode, transcribed.
fn bfe_reference(a: u64, b: u64, c: u64, bits: u32, signed: bool) -> u64 {
    let msb = u64::from(bits - 1);
    let pos = b & 0xFF;
    let len = c & 0xFF;
    let sbit = if !signed || len == 0 { 0 } else { (a >> (pos + len - 1).min(msb)) & 1 };
    let mut d = 0;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb { (a >> (pos + i)) & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

/// ISA 9.7.1.19 bfe: `pos = b & 0xff`, `len = c & 0xff`; the sign bit of `.s` types is
/// `a[min(pos + len - 1, msb)]` (0 when `len == 0`); bits past the field or past the
/// msb are the sign bit.
#[test]
fn bfe_extracts_with_positions_and_lengths_beyond_the_width() {
    let values = [0xF0F0_1234u64, 0x8000_0000, 0x7FFF_FFFF, 0xDEAD_BEEF];
    let positions = [0u64, 4, 16, 28, 31, 32, 40, 255, 256 + 4];
    let lengths = [0u64, 1, 4, 8, 16, 31, 32, 33, 255, 256 + 8];
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &v in &values {
        for &p in &positions {
            for &l in &lengths {
                a.push(v);
                b.push(p);
                c.push(l);
            }
        }
    }
    let body = "
        bfe.u32 %d0, %a0, %a1, %a2;
        bfe.s32 %d1, %a0, %a1, %a2;
    ";
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b32"; 3], &["b32"; 2], body, &columns);
    let n = a.len();
    check("bfe.u32", Eq::Bits, &columns, &got[0], &(0..n).map(|i| bfe_reference(a[i], b[i], c[i], 32, false)).collect::<Vec<_>>());
    check("bfe.s32", Eq::Bits, &columns, &got[1], &(0..n).map(|i| bfe_reference(a[i], b[i], c[i], 32, true)).collect::<Vec<_>>());
    // Hand-worked rows: 0xdeadbeef from 28, 8 bits: 0xd (u), 0xfffffffd (s: msb 1);
    // from 40 (past the msb): u 0, s replicates a[31] = 1; pos 260 = 4 (& 0xff is
    // 4), length 264 = 8: 0xee.
    let find = |v: u64, p: u64, l: u64| (0..n).position(|i| a[i] == v && b[i] == p && c[i] == l).unwrap();
    let r = find(0xDEAD_BEEF, 28, 8);
    assert_eq!((got[0][r], got[1][r]), (0xD, 0xFFFF_FFFD));
    let r = find(0xDEAD_BEEF, 40, 4);
    assert_eq!((got[0][r], got[1][r]), (0, 0xFFFF_FFFF));
    let r = find(0xDEAD_BEEF, 260, 264);
    assert_eq!((got[0][r], got[1][r]), (0xEE, 0xFFFF_FFEE));
    let r = find(0x7FFF_FFFF, 16, 0);
    assert_eq!((got[0][r], got[1][r]), (0, 0), "len 0 gives 0");

    // 64-bit.
    let values = [0xF0F0_1234_8765_4321u64, 0x8000_0000_0000_0000, 0x7FFF_FFFF_FFFF_FFFF];
    let positions = [0u64, 12, 32, 60, 63, 64, 200];
    let lengths = [0u64, 1, 8, 32, 63, 64, 65, 255];
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &v in &values {
        for &p in &positions {
            for &l in &lengths {
                a.push(v);
                b.push(p);
                c.push(l);
            }
        }
    }
    let body = "
        bfe.u64 %d0, %a0, %a1, %a2;
        bfe.s64 %d1, %a0, %a1, %a2;
    ";
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b64", "b32", "b32"], &["b64"; 2], body, &columns);
    let n = a.len();
    check("bfe.u64", Eq::Bits, &columns, &got[0], &(0..n).map(|i| bfe_reference(a[i], b[i], c[i], 64, false)).collect::<Vec<_>>());
    check("bfe.s64", Eq::Bits, &columns, &got[1], &(0..n).map(|i| bfe_reference(a[i], b[i], c[i], 64, true)).collect::<Vec<_>>());
}

/// ISA 9.7.1.20 bfi: `f = b; for (i = 0; i < len && pos + i <= msb; i++) f[pos+i] =
/// a[i]` with `pos = c & 0xff`, `len = d & 0xff`.
#[test]
fn bfi_inserts_and_drops_bits_past_the_top() {
    let inserts = [0xFFFF_FFFFu64, 0x0000_00A5];
    let bases = [0u64, 0x1234_5678];
    let positions = [0u64, 4, 28, 31, 32, 255, 256 + 8];
    let lengths = [0u64, 1, 4, 8, 32, 33, 256 + 4];
    let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &x in &inserts {
        for &y in &bases {
            for &p in &positions {
                for &l in &lengths {
                    a.push(x);
                    b.push(y);
                    c.push(p);
                    d.push(l);
                }
            }
        }
    }
    let reference = |a: u64, b: u64, c: u64, d: u64, bits: u64| {
        let (pos, len) = (c & 0xFF, d & 0xFF);
        let mut f = b;
        let mut i = 0;
        while i < len && pos + i < bits {
            f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
            i += 1;
        }
        f
    };
    let columns = [a.clone(), b.clone(), c.clone(), d.clone()];
    let got = map(&["b32"; 4], &["b32"], "bfi.b32 %d0, %a0, %a1, %a2, %a3;", &columns);
    let n = a.len();
    check("bfi.b32", Eq::Bits, &columns, &got[0], &(0..n).map(|i| reference(a[i], b[i], c[i], d[i], 32)).collect::<Vec<_>>());
    // Hand-worked: 0xa5 into 0x12345678 at 28, 8 bits: only the low nibble 5 fits.
    let r = (0..n).position(|i| a[i] == 0xA5 && b[i] == 0x1234_5678 && c[i] == 28 && d[i] == 8).unwrap();
    assert_eq!(got[0][r], 0x5234_5678);
    let r = (0..n).position(|i| a[i] == 0xA5 && b[i] == 0x1234_5678 && c[i] == 264 && d[i] == 260).unwrap();
    assert_eq!(got[0][r], 0x1234_5578, "pos 264 & 0xff = 8, len 260 & 0xff = 4");
    // 64-bit.
    let a64: Vec<u64> = a.iter().map(|&x| x | (x << 32)).collect();
    let b64: Vec<u64> = b.iter().map(|&x| x.rotate_left(17) ^ 0xF000_0000_0000_000F).collect();
    let c64: Vec<u64> = c.iter().map(|&x| if x == 28 { 60 } else { x }).collect();
    let columns = [a64.clone(), b64.clone(), c64.clone(), d.clone()];
    let got = map(&["b64", "b64", "b32", "b32"], &["b64"], "bfi.b64 %d0, %a0, %a1, %a2, %a3;", &columns);
    check("bfi.b64", Eq::Bits, &columns, &got[0], &(0..n).map(|i| reference(a64[i], b64[i], c64[i], d[i], 64)).collect::<Vec<_>>());
}

/// ISA 9.7.1.14 popc, 9.7.1.15 clz, 9.7.1.16 bfind, 9.7.1.18 brev. bfind finds the most
/// significant non-sign bit (for a negative signed input, the most significant 0),
/// returns 0xffffffff when there is none, and with `.shiftamt` returns `msb - d`
/// instead (the left shift that moves it to the msb). The destination is `.u32` for
/// the 64-bit forms too.
#[test]
fn bit_counting_bfind_clz_popc_brev() {
    let mut values = int32_corners(10, 12);
    values.extend([0x10u64, 0x8000, 0xFFFF_FFF0, 0x4000_0000]);
    let body = "
        popc.b32 %d0, %a0;
        clz.b32 %d1, %a0;
        bfind.u32 %d2, %a0;
        bfind.s32 %d3, %a0;
        bfind.shiftamt.u32 %d4, %a0;
        bfind.shiftamt.s32 %d5, %a0;
        brev.b32 %d6, %a0;
    ";
    let columns = [values.clone()];
    let got = map(&["b32"], &["b32"; 7], body, &columns);
    let x = || values.iter().map(|&v| v as u32);
    let highest = |v: u32| if v == 0 { 0xFFFF_FFFFu64 } else { u64::from(31 - v.leading_zeros()) };
    let non_sign = |v: u32| if (v as i32) < 0 { !v } else { v };
    let shiftamt = |d: u64| if d == 0xFFFF_FFFF { d } else { 31 - d };
    check("popc.b32", Eq::Bits, &columns, &got[0], &x().map(|v| u64::from(v.count_ones())).collect::<Vec<_>>());
    check("clz.b32", Eq::Bits, &columns, &got[1], &x().map(|v| u64::from(v.leading_zeros())).collect::<Vec<_>>());
    check("bfind.u32", Eq::Bits, &columns, &got[2], &x().map(highest).collect::<Vec<_>>());
    check("bfind.s32", Eq::Bits, &columns, &got[3], &x().map(|v| highest(non_sign(v))).collect::<Vec<_>>());
    check("bfind.shiftamt.u32", Eq::Bits, &columns, &got[4], &x().map(|v| shiftamt(highest(v))).collect::<Vec<_>>());
    check("bfind.shiftamt.s32", Eq::Bits, &columns, &got[5], &x().map(|v| shiftamt(highest(non_sign(v)))).collect::<Vec<_>>());
    check("brev.b32", Eq::Bits, &columns, &got[6], &x().map(|v| u64::from(v.reverse_bits())).collect::<Vec<_>>());
    // Hand-worked: bfind of 0 and of -1 (signed: no 0 bit) is 0xffffffff; clz(0) = 32;
    // bfind.s32 of 0xfffffff0 is 3 (its highest 0).
    let row = |v: u64| values.iter().position(|&x| x == v).unwrap();
    assert_eq!((got[1][row(0)], got[2][row(0)], got[4][row(0)]), (32, 0xFFFF_FFFF, 0xFFFF_FFFF));
    assert_eq!((got[2][row(0xFFFF_FFFF)], got[3][row(0xFFFF_FFFF)]), (31, 0xFFFF_FFFF));
    assert_eq!(got[3][row(0xFFFF_FFF0)], 3);
    assert_eq!(got[6][row(1)], 0x8000_0000);

    let values = int64_corners(11, 12);
    let body = "
        popc.b64 %d0, %a0;
        clz.b64 %d1, %a0;
        bfind.u64 %d2, %a0;
        bfind.s64 %d3, %a0;
        bfind.shiftamt.u64 %d4, %a0;
        brev.b64 %d5, %a0;
    ";
    let columns = [values.clone()];
    let got = map(&["b64"], &["b32", "b32", "b32", "b32", "b32", "b64"], body, &columns);
    let x = || values.iter().copied();
    let highest = |v: u64| if v == 0 { 0xFFFF_FFFFu64 } else { u64::from(63 - v.leading_zeros()) };
    let non_sign = |v: u64| if (v as i64) < 0 { !v } else { v };
    check("popc.b64", Eq::Bits, &columns, &got[0], &x().map(|v| u64::from(v.count_ones())).collect::<Vec<_>>());
    check("clz.b64", Eq::Bits, &columns, &got[1], &x().map(|v| u64::from(v.leading_zeros())).collect::<Vec<_>>());
    check("bfind.u64", Eq::Bits, &columns, &got[2], &x().map(highest).collect::<Vec<_>>());
    check("bfind.s64", Eq::Bits, &columns, &got[3], &x().map(|v| highest(non_sign(v))).collect::<Vec<_>>());
    check("bfind.shiftamt.u64", Eq::Bits, &columns, &got[4], &x().map(|v| if v == 0 { 0xFFFF_FFFF } else { 63 - highest(v) }).collect::<Vec<_>>());
    check("brev.b64", Eq::Bits, &columns, &got[5], &x().map(u64::reverse_bits).collect::<Vec<_>>());
}

/// ISA 9.7.9.7 prmt. Generic form: four 4-bit selectors `c[15:12] .. c[3:0]` for
/// `d.b3 .. d.b0`; the 3 lsbs pick one of the bytes `{b, a} = {b7..b4, b3..b0}`, the msb
/// replicates that byte's sign. Modes use `c[1:0]` and the ISA's table, transcribed
/// below as (d.b3, d.b2, d.b1, d.b0) source bytes.
#[test]
fn prmt_generic_and_every_mode() {
    const TABLE: &[(&str, [[u64; 4]; 4])] = &[
        ("f4e", [[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]]),
        ("b4e", [[5, 6, 7, 0], [6, 7, 0, 1], [7, 0, 1, 2], [0, 1, 2, 3]]),
        ("rc8", [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]),
        ("ecl", [[3, 2, 1, 0], [3, 2, 1, 1], [3, 2, 2, 2], [3, 3, 3, 3]]),
        ("ecr", [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]]),
        ("rc16", [[1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2]]),
    ];
    // Bytes b0..b7 = 0x10, 0x91, 0x22, 0xa3, 0x34, 0xb5, 0x46, 0xc7 (alternating signs).
    let (a_word, b_word) = (0xA322_9110u64, 0xC746_B534u64);
    let byte = |k: u64| ((u128::from(b_word) << 32 | u128::from(a_word)) >> (8 * k)) as u64 & 0xFF;
    // Selectors: c[1:0] 0..3, with garbage in the upper bits (ignored by the modes).
    let c: Vec<u64> = vec![0, 1, 2, 3, 0xFFFF_FFFC, 0x1235, 0xABCD_EF02, 0x7];
    let a = vec![a_word; c.len()];
    let b = vec![b_word; c.len()];
    let body: String = TABLE.iter().enumerate().map(|(k, (mode, _))| format!("prmt.b32.{mode} %d{k}, %a0, %a1, %a2;\n")).collect();
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b32"; 3], &["b32"; 6], &body, &columns);
    for (k, (mode, rows)) in TABLE.iter().enumerate() {
        let expected: Vec<u64> = c.iter().map(|&ci| rows[(ci & 3) as usize].iter().fold(0, |d, &s| (d << 8) | byte(s))).collect();
        check(&format!("prmt.b32.{mode}"), Eq::Bits, &columns, &got[k], &expected);
    }
    // Hand-worked: f4e with c = 1 gives bytes 4,3,2,1 = 0x34a32291; b4e with c = 0
    // gives 5,6,7,0 = 0xb546c710.
    assert_eq!((got[0][1], got[1][0]), (0x34A3_2291, 0xB546_C710));

    // Generic form: selectors with and without the sign-replication bit.
    let c: Vec<u64> = vec![0x3210, 0x7654, 0x0123, 0x5140, 0x8888, 0x9999, 0xF7E6, 0x0000, 0xBA98, 0xFFFF_4444];
    let a = vec![a_word; c.len()];
    let b = vec![b_word; c.len()];
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b32"; 3], &["b32"], "prmt.b32 %d0, %a0, %a1, %a2;", &columns);
    let generic = |ci: u64| {
        (0..4).fold(0u64, |d, i| {
            let s = (ci >> (4 * i)) & 0xF;
            let v = byte(s & 7);
            let v = if s & 8 != 0 { if v & 0x80 != 0 { 0xFF } else { 0 } } else { v };
            d | (v << (8 * i))
        })
    };
    check("prmt.b32", Eq::Bits, &columns, &got[0], &c.iter().map(|&ci| generic(ci)).collect::<Vec<_>>());
    assert_eq!(got[0][0], a_word, "0x3210 is the identity on a");
    assert_eq!(got[0][1], b_word, "0x7654 selects b");
    assert_eq!(got[0][4], 0, "0x8888: b0 = 0x10 is positive: sign 0x00 in every byte");
    assert_eq!(got[0][5], 0xFFFF_FFFF, "0x9999: b1 = 0x91 is negative: 0xff in every byte");
}

/// ISA 9.7.2.1-9.7.2.6: add.cc/addc (`d = a + b + CC.CF`, carry-out to CC.CF), sub.cc/
/// subc (`d = a - (b + CC.CF)`, borrow-out to CC.CF), mad.lo.cc/madc.hi. Multi-word
/// arithmetic built from them must equal u128 arithmetic; the multiply is the ISA's
/// own madc example (`[r3,r2,r1,r0] = [r5,r4] * [r7,r6]`).
#[test]
fn carry_chains_build_128_bit_add_sub_and_64x64_multiply() {
    let mut xs: Vec<u128> = vec![0, 1, u128::MAX, u128::MAX - 1, 1 << 127, (1 << 96) - 1, (1 << 64) - 1, 0xFFFF_FFFF, 1 << 32];
    let random = pseudo_random(12, 8);
    xs.extend(random.chunks(2).map(|c| (u128::from(c[0]) << 64) | u128::from(c[1])));
    let mut x = Vec::new();
    let mut y = Vec::new();
    for &p in &xs {
        for &q in &xs {
            x.push(p);
            y.push(q);
        }
    }
    let word = |v: &[u128], k: u32| v.iter().map(|&n| (n >> (32 * k)) as u64 & 0xFFFF_FFFF).collect::<Vec<_>>();
    let columns: Vec<Vec<u64>> = (0..4).map(|k| word(&x, k)).chain((0..4).map(|k| word(&y, k))).collect();
    let body = "
        add.cc.u32 %d0, %a0, %a4;
        addc.cc.u32 %d1, %a1, %a5;
        addc.cc.u32 %d2, %a2, %a6;
        addc.u32 %d3, %a3, %a7;
        sub.cc.u32 %d4, %a0, %a4;
        subc.cc.u32 %d5, %a1, %a5;
        subc.cc.u32 %d6, %a2, %a6;
        subc.u32 %d7, %a3, %a7;
        // The carry out of the top word, as a value: addc with zeros.
        add.cc.u32 %r0, %a0, %a4;
        addc.cc.u32 %r0, %a1, %a5;
        addc.cc.u32 %r0, %a2, %a6;
        addc.cc.u32 %r0, %a3, %a7;
        addc.u32 %d8, 0, 0;
        sub.cc.u32 %r0, %a0, %a4;
        subc.cc.u32 %r0, %a1, %a5;
        subc.cc.u32 %r0, %a2, %a6;
        subc.cc.u32 %r0, %a3, %a7;
        addc.u32 %d9, 0, 0;
    ";
    let got = map(&["b32"; 8], &["b32"; 10], body, &columns);
    let sum: Vec<u128> = x.iter().zip(&y).map(|(&p, &q)| p.wrapping_add(q)).collect();
    let difference: Vec<u128> = x.iter().zip(&y).map(|(&p, &q)| p.wrapping_sub(q)).collect();
    for k in 0..4u32 {
        check(&format!("128-bit add, word {k}"), Eq::Bits, &columns, &got[k as usize], &word(&sum, k));
        check(&format!("128-bit sub, word {k}"), Eq::Bits, &columns, &got[4 + k as usize], &word(&difference, k));
    }
    check("carry out of the 128-bit add", Eq::Bits, &columns, &got[8], &x.iter().zip(&y).map(|(&p, &q)| u64::from(p.checked_add(q).is_none())).collect::<Vec<_>>());
    check("borrow out of the 128-bit sub", Eq::Bits, &columns, &got[9], &x.iter().zip(&y).map(|(&p, &q)| u64::from(p < q)).collect::<Vec<_>>());

    // 64-bit words: add.cc.u64 / addc.u64.
    let columns64: Vec<Vec<u64>> = vec![x.iter().map(|&v| v as u64).collect(), x.iter().map(|&v| (v >> 64) as u64).collect(), y.iter().map(|&v| v as u64).collect(), y.iter().map(|&v| (v >> 64) as u64).collect()];
    let body = "
        add.cc.u64 %d0, %a0, %a2;
        addc.u64 %d1, %a1, %a3;
        sub.cc.u64 %d2, %a0, %a2;
        subc.u64 %d3, %a1, %a3;
    ";
    let got = map(&["b64"; 4], &["b64"; 4], body, &columns64);
    check("add.cc.u64 low", Eq::Bits, &columns64, &got[0], &sum.iter().map(|&v| v as u64).collect::<Vec<_>>());
    check("addc.u64 high", Eq::Bits, &columns64, &got[1], &sum.iter().map(|&v| (v >> 64) as u64).collect::<Vec<_>>());
    check("sub.cc.u64 low", Eq::Bits, &columns64, &got[2], &difference.iter().map(|&v| v as u64).collect::<Vec<_>>());
    check("subc.u64 high", Eq::Bits, &columns64, &got[3], &difference.iter().map(|&v| (v >> 64) as u64).collect::<Vec<_>>());

    // 64 x 64 -> 128 multiply from 32-bit words with mad.lo.cc / madc.hi (ISA 9.7.2.6).
    let p: Vec<u64> = x.iter().map(|&v| v as u64).collect();
    let q: Vec<u64> = y.iter().map(|&v| (v >> 64) as u64).collect();
    let columns = vec![p.iter().map(|&v| v & 0xFFFF_FFFF).collect::<Vec<_>>(), p.iter().map(|&v| v >> 32).collect(), q.iter().map(|&v| v & 0xFFFF_FFFF).collect(), q.iter().map(|&v| v >> 32).collect()];
    let body = "
        mul.lo.u32 %d0, %a0, %a2;
        mul.hi.u32 %d1, %a0, %a2;
        mad.lo.cc.u32 %d1, %a1, %a2, %d1;
        madc.hi.u32 %d2, %a1, %a2, 0;
        mad.lo.cc.u32 %d1, %a0, %a3, %d1;
        madc.hi.cc.u32 %d2, %a0, %a3, %d2;
        addc.u32 %d3, 0, 0;
        mad.lo.cc.u32 %d2, %a1, %a3, %d2;
        madc.hi.u32 %d3, %a1, %a3, %d3;
    ";
    let got = map(&["b32"; 4], &["b32"; 4], body, &columns);
    let product: Vec<u128> = p.iter().zip(&q).map(|(&s, &t)| u128::from(s) * u128::from(t)).collect();
    for k in 0..4u32 {
        check(&format!("64x64 product, word {k}"), Eq::Bits, &columns, &got[k as usize], &word(&product, k));
    }
}

/// ISA 9.7.1.5 mul24 / 9.7.1.6 mad24: the product of the low 24 bits (sign-extended
/// for .s32) is 48 bits; `.lo` keeps bits 31..0, `.hi` bits 47..16. ISA 9.7.1.23 dp4a
/// and 9.7.1.24 dp2a: `d = c + sum(Va[i] * Vb[i])` with bytes (and, for dp2a's `a`,
/// halfwords) sign- or zero-extended by their type.
#[test]
fn mul24_mad24_dp4a_dp2a() {
    let (a, b) = pairs(&[0u64, 1, 0x00FF_FFFF, 0x0080_0000, 0x007F_FFFF, 0xFF80_0001, 0x1234_5678, 0xDEAD_BEEF, 0xFFFF_FFFF, 0x0000_1000]);
    let c: Vec<u64> = (0..a.len()).map(|i| (i as u64).wrapping_mul(0x9E37_79B9) & 0xFFFF_FFFF).collect();
    let body = "
        mul24.lo.u32 %d0, %a0, %a1;
        mul24.hi.u32 %d1, %a0, %a1;
        mul24.lo.s32 %d2, %a0, %a1;
        mul24.hi.s32 %d3, %a0, %a1;
        mad24.lo.u32 %d4, %a0, %a1, %a2;
        mad24.hi.s32 %d5, %a0, %a1, %a2;
    ";
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b32"; 3], &["b32"; 6], body, &columns);
    let u24 = |v: u64| (v & 0xFF_FFFF) as i64;
    let s24 = |v: u64| (((v & 0xFF_FFFF) << 40) as i64) >> 40;
    let n = a.len();
    let lo = |t: i64| t as u64 & 0xFFFF_FFFF;
    let hi = |t: i64| (t >> 16) as u64 & 0xFFFF_FFFF;
    check("mul24.lo.u32", Eq::Bits, &columns, &got[0], &(0..n).map(|i| lo(u24(a[i]) * u24(b[i]))).collect::<Vec<_>>());
    check("mul24.hi.u32", Eq::Bits, &columns, &got[1], &(0..n).map(|i| hi(u24(a[i]) * u24(b[i]))).collect::<Vec<_>>());
    check("mul24.lo.s32", Eq::Bits, &columns, &got[2], &(0..n).map(|i| lo(s24(a[i]) * s24(b[i]))).collect::<Vec<_>>());
    check("mul24.hi.s32", Eq::Bits, &columns, &got[3], &(0..n).map(|i| hi(s24(a[i]) * s24(b[i]))).collect::<Vec<_>>());
    check("mad24.lo.u32", Eq::Bits, &columns, &got[4], &(0..n).map(|i| lo(u24(a[i]) * u24(b[i])).wrapping_add(c[i]) & 0xFFFF_FFFF).collect::<Vec<_>>());
    check("mad24.hi.s32", Eq::Bits, &columns, &got[5], &(0..n).map(|i| hi(s24(a[i]) * s24(b[i])).wrapping_add(c[i]) & 0xFFFF_FFFF).collect::<Vec<_>>());
    // Hand-worked: 0xffffff * 0xffffff = 0xfffffe000001: lo 0xfe000001, hi 0xfffffe00.
    let r = (0..n).position(|i| a[i] == 0x00FF_FFFF && b[i] == 0x00FF_FFFF).unwrap();
    assert_eq!((got[0][r], got[1][r]), (0xFE00_0001, 0xFFFF_FE00));
    assert_eq!((got[2][r], got[3][r]), (1, 0), "as s24 it is -1 * -1");

    let (a, b) = pairs(&[0u64, 0x0102_0304, 0xFF80_7F01, 0x8080_8080, 0xFFFF_FFFF, 0x7F7F_7F7F, 0xDEAD_BEEF]);
    let c: Vec<u64> = (0..a.len()).map(|i| [0u64, 1, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF][i % 5]).collect();
    let body = "
        dp4a.u32.u32 %d0, %a0, %a1, %a2;
        dp4a.s32.s32 %d1, %a0, %a1, %a2;
        dp4a.s32.u32 %d2, %a0, %a1, %a2;
        dp4a.u32.s32 %d3, %a0, %a1, %a2;
        dp2a.lo.u32.u32 %d4, %a0, %a1, %a2;
        dp2a.hi.s32.s32 %d5, %a0, %a1, %a2;
        dp2a.lo.s32.u32 %d6, %a0, %a1, %a2;
    ";
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b32"; 3], &["b32"; 7], body, &columns);
    let bytes = |v: u64, signed: bool| -> [i64; 4] { std::array::from_fn(|k| { let x = (v >> (8 * k)) as u8; if signed { i64::from(x as i8) } else { i64::from(x) } }) };
    let halves = |v: u64, signed: bool| -> [i64; 2] { std::array::from_fn(|k| { let x = (v >> (16 * k)) as u16; if signed { i64::from(x as i16) } else { i64::from(x) } }) };
    let dp4a = |i: usize, sa: bool, sb: bool| {
        let (va, vb) = (bytes(a[i], sa), bytes(b[i], sb));
        (c[i] as i64 + (0..4).map(|k| va[k] * vb[k]).sum::<i64>()) as u64 & 0xFFFF_FFFF
    };
    let dp2a = |i: usize, high: bool, sa: bool, sb: bool| {
        let (va, vb) = (halves(a[i], sa), bytes(b[i], sb));
        let base = if high { 2 } else { 0 };
        (c[i] as i64 + va[0] * vb[base] + va[1] * vb[base + 1]) as u64 & 0xFFFF_FFFF
    };
    check("dp4a.u32.u32", Eq::Bits, &columns, &got[0], &(0..a.len()).map(|i| dp4a(i, false, false)).collect::<Vec<_>>());
    check("dp4a.s32.s32", Eq::Bits, &columns, &got[1], &(0..a.len()).map(|i| dp4a(i, true, true)).collect::<Vec<_>>());
    check("dp4a.s32.u32", Eq::Bits, &columns, &got[2], &(0..a.len()).map(|i| dp4a(i, true, false)).collect::<Vec<_>>());
    check("dp4a.u32.s32", Eq::Bits, &columns, &got[3], &(0..a.len()).map(|i| dp4a(i, false, true)).collect::<Vec<_>>());
    check("dp2a.lo.u32.u32", Eq::Bits, &columns, &got[4], &(0..a.len()).map(|i| dp2a(i, false, false, false)).collect::<Vec<_>>());
    check("dp2a.hi.s32.s32", Eq::Bits, &columns, &got[5], &(0..a.len()).map(|i| dp2a(i, true, true, true)).collect::<Vec<_>>());
    check("dp2a.lo.s32.u32", Eq::Bits, &columns, &got[6], &(0..a.len()).map(|i| dp2a(i, false, true, false)).collect::<Vec<_>>());
    // Hand-worked: dp4a.s32.s32 of 0x80808080 with itself: 4 * (-128)^2 = 65536 (+ c).
    let r = (0..a.len()).position(|i| a[i] == 0x8080_8080 && b[i] == 0x8080_8080).unwrap();
    assert_eq!(got[1][r], (65536 + c[r]) & 0xFFFF_FFFF);
    assert_eq!(got[0][r], (4 * 128 * 128 + c[r]) & 0xFFFF_FFFF);
}

// ---------------------------------------------------------------------------------
// Comparison and selection (ISA 9.7.6)
// ---------------------------------------------------------------------------------

const FLOAT_COMPARISONS: [&str; 14] = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"];

/// The ISA's float comparison: ordered comparisons are false with a NaN operand, the
/// unordered ones (`...u`) true; `num`: neither is NaN, `nan`: either is.
fn float_compare(cmp: &str, x: f64, y: f64) -> bool {
    let unordered = x.is_nan() || y.is_nan();
    let ordered = match cmp.trim_end_matches('u') {
        "eq" => x == y,
        "ne" => x != y,
        "lt" => x < y,
        "le" => x <= y,
        "gt" => x > y,
        "ge" => x >= y,
        _ => false, // num, nan: below
    };
    match cmp {
        "num" => !unordered,
        "nan" => unordered,
        c if c.ends_with('u') => unordered || ordered,
        _ => !unordered && ordered,
    }
}

/// A body that sets bit k of `%d{out}` when comparison k holds.
fn comparison_mask_body(setp: impl Fn(&str) -> String, cmps: &[&str], out: usize) -> String {
    let mut body = format!("mov.b32 %d{out}, 0;\n");
    for (k, cmp) in cmps.iter().enumerate() {
        body += &format!("{}\nselp.b32 %r1, {}, 0, %p1;\nor.b32 %d{out}, %d{out}, %r1;\n", setp(cmp), 1u32 << k);
    }
    body
}

/// ISA 9.7.6.2 setp, floating-point notes: "The ordered comparisons are eq, ne, lt, le,
/// gt, ge. If either operand is NaN, the result is False"; the unordered equ, neu,
/// ltu, leu, gtu, geu are True with a NaN; num/nan test for NaNs. -0 == +0. `.ftz`
/// flushes subnormal operands to zero first.
#[test]
fn setp_float_comparisons_including_unordered_with_nan() {
    let values = [1.0f32, 2.0, -0.0, 0.0, f32::NAN, f32::NEG_INFINITY, f32::INFINITY, f32::from_bits(1), -f32::from_bits(0x0040_0000), -3.5];
    let mut bits: Vec<u64> = values.iter().map(|&v| f32_bits(v)).collect();
    bits.push(0xFFC0_0001); // a negative NaN with a payload
    let (a, b) = pairs(&bits);
    let mut body = comparison_mask_body(|c| format!("setp.{c}.f32 %p1, %a0, %a1;"), &FLOAT_COMPARISONS, 0);
    body += &comparison_mask_body(|c| format!("setp.{c}.ftz.f32 %p1, %a0, %a1;"), &FLOAT_COMPARISONS, 1);
    let columns = [a.clone(), b.clone()];
    let got = map(&["b32", "b32"], &["b32", "b32"], &body, &columns);
    let flush = |x: f32| if x.is_subnormal() { 0.0 } else { x };
    let mask = |x: f32, y: f32| FLOAT_COMPARISONS.iter().enumerate().fold(0u64, |m, (k, c)| m | (u64::from(float_compare(c, f64::from(x), f64::from(y))) << k));
    check("setp.*.f32 (bit k = comparison k)", Eq::Bits, &columns, &got[0], &a.iter().zip(&b).map(|(&x, &y)| mask(as_f32(x), as_f32(y))).collect::<Vec<_>>());
    check("setp.*.ftz.f32", Eq::Bits, &columns, &got[1], &a.iter().zip(&b).map(|(&x, &y)| mask(flush(as_f32(x)), flush(as_f32(y)))).collect::<Vec<_>>());
    // Hand-worked: NaN vs 1: only ne? no: ordered all false; unordered all true, nan.
    let row = (0..a.len()).position(|i| a[i] == f32_bits(f32::NAN) && b[i] == f32_bits(1.0)).unwrap();
    assert_eq!(got[0][row], 0b10_1111_1100_0000, "NaN vs 1.0: equ..geu and nan");
    let row = (0..a.len()).position(|i| a[i] == f32_bits(-0.0) && b[i] == f32_bits(0.0)).unwrap();
    assert_eq!(got[0][row], 0b01_1010_0110_1001, "-0 vs +0: eq le ge equ leu geu num");

    // f64, with values that differ only below f32 precision.
    let values = [1.0f64, 1.0 + f64::EPSILON, -0.0, 0.0, f64::NAN, f64::NEG_INFINITY, f64::INFINITY, f64::from_bits(1), -1e300];
    let bits: Vec<u64> = values.iter().map(|&v| f64_bits(v)).collect();
    let (a, b) = pairs(&bits);
    let body = comparison_mask_body(|c| format!("setp.{c}.f64 %p1, %a0, %a1;"), &FLOAT_COMPARISONS, 0);
    let columns = [a.clone(), b.clone()];
    let got = map(&["b64", "b64"], &["b32"], &body, &columns);
    let mask = |x: f64, y: f64| FLOAT_COMPARISONS.iter().enumerate().fold(0u64, |m, (k, c)| m | (u64::from(float_compare(c, x, y)) << k));
    check("setp.*.f64", Eq::Bits, &columns, &got[0], &a.iter().zip(&b).map(|(&x, &y)| mask(as_f64(x), as_f64(y))).collect::<Vec<_>>());
}

/// ISA 9.7.6.2 setp, integer notes: eq/ne/lt/le/gt/ge are signed for .s types and
/// unsigned for .u types; lo/ls/hi/hs are the unsigned forms; .b types take eq/ne.
#[test]
fn setp_integer_signed_and_unsigned_comparisons() {
    let (a, b) = pairs(&int32_corners(13, 3));
    let signed = ["eq", "ne", "lt", "le", "gt", "ge"];
    let unsigned = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"];
    let mut body = comparison_mask_body(|c| format!("setp.{c}.s32 %p1, %a0, %a1;"), &signed, 0);
    body += &comparison_mask_body(|c| format!("setp.{c}.u32 %p1, %a0, %a1;"), &unsigned, 1);
    body += &comparison_mask_body(|c| format!("setp.{c}.b32 %p1, %a0, %a1;"), &["eq", "ne"], 2);
    body += "cvt.u16.u32 %h1, %a0;\ncvt.u16.u32 %h2, %a1;\n";
    body += &comparison_mask_body(|c| format!("setp.{c}.s16 %p1, %h1, %h2;"), &signed, 3);
    let columns = [a.clone(), b.clone()];
    let got = map(&["b32", "b32"], &["b32"; 4], &body, &columns);
    fn mask<T: Ord>(x: T, y: T, cmps: &[&str]) -> u64 {
        cmps.iter().enumerate().fold(0, |m, (k, c)| {
            let r = match *c {
                "eq" => x == y,
                "ne" => x != y,
                "lt" | "lo" => x < y,
                "le" | "ls" => x <= y,
                "gt" | "hi" => x > y,
                _ => x >= y,
            };
            m | (u64::from(r) << k)
        })
    }
    check("setp.*.s32", Eq::Bits, &columns, &got[0], &a.iter().zip(&b).map(|(&x, &y)| mask(s32(x), s32(y), &signed)).collect::<Vec<_>>());
    check("setp.*.u32", Eq::Bits, &columns, &got[1], &a.iter().zip(&b).map(|(&x, &y)| mask(x as u32, y as u32, &unsigned)).collect::<Vec<_>>());
    check("setp.*.b32", Eq::Bits, &columns, &got[2], &a.iter().zip(&b).map(|(&x, &y)| mask(x as u32, y as u32, &["eq", "ne"])).collect::<Vec<_>>());
    check("setp.*.s16", Eq::Bits, &columns, &got[3], &a.iter().zip(&b).map(|(&x, &y)| mask(x as u16 as i16, y as u16 as i16, &signed)).collect::<Vec<_>>());

    let (a, b) = pairs(&int64_corners(14, 3));
    let mut body = comparison_mask_body(|c| format!("setp.{c}.s64 %p1, %a0, %a1;"), &signed, 0);
    body += &comparison_mask_body(|c| format!("setp.{c}.u64 %p1, %a0, %a1;"), &unsigned, 1);
    let columns = [a.clone(), b.clone()];
    let got = map(&["b64", "b64"], &["b32"; 2], &body, &columns);
    check("setp.*.s64", Eq::Bits, &columns, &got[0], &a.iter().zip(&b).map(|(&x, &y)| mask(x as i64, y as i64, &signed)).collect::<Vec<_>>());
    check("setp.*.u64", Eq::Bits, &columns, &got[1], &a.iter().zip(&b).map(|(&x, &y)| mask(x, y, &unsigned)).collect::<Vec<_>>());
}

/// ISA 9.7.6.2 setp semantics: `t = (a CmpOp b); p = BoolOp(t, c); q = BoolOp(!t, c)`,
/// `c` may be negated (`!c`) and either destination may be the sink `_`. ISA 9.7.6.1
/// set: `d = BoolOp(t, c) ? (float ? 1.0 : 0xffffffff) : 0`.
#[test]
fn setp_boolean_combination_and_two_destinations() {
    let (a, b) = pairs(&[0u64, 1, 0xFFFF_FFFF, 0x8000_0000, 5]);
    let c: Vec<u64> = (0..a.len()).map(|i| (i as u64 / 3) & 1).collect();
    let ops = ["and", "or", "xor"];
    let mut body = String::from("setp.ne.u32 %p3, %a2, 0;\nmov.b32 %d0, 0;\n");
    let mut bit = 0;
    for op in ops {
        for negate in ["", "!"] {
            body += &format!("setp.lt.{op}.s32 %p1|%p2, %a0, %a1, {negate}%p3;\n");
            for p in ["%p1", "%p2"] {
                body += &format!("selp.b32 %r1, {}, 0, {p};\nor.b32 %d0, %d0, %r1;\n", 1u32 << bit);
                bit += 1;
            }
        }
    }
    body += "setp.lt.s32 _|%p2, %a0, %a1;\nselp.b32 %d1, 1, 0, %p2;\n";
    body += "setp.lt.s32 %p1|_, %a0, %a1;\nselp.b32 %d2, 1, 0, %p1;\n";
    body += "set.lt.u32.s32 %d3, %a0, %a1;\n";
    body += "set.gt.or.f32.s32 %f1, %a0, %a1, %p3;\nmov.b32 %d4, %f1;\n";
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b32"; 3], &["b32"; 5], &body, &columns);
    let expected: Vec<u64> = (0..a.len())
        .map(|i| {
            let t = s32(a[i]) < s32(b[i]);
            let mut m = 0u64;
            let mut bit = 0;
            for op in ops {
                for negate in [false, true] {
                    let cv = (c[i] != 0) != negate;
                    let f = |x: bool| match op {
                        "and" => x && cv,
                        "or" => x || cv,
                        _ => x ^ cv,
                    };
                    m |= u64::from(f(t)) << bit;
                    m |= u64::from(f(!t)) << (bit + 1);
                    bit += 2;
                }
            }
            m
        })
        .collect();
    check("setp.lt.{and,or,xor}.s32 p|q", Eq::Bits, &columns, &got[0], &expected);
    let lt: Vec<bool> = (0..a.len()).map(|i| s32(a[i]) < s32(b[i])).collect();
    check("setp _|q", Eq::Bits, &columns, &got[1], &lt.iter().map(|&t| u64::from(!t)).collect::<Vec<_>>());
    check("setp p|_", Eq::Bits, &columns, &got[2], &lt.iter().map(|&t| u64::from(t)).collect::<Vec<_>>());
    check("set.lt.u32.s32", Eq::Bits, &columns, &got[3], &lt.iter().map(|&t| if t { 0xFFFF_FFFF } else { 0 }).collect::<Vec<_>>());
    check("set.gt.or.f32.s32", Eq::Bits, &columns, &got[4], &(0..a.len()).map(|i| if s32(a[i]) > s32(b[i]) || c[i] != 0 { 0x3F80_0000 } else { 0 }).collect::<Vec<_>>());
}

/// ISA 9.7.6.3 selp: `d = c ? a : b`. ISA 9.7.6.4 slct: `d = (c >= 0) ? a : b`; for .f32
/// `c`, -0 equals 0, a NaN `c` selects `b` ("the comparison is ordered"), and `.ftz`
/// flushes a subnormal `c` to a sign-preserving zero, which selects `a`.
#[test]
fn selp_and_slct() {
    let c_int = [0u64, 1, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF];
    let c_float = [0.0f32, -0.0, 1.0, -1.0, f32::NAN, -f32::NAN, f32::from_bits(1), -f32::from_bits(1), f32::NEG_INFINITY, f32::INFINITY];
    let n = c_int.len() * c_float.len();
    let (mut ci, mut cf) = (Vec::new(), Vec::new());
    for &x in &c_int {
        for &y in &c_float {
            ci.push(x);
            cf.push(f32_bits(y));
        }
    }
    let a: Vec<u64> = (0..n as u64).map(|i| 0x1111_0000 + i).collect();
    let b: Vec<u64> = (0..n as u64).map(|i| 0x2222_0000 + i).collect();
    let a64: Vec<u64> = a.iter().map(|&x| x << 32 | 0xAAAA).collect();
    let b64: Vec<u64> = b.iter().map(|&x| x << 32 | 0xBBBB).collect();
    let body = "
        setp.ne.u32 %p1, %a2, 0;
        selp.b32 %d0, %a0, %a1, %p1;
        selp.b64 %d1, %a4, %a5, %p1;
        slct.b32.s32 %d2, %a0, %a1, %a2;
        slct.b32.f32 %d3, %a0, %a1, %a3;
        slct.ftz.b32.f32 %d4, %a0, %a1, %a3;
        slct.b64.s32 %d5, %a4, %a5, %a2;
    ";
    let columns = [a.clone(), b.clone(), ci.clone(), cf.clone(), a64.clone(), b64.clone()];
    let got = map(&["b32", "b32", "b32", "b32", "b64", "b64"], &["b32", "b64", "b32", "b32", "b32", "b64"], body, &columns);
    let pick = |take_a: bool, i: usize| if take_a { a[i] } else { b[i] };
    let pick64 = |take_a: bool, i: usize| if take_a { a64[i] } else { b64[i] };
    check("selp.b32", Eq::Bits, &columns, &got[0], &(0..n).map(|i| pick(ci[i] != 0, i)).collect::<Vec<_>>());
    check("selp.b64", Eq::Bits, &columns, &got[1], &(0..n).map(|i| pick64(ci[i] != 0, i)).collect::<Vec<_>>());
    check("slct.b32.s32", Eq::Bits, &columns, &got[2], &(0..n).map(|i| pick(s32(ci[i]) >= 0, i)).collect::<Vec<_>>());
    // f32 `c >= 0.0` in Rust is false for NaN and true for -0.0, as the ISA says.
    check("slct.b32.f32", Eq::Bits, &columns, &got[3], &(0..n).map(|i| pick(as_f32(cf[i]) >= 0.0, i)).collect::<Vec<_>>());
    let flushed = |x: f32| if x.is_subnormal() { 0.0 } else { x };
    check("slct.ftz.b32.f32", Eq::Bits, &columns, &got[4], &(0..n).map(|i| pick(flushed(as_f32(cf[i])) >= 0.0, i)).collect::<Vec<_>>());
    check("slct.b64.s32", Eq::Bits, &columns, &got[5], &(0..n).map(|i| pick64(s32(ci[i]) >= 0, i)).collect::<Vec<_>>());
    // Hand-worked: c = -subnormal selects b without .ftz and a with it.
    let r = cf.iter().position(|&x| x == 0x8000_0001).unwrap();
    assert_eq!((got[3][r], got[4][r]), (b[r], a[r]));
}

// ---------------------------------------------------------------------------------
// Floating point (ISA 9.7.3, 9.7.4): reference rounding
// ---------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Round {
    Rn,
    Rz,
    Rm,
    Rp,
}

const MODES: [(&str, Round); 4] = [("rn", Round::Rn), ("rz", Round::Rz), ("rm", Round::Rm), ("rp", Round::Rp)];

/// A binary floating-point format narrower than f64: fraction bits and the exponent
/// range of its normal numbers.
#[derive(Clone, Copy, Debug)]
struct Format {
    fraction: i32,
    min_exp: i32,
    max_exp: i32,
}

const HALF: Format = Format { fraction: 10, min_exp: -14, max_exp: 15 };
const BFLOAT: Format = Format { fraction: 7, min_exp: -126, max_exp: 127 };
const SINGLE: Format = Format { fraction: 23, min_exp: -126, max_exp: 127 };

fn pow2(k: i32) -> f64 {
    assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// IEEE 754 rounding, written from the definition: the exact value `x + err` (`x` a
/// finite f64, `err` the exact remainder with `|err|` at most half an f64 ulp of `x`;
/// only its sign matters) rounded to `format` in `mode`. The candidates are the two
/// multiples of the format's quantum around the value; overflow follows IEEE 754 7.4
/// (to nearest and away: infinity; toward zero or away from the sign: the largest
/// finite value).
fn round_exact(x: f64, err: f64, format: Format, mode: Round) -> f64 {
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        assert!(x != 0.0 || err == 0.0 || err.is_nan());
        return x;
    }
    let mut exponent = ((x.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    assert!(exponent > -1022, "f64 subnormal values are out of scope");
    let sticky = err.partial_cmp(&0.0).unwrap_or(Ordering::Equal);
    // A power of two nudged toward zero lies in the binade below (finer quantum).
    let toward_zero = (sticky == Ordering::Less) == (x > 0.0) && sticky != Ordering::Equal;
    if x.abs() == pow2(exponent) && toward_zero {
        exponent -= 1;
    }
    let quantum = pow2(exponent.max(format.min_exp) - format.fraction);
    let scaled = x / quantum; // exact: a power-of-two scaling
    let (low, high) = if scaled.fract() == 0.0 {
        match sticky {
            Ordering::Equal => (scaled, scaled),
            Ordering::Less => (scaled - 1.0, scaled),
            Ordering::Greater => (scaled, scaled + 1.0),
        }
    } else {
        (scaled.floor(), scaled.ceil())
    };
    let r = if low == high {
        low
    } else {
        match mode {
            Round::Rm => low,
            Round::Rp => high,
            Round::Rz => {
                if x > 0.0 {
                    low
                } else {
                    high
                }
            }
            Round::Rn => match (scaled - low).partial_cmp(&0.5).unwrap() {
                Ordering::Less => low,
                Ordering::Greater => high,
                Ordering::Equal => match sticky {
                    Ordering::Less => low,
                    Ordering::Greater => high,
                    Ordering::Equal => {
                        if low % 2.0 == 0.0 {
                            low
                        } else {
                            high
                        }
                    }
                },
            },
        }
    };
    let r = r * quantum;
    let max = (2.0 - pow2(-format.fraction)) * pow2(format.max_exp);
    if r.abs() > max {
        let positive = x > 0.0;
        let (inf, max) = if positive { (f64::INFINITY, max) } else { (f64::NEG_INFINITY, -max) };
        return match mode {
            Round::Rn => inf,
            Round::Rz => max,
            Round::Rm => {
                if positive {
                    max
                } else {
                    inf
                }
            }
            Round::Rp => {
                if positive {
                    inf
                } else {
                    max
                }
            }
        };
    }
    r
}

/// Knuth's TwoSum: `a + b = s + e` exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, if e.is_nan() { 0.0 } else { e })
}

/// f64 directed rounding from the round-to-nearest result `rn` and the exact
/// remainder `err = exact - rn` (only its sign matters).
fn directed_f64(rn: f64, err: f64, mode: Round) -> f64 {
    if err == 0.0 || err.is_nan() || mode == Round::Rn {
        return rn;
    }
    let down = || if err < 0.0 { rn.next_down() } else { rn };
    let up = || if err > 0.0 { rn.next_up() } else { rn };
    match mode {
        Round::Rm => down(),
        Round::Rp => up(),
        _ => {
            if rn > 0.0 {
                down()
            } else {
                up()
            }
        }
    }
}

/// The sign of an exact zero sum `a + b` (IEEE 754 6.3): the operands' sign when they
/// agree, else +0, except -0 when rounding toward negative.
fn zero_sum(a: f64, b: f64, mode: Round) -> f64 {
    if a.is_sign_negative() == b.is_sign_negative() {
        a
    } else if mode == Round::Rm {
        -0.0
    } else {
        0.0
    }
}

fn f32_add_expected(a: f32, b: f32, mode: Round) -> f32 {
    let (s, e) = two_sum(f64::from(a), f64::from(b));
    if s == 0.0 && e == 0.0 && !a.is_nan() && !b.is_nan() {
        return zero_sum(f64::from(a), f64::from(b), mode) as f32;
    }
    round_exact(s, e, SINGLE, mode) as f32
}

fn f32_mul_expected(a: f32, b: f32, mode: Round) -> f32 {
    round_exact(f64::from(a) * f64::from(b), 0.0, SINGLE, mode) as f32 // the product is exact in f64
}

fn f32_fma_expected(a: f32, b: f32, c: f32, mode: Round) -> f32 {
    let p = f64::from(a) * f64::from(b); // exact
    let (s, e) = two_sum(p, f64::from(c));
    if s == 0.0 && e == 0.0 && !s.is_nan() {
        return zero_sum(p, f64::from(c), mode) as f32;
    }
    round_exact(s, e, SINGLE, mode) as f32
}

/// The reference rounding agrees with the host's IEEE arithmetic where the host can
/// check it (round to nearest), so the directed-mode expectations below rest on code
/// that is itself tested.
#[test]
fn reference_rounding_agrees_with_host_arithmetic() {
    let random = pseudo_random(99, 30_000);
    for w in random.chunks(3) {
        // Random bits, biased toward close exponents (so sums round) half of the time.
        let pick = |v: u64, near: bool| {
            let bits = v as u32;
            let bits = if near { (bits & 0x807F_FFFF) | (0x3F00_0000 + ((v >> 40) as u32 & 0x0380_0000)) } else { bits };
            f32::from_bits(bits)
        };
        let near = w[2] & 1 == 0;
        let (a, b, c) = (pick(w[0], near), pick(w[1], near), pick(w[2] >> 1, near));
        let same = |x: f32, y: f32| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
        assert!(same(f32_add_expected(a, b, Round::Rn), a + b), "{a:e} + {b:e}");
        assert!(same(f32_mul_expected(a, b, Round::Rn), a * b), "{a:e} * {b:e}");
        assert!(same(f32_fma_expected(a, b, c, Round::Rn), a.mul_add(b, c)), "fma({a:e}, {b:e}, {c:e})");
        // Directed results bracket the exact value: rm <= rn <= rp, rz toward zero.
        let (rm, rp, rz) = (f32_add_expected(a, b, Round::Rm), f32_add_expected(a, b, Round::Rp), f32_add_expected(a, b, Round::Rz));
        if !(a + b).is_nan() {
            assert!(rm <= a + b && a + b <= rp && (rz == rm || rz == rp), "{a:e} + {b:e}: {rm:e} {rz:e} {rp:e}");
            assert!(rp == rm || rp == rm.next_up(), "{a:e} + {b:e}: {rm:e} {rp:e}");
        }
    }
    // Hand-worked: a power of two nudged toward zero rounds in the binade below.
    assert_eq!(f32_add_expected(-1.0, f32::from_bits(1), Round::Rz).to_bits(), 0xBF7F_FFFF);
    assert_eq!(f32_add_expected(1.0, -f32::from_bits(1), Round::Rm).to_bits(), 0x3F7F_FFFF);
    assert_eq!(f32_add_expected(1.0, -f32::from_bits(1), Round::Rn).to_bits(), 0x3F80_0000);
    // And the half-precision rounding agrees with the half crate's f32 -> f16/bf16.
    for v in pseudo_random(98, 20_000) {
        let x = f32::from_bits(v as u32);
        if x.is_nan() {
            continue;
        }
        assert_eq!(half::f16::from_f64(round_exact(f64::from(x), 0.0, HALF, Round::Rn)).to_bits(), half::f16::from_f32(x).to_bits(), "{x:e}");
        assert_eq!(half::bf16::from_f64(round_exact(f64::from(x), 0.0, BFLOAT, Round::Rn)).to_bits(), half::bf16::from_f32(x).to_bits(), "{x:e}");
    }
}

/// f32 values chosen so that sums and products land on, just above and just below
/// rounding ties, overflow, underflow to subnormals and zero, and cancel exactly.
fn f32_rounding_values() -> Vec<u64> {
    vec![
        0x3F80_0000, // 1.0
        0xBF80_0000, // -1.0
        0x3380_0000, // 2^-24: half an ulp of 1.0
        0x3380_0080, // 2^-24 (1 + 2^-16): just above that half ulp
        0x33C0_0000, // 1.5 * 2^-24
        0xB380_0000, // -2^-24
        0x3F80_0001, // 1 + 2^-23
        0x3F80_0800, // 1 + 2^-12: its square is 1 + 2^-11 + 2^-24
        0x4040_0000, // 3.0
        0x3DCC_CCCD, // 0.1
        0x3EAA_AAAB, // 1/3
        0x0000_0001, // smallest subnormal 2^-149
        0x007F_FFFF, // largest subnormal
        0x0080_0000, // smallest normal 2^-126
        0x1A00_0000, // 2^-75: its square 2^-150 is half the smallest subnormal
        0x7F7F_FFFF, // largest finite
        0x7F00_0000, // 2^127
        0x4B80_0000, // 2^24
        0x0000_0000,
        0x8000_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
    ]
}

/// ISA 9.7.3.3 add, 9.7.3.4 sub, 9.7.3.5 mul on f32 with `.rn` (nearest even), `.rz`,
/// `.rm`, `.rp` ("mantissa LSB rounds to nearest even / towards zero / towards negative
/// infinity / towards positive infinity"), each rounding the exact result once.
#[test]
fn f32_add_sub_mul_in_every_rounding_mode() {
    let (a, b) = pairs(&f32_rounding_values());
    let mut body = String::new();
    for (k, (m, _)) in MODES.iter().enumerate() {
        body += &format!("add.{m}.f32 %d{}, %a0, %a1;\nsub.{m}.f32 %d{}, %a0, %a1;\nmul.{m}.f32 %d{}, %a0, %a1;\n", k, 4 + k, 8 + k);
    }
    let columns = [a.clone(), b.clone()];
    let got = map(&["f32", "f32"], &["f32"; 12], &body, &columns);
    for (k, (m, mode)) in MODES.iter().enumerate() {
        let expect = |f: &dyn Fn(f32, f32) -> f32| a.iter().zip(&b).map(|(&x, &y)| f32_bits(f(as_f32(x), as_f32(y)))).collect::<Vec<_>>();
        check(&format!("add.{m}.f32"), Eq::F32, &columns, &got[k], &expect(&|x, y| f32_add_expected(x, y, *mode)));
        check(&format!("sub.{m}.f32"), Eq::F32, &columns, &got[4 + k], &expect(&|x, y| f32_add_expected(x, -y, *mode)));
        check(&format!("mul.{m}.f32"), Eq::F32, &columns, &got[8 + k], &expect(&|x, y| f32_mul_expected(x, y, *mode)));
    }
    // Hand-worked rows (outputs rn, rz, rm, rp):
    let row = |x: u64, y: u64| a.iter().zip(&b).position(|(&p, &q)| p == x && q == y).unwrap();
    let modes = |first: usize, r: usize| [got[first][r], got[first + 1][r], got[first + 2][r], got[first + 3][r]];
    // 1 + 2^-24 is a tie: even (1.0) to nearest; 1 + 2^-23 upward.
    assert_eq!(modes(0, row(0x3F80_0000, 0x3380_0000)), [0x3F80_0000, 0x3F80_0000, 0x3F80_0000, 0x3F80_0001]);
    // 1 + 2^-24 (1 + 2^-16) is just above the tie.
    assert_eq!(modes(0, row(0x3F80_0000, 0x3380_0080)), [0x3F80_0001, 0x3F80_0000, 0x3F80_0000, 0x3F80_0001]);
    // (1 + 2^-23) + 2^-24: a tie with an odd neighbour: up to 1 + 2^-22 to nearest.
    assert_eq!(modes(0, row(0x3F80_0001, 0x3380_0000)), [0x3F80_0002, 0x3F80_0001, 0x3F80_0001, 0x3F80_0002]);
    // 1 + 2^-149: far below the last place, only the sticky bit sees it.
    assert_eq!(modes(0, row(0x3F80_0000, 0x0000_0001)), [0x3F80_0000, 0x3F80_0000, 0x3F80_0000, 0x3F80_0001]);
    // -1 + 2^-149 = -(1 - 2^-149): toward zero and +inf give 0xbf7fffff.
    assert_eq!(modes(0, row(0xBF80_0000, 0x0000_0001)), [0xBF80_0000, 0xBF7F_FFFF, 0xBF80_0000, 0xBF7F_FFFF]);
    // 1 - 1 = +0, but -0 rounding toward -inf.
    assert_eq!(modes(0, row(0x3F80_0000, 0xBF80_0000)), [0, 0, 0x8000_0000, 0]);
    // max + max overflows: inf to nearest and upward, max toward zero and downward.
    assert_eq!(modes(0, row(0x7F7F_FFFF, 0x7F7F_FFFF)), [0x7F80_0000, 0x7F7F_FFFF, 0x7F7F_FFFF, 0x7F80_0000]);
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the 2^-24 is below the last place.
    assert_eq!(modes(8, row(0x3F80_0800, 0x3F80_0800)), [0x3F80_1000, 0x3F80_1000, 0x3F80_1000, 0x3F80_1001]);
    // 2^-75 * 2^-75 = 2^-150: a tie between 0 and the smallest subnormal (even: 0).
    assert_eq!(modes(8, row(0x1A00_0000, 0x1A00_0000)), [0, 0, 0, 1]);
    // 2^-149 * -(2^-24): far below the smallest subnormal, negative.
    assert_eq!(modes(8, row(0x0000_0001, 0xB380_0000)), [0x8000_0000, 0x8000_0000, 0x8000_0001, 0x8000_0000]);
}

/// The same on f64 (ISA 9.7.3.3-9.7.3.5); expectations from the host's f64 result and
/// the exact remainder (TwoSum, and TwoProduct with `f64::mul_add`).
#[test]
fn f64_add_sub_mul_in_every_rounding_mode() {
    let values: Vec<u64> = vec![
        f64_bits(1.0),
        f64_bits(-1.0),
        f64_bits(pow2(-53)),                      // half an ulp of 1.0: a tie
        f64_bits(pow2(-53) * (1.0 + pow2(-20))), // just above the tie
        f64_bits(-pow2(-53)),
        f64_bits(1.0 + pow2(-52)),
        f64_bits(1.0 + pow2(-26)), // square: 1 + 2^-25 + 2^-52, exact; with 1+2^-27: a sticky tail
        f64_bits(1.0 + pow2(-27)),
        f64_bits(3.0),
        f64_bits(0.1),
        f64_bits(1.0 / 3.0),
        f64_bits(1e300),
        f64_bits(1e-300),
        0, // +0
        0x8000_0000_0000_0000,
        f64_bits(f64::INFINITY),
        f64_bits(f64::NAN),
    ];
    let (a, b) = pairs(&values);
    let mut body = String::new();
    for (k, (m, _)) in MODES.iter().enumerate() {
        body += &format!("add.{m}.f64 %d{}, %a0, %a1;\nsub.{m}.f64 %d{}, %a0, %a1;\nmul.{m}.f64 %d{}, %a0, %a1;\n", k, 4 + k, 8 + k);
    }
    let columns = [a.clone(), b.clone()];
    let got = map(&["f64", "f64"], &["f64"; 12], &body, &columns);
    let add = |x: f64, y: f64, mode: Round| {
        let (s, e) = two_sum(x, y);
        if s == 0.0 && !x.is_nan() && !y.is_nan() {
            return zero_sum(x, y, mode);
        }
        if !s.is_finite() {
            // Overflow of a finite sum (1e300 + 1e300 does not overflow; nothing here
            // does) or an infinite/NaN operand: the same in every mode.
            return s;
        }
        directed_f64(s, e, mode)
    };
    let mul = |x: f64, y: f64, mode: Round| {
        let p = x * y;
        if !p.is_finite() || p == 0.0 {
            return p;
        }
        assert!(p.abs() > pow2(-960), "TwoProduct needs no underflow: {x:e} * {y:e}");
        directed_f64(p, x.mul_add(y, -p), mode)
    };
    // Products that underflow or overflow are checked by hand below, not generically.
    let keep: Vec<usize> = (0..a.len())
        .filter(|&i| {
            let (x, y) = (as_f64(a[i]), as_f64(b[i]));
            let p = x * y;
            let underflow = (p != 0.0 && p.abs() <= pow2(-960)) || (p == 0.0 && x != 0.0 && y != 0.0);
            let overflow = p.is_infinite() && x.is_finite() && y.is_finite();
            !underflow && !overflow
        })
        .collect();
    for (k, (m, mode)) in MODES.iter().enumerate() {
        let select = |col: &[u64]| keep.iter().map(|&i| col[i]).collect::<Vec<_>>();
        let ka = select(&a);
        let kb = select(&b);
        let kc = [ka.clone(), kb.clone()];
        let expect = |f: &dyn Fn(f64, f64) -> f64| ka.iter().zip(&kb).map(|(&x, &y)| f64_bits(f(as_f64(x), as_f64(y)))).collect::<Vec<_>>();
        check(&format!("add.{m}.f64"), Eq::F64, &kc, &select(&got[k]), &expect(&|x, y| add(x, y, *mode)));
        check(&format!("sub.{m}.f64"), Eq::F64, &kc, &select(&got[4 + k]), &expect(&|x, y| add(x, -y, *mode)));
        check(&format!("mul.{m}.f64"), Eq::F64, &kc, &select(&got[8 + k]), &expect(&|x, y| mul(x, y, *mode)));
    }
    let row = |x: f64, y: f64| a.iter().zip(&b).position(|(&p, &q)| p == f64_bits(x) && q == f64_bits(y)).unwrap();
    let modes = |first: usize, r: usize| [got[first][r], got[first + 1][r], got[first + 2][r], got[first + 3][r]];
    // 1 + 2^-53: a tie, even to nearest.
    assert_eq!(modes(0, row(1.0, pow2(-53))), [0x3FF0_0000_0000_0000, 0x3FF0_0000_0000_0000, 0x3FF0_0000_0000_0000, 0x3FF0_0000_0000_0001]);
    // 1e-300 * 1e-300 = 1e-600: below half the smallest subnormal (2^-1075).
    assert_eq!(modes(8, row(1e-300, 1e-300)), [0, 0, 0, 1]);
    // 1e300 * 1e300 overflows.
    assert_eq!(modes(8, row(1e300, 1e300)), [0x7FF0_0000_0000_0000, 0x7FEF_FFFF_FFFF_FFFF, 0x7FEF_FFFF_FFFF_FFFF, 0x7FF0_0000_0000_0000]);
    // (1 + 2^-27)^2 = 1 + 2^-26 + 2^-54: 2^-54 is a quarter ulp.
    assert_eq!(modes(8, row(1.0 + pow2(-27), 1.0 + pow2(-27))), [f64_bits(1.0 + pow2(-26)), f64_bits(1.0 + pow2(-26)), f64_bits(1.0 + pow2(-26)), f64_bits(1.0 + pow2(-26)) + 1]);
}

/// ISA 9.7.3.6 fma: "computes the product of a and b to infinite precision and then
/// adds c to this product, again in infinite precision", rounded once by `.rnd`.
#[test]
fn fma_rounds_once_in_every_mode() {
    let values: Vec<u64> = vec![0x3F80_0000, 0xBF80_0000, 0x3F80_0001, 0x3F7F_FFFF, 0x3380_0000, 0xB380_0000, 0x3DCC_CCCD, 0x3EAA_AAAB, 0x0000_0001, 0x7F7F_FFFF, 0xFF7F_FFFF, 0x4000_0000, 0, 0x8000_0000, 0x7F80_0000, 0x7FC0_0000];
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &x in &values {
        for &y in &values {
            for &z in &values {
                a.push(x);
                b.push(y);
                c.push(z);
            }
        }
    }
    let body: String = MODES.iter().enumerate().map(|(k, (m, _))| format!("fma.{m}.f32 %d{k}, %a0, %a1, %a2;\n")).collect();
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["f32"; 3], &["f32"; 4], &body, &columns);
    for (k, (m, mode)) in MODES.iter().enumerate() {
        let expected: Vec<u64> = (0..a.len()).map(|i| f32_bits(f32_fma_expected(as_f32(a[i]), as_f32(b[i]), as_f32(c[i]), *mode))).collect();
        check(&format!("fma.{m}.f32"), Eq::F32, &columns, &got[k], &expected);
    }
    let row = |x: u64, y: u64, z: u64| (0..a.len()).position(|i| (a[i], b[i], c[i]) == (x, y, z)).unwrap();
    let modes = |r: usize| [got[0][r], got[1][r], got[2][r], got[3][r]];
    // (1 + 2^-23)^2 - 1 = 2^-22 + 2^-46: a tie at 2^-22 (even): 2^-22 to nearest.
    assert_eq!(modes(row(0x3F80_0001, 0x3F80_0001, 0xBF80_0000)), [0x3480_0000, 0x3480_0000, 0x3480_0000, 0x3480_0001]);
    // max * 2 - max = max exactly: the product's overflow is not rounded.
    assert_eq!(modes(row(0x7F7F_FFFF, 0x4000_0000, 0xFF7F_FFFF)), [0x7F7F_FFFF; 4]);
    // 1 * 1 + 2^-149: the sticky bit of the addend.
    assert_eq!(modes(row(0x3F80_0000, 0x3F80_0000, 0x0000_0001)), [0x3F80_0000, 0x3F80_0000, 0x3F80_0000, 0x3F80_0001]);
    // 1 * 1 - 1 = +0, -0 toward -inf.
    assert_eq!(modes(row(0x3F80_0000, 0x3F80_0000, 0xBF80_0000)), [0, 0, 0x8000_0000, 0]);

    // f64, hand-worked (outputs rn, rz, rm, rp).
    let one_ulp = 1.0 + pow2(-52);
    let cases: Vec<([f64; 3], [u64; 4])> = vec![
        // (1 + 2^-52)^2 - 1 = 2^-51 + 2^-104: a tie at 2^-51.
        ([one_ulp, one_ulp, -1.0], [0x3CC0_0000_0000_0000, 0x3CC0_0000_0000_0000, 0x3CC0_0000_0000_0000, 0x3CC0_0000_0000_0001]),
        ([-one_ulp, one_ulp, 1.0], [0xBCC0_0000_0000_0000, 0xBCC0_0000_0000_0000, 0xBCC0_0000_0000_0001, 0xBCC0_0000_0000_0000]),
        // (1 + 2^-52)(1 - 2^-53) - 1 = 2^-53 - 2^-105, exact: 0x3c9ffffffffffffe.
        ([one_ulp, 1.0 - pow2(-53), -1.0], [0x3C9F_FFFF_FFFF_FFFE; 4]),
        // 1 * 1 + 2^-1074.
        ([1.0, 1.0, f64::from_bits(1)], [0x3FF0_0000_0000_0000, 0x3FF0_0000_0000_0000, 0x3FF0_0000_0000_0000, 0x3FF0_0000_0000_0001]),
        // max * 2 - max = max.
        ([f64::MAX, 2.0, -f64::MAX], [0x7FEF_FFFF_FFFF_FFFF; 4]),
        // 2^-600 * 2^-600 + 0 = 2^-1200: underflow.
        ([pow2(-600), pow2(-600), 0.0], [0, 0, 0, 1]),
        // 3 * (1/3 rounded) - 1: the exact product's error, representable: -2^-54.
        ([3.0, 1.0 / 3.0, -1.0], [0xBC90_0000_0000_0000; 4]),
    ];
    let columns: Vec<Vec<u64>> = (0..3).map(|k| cases.iter().map(|(v, _)| f64_bits(v[k])).collect()).collect();
    let body: String = MODES.iter().enumerate().map(|(k, (m, _))| format!("fma.{m}.f64 %d{k}, %a0, %a1, %a2;\n")).collect();
    let got = map(&["f64"; 3], &["f64"; 4], &body, &columns);
    for (k, (m, _)) in MODES.iter().enumerate() {
        check(&format!("fma.{m}.f64"), Eq::F64, &columns, &got[k], &cases.iter().map(|(_, e)| e[k]).collect::<Vec<_>>());
    }
}

/// ISA 9.7.3.3-9.7.3.6: `.ftz` "flushes subnormal inputs and results to
/// sign-preserving zero"; `.sat` "clamps the result to [0.0, 1.0]. NaN results are
/// flushed to +0.0f".
#[test]
fn ftz_flushes_subnormals_and_sat_clamps() {
    let values: Vec<u64> = vec![0x0000_0001, 0x8000_0001, 0x007F_FFFF, 0x0040_0000, 0x8040_0000, 0x0080_0000, 0x0080_0001, 0x3F80_0000, 0x3F00_0000, 0xBF00_0000, 0x3F40_0000, 0x4000_0000, 0x0D80_0000, 0x3080_0000, 0xB080_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0, 0x8000_0000];
    let (a, b) = pairs(&values);
    let body = "
        add.ftz.f32 %d0, %a0, %a1;
        mul.ftz.f32 %d1, %a0, %a1;
        fma.rn.ftz.f32 %d2, %a0, %a1, %a1;
        add.f32 %d3, %a0, %a1;
        mul.f32 %d4, %a0, %a1;
        add.sat.f32 %d5, %a0, %a1;
        mul.sat.f32 %d6, %a0, %a1;
        fma.rn.sat.f32 %d7, %a0, %a1, %a1;
        mul.rz.ftz.f32 %d8, %a0, %a1;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["f32", "f32"], &["f32"; 9], body, &columns);
    let flush = |x: f32| if x.is_subnormal() { if x.is_sign_negative() { -0.0 } else { 0.0 } } else { x };
    let sat = |x: f32| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    // Leave out rows whose sat result would be -0 (whether clamping turns -0 into +0
    // is not stated) and rows whose result is a subnormal that rounds to the smallest
    // normal (flushing before or after rounding is not stated).
    let rows: Vec<usize> = (0..a.len())
        .filter(|&i| {
            let (x, y) = (as_f32(a[i]), as_f32(b[i]));
            let results = [x + y, x * y, x.mul_add(y, y)];
            !results.iter().any(|r| r.to_bits() == 0x8000_0000) && !results.iter().any(|r| r.abs() == f32::MIN_POSITIVE)
        })
        .collect();
    let pick = |col: &[u64]| rows.iter().map(|&i| col[i]).collect::<Vec<_>>();
    let (ka, kb) = (pick(&a), pick(&b));
    let kc = [ka.clone(), kb.clone()];
    let expect = |f: &dyn Fn(f32, f32) -> f32| ka.iter().zip(&kb).map(|(&x, &y)| f32_bits(f(as_f32(x), as_f32(y)))).collect::<Vec<_>>();
    check("add.ftz.f32", Eq::F32, &kc, &pick(&got[0]), &expect(&|x, y| flush(flush(x) + flush(y))));
    check("mul.ftz.f32", Eq::F32, &kc, &pick(&got[1]), &expect(&|x, y| flush(flush(x) * flush(y))));
    check("fma.rn.ftz.f32", Eq::F32, &kc, &pick(&got[2]), &expect(&|x, y| flush(flush(x).mul_add(flush(y), flush(y)))));
    check("add.f32 (subnormals kept)", Eq::F32, &kc, &pick(&got[3]), &expect(&|x, y| x + y));
    check("mul.f32 (subnormals kept)", Eq::F32, &kc, &pick(&got[4]), &expect(&|x, y| x * y));
    check("add.sat.f32", Eq::F32, &kc, &pick(&got[5]), &expect(&|x, y| sat(x + y)));
    check("mul.sat.f32", Eq::F32, &kc, &pick(&got[6]), &expect(&|x, y| sat(x * y)));
    check("fma.rn.sat.f32", Eq::F32, &kc, &pick(&got[7]), &expect(&|x, y| sat(x.mul_add(y, y))));
    check("mul.rz.ftz.f32", Eq::F32, &kc, &pick(&got[8]), &expect(&|x, y| flush(f32_mul_expected(flush(x), flush(y), Round::Rz))));
    // Hand-worked: 2^-100 * 2^-30 = 2^-130 (a subnormal, 0x00080000) is flushed to +0;
    // -2^-30 * 2^-100 to -0; 2^-149 + 2^-149 is 2^-148 (0x2) without .ftz, +0 with it.
    let row = |x: u64, y: u64| a.iter().zip(&b).position(|(&p, &q)| p == x && q == y).unwrap();
    assert_eq!((got[4][row(0x0D80_0000, 0x3080_0000)], got[1][row(0x0D80_0000, 0x3080_0000)]), (0x0008_0000, 0));
    assert_eq!(got[1][row(0xB080_0000, 0x0D80_0000)], 0x8000_0000);
    assert_eq!((got[3][row(1, 1)], got[0][row(1, 1)]), (2, 0));
    // sat: NaN -> +0, 2 -> 1, -0.5 -> 0.
    assert_eq!(got[5][row(0x7FC0_0000, 0x3F80_0000)], 0);
    assert_eq!(got[5][row(0x3F80_0000, 0x3F80_0000)], 0x3F80_0000);
    assert_eq!(got[6][row(0xBF00_0000, 0x3F80_0000)], 0);
}

/// Decodes f16 (`bfloat == false`) or bf16 bits exactly.
fn narrow_to_f64(bits: u64, bfloat: bool) -> f64 {
    if bfloat {
        half::bf16::from_bits(bits as u16).to_f64()
    } else {
        half::f16::from_bits(bits as u16).to_f64()
    }
}

/// `a op b` (or `a * b + c`) on f16/bf16 values, rounded once to nearest even.
fn narrow_expected(op: &str, a: u64, b: u64, c: u64, bfloat: bool) -> u64 {
    let format = if bfloat { BFLOAT } else { HALF };
    let (x, y, z) = (narrow_to_f64(a, bfloat), narrow_to_f64(b, bfloat), narrow_to_f64(c, bfloat));
    let (first, second) = match op {
        "add" => (x, y),
        "sub" => (x, -y),
        "mul" => (x * y, 0.0), // exact in f64
        _ => (x * y, z),       // fma: the product is exact in f64
    };
    let (s, e) = two_sum(first, second);
    let r = if s == 0.0 && e == 0.0 && !(x.is_nan() || y.is_nan() || z.is_nan()) && op != "mul" {
        zero_sum(first, second, Round::Rn)
    } else if op == "mul" {
        round_exact(first, 0.0, format, Round::Rn)
    } else {
        round_exact(s, e, format, Round::Rn)
    };
    if bfloat {
        u64::from(half::bf16::from_f64(r).to_bits())
    } else {
        u64::from(half::f16::from_f64(r).to_bits())
    }
}

/// ISA 9.7.4.1-9.7.4.4: f16/f16x2 add, sub, mul, fma round to nearest even (the only
/// mode); the x2 forms work on each 16-bit half; `.sat` clamps to [0, 1] with NaN to
/// +0. 1 + 2^-11 is the classic f16 tie (even: 1.0).
#[test]
fn f16_and_f16x2_arithmetic_round_once() {
    let values: Vec<u64> = vec![0x3C00, 0xBC00, 0x1000, 0x1001, 0x3C01, 0x4200, 0x2E66, 0x3555, 0x7BFF, 0xFBFF, 0x0001, 0x0400, 0x03FF, 0x6800, 0x3800, 0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x5BFF];
    let (a, b) = pairs(&values);
    let c: Vec<u64> = (0..a.len()).map(|i| values[(i * 7 + 2) % values.len()]).collect();
    // The x2 operands: lane 0 from a row, lane 1 from another row.
    let n = a.len();
    let other = |col: &Vec<u64>, i: usize| col[(i * 13 + 5) % n];
    let a2: Vec<u64> = (0..n).map(|i| a[i] | (other(&a, i) << 16)).collect();
    let b2: Vec<u64> = (0..n).map(|i| b[i] | (other(&b, i) << 16)).collect();
    let c2: Vec<u64> = (0..n).map(|i| c[i] | (other(&c, i) << 16)).collect();
    let body = "
        add.f16 %d0, %a0, %a1;
        sub.f16 %d1, %a0, %a1;
        mul.f16 %d2, %a0, %a1;
        fma.rn.f16 %d3, %a0, %a1, %a2;
        add.rn.sat.f16 %d4, %a0, %a1;
        add.f16x2 %d5, %a3, %a4;
        mul.f16x2 %d6, %a3, %a4;
        fma.rn.f16x2 %d7, %a3, %a4, %a5;
        sub.f16x2 %d8, %a3, %a4;
    ";
    let columns = [a.clone(), b.clone(), c.clone(), a2.clone(), b2.clone(), c2.clone()];
    let got = map(&["b16", "b16", "b16", "b32", "b32", "b32"], &["b16", "b16", "b16", "b16", "b16", "b32", "b32", "b32", "b32"], body, &columns);
    let scalar = |op: &str| (0..n).map(|i| narrow_expected(op, a[i], b[i], c[i], false)).collect::<Vec<_>>();
    check("add.f16", Eq::F16, &columns, &got[0], &scalar("add"));
    check("sub.f16", Eq::F16, &columns, &got[1], &scalar("sub"));
    check("mul.f16", Eq::F16, &columns, &got[2], &scalar("mul"));
    check("fma.rn.f16", Eq::F16, &columns, &got[3], &scalar("fma"));
    let sat = |v: u64| {
        let x = narrow_to_f64(v, false);
        if x.is_nan() || x <= 0.0 {
            0
        } else if x >= 1.0 {
            0x3C00
        } else {
            v
        }
    };
    let sat_rows: Vec<usize> = (0..n).filter(|&i| narrow_expected("add", a[i], b[i], 0, false) != 0x8000).collect();
    check("add.rn.sat.f16", Eq::F16, &columns, &sat_rows.iter().map(|&i| got[4][i]).collect::<Vec<_>>(), &sat_rows.iter().map(|&i| sat(narrow_expected("add", a[i], b[i], 0, false))).collect::<Vec<_>>());
    let lanes = |op: &str, i: usize| {
        let lane = |k: u32| narrow_expected(op, (a2[i] >> (16 * k)) & 0xFFFF, (b2[i] >> (16 * k)) & 0xFFFF, (c2[i] >> (16 * k)) & 0xFFFF, false);
        lane(0) | (lane(1) << 16)
    };
    for (k, op) in [(5, "add"), (6, "mul"), (7, "fma"), (8, "sub")] {
        // Compare each lane with NaN-awareness.
        for lane in 0..2u32 {
            let g: Vec<u64> = got[k].iter().map(|v| (v >> (16 * lane)) & 0xFFFF).collect();
            let e: Vec<u64> = (0..n).map(|i| (lanes(op, i) >> (16 * lane)) & 0xFFFF).collect();
            check(&format!("{op}.f16x2 lane {lane}"), Eq::F16, &columns, &g, &e);
        }
    }
    // Hand-worked: 1 + 2^-11 = 1.0 (tie, even); 1 + 2^-11(1 + 2^-10) = 1 + 2^-10;
    // (1 + 2^-10) + 2^-11: a tie with an odd neighbour: 1 + 2^-9 (0x3c02);
    // 65504 + 65504 overflows to inf.
    let row = |x: u64, y: u64| a.iter().zip(&b).position(|(&p, &q)| p == x && q == y).unwrap();
    assert_eq!(got[0][row(0x3C00, 0x1000)], 0x3C00);
    assert_eq!(got[0][row(0x3C00, 0x1001)], 0x3C01);
    assert_eq!(got[0][row(0x3C01, 0x1000)], 0x3C02);
    assert_eq!(got[0][row(0x7BFF, 0x7BFF)], 0x7C00);
    assert_eq!(got[2][row(0x0001, 0x3800)], 0, "2^-24 * 0.5 = 2^-25: a tie between 0 and 2^-24, even");
    assert_eq!(got[4][row(0x3C00, 0x3C00)], 0x3C00, "sat: 2 -> 1");
    assert_eq!(got[4][row(0x7E00, 0x3C00)], 0, "sat: NaN -> +0");
}

/// ISA 9.7.4.1-9.7.4.4 on bf16/bf16x2 (add/sub/mul from sm_90, fma from sm_80): one
/// rounding to nearest even into 7 fraction bits; 1 + 2^-8 is the bf16 tie.
#[test]
fn bf16_and_bf16x2_arithmetic_round_once() {
    let values: Vec<u64> = vec![0x3F80, 0xBF80, 0x3B80, 0x3B81, 0x3F81, 0x4040, 0x3DCD, 0x3EAB, 0x7F7F, 0xFF7F, 0x0001, 0x0080, 0x007F, 0x4B80, 0, 0x8000, 0x7F80, 0xFF80, 0x7FC0];
    let (a, b) = pairs(&values);
    let n = a.len();
    let c: Vec<u64> = (0..n).map(|i| values[(i * 5 + 3) % values.len()]).collect();
    let other = |col: &Vec<u64>, i: usize| col[(i * 11 + 7) % n];
    let a2: Vec<u64> = (0..n).map(|i| a[i] | (other(&a, i) << 16)).collect();
    let b2: Vec<u64> = (0..n).map(|i| b[i] | (other(&b, i) << 16)).collect();
    let c2: Vec<u64> = (0..n).map(|i| c[i] | (other(&c, i) << 16)).collect();
    let body = "
        add.rn.bf16 %d0, %a0, %a1;
        sub.rn.bf16 %d1, %a0, %a1;
        mul.rn.bf16 %d2, %a0, %a1;
        fma.rn.bf16 %d3, %a0, %a1, %a2;
        add.rn.bf16x2 %d4, %a3, %a4;
        fma.rn.bf16x2 %d5, %a3, %a4, %a5;
    ";
    let columns = [a.clone(), b.clone(), c.clone(), a2.clone(), b2.clone(), c2.clone()];
    let got = map(&["b16", "b16", "b16", "b32", "b32", "b32"], &["b16", "b16", "b16", "b16", "b32", "b32"], body, &columns);
    let scalar = |op: &str| (0..n).map(|i| narrow_expected(op, a[i], b[i], c[i], true)).collect::<Vec<_>>();
    check("add.rn.bf16", Eq::BF16, &columns, &got[0], &scalar("add"));
    check("sub.rn.bf16", Eq::BF16, &columns, &got[1], &scalar("sub"));
    check("mul.rn.bf16", Eq::BF16, &columns, &got[2], &scalar("mul"));
    check("fma.rn.bf16", Eq::BF16, &columns, &got[3], &scalar("fma"));
    for (k, op) in [(4, "add"), (5, "fma")] {
        for lane in 0..2u32 {
            let g: Vec<u64> = got[k].iter().map(|v| (v >> (16 * lane)) & 0xFFFF).collect();
            let e: Vec<u64> = (0..n).map(|i| narrow_expected(op, (a2[i] >> (16 * lane)) & 0xFFFF, (b2[i] >> (16 * lane)) & 0xFFFF, (c2[i] >> (16 * lane)) & 0xFFFF, true)).collect();
            check(&format!("{op}.rn.bf16x2 lane {lane}"), Eq::BF16, &columns, &g, &e);
        }
    }
    let row = |x: u64, y: u64| a.iter().zip(&b).position(|(&p, &q)| p == x && q == y).unwrap();
    assert_eq!(got[0][row(0x3F80, 0x3B80)], 0x3F80, "1 + 2^-8: tie, even");
    assert_eq!(got[0][row(0x3F80, 0x3B81)], 0x3F81, "just above the tie");
    assert_eq!(got[0][row(0x3F81, 0x3B80)], 0x3F82, "tie with an odd neighbour");
}

/// Distance in units in the last place between two finite f32 values (through the
/// ordered integer representation).
fn ulps32(x: f32, y: f32) -> u64 {
    let ordinal = |v: f32| {
        let b = v.to_bits() as i64;
        if b & 0x8000_0000 != 0 {
            -(b & 0x7FFF_FFFF)
        } else {
            b
        }
    };
    (ordinal(x) - ordinal(y)).unsigned_abs()
}

/// ISA 9.7.3.8 div, 9.7.3.13 rcp and 9.7.3.15 sqrt with IEEE rounding `.rn .rz .rm .rp`:
/// correctly rounded. Expectations: the host's f64 quotient (or root) and the sign of
/// the exact remainder `a - q * b` (or `a - s * s`, by `f64::mul_add`), rounded to f32
/// by the reference rounding; for f64, the host's result and the same remainder sign.
#[test]
fn div_rcp_sqrt_correctly_rounded_in_every_mode() {
    let values: Vec<u64> = [1.0f32, 2.0, 3.0, 0.1, 1.0 / 3.0, 7.0, -5.0, 1e-30, 1e30, f32::MAX, f32::MIN_POSITIVE, f32::from_bits(1), f32::from_bits(0x007F_FFFF), 0.0, -0.0, f32::INFINITY, f32::NAN, 1.0 + f32::EPSILON, 10.0]
        .iter()
        .map(|&v| f32_bits(v))
        .collect();
    let (a, b) = pairs(&values);
    let mut body = String::new();
    for (k, (m, _)) in MODES.iter().enumerate() {
        body += &format!("div.{m}.f32 %d{k}, %a0, %a1;\nrcp.{m}.f32 %d{}, %a1;\nsqrt.{m}.f32 %d{}, %a0;\n", 4 + k, 8 + k);
    }
    let columns = [a.clone(), b.clone()];
    let got = map(&["f32", "f32"], &["f32"; 12], &body, &columns);
    let div = |x: f32, y: f32, mode: Round| {
        let (x, y) = (f64::from(x), f64::from(y));
        let q = x / y;
        let remainder = (-q).mul_add(y, x);
        round_exact(q, remainder * y.signum(), SINGLE, mode) as f32
    };
    let sqrt = |x: f32, mode: Round| {
        let x = f64::from(x);
        let s = x.sqrt();
        round_exact(s, (-s).mul_add(s, x), SINGLE, mode) as f32
    };
    for (k, (m, mode)) in MODES.iter().enumerate() {
        check(&format!("div.{m}.f32"), Eq::F32, &columns, &got[k], &a.iter().zip(&b).map(|(&x, &y)| f32_bits(div(as_f32(x), as_f32(y), *mode))).collect::<Vec<_>>());
        check(&format!("rcp.{m}.f32"), Eq::F32, &columns, &got[4 + k], &b.iter().map(|&y| f32_bits(div(1.0, as_f32(y), *mode))).collect::<Vec<_>>());
        check(&format!("sqrt.{m}.f32"), Eq::F32, &columns, &got[8 + k], &a.iter().map(|&x| f32_bits(sqrt(as_f32(x), *mode))).collect::<Vec<_>>());
    }
    // Hand-worked: 1/3 = 0x3eaaaaab to nearest and up, 0x3eaaaaaa toward zero and down;
    // sqrt(2) = 0x3fb504f3 (nearest, down), 0x3fb504f4 up; sqrt(-0) = -0.
    let row = |x: f32, y: f32| a.iter().zip(&b).position(|(&p, &q)| p == f32_bits(x) && q == f32_bits(y)).unwrap();
    let r = row(1.0, 3.0);
    assert_eq!([got[0][r], got[1][r], got[2][r], got[3][r]], [0x3EAA_AAAB, 0x3EAA_AAAA, 0x3EAA_AAAA, 0x3EAA_AAAB]);
    let r = row(2.0, 1.0);
    assert_eq!([got[8][r], got[9][r], got[10][r], got[11][r]], [0x3FB5_04F3, 0x3FB5_04F3, 0x3FB5_04F3, 0x3FB5_04F4]);
    assert_eq!(got[8][row(-0.0, 1.0)], 0x8000_0000);
    assert!(as_f32(got[8][row(-5.0, 1.0)]).is_nan(), "sqrt of a negative number is NaN");
    assert_eq!(got[0][row(1.0, 0.0)], 0x7F80_0000, "1 / +0 = +inf");
    assert_eq!(got[0][row(1.0, -0.0)], 0xFF80_0000, "1 / -0 = -inf");

    // f64.
    let values: Vec<u64> = [1.0f64, 2.0, 3.0, 0.1, 1.0 / 3.0, 7.0, -5.0, 1e-200, 1e200, 1.0 + f64::EPSILON, 10.0, 0.0, f64::INFINITY, f64::NAN].iter().map(|&v| f64_bits(v)).collect();
    let (a, b) = pairs(&values);
    let mut body = String::new();
    for (k, (m, _)) in MODES.iter().enumerate() {
        body += &format!("div.{m}.f64 %d{k}, %a0, %a1;\nrcp.{m}.f64 %d{}, %a1;\nsqrt.{m}.f64 %d{}, %a0;\n", 4 + k, 8 + k);
    }
    let columns = [a.clone(), b.clone()];
    let got = map(&["f64", "f64"], &["f64"; 12], &body, &columns);
    let div = |x: f64, y: f64, mode: Round| {
        let q = x / y;
        if !q.is_finite() || q == 0.0 {
            return q;
        }
        directed_f64(q, (-q).mul_add(y, x) * y.signum(), mode)
    };
    let sqrt = |x: f64, mode: Round| {
        let s = x.sqrt();
        if !s.is_finite() || s == 0.0 {
            return s;
        }
        directed_f64(s, (-s).mul_add(s, x), mode)
    };
    // 1e-200 / 1e200 underflows and 1e200 / 1e-200 overflows: those rows are left out.
    let special = |v: f64| v == 0.0 || !v.is_finite();
    let rows: Vec<usize> = (0..a.len())
        .filter(|&i| {
            let (x, y) = (as_f64(a[i]), as_f64(b[i]));
            special(x) || special(y) || ((x / y).abs() > 1e-290 && (x / y).abs() < 1e290)
        })
        .collect();
    let pick = |col: &[u64]| rows.iter().map(|&i| col[i]).collect::<Vec<_>>();
    let (ka, kb) = (pick(&a), pick(&b));
    let kc = [ka.clone(), kb.clone()];
    for (k, (m, mode)) in MODES.iter().enumerate() {
        check(&format!("div.{m}.f64"), Eq::F64, &kc, &pick(&got[k]), &ka.iter().zip(&kb).map(|(&x, &y)| f64_bits(div(as_f64(x), as_f64(y), *mode))).collect::<Vec<_>>());
        check(&format!("rcp.{m}.f64"), Eq::F64, &kc, &pick(&got[4 + k]), &kb.iter().map(|&y| f64_bits(div(1.0, as_f64(y), *mode))).collect::<Vec<_>>());
        check(&format!("sqrt.{m}.f64"), Eq::F64, &kc, &pick(&got[8 + k]), &ka.iter().map(|&x| f64_bits(sqrt(as_f64(x), *mode))).collect::<Vec<_>>());
    }
    let r = (0..a.len()).position(|i| a[i] == f64_bits(1.0) && b[i] == f64_bits(3.0)).unwrap();
    assert_eq!([got[0][r], got[1][r], got[2][r], got[3][r]], [0x3FD5_5555_5555_5555, 0x3FD5_5555_5555_5555, 0x3FD5_5555_5555_5555, 0x3FD5_5555_5555_5556]);
}

/// ISA 9.7.3.8: `div.full.f32` is within 2 ulp over the full range; `div.approx.f32`
/// within 2 ulp for |b| in [2^-126, 2^126]. ISA 9.7.3.13: `rcp.approx.f32` within 1 ulp,
/// with -inf -> -0, -0 -> -inf, +0 -> +inf, +inf -> +0, NaN -> NaN. ISA 9.7.3.15:
/// `sqrt.approx.f32` has relative error at most 2^-23; sqrt(-0) = -0, sqrt(-x) = NaN.
/// (The ISA also says `div.approx.f32` returns 0 — NaN for an infinite `a` — when
/// 2^126 < |b| < 2^128; no such divisor is used here.)
#[test]
fn approximate_div_rcp_sqrt_within_the_stated_bounds() {
    let a_values = [1.0f32, -2.5, 3.0, 0.1, 1e30, -1e-30, 7.0, f32::MAX, 1.0e-38, 12345.678];
    let b_values = [1.0f32, 3.0, -7.0, 0.1, 1e-20, 1e20, 1.5e-38, 6.0e37, 2.0f32.powi(126), 2.0f32.powi(-126), 0.3333];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &a_values {
        for &y in &b_values {
            a.push(f32_bits(x));
            b.push(f32_bits(y));
        }
    }
    let body = "
        div.full.f32 %d0, %a0, %a1;
        div.approx.f32 %d1, %a0, %a1;
        rcp.approx.f32 %d2, %a1;
        sqrt.approx.f32 %d3, %a1;
        abs.f32 %f1, %a0;
        sqrt.approx.f32 %d4, %f1;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["f32", "f32"], &["f32"; 5], body, &columns);
    let mut failures = Vec::new();
    for i in 0..a.len() {
        let (x, y) = (as_f32(a[i]), as_f32(b[i]));
        let exact_quotient = x / y; // correctly rounded
        for (k, what, bound) in [(0, "div.full.f32", 2), (1, "div.approx.f32", 2)] {
            let g = as_f32(got[k][i]);
            if exact_quotient.is_finite() && exact_quotient.abs() >= f32::MIN_POSITIVE && ulps32(g, exact_quotient) > bound {
                failures.push(format!("{what} {x:e} / {y:e}: {g:e}, correctly rounded {exact_quotient:e}"));
            }
        }
        if ulps32(as_f32(got[2][i]), 1.0 / y) > 1 {
            failures.push(format!("rcp.approx.f32 {y:e}: {:e}", as_f32(got[2][i])));
        }
        for (k, v) in [(3, y), (4, x.abs())] {
            let exact = f64::from(v).sqrt();
            let relative = ((f64::from(as_f32(got[k][i])) - exact) / exact).abs();
            if v > 0.0 && relative > pow2(-23) {
                failures.push(format!("sqrt.approx.f32 {v:e}: {:e}, relative error {relative:e}", as_f32(got[k][i])));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The special values of the ISA's tables.
    let specials: Vec<u64> = [f32::NEG_INFINITY, -0.0, 0.0, f32::INFINITY, f32::NAN, -1.0].iter().map(|&v| f32_bits(v)).collect();
    let columns = [specials];
    let got = map(&["f32"], &["f32"; 2], "rcp.approx.f32 %d0, %a0;\nsqrt.approx.f32 %d1, %a0;", &columns);
    check("rcp.approx.f32 specials", Eq::F32, &columns, &got[0], &[0x8000_0000, 0xFF80_0000, 0x7F80_0000, 0, 0x7FC0_0000, 0xBF80_0000]);
    check("sqrt.approx.f32 specials", Eq::F32, &columns, &got[1], &[0x7FC0_0000, 0x8000_0000, 0, 0x7F80_0000, 0x7FC0_0000, 0x7FC0_0000]);
}

/// `x < y` with -0.0 below +0.0, as the ISA's min/max pseudocode notes.
fn below(x: f64, y: f64) -> bool {
    x < y || (x == 0.0 && y == 0.0 && x.is_sign_negative() && !y.is_sign_negative())
}

/// The ISA 9.7.3.11/9.7.3.12 pseudocode: `min_num`/`max_num` (a NaN operand loses to a
/// number), `min_nan`/`max_nan` (`.NaN`: any NaN gives NaN).
fn min_max_reference(x: f64, y: f64, max: bool, nan: bool) -> f64 {
    if x.is_nan() && y.is_nan() || nan && (x.is_nan() || y.is_nan()) {
        return f64::NAN;
    }
    if x.is_nan() {
        return y;
    }
    if y.is_nan() {
        return x;
    }
    if max {
        if below(y, x) {
            x
        } else {
            y
        }
    } else if below(x, y) {
        x
    } else {
        y
    }
}

/// ISA 9.7.3.11 min, 9.7.3.12 max (f32, f64, `.NaN`, `.ftz`, `.xorsign.abs`) and 9.7.4.x
/// min/max on f16: a NaN operand yields the other operand unless `.NaN`; "-0.0 < +0.0";
/// `.xorsign.abs` takes the min/max of the magnitudes with the XOR of the input signs
/// (ignored when the result is NaN).
#[test]
fn min_max_with_nan_and_signed_zeros() {
    let values: Vec<u64> = [1.0f32, -1.0, 2.5, -0.0, 0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::from_bits(1), -f32::from_bits(3), -3.0].iter().map(|&v| f32_bits(v)).collect();
    let (a, b) = pairs(&values);
    let body = "
        min.f32 %d0, %a0, %a1;
        max.f32 %d1, %a0, %a1;
        min.NaN.f32 %d2, %a0, %a1;
        max.NaN.f32 %d3, %a0, %a1;
        min.ftz.f32 %d4, %a0, %a1;
        max.ftz.f32 %d5, %a0, %a1;
        min.xorsign.abs.f32 %d6, %a0, %a1;
        max.xorsign.abs.f32 %d7, %a0, %a1;
    ";
    let columns = [a.clone(), b.clone()];
    let got = map(&["f32", "f32"], &["f32"; 8], body, &columns);
    let flush = |x: f32| if x.is_subnormal() { if x.is_sign_negative() { -0.0 } else { 0.0 } } else { x };
    let expect = |f: &dyn Fn(f32, f32) -> f32| a.iter().zip(&b).map(|(&x, &y)| f32_bits(f(as_f32(x), as_f32(y)))).collect::<Vec<_>>();
    let mm = |x: f32, y: f32, max: bool, nan: bool| min_max_reference(f64::from(x), f64::from(y), max, nan) as f32;
    let xorsign = |x: f32, y: f32, max: bool| {
        let r = mm(x.abs(), y.abs(), max, false);
        if r.is_nan() {
            r
        } else if x.is_sign_negative() != y.is_sign_negative() {
            -r
        } else {
            r
        }
    };
    check("min.f32", Eq::F32, &columns, &got[0], &expect(&|x, y| mm(x, y, false, false)));
    check("max.f32", Eq::F32, &columns, &got[1], &expect(&|x, y| mm(x, y, true, false)));
    check("min.NaN.f32", Eq::F32, &columns, &got[2], &expect(&|x, y| mm(x, y, false, true)));
    check("max.NaN.f32", Eq::F32, &columns, &got[3], &expect(&|x, y| mm(x, y, true, true)));
    check("min.ftz.f32", Eq::F32, &columns, &got[4], &expect(&|x, y| mm(flush(x), flush(y), false, false)));
    check("max.ftz.f32", Eq::F32, &columns, &got[5], &expect(&|x, y| mm(flush(x), flush(y), true, false)));
    check("min.xorsign.abs.f32", Eq::F32, &columns, &got[6], &expect(&|x, y| xorsign(x, y, false)));
    check("max.xorsign.abs.f32", Eq::F32, &columns, &got[7], &expect(&|x, y| xorsign(x, y, true)));
    let row = |x: f32, y: f32| a.iter().zip(&b).position(|(&p, &q)| p == f32_bits(x) && q == f32_bits(y)).unwrap();
    assert_eq!((got[0][row(0.0, -0.0)], got[1][row(-0.0, 0.0)]), (0x8000_0000, 0), "-0 < +0 either way round");
    assert_eq!((got[0][row(f32::NAN, 2.5)], got[1][row(2.5, f32::NAN)]), (f32_bits(2.5), f32_bits(2.5)));
    assert!(as_f32(got[2][row(f32::NAN, 2.5)]).is_nan() && as_f32(got[3][row(1.0, f32::NAN)]).is_nan());
    assert_eq!(got[6][row(-1.0, 2.5)], f32_bits(-1.0), "xorsign: min(|-1|, |2.5|) with sign - ^ +");
    assert_eq!(got[7][row(-1.0, -3.0)], f32_bits(3.0), "xorsign: max(1, 3) with sign - ^ -");

    // f64 and f16.
    let values: Vec<u64> = [1.0f64, -0.0, 0.0, f64::NAN, -2.0, f64::INFINITY].iter().map(|&v| f64_bits(v)).collect();
    let (a, b) = pairs(&values);
    let columns = [a.clone(), b.clone()];
    let got = map(&["f64", "f64"], &["f64"; 2], "min.f64 %d0, %a0, %a1;\nmax.f64 %d1, %a0, %a1;", &columns);
    check("min.f64", Eq::F64, &columns, &got[0], &a.iter().zip(&b).map(|(&x, &y)| f64_bits(min_max_reference(as_f64(x), as_f64(y), false, false))).collect::<Vec<_>>());
    check("max.f64", Eq::F64, &columns, &got[1], &a.iter().zip(&b).map(|(&x, &y)| f64_bits(min_max_reference(as_f64(x), as_f64(y), true, false))).collect::<Vec<_>>());
    let values: Vec<u64> = vec![0x3C00, 0x8000, 0, 0x7E00, 0xC000, 0x7C00, 0x0001];
    let (a, b) = pairs(&values);
    let columns = [a.clone(), b.clone()];
    let got = map(&["b16", "b16"], &["b16"; 3], "min.f16 %d0, %a0, %a1;\nmax.f16 %d1, %a0, %a1;\nmax.NaN.f16 %d2, %a0, %a1;", &columns);
    let f16 = |x: f64| u64::from(half::f16::from_f64(x).to_bits());
    let mm16 = |max: bool, nan: bool| a.iter().zip(&b).map(|(&x, &y)| f16(min_max_reference(narrow_to_f64(x, false), narrow_to_f64(y, false), max, nan))).collect::<Vec<_>>();
    check("min.f16", Eq::F16, &columns, &got[0], &mm16(false, false));
    check("max.f16", Eq::F16, &columns, &got[1], &mm16(true, false));
    check("max.NaN.f16", Eq::F16, &columns, &got[2], &mm16(true, true));
}

/// ISA 9.7.3.9 abs and 9.7.3.10 neg (sign bit only; `.ftz` flushes a subnormal to a
/// sign-preserving zero first; "For abs.f64, NaN input is passed through unchanged";
/// other NaN results are unspecified NaNs), 9.7.3.2 copysign ("Copy sign bit of a into
/// value of b"), 9.7.3.1 testp ("As a special case, positive and negative zero are
/// considered normal numbers").
#[test]
fn abs_neg_copysign_and_testp_classes() {
    let values: Vec<u64> = vec![0x3F80_0000, 0xBF80_0000, 0, 0x8000_0000, 0x0000_0001, 0x8040_0000, 0x007F_FFFF, 0x0080_0000, 0x7F7F_FFFF, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0xFFC0_1234, 0x7F80_0001];
    let (a, b) = pairs(&values);
    let classes = ["finite", "infinite", "number", "notanumber", "normal", "subnormal"];
    let mut body = String::from("abs.f32 %d0, %a0;\nneg.f32 %d1, %a0;\nabs.ftz.f32 %d2, %a0;\nneg.ftz.f32 %d3, %a0;\ncopysign.f32 %d4, %a0, %a1;\n");
    body += &comparison_mask_body(|c| format!("testp.{c}.f32 %p1, %a0;"), &classes, 5);
    let columns = [a.clone(), b.clone()];
    let got = map(&["f32", "f32"], &["f32", "f32", "f32", "f32", "f32", "b32"], &body, &columns);
    let flush = |x: u64| if as_f32(x).is_subnormal() { x & 0x8000_0000 } else { x };
    let nan_or = |x: u64, f: &dyn Fn(u64) -> u64| if as_f32(x).is_nan() { 0x7FFF_FFFF } else { f(x) };
    check("abs.f32", Eq::F32, &columns, &got[0], &a.iter().map(|&x| nan_or(x, &|x| x & 0x7FFF_FFFF)).collect::<Vec<_>>());
    check("neg.f32", Eq::F32, &columns, &got[1], &a.iter().map(|&x| nan_or(x, &|x| x ^ 0x8000_0000)).collect::<Vec<_>>());
    check("abs.ftz.f32", Eq::F32, &columns, &got[2], &a.iter().map(|&x| nan_or(x, &|x| flush(x) & 0x7FFF_FFFF)).collect::<Vec<_>>());
    check("neg.ftz.f32", Eq::F32, &columns, &got[3], &a.iter().map(|&x| nan_or(x, &|x| flush(x) ^ 0x8000_0000)).collect::<Vec<_>>());
    // copysign is a bit operation: exact even on NaNs.
    check("copysign.f32", Eq::Bits, &columns, &got[4], &a.iter().zip(&b).map(|(&x, &y)| (y & 0x7FFF_FFFF) | (x & 0x8000_0000)).collect::<Vec<_>>());
    let class_mask = |x: f32| {
        let bits = [x.is_finite(), x.is_infinite(), !x.is_nan(), x.is_nan(), x.is_normal() || x == 0.0, x.is_subnormal()];
        bits.iter().enumerate().fold(0u64, |m, (k, &v)| m | (u64::from(v) << k))
    };
    check("testp.*.f32 (bit k = class k)", Eq::Bits, &columns, &got[5], &a.iter().map(|&x| class_mask(as_f32(x))).collect::<Vec<_>>());
    let row = |x: u64| a.iter().position(|&p| p == x).unwrap();
    assert_eq!(got[5][row(0)], 0b01_0101, "+0: finite, number, normal");
    assert_eq!(got[5][row(1)], 0b10_0101, "2^-149: finite, number, subnormal");
    assert_eq!(got[5][row(0x7FC0_0000)], 0b00_1000, "NaN: notanumber only");
    assert_eq!(got[2][row(0x8040_0000)], 0, "abs.ftz of a negative subnormal: +0");
    assert_eq!(got[3][row(0x0000_0001)], 0x8000_0000, "neg.ftz of a positive subnormal: -0");

    let values: Vec<u64> = vec![f64_bits(1.5), f64_bits(-2.0), 0, 0x8000_0000_0000_0000, 1, 0x8000_0000_0000_0001, f64_bits(f64::INFINITY), f64_bits(f64::NEG_INFINITY), 0x7FF8_0000_0000_0000, 0xFFF8_0000_0000_0123, 0x7FF0_0000_0000_0001];
    let (a, b) = pairs(&values);
    let mut body = String::from("abs.f64 %d0, %a0;\nneg.f64 %d1, %a0;\ncopysign.f64 %d2, %a0, %a1;\n");
    body += &comparison_mask_body(|c| format!("testp.{c}.f64 %p1, %a0;"), &classes, 3);
    let columns = [a.clone(), b.clone()];
    let got = map(&["f64", "f64"], &["f64", "f64", "f64", "b32"], &body, &columns);
    check("abs.f64 (NaNs unchanged)", Eq::Bits, &columns, &got[0], &a.iter().map(|&x| if as_f64(x).is_nan() { x } else { x & !(1 << 63) }).collect::<Vec<_>>());
    check("neg.f64", Eq::F64, &columns, &got[1], &a.iter().map(|&x| x ^ (1 << 63)).collect::<Vec<_>>());
    check("copysign.f64", Eq::Bits, &columns, &got[2], &a.iter().zip(&b).map(|(&x, &y)| (y & !(1 << 63)) | (x & (1 << 63))).collect::<Vec<_>>());
    let class_mask = |x: f64| {
        let bits = [x.is_finite(), x.is_infinite(), !x.is_nan(), x.is_nan(), x.is_normal() || x == 0.0, x.is_subnormal()];
        bits.iter().enumerate().fold(0u64, |m, (k, &v)| m | (u64::from(v) << k))
    };
    check("testp.*.f64", Eq::Bits, &columns, &got[3], &a.iter().map(|&x| class_mask(as_f64(x))).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------------
// Conversions (ISA 9.7.9.21 cvt)
// ---------------------------------------------------------------------------------

/// `x` rounded to an integral value by the integer rounding modifiers.
fn round_integral(x: f64, mode: Round) -> f64 {
    match mode {
        Round::Rn => x.round_ties_even(),
        Round::Rz => x.trunc(),
        Round::Rm => x.floor(),
        Round::Rp => x.ceil(),
    }
}

/// ISA cvt, integer notes: `.rni .rzi .rmi .rpi` round to an integer; "For
/// float-to-integer conversions, the result is clamped to the destination range by
/// default"; a NaN input gives "Zero if source is not .f64 and destination is not .s64,
/// .u64. Otherwise 1 << (BitWidth(dst) - 1)". Rust's saturating `as` casts are the
/// clamp (and give 0 for NaN, adjusted below where the ISA says otherwise).
#[test]
fn cvt_float_to_integer_rounds_saturates_and_maps_nan() {
    let values: Vec<u64> = [
        2.5f32, -2.5, 3.5, -3.5, 0.5, -0.5, f32::from_bits(0x3FBF_FFFF), -0.0, 1e10, -1e10, 2_147_483_520.0, 2_147_483_648.0, -2_147_483_648.0, f32::from_bits(0xCF00_0001), 4_294_967_040.0, 4_294_967_296.0, f32::NAN, f32::INFINITY,
        f32::NEG_INFINITY, f32::from_bits(1), -f32::from_bits(1), 255.5, 256.0, -129.0, 65535.9, 1e19, -1e19, 9.223_372e18, 32767.5, -32768.5,
    ]
    .iter()
    .map(|&v| f32_bits(v))
    .collect();
    let mut body = String::new();
    for (k, (m, _)) in MODES.iter().enumerate() {
        body += &format!("cvt.{m}i.s32.f32 %d{k}, %a0;\ncvt.{m}i.u32.f32 %d{}, %a0;\n", 4 + k);
    }
    body += "cvt.rzi.s64.f32 %d8, %a0;\ncvt.rpi.u64.f32 %d9, %a0;\ncvt.rni.s16.f32 %d10, %a0;\ncvt.rmi.u8.f32 %d11, %a0;\ncvt.rzi.ftz.s32.f32 %d12, %a0;\n";
    let columns = [values.clone()];
    let got = map(&["f32"], &["b32", "b32", "b32", "b32", "b32", "b32", "b32", "b32", "b64", "b64", "b16", "b16", "b32"], &body, &columns);
    let x = || values.iter().map(|&v| f64::from(as_f32(v)));
    for (k, (m, mode)) in MODES.iter().enumerate() {
        check(&format!("cvt.{m}i.s32.f32"), Eq::Bits, &columns, &got[k], &x().map(|v| u32v(i64::from(round_integral(v, *mode) as i32))).collect::<Vec<_>>());
        check(&format!("cvt.{m}i.u32.f32"), Eq::Bits, &columns, &got[4 + k], &x().map(|v| u64::from(round_integral(v, *mode) as u32)).collect::<Vec<_>>());
    }
    // f32 -> 64-bit: NaN gives 1 << 63.
    check("cvt.rzi.s64.f32", Eq::Bits, &columns, &got[8], &x().map(|v| if v.is_nan() { 1 << 63 } else { v.trunc() as i64 as u64 }).collect::<Vec<_>>());
    check("cvt.rpi.u64.f32", Eq::Bits, &columns, &got[9], &x().map(|v| if v.is_nan() { 1 << 63 } else { v.ceil() as u64 }).collect::<Vec<_>>());
    check("cvt.rni.s16.f32", Eq::Bits, &columns, &got[10], &x().map(|v| u64::from(v.round_ties_even() as i16 as u16)).collect::<Vec<_>>());
    check("cvt.rmi.u8.f32", Eq::Bits, &columns, &got[11], &x().map(|v| u64::from(v.floor() as u8)).collect::<Vec<_>>());
    check("cvt.rzi.ftz.s32.f32", Eq::Bits, &columns, &got[12], &x().map(|v| u32v(i64::from(v.trunc() as i32))).collect::<Vec<_>>());
    // Hand-worked: 2.5 -> 2 (rni), 2 (rzi), 2 (rmi), 3 (rpi); -2.5 -> -2, -2, -3, -2;
    // 2^31 saturates to 0x7fffffff; NaN -> 0; -inf -> 0x80000000 (s32), 0 (u32).
    let row = |v: f32| values.iter().position(|&x| x == f32_bits(v)).unwrap();
    let modes = |first: usize, r: usize| [got[first][r], got[first + 1][r], got[first + 2][r], got[first + 3][r]];
    assert_eq!(modes(0, row(2.5)), [2, 2, 2, 3]);
    assert_eq!(modes(0, row(-2.5)), [0xFFFF_FFFE, 0xFFFF_FFFE, 0xFFFF_FFFD, 0xFFFF_FFFE]);
    assert_eq!(modes(0, row(2_147_483_648.0)), [0x7FFF_FFFF; 4]);
    assert_eq!(modes(0, row(f32::NAN)), [0; 4]);
    assert_eq!((got[0][row(f32::NEG_INFINITY)], got[4][row(f32::NEG_INFINITY)]), (0x8000_0000, 0));
    assert_eq!(got[8][row(f32::NAN)], 0x8000_0000_0000_0000);

    // f64 sources: NaN gives 1 << (width - 1) whatever the destination.
    let values: Vec<u64> = [2.5f64, -2.5, 1e300, -1e300, f64::NAN, 4_294_967_295.5, -0.9, pow2(63), -pow2(63), 1.844_674_407_370_955_2e19, 65535.5, f64::INFINITY].iter().map(|&v| f64_bits(v)).collect();
    let body = "
        cvt.rni.s32.f64 %d0, %a0;
        cvt.rzi.u32.f64 %d1, %a0;
        cvt.rzi.s64.f64 %d2, %a0;
        cvt.rzi.u64.f64 %d3, %a0;
        cvt.rni.u16.f64 %d4, %a0;
        cvt.rmi.s64.f64 %d5, %a0;
    ";
    let columns = [values.clone()];
    let got = map(&["f64"], &["b32", "b32", "b64", "b64", "b16", "b64"], body, &columns);
    let x = || values.iter().map(|&v| as_f64(v));
    let nan_or = |v: f64, width: u32, f: &dyn Fn(f64) -> u64| if v.is_nan() { 1u64 << (width - 1) } else { f(v) };
    check("cvt.rni.s32.f64", Eq::Bits, &columns, &got[0], &x().map(|v| nan_or(v, 32, &|v| u32v(i64::from(v.round_ties_even() as i32)))).collect::<Vec<_>>());
    check("cvt.rzi.u32.f64", Eq::Bits, &columns, &got[1], &x().map(|v| nan_or(v, 32, &|v| u64::from(v.trunc() as u32))).collect::<Vec<_>>());
    check("cvt.rzi.s64.f64", Eq::Bits, &columns, &got[2], &x().map(|v| nan_or(v, 64, &|v| v.trunc() as i64 as u64)).collect::<Vec<_>>());
    check("cvt.rzi.u64.f64", Eq::Bits, &columns, &got[3], &x().map(|v| nan_or(v, 64, &|v| v.trunc() as u64)).collect::<Vec<_>>());
    check("cvt.rni.u16.f64", Eq::Bits, &columns, &got[4], &x().map(|v| nan_or(v, 16, &|v| u64::from(v.round_ties_even() as u16))).collect::<Vec<_>>());
    check("cvt.rmi.s64.f64", Eq::Bits, &columns, &got[5], &x().map(|v| nan_or(v, 64, &|v| v.floor() as i64 as u64)).collect::<Vec<_>>());
    let row = |v: f64| values.iter().position(|&x| x == f64_bits(v)).unwrap();
    assert_eq!((got[0][row(f64::NAN)], got[1][row(f64::NAN)], got[2][row(f64::NAN)], got[4][row(f64::NAN)]), (0x8000_0000, 0x8000_0000, 1 << 63, 0x8000));
    assert_eq!(got[2][row(pow2(63))], i64::MAX as u64, "2^63 saturates");
}

/// ISA cvt, floating-point notes: `.rn .rz .rm .rp` round a narrowing float-to-float
/// conversion; f32 -> f64 and f16 -> f32 are exact.
#[test]
fn cvt_f64_to_f32_in_every_rounding_mode() {
    let values: Vec<f64> = vec![
        1.0 + pow2(-24),                  // a tie: even (1.0)
        1.0 + pow2(-24) + pow2(-50),      // above the tie
        1.0 + pow2(-23) + pow2(-24),      // a tie with an odd neighbour
        1.0 + pow2(-25),                  // below the tie
        -(1.0 + pow2(-24) + pow2(-50)),
        0.1,
        -0.1,
        1e300,
        -1e300,
        1e-300,
        -1e-300,
        pow2(128) - pow2(103),            // f32 max + half an ulp: the overflow tie
        pow2(128) - pow2(102),            // f32 max + a quarter ulp
        pow2(-150),                       // half the smallest subnormal
        pow2(-150) * 1.5,
        pow2(-149) * 1.5,                 // a tie between subnormals 1 and 2: even (2)
        pow2(-127) + pow2(-140),          // a subnormal result with a sticky tail
        f64::NAN,
        f64::INFINITY,
        -0.0,
        3.0,
    ];
    let bits: Vec<u64> = values.iter().map(|&v| f64_bits(v)).collect();
    let body: String = MODES.iter().enumerate().map(|(k, (m, _))| format!("cvt.{m}.f32.f64 %d{k}, %a0;\n")).collect();
    let columns = [bits.clone()];
    let got = map(&["f64"], &["f32"; 4], &body, &columns);
    for (k, (m, mode)) in MODES.iter().enumerate() {
        check(&format!("cvt.{m}.f32.f64"), Eq::F32, &columns, &got[k], &values.iter().map(|&v| f32_bits(round_exact(v, 0.0, SINGLE, *mode) as f32)).collect::<Vec<_>>());
    }
    let modes = |r: usize| [got[0][r], got[1][r], got[2][r], got[3][r]];
    assert_eq!(modes(0), [0x3F80_0000, 0x3F80_0000, 0x3F80_0000, 0x3F80_0001]);
    assert_eq!(modes(4), [0xBF80_0001, 0xBF80_0000, 0xBF80_0001, 0xBF80_0000]);
    assert_eq!(modes(7), [0x7F80_0000, 0x7F7F_FFFF, 0x7F7F_FFFF, 0x7F80_0000]);
    assert_eq!(modes(10), [0x8000_0000, 0x8000_0000, 0x8000_0001, 0x8000_0000]);
    assert_eq!(modes(11), [0x7F80_0000, 0x7F7F_FFFF, 0x7F7F_FFFF, 0x7F80_0000], "the overflow tie rounds to inf");
    assert_eq!(modes(13), [0, 0, 0, 1]);
    assert_eq!(modes(15), [2, 1, 1, 2]);

    // Widening is exact: f32 -> f64, f16 -> f32, bf16 -> f32.
    let singles: Vec<u64> = [1.0f32, 0.1, -3.3e38, f32::from_bits(1), f32::INFINITY, -0.0].iter().map(|&v| f32_bits(v)).collect();
    let halves: Vec<u64> = vec![0x3C00, 0x2E66, 0xFBFF, 0x0001, 0x7C00, 0x8000];
    let columns = [singles.clone(), halves.clone()];
    let got = map(&["f32", "b16"], &["f64", "f32", "f32"], "cvt.f64.f32 %d0, %a0;\ncvt.f32.f16 %d1, %a1;\ncvt.f32.bf16 %d2, %a1;", &columns);
    check("cvt.f64.f32", Eq::F64, &columns, &got[0], &singles.iter().map(|&v| f64_bits(f64::from(as_f32(v)))).collect::<Vec<_>>());
    check("cvt.f32.f16", Eq::F32, &columns, &got[1], &halves.iter().map(|&v| f32_bits(half::f16::from_bits(v as u16).to_f32())).collect::<Vec<_>>());
    check("cvt.f32.bf16", Eq::F32, &columns, &got[2], &halves.iter().map(|&v| f32_bits(half::bf16::from_bits(v as u16).to_f32())).collect::<Vec<_>>());
}

/// ISA cvt: f32 -> f16 (`.rn .rz .rm .rp`) and f32 -> bf16 (`.rn .rz`, sm_80), and the
/// packing form `cvt.rn.f16x2.f32 d, a, b` (d[31:16] from a, d[15:0] from b); `.relu`
/// clamps negative results to 0. Expectations: the `half` crate (round to nearest even
/// from f32) and the reference rounding for the directed modes.
#[test]
fn cvt_f32_to_f16_and_bf16() {
    let values: Vec<u64> = [
        1.0f32,
        1.0 + 2f32.powi(-11),                 // f16 tie: 1.0
        1.0 + 2f32.powi(-11) + 2f32.powi(-20), // above: 1 + 2^-10
        1.0 + 3.0 * 2f32.powi(-11),           // tie, odd neighbour: up
        1.0 + 2f32.powi(-8),                  // bf16 tie
        1.0 + 2f32.powi(-8) + 2f32.powi(-20),
        65504.0,
        65519.0,
        65520.0, // f16 overflow tie: inf
        -70000.0,
        2f32.powi(-25), // f16: half the smallest subnormal: 0
        2f32.powi(-25) + 2f32.powi(-35),
        2f32.powi(-24) * 1.5,
        0.1,
        -0.1,
        f32::MAX, // bf16: rounds to inf
        f32::from_bits(0x7F7F_7FFF),
        f32::from_bits(1),
        f32::NAN,
        f32::NEG_INFINITY,
        -0.0,
    ]
    .iter()
    .map(|&v| f32_bits(v))
    .collect();
    let n = values.len();
    let others: Vec<u64> = (0..n).map(|i| values[(i * 7 + 3) % n]).collect();
    let body = "
        cvt.rn.f16.f32 %d0, %a0;
        cvt.rz.f16.f32 %d1, %a0;
        cvt.rm.f16.f32 %d2, %a0;
        cvt.rp.f16.f32 %d3, %a0;
        cvt.rn.bf16.f32 %d4, %a0;
        cvt.rz.bf16.f32 %d5, %a0;
        cvt.rn.f16x2.f32 %d6, %a0, %a1;
        cvt.rn.bf16x2.f32 %d7, %a0, %a1;
        cvt.rn.relu.f16.f32 %d8, %a0;
    ";
    let columns = [values.clone(), others.clone()];
    let got = map(&["f32", "f32"], &["b16", "b16", "b16", "b16", "b16", "b16", "b32", "b32", "b16"], body, &columns);
    let x = |v: u64| as_f32(v);
    let f16 = |v: u64| u64::from(half::f16::from_f32(x(v)).to_bits());
    let bf16 = |v: u64| u64::from(half::bf16::from_f32(x(v)).to_bits());
    let f16_in = |v: u64, mode: Round| u64::from(half::f16::from_f64(round_exact(f64::from(x(v)), 0.0, HALF, mode)).to_bits());
    let bf16_in = |v: u64, mode: Round| u64::from(half::bf16::from_f64(round_exact(f64::from(x(v)), 0.0, BFLOAT, mode)).to_bits());
    check("cvt.rn.f16.f32", Eq::F16, &columns, &got[0], &values.iter().map(|&v| f16(v)).collect::<Vec<_>>());
    for (k, mode) in [(1, Round::Rz), (2, Round::Rm), (3, Round::Rp)] {
        check(&format!("cvt.{:?}.f16.f32", mode), Eq::F16, &columns, &got[k], &values.iter().map(|&v| f16_in(v, mode)).collect::<Vec<_>>());
    }
    check("cvt.rn.bf16.f32", Eq::BF16, &columns, &got[4], &values.iter().map(|&v| bf16(v)).collect::<Vec<_>>());
    check("cvt.rz.bf16.f32", Eq::BF16, &columns, &got[5], &values.iter().map(|&v| bf16_in(v, Round::Rz)).collect::<Vec<_>>());
    for lane in 0..2 {
        let source = if lane == 1 { &values } else { &others };
        let g6: Vec<u64> = got[6].iter().map(|v| (v >> (16 * lane)) & 0xFFFF).collect();
        let g7: Vec<u64> = got[7].iter().map(|v| (v >> (16 * lane)) & 0xFFFF).collect();
        check(&format!("cvt.rn.f16x2.f32 half {lane}"), Eq::F16, &columns, &g6, &source.iter().map(|&v| f16(v)).collect::<Vec<_>>());
        check(&format!("cvt.rn.bf16x2.f32 half {lane}"), Eq::BF16, &columns, &g7, &source.iter().map(|&v| bf16(v)).collect::<Vec<_>>());
    }
    check("cvt.rn.relu.f16.f32", Eq::F16, &columns, &got[8], &values.iter().map(|&v| if x(v).is_nan() { 0x7FFF } else if x(v) < 0.0 || v == 0x8000_0000 { 0 } else { f16(v) }).collect::<Vec<_>>());
    // Hand-worked f16 rows: 1 + 2^-11 -> 0x3c00; 65520 -> inf (0x7c00) to nearest,
    // 0x7bff toward zero; 2^-25 -> 0 (tie, even), 2^-25 + 2^-35 -> 0x0001.
    assert_eq!((got[0][1], got[0][2], got[0][3]), (0x3C00, 0x3C01, 0x3C02));
    assert_eq!((got[0][8], got[1][8]), (0x7C00, 0x7BFF));
    assert_eq!((got[0][10], got[0][11], got[3][10]), (0, 1, 1));
    // bf16: 1 + 2^-8 -> 0x3f80; f32::MAX -> inf to nearest, 0x7f7f toward zero.
    assert_eq!((got[4][4], got[4][5]), (0x3F80, 0x3F81));
    assert_eq!((got[4][15], got[5][15]), (0x7F80, 0x7F7F));
}

/// ISA cvt: integer-to-float conversions round (`.rn .rz .rm .rp`); u64 values above
/// 2^24 and 2^53 exercise f32 and f64 rounding. `.sat` on a float destination clamps
/// to [0.0, 1.0] ("NaN results are flushed to positive zero").
#[test]
fn cvt_integer_to_float_in_every_rounding_mode() {
    let values: Vec<u64> = vec![0, 1, (1 << 24) + 1, (1 << 24) + 3, (1 << 53) + 1, (1 << 53) + 3, u64::MAX, 0x8000_0080_0000_0000, 0x8000_0080_0000_0001, 0x8000_0180_0000_0000, 12_345_678_901_234_567, (-5i64) as u64, i64::MIN as u64, (-(1i64 << 24) - 1) as u64];
    let mut body = String::new();
    for (k, (m, _)) in MODES.iter().enumerate() {
        body += &format!("cvt.{m}.f32.u64 %d{k}, %a0;\ncvt.{m}.f32.s64 %d{}, %a0;\ncvt.{m}.f64.u64 %d{}, %a0;\ncvt.{m}.f32.s32 %d{}, %r1;\n", 4 + k, 8 + k, 12 + k);
    }
    body = format!("cvt.u32.u64 %r1, %a0;\n{body}cvt.rn.f16.s32 %d16, %r1;\ncvt.rn.sat.f32.s32 %d17, %r1;\n");
    let columns = [values.clone()];
    let got = map(&["b64"], &["f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f64", "f64", "f64", "f64", "f32", "f32", "f32", "f32", "b16", "f32"], &body, &columns);
    // Exact integer v as (nearest f64, sign of the remainder).
    let split = |v: i128| {
        let x = v as f64;
        let rest = v - x as i128;
        (x, rest.signum() as f64)
    };
    for (k, (m, mode)) in MODES.iter().enumerate() {
        let to_f32 = |v: i128| {
            let (x, e) = split(v);
            f32_bits(round_exact(x, e, SINGLE, *mode) as f32)
        };
        let to_f64 = |v: i128| {
            let (x, e) = split(v);
            f64_bits(directed_f64(x, e, *mode))
        };
        check(&format!("cvt.{m}.f32.u64"), Eq::Bits, &columns, &got[k], &values.iter().map(|&v| to_f32(i128::from(v))).collect::<Vec<_>>());
        check(&format!("cvt.{m}.f32.s64"), Eq::Bits, &columns, &got[4 + k], &values.iter().map(|&v| to_f32(i128::from(v as i64))).collect::<Vec<_>>());
        check(&format!("cvt.{m}.f64.u64"), Eq::Bits, &columns, &got[8 + k], &values.iter().map(|&v| to_f64(i128::from(v))).collect::<Vec<_>>());
        check(&format!("cvt.{m}.f32.s32"), Eq::Bits, &columns, &got[12 + k], &values.iter().map(|&v| to_f32(i128::from(v as u32 as i32))).collect::<Vec<_>>());
    }
    check("cvt.rn.f16.s32", Eq::Bits, &columns, &got[16], &values.iter().map(|&v| u64::from(half::f16::from_f64(round_exact(f64::from(v as u32 as i32), 0.0, HALF, Round::Rn)).to_bits())).collect::<Vec<_>>());
    check("cvt.rn.sat.f32.s32", Eq::Bits, &columns, &got[17], &values.iter().map(|&v| f32_bits((v as u32 as i32 as f32).clamp(0.0, 1.0))).collect::<Vec<_>>());
    // Hand-worked: u64::MAX -> 2^64 (0x5f800000) to nearest and up, 0x5f7fffff toward
    // zero and down; 2^24 + 1 -> 2^24 (nearest, down, zero), 2^24 + 2 (up).
    let modes = |first: usize, r: usize| [got[first][r], got[first + 1][r], got[first + 2][r], got[first + 3][r]];
    assert_eq!(modes(0, 6), [0x5F80_0000, 0x5F7F_FFFF, 0x5F7F_FFFF, 0x5F80_0000]);
    assert_eq!(modes(0, 2), [0x4B80_0000, 0x4B80_0000, 0x4B80_0000, 0x4B80_0001]);
    assert_eq!(modes(8, 4), [0x4340_0000_0000_0000, 0x4340_0000_0000_0000, 0x4340_0000_0000_0000, 0x4340_0000_0000_0001], "2^53 + 1 in f64");
}

/// ISA cvt between integer types: truncation, sign/zero extension by the source
/// type, `.sat` clamping to the destination range, and (ISA 9.4.1 and the cvt notes)
/// "The result of conversion is sign-extended to the destination register width for
/// signed integers, and is zero-extended ... for unsigned" when the register is wider
/// than the destination type.
#[test]
fn cvt_integer_extension_truncation_and_saturation() {
    let values: Vec<u64> = vec![0, 1, 0x7F, 0x80, 0xFF, 0x1FF, 0x7FFF, 0x8000, 0xFFFF, 0x1_8000, 200, (-200i32) as u32 as u64, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0x1234_5678];
    let wide: Vec<u64> = values.iter().map(|&v| if v & 0x8000_0000 != 0 { v | 0xFFFF_FFFF_0000_0000 } else { v ^ 0x0000_0001_0000_0000 }).collect();
    let body = "
        cvt.s32.s8 %d0, %a0;
        cvt.u32.u8 %d1, %a0;
        cvt.s32.s16 %d2, %a0;
        cvt.u32.u16 %d3, %a0;
        cvt.s64.s32 %d4, %a0;
        cvt.u64.u32 %d5, %a0;
        cvt.u16.u32 %d6, %a0;
        cvt.s8.s32 %d7, %a0;
        cvt.sat.s8.s32 %d8, %a0;
        cvt.sat.u8.s32 %d9, %a0;
        cvt.sat.u32.s32 %d10, %a0;
        cvt.sat.s32.u32 %d11, %a0;
        cvt.sat.s32.s64 %d12, %a1;
        cvt.sat.u32.s64 %d13, %a1;
        cvt.s16.s8 %d14, %a0;
        cvt.sat.s16.s32 %d15, %a0;
        cvt.u8.u32 %d16, %a0;
    ";
    let columns = [values.clone(), wide.clone()];
    let got = map(&["b32", "b64"], &["b32", "b32", "b32", "b32", "b64", "b64", "b16", "b32", "b32", "b32", "b32", "b32", "b32", "b32", "b16", "b32", "b32"], body, &columns);
    let v = || values.iter().map(|&x| x as u32);
    let s32x = |x: i64| u32v(x);
    check("cvt.s32.s8", Eq::Bits, &columns, &got[0], &v().map(|x| s32x(i64::from(x as u8 as i8))).collect::<Vec<_>>());
    check("cvt.u32.u8", Eq::Bits, &columns, &got[1], &v().map(|x| u64::from(x as u8)).collect::<Vec<_>>());
    check("cvt.s32.s16", Eq::Bits, &columns, &got[2], &v().map(|x| s32x(i64::from(x as u16 as i16))).collect::<Vec<_>>());
    check("cvt.u32.u16", Eq::Bits, &columns, &got[3], &v().map(|x| u64::from(x as u16)).collect::<Vec<_>>());
    check("cvt.s64.s32", Eq::Bits, &columns, &got[4], &v().map(|x| x as i32 as i64 as u64).collect::<Vec<_>>());
    check("cvt.u64.u32", Eq::Bits, &columns, &got[5], &v().map(u64::from).collect::<Vec<_>>());
    check("cvt.u16.u32", Eq::Bits, &columns, &got[6], &v().map(|x| u64::from(x as u16)).collect::<Vec<_>>());
    check("cvt.s8.s32 into a .b32 register (sign-extended)", Eq::Bits, &columns, &got[7], &v().map(|x| s32x(i64::from(x as u8 as i8))).collect::<Vec<_>>());
    check("cvt.sat.s8.s32 (sign-extended)", Eq::Bits, &columns, &got[8], &v().map(|x| s32x(i64::from((x as i32).clamp(-128, 127)))).collect::<Vec<_>>());
    check("cvt.sat.u8.s32", Eq::Bits, &columns, &got[9], &v().map(|x| u64::from((x as i32).clamp(0, 255) as u32)).collect::<Vec<_>>());
    check("cvt.sat.u32.s32", Eq::Bits, &columns, &got[10], &v().map(|x| u64::from((x as i32).max(0) as u32)).collect::<Vec<_>>());
    check("cvt.sat.s32.u32", Eq::Bits, &columns, &got[11], &v().map(|x| u64::from(x.min(0x7FFF_FFFF))).collect::<Vec<_>>());
    check("cvt.sat.s32.s64", Eq::Bits, &columns, &got[12], &wide.iter().map(|&x| s32x((x as i64).clamp(i64::from(i32::MIN), i64::from(i32::MAX)))).collect::<Vec<_>>());
    check("cvt.sat.u32.s64", Eq::Bits, &columns, &got[13], &wide.iter().map(|&x| (x as i64).clamp(0, i64::from(u32::MAX)) as u64).collect::<Vec<_>>());
    check("cvt.s16.s8", Eq::Bits, &columns, &got[14], &v().map(|x| u64::from(x as u8 as i8 as i16 as u16)).collect::<Vec<_>>());
    check("cvt.sat.s16.s32 (sign-extended)", Eq::Bits, &columns, &got[15], &v().map(|x| s32x(i64::from((x as i32).clamp(-32768, 32767)))).collect::<Vec<_>>());
    check("cvt.u8.u32 into a .b32 register (zero-extended)", Eq::Bits, &columns, &got[16], &v().map(|x| u64::from(x as u8)).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------------
// Data movement (ISA: mov, ld, st; state spaces)
// ---------------------------------------------------------------------------------

/// ISA "Data Movement and Conversion Instructions: mov": `mov.b64 d, {a, b}` packs (the first element is the least
/// significant), `mov.b64 {a, b}, d` unpacks, and the sink `_` discards an element.
#[test]
fn mov_packs_and_unpacks_vectors_with_sink() {
    let a = int32_corners(20, 4);
    let b: Vec<u64> = a.iter().map(|&x| x.rotate_left(7) & 0xFFFF_FFFF ^ 0x5A5A_5A5A).collect();
    let c: Vec<u64> = a.iter().zip(&b).map(|(&x, &y)| (x << 32 | y).wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let body = "
        mov.b64 %d0, {%a0, %a1};
        mov.b64 {%r1, %r2}, %a2;
        mov.b32 %d1, %r1;
        mov.b32 %d2, %r2;
        mov.b64 {_, %r3}, %a2;
        mov.b32 %d3, %r3;
        mov.b32 {%h1, %h2}, %a0;
        mov.b32 %d4, {%h2, %h1};
        mov.b64 {%h1, %h2, %h3, %h4}, %a2;
        mov.b64 %d5, {%h4, %h3, %h2, %h1};
        mov.b64 {%h5, _, _, %h6}, %a2;
        mov.b32 %d6, {%h5, %h6};
    ";
    let columns = [a.clone(), b.clone(), c.clone()];
    let got = map(&["b32", "b32", "b64"], &["b64", "b32", "b32", "b32", "b32", "b64", "b32"], body, &columns);
    let n = a.len();
    let e = |f: &dyn Fn(usize) -> u64| (0..n).map(f).collect::<Vec<_>>();
    let half = |v: u64, k: u32| (v >> (16 * k)) & 0xFFFF;
    check("mov.b64 {a, b}", Eq::Bits, &columns, &got[0], &e(&|i| a[i] | (b[i] << 32)));
    check("mov.b64 {lo, _}", Eq::Bits, &columns, &got[1], &e(&|i| c[i] & 0xFFFF_FFFF));
    check("mov.b64 {_, hi}", Eq::Bits, &columns, &got[2], &e(&|i| c[i] >> 32));
    check("mov.b64 {_, hi} with a sink", Eq::Bits, &columns, &got[3], &e(&|i| c[i] >> 32));
    check("mov.b32 halves swapped", Eq::Bits, &columns, &got[4], &e(&|i| half(a[i], 1) | (half(a[i], 0) << 16)));
    check("mov.b64 four halves reversed", Eq::Bits, &columns, &got[5], &e(&|i| (0..4).fold(0, |acc, k| acc | (half(c[i], 3 - k) << (16 * k)))));
    check("mov.b64 {x, _, _, y}", Eq::Bits, &columns, &got[6], &e(&|i| half(c[i], 0) | (half(c[i], 3) << 16)));
}

fn kernel(params: &str, body: &str) -> String {
    format!("{HEADER}.visible .entry k({params})\n{{\n{body}\n}}\n")
}

/// ISA "Data Movement and Conversion Instructions: ld / st": `.v2`/`.v4` vectors (elements in increasing
/// addresses), narrow loads sign- or zero-extended to the register (ISA 9.4.1), narrow
/// stores of the low bits.
#[test]
fn vector_and_narrow_loads_and_stores() {
    let mut input: Vec<u8> = (0..64u32).map(|i| (i * 37 + 0x81) as u8).collect();
    input[32] = 0x9C; // a negative s8
    input[35] = 0xF0; // a negative s16 at 34
    let ptx = kernel(
        ".param .u64 in, .param .u64 out",
        "
        .reg .b32 %r<16>;
        .reg .b64 %rd<8>;
        .reg .b16 %h<4>;
        .reg .f32 %f<4>;
        ld.param.u64 %rd1, [in];
        ld.param.u64 %rd2, [out];
        cvta.to.global.u64 %rd1, %rd1;
        cvta.to.global.u64 %rd2, %rd2;
        ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
        st.global.v4.u32 [%rd2], {%r4, %r3, %r2, %r1};
        ld.global.v2.u64 {%rd3, %rd4}, [%rd1+16];
        st.global.v2.u64 [%rd2+16], {%rd4, %rd3};
        ld.global.s8 %r5, [%rd1+32];
        ld.global.u8 %r6, [%rd1+33];
        ld.global.s16 %r7, [%rd1+34];
        ld.global.u16 %r8, [%rd1+36];
        st.global.v4.u32 [%rd2+32], {%r5, %r6, %r7, %r8};
        ld.global.v2.f32 {%f1, %f2}, [%rd1+40];
        st.global.v2.f32 [%rd2+48], {%f2, %f1};
        st.global.u8 [%rd2+56], %r5;
        st.global.u16 [%rd2+58], %r7;
        ld.global.v4.u16 {%h0, %h1, %h2, %h3}, [%rd1+48];
        st.global.v2.u16 [%rd2+60], {%h3, %h0};
        ret;",
    );
    let result = run_ok(&ptx, 1, 1, &[ArgValue::Buffer(input.clone()), ArgValue::Buffer(vec![0; 64])]);
    let out = &result.buffers[1];
    let word = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let dword = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let mut expected = vec![0u8; 64];
    for k in 0..4 {
        expected[4 * k..4 * k + 4].copy_from_slice(&word(&input, 4 * (3 - k)).to_le_bytes());
    }
    expected[16..24].copy_from_slice(&dword(&input, 24).to_le_bytes());
    expected[24..32].copy_from_slice(&dword(&input, 16).to_le_bytes());
    let s8 = i32::from(input[32] as i8) as u32;
    let u8v = u32::from(input[33]);
    let s16 = i32::from(i16::from_le_bytes([input[34], input[35]])) as u32;
    let u16v = u32::from(u16::from_le_bytes([input[36], input[37]]));
    for (k, v) in [s8, u8v, s16, u16v].iter().enumerate() {
        expected[32 + 4 * k..36 + 4 * k].copy_from_slice(&v.to_le_bytes());
    }
    expected[48..52].copy_from_slice(&input[44..48]);
    expected[52..56].copy_from_slice(&input[40..44]);
    expected[56] = s8 as u8;
    expected[58..60].copy_from_slice(&(s16 as u16).to_le_bytes());
    expected[60..62].copy_from_slice(&input[54..56]);
    expected[62..64].copy_from_slice(&input[48..50]);
    assert_eq!(out, &expected, "\ngot      {:02x?}\nexpected {:02x?}", out, expected);
    assert!(s8 >> 24 == 0xFF && s16 >> 24 == 0xFF, "the test loads negative s8 and s16 values");
}

/// ISA "State Spaces" (shared): visible to all threads of the CTA; `bar.sync` (ISA
/// "Parallel Synchronization and Communication Instructions: bar") orders the writes before the reads. Accesses through 32-bit shared
/// addresses, vector accesses and a generic address from `cvta.shared`.
#[test]
fn shared_memory_round_trip_across_threads() {
    let ptx = kernel(
        ".param .u64 out",
        "
        .shared .align 8 .u32 s[128];
        .reg .b32 %r<16>;
        .reg .b64 %rd<8>;
        mov.u32 %r1, %tid.x;
        mov.u32 %r2, s;
        shl.b32 %r3, %r1, 2;
        add.u32 %r4, %r2, %r3;
        mad.lo.u32 %r5, %r1, 3, 1;
        st.shared.u32 [%r4], %r5;
        // Pairs through a vector store into the upper half: s[64 + 2t], s[65 + 2t].
        setp.lt.u32 %p1, %r1, 32;
        @!%p1 bra skip;
        shl.b32 %r6, %r1, 3;
        add.u32 %r6, %r6, %r2;
        xor.b32 %r7, %r5, 0xFFFF;
        st.shared.v2.u32 [%r6+256], {%r5, %r7};
    skip:
        bar.sync 0;
        // Read s[63 - t] through a generic address, and s[64 + t] directly.
        sub.u32 %r8, 63, %r1;
        shl.b32 %r8, %r8, 2;
        add.u32 %r8, %r8, %r2;
        cvt.u64.u32 %rd1, %r8;
        cvta.shared.u64 %rd2, %rd1;
        ld.u32 %r9, [%rd2];
        ld.shared.u32 %r10, [%r4+256];
        ld.param.u64 %rd3, [out];
        cvta.to.global.u64 %rd3, %rd3;
        mul.wide.u32 %rd4, %r1, 8;
        add.s64 %rd3, %rd3, %rd4;
        st.global.v2.u32 [%rd3], {%r9, %r10};
        ret;",
    )
    .replace(".reg .b32 %r<16>;", ".reg .b32 %r<16>;\n        .reg .pred %p<2>;");
    let result = run_ok(&ptx, 1, 64, &[ArgValue::Buffer(vec![0; 64 * 8])]);
    let out = values_of(&result.buffers[0], 4);
    for t in 0..64u64 {
        assert_eq!(out[2 * t as usize], (63 - t) * 3 + 1, "thread {t} reads s[63 - t]");
        let pair = t / 2;
        let v = pair * 3 + 1;
        let expected = if t % 2 == 0 { v } else { v ^ 0xFFFF };
        assert_eq!(out[2 * t as usize + 1], expected, "thread {t} reads s[64 + t]");
    }
}

/// ISA "State Spaces" (local): private to each thread; a thread's `.local` array
/// written and read back with computed indices, and through a generic address from
/// `cvta.local`. Several threads run the same code: no interference.
#[test]
fn local_memory_is_private_per_thread() {
    let ptx = kernel(
        ".param .u64 out",
        "
        .local .align 8 .b8 buf[64];
        .reg .b32 %r<16>;
        .reg .b64 %rd<8>;
        .reg .pred %p<2>;
        mov.u32 %r1, %tid.x;
        mov.u64 %rd1, buf;
        mov.u32 %r2, 0;
    fill:
        // buf[i] = tid * 100 + i * i, for i in 0..16 (32-bit words).
        mul.lo.u32 %r3, %r2, %r2;
        mad.lo.u32 %r3, %r1, 100, %r3;
        mul.wide.u32 %rd2, %r2, 4;
        add.s64 %rd3, %rd1, %rd2;
        st.local.u32 [%rd3], %r3;
        add.u32 %r2, %r2, 1;
        setp.lt.u32 %p1, %r2, 16;
        @%p1 bra fill;
        // Read back buf[15 - i] weighted by (i + 1), through a generic address.
        cvta.local.u64 %rd4, %rd1;
        mov.u32 %r2, 0;
        mov.u32 %r4, 0;
    sum:
        sub.u32 %r5, 15, %r2;
        mul.wide.u32 %rd2, %r5, 4;
        add.s64 %rd3, %rd4, %rd2;
        ld.u32 %r6, [%rd3];
        add.u32 %r7, %r2, 1;
        mad.lo.u32 %r4, %r6, %r7, %r4;
        add.u32 %r2, %r2, 1;
        setp.lt.u32 %p1, %r2, 16;
        @%p1 bra sum;
        ld.local.v2.u32 {%r8, %r9}, [buf+8];
        ld.param.u64 %rd5, [out];
        cvta.to.global.u64 %rd5, %rd5;
        mul.wide.u32 %rd6, %r1, 12;
        add.s64 %rd5, %rd5, %rd6;
        st.global.u32 [%rd5], %r4;
        st.global.u32 [%rd5+4], %r8;
        st.global.u32 [%rd5+8], %r9;
        ret;",
    );
    let threads = 40u64;
    let result = run_ok(&ptx, 1, threads as u32, &[ArgValue::Buffer(vec![0; threads as usize * 12])]);
    let out = values_of(&result.buffers[0], 4);
    for t in 0..threads {
        let buf = |i: u64| t * 100 + i * i;
        let sum: u64 = (0..16).map(|i| buf(15 - i) * (i + 1)).sum::<u64>() & 0xFFFF_FFFF;
        assert_eq!(&out[3 * t as usize..3 * t as usize + 3], &[sum, buf(2), buf(3)], "thread {t}");
    }
}

// ---------------------------------------------------------------------------------
// Atomics (ISA "Parallel Synchronization and Communication Instructions: atom")
// ---------------------------------------------------------------------------------

/// One atomic operation every thread applies to one shared word.
struct Atomic {
    /// `add`, `cas`, ... and the type: `atom.global.{op}.{ty}`.
    op: &'static str,
    ty: &'static str,
    initial: u64,
    /// The `b` operand of each thread (by global thread index).
    operands: Vec<u64>,
    /// `cas` only: the new value `c` of each thread.
    swaps: Vec<u64>,
}

const ATOMIC_GRID: u32 = 2;
const ATOMIC_BLOCK: u32 = 96;

/// Runs every thread of a 2 x 96 launch through `atomics` in order, each on its own
/// 8-byte slot; returns the final slot values and each atomic's returned old values.
fn run_atomics(atomics: &[Atomic]) -> (Vec<u64>, Vec<Vec<u64>>) {
    let n = (ATOMIC_GRID * ATOMIC_BLOCK) as usize;
    let mut body = String::from(
        "
        .reg .b32 %gid, %w<4>;
        .reg .b64 %target, %operands, %swaps, %olds, %off, %x<4>;
        mov.u32 %w1, %ctaid.x;
        mov.u32 %w2, %ntid.x;
        mov.u32 %w3, %tid.x;
        mad.lo.u32 %gid, %w1, %w2, %w3;
        mul.wide.u32 %off, %gid, 8;
        ld.param.u64 %target, [target];
        ld.param.u64 %operands, [operands];
        ld.param.u64 %swaps, [swaps];
        ld.param.u64 %olds, [olds];
        cvta.to.global.u64 %target, %target;
        cvta.to.global.u64 %operands, %operands;
        cvta.to.global.u64 %swaps, %swaps;
        cvta.to.global.u64 %olds, %olds;
        add.s64 %operands, %operands, %off;
        add.s64 %swaps, %swaps, %off;
        add.s64 %olds, %olds, %off;
        .reg .b32 %v32, %c32, %old32;
        .reg .b64 %v64, %c64, %old64;
",
    );
    for (k, a) in atomics.iter().enumerate() {
        let w = if a.ty.ends_with("64") { 64 } else { 32 };
        let row = k * n * 8;
        body += &format!("        ld.global.b{w} %v{w}, [%operands+{row}];\n");
        let scope = if k == 0 { ".relaxed.gpu" } else { "" };
        if a.op == "cas" {
            body += &format!("        ld.global.b{w} %c{w}, [%swaps+{row}];\n");
            body += &format!("        atom{scope}.global.cas.{} %old{w}, [%target+{}], %v{w}, %c{w};\n", a.ty, 8 * k);
        } else {
            body += &format!("        atom{scope}.global.{}.{} %old{w}, [%target+{}], %v{w};\n", a.op, a.ty, 8 * k);
        }
        body += &format!("        st.global.b{w} [%olds+{row}], %old{w};\n");
    }
    body += "        ret;";
    let ptx = kernel(".param .u64 target, .param .u64 operands, .param .u64 swaps, .param .u64 olds", &body);
    let flat = |f: &dyn Fn(&Atomic) -> Vec<u64>| atomics.iter().flat_map(|a| { let v = f(a); assert!(v.is_empty() || v.len() == n); if v.is_empty() { vec![0; n] } else { v } }).collect::<Vec<u64>>();
    let args = [
        ArgValue::Buffer(bytes_of(&atomics.iter().map(|a| a.initial).collect::<Vec<_>>(), 8)),
        ArgValue::Buffer(bytes_of(&flat(&|a| a.operands.clone()), 8)),
        ArgValue::Buffer(bytes_of(&flat(&|a| a.swaps.clone()), 8)),
        ArgValue::Buffer(vec![0; atomics.len() * n * 8]),
    ];
    let result = run_ok(&ptx, ATOMIC_GRID, ATOMIC_BLOCK, &args);
    let finals = values_of(&result.buffers[0], 8);
    let olds = values_of(&result.buffers[3], 8);
    let olds = atomics
        .iter()
        .enumerate()
        .map(|(k, a)| olds[k * n..(k + 1) * n].iter().map(|&v| if a.ty.ends_with("64") { v } else { v & 0xFFFF_FFFF }).collect())
        .collect();
    (finals.iter().zip(atomics).map(|(&v, a)| if a.ty.ends_with("64") { v } else { v & 0xFFFF_FFFF }).collect(), olds)
}

/// The returned old values and the final value are those of SOME serial order of the
/// atomic operations: thread t's operation is an edge old[t] -> new[t] (its reference
/// result), and a serial order exists exactly when these edges form an Euler trail
/// from the initial to the final value (in/out degrees balance except at the ends,
/// all edges connected).
fn assert_serializable(what: &str, initial: u64, final_value: u64, olds: &[u64], news: &[u64]) {
    use std::collections::{HashMap, HashSet};
    let mut balance: HashMap<u64, i64> = HashMap::new();
    let mut neighbours: HashMap<u64, Vec<u64>> = HashMap::new();
    for (&o, &n) in olds.iter().zip(news) {
        *balance.entry(o).or_default() += 1;
        *balance.entry(n).or_default() -= 1;
        neighbours.entry(o).or_default().push(n);
        neighbours.entry(n).or_default().push(o);
    }
    for (&v, &b) in &balance {
        let expected = i64::from(v == initial) - i64::from(v == final_value);
        assert_eq!(b, expected, "{what}: value {v:#x} is returned {} times but produced {} times: no serial order gives these old values (initial {initial:#x}, final {final_value:#x})", olds.iter().filter(|&&x| x == v).count(), news.iter().filter(|&&x| x == v).count());
    }
    assert!(olds.contains(&initial), "{what}: no thread saw the initial value {initial:#x}");
    let mut seen = HashSet::from([initial]);
    let mut stack = vec![initial];
    while let Some(v) = stack.pop() {
        for &w in neighbours.get(&v).into_iter().flatten() {
            if seen.insert(w) {
                stack.push(w);
            }
        }
    }
    assert!(olds.iter().all(|o| seen.contains(o)), "{what}: the returned values do not chain from the initial value");
}

fn atomic_reference(op: &str, ty: &str, old: u64, b: u64, c: u64) -> u64 {
    let signed = ty.starts_with('s');
    let wide = ty.ends_with("64");
    let m = if wide { u64::MAX } else { 0xFFFF_FFFF };
    let s = |v: u64| if wide { v as i64 } else { i64::from(v as u32 as i32) };
    match (op, ty) {
        ("add", "f32") => f32_bits(as_f32(old) + as_f32(b)),
        ("add", "f64") => f64_bits(as_f64(old) + as_f64(b)),
        ("add", _) => old.wrapping_add(b) & m,
        ("min", _) if signed => if s(old) <= s(b) { old } else { b },
        ("max", _) if signed => if s(old) >= s(b) { old } else { b },
        ("min", _) => old.min(b),
        ("max", _) => old.max(b),
        // ISA: inc: (r >= s) ? 0 : r + 1; dec: ((r == 0) || (r > s)) ? s : r - 1.
        ("inc", _) => if old >= b { 0 } else { old + 1 },
        ("dec", _) => if old == 0 || old > b { b } else { old - 1 },
        ("cas", _) => if old == b { c } else { old },
        ("exch", _) => b,
        ("and", _) => old & b,
        ("or", _) => old | b,
        ("xor", _) => old ^ b,
        _ => unreachable!("{op}"),
    }
}

fn check_atomics(atomics: &[Atomic], finals: &[u64], olds: &[Vec<u64>]) {
    for (k, a) in atomics.iter().enumerate() {
        let what = format!("atom.global.{}.{}", a.op, a.ty);
        let swaps = if a.swaps.is_empty() { vec![0; a.operands.len()] } else { a.swaps.clone() };
        let news: Vec<u64> = olds[k].iter().zip(&a.operands).zip(&swaps).map(|((&o, &b), &c)| atomic_reference(a.op, a.ty, o, b, c)).collect();
        assert_serializable(&what, a.initial, finals[k], &olds[k], &news);
        // For the commutative operations the final value does not depend on the order.
        let fold = |f: &dyn Fn(u64, u64) -> u64| a.operands.iter().fold(a.initial, |acc, &b| f(acc, b));
        let order_free = match a.op {
            "add" if a.ty == "f32" || a.ty == "f64" => None, // exact here, but checked by the trail
            "add" | "min" | "max" | "and" | "or" | "xor" => Some(fold(&|x, b| atomic_reference(a.op, a.ty, x, b, 0))),
            _ => None,
        };
        if let Some(expected) = order_free {
            assert_eq!(finals[k], expected, "{what}: final value");
        }
    }
}

/// ISA atom on .u32 with 192 threads in 2 blocks on one word each: add, min,
/// max, inc, dec, cas, exch, and, or, xor. The final values and the returned old
/// values must come from one serial order of the operations.
#[test]
fn atomics_u32_many_threads_one_address() {
    let n = (ATOMIC_GRID * ATOMIC_BLOCK) as usize;
    let random = |seed: u64| pseudo_random(seed, n).into_iter().map(|v| v & 0xFFFF_FFFF).collect::<Vec<_>>();
    let gid = || (0..n as u64).collect::<Vec<_>>();
    let atomics = vec![
        Atomic { op: "add", ty: "u32", initial: 5, operands: gid().iter().map(|&g| (g.wrapping_mul(2_654_435_761) >> 4) & 0x0FFF_FFFF).collect(), swaps: vec![] },
        Atomic { op: "min", ty: "u32", initial: 0x8000_0000, operands: random(30), swaps: vec![] },
        Atomic { op: "max", ty: "u32", initial: 0x100, operands: random(31), swaps: vec![] },
        Atomic { op: "inc", ty: "u32", initial: 0, operands: vec![37; n], swaps: vec![] },
        Atomic { op: "dec", ty: "u32", initial: 3, operands: vec![41; n], swaps: vec![] },
        Atomic { op: "cas", ty: "b32", initial: 0, operands: gid(), swaps: gid().iter().map(|g| g + 1).collect() },
        Atomic { op: "exch", ty: "b32", initial: 0xDEAD, operands: gid().iter().map(|g| g * 7 + 100).collect(), swaps: vec![] },
        Atomic { op: "and", ty: "b32", initial: 0xFFFF_FFFF, operands: gid().iter().map(|g| !(1u64 << (g % 29)) & 0xFFFF_FFFF).collect(), swaps: vec![] },
        Atomic { op: "or", ty: "b32", initial: 0, operands: gid().iter().map(|g| 1u64 << (g % 32)).collect(), swaps: vec![] },
        Atomic { op: "xor", ty: "b32", initial: 0x1234, operands: random(32), swaps: vec![] },
    ];
    let (finals, olds) = run_atomics(&atomics);
    check_atomics(&atomics, &finals, &olds);
    // Hand-worked finals: 192 increments wrapping at 37 from 0 end at 192 mod 38 = 2;
    // 192 decrements from 3 with bound 41: 3, 2, 1, 0 -> 41 ... end at
    // (3 - 192) mod 42 = 21; or of all bits is 0xffffffff; and clears bits 0..28.
    assert_eq!(finals[3], 192 % 38);
    assert_eq!(finals[4], (3i64 - 192).rem_euclid(42) as u64);
    assert_eq!(finals[8], 0xFFFF_FFFF);
    assert_eq!(finals[7], 0xE000_0000);
    // cas: every returned value is distinct and the successful ones form the chain
    // 0 -> 1 -> 2 ...: the number of successes equals the final value.
    let successes = olds[5].iter().zip(&atomics[5].operands).filter(|(o, c)| o == c).count() as u64;
    assert_eq!(finals[5], successes);
}

/// ISA atom on .s32 (signed min/max, negative addends), .u64, .s64, .f32 and
/// .f64 (add: "atom.add.f32 rounds to nearest even"; the operands are small integers
/// and halves, so every order gives exact sums).
#[test]
fn atomics_s32_u64_s64_f32_f64_many_threads_one_address() {
    let n = (ATOMIC_GRID * ATOMIC_BLOCK) as usize;
    let random = |seed: u64| pseudo_random(seed, n);
    let signed32 = |seed: u64| random(seed).into_iter().map(|v| v & 0xFFFF_FFFF).collect::<Vec<_>>();
    let gid = || (0..n as u64).collect::<Vec<_>>();
    let atomics = vec![
        Atomic { op: "add", ty: "s32", initial: 0, operands: gid().iter().map(|&g| u32v(g as i64 * 1000 - 90_000)).collect(), swaps: vec![] },
        Atomic { op: "min", ty: "s32", initial: 0, operands: signed32(40), swaps: vec![] },
        Atomic { op: "max", ty: "s32", initial: 0x8000_0000, operands: signed32(41), swaps: vec![] },
        Atomic { op: "add", ty: "u64", initial: u64::MAX - 1000, operands: random(42).iter().map(|v| v >> 8).collect(), swaps: vec![] },
        Atomic { op: "min", ty: "u64", initial: u64::MAX, operands: random(43), swaps: vec![] },
        Atomic { op: "max", ty: "u64", initial: 0, operands: random(44), swaps: vec![] },
        Atomic { op: "cas", ty: "b64", initial: 1 << 40, operands: gid().iter().map(|g| (1 << 40) + g).collect(), swaps: gid().iter().map(|g| (1 << 40) + g + 1).collect() },
        Atomic { op: "exch", ty: "b64", initial: 7, operands: gid().iter().map(|g| g << 33 | 1).collect(), swaps: vec![] },
        Atomic { op: "and", ty: "b64", initial: u64::MAX, operands: gid().iter().map(|g| !(1u64 << (g % 64)) | (1 << 63)).collect(), swaps: vec![] },
        Atomic { op: "or", ty: "b64", initial: 0, operands: gid().iter().map(|g| 1u64 << (g % 61)).collect(), swaps: vec![] },
        Atomic { op: "xor", ty: "b64", initial: 0xFEED, operands: random(45), swaps: vec![] },
        Atomic { op: "min", ty: "s64", initial: 0, operands: random(46), swaps: vec![] },
        Atomic { op: "max", ty: "s64", initial: i64::MIN as u64, operands: random(47), swaps: vec![] },
        Atomic { op: "add", ty: "f32", initial: f32_bits(0.25), operands: gid().iter().map(|&g| f32_bits(g as f32 * 0.5 - 40.0)).collect(), swaps: vec![] },
        Atomic { op: "add", ty: "f64", initial: f64_bits(-3.0), operands: gid().iter().map(|&g| f64_bits(g as f64 * 0.25 + 1e6)).collect(), swaps: vec![] },
    ];
    let (finals, olds) = run_atomics(&atomics);
    check_atomics(&atomics, &finals, &olds);
    let f32_sum: f64 = 0.25 + (0..n).map(|g| g as f64 * 0.5 - 40.0).sum::<f64>();
    assert_eq!(as_f32(finals[13]) as f64, f32_sum, "atom.add.f32: exact sum");
    let f64_sum: f64 = -3.0 + (0..n).map(|g| g as f64 * 0.25 + 1e6).sum::<f64>();
    assert_eq!(as_f64(finals[14]), f64_sum, "atom.add.f64: exact sum");
    assert_eq!(finals[0], u32v((0..n as i64).map(|g| g * 1000 - 90_000).sum::<i64>()), "atom.add.s32 with negative addends");
}

/// A compare-and-swap loop (the classic lock-free add, ISA atom `.cas`): each
/// thread retries until its CAS returns the value it compared with; the total must
/// be the sum of every thread's addend.
#[test]
fn atomic_cas_loop_adds_every_contribution() {
    let ptx = kernel(
        ".param .u64 target, .param .u64 tries",
        "
        .reg .b32 %r<12>;
        .reg .b64 %rd<6>;
        .reg .pred %p<2>;
        mov.u32 %r1, %ctaid.x;
        mov.u32 %r2, %ntid.x;
        mov.u32 %r3, %tid.x;
        mad.lo.u32 %r4, %r1, %r2, %r3;
        mad.lo.u32 %r5, %r4, 3, 1;
        ld.param.u64 %rd1, [target];
        cvta.to.global.u64 %rd1, %rd1;
        ld.global.u32 %r6, [%rd1];
        mov.u32 %r9, 0;
    retry:
        add.u32 %r9, %r9, 1;
        add.u32 %r7, %r6, %r5;
        atom.global.cas.b32 %r8, [%rd1], %r6, %r7;
        setp.ne.u32 %p1, %r8, %r6;
        mov.u32 %r6, %r8;
        @%p1 bra retry;
        ld.param.u64 %rd2, [tries];
        cvta.to.global.u64 %rd2, %rd2;
        mul.wide.u32 %rd3, %r4, 4;
        add.s64 %rd2, %rd2, %rd3;
        st.global.u32 [%rd2], %r9;
        ret;",
    );
    let n = 3 * 64u64;
    let result = run_ok(&ptx, 3, 64, &[ArgValue::Buffer(bytes_of(&[1000], 4)), ArgValue::Buffer(vec![0; n as usize * 4])]);
    let total = values_of(&result.buffers[0], 4)[0];
    assert_eq!(total, 1000 + (0..n).map(|g| 3 * g + 1).sum::<u64>());
    assert!(values_of(&result.buffers[1], 4).iter().all(|&t| t >= 1));
}

// ---------------------------------------------------------------------------------
// Warp-level operations (ISA 9.7.9.6 shfl.sync; vote.sync and activemask)
// ---------------------------------------------------------------------------------

/// The ISA's shfl.sync pseudocode, transcribed: the source lane and the predicate.
fn shfl_reference(mode: &str, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 0x1F;
    let cval = c & 0x1F;
    let segmask = (c >> 8) & 0x1F;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, pval) = match mode {
        "up" => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        "down" => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        "bfly" => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        _ => {
            let j = (min_lane | (bval & !segmask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if pval {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

/// ISA 9.7.9.6 shfl.sync with the full mask on two warps: up/down/bfly/idx with the
/// CUDA clamp values (0 for up, 0x1f otherwise), 8-lane segments (`c[12:8] = 32 - 8`),
/// a small clamp that leaves the upper lanes reading their own value, lane operands
/// that differ per lane, and lane numbers of 32 and more (only b[4:0] counts).
#[test]
fn shfl_sync_every_mode_with_clamps_and_segments() {
    // (mode, b operand: a constant or a per-lane register, c)
    let cases: &[(&str, &str, u32)] = &[
        ("up", "3", 0),
        ("down", "5", 0x1F),
        ("bfly", "6", 0x1F),
        ("idx", "13", 0x1F),
        ("down", "3", 0x181F),
        ("up", "2", 0x1800),
        ("idx", "5", 0x181F),
        ("bfly", "1", 0x0F),
        ("down", "%b1", 0x1F),
        ("idx", "%b2", 0x1F),
        ("idx", "%b3", 0x1F),
        ("up", "1", 0x08),
        ("bfly", "%b1", 0x101F),
    ];
    let mut body = String::from(
        "
        .reg .b32 %me, %lane, %v, %b1, %b2, %b3, %r<16>, %pm, %t;
        .reg .b64 %out, %off;
        .reg .pred %p<16>;
        mov.u32 %me, %tid.x;
        mov.u32 %lane, %laneid;
        mad.lo.u32 %v, %me, 10, 7;
        rem.u32 %b1, %me, 7;
        sub.u32 %b2, 31, %lane;
        add.u32 %b3, %lane, 40;
        mov.u32 %pm, 0;
",
    );
    for (k, (mode, b, c)) in cases.iter().enumerate() {
        body += &format!("        shfl.sync.{mode}.b32 %r{k}|%p{k}, %v, {b}, {c:#x}, 0xffffffff;\n");
        body += &format!("        selp.b32 %t, {}, 0, %p{k};\n        or.b32 %pm, %pm, %t;\n", 1u32 << k);
    }
    body += &format!("        ld.param.u64 %out, [out];\n        cvta.to.global.u64 %out, %out;\n        mul.wide.u32 %off, %me, {};\n        add.s64 %out, %out, %off;\n", 4 * (cases.len() + 1));
    for k in 0..cases.len() {
        body += &format!("        st.global.u32 [%out+{}], %r{k};\n", 4 * k);
    }
    body += &format!("        st.global.u32 [%out+{}], %pm;\n        ret;", 4 * cases.len());
    let ptx = kernel(".param .u64 out", &body);
    let threads = 64u32;
    let stride = cases.len() + 1;
    let result = run_ok(&ptx, 1, threads, &[ArgValue::Buffer(vec![0; threads as usize * stride * 4])]);
    let out = values_of(&result.buffers[0], 4);
    let mut failures = Vec::new();
    for tid in 0..threads {
        let (lane, warp) = (tid % 32, tid / 32);
        let b_of = |b: &str| match b {
            "%b1" => tid % 7,
            "%b2" => 31 - lane,
            "%b3" => lane + 40,
            n => n.parse().unwrap(),
        };
        for (k, (mode, b, c)) in cases.iter().enumerate() {
            let (j, p) = shfl_reference(mode, lane, b_of(b), *c);
            let expected = u64::from((warp * 32 + j) * 10 + 7);
            let got = out[tid as usize * stride + k];
            let got_p = (out[tid as usize * stride + cases.len()] >> k) & 1 == 1;
            if got != expected || got_p != p {
                failures.push(format!("thread {tid}: shfl.sync.{mode} b={b} c={c:#x}: expected {expected} (lane {j}, p {p}), got {got} (p {got_p})"));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    // Hand-worked: shfl.down by 5 with c = 0x1f: lane 26 reads lane 31, lane 27 its own
    // value with p = 0; shfl.up by 3 with c = 0: lane 2 keeps its own value.
    assert_eq!((out[26 * stride + 1], out[27 * stride + 1]), (31 * 10 + 7, 27 * 10 + 7));
    assert_eq!(out[27 * stride + cases.len()] >> 1 & 1, 0);
    assert_eq!(out[2 * stride], 2 * 10 + 7);
}

/// ISA 9.7.9.6 shfl.sync and vote.sync with partial member masks on the two halves of a
/// warp that diverged: each half shuffles and votes among its own 16 lanes;
/// `activemask` returns the lanes executing it. vote.sync (ISA "Parallel
/// Synchronization and Communication Instructions: vote.sync"): `.all` true if the
/// predicate holds in every member, `.any` in some, `.uni` if it is the same in all,
/// `.ballot.b32` the member lanes where it holds (a negated predicate `!q` is allowed).
#[test]
fn shfl_and_vote_with_partial_masks_and_activemask() {
    let ptx = kernel(
        ".param .u64 out",
        "
        .reg .b32 %me, %lane, %v, %i, %r<12>, %t, %pm;
        .reg .b64 %out, %off;
        .reg .pred %p<8>, %q, %upper;
        mov.u32 %me, %tid.x;
        mov.u32 %lane, %laneid;
        mad.lo.u32 %v, %me, 100, 3;
        // q: lane % 5 != 0, or the upper half.
        rem.u32 %t, %lane, 5;
        setp.ne.u32 %q, %t, 0;
        setp.ge.u32 %upper, %lane, 16;
        or.pred %q, %q, %upper;
        @%upper bra upper_half;
        shfl.sync.bfly.b32 %r1|%p1, %v, 1, 0x1f, 0x0000ffff;
        shfl.sync.down.b32 %r2|%p2, %v, 4, 0xf, 0x0000ffff;
        vote.sync.all.pred %p3, %q, 0x0000ffff;
        vote.sync.any.pred %p4, %q, 0x0000ffff;
        vote.sync.uni.pred %p5, %q, 0x0000ffff;
        vote.sync.ballot.b32 %r3, %q, 0x0000ffff;
        vote.sync.ballot.b32 %r4, !%q, 0x0000ffff;
        activemask.b32 %r5;
        bra.uni done;
    upper_half:
        // idx = 16 + (lane * 3) % 16, inside the upper half.
        mul.lo.u32 %i, %lane, 3;
        and.b32 %i, %i, 15;
        add.u32 %i, %i, 16;
        shfl.sync.idx.b32 %r1|%p1, %v, %i, 0x1f, 0xffff0000;
        shfl.sync.up.b32 %r2|%p2, %v, 2, 0x1000, 0xffff0000;
        vote.sync.all.pred %p3, %q, 0xffff0000;
        vote.sync.any.pred %p4, %q, 0xffff0000;
        vote.sync.uni.pred %p5, %q, 0xffff0000;
        vote.sync.ballot.b32 %r3, %q, 0xffff0000;
        vote.sync.ballot.b32 %r4, !%q, 0xffff0000;
        activemask.b32 %r5;
    done:
        selp.b32 %pm, 1, 0, %p1;
        selp.b32 %t, 2, 0, %p2;
        or.b32 %pm, %pm, %t;
        selp.b32 %t, 4, 0, %p3;
        or.b32 %pm, %pm, %t;
        selp.b32 %t, 8, 0, %p4;
        or.b32 %pm, %pm, %t;
        selp.b32 %t, 16, 0, %p5;
        or.b32 %pm, %pm, %t;
        ld.param.u64 %out, [out];
        cvta.to.global.u64 %out, %out;
        mul.wide.u32 %off, %me, 24;
        add.s64 %out, %out, %off;
        st.global.v2.u32 [%out], {%r1, %r2};
        st.global.v2.u32 [%out+8], {%r3, %r4};
        st.global.v2.u32 [%out+16], {%r5, %pm};
        ret;",
    );
    let result = run_ok(&ptx, 1, 32, &[ArgValue::Buffer(vec![0; 32 * 24])]);
    let out = values_of(&result.buffers[0], 4);
    let value = |lane: u32| u64::from(lane * 100 + 3);
    let q = |lane: u32| !lane.is_multiple_of(5) || lane >= 16;
    for lane in 0..32u32 {
        let row = &out[lane as usize * 6..lane as usize * 6 + 6];
        let upper = lane >= 16;
        let members: Vec<u32> = if upper { (16..32).collect() } else { (0..16).collect() };
        let mask = if upper { 0xFFFF_0000u64 } else { 0xFFFF };
        let (j1, p1) = if upper { shfl_reference("idx", lane, 16 + (lane * 3) % 16, 0x1F) } else { shfl_reference("bfly", lane, 1, 0x1F) };
        let (j2, p2) = if upper { shfl_reference("up", lane, 2, 0x1000) } else { shfl_reference("down", lane, 4, 0xF) };
        let all = members.iter().all(|&l| q(l));
        let any = members.iter().any(|&l| q(l));
        let ballot = members.iter().filter(|&&l| q(l)).fold(0u64, |m, &l| m | (1 << l));
        let expected_flags = u64::from(p1) | u64::from(p2) << 1 | u64::from(all) << 2 | u64::from(any) << 3 | u64::from(all || !any) << 4;
        assert_eq!(row, &[value(j1), value(j2), ballot, !ballot & mask, mask, expected_flags], "lane {lane}");
    }
    // Hand-worked: the lower half's ballot of q (lane % 5 != 0) is 0xffff without bits
    // 0, 5, 10, 15 = 0x7bde; lane 13 shuffling down by 4 with clamp 15 keeps its value.
    assert_eq!(out[2], 0x7BDE);
    assert_eq!((out[13 * 6 + 1], out[13 * 6 + 5] & 2), (value(13), 0));
}

/// activemask (ISA "Parallel Synchronization and Communication Instructions:
/// activemask") after some lanes exited, used as the member mask of vote.sync and
/// shfl.sync among the remaining lanes; a shuffle reading a lane outside the member
/// mask, whose value the ISA calls unpredictable, is reported by the simulator.
#[test]
fn activemask_after_exits_and_shuffles_outside_the_mask() {
    let ptx = kernel(
        ".param .u64 out",
        "
        .reg .b32 %me, %lane, %am, %v, %src, %r<4>;
        .reg .b64 %out, %off;
        .reg .pred %p<4>;
        mov.u32 %me, %tid.x;
        mov.u32 %lane, %laneid;
        setp.ge.u32 %p1, %lane, 20;
        @%p1 exit;
        activemask.b32 %am;
        mad.lo.u32 %v, %lane, 3, 1;
        // Rotate by one among the 20 remaining lanes.
        add.u32 %src, %lane, 1;
        rem.u32 %src, %src, 20;
        shfl.sync.idx.b32 %r1, %v, %src, 0x1f, %am;
        and.b32 %r2, %lane, 1;
        setp.eq.u32 %p2, %r2, 1;
        vote.sync.ballot.b32 %r3, %p2, %am;
        ld.param.u64 %out, [out];
        cvta.to.global.u64 %out, %out;
        mul.wide.u32 %off, %me, 12;
        add.s64 %out, %out, %off;
        st.global.u32 [%out], %am;
        st.global.u32 [%out+4], %r1;
        st.global.u32 [%out+8], %r3;
        ret;",
    );
    let result = run_ok(&ptx, 1, 32, &[ArgValue::Buffer(vec![0; 32 * 12])]);
    let out = values_of(&result.buffers[0], 4);
    for lane in 0..20u64 {
        let row = &out[lane as usize * 3..lane as usize * 3 + 3];
        assert_eq!(row, &[0x000F_FFFF, ((lane + 1) % 20) * 3 + 1, 0x000A_AAAA], "lane {lane}");
    }

    // The same rotation over all 32 lanes while the mask names only 20: lane 19 reads
    // lane 20, outside the mask.
    let bad = ptx.replace("rem.u32 %src, %src, 20;", "rem.u32 %src, %src, 32;").replace("setp.ge.u32 %p1, %lane, 20;\n        @%p1 exit;", "setp.ge.u32 %p1, %lane, 20;\n        @%p1 bra.uni skip;").replace("ret;", "skip:\n        ret;");
    let bad = bad.replace("activemask.b32 %am;", "mov.u32 %am, 0x000fffff;");
    match simulate(&bad, 1, 32, &[ArgValue::Buffer(vec![0; 32 * 12])]) {
        Ok(_) => panic!("a shuffle from a lane outside the member mask was not reported"),
        Err((e, rendered)) => {
            assert_eq!(e.kind, SimErrorKind::Undefined, "{rendered}");
            assert!(e.message.contains("shuffle reads lane 20"), "{rendered}");
        }
    }
}
