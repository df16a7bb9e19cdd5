//! Tests of the random kernel generator: every kernel parses, verifies and round-trips;
//! the generator covers every type and opcode it promises; the guards against undefined
//! behaviour are in place; memory stays inside the documented buffers.

use std::collections::{BTreeSet, HashMap};

use super::*;
use crate::mir::{parser, printer, row_type, verifier, Function, Inst, Module, Operand, ValueId};

fn tables() -> &'static TargetTables {
    tables::nvptx()
}

fn parse_and_verify(kernel: &GeneratedKernel) -> Module {
    let t = tables();
    let module = parser::parse_module(&kernel.text, "random.mir", t).unwrap_or_else(|e| panic!("{}\n{}", e.render(), kernel.text));
    let errors = verifier::verify_module(&module, t, verifier::Source { file: "random.mir", text: &kernel.text });
    assert!(errors.is_empty(), "{}\n{}", errors.iter().map(|e| e.render()).collect::<String>(), kernel.text);
    module
}

fn kernels(config: &GeneratorConfig, seeds: std::ops::Range<u64>) -> impl Iterator<Item = GeneratedKernel> + '_ {
    seeds.map(move |seed| generate(seed, config, tables()).unwrap_or_else(|e| panic!("seed {seed}: {e}")))
}

fn opcode_name(inst: &Inst) -> &'static str {
    inst.opcode.name(tables())
}

fn type_name(f: &Function, v: ValueId) -> &'static str {
    tables().type_info(f.value(v).ty).map_or("?", |t| t.name)
}

/// Every instruction of the kernel (the first function; the device functions after it
/// only return their parameters) with its function.
fn instructions(module: &Module) -> impl Iterator<Item = (&Function, &Inst)> {
    module.functions.iter().take(1).flat_map(|f| f.blocks.iter().flat_map(move |b| b.insts.iter().map(move |i| (f, i))))
}

#[test]
fn thousands_of_kernels_parse_verify_and_round_trip() {
    let t = tables();
    let configs = [GeneratorConfig::default(), GeneratorConfig::everything(), GeneratorConfig::only(&["i128"]), GeneratorConfig::only(&["v3i8", "bf16"])];
    for (c, config) in configs.iter().enumerate() {
        let count = if c < 2 { 1200 } else { 200 };
        for kernel in kernels(config, 0..count) {
            let module = parse_and_verify(&kernel);
            let printed = printer::print_module(&module, t);
            let reparsed = parser::parse_module(&printed, "printed.mir", t).unwrap_or_else(|e| panic!("{}\n{printed}", e.render()));
            assert_eq!(reparsed.without_locs(), module.without_locs(), "printing changed the module:\n{}", kernel.text);
            assert_eq!(module.functions[0].name, kernel.name);
            for (k, helper) in module.functions.iter().enumerate().skip(1) {
                assert_eq!((helper.name.clone(), helper.kind), (format!("helper{}", k - 1), backend_kind_device()), "{}", kernel.text);
            }
            assert!(!kernel.outputs.is_empty(), "a kernel that stores nothing:\n{}", kernel.text);
        }
    }
}

#[test]
fn generation_is_deterministic_per_seed_and_varies_across_seeds() {
    let config = GeneratorConfig::default();
    let mut distinct = BTreeSet::new();
    for seed in 0..100 {
        let a = generate(seed, &config, tables()).unwrap();
        let b = generate(seed, &config, tables()).unwrap();
        assert_eq!(a, b, "seed {seed} gave two different kernels");
        distinct.insert(a.text);
    }
    assert!(distinct.len() >= 99, "only {} distinct kernels from 100 seeds", distinct.len());
    let bytes: Vec<u8> = (0..=255).collect();
    assert_eq!(generate_from_bytes(&bytes, &config, tables()), generate_from_bytes(&bytes, &config, tables()));
}

