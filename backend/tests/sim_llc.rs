//! The simulator on PTX we did not write: LLVM IR twins of corpus kernels
//! (`tests/sim-llc/*.ll`, each computing exactly what its MIR kernel computes) are compiled
//! by LLVM's `llc` for several SMs (`scripts/gen-llc-twins.sh`, output kept in
//! `tests/sim-llc/ptx/`), and on random inputs the MIR interpreter on the corpus kernel and
//! `ptxc sim` on llc's PTX must agree (bit-exact, NaNs canonicalized, approximate
//! operations within 2 ulp): `backend/tests/sim_end_to_end.rs` with llc in place of our
//! compiler. Runs on which the interpreter reports undefined behaviour are discarded and
//! counted (`-- --nocapture` prints the rates).
//!
//! Every kept PTX file is also assembled with ptxas for its SM (`$PTXAS`, the
//! project-local `.tools/` install, or `PATH`); without ptxas that check is skipped, or
//! fails when `CI` is set.
//!
//! A mismatch is a bug in the simulator, in the twin or in the interpreter; a known
//! simulator bug that is not fixed yet is listed in [`EXCLUDED`] with the reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use backend::differential::end_to_end::{self, Comparison};
use backend::interp::{self, Launch};
use backend::mir::FunctionKind;

/// Random inputs per kernel and SM (`SIM_LLC_INPUTS=N` for a longer search).
const INPUTS: u64 = 24;

fn inputs() -> u64 {
    std::env::var("SIM_LLC_INPUTS").ok().and_then(|v| v.parse().ok()).unwrap_or(INPUTS)
}
const FUEL: u64 = 4_000_000;
/// The SMs `all` stands for in the manifest (as in scripts/gen-llc-twins.sh).
const ALL_SMS: &[&str] = &["sm_60", "sm_70", "sm_80", "sm_90", "sm_100", "sm_120"];

/// Known simulator problems, not fixed yet: `(twin, SM or "*", kernel, reason)`. The
/// kernel is not compared on that SM (its PTX is still decoded and assembled).
const EXCLUDED: &[(&str, &str, &str, &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One line of tests/sim-llc/manifest.txt.
struct Entry {
    twin: String,
    mir: String,
    sms: Vec<String>,
    launch: Launch,
}

fn triple(text: &str, line: usize) -> [u32; 3] {
    let v: Vec<u32> = text.split(',').map(|x| x.parse().unwrap_or_else(|_| panic!("manifest line {line}: bad dimension `{text}`"))).collect();
    assert_eq!(v.len(), 3, "manifest line {line}: `{text}` is not x,y,z");
    [v[0], v[1], v[2]]
}

fn manifest() -> Vec<Entry> {
    let text = std::fs::read_to_string(root().join("tests/sim-llc/manifest.txt")).expect("read tests/sim-llc/manifest.txt");
    let mut entries = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.len(), 5, "manifest line {}: expected `twin mir sms grid block`, found `{line}`", k + 1);
        let sms = if words[2] == "all" { ALL_SMS.iter().map(|s| s.to_string()).collect() } else { words[2].split(',').map(str::to_string).collect() };
        entries.push(Entry { twin: words[0].into(), mir: words[1].into(), sms, launch: Launch { grid: triple(words[3], k + 1), block: triple(words[4], k + 1) } });
    }
    entries
}

fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS").map(PathBuf::from) {
        if p.is_file() {
            return Some(p);
        }
    }
    let local = root().join(".tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas");
    if local.is_file() {
        return Some(local);
    }
    let on_path = Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success());
    on_path.then(|| PathBuf::from("ptxas"))
}

/// ptxas, or `None` (with a message) outside CI; panics under `CI` when it is missing.
fn ptxas() -> Option<PathBuf> {
    match find_ptxas() {
        Some(p) => Some(p),
        None if std::env::var_os("CI").is_some() => panic!("ptxas not found and CI is set: run scripts/install-ptxas.sh or set PTXAS"),
        None => {
            eprintln!("SKIPPED ptxas checks: ptxas not found (run scripts/install-ptxas.sh or set PTXAS)");
            None
        }
    }
}

