//! FileCheck tests: each `tests/filecheck/*.mir` names how to run `ptxc` on itself in
//! `# RUN: ARGS` lines (the input path is appended); the `check:`/`nextln:`/`not:`/
//! `regex:` directives (the `filecheck` crate; `$$` is a literal `$`) that follow a
//! RUN line, up to the next one, state what that run's output must contain. Successful
//! PTX outputs are also assembled by ptxas for their `.target`.

use std::path::{Path, PathBuf};

use backend::cli::run;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("filecheck");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "mir")).collect();
    files.sort();
    files
}

#[test]
fn filecheck_cases() {
    let ptxas = tests::ptxas();
    let cases = cases();
    assert!(cases.len() >= 8, "only {} FileCheck cases", cases.len());
    let mut failures = Vec::new();
    for path in cases {
        let text = std::fs::read_to_string(&path).unwrap();
        // The header (before the first document) holds RUN lines and their directives.
        let header: Vec<&str> = text.lines().take_while(|l| l.trim() != "---").collect();
        let mut runs: Vec<(&str, String)> = Vec::new();
        for line in header {
            let content = line.trim_start_matches(['#', ';', ' ']);
            match content.strip_prefix("RUN:") {
                Some(args) => runs.push((args, String::new())),
                None => {
                    if let Some((_, directives)) = runs.last_mut() {
                        directives.push_str(content);
                        directives.push('\n');
                    }
                }
            }
        }
        assert!(!runs.is_empty(), "{} has no RUN line", path.display());
        // Consecutive RUN lines share the directives that follow the last of them.
        for i in (0..runs.len().saturating_sub(1)).rev() {
            if runs[i].1.trim().is_empty() {
                runs[i].1 = runs[i + 1].1.clone();
            }
        }
        for (args, directives) in runs {
            let checker = filecheck::CheckerBuilder::new().text(&directives).unwrap_or_else(|e| panic!("{}: {e}", path.display())).finish();
            assert!(!checker.is_empty(), "{}: RUN `{args}` has no check directives", path.display());
            let mut argv: Vec<String> = vec!["ptxc".into()];
            argv.extend(args.split_whitespace().map(str::to_string));
            argv.push(path.to_string_lossy().into_owned());
            let out = run(&argv);
            // A successful run is checked on its output followed by its diagnostics
            // (remarks, --print-after); a failing one on its diagnostics.
            let output = if out.code == 0 { format!("{}{}", out.stdout, out.stderr) } else { out.stderr.clone() };
            let (ok, explanation) = checker.explain(&output, filecheck::NO_VARIABLES).unwrap();
            if !ok {
                failures.push(format!("{} with `{args}` (exit {}):\n{explanation}\n--- output ---\n{output}", path.display(), out.code));
                continue;
            }
            let is_ptx = out.code == 0 && out.stdout.contains(".target ");
            if let (true, Some(ptxas)) = (is_ptx, &ptxas) {
                let sm = out.stdout.lines().find_map(|l| l.strip_prefix(".target ")).unwrap().trim().to_string();
                if let Err(e) = tests::assemble(ptxas, &out.stdout, &sm) {
                    failures.push(format!("{} with `{args}`: ptxas rejects the output:\n{e}\n{}", path.display(), out.stdout));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
