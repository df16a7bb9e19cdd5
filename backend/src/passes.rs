//! The pass manager: named passes over a MIR module, each runnable alone
//! (`ptxc run-pass NAME IN.mir`, like `llc -run-pass`), each printing MIR that parses
//! back.
//!
//! Pipeline: verify, legalize (types and operations the SM cannot do, see
//! [`crate::legalize`]), isel (instruction selection), dce (dead-code removal),
//! phi-elim (PHI elimination), then PTX emission.

use target_desc::tables::{SmTables, TargetTables};

use crate::diagnostics::MirError;
use crate::mir::verifier::{verify_module, Source};
use crate::mir::Module;

/// What a pass sees besides the module.
pub struct PassContext<'a> {
    pub tables: &'a TargetTables,
    /// The SM compiled for; passes that need one fail without it.
    pub sm: Option<&'a SmTables>,
    pub source: Source<'a>,
    /// Run the passes' own consistency checks (the legalizer's verification mode).
    pub checks: bool,
    /// Where the legalizer's decisions go, for `--remarks legalize`.
    pub remarks: Option<&'a std::cell::RefCell<Vec<crate::legalize::Remark>>>,
}

impl<'a> PassContext<'a> {
    /// A context with checks on and no remarks.
    pub fn new(tables: &'a TargetTables, sm: Option<&'a SmTables>, source: Source<'a>) -> PassContext<'a> {
        PassContext { tables, sm, source, checks: true, remarks: None }
    }
}

impl PassContext<'_> {
    fn sm(&self, pass: &str) -> Result<&SmTables, Vec<MirError>> {
        self.sm.ok_or_else(|| vec![MirError::at(self.source.file, self.source.text, 1, 1, format!("pass `{pass}` needs a target SM: add --sm SM"))])
    }
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

fn legalize(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    let remarks = crate::legalize::legalize_module(module, cx.tables, cx.sm("legalize")?, cx.source, cx.checks)?;
    if let Some(sink) = cx.remarks {
        sink.borrow_mut().extend(remarks);
    }
    Ok(())
}

fn isel(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    crate::isel::select_module(module, cx.tables, cx.sm("isel")?, cx.source)
}

fn dce(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    crate::machine::dce::remove_dead_code(module, cx.tables);
    Ok(())
}

fn phi_elim(module: &mut Module, cx: &PassContext<'_>) -> Result<(), Vec<MirError>> {
    crate::machine::phi_elimination::eliminate_phis(module, cx.tables, cx.sm("phi-elim")?, cx.source)
}

/// Every pass, in pipeline order.
pub const PASSES: &[PassInfo] = &[
    PassInfo { name: "verify", description: "check structure, SSA dominance and types against the description's signatures", run: verify },
    PassInfo { name: "legalize", description: "rewrite the types and operations the SM cannot do into ones it can (the description's action tables)", run: legalize },
    PassInfo { name: "isel", description: "select machine instructions from the description's patterns", run: isel },
    PassInfo { name: "dce", description: "remove instructions whose results are unused", run: dce },
    PassInfo { name: "phi-elim", description: "replace PHIs with copies (leaves SSA form)", run: phi_elim },
];

/// Runs every pass on `module` and emits its PTX (what `ptxc compile` does, without
/// printing or stopping early).
pub fn compile_module(module: &mut Module, cx: &PassContext<'_>) -> Result<String, Vec<MirError>> {
    for pass in PASSES {
        (pass.run)(module, cx)?;
    }
    crate::emit::emit_module(module, cx.tables, cx.sm("emit")?, cx.source.file)
}

pub fn find(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}
