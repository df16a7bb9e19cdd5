//! Lookup costs of the generated tables: the action table (one indexed load), the
//! condition-code nibble table, and the phf name maps.
//!
//! `cargo bench -p tables --bench lookups`. Each iteration does 1024 lookups over a
//! pseudo-random mix of cells, so the per-lookup time is the reported time / 1024.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use tables::{nvptx, OpcodeId, Target, VtId};

fn cells() -> Vec<(OpcodeId, VtId)> {
    let t = nvptx();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let op = t.opcodes[(state % t.opcodes.len() as u64) as usize].id;
            let vt = t.types[((state >> 32) % t.types.len() as u64) as usize].id;
            (OpcodeId(op), VtId(vt))
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let target = Target::sm("80").unwrap();
    let cells = cells();
    let mut group = c.benchmark_group("lookup");
    group.throughput(Throughput::Elements(cells.len() as u64));

    group.bench_function("action", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for &(op, vt) in &cells {
                acc += target.action(black_box(op), black_box(vt)) as u32;
            }
            acc
        })
    });
    group.bench_function("action_byte_fast_legal_check", |b| {
        let sm = target.sm_tables();
        b.iter(|| cells.iter().filter(|&&(op, vt)| sm.passes_fast_legal_check(black_box(op), black_box(vt))).count())
    });
    group.bench_function("cc_nibble", |b| {
        let sm = target.sm_tables();
        let ccs: Vec<_> = nvptx().cond_codes.iter().map(|c| tables::CondCodeId(c.id)).collect();
        b.iter(|| {
            let mut acc = 0u32;
            for (i, &(_, vt)) in cells.iter().enumerate() {
                acc += sm.cc_action_nibble(black_box(ccs[i % ccs.len()]), black_box(vt)) as u32;
            }
            acc
        })
    });

    let opcode_names: Vec<&str> = cells.iter().map(|(op, _)| nvptx().opcode_info(*op).unwrap().name).collect();
    group.bench_function("opcode_name_phf", |b| {
        b.iter(|| opcode_names.iter().filter_map(|n| nvptx().names.opcodes.get(black_box(n))).count())
    });
    let type_names: Vec<&str> = cells.iter().map(|(_, vt)| nvptx().type_info(*vt).unwrap().name).collect();
    group.bench_function("type_name_phf", |b| {
        b.iter(|| type_names.iter().filter_map(|n| nvptx().names.types.get(black_box(n))).count())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
