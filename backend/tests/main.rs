//! The backend's integration tests, one module per file, built as one test binary (see
//! `autotests` in Cargo.toml). Run one file's tests with
//! `cargo test -p backend --test integration -- sim_random::`.

mod binary;
mod body_lexer;
mod combine_differential;
mod interp;
mod legalize_differential;
mod legalize_random;
mod library_accuracy;
mod library_is_generated;
mod machine_passes;
mod mir_properties;
mod scaling;
mod sim_cli;
mod sim_end_to_end;
mod sim_instructions;
mod sim_llc;
mod sim_properties;
mod sim_random;
mod sim_requirements;