fn assemble(ptxas: &Path, file: &Path, sm: &str) -> Result<(), String> {
    let out = std::env::temp_dir().join(format!("ptxc-sim-llc-{}-{}.cubin", std::process::id(), file.file_name().unwrap().to_string_lossy()));
    let output = Command::new(ptxas).arg(format!("-arch={sm}")).arg(file).arg("-o").arg(&out).output().map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let _ = std::fs::remove_file(&out);
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[derive(Default)]
struct Outcome {
    files: u64,
    agreed: u64,
    discarded: u64,
    excluded: u64,
    assembled: u64,
    failures: Vec<String>,
}

fn check_entry(entry: &Entry, ptxas: Option<&Path>) -> Outcome {
    let tables = tables::nvptx();
    let root = root();
    let mut outcome = Outcome::default();
    let name = &entry.twin;
    let mir_path = root.join(&entry.mir);
    let text = std::fs::read_to_string(&mir_path).unwrap_or_else(|e| panic!("{name}: cannot read {}: {e}", entry.mir));
    let file = mir_path.display().to_string();
    let module = backend::mir::parser::parse_module(&text, &file, tables).unwrap_or_else(|e| panic!("{}", e.render()));
    assert!(root.join(format!("tests/sim-llc/{name}.ll")).is_file(), "{name}: the twin tests/sim-llc/{name}.ll is missing");
    let kernels: Vec<_> = module.functions.iter().filter(|f| f.kind == FunctionKind::Kernel).collect();
    for sm in &entry.sms {
        let ptx_path = root.join(format!("tests/sim-llc/ptx/{name}.{sm}.ptx"));
        let ptx_file = format!("{name}.{sm}.ptx");
        let Ok(ptx) = std::fs::read_to_string(&ptx_path) else {
            outcome.failures.push(format!("{ptx_file}: missing (run scripts/gen-llc-twins.sh {name})"));
            continue;
        };
        outcome.files += 1;
        if let Some(ptxas) = ptxas {
            match assemble(ptxas, &ptx_path, sm) {
                Ok(()) => outcome.assembled += 1,
                Err(e) => outcome.failures.push(format!("{ptx_file}: ptxas rejects it:\n{e}")),
            }
        }
        let simulator = match backend::sim::Simulator::new(&ptx, &ptx_file, tables, Some(sm)) {
            Ok(s) => s,
            Err(e) => {
                outcome.failures.push(format!("{ptx_file}: the simulator rejects llc's PTX:\n{}", e.render(&ptx_file, &ptx)));
                continue;
            }
        };
        for f in &kernels {
            // The twin must declare the kernel with the MIR's parameters.
            let Some(params) = simulator.kernel_params(&f.name) else {
                outcome.failures.push(format!("{ptx_file}: no kernel `{}` (the MIR file has it)", f.name));
                continue;
            };
            if params.len() != f.params.len() {
                outcome.failures.push(format!("{ptx_file}: kernel `{}` has {} parameters, the MIR kernel {}", f.name, params.len(), f.params.len()));
                continue;
            }
            if let Some((_, _, _, why)) = EXCLUDED.iter().find(|(t, s, k, _)| t == name && (*s == "*" || s == sm) && *k == f.name) {
                println!("EXCLUDED {name} @{} on {sm}: {why}", f.name);
                outcome.excluded += 1;
                continue;
            }
            let inputs: Vec<_> = (0..inputs()).map(|seed| interp::random_args(f, tables, seed)).collect();
            let comparison = Comparison::new(&module, f, tables);
            match end_to_end::check_inputs(&module, tables, &simulator, &f.name, &entry.launch, &inputs, FUEL, &comparison) {
                Ok(t) => {
                    outcome.agreed += t.agreed;
                    outcome.discarded += t.discarded;
                    if t.agreed == 0 {
                        outcome.failures.push(format!("{ptx_file} @{}: no valid run among {} inputs (all undefined in the interpreter)", f.name, inputs.len()));
                    }
                }
                Err(e) => outcome.failures.push(format!("{ptx_file} @{}: {e}", f.name)),
            }
        }
    }
    outcome
}

#[test]
fn interpreter_and_simulator_agree_on_llc_twins() {
    let entries = manifest();
    assert!(entries.len() >= 22, "expected at least 22 twins in tests/sim-llc/manifest.txt, found {}", entries.len());
    let names: BTreeSet<&str> = entries.iter().map(|e| e.twin.as_str()).collect();
    assert_eq!(names.len(), entries.len(), "a twin is listed twice in the manifest");

    // Every kept PTX file belongs to a manifest entry and SM (no stale output).
    let expected: BTreeSet<String> = entries.iter().flat_map(|e| e.sms.iter().map(move |sm| format!("{}.{sm}.ptx", e.twin))).collect();
    let stale: Vec<String> = std::fs::read_dir(root().join("tests/sim-llc/ptx"))
        .expect("tests/sim-llc/ptx/ (run scripts/gen-llc-twins.sh)")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ptx") && !expected.contains(n))
        .collect();
    assert!(stale.is_empty(), "PTX files in tests/sim-llc/ptx/ that the manifest does not list: {stale:?}");

    let ptxas = ptxas();
    let outcomes: Vec<(String, Outcome)> = std::thread::scope(|s| {
        let ptxas = ptxas.as_deref();
        let entries = &entries;
        let handles: Vec<_> = (0..2)
            .map(|i| s.spawn(move || entries.iter().skip(i).step_by(2).map(|e| (e.twin.clone(), check_entry(e, ptxas))).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut total = Outcome::default();
    for (name, o) in &outcomes {
        let rate = 100.0 * o.agreed as f64 / (o.agreed + o.discarded).max(1) as f64;
        println!("{name:22} {:2} PTX files: agreeing runs {:5} of {:5} ({rate:5.1}% valid){}", o.files, o.agreed, o.agreed + o.discarded, if o.excluded > 0 { format!(", {} excluded", o.excluded) } else { String::new() });
        total.files += o.files;
        total.agreed += o.agreed;
        total.discarded += o.discarded;
        total.excluded += o.excluded;
        total.assembled += o.assembled;
        total.failures.extend(o.failures.iter().cloned());
    }
    let valid = total.agreed as f64 / (total.agreed + total.discarded).max(1) as f64;
    println!(
        "total: {} twins, {} PTX files ({} assembled by ptxas): {} runs agree, {} discarded as undefined ({:.1}% valid), {} kernel/SM pairs excluded, {} failures",
        outcomes.len(),
        total.files,
        total.assembled,
        total.agreed,
        total.discarded,
        100.0 * valid,
        total.excluded,
        total.failures.len()
    );
    assert!(
        total.failures.is_empty(),
        "{} failures; the first ones:\n{}",
        total.failures.len(),
        total.failures.iter().take(if std::env::var_os("SHOW_ALL").is_some() { 1000 } else { 8 }).cloned().collect::<Vec<_>>().join("\n\n")
    );
    assert!(valid >= 0.5, "only {:.1}% of the runs are valid: the inputs mostly hit undefined behaviour", 100.0 * valid);
}
