//! placeholder
use target_desc::tables::{SmTables, TargetTables};
#[derive(Default)]
pub struct PipelinerStats { pub loops: usize, pub pipelined: usize, pub annotated: usize, pub remarks: Vec<(String, crate::mir::Loc, String)> }
pub fn run(_m: &mut crate::mir::Module, _t: &TargetTables, _s: &SmTables, _o: &crate::options::Options) -> PipelinerStats { PipelinerStats::default() }
