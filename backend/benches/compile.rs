//! Whole-pipeline compile time (parse, verify, isel, dce, phi-elim, emit) on generated
//! straight-line and looped kernels of 1k to 1M instructions.
//!
//! `cargo bench -p backend --bench compile`; per-instruction time is the reported time
//! divided by the size (criterion prints it as throughput in elements per second).

use backend::synth;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn bench(c: &mut Criterion) {
    // `cargo test --all-targets` runs benchmarks once as a smoke test (no `--bench`
    // argument); only `cargo bench` measures the large sizes.
    let measuring = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if measuring { &[1_000, 10_000, 100_000, 1_000_000] } else { &[1_000] };
    for (shape, generate) in [("straight", synth::straight_line as fn(usize) -> String), ("looped", synth::looped)] {
        let mut group = c.benchmark_group(format!("compile/{shape}"));
        for &n in sizes {
            let text = generate(n);
            group.throughput(Throughput::Elements(n as u64));
            if n >= 100_000 {
                group.sample_size(10);
            }
            group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
                b.iter(|| synth::compile(text, "80").expect("generated MIR compiles"))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
