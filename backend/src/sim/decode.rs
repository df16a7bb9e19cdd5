//! From the syntax tree to the runnable program: names resolved, modifiers
//! interpreted, state-space objects laid out, and every instruction checked against
//! the SM and the `.version` (the description's `ptx-isa.yaml` requirements).
//!
//! Where it sits: after [`super::parser`]; [`super::exec`] runs its [`Program`].
//! Decoding happens once per file, so a run of many inputs pays for it once.
//!
//! What is rejected here (each with the PTX position): unknown instructions and
//! modifiers, operands of the wrong shape, undeclared names, duplicate labels, and
//! instructions the target lacks. Rules ptxas enforces that do not change what a
//! correct program computes (register type matching in every corner, for one) are not
//! all repeated: the simulator's input is meant to have passed ptxas.

use std::collections::HashMap;

use target_desc::tables::TargetTables;

use super::isa::*;
use super::parser::{self, AddrBase as PAddrBase, Init, Literal, Operand, Stmt, VarDecl};
use super::SimError;
use crate::interp::float::{self, FloatFormat, Rounding};

/// A variable of the global, const or shared space.
#[derive(Clone, Debug)]
pub struct DataObject {
    pub name: String,
    /// The PTX element type word (`f32`, `b8`).
    pub ty: String,
    /// Offset in the const bank or the shared window (0 for global objects).
    pub offset: u32,
    pub size: u64,
    pub align: u32,
    /// Initial bytes (zeros when there is no initializer).
    pub init: Vec<u8>,
    /// Addresses of symbols inside the initializer: `(byte offset, symbol, addend,
    /// generic, width in bytes)`, patched when the objects are placed.
    pub relocations: Vec<(u32, Sym, i64, bool, u32)>,
}

/// A parameter of a function: its size, alignment and scalar type (if not an array).
#[derive(Clone, Debug)]
pub struct ParamSpec {
    pub name: String,
    pub size: u32,
    pub align: u32,
    pub ty: Option<Ty>,
    /// Offset in the kernel parameter image (kernels only).
    pub offset: u32,
    /// `.ptr .global`: the kernel receives a global address.
    pub pointee: Option<Space>,
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    /// A declaration without a body.
    pub declared_only: bool,
    pub insts: Vec<Inst>,
    /// Each register slot's name (for messages); a `.b128` register has two slots.
    pub slot_names: Vec<String>,
    pub params: Vec<ParamSpec>,
    pub returns: Vec<ParamSpec>,
    /// Sizes of the frame's parameter objects: inputs (device functions), returns, then
    /// `.param` variables declared in call scopes.
    pub frame_params: Vec<u32>,
    /// Local variables: `(offset in the frame, size, name)`.
    pub locals: Vec<(u32, u32, String)>,
    pub local_size: u32,
    pub kernel_param_size: u32,
    pub max_threads: Option<u64>,
    pub at: u32,
}

/// A whole decoded PTX file.
pub struct Program {
    pub file: String,
    pub text: String,
    pub lines: super::lexer::LineIndex,
    pub version: (u32, u32),
    /// The SM the file was decoded for (the `.target` or an explicit one).
    pub sm: String,
    pub address_size: u32,
    pub functions: Vec<Function>,
    pub globals: Vec<DataObject>,
    pub consts: Vec<DataObject>,
    pub const_size: u32,
    pub shared: Vec<DataObject>,
    pub shared_size: u32,
    /// The `.extern .shared` array whose size is set at launch, by index in `shared`.
    pub dynamic_shared: Option<usize>,
}

impl Program {
    pub fn function(&self, name: &str) -> Option<(usize, &Function)> {
        self.functions.iter().enumerate().find(|(_, f)| f.name == name)
    }
}

/// One requirement of the description's `ptx_isa` table.
#[derive(Clone, Debug)]
pub struct Requirement {
    /// The opcode and the modifier words that must all be present.
    pub opcode: String,
    pub words: Vec<String>,
    /// The lowest SM (with every SM implying it) and PTX version.
    pub sm: String,
    pub ptx: (u32, u32),
    /// `target-desc/nvptx/ptx-isa.yaml:12`.
    pub source: String,
}

/// What instructions are checked against.
pub struct Target<'t> {
    pub tables: &'t TargetTables,
    pub sm: &'t target_desc::tables::SmTables,
    pub requirements: Vec<Requirement>,
}

impl Target<'_> {
    /// Whether the target SM is `name` or implies it.
    pub fn sm_at_least(&self, name: &str) -> bool {
        let Some(goal) = self.tables.sms.iter().position(|s| s.name == name) else { return false };
        let Some(start) = self.tables.sms.iter().position(|s| s.name == self.sm.name) else { return false };
        let mut stack = vec![start];
        let mut seen = vec![false; self.tables.sms.len()];
        while let Some(i) = stack.pop() {
            if i == goal {
                return true;
            }
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            stack.extend(self.tables.sms[i].implies.iter().map(|&j| j as usize));
        }
        false
    }
}

#[derive(Clone, Copy, Debug)]
enum Binding {
    Reg { slot: u32, ty: Ty },
    Sym(Sym, Space),
    Label(u32),
}

struct Module<'a> {
    version: (u32, u32),
    target: &'a Target<'a>,
    address_size: u32,
    globals: Vec<DataObject>,
    consts: Vec<DataObject>,
    const_size: u32,
    shared: Vec<DataObject>,
    shared_size: u32,
    dynamic_shared: Option<usize>,
    symbols: HashMap<String, Binding>,
    function_names: HashMap<String, u32>,
}

/// Decodes a parsed module for `target`.
pub fn decode(module: &parser::Module, target: &Target, text: &str, file: &str) -> Result<Program, SimError> {
    let Some(((major, minor), version_at)) = module.version else {
        return Err(SimError::syntax(0, "the file has no `.version` directive".into()));
    };
    let Some((target_words, target_at)) = &module.target else {
        return Err(SimError::syntax(0, "the file has no `.target` directive".into()));
    };
    let file_sm = target_words.first().cloned().unwrap_or_default();
    let Some(file_sm_tables) = target.tables.find_sm(&file_sm) else {
        let names: Vec<&str> = target.tables.sms.iter().map(|s| s.name).collect();
        return Err(SimError::requirement(*target_at, format!("unknown target `{file_sm}` (the description knows {})", names.join(", "))));
    };
    if file_sm_tables.name != target.sm.name && !target.sm_at_least(file_sm_tables.name) {
        return Err(SimError::requirement(
            *target_at,
            format!("the file targets {}, which {} does not implement (ptxas: SM version specified by .target is higher than default SM version assumed)", file_sm_tables.name, target.sm.name),
        ));
    }
    let version = (major, minor);
    let sm_ptx = (u32::from(target.sm.min_ptx / 10), u32::from(target.sm.min_ptx % 10));
    let file_sm_ptx = (u32::from(file_sm_tables.min_ptx / 10), u32::from(file_sm_tables.min_ptx % 10));
    if version < file_sm_ptx {
        return Err(SimError::requirement(
            version_at,
            format!("{} requires PTX ISA .version {}.{} or later; the file says {major}.{minor}", file_sm_tables.name, file_sm_ptx.0, file_sm_ptx.1),
        ));
    }
    let _ = sm_ptx;
    let mut m = Module {
        version,
        target,
        address_size: module.address_size,
        globals: Vec::new(),
        consts: Vec::new(),
        const_size: 0,
        shared: Vec::new(),
        shared_size: 0,
        dynamic_shared: None,
        symbols: HashMap::new(),
        function_names: HashMap::new(),
    };
    for (k, f) in module.functions.iter().enumerate() {
        if let Some(&previous) = m.function_names.get(&f.name) {
            let prev = &module.functions[previous as usize];
            // A declaration followed by the definition is fine.
            if prev.body.is_some() && f.body.is_some() {
                return Err(SimError::syntax(f.at, format!("function `{}` is defined twice", f.name)));
            }
            if f.body.is_some() {
                m.function_names.insert(f.name.clone(), k as u32);
            }
        } else {
            m.function_names.insert(f.name.clone(), k as u32);
        }
    }
    for decl in &module.vars {
        m.module_variable(decl)?;
    }
    let mut functions = Vec::with_capacity(module.functions.len());
    for f in &module.functions {
        functions.push(m.function(f)?);
    }
    // Calls name functions by index of the first declaration with that name; point
    // them at the definition.
    for f in &mut functions {
        for inst in &mut f.insts {
            if let Op::Call(call) = &mut inst.op {
                if let Some(callee) = call.callee.as_mut() {
                    let name = &module.functions[*callee as usize].name;
                    *callee = m.function_names[name];
                }
            }
        }
    }
    Ok(Program {
        file: file.to_string(),
        text: text.to_string(),
        lines: super::lexer::LineIndex::new(text),
        version,
        sm: target.sm.name.to_string(),
        address_size: m.address_size,
        functions,
        globals: m.globals,
        consts: m.consts,
        const_size: m.const_size,
        shared: m.shared,
        shared_size: m.shared_size,
        dynamic_shared: m.dynamic_shared,
    })
}

/// Size of one element of a declaration (`.v4 .f32` is 16).
fn element_size(decl: &VarDecl) -> Result<u32, SimError> {
    let ty = Ty::from_word(&decl.ty).ok_or_else(|| SimError::unsupported(decl.at, format!("unknown type `.{}`", decl.ty)))?;
    Ok(ty.bytes().max(1) * decl.vector)
}

fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align.max(1)) * align.max(1)
}

impl<'a> Module<'a> {
    fn module_variable(&mut self, decl: &VarDecl) -> Result<(), SimError> {
        let space = Space::from_word(&decl.space).ok_or_else(|| SimError::unsupported(decl.at, format!("variables of the .{} space are not supported here", decl.space)))?;
        for name in &decl.names {
            let object = self.data_object(decl, name)?;
            let sym = self.place(space, object, decl.linkage == parser::Linkage::Extern && name.dims.first() == Some(&None), name.at)?;
            if self.symbols.insert(name.name.clone(), Binding::Sym(sym, space)).is_some() {
                return Err(SimError::syntax(name.at, format!("`{}` is declared twice", name.name)));
            }
        }
        Ok(())
    }

