//! Probe kernels: one small MIR kernel per instance of a Legal (opcode, type) cell.
//!
//! Everything here is read from the description: the opcode's signature says which
//! operands to make and which results to keep, the type table and the register classes
//! say which types the other type variables range over, the condition-code table says
//! which codes to compare with, and the action table says how an operand can be
//! produced (a kernel parameter where `ARG` is Legal on its type, else a load from the
//! input buffer). The only special cases are operand *shapes*, never NVPTX facts:
//!
//! - `ARG` reads a kernel parameter added for it (the verifier treats `ARG` by name too);
//! - a lone `imm` operand is the instruction's literal (`CONSTANT 1`); an `imm` after a
//!   value is an element index and is probed at every valid index;
//! - a condition code is probed with every code the table calls Legal for the compared
//!   type;
//! - block operands get blocks; a variadic block list (`PHI`) gets a two-way diamond;
//! - a symbol operand gets a module global in the address space of the result pointer;
//! - a variadic value list (`BUILD_VECTOR`) gets one element per lane of the result;
//! - a lane index (an integer operand next to a vector operand) is probed as the
//!   constant first and last lane and as a register, all `i32` (the MIR convention);
//! - an opcode whose flags are all type names (`SIGN_EXTEND_INREG.i8`) needs one of
//!   them, and each is probed;
//! - a `bool` operand that the description's pattern takes as an implicit flag (a
//!   carry) is produced by the carry-producing opcode with the same operands and
//!   results placed immediately before, and a flag result is not stored.
//!
//! Other type variables than the row's range over the SM's register types of their
//! class, except types of a storage-only register class. Instances the MIR verifier
//! rejects at the probed instruction (a conversion to a narrower type, a pair of the
//! wrong width) are not instances of the opcode and are dropped; the caller keeps them
//! as `invalid` so that nothing disappears unseen.

use std::fmt::Write;

use target_desc::tables::{Action, OpcodeInfo, OperandKind, PatternOperand, SmTables, TargetTables, TypeClass, TypeKind, VtId};

use crate::mir::verifier::in_class;

/// One probe kernel: a whole MIR module holding one kernel.
#[derive(Debug, Clone)]
pub struct Probe {
    /// What the instance is, beyond the cell: `from i16`, `cc olt`, `p3`, ...
    pub label: String,
    /// The kernel's name (unique within one SM's run).
    pub kernel: String,
    pub mir: String,
    /// The line of `mir` holding the probed instruction.
    pub line: usize,
    /// Not to be compiled, and why (an operand of a storage-only type). The caller
    /// still verifies it, so that only valid instances are reported as skipped.
    pub skip: Option<String>,
}

/// An instance that was not generated, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub label: String,
    pub reason: String,
}

/// The probes of one cell, or why it has none.
pub enum Plan {
    Probes { probes: Vec<Probe>, skipped: Vec<Skipped> },
    Unprobeable(String),
}

/// The name of a type.
pub fn vt_name(tables: &TargetTables, vt: VtId) -> &'static str {
    tables.type_info(vt).map(|t| t.name).unwrap_or("?")
}

fn legal(tables: &TargetTables, sm: &SmTables, op: &str, vt: VtId) -> bool {
    tables.opcode(op).is_some_and(|o| tables.decide(sm, o, vt).action == Action::Legal)
}

/// The register class holding `vt` on `sm`, if it is storage-only there.
pub fn storage_only_class(tables: &TargetTables, sm: &SmTables, vt: VtId) -> Option<&'static str> {
    let (class, _) = tables.register_type(sm, vt)?;
    class.storage_only.then_some(class.name)
}

/// Patterns of `opcode` enabled on `sm`.
fn patterns_of<'t>(tables: &'t TargetTables, sm: &SmTables, opcode: u16) -> impl Iterator<Item = &'t target_desc::tables::PatternInfo> {
    let index = tables.sm_index(sm);
    tables.patterns.iter().filter(move |p| p.opcode == opcode && p.sms >> index & 1 == 1)
}

/// Does a pattern of `op` on `sm` take operand `k` as an implicit flag?
fn flag_operand(tables: &TargetTables, sm: &SmTables, op: &OpcodeInfo, k: usize) -> bool {
    patterns_of(tables, sm, op.id).any(|p| p.operands.get(k).is_some_and(|(_, o)| *o == PatternOperand::Flag))
}

/// Does a pattern of `op` on `sm` produce result `k` as an implicit flag?
fn flag_result(tables: &TargetTables, sm: &SmTables, op: &OpcodeInfo, k: usize) -> bool {
    patterns_of(tables, sm, op.id).any(|p| p.results.get(k).is_some_and(|r| *r == target_desc::tables::PatternResult::Flag))
}

/// The kernel under construction.
struct Kernel<'a> {
    tables: &'a TargetTables,
    sm: &'a SmTables,
    params: Vec<(String, String)>,
    globals: Vec<String>,
    /// Frame objects (`FRAME_INDEX` operands), each 16 bytes.
    frame: usize,
    lines: Vec<String>,
    next: usize,
}

