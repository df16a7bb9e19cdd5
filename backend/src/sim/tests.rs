//! Tests of the simulator on small PTX programs.

use super::{SimErrorKind, Simulator};
use crate::interp::{ArgValue, Launch};

/// Regression (found by backend/tests/sim_llc.rs: llc 22 emits `add.rn.f32.bf16` for an
/// f32 add of a widened bf16 on sm_100): the mixed-precision forms of PTX ISA 9.7.5
/// (`add`/`sub{.rnd}{.sat}.f32.atype d, a, c` = f32(a) op c and
/// `fma.rnd{.sat}.f32.abtype d, a, b, c` = f32(a) * f32(b) + c with 16-bit a and b) were
/// rejected as "`add` takes one type". Expected values worked out by hand (and the kernel
/// assembled by ptxas 12.9 for sm_100, rejected for sm_90).
const MIXED: &str = "\
.version 8.6
.target sm_100
.address_size 64

.visible .entry k(.param .u64 out)
{
	.reg .b16 %h<8>;
	.reg .b32 %f<12>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	mov.b16 %h1, 0x3FC0;
	mov.b16 %h2, 0xC000;
	mov.b32 %f1, 0f3E800000;
	fma.rn.f32.bf16 %f2, %h1, %h2, %f1;
	mov.b16 %h3, 0x3C00;
	mov.b32 %f3, 0f30800000;
	sub.rz.f32.f16 %f4, %h3, %f3;
	sub.rn.f32.f16 %f5, %h3, %f3;
	mov.b16 %h4, 0x3800;
	mov.b16 %h5, 0x4200;
	mov.b32 %f6, 0f00000000;
	fma.rn.sat.f32.f16 %f7, %h4, %h5, %f6;
	mov.b16 %h6, 0x7FC1;
	mov.b32 %f8, 0f3F800000;
	add.rn.f32.bf16 %f9, %h6, %f8;
	add.f32.bf16 %f10, %h1, %f8;
	st.global.v4.b32 [%rd1], {%f2, %f4, %f5, %f7};
	st.global.b32 [%rd1+16], %f9;
	st.global.b32 [%rd1+20], %f10;
	ret;
}
";

#[test]
fn mixed_precision_add_sub_fma() {
    let tables = tables::nvptx();
    let sim = Simulator::new(MIXED, "mixed.ptx", tables, None).unwrap_or_else(|e| panic!("{}", e.render("mixed.ptx", MIXED)));
    let run = sim.run("k", &Launch::threads(1), &[ArgValue::Buffer(vec![0; 24])], &super::Options::default()).unwrap_or_else(|e| panic!("{}", sim.render_error(&e)));
    let words: Vec<u32> = run.buffers[0].chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    // bf16 1.5 * bf16 -2.0 + 0.25 = -2.75
    assert_eq!(words[0], 0xC030_0000);
    // f16 1.0 - 2^-30: toward zero the largest f32 below 1, to nearest 1.0
    assert_eq!(words[1], 0x3F7F_FFFF);
    assert_eq!(words[2], 0x3F80_0000);
    // f16 0.5 * f16 3.0 + 0 = 1.5, saturated to 1.0
    assert_eq!(words[3], 0x3F80_0000);
    // a bf16 NaN source gives a NaN
    assert!(words[4] & 0x7F80_0000 == 0x7F80_0000 && words[4] & 0x007F_FFFF != 0, "{:#x}", words[4]);
    // default rounding: bf16 1.5 + 1.0 = 2.5
    assert_eq!(words[5], 0x4020_0000);

    let older = MIXED.replace(".target sm_100", ".target sm_90");
    let Err(e) = Simulator::new(&older, "mixed90.ptx", tables, None) else { panic!("the mixed-precision forms need sm_100") };
    assert_eq!(e.kind, SimErrorKind::Requirement, "{}", e.render("mixed90.ptx", &older));
    assert!(e.message.contains("ptx-isa.yaml") && e.message.contains("sm_100"), "{}", e.message);
}

/// PTX's operand type rules: the simulator rejects a register whose type the
/// instruction's cannot take, as ptxas does, and accepts the compatible pairs. Each
/// verdict was checked against ptxas 12.9 for sm_80 (`.b` goes with any type of its
/// size, `.s`/`.u` with each other, a float register only with its own type; ld, st
/// and cvt also take wider registers).
#[test]
fn register_types_follow_the_operand_type_rules() {
    let tables = tables::nvptx();
    let cases = [
        ("sub.s32 %r1, %f1, %r2;", false),
        ("add.f32 %f2, %u1, %f1;", false),
        ("add.s32 %r1, %rd1, %r2;", false),
        ("mov.f32 %f2, %u1;", false),
        ("mov.b32 %r1, %f1;", true),
        ("add.f32 %f2, %r2, %f1;", true),
        ("add.u32 %r1, %s1, %r2;", true),
        ("add.s32 %u1, %r1, %r2;", true),
        ("add.f16 %h1, %hf, %h3;", true),
        ("cvt.rn.f32.s32 %f2, %r1;", true),
        ("ld.global.u8 %r1, [%rd1];", true),
        ("st.global.u8 [%rd1], %r1;", true),
    ];
    for (body, accepted) in cases {
        let ptx = format!(
            ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .b32 %r<4>; .reg .f32 %f<4>; .reg .u32 %u<3>; .reg .s32 %s<3>; .reg .b64 %rd<3>; .reg .b16 %h<4>; .reg .f16 %hf;\n\
             ld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
        );
        match Simulator::new(&ptx, "types.ptx", tables, None) {
            Ok(_) => assert!(accepted, "`{body}` was accepted; ptxas rejects it"),
            Err(e) => {
                assert!(!accepted, "`{body}` was rejected; ptxas accepts it: {}", e.render("types.ptx", &ptx));
                assert!(e.message.contains("operand type rules"), "`{body}`: {}", e.message);
            }
        }
    }
}