/// Every type, opcode, flag and condition code the generator promises shows up across
/// a few thousand seeds. The lists are written out here, not taken from the generator,
/// so a change that stops generating (say) i128 or bf16 fails this test.
#[test]
fn covers_every_type_opcode_and_condition_code() {
    let config = GeneratorConfig::everything();
    let mut types = BTreeSet::new();
    let mut pairs = BTreeSet::new(); // (opcode, row type)
    let mut spelled = BTreeSet::new(); // opcode with flags: LOAD.sext.i8
    let mut codes = BTreeSet::new(); // (condition code, compared type)
    let mut results = BTreeSet::new(); // (opcode, result type)
    for kernel in kernels(&config, 0..3000) {
        let module = parse_and_verify(&kernel);
        for (f, inst) in instructions(&module) {
            let name = opcode_name(inst);
            for d in &inst.defs {
                types.insert(type_name(f, *d));
            }
            if let Some(d) = inst.defs.first() {
                results.insert((name, type_name(f, *d)));
            }
            if let Some(vt) = row_type(f, inst, tables()) {
                pairs.insert((name, tables().type_info(vt).map_or("?", |t| t.name)));
            }
            let mut full = name.to_string();
            for flag in &inst.flags {
                full.push('.');
                full.push_str(flag);
            }
            spelled.insert(full);
            spelled.insert(name.to_string());
            if let Some(Operand::CondCode(cc)) = inst.operands.first() {
                if let Some(Operand::Value(v)) = inst.operands.get(1) {
                    codes.insert((tables().cond_code_info(*cc).map_or("?", |c| c.name), type_name(f, *v)));
                }
            }
        }
    }
    let mut missing = Vec::new();
    for ty in ALL_TYPES {
        if !types.contains(ty) {
            missing.push(format!("type {ty}"));
        }
    }
    let mut need = |op: &'static str, tys: &[&'static str]| {
        for ty in tys {
            if !pairs.contains(&(op, *ty)) {
                missing.push(format!("{op} on {ty}"));
            }
        }
    };
    let int_scalars = ["i8", "i16", "i32", "i64", "i128"];
    let int_vectors = ["v2i8", "v3i8", "v4i8", "v2i16", "v4i16", "v2i32", "v4i32", "v2i64"];
    let floats = ["f16", "bf16", "f32", "f64"];
    let float_vectors = ["v2f16", "v4f16", "v8f16", "v2bf16", "v4bf16", "v2f32", "v4f32", "v2f64"];
    let vectors: Vec<&'static str> = int_vectors.iter().chain(&float_vectors).copied().collect();
    let all_but_i1: Vec<&'static str> = ALL_TYPES.iter().copied().filter(|t| *t != "i1").collect();
    for op in ["ADD", "SUB", "MUL", "MULHS", "MULHU", "SDIV", "UDIV", "SREM", "UREM", "AND", "OR", "XOR", "SHL", "SRA", "SRL", "ROTL", "ROTR", "SMIN", "SMAX", "UMIN", "UMAX", "ABS"] {
        need(op, &int_scalars);
        need(op, &int_vectors);
    }
    for op in ["CTLZ", "CTTZ", "CTPOP", "BITREVERSE", "UADDO", "USUBO"] {
        need(op, &int_scalars);
    }
    need("BSWAP", &["i16", "i32", "i64", "i128"]);
    for op in ["AND", "OR", "XOR"] {
        need(op, &["i1"]);
    }
    for op in ["FADD", "FSUB", "FMUL", "FDIV", "FMA", "FNEG", "FABS", "FSQRT", "FMINNUM", "FMAXNUM", "FCEIL", "FFLOOR", "FTRUNC", "FRINT", "FREM", "FSIN", "FCOS", "FEXP2", "FLOG2"] {
        need(op, &floats);
        need(op, &float_vectors);
    }
    for op in ["BUILD_VECTOR", "EXTRACT_VECTOR_ELT", "INSERT_VECTOR_ELT", "VECTOR_SHUFFLE", "UNDEF"] {
        need(op, &vectors);
    }
    need("STORE", &ALL_TYPES);
    need("SELECT", &ALL_TYPES);
    need("SELECT_CC", &["i1", "i8", "i16", "i32", "i64", "i128", "f16", "bf16", "f32", "f64"]); // the row is the compared type
    need("LOAD", &all_but_i1);
    need("PHI", &ALL_TYPES);
    need("CONSTANT", &["i1", "i8", "i16", "i32", "i64", "i128"]);
    need("FCONSTANT", &floats);
    need("SIGN_EXTEND", &["i16", "i32", "i64", "i128", "v2i16", "v4i32", "v2i64"]);
    need("ZERO_EXTEND", &["i8", "i16", "i32", "i64", "i128", "v2i16", "v4i32", "v2i64"]);
    need("ANY_EXTEND", &["i8", "i16", "i32", "i64", "i128", "v4i16"]);
    need("TRUNCATE", &["i1", "i8", "i16", "i32", "i64", "v2i8", "v4i16"]);
    need("FP_EXTEND", &["f16", "bf16", "f32", "v2f16", "v4bf16", "v2f32"]);
    need("FP_ROUND", &["f16", "bf16", "f32", "v2f16", "v4f16", "v2f32"]);
    for op in ["FP_TO_SINT", "FP_TO_UINT"] {
        need(op, &floats); // the row is the float source
    }
    for op in ["SINT_TO_FP", "UINT_TO_FP"] {
        need(op, &floats);
    }
    // No other type has the 8 bits of i8 or the 24 of v3i8.
    let bitcastable: Vec<&'static str> = all_but_i1.iter().copied().filter(|t| !matches!(*t, "i8" | "v3i8")).collect();
    need("BITCAST", &bitcastable);
    need("CONCAT_VECTORS", &["v4i8", "v4i16", "v4i32", "v4f16", "v8f16", "v4bf16", "v4f32"]);
    need("EXTRACT_SUBVECTOR", &["v4i8", "v4i16", "v4i32", "v4f16", "v8f16", "v4bf16", "v4f32"]);
    need("BR_CC", &["i32", "i64", "f32"]);
    need("BRCOND", &["i1"]);
    for spelling in [
        "LOAD.sext.i8", "LOAD.zext.i8", "LOAD.anyext.i8", "LOAD.sext.i16", "LOAD.zext.i16", "LOAD.anyext.i16", "LOAD.sext.i32",
        "LOAD.zext.i32", "LOAD.anyext.i32", "LOAD.invariant", "STORE.trunc.i8", "STORE.trunc.i16", "STORE.trunc.i32", "COPY", "BR", "RET",
    ] {
        if !spelled.contains(spelling) {
            missing.push(spelling.to_string());
        }
    }
    for ty in ALL_TYPES {
        if !results.contains(&("SELECT_CC", ty)) {
            missing.push(format!("SELECT_CC producing {ty}"));
        }
    }
    let integer_codes = ["eq", "ne", "lt", "le", "gt", "ge", "ult", "ule", "ugt", "uge"];
    let float_codes = ["oeq", "one", "olt", "ole", "ogt", "oge", "ord", "uno", "ueq", "une", "ult", "ule", "ugt", "uge", "eq", "ne", "lt", "le", "gt", "ge"];
    for ty in ["i1", "i8", "i16", "i32", "i64", "i128"] {
        for cc in integer_codes {
            if !codes.contains(&(cc, ty)) {
                missing.push(format!("condition code {cc} on {ty}"));
            }
        }
    }
    for ty in floats {
        for cc in float_codes {
            if !codes.contains(&(cc, ty)) {
                missing.push(format!("condition code {cc} on {ty}"));
            }
        }
    }
    assert!(missing.is_empty(), "not generated in 3000 seeds:\n{}", missing.join("\n"));
}