impl<'a> Kernel<'a> {
    fn new(tables: &'a TargetTables, sm: &'a SmTables) -> Result<Kernel<'a>, String> {
        let p1 = tables.types.iter().find(|t| t.kind == TypeKind::Pointer && t.addrspace == 1).ok_or("the description has no global-memory pointer type")?;
        let mut k = Kernel { tables, sm, params: Vec::new(), globals: Vec::new(), frame: 0, lines: Vec::new(), next: 0 };
        k.params.push(("in".into(), p1.name.into()));
        k.params.push(("out".into(), p1.name.into()));
        k.lines.push("  bb.0:".into());
        k.lines.push(format!("    %in:{} = ARG 0", p1.name));
        k.lines.push(format!("    %out:{} = ARG 1", p1.name));
        Ok(k)
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("v{}", self.next)
    }

    /// A value of type `vt`: a kernel parameter where `ARG` is Legal on the type, else
    /// a load from the input buffer.
    fn operand(&mut self, vt: VtId) -> Result<String, String> {
        let ty = vt_name(self.tables, vt);
        let name = self.fresh();
        if legal(self.tables, self.sm, "ARG", vt) {
            let index = self.params.len();
            self.params.push((format!("a{index}"), ty.into()));
            self.lines.push(format!("    %{name}:{ty} = ARG {index}"));
        } else if legal(self.tables, self.sm, "LOAD", vt) {
            self.lines.push(format!("    %{name}:{ty} = LOAD %in"));
        } else {
            return Err(format!("no {ty} operand can be made: neither ARG nor LOAD is Legal on {ty}"));
        }
        Ok(name)
    }

    fn constant(&mut self, vt: VtId, value: i64) -> String {
        let name = self.fresh();
        self.lines.push(format!("    %{name}:{} = CONSTANT {value}", vt_name(self.tables, vt)));
        name
    }

    fn store(&mut self, value: &str) {
        self.lines.push(format!("    STORE %{value}, %out"));
    }

    fn text(&self, name: &str) -> String {
        let mut out = String::new();
        if !self.globals.is_empty() {
            out.push_str("---\nglobals:\n");
            for g in &self.globals {
                let _ = writeln!(out, "  - {g}");
            }
        }
        let _ = write!(out, "---\nname: {name}\nkind: kernel\nparams:\n");
        for (n, t) in &self.params {
            let _ = writeln!(out, "  - {{ name: {n}, type: {t} }}");
        }
        if self.frame > 0 {
            out.push_str("frame:\n");
            for _ in 0..self.frame {
                out.push_str("  - { size: 16, align: 16 }\n");
            }
        }
        out.push_str("body: |\n");
        for l in &self.lines {
            out.push_str(l);
            out.push('\n');
        }
        out.push_str("...\n");
        out
    }

    /// Line of `self.lines[index]` in [`Kernel::text`].
    fn line_of(&self, index: usize) -> usize {
        let globals = if self.globals.is_empty() { 0 } else { 2 + self.globals.len() };
        let frame = if self.frame == 0 { 0 } else { 1 + self.frame };
        // `---`, name, kind, params:, each param, frame, body:
        globals + 5 + self.params.len() + frame + index + 1
    }
}

/// One choice of everything that varies between instances of a cell.
#[derive(Clone, Default)]
struct Variant {
    label: Vec<String>,
    /// Type per signature type variable.
    types: Vec<Option<VtId>>,
    cc: Option<&'static str>,
    flag: Option<&'static str>,
    /// The element index of an `imm` index operand.
    index: Option<i64>,
    /// How a lane index is given: a constant lane or a register.
    lane: Option<Lane>,
    skip: Option<String>,
}

#[derive(Clone, Copy)]
enum Lane {
    Constant(i64),
    Register,
}

