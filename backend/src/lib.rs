//! The generic compiler engine behind `ptxc`.
//!
//! Pipeline stages live in modules named after them; each reads NVPTX knowledge only
//! through [`target_desc::tables::TargetTables`] (the compiled-in `tables::nvptx()` or a
//! description loaded at run time with `--target-desc`).
//!
//! - [`audit`]: legality per SM, with the description line behind each entry.
//! - [`mir`]: the MIR front end: parser, printer, verifier.
//! - [`legalize`]: type and operation legalization from the action tables.
//! - [`isel`]: instruction selection from the description's patterns.
//! - [`machine`]: machine-level passes (dead code, PHI elimination).
//! - [`emit`]: PTX emission.
//! - [`interp`]: the MIR reference interpreter (`ptxc interp`), the oracle of
//!   differential tests.
//! - [`sim`]: the PTX simulator (`ptxc sim`), the oracle for everything after
//!   instruction selection.
//! - [`parallel`]: the thread pool of `-j`: order-preserving maps for the per-function
//!   passes, parsing and emission.
//! - [`passes`]: the pass manager and the pipeline's passes.
//! - [`selfcheck`]: `ptxc audit --verify`, a probe kernel for every Legal cell.
//! - [`cli`]: the `ptxc` command line.
//! - [`allocator`]: the process allocator's settings (mimalloc, no purging).
//! - [`random_mir`]: random kernels for differential tests and fuzzing (not a pipeline stage).

pub mod allocator;
pub mod audit;
pub mod cli;
pub mod combine;
pub mod diagnostics;
pub mod differential;
pub mod emit;
pub mod interp;
pub mod isel;
pub mod ldgxform;
pub mod legalize;
pub mod loop_reduce;
pub mod machine;
pub mod mir;
pub mod options;
pub mod parallel;
pub mod passes;
pub mod random_mir;
pub mod sched;
pub mod selfcheck;
pub mod sim;
pub mod simplify_cfg;
pub mod slsr;
pub mod sroa;
pub mod synth;

use std::path::Path;

use target_desc::tables::TargetTables;

/// The tables to use: the description in `dir` if given (loaded and validated at run
/// time, shown with `dir` as its path), else the compiled-in NVPTX tables.
pub fn load_tables(dir: Option<&Path>) -> Result<&'static TargetTables, target_desc::DescError> {
    match dir {
        None => Ok(tables::nvptx()),
        Some(dir) => {
            let display = dir.to_string_lossy().trim_end_matches('/').to_string();
            let loaded = target_desc::load_dir(dir, &display)?;
            Ok(Box::leak(Box::new(loaded.tables)))
        }
    }
}
