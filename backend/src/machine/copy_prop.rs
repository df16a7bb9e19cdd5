//! MachineCopyPropagation (`machine-cp`; reference `cicc-machine-passes.txt`:
//! "Propagates copies to reduce move instructions. Can be disabled via
//! disable-copyprop."): on SSA machine code after selection, a reader of the result of
//! a copy (a machine instruction selected from `COPY`, or from `BITCAST`, which only
//! renames bits) reads the copy's source instead, and a copy left without readers goes.
//!
//! Where it sits: after `dce`, before the pipeliner and PHI elimination (whose copies
//! are the out-of-SSA translation's to coalesce, not this pass's).
//!
//! A bitcast crosses register classes (`%f1 = mov.b32 %r1` for an i32 read as f32), and
//! PTX type-checks an operand's register against the instruction. The description says
//! which class may stand in for which (`read_as` in `register-classes.yaml`: a `.b32`
//! register is a valid `.f32` operand, an `.f32` register is no `.s32` one), so a reader
//! takes the source when its pattern's operand is a register the source's class may
//! fill on this SM. A PHI, a call or return (whose `.param` types follow their values)
//! and a carry flag take only a source of the copy's own type. A chain of copies is
//! followed to the furthest source the reader accepts.
//!
//! Linear: one walk finds the copies (and ends the pass in a function without any),
//! one counts uses, one rewrites operands, and a worklist removes the copies left
//! without readers.

use target_desc::tables::{OpcodeId, PatternOperand, SmTables, TargetTables};

use crate::mir::{Function, Loc, Module, Opcode, Operand, ValueId};

/// What the pass did, for remarks and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyPropStats {
    /// Operands that now read a copy's source.
    pub propagated: usize,
    /// Copies removed (no reader left).
    pub removed: usize,
    /// Copies kept because some reader needs the copy's register class.
    pub kept: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

/// Runs the pass on every SSA function of `module`.
pub fn run(module: &mut Module, tables: &TargetTables, sm: &SmTables, remarks: bool) -> CopyPropStats {
    let mut stats = CopyPropStats::default();
    let copy_ops = [tables.opcode("COPY"), tables.opcode("BITCAST")];
    for f in &mut module.functions {
        if f.ssa {
            propagate(f, tables, sm, &copy_ops, remarks, &mut stats);
        }
    }
    stats
}