#[test]
fn optional_operations_stay_off_by_default() {
    for kernel in kernels(&GeneratorConfig::default(), 0..400) {
        let module = parse_and_verify(&kernel);
        for (f, inst) in instructions(&module) {
            let name = opcode_name(inst);
            assert!(!matches!(name, "FSIN" | "FCOS" | "FEXP2" | "FLOG2"), "{name} without approximate_functions:\n{}", kernel.text);
            if let (Some(Operand::CondCode(cc)), Some(Operand::Value(v))) = (inst.operands.first(), inst.operands.get(1)) {
                let code = tables().cond_code_info(*cc).map_or("?", |c| c.name);
                let float = tables().type_info(f.value(*v).ty).is_some_and(|t| t.kind == TypeKind::Float);
                assert!(!(float && NAN_UNSPECIFIED_CODES.contains(&code)), "float `{code}` by default:\n{}", kernel.text);
            }
        }
    }
    let no_frem = GeneratorConfig { float_remainder: false, ..GeneratorConfig::only(&["f32", "f64"]) };
    for kernel in kernels(&no_frem, 0..200) {
        assert!(!kernel.text.contains("FREM"), "FREM with float_remainder off:\n{}", kernel.text);
    }
    let straight = GeneratorConfig { if_else: false, loops: false, ..GeneratorConfig::default() };
    for kernel in kernels(&straight, 0..200) {
        let module = parse_and_verify(&kernel);
        assert_eq!(module.functions[0].blocks.len(), 1, "control flow although if_else and loops are off:\n{}", kernel.text);
    }
}

