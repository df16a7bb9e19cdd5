//! End-to-end compile time of one kernel, `ptxc compile` against `llc -march=nvptx64`
//! on the equivalent LLVM IR, both as processes and both measured in the same run.
//!
//! `cargo bench -p backend --bench vs_llc`. Skips llc when it is not installed.

use std::path::Path;
use std::process::Command;

use criterion::{criterion_group, criterion_main, Criterion};

fn bench(c: &mut Criterion) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
    let ptxc = env!("CARGO_BIN_EXE_ptxc");
    let mut group = c.benchmark_group("saxpy_end_to_end");
    group.bench_function("ptxc", |b| {
        b.iter(|| {
            let out = Command::new(ptxc).args(["compile", "--sm", "80"]).arg(data.join("saxpy.mir")).output().unwrap();
            assert!(out.status.success());
        })
    });
    if Command::new("llc").arg("--version").output().is_ok() {
        group.bench_function("llc", |b| {
            b.iter(|| {
                let out = Command::new("llc").args(["-march=nvptx64", "-mcpu=sm_80", "-o", "-"]).arg(data.join("saxpy.ll")).output().unwrap();
                assert!(out.status.success());
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
