//! Arbitrary bytes into the MIR parser, verifier, printer and (when the input parses)
//! the whole pipeline: no panic, no hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let tables = tables::nvptx();
    if let Ok(module) = backend::mir::parser::parse_module(text, "fuzz.mir", tables) {
        let errors = backend::mir::verifier::verify_module(&module, tables, backend::mir::verifier::Source { file: "fuzz.mir", text });
        let printed = backend::mir::printer::print_module(&module, tables);
        let again = backend::mir::parser::parse_module(&printed, "fuzz.mir", tables).expect("printed MIR parses");
        assert_eq!(again.without_locs(), module.without_locs(), "printing changed the module");
        if errors.is_empty() {
            let _ = backend::synth::compile(text, "80");
        }
    }
});