/// A kernel focused on some types computes only on them: every value has a focus type,
/// an element type of one, an `i1` condition, an `i32`/`i64` index or counter, or `p1`.
#[test]
fn kernels_stay_on_their_focus_types() {
    for focus in [&["i128"][..], &["bf16"], &["v4f16"], &["i8", "f16"], &["v3i8"], &["i1"]] {
        let config = GeneratorConfig::only(focus);
        let mut focus_arithmetic = 0;
        for kernel in kernels(&config, 0..150) {
            let mut chosen = kernel.focus_types.clone();
            chosen.sort();
            let mut expected = focus.to_vec();
            expected.sort();
            assert_eq!(chosen, expected);
            let module = parse_and_verify(&kernel);
            let mut allowed: BTreeSet<&str> = ["i1", "i32", "i64", "p1", "p5"].into_iter().collect();
            for ty in focus {
                allowed.insert(ty);
                allowed.insert(resolve(tables(), ty).map_or("?", |t| t.element));
            }
            if focus == ["i1"] {
                allowed.insert("i8"); // an i1 leaf is a truncated byte when nothing else is in focus
            }
            for (f, inst) in instructions(&module) {
                for d in &inst.defs {
                    let ty = type_name(f, *d);
                    assert!(allowed.contains(ty), "focus {focus:?}: a value of type {ty}:\n{}", kernel.text);
                    if focus.contains(&ty) && !matches!(opcode_name(inst), "LOAD" | "CONSTANT" | "FCONSTANT" | "PHI" | "ARG") {
                        focus_arithmetic += 1;
                    }
                }
            }
        }
        assert!(focus_arithmetic > 500, "focus {focus:?}: only {focus_arithmetic} operations on the focus types in 150 kernels");
    }
}

/// The literal of a constant, or of every lane of a BUILD_VECTOR of constants.
fn constant_lanes(defs: &HashMap<ValueId, &Inst>, v: ValueId) -> Option<Vec<i128>> {
    let inst = defs.get(&v)?;
    match opcode_name(inst) {
        "CONSTANT" => match inst.operands.first()? {
            Operand::Int(i) => Some(vec![i.get()]),
            _ => None,
        },
        "BUILD_VECTOR" => inst.uses().map(|l| constant_lanes(defs, l).and_then(|c| c.first().copied())).collect(),
        _ => None,
    }
}

fn value_operand(inst: &Inst, index: usize) -> Option<ValueId> {
    match inst.operands.get(index)? {
        Operand::Value(v) => Some(*v),
        _ => None,
    }
}

