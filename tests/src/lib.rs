//! Shared helpers of the end-to-end tests.
//!
//! [`ptxas`] finds the assembler every produced PTX file must pass. Under `CI` a
//! missing ptxas is a test failure, never a silent skip; elsewhere the check is
//! skipped with a message saying how to install it (`scripts/install-ptxas.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The ptxas binary: `$PTXAS`, the project-local install in `.tools/`, or `PATH`.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS").map(PathBuf::from) {
        if p.is_file() {
            return Some(p);
        }
    }
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas");
    if local.is_file() {
        return Some(local);
    }
    let on_path = Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success());
    on_path.then(|| PathBuf::from("ptxas"))
}

/// ptxas, or `None` outside CI (after printing why the check is skipped). Panics under
/// `CI` when ptxas is missing.
pub fn ptxas() -> Option<PathBuf> {
    match find_ptxas() {
        Some(p) => Some(p),
        None if std::env::var_os("CI").is_some() => {
            panic!("ptxas not found and CI is set: run scripts/install-ptxas.sh or set PTXAS")
        }
        None => {
            eprintln!("SKIPPED ptxas checks: ptxas not found (run scripts/install-ptxas.sh or set PTXAS)");
            None
        }
    }
}

/// Assembles `ptx` for `sm` (`sm_80`); returns ptxas's error output on failure.
pub fn assemble(ptxas: &Path, ptx: &str, sm: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let input = dir.path().join("input.ptx");
    std::fs::write(&input, ptx).map_err(|e| e.to_string())?;
    let output = Command::new(ptxas)
        .arg(format!("-arch={sm}"))
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("out.cubin"))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}
