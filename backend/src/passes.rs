//! The pass manager: named passes over a MIR module, each runnable alone
//! (`ptxc run-pass NAME IN.mir`, like `llc -run-pass`), each printing MIR that parses
//! back.
//!
//! Today the pipeline holds the verifier only; legalization, instruction selection,
//! PHI elimination and emission join it as they land (issues 3 and 4).

use target_desc::tables::TargetTables;

use crate::diagnostics::MirError;
use crate::mir::verifier::{verify_module, Source};
use crate::mir::Module;

/// What a pass sees besides the module.
pub struct PassContext<'a> {
    pub tables: &'a TargetTables,
    pub source: Source<'a>,
}

pub struct PassInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub run: fn(&mut Module, &PassContext<'_>) -> Result<(), Vec<MirError>>,
}

fn verify(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let errors = verify_module(module, cx.tables, cx.source);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Every pass, in pipeline order.
pub const PASSES: &[PassInfo] = &[PassInfo {
    name: "verify",
    description: "check structure, SSA dominance and types against the description's signatures",
    run: verify,
}];

pub fn find(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}
