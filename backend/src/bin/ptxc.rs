//! `ptxc`: the command-line driver; everything it does lives in `backend::cli`.

use std::io::Write;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: backend::allocator::Allocator = backend::allocator::Allocator;

fn main() -> ExitCode {
    backend::allocator::tune();
    let output = backend::cli::run(std::env::args_os());
    // A closed pipe (`ptxc ... | head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(output.stdout.as_bytes());
    let _ = std::io::stderr().write_all(output.stderr.as_bytes());
    ExitCode::from(output.code as u8)
}
