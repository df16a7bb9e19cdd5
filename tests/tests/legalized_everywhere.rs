//! After legalization every kernel compiles for every SM of the description (sm_50 to
//! sm_120a), whatever SMs it was written for: the corpus (`tests/corpus/`), the
//! application kernels (`tests/apps/`) and one kernel per legalization case
//! (`tests/legalize/`), compiled with the verifier and the
//! legalizer's own checks after every pass, and assembled by ptxas for that SM.

use std::path::{Path, PathBuf};

/// Kernels that use what some SMs do not have, the SMs that must reject them, and the
/// diagnostic they must give there (system-scope atomics need sm_60).
const REJECTED_ON: &[(&str, &[&str], &str)] = &[
    ("atomics_ordered.mir", &["sm_50", "sm_52", "sm_53"], "cannot compile ATOMIC_SWAP.release.sys on sm_5"),
    ("atomics_scopes.mir", &["sm_50", "sm_52", "sm_53"], "has no member for `.sys` there"),
];

fn kernels() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["corpus", "apps", "legalize"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "mir") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_kernel_compiles_and_assembles_on_every_sm() {
    let tables = tables::nvptx();
    let ptxas = tests::ptxas();
    let files = kernels();
    assert!(files.len() >= 55, "expected the corpus and the legalization kernels, found {}", files.len());
    let sms: Vec<&str> = tables.sms.iter().map(|s| s.name).collect();
    let results: Vec<(usize, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|part| {
                let (files, sms, ptxas) = (&files, &sms, &ptxas);
                scope.spawn(move || {
                    let mut assembled = 0;
                    let mut problems = Vec::new();
                    for path in files.iter().skip(part).step_by(2) {
                        let file = path.file_name().unwrap().to_string_lossy().to_string();
                        for sm in sms {
                            let expected = REJECTED_ON.iter().find(|(f, on, _)| *f == file && on.contains(sm)).map(|(_, _, why)| *why);
                            let out = backend::cli::run(["ptxc", "compile", path.to_str().unwrap(), "--sm", sm, "--verify"]);
                            match (out.code, expected) {
                                (0, Some(_)) => problems.push(format!("{file} compiles on {sm}, which REJECTED_ON says cannot run it")),
                                (0, None) => {
                                    if let Some(ptxas) = ptxas {
                                        match tests::assemble(ptxas, &out.stdout, sm) {
                                            Ok(()) => assembled += 1,
                                            Err(e) => problems.push(format!("{file} {sm}: ptxas rejects the output:\n{e}")),
                                        }
                                    }
                                }
                                (_, Some(why)) if out.stderr.contains(why) => {}
                                (_, _) => problems.push(format!("{file} {sm}: does not compile:\n{}", out.stderr)),
                            }
                        }
                    }
                    (assembled, problems)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let assembled: usize = results.iter().map(|r| r.0).sum();
    let problems: Vec<String> = results.into_iter().flat_map(|r| r.1).collect();
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    let rejected: usize = REJECTED_ON.iter().map(|(_, on, _)| on.len()).sum();
    let pairs = files.len() * sms.len() - rejected;
    if ptxas.is_some() {
        assert_eq!(assembled, pairs, "every compiling kernel is assembled on every SM");
    }
    eprintln!("ptxas accepted {assembled} kernel/SM pairs ({} kernels x {} SMs, {rejected} pairs rejected as REJECTED_ON expects)", files.len(), sms.len());
}

/// Random kernels (backend::random_mir: every type, calls of device functions that pass
/// values of every type, wide kernel parameters) compile on old and new SMs and ptxas
/// accepts them: the PTX side of the differential tests, which only interpret.
#[test]
fn random_kernels_compile_and_assemble() {
    let tables = tables::nvptx();
    let ptxas = tests::ptxas();
    let config = backend::random_mir::GeneratorConfig::default();
    let sms = ["sm_50", "sm_70", "sm_90", "sm_100"];
    let dir = std::env::temp_dir().join(format!("ptxc-random-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut problems = Vec::new();
    let mut assembled = 0;
    let mut calls = 0;
    for seed in 0..60u64 {
        let kernel = backend::random_mir::generate(seed, &config, tables).unwrap();
        calls += kernel.text.matches("CALL @helper").count();
        let path = dir.join(format!("random{seed}.mir"));
        std::fs::write(&path, &kernel.text).unwrap();
        for sm in sms {
            let out = backend::cli::run(["ptxc", "compile", path.to_str().unwrap(), "--sm", sm, "--verify"]);
            if out.code != 0 {
                problems.push(format!("seed {seed} on {sm} does not compile:\n{}\n{}", out.stderr, kernel.text));
                continue;
            }
            if let Some(ptxas) = &ptxas {
                match tests::assemble(ptxas, &out.stdout, sm) {
                    Ok(()) => assembled += 1,
                    Err(e) => problems.push(format!("seed {seed} on {sm}: ptxas rejects the output:\n{e}")),
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    assert!(calls >= 10, "only {calls} device calls in 60 random kernels");
    println!("60 random kernels x {} SMs: {assembled} assembled, {calls} device calls", sms.len());
}
