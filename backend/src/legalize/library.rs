//! The LibCall library: device functions the legalizer calls for operations the SM has
//! no instruction for (the description's `libcall(NAME)` entries, libdevice names).
//! They are written in MIR (`target-desc/nvptx/library.mir`), so the reference
//! interpreter runs them and the normal pipeline compiles them for every SM; `link`
//! appends the ones a module calls (and what they call) and legalizes them.

use std::collections::BTreeSet;

use target_desc::tables::{SmTables, TargetTables};

use crate::mir::Module;

/// The library's MIR text (built in with the NVPTX description).
pub const LIBRARY_FILE: &str = "target-desc/nvptx/library.mir";
pub const LIBRARY: &str = include_str!("../../../target-desc/nvptx/library.mir");

/// Appends the library functions `names` (and their callees) to `module`, legalized for
/// `sm`. A name the library does not define is an error naming the description entry.
pub fn link(module: &mut Module, tables: &TargetTables, sm: &SmTables, names: &BTreeSet<String>, verify: bool) -> Result<(), String> {
    let library = crate::mir::parser::parse_module(LIBRARY, LIBRARY_FILE, tables).map_err(|e| e.render())?;
    let mut wanted: Vec<String> = names.iter().cloned().collect();
    let mut added = Vec::new();
    while let Some(name) = wanted.pop() {
        if module.functions.iter().any(|f| f.name == name) {
            continue;
        }
        let Some(f) = library.functions.iter().find(|f| f.name == name) else {
            return Err(format!("the legalizer calls `{name}` (a LibCall entry of the description), but {LIBRARY_FILE} does not define it"));
        };
        for b in &f.blocks {
            for inst in &b.insts {
                for o in &inst.operands {
                    if let crate::mir::Operand::Symbol(s) = o {
                        if library.functions.iter().any(|g| *g.name == **s) {
                            wanted.push(s.to_string());
                        }
                    }
                }
            }
        }
        // The library's tables (2/pi's bits) come with the functions that read them.
        for b in &f.blocks {
            for inst in &b.insts {
                for o in &inst.operands {
                    if let crate::mir::Operand::Symbol(s) = o {
                        if let Some(g) = library.globals.iter().find(|g| *g.name == **s) {
                            if !module.globals.iter().any(|m| m.name == g.name) {
                                module.globals.push(g.clone());
                            }
                        }
                    }
                }
            }
        }
        module.functions.push(f.clone());
        added.push(name);
    }
    if added.is_empty() {
        return Ok(());
    }
    let mut part = Module { name: None, globals: module.globals.clone(), functions: Vec::new() };
    part.functions = module.functions.iter().filter(|f| added.contains(&f.name)).cloned().collect();
    let source = crate::mir::verifier::Source { file: LIBRARY_FILE, text: LIBRARY };
    super::legalize_module(&mut part, tables, sm, source, verify, false).map_err(|errors| errors.iter().map(|e| e.render()).collect::<String>())?;
    // Legalizing the library functions may have linked further ones (FLOG2 in f64
    // inside __nv_powf calls __nv_log2): they come along.
    for g in part.globals {
        if !module.globals.iter().any(|m| m.name == g.name) {
            module.globals.push(g);
        }
    }
    for f in part.functions {
        match module.functions.iter_mut().find(|g| g.name == f.name) {
            Some(slot) => *slot = f,
            None => module.functions.push(f),
        }
    }
    Ok(())
}
