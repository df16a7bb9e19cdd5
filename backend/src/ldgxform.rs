//! `ldgxform`: loads through the read-only data cache (`ld.global.nc`) for memory the
//! kernel provably never writes (reference: `cicc-machine-passes.txt`, "LDG Transform";
//! LLVM's `canLowerToLDG` in NVPTXISelDAGToDAG). Off with `disable-ldgxform`.
//!
//! Where it sits: `combine` -> `loop-reduce` -> `ldgxform` -> `isel`, on generic SSA
//! MIR. It only adds the `invariant` flag to loads, which the selector writes as
//! `ld.global.nc` (the `LOAD.invariant` patterns of `isel.rules`); the MIR interpreter
//! reads `LOAD.invariant` as a plain load, and `ptxc sim` checks the PTX.
//!
//! Which memory: a kernel pointer parameter declared `noalias: true` (LLVM's
//! `noalias`, CUDA's `__restrict__`; docs/mir-extensions.md) is *read-only* when
//! nothing the kernel does can write through it:
//!
//! - no store or atomic has an address based on it (through `PTR_ADD`,
//!   `ADDRSPACECAST`, `COPY`, `PHI` and `SELECT`), and
//! - no value based on it escapes: every reader of such a value is one of those, a
//!   load, store or atomic using it as the address, or a comparison. Stored as data,
//!   passed to a call or an intrinsic, or turned into an integer, it could come back as
//!   a pointer the analysis does not follow, so the parameter is not read-only.
//!
//! `noalias` is the promise that makes the rest sound: memory reached through the
//! parameter is not reached through any pointer not based on it while the kernel runs,
//! so a store through a pointer of unknown origin cannot write it. A load from the
//! global space whose address is based only on read-only parameters (a `PHI` or
//! `SELECT` may mix several) is then invariant for the kernel's lifetime, which is
//! what `ld.global.nc` requires. Volatile loads stay as they are. LLVM asks the same
//! of a kernel argument (`noalias` and `onlyReadsMemory`); device functions are left
//! alone, as there.
//!
//! Linear: the bases flow along a worklist (a value's set of parameters only grows,
//! at most 64 times), then one pass for the uses and one for the loads. Parameters are tracked as a 64-bit set; a kernel with more pointer
//! parameters than that has the ones past 64 ignored.

use target_desc::tables::{props, TargetTables};

use crate::mir::{opcode_info, Function, FunctionKind, Loc, Module, Operand};

/// What the pass did, for remarks and tests.
#[derive(Clone, Debug, Default)]
pub struct LdgStats {
    /// Loads given the `invariant` flag.
    pub loads: usize,
    /// `noalias` parameters found read-only.
    pub read_only: usize,
    /// `noalias` parameters the kernel writes through, or whose pointer escapes.
    pub written: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

/// The parameters a value's address is based on: a set of parameter indices, or
/// `UNKNOWN` when some part of it comes from elsewhere.
const UNKNOWN: u64 = 1 << 63;

pub fn run(module: &mut Module, tables: &TargetTables) -> LdgStats {
    let mut stats = LdgStats::default();
    for f in &mut module.functions {
        if f.kind == FunctionKind::Kernel && f.params.iter().any(|p| p.noalias) {
            function(f, tables, &mut stats);
        }
    }
    stats
}

fn name_of(inst: &crate::mir::Inst, tables: &TargetTables) -> &'static str {
    opcode_info(inst.opcode, tables).map_or("", |o| o.name)
}

