//! Loads the shipped NVPTX description at run time.
use std::path::Path;

#[test]
fn shipped_description_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("nvptx");
    match target_desc::load_dir(&dir, "target-desc/nvptx") {
        Ok(loaded) => {
            let t = loaded.tables;
            assert!(t.sms.len() >= 20, "{} SMs", t.sms.len());
            assert!(t.opcodes.len() > 100);
        }
        Err(e) => panic!("{e}"),
    }
}
