//! `ptxc`: the command-line driver; everything it does lives in `backend::cli`.

use std::io::Write;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: backend::allocator::Allocator = backend::allocator::Allocator;

/// Before `main` and the runtime's first allocation: no huge page for the allocator's
/// first block (`backend::allocator::disable_huge_pages`). A constructor runs with no
/// runtime set up; this one makes one system call and allocates nothing.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static BEFORE_MAIN: extern "C" fn() = backend::allocator::disable_huge_pages;

fn main() -> ExitCode {
    backend::allocator::tune();
    let output = backend::cli::run(std::env::args_os());
    // A closed pipe (`ptxc ... | head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(output.stdout.as_bytes());
    let _ = std::io::stderr().write_all(output.stderr.as_bytes());
    ExitCode::from(output.code as u8)
}
