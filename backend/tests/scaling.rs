//! The generated benchmark kernels compile, verify and assemble (so the benchmark
//! measures real work), at a small size.

use backend::synth;

#[test]
fn generated_kernels_compile_and_round_trip() {
    for text in [synth::straight_line(200), synth::looped(200)] {
        let ptx = synth::compile(&text, "80").unwrap_or_else(|e| panic!("{e}"));
        assert!(ptx.contains(".entry generated"));
        assert!(ptx.matches("add.rn.f32").count() >= 40, "{ptx}");
    }
}
