//! The scheduling model: what an instruction costs on one SM, read from the
//! description's `scheduling:` section (latency classes with per-SM-family figures, the
//! target priority table). Both schedulers and the dependence graph ask it; nothing
//! NVPTX-specific lives here, only the lookup rules of `scheduling.yaml`'s header.

use target_desc::tables::{props, OpcodeId, SchedCost, SmTables, TargetTables, TypeKind, VtId};

use crate::mir::{opcode_info, Function, Inst, Opcode, Operand};

use super::dag::{access, Access};

/// Latency, unit and priority lookups for one SM.
pub struct SchedModel<'t> {
    pub tables: &'t TargetTables,
    pub sm: &'t SmTables,
    /// Per opcode category, the latency classes naming it, as a bit set over class
    /// indices; `None` when the description has more than 64 classes.
    classes_by_category: Option<Box<[u64; 256]>>,
}

impl<'t> SchedModel<'t> {
    pub fn new(tables: &'t TargetTables, sm: &'t SmTables) -> SchedModel<'t> {
        let classes = tables.scheduling.latency_classes;
        let classes_by_category = (classes.len() <= 64).then(|| {
            let mut by = Box::new([0u64; 256]);
            for (c, class) in classes.iter().enumerate() {
                for &k in class.categories {
                    by[k as usize] |= 1 << c;
                }
            }
            by
        });
        SchedModel { tables, sm, classes_by_category }
    }

    /// The latency class of `inst`: the first class whose categories hold the opcode's
    /// category and whose `types`/`spaces` (when given) hold the instruction's type and
    /// access pointer type; the default class otherwise.
    pub fn class_of(&self, f: &Function, inst: &Inst) -> usize {
        let s = &self.tables.scheduling;
        let Some(info) = opcode_info(inst.opcode, self.tables) else {
            return s.default_latency_class as usize;
        };
        if let Some(by_category) = &self.classes_by_category {
            // The classes naming one of the opcode's categories, in order; the type and
            // the access (the costly parts) only when a candidate class asks for them.
            let mut candidates = info.categories.iter().fold(0u64, |m, &k| m | by_category[k as usize]);
            let mut ty = None;
            let mut space = None;
            while candidates != 0 {
                let c = candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                let class = &s.latency_classes[c];
                if !class.types.is_empty() && !ty.get_or_insert_with(|| data_type(f, inst)).is_some_and(|t| class.types.contains(&t.0)) {
                    continue;
                }
                if !class.spaces.is_empty()
                    && !space
                        .get_or_insert_with(|| access(f, inst, self.tables).and_then(|a: Access| a.pointer_type))
                        .is_some_and(|p| class.spaces.contains(&p))
                {
                    continue;
                }
                return c;
            }
            return s.default_latency_class as usize;
        }
        let ty = data_type(f, inst);
        let space: Option<u8> = access(f, inst, self.tables).and_then(|a: Access| a.pointer_type);
        s.latency_classes
            .iter()
            .position(|c| {
                c.categories.iter().any(|k| info.categories.contains(k))
                    && (c.types.is_empty() || ty.is_some_and(|t| c.types.contains(&t.0)))
                    && (c.spaces.is_empty() || space.is_some_and(|p| c.spaces.contains(&p)))
            })
            .unwrap_or(s.default_latency_class as usize)
    }

    /// The class's figures on this SM.
    pub fn cost_of_class(&self, class: usize) -> SchedCost {
        self.sm.latencies.get(class).copied().unwrap_or(SchedCost {
            latency: 1,
            issue: 1,
            source: self.sm.source,
        })
    }

    /// Cycles from the start of `inst` until a dependent instruction may start.
    pub fn latency(&self, f: &Function, inst: &Inst) -> u32 {
        self.cost_of_class(self.class_of(f, inst)).latency
    }

    /// The functional unit `inst` occupies and for how many cycles.
    pub fn unit(&self, f: &Function, inst: &Inst) -> (usize, u32) {
        let class = self.class_of(f, inst);
        let unit = self
            .tables
            .scheduling
            .latency_classes
            .get(class)
            .map_or(0, |c| c.unit as usize);
        (unit, self.cost_of_class(class).issue)
    }

    pub fn unit_count(&self) -> usize {
        self.tables.scheduling.units.len().max(1)
    }

    /// Level 2 of the selection order: the priority of the first window of the target
    /// priority table whose categories hold `inst`'s and whose `[start, end]` holds its
    /// earliest cycle `asap`; 0 when none does.
    pub fn priority(&self, inst: &Inst, asap: u32) -> u32 {
        let Some(info) = opcode_info(inst.opcode, self.tables) else {
            return 0;
        };
        self.tables
            .scheduling
            .priorities
            .iter()
            .find(|p| {
                p.categories.iter().any(|k| info.categories.contains(k))
                    && (p.start..=p.end).contains(&asap)
            })
            .map_or(0, |p| p.priority)
    }
}