fn propagate(f: &mut Function, tables: &TargetTables, sm: &SmTables, copy_ops: &[Option<OpcodeId>; 2], remarks: bool, stats: &mut CopyPropStats) {
    // The copies first: most functions have none, and then nothing else is indexed.
    let mut copies: Vec<(ValueId, ValueId, usize, usize)> = Vec::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            let Opcode::Machine(m) = inst.opcode else { continue };
            let Some(p) = tables.patterns.get(m as usize) else { continue };
            let is_copy = p.nodes.len() == 1 && copy_ops.iter().flatten().any(|op| op.0 == p.opcode) && p.flag_groups.is_empty();
            let mut values = inst.operands.iter().filter(|o| !matches!(o, Operand::Align(_)));
            if let (true, [d], Some(Operand::Value(s)), None) = (is_copy, inst.defs.as_slice(), values.next(), values.next()) {
                copies.push((*d, *s, b, i));
            }
        }
    }
    if copies.is_empty() {
        return;
    }
    let copy_count = copies.len();
    let n = f.values.len();
    // source[v]: the value `v` is a copy of; site[v]: where that copy is (u32 positions:
    // 20 bytes per value, not 32, on kernels of millions of values).
    let mut source: Vec<Option<ValueId>> = vec![None; n];
    let mut site: Vec<Option<(u32, u32)>> = vec![None; n];
    for (d, s, b, i) in copies {
        source[d.0 as usize] = Some(s);
        site[d.0 as usize] = Some((b as u32, i as u32));
    }
    let mut uses = vec![0u32; n];
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        for v in inst.uses() {
            uses[v.0 as usize] += 1;
        }
    }
    let first_remark = stats.remarks.len();
    let ty = |f: &Function, v: ValueId| f.value(v).ty;
    for b in 0..f.blocks.len() {
        for i in 0..f.blocks[b].insts.len() {
            let inst = &f.blocks[b].insts[i];
            // The pattern operand each operand fills (none for generic instructions).
            let kinds: Option<&[(&str, PatternOperand)]> = match inst.opcode {
                Opcode::Machine(m) => tables.patterns.get(m as usize).map(|p| p.operands),
                Opcode::Generic(_) => None,
            };
            let mut changed: Vec<(usize, ValueId)> = Vec::new();
            let mut k = 0;
            for (j, o) in inst.operands.iter().enumerate() {
                if matches!(o, Operand::Align(_)) {
                    continue;
                }
                let kind = kinds.and_then(|ks| ks.get(k)).map(|x| x.1);
                k += 1;
                let Operand::Value(v) = *o else { continue };
                let Some(mut s) = source[v.0 as usize] else { continue };
                // A register operand takes any source its class may fill; anything else
                // (a PHI, a call's or return's values, a flag) only the same type.
                let want = ty(f, v);
                let fits = |f: &Function, s: ValueId| match kind {
                    Some(PatternOperand::Reg(t)) => tables.register_reads_as(sm, ty(f, s), target_desc::tables::VtId(t)),
                    _ => ty(f, s) == want,
                };
                if !fits(f, s) {
                    continue;
                }
                // At most one step per copy: copies that read each other in a cycle
                // (invalid SSA, which the verifier rejects before any pass) end the walk.
                let mut steps = 0;
                while let Some(next) = source[s.0 as usize].filter(|&x| fits(f, x) && x != v) {
                    s = next;
                    steps += 1;
                    if steps > copy_count {
                        break;
                    }
                }
                changed.push((j, s));
            }
            for (j, s) in changed {
                let inst = &mut f.blocks[b].insts[i];
                if let Operand::Value(v) = inst.operands[j] {
                    uses[v.0 as usize] = uses[v.0 as usize].saturating_sub(1);
                    uses[s.0 as usize] += 1;
                    inst.operands[j] = Operand::Value(s);
                    stats.propagated += 1;
                }
            }
        }
    }
    // Copies without readers go, and with them the uses of their sources.
    let mut removed = Vec::new();
    let mut work: Vec<ValueId> = (0..n as u32).map(ValueId).filter(|v| source[v.0 as usize].is_some() && uses[v.0 as usize] == 0).collect();
    while let Some(d) = work.pop() {
        let (Some(_), Some((b, i))) = (source[d.0 as usize].take(), site[d.0 as usize]) else { continue };
        let (b, i) = (b as usize, i as usize);
        // What the copy reads now (its own operand may have been propagated too).
        let Some(s) = f.blocks[b].insts[i].uses().next() else { continue };
        removed.push((b, i));
        stats.removed += 1;
        if remarks {
            let loc = f.blocks[b].insts[i].loc;
            stats.remarks.push((f.name.clone(), loc, format!("removed %{} = {} %{}: its readers read its source", f.value(d).name, f.blocks[b].insts[i].opcode.name(tables), f.value(s).name)));
        }
        uses[s.0 as usize] = uses[s.0 as usize].saturating_sub(1);
        if uses[s.0 as usize] == 0 && source[s.0 as usize].is_some() {
            work.push(s);
        }
    }
    for (v, src) in source.iter().enumerate() {
        if let (Some(s), Some((b, i))) = (src, site[v]) {
            let (b, i) = (b as usize, i as usize);
            stats.kept += 1;
            if remarks {
                let loc = f.blocks[b].insts[i].loc;
                stats.remarks.push((f.name.clone(), loc, format!("kept %{} = {} %{}: a reader needs its register class", f.values[v].name, f.blocks[b].insts[i].opcode.name(tables), f.value(*s).name)));
            }
        }
    }
    stats.remarks[first_remark..].sort_by_key(|(_, loc, _)| (loc.line, loc.column));
    f.remove_insts(removed);
}

#[cfg(test)]
mod tests {
    /// Copies that read each other (invalid SSA: `run-pass` rejects such input with the
    /// verifier, but the pass does not rely on that) end the walk along the chain
    /// instead of looping.
    #[test]
    fn a_cycle_of_copies_terminates() {
        let tables = tables::nvptx();
        let text = "---\nname: k\nkind: kernel\nparams:\n  - { name: out, type: p1 }\nbody: |\n  bb.0:\n    %out:p1 = LDPARAM_GLOBAL_PTR 0\n    %a:i32 = MOV_i32 %b\n    %b:i32 = MOV_i32 %a\n    ST_GLOBAL_i32 %a, %out\n    RET_VOID\n...\n";
        let mut module = crate::mir::parser::parse_module(text, "t.mir", tables).unwrap_or_else(|e| panic!("{}", e.render()));
        let sm = tables.find_sm("80").unwrap();
        let stats = super::run(&mut module, tables, sm, true);
        assert!(stats.propagated >= 1, "{stats:?}");
    }
}
