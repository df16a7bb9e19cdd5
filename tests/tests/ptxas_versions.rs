//! The description's SM list agrees with the real assembler: every SM accepts a
//! minimal kernel at the PTX version the description gives it, and rejects the PTX
//! version just below (so the description's value is the minimum, not merely enough).

/// PTX ISA versions ptxas 12.9 knows, in order.
const PTX_VERSIONS: [u16; 30] = [
    32, 40, 41, 42, 43, 50, 60, 61, 62, 63, 64, 65, 70, 71, 72, 73, 74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88,
];

fn kernel(version: u16, sm: &str) -> String {
    format!(".version {}.{}\n.target {sm}\n.address_size 64\n\n.visible .entry probe()\n{{\n\tret;\n}}\n", version / 10, version % 10)
}

#[test]
fn every_sm_assembles_at_its_minimum_ptx_version_and_not_below() {
    let Some(ptxas) = tests::ptxas() else { return };
    let mut checked = 0;
    for sm in tables::nvptx().sms {
        tests::assemble(&ptxas, &kernel(sm.min_ptx, sm.name), sm.name)
            .unwrap_or_else(|e| panic!("{} at PTX {}: {e}", sm.name, sm.min_ptx));
        let below = PTX_VERSIONS.iter().rev().find(|&&v| v < sm.min_ptx).copied().unwrap();
        assert!(
            tests::assemble(&ptxas, &kernel(below, sm.name), sm.name).is_err(),
            "{} also assembles at PTX {below}: the description's minimum {} is too high",
            sm.name,
            sm.min_ptx
        );
        checked += 1;
    }
    assert_eq!(checked, tables::nvptx().sms.len());
}
