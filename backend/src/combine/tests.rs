//! Unit tests of the combiner's rules on small functions (the whole-corpus execution
//! check is `backend/tests/combine_differential.rs`).

use crate::mir::parser::parse_module;
use crate::mir::printer::print_module;

fn combine(body: &str, sm: &str) -> (String, super::Stats) {
    let tables = tables::nvptx();
    let text = format!("---\nname: k\nkind: kernel\nparams:\n  - {{ name: p, type: p1 }}\n  - {{ name: x, type: i32 }}\nbody: |\n  bb.0:\n    %p:p1 = ARG 0\n    %x:i32 = ARG 1\n{body}    RET\n...\n");
    let mut m = parse_module(&text, "t.mir", tables).unwrap_or_else(|e| panic!("{}", e.render()));
    let stats = super::run(&mut m, tables, tables.find_sm(sm).unwrap()).unwrap();
    (print_module(&m, tables), stats)
}

#[test]
fn folds_constants_and_removes_the_dead_operands() {
    let (out, stats) = combine("    %a:i32 = CONSTANT 6\n    %b:i32 = CONSTANT 7\n    %c:i32 = MUL %a, %b\n    STORE %c, %p\n", "sm_80");
    assert!(out.contains("%c:i32 = CONSTANT 42"), "{out}");
    assert!(!out.contains("CONSTANT 6"), "dead constants removed:\n{out}");
    assert_eq!(stats.folded, 1);
}

#[test]
fn identities_and_powers_of_two() {
    let (out, _) = combine("    %z:i32 = CONSTANT 0\n    %a:i32 = ADD %x, %z\n    %e:i32 = CONSTANT 8\n    %m:i32 = MUL %a, %e\n    STORE %m, %p\n", "sm_80");
    assert!(out.contains("SHL %x, %k3"), "{out}");
    assert!(!out.contains("ADD"), "{out}");
    let (out, _) = combine("    %e:i32 = CONSTANT 16\n    %q:i32 = UDIV %x, %e\n    %r:i32 = UREM %x, %e\n    %s:i32 = ADD %q, %r\n    STORE %s, %p\n", "sm_80");
    assert!(out.contains("SRL %x, %k4") && out.contains("AND %x, %k15"), "{out}");
}

#[test]
fn undefined_behaviour_is_left_alone() {
    let (out, stats) = combine("    %z:i32 = CONSTANT 0\n    %a:i32 = CONSTANT 5\n    %c:i32 = SDIV %a, %z\n    STORE %c, %p\n", "sm_80");
    assert!(out.contains("SDIV"), "{out}");
    assert_eq!(stats.folded, 0);
}

#[test]
fn constant_offsets_are_reassociated() {
    let (out, _) = combine("    %c4:i64 = CONSTANT 4\n    %q:p1 = PTR_ADD %p, %c4\n    %c8:i64 = CONSTANT 8\n    %r:p1 = PTR_ADD %q, %c8\n    STORE %x, %r\n", "sm_80");
    assert!(out.contains("%r:p1 = PTR_ADD %p, %k12"), "{out}");
    assert!(!out.contains("%q:p1"), "the inner address is dead:\n{out}");
}

#[test]
fn vector_lanes_come_from_their_builder() {
    let body = "    %i0:i32 = CONSTANT 0\n    %i1:i32 = CONSTANT 1\n    %y:i32 = ADD %x, %x\n    %v:v2i32 = BUILD_VECTOR %x, %y\n    %a:i32 = EXTRACT_VECTOR_ELT %v, %i1\n    %b:i32 = EXTRACT_VECTOR_ELT %v, %i0\n    %w:v2i32 = BUILD_VECTOR %b, %a\n    %s:i32 = SUB %a, %b\n    STORE %s, %p\n    STORE %w, %p\n";
    let (out, stats) = combine(body, "sm_80");
    assert!(out.contains("%s:i32 = SUB %y, %x"), "{out}");
    assert!(!out.contains("EXTRACT_VECTOR_ELT"), "{out}");
    assert!(stats.vector_chains >= 2);
}

#[test]
fn contraction_needs_the_flag_on_both() {
    let (out, stats) = combine("    %f:f32 = BITCAST %x\n    %m:f32 = FMUL.contract %f, %f\n    %s:f32 = FADD.contract %m, %f\n    STORE %s, %p\n", "sm_80");
    assert!(out.contains("%s:f32 = FMA %f, %f, %f"), "{out}");
    assert_eq!(stats.contracted, 1);
    let (out, _) = combine("    %f:f32 = BITCAST %x\n    %m:f32 = FMUL %f, %f\n    %s:f32 = FADD.contract %m, %f\n    STORE %s, %p\n", "sm_80");
    assert!(!out.contains("FMA"), "the product does not allow it:\n{out}");
    let (out, _) = combine("    %f:f32 = BITCAST %x\n    %m:f32 = FMUL.contract %f, %f\n    %s:f32 = FSUB.contract %f, %m\n    STORE %s, %p\n", "sm_80");
    assert!(out.contains("FNEG %f") && out.contains("%s:f32 = FMA %f.neg, %f, %f"), "{out}");
}

#[test]
fn a_value_compared_with_itself() {
    let (out, _) = combine("    %c:i1 = SETCC eq, %x, %x\n    %z:i32 = CONSTANT 3\n    %s:i32 = SELECT %c, %x, %z\n    STORE %s, %p\n", "sm_80");
    assert!(out.contains("STORE %x, %p"), "{out}");
}

#[test]
fn a_remainder_reuses_its_division() {
    let (out, _) = combine("    %y:i32 = ADD %x, %x\n    %q:i32 = SDIV %x, %y\n    %r:i32 = SREM %x, %y\n    %u:i32 = UREM %x, %y\n    STORE %q, %p\n    STORE %r, %p\n    STORE %u, %p\n", "sm_80");
    assert!(out.contains("%r.mul:i32 = MUL %q, %y") && out.contains("%r:i32 = SUB %x, %r.mul"), "{out}");
    assert!(out.contains("%u:i32 = UREM %x, %y"), "no unsigned division to share:\n{out}");
}

#[test]
fn equal_pure_instructions_are_computed_once() {
    let (out, stats) = combine("    %a:i32 = ADD %x, %x\n    %b:i32 = ADD %x, %x\n    %c:i32 = MUL %a, %b\n    STORE %c, %p\n    %l:i32 = LOAD %p\n    %m:i32 = LOAD %p\n    %n:i32 = ADD %l, %m\n    STORE %n, %p\n", "sm_80");
    assert!(out.contains("%c:i32 = MUL %a, %a") && !out.contains("%b:i32"), "{out}");
    assert!(out.contains("%m:i32 = LOAD %p"), "loads are not merged:\n{out}");
    assert_eq!(stats.cse, 1);
}
