//! `ptxc audit` end to end: queries, dumps, diffs, runtime descriptions, and adding a
//! new SM by editing description files only.

use std::path::{Path, PathBuf};

use backend::cli::{run, Output};
use serde_json::Value;

fn ptxc(args: &[&str]) -> Output {
    run(std::iter::once("ptxc").chain(args.iter().copied()))
}

fn json(args: &[&str]) -> Value {
    let out = ptxc(args);
    assert_eq!(out.code, 0, "ptxc {args:?} failed: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The text of `file:line` (a path relative to the repository root).
fn source_line(source: &str) -> String {
    let (file, line) = source.rsplit_once(':').unwrap();
    let path = if Path::new(file).is_absolute() { PathBuf::from(file) } else { repo().join(file) };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().nth(line.parse::<usize>().unwrap() - 1).unwrap().to_string()
}

#[test]
fn action_query_reports_the_deciding_rule() {
    let v = json(&["audit", "--sm", "80", "--op", "FMA", "--vt", "v2bf16", "--json"]);
    assert_eq!(v["sm"], "sm_80");
    assert_eq!(v["op"], "FMA");
    assert_eq!(v["vt"], "v2bf16");
    assert_eq!(v["action"], "Legal");
    let source = v["source"].as_str().unwrap();
    assert!(source.starts_with("target-desc/nvptx/legality.rules:"), "{source}");
    let line = source_line(source);
    assert!(line.contains("FMA") && line.contains("v2bf16") && line.contains("bf16_storage"), "{line}");

    let v = json(&["audit", "--sm", "sm_80", "--op", "FADD", "--vt", "bf16", "--json"]);
    assert_eq!(v["action"], "Expand");
    let v = json(&["audit", "--sm", "90", "--op", "FADD", "--vt", "bf16", "--json"]);
    assert_eq!(v["action"], "Legal");
    assert!(source_line(v["source"].as_str().unwrap()).contains("bf16_math"));
}

#[test]
fn type_query_reports_the_register_class_and_its_line() {
    let v = json(&["audit", "--sm", "70", "--vt", "i128", "--json"]);
    assert_eq!(v["type_supported"], true);
    assert_eq!(v["register_class"], "Int128Regs");
    assert!(source_line(v["source"].as_str().unwrap()).contains("i128_regs"));
    let v = json(&["audit", "--sm", "60", "--vt", "i128", "--json"]);
    assert_eq!(v["type_supported"], false);
    assert_eq!(v["register_class"], Value::Null);
    let v = json(&["audit", "--sm", "80", "--vt", "v4f32", "--json"]);
    assert_eq!(v["type_supported"], false);
    assert_eq!(v["source"], Value::Null, "no class ever holds v4f32");
}

#[test]
fn the_text_form_names_action_and_source() {
    let out = ptxc(&["audit", "--sm", "50", "--op", "FADD", "--vt", "f16"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.contains("Promote") && out.stdout.contains("f32") && out.stdout.contains("legality.rules:"), "{}", out.stdout);
}

#[test]
fn dump_covers_the_whole_table_in_every_format() {
    let rows = json(&["audit", "--sm", "80", "--dump", "--json"]);
    let rows = rows.as_array().unwrap();
    let fma = rows.iter().find(|r| r["kind"] == "action" && r["key"] == "FMA" && r["vt"] == "v2bf16").unwrap();
    assert_eq!(fma["value"], "Legal");
    assert!(rows.iter().any(|r| r["kind"] == "condcode" && r["key"] == "olt" && r["vt"] == "f16"));
    assert!(rows.iter().any(|r| r["kind"] == "type" && r["vt"] == "bf16" && r["value"] == "supported Int16HalfRegs"));
    let csv = ptxc(&["audit", "--sm", "80", "--dump", "--csv"]).stdout;
    assert_eq!(csv.lines().next(), Some("sm,kind,key,vt,value,source"));
    assert_eq!(csv.lines().count(), rows.len() + 1);
    let text = ptxc(&["audit", "--sm", "80", "--dump"]).stdout;
    assert_eq!(text.lines().count(), rows.len() + 1);
}

#[test]
fn diff_lists_exactly_the_entries_that_change() {
    let v = json(&["audit", "--diff", "75", "80", "--json"]);
    assert_eq!(v["from"], "sm_75");
    assert_eq!(v["to"], "sm_80");
    let diffs = v["differences"].as_array().unwrap();
    assert_eq!(v["count"].as_u64().unwrap() as usize, diffs.len());
    let fma = diffs.iter().find(|d| d["kind"] == "action" && d["key"] == "FMA" && d["vt"] == "v2bf16").unwrap();
    assert_eq!(fma["to"]["value"], "Legal");
    assert_ne!(fma["from"]["value"], "Legal");
    assert!(source_line(fma["to"]["source"].as_str().unwrap()).contains("v2bf16"));
    for d in diffs {
        assert_ne!(d["from"]["value"], d["to"]["value"], "{d}");
    }
    // Identical SMs have no differences.
    let same = json(&["audit", "--diff", "61", "62", "--json"]);
    assert_eq!(same["count"], 0);
}

#[test]
fn unknown_names_get_suggestions_not_panics() {
    for (args, needle) in [
        (vec!["audit", "--sm", "sm_95", "--vt", "i32"], "sm_90"),
        (vec!["audit", "--sm", "8O", "--vt", "i32"], "unknown SM"),
        (vec!["audit", "--sm", "80", "--op", "FADDD", "--vt", "f32"], "FADD"),
        (vec!["audit", "--sm", "80", "--op", "FADD", "--vt", "f23"], "f32"),
        (vec!["audit", "--sm", "80", "--cc", "ltt", "--vt", "f32"], "lt"),
        (vec!["audit", "--diff", "75", "sm_1000"], "sm_100"),
        (vec!["audit", "--sm", "80", "--op", "FADD"], "--vt"),
        (vec!["audit"], "--sm"),
    ] {
        let out = ptxc(&args);
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
    assert_eq!(ptxc(&["audit", "--bogus"]).code, 2);
}

/// Copies the shipped description into a fresh temporary directory.
fn copy_description() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nvptx");
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(repo().join("target-desc/nvptx")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    (tmp, dir)
}

#[test]
fn a_runtime_copy_audits_like_the_built_in_tables() {
    let (_tmp, dir) = copy_description();
    let dir = dir.to_str().unwrap();
    for q in [["--op", "FMA", "--vt", "v2bf16"], ["--op", "ADD", "--vt", "i128"], ["--op", "FADD", "--vt", "f16"]] {
        for sm in ["50", "70", "80", "90", "100"] {
            let built_in = json(&[&["audit", "--sm", sm, "--json"][..], &q[..]].concat());
            let runtime = json(&[&["audit", "--sm", sm, "--json", "--target-desc", dir][..], &q[..]].concat());
            assert_eq!(built_in["action"], runtime["action"], "sm {sm} {q:?}");
            let (b, r) = (built_in["source"].as_str().unwrap(), runtime["source"].as_str().unwrap());
            assert_eq!(b.rsplit_once(':').unwrap().1, r.rsplit_once(':').unwrap().1, "same line");
            assert!(r.starts_with(dir), "{r}");
        }
    }
}

#[test]
fn adding_an_sm_needs_only_description_files() {
    let (_tmp, dir) = copy_description();
    // A new generation: sm_121 implies sm_120 and brings one feature with one rule.
    let sm_yaml = dir.join("sm.yaml");
    let mut text = std::fs::read_to_string(&sm_yaml).unwrap();
    text = text.replace(
        "features:\n",
        "features:\n  - { name: rotate64, ptx: \"8.8\", help: \"64-bit funnel-shift rotates\" }\n",
    );
    text.push_str("  - { name: sm_121,  ptx: \"8.8\", implies: [sm_120], provides: [rotate64] }\n");
    std::fs::write(&sm_yaml, text).unwrap();
    let rules = dir.join("legality.rules");
    let mut text = std::fs::read_to_string(&rules).unwrap();
    text.push_str("\n# sm_121 rotates 64-bit values natively.\nlegal ROTL : i64 when rotate64;\n");
    let new_rule_line = text.lines().count();
    std::fs::write(&rules, text).unwrap();

    let dir = dir.to_str().unwrap();
    let summary = json(&["audit", "--sm", "121", "--json", "--target-desc", dir]);
    assert_eq!(summary["sm"], "sm_121");
    assert_eq!(summary["min_ptx"], "8.8");
    assert!(summary["features"].as_array().unwrap().iter().any(|f| f == "f32x2_math"), "inherits sm_100's features");
    // No `occupancy:` of its own: sm_120's profile, with the profile's source line.
    assert_eq!(summary["occupancy"]["profile"], "blackwell_consumer");
    assert_eq!(summary["occupancy"]["max_warps_per_sm"], 48);
    assert!(summary["occupancy"]["source"].as_str().unwrap().starts_with(&format!("{dir}/sm.yaml:")));

    let v = json(&["audit", "--sm", "sm_121", "--op", "ROTL", "--vt", "i64", "--json", "--target-desc", dir]);
    assert_eq!(v["action"], "Legal");
    assert_eq!(v["source"], format!("{dir}/legality.rules:{new_rule_line}"));
    let v = json(&["audit", "--sm", "120", "--op", "ROTL", "--vt", "i64", "--json", "--target-desc", dir]);
    assert_eq!(v["action"], "Expand");

    let diff = json(&["audit", "--diff", "120", "121", "--json", "--target-desc", dir]);
    assert_eq!(diff["count"], 1, "{diff}");
    assert_eq!(diff["differences"][0]["key"], "ROTL");
    // The built-in tables do not know the new SM.
    assert_eq!(ptxc(&["audit", "--sm", "121", "--json"]).code, 1);
}

#[test]
fn a_broken_runtime_description_is_a_located_error() {
    let (_tmp, dir) = copy_description();
    let rules = dir.join("legality.rules");
    let text = std::fs::read_to_string(&rules).unwrap().replace("legal BRCOND : i1;", "legal BRCOND : i7;");
    std::fs::write(&rules, &text).unwrap();
    let line = text.lines().position(|l| l.contains("BRCOND : i7")).unwrap() + 1;
    let out = ptxc(&["audit", "--sm", "80", "--vt", "i32", "--target-desc", dir.to_str().unwrap()]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains(&format!("legality.rules:{line}:16")), "{}", out.stderr);
    assert!(out.stderr.contains("unknown type `i7`") && out.stderr.contains("did you mean `i1`"), "{}", out.stderr);
    assert!(out.stderr.contains("legal BRCOND : i7;"), "shows the source line: {}", out.stderr);
}