/// The probes of cell (`op`, `vt`) on `sm`. Kernel names are `prefix` plus a number.
pub fn plan(tables: &TargetTables, sm: &SmTables, op: &OpcodeInfo, vt: VtId, prefix: &str) -> Plan {
    let sig = &op.signature;
    let row = match op.type_operand {
        Some(i) => sig.operands.get(i as usize),
        None => sig.results.first(),
    };
    let Some(row) = row else { return Plan::Unprobeable(format!("{} has no typed row operand", op.name)) };
    let mut types: Vec<Option<VtId>> = vec![None; sig.type_vars.len()];
    match row.kind {
        OperandKind::TypeVar(v) => types[v as usize] = Some(vt),
        OperandKind::Fixed(t) if t == vt.0 => {}
        _ => return Plan::Unprobeable(format!("the row operand of {} cannot have type {}", op.name, vt_name(tables, vt))),
    }
    let row_var = match row.kind {
        OperandKind::TypeVar(v) => Some(v as usize),
        _ => None,
    };
    let vector_operand = sig.operands.iter().any(|o| matches!(o.kind, OperandKind::TypeVar(v) if sig.type_vars[v as usize].class == TypeClass::Vector));
    let used = |var: usize| sig.operands.iter().chain(sig.results).any(|o| o.kind == OperandKind::TypeVar(var as u8));
    let lane_var = |var: usize| vector_operand && sig.type_vars[var].class == TypeClass::ScalarInt;
    let i32 = tables.types.iter().find(|t| t.kind == TypeKind::Int && t.bits == 32).map(|t| VtId(t.id));

    // Type variables other than the row's: every register type of their class.
    let mut variants = vec![Variant { types, ..Variant::default() }];
    let mut skipped = Vec::new();
    for (var, tv) in sig.type_vars.iter().enumerate() {
        if Some(var) == row_var || !used(var) {
            continue;
        }
        let candidates: Vec<VtId> = if lane_var(var) {
            i32.into_iter().collect()
        } else {
            tables.types.iter().map(|t| VtId(t.id)).filter(|&t| sm.type_supported(t) && in_class(tables, t, tv.class)).collect()
        };
        let mut next = Vec::new();
        for v in &variants {
            for &t in &candidates {
                let mut w = v.clone();
                w.types[var] = Some(t);
                if !lane_var(var) {
                    w.label.push(format!("{}={}", tv.name, vt_name(tables, t)));
                }
                // A storage-only value is an operand of its own class's moves only.
                let own_class = storage_only_class(tables, sm, vt).is_some() && tables.register_type(sm, vt).map(|c| c.0.name) == tables.register_type(sm, t).map(|c| c.0.name);
                if let (Some(class), false) = (storage_only_class(tables, sm, t), own_class) {
                    w.skip = Some(format!("{} is in the storage-only register class {class}: only moves take it", vt_name(tables, t)));
                }
                next.push(w);
            }
        }
        variants = next;
    }
    // Condition codes: every code the table calls Legal on the compared type.
    if sig.operands.iter().any(|o| o.kind == OperandKind::CondCode) {
        let codes: Vec<&'static str> = tables
            .cond_codes
            .iter()
            .filter(|c| tables.decide_cc(sm, target_desc::tables::CondCodeId(c.id), vt).action == Action::Legal)
            .map(|c| c.name)
            .collect();
        if codes.is_empty() {
            return Plan::Unprobeable(format!("no condition code is Legal on {}", vt_name(tables, vt)));
        }
        variants = variants
            .into_iter()
            .flat_map(|v| {
                codes.iter().map(move |c| {
                    let mut w = v.clone();
                    w.cc = Some(c);
                    w.label.push(format!("cc {c}"));
                    w
                })
            })
            .collect();
    }
    // Type-name flags: the instruction needs one of them.
    if !op.flags.is_empty() && op.flags.iter().all(|f| tables.vt(f).is_some()) {
        variants = variants
            .into_iter()
            .flat_map(|v| {
                op.flags.iter().map(move |f| {
                    let mut w = v.clone();
                    w.flag = Some(f);
                    w.label.push(format!(".{f}"));
                    w
                })
            })
            .collect();
    }
    // Element indices (`imm` after a value operand): every index the widths allow.
    let index_imm = sig.operands.iter().enumerate().any(|(k, o)| o.kind == OperandKind::Imm && !o.optional && k > 0);
    if index_imm {
        variants = variants
            .into_iter()
            .flat_map(|v| {
                let wide = v.types.get(row_var.unwrap_or(0)).copied().flatten().and_then(|t| tables.type_info(t)).map_or(0, |t| t.bits);
                let part = sig.results.first().and_then(|r| match r.kind {
                    OperandKind::TypeVar(x) => v.types[x as usize],
                    OperandKind::Fixed(t) => Some(VtId(t)),
                    _ => None,
                });
                let part = part.and_then(|t| tables.type_info(t)).map_or(0, |t| t.bits);
                let count = wide.checked_div(part).map_or(1, |n| n.max(1) as i64);
                (0..count).map(move |i| {
                    let mut w = v.clone();
                    w.index = Some(i);
                    w.label.push(format!("index {i}"));
                    w
                })
            })
            .collect();
    }
    // Lane indices: the first and last lane as constants, and a register.
    if sig.type_vars.iter().enumerate().any(|(var, _)| used(var) && lane_var(var)) {
        let lanes = tables.type_info(vt).map_or(1, |t| t.lanes as i64);
        variants = variants
            .into_iter()
            .flat_map(|v| {
                let mut forms = vec![Lane::Constant(0)];
                if lanes > 1 {
                    forms.push(Lane::Constant(lanes - 1));
                }
                forms.push(Lane::Register);
                forms.into_iter().map(move |l| {
                    let mut w = v.clone();
                    w.lane = Some(l);
                    w.label.push(match l {
                        Lane::Constant(i) => format!("lane {i}"),
                        Lane::Register => "lane in a register".into(),
                    });
                    w
                })
            })
            .collect();
    }

    let mut probes = Vec::new();
    for (n, v) in variants.iter().enumerate() {
        let kernel = format!("{prefix}{n}");
        match build(tables, sm, op, vt, v, &kernel) {
            Ok(Some(p)) => probes.push(Probe { skip: v.skip.clone(), ..p }),
            Ok(None) => {}
            Err(reason) => skipped.push(Skipped { label: v.label.join(" "), reason }),
        }
    }
    if probes.is_empty() {
        let why = skipped.first().map(|s| if s.label.is_empty() { s.reason.clone() } else { format!("{}: {}", s.label, s.reason) });
        return Plan::Unprobeable(why.unwrap_or_else(|| format!("no instance of {} on {} exists", op.name, vt_name(tables, vt))));
    }
    Plan::Probes { probes, skipped }
}