    /// Lays out a variable of `space`, returning its symbol.
    fn place(&mut self, space: Space, mut object: DataObject, dynamic: bool, at: u32) -> Result<Sym, SimError> {
        let limit = u64::from(u32::MAX);
        match space {
            Space::Global => {
                self.globals.push(object);
                Ok(Sym::Global(self.globals.len() as u32 - 1))
            }
            Space::Const => {
                let offset = align_up(u64::from(self.const_size), u64::from(object.align));
                if offset + object.size > limit {
                    return Err(SimError::unsupported(at, "the const space is larger than 4 GiB".into()));
                }
                object.offset = offset as u32;
                self.const_size = (offset + object.size) as u32;
                self.consts.push(object);
                Ok(Sym::Const(offset as u32))
            }
            Space::Shared => {
                let offset = align_up(u64::from(self.shared_size), u64::from(object.align));
                if offset + object.size > limit {
                    return Err(SimError::unsupported(at, "the shared space is larger than 4 GiB".into()));
                }
                object.offset = offset as u32;
                self.shared_size = (offset + object.size) as u32;
                self.shared.push(object);
                if dynamic {
                    self.dynamic_shared = Some(self.shared.len() - 1);
                }
                Ok(Sym::Shared(offset as u32))
            }
            _ => Err(SimError::unsupported(at, format!("a module variable of the .{} space", space.name()))),
        }
    }

    fn data_object(&self, decl: &VarDecl, name: &parser::DeclName) -> Result<DataObject, SimError> {
        let element = element_size(decl)?;
        let ty = Ty::from_word(&decl.ty).unwrap_or(Ty::B8);
        let mut count: u64 = 1;
        for (k, d) in name.dims.iter().enumerate() {
            count = count.saturating_mul(match d {
                Some(n) => *n,
                None if k == 0 => match &name.init {
                    Some(Init::List(items, _)) => items.len() as u64,
                    _ => 0,
                },
                None => return Err(SimError::syntax(name.at, "only the first array dimension may be left open".into())),
            });
        }
        let size = count.saturating_mul(u64::from(element));
        if size > 1 << 32 {
            return Err(SimError::unsupported(name.at, format!("`{}` is larger than 4 GiB", name.name)));
        }
        let align = decl.align.unwrap_or(u64::from(element)).max(1) as u32;
        let mut object = DataObject { name: name.name.clone(), ty: decl.ty.clone(), offset: 0, size, align, init: vec![0; size as usize], relocations: Vec::new() };
        if let Some(init) = &name.init {
            let mut flat = Vec::new();
            flatten_init(init, &mut flat);
            let lane_bytes = ty.bytes().max(1);
            let lanes_total = size / u64::from(lane_bytes);
            if flat.len() as u64 > lanes_total {
                return Err(SimError::syntax(name.at, format!("`{}` has {} initializer values for {lanes_total} elements", name.name, flat.len())));
            }
            for (k, value) in flat.iter().enumerate() {
                let offset = k as u32 * lane_bytes;
                match value {
                    Operand::Imm { value, at } => {
                        let bits = immediate_bits(*value, ty, *at)?;
                        let bytes = bits.to_le_bytes();
                        object.init[offset as usize..(offset + lane_bytes) as usize].copy_from_slice(&bytes[..lane_bytes as usize]);
                    }
                    Operand::Sym { name: target, offset: addend, generic, at } => {
                        let sym = match self.symbols.get(target) {
                            Some(Binding::Sym(sym, _)) => *sym,
                            _ => match self.function_names.get(target) {
                                Some(&f) => Sym::Function(f),
                                None => return Err(SimError::syntax(*at, format!("unknown symbol `{target}` in an initializer"))),
                            },
                        };
                        object.relocations.push((offset, sym, *addend, *generic, lane_bytes));
                    }
                    other => return Err(SimError::syntax(other.at(), "an initializer value is a number or a variable's address".into())),
                }
            }
        }
        Ok(object)
    }

    fn function(&mut self, f: &parser::FunctionDecl) -> Result<Function, SimError> {
        let mut cx = FnCx {
            module: self,
            scopes: vec![HashMap::new()],
            slot_names: Vec::new(),
            frame_params: Vec::new(),
            locals: Vec::new(),
            local_size: 0,
            labels: HashMap::new(),
            insts: Vec::new(),
            wide_registers: false,
        };
        let mut params = Vec::new();
        let mut kernel_param_size = 0u32;
        for decl in &f.params {
            if decl.space != "param" {
                return Err(SimError::unsupported(decl.at, "parameters declared in the .reg space are not supported; use .param".into()));
            }
            for name in &decl.names {
                let spec = param_spec(decl, name, &mut kernel_param_size, f.is_entry)?;
                let sym = if f.is_entry {
                    Sym::KernelParam(spec.offset)
                } else {
                    cx.frame_params.push(spec.size);
                    Sym::FrameParam(cx.frame_params.len() as u32 - 1)
                };
                cx.bind(&name.name, Binding::Sym(sym, Space::Param), name.at)?;
                params.push(spec);
            }
        }
        let mut returns = Vec::new();
        for decl in &f.returns {
            if decl.space != "param" {
                return Err(SimError::unsupported(decl.at, "return values declared in the .reg space are not supported; use .param".into()));
            }
            for name in &decl.names {
                let mut unused = 0;
                let spec = param_spec(decl, name, &mut unused, false)?;
                cx.frame_params.push(spec.size);
                cx.bind(&name.name, Binding::Sym(Sym::FrameParam(cx.frame_params.len() as u32 - 1), Space::Param), name.at)?;
                returns.push(spec);
            }
        }
        let mut max_threads = None;
        for (name, values, at) in &f.attributes {
            match name.as_str() {
                "maxntid" | "reqntid" => {
                    if values.is_empty() || values.len() > 3 {
                        return Err(SimError::syntax(*at, format!("`.{name}` takes one to three numbers")));
                    }
                    max_threads = Some(values.iter().product());
                }
                "minnctapersm" | "maxnreg" | "maxnctapersm" | "noreturn" | "maxclusterrank" | "reqnctapercluster" | "explicitcluster" | "blocksareclusters" | "abi_preserve" | "abi_preserve_control" => {}
                _ => return Err(SimError::syntax(*at, format!("unknown function directive `.{name}`"))),
            }
        }
        let declared_only = f.body.is_none();
        if let Some(body) = &f.body {
            let mut count = 0u32;
            cx.collect_labels(body, &mut count)?;
            cx.statements(body)?;
            // Falling off the end of a function returns.
            cx.insts.push(Inst { op: Op::Ret, guard: None, dsts: vec![], srcs: vec![], addr: None, at: f.at });
        }
        Ok(Function {
            name: f.name.clone(),
            is_entry: f.is_entry,
            declared_only,
            insts: cx.insts,
            slot_names: cx.slot_names,
            params,
            returns,
            frame_params: cx.frame_params,
            locals: cx.locals,
            local_size: cx.local_size,
            kernel_param_size,
            max_threads,
            at: f.at,
        })
    }
}

fn param_spec(decl: &VarDecl, name: &parser::DeclName, offset: &mut u32, kernel: bool) -> Result<ParamSpec, SimError> {
    let element = element_size(decl)?;
    let ty = Ty::from_word(&decl.ty);
    let count: u64 = name.dims.iter().map(|d| d.unwrap_or(0)).product();
    let size = u64::from(element) * count;
    if size > 1 << 16 {
        return Err(SimError::unsupported(name.at, format!("parameter `{}` is larger than 64 KiB", name.name)));
    }
    let align = decl.align.unwrap_or(u64::from(element)).max(1) as u32;
    let start = align_up(u64::from(*offset), u64::from(align)) as u32;
    if kernel {
        *offset = start + size as u32;
    }
    let pointee = decl.pointee.as_ref().map(|(s, _)| Space::from_word(s).unwrap_or(Space::Generic));
    Ok(ParamSpec {
        name: name.name.clone(),
        size: size as u32,
        align,
        ty: if name.dims.is_empty() && decl.vector == 1 { ty } else { None },
        offset: start,
        pointee,
    })
}

fn flatten_init<'i>(init: &'i Init, out: &mut Vec<&'i Operand>) {
    match init {
        Init::Value(v) => out.push(v),
        Init::List(items, _) => items.iter().for_each(|i| flatten_init(i, out)),
    }
}

/// The bits of literal `value` as an operand of type `ty`.
pub fn immediate_bits(value: Literal, ty: Ty, at: u32) -> Result<u64, SimError> {
    let to_format = |format: FloatFormat, x: f64| -> u64 { float::from_f64(format, x) as u64 };
    Ok(match (ty.format(), value) {
        (Some(FloatFormat::F32), Literal::F32(b)) if ty.lanes() == 1 => u64::from(b),
        (Some(FloatFormat::F64), Literal::F64(b)) => b,
        (Some(format), Literal::F32(b)) if ty.lanes() == 1 => to_format(format, f64::from(f32::from_bits(b))),
        (Some(format), Literal::F64(b)) if ty.lanes() == 1 => {
            float::convert(FloatFormat::F64, format, u128::from(b), Rounding::NearestEven) as u64
        }
        (Some(format), Literal::Decimal(x)) if ty.lanes() == 1 => to_format(format, x),
        // Integer literals of 16-bit float types are their bits (`mov.b16` style).
        (Some(FloatFormat::F16 | FloatFormat::BF16), Literal::Int(v)) => v as u64 & 0xFFFF,
        (Some(format), Literal::Int(v)) if ty.lanes() == 1 => to_format(format, v as f64),
        (Some(_), _) => return Err(SimError::syntax(at, format!("an immediate cannot be a .{} operand", ty.name()))),
        (None, Literal::Int(v)) => {
            let bits = ty.bits().min(64);
            (v as u64) & if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 }
        }
        (None, Literal::F32(b)) if !ty.is_signed() && ty.bits() == 32 => u64::from(b),
        (None, Literal::F64(b)) if !ty.is_signed() && ty.bits() == 64 => b,
        (None, _) => return Err(SimError::syntax(at, format!("a float literal cannot be a .{} operand", ty.name()))),
    })
}

