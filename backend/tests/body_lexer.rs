//! The body scanner (`mir::syntax::lex_body`, the parser's fast path) against the pest
//! grammar (`body.pest`, the specification): whenever the scanner answers, the grammar
//! derives the same items; on every well-formed body of the repository the scanner does
//! answer (so the fast path is the one that runs).

use backend::mir::syntax::{lex_body, pest_items};
use proptest::prelude::*;

/// The scanner agrees with the grammar on `body` (or leaves it to the grammar).
fn agree(body: &str) -> Result<(), TestCaseError> {
    if let Some(fast) = lex_body(body) {
        match pest_items(body) {
            Ok(spec) => prop_assert_eq!(fast, spec, "body:\n{}", body),
            Err(e) => prop_assert!(false, "the scanner accepted what the grammar rejects:\n{body}\n{e}"),
        }
    }
    Ok(())
}

/// Pieces of body lines, well-formed and not: near-misses of every token class.
fn piece() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("bb.0:"), Just("bb.12.loop:"), Just("bb.3.a-b.c :"), Just("bb.3.:"), Just("bb."), Just("bb.x:"),
        Just("%a"), Just("%a.1"), Just("%bb.3"), Just("%bb.3x"), Just("%bb."), Just("%"), Just("%bb.3.x"),
        Just(":i32"), Just(":"), Just("i32"), Just(":v4f16"), Just(":9"),
        Just(" = "), Just("="), Just(","), Just(", "), Just(" "), Just("\t"), Just("  "),
        Just("ADD"), Just("ADD.ftz"), Just("LD.global.s32"), Just("A."), Just("add"), Just("FMA_rn"),
        Just("@f"), Just("@f$1.x"), Just("@"),
        Just("mask(1, -1)"), Just("mask (0,2)"), Just("mask(1"), Just("mask"), Just("masks"), Just("mask(-2)"),
        Just("align 4"), Just("align4"), Just("align"), Just("alignx"), Just("align -4"), Just("align\t8"),
        Just("0x1f"), Just("-0x1F"), Just("0x"), Just("0xg"), Just("12"), Just("-7"), Just("-"), Just("1.5"),
        Just("1."), Just("1e5"), Just("1.5e-3"), Just("2E+7"), Just("1e"), Just("1.5e"), Just("007"),
        Just("eq"), Just("inf"), Just("-inf"), Just("nan"), Just("-x"), Just("olt_1"),
        Just("; comment"), Just(";"), Just("\r"), Just("é"), Just("("), Just(")"), Just("\n"), Just("\n"),
    ]
}

/// A plausible instruction line, built from the grammar's shapes.
fn line() -> impl Strategy<Value = String> {
    let def = (prop_oneof![Just("%a"), Just("%v.1"), Just("%x_2")], prop_oneof![Just("i32"), Just("f16"), Just("v2f32")]).prop_map(|(r, t)| format!("{r}:{t}"));
    let operand = prop_oneof![
        Just("%a".to_string()), Just("%bb.7".to_string()), Just("@g".to_string()), Just("mask(0, -1, 3)".to_string()),
        Just("align 8".to_string()), Just("-0x10".to_string()), Just("42".to_string()), Just("-2.5e3".to_string()),
        Just("ne".to_string()), Just("-inf".to_string()),
    ];
    (
        proptest::collection::vec(def, 0..3),
        prop_oneof![Just("ADD"), Just("LOAD.invariant"), Just("ST_GLOBAL_OFF"), Just("SETCC")],
        proptest::collection::vec(operand, 0..4),
        prop_oneof![Just(""), Just(" ; note"), Just("\t")],
        prop_oneof![Just(" "), Just(""), Just("  ")],
    )
        .prop_map(|(defs, op, ops, tail, gap)| {
            let defs = if defs.is_empty() { String::new() } else { format!("{}{gap}={gap}", defs.join(&format!(",{gap}"))) };
            format!("    {defs}{op} {gap}{}{tail}", ops.join(&format!("{gap},{gap}")))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn scanner_agrees_with_the_grammar_on_noise(pieces in proptest::collection::vec(piece(), 0..14)) {
        agree(&pieces.concat())?;
    }

    /// Noise in each position of a line that is otherwise well-formed.
    #[test]
    fn scanner_agrees_with_the_grammar_on_noisy_lines(pieces in proptest::collection::vec(piece(), 1..5), at in 0usize..4) {
        let noise = pieces.concat();
        let body = match at {
            0 => format!("bb.0:\n    %a:i32 = ADD {noise}\n"),
            1 => format!("bb.0:\n    %a:i32 = ADD %b, {noise}\n"),
            2 => format!("bb.0:\n    {noise} = ADD %b\n"),
            _ => format!("{noise}\n    RET\n"),
        };
        agree(&body)?;
    }

    #[test]
    fn scanner_agrees_with_the_grammar_on_instructions(lines in proptest::collection::vec(line(), 1..6)) {
        let body = format!("bb.0:\n{}\n", lines.join("\n"));
        agree(&body)?;
        // Well-formed lines: the scanner must take them (the fast path is real).
        prop_assert!(lex_body(&body).is_some(), "the scanner gave up on:\n{}", body);
    }
}

/// Every function body of the repository's `.mir` files: the scanner answers, and the
/// grammar agrees with it.
#[test]
fn scanner_reads_every_repository_body() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests/corpus", "tests/legalize", "tests/machine", "tests/combine", "tests/sched", "tests/apps", "tests/filecheck", "examples", "backend/benches/data"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "mir")));
    }
    files.sort();
    assert!(files.len() > 50, "found only {} .mir files", files.len());
    let (mut bodies, mut fast) = (0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let tables = tables::nvptx();
        // Only files that parse: the error tests are the grammar's business.
        if backend::mir::parser::parse_module(&text, "x.mir", tables).is_err() {
            continue;
        }
        for doc in text.split("\n---") {
            let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(doc.trim_end_matches("...\n").trim_end_matches("\n...")) else { continue };
            let Some(body) = value.get("body").and_then(|b| b.as_str()) else { continue };
            bodies += 1;
            if let Some(items) = lex_body(body) {
                fast += 1;
                assert_eq!(items, pest_items(body).expect("the grammar accepts a body that parses"), "{}", path.display());
            }
        }
    }
    assert!(bodies > 50, "found only {bodies} bodies");
    assert_eq!(fast, bodies, "the scanner gave up on {} of {bodies} bodies", bodies - fast);
}
