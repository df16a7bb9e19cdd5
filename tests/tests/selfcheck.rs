//! `ptxc audit --verify`: every cell the legality table calls Legal, on every SM of the
//! description, compiles through the whole pipeline and ptxas for that SM accepts it.
//!
//! The self-check generates the probe kernels from the description itself, so a new
//! Legal rule without a selection pattern, a pattern on a type or address space it
//! forgot, or a template ptxas rejects fails here. Cells without any instance are
//! listed explicitly below; nothing else may be left unprobed. A second test breaks a
//! copy of the description in three ways and checks that each one is caught.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use backend::selfcheck::{self, Outcome, SmReport};

/// The Legal cells that have no probe on every SM, and the reason each must give. Each
/// is Legal with no valid instance on a register type: MIR globals live in global,
/// shared or const memory only; nothing is narrower than f64 or wider than it among
/// the float register types; and the only integer wider than i64 is the storage-only
/// i128 (where it exists at all).
const UNPROBEABLE: &[(&str, &str, &str)] = &[
    ("GLOBAL_ADDR", "p0", "no MIR global lives in address space 0"),
    ("GLOBAL_ADDR", "p5", "no MIR global lives in address space 5"),
    ("TRUNCATE", "i64", "expected a result narrower than the operand"),
    ("FP_ROUND", "f64", "expected a result narrower than the operand"),
    ("FP_EXTEND", "f64", "expected a result wider than the operand"),
];

fn failures(r: &SmReport) -> Vec<String> {
    let mut out = Vec::new();
    for c in r.cells.iter().chain(&r.patterns) {
        for i in &c.instances {
            if let Outcome::Failed { stage, message } = &i.outcome {
                out.push(format!("{} {} {} ({}): {stage}: {message}\n{}", r.sm, c.op, c.vt, i.label, i.mir.as_deref().unwrap_or("")));
            }
        }
    }
    out
}

#[test]
fn every_legal_cell_compiles_and_assembles_on_every_sm() {
    let tables = tables::nvptx();
    let ptxas = tests::ptxas();
    let sms: Vec<_> = tables.sms.iter().collect();
    let start = std::time::Instant::now();
    let reports = selfcheck::verify_sms(tables, &sms, ptxas.as_deref());
    assert_eq!(reports.len(), tables.sms.len(), "one report per SM of the description");
    let mut problems = Vec::new();
    let mut checked = 0;
    for (r, sm) in reports.iter().zip(&sms) {
        assert_eq!(r.sm, sm.name);
        problems.extend(failures(r));
        // Every Legal cell is in the report, and is either checked or unprobeable.
        assert_eq!(r.legal_cells(), selfcheck::legal_cells(tables, sm).len(), "{}", r.sm);
        assert_eq!(r.checked() + r.unprobeable(), r.legal_cells(), "{}", r.sm);
        let unprobeable: BTreeSet<(&str, &str)> = r.cells.iter().filter(|c| !c.checked()).map(|c| (c.op, c.vt)).collect();
        let expected: BTreeSet<(&str, &str)> = UNPROBEABLE.iter().map(|&(op, vt, _)| (op, vt)).collect();
        assert_eq!(unprobeable, expected, "{}: the unprobeable cells changed", r.sm);
        for c in r.cells.iter().filter(|c| !c.checked()) {
            let reason = c.unprobeable_reason().unwrap_or_default();
            let why = UNPROBEABLE.iter().find(|u| (u.0, u.1) == (c.op, c.vt)).map(|u| u.2).unwrap_or("?");
            assert!(reason.contains(why), "{} {} {}: {reason}", r.sm, c.op, c.vt);
        }
        // Instances are only ever skipped for storage-only operands.
        for c in &r.cells {
            for s in &c.skipped {
                assert!(s.reason.contains("storage-only"), "{} {} {} {}: {}", r.sm, c.op, c.vt, s.label, s.reason);
            }
        }
        // Every pattern of several instructions (trees, folded constants) enabled on the
        // SM is probed with its own shape, and each probe selects it.
        let index = tables.sm_index(sm);
        let expected = tables.patterns.iter().filter(|p| selfcheck::probes_pattern(p) && p.sms >> index & 1 == 1).count();
        assert_eq!(r.patterns.len(), expected, "{}", r.sm);
        assert_eq!(r.patterns_unprobed(), 0, "{}: {:?}", r.sm, r.patterns.iter().filter_map(|c| c.unprobeable.as_ref()).collect::<Vec<_>>());
        assert!(r.patterns.iter().filter(|c| c.op.starts_with("MAD_")).count() >= 9, "{}", r.sm);
        assert!(r.pattern_probes() >= r.patterns.len(), "{}", r.sm);
        // A plausible amount of work: sm_50 has the fewest Legal cells.
        assert!(r.checked() >= 320, "{}: only {} cells checked", r.sm, r.checked());
        assert!(r.probes() >= 2 * r.checked(), "{}: only {} probes for {} cells", r.sm, r.probes(), r.checked());
        if ptxas.is_some() {
            assert!(r.assembled, "{}", r.sm);
            assert!(r.ptxas_runs >= 1 && r.ptxas_runs <= 6, "{}: {} ptxas runs (probes are batched per .version)", r.sm, r.ptxas_runs);
        }
        checked += r.checked();
    }
    assert!(problems.is_empty(), "{} failing instances:\n{}", problems.len(), problems.join("\n"));
    assert!(checked >= 8000, "only {checked} cells checked over all SMs");
    eprintln!("self-check: {checked} cells on {} SMs in {:.1?}", reports.len(), start.elapsed());
}