/// The modifier words of one instruction, consumed as the decoder recognises them;
/// whatever is left is an error.
struct Words<'w> {
    opcode: &'w str,
    at: u32,
    words: Vec<(&'w str, u32, bool)>,
}

impl<'w> Words<'w> {
    fn new(inst: &'w parser::Inst) -> Words<'w> {
        Words { opcode: &inst.opcode, at: inst.at, words: inst.mods.iter().map(|(w, at)| (w.as_str(), *at, false)).collect() }
    }

    fn has(&mut self, word: &str) -> bool {
        for w in &mut self.words {
            if !w.2 && w.0 == word {
                w.2 = true;
                return true;
            }
        }
        false
    }

    fn one_of(&mut self, options: &[&'static str]) -> Option<&'static str> {
        for w in &mut self.words {
            if !w.2 {
                if let Some(o) = options.iter().find(|o| **o == w.0) {
                    w.2 = true;
                    return Some(o);
                }
            }
        }
        None
    }

    /// The 16-bit source type of a mixed-precision float form (`add.rn.f32.bf16`: exactly
    /// the type words `.f32` then `.f16` or `.bf16`); `None` for any other list of types.
    /// Consumes nothing.
    fn mixed_source(&self) -> Option<Ty> {
        let types: Vec<Ty> = self.words.iter().filter(|w| !w.2).filter_map(|w| Ty::from_word(w.0)).collect();
        match types[..] {
            [Ty::F32, src @ (Ty::F16 | Ty::BF16)] => Some(src),
            _ => None,
        }
    }

    /// Type words, in order.
    fn types(&mut self) -> Vec<Ty> {
        let mut out = Vec::new();
        for w in &mut self.words {
            if !w.2 {
                if let Some(t) = Ty::from_word(w.0) {
                    w.2 = true;
                    out.push(t);
                }
            }
        }
        out
    }

    fn one_type(&mut self) -> Result<Ty, SimError> {
        let types = self.types();
        match types[..] {
            [t] => Ok(t),
            [] => Err(SimError::syntax(self.at, format!("`{}` needs a type such as `.b32`", self.opcode))),
            _ => Err(SimError::syntax(self.at, format!("`{}` takes one type, found {}", self.opcode, types.len()))),
        }
    }

    fn rounding(&mut self) -> Option<Rounding> {
        self.one_of(&["rn", "rz", "rm", "rp"]).map(rounding_of)
    }

    fn space(&mut self) -> Option<Space> {
        for w in &mut self.words {
            if !w.2 {
                if let Some(s) = Space::from_word(w.0) {
                    w.2 = true;
                    return Some(s);
                }
            }
        }
        None
    }

    fn vector(&mut self) -> u32 {
        match self.one_of(&["v2", "v4", "v8"]) {
            Some("v2") => 2,
            Some("v4") => 4,
            Some("v8") => 8,
            _ => 1,
        }
    }

    /// Memory-model and cache qualifiers, which do not change single-threaded results
    /// of the sequentially consistent execution the simulator performs.
    fn ordering_and_hints(&mut self) {
        for w in &mut self.words {
            if !w.2
                && (matches!(
                    w.0,
                    "relaxed" | "acquire" | "release" | "acq_rel" | "weak" | "mmio" | "sc" | "cta" | "gpu" | "sys" | "cluster" | "ca" | "cg" | "cs" | "lu" | "cv" | "wb" | "wt" | "unified"
                ) || w.0.starts_with("L1::")
                    || w.0.starts_with("L2::")
                    || w.0.starts_with("level::"))
            {
                w.2 = true;
            }
        }
    }

    fn finish(&self) -> Result<(), SimError> {
        match self.words.iter().find(|w| !w.2) {
            Some((w, at, _)) => Err(SimError::unsupported(*at, format!("`.{w}` is not a modifier of `{}` the simulator knows", self.opcode))),
            None => Ok(()),
        }
    }
}

fn rounding_of(word: &str) -> Rounding {
    match word {
        "rz" | "rzi" => Rounding::TowardZero,
        "rm" | "rmi" => Rounding::Down,
        "rp" | "rpi" => Rounding::Up,
        _ => Rounding::NearestEven,
    }
}

struct FnCx<'m, 'a> {
    module: &'m mut Module<'a>,
    scopes: Vec<HashMap<String, Binding>>,
    slot_names: Vec<String>,
    frame_params: Vec<u32>,
    locals: Vec<(u32, u32, String)>,
    local_size: u32,
    labels: HashMap<String, u32>,
    insts: Vec<Inst>,
    /// The instruction being decoded takes registers wider than its type (`ld`, `st`,
    /// `cvt`; see [`compatible`]).
    wide_registers: bool,
}

impl FnCx<'_, '_> {
    fn bind(&mut self, name: &str, binding: Binding, at: u32) -> Result<(), SimError> {
        let scope = self.scopes.last_mut().expect("a scope");
        if scope.insert(name.to_string(), binding).is_some() {
            return Err(SimError::syntax(at, format!("`{name}` is declared twice in this scope")));
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        for scope in self.scopes.iter().rev() {
            if let Some(b) = scope.get(name) {
                return Some(*b);
            }
        }
        if let Some(&pc) = self.labels.get(name) {
            return Some(Binding::Label(pc));
        }
        if let Some(b) = self.module.symbols.get(name) {
            return Some(*b);
        }
        self.module.function_names.get(name).map(|&f| Binding::Sym(Sym::Function(f), Space::Generic))
    }

    /// Assigns each label the index of the instruction it precedes.
    fn collect_labels(&mut self, body: &[Stmt], count: &mut u32) -> Result<(), SimError> {
        for s in body {
            match s {
                Stmt::Label(name, at) => {
                    if self.labels.insert(name.clone(), *count).is_some() {
                        return Err(SimError::syntax(*at, format!("label `{name}` is defined twice")));
                    }
                }
                Stmt::Inst(_) => *count += 1,
                Stmt::Scope(inner, _) => self.collect_labels(inner, count)?,
                Stmt::Decl(_) | Stmt::Prototype(..) => {}
            }
        }
        Ok(())
    }

    fn statements(&mut self, body: &[Stmt]) -> Result<(), SimError> {
        for s in body {
            match s {
                Stmt::Label(..) | Stmt::Prototype(..) => {}
                Stmt::Decl(decl) => self.declaration(decl)?,
                Stmt::Scope(inner, _) => {
                    self.scopes.push(HashMap::new());
                    self.statements(inner)?;
                    self.scopes.pop();
                }
                Stmt::Inst(inst) => {
                    let decoded = self.instruction(inst)?;
                    self.insts.push(decoded);
                }
            }
        }
        Ok(())
    }

    fn declaration(&mut self, decl: &VarDecl) -> Result<(), SimError> {
        match decl.space.as_str() {
            "reg" => {
                let ty = Ty::from_word(&decl.ty).ok_or_else(|| SimError::unsupported(decl.at, format!("unknown register type `.{}`", decl.ty)))?;
                if decl.vector != 1 {
                    return Err(SimError::unsupported(decl.at, "vector registers (`.reg .v4`) are not supported".into()));
                }
                for name in &decl.names {
                    let count = name.range.unwrap_or(0);
                    let names: Vec<String> = match name.range {
                        Some(_) => (0..count).map(|k| format!("{}{k}", name.name)).collect(),
                        None => vec![name.name.clone()],
                    };
                    for n in names {
                        let slot = self.slot_names.len() as u32;
                        self.slot_names.push(n.clone());
                        if ty == Ty::B128 {
                            self.slot_names.push(format!("{n} (high half)"));
                        }
                        self.bind(&n, Binding::Reg { slot, ty }, name.at)?;
                    }
                }
            }
            "local" => {
                for name in &decl.names {
                    let object = self.module.data_object(decl, name)?;
                    let offset = align_up(u64::from(self.local_size), u64::from(object.align));
                    if offset + object.size > 1 << 24 {
                        return Err(SimError::unsupported(name.at, "more than 16 MiB of local memory per frame".into()));
                    }
                    self.local_size = (offset + object.size) as u32;
                    self.locals.push((offset as u32, object.size as u32, name.name.clone()));
                    self.bind(&name.name, Binding::Sym(Sym::Local(offset as u32), Space::Local), name.at)?;
                }
            }
            "param" => {
                for name in &decl.names {
                    let mut unused = 0;
                    let spec = param_spec(decl, name, &mut unused, false)?;
                    self.frame_params.push(spec.size);
                    self.bind(&name.name, Binding::Sym(Sym::FrameParam(self.frame_params.len() as u32 - 1), Space::Param), name.at)?;
                }
            }
            "shared" | "const" | "global" => {
                // Function-scope variables live in the module's spaces (llc's "demoted"
                // shared variables).
                let space = Space::from_word(&decl.space).unwrap_or(Space::Shared);
                for name in &decl.names {
                    let object = self.module.data_object(decl, name)?;
                    let sym = self.module.place(space, object, false, name.at)?;
                    self.bind(&name.name, Binding::Sym(sym, space), name.at)?;
                }
            }
            other => return Err(SimError::unsupported(decl.at, format!("declarations of the .{other} space in a function"))),
        }
        Ok(())
    }
}

/// Operand helpers and the per-opcode decoders.
impl FnCx<'_, '_> {
    fn register(&self, name: &str, at: u32) -> Result<(u32, Ty), SimError> {
        match self.lookup(name) {
            Some(Binding::Reg { slot, ty }) => Ok((slot, ty)),
            Some(_) => Err(SimError::syntax(at, format!("`{name}` is not a register"))),
            None => Err(SimError::syntax(at, format!("register `{name}` is not declared"))),
        }
    }

    fn symbol(&self, name: &str, at: u32) -> Result<(Sym, Space), SimError> {
        match self.lookup(name) {
            Some(Binding::Sym(sym, space)) => Ok((sym, space)),
            Some(Binding::Label(_)) => Err(SimError::syntax(at, format!("`{name}` is a label, not a variable"))),
            Some(Binding::Reg { .. }) => Err(SimError::syntax(at, format!("`{name}` is a register"))),
            None => Err(SimError::syntax(at, format!("`{name}` is not declared"))),
        }
    }

    /// A value operand of type `ty`.
    fn src(&self, op: &Operand, ty: Ty) -> Result<Src, SimError> {
        match op {
            Operand::Reg { name, negated, at } => {
                if let Some(Binding::Reg { slot, ty: reg_ty }) = self.lookup(name) {
                    if *negated {
                        if reg_ty != Ty::Pred {
                            return Err(SimError::syntax(*at, format!("`!` negates a predicate; `{name}` is .{}", reg_ty.name())));
                        }
                        return Ok(Src::NotPred(slot));
                    }
                    if ty == Ty::Pred && reg_ty != Ty::Pred {
                        return Err(SimError::syntax(*at, format!("expected a predicate, `{name}` is .{}", reg_ty.name())));
                    }
                    if ty != Ty::Pred && reg_ty == Ty::Pred {
                        return Err(SimError::syntax(*at, format!("`{name}` is a predicate; expected a .{} value", ty.name())));
                    }
                    self.check_register_type(name, reg_ty, ty, *at)?;
                    return Ok(Src::Reg(slot));
                }
                match Special::from_name(name) {
                    Some(s) if !negated => Ok(Src::Special(s)),
                    _ => Err(SimError::syntax(*at, format!("register `{name}` is not declared"))),
                }
            }
            Operand::Imm { value, at } => {
                if ty == Ty::Pred {
                    return match value {
                        Literal::Int(v) => Ok(Src::Imm(u64::from(*v != 0))),
                        _ => Err(SimError::syntax(*at, "a predicate immediate is 0 or 1".into())),
                    };
                }
                if ty == Ty::B128 {
                    return Err(SimError::unsupported(*at, "128-bit immediates".into()));
                }
                Ok(Src::Imm(immediate_bits(*value, ty, *at)?))
            }
            Operand::Sym { name, offset, generic, at } => {
                let (sym, _) = self.symbol(name, *at)?;
                Ok(Src::Addr(sym, *offset, *generic))
            }
            other => Err(SimError::syntax(other.at(), "expected a register, an immediate or a variable name".into())),
        }
    }

    fn pred_src(&self, op: &Operand) -> Result<Src, SimError> {
        self.src(op, Ty::Pred)
    }

    /// A register operand of type `reg` where the instruction reads or writes `ty`:
    /// an error when ptxas would reject the pair ([`compatible`]).
    fn check_register_type(&self, name: &str, reg: Ty, ty: Ty, at: u32) -> Result<(), SimError> {
        if reg == Ty::Pred || ty == Ty::Pred || compatible(reg, ty, self.wide_registers) {
            return Ok(());
        }
        Err(SimError::syntax(at, format!("`{name}` is a .{} register, which a .{} operand cannot be (PTX operand type rules)", reg.name(), ty.name())))
    }

    fn dst(&self, op: &Operand, ty: Ty) -> Result<Dst, SimError> {
        match op {
            Operand::Reg { name, negated: false, at } => {
                let (slot, reg_ty) = self.register(name, *at)?;
                if (ty == Ty::Pred) != (reg_ty == Ty::Pred) {
                    return Err(SimError::syntax(*at, format!("`{name}` is .{}, the destination is .{}", reg_ty.name(), ty.name())));
                }
                if ty == Ty::B128 && reg_ty != Ty::B128 {
                    return Err(SimError::syntax(*at, format!("a .b128 destination must be a .b128 register; `{name}` is .{}", reg_ty.name())));
                }
                self.check_register_type(name, reg_ty, ty, *at)?;
                Ok(Dst::Reg(slot))
            }
            Operand::Sink(_) => Ok(Dst::Sink),
            other => Err(SimError::syntax(other.at(), "expected a destination register".into())),
        }
    }

    fn address(&self, op: &Operand) -> Result<(Address, Option<Space>), SimError> {
        match op {
            Operand::Addr { base, offset, at } => Ok(match base {
                PAddrBase::None => (Address { base: AddrBase::None, offset: *offset }, None),
                PAddrBase::Reg(name) => {
                    let (slot, ty) = self.register(name, *at)?;
                    if ty == Ty::Pred || ty == Ty::B128 {
                        return Err(SimError::syntax(*at, format!("an address register is 32 or 64 bits; `{name}` is .{}", ty.name())));
                    }
                    (Address { base: AddrBase::Reg(slot), offset: *offset }, None)
                }
                PAddrBase::Sym(name) => {
                    let (sym, space) = self.symbol(name, *at)?;
                    (Address { base: AddrBase::Sym(sym), offset: *offset }, Some(space))
                }
            }),
            other => Err(SimError::syntax(other.at(), "expected an address `[...]`".into())),
        }
    }

    fn expect_operands(&self, inst: &parser::Inst, counts: &[usize]) -> Result<(), SimError> {
        if counts.contains(&inst.operands.len()) {
            return Ok(());
        }
        let expected = counts.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or ");
        Err(SimError::syntax(inst.at, format!("`{}` takes {expected} operands, found {}", inst.opcode, inst.operands.len())))
    }

    fn check_requirements(&self, inst: &parser::Inst) -> Result<(), SimError> {
        let target = self.module.target;
        for r in &target.requirements {
            if r.opcode != inst.opcode || !r.words.iter().all(|w| inst.mods.iter().any(|(m, _)| m == w)) {
                continue;
            }
            let form = std::iter::once(inst.opcode.as_str()).chain(r.words.iter().map(String::as_str)).collect::<Vec<_>>().join(".");
            if !target.sm_at_least(&r.sm) {
                return Err(SimError::requirement(inst.at, format!("`{form}` requires {} or later; the target is {} ({})", r.sm, target.sm.name, r.source)));
            }
            if self.module.version < r.ptx {
                let (a, b) = self.module.version;
                return Err(SimError::requirement(inst.at, format!("`{form}` requires PTX ISA .version {}.{} or later; the file says {a}.{b} ({})", r.ptx.0, r.ptx.1, r.source)));
            }
        }
        Ok(())
    }

    fn instruction(&mut self, inst: &parser::Inst) -> Result<Inst, SimError> {
        self.check_requirements(inst)?;
        let guard = match &inst.guard {
            None => None,
            Some((name, negated, at)) => {
                let (slot, ty) = self.register(name, *at)?;
                if ty != Ty::Pred {
                    return Err(SimError::syntax(*at, format!("a guard is a predicate; `{name}` is .{}", ty.name())));
                }
                Some((slot, *negated))
            }
        };
        let mut out = Inst { op: Op::Nop, guard, dsts: Vec::new(), srcs: Vec::new(), addr: None, at: inst.at };
        self.wide_registers = matches!(inst.opcode.as_str(), "ld" | "ldu" | "st" | "cvt");
        let mut w = Words::new(inst);
        let ops = &inst.operands;
        match inst.opcode.as_str() {
            "add" | "sub" if w.mixed_source().is_some() => {
                let src = w.mixed_source().unwrap_or(Ty::F16);
                w.types();
                self.expect_operands(inst, &[3])?;
                let m = self.float_mods(&mut w, Ty::F32, true)?;
                if m.ftz || m.relu {
                    return Err(SimError::syntax(inst.at, format!("mixed-precision `{}` takes neither `.ftz` nor `.relu`", inst.opcode)));
                }
                let op = if inst.opcode == "add" { FloatBin::Add } else { FloatBin::Sub };
                out.op = Op::MixedFloat { op, src, m };
                self.binary(&mut out, ops, Ty::F32, src, Ty::F32)?;
            }
            "fma" if w.mixed_source().is_some() => {
                let src = w.mixed_source().unwrap_or(Ty::F16);
                w.types();
                self.expect_operands(inst, &[4])?;
                if !inst.mods.iter().any(|(m, _)| matches!(m.as_str(), "rn" | "rz" | "rm" | "rp")) {
                    return Err(SimError::syntax(inst.at, "mixed-precision `fma` needs a rounding modifier (`.rn`, `.rz`, `.rm` or `.rp`)".into()));
                }
                let m = self.float_mods(&mut w, Ty::F32, true)?;
                if m.ftz || m.relu {
                    return Err(SimError::syntax(inst.at, "mixed-precision `fma` takes neither `.ftz` nor `.relu`".into()));
                }
                out.op = Op::MixedFma { src, m };
                out.dsts.push(self.dst(&ops[0], Ty::F32)?);
                out.srcs.push(self.src(&ops[1], src)?);
                out.srcs.push(self.src(&ops[2], src)?);
                out.srcs.push(self.src(&ops[3], Ty::F32)?);
            }
            "add" | "sub" | "addc" | "subc" => {
                let carry_in = inst.opcode.ends_with('c');
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                if ty.format().is_some() && !carry_in {
                    let m = self.float_mods(&mut w, ty, true)?;
                    let op = if inst.opcode == "add" { FloatBin::Add } else { FloatBin::Sub };
                    out.op = Op::Float { op, ty, m, nan: false, xorsign_abs: false, approx: false };
                } else {
                    let sat = w.has("sat");
                    let carry_out = w.has("cc");
                    let op = if inst.opcode.starts_with("add") { IntBin::Add } else { IntBin::Sub };
                    self.int_type(inst, ty)?;
                    out.op = Op::Int { op, ty, sat, carry_in, carry_out };
                }
                self.binary(&mut out, ops, ty, ty, ty)?;
            }
            "mul" | "mul24" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                if ty.format().is_some() && inst.opcode == "mul" {
                    let m = self.float_mods(&mut w, ty, true)?;
                    out.op = Op::Float { op: FloatBin::Mul, ty, m, nan: false, xorsign_abs: false, approx: false };
                    self.binary(&mut out, ops, ty, ty, ty)?;
                } else {
                    self.int_type(inst, ty)?;
                    match (w.one_of(&["lo", "hi", "wide"]), inst.opcode.as_str()) {
                        (Some("wide"), "mul") => {
                            out.op = Op::MulWide { ty };
                            self.binary(&mut out, ops, wide(ty), ty, ty)?;
                        }
                        (mode, name) => {
                            let hi = mode == Some("hi");
                            if mode.is_none() && name == "mul" && ty.bits() > 8 {
                                return Err(SimError::syntax(inst.at, "integer `mul` needs `.lo`, `.hi` or `.wide`".into()));
                            }
                            let op = match (name, hi) {
                                ("mul24", false) => IntBin::Mul24Lo,
                                ("mul24", true) => IntBin::Mul24Hi,
                                (_, false) => IntBin::MulLo,
                                (_, true) => IntBin::MulHi,
                            };
                            out.op = Op::Int { op, ty, sat: false, carry_in: false, carry_out: false };
                            self.binary(&mut out, ops, ty, ty, ty)?;
                        }
                    }
                }
            }
            "mad" | "madc" | "mad24" | "fma" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[4])?;
                if ty.format().is_some() && inst.opcode != "mad24" && inst.opcode != "madc" {
                    let m = self.float_mods(&mut w, ty, true)?;
                    out.op = Op::Fma { ty, m };
                    out.dsts.push(self.dst(&ops[0], ty)?);
                    for o in &ops[1..4] {
                        out.srcs.push(self.src(o, ty)?);
                    }
                } else {
                    self.int_type(inst, ty)?;
                    let mode = w.one_of(&["lo", "hi", "wide"]);
                    let sat = w.has("sat");
                    if inst.opcode == "mad24" {
                        out.op = Op::Mad24 { ty, hi: mode == Some("hi"), sat };
                    } else {
                        if mode.is_none() {
                            return Err(SimError::syntax(inst.at, format!("integer `{}` needs `.lo`, `.hi` or `.wide`", inst.opcode)));
                        }
                        let carry_out = w.has("cc");
                        out.op = Op::Mad { ty, hi: mode == Some("hi"), wide: mode == Some("wide"), sat, carry_in: inst.opcode == "madc", carry_out };
                    }
                    let dty = if mode == Some("wide") { wide(ty) } else { ty };
                    out.dsts.push(self.dst(&ops[0], dty)?);
                    out.srcs.push(self.src(&ops[1], ty)?);
                    out.srcs.push(self.src(&ops[2], ty)?);
                    out.srcs.push(self.src(&ops[3], dty)?);
                }
            }
            "sad" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[4])?;
                out.op = Op::Sad { ty };
                out.dsts.push(self.dst(&ops[0], ty)?);
                for o in &ops[1..4] {
                    out.srcs.push(self.src(o, ty)?);
                }
            }
            "div" | "rem" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                if ty.format().is_some() && inst.opcode == "div" {
                    let approx = w.has("approx");
                    let full = w.has("full");
                    let m = self.float_mods(&mut w, ty, !(approx || full))?;
                    out.op = Op::Float { op: FloatBin::Div, ty, m, nan: false, xorsign_abs: false, approx: approx || full };
                } else {
                    self.int_type(inst, ty)?;
                    let op = if inst.opcode == "div" { IntBin::Div } else { IntBin::Rem };
                    out.op = Op::Int { op, ty, sat: false, carry_in: false, carry_out: false };
                }
                self.binary(&mut out, ops, ty, ty, ty)?;
            }
            "min" | "max" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                if ty.format().is_some() {
                    let nan = w.has("NaN");
                    let xorsign_abs = w.has("xorsign");
                    if xorsign_abs && !w.has("abs") {
                        return Err(SimError::syntax(inst.at, "`.xorsign` goes with `.abs`".into()));
                    }
                    let m = self.float_mods(&mut w, ty, false)?;
                    let op = if inst.opcode == "min" { FloatBin::Min } else { FloatBin::Max };
                    out.op = Op::Float { op, ty, m, nan, xorsign_abs, approx: false };
                } else {
                    let relu = w.has("relu");
                    let op = if inst.opcode == "min" { IntBin::Min } else { IntBin::Max };
                    out.op = Op::Int { op, ty, sat: relu, carry_in: false, carry_out: false };
                }
                self.binary(&mut out, ops, ty, ty, ty)?;
            }
            "and" | "or" | "xor" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                let op = match inst.opcode.as_str() {
                    "and" => IntBin::And,
                    "or" => IntBin::Or,
                    _ => IntBin::Xor,
                };
                out.op = Op::Int { op, ty, sat: false, carry_in: false, carry_out: false };
                self.binary(&mut out, ops, ty, ty, ty)?;
            }
            "shl" | "shr" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                let op = if inst.opcode == "shl" { IntBin::Shl } else { IntBin::Shr };
                out.op = Op::Int { op, ty, sat: false, carry_in: false, carry_out: false };
                self.binary(&mut out, ops, ty, ty, Ty::U32)?;
            }
            "abs" | "neg" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[2])?;
                let dty = if matches!(inst.opcode.as_str(), "popc" | "clz" | "bfind") { Ty::U32 } else { ty };
                if ty.format().is_some() && matches!(inst.opcode.as_str(), "abs" | "neg") {
                    let m = self.float_mods(&mut w, ty, false)?;
                    let op = if inst.opcode == "abs" { FloatUn::Abs } else { FloatUn::Neg };
                    out.op = Op::FloatUn { op, ty, m, approx: false };
                } else {
                    let op = match inst.opcode.as_str() {
                        "abs" => IntUn::Abs,
                        "neg" => IntUn::Neg,
                        "not" => IntUn::Not,
                        "cnot" => IntUn::Cnot,
                        "popc" => IntUn::Popc,
                        "clz" => IntUn::Clz,
                        "brev" => IntUn::Brev,
                        _ if w.has("shiftamt") => IntUn::BfindShiftAmt,
                        _ => IntUn::Bfind,
                    };
                    out.op = Op::IntUn { op, ty };
                }
                out.dsts.push(self.dst(&ops[0], dty)?);
                out.srcs.push(self.src(&ops[1], ty)?);
            }
            "bfe" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[4])?;
                out.op = Op::Bfe { ty };
                out.dsts.push(self.dst(&ops[0], ty)?);
                out.srcs.push(self.src(&ops[1], ty)?);
                out.srcs.push(self.src(&ops[2], Ty::U32)?);
                out.srcs.push(self.src(&ops[3], Ty::U32)?);
            }
            "bfi" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[5])?;
                out.op = Op::Bfi { ty };
                out.dsts.push(self.dst(&ops[0], ty)?);
                out.srcs.push(self.src(&ops[1], ty)?);
                out.srcs.push(self.src(&ops[2], ty)?);
                out.srcs.push(self.src(&ops[3], Ty::U32)?);
                out.srcs.push(self.src(&ops[4], Ty::U32)?);
            }
            "prmt" => {
                let mode = match w.one_of(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]) {
                    Some("f4e") => PrmtMode::F4e,
                    Some("b4e") => PrmtMode::B4e,
                    Some("rc8") => PrmtMode::Rc8,
                    Some("ecl") => PrmtMode::Ecl,
                    Some("ecr") => PrmtMode::Ecr,
                    Some("rc16") => PrmtMode::Rc16,
                    _ => PrmtMode::Default,
                };
                w.one_type()?;
                self.expect_operands(inst, &[4])?;
                out.op = Op::Prmt { mode };
                out.dsts.push(self.dst(&ops[0], Ty::B32)?);
                for o in &ops[1..4] {
                    out.srcs.push(self.src(o, Ty::B32)?);
                }
            }
            "shf" => {
                let left = match w.one_of(&["l", "r"]) {
                    Some(d) => d == "l",
                    None => return Err(SimError::syntax(inst.at, "`shf` needs `.l` or `.r`".into())),
                };
                let clamp = match w.one_of(&["wrap", "clamp"]) {
                    Some(m) => m == "clamp",
                    None => return Err(SimError::syntax(inst.at, "`shf` needs `.wrap` or `.clamp`".into())),
                };
                let ty = w.one_type()?;
                self.expect_operands(inst, &[4])?;
                out.op = Op::Shf { left, clamp, ty };
                out.dsts.push(self.dst(&ops[0], ty)?);
                for o in &ops[1..4] {
                    out.srcs.push(self.src(o, ty)?);
                }
            }
            "lop3" => {
                w.one_type()?;
                self.expect_operands(inst, &[5])?;
                out.op = Op::Lop3;
                out.dsts.push(self.dst(&ops[0], Ty::B32)?);
                for o in &ops[1..5] {
                    out.srcs.push(self.src(o, Ty::B32)?);
                }
            }
            "bmsk" => {
                let clamp = w.one_of(&["clamp", "wrap"]) == Some("clamp");
                w.one_type()?;
                self.expect_operands(inst, &[3])?;
                out.op = Op::Bmsk { clamp };
                self.binary(&mut out, ops, Ty::B32, Ty::U32, Ty::U32)?;
            }
            "szext" => {
                let clamp = w.one_of(&["clamp", "wrap"]) == Some("clamp");
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                out.op = Op::Szext { clamp, signed: ty.is_signed() };
                self.binary(&mut out, ops, ty, ty, Ty::U32)?;
            }
            "dp4a" | "dp2a" => {
                let hi = w.one_of(&["lo", "hi"]) == Some("hi");
                let types = w.types();
                let [a, b] = types[..] else { return Err(SimError::syntax(inst.at, format!("`{}` takes two types", inst.opcode))) };
                self.expect_operands(inst, &[4])?;
                let dty = if a.is_signed() || b.is_signed() { Ty::S32 } else { Ty::U32 };
                out.op = if inst.opcode == "dp4a" {
                    Op::Dp4a { a_signed: a.is_signed(), b_signed: b.is_signed() }
                } else {
                    Op::Dp2a { a_signed: a.is_signed(), b_signed: b.is_signed(), hi }
                };
                out.dsts.push(self.dst(&ops[0], dty)?);
                out.srcs.push(self.src(&ops[1], Ty::B32)?);
                out.srcs.push(self.src(&ops[2], Ty::B32)?);
                out.srcs.push(self.src(&ops[3], dty)?);
            }
            "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[2])?;
                let approx = w.has("approx");
                let op = match inst.opcode.as_str() {
                    "rcp" => FloatUn::Rcp,
                    "sqrt" => FloatUn::Sqrt,
                    "rsqrt" => FloatUn::Rsqrt,
                    "sin" => FloatUn::Sin,
                    "cos" => FloatUn::Cos,
                    "lg2" => FloatUn::Lg2,
                    "ex2" => FloatUn::Ex2,
                    _ => FloatUn::Tanh,
                };
                let exact_forms = matches!(op, FloatUn::Rcp | FloatUn::Sqrt);
                if !approx && !(exact_forms && w.words.iter().any(|x| matches!(x.0, "rn" | "rz" | "rm" | "rp"))) {
                    return Err(SimError::syntax(inst.at, format!("`{}` needs `.approx`{}", inst.opcode, if exact_forms { " or a rounding modifier" } else { "" })));
                }
                if ty.format().is_none() {
                    return Err(SimError::syntax(inst.at, format!("`{}` takes a float type", inst.opcode)));
                }
                let m = self.float_mods(&mut w, ty, !approx)?;
                out.op = Op::FloatUn { op, ty, m, approx };
                out.dsts.push(self.dst(&ops[0], ty)?);
                out.srcs.push(self.src(&ops[1], ty)?);
            }
            "copysign" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                out.op = Op::Float { op: FloatBin::Copysign, ty, m: FloatMods::default(), nan: false, xorsign_abs: false, approx: false };
                self.binary(&mut out, ops, ty, ty, ty)?;
            }
            "testp" => {
                let class = match w.one_of(&["finite", "infinite", "number", "notanumber", "normal", "subnormal"]) {
                    Some("finite") => 0,
                    Some("infinite") => 1,
                    Some("number") => 2,
                    Some("notanumber") => 3,
                    Some("normal") => 4,
                    Some("subnormal") => 5,
                    _ => return Err(SimError::syntax(inst.at, "`testp` needs a class such as `.finite`".into())),
                };
                let ty = w.one_type()?;
                self.expect_operands(inst, &[2])?;
                out.op = Op::Testp { class, ty };
                out.dsts.push(self.dst(&ops[0], Ty::Pred)?);
                out.srcs.push(self.src(&ops[1], ty)?);
            }
            "setp" | "set" => {
                let cmp = self.comparison(&mut w, inst)?;
                let bool_op = match w.one_of(&["and", "or", "xor"]) {
                    Some("and") => Some(BoolOp::And),
                    Some("or") => Some(BoolOp::Or),
                    Some("xor") => Some(BoolOp::Xor),
                    _ => None,
                };
                let ftz = w.has("ftz");
                let types = w.types();
                let (dty, ty) = match (inst.opcode.as_str(), &types[..]) {
                    ("setp", [t]) => (Ty::Pred, *t),
                    ("set", [d, s]) => (*d, *s),
                    _ => return Err(SimError::syntax(inst.at, format!("`{}` takes {} type(s)", inst.opcode, if inst.opcode == "set" { 2 } else { 1 }))),
                };
                self.expect_operands(inst, if bool_op.is_some() { &[4] } else { &[3] })?;
                match &ops[0] {
                    Operand::Pair(p, q, _) if inst.opcode == "setp" => {
                        out.dsts.push(self.dst(p, Ty::Pred)?);
                        out.dsts.push(self.dst(q, Ty::Pred)?);
                    }
                    d => out.dsts.push(self.dst(d, dty)?),
                }
                out.srcs.push(self.src(&ops[1], ty)?);
                out.srcs.push(self.src(&ops[2], ty)?);
                if bool_op.is_some() {
                    out.srcs.push(self.pred_src(&ops[3])?);
                }
                out.op = if inst.opcode == "setp" { Op::Setp { cmp, ty, bool_op, ftz } } else { Op::Set { cmp, dty, ty, bool_op, ftz } };
            }
            "selp" => {
                let ty = w.one_type()?;
                self.expect_operands(inst, &[4])?;
                out.op = Op::Selp { ty };
                self.binary(&mut out, &ops[..3], ty, ty, ty)?;
                out.srcs.push(self.pred_src(&ops[3])?);
            }
            "slct" => {
                let ftz = w.has("ftz");
                let types = w.types();
                let [ty, cty] = types[..] else { return Err(SimError::syntax(inst.at, "`slct` takes two types".into())) };
                self.expect_operands(inst, &[4])?;
                out.op = Op::Slct { ty, cty, ftz };
                self.binary(&mut out, &ops[..3], ty, ty, ty)?;
                out.srcs.push(self.src(&ops[3], cty)?);
            }
            "cvt" => self.cvt(&mut out, &mut w, inst)?,
            "cvta" => {
                let to = w.has("to");
                let space = w.space().ok_or_else(|| SimError::syntax(inst.at, "`cvta` needs a state space".into()))?;
                let ty = w.one_type()?;
                self.expect_operands(inst, &[2])?;
                out.op = Op::Cvta { space, to, ty };
                out.dsts.push(self.dst(&ops[0], ty)?);
                out.srcs.push(self.src(&ops[1], ty)?);
            }
            "isspacep" => {
                let space = w.space().ok_or_else(|| SimError::syntax(inst.at, "`isspacep` needs a state space".into()))?;
                self.expect_operands(inst, &[2])?;
                out.op = Op::Isspacep { space };
                out.dsts.push(self.dst(&ops[0], Ty::Pred)?);
                out.srcs.push(self.src(&ops[1], Ty::U64)?);
            }
            "mov" => self.mov(&mut out, &mut w, inst)?,
            "ld" | "ldu" | "st" => self.load_store(&mut out, &mut w, inst)?,
            "atom" | "red" => self.atomic(&mut out, &mut w, inst)?,
            "prefetch" | "prefetchu" | "applypriority" | "discard" | "createpolicy" => {
                w.words.iter_mut().for_each(|x| x.2 = true);
                out.op = Op::Nop;
            }
            "membar" | "fence" => {
                w.words.iter_mut().for_each(|x| x.2 = true);
                self.expect_operands(inst, &[0])?;
                out.op = Op::Fence;
            }
            "nanosleep" | "pmevent" => {
                w.words.iter_mut().for_each(|x| x.2 = true);
                out.op = Op::Nop;
            }
            "bar" | "barrier" => self.barrier(&mut out, &mut w, inst)?,
            "shfl" => {
                let sync = w.has("sync");
                let mode = match w.one_of(&["up", "down", "bfly", "idx"]) {
                    Some("up") => ShflMode::Up,
                    Some("down") => ShflMode::Down,
                    Some("bfly") => ShflMode::Bfly,
                    Some("idx") => ShflMode::Idx,
                    _ => return Err(SimError::syntax(inst.at, "`shfl` needs `.up`, `.down`, `.bfly` or `.idx`".into())),
                };
                w.one_type()?;
                self.expect_operands(inst, if sync { &[5] } else { &[4] })?;
                out.op = Op::Shfl { mode, sync };
                match &ops[0] {
                    Operand::Pair(d, p, _) => {
                        out.dsts.push(self.dst(d, Ty::B32)?);
                        out.dsts.push(self.dst(p, Ty::Pred)?);
                    }
                    d => out.dsts.push(self.dst(d, Ty::B32)?),
                }
                for o in &ops[1..] {
                    out.srcs.push(self.src(o, Ty::B32)?);
                }
            }
            "vote" => {
                let sync = w.has("sync");
                let mode = match w.one_of(&["all", "any", "uni", "ballot"]) {
                    Some("all") => VoteMode::All,
                    Some("any") => VoteMode::Any,
                    Some("uni") => VoteMode::Uni,
                    Some("ballot") => VoteMode::Ballot,
                    _ => return Err(SimError::syntax(inst.at, "`vote` needs `.all`, `.any`, `.uni` or `.ballot`".into())),
                };
                let ty = w.one_type()?;
                self.expect_operands(inst, if sync { &[3] } else { &[2] })?;
                out.op = Op::Vote { mode, sync };
                out.dsts.push(self.dst(&ops[0], ty)?);
                out.srcs.push(self.pred_src(&ops[1])?);
                if sync {
                    out.srcs.push(self.src(&ops[2], Ty::B32)?);
                }
            }
            "activemask" => {
                w.one_type()?;
                self.expect_operands(inst, &[1])?;
                out.op = Op::Activemask;
                out.dsts.push(self.dst(&ops[0], Ty::B32)?);
            }
            "match" => {
                if !w.has("sync") {
                    return Err(SimError::syntax(inst.at, "`match` needs `.sync`".into()));
                }
                let all = match w.one_of(&["any", "all"]) {
                    Some(m) => m == "all",
                    None => return Err(SimError::syntax(inst.at, "`match.sync` needs `.any` or `.all`".into())),
                };
                let ty = w.one_type()?;
                self.expect_operands(inst, &[3])?;
                out.op = Op::Match { all, ty };
                match &ops[0] {
                    Operand::Pair(d, p, _) => {
                        out.dsts.push(self.dst(d, Ty::B32)?);
                        out.dsts.push(self.dst(p, Ty::Pred)?);
                    }
                    d => out.dsts.push(self.dst(d, Ty::B32)?),
                }
                out.srcs.push(self.src(&ops[1], ty)?);
                out.srcs.push(self.src(&ops[2], Ty::B32)?);
            }
            "redux" => {
                if !w.has("sync") {
                    return Err(SimError::syntax(inst.at, "`redux` needs `.sync`".into()));
                }
                let op = match w.one_of(&["add", "min", "max", "and", "or", "xor"]) {
                    Some("add") => ReduxOp::Add,
                    Some("min") => ReduxOp::Min,
                    Some("max") => ReduxOp::Max,
                    Some("and") => ReduxOp::And,
                    Some("or") => ReduxOp::Or,
                    Some("xor") => ReduxOp::Xor,
                    _ => return Err(SimError::syntax(inst.at, "`redux.sync` needs an operation".into())),
                };
                let ty = w.one_type()?;
                if ty.format().is_some() {
                    return Err(SimError::unsupported(inst.at, "float `redux.sync`".into()));
                }
                self.expect_operands(inst, &[3])?;
                out.op = Op::Redux { op, ty };
                out.dsts.push(self.dst(&ops[0], ty)?);
                out.srcs.push(self.src(&ops[1], ty)?);
                out.srcs.push(self.src(&ops[2], Ty::B32)?);
            }
            "bra" => {
                w.has("uni");
                self.expect_operands(inst, &[1])?;
                let target = match &ops[0] {
                    Operand::Sym { name, offset: 0, at, .. } => match self.lookup(name) {
                        Some(Binding::Label(pc)) => pc,
                        _ => return Err(SimError::syntax(*at, format!("`{name}` is not a label of this function"))),
                    },
                    other => return Err(SimError::syntax(other.at(), "`bra` takes a label".into())),
                };
                out.op = Op::Bra { target };
            }
            "call" => self.call(&mut out, &mut w, inst)?,
            "ret" => {
                w.has("uni");
                out.op = Op::Ret;
            }
            "exit" => out.op = Op::Exit,
            "trap" | "brkpt" => out.op = Op::Trap,
            other => return Err(SimError::unsupported(inst.at, format!("the simulator does not implement `{other}`"))),
        }
        w.finish()?;
        Ok(out)
    }

    /// `d, a, b` with the destination and the two source types.
    fn binary(&self, out: &mut Inst, ops: &[Operand], dty: Ty, aty: Ty, bty: Ty) -> Result<(), SimError> {
        out.dsts.push(self.dst(&ops[0], dty)?);
        out.srcs.push(self.src(&ops[1], aty)?);
        out.srcs.push(self.src(&ops[2], bty)?);
        Ok(())
    }

    /// Mixed-precision float forms (`add.f32.bf16`, `fma.rn.f32.f16`, ...) need sm_100
    /// and PTX ISA 8.6 (PTX ISA 9.7.5 "Mixed Precision Floating Point Instructions").
    fn int_type(&self, inst: &parser::Inst, ty: Ty) -> Result<(), SimError> {
        if ty == Ty::Pred || ty == Ty::B128 || ty.format().is_some() {
            return Err(SimError::syntax(inst.at, format!("`{}` does not take .{}", inst.opcode, ty.name())));
        }
        Ok(())
    }

    /// Rounding (`.rn` when `rounding_allowed` and absent), `.ftz`, `.sat`, `.relu`.
    fn float_mods(&self, w: &mut Words, ty: Ty, rounding_allowed: bool) -> Result<FloatMods, SimError> {
        let rounding = if rounding_allowed { w.rounding() } else { None };
        let ftz = w.has("ftz");
        let sat = w.has("sat");
        let relu = w.has("relu");
        w.has("noftz");
        if ftz && ty.format() == Some(FloatFormat::F64) {
            return Err(SimError::syntax(w.at, "`.ftz` applies to f32, not f64".into()));
        }
        Ok(FloatMods { rounding: rounding.unwrap_or(Rounding::NearestEven), ftz, sat, relu })
    }

    fn comparison(&self, w: &mut Words, inst: &parser::Inst) -> Result<Cmp, SimError> {
        for word in &mut w.words {
            if !word.2 {
                if let Some(c) = Cmp::from_word(word.0) {
                    word.2 = true;
                    return Ok(c);
                }
            }
        }
        Err(SimError::syntax(inst.at, format!("`{}` needs a comparison such as `.lt`", inst.opcode)))
    }

    fn cvt(&self, out: &mut Inst, w: &mut Words, inst: &parser::Inst) -> Result<(), SimError> {
        let round = match w.one_of(&["rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi", "rs"]) {
            None => CvtRound::None,
            Some("rna") => CvtRound::NearestAway,
            Some("rs") => return Err(SimError::unsupported(inst.at, "stochastic rounding (`.rs`)".into())),
            Some(r) if r.ends_with('i') => CvtRound::Integer(rounding_of(r)),
            Some(r) => CvtRound::Float(rounding_of(r)),
        };
        let ftz = w.has("ftz");
        let sat = w.has("sat");
        let relu = w.has("relu");
        if w.has("satfinite") {
            return Err(SimError::unsupported(inst.at, "`cvt.satfinite`".into()));
        }
        let types = w.types();
        let [dty, sty] = types[..] else {
            return Err(SimError::syntax(inst.at, format!("`cvt` takes two types (destination, source), found {}", types.len())));
        };
        if matches!(dty, Ty::F16x2 | Ty::BF16x2) {
            if sty != Ty::F32 {
                return Err(SimError::unsupported(inst.at, format!("`cvt` to .{} from .{}", dty.name(), sty.name())));
            }
            self.expect_operands(inst, &[3])?;
            out.op = Op::CvtPack { dty, round, relu };
            self.binary(out, &inst.operands, dty, sty, sty)?;
            return Ok(());
        }
        if dty.lanes() != 1 || sty.lanes() != 1 || dty == Ty::Pred || sty == Ty::Pred || dty == Ty::B128 || sty == Ty::B128 {
            return Err(SimError::unsupported(inst.at, format!("`cvt` from .{} to .{}", sty.name(), dty.name())));
        }
        // The PTX ISA's rules on which conversions need which rounding modifier.
        let (df, sf) = (dty.format(), sty.format());
        match (df, sf, round) {
            (Some(_), Some(_), CvtRound::Integer(_)) if dty == sty => {}
            (Some(_), Some(_), CvtRound::Integer(_)) => return Err(SimError::syntax(inst.at, "integer rounding (`.rni` ...) converts a float to an integral value of the same type".into())),
            (Some(d), Some(s), CvtRound::None) if d.bits() < s.bits() && d != FloatFormat::F32 || d.bits() < s.bits() && s == FloatFormat::F64 => {
                return Err(SimError::syntax(inst.at, format!("`cvt` from .{} to .{} needs a rounding modifier", sty.name(), dty.name())))
            }
            (None, Some(_), CvtRound::Float(_) | CvtRound::NearestAway) => return Err(SimError::syntax(inst.at, "a float-to-integer `cvt` takes an integer rounding modifier (`.rni`, `.rzi`, `.rmi`, `.rpi`)".into())),
            (None, Some(_), CvtRound::None) => return Err(SimError::syntax(inst.at, "a float-to-integer `cvt` needs `.rni`, `.rzi`, `.rmi` or `.rpi`".into())),
            (Some(_), None, CvtRound::Integer(_)) => return Err(SimError::syntax(inst.at, "an integer-to-float `cvt` takes `.rn`, `.rz`, `.rm` or `.rp`".into())),
            (None, None, r) if r != CvtRound::None => return Err(SimError::syntax(inst.at, "an integer-to-integer `cvt` takes no rounding modifier".into())),
            _ => {}
        }
        self.expect_operands(inst, &[2])?;
        out.op = Op::Cvt { dty, sty, round, ftz, sat, relu };
        out.dsts.push(self.dst(&inst.operands[0], dty)?);
        out.srcs.push(self.src(&inst.operands[1], sty)?);
        Ok(())
    }

    fn mov(&self, out: &mut Inst, w: &mut Words, inst: &parser::Inst) -> Result<(), SimError> {
        let ty = w.one_type()?;
        self.expect_operands(inst, &[2])?;
        let ops = &inst.operands;
        match (&ops[0], &ops[1]) {
            (Operand::Vector(parts, at), src) => {
                let lanes = parts.len() as u32;
                if !matches!(lanes, 2 | 4) || ty.bits() % lanes != 0 {
                    return Err(SimError::syntax(*at, format!("a .{} value unpacks into 2 or 4 parts", ty.name())));
                }
                let part = part_type(ty.bits() / lanes);
                out.op = Op::Unpack { ty, lanes };
                for p in parts {
                    out.dsts.push(self.dst(p, part)?);
                }
                out.srcs.push(self.src(src, ty)?);
            }
            (dst, Operand::Vector(parts, at)) => {
                let lanes = parts.len() as u32;
                if !matches!(lanes, 2 | 4) || ty.bits() % lanes != 0 {
                    return Err(SimError::syntax(*at, format!("a .{} value packs 2 or 4 parts", ty.name())));
                }
                let part = part_type(ty.bits() / lanes);
                out.op = Op::Pack { ty, lanes };
                out.dsts.push(self.dst(dst, ty)?);
                for p in parts {
                    out.srcs.push(self.src(p, part)?);
                }
            }
            (dst, src) => {
                out.op = Op::Mov { ty };
                out.dsts.push(self.dst(dst, ty)?);
                out.srcs.push(self.src(src, ty)?);
            }
        }
        Ok(())
    }

    fn load_store(&self, out: &mut Inst, w: &mut Words, inst: &parser::Inst) -> Result<(), SimError> {
        let store = inst.opcode == "st";
        let volatile = w.has("volatile");
        w.has("nc");
        w.ordering_and_hints();
        let space = w.space();
        let vec = w.vector();
        let ty = w.one_type()?;
        if ty == Ty::Pred {
            return Err(SimError::syntax(inst.at, "`.pred` values cannot be loaded or stored".into()));
        }
        self.expect_operands(inst, &[2])?;
        let ops = &inst.operands;
        let (value, address) = if store { (&ops[1], &ops[0]) } else { (&ops[0], &ops[1]) };
        let (addr, sym_space) = self.address(address)?;
        let space = space.unwrap_or(Space::Generic);
        if let Some(s) = sym_space {
            if space != Space::Generic && s != space && s != Space::Generic {
                return Err(SimError::syntax(address.at(), format!("`{}` is a .{} variable, but the access is .{}", address_name(address), s.name(), space.name())));
            }
        }
        let values: Vec<&Operand> = match value {
            Operand::Vector(parts, at) => {
                if parts.len() as u32 != vec {
                    return Err(SimError::syntax(*at, format!("a .v{vec} access takes {vec} registers, found {}", parts.len())));
                }
                parts.iter().collect()
            }
            single => {
                if vec != 1 {
                    return Err(SimError::syntax(single.at(), format!("a .v{vec} access takes {{...}} with {vec} registers")));
                }
                vec![single]
            }
        };
        for v in values {
            if store {
                out.srcs.push(self.src(v, ty)?);
            } else {
                out.dsts.push(self.dst(v, ty)?);
            }
        }
        out.addr = Some(addr);
        out.op = if store { Op::St { space, ty, vec, volatile } } else { Op::Ld { space, ty, vec, volatile } };
        Ok(())
    }

    fn atomic(&self, out: &mut Inst, w: &mut Words, inst: &parser::Inst) -> Result<(), SimError> {
        let red = inst.opcode == "red";
        w.ordering_and_hints();
        w.has("noftz");
        let space = w.space().unwrap_or(Space::Generic);
        if !matches!(space, Space::Generic | Space::Global | Space::Shared) {
            return Err(SimError::syntax(inst.at, format!("atomics work on global and shared memory, not .{}", space.name())));
        }
        let vec = w.vector();
        let op = match w.one_of(&["add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"]) {
            Some("add") => AtomOp::Add,
            Some("min") => AtomOp::Min,
            Some("max") => AtomOp::Max,
            Some("inc") => AtomOp::Inc,
            Some("dec") => AtomOp::Dec,
            Some("and") => AtomOp::And,
            Some("or") => AtomOp::Or,
            Some("xor") => AtomOp::Xor,
            Some("exch") => AtomOp::Exch,
            Some("cas") => AtomOp::Cas,
            _ => return Err(SimError::syntax(inst.at, format!("`{}` needs an operation such as `.add`", inst.opcode))),
        };
        let ty = w.one_type()?;
        if red && matches!(op, AtomOp::Exch | AtomOp::Cas) {
            return Err(SimError::syntax(inst.at, "`red` has no `.exch` or `.cas`".into()));
        }
        let ops = &inst.operands;
        let sources = if op == AtomOp::Cas { 2 } else { 1 };
        self.expect_operands(inst, &[sources + if red { 1 } else { 2 }])?;
        let mut k = 0;
        if !red {
            match &ops[0] {
                Operand::Vector(parts, _) if vec > 1 => {
                    for p in parts {
                        out.dsts.push(self.dst(p, ty)?);
                    }
                }
                d => out.dsts.push(self.dst(d, ty)?),
            }
            k = 1;
        }
        let (addr, _) = self.address(&ops[k])?;
        out.addr = Some(addr);
        for o in &ops[k + 1..] {
            match o {
                Operand::Vector(parts, _) if vec > 1 => {
                    for p in parts {
                        out.srcs.push(self.src(p, ty)?);
                    }
                }
                s => out.srcs.push(self.src(s, ty)?),
            }
        }
        out.op = Op::Atom { space, op, ty, red, vec };
        Ok(())
    }

    fn barrier(&self, out: &mut Inst, w: &mut Words, inst: &parser::Inst) -> Result<(), SimError> {
        w.has("aligned");
        w.has("cta");
        let ops = &inst.operands;
        if w.has("warp") {
            if !w.has("sync") {
                return Err(SimError::syntax(inst.at, "`bar.warp` needs `.sync`".into()));
            }
            self.expect_operands(inst, &[1])?;
            out.op = Op::BarWarpSync;
            out.srcs.push(self.src(&ops[0], Ty::B32)?);
            return Ok(());
        }
        let kind = if w.has("sync") {
            BarKind::Sync
        } else if w.has("arrive") {
            BarKind::Arrive
        } else if w.has("red") {
            match w.one_of(&["popc", "and", "or"]) {
                Some("popc") => BarKind::RedPopc,
                Some("and") => BarKind::RedAnd,
                Some("or") => BarKind::RedOr,
                _ => return Err(SimError::syntax(inst.at, "`bar.red` needs `.popc`, `.and` or `.or`".into())),
            }
        } else {
            return Err(SimError::syntax(inst.at, format!("`{}` needs `.sync`, `.arrive` or `.red`", inst.opcode)));
        };
        let red = matches!(kind, BarKind::RedPopc | BarKind::RedAnd | BarKind::RedOr);
        if red {
            let ty = w.one_type()?;
            self.expect_operands(inst, &[3, 4])?;
            out.dsts.push(self.dst(&ops[0], ty)?);
            out.srcs.push(self.src(&ops[1], Ty::U32)?);
            let has_count = ops.len() == 4;
            if has_count {
                out.srcs.push(self.src(&ops[2], Ty::U32)?);
            }
            out.srcs.push(self.pred_src(ops.last().expect("operands"))?);
            out.op = Op::Bar { kind, has_count };
        } else {
            self.expect_operands(inst, &[1, 2])?;
            for o in ops {
                out.srcs.push(self.src(o, Ty::U32)?);
            }
            out.op = Op::Bar { kind, has_count: ops.len() == 2 };
        }
        Ok(())
    }

    fn call(&self, out: &mut Inst, w: &mut Words, inst: &parser::Inst) -> Result<(), SimError> {
        w.has("uni");
        let ops = &inst.operands;
        let mut k = 0;
        let mut results = Vec::new();
        if let Some(Operand::List(items, _)) = ops.first() {
            for item in items {
                results.push(self.call_param(item)?);
            }
            k = 1;
        }
        let Some(target) = ops.get(k) else { return Err(SimError::syntax(inst.at, "`call` needs a function".into())) };
        let (callee, indirect) = match target {
            Operand::Sym { name, offset: 0, at, .. } => match self.lookup(name) {
                Some(Binding::Sym(Sym::Function(f), _)) => (Some(f), None),
                _ => return Err(SimError::syntax(*at, format!("`{name}` is not a function"))),
            },
            reg @ Operand::Reg { .. } => (None, Some(self.src(reg, Ty::U64)?)),
            other => return Err(SimError::syntax(other.at(), "`call` takes a function name or a register".into())),
        };
        let mut args = Vec::new();
        if let Some(Operand::List(items, _)) = ops.get(k + 1) {
            for item in items {
                args.push(self.call_param(item)?);
            }
        }
        // An indirect call names its prototype last; a direct call may too (ignored).
        let expected = k + 1 + usize::from(ops.get(k + 1).is_some_and(|o| matches!(o, Operand::List(..))));
        if ops.len() > expected + 1 || (ops.len() == expected + 1 && !matches!(ops[expected], Operand::Sym { .. })) {
            return Err(SimError::syntax(inst.at, "malformed `call` operands".into()));
        }
        out.op = Op::Call(Box::new(Call { callee, target: indirect, args, results }));
        Ok(())
    }

    fn call_param(&self, op: &Operand) -> Result<u32, SimError> {
        match op {
            Operand::Sym { name, offset: 0, at, .. } => match self.lookup(name) {
                Some(Binding::Sym(Sym::FrameParam(k), _)) => Ok(k),
                _ => Err(SimError::unsupported(*at, format!("`{name}` is not a `.param` variable of this function; call arguments must be")))
            },
            other => Err(SimError::unsupported(other.at(), "call arguments and results must be `.param` variables".into())),
        }
    }
}

