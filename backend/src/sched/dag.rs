//! The dependence graph of one block's schedulable region (the instructions between
//! its PHIs and its first terminator), for the list scheduler; the pipeliner adds
//! loop-carried edges to the same graph.
//!
//! Nodes are *units*: an instruction, or a run of instructions tied by the hardware
//! carry flag (`add.cc` then `addc`), which must stay adjacent. Edges:
//! - registers: definition to read (the producer's latency), and out of SSA also read
//!   to redefinition and definition to redefinition;
//! - memory: a store against every earlier access it may touch, a load against every
//!   earlier store it may touch. Two accesses are apart when they are in different
//!   address spaces (a generic pointer may reach any), when one is through a read-only
//!   pointer, or when they use the same base (register or frame object) at constant
//!   offsets whose byte ranges do not overlap;
//! - order: calls, barriers, fences, atomics, volatile accesses and warp-synchronous
//!   instructions ([`Ordering::Barrier`]) stay ordered with every memory access and
//!   with each other;
//! - calls and block barriers: nothing crosses a call, as LLVM's MachineScheduler makes
//!   calls region boundaries. A value computed before a call but read after it would be
//!   live across the call, where ptxas's calling convention keeps it in a callee-saved
//!   register (device_calls: one register and three SASS instructions more than llc on
//!   sm_80). Nothing crosses an instruction the description marks `sched_boundary`
//!   (`bar.sync`) either: ptxas leaves work on its side of a barrier, so arithmetic
//!   hoisted above one only holds registers across the wait (transpose_tiled_f32: two
//!   more than llc on sm_80 and sm_90).
//!
//! Memory edges look back at most [`MEMORY_WINDOW`] accesses; when more are pending the
//! next access is ordered after all of them (a *flush*), so the graph has O(n) edges
//! and its construction is linear in the block; a store to exactly the bytes of a
//! pending access replaces it in the window (it carries every dependence the older
//! one would), so runs of stores to one address stay cheap (cicc-instruction-scheduling.txt's DDG
//! construction, O(N + E)).

use target_desc::tables::{NodeArg, TargetTables, TypeKind, VtId};

use crate::mir::{address_slots, opcode_info, Block, Function, Inst, Opcode, Operand, ValueId};

use super::model::{ordering, read_only_pointer, Ordering, SchedModel};

/// How far back memory dependences are checked one by one.
pub const MEMORY_WINDOW: usize = 64;

/// The base address of an access.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Base {
    Value(ValueId),
    /// A frame object, by index.
    Frame(u32),
}

/// Where a load or store goes, as far as the instruction shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub base: Option<Base>,
    /// Constant byte offset from the base.
    pub offset: Option<i64>,
    /// Bytes accessed.
    pub size: Option<u64>,
    /// The pointer's type (its address space); `None` for frame objects.
    pub pointer_type: Option<u8>,
    /// The pointer type's address space and whether it is read-only, looked up once
    /// here rather than for every pair the graph compares.
    pub pointer_space: Option<u16>,
    pub read_only: bool,
}

/// The machine operand index of pattern operand `k` (operands that are not `align`).
fn leaf_operand(inst: &Inst, k: usize) -> Option<usize> {
    inst.operands
        .iter()
        .enumerate()
        .filter(|(_, o)| !matches!(o, Operand::Align(_)))
        .nth(k)
        .map(|(i, _)| i)
}

