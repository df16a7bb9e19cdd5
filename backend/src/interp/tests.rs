//! Whole-interpreter tests on small MIR kernels: each exercises one family of opcodes
//! or one undefined-behaviour rule, with expected values computed here independently.

use super::*;
use crate::mir::parser::parse_module;
use crate::mir::verifier::{verify_module, Source};

/// A one-kernel module `k` with these parameters and body (block lines unindented).
fn kernel(params: &str, body: &str) -> String {
    let body: String = body.lines().map(|l| format!("  {}\n", l.trim())).collect();
    format!("---\nname: k\nkind: kernel\nparams: [{params}]\nbody: |\n{body}...\n")
}

fn parse(text: &str) -> Module {
    parse_module(text, "test.mir", tables::nvptx()).unwrap_or_else(|e| panic!("{}", e.render()))
}

/// Parses and verifies: the tests run MIR the pipeline would accept.
fn verified(text: &str) -> Module {
    let module = parse(text);
    let errors = verify_module(&module, tables::nvptx(), Source { file: "test.mir", text });
    assert!(errors.is_empty(), "{}", errors.iter().map(|e| e.render()).collect::<String>());
    module
}

fn run(module: &Module, threads: u32, args: &[ArgValue]) -> Result<RunResult, InterpError> {
    run_kernel(module, tables::nvptx(), "k", &Launch::threads(threads), args, 1_000_000)
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn undefined_what(result: Result<RunResult, InterpError>) -> String {
    match result {
        Err(InterpError::Undefined { what, .. }) => what,
        other => panic!("expected undefined behaviour, got {other:?}"),
    }
}

#[test]
fn vector_shuffles_concatenation_and_element_access() {
    let m = verified(&kernel(
        "{ name: out, type: p1 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %c1:i32 = CONSTANT 1
         %c2:i32 = CONSTANT 2
         %c3:i32 = CONSTANT 3
         %c4:i32 = CONSTANT 4
         %c5:i32 = CONSTANT 5
         %c6:i32 = CONSTANT 6
         %c7:i32 = CONSTANT 7
         %c8:i32 = CONSTANT 8
         %a:v4i32 = BUILD_VECTOR %c1, %c2, %c3, %c4
         %b:v4i32 = BUILD_VECTOR %c5, %c6, %c7, %c8
         %s:v4i32 = VECTOR_SHUFFLE %a, %b, mask(7, 0, -1, 4)
         STORE %s, %out
         %cat:v8i32 = CONCAT_VECTORS %a, %b
         %four:i64 = CONSTANT 4
         %upper:v4i32 = EXTRACT_SUBVECTOR %cat, %four
         %o16:i64 = CONSTANT 16
         %p16:p1 = PTR_ADD %out, %o16
         STORE %upper, %p16
         %two:i32 = CONSTANT 2
         %e:i32 = EXTRACT_VECTOR_ELT %b, %two
         %ins:v4i32 = INSERT_VECTOR_ELT %a, %e, %two
         %o32:i64 = CONSTANT 32
         %p32:p1 = PTR_ADD %out, %o32
         STORE %ins, %p32
         RET",
    ));
    let result = run(&m, 1, &[ArgValue::Buffer(vec![0xAA; 48])]).unwrap();
    // mask(7, 0, -1, 4): b[3], a[0], undefined (0), b[0].
    assert_eq!(words(&result.buffers[0]), vec![8, 1, 0, 5, 5, 6, 7, 8, 1, 2, 7, 4]);
}

#[test]
fn out_of_range_vector_index_is_undefined() {
    let m = verified(&kernel(
        "{ name: i, type: i32 }",
        "bb.0.entry:
         %i:i32 = ARG 0
         %c:i16 = CONSTANT 9
         %v:v2i16 = BUILD_VECTOR %c, %c
         %e:i16 = EXTRACT_VECTOR_ELT %v, %i
         RET",
    ));
    assert!(run(&m, 1, &[ArgValue::Scalar(1)]).is_ok());
    assert!(undefined_what(run(&m, 1, &[ArgValue::Scalar(2)])).contains("out of range"));
}

#[test]
fn wide_integers_from_halves() {
    let m = verified(&kernel(
        "{ name: out, type: p1 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %lo:i64 = CONSTANT -1
         %hi:i64 = CONSTANT 1
         %w:i128 = BUILD_PAIR %lo, %hi
         %three:i128 = CONSTANT 3
         %m:i128 = MUL %w, %three
         STORE %m, %out
         %q:i128 = UDIV %m, %w
         %o16:i64 = CONSTANT 16
         %p16:p1 = PTR_ADD %out, %o16
         STORE %q, %p16
         %amount:i32 = CONSTANT 100
         %s:i128 = SHL %w, %amount
         %o32:i64 = CONSTANT 32
         %p32:p1 = PTR_ADD %out, %o32
         STORE %s, %p32
         %four:i32 = CONSTANT 4
         %r0:i64, %r1:i64 = SRL_PARTS %lo, %hi, %four
         %o48:i64 = CONSTANT 48
         %p48:p1 = PTR_ADD %out, %o48
         STORE %r0, %p48
         %mh:i64 = EXTRACT_ELEMENT %m, 1
         %o56:i64 = CONSTANT 56
         %p56:p1 = PTR_ADD %out, %o56
         STORE %mh, %p56
         %x:i32 = CONSTANT 0x1F0
         %sx:i32 = SIGN_EXTEND_INREG.i8 %x
         %o64:i64 = CONSTANT 64
         %p64:p1 = PTR_ADD %out, %o64
         STORE %sx, %p64
         RET",
    ));
    let result = run(&m, 1, &[ArgValue::Buffer(vec![0; 68])]).unwrap();
    let b = &result.buffers[0];
    let u128_at = |o: usize| u128::from_le_bytes(b[o..o + 16].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let w: u128 = (1 << 65) - 1;
    assert_eq!(u128_at(0), w * 3);
    assert_eq!(u128_at(16), 3);
    assert_eq!(u128_at(32), w << 100);
    assert_eq!(u64_at(48), ((w >> 4) & u128::from(u64::MAX)) as u64);
    assert_eq!(u64_at(56), ((w * 3) >> 64) as u64);
    assert_eq!(words(&b[64..68]), vec![0xFFFF_FFF0]);
}

#[test]
fn f64_to_f16_conversion_rounds_once() {
    let m = verified(&kernel(
        "{ name: data, type: p1 }",
        "bb.0.entry:
         %data:p1 = ARG 0
         %x:f64 = LOAD %data
         %h:f16 = FP_ROUND %x
         %hz:f16 = FP_ROUND.rz %x
         %o8:i64 = CONSTANT 8
         %p8:p1 = PTR_ADD %data, %o8
         STORE %h, %p8
         %o10:i64 = CONSTANT 10
         %p10:p1 = PTR_ADD %data, %o10
         STORE %hz, %p10
         RET",
    ));
    // 1 + 2^-11 + 2^-40: above the f16 tie between 0x3C00 and 0x3C01, so 0x3C01;
    // rounding through f32 would land exactly on the tie and give 0x3C00.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    let mut bytes = x.to_le_bytes().to_vec();
    bytes.extend_from_slice(&[0; 4]);
    let result = run(&m, 1, &[ArgValue::Buffer(bytes)]).unwrap();
    let b = &result.buffers[0];
    assert_eq!(u16::from_le_bytes([b[8], b[9]]), 0x3C01);
    assert_eq!(u16::from_le_bytes([b[10], b[11]]), 0x3C00, "toward zero");
}

#[test]
fn integer_undefined_behaviour_is_reported() {
    let m = verified(&kernel(
        "{ name: a, type: i32 }, { name: b, type: i32 }",
        "bb.0.entry:
         %a:i32 = ARG 0
         %b:i32 = ARG 1
         %q:i32 = SDIV %a, %b
         %s:i32 = SHL %a, %b
         RET",
    ));
    assert!(run(&m, 1, &[ArgValue::Scalar(7), ArgValue::Scalar(3)]).is_ok());
    assert!(undefined_what(run(&m, 1, &[ArgValue::Scalar(7), ArgValue::Scalar(0)])).contains("division by zero"));
    assert!(undefined_what(run(&m, 1, &[ArgValue::Scalar(0x8000_0000), ArgValue::Scalar(0xFFFF_FFFF)])).contains("overflow"));
    assert!(undefined_what(run(&m, 1, &[ArgValue::Scalar(7), ArgValue::Scalar(32)])).contains("shift amount 32"));
}

#[test]
fn memory_undefined_behaviour_is_reported() {
    let m = verified(&kernel(
        "{ name: p, type: p1 }, { name: off, type: i64 }",
        "bb.0.entry:
         %p:p1 = ARG 0
         %off:i64 = ARG 1
         %q:p1 = PTR_ADD %p, %off
         %v:i64 = LOAD %q, align 8
         RET",
    ));
    let buffer = ArgValue::Buffer(vec![0; 32]);
    assert!(run(&m, 1, &[buffer.clone(), ArgValue::Scalar(24)]).is_ok());
    assert!(undefined_what(run(&m, 1, &[buffer.clone(), ArgValue::Scalar(32)])).contains("out-of-bounds"));
    assert!(undefined_what(run(&m, 1, &[buffer.clone(), ArgValue::Scalar(4)])).contains("misaligned"));
    // Below the start: the offset borrows from the region and space bits.
    let below = undefined_what(run(&m, 1, &[buffer.clone(), ArgValue::Scalar((-8i64) as u64 as u128)]));
    assert!(below.contains("not in that space") || below.contains("no object"), "{below}");
    assert!(undefined_what(run(&m, 1, &[ArgValue::Scalar(0), ArgValue::Scalar(0)])).contains("null"));
}

#[test]
fn const_memory_is_read_only_and_casts_check_spaces() {
    let m = verified(
        "---\nglobals:\n  - { name: table, space: const, type: i32, count: 2, init: [5, 6] }\n  - { name: tile, space: shared, type: i32, count: 4 }\n"
            .to_string()
            .as_str()
            .to_owned()
            .add_kernel(
                "{ name: g, type: p0 }, { name: which, type: i32 }",
                "bb.0.entry:
                 %g:p0 = ARG 0
                 %which:i32 = ARG 1
                 %t:p4 = GLOBAL_ADDR @table
                 %zero:i32 = CONSTANT 0
                 %store:i1 = SETCC eq, %which, %zero
                 BRCOND %store, %bb.1, %bb.2
               bb.1.store:
                 ; the verifier rejects a store through p4; through a generic pointer
                 ; to const memory it is undefined at run time
                 %tg:p0 = ADDRSPACECAST %t
                 STORE %which, %tg
                 RET
               bb.2.cast:
                 %s:p3 = ADDRSPACECAST %g
                 %v:i32 = LOAD %s
                 RET",
            )
            .as_str(),
    );
    let tables = tables::nvptx();
    let run = |which: u128, g: ArgValue| run_kernel(&m, tables, "k", &Launch::threads(1), &[g, ArgValue::Scalar(which)], 1000);
    assert!(undefined_what(run(0, ArgValue::Buffer(vec![0; 4]))).contains("read-only"));
    assert!(undefined_what(run(1, ArgValue::Buffer(vec![0; 4]))).contains("ADDRSPACECAST to p3"));
}

trait AddKernel {
    fn add_kernel(self, params: &str, body: &str) -> String;
}

impl AddKernel for String {
    fn add_kernel(self, params: &str, body: &str) -> String {
        format!("{self}{}", kernel(params, body))
    }
}

#[test]
fn phi_without_an_entry_for_the_taken_edge_is_undefined() {
    // The verifier rejects this; the interpreter still must not guess a value.
    let m = parse(&kernel(
        "{ name: c, type: i1 }",
        "bb.0.entry:
         %c:i1 = ARG 0
         %one:i32 = CONSTANT 1
         BRCOND %c, %bb.1, %bb.2
       bb.1.side:
         BR %bb.2
       bb.2.join:
         %x:i32 = PHI %one, %bb.0
         RET",
    ));
    assert!(run(&m, 1, &[ArgValue::Scalar(0)]).is_ok());
    assert!(undefined_what(run(&m, 1, &[ArgValue::Scalar(1)])).contains("no value for this predecessor"));
}

#[test]
fn barrier_after_some_threads_exit_is_undefined() {
    let m = verified(&kernel(
        "{ name: out, type: p1 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %tid:i32 = INTRINSIC @llvm.nvvm.read.ptx.sreg.tid.x
         %zero:i32 = CONSTANT 0
         %first:i1 = SETCC eq, %tid, %zero
         BRCOND %first, %bb.1, %bb.2
       bb.1.leave:
         RET
       bb.2.wait:
         INTRINSIC @llvm.nvvm.barrier0
         RET",
    ));
    assert!(run(&m, 1, &[ArgValue::Buffer(vec![])]).is_ok(), "a single thread exits before the barrier: no waiter");
    assert!(undefined_what(run(&m, 4, &[ArgValue::Buffer(vec![])])).contains("exited"));
}

#[test]
fn barrier_reductions_and_warp_votes() {
    let m = verified(&kernel(
        "{ name: out, type: p1 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %tid:i32 = INTRINSIC @llvm.nvvm.read.ptx.sreg.tid.x
         %lane:i32 = INTRINSIC @llvm.nvvm.read.ptx.sreg.laneid
         %one:i32 = CONSTANT 1
         %odd:i32 = AND %lane, %one
         %count:i32 = INTRINSIC @llvm.nvvm.barrier0.popc, %odd
         %full:i32 = CONSTANT 0xffffffff
         %isodd:i1 = TRUNCATE %odd
         %ballot:i32 = INTRINSIC @llvm.nvvm.vote.ballot.sync, %full, %isodd
         %any:i1 = INTRINSIC @llvm.nvvm.vote.any.sync, %full, %isodd
         %all:i1 = INTRINSIC @llvm.nvvm.vote.all.sync, %full, %isodd
         %anyw:i32 = ZERO_EXTEND %any
         %allw:i32 = ZERO_EXTEND %all
         %t64:i64 = ZERO_EXTEND %tid
         %c16:i64 = CONSTANT 16
         %off:i64 = MUL %t64, %c16
         %p0:p1 = PTR_ADD %out, %off
         %v:v4i32 = BUILD_VECTOR %count, %ballot, %anyw, %allw
         STORE %v, %p0
         RET",
    ));
    let result = run(&m, 64, &[ArgValue::Buffer(vec![0; 64 * 16])]).unwrap();
    let w = words(&result.buffers[0]);
    for t in 0..64 {
        assert_eq!(&w[4 * t..4 * t + 4], &[32, 0xAAAA_AAAA, 1, 0], "thread {t}");
    }
}

#[test]
fn shuffle_from_a_lane_outside_the_mask_is_undefined() {
    let m = verified(&kernel(
        "{ name: mask, type: i32 }",
        "bb.0.entry:
         %mask:i32 = ARG 0
         %lane:i32 = INTRINSIC @llvm.nvvm.read.ptx.sreg.laneid
         %one:i32 = CONSTANT 1
         %clamp:i32 = CONSTANT 31
         %v:i32 = INTRINSIC @llvm.nvvm.shfl.sync.down.i32, %mask, %lane, %one, %clamp
         RET",
    ));
    assert!(run(&m, 32, &[ArgValue::Scalar(0xFFFF_FFFF)]).is_ok());
    // Lanes 0-15 meet; lane 15 reads lane 16, outside the mask (and lanes 16-31 are
    // not in their own mask): undefined either way.
    assert!(undefined_what(run(&m, 32, &[ArgValue::Scalar(0x0000_FFFF)])).contains("mask"));
    assert!(undefined_what(run(&m, 16, &[ArgValue::Scalar(0xFFFF_FFFF)])).contains("does not exist"));
}

#[test]
fn libdevice_calls_run_natively() {
    // `__nv_fmodf` is not defined in the module: the verifier would want a definition,
    // but legalized MIR may call it as a libcall.
    let m = parse(&kernel(
        "{ name: out, type: p1 }, { name: a, type: f32 }, { name: b, type: f32 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %a:f32 = ARG 1
         %b:f32 = ARG 2
         %r:f32 = CALL @__nv_fmodf, %a, %b
         STORE %r, %out
         %s:f32 = CALL @__nv_nosuchthing, %a
         RET",
    ));
    let args = [ArgValue::Buffer(vec![0; 4]), ArgValue::Scalar(u128::from((-5.5f32).to_bits())), ArgValue::Scalar(u128::from(2.0f32.to_bits()))];
    match run(&m, 1, &args) {
        Err(InterpError::Unsupported { what, .. }) => assert!(what.contains("__nv_nosuchthing"), "{what}"),
        other => panic!("expected the unknown callee to be unsupported, got {other:?}"),
    }
    // fmod(-5.5, 2) = -1.5 exactly (the sign of the dividend).
    let m = parse(&kernel(
        "{ name: out, type: p1 }, { name: a, type: f32 }, { name: b, type: f32 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %a:f32 = ARG 1
         %b:f32 = ARG 2
         %r:f32 = CALL @__nv_fmodf, %a, %b
         STORE %r, %out
         RET",
    ));
    let result = run(&m, 1, &args).unwrap();
    assert_eq!(result.buffers[0], (-1.5f32).to_le_bytes().to_vec());
}

#[test]
fn fuel_and_recursion_are_bounded() {
    let m = verified(&kernel(
        "",
        "bb.0.entry:
         BR %bb.1
       bb.1.spin:
         BR %bb.1",
    ));
    match run_kernel(&m, tables::nvptx(), "k", &Launch::threads(2), &[], 500) {
        Err(InterpError::OutOfFuel { steps, .. }) => assert_eq!(steps, 500),
        other => panic!("expected out of fuel, got {other:?}"),
    }
    let recursive = verified(
        "---\nname: down\nkind: device\nparams: []\nreturns: []\nbody: |\n  bb.0.entry:\n    CALL @down\n    RET\n...\n".to_string().add_kernel(
            "",
            "bb.0.entry:
             CALL @down
             RET",
        )
        .as_str(),
    );
    assert!(undefined_what(run(&recursive, 1, &[])).contains("call depth"));
}

#[test]
fn atomics_see_every_thread() {
    let m = verified(&kernel(
        "{ name: counter, type: p1 }",
        "bb.0.entry:
         %counter:p1 = ARG 0
         %one:i32 = CONSTANT 1
         %old:i32 = ATOMIC_LOAD_ADD %counter, %one
         %c4:i64 = CONSTANT 4
         %p1:p1 = PTR_ADD %counter, %c4
         %m:i32 = ATOMIC_LOAD_MAX %p1, %old
         %c8:i64 = CONSTANT 8
         %p2:p1 = PTR_ADD %counter, %c8
         %zero:i32 = CONSTANT 0
         %seven:i32 = CONSTANT 7
         %was:i32 = ATOMIC_CMP_SWAP %p2, %zero, %seven
         RET",
    ));
    let result = run(&m, 100, &[ArgValue::Buffer(vec![0; 12])]).unwrap();
    assert_eq!(words(&result.buffers[0]), vec![100, 99, 7]);
}

#[test]
fn machine_opcodes_are_unsupported() {
    let text = kernel(
        "{ name: out, type: p1 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %c:i32 = CONSTANT 3
         STORE %c, %out
         RET",
    );
    let mut m = verified(&text);
    let sm = tables::nvptx().find_sm("80").unwrap();
    crate::isel::select_module(&mut m, tables::nvptx(), sm, Source { file: "test.mir", text: &text }).unwrap();
    match run(&m, 1, &[ArgValue::Buffer(vec![0; 4])]) {
        Err(InterpError::Unsupported { what, .. }) => assert!(what.contains("machine instruction"), "{what}"),
        other => panic!("expected machine opcodes to be unsupported, got {other:?}"),
    }
}

#[test]
fn float_arithmetic_rounds_in_the_narrow_type() {
    // f16: 2048 + 1 = 2049 is a tie between 2048 and 2050 (ulp 2 above 2048): even,
    // so 2048; bf16 FMA 1.5 * (1 + 2^-7) - 2^-100 rounds below the tie (0x3FC1).
    let m = verified(&kernel(
        "{ name: out, type: p1 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %a:f16 = FCONSTANT 2048.0
         %b:f16 = FCONSTANT 1.0
         %s:f16 = FADD %a, %b
         STORE %s, %out
         %x:bf16 = FCONSTANT 1.5
         %y:bf16 = FCONSTANT 0x3F81
         %z:bf16 = FCONSTANT 0x8D80
         %f:bf16 = FMA %x, %y, %z
         %c2:i64 = CONSTANT 2
         %p2:p1 = PTR_ADD %out, %c2
         STORE %f, %p2
         RET",
    ));
    let result = run(&m, 1, &[ArgValue::Buffer(vec![0; 4])]).unwrap();
    let b = &result.buffers[0];
    assert_eq!(u16::from_le_bytes([b[0], b[1]]), 0x6800, "2048 in f16");
    // 0x8D80 is -2^-100 in bf16 (exponent 127 - 100 = 27 = 0x1B: 0x1B << 7 = 0x0D80).
    assert_eq!(u16::from_le_bytes([b[2], b[3]]), 0x3FC1);
}

#[test]
fn same_input_same_output() {
    let m = verified(&kernel(
        "{ name: out, type: p1 }",
        "bb.0.entry:
         %out:p1 = ARG 0
         %tid:i32 = INTRINSIC @llvm.nvvm.read.ptx.sreg.tid.x
         %v:i32 = LOAD %out
         %s:i32 = ADD %v, %tid
         STORE %s, %out
         RET",
    ));
    // A race on out[0]: the result is the same every run (threads in order).
    let first = run(&m, 8, &[ArgValue::Buffer(vec![0; 4])]).unwrap();
    assert_eq!(words(&first.buffers[0]), vec![28]);
    assert_eq!(run(&m, 8, &[ArgValue::Buffer(vec![0; 4])]).unwrap(), first);
}
