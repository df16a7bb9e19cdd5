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

/// Latency classes resolve per SM through `implies`: an SM's own `by_sm` entry, else
/// the nearest implied SM's, else the class's figures (scheduling.yaml's table).
#[test]
fn latency_classes_resolve_per_sm_family() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("nvptx");
    let t = target_desc::load_dir(&dir, "target-desc/nvptx").unwrap_or_else(|e| panic!("{e}")).tables;
    let class = |name: &str| t.scheduling.latency_classes.iter().position(|c| c.name == name).unwrap_or_else(|| panic!("no class {name}"));
    let cost = |sm: &str, name: &str| {
        let s = t.sms.iter().find(|s| s.name == sm).unwrap_or_else(|| panic!("no {sm}"));
        let c = s.latencies[class(name)];
        (c.latency, c.issue)
    };
    // fp64: 32 cycles per warp instruction on sm_61 and (inherited) sm_62, 4 on sm_70
    // and sm_72 (inherited), 64 on sm_75 and sm_86, 2 on sm_90 and (inherited) sm_100.
    assert_eq!(cost("sm_61", "fp64"), (8, 32));
    assert_eq!(cost("sm_62", "fp64"), (8, 32));
    assert_eq!(cost("sm_72", "fp64"), (8, 4));
    assert_eq!(cost("sm_75", "fp64"), (8, 64));
    assert_eq!(cost("sm_89", "fp64"), (8, 64));
    assert_eq!(cost("sm_100", "fp64"), (8, 2));
    assert_eq!(cost("sm_120", "fp64"), (8, 64));
    // fp32: latency 6 before Volta, 4 from it; shared memory 23, 24, 19.
    assert_eq!(cost("sm_52", "fp32"), (6, 1));
    assert_eq!(cost("sm_80", "fp32"), (4, 2));
    assert_eq!(cost("sm_86", "fp32"), (4, 1));
    assert_eq!(cost("sm_50", "shared"), (23, 4));
    assert_eq!(cost("sm_61", "shared"), (24, 4));
    assert_eq!(cost("sm_90", "shared"), (19, 4));
    // A class without entries has its own figures everywhere; units are named.
    assert_eq!(cost("sm_80", "memory"), (400, 4));
    assert!(t.scheduling.units.contains(&"sfu") && t.scheduling.issue_width == 1);
    // Provenance: each resolved figure names the class's line.
    let s80 = t.sms.iter().find(|s| s.name == "sm_80").unwrap();
    assert!(s80.latencies[class("fp64")].source.file.ends_with("scheduling.yaml"));
}
