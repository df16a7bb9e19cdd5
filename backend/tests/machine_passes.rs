//! The machine passes checked by execution and their knobs checked for effect.
//!
//! Every corpus and `tests/legalize/` kernel (and `tests/machine/`) is compiled for
//! several SMs at -O0, with each optional pass of the pipeline alone on top of -O0, and
//! at -O3; `ptxc sim` on each PTX must agree with the MIR interpreter on the input, so
//! each pass is checked before (-O0) and after (alone, and within the full pipeline).
//! Each pass alone must change the PTX of some kernel against the same options with no
//! optional pass, so a pass turned into a no-op fails.
//!
//! Then every knob a pass reads is shown changing what the pass does.

use std::path::{Path, PathBuf};

use backend::differential::end_to_end::{self, Comparison};
use backend::interp::{self, Launch};
use backend::mir::FunctionKind;
use backend::options::{OptLevel, Options};
use backend::passes::PASSES;

const SMS: &[&str] = &["sm_50", "sm_80", "sm_90"];
const INPUTS: u64 = 8;
const FUEL: u64 = 4_000_000;
const REJECTED_ON: &[(&str, &[&str])] = &[("atomics_ordered.mir", &["sm_50"]), ("atomics_scopes.mir", &["sm_50"])];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kernel_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["tests/corpus", "tests/legalize", "tests/machine", "tests/combine", "tests/sched", "tests/apps"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "mir") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    files
}

const BARE: &str = "-O3 with no optional pass";

/// The configurations: -O0, each optional pass alone on -O0, and -O3.
fn configurations() -> Vec<(String, Options)> {
    let tables = tables::nvptx();
    let optional: Vec<&str> = PASSES.iter().filter(|p| p.min_opt > OptLevel::O0).map(|p| p.name).collect();
    let mut out = vec![("-O0".to_string(), Options::new(tables, OptLevel::O0))];
    // The options the "-O0 + pass" configurations share, with no optional pass: what
    // each of them is compared with, so a pass that does nothing shows as no change.
    let mut bare = Options::new(tables, OptLevel::O3);
    bare.skip = optional.iter().map(|p| p.to_string()).collect();
    out.push((BARE.to_string(), bare));
    for pass in &optional {
        let mut o = Options::new(tables, OptLevel::O3);
        o.skip = optional.iter().filter(|p| *p != pass).map(|p| p.to_string()).collect();
        // Passes whose default knobs leave the test kernels alone are asked to act:
        // the post-RA scheduler runs only with misched-postra in the full pipeline,
        // and few loops fit the pipeliner's default three stages or have latency the
        // resident warps would not hide.
        match *pass {
            "post-RA-sched" => o.set("misched-postra=true").unwrap(),
            "machine-pipeliner" => {
                o.set("pipeliner-max-stages=100").unwrap();
                o.set("pipeliner-skip-hidden-latency=false").unwrap();
            }
            // MachineSink moves only register-free instructions by default, as on NVPTX.
            "machine-sink" => o.set("nvptx-enable-machine-sink=true").unwrap(),
            _ => {}
        }
        out.push((format!("-O0 + {pass}"), o));
    }
    out.push(("-O3".to_string(), Options::new(tables, OptLevel::O3)));
    let mut sink = Options::new(tables, OptLevel::O3);
    sink.set("nvptx-enable-machine-sink=true").unwrap();
    out.push(("-O3 machine-sink".to_string(), sink));
    // Out-of-SSA coalescing of every copy, not only the PHIs' (-O0 runs it with none).
    let mut all_copies = Options::new(tables, OptLevel::O3);
    all_copies.set("cssa-coalesce=2").unwrap();
    out.push(("-O3 cssa-coalesce=2".to_string(), all_copies));
    // A register target low enough that the pressure gates of MachineCSE and
    // MachineLICM refuse, and `.maxnreg 16` makes ptxas spill; MachineLICM sinks
    // register-free instructions into the loops over it.
    let mut low = Options::new(tables, OptLevel::O3);
    low.maxreg = Some(16);
    low.set("sink-insts-to-avoid-spills=true").unwrap();
    out.push(("-O3 --maxreg 16, sink-insts-to-avoid-spills".to_string(), low));
    // Block rematerialization of everything it can pull, wherever it can: a target
    // of 0, every mode (special registers too), loads and loops made cheap.
    let mut all_remat = Options::new(tables, OptLevel::O3);
    for k in ["max-reg-kind=1", "nv-remat-default-max-reg=0", "nv-remat-block=15", "nv-remat-threshold-for-spec-reg=0", "nv-remat-block-loop-cost-factor=1", "nv-remat-block-load-cost=1"] {
        all_remat.set(k).unwrap();
    }
    out.push(("-O3 remat everything".to_string(), all_remat));
    out
}