/// The address of a load or store: base register or frame object, constant offset,
/// size. `None` for instructions that are not plain loads and stores.
pub fn access(f: &Function, inst: &Inst, tables: &TargetTables) -> Option<Access> {
    let info = opcode_info(inst.opcode, tables)?;
    let (ptr_slot, imm_slot, lanes) = address_slots(info.name)?;
    let imm = |o: Option<&Operand>| match o {
        Some(Operand::Int(i)) => i64::try_from(i.get()).ok(),
        _ => None,
    };
    let mut base = None;
    let mut offset = Some(0i64);
    match inst.opcode {
        Opcode::Generic(_) => {
            if let Some(Operand::Value(p)) = inst.operands.get(ptr_slot) {
                base = Some(Base::Value(*p));
            }
            if let Some(o) = inst.operands.get(imm_slot) {
                offset = imm(Some(o));
            }
        }
        Opcode::Machine(m) => {
            let p = tables.patterns.get(m as usize)?;
            let root = p.nodes.first()?;
            let operand = |arg: NodeArg| match arg {
                NodeArg::Leaf(k) => {
                    leaf_operand(inst, k as usize).and_then(|i| inst.operands.get(i))
                }
                NodeArg::Node(_) => None,
            };
            let node_base = |arg: NodeArg| -> Option<Base> {
                match arg {
                    NodeArg::Leaf(_) => match operand(arg) {
                        Some(Operand::Value(v)) => Some(Base::Value(*v)),
                        _ => None,
                    },
                    NodeArg::Node(n) => {
                        let node = p.nodes.get(n as usize)?;
                        let name = tables
                            .opcode_info(target_desc::tables::OpcodeId(node.opcode))?
                            .name;
                        if name != "FRAME_INDEX" {
                            return None;
                        }
                        match operand(*node.args.first()?) {
                            Some(Operand::Int(k)) => u32::try_from(k.get()).ok().map(Base::Frame),
                            _ => None,
                        }
                    }
                }
            };
            match root.args.get(ptr_slot).copied() {
                Some(arg @ NodeArg::Leaf(_)) => base = node_base(arg),
                Some(NodeArg::Node(n)) => {
                    let node = p.nodes.get(n as usize)?;
                    let name = tables
                        .opcode_info(target_desc::tables::OpcodeId(node.opcode))?
                        .name;
                    match name {
                        "PTR_ADD" => {
                            base = node_base(*node.args.first()?);
                            offset = node.args.get(1).and_then(|a| imm(operand(*a)));
                        }
                        "FRAME_INDEX" => base = node_base(NodeArg::Node(n)),
                        _ => {}
                    }
                }
                None => {}
            }
            if let Some(arg) = root.args.get(imm_slot) {
                offset = match (offset, imm(operand(*arg))) {
                    (Some(a), Some(b)) => Some(a + b),
                    _ => None,
                };
            }
        }
    }
    let pointer_type = match base {
        Some(Base::Value(v)) => Some(f.value(v).ty.0),
        _ => None,
    };
    // Bytes: a narrow memory type (`i8`, `i16`, `i32` flags of extending loads and
    // truncating stores), else the data type, per lane.
    let narrow = ["i8", "i16", "i32"]
        .iter()
        .zip([1u64, 2, 4])
        .find(|(n, _)| inst.has_flag(n) || pattern_has_flag(inst, tables, n))
        .map(|(_, b)| b);
    let data = if info.name.starts_with("LOAD") {
        inst.defs.first().map(|d| f.value(*d).ty)
    } else {
        inst.uses().next().map(|v| f.value(v).ty)
    };
    let size = narrow
        .or_else(|| {
            data.and_then(|t| tables.type_info(t))
                .map(|t| u64::from(t.bits).div_ceil(8))
        })
        .map(|b| b * lanes);
    let pointer_info = pointer_type.and_then(|t| tables.type_info(VtId(t)));
    Some(Access {
        base,
        offset,
        size,
        pointer_type,
        pointer_space: pointer_info.map(|t| t.addrspace),
        read_only: pointer_type.is_some_and(|t| read_only_pointer(tables, t)),
    })
}

fn pattern_has_flag(inst: &Inst, tables: &TargetTables, flag: &str) -> bool {
    matches!(inst.opcode, Opcode::Machine(m) if tables.patterns.get(m as usize).is_some_and(|p| p.flags.contains(&flag)))
}

