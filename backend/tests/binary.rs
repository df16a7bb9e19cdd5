//! How the `ptxc` executable is built, where that is a promise of `backend/build.rs`.

/// On Linux with glibc `ptxc` is linked position-dependent (`-no-pie`), so the loader
/// does not relocate the static tables at every start: its ELF type is `ET_EXEC` (2),
/// where a position-independent executable is `ET_DYN` (3).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn ptxc_is_linked_position_dependent() {
    let path = env!("CARGO_BIN_EXE_ptxc");
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF", "{path} is not an ELF file");
    let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
    assert_eq!(e_type, 2, "{path} has ELF type {e_type}, not ET_EXEC (2): backend/build.rs's -no-pie did not apply");
}
