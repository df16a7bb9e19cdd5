//! Invalid target descriptions are compile errors of `codegen_macros::target_tables!`.
//!
//! Each `ui/<case>.rs` invokes the macro on `ui/descs/<case>/`, a small description
//! that is `ui/descs/valid/` with exactly one mistake; `ui/<case>.stderr` holds the
//! expected error (file, line, column, message and the source line with a caret).
//! Regenerate the snapshots with
//! `TRYBUILD=overwrite cargo test -p compile-error-tests` and read the diff.

use std::path::Path;

#[test]
fn invalid_descriptions_are_compile_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}

/// The baseline the cases are derived from loads cleanly, so each case's error comes
/// from its one change and not from something they all share.
#[test]
fn baseline_description_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/descs/valid");
    if let Err(e) = target_desc::load_dir(&dir, "tests/compile-errors/ui/descs/valid") {
        panic!("the baseline description is invalid: {e}");
    }
}

/// Every invalid description has its test file, and every test file its description.
#[test]
fn every_case_has_a_description_and_a_test() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
    let mut descs: Vec<String> = std::fs::read_dir(ui.join("descs"))
        .expect("ui/descs")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("target.yaml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "valid")
        .collect();
    let mut cases: Vec<String> = std::fs::read_dir(&ui)
        .expect("ui")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_string_lossy().strip_suffix(".rs").map(str::to_string))
        .collect();
    descs.sort();
    cases.sort();
    assert_eq!(descs, cases, "ui/descs/<case>/ and ui/<case>.rs must match one to one");
}