/// What one kernel file gave on every SM and configuration.
struct FileOutcome {
    changed: Vec<usize>,
    agreed: u64,
    discarded: u64,
    failures: Vec<String>,
}

fn check_file(path: &std::path::Path, tables: &'static target_desc::tables::TargetTables, configs: &[(String, Options)]) -> FileOutcome {
    let mut changed = vec![0usize; configs.len()];
    let (mut agreed, mut discarded) = (0u64, 0u64);
    let mut failures = Vec::new();
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.display().to_string();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let module = backend::mir::parser::parse_module(&text, &file, tables).unwrap_or_else(|e| panic!("{}", e.render()));
    for sm_name in SMS {
        if REJECTED_ON.iter().any(|(f, on)| *f == name && on.contains(sm_name)) {
            continue;
        }
        let sm = tables.find_sm(sm_name).unwrap();
        let mut baseline: Option<String> = None;
        let mut bare: Option<String> = None;
        for (k, (label, options)) in configs.iter().enumerate() {
            let ptx = match end_to_end::compile_with(&module, &text, &file, tables, sm, options.clone()) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{name} on {sm_name} at {label}: does not compile:\n{e}"));
                    continue;
                }
            };
            if label == BARE {
                bare = Some(ptx.clone());
            }
            // A pass alone is measured against the same options without it.
            let reference = if label.starts_with("-O0 + ") { bare.as_ref() } else { baseline.as_ref() };
            if reference.is_some_and(|r| *r != ptx) {
                changed[k] += 1;
            }
            match &baseline {
                None => baseline = Some(ptx.clone()),
                Some(b) if *b == ptx => continue, // Same PTX as -O0: already checked.
                Some(_) if label.starts_with("-O0 + ") && bare.as_ref() == Some(&ptx) => continue, // already checked
                Some(_) => {}
            }
            let simulator = match backend::sim::Simulator::new(&ptx, &format!("{name}.{sm_name}.ptx"), tables, None) {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{name} on {sm_name} at {label}: the simulator rejects the PTX:\n{}", e.render("out.ptx", &ptx)));
                    continue;
                }
            };
            for f in module.functions.iter().filter(|f| f.kind == FunctionKind::Kernel) {
                let threads = f.attributes.maxntid.as_ref().map(|m| m.iter().product::<u32>()).unwrap_or(64).clamp(1, 256);
                let launch = Launch { grid: [2, 1, 1], block: [threads, 1, 1] };
                let inputs: Vec<_> = (0..INPUTS).map(|seed| interp::random_args(f, tables, seed)).collect();
                let comparison = Comparison::new(&module, f, tables);
                match end_to_end::check_inputs(&module, tables, &simulator, &f.name, &launch, &inputs, FUEL, &comparison) {
                    Ok(t) => {
                        agreed += t.agreed;
                        discarded += t.discarded;
                    }
                    Err(e) => failures.push(format!("{name} @{} on {sm_name} at {label}: {e}", f.name)),
                }
            }
        }
    }
    FileOutcome { changed, agreed, discarded, failures }
}