fn address_name(op: &Operand) -> String {
    match op {
        Operand::Addr { base: PAddrBase::Sym(s), .. } => s.clone(),
        _ => "the address".into(),
    }
}

fn part_type(bits: u32) -> Ty {
    match bits {
        8 => Ty::B8,
        16 => Ty::B16,
        32 => Ty::B32,
        _ => Ty::B64,
    }
}

/// The result type of `mul.wide`/`mad.wide`.
fn wide(ty: Ty) -> Ty {
    match ty {
        Ty::S16 => Ty::S32,
        Ty::U16 => Ty::U32,
        Ty::S32 => Ty::S64,
        Ty::U32 => Ty::U64,
        Ty::S64 | Ty::U64 => Ty::B128,
        other => other,
    }
}

/// Whether a register of type `reg` may be an operand of type `ty` (PTX ISA, "Type
/// Information for Instructions and Operands"): the same size, where a bit-size type
/// goes with any type, signed and unsigned integers go with each other, and a
/// floating-point register only with its own type. `wide` (ld, st, cvt) also takes a
/// register wider than the operand type. ptxas rejects the rest, for example `sub.s32`
/// reading an `.f32` register.
fn compatible(reg: Ty, ty: Ty, wide: bool) -> bool {
    #[derive(PartialEq)]
    enum Kind {
        Bits,
        Int,
        Float,
    }
    let kind = |t: Ty| match t {
        Ty::B8 | Ty::B16 | Ty::B32 | Ty::B64 | Ty::B128 | Ty::Pred => Kind::Bits,
        Ty::U8 | Ty::U16 | Ty::U32 | Ty::U64 | Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64 | Ty::U16x2 | Ty::S16x2 => Kind::Int,
        Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2 | Ty::F32 | Ty::F64 | Ty::F32x2 | Ty::TF32 => Kind::Float,
    };
    let size = reg.bits() == ty.bits() || (wide && reg.bits() > ty.bits());
    let class = match (kind(reg), kind(ty)) {
        (Kind::Bits, _) | (_, Kind::Bits) | (Kind::Int, Kind::Int) => true,
        (Kind::Float, Kind::Float) => reg == ty,
        _ => false,
    };
    size && class
}