/// Copies the shipped description into a fresh temporary directory.
fn copy_description() -> (tempfile::TempDir, PathBuf) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nvptx");
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(repo.join("target-desc/nvptx")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    (tmp, dir)
}

fn edit(path: &Path, from: &str, to: &str) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no `{from}`", path.display());
    let line = text[..text.find(from).unwrap()].matches('\n').count() + 1;
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
    line
}

/// Three mistakes, each caught with the cell, the stage and the deciding rule: a Legal
/// cell without a pattern (isel), a template ptxas rejects, and a Legal rule for an
/// instruction the SM does not have (both ptxas). And two in tree patterns, caught by
/// their own probes: a template ptxas rejects, and a tree an earlier pattern of the
/// same shape always takes.
#[test]
fn a_broken_description_is_caught() {
    let (_tmp, dir) = copy_description();
    let isel = dir.join("isel.rules");
    edit(&isel, "pattern BSWAP for (i32: b32) : BSWAP(a) = \"prmt.{T} {d}, {a}, 0, 0x0123\";\n", "");
    edit(&isel, "\"addc.cc.u64 {d}, {a}, {b}\"", "\"addc.cc.u64 {d}, {a}, {a}, {b}\"");
    edit(&isel, "ADD(MUL(a, b: imm), c: imm) = \"mad.lo.{T} {d}, {a}, {b}, {c}\";", "ADD(MUL(a, b: imm), c: imm) = \"mad.lo.{T} {d}, {a}, {b}, {c}, {c}\";\npattern MAD_AGAIN for (i32: s32) : ADD(MUL(a, b), c) = \"mad.lo.{T} {d}, {a}, {b}, {c}\";");
    let rules = dir.join("legality.rules");
    let rule_line = edit(
        &rules,
        "legal ADD, SMIN, SMAX, UMIN, UMAX : v2i16 when i16x2_math;",
        "legal ADD, SUB, SMIN, SMAX, UMIN, UMAX : v2i16 when i16x2_math;\npattern SUB_X2 for (v2i16: s16x2) : SUB(a, b) when i16x2_math = \"sub.{T} {d}, {a}, {b}\";",
    );
    let loaded = target_desc::load_dir(&dir, "broken").unwrap_or_else(|e| panic!("{e}"));
    let tables: &'static _ = Box::leak(Box::new(loaded.tables));
    let ptxas = tests::ptxas();
    let sm = tables.find_sm("90").unwrap();
    let report = selfcheck::verify_sm(tables, sm, ptxas.as_deref());
    let failed: Vec<(&str, &str, String, String)> = report
        .cells
        .iter()
        .flat_map(|c| c.instances.iter().map(move |i| (c, i)))
        .filter_map(|(c, i)| match &i.outcome {
            Outcome::Failed { stage, message } => Some((c.op, c.vt, stage.clone(), format!("{} {message}", c.source))),
            _ => None,
        })
        .collect();
    let find = |op: &str, vt: &str| failed.iter().find(|f| f.0 == op && f.1 == vt);
    let bswap = find("BSWAP", "i32").unwrap_or_else(|| panic!("a Legal cell without a pattern passed: {failed:?}"));
    assert_eq!(bswap.2, "isel");
    assert!(bswap.3.contains("no instruction-selection pattern for BSWAP"), "{}", bswap.3);
    assert!(bswap.3.starts_with("broken/legality.rules:"), "names the rule: {}", bswap.3);
    if ptxas.is_some() {
        let adde = find("ADDE", "i64").unwrap_or_else(|| panic!("a template ptxas rejects passed: {failed:?}"));
        assert_eq!(adde.2, "ptxas");
        assert!(adde.3.contains("addc"), "{}", adde.3);
        let sub = find("SUB", "v2i16").unwrap_or_else(|| panic!("an instruction the SM lacks passed: {failed:?}"));
        assert_eq!(sub.2, "ptxas");
        assert!(sub.3.starts_with(&format!("broken/legality.rules:{rule_line} ")), "names the rule: {}", sub.3);
        assert!(sub.3.contains("Unexpected instruction types specified for 'sub'"), "{}", sub.3);
        // Nothing else fails: the failures are attributed to the broken kernels only.
        let cells: BTreeSet<(&str, &str)> = failed.iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(cells, BTreeSet::from([("ADDE", "i64"), ("BSWAP", "i32"), ("SUB", "v2i16")]));
        assert_eq!(report.failed(), 3);
    }
    let patterns: Vec<(&str, String)> = report
        .patterns
        .iter()
        .flat_map(|c| c.instances.iter().map(move |i| (c, i)))
        .filter_map(|(c, i)| match &i.outcome {
            Outcome::Failed { stage, message } => Some((c.op, format!("{stage}: {message}"))),
            _ => None,
        })
        .collect();
    let again = patterns.iter().find(|f| f.0 == "MAD_AGAIN_i32").unwrap_or_else(|| panic!("a pattern that never wins passed: {patterns:?}"));
    assert!(again.1.starts_with("isel: the probe's shape was selected as MAD_i32, not as MAD_AGAIN_i32"), "{}", again.1);
    if ptxas.is_some() {
        let mad = patterns.iter().find(|f| f.0 == "MAD_IMM_BOTH_i32").unwrap_or_else(|| panic!("a tree template ptxas rejects passed: {patterns:?}"));
        assert!(mad.1.starts_with("ptxas: ") && mad.1.contains("mad"), "{}", mad.1);
        let names: BTreeSet<&str> = patterns.iter().map(|f| f.0).collect();
        assert_eq!(names, BTreeSet::from(["MAD_AGAIN_i32", "MAD_IMM_BOTH_i16", "MAD_IMM_BOTH_i32", "MAD_IMM_BOTH_i64"]));
        assert_eq!(report.patterns_failed(), 4);
    }
}

