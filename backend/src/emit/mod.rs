//! PTX emission: the last stage, from selected, PHI-free MIR to PTX text.
//!
//! Writes the module header (`.version` from the SM's minimum PTX ISA in the
//! description; `.target`;
//! `.address_size 64`), globals, each function's signature and kernel attributes,
//! per-class register declarations (class prefixes and PTX types come from the
//! description's register classes), block labels, and each machine instruction by
//! filling its pattern's template. A branch to the block that follows is dropped so the
//! block falls through. Output is deterministic: registers are numbered by first
//! appearance per class, and nothing depends on hash order.

use std::collections::BTreeMap;
use std::fmt::Write;

use target_desc::tables::{SmTables, TargetTables, TypeKind, VtId};

pub mod call_abi;
pub mod frame;
mod template;

use template::Piece;
pub use template::Templates;

use crate::diagnostics::MirError;
use crate::mir::{AddressSpace, Function, FunctionKind, InitValue, Module, Opcode, Operand, ValueId};

/// A PTX identifier for a MIR name: characters PTX does not allow become `_$_` (as in
/// LLVM's NVPTX backend), and a leading digit gets a `_` prefix.
pub fn sanitize(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            if i == 0 && c.is_ascii_digit() {
                out.push('_');
            }
            out.push(c);
        } else {
            out.push_str("_$_");
        }
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// PTX data type of a memory object of type `vt` (globals): `.b32`, `.f32`, `.b8`.
fn data_type(tables: &TargetTables, vt: VtId) -> (String, u32) {
    let Some(t) = tables.type_info(vt) else { return (".b8".into(), 1) };
    let (elem, lanes) = if t.kind == TypeKind::Vector {
        (tables.type_info(VtId(t.elem)).copied().unwrap_or(*t), t.lanes as u32)
    } else {
        (*t, 1)
    };
    let bits = elem.bits.max(8).next_power_of_two();
    let ty = match elem.kind {
        TypeKind::Float if bits == 32 || bits == 64 => format!(".f{bits}"),
        TypeKind::Pointer => ".u64".into(),
        _ => format!(".b{bits}"),
    };
    (ty, lanes)
}

fn hex_float(tables: &TargetTables, vt: u8, operand: &Operand) -> Option<String> {
    let t = tables.type_info(VtId(vt))?;
    if t.kind != TypeKind::Float {
        return None;
    }
    Some(match (t.bits, operand) {
        (32, Operand::Float(x)) if t.mantissa == 23 => format!("0f{:08X}", (*x as f32).to_bits()),
        (32, Operand::Int(bits)) => format!("0f{:08X}", bits.get() as u32),
        (64, Operand::Float(x)) if t.mantissa == 52 => format!("0d{:016X}", x.to_bits()),
        (64, Operand::Int(bits)) => format!("0d{:016X}", bits.get() as u64),
        (bits @ 1..=63, Operand::Float(x)) => format!("0x{:0width$X}", encode_float(*x, bits as u32, t.mantissa as u32), width = (bits as usize).div_ceil(4)),
        (_, Operand::Int(bits)) => format!("0x{bits:X}"),
        _ => return None,
    })
}

/// The bits of `x` in a binary floating-point format of `bits` bits with `mantissa`
/// fraction bits (f16: 16, 10; bf16: 16, 7), rounded to nearest even. `x` is rounded
/// once, straight from its f64 value.
fn encode_float(x: f64, bits: u32, mantissa: u32) -> u64 {
    let exponent_bits = bits - 1 - mantissa;
    let bias = (1i64 << (exponent_bits - 1)) - 1;
    let sign = u64::from(x.is_sign_negative()) << (bits - 1);
    let exp_all_ones = ((1u64 << exponent_bits) - 1) << mantissa;
    if x.is_nan() {
        return sign | exp_all_ones | 1 << mantissa.saturating_sub(1);
    }
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
    if a.is_infinite() {
        return sign | exp_all_ones;
    }
    // a = m * 2^e with 1 <= m < 2 (f64 subnormals are far below any narrower format).
    let e = ((a.to_bits() >> 52) & 0x7FF) as i64 - 1023;
    let min_exp = 1 - bias;
    let (field, scaled) = if e < min_exp {
        // Subnormal: units of 2^(min_exp - mantissa).
        (0u64, a * 2f64.powi((mantissa as i64 - min_exp) as i32))
    } else {
        (e.wrapping_add(bias) as u64, (a / 2f64.powi(e as i32) - 1.0) * 2f64.powi(mantissa as i32))
    };
    // Scaling by powers of two is exact, so this is the only rounding.
    let q = scaled.round_ties_even() as u64;
    // A carry out of the fraction moves to the exponent (and a subnormal may become normal).
    let value = (field << mantissa) + q;
    if value >= exp_all_ones {
        return sign | exp_all_ones;
    }
    sign | value
}