/// The type of a signature operand under a variant.
fn type_of(kind: OperandKind, v: &Variant) -> Option<VtId> {
    match kind {
        OperandKind::TypeVar(x) => v.types.get(x as usize).copied().flatten(),
        OperandKind::Fixed(t) => Some(VtId(t)),
        _ => None,
    }
}

fn build(tables: &TargetTables, sm: &SmTables, op: &OpcodeInfo, vt: VtId, v: &Variant, kernel: &str) -> Result<Option<Probe>, String> {
    let sig = &op.signature;
    let mut k = Kernel::new(tables, sm)?;
    let result_types: Vec<VtId> = sig
        .results
        .iter()
        .map(|r| type_of(r.kind, v).ok_or_else(|| format!("{} has a result of no single type", op.name)))
        .collect::<Result<_, _>>()?;
    let vector_lanes = |t: VtId| tables.type_info(t).map_or(1, |i| i.lanes as usize);

    // The PHI shape: a value and a variadic list of blocks.
    if sig.operands.len() == 2 && sig.operands[1].kind == OperandKind::Block && sig.operands[1].variadic {
        let ty = type_of(sig.operands[0].kind, v).ok_or("PHI operand without a type")?;
        let a = k.operand(ty)?;
        let b = k.operand(ty)?;
        let bool_ty = tables.types.iter().map(|t| VtId(t.id)).find(|&t| in_class(tables, t, TypeClass::Bool) && sm.type_supported(t)).ok_or("no bool register type")?;
        let c = k.operand(bool_ty)?;
        k.lines.push(format!("    BRCOND %{c}, %bb.1, %bb.2"));
        k.lines.push("  bb.1:".into());
        k.lines.push("    BR %bb.2".into());
        k.lines.push("  bb.2:".into());
        let r = k.fresh();
        k.lines.push(format!("    %{r}:{} = {} %{a}, %bb.0, %{b}, %bb.1", vt_name(tables, ty), op.name));
        let line = k.line_of(k.lines.len() - 1);
        k.store(&r);
        k.lines.push("    RET".into());
        return Ok(Some(Probe { label: v.label.join(" "), kernel: kernel.into(), mir: k.text(kernel), line, skip: None }));
    }

    let mut operands: Vec<String> = Vec::new();
    let mut carry_producer: Option<String> = None;
    let mut blocks = 0;
    for (i, s) in sig.operands.iter().enumerate() {
        if s.optional {
            continue;
        }
        match s.kind {
            OperandKind::TypeVar(_) | OperandKind::Fixed(_) => {
                let ty = type_of(s.kind, v).ok_or_else(|| format!("operand {} of {} has no type", i + 1, op.name))?;
                let count = if s.variadic {
                    // One element per lane of the vector result, less the fixed operands.
                    let lanes = result_types.first().map_or(1, |&t| vector_lanes(t));
                    let fixed = sig.operands.iter().filter(|o| !o.variadic && type_of(o.kind, v).is_some()).count();
                    (lanes / vector_lanes(ty)).saturating_sub(fixed)
                } else {
                    1
                };
                for _ in 0..count {
                    let lane_index = v.lane.is_some() && matches!(s.kind, OperandKind::TypeVar(x) if sig.type_vars[x as usize].class == TypeClass::ScalarInt);
                    let name = if lane_index {
                        match v.lane {
                            Some(Lane::Constant(c)) => k.constant(ty, c),
                            _ => k.operand(ty)?,
                        }
                    } else if in_class(tables, ty, TypeClass::Bool) && flag_operand(tables, sm, op, i) {
                        // A carry in: made by the carry-producing opcode, just before.
                        carry_producer = Some(String::new());
                        String::new()
                    } else {
                        k.operand(ty)?
                    };
                    operands.push(if name.is_empty() { name } else { format!("%{name}") });
                }
            }
            OperandKind::Imm => {
                if op.name == "ARG" {
                    let index = k.params.len();
                    k.params.push((format!("a{index}"), vt_name(tables, vt).into()));
                    operands.push(index.to_string());
                } else if op.name == "FRAME_INDEX" {
                    operands.push(k.frame.to_string());
                    k.frame += 1;
                } else if let Some(i) = v.index {
                    operands.push(i.to_string());
                } else {
                    operands.push("1".into());
                }
            }
            OperandKind::FloatImm => operands.push("1.5".into()),
            OperandKind::CondCode => operands.push(v.cc.ok_or("no condition code")?.to_string()),
            OperandKind::Block => {
                blocks += 1;
                operands.push(format!("%bb.{blocks}"));
            }
            OperandKind::Symbol => {
                let ptr = result_types.first().and_then(|&t| tables.type_info(t)).ok_or("a symbol operand without a pointer result")?;
                let space = crate::mir::AddressSpace::ALL.iter().find(|s| s.number() == ptr.addrspace).ok_or_else(|| {
                    format!("no MIR global lives in address space {} (globals are global, shared or const)", ptr.addrspace)
                })?;
                let g = format!("g_{kernel}");
                k.globals.push(format!("{{ name: {g}, space: {}, type: i32 }}", space.name()));
                operands.push(format!("@{g}"));
            }
            OperandKind::ShuffleMask => {
                let lanes = result_types.first().map_or(1, |&t| vector_lanes(t));
                let mask: Vec<String> = (0..lanes).map(|i| i.to_string()).collect();
                operands.push(format!("mask({})", mask.join(", ")));
            }
        }
    }
    if let Some(slot) = carry_producer.as_mut() {
        *slot = carry_in(tables, sm, op, vt, v, &mut k)?;
        for o in operands.iter_mut().filter(|o| o.is_empty()) {
            *o = format!("%{slot}");
        }
    }
    // The instruction itself.
    let mut defs = Vec::new();
    for &t in &result_types {
        defs.push((k.fresh(), t));
    }
    let mut text = String::from("    ");
    if !defs.is_empty() {
        let d: Vec<String> = defs.iter().map(|(n, t)| format!("%{n}:{}", vt_name(tables, *t))).collect();
        let _ = write!(text, "{} = ", d.join(", "));
    }
    text.push_str(op.name);
    if let Some(f) = v.flag {
        let _ = write!(text, ".{f}");
    }
    if !operands.is_empty() {
        let _ = write!(text, " {}", operands.join(", "));
    }
    k.lines.push(text);
    let line = k.line_of(k.lines.len() - 1);
    for (i, (d, _)) in defs.iter().enumerate() {
        if !flag_result(tables, sm, op, i) {
            k.store(d);
        }
    }
    if blocks > 0 {
        // Branch targets: each stores a marker and returns.
        for b in 1..=blocks {
            k.lines.push(format!("  bb.{b}:"));
            if b == 1 {
                let m = k.operand(vt_i32(tables)?)?;
                k.store(&m);
            }
            k.lines.push("    RET".into());
        }
    } else if !op.has(target_desc::tables::props::TERMINATOR) {
        k.lines.push("    RET".into());
    }
    Ok(Some(Probe { label: v.label.join(" "), kernel: kernel.into(), mir: k.text(kernel), line, skip: None }))
}