/// The command: text and JSON reports, exit code 1 on a failure, usage errors.
#[test]
fn the_command_reports_and_exits_nonzero_on_failure() {
    let run = |args: &[&str]| backend::cli::run(std::iter::once("ptxc").chain(args.iter().copied()));
    let ptxas = tests::ptxas();
    let assemble: Vec<String> = match &ptxas {
        Some(p) => vec!["--ptxas".into(), p.to_string_lossy().into_owned()],
        None => vec!["--no-assemble".into()],
    };
    let with = |base: &[&str]| -> Vec<String> { base.iter().map(|s| s.to_string()).chain(assemble.iter().cloned()).collect() };
    let args = with(&["audit", "--sm", "53", "--verify", "--json"]);
    let out = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["sm"], "sm_53");
    assert_eq!(v["failed"], 0);
    assert_eq!(v["checked"].as_u64().unwrap() + v["unprobeable"].as_u64().unwrap(), v["legal_cells"].as_u64().unwrap());
    assert_eq!(v["unprobeable_cells"].as_array().unwrap().len(), UNPROBEABLE.len());
    let fadd = v["cells"].as_array().unwrap().iter().find(|c| c["op"] == "FADD" && c["vt"] == "f16").unwrap();
    assert_eq!(fadd["status"], if ptxas.is_some() { "passed" } else { "compiled" });
    assert!(fadd["source"].as_str().unwrap().starts_with("target-desc/nvptx/legality.rules:"));

    let args = with(&["audit", "--sm", "sm_50", "--verify"]);
    let text = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(text.code, 0);
    assert!(text.stdout.starts_with("sm_50: "), "{}", text.stdout);
    assert!(text.stdout.contains("UNPROBEABLE GLOBAL_ADDR p0 on sm_50"), "{}", text.stdout);

    // A description with a Legal cell and no pattern: exit 1, the cell named.
    let (_tmp, dir) = copy_description();
    edit(&dir.join("isel.rules"), "pattern BSWAP for (i32: b32) : BSWAP(a) = \"prmt.{T} {d}, {a}, 0, 0x0123\";\n", "");
    let dir = dir.to_string_lossy().into_owned();
    let args = with(&["audit", "--sm", "50", "--verify", "--target-desc", &dir]);
    let broken = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(broken.code, 1, "{}", broken.stdout);
    assert!(broken.stdout.contains("FAIL BSWAP i32 on sm_50: isel failed"), "{}", broken.stdout);

    for (args, needle) in [
        (vec!["audit", "--verify"], "--sm SM or --all-sms"),
        (vec!["audit", "--verify", "--sm", "80", "--op", "ADD"], "--verify checks whole SMs"),
        (vec!["audit", "--verify", "--sm", "81"], "unknown SM"),
    ] {
        let out = run(&args);
        assert_eq!(out.code, 1, "{args:?}");
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
    }
    assert_eq!(run(&["audit", "--all-sms"]).code, 2, "--all-sms needs --verify");
}