/// The PTX ISA version one function needs: the SM's minimum from the description,
/// raised to each machine instruction's `min_ptx` and each register type's
/// class-member requirement (both derived from the features gating them). The module
/// declares the largest over its functions.
fn function_ptx_version(f: &Function, tables: &TargetTables, sm: &SmTables) -> u16 {
    let mut version = sm.min_ptx;
    // Each type's requirement once: a function has a few types and many values.
    let mut seen = vec![false; sm.type_class.len()];
    for v in &f.values {
        match seen.get_mut(v.ty.0 as usize) {
            Some(true) => continue,
            Some(slot) => *slot = true,
            None => {}
        }
        if let Some((class, _)) = tables.register_type(sm, v.ty) {
            if let Some(k) = class.members.iter().position(|&m| m == v.ty.0) {
                version = version.max(class.member_ptx.get(k).copied().unwrap_or(0));
            }
        }
    }
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        if let Opcode::Machine(m) = inst.opcode {
            let Some(p) = tables.patterns.get(m as usize) else { continue };
            version = version.max(p.min_ptx);
            if p.flag_groups.is_empty() {
                continue;
            }
            // A flag-group member's `when` condition can need a newer ISA than the
            // pattern itself (`atom.acquire` needs PTX 6.0).
            if let Ok(members) = tables.flag_members(p, &inst.flags, tables.sm_index(sm)) {
                version = members.iter().fold(version, |v, (_, member)| v.max(member.min_ptx));
            }
        }
    }
    version
}

/// One function's share of the module's PTX, made as soon as the function's passes are
/// done ([`emit_function_part`]), so that a compile need not hold every function until
/// the last one is through the pipeline; [`assemble_module`] puts the parts together.
pub struct FunctionPtx {
    /// The PTX ISA version the function needs.
    version: u16,
    /// A device function's header is also its prototype in the module's head.
    device: bool,
    /// The header and the whole definition; or the error, and whether it was the
    /// header's (those come first, as the head is written before any definition).
    emitted: Result<(String, String), (bool, MirError)>,
}

/// The PTX of function number `index` of its module (`index` keeps its labels and frame
/// apart from the other functions').
pub fn emit_function_part(f: &Function, index: usize, tables: &TargetTables, sm: &SmTables, file: &str, templates: &Templates<'_>) -> FunctionPtx {
    let emitted = match function_header(f, tables, sm) {
        Err(e) => Err((true, function_error(f, file, e))),
        Ok(header) => match emit_function(f, index, &header, tables, sm, templates) {
            Ok(text) => Ok((header, text)),
            Err(e) => Err((false, function_error(f, file, e))),
        },
    };
    FunctionPtx { version: function_ptx_version(f, tables, sm), device: f.kind == FunctionKind::Device, emitted }
}

/// The module's PTX from its globals and its functions' parts (in module order): the
/// head (the PTX version the functions need, the target, the globals and a prototype
/// of every device function), then the definitions. Errors: those of the functions'
/// headers if any, else those of their definitions, in module order.
pub fn assemble_module(globals: &[crate::mir::Global], parts: Vec<FunctionPtx>, tables: &TargetTables, sm: &SmTables, file: &str) -> Result<String, Vec<MirError>> {
    for headers_only in [true, false] {
        let errors: Vec<MirError> = parts.iter().filter_map(|p| p.emitted.as_ref().err().filter(|(header, _)| *header == headers_only).map(|(_, e)| e.clone())).collect();
        if !errors.is_empty() {
            return Err(errors);
        }
    }
    let version = parts.iter().map(|p| p.version).fold(sm.min_ptx, u16::max);
    let mut head = module_head(globals, version, tables, sm, file);
    // Prototypes: PTX needs a function declared before a call to it, whatever the order
    // of the definitions.
    let mut texts = Vec::with_capacity(parts.len());
    for part in parts {
        let Ok((header, text)) = part.emitted else { unreachable!("errors returned above") };
        if part.device {
            head.push_str(&header);
            head.push_str(";\n\n");
        }
        texts.push(text);
    }
    Ok(assemble(head, texts))
}

/// The whole module's PTX.
pub fn emit_module(module: &Module, tables: &TargetTables, sm: &SmTables, file: &str) -> Result<String, Vec<MirError>> {
    emit_module_jobs(module, tables, sm, file, 1)
}

/// [`emit_module`] with the functions' text produced on up to `jobs` threads; the
/// output is the same byte for byte.
pub fn emit_module_jobs(module: &Module, tables: &TargetTables, sm: &SmTables, file: &str, jobs: usize) -> Result<String, Vec<MirError>> {
    let indexed: Vec<(usize, &Function)> = module.functions.iter().enumerate().collect();
    let templates = Templates::new(tables);
    let parts = crate::parallel::map_ordered(&indexed, jobs, |&(index, f)| emit_function_part(f, index, tables, sm, file, &templates));
    assemble_module(&module.globals, parts, tables, sm, file)
}