/// What the dependence graph needs to know about memory, beyond the instruction.
pub struct MemoryModel {
    /// Address space of frame objects (the pointer types `FRAME_INDEX` is legal for).
    pub frame_space: Option<u16>,
    /// The generic (flat) address space, which reaches every other (the description's
    /// `generic: true` pointer type).
    pub generic_space: Option<u16>,
}

impl MemoryModel {
    pub fn new(model: &SchedModel<'_>) -> MemoryModel {
        let frame_space = model.tables.opcode("FRAME_INDEX").and_then(|fi| {
            model
                .tables
                .types
                .iter()
                .find(|t| t.kind == TypeKind::Pointer && model.sm.is_legal(fi, VtId(t.id)))
                .map(|t| t.addrspace)
        });
        let generic_space = model.tables.types.iter().find(|t| t.kind == TypeKind::Pointer && t.generic).map(|t| t.addrspace);
        MemoryModel { frame_space, generic_space }
    }

    fn space(&self, a: &Access) -> Option<u16> {
        match (a.base, a.pointer_space) {
            (Some(Base::Frame(_)), _) => self.frame_space,
            (_, space) => space,
        }
    }

    /// Whether two accesses (at least one a store) may touch the same byte.
    pub fn may_alias(&self, a: Option<&Access>, b: Option<&Access>) -> bool {
        let (Some(a), Some(b)) = (a, b) else {
            return true;
        };
        if a.read_only || b.read_only {
            return false;
        }
        let (sa, sb) = (self.space(a), self.space(b));
        if let (Some(sa), Some(sb)) = (sa, sb) {
            if sa != sb && Some(sa) != self.generic_space && Some(sb) != self.generic_space {
                return false;
            }
        }
        match (a.base, b.base) {
            (Some(Base::Frame(x)), Some(Base::Frame(y))) if x != y => false,
            (Some(x), Some(y)) if x == y => match (a.offset, a.size, b.offset, b.size) {
                (Some(oa), Some(za), Some(ob), Some(zb)) => {
                    oa < ob + zb as i64 && ob < oa + za as i64
                }
                _ => true,
            },
            _ => true,
        }
    }
}

/// Why one unit must follow another.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// A register read after its definition.
    Data,
    /// A redefinition after a read of the previous value (out of SSA).
    Anti,
    /// A redefinition after the previous definition (out of SSA).
    Output,
    /// Memory and barrier order.
    Order,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub other: u32,
    pub latency: u32,
    pub kind: EdgeKind,
}

// Twelve bytes: a block of millions of instructions has two or three edges per
// instruction in each direction (the pipeliner keeps its loop-carried edges, with their
// iteration distances, in a graph of its own).
const _: () = assert!(std::mem::size_of::<Edge>() == 12, "an edge grew");

/// The edges of every unit in one direction, in compressed rows: `graph[u]` is unit
/// `u`'s list. One array of edges and one of offsets, where a vector per unit and
/// direction (two headers of 24 bytes and two allocations per instruction) was half a
/// gigabyte on a block of millions of instructions.
#[derive(Clone, Debug, Default)]
pub struct Adjacency {
    /// `edges[offsets[u]..offsets[u + 1]]` are unit `u`'s edges.
    offsets: Vec<u32>,
    edges: Vec<Edge>,
}

impl Adjacency {
    /// Rows of `degree[u]` edges each, from `(unit, edge)` pairs in any unit order
    /// (each row keeps its pairs' order).
    fn build(degree: &[u32], pairs: impl Iterator<Item = (u32, Edge)>) -> Adjacency {
        let offsets: Vec<u32> = std::iter::once(0)
            .chain(degree.iter().scan(0u32, |total, d| {
                *total += d;
                Some(*total)
            }))
            .collect();
        let mut edges = vec![Edge { other: 0, latency: 0, kind: EdgeKind::Data }; offsets[degree.len()] as usize];
        let mut cursor: Vec<u32> = offsets[..degree.len()].to_vec();
        for (u, e) in pairs {
            let at = &mut cursor[u as usize];
            edges[*at as usize] = e;
            *at += 1;
        }
        Adjacency { offsets, edges }
    }