#[test]
fn every_machine_pass_alone_and_together_agrees_with_the_interpreter() {
    let tables = tables::nvptx();
    let configs = configurations();
    assert!(configs.len() >= 3, "expected at least one optional pass");
    let files = kernel_files();
    // Per configuration: PTX texts that differ from -O0's.
    let mut changed = vec![0usize; configs.len()];
    let (mut agreed, mut discarded) = (0u64, 0u64);
    let mut failures = Vec::new();
    // Files are independent: two threads take them in turn (the suite runs test
    // binaries one after another, and this test is the longest of its binary).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes: Vec<FileOutcome> = std::thread::scope(|scope| {
        let worker = || {
            let mut done = Vec::new();
            while let Some(path) = files.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                done.push(check_file(path, tables, &configs));
            }
            done
        };
        let other = scope.spawn(worker);
        let mut all = worker();
        all.extend(other.join().expect("the worker does not panic"));
        all
    });
    for o in outcomes {
        for (c, n) in changed.iter_mut().zip(o.changed) {
            *c += n;
        }
        agreed += o.agreed;
        discarded += o.discarded;
        failures.extend(o.failures);
    }
    failures.sort();
    for ((label, _), n) in configs.iter().zip(&changed) {
        println!("{label:28} changes the PTX of {n} (file, SM) pairs");
    }
    println!("{agreed} runs agree, {discarded} discarded as undefined, {} failures", failures.len());
    assert!(failures.is_empty(), "{} failures; the first ones:\n{}", failures.len(), failures.iter().take(6).cloned().collect::<Vec<_>>().join("\n\n"));
    for ((label, _), n) in configs.iter().zip(&changed).skip(1).filter(|((l, _), _)| l != BARE) {
        assert!(*n > 0, "{label} changes no kernel's PTX: the pass does nothing");
    }
}

// ---- knobs ----

fn ptxc(args: &[&str]) -> backend::cli::Output {
    backend::cli::run(std::iter::once("ptxc").chain(args.iter().copied()))
}

fn path(rel: &str) -> String {
    root().join(rel).display().to_string()
}

