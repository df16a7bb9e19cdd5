//! The generic-MIR optimizations checked by execution (issue: "the MIR interpreter
//! agrees before and after the combine pass"): `sroa` on each input as written, then every kernel of `tests/corpus`,
//! `tests/legalize`, `tests/machine`, `tests/combine` and `tests/sched` is legalized for
//! several SMs and run by the MIR interpreter before and after `combine`, then after each
//! of `simplify-cfg`, `slsr` and `loop-reduce` on top of the passes before it (the
//! pipeline's order), on the same random inputs; the final memory must be
//! bit-identical (NaNs canonicalized). Then random kernels over every type are checked
//! the same way against their input. The combiner must also rewrite something in most
//! files, simplify-cfg some branch, slsr some index and loop-reduce some address, so a pass turned into a no-op
//! fails. (`tests/apps` holds application kernels: transpose, histogram, mandelbrot,
//! bitonic sort.)

use std::path::{Path, PathBuf};

use backend::interp::{self, ArgValue, Launch, RunResult};
use backend::mir::verifier::Source;
use backend::mir::{FunctionKind, Module};
use backend::random_mir::{generate, GeneratorConfig};

const SMS: &[&str] = &["sm_50", "sm_60", "sm_80", "sm_90", "sm_100"];
const RUNS: u64 = 12;
const FUEL: u64 = 4_000_000;

fn kernel_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests/corpus", "tests/legalize", "tests/machine", "tests/combine", "tests/sched", "tests/apps"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "mir") {
                files.push(e.path());
            }
        }
    }
    // The frame kernels of the FileCheck tests, for sroa, the min/max kernel (every
    // signedness, width and operand order of that rule), loop-reduce's induction
    // expressions, and the shapes simplify-cfg and slsr rewrite and leave.
    for extra in [
        "tests/filecheck/sroa.mir",
        "tests/filecheck/frame.mir",
        "tests/filecheck/min-max.mir",
        "tests/filecheck/loop-reduce-expressions.mir",
        "tests/filecheck/simplify-cfg.mir",
        "tests/filecheck/slsr.mir",
    ] {
        files.push(root.join(extra));
    }
    files.sort();
    files
}

fn canonical(module: &Module, entry: &str, result: RunResult) -> Vec<Vec<u8>> {
    interp::args::canonical_buffers(module, tables::nvptx(), entry, result)
}

#[derive(Default)]
struct Outcome {
    compared: u64,
    rewrites: usize,
    /// Branches simplify-cfg merged.
    merged: usize,
    /// Indices slsr rewrote.
    straight_line: usize,
    /// Addresses loop-reduce rewrote.
    reduced: usize,
    /// Integer induction expressions loop-reduce made PHIs.
    expressions: usize,
    /// Frame cells sroa promoted.
    promoted: usize,
    failures: Vec<String>,
}

