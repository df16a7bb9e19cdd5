//! Whole-pipeline compile time (parse, every -O3 pass, emit) on the generated shapes of
//! `backend::synth::SHAPES`, 1k to 1M instructions, in process and sequential (the
//! whole-process figures beside llc come from `scripts/compile-time.py`).
//!
//! `cargo bench -p backend --bench compile`; per-instruction time is the reported time
//! divided by the size (criterion prints it as throughput in elements per second).

use backend::synth;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

// The allocator `ptxc` itself runs with.
#[global_allocator]
static GLOBAL: backend::allocator::Allocator = backend::allocator::Allocator;

fn bench(c: &mut Criterion) {
    backend::allocator::tune();
    // `cargo test --all-targets` runs benchmarks once as a smoke test (no `--bench`
    // argument); only `cargo bench` measures the large sizes.
    let measuring = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if measuring { &[1_000, 10_000, 100_000, 1_000_000] } else { &[1_000] };
    for shape in synth::SHAPES {
        let mut group = c.benchmark_group(format!("compile/{}", shape.name));
        for &n in sizes {
            let text = (shape.mir)(n);
            group.throughput(Throughput::Elements(n as u64));
            if n >= 100_000 {
                group.sample_size(10);
            }
            group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
                b.iter(|| synth::compile(text, shape.sm).expect("generated MIR compiles"))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