fn vt_i32(tables: &TargetTables) -> Result<VtId, String> {
    tables.types.iter().find(|t| t.kind == TypeKind::Int && t.bits == 32).map(|t| VtId(t.id)).ok_or_else(|| "no 32-bit integer type".into())
}

/// Makes the carry consumed by `op`: the opcode with `op`'s operands less the carry and
/// the same results whose pattern produces the carry as a flag, Legal on `vt`; among
/// several, the one sharing the longest name prefix with `op` (ADDE takes ADDC's).
fn carry_in(tables: &TargetTables, sm: &SmTables, op: &OpcodeInfo, vt: VtId, v: &Variant, k: &mut Kernel<'_>) -> Result<String, String> {
    let sig = &op.signature;
    let wanted: Vec<OperandKind> = sig.operands.iter().filter(|o| !(matches!(o.kind, OperandKind::TypeVar(x) if sig.type_vars[x as usize].class == TypeClass::Bool))).map(|o| o.kind).collect();
    let same_shape = |p: &OpcodeInfo| {
        let kinds: Vec<OperandKind> = p.signature.operands.iter().map(|o| o.kind).collect();
        let results: Vec<OperandKind> = p.signature.results.iter().map(|o| o.kind).collect();
        kinds == wanted && results == sig.results.iter().map(|o| o.kind).collect::<Vec<_>>() && p.signature.type_vars == sig.type_vars
    };
    let prefix = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let producer = tables
        .opcodes
        .iter()
        .filter(|p| p.id != op.id && same_shape(p))
        .filter(|p| tables.decide(sm, target_desc::tables::OpcodeId(p.id), vt).action == Action::Legal)
        .filter(|p| (0..p.signature.results.len()).any(|r| flag_result(tables, sm, p, r)))
        .max_by_key(|p| (prefix(p.name, op.name), std::cmp::Reverse(p.id)))
        .ok_or_else(|| format!("no Legal opcode on {} produces the carry {} consumes", vt_name(tables, vt), op.name))?;
    let mut operands = Vec::new();
    for s in producer.signature.operands {
        let ty = type_of(s.kind, v).ok_or("carry producer operand without a type")?;
        operands.push(format!("%{}", k.operand(ty)?));
    }
    let mut defs = Vec::new();
    let mut carry = String::new();
    for (i, r) in producer.signature.results.iter().enumerate() {
        let ty = type_of(r.kind, v).ok_or("carry producer result without a type")?;
        let name = k.fresh();
        if flag_result(tables, sm, producer, i) {
            carry = name.clone();
        }
        defs.push(format!("%{name}:{}", vt_name(tables, ty)));
    }
    k.lines.push(format!("    {} = {} {}", defs.join(", "), producer.name, operands.join(", ")));
    Ok(carry)
}