/// The machine-cse summary remark of compiling `file` for sm_80 with `knobs`.
fn mcse_summary(file: &str, knobs: &[&str]) -> String {
    let file = path(file);
    // The combiner is off so these kernels reach machine-cse as written.
    let mut args = vec!["compile", file.as_str(), "--sm", "80", "--remarks", "machine-cse", "-o", "/dev/null", "--knob", "disable-combine=true"];
    for k in knobs {
        args.extend(["--knob", k]);
    }
    let out = ptxc(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stderr.lines().find(|l| l.contains("@*: eliminated")).unwrap_or_else(|| panic!("no summary in {}", out.stderr)).to_string()
}

fn count(summary: &str, what: &str) -> usize {
    let at = summary.find(what).unwrap_or_else(|| panic!("`{what}` not in {summary}")) + what.len();
    summary[at..].trim_start().split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

#[test]
fn every_knob_the_passes_read_is_in_the_registry() {
    let tables = tables::nvptx();
    for pass in PASSES {
        for s in pass.switches {
            let (backend::passes::Switch::DisabledBy(k) | backend::passes::Switch::EnabledBy(k)) = *s;
            let knob = tables.knobs.iter().find(|x| x.name == k).unwrap_or_else(|| panic!("pass {} is switched by unknown knob {k}", pass.name));
            assert!(matches!(knob.default, target_desc::tables::KnobValue::Bool(_)), "{k} switches a pass but is not a bool");
        }
    }
    for (k, _) in backend::passes::KNOBS_READ {
        assert!(tables.knobs.iter().any(|x| x.name == *k), "the engine reads unknown knob {k}");
    }
    let listing = ptxc(&["knobs"]);
    assert_eq!(listing.code, 0);
    assert!(listing.stdout.contains("rp-aware-mcse : bool = true    [read by machine-cse]"), "{}", listing.stdout);
    assert!(listing.stdout.contains("(not read: no such pass yet)"));
}

#[test]
fn pass_switches_turn_their_pass_off() {
    let file = path("tests/legalize/i8_arith.mir");
    // The combiner is off: its early CSE would leave machine-cse nothing to do here.
    let compile = |extra: &[&str]| {
        let mut args = vec!["compile", file.as_str(), "--sm", "80", "--knob", "disable-combine=true"];
        args.extend(extra);
        let out = ptxc(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    let default = compile(&[]);
    let no_cse = compile(&["--knob", "disable-machine-cse=true"]);
    assert_ne!(default, no_cse, "machine-cse eliminates instructions in i8_arith.mir");
    assert_eq!(no_cse, compile(&["--knob", "enable-mcse=false"]));
    assert_eq!(compile(&["--knob", "disable-machine-cse=true", "--knob", "disable-combine=true", "--knob", "enable-misched=false"]), compile(&["-O0"]), "-O0 runs neither machine-cse nor combine nor the scheduler");
    let no_dce = compile(&["--knob", "disable-machine-dce=true"]);
    assert!(no_dce.lines().count() > default.lines().count(), "dce removes the folded constants");
    // run-pass honours the switch too: the MIR comes back unchanged.
    let isel = ptxc(&["compile", &file, "--sm", "80", "--stop-after", "isel", "--knob", "disable-combine=true"]);
    let tmp = std::env::temp_dir().join(format!("knob-switch-{}.mir", std::process::id()));
    std::fs::write(&tmp, &isel.stdout).unwrap();
    let tmp = tmp.display().to_string();
    let off = ptxc(&["run-pass", "machine-cse", &tmp, "--sm", "80", "--knob", "disable-machine-cse=1"]);
    let on = ptxc(&["run-pass", "machine-cse", &tmp, "--sm", "80"]);
    let printed = ptxc(&["run-pass", "verify", &tmp]);
    assert_eq!(off.stdout, printed.stdout);
    assert!(on.stdout.lines().count() < off.stdout.lines().count());
}

#[test]
fn pressure_knobs_steer_machine_cse() {
    // atomics_partword.mir has CSE candidates whose reuse would pass 70 registers.
    let file = "tests/legalize/atomics_partword.mir";
    let default = mcse_summary(file, &[]);
    assert!(count(&default, "suppressed by pressure") > 0, "{default}");
    let unaware = mcse_summary(file, &["rp-aware-mcse=false"]);
    assert_eq!(count(&unaware, "suppressed by pressure"), 0, "{unaware}");
    assert!(count(&unaware, "eliminated") > count(&default, "eliminated"));
    let raised = mcse_summary(file, &["nv-remat-default-max-reg=1000"]);
    assert_eq!(count(&raised, "suppressed by pressure"), 0, "{raised}");
    let lowered = mcse_summary(file, &["reg-target-adjust=-10"]);
    assert!(count(&lowered, "suppressed by pressure") > count(&default, "suppressed by pressure"), "{lowered} vs {default}");

    // Predicates: reusing %p0 would hold 9 predicates against a target of 7.
    let preds = "tests/machine/mcse_predicates.mir";
    assert_eq!(count(&mcse_summary(preds, &[]), "suppressed by pressure"), 1);
    assert_eq!(count(&mcse_summary(preds, &["pred-target-adjust=1"]), "suppressed by pressure"), 1);
    assert_eq!(count(&mcse_summary(preds, &["pred-target-adjust=2"]), "eliminated"), 1);
    assert_eq!(count(&mcse_summary(preds, &["pred-aware-mcse=false"]), "eliminated"), 1);
}

#[test]
fn update_knobs_choose_how_pressure_is_kept_current() {
    let file = "tests/legalize/i8_arith.mir";
    let default = mcse_summary(file, &[]);
    assert!(count(&default, "incremental pressure updates") > 0 && count(&default, "full recomputations") == 0, "{default}");
    let full = mcse_summary(file, &["incremental-update-mcse=false"]);
    assert!(count(&full, "incremental pressure updates") == 0 && count(&full, "full recomputations") > 0, "{full}");
    assert_eq!(count(&full, "eliminated"), count(&default, "eliminated"), "the same decisions either way");
    let verified = mcse_summary(file, &["verify-update-mcse=true", "print-verify=true"]);
    assert_eq!(count(&verified, "verified updates"), count(&default, "incremental pressure updates"), "{verified}");
    // Every corpus and legalize kernel: the incremental analysis equals a recomputation.
    for dir in ["tests/corpus", "tests/legalize"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap().flatten() {
            let p = e.path();
            let name = p.display().to_string();
            let out = ptxc(&["compile", &name, "--sm", "80", "--knob", "verify-update-mcse=true", "--knob", "print-verify=true", "-o", "/dev/null"]);
            assert!(!out.stderr.contains("Incorrect RP info"), "{}", out.stderr);
        }
    }
}

#[test]
fn copy_prop_mcse_off_leaves_copies() {
    let file = path("tests/legalize/i8_arith.mir");
    let stop = |knob: &str| {
        let out = ptxc(&["compile", &file, "--sm", "80", "--stop-after", "machine-cse", "--knob", knob]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    let propagated = stop("copy-prop-mcse=true");
    let copies = stop("copy-prop-mcse=false");
    let movs = |t: &str| t.lines().filter(|l| l.contains("= MOV_")).count();
    assert!(movs(&copies) > movs(&propagated), "with copy-prop-mcse=false the removed instructions become copies");
}

/// Register-to-register moves in PTX (`mov.b32 %r4, %r3;`, not moves of immediates
/// or special registers).
fn register_moves(ptx: &str) -> usize {
    ptx.lines()
        .filter(|l| {
            let l = l.trim();
            l.starts_with("mov.") && l.split(',').nth(1).is_some_and(|src| src.trim().starts_with("%") && !src.contains('.'))
        })
        .count()
}

#[test]
fn cssa_coalesce_levels_remove_copies() {
    let compile_with = |file: &str, level: &str, extra: &[&str]| {
        let file = path(file);
        let knob = format!("cssa-coalesce={level}");
        let mut args = vec!["compile", &file, "--sm", "80", "--knob", &knob];
        args.extend_from_slice(extra);
        let out = ptxc(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        register_moves(&out.stdout)
    };
    let compile = |file: &str, level: &str| compile_with(file, level, &[]);
    // Every corpus and legalize kernel: coalescing never adds a move, and removes many.
    let (mut off, mut on) = (0, 0);
    for dir in ["tests/corpus", "tests/legalize"] {
        let mut files: Vec<_> = std::fs::read_dir(root().join(dir)).unwrap().flatten().map(|e| e.path()).collect();
        files.sort();
        for p in files.iter().filter(|p| p.extension().is_some_and(|x| x == "mir")) {
            let rel = p.strip_prefix(root()).unwrap().display().to_string();
            let (a, b) = (compile(&rel, "0"), compile(&rel, "1"));
            assert!(b <= a, "{rel}: {b} moves coalesced against {a} without");
            off += a;
            on += b;
        }
    }
    println!("register moves in the corpus and tests/legalize at sm_80: {off} without coalescing, {on} with");
    // Not every move comes from a PHI (selection and legalization make some).
    assert!(on * 3 < off * 2, "{on} moves with coalescing against {off} without");
    // Level 2 also coalesces the input's own copies (with the combiner and machine-cp
    // off, which otherwise fold every COPY of the input before PHI elimination).
    let file = "tests/machine/copies_coalesce.mir";
    let keep = ["--knob", "disable-combine=true", "--knob", "disable-copyprop=true"];
    let (zero, one, two) = (compile_with(file, "0", &keep), compile_with(file, "1", &keep), compile_with(file, "2", &keep));
    assert!(zero > one && one > two, "moves at levels 0, 1, 2: {zero}, {one}, {two}");
    // cssa-verbosity names the copies kept and the values that forced them.
    let file = path("tests/corpus/loop_phi_swap.mir");
    let quiet = ptxc(&["compile", &file, "--sm", "80", "--remarks", "phi-elim", "-o", "/dev/null"]);
    let verbose = ptxc(&["compile", &file, "--sm", "80", "--remarks", "phi-elim", "--knob", "cssa-verbosity=1", "-o", "/dev/null"]);
    assert!(!quiet.stderr.contains("kept") && quiet.stderr.contains("cycles broken 1"), "{}", quiet.stderr);
    assert!(verbose.stderr.contains("@fib_swap: kept `%a = COPY %a.phi`: %a interferes with %a.from1"), "{}", verbose.stderr);
}

#[test]
fn bad_knobs_and_levels_are_located_errors() {
    let file = path("tests/corpus/saxpy_f32.mir");
    let out = ptxc(&["compile", &file, "--sm", "80", "--knob", "disable-machine-cze=1"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("unknown knob `disable-machine-cze`") && out.stderr.contains("disable-machine-cse"), "{}", out.stderr);
    assert!(out.stderr.contains("column 1") && out.stderr.contains("^^^^"), "{}", out.stderr);
    let out = ptxc(&["run-pass", "machine-cse", &file, "--sm", "80", "--knob", "rp-aware-mcse=maybe"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("takes a boolean") && out.stderr.contains("column 15"), "{}", out.stderr);
    let out = ptxc(&["compile", &file, "--sm", "80", "-O4"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("expected -O0, -O1, -O2 or -O3"), "{}", out.stderr);
}

/// The nvptx-remat-block summary and remarks of compiling tests/machine/remat.mir for
/// sm_80 with `knobs`.
fn remat(knobs: &[&str]) -> (String, String) {
    let file = path("tests/machine/remat.mir");
    let mut args = vec!["compile", file.as_str(), "--sm", "80", "--remarks", "nvptx-remat-block", "-o", "/dev/null"];
    for k in knobs {
        args.extend(["--knob", k]);
    }
    let out = ptxc(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary = out.stderr.lines().find(|l| l.contains("@*: pulled")).unwrap_or_default().to_string();
    (summary, out.stderr)
}

#[test]
fn remat_knobs_steer_block_rematerialization() {
    let pulled = |knobs: &[&str]| count(&remat(knobs).0, "pulled");
    // At the kernels' maxnreg (8), parameters cross the if/else of @remat_join.
    let (default, remarks) = remat(&[]);
    assert!(count(&default, "pulled") > 0, "{default}");
    assert!(remarks.contains("pulled %a3 out of bb.0.entry"), "{remarks}");
    // The pass and its modes.
    assert!(remat(&["nv-disable-remat=true"]).0.is_empty(), "nv-disable-remat turns the pass off");
    assert_eq!(pulled(&["nv-remat-block=0"]), 0);
    // max-reg-kind 1: nv-remat-default-max-reg (70) instead of maxnreg: no pressure.
    assert_eq!(pulled(&["max-reg-kind=1"]), 0);
    assert!(pulled(&["reg-target-adjust=-10"]) > count(&default, "pulled"));
    // From here on, a target of 0 (max-reg-kind=1, nv-remat-default-max-reg=0): every
    // value that may be pulled is.
    let low = |extra: &[&str]| {
        let mut knobs = vec!["max-reg-kind=1", "nv-remat-default-max-reg=0"];
        knobs.extend_from_slice(extra);
        remat(&knobs)
    };
    let (base, base_remarks) = low(&[]);
    let n = count(&base, "pulled");
    assert!(n > count(&default, "pulled"), "{base}");
    assert!(pulled(&["max-reg-kind=1", "nv-remat-default-max-reg=4"]) < n);
    // Bit 1 alone: instructions without register operands (no %slot = %out + 8).
    assert!(count(&low(&["nv-remat-block=2"]).0, "pulled") < n);
    assert!(base_remarks.contains("pulled %slot"), "{base_remarks}");
    assert!(!low(&["nv-remat-block=2"]).1.contains("pulled %slot"));
    // %slot's clone relied on %out in the join: %out goes in a second iteration.
    assert!(count(&low(&["nv-remat-max-times=1"]).0, "pulled") < n);
    assert!(count(&low(&["nv-remat-max-times=1"]).0, "iterations") < count(&base, "iterations"));
    // Costs: 64-bit values cost 2, several clone sites add up, a clone inside a loop
    // costs 20 times more (@remat_loop's parameters).
    assert!(count(&low(&["nv-remat-block-single-cost=1"]).0, "pulled") < n);
    assert!(count(&low(&["nv-remat-block-max-cost=1"]).0, "pulled") < n);
    assert!(count(&low(&["nv-remat-block-map-size-limit=1"]).0, "pulled") < n);
    assert!(!base_remarks.contains("pulled %b0"));
    assert!(low(&["nv-remat-block-loop-cost-factor=1"]).1.contains("pulled %b0 out of bb.0.entry"));
    // %inv (an invariant load of %tab, which must come along: 2 + load cost) fits the
    // single-pull cost of 10 only with a load cost of 8, and only with load-remat.
    assert!(!base_remarks.contains("pulled %inv"));
    assert!(low(&["nv-remat-block-load-cost=8"]).1.contains("pulled %inv"));
    assert!(!low(&["nv-remat-block-load-cost=8", "load-remat=false"]).1.contains("pulled %inv"));
    // Special registers: bit 0, and only when the excess reaches the threshold.
    assert!(!low(&["nv-remat-block=15"]).1.contains("pulled %tid"));
    assert!(low(&["nv-remat-block=15", "nv-remat-threshold-for-spec-reg=0"]).1.contains("pulled %tid"));
    // vasp-fix1 keeps the address-space conversion %gen in place.
    assert!(base_remarks.contains("pulled %gen"));
    assert!(!low(&["vasp-fix1=true"]).1.contains("pulled %gen"));
    // Without parameter loads, little is left, and what is comes from second chance.
    let no_params = low(&["remat-load-param=false"]).0;
    assert!(count(&no_params, "pulled") < n / 2, "{no_params}");
    assert!(count(&no_params, "from second chance") > 0, "{no_params}");
    // no-mi-remat skips the named function.
    let skipped = low(&["no-mi-remat=remat_join"]).0;
    assert_eq!(count(&skipped, "functions skipped"), 1);
    assert!(count(&skipped, "pulled") < n);
    // The order among equal costs: @remat_order is one register over a target of 5;
    // %c0 is live out of 3 of its 4 blocks (over 70%) and goes before %c2 and %c1.
    // MachineSink stays off here: it would move the parameter load of %c1 into its only
    // reader's block, bb.1.then, and nothing would be over the target.
    let order = |extra: &[&str]| {
        let mut knobs = vec!["max-reg-kind=1", "nv-remat-default-max-reg=5", "no-mi-remat=remat_join,remat_loop,remat_internal", "disable-machine-sink=true"];
        knobs.extend_from_slice(extra);
        remat(&knobs)
    };
    let (summary, remarks) = order(&[]);
    assert_eq!(count(&summary, "pulled"), 1, "{remarks}");
    assert!(remarks.contains("pulled %c0"), "{remarks}");
    assert!(order(&["nv-remat-block-liveout-min-percentage=100"]).1.contains("pulled %c2"));
    // @remat_internal: 7 registers cross its blocks, more are live inside the entry.
    let internal = |extra: &[&str]| {
        let mut knobs = vec!["max-reg-kind=1", "nv-remat-default-max-reg=7", "no-mi-remat=remat_join,remat_loop,remat_order"];
        knobs.extend_from_slice(extra);
        remat(&knobs).0
    };
    assert_eq!(count(&internal(&[]), "pulled"), 0);
    assert!(count(&internal(&["nv-remat-check-internal-live=true"]), "pulled") > 0);
    // nv-dump-remat-block prints every step, and is enough to get the remarks.
    let file = path("tests/machine/remat.mir");
    let dumped = ptxc(&["compile", &file, "--sm", "80", "-o", "/dev/null", "--knob", "nv-dump-remat-block=true"]);
    assert!(dumped.stderr.contains("@remat_join: iteration 1: Max-Live-Function(4) = 16, target 8"), "{}", dumped.stderr);
    assert!(dumped.stderr.contains("Really Final Pull-in:"));
    assert!(!remarks.contains("Max-Live-Function"));
}
