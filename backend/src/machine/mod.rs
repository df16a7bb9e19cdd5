//! Machine-level passes after instruction selection, on SSA machine code until PHI
//! elimination: MachineCSE (pressure-aware), MachineLICM, MachineSink ([`sink`], off by default), dead-code removal, block rematerialization ([`remat`]), PHI elimination, and
//! the analyses they share (control flow and dominators in [`cfg`], register pressure
//! in [`pressure`]), and the `--stats` report ([`stats`]).

pub mod branch_fold;
pub mod cfg;
pub mod checker;
pub mod copy_prop;
pub mod cse;
pub mod dce;
pub mod frame;
pub mod licm;
pub mod mem2reg;
pub mod phi_elimination;
pub mod pressure;
pub mod remat;
pub mod sink;
pub mod spill;
pub mod stats;