fn function(f: &mut Function, tables: &TargetTables, stats: &mut LdgStats) {
    // Bases: the defining instruction's own contribution first, then a worklist along
    // the propagating readers (PTR_ADD, ADDRSPACECAST, COPY, SELECT, PHI), so a PHI on a
    // back edge learns what its later operands carry. A value's set only grows, at most
    // 64 times, so the work is linear in the instructions and their operands.
    let insts: Vec<&crate::mir::Inst> = f.blocks.iter().flat_map(|b| &b.insts).collect();
    let n = f.values.len();
    let mut base = vec![0u64; n];
    // Readers of each value that pass its base on: the index in `insts` and which
    // operand slots carry it (a CSR list: `start[v]..start[v + 1]`).
    let carries = |name: &str, k: usize| match name {
        "PTR_ADD" | "ADDRSPACECAST" | "COPY" => k == 0,
        "SELECT" => k == 1 || k == 2,
        "PHI" => true,
        _ => false,
    };
    let mut count = vec![0u32; n + 1];
    for inst in &insts {
        let name = name_of(inst, tables);
        for (k, o) in inst.operands.iter().enumerate() {
            if let Operand::Value(v) = o {
                if carries(name, k) && inst.defs.len() == 1 {
                    count[v.0 as usize + 1] += 1;
                }
            }
        }
    }
    for v in 0..n {
        count[v + 1] += count[v];
    }
    let mut fill = count.clone();
    let mut readers = vec![0u32; count[n] as usize];
    let mut worklist: Vec<u32> = Vec::new();
    for (at, inst) in insts.iter().enumerate() {
        let name = name_of(inst, tables);
        let [d] = inst.defs.as_slice() else { continue };
        for (k, o) in inst.operands.iter().enumerate() {
            if let Operand::Value(v) = o {
                if carries(name, k) {
                    readers[fill[v.0 as usize] as usize] = at as u32;
                    fill[v.0 as usize] += 1;
                }
            }
        }
        let own = match name {
            "ARG" => match inst.operands.first() {
                Some(Operand::Int(k)) => match usize::try_from(k.get()) {
                    Ok(k) if k < 63 && f.params.get(k).is_some_and(|p| p.noalias) => 1 << k,
                    _ => UNKNOWN,
                },
                _ => UNKNOWN,
            },
            "PTR_ADD" | "ADDRSPACECAST" | "COPY" | "SELECT" | "PHI" => 0,
            _ => UNKNOWN,
        };
        if own != 0 {
            base[d.0 as usize] |= own;
            worklist.push(d.0);
        }
    }
    while let Some(v) = worklist.pop() {
        let carried = base[v as usize];
        for &at in &readers[count[v as usize] as usize..count[v as usize + 1] as usize] {
            let d = insts[at as usize].defs[0].0 as usize;
            if base[d] | carried != base[d] {
                base[d] |= carried;
                worklist.push(d as u32);
            }
        }
    }
    // Parameters written through or escaping.
    let mut written = 0u64;
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        let name = name_of(inst, tables);
        let info = opcode_info(inst.opcode, tables);
        let address = crate::mir::address_slots(name).map(|s| s.0).or_else(|| info.and_then(crate::mir::pointer_operand_slot));
        let stores = info.is_some_and(|o| o.props & props::MAY_STORE != 0);
        for (k, o) in inst.operands.iter().enumerate() {
            let Operand::Value(v) = o else { continue };
            let b = base[v.0 as usize] & !UNKNOWN;
            if b == 0 {
                continue;
            }
            let safe = match name {
                "PTR_ADD" | "ADDRSPACECAST" => k == 0,
                "COPY" | "PHI" | "SETCC" => true,
                "SELECT" => k != 0,
                _ => address == Some(k) && !stores,
            };
            if !safe {
                written |= b;
            }
        }
    }
    for (k, p) in f.params.iter().enumerate().filter(|(_, p)| p.noalias) {
        if k < 63 && written & (1 << k) == 0 {
            stats.read_only += 1;
        } else {
            stats.written += 1;
            // Located at the parameter's ARG, where the kernel has one.
            let arg = f.blocks.iter().flat_map(|b| &b.insts).find(|i| name_of(i, tables) == "ARG" && matches!(i.operands.first(), Some(Operand::Int(j)) if j.get() == k as i128));
            let loc = arg.map_or_else(Loc::default, |i| i.loc);
            stats.remarks.push((f.name.clone(), loc, format!("`{}` is written through or escapes: its loads stay coherent", p.name)));
        }
    }
    // The loads.
    for b in 0..f.blocks.len() {
        for i in 0..f.blocks[b].insts.len() {
            let inst = &f.blocks[b].insts[i];
            let name = name_of(inst, tables);
            if !matches!(name, "LOAD" | "LOADV2" | "LOADV4") || inst.has_flag("volatile") || inst.has_flag("invariant") {
                continue;
            }
            let Some(Operand::Value(p)) = inst.operands.first() else { continue };
            let global = tables.type_info(f.value(*p).ty).is_some_and(|t| t.addrspace == crate::mir::AddressSpace::Global.number());
            let bases = base[p.0 as usize];
            if !global || bases == 0 || bases & UNKNOWN != 0 || bases & written != 0 {
                continue;
            }
            let loc = inst.loc;
            f.blocks[b].insts[i].flags.push("invariant");
            stats.loads += 1;
            stats.remarks.push((f.name.clone(), loc, "read-only memory (noalias, never written): ld.global.nc".into()));
        }
    }
}