/// The guards of the module documentation, checked on the parsed kernels: divisors,
/// shift amounts, float-to-integer sources, and where unspecified bits may flow.
#[test]
fn operations_with_undefined_cases_are_guarded() {
    let t = tables();
    let mut checked = HashMap::new();
    for kernel in kernels(&GeneratorConfig::default(), 0..1500) {
        let module = parse_and_verify(&kernel);
        let f = &module.functions[0];
        let defs: HashMap<ValueId, &Inst> = instructions(&module).flat_map(|(_, i)| i.defs.iter().map(move |d| (*d, i))).collect();
        let mut users: HashMap<ValueId, Vec<&Inst>> = HashMap::new();
        for (_, inst) in instructions(&module) {
            for u in inst.uses() {
                users.entry(u).or_default().push(inst);
            }
        }
        let def_of = |v: Option<ValueId>| v.and_then(|v| defs.get(&v).copied());
        let is_op = |inst: Option<&Inst>, name: &str| inst.is_some_and(|i| opcode_name(i) == name);
        let element_bits = |v: ValueId| {
            let info = t.type_info(f.value(v).ty).copied();
            info.and_then(|i| if i.kind == TypeKind::Vector { t.type_info(VtId(i.elem)).map(|e| e.bits) } else { Some(i.bits) }).unwrap_or(0)
        };
        let fail = |what: &str| -> ! { panic!("{what}:\n{}", kernel.text) };
        for (_, inst) in instructions(&module) {
            let name = opcode_name(inst);
            match name {
                "SDIV" | "UDIV" | "SREM" | "UREM" => {
                    *checked.entry("division").or_insert(0) += 1;
                    let divisor = def_of(value_operand(inst, 1));
                    let or = if is_op(divisor, "AND") { def_of(divisor.and_then(|d| value_operand(d, 0))) } else { divisor };
                    let odd = is_op(or, "OR") && or.and_then(|o| value_operand(o, 1)).and_then(|k| constant_lanes(&defs, k)).is_some_and(|l| l.iter().all(|x| *x == 1));
                    if !odd {
                        fail(&format!("{name}: the divisor is not ORed with 1"));
                    }
                    if matches!(name, "SDIV" | "SREM") {
                        let bits = element_bits(value_operand(inst, 0).unwrap_or(ValueId(0)));
                        let max = if bits >= 128 { i128::MAX } else { (1i128 << (bits - 1)) - 1 };
                        let dividend = def_of(value_operand(inst, 0));
                        let non_negative = is_op(dividend, "AND")
                            && dividend.and_then(|d| value_operand(d, 1)).and_then(|k| constant_lanes(&defs, k)).is_some_and(|l| l.iter().all(|x| *x == max));
                        let not_minus_one = is_op(divisor, "AND")
                            && divisor.and_then(|d| value_operand(d, 1)).and_then(|k| constant_lanes(&defs, k)).is_some_and(|l| l.iter().all(|x| *x == -3));
                        if !non_negative && !not_minus_one {
                            fail(&format!("{name}: neither the dividend is non-negative nor the divisor is never -1"));
                        }
                    }
                }
                "SHL" | "SRA" | "SRL" | "ROTL" | "ROTR" => {
                    *checked.entry("shift").or_insert(0) += 1;
                    let bits = element_bits(value_operand(inst, 0).unwrap_or(ValueId(0))) as i128;
                    let amount = def_of(value_operand(inst, 1));
                    let masked = is_op(amount, "AND")
                        && amount.and_then(|a| value_operand(a, 1)).and_then(|k| constant_lanes(&defs, k)).is_some_and(|l| l.iter().all(|x| *x == bits - 1));
                    if !masked {
                        fail(&format!("{name}: the amount is not ANDed with {}", bits - 1));
                    }
                }
                "FP_TO_SINT" | "FP_TO_UINT" => {
                    *checked.entry("float to integer").or_insert(0) += 1;
                    let source = def_of(value_operand(inst, 0));
                    let inner = def_of(source.and_then(|s| value_operand(s, 0)));
                    let constant = |i: Option<&Inst>| is_op(def_of(i.and_then(|i| value_operand(i, 1))), "FCONSTANT");
                    if !(is_op(source, "FMAXNUM") && is_op(inner, "FMINNUM") && constant(source) && constant(inner)) {
                        fail(&format!("{name}: the source is not clamped by FMINNUM/FMAXNUM with constants"));
                    }
                }
                "ANY_EXTEND" | "UNDEF" | "LOAD" if name != "LOAD" || inst.has_flag("anyext") => {
                    *checked.entry("unspecified bits").or_insert(0) += 1;
                    let Some(d) = inst.defs.first() else { continue };
                    for user in users.get(d).map(Vec::as_slice).unwrap_or(&[]) {
                        let ok = match opcode_name(user) {
                            "AND" => value_operand(user, 1).and_then(|k| constant_lanes(&defs, k)).is_some(),
                            "INSERT_VECTOR_ELT" => name == "UNDEF" || value_operand(user, 0) != Some(*d),
                            _ => false,
                        };
                        if !ok {
                            fail(&format!("a result of {name} with unspecified bits reaches {}", opcode_name(user)));
                        }
                    }
                }
                "LOAD" if inst.defs.first().is_some_and(|d| type_name(f, *d) == "i1") => fail("an i1 load"),
                _ => {}
            }
        }
        // The UNDEF chains: a vector built from UNDEF is only used once every lane is set.
        for (_, inst) in instructions(&module) {
            if opcode_name(inst) != "UNDEF" {
                continue;
            }
            let lanes = inst.defs.first().and_then(|d| t.type_info(f.value(*d).ty)).map_or(0, |i| i.lanes);
            let mut current = inst.defs[0];
            let mut set = BTreeSet::new();
            loop {
                let next = users.get(&current).map(Vec::as_slice).unwrap_or(&[]);
                if set.len() == lanes as usize {
                    break;
                }
                let [user] = next else { fail("an UNDEF vector used before every lane is set") };
                if opcode_name(user) != "INSERT_VECTOR_ELT" {
                    fail("an UNDEF vector used before every lane is set");
                }
                let lane = value_operand(user, 2).and_then(|k| constant_lanes(&defs, k)).and_then(|l| l.first().copied());
                set.insert(lane);
                current = user.defs[0];
            }
        }
    }
    for guard in ["division", "shift", "float to integer", "unspecified bits"] {
        assert!(checked.get(guard).copied().unwrap_or(0) > 100, "too few {guard} cases checked: {checked:?}");
    }
}