fn check_file(path: &Path) -> Outcome {
    let tables = tables::nvptx();
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.display().to_string();
    let module = backend::mir::parser::parse_module(&text, &file, tables).unwrap_or_else(|e| panic!("{}", e.render()));
    let source = Source { file: &file, text: &text };
    let mut outcome = Outcome::default();
    // sroa runs before legalization, on the input as written.
    let mut promoted = module.clone();
    match backend::sroa::run(&mut promoted, tables) {
        Ok(stats) if stats.promoted_cells + stats.stores_removed > 0 => {
            outcome.promoted += stats.promoted_cells;
            if let Some(printed) = verified_text(&promoted, "sroa", source, "generic MIR", &mut outcome) {
                compare(&module, &promoted, "sroa", &printed, &file, "generic MIR", &mut outcome);
            }
        }
        Ok(_) => {}
        Err(e) => outcome.failures.push(format!("{file}: {e}")),
    }
    for sm_name in SMS {
        let sm = tables.find_sm(sm_name).unwrap();
        let mut legal = module.clone();
        if backend::legalize::legalize_module(&mut legal, tables, sm, source, false, false).is_err() {
            continue; // not for this SM (the legalize tests cover the diagnostics)
        }
        let mut combined = legal.clone();
        let stats = match backend::combine::run(&mut combined, tables, sm) {
            Ok(s) => s,
            Err(e) => {
                outcome.failures.push(format!("{file} on {sm_name}: {e}"));
                continue;
            }
        };
        outcome.rewrites += stats.total();
        let Some(printed) = verified_text(&combined, "combine", source, sm_name, &mut outcome) else { continue };
        compare(&legal, &combined, "combining", &printed, &file, sm_name, &mut outcome);
        // Then branch merging and straight-line strength reduction, each checked where
        // it did something.
        let Some((merged, n)) = checked_pass(&legal, &combined, "simplify-cfg", |m| backend::simplify_cfg::run(m, tables, sm).map(|s| s.merged), source, sm_name, &mut outcome) else { continue };
        outcome.merged += n;
        let Some((straight, n)) = checked_pass(&legal, &merged, "slsr", |m| backend::slsr::run(m, tables, sm).map(|s| s.rewritten), source, sm_name, &mut outcome) else { continue };
        outcome.straight_line += n;
        // Then loop strength reduction, checked where it did something.
        let mut reduced = straight.clone();
        let lsr = match backend::loop_reduce::run(&mut reduced, tables, sm) {
            Ok(s) => s,
            Err(e) => {
                outcome.failures.push(format!("{file} on {sm_name}: {e}"));
                continue;
            }
        };
        if lsr.reduced == 0 && lsr.expressions == 0 {
            continue;
        }
        outcome.reduced += lsr.reduced;
        outcome.expressions += lsr.expressions;
        let Some(printed) = verified_text(&reduced, "loop-reduce", source, sm_name, &mut outcome) else { continue };
        compare(&legal, &reduced, "loop-reduce after combining and slsr", &printed, &file, sm_name, &mut outcome);
    }
    outcome
}

/// Runs a pass (`run` returns how many rewrites it made) on a copy of `before`; where it
/// made any, the result must verify, print as MIR that parses back and agree with
/// `legal` in the interpreter. `None` once a failure is recorded.
fn checked_pass(legal: &Module, before: &Module, pass: &str, run: impl FnOnce(&mut Module) -> Result<usize, String>, source: Source<'_>, sm_name: &str, outcome: &mut Outcome) -> Option<(Module, usize)> {
    let file = source.file;
    let mut after = before.clone();
    match run(&mut after) {
        Ok(0) => Some((after, 0)),
        Ok(n) => {
            let printed = verified_text(&after, pass, source, sm_name, outcome)?;
            compare(legal, &after, &format!("{pass} after the passes before it"), &printed, file, sm_name, outcome);
            Some((after, n))
        }
        Err(e) => {
            outcome.failures.push(format!("{file} on {sm_name}: {e}"));
            None
        }
    }
}

/// The printed MIR of `module` after pass `pass`, when it verifies and parses back;
/// otherwise a failure is recorded.
fn verified_text(module: &Module, pass: &str, source: Source<'_>, sm_name: &str, outcome: &mut Outcome) -> Option<String> {
    let tables = tables::nvptx();
    let file = source.file;
    let errors = backend::mir::verifier::verify_module(module, tables, source);
    if !errors.is_empty() {
        outcome.failures.push(format!("{file} on {sm_name}: the MIR after {pass} does not verify:\n{}", errors.iter().map(|e| e.render()).collect::<String>()));
        return None;
    }
    let printed = backend::mir::printer::print_module(module, tables);
    if let Err(e) = backend::mir::parser::parse_module(&printed, "printed.mir", tables) {
        outcome.failures.push(format!("{file} on {sm_name}: the MIR after {pass} does not parse back:\n{}", e.render()));
        return None;
    }
    Some(printed)
}