/// [`emit_module_jobs`] on a module it may take apart: each function is dropped once
/// its text is written, so the compiled module and its PTX are not held together.
pub fn emit_module_owned(mut module: Module, tables: &TargetTables, sm: &SmTables, file: &str, jobs: usize) -> Result<String, Vec<MirError>> {
    let functions = std::mem::take(&mut module.functions);
    let templates = Templates::new(tables);
    let parts = crate::parallel::map_owned(functions, jobs, || (), |_, index, f| emit_function_part(&f, index, tables, sm, file, &templates));
    assemble_module(&module.globals, parts, tables, sm, file)
}

fn function_error(f: &Function, file: &str, message: String) -> MirError {
    MirError { file: file.to_string(), line: f.loc.line as usize, column: 1, message, context: Some(format!("function @{}", f.name)), source_line: None }
}

/// The head and the functions' texts as one string.
fn assemble(head: String, mut texts: Vec<String>) -> String {
    let total = head.len() + texts.iter().map(String::len).sum::<usize>();
    // A text that is most of the module (a big kernel's) becomes the output, what comes
    // before it moved in at its front: a copy of it would be as many fresh pages again.
    let longest = (0..texts.len()).max_by_key(|&i| (texts[i].len(), std::cmp::Reverse(i)));
    let (mut out, rest) = match longest {
        Some(k) if 2 * texts[k].len() > total => {
            let mut out = std::mem::take(&mut texts[k]);
            out.reserve(total - out.len());
            let before: String = std::iter::once(head.as_str()).chain(texts[..k].iter().map(String::as_str)).collect();
            out.insert_str(0, &before);
            (out, k + 1)
        }
        _ => {
            let mut out = String::with_capacity(total);
            out.push_str(&head);
            (out, 0)
        }
    };
    for text in &texts[rest..] {
        out.push_str(text);
    }
    out
}

/// Everything before the function definitions but the prototypes: the PTX version and
/// target, and the globals.
fn module_head(globals: &[crate::mir::Global], version: u16, tables: &TargetTables, sm: &SmTables, file: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "//\n// Generated by ptxc from {file}\n//\n");
    let _ = writeln!(out, ".version {}.{}", version / 10, version % 10);
    let _ = writeln!(out, ".target {}", sm.name);
    let _ = writeln!(out, ".address_size 64\n");
    for g in globals {
        let space = match g.space {
            AddressSpace::Global => ".global",
            AddressSpace::Shared => ".shared",
            AddressSpace::Const => ".const",
        };
        let (ty, lanes) = data_type(tables, g.ty);
        let bytes = tables.type_info(g.ty).map_or(1, |t| (t.bits as u32).div_ceil(8));
        let align = g.align.unwrap_or(bytes.max(1));
        let count = g.count * lanes;
        let array = if count > 1 { format!("[{count}]") } else { String::new() };
        let _ = write!(out, ".visible {space} .align {align} {ty} {}{array}", sanitize(&g.name));
        if let Some(init) = &g.init {
            let items: Vec<String> = init
                .iter()
                .map(|v| match v {
                    InitValue::Int(i) => i.to_string(),
                    InitValue::Float(x) => hex_float(tables, g.ty.0, &Operand::Float(*x)).unwrap_or_else(|| x.to_string()),
                })
                .collect();
            if count > 1 {
                let _ = write!(out, " = {{{}}}", items.join(", "));
            } else {
                let _ = write!(out, " = {}", items.join(", "));
            }
        }
        out.push_str(";\n");
    }
    if !globals.is_empty() {
        out.push('\n');
    }
    out
}

/// `prefix`, then `n` in decimal, without `core::fmt` (see [`function_header`]).
pub(crate) fn push_number_after(out: &mut String, prefix: &str, n: impl itoa::Integer) {
    out.push_str(prefix);
    out.push_str(itoa::Buffer::new().format(n));
}

