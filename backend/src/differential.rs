//! Differential checking of the legalizer by execution: a kernel is run by the
//! reference interpreter ([`crate::interp`]) before and after legalization for an SM on
//! the same inputs, and the output must be the same (NaN payloads aside). Used by the
//! random-program test (`backend/tests/legalize_random.rs`) and the `legalize_random`
//! fuzz target on kernels from [`crate::random_mir`].

use target_desc::tables::{SmTables, TargetTables};

use crate::interp::{self, ArgValue, Launch};
use crate::random_mir::{GeneratedKernel, SeededRandom};

/// Threads per run: enough for two warps' worth of distinct inputs, small enough to be
/// fast.
pub const THREADS: usize = 8;
pub const FUEL: u64 = 2_000_000;

/// What checking one kernel found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Runs compared (before and after, per SM).
    pub compared: u64,
    /// Inputs discarded because the original run was undefined or ran out of fuel.
    pub discarded: u64,
}

/// The arguments of one run: random input bytes, a zeroed output, small scalars (an i1
/// 0 or 1), and random bits for wider parameters (i128, vectors).
fn arguments(kernel: &GeneratedKernel, tables: &TargetTables, seed: u64) -> Vec<ArgValue> {
    let mut rng = SeededRandom::new(seed);
    let input: Vec<u8> = (0..kernel.required_input_bytes(THREADS)).map(|_| rng.next_u64() as u8).collect();
    let output = vec![0u8; kernel.required_output_bytes(THREADS)];
    let mut args = vec![ArgValue::Buffer(input), ArgValue::Buffer(output)];
    for name in &kernel.scalar_params {
        let info = tables.vt(name).and_then(|t| tables.type_info(t));
        let bits = info.map_or(64, |t| t.bits);
        let scalar = info.is_some_and(|t| t.kind != target_desc::tables::TypeKind::Vector);
        let value = match bits {
            1 => u128::from(rng.next_u64() % 2),
            _ if scalar && bits <= 64 => u128::from(rng.next_u64() % 64),
            _ => {
                let wide = u128::from(rng.next_u64()) | (u128::from(rng.next_u64()) << 64);
                if bits >= 128 { wide } else { wide & ((1u128 << bits) - 1) }
            }
        };
        args.push(ArgValue::Scalar(value));
    }
    args
}

/// Runs `kernel` on `inputs` random inputs before legalization and after legalization
/// for each of `sms`; an error names the kernel, SM and input that disagree.
pub fn check_kernel(kernel: &GeneratedKernel, tables: &TargetTables, sms: &[&SmTables], inputs: u64, seed: u64) -> Result<Tally, String> {
    let file = format!("<random kernel {}>", kernel.name);
    let module = crate::mir::parser::parse_module(&kernel.text, &file, tables).map_err(|e| e.render())?;
    let launch = Launch { grid: [1, 1, 1], block: [THREADS as u32, 1, 1] };
    let mut tally = Tally::default();
    let mut baseline = Vec::new();
    for i in 0..inputs {
        let args = arguments(kernel, tables, seed.wrapping_mul(1_000_003).wrapping_add(i));
        match interp::run_kernel(&module, tables, &kernel.name, &launch, &args, FUEL) {
            Ok(r) => baseline.push((args, r.buffers[1].clone())),
            Err(_) => tally.discarded += 1,
        }
    }
    let source = crate::mir::verifier::Source { file: &file, text: &kernel.text };
    for sm in sms {
        let mut legal = module.clone();
        crate::legalize::legalize_module(&mut legal, tables, sm, source, true)
            .map_err(|errors| format!("legalizing for {} failed:\n{}\n{}", sm.name, errors.iter().map(|e| e.render()).collect::<String>(), kernel.text))?;
        let errors = crate::mir::verifier::verify_module(&legal, tables, source);
        if !errors.is_empty() {
            return Err(format!("the MIR legalized for {} does not verify:\n{}", sm.name, errors.iter().map(|e| e.render()).collect::<String>()));
        }
        for (args, expected) in &baseline {
            let after = interp::run_kernel(&legal, tables, &kernel.name, &launch, args, FUEL * 8)
                .map_err(|e| format!("after legalization for {} the kernel fails where the original ran: {e}\n{}", sm.name, kernel.text))?;
            kernel
                .compare_outputs(expected, &after.buffers[1])
                .map_err(|d| format!("legalization for {} changes the result: {d}\n{}\n--- legalized ---\n{}", sm.name, kernel.text, crate::mir::printer::print_module(&legal, tables)))?;
            tally.compared += 1;
        }
    }
    Ok(tally)
}
