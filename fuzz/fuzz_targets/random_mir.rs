//! Random kernels steered by the fuzzer's bytes (`backend::random_mir`): every kernel
//! the generator writes parses and verifies, and compiling it never panics. Selection
//! may refuse a kernel (operations the legalizer has not rewritten yet), but only with
//! an error located in the file.
#![no_main]

use backend::random_mir::{generate_from_bytes, GeneratorConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let tables = tables::nvptx();
    let Ok(kernel) = generate_from_bytes(data, &GeneratorConfig::everything(), tables) else { return };
    let module = backend::mir::parser::parse_module(&kernel.text, "random.mir", tables)
        .unwrap_or_else(|e| panic!("a generated kernel does not parse:\n{}\n{}", e.render(), kernel.text));
    let source = backend::mir::verifier::Source { file: "random.mir", text: &kernel.text };
    let errors = backend::mir::verifier::verify_module(&module, tables, source);
    assert!(errors.is_empty(), "a generated kernel does not verify:\n{}\n{}", errors.iter().map(|e| e.render()).collect::<String>(), kernel.text);
    if let Err(e) = backend::synth::compile(&kernel.text, "80") {
        assert!(e.contains("generated.mir:"), "{e}");
    }
});