/// `.visible .func (RETURN) NAME(PARAMS)` or `.visible .entry NAME(PARAMS)`.
/// Written straight into the header (a module of thousands of small functions spent a
/// few strings per parameter here).
fn function_header(f: &Function, tables: &TargetTables, sm: &SmTables) -> Result<String, String> {
    let name = sanitize(&f.name);
    let mut out = String::new();
    let directive = if f.kind == FunctionKind::Kernel { ".entry" } else { ".func" };
    let returns = call_abi::return_parameter(tables, &f.returns);
    out.push_str(".visible ");
    out.push_str(directive);
    out.push(' ');
    out.push_str(&returns);
    out.push_str(&name);
    out.push('(');
    for (i, p) in f.params.iter().enumerate() {
        out.push_str(if i == 0 { "\n\t.param " } else { ",\n\t.param " });
        // A scalar without a register (i8, bf16 before sm_80) is declared by its bits and
        // read into its carrier register (`ld.param.u8`). A kernel parameter no register
        // holds whole (an i128 before sm_70, a v4f32, an i1) is declared as its bytes and
        // read in parts (legalize/abi.rs); device functions have legal signatures by now.
        let info = tables.type_info(p.ty);
        let bytes = crate::legalize::abi::store_bytes(tables, p.ty);
        match (tables.register_type(sm, p.ty), info) {
            (Some((c, _)), _) if c.param_carrier.is_some() => push_number_after(&mut out, ".u", 8 * bytes),
            (Some((c, _)), _) => out.push_str(c.ptx_type),
            (None, Some(t)) if t.kind == target_desc::tables::TypeKind::Int && matches!(t.bits, 8 | 16 | 32 | 64) => push_number_after(&mut out, ".u", usize::from(t.bits)),
            (None, Some(t)) if t.kind == target_desc::tables::TypeKind::Float && matches!(t.bits, 16 | 32 | 64) => push_number_after(&mut out, ".b", usize::from(t.bits)),
            (None, Some(_)) if crate::legalize::abi::read_as_bytes(tables, sm, p.ty) => {
                let _ = write!(out, ".align {} .b8 {name}_param_{i}[{bytes}]", bytes.next_power_of_two().min(16));
                continue;
            }
            _ => return Err(format!("parameter `{}` has a type that is not a register type on {}", p.name, sm.name)),
        };
        // A kernel's global pointer is declared as one (`.ptr .global`, PTX ISA 2.2), so
        // it is used without a `cvta.to.global`; the alignment of what it points to is
        // not known here, and `.align 1` promises nothing.
        let global = info.is_some_and(|t| t.kind == target_desc::tables::TypeKind::Pointer && t.addrspace == crate::mir::AddressSpace::Global.number());
        if f.kind == FunctionKind::Kernel && global {
            let _ = write!(out, " .ptr .{} .align 1", crate::mir::AddressSpace::Global.name());
        }
        out.push(' ');
        out.push_str(&name);
        push_number_after(&mut out, "_param_", i);
    }
    out.push_str(if f.params.is_empty() { ")" } else { "\n)" });
    Ok(out)
}

/// Register names of one function: numbered per class by first appearance.
struct Registers<'a> {
    f: &'a Function,
    tables: &'a TargetTables,
    sm: &'a SmTables,
    /// Per value id: (class index, number), once the value has a register.
    names: Vec<Option<(u8, u32)>>,
    /// Registers given so far, per class index.
    counts: Vec<u32>,
}

impl Registers<'_> {
    /// Appends the register of `v` to `out`, giving it one on first use.
    fn write(&mut self, v: ValueId, out: &mut String) -> Result<(), String> {
        let (class, number) = match self.names.get(v.0 as usize).copied().flatten() {
            Some(r) => r,
            None => {
                let ty = self.f.value(v).ty;
                let class = self.sm.type_class.get(ty.0 as usize).copied().unwrap_or(target_desc::tables::NO_CLASS);
                if class == target_desc::tables::NO_CLASS {
                    let t = self.tables.type_info(ty).map(|t| t.name).unwrap_or("?");
                    return Err(format!("%{} has type {t}, which is not a register type on {}", self.f.value(v).name, self.sm.name));
                }
                if self.counts.len() <= class as usize {
                    self.counts.resize(class as usize + 1, 0);
                }
                let count = &mut self.counts[class as usize];
                *count += 1;
                if let Some(slot) = self.names.get_mut(v.0 as usize) {
                    *slot = Some((class, *count));
                }
                (class, *count)
            }
        };
        out.push_str(self.tables.register_classes[class as usize].prefix);
        out.push_str(itoa::Buffer::new().format(number));
        Ok(())
    }

    fn name(&mut self, v: ValueId) -> Result<String, String> {
        let mut s = String::new();
        self.write(v, &mut s)?;
        Ok(s)
    }
}

/// Where the current block's last two lines start in the function's text. Lines go
/// straight into the text, `\t` before and `;` after (scope braces of call sequences
/// take none); only the block's last two can still change, when the branch to the next
/// block is dropped or inverted. (A buffer of the block's lines and a copy of the
/// function's text were a third of emission's memory on a large kernel.)
#[derive(Default)]
struct BlockLines {
    /// Starts of the second-to-last and the last line (valid as far as `count` says).
    starts: [usize; 2],
    /// Lines of the current block so far.
    count: usize,
}

impl BlockLines {
    fn start_block(&mut self) {
        self.count = 0;
    }