/// The probes of a pattern matching more than one generic instruction (a tree, or
/// folded constants) on `sm`: a kernel holding exactly the pattern's shape, each nested
/// node an instruction defining the operand it stands for, each leaf a fresh value (a
/// parameter or a load; a constant for a folded immediate: the largest value a range
/// admits, a mask of half the width), so that selection has that shape to match. A pattern comparing values is probed with every
/// condition code the table calls Legal on the compared type. The caller checks that the
/// pattern is the one selected.
pub fn tree_plan(tables: &TargetTables, sm: &SmTables, p: &target_desc::tables::PatternInfo, prefix: &str) -> Plan {
    // Condition codes: the compared type is the first value operand of the node holding
    // the code.
    let mut codes: Vec<Option<&'static str>> = vec![None];
    if let Some(k) = p.operands.iter().position(|(_, o)| *o == PatternOperand::CondCode) {
        let compared = p.leaf_slot(k).and_then(|(n, _)| {
            p.nodes[n].args.iter().find_map(|a| match *a {
                target_desc::tables::NodeArg::Leaf(l) => p.operands[l as usize].1.value_type(),
                target_desc::tables::NodeArg::Node(m) => p.nodes[m as usize].ty,
            })
        });
        let Some(compared) = compared else { return Plan::Unprobeable(format!("{}: the compared type is unknown", p.name)) };
        codes = tables
            .cond_codes
            .iter()
            .filter(|c| tables.decide_cc(sm, target_desc::tables::CondCodeId(c.id), VtId(compared)).action == Action::Legal)
            .map(|c| Some(c.name))
            .collect();
        if codes.is_empty() {
            return Plan::Unprobeable(format!("no condition code is Legal on {}", vt_name(tables, VtId(compared))));
        }
    }
    let mut probes = Vec::new();
    for (n, cc) in codes.into_iter().enumerate() {
        let kernel = format!("{prefix}{n}");
        match build_tree(tables, sm, p, cc, &kernel) {
            Ok(probe) => probes.push(probe),
            Err(reason) => return Plan::Unprobeable(reason),
        }
    }
    Plan::Probes { probes, skipped: Vec::new() }
}

