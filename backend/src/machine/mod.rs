//! Machine-level passes after instruction selection: dead-code removal and PHI
//! elimination.

pub mod dce;
pub mod phi_elimination;