/// Whether `v`'s bits are fully specified, NaN payloads included: it is not a float, or
/// only loads, constants, arguments and bit moves made it.
fn payload_exact(f: &Function, defs: &HashMap<ValueId, &Inst>, v: ValueId, seen: &mut BTreeSet<ValueId>) -> bool {
    let is_float = tables().type_info(f.value(v).ty).is_some_and(|t| {
        t.kind == TypeKind::Float || (t.kind == TypeKind::Vector && tables().type_info(VtId(t.elem)).is_some_and(|e| e.kind == TypeKind::Float))
    });
    if !is_float || !seen.insert(v) {
        return true; // integers, and PHI cycles already being checked
    }
    let Some(inst) = defs.get(&v) else { return true };
    match opcode_name(inst) {
        "LOAD" | "FCONSTANT" | "ARG" => true,
        // A helper returns its parameters reversed: result k is operand n - 1 - k.
        "CALL" => {
            let args: Vec<ValueId> = inst.uses().collect();
            let k = inst.defs.iter().position(|d| *d == v).unwrap_or(0);
            args.len() == inst.defs.len() && payload_exact(f, defs, args[args.len() - 1 - k], seen)
        }
        "COPY" | "SELECT" | "SELECT_CC" | "FNEG" | "FABS" | "BITCAST" | "BUILD_VECTOR" | "EXTRACT_VECTOR_ELT" | "INSERT_VECTOR_ELT"
        | "VECTOR_SHUFFLE" | "CONCAT_VECTORS" | "EXTRACT_SUBVECTOR" | "UNDEF" | "PHI" => {
            inst.uses().collect::<Vec<_>>().into_iter().all(|u| payload_exact(f, defs, u, seen))
        }
        _ => false,
    }
}

/// A BITCAST turns a float's NaN payload into bits that are compared exactly, so its
/// float source must not come from arithmetic (whose NaN payload is unspecified).
#[test]
fn bitcasts_only_read_floats_with_exact_bits() {
    let mut float_sources = 0;
    for kernel in kernels(&GeneratorConfig::default(), 0..1500) {
        let module = parse_and_verify(&kernel);
        let f = &module.functions[0];
        let defs: HashMap<ValueId, &Inst> = instructions(&module).flat_map(|(_, i)| i.defs.iter().map(move |d| (*d, i))).collect();
        for (_, inst) in instructions(&module) {
            if opcode_name(inst) != "BITCAST" {
                continue;
            }
            let Some(source) = value_operand(inst, 0) else { continue };
            let name = type_name(f, source);
            if name.contains('f') {
                float_sources += 1;
                assert!(payload_exact(f, &defs, source, &mut BTreeSet::new()), "BITCAST of %{} whose NaN payload is unspecified:\n{}", f.value(source).name, kernel.text);
            }
        }
    }
    assert!(float_sources > 200, "only {float_sources} BITCASTs of floats checked");
}

/// The address of a LOAD or STORE as (base name, constant offset).
fn address(defs: &HashMap<ValueId, &Inst>, f: &Function, pointer: ValueId) -> Option<(String, i128)> {
    let is_base = |v: ValueId| matches!(f.value(v).name.as_str(), "input.base" | "output.base");
    if is_base(pointer) {
        return Some((f.value(pointer).name.to_string(), 0));
    }
    let inst = defs.get(&pointer)?;
    let base = value_operand(inst, 0)?;
    let offset = constant_lanes(defs, value_operand(inst, 1)?)?;
    (opcode_name(inst) == "PTR_ADD" && is_base(base)).then(|| (f.value(base).name.to_string(), offset[0]))
}

/// Bytes a LOAD reads or a STORE writes, from its flags or its value type.
fn access_bytes(f: &Function, inst: &Inst, value: ValueId) -> usize {
    for (flag, bytes) in [("i8", 1), ("i16", 2), ("i32", 4)] {
        if inst.has_flag(flag) {
            return bytes;
        }
    }
    let info = tables().type_info(f.value(value).ty).copied();
    match info {
        Some(i) if i.bits == 1 => 1,
        Some(i) => i.bits as usize / 8,
        None => 0,
    }
}

