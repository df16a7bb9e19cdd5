//! The legalization kernels (`tests/legalize/*.mir`): small kernels, each aimed at one
//! legalization action (promote, expand, custom, libcall, widen, soften), that the
//! legalizer's differential tests interpret before and after legalization.
//!
//! They live outside `tests/corpus/`, whose tests require operations Legal on every
//! declared SM. Here every file must parse, verify and print back to the same module,
//! and its header must be true:
//!
//! - `# sms: all` (or a list of SM numbers): where the kernel is meant to run;
//! - `# buffers: input N, output M`: thread `tid.x` reads only bytes
//!   `[tid * N, tid * N + N)` of parameter 0 and writes only `[tid * M, tid * M + M)`
//!   of parameter 1, naturally aligned (checked by evaluating every address);
//! - `# legalizes: OPCODE:type ... cc.CODE:type`: each named cell of the description's
//!   tables occurs in the kernel (the opcode on that row type, or the condition code
//!   on that compared type) and is not Legal on at least one of its SMs.
//!
//! Kernel parameters are `input: p1`, `output: p1`, then any values (random in the
//! differential tests).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use backend::mir::{parser, printer, row_type, verifier, Function, Inst, Module, Operand, ValueId};
use target_desc::tables::{Action, TargetTables, TypeKind};

fn kernels() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("legalize");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = format!("tests/legalize/{}", p.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned()));
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, text)
        })
        .collect()
}

/// The value of the `# key:` header line.
fn header<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| l.strip_prefix(&format!("# {key}:"))).map(str::trim)
}

fn parse(file: &str, text: &str, tables: &TargetTables) -> Module {
    let module = parser::parse_module(text, file, tables).unwrap_or_else(|e| panic!("{}", e.render()));
    let errors = verifier::verify_module(&module, tables, verifier::Source { file, text });
    assert!(errors.is_empty(), "{}", errors.iter().map(|e| e.render()).collect::<String>());
    module
}

fn instructions(module: &Module) -> impl Iterator<Item = (&Function, &Inst)> {
    module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(move |b| b.insts.iter().map(move |i| (f, i))))
}

#[test]
fn there_is_a_kernel_for_each_legalization_case() {
    let files = kernels();
    assert!(files.len() >= 15, "only {} kernels in tests/legalize", files.len());
    for (file, text) in &files {
        assert!(text.starts_with("# ") && text.lines().next().is_some_and(|l| l.len() > 40), "{file}: the first line must say what the kernel exercises");
        for key in ["sms", "buffers", "legalizes"] {
            assert!(header(text, key).is_some_and(|v| !v.is_empty()), "{file}: no `# {key}:` line");
        }
    }
}

#[test]
fn every_kernel_parses_verifies_and_round_trips() {
    let tables = tables::nvptx();
    for (file, text) in kernels() {
        let module = parse(&file, &text, tables);
        let printed = printer::print_module(&module, tables);
        let reparsed = parser::parse_module(&printed, &file, tables).unwrap_or_else(|e| panic!("printed form of {file} does not parse: {}\n{printed}", e.render()));
        assert_eq!(reparsed.without_locs(), module.without_locs(), "{file}: printing changed the module");
        for f in module.functions.iter().filter(|f| f.kind == backend::mir::FunctionKind::Kernel) {
            let params: Vec<(&str, &str)> = f.params.iter().map(|p| (p.name.as_str(), tables.type_info(p.ty).map_or("?", |t| t.name))).collect();
            let buffers_first = params.len() >= 2 && params[..2] == [("input", "p1"), ("output", "p1")];
            let values_after = f.params[2..].iter().all(|p| tables.type_info(p.ty).is_some_and(|t| t.kind != TypeKind::Pointer));
            assert!(buffers_first && values_after, "{file}: @{}: parameters {params:?}, expected input: p1, output: p1, then values (no pointers)", f.name);
        }
    }
}

