//! Well-formed-looking MIR built from fuzzer-chosen pieces (opcodes, types, values,
//! blocks), so the verifier and pipeline see deep inputs, not only syntax errors.
#![no_main]

use libfuzzer_sys::fuzz_target;

const OPS: &[&str] = &["ADD", "SUB", "MUL", "SDIV", "AND", "SHL", "SETCC lt,", "SELECT", "FADD", "FMUL", "PHI", "COPY", "SIGN_EXTEND", "TRUNCATE", "LOAD", "STORE", "BR", "BRCOND", "RET", "CONSTANT 1", "FCONSTANT 2.5"];
const TYPES: &[&str] = &["i1", "i16", "i32", "i64", "f32", "f64", "p1", "v2f16"];

fuzz_target!(|data: &[u8]| {
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n");
    let mut values = vec!["p".to_string()];
    let mut block = 0;
    for (k, chunk) in data.chunks(4).enumerate() {
        let [a, b, c, d] = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0), *chunk.get(3).unwrap_or(&0)];
        let op = OPS[a as usize % OPS.len()];
        let ty = TYPES[b as usize % TYPES.len()];
        let x = &values[c as usize % values.len()];
        let y = &values[d as usize % values.len()];
        match op {
            "BR" => { block += 1; body += &format!("    BR %bb.{block}\n  bb.{block}:\n"); }
            "BRCOND" => { block += 1; body += &format!("    BRCOND %{x}, %bb.{block}, %bb.{}\n  bb.{block}:\n", block + (d % 2) as usize); }
            "RET" => { block += 1; body += &format!("    RET\n  bb.{block}:\n"); }
            "STORE" => body += &format!("    STORE %{x}, %{y}\n"),
            "PHI" => { body += &format!("    %v{k}:{ty} = PHI %{x}, %bb.{}\n", c as usize % (block + 1)); values.push(format!("v{k}")); }
            "CONSTANT 1" | "FCONSTANT 2.5" => { body += &format!("    %v{k}:{ty} = {op}\n"); values.push(format!("v{k}")); }
            "SELECT" => { body += &format!("    %v{k}:{ty} = SELECT %{x}, %{y}, %{y}\n"); values.push(format!("v{k}")); }
            _ if matches!(op, "COPY" | "SIGN_EXTEND" | "TRUNCATE" | "LOAD") => { body += &format!("    %v{k}:{ty} = {op} %{x}\n"); values.push(format!("v{k}")); }
            _ => { body += &format!("    %v{k}:{ty} = {op} %{x}, %{y}\n"); values.push(format!("v{k}")); }
        }
    }
    body += "    RET\n";
    let text = format!("---\nname: fuzzed\nkind: kernel\nparams:\n  - {{ name: p, type: p1 }}\nbody: |\n{body}...\n");
    let tables = tables::nvptx();
    let module = backend::mir::parser::parse_module(&text, "f.mir", tables).expect("generated text parses");
    let errors = backend::mir::verifier::verify_module(&module, tables, backend::mir::verifier::Source { file: "f.mir", text: &text });
    if errors.is_empty() {
        if let Err(e) = backend::synth::compile(&text, "80") {
            // Selection may refuse (no legalizer yet), but never with a panic; and the
            // error must be located inside the file.
            assert!(e.contains("generated.mir:"), "{e}");
        }
    }
});
