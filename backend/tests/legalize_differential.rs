//! Differential tests of the legalizer (issue: "checked by execution"): every corpus
//! kernel and every kernel of `tests/legalize/` is run by the MIR reference interpreter
//! before legalization and after legalization for every SM of the description, on the
//! same random inputs, and the final memory must be bit-identical (NaNs canonicalized
//! per the element type each buffer is accessed with). Runs that hit undefined
//! behaviour or run out of fuel before legalization are discarded and counted; the
//! valid-run rate is printed (`cargo test -p backend --test integration -- legalize_differential:: --nocapture`).
//! Legalization producing the same MIR for several SMs is run once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use backend::interp::{self, ArgValue, Launch, RunResult};
use backend::mir::verifier::Source;
use backend::mir::{FunctionKind, Module};

const RUNS: u64 = 100;
const FUEL: u64 = 4_000_000;

fn kernel_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests/corpus", "tests/legalize"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            for e in entries.flatten() {
                if e.path().extension().is_some_and(|x| x == "mir") {
                    files.push(e.path());
                }
            }
        }
    }
    files.sort();
    files
}

fn launch_for(module: &Module, entry: &str) -> Launch {
    let f = module.functions.iter().find(|f| f.name == entry).unwrap();
    let threads = f.attributes.maxntid.as_ref().map(|m| m.iter().product::<u32>()).unwrap_or(64).clamp(1, 256);
    Launch { grid: [2, 1, 1], block: [threads, 1, 1] }
}

fn canonical(module: &Module, entry: &str, result: RunResult) -> Vec<Vec<u8>> {
    interp::args::canonical_buffers(module, tables::nvptx(), entry, result)
}

const APPROXIMATE: &[&str] = &["FSIN", "FCOS", "FEXP2", "FLOG2", "FEXP", "FLOG", "FPOW", "FSINCOS"];

/// The tolerance for approximate operations, in units in the last place of the buffer's
/// float type (the library's functions are within 2: backend/tests/library_accuracy.rs).
const TOLERANCE_ULPS: i128 = 2;

/// Whether every float buffer element is within [`TOLERANCE_ULPS`] of the expected one
/// (NaNs already canonical) and every other byte is equal.
fn within_tolerance(module: &Module, entry: &str, got: &[Vec<u8>], expected: &[Vec<u8>]) -> bool {
    let tables = tables::nvptx();
    let f = module.functions.iter().find(|f| f.name == entry).unwrap();
    let types = interp::args::buffer_stored_types(f, tables);
    let pointer_params: Vec<usize> = f.params.iter().enumerate().filter(|(_, p)| tables.type_info(p.ty).is_some_and(|t| t.kind == target_desc::tables::TypeKind::Pointer)).map(|(i, _)| i).collect();
    got.iter().zip(expected).zip(pointer_params).all(|((g, e), param)| {
        let size = match types.get(param).copied().flatten() {
            Some(ty) if ty.format().is_some() && matches!(ty.bits, 16 | 32 | 64) && ty.lanes == 1 => (ty.bits / 8) as usize,
            _ => return g == e,
        };
        let line = |c: &[u8]| -> i128 {
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(c);
            let bits = u64::from_le_bytes(raw);
            let sign = 1u64 << (size * 8 - 1);
            if bits & sign != 0 { -((bits & !sign) as i128) } else { bits as i128 }
        };
        let is_nan = |c: &[u8]| {
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(c);
            let bits = u64::from_le_bytes(raw);
            let mantissa = match size { 2 => 10, 4 => 23, _ => 52 };
            let exponent = ((1u64 << (size * 8 - 1)) - 1) >> mantissa;
            (bits >> mantissa) & exponent == exponent && bits & ((1u64 << mantissa) - 1) != 0
        };
        g.len() == e.len() && g.chunks(size).zip(e.chunks(size)).all(|(a, b)| (is_nan(a) && is_nan(b)) || (line(a) - line(b)).abs() <= TOLERANCE_ULPS)
    })
}

struct Outcome {
    valid: u64,
    discarded: u64,
    variants: usize,
    failures: Vec<String>,
}

