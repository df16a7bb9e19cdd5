//! Random kernels over every type (i1..i128, f16, bf16, f32, f64, vectors) legalized
//! for several SMs and checked by execution against the original
//! ([`backend::differential`]). Prints how many programs, SMs and runs it covered
//! (`-- --nocapture`).

use backend::random_mir::{generate, GeneratorConfig};

const PROGRAMS: u64 = 1500;
const INPUTS: u64 = 3;
const SMS: &[&str] = &["50", "53", "70", "80", "90", "100"];

#[test]
fn random_kernels_keep_their_results_after_legalization() {
    let tables = tables::nvptx();
    let sms: Vec<_> = SMS.iter().map(|s| tables.find_sm(s).unwrap()).collect();
    let config = GeneratorConfig::default();
    let results: Vec<Result<backend::differential::Tally, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2u64)
            .map(|part| {
                let (sms, config) = (&sms, &config);
                scope.spawn(move || {
                    (0..PROGRAMS)
                        .filter(|seed| seed % 2 == part)
                        .map(|seed| {
                            let kernel = generate(seed, config, tables).map_err(|e| e.0)?;
                            backend::differential::check_kernel(&kernel, tables, sms, INPUTS, seed).map_err(|e| format!("seed {seed}: {e}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut compared = 0;
    let mut discarded = 0;
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
    let total_inputs = PROGRAMS * INPUTS;
    println!(
        "{PROGRAMS} random kernels x {} SMs ({}): {compared} runs compared, {discarded} of {total_inputs} inputs discarded ({:.1}% valid), {} failures",
        sms.len(),
        SMS.join(", "),
        100.0 * (total_inputs - discarded) as f64 / total_inputs as f64,
        failures.len()
    );
    let shown: Vec<&String> = failures.iter().take(3).collect();
    assert!(failures.is_empty(), "{} of {PROGRAMS} kernels fail; first ones:\n{}", failures.len(), shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n\n"));
}
