//! Simulator speed: thread-instructions per second on compiled kernels (criterion
//! prints the throughput in elements per second, one element being one executed
//! instruction of one thread).
//!
//! `cargo bench -p backend --bench sim`: a loop-heavy kernel (arithmetic in a loop, one
//! thread block of 256), a memory-bound one (saxpy over 64 blocks) and a
//! synchronisation-heavy one (a shared-memory tree reduction with a barrier per step).
//! The decode step (parsing and decoding the PTX once) is measured separately.

use backend::interp::{ArgValue, Launch};
use backend::sim::{Options, Simulator};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn corpus(name: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(name)).unwrap()
}

fn bench(c: &mut Criterion) {
    let tables = tables::nvptx();
    let mut group = c.benchmark_group("sim");
    let cases: Vec<(&str, String, &str, Launch, Vec<ArgValue>)> = vec![
        (
            "loops",
            backend::synth::compile(&backend::synth::looped(320), "80").unwrap(),
            "generated",
            Launch { grid: [1, 1, 1], block: [256, 1, 1] },
            vec![ArgValue::Buffer(vec![0; 64]), ArgValue::Scalar(40), ArgValue::Scalar(u128::from(1.0001f32.to_bits()))],
        ),
        (
            "saxpy",
            backend::synth::compile(&corpus("saxpy_f32.mir"), "80").unwrap(),
            "saxpy",
            Launch { grid: [64, 1, 1], block: [256, 1, 1] },
            vec![ArgValue::Buffer(vec![0; 4 * 16384]), ArgValue::Buffer(vec![0; 4 * 16384]), ArgValue::Scalar(u128::from(2.0f32.to_bits())), ArgValue::Scalar(16384)],
        ),
        (
            "reduction",
            backend::synth::compile(&corpus("reduce_shared_sum.mir"), "80").unwrap(),
            "block_sum",
            Launch { grid: [16, 1, 1], block: [256, 1, 1] },
            vec![ArgValue::Buffer(vec![0; 4 * 4096]), ArgValue::Buffer(vec![0; 4 * 16]), ArgValue::Scalar(4096)],
        ),
    ];
    for (name, ptx, entry, launch, args) in &cases {
        let sim = Simulator::new(ptx, name, tables, None).unwrap();
        let steps = sim.run(entry, launch, args, &Options::default()).unwrap().steps;
        group.throughput(Throughput::Elements(steps));
        group.sample_size(10);
        group.bench_function(format!("run/{name}"), |b| b.iter(|| sim.run(entry, launch, args, &Options::default()).unwrap()));
    }
    let big = backend::synth::compile(&backend::synth::straight_line(100_000), "80").unwrap();
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.bench_function("decode/100k-instructions", |b| b.iter(|| Simulator::new(&big, "big.ptx", tables, None).unwrap()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