    /// Adds the lines of an instruction's filled template, each trimmed and without
    /// its `;` (an empty template, UNDEF, adds none).
    fn push_text(&mut self, out: &mut String, text: &str) {
        // Lines found bytewise: templates are short, mostly one line, and
        // `str::split`'s searcher cost more than the scan.
        let mut rest = text;
        loop {
            let end = rest.bytes().position(|c| c == b'\n');
            let line = rest[..end.unwrap_or(rest.len())].trim().trim_end_matches(';');
            if !line.is_empty() {
                self.push_line(out, line);
            }
            match end {
                Some(k) => rest = &rest[k + 1..],
                None => break,
            }
        }
    }

    /// Adds one line as it is.
    fn push_line(&mut self, out: &mut String, line: &str) {
        self.starts = [self.starts[1], out.len()];
        self.count += 1;
        out.push('\t');
        out.push_str(line);
        out.push_str(if line == "{" || line == "}" { "\n" } else { ";\n" });
    }

    /// The last line (`back` 1) or the one before it (`back` 2), as it was added.
    fn last<'t>(&self, out: &'t str, back: usize) -> &'t str {
        let end = if back == 1 { out.len() } else { self.starts[1] };
        let line = &out[self.starts[2 - back] + 1..end];
        let line = line.strip_suffix('\n').unwrap_or(line);
        line.strip_suffix(';').unwrap_or(line)
    }

    /// Falls through instead of branching to the block that follows (`next`):
    /// `bra NEXT` goes, and `@p bra NEXT; bra F` becomes `@!p bra F`.
    fn fall_through_to(&mut self, out: &mut String, next: &str) {
        fn jump_target(line: &str) -> Option<&str> {
            line.strip_prefix("bra.uni ").or_else(|| line.strip_prefix("bra "))
        }
        if self.count >= 1 && jump_target(self.last(out, 1)) == Some(next) {
            out.truncate(self.starts[1]);
            self.count -= 1;
            return;
        }
        if self.count < 2 {
            return;
        }
        let (cond, last) = (self.last(out, 2), self.last(out, 1));
        let guarded = cond.strip_prefix('@').and_then(|c| c.split_once(' '));
        if let (Some((predicate, branch)), Some(target)) = (guarded, jump_target(last)) {
            if branch.strip_prefix("bra ") == Some(next) {
                let replacement = match predicate.strip_prefix('!') {
                    Some(p) => format!("@{p} bra {target}"),
                    None => format!("@!{predicate} bra {target}"),
                };
                out.truncate(self.starts[0]);
                self.count -= 2;
                self.push_line(out, &replacement);
            }
        }
    }
}

