//! End to end, everywhere (issue: "every kernel checked end to end by execution"):
//! every corpus kernel and every `tests/legalize/` kernel is compiled for sm_50, 60,
//! 70, 80, 90, 100 and 120, and on random inputs the MIR interpreter on the input and
//! `ptxc sim` on the PTX must agree (bit-exact, NaNs canonicalized, approximate
//! operations within 2 ulp). Runs on which the interpreter reports undefined
//! behaviour are discarded and counted (`-- --nocapture` prints the rates).

use std::path::{Path, PathBuf};

use backend::differential::end_to_end::{self, Comparison};
use backend::interp::{self, Launch};
use backend::mir::FunctionKind;

const SMS: &[&str] = &["sm_50", "sm_60", "sm_70", "sm_80", "sm_90", "sm_100", "sm_120"];
const INPUTS: u64 = 20;
const FUEL: u64 = 4_000_000;

/// Kernels an SM cannot compile (system-scope atomics before sm_60).
const REJECTED_ON: &[(&str, &[&str])] = &[("atomics_ordered.mir", &["sm_50"]), ("atomics_scopes.mir", &["sm_50"])];

fn kernel_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests/corpus", "tests/legalize"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "mir") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    files
}

fn launch_for(function: &backend::mir::Function) -> Launch {
    let threads = function.attributes.maxntid.as_ref().map(|m| m.iter().product::<u32>()).unwrap_or(64).clamp(1, 256);
    Launch { grid: [2, 1, 1], block: [threads, 1, 1] }
}

struct Outcome {
    agreed: u64,
    discarded: u64,
    failures: Vec<String>,
}

fn check_file(path: &Path) -> Outcome {
    let tables = tables::nvptx();
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.display().to_string();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let module = backend::mir::parser::parse_module(&text, &file, tables).unwrap_or_else(|e| panic!("{}", e.render()));
    let mut outcome = Outcome { agreed: 0, discarded: 0, failures: Vec::new() };
    for sm_name in SMS {
        if REJECTED_ON.iter().any(|(f, on)| *f == name && on.contains(sm_name)) {
            continue;
        }
        let sm = tables.find_sm(sm_name).unwrap();
        let ptx = match end_to_end::compile(&module, &text, &file, tables, sm) {
            Ok(p) => p,
            Err(e) => {
                outcome.failures.push(format!("{name} on {sm_name}: does not compile:\n{e}"));
                continue;
            }
        };
        let simulator = match backend::sim::Simulator::new(&ptx, &format!("{name}.{sm_name}.ptx"), tables, None) {
            Ok(s) => s,
            Err(e) => {
                outcome.failures.push(format!("{name} on {sm_name}: the simulator rejects the PTX:\n{}", e.render(&format!("{name}.{sm_name}.ptx"), &ptx)));
                continue;
            }
        };
        for f in module.functions.iter().filter(|f| f.kind == FunctionKind::Kernel) {
            let launch = launch_for(f);
            let inputs: Vec<_> = (0..INPUTS).map(|seed| interp::random_args(f, tables, seed)).collect();
            let comparison = Comparison::new(&module, f, tables);
            match end_to_end::check_inputs(&module, tables, &simulator, &f.name, &launch, &inputs, FUEL, &comparison) {
                Ok(t) => {
                    outcome.agreed += t.agreed;
                    outcome.discarded += t.discarded;
                }
                Err(e) => outcome.failures.push(format!("{name} @{} on {sm_name}: {e}", f.name)),
            }
        }
    }
    outcome
}

#[test]
fn interpreter_and_simulator_agree_on_every_kernel_and_sm() {
    let files = kernel_files();
    assert!(files.len() >= 60, "expected the corpus and the legalization kernels, found {}", files.len());
    let outcomes: Vec<(PathBuf, Outcome)> = std::thread::scope(|s| {
        let chunks: Vec<Vec<PathBuf>> = (0..2).map(|i| files.iter().skip(i).step_by(2).cloned().collect()).collect();
        let handles: Vec<_> = chunks.into_iter().map(|chunk| s.spawn(move || chunk.into_iter().map(|p| { let o = check_file(&p); (p, o) }).collect::<Vec<_>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let (mut agreed, mut discarded) = (0, 0);
    let mut failures = Vec::new();
    for (path, o) in &outcomes {
        let rate = 100.0 * o.agreed as f64 / (o.agreed + o.discarded).max(1) as f64;
        println!("{:32} agreeing runs {:5} of {:5} ({rate:5.1}% valid)", path.file_name().unwrap().to_string_lossy(), o.agreed, o.agreed + o.discarded);
        agreed += o.agreed;
        discarded += o.discarded;
        failures.extend(o.failures.iter().cloned());
    }
    println!("total: {} files x {} SMs: {agreed} runs agree, {discarded} discarded as undefined ({:.1}% valid), {} failures", outcomes.len(), SMS.len(), 100.0 * agreed as f64 / (agreed + discarded).max(1) as f64, failures.len());
    assert!(failures.is_empty(), "{} failures; the first ones:\n{}", failures.len(), failures.iter().take(if std::env::var_os("SHOW_ALL").is_some() { 1000 } else { 8 }).cloned().collect::<Vec<_>>().join("\n\n"));
}