fn build_tree(tables: &TargetTables, sm: &SmTables, p: &target_desc::tables::PatternInfo, cc: Option<&'static str>, kernel: &str) -> Result<Probe, String> {
    use target_desc::tables::{NodeArg, PatternResult};
    if p.any_results || p.hook.is_some() {
        return Err(format!("{}: a tree with a variable number of results or an emission hook is not probed", p.name));
    }
    let mut k = Kernel::new(tables, sm)?;
    let mut blocks = 0;
    // Each leaf's MIR operand text.
    let mut leaves: Vec<String> = Vec::new();
    for (index, (name, kind)) in p.operands.iter().enumerate() {
        let bits = |t: u8| tables.type_info(VtId(t)).map_or(32, |i| i.bits as u32);
        let is_float = |t: u8| tables.type_info(VtId(t)).is_some_and(|i| i.kind == TypeKind::Float);
        let constant = |k: &mut Kernel<'_>, t: u8, value: i128| -> String {
            let v = k.fresh();
            let op = if is_float(t) { "FCONSTANT" } else { "CONSTANT" };
            k.lines.push(format!("    %{v}:{} = {op} {value}", vt_name(tables, VtId(t))));
            format!("%{v}")
        };
        let text = match *kind {
            PatternOperand::Reg(t) => format!("%{}", k.operand(VtId(t))?),
            PatternOperand::Imm(t) if is_float(t) => {
                let v = k.fresh();
                k.lines.push(format!("    %{v}:{} = FCONSTANT 1.5", vt_name(tables, VtId(t))));
                format!("%{v}")
            }
            PatternOperand::Imm(t) => constant(&mut k, t, 3),
            PatternOperand::ImmIs(t, n) if is_float(t) => {
                let v = k.fresh();
                k.lines.push(format!("    %{v}:{} = FCONSTANT 0x{:X}", vt_name(tables, VtId(t)), n));
                format!("%{v}")
            }
            PatternOperand::ImmIs(t, n) => constant(&mut k, t, n as i128),
            PatternOperand::ImmRange(t, _, max) => constant(&mut k, t, max as i128),
            PatternOperand::LowMask(t) => constant(&mut k, t, (1i128 << (bits(t) / 2)) - 1),
            PatternOperand::Literal => {
                let node = p.leaf_slot(index).and_then(|(n, j)| tables.opcode_info(target_desc::tables::OpcodeId(p.nodes[n].opcode)).map(|o| (o, j)));
                let float = node.and_then(|(o, j)| o.signature.operands.get(j)).map(|o| o.kind == OperandKind::FloatImm);
                if node.is_some_and(|(o, _)| o.name == "FRAME_INDEX") {
                    k.frame += 1;
                    (k.frame - 1).to_string()
                } else if node.is_some_and(|(o, j)| o.name == "ARG" && j == 0) {
                    // A nested ARG reads a kernel parameter of its own, of the node's type.
                    let ty = p.leaf_slot(index).and_then(|(n, _)| p.nodes[n].ty).ok_or_else(|| format!("{}: ARG `{name}` in a node without a type", p.name))?;
                    let at = k.params.len();
                    k.params.push((format!("a{at}"), vt_name(tables, VtId(ty)).into()));
                    at.to_string()
                } else if float == Some(true) {
                    "1.5".into()
                } else {
                    "1".into()
                }
            }
            PatternOperand::LiteralIs(n) => n.to_string(),
            PatternOperand::CondCode => cc.ok_or("no condition code")?.to_string(),
            PatternOperand::Block => {
                blocks += 1;
                format!("%bb.{blocks}")
            }
            PatternOperand::SymbolIs(s) => format!("@{s}"),
            // A module global in the space of the node that names it (`GLOBAL_ADDR(g) : p3`).
            PatternOperand::Symbol => {
                let ty = p.leaf_slot(index).and_then(|(n, _)| p.nodes[n].ty).ok_or_else(|| format!("{}: symbol `{name}` in a node without a type", p.name))?;
                let ptr = tables.type_info(VtId(ty)).ok_or("a symbol of an unknown type")?;
                let space = crate::mir::AddressSpace::ALL.iter().find(|s| s.number() == ptr.addrspace).ok_or_else(|| {
                    format!("no MIR global lives in address space {} (globals are global, shared or const)", ptr.addrspace)
                })?;
                let g = format!("g_{kernel}_{index}");
                k.globals.push(format!("{{ name: {g}, space: {}, type: i32 }}", space.name()));
                format!("@{g}")
            }
            PatternOperand::Flag | PatternOperand::Values => {
                return Err(format!("{}: operand `{name}` ({kind:?}) is not probed in a tree", p.name));
            }
        };
        leaves.push(text);
    }
    // Nested nodes, innermost first: each defines the value its parent's operand reads.
    fn emit(tables: &TargetTables, p: &target_desc::tables::PatternInfo, n: usize, leaves: &[String], k: &mut Kernel<'_>) -> Vec<String> {
        let node = &p.nodes[n];
        let mut operands = Vec::new();
        for arg in node.args {
            match *arg {
                NodeArg::Leaf(l) => operands.push(leaves[l as usize].clone()),
                NodeArg::Node(m) => {
                    let inner = emit(tables, p, m as usize, leaves, k);
                    let v = k.fresh();
                    let name = tables.opcode_info(target_desc::tables::OpcodeId(p.nodes[m as usize].opcode)).map_or("?", |o| o.name);
                    let flags: String = p.nodes[m as usize].flags.iter().map(|f| format!(".{f}")).collect();
                    let ty = p.nodes[m as usize].ty.map_or("?", |t| vt_name(tables, VtId(t)));
                    k.lines.push(format!("    %{v}:{ty} = {name}{flags} {}", inner.join(", ")));
                    operands.push(format!("%{v}"));
                }
            }
        }
        operands
    }
    let operands = emit(tables, p, 0, &leaves, &mut k);
    let root = tables.opcode_info(target_desc::tables::OpcodeId(p.opcode)).ok_or("unknown root opcode")?;
    let mut defs = Vec::new();
    for r in p.results {
        let ty = match r {
            PatternResult::Reg(t) => VtId(*t),
            PatternResult::Flag => return Err(format!("{}: a flag result is not probed in a tree", p.name)),
        };
        defs.push((k.fresh(), ty));
    }
    let mut text = String::from("    ");
    if !defs.is_empty() {
        let d: Vec<String> = defs.iter().map(|(n, t)| format!("%{n}:{}", vt_name(tables, *t))).collect();
        let _ = write!(text, "{} = ", d.join(", "));
    }
    text.push_str(root.name);
    for f in p.flags {
        let _ = write!(text, ".{f}");
    }
    if !operands.is_empty() {
        let _ = write!(text, " {}", operands.join(", "));
    }
    k.lines.push(text);
    let line = k.line_of(k.lines.len() - 1);
    for (d, _) in &defs {
        k.store(d);
    }
    if blocks > 0 {
        for b in 1..=blocks {
            k.lines.push(format!("  bb.{b}:"));
            k.lines.push("    RET".into());
        }
    } else if !root.has(target_desc::tables::props::TERMINATOR) {
        k.lines.push("    RET".into());
    }
    let label = cc.map_or(String::new(), |c| format!("cc {c}"));
    Ok(Probe { label, kernel: kernel.into(), mir: k.text(kernel), line, skip: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probes(sm: &str, op: &str, vt: &str) -> Vec<Probe> {
        let t = tables::nvptx();
        let sm = t.find_sm(sm).unwrap();
        let info = t.opcode_info(t.opcode(op).unwrap()).unwrap();
        match plan(t, sm, info, t.vt(vt).unwrap(), "k") {
            Plan::Probes { probes, .. } => probes,
            Plan::Unprobeable(why) => panic!("{op} {vt}: {why}"),
        }
    }

    fn probed_line(p: &Probe) -> &str {
        p.mir.lines().nth(p.line - 1).unwrap().trim()
    }

    #[test]
    fn a_carry_consumer_follows_its_producer() {
        let ps = probes("50", "ADDE", "i64");
        assert_eq!(ps.len(), 1);
        let p = &ps[0];
        assert!(probed_line(p).starts_with("%v7:i64, %v8:i1 = ADDE %v1, %v2, %v6"), "{}", p.mir);
        let before = p.mir.lines().nth(p.line - 2).unwrap().trim();
        assert!(before.starts_with("%v5:i64, %v6:i1 = ADDC "), "{}", p.mir);
        // The carry out of ADDE is a flag: it is not stored.
        assert!(!p.mir.contains("STORE %v8"), "{}", p.mir);
        let subs = probes("50", "SUBE", "i32");
        assert!(subs[0].mir.contains("= SUBC "), "SUBE takes SUBC's borrow: {}", subs[0].mir);
    }

    #[test]
    fn compares_take_every_legal_condition_code() {
        let t = tables::nvptx();
        let sm = t.find_sm("80").unwrap();
        for (vt, expected) in [("f32", 20), ("i32", 10), ("p3", 10)] {
            let ps = probes("80", "SETCC", vt);
            let legal = t.cond_codes.iter().filter(|c| t.decide_cc(sm, target_desc::tables::CondCodeId(c.id), t.vt(vt).unwrap()).action == Action::Legal).count();
            assert_eq!(ps.len(), legal, "{vt}");
            assert_eq!(ps.len(), expected, "{vt}");
            assert!(ps.iter().all(|p| probed_line(p).contains("= SETCC ")));
        }
    }

    #[test]
    fn memory_is_probed_in_every_address_space() {
        let labels: Vec<String> = probes("80", "LOAD", "i32").into_iter().map(|p| p.label).collect();
        assert_eq!(labels, ["P=p0", "P=p1", "P=p3", "P=p4", "P=p5", "P=p101"]);
        // p101 is a register type from sm_70 only.
        assert_eq!(probes("60", "STORE", "f32").len(), 5);
        assert_eq!(probes("60", "ATOMIC_LOAD_ADD", "i32").len(), 5);
    }

    #[test]
    fn vectors_get_one_element_per_lane_and_every_lane_form() {
        let ps = probes("80", "BUILD_VECTOR", "v4i8");
        // i8 is no register type: the elements come in wider integers.
        let labels: Vec<&str> = ps.iter().map(|p| p.label.as_str()).collect();
        assert!(labels.contains(&"E=i32"), "{labels:?}");
        let p = ps.iter().find(|p| p.label == "E=i32").unwrap();
        assert_eq!(probed_line(p).matches('%').count(), 5, "{}", probed_line(p));
        let lanes: Vec<String> = probes("80", "EXTRACT_VECTOR_ELT", "v2f16").into_iter().map(|p| p.label).collect();
        assert!(lanes.iter().any(|l| l.ends_with("lane 0")) && lanes.iter().any(|l| l.ends_with("lane 1")) && lanes.iter().any(|l| l.ends_with("lane in a register")), "{lanes:?}");
    }

    #[test]
    fn a_tree_pattern_is_probed_with_its_own_shape() {
        let t = tables::nvptx();
        let sm = t.find_sm("80").unwrap();
        let p = t.patterns.iter().find(|p| p.name == "PTR_MAD_WIDE_S32_IMM_p1").unwrap();
        let Plan::Probes { probes, .. } = tree_plan(t, sm, p, "k") else { panic!("unprobeable") };
        assert_eq!(probes.len(), 1);
        let mir = &probes[0].mir;
        // Leaves first (the largest constant the range admits), then the nested nodes
        // innermost first, then the root.
        for line in ["%v3:i64 = CONSTANT 2147483647", "%v4:i64 = SIGN_EXTEND %v2", "%v5:i64 = MUL %v4, %v3"] {
            assert!(mir.contains(line), "{line}:\n{mir}");
        }
        assert_eq!(probed_line(&probes[0]), "%v6:p1 = PTR_ADD %v1, %v5");
        // A compare in a tree is probed with every Legal condition code.
        let setp = t.patterns.iter().find(|p| p.name == "SETP_AND_i32").unwrap();
        let Plan::Probes { probes, .. } = tree_plan(t, sm, setp, "k") else { panic!("unprobeable") };
        assert_eq!(probes.len(), 10);
        assert!(probes.iter().all(|p| probed_line(p).contains("= AND %")), "{}", probes[0].mir);
        // A mask stands for its length: half the width.
        let bfe = t.patterns.iter().find(|p| p.name == "BFE_IMM_i64").unwrap();
        let Plan::Probes { probes, .. } = tree_plan(t, sm, bfe, "k") else { panic!("unprobeable") };
        assert!(probes[0].mir.contains("CONSTANT 4294967295"), "{}", probes[0].mir);
    }

    #[test]
    fn cells_without_an_instance_say_why() {
        let t = tables::nvptx();
        let sm = t.find_sm("80").unwrap();
        let info = t.opcode_info(t.opcode("GLOBAL_ADDR").unwrap()).unwrap();
        match plan(t, sm, info, t.vt("p0").unwrap(), "k") {
            Plan::Unprobeable(why) => assert!(why.contains("address space 0"), "{why}"),
            Plan::Probes { .. } => panic!("a p0 global exists?"),
        }
        // Storage-only operands are skipped, with the reason, unless the row is theirs.
        let info = t.opcode_info(t.opcode("SINT_TO_FP").unwrap()).unwrap();
        let Plan::Probes { probes: conversions, .. } = plan(t, sm, info, t.vt("f32").unwrap(), "k") else { panic!() };
        let i128 = conversions.iter().find(|p| p.label == "I=i128").unwrap();
        assert!(i128.skip.as_deref().is_some_and(|s| s.contains("storage-only")), "{:?}", i128.skip);
        assert!(conversions.iter().filter(|p| p.label != "I=i128").all(|p| p.skip.is_none()));
        // (Other widths are generated too; the verifier drops them as invalid.)
        assert!(probes("80", "BITCAST", "i128").iter().any(|p| p.label == "S=i128" && p.skip.is_none()));
    }
}