fn check_file(path: &Path) -> Outcome {
    let tables = tables::nvptx();
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.display().to_string();
    let module = backend::mir::parser::parse_module(&text, &file, tables).unwrap_or_else(|e| panic!("{}", e.render()));
    let source = Source { file: &file, text: &text };
    let mut outcome = Outcome { valid: 0, discarded: 0, variants: 0, failures: Vec::new() };
    // mir-spec §3.4: FSIN, FCOS, FEXP2 and FLOG2 (and FEXP, FLOG, FPOW built on them) are
    // approximate; a kernel using them is compared with a tolerance.
    let approximate = module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter())).any(|i| {
        let name = i.opcode.name(tables);
        APPROXIMATE.contains(&name)
    });
    for f in module.functions.iter().filter(|f| f.kind == FunctionKind::Kernel) {
        let launch = launch_for(&module, &f.name);
        let inputs: Vec<Vec<ArgValue>> = (0..RUNS).map(|seed| interp::random_args(f, tables, seed)).collect();
        let before: Vec<Option<Vec<Vec<u8>>>> = inputs
            .iter()
            .map(|args| interp::run_kernel(&module, tables, &f.name, &launch, args, FUEL).ok().map(|r| canonical(&module, &f.name, r)))
            .collect();
        let valid = before.iter().filter(|b| b.is_some()).count() as u64;
        outcome.valid += valid;
        outcome.discarded += RUNS - valid;
        let mut seen: HashMap<String, String> = HashMap::new();
        for sm in tables.sms {
            let mut legal = module.clone();
            if let Err(errors) = backend::legalize::legalize_module(&mut legal, tables, sm, source, true, false) {
                outcome.failures.push(format!("{file} @{} on {}: legalization failed:\n{}", f.name, sm.name, errors.iter().map(|e| e.render()).collect::<String>()));
                continue;
            }
            let printed = backend::mir::printer::print_module(&legal, tables);
            if let Some(first) = seen.get(&printed) {
                let _ = first;
                continue;
            }
            seen.insert(printed, sm.name.to_string());
            outcome.variants += 1;
            for (seed, (args, expected)) in inputs.iter().zip(&before).enumerate() {
                let Some(expected) = expected else { continue };
                match interp::run_kernel(&legal, tables, &f.name, &launch, args, FUEL * 4) {
                    Ok(r) => {
                        let got = canonical(&module, &f.name, r);
                        if &got != expected && !(approximate && within_tolerance(&module, &f.name, &got, expected)) {
                            let (b, offset) = got
                                .iter()
                                .zip(expected)
                                .enumerate()
                                .find_map(|(i, (g, e))| g.iter().zip(e).position(|(x, y)| x != y).map(|o| (i, o)))
                                .unwrap_or((0, 0));
                            outcome.failures.push(format!("{file} @{} on {} seed {seed}: buffer {b} differs at byte {offset} after legalization", f.name, sm.name));
                            break;
                        }
                    }
                    Err(e) => {
                        outcome.failures.push(format!("{file} @{} on {} seed {seed}: the legalized kernel fails where the original ran: {e}", f.name, sm.name));
                        break;
                    }
                }
            }
        }
    }
    outcome
}

#[test]
fn legalization_preserves_results_on_every_sm() {
    let files = kernel_files();
    assert!(files.len() >= 20, "expected the corpus, found {} kernels", files.len());
    let outcomes: Vec<(PathBuf, Outcome)> = std::thread::scope(|s| {
        let chunks: Vec<Vec<PathBuf>> = (0..2).map(|i| files.iter().skip(i).step_by(2).cloned().collect()).collect();
        let handles: Vec<_> = chunks.into_iter().map(|chunk| s.spawn(move || chunk.into_iter().map(|p| { let o = check_file(&p); (p, o) }).collect::<Vec<_>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let (mut valid, mut discarded, mut variants) = (0, 0, 0);
    let mut failures = Vec::new();
    for (path, o) in &outcomes {
        let name = path.file_name().unwrap().to_string_lossy();
        let rate = 100.0 * o.valid as f64 / (o.valid + o.discarded).max(1) as f64;
        println!("{name:32} valid runs {:4}/{:4} ({rate:5.1}%), distinct legalized variants {}", o.valid, o.valid + o.discarded, o.variants);
        valid += o.valid;
        discarded += o.discarded;
        variants += o.variants;
        failures.extend(o.failures.iter().cloned());
    }
    let rate = 100.0 * valid as f64 / (valid + discarded).max(1) as f64;
    println!("total: {} kernel files, {valid} valid runs, {discarded} discarded ({rate:.1}% valid), {variants} distinct (kernel, SM-group) variants checked", outcomes.len());
    assert!(failures.is_empty(), "{} differential failures:\n{}", failures.len(), failures.join("\n"));
    assert!(rate > 80.0, "valid-run rate {rate:.1}% is below 80%");
}
