//! Random kernels ([`backend::random_mir`], every type, calls and wide parameters)
//! through the whole pipeline for six SMs, each checked by execution: the MIR
//! interpreter on the kernel and `ptxc sim` on its PTX must agree
//! ([`backend::differential::check_kernel_end_to_end`]). Prints programs, runs,
//! valid-run rate and mismatches (`-- --nocapture`).
//!
//! The suite runs 300 kernels (500 until the suite neared its 15 minutes; each session's
//! long run covers thousands of new seeds); the long run is the same test with more:
//! `SIM_RANDOM_PROGRAMS=10000 cargo test --release -p backend --test integration -- sim_random:: --nocapture`
//! (`SIM_RANDOM_FIRST` sets the first seed).

use backend::random_mir::{generate, GeneratorConfig};

const PROGRAMS: u64 = 300;
const INPUTS: u64 = 3;
const SMS: &[&str] = &["50", "60", "70", "80", "90", "100"];

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn random_kernels_agree_in_the_interpreter_and_the_simulator() {
    let tables = tables::nvptx();
    let sms: Vec<_> = SMS.iter().map(|s| tables.find_sm(s).unwrap()).collect();
    let config = GeneratorConfig::default();
    let programs = env_u64("SIM_RANDOM_PROGRAMS", PROGRAMS);
    let first = env_u64("SIM_RANDOM_FIRST", 0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let results: Vec<Result<backend::differential::Tally, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|part| {
                let (sms, config) = (&sms, &config);
                scope.spawn(move || {
                    (first..first + programs)
                        .filter(|seed| seed % threads == part)
                        .map(|seed| {
                            let kernel = generate(seed, config, tables).map_err(|e| e.0)?;
                            backend::differential::check_kernel_end_to_end(&kernel, tables, sms, INPUTS, seed).map_err(|e| format!("seed {seed}: {e}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let (mut compared, mut discarded) = (0, 0);
    let mut failures = Vec::new();
    for r in results {
        match r {
            Ok(t) => {
                compared += t.compared;
                discarded += t.discarded;
            }
            Err(e) => failures.push(e),
        }
    }
    let total_inputs = programs * INPUTS;
    println!(
        "{programs} random kernels (seeds {first}..{}) x {} SMs ({}): {compared} runs compared, {discarded} of {total_inputs} inputs discarded ({:.1}% valid), {} mismatches",
        first + programs,
        sms.len(),
        SMS.join(", "),
        100.0 * (total_inputs - discarded) as f64 / total_inputs.max(1) as f64,
        failures.len()
    );
    let shown: Vec<&String> = failures.iter().take(3).collect();
    // Every failing seed by number, for a long run's report (the first three in full).
    let seeds: Vec<&str> = failures.iter().filter_map(|f| f.strip_prefix("seed ")?.split(':').next()).collect();
    assert!(failures.is_empty(), "{} of {programs} kernels disagree (seeds {}); first ones:\n{}", failures.len(), seeds.join(", "), shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n\n"));
}

/// Seeds long runs found, kept in the default run. 1025 and 1105
/// (`SIM_RANDOM_PROGRAMS=1500`) compile under the low register limit only if the
/// allocator's checker accepts a recomputed operand-less value (`TID_X`, a parameter
/// load) after the spiller moved the original to its use; 2459, 4911 and 5669
/// (`SIM_RANDOM_PROGRAMS=10000`) only if it takes a spilled loop counter's `mov 0` for
/// the counter's definition, not for an equal constant the spiller moved to its use
/// (machine/checker.rs, `run_block`). 118026 (`SIM_RANDOM_FIRST=110000`) agrees only if
/// a pattern of several instructions reads its operands before it writes a result: PHI
/// elimination gave `USUBO`'s difference the register of its first operand (the operand
/// dies there), and `sub` wrote it before `setp` read the operand.
#[test]
fn seeds_found_by_long_runs() {
    let tables = tables::nvptx();
    let sms: Vec<_> = SMS.iter().map(|s| tables.find_sm(s).unwrap()).collect();
    let config = GeneratorConfig::default();
    for seed in [1025u64, 1105, 2459, 4911, 5669, 10510, 12634, 13460, 14358, 19686, 118026] {
        let kernel = generate(seed, &config, tables).map_err(|e| e.0).unwrap();
        if let Err(e) = backend::differential::check_kernel_end_to_end(&kernel, tables, &sms, INPUTS, seed) {
            panic!("seed {seed}: {e}");
        }
    }
}
