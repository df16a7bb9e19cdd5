//! The whole pipeline checked by execution on random kernels steered by the fuzzer's
//! bytes: each kernel ([`backend::random_mir`], default configuration) is compiled for
//! sm_50, sm_70, sm_80 and sm_100, and on two inputs the MIR interpreter on the kernel
//! and `ptxc sim` on its PTX must agree ([`backend::differential::check_kernel_end_to_end`]).
//! A kernel the pipeline rejects, PTX the simulator rejects, a result that differs, or
//! a panic is a finding.
#![no_main]

use backend::random_mir::{generate_from_bytes, GeneratorConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let tables = tables::nvptx();
    let Ok(kernel) = generate_from_bytes(data, &GeneratorConfig::default(), tables) else { return };
    let sms: Vec<_> = ["50", "70", "80", "100"].iter().filter_map(|s| tables.find_sm(s)).collect();
    let seed = data.iter().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(*b)));
    if let Err(e) = backend::differential::check_kernel_end_to_end(&kernel, tables, &sms, 2, seed) {
        panic!("{e}");
    }
});