/// The type an instruction computes on: its first result's, or (stores and other
/// instructions without results) its first value operand's.
pub fn data_type(f: &Function, inst: &Inst) -> Option<VtId> {
    inst.defs
        .first()
        .map(|d| f.value(*d).ty)
        .or_else(|| inst.uses().next().map(|v| f.value(v).ty))
}

/// How an instruction constrains the order of others beyond its registers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// Computes its results only.
    Pure,
    /// Reads memory (address in [`access`] when known).
    Load,
    /// Writes memory.
    Store,
    /// Nothing may move across it: calls, barriers, fences, atomics, volatile accesses,
    /// warp-synchronous (convergent) instructions, anything with side effects.
    Barrier,
}

/// The description's properties of `inst`, with those of the intrinsic an `INTRINSIC`
/// calls; `None` when the opcode or intrinsic is unknown.
pub fn properties(inst: &Inst, tables: &TargetTables) -> Option<u16> {
    let info = opcode_info(inst.opcode, tables)?;
    if info.name != "INTRINSIC" {
        return Some(info.props);
    }
    let Some(Operand::Symbol(name)) = inst.operands.first() else { return None };
    tables.intrinsics.iter().find(|i| i.name == &**name).map(|i| info.props | i.props)
}

/// The ordering class of `inst`.
pub fn ordering(inst: &Inst, tables: &TargetTables) -> Ordering {
    let Some(p) = properties(inst, tables) else {
        return Ordering::Barrier;
    };
    let pattern_flag = |flag: &str| matches!(inst.opcode, Opcode::Machine(m) if tables.patterns.get(m as usize).is_some_and(|p| p.flags.contains(&flag)));
    let volatile = inst.has_flag("volatile") || pattern_flag("volatile");
    if p & (props::SIDE_EFFECTS | props::CALL | props::CONVERGENT | props::TERMINATOR) != 0
        || volatile
    {
        return Ordering::Barrier;
    }
    if p & props::MAY_STORE != 0 {
        return Ordering::Store;
    }
    if p & props::MAY_LOAD != 0 {
        // A load of memory nothing writes while the kernel runs needs no order.
        if inst.has_flag("invariant") || pattern_flag("invariant") {
            return Ordering::Pure;
        }
        return Ordering::Load;
    }
    Ordering::Pure
}

/// Whether `vt` is a pointer into memory nothing may write (kernel parameters,
/// constants), by the description's `writable: false`.
pub fn read_only_pointer(tables: &TargetTables, vt: u8) -> bool {
    tables
        .type_info(VtId(vt))
        .is_some_and(|t| t.kind == TypeKind::Pointer && !t.writable)
}

/// The generic opcode id named `name`, if the description has it.
pub fn generic(tables: &TargetTables, name: &str) -> Option<OpcodeId> {
    tables.opcode(name)
}
