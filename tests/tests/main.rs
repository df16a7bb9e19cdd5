//! End-to-end tests of the whole workspace, one module per file, built as one test binary
//! (see `autotests` in Cargo.toml). Run one file's tests with
//! `cargo test -p tests --test end_to_end -- selfcheck::`.

mod audit;
mod compile;
mod corpus;
mod filecheck;
mod legalize_kernels;
mod legalized_everywhere;
mod mir_diagnostics;
mod ptxas_versions;
mod runtime_tables;
mod scheduling;
mod selfcheck;