/// The SMs of a `# sms:` line: `all`, or numbers such as `50 80 90a`.
fn declared_sms<'t>(file: &str, text: &str, tables: &'t TargetTables) -> Vec<&'t target_desc::tables::SmTables> {
    let line = header(text, "sms").unwrap_or("");
    if line == "all" {
        return tables.sms.iter().collect();
    }
    line.split_whitespace().map(|s| tables.find_sm(s).unwrap_or_else(|| panic!("{file}: unknown SM {s}"))).collect()
}

#[test]
fn each_named_case_occurs_and_needs_legalization_somewhere() {
    let tables = tables::nvptx();
    let mut problems = Vec::new();
    for (file, text) in kernels() {
        let module = parse(&file, &text, tables);
        let sms = declared_sms(&file, &text, tables);
        assert!(!sms.is_empty(), "{file}: no SMs");
        for entry in header(&text, "legalizes").unwrap_or("").split_whitespace() {
            let Some((what, ty_name)) = entry.split_once(':') else {
                problems.push(format!("{file}: `{entry}` is not OPCODE:type or cc.CODE:type"));
                continue;
            };
            let Some(vt) = tables.vt(ty_name) else {
                problems.push(format!("{file}: `{entry}`: unknown type {ty_name}"));
                continue;
            };
            let (occurs, not_legal_on) = if let Some(code) = what.strip_prefix("cc.") {
                let Some(cc) = tables.cond_code(code) else {
                    problems.push(format!("{file}: `{entry}`: unknown condition code {code}"));
                    continue;
                };
                let occurs = instructions(&module).any(|(f, i)| {
                    matches!((i.operands.first(), i.operands.get(1)), (Some(Operand::CondCode(c)), Some(Operand::Value(v))) if *c == cc && f.value(*v).ty == vt)
                });
                (occurs, sms.iter().find(|sm| tables.decide_cc(sm, cc, vt).action != Action::Legal))
            } else {
                let Some(op) = tables.opcode(what) else {
                    problems.push(format!("{file}: `{entry}`: unknown opcode {what}"));
                    continue;
                };
                let occurs = instructions(&module).any(|(f, i)| i.opcode.generic() == Some(op) && row_type(f, i, tables) == Some(vt));
                (occurs, sms.iter().find(|sm| tables.decide(sm, op, vt).action != Action::Legal || !sm.type_supported(vt)))
            };
            if !occurs {
                problems.push(format!("{file}: `{entry}` is named but does not occur in the kernel"));
            }
            if not_legal_on.is_none() {
                problems.push(format!("{file}: `{entry}` is Legal on every declared SM: nothing to legalize"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// An address or integer as a linear function of the thread index: `per_thread * tid +
/// constant`, relative to parameter `base` for pointers.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Linear {
    base: Option<usize>,
    per_thread: i128,
    constant: i128,
}

fn evaluate(defs: &HashMap<ValueId, &Inst>, v: ValueId, tables: &TargetTables) -> Option<Linear> {
    let inst = defs.get(&v)?;
    let name = inst.opcode.name(tables);
    let operand = |i: usize| match inst.operands.get(i) {
        Some(Operand::Value(x)) => evaluate(defs, *x, tables),
        _ => None,
    };
    let number = |per_thread, constant| Some(Linear { base: None, per_thread, constant });
    match name {
        "CONSTANT" => match inst.operands.first()? {
            Operand::Int(c) => number(0, c.get()),
            _ => None,
        },
        "INTRINSIC" => match inst.operands.first()? {
            Operand::Symbol(s) if &**s == "llvm.nvvm.read.ptx.sreg.tid.x" => number(1, 0),
            _ => None,
        },
        "ARG" => match inst.operands.first()? {
            Operand::Int(i) => Some(Linear { base: Some(usize::try_from(i.get()).ok()?), per_thread: 0, constant: 0 }),
            _ => None,
        },
        "ZERO_EXTEND" | "SIGN_EXTEND" | "COPY" => operand(0),
        "ADD" | "PTR_ADD" => {
            let (a, b) = (operand(0)?, operand(1)?);
            if b.base.is_some() {
                return None;
            }
            Some(Linear { base: a.base, per_thread: a.per_thread + b.per_thread, constant: a.constant + b.constant })
        }
        "MUL" => {
            let (a, b) = (operand(0)?, operand(1)?);
            let (x, k) = if b.per_thread == 0 { (a, b.constant) } else if a.per_thread == 0 { (b, a.constant) } else { return None };
            (x.base.is_none() && b.base.is_none()).then(|| Linear { base: None, per_thread: x.per_thread * k, constant: x.constant * k })
        }
        _ => None,
    }
}

/// Bytes a LOAD or STORE touches: its memory-type flag, else its value type's size.
fn access_bytes(inst: &Inst, value_bits: u16) -> i128 {
    for (flag, bytes) in [("i8", 1), ("i16", 2), ("i32", 4)] {
        if inst.has_flag(flag) {
            return bytes;
        }
    }
    i128::from(value_bits.div_ceil(8))
}

#[test]
fn every_access_stays_in_the_threads_declared_bytes() {
    let tables = tables::nvptx();
    let mut problems = Vec::new();
    for (file, text) in kernels() {
        let buffers = header(&text, "buffers").unwrap_or("");
        let size = |key: &str| {
            buffers.split(',').find_map(|part| part.trim().strip_prefix(key)).and_then(|n| n.trim().parse::<i128>().ok())
        };
        let (Some(input), Some(output)) = (size("input"), size("output")) else {
            problems.push(format!("{file}: `# buffers: {buffers}` is not `input N, output M`"));
            continue;
        };
        let module = parse(&file, &text, tables);
        for f in &module.functions {
            let defs: HashMap<ValueId, &Inst> = f.blocks.iter().flat_map(|b| b.insts.iter()).flat_map(|i| i.defs.iter().map(move |d| (*d, i))).collect();
            for inst in f.blocks.iter().flat_map(|b| &b.insts) {
                let name = inst.opcode.name(tables);
                let (pointer, value) = match (name, inst.operands.as_slice()) {
                    ("LOAD", [Operand::Value(p), ..]) => (*p, inst.defs.first().copied()),
                    ("STORE", [Operand::Value(v), Operand::Value(p), ..]) => (*p, Some(*v)),
                    _ => continue,
                };
                let Some(info) = value.and_then(|v| tables.type_info(f.value(v).ty)) else { continue };
                let bytes = if info.kind == TypeKind::Int && info.bits == 1 { 1 } else { access_bytes(inst, info.bits) };
                let align = inst.operands.iter().find_map(|o| if let Operand::Align(a) = o { Some(*a as i128) } else { None });
                let align = align.unwrap_or_else(|| (bytes as u64).next_power_of_two() as i128);
                let (expected_base, stride) = if name == "LOAD" { (0, input) } else { (1, output) };
                let at = format!("{file}:{}: {name}", inst.loc.line);
                match evaluate(&defs, pointer, tables) {
                    None => problems.push(format!("{at}: the address is not parameter + tid * stride + constant")),
                    Some(a) if a.base != Some(expected_base) => problems.push(format!("{at}: expected an address in parameter {expected_base}, found {:?}", a.base)),
                    Some(a) if a.per_thread != stride => problems.push(format!("{at}: the address advances {} bytes per thread, `# buffers:` says {stride}", a.per_thread)),
                    Some(a) if a.constant < 0 || a.constant + bytes > stride => {
                        problems.push(format!("{at}: bytes {}..{} leave the thread's {stride} bytes", a.constant, a.constant + bytes))
                    }
                    Some(a) if a.constant % align != 0 => problems.push(format!("{at}: offset {} is not {align}-aligned", a.constant)),
                    Some(_) => {}
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
