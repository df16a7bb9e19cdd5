//! Property tests of the MIR front end: no input makes it panic, and well-formed
//! generated functions verify and survive a print/parse round trip unchanged.

use backend::mir::{parser, printer, verifier};
use proptest::prelude::*;

fn check_text(text: &str) {
    let tables = tables::nvptx();
    if let Ok(module) = parser::parse_module(text, "fuzz.mir", tables) {
        let _ = verifier::verify_module(&module, tables, verifier::Source { file: "fuzz.mir", text });
        let printed = printer::print_module(&module, tables);
        parser::parse_module(&printed, "fuzz.mir", tables).expect("a parsed module prints as MIR that parses");
    }
}

/// A random but well-typed straight-line function over i32 and f32, with a loop.
fn function_text(ops: &[(u8, u8, u8)]) -> String {
    let mut body = String::from("  bb.0.entry:\n    %a0:i32 = ARG 0\n    %f0:f32 = ARG 1\n    %n:i32 = ARG 2\n    BR %bb.1\n  bb.1.loop:\n    %i:i32 = PHI %a0, %bb.0, %next, %bb.1\n");
    let (mut ints, mut floats) = (vec!["i".to_string()], vec!["f0".to_string()]);
    for (k, &(kind, x, y)) in ops.iter().enumerate() {
        let pick = |v: &Vec<String>, i: u8| v[i as usize % v.len()].clone();
        match kind % 6 {
            0 => { body += &format!("    %v{k}:i32 = ADD %{}, %{}\n", pick(&ints, x), pick(&ints, y)); ints.push(format!("v{k}")); }
            1 => { body += &format!("    %v{k}:i32 = XOR %{}, %{}\n", pick(&ints, x), pick(&ints, y)); ints.push(format!("v{k}")); }
            2 => { body += &format!("    %v{k}:f32 = FMUL %{}, %{}\n", pick(&floats, x), pick(&floats, y)); floats.push(format!("v{k}")); }
            3 => { body += &format!("    %v{k}:f32 = SINT_TO_FP %{}\n", pick(&ints, x)); floats.push(format!("v{k}")); }
            4 => { body += &format!("    %v{k}:i32 = CONSTANT {}\n", x as i32 - 128); ints.push(format!("v{k}")); }
            _ => { body += &format!("    %v{k}:f32 = FCONSTANT {}.5\n", y); floats.push(format!("v{k}")); }
        }
    }
    body += "    %one:i32 = CONSTANT 1\n    %next:i32 = ADD %i, %one\n    %c:i1 = SETCC lt, %next, %n\n    BRCOND %c, %bb.1, %bb.2\n  bb.2.exit:\n    RET\n";
    format!("---\nname: generated\nkind: kernel\nparams:\n  - {{ name: a, type: i32 }}\n  - {{ name: f, type: f32 }}\n  - {{ name: n, type: i32 }}\nbody: |\n{body}...\n")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in "[ -~\n]{0,300}") {
        check_text(&text);
    }

    #[test]
    fn mir_shaped_noise_never_panics(words in proptest::collection::vec(prop_oneof![
        Just("---\n"), Just("name: k\n"), Just("kind: kernel\n"), Just("body: |\n"), Just("  bb.0:\n"),
        Just("    "), Just("%a:i32"), Just(" = "), Just("ADD"), Just("%a"), Just(", "), Just("\n"),
        Just("RET"), Just("BR %bb.0"), Just("PHI"), Just("%bb.1"), Just("CONSTANT 7"), Just("@g"),
        Just("params: []\n"), Just("..."), Just(":"), Just("LOAD.sext.i8"), Just("align 3"), Just("mask(1, -1)")
    ], 0..40)) {
        check_text(&words.concat());
    }

    #[test]
    fn generated_functions_verify_and_round_trip(ops in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..40)) {
        let tables = tables::nvptx();
        let text = function_text(&ops);
        let module = parser::parse_module(&text, "gen.mir", tables).map_err(|e| TestCaseError::fail(e.render()))?;
        let errors = verifier::verify_module(&module, tables, verifier::Source { file: "gen.mir", text: &text });
        prop_assert!(errors.is_empty(), "{}", errors.iter().map(|e| e.render()).collect::<String>());
        let printed = printer::print_module(&module, tables);
        prop_assert_eq!(&printed, &text, "the printer reproduces canonical input exactly");
        let again = parser::parse_module(&printed, "gen.mir", tables).unwrap();
        prop_assert_eq!(again.without_locs(), module.without_locs());
    }
}

#[test]
fn truncating_the_example_anywhere_never_panics() {
    let text = function_text(&[(0, 1, 2), (2, 3, 4), (3, 0, 0), (4, 200, 0), (5, 0, 9)]);
    for cut in 0..text.len() {
        check_text(&text[..cut]);
    }
}
