//! The MIR corpus (`tests/corpus/*.mir`): every file parses, verifies, prints as MIR
//! that parses back to the same module, and uses only operations the description calls
//! Legal on each SM its `# sms:` line lists.

use std::path::{Path, PathBuf};

use backend::mir::{parser, printer, verifier, row_type};
use target_desc::tables::Action;

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    files.into_iter().map(|p| { let t = std::fs::read_to_string(&p).unwrap(); (p, t) }).collect()
}

fn name(p: &Path) -> String {
    format!("tests/corpus/{}", p.file_name().unwrap().to_string_lossy())
}

/// The SMs a corpus file declares with `# sms: 50 60 ...`.
pub fn declared_sms(text: &str) -> Vec<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("# sms:"))
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

#[test]
fn corpus_is_large_enough() {
    assert!(corpus().len() >= 20, "only {} corpus files", corpus().len());
}

#[test]
fn every_corpus_file_parses_verifies_and_round_trips() {
    let tables = tables::nvptx();
    for (path, text) in corpus() {
        let file = name(&path);
        let module = parser::parse_module(&text, &file, tables).unwrap_or_else(|e| panic!("{}", e.render()));
        let errors = verifier::verify_module(&module, tables, verifier::Source { file: &file, text: &text });
        assert!(errors.is_empty(), "{}", errors.iter().map(|e| e.render()).collect::<String>());
        let printed = printer::print_module(&module, tables);
        let reparsed = parser::parse_module(&printed, &file, tables).unwrap_or_else(|e| panic!("printed form of {file} does not parse: {}\n{printed}", e.render()));
        assert_eq!(reparsed.without_locs(), module.without_locs(), "{file}: printing changed the module");
        assert_eq!(printer::print_module(&reparsed, tables), printed, "{file}: printing is not stable");
    }
}

#[test]
fn corpus_files_use_only_legal_operations_on_their_sms() {
    let tables = tables::nvptx();
    let mut problems = Vec::new();
    for (path, text) in corpus() {
        let file = name(&path);
        let sms = declared_sms(&text);
        assert!(!sms.is_empty(), "{file} has no `# sms:` line");
        let module = parser::parse_module(&text, &file, tables).unwrap_or_else(|e| panic!("{}", e.render()));
        for sm_name in &sms {
            let sm = tables.find_sm(sm_name).unwrap_or_else(|| panic!("{file}: unknown SM {sm_name}"));
            for f in &module.functions {
                for v in &f.values {
                    if !sm.type_supported(v.ty) {
                        problems.push(format!("{file}: {}: %{} has type {}, not a register type", sm.name, v.name, tables.type_info(v.ty).unwrap().name));
                    }
                }
                for b in &f.blocks {
                    for inst in &b.insts {
                        let Some(vt) = row_type(f, inst, tables) else { continue };
                        let d = tables.decide(sm, inst.opcode.generic().unwrap(), vt);
                        if d.action != Action::Legal {
                            let op = inst.opcode.name(tables);
                            let ty = tables.type_info(vt).unwrap().name;
                            problems.push(format!("{file}:{}: {} {op} on {ty} is {} ({})", inst.loc.line, sm.name, d.action, d.rule.source));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn corpus_kernels_compile_and_assemble_on_every_declared_sm() {
    let ptxas = tests::ptxas();
    let mut problems = Vec::new();
    let mut assembled = 0;
    for (path, text) in corpus() {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        for sm in declared_sms(&text) {
            let out = backend::cli::run(["ptxc", "compile", path.to_str().unwrap(), "--sm", &sm, "--verify"]);
            match out.code {
                0 => {
                    if let Some(ptxas) = &ptxas {
                        match tests::assemble(ptxas, &out.stdout, &format!("sm_{sm}")) {
                            Ok(()) => assembled += 1,
                            Err(e) => problems.push(format!("{file} sm_{sm}: ptxas rejects the output:\n{e}")),
                        }
                    }
                }
                _ => {
                    problems.push(format!("{file} sm_{sm}: does not compile:\n{}", out.stderr));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    if ptxas.is_some() {
        assert!(assembled >= 200, "only {assembled} kernel/SM pairs assembled");
    }
    eprintln!("ptxas accepted {assembled} corpus kernel/SM pairs");
}

/// Every stage of every compiling corpus kernel prints as MIR that parses back to the
/// same module and prints identically again.
#[test]
fn every_stage_of_every_corpus_kernel_round_trips() {
    let tables = tables::nvptx();
    let mut stages = 0;
    for (path, text) in corpus() {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let sm = declared_sms(&text).last().cloned().unwrap();
        let out = backend::cli::run(["ptxc", "compile", path.to_str().unwrap(), "--sm", &sm, "--print-after-all"]);
        assert_eq!(out.code, 0, "{file}: {}", out.stderr);
        for dump in out.stderr.split("# *** MIR after ").skip(1) {
            let (pass, mir) = dump.split_once(" ***\n").unwrap();
            let module = backend::mir::parser::parse_module(mir, &file, tables)
                .unwrap_or_else(|e| panic!("{file} after {pass}: {}", e.render()));
            let printed = backend::mir::printer::print_module(&module, tables);
            assert_eq!(printed, mir, "{file} after {pass}: printing the re-read MIR differs");
            stages += 1;
        }
    }
    assert!(stages >= 100, "only {stages} stages checked");
}