    /// The number of units.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every unit's edges, in unit order.
    pub fn iter(&self) -> impl Iterator<Item = &[Edge]> + '_ {
        (0..self.len()).map(|u| &self[u])
    }

    /// The number of edges.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }
}

impl std::ops::Index<usize> for Adjacency {
    type Output = [Edge];

    fn index(&self, u: usize) -> &[Edge] {
        &self.edges[self.offsets[u] as usize..self.offsets[u + 1] as usize]
    }
}

/// The graph of one region.
pub struct Dag {
    /// Offset of the region in the block's instructions.
    pub start: usize,
    /// Each unit: the range of region-relative instruction indices it covers.
    pub units: Vec<std::ops::Range<usize>>,
    /// Each unit's successors, in target order. Every edge goes forward in program
    /// order, so what predecessors would tell (earliest starts, in-degrees) is found
    /// by a forward pass over these: no second copy of the block's largest array.
    pub succs: Adjacency,
    /// Latency of each unit's result (its last instruction's class).
    pub latency: Vec<u32>,
}

/// The schedulable region of `block`: after its PHIs, before its first terminator.
pub fn region(block: &Block, tables: &TargetTables) -> std::ops::Range<usize> {
    let start = block.insts.iter().take_while(|i| i.is_phi(tables)).count();
    let end = block.insts[start..]
        .iter()
        .position(|i| {
            opcode_info(i.opcode, tables)
                .is_some_and(|o| o.props & target_desc::tables::props::TERMINATOR != 0)
        })
        .map_or(block.insts.len(), |p| start + p);
    start..end
}

/// Per value, (unit of its last definition, head of its read list) for the region being
/// built, valid only where the value's stamp is the current region's: a function's
/// blocks reuse one array instead of a hash map per region (whose inserts were a tenth
/// of the build), and a new region costs nothing to clear.
#[derive(Default)]
struct ValueSlots {
    region: u32,
    stamps: Vec<u32>,
    slots: Vec<(u32, u32)>,
}

impl ValueSlots {
    fn start(&mut self, values: usize) {
        if self.stamps.len() < values {
            self.stamps.resize(values, 0);
            self.slots.resize(values, (u32::MAX, u32::MAX));
        }
        self.region = self.region.wrapping_add(1);
        if self.region == 0 {
            self.stamps.fill(0);
            self.region = 1;
        }
    }

    fn get(&mut self, value: u32) -> &mut (u32, u32) {
        let v = value as usize;
        if v >= self.stamps.len() {
            self.stamps.resize(v + 1, 0);
            self.slots.resize(v + 1, (u32::MAX, u32::MAX));
        }
        if self.stamps[v] != self.region {
            self.stamps[v] = self.region;
            self.slots[v] = (u32::MAX, u32::MAX);
        }
        &mut self.slots[v]
    }
}

thread_local! {
    static VALUE_SLOTS: std::cell::Cell<ValueSlots> = std::cell::Cell::new(ValueSlots::default());
}

/// Values up to which a thread keeps its [`ValueSlots`] for the next function.
const KEEP_SLOTS: usize = 1 << 16;

/// Called when a function's graphs are built: frees this thread's per-value slots if
/// they are a large function's (12 bytes per value, which would otherwise stay
/// allocated through emission, the compile's memory peak); small ones stay for the
/// next function.
pub fn release_large_scratch() {
    VALUE_SLOTS.with(|s| {
        let slots = s.take();
        if slots.stamps.len() <= KEEP_SLOTS {
            s.set(slots);
        }
    });
}

