//! The simulator's front end and executor never panic: any bytes are parsed and
//! decoded as PTX (for the file's target), and a file that decodes has its first kernel
//! run briefly on zero arguments. Errors are expected; a panic or a hang is a finding.
//! Seeds: the PTX files under tests/sim-llc/ptx/ and what `ptxc compile` writes.
#![no_main]

use backend::interp::{ArgValue, Launch};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let tables = tables::nvptx();
    let Ok(sim) = backend::sim::Simulator::new(text, "fuzz.ptx", tables, None) else { return };
    let Some(entry) = sim.kernels().first().map(|k| k.to_string()) else { return };
    let Some(params) = sim.kernel_params(&entry) else { return };
    let args: Vec<ArgValue> = params
        .iter()
        .map(|p| match (p.pointer_sized, p.bytes) {
            (true, _) => ArgValue::Buffer(vec![0; 256]),
            (_, Some(n)) => ArgValue::Buffer(vec![0; n as usize]),
            _ => ArgValue::Scalar(1),
        })
        .collect();
    let options = backend::sim::Options { fuel: 20_000, ..backend::sim::Options::default() };
    let _ = sim.run(&entry, &Launch { grid: [1, 1, 1], block: [33, 1, 1] }, &args, &options);
});