/// Loads stay in the input region and stores in the output region, naturally aligned;
/// stores never overlap and match the kernel's `outputs`; every result is used or stored.
#[test]
fn memory_accesses_match_the_documented_buffers() {
    for kernel in kernels(&GeneratorConfig::default(), 0..800) {
        let module = parse_and_verify(&kernel);
        let f = &module.functions[0];
        let defs: HashMap<ValueId, &Inst> = instructions(&module).flat_map(|(_, i)| i.defs.iter().map(move |d| (*d, i))).collect();
        let mut stored = Vec::new();
        let mut used = BTreeSet::new();
        for (_, inst) in instructions(&module) {
            used.extend(inst.uses());
            let name = opcode_name(inst);
            let (pointer, value) = match name {
                "LOAD" => (value_operand(inst, 0), inst.defs.first().copied()),
                "STORE" => (value_operand(inst, 1), value_operand(inst, 0)),
                _ => continue,
            };
            let (Some(pointer), Some(value)) = (pointer, value) else { panic!("malformed {name}:\n{}", kernel.text) };
            // The frame round trip (a store and a load of one cell of `scratch`) is
            // checked by the interpreter: a load of a cell never stored is undefined there.
            if f.value(pointer).ty == tables().vt("p5").unwrap() {
                continue;
            }
            let Some((base, offset)) = address(&defs, f, pointer) else { panic!("{name} through an unexpected address:\n{}", kernel.text) };
            let bytes = access_bytes(f, inst, value);
            let (expected_base, stride) = if name == "LOAD" { ("input.base", kernel.input_stride) } else { ("output.base", kernel.output_stride) };
            assert_eq!(base, expected_base, "{name} from {base}:\n{}", kernel.text);
            let align = bytes.next_power_of_two().min(16) as i128;
            assert!(offset >= 0 && offset % align == 0, "{name} at offset {offset} is not {align}-aligned:\n{}", kernel.text);
            assert!(offset as usize + bytes <= stride, "{name} of {bytes} bytes at {offset} leaves the {stride}-byte region:\n{}", kernel.text);
            if name == "STORE" {
                stored.push((offset as usize, bytes));
            }
        }
        let listed: Vec<(usize, usize)> = kernel.outputs.iter().map(|s| (s.offset, s.size)).collect();
        assert_eq!(stored, listed, "the stores and `outputs` disagree:\n{}", kernel.text);
        let mut sorted = stored.clone();
        sorted.sort();
        for pair in sorted.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "stores overlap: {pair:?}:\n{}", kernel.text);
        }
        let prologue = ["input", "output", "tid", "tid.wide", "input.stride", "input.offset", "input.base", "output.stride", "output.offset", "output.base"];
        for (_, inst) in instructions(&module) {
            for d in &inst.defs {
                let name = &f.value(*d).name;
                assert!(used.contains(d) || prologue.contains(&name.as_str()), "%{name} is neither used nor stored:\n{}", kernel.text);
            }
        }
        assert_eq!(kernel.required_input_bytes(32), 32 * kernel.input_stride);
        assert_eq!(kernel.required_output_bytes(4), 4 * kernel.output_stride);
    }
}

#[test]
fn any_fuzzer_bytes_give_a_valid_kernel() {
    let config = GeneratorConfig::everything();
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), vec![0; 4096], vec![0xFF; 4096], vec![0x80; 3], (0..=255).collect()];
    let mut random = SeededRandom::new(7);
    for length in [1, 8, 64, 512, 4096] {
        for _ in 0..40 {
            inputs.push((0..length).map(|_| random.below(256) as u8).collect());
        }
    }
    for bytes in &inputs {
        let kernel = generate_from_bytes(bytes, &config, tables()).unwrap();
        parse_and_verify(&kernel);
    }
}

#[test]
fn bad_configurations_are_errors_not_panics() {
    let t = tables();
    let unknown = GeneratorConfig::only(&["i7"]);
    assert!(generate(0, &unknown, t).unwrap_err().0.contains("unknown type `i7`"));
    let pointer = GeneratorConfig::only(&["p1"]);
    assert!(generate(0, &pointer, t).unwrap_err().0.contains("`p1`"));
    let empty = GeneratorConfig { types: Vec::new(), ..GeneratorConfig::default() };
    assert!(generate(0, &empty, t).unwrap_err().0.contains("empty"));
    let odd_ranges = GeneratorConfig { types_per_kernel: (9, 0), operations: (5, 1), ..GeneratorConfig::only(&["i32", "f32"]) };
    for seed in 0..20 {
        parse_and_verify(&generate(seed, &odd_ranges, t).unwrap());
    }
}