impl Dag {
    /// Builds the graph of `insts` (a region, in program order).
    pub fn build(
        f: &Function,
        insts: &[Inst],
        start: usize,
        model: &SchedModel<'_>,
        memory: &MemoryModel,
    ) -> Dag {
        let tables = model.tables;
        let units = crate::mir::carry_units(insts, tables);
        let n = units.len();
        let latency: Vec<u32> = units
            .iter()
            .map(|u| model.latency(f, &insts[u.end - 1]))
            .collect();
        let mut edges: Vec<(u32, u32, u32, EdgeKind)> = Vec::with_capacity(insts.len() * 2);
        // Registers: per value, its last definition's unit and the reads since then, as
        // lists linked through one arena (not a vector per value): the head indexes the
        // newest read in `reads`, whose entries are (unit, index of the previous read or
        // NO_READ). Dense per value and reused across regions (see `ValueSlots`).
        const NO_READ: u32 = u32::MAX;
        const NO_DEF: u32 = u32::MAX;
        let mut slots = VALUE_SLOTS.with(|s| s.take());
        slots.start(f.values.len());
        let mut reads: Vec<(u32, u32)> = Vec::with_capacity(insts.len() * 2);
        // Memory: accesses since the last barrier or flush (unit, is store, address).
        let mut pending: Vec<(u32, bool, Option<Access>)> = Vec::new();
        let mut last_barrier: Option<u32> = None;
        // Calls and barriers bound the schedule: units since the last one, and the last one.
        let mut since_boundary: Vec<u32> = Vec::new();
        let mut last_boundary: Option<u32> = None;
        for (u, range) in units.iter().enumerate() {
            let u = u as u32;
            let bounds = target_desc::tables::props::CALL | target_desc::tables::props::SCHED_BOUNDARY;
            let is_boundary = insts[range.clone()].iter().any(|i| super::model::properties(i, tables).is_some_and(|p| p & bounds != 0));
            if is_boundary {
                edges.extend(since_boundary.drain(..).map(|p| (p, u, 0, EdgeKind::Order)));
                last_boundary = Some(u);
            } else {
                since_boundary.push(u);
            }
            if let Some(c) = last_boundary.filter(|&c| c != u) {
                edges.push((c, u, 0, EdgeKind::Order));
            }
            for inst in &insts[range.clone()] {
                for v in inst.uses() {
                    let slot = slots.get(v.0);
                    let d = slot.0;
                    if d != NO_DEF && d != u {
                        edges.push((d, u, latency[d as usize], EdgeKind::Data));
                    }
                    let previous = std::mem::replace(&mut slot.1, reads.len() as u32);
                    reads.push((u, previous));
                }
                for d in &inst.defs {
                    let slot = slots.get(d.0);
                    let p = slot.0;
                    if p != NO_DEF && p != u {
                        edges.push((p, u, 0, EdgeKind::Output));
                    }
                    let mut k = std::mem::replace(&mut slot.1, NO_READ);
                    while k != NO_READ {
                        let (r, previous) = reads[k as usize];
                        if r != u {
                            edges.push((r, u, 0, EdgeKind::Anti));
                        }
                        k = previous;
                    }
                    slots.get(d.0).0 = u;
                }
                let order = ordering(inst, tables);
                match order {
                    Ordering::Pure => {}
                    Ordering::Barrier => {
                        if let Some(b) = last_barrier {
                            edges.push((b, u, 0, EdgeKind::Order));
                        }
                        for (p, _, _) in pending.drain(..) {
                            if p != u {
                                edges.push((p, u, 0, EdgeKind::Order));
                            }
                        }
                        last_barrier = Some(u);
                    }
                    Ordering::Load | Ordering::Store => {
                        let store = order == Ordering::Store;
                        let address = access(f, inst, tables);
                        if let Some(b) = last_barrier {
                            edges.push((b, u, 0, EdgeKind::Order));
                        }
                        if pending.len() >= MEMORY_WINDOW {
                            // Flush: this access follows every pending one and stands
                            // for them from now on.
                            for (p, _, _) in pending.drain(..) {
                                if p != u {
                                    edges.push((p, u, 0, EdgeKind::Order));
                                }
                            }
                            last_barrier = Some(u);
                            continue;
                        }
                        for (p, p_store, p_addr) in &pending {
                            if *p != u
                                && (store || *p_store)
                                && memory.may_alias(address.as_ref(), p_addr.as_ref())
                            {
                                edges.push((
                                    *p,
                                    u,
                                    if *p_store && !store { 1 } else { 0 },
                                    EdgeKind::Order,
                                ));
                            }
                        }
                        // A store to exactly the bytes of a pending access now stands for
                        // it: whatever would depend on that access touches these bytes
                        // too, so depends on this store, which follows it. (A run of
                        // stores to one address keeps one pending entry, not 64.)
                        if store {
                            if let Some(a) = address.filter(|a| a.base.is_some() && a.offset.is_some() && a.size.is_some()) {
                                pending.retain(|(p, _, p_addr)| *p == u || *p_addr != Some(a));
                            }
                        }
                        pending.push((u, store, address));
                    }
                }
            }
        }
        VALUE_SLOTS.with(|s| s.replace(slots));
        // One edge per pair: the largest latency, the strongest kind. Every edge was
        // made while visiting its target, so the list is grouped by target in order:
        // each group is sorted on its own (a sort of the whole list was a quarter of
        // the build), giving every list in (source, target) order as before.
        let mut group_start = 0;
        let mut kept = 0;
        while group_start < edges.len() {
            let to = edges[group_start].1;
            let group_end = edges[group_start..].iter().position(|e| e.1 != to).map_or(edges.len(), |k| group_start + k);
            let group = &mut edges[group_start..group_end];
            group.sort_unstable_by(|a, b| (a.0, b.2, a.3).cmp(&(b.0, a.2, b.3)));
            for k in group_start..group_end {
                if k == group_start || edges[k].0 != edges[k - 1].0 {
                    edges[kept] = edges[k];
                    kept += 1;
                }
            }
            group_start = group_end;
        }
        edges.truncate(kept);
        debug_assert!(edges.windows(2).all(|w| (w[0].1, w[0].0) < (w[1].1, w[1].0)));
        // Rows at their final sizes. Edges are in (target, source) order, so each
        // source's successors come out sorted by target.
        let mut out_degree = vec![0u32; n];
        for e in &edges {
            out_degree[e.0 as usize] += 1;
        }
        let succs = Adjacency::build(&out_degree, edges.iter().map(|&(from, to, latency, kind)| (from, Edge { other: to, latency, kind })));
        Dag { start, units, succs, latency }
    }

