//! The compiled-in tables and the tables loaded at run time from the same directory
//! are identical: one loader serves both.

use std::path::Path;

#[test]
fn runtime_loaded_tables_equal_the_compiled_in_ones() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target-desc/nvptx");
    let loaded = target_desc::load_dir(&dir, "target-desc/nvptx").unwrap_or_else(|e| panic!("{e}"));
    let compiled = tables::nvptx();
    // Compare piecewise first for a readable failure, then the whole structure.
    assert_eq!(loaded.tables.types, compiled.types);
    assert_eq!(loaded.tables.opcodes, compiled.opcodes);
    assert_eq!(loaded.tables.rules, compiled.rules);
    for (a, b) in loaded.tables.sms.iter().zip(compiled.sms) {
        assert_eq!(a, b, "{}", a.name);
    }
    assert_eq!(loaded.tables.names, compiled.names);
    assert_eq!(&loaded.tables, compiled);
}