fn emit_function(f: &Function, index: usize, header: &str, tables: &TargetTables, sm: &SmTables, templates: &Templates<'_>) -> Result<String, String> {
    let name = sanitize(&f.name);
    let sm_index = tables.sm_index(sm);
    let mut regs = Registers { f, tables, sm, names: vec![None; f.values.len()], counts: Vec::new() };
    // Scratch registers of templates (`{tmp.i32}`): one per name and instruction.
    let mut scratch_count: BTreeMap<u8, u32> = BTreeMap::new();
    let write_label = |out: &mut String, number: u32| {
        out.push_str("$L__BB");
        out.push_str(itoa::Buffer::new().format(index));
        out.push('_');
        out.push_str(itoa::Buffer::new().format(number));
    };
    let frame_layout = frame::layout(f);
    let depot = frame::depot_name(index);
    let frame_address = |k: i128| -> Result<String, String> {
        let offset = usize::try_from(k).ok().and_then(|k| frame_layout.offsets.get(k)).ok_or_else(|| format!("frame object {k} does not exist"))?;
        Ok(if *offset == 0 { depot.clone() } else { format!("{depot}+{offset}") })
    };

    // The function's text, and one instruction's text and operands: buffers reused
    // across the function (emission allocated per operand and per line before). The
    // text is reserved at a typical size (a line of PTX per instruction, about 32
    // bytes) so a large function's is not grown by doubling from nothing.
    let mut body = String::with_capacity(32 * f.blocks.iter().map(|b| b.insts.len() + 1).sum::<usize>());
    let mut text = String::new();
    // A hook's lines, written into one buffer for the whole function.
    let mut hook_lines = String::new();
    let mut lines = BlockLines::default();
    let mut operands: Vec<&Operand> = Vec::new();
    let mut next_label = String::new();
    for (b, block) in f.blocks.iter().enumerate() {
        if b > 0 {
            write_label(&mut body, block.number);
            body.push_str(":\n");
        }
        lines.start_block();
        for inst in &block.insts {
            let Opcode::Machine(m) = inst.opcode else {
                return Err(format!("{} in {} was not selected", inst.opcode.name(tables), block.label()));
            };
            let p = &tables.patterns[m as usize];
            operands.clear();
            operands.extend(inst.operands.iter().filter(|o| !matches!(o, Operand::Align(_))));
            if let Some(hook) = p.hook {
                let mut values = Vec::new();
                let mut callee = None;
                for o in &operands {
                    match o {
                        Operand::Value(v) => values.push(call_abi::Value { register: regs.name(*v)?, ty: f.value(*v).ty }),
                        Operand::Symbol(s) => callee = Some(sanitize(s)),
                        _ => return Err(format!("{}: unexpected operand for hook `{hook}`", p.name)),
                    }
                }
                let mut results = Vec::new();
                for d in &inst.defs {
                    results.push(call_abi::Value { register: regs.name(*d)?, ty: f.value(*d).ty });
                }
                let mut scratch = |ty: VtId| -> Result<String, String> {
                    let class = sm.type_class.get(ty.0 as usize).copied().unwrap_or(target_desc::tables::NO_CLASS);
                    if class == target_desc::tables::NO_CLASS {
                        return Err(format!("scratch type is not a register type on {}", sm.name));
                    }
                    let count = scratch_count.entry(class).or_insert(0);
                    *count += 1;
                    Ok(format!("{}t{count}", tables.register_classes[class as usize].prefix))
                };
                let input = call_abi::HookInput { tables, sm, callee, operands: values, results, scratch: &mut scratch };
                hook_lines.clear();
                call_abi::expand(hook, input, &mut hook_lines)?;
                for line in hook_lines.lines() {
                    lines.push_line(&mut body, line);
                }
                continue;
            }
            text.clear();
            // The template's pieces: made once per module for a template without flag
            // groups; a flag-group template is resolved for this instruction's flags.
            let resolved: std::sync::Arc<str>;
            let resolved_pieces: Vec<Piece<'_>>;
            let pieces: &[Piece<'_>] = if p.flag_groups.is_empty() {
                templates.of(m as usize)
            } else {
                resolved = templates.resolved(m as usize, &inst.flags, sm_index)?;
                resolved_pieces = template::split(&resolved, p.operands);
                &resolved_pieces
            };
            let mut scratch: BTreeMap<&str, String> = BTreeMap::new();
            for piece in pieces {
                match *piece {
                    Piece::Text(t) => text.push_str(t),
                    Piece::UnmatchedClose => return Err(format!("{}: unmatched `}}` in the template", p.name)),
                    Piece::Scratch(key) => {
                        if let Some(name) = scratch.get(key) {
                            text.push_str(name);
                        } else {
                            let ty_name = target_desc::tables::scratch_type_name(&key[4..]);
                            let ty = tables.vt(ty_name).ok_or_else(|| format!("{}: unknown scratch type in {{{key}}}", p.name))?;
                            let class = sm.type_class.get(ty.0 as usize).copied().unwrap_or(target_desc::tables::NO_CLASS);
                            if class == target_desc::tables::NO_CLASS {
                                return Err(format!("{}: scratch type {ty_name} is not a register type on {}", p.name, sm.name));
                            }
                            let count = scratch_count.entry(class).or_insert(0);
                            *count += 1;
                            let name = format!("{}t{count}", tables.register_classes[class as usize].prefix);
                            text.push_str(&name);
                            scratch.insert(key, name);
                        }
                    }
                    Piece::Def => regs.write(*inst.defs.first().ok_or("template uses {d} without a result")?, &mut text)?,
                    Piece::Result(k, key) => {
                        let d = inst.defs.get(k).ok_or_else(|| format!("{}: template uses {{{key}}} but the instruction has {} results", p.name, inst.defs.len()))?;
                        regs.write(*d, &mut text)?
                    }
                    Piece::Suffix => text.push_str(p.suffix),
                    Piece::Param(k) => match operands.get(k) {
                        Some(Operand::Int(i)) => {
                            let _ = write!(text, "{name}_param_{i}");
                        }
                        _ => return Err(format!("{}: {{param}} needs an ARG index (operand {k})", p.name)),
                    },
                    Piece::Frame => match inst.frame_operand(tables).and_then(|k| inst.operands.get(k)) {
                        Some(Operand::Int(k)) => text.push_str(&frame_address(k.get())?),
                        _ => return Err(format!("{}: {{frame}} needs a FRAME_INDEX", p.name)),
                    },
                    Piece::CondCode(key) => {
                        let cc = operands.iter().find_map(|o| if let Operand::CondCode(c) = o { Some(*c) } else { None });
                        let info = cc.and_then(|c| tables.cond_code_info(c)).ok_or("template uses {cc} without a condition code")?;
                        let compared = p.operands.iter().find_map(|(_, k)| if let target_desc::tables::PatternOperand::Reg(t) = k { tables.type_info(VtId(*t)) } else { None });
                        let is_float = compared.is_some_and(|t| t.kind == TypeKind::Float);
                        let form = if key == "ccs" { info.int_type } else if is_float { info.float_form } else { info.int_form };
                        text.push_str(form.ok_or_else(|| format!("condition code `{}` has no {} form for {}", info.name, if is_float { "float" } else { "integer" }, p.name))?);
                    }
                    Piece::Unknown(operand_name) => return Err(format!("{}: unknown placeholder {{{operand_name}}}", p.name)),
                    Piece::Operand(k, operand_name) => {
                        match operands.get(k) {
                            Some(Operand::Value(v)) => regs.write(*v, &mut text)?,
                            Some(Operand::Block(n)) => write_label(&mut text, *n),
                            Some(Operand::Symbol(s)) => text.push_str(&sanitize(s)),
                            Some(o @ (Operand::Int(_) | Operand::Float(_))) => {
                                let imm_type = match p.operands[k].1 {
                                    target_desc::tables::PatternOperand::Imm(t) | target_desc::tables::PatternOperand::ImmIs(t, _) => Some(t),
                                    // A float literal (FCONSTANT's `fimm`) is written in the result's format.
                                    // (The literal's node in the tree, and its operand there.)
                                    target_desc::tables::PatternOperand::Literal => p.leaf_slot(k).and_then(|(n, j)| {
                                        let node = &p.nodes[n];
                                        let sig = tables.opcode_info(target_desc::tables::OpcodeId(node.opcode))?.signature;
                                        let float = sig.operands.get(j).is_some_and(|o| o.kind == target_desc::tables::OperandKind::FloatImm);
                                        float.then(|| if n == 0 { p.result() } else { node.ty }).flatten()
                                    }),
                                    _ => None,
                                };
                                match (imm_type.and_then(|t| hex_float(tables, t, o)), o) {
                                    (Some(h), _) => text.push_str(&h),
                                    (None, Operand::Int(i)) => text.push_str(itoa::Buffer::new().format(i.get())),
                                    (None, Operand::Float(x)) => {
                                        let _ = write!(text, "0d{:016X}", x.to_bits());
                                    }
                                    _ => unreachable!(),
                                }
                            }
                            _ => return Err(format!("{}: operand `{operand_name}` is missing", p.name)),
                        }
                    }
                }
            }
            lines.push_text(&mut body, &text);
        }
        if let Some(next) = f.blocks.get(b + 1) {
            next_label.clear();
            write_label(&mut next_label, next.number);
            lines.fall_through_to(&mut body, &next_label);
        }
    }
    // What comes before the body is known once it is written (the registers it
    // numbered): it is moved in at the body's front, not the body copied after it.
    let mut out = String::new();
    out.push_str(header);
    out.push('\n');
    if let Some(m) = &f.attributes.maxntid {
        let _ = writeln!(out, ".maxntid {}", m.iter().map(u32::to_string).collect::<Vec<_>>().join(", "));
    }
    if let Some(m) = f.attributes.minnctapersm {
        let _ = writeln!(out, ".minnctapersm {m}");
    }
    if let Some(m) = f.attributes.maxnreg {
        let _ = writeln!(out, ".maxnreg {m}");
    }
    out.push_str("{\n");
    if !f.frame.is_empty() {
        let _ = writeln!(out, "\t.local .align {} .b8 {depot}[{}];", frame_layout.align, frame_layout.size);
    }
    // Register declarations pushed piecewise: `writeln!` cost a few hundred
    // instructions a line, a good part of emitting a module of small functions.
    let declare = |out: &mut String, c: &target_desc::tables::RegisterClassInfo, scratch: &str, count: usize| {
        out.push_str("\t.reg ");
        out.push_str(c.ptx_type);
        out.push(' ');
        out.push_str(c.prefix);
        out.push_str(scratch);
        push_number_after(out, "<", count + 1);
        out.push_str(">;\n");
    };
    for (class, count) in regs.counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        declare(&mut out, &tables.register_classes[class], "", *count as usize);
    }
    for (class, count) in &scratch_count {
        declare(&mut out, &tables.register_classes[*class as usize], "t", *count as usize);
    }
    out.push('\n');
    body.reserve(out.len() + 3);
    body.insert_str(0, &out);
    body.push_str("}\n\n");
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One block's lines as emission writes them into the text before `next`.
    fn block(before: &str, texts: &[&str], next: &str) -> String {
        let mut out = String::from(before);
        let mut lines = BlockLines::default();
        lines.start_block();
        for t in texts {
            lines.push_text(&mut out, t);
        }
        lines.fall_through_to(&mut out, next);
        out
    }

    /// The branch to the block that follows goes (a conditional one is inverted over the
    /// jump after it), whatever came before the block in the text; other branches stay.
    #[test]
    fn the_branch_to_the_next_block_is_dropped_or_inverted() {
        // Conditional branch to the next block, jump elsewhere: one inverted branch.
        let out = block("$L__BB0_0:\n", &["add.s32 %r1, %r2, 1;\n@%p1 bra $L__BB0_2;", "bra $L__BB0_3;"], "$L__BB0_2");
        assert_eq!(out, "$L__BB0_0:\n\tadd.s32 %r1, %r2, 1;\n\t@!%p1 bra $L__BB0_3;\n");
        let out = block("", &["@!%p2 bra L2", "bra L3"], "L2");
        assert_eq!(out, "\t@%p2 bra L3;\n");
        // A jump to the next block goes; `bra.uni` too.
        assert_eq!(block("x\n", &["mov.u32 %r1, 0;", "bra L1;"], "L1"), "x\n\tmov.u32 %r1, 0;\n");
        assert_eq!(block("", &["bra.uni L1"], "L1"), "");
        // Branches elsewhere, and a lone conditional branch, stay as they are.
        assert_eq!(block("", &["@%p1 bra L2;", "bra L3;"], "L4"), "\t@%p1 bra L2;\n\tbra L3;\n");
        assert_eq!(block("", &["@%p1 bra L2;"], "L2"), "\t@%p1 bra L2;\n");
        // Only this block's lines count: a branch at the end of the text before it is not
        // the block's.
        assert_eq!(block("\tbra L1;\n", &[], "L1"), "\tbra L1;\n");
        // Scope braces take no `;`, and an empty template adds no line.
        assert_eq!(block("", &["{", "", "call f;", "}"], "L1"), "\t{\n\tcall f;\n\t}\n");
    }

    /// Any 16 bits assemble, so ptxas cannot catch a wrong f16 immediate; the expected
    /// values are IEEE binary16 encodings (Python's `struct.pack('<e', x)`).
    #[test]
    fn f16_immediates_are_correctly_rounded_binary16() {
        let cases = [
            (1.0, 0x3C00),
            (-2.0, 0xC000),
            (65504.0, 0x7BFF),
            (0.1, 0x2E66),
            (1.0 / 3.0, 0x3555),
            (2f64.powi(-14), 0x0400),          // smallest normal
            (2f64.powi(-24), 0x0001),          // smallest subnormal
            (3.0 * 2f64.powi(-25), 0x0002),    // subnormal tie rounds to even
            (0.5 * 2f64.powi(-24), 0x0000),    // tie to even zero
            (1.000_488_281_25, 0x3C00),        // normal tie rounds to even
            (1.000_732_421_875, 0x3C01),       // above the tie rounds up
            (65520.0, 0x7C00),                 // overflows to infinity
            (f64::INFINITY, 0x7C00),
            (f64::NEG_INFINITY, 0xFC00),
        ];
        for (x, bits) in cases {
            assert_eq!(encode_float(x, 16, 10), bits, "{x}");
        }
        assert_eq!(encode_float(f64::NAN, 16, 10) & 0x7C00, 0x7C00);
        assert_ne!(encode_float(f64::NAN, 16, 10) & 0x03FF, 0, "NaN keeps a mantissa bit");
    }

    /// bf16 is the top half of an f32, rounded to nearest even (expected values from
    /// the f32 bits: 1.5 = 0x3FC00000, 1/3 = 0x3EAAAAAB, ...).
    #[test]
    fn bf16_immediates_are_correctly_rounded() {
        let cases = [
            (1.0, 0x3F80),
            (1.5, 0x3FC0),
            (-2.0, 0xC000),
            (1.0 / 3.0, 0x3EAB),                // 0x3EAA_AAAB rounds up
            (1.0 + 2f64.powi(-8), 0x3F80),     // tie rounds to even
            (1.0 + 3.0 * 2f64.powi(-8), 0x3F82), // tie rounds to even (up)
            (3.389_531_389_251_535_5e38, 0x7F7F), // the largest finite bf16
            (3.4e38, 0x7F80),                  // above it, rounds to infinity
            (2f64.powi(-133), 0x0001),         // smallest subnormal
            (f64::NEG_INFINITY, 0xFF80),
        ];
        for (x, bits) in cases {
            assert_eq!(encode_float(x, 16, 7), bits, "{x}");
        }
        let t = tables::nvptx();
        let bf16 = t.vt("bf16").unwrap();
        assert_eq!(hex_float(t, bf16.0, &Operand::Float(1.5)).as_deref(), Some("0x3FC0"));
        let f16 = t.vt("f16").unwrap();
        assert_eq!(hex_float(t, f16.0, &Operand::Float(1.5)).as_deref(), Some("0x3E00"));
    }

    #[test]
    fn names_become_valid_ptx_identifiers() {
        assert_eq!(sanitize("saxpy"), "saxpy");
        assert_eq!(sanitize("my.kernel"), "my_$_kernel");
        assert_eq!(sanitize("1st"), "_1st");
        assert_eq!(sanitize("a-b$c_d"), "a_$_b$c_d");
        assert_eq!(sanitize(""), "_");
    }
}