/// Runs every kernel of `before` and `after` on the same random inputs; records a
/// failure when their final memory differs or `after` fails where `before` ran.
fn compare(before_module: &Module, after_module: &Module, what: &str, printed: &str, file: &str, sm_name: &str, outcome: &mut Outcome) {
    let tables = tables::nvptx();
    for f in before_module.functions.iter().filter(|f| f.kind == FunctionKind::Kernel) {
        let threads = f.attributes.maxntid.as_ref().map(|m| m.iter().product::<u32>()).unwrap_or(32).clamp(1, 64);
        let launch = Launch { grid: [2, 1, 1], block: [threads, 1, 1] };
        for seed in 0..RUNS {
            let args: Vec<ArgValue> = interp::random_args(f, tables, seed);
            let Ok(before) = interp::run_kernel(before_module, tables, &f.name, &launch, &args, FUEL) else { continue };
            let before = canonical(before_module, &f.name, before);
            match interp::run_kernel(after_module, tables, &f.name, &launch, &args, FUEL).map(|r| canonical(before_module, &f.name, r)) {
                Ok(after) if after == before => outcome.compared += 1,
                Ok(_) => {
                    outcome.failures.push(format!("{file} @{} on {sm_name} seed {seed}: {what} changes the result\n--- before ---\n{}\n--- after ---\n{printed}", f.name, backend::mir::printer::print_module(before_module, tables)));
                    break;
                }
                Err(e) => {
                    outcome.failures.push(format!("{file} @{} on {sm_name} seed {seed}: after {what} the kernel fails where the legalized one ran: {e}", f.name));
                    break;
                }
            }
        }
    }
}

#[test]
fn combining_preserves_results_of_every_test_kernel() {
    let files = kernel_files();
    let outcomes: Vec<(PathBuf, Outcome)> = std::thread::scope(|s| {
        let chunks: Vec<Vec<PathBuf>> = (0..2).map(|i| files.iter().skip(i).step_by(2).cloned().collect()).collect();
        let handles: Vec<_> = chunks.into_iter().map(|chunk| s.spawn(move || chunk.into_iter().map(|p| (p.clone(), check_file(&p))).collect::<Vec<_>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let (mut compared, mut rewrites, mut rewritten_files, mut merged, mut straight_line, mut reduced, mut expressions, mut promoted) = (0, 0, 0, 0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for (_, o) in &outcomes {
        compared += o.compared;
        rewrites += o.rewrites;
        rewritten_files += usize::from(o.rewrites > 0);
        merged += o.merged;
        straight_line += o.straight_line;
        reduced += o.reduced;
        expressions += o.expressions;
        promoted += o.promoted;
        failures.extend(o.failures.iter().cloned());
    }
    println!("{} kernel files x {} SMs: {compared} runs compared, {rewrites} rewrites in {rewritten_files} files, {merged} branches merged, {straight_line} indices by slsr, {reduced} addresses and {expressions} induction expressions strength-reduced, {promoted} frame cells promoted", outcomes.len(), SMS.len());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
    assert!(rewritten_files * 3 >= outcomes.len(), "the combiner rewrote only {rewritten_files} of {} files", outcomes.len());
    assert!(merged >= 10, "simplify-cfg merged only {merged} branches in the test kernels");
    assert!(straight_line >= 10, "slsr rewrote only {straight_line} indices in the test kernels");
    assert!(reduced >= 10, "loop-reduce rewrote only {reduced} addresses in the test kernels");
    assert!(expressions >= 10, "loop-reduce made only {expressions} induction expressions PHIs in the test kernels");
    assert!(promoted >= 8, "sroa promoted only {promoted} frame cells in the test kernels");
}

#[test]
fn combining_preserves_results_of_random_kernels() {
    let tables = tables::nvptx();
    let sms: Vec<_> = ["50", "70", "90", "100"].iter().map(|s| tables.find_sm(s).unwrap()).collect();
    let config = GeneratorConfig::default();
    let programs = 400u64;
    let (mut compared, mut promoted) = (0, 0);
    let mut failures = Vec::new();
    for seed in 0..programs {
        let kernel = generate(seed, &config, tables).unwrap();
        // How much of the kernel's frame traffic sroa takes (checked inside
        // check_kernel_combined, which runs it before legalization).
        let mut module = backend::mir::parser::parse_module(&kernel.text, "random.mir", tables).unwrap();
        promoted += backend::sroa::run(&mut module, tables).unwrap().promoted_cells;
        match backend::differential::check_kernel_combined(&kernel, tables, &sms, 3, seed) {
            Ok(t) => compared += t.compared,
            Err(e) => failures.push(format!("seed {seed}: {e}")),
        }
    }
    println!("{programs} random kernels x {} SMs: {compared} runs compared after sroa + legalize + combine + loop-reduce; sroa promoted {promoted} frame cells", sms.len());
    assert!(failures.is_empty(), "{} failures; first:\n{}", failures.len(), failures.first().unwrap());
    assert!(promoted >= 50, "sroa promoted only {promoted} frame cells of the random kernels");
}