#[test]
fn output_comparison_forgives_nan_payloads_only() {
    let kernel = GeneratedKernel {
        text: String::new(),
        name: "k".into(),
        focus_types: vec!["f32"],
        scalar_params: Vec::new(),
        input_stride: 16,
        output_stride: 16,
        outputs: vec![
            OutputSlot { offset: 0, size: 4, ty: "f32", element: "f32", lanes: 1 },
            OutputSlot { offset: 4, size: 4, ty: "v2f16", element: "f16", lanes: 2 },
            OutputSlot { offset: 8, size: 4, ty: "i32", element: "i32", lanes: 1 },
        ],
    };
    let mut a = vec![0u8; 32];
    let mut b = vec![0u8; 32];
    assert_eq!(kernel.compare_outputs(&a, &b), Ok(()));
    // Two different NaNs in an f32 lane (thread 1) and in the second f16 lane (thread 0).
    a[16..20].copy_from_slice(&0x7FC0_0000u32.to_le_bytes());
    b[16..20].copy_from_slice(&0xFFC0_0001u32.to_le_bytes());
    a[6..8].copy_from_slice(&0x7E00u16.to_le_bytes());
    b[6..8].copy_from_slice(&0xFC01u16.to_le_bytes());
    assert_eq!(kernel.compare_outputs(&a, &b), Ok(()));
    // A NaN against infinity is a difference.
    b[6..8].copy_from_slice(&0x7C00u16.to_le_bytes());
    let e = kernel.compare_outputs(&a, &b).unwrap_err();
    assert!(e.contains("thread 0") && e.contains("v2f16"), "{e}");
    b[6..8].copy_from_slice(&0x7E00u16.to_le_bytes());
    // The same NaN bits in an integer slot are compared exactly.
    a[24..28].copy_from_slice(&0x7FC0_0000u32.to_le_bytes());
    b[24..28].copy_from_slice(&0x7FC0_0001u32.to_le_bytes());
    let e = kernel.compare_outputs(&a, &b).unwrap_err();
    assert!(e.contains("thread 1") && e.contains("i32"), "{e}");
    b[24..28].copy_from_slice(&0x7FC0_0000u32.to_le_bytes());
    // Padding bytes count too, and so does a -0.0 against +0.0.
    b[13] = 1;
    assert!(kernel.compare_outputs(&a, &b).unwrap_err().contains("no store writes"));
    b[13] = 0;
    b[3] = 0x80;
    assert!(kernel.compare_outputs(&a, &b).is_err());
    assert!(kernel.compare_outputs(&a, &b[..16]).unwrap_err().contains("sizes differ"));
}

#[test]
fn clamp_bounds_are_exact_in_the_float_and_in_range_for_the_integer() {
    // The bound is 2^k - 1 with k = min(integer bits, precision): representable in
    // the float (k <= precision) and inside the integer's range.
    for (float, precision) in [("f16", 11), ("bf16", 8), ("f32", 24), ("f64", 53)] {
        assert_eq!(FloatFormat::of(float).map(|f| f.precision()), Some(precision));
    }
    assert!(is_nan("f16", &0x7E00u16.to_le_bytes()));
    assert!(!is_nan("f16", &0x7C00u16.to_le_bytes()));
    assert!(is_nan("bf16", &0xFFC1u16.to_le_bytes()));
    assert!(!is_nan("bf16", &0x7F80u16.to_le_bytes()));
    assert!(is_nan("f64", &f64::NAN.to_bits().to_le_bytes()));
    assert!(!is_nan("i32", &[0xFF; 4]));
    assert_eq!(wrap_signed(255, 8), -1);
    assert_eq!(wrap_signed(1, 1), 1);
    assert_eq!(wrap_signed(-3, 128), -3);
    assert_eq!(wrap_signed(1 << 40, 32), 0);
}

/// Not a check: prints one kernel and the average kernel size, for looking at the
/// generator's output. `SEED=3 TYPES=i128,f32 cargo test -p backend --lib
/// random_mir::tests::print_one_kernel -- --ignored --nocapture`
#[test]
#[ignore]
fn print_one_kernel() {
    let seed: u64 = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let types: Vec<String> = std::env::var("TYPES").map(|t| t.split(',').map(String::from).collect()).unwrap_or_default();
    let config = if types.is_empty() { GeneratorConfig::default() } else { GeneratorConfig { types_per_kernel: (types.len(), types.len()), types, ..GeneratorConfig::default() } };
    let mut lines = 0;
    for s in 0..200 { lines += generate(s, &config, tables()).unwrap().text.lines().count(); }
    println!("average lines: {}", lines / 200);
    println!("{}", generate(seed, &config, tables()).unwrap().text);
}

fn backend_kind_device() -> crate::mir::FunctionKind {
    crate::mir::FunctionKind::Device
}

/// Calls of the device functions carry values of every kind across the boundary (the
/// legalizer splits their signatures), and kernels take wide parameters.
#[test]
fn kernels_call_device_functions_and_take_wide_parameters() {
    let mut call_types = BTreeSet::new();
    let mut param_types = BTreeSet::new();
    for kernel in kernels(&GeneratorConfig::default(), 0..1500) {
        let module = parse_and_verify(&kernel);
        for helper in module.functions.iter().skip(1) {
            for p in &helper.params {
                call_types.insert(tables().type_info(p.ty).map_or("?", |t| t.name));
            }
        }
        param_types.extend(kernel.scalar_params.iter().copied());
    }
    for t in ["i1", "i8", "i128", "bf16", "v4f32", "v8f16", "v3i8", "v2f64"] {
        assert!(call_types.contains(t), "no call passes {t}; passed: {call_types:?}");
    }
    for t in ["i1", "i128", "v4f32", "v3i8"] {
        assert!(param_types.contains(t), "no kernel takes a {t} parameter; taken: {param_types:?}");
    }
}
