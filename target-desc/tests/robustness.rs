//! The loader never panics on bad input, and every error it reports points inside the
//! file it names.

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use target_desc::{build, rules, SourceFile};

fn shipped_files() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("nvptx");
    let manifest = std::fs::read_to_string(dir.join("target.yaml")).unwrap();
    let mut files = vec![("target.yaml".to_string(), manifest.clone())];
    for line in manifest.lines() {
        if let Some(name) = line.trim().strip_prefix("- ") {
            files.push((name.to_string(), std::fs::read_to_string(dir.join(name)).unwrap()));
        }
    }
    files
}

fn load(files: &[(String, String)]) -> Result<(), target_desc::DescError> {
    let mut sources: Vec<SourceFile> =
        files.iter().map(|(n, t)| SourceFile { display: n.clone(), text: Arc::from(t.as_str()) }).collect();
    let manifest = sources.remove(0);
    build::build(manifest, sources).map(|_| ())
}

fn check_error_location(files: &[(String, String)], e: &target_desc::DescError) {
    let (_, text) = files.iter().find(|(n, _)| *n == e.file).unwrap_or_else(|| panic!("error names unknown file: {e}"));
    let lines = text.lines().count().max(1);
    assert!(e.line >= 1 && e.line <= lines, "line out of range: {e}");
    let width = text.lines().nth(e.line - 1).map_or(0, |l| l.chars().count());
    assert!(e.column >= 1 && e.column <= width + 1, "column out of range ({width}): {e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rule_parser_never_panics(text in "[ -~\n]{0,200}") {
        if let Err(e) = rules::parse_file(&text, "x.rules") {
            prop_assert!(e.line >= 1);
        }
    }

    #[test]
    fn rule_parser_handles_rule_shaped_noise(
        words in proptest::collection::vec(prop_oneof![
            Just("legal"), Just("expand"), Just("promote(f32)"), Just("custom(h)"), Just("when"),
            Just("ADD"), Just("i32"), Just(","), Just(":"), Just(";"), Just("!"), Just("&"), Just("("),
            Just(")"), Just("$s"), Just("set"), Just("="), Just("condcode"), Just("default"), Just("#")
        ], 0..30)
    ) {
        let text = words.join(" ");
        let _ = rules::parse_file(&text, "x.rules");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Deletes, duplicates or corrupts one line of one shipped file.
    #[test]
    fn mutated_descriptions_fail_cleanly(file_pick in 0usize..100, line_pick in 0usize..10_000, how in 0u8..4) {
        let mut files = shipped_files();
        let index = file_pick % files.len();
        let mut lines: Vec<String> = files[index].1.lines().map(str::to_string).collect();
        if lines.is_empty() {
            return Ok(());
        }
        let at = line_pick % lines.len();
        match how {
            0 => { lines.remove(at); }
            1 => { let l = lines[at].clone(); lines.insert(at, l); }
            2 => { lines[at] = lines[at].replace(|c: char| c.is_ascii_digit(), "9"); }
            _ => {
                // Halve the line at a character boundary (the files contain non-ASCII).
                let l = &mut lines[at];
                let mut cut = l.len() / 2;
                while !l.is_char_boundary(cut) {
                    cut -= 1;
                }
                l.truncate(cut);
            }
        }
        files[index].1 = lines.join("\n") + "\n";
        if let Err(e) = load(&files) {
            check_error_location(&files, &e);
        }
    }
}

#[test]
fn the_shipped_description_loads_through_the_same_entry_point() {
    load(&shipped_files()).unwrap();
}