    pub fn len(&self) -> usize {
        self.units.len()
    }

    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    pub fn edge_count(&self) -> usize {
        self.succs.edge_count()
    }

    /// Longest latency-weighted path from each unit to the end of the region (the
    /// reference's "depth": deeper units are scheduled first).
    pub fn heights(&self) -> Vec<u32> {
        let mut h = vec![0u32; self.len()];
        // Edges go forward in program order, so reverse order is topological.
        for u in (0..self.len()).rev() {
            h[u] = self.succs[u]
                .iter()
                .map(|e| e.latency + h[e.other as usize])
                .max()
                .unwrap_or(0);
        }
        h
    }

    /// Earliest start cycle of each unit (ASAP): a unit's start is final once every
    /// unit before it has passed its own on.
    pub fn asap(&self) -> Vec<u32> {
        let mut a = vec![0u32; self.len()];
        for u in 0..self.len() {
            for e in &self.succs[u] {
                let s = e.other as usize;
                a[s] = a[s].max(a[u] + e.latency);
            }
        }
        a
    }

    /// Each unit's number of predecessors.
    pub fn in_degrees(&self) -> Vec<u32> {
        let mut d = vec![0u32; self.len()];
        for e in &self.succs.edges {
            d[e.other as usize] += 1;
        }
        d
    }
}
