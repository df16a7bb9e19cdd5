//! Frame accesses on machine code: which instructions name a frame object, and how.
//!
//! Shared by the passes that create, read or remove frame objects after selection
//! (the spiller and its slot coloring in [`super::spill`], machine mem2reg in
//! [`super::mem2reg`], the allocation checker). Everything is recognized by the shape of
//! the description's patterns (a `LOAD`/`STORE` tree over `FRAME_INDEX`, with or without
//! a constant `PTR_ADD`), never by their names, so the engine knows no NVPTX opcode.

use target_desc::tables::{OpcodeId, PatternOperand, TargetTables};

use crate::mir::{Imm, Inst, Opcode, Operand, ValueId};

/// A whole-register load or store at a constant offset of one frame object.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub object: usize,
    pub offset: i64,
    pub store: bool,
    /// The register stored, or loaded into.
    pub value: ValueId,
}

fn opcode_name(tables: &TargetTables, id: u16) -> &'static str {
    tables.opcode_info(OpcodeId(id)).map_or("", |o| o.name)
}

/// The frame object an instruction names, if any.
pub fn frame_object(inst: &Inst, tables: &TargetTables) -> Option<usize> {
    match inst.operands.get(inst.frame_operand(tables)?)? {
        Operand::Int(k) => usize::try_from(k.get()).ok(),
        _ => None,
    }
}

/// `inst` as a plain frame access: a machine instruction whose pattern is
/// `LOAD(FRAME_INDEX)`, `STORE(v, FRAME_INDEX)` or either over
/// `PTR_ADD(FRAME_INDEX, imm)`, without flags (no volatile, no extension).
pub fn access(inst: &Inst, tables: &TargetTables) -> Option<Access> {
    let Opcode::Machine(m) = inst.opcode else { return None };
    let p = tables.patterns.get(m as usize)?;
    let root = opcode_name(tables, p.opcode);
    if !matches!(root, "LOAD" | "STORE") || !p.flags.is_empty() || !inst.flags.is_empty() {
        return None;
    }
    if !p.nodes.iter().skip(1).all(|n| matches!(opcode_name(tables, n.opcode), "FRAME_INDEX" | "PTR_ADD") && n.flags.is_empty()) {
        return None;
    }
    let object = frame_object(inst, tables)?;
    let operands: Vec<&Operand> = inst.operands.iter().filter(|o| !matches!(o, Operand::Align(_))).collect();
    let mut offset = 0;
    let mut stored = None;
    for (k, (_, kind)) in p.operands.iter().enumerate() {
        match (kind, operands.get(k)) {
            (PatternOperand::Imm(_) | PatternOperand::ImmRange(..), Some(Operand::Int(i))) => offset = i64::try_from(i.get()).ok()?,
            (PatternOperand::Reg(_), Some(Operand::Value(v))) => stored = Some(*v),
            (PatternOperand::Literal, _) => {}
            _ => return None,
        }
    }
    if root == "STORE" {
        Some(Access { object, offset, store: true, value: stored? })
    } else {
        match (inst.defs.as_slice(), p.result()) {
            ([d], Some(_)) if stored.is_none() => Some(Access { object, offset, store: false, value: *d }),
            _ => None,
        }
    }
}

/// The patterns that store a register of type `ty` to a frame object and load it back
/// (`STORE(v, FRAME_INDEX(i))` and `LOAD(FRAME_INDEX(i))`), on SM number `sm_index`:
/// the spiller's instructions. `None` when the description has no such pair.
pub fn spill_patterns(tables: &TargetTables, sm_index: usize, ty: u8) -> Option<(u16, u16)> {
    let direct = |p: &target_desc::tables::PatternInfo| {
        p.sms >> sm_index & 1 == 1 && p.flags.is_empty() && p.flag_groups.is_empty() && p.nodes.len() == 2 && opcode_name(tables, p.nodes[1].opcode) == "FRAME_INDEX"
    };
    let store = tables.patterns.iter().position(|p| {
        direct(p) && opcode_name(tables, p.opcode) == "STORE" && p.operands.len() == 2 && p.operands[0].1 == PatternOperand::Reg(ty) && p.operands[1].1 == PatternOperand::Literal
    })?;
    let load = tables.patterns.iter().position(|p| {
        direct(p) && opcode_name(tables, p.opcode) == "LOAD" && p.result() == Some(ty) && p.results.len() == 1 && p.operands.len() == 1 && p.operands[0].1 == PatternOperand::Literal
    })?;
    Some((store as u16, load as u16))
}

/// Renumbers the frame objects `inst` names through `map` (old index -> new index).
pub fn renumber(inst: &mut Inst, tables: &TargetTables, map: &[usize]) {
    if let Some(k) = inst.frame_operand(tables) {
        if let Some(Operand::Int(old)) = inst.operands.get_mut(k) {
            if let Some(&new) = usize::try_from(old.get()).ok().and_then(|o| map.get(o)) {
                *old = Imm::new(new as i128);
            }
        }
    }
}

/// Removes the frame objects of `f` that `used` marks unused and renumbers the
/// `FRAME_INDEX` operands of the rest; returns how many left.
pub fn remove_unused_objects(f: &mut crate::mir::Function, tables: &TargetTables, used: &[bool]) -> usize {
    let objects = f.frame.len();
    if used.len() != objects || used.iter().all(|&u| u) {
        return 0;
    }
    let mut map = vec![0; objects];
    let mut next = 0;
    for k in 0..objects {
        map[k] = next;
        if used[k] {
            next += 1;
        }
    }
    let mut k = 0;
    f.frame.retain(|_| {
        k += 1;
        used[k - 1]
    });
    for inst in f.blocks.iter_mut().flat_map(|b| b.insts.iter_mut()) {
        renumber(inst, tables, &map);
    }
    objects - next
}
