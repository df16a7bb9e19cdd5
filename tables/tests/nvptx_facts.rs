//! The NVPTX facts of the description issue, checked on the compiled-in tables for
//! every SM the description defines (not only the boundary SMs).

use tables::{Action, Opcode, Target, Vt};

fn number(t: &Target) -> u32 {
    t.name().trim_start_matches("sm_").trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().unwrap()
}

#[test]
fn packed_f16_arithmetic_is_legal_from_sm_70_only() {
    for t in Target::all() {
        for op in [Opcode::FADD, Opcode::FMUL, Opcode::FMA] {
            assert_eq!(t.is_legal(op, Vt::V2F16), number(&t) >= 70, "{} {:?}", t.name(), op);
        }
    }
}

#[test]
fn scalar_f16_add_is_promoted_to_f32_before_sm_53() {
    for t in Target::all() {
        let d = t.decide(Opcode::FADD, Vt::F16);
        if number(&t) < 53 {
            assert_eq!(d.action, Action::Promote, "{}", t.name());
            assert_eq!(t.tables().promotion_target(t.sm_tables(), Opcode::FADD, Vt::F16), Some(Vt::F32));
        } else {
            assert_eq!(d.action, Action::Legal, "{}", t.name());
        }
    }
}

#[test]
fn packed_bf16_fma_is_legal_from_sm_80() {
    for t in Target::all() {
        assert_eq!(t.is_legal(Opcode::FMA, Vt::V2BF16), number(&t) >= 80, "{}", t.name());
    }
}

#[test]
fn scalar_bf16_add_is_legal_from_sm_90_only() {
    for t in Target::all() {
        let n = number(&t);
        let legal = t.is_legal(Opcode::FADD, Vt::BF16);
        assert_eq!(legal, n >= 90, "{}", t.name());
        if (80..90).contains(&n) {
            assert_eq!(t.action(Opcode::FADD, Vt::BF16), Action::Expand, "{}: fma-based expansion", t.name());
        }
    }
}

#[test]
fn i128_is_a_register_type_from_sm_70_and_its_arithmetic_always_expands() {
    for t in Target::all() {
        assert_eq!(t.type_supported(Vt::I128), number(&t) >= 70, "{}", t.name());
        if number(&t) >= 70 {
            assert_eq!(t.register_class(Vt::I128).unwrap().prefix, "%rq");
        }
        assert_eq!(t.action(Opcode::ADD, Vt::I128), Action::Expand, "{}", t.name());
        assert_eq!(t.action(Opcode::MUL, Vt::I128), Action::Expand, "{}", t.name());
    }
}

#[test]
fn i128_registers_need_ptx_8_3() {
    let feature = tables::nvptx().features.iter().find(|f| f.name == "i128_regs").unwrap();
    assert_eq!(feature.min_ptx, 83);
}

#[test]
fn wide_float_vectors_are_never_register_types() {
    for t in Target::all() {
        assert!(!t.type_supported(Vt::V4F32), "{}", t.name());
        assert!(!t.type_supported(Vt::V2F64), "{}", t.name());
        assert!(!t.is_legal(Opcode::FADD, Vt::V4F32), "{}", t.name());
    }
}

#[test]
fn v2f32_is_a_register_type_from_sm_100_only() {
    for t in Target::all() {
        let n = number(&t);
        assert_eq!(t.type_supported(Vt::V2F32), n >= 100, "{}", t.name());
        assert_eq!(t.is_legal(Opcode::FADD, Vt::V2F32), n >= 100, "{}", t.name());
        if n >= 100 {
            assert_eq!(t.register_class(Vt::V2F32).unwrap().prefix, "%rd");
        }
    }
}

#[test]
fn v4i8_is_a_register_type_everywhere() {
    for t in Target::all() {
        assert!(t.type_supported(Vt::V4I8), "{}", t.name());
        assert_eq!(t.register_class(Vt::V4I8).unwrap().prefix, "%hh");
    }
}

#[test]
fn every_sm_of_ptxas_12_is_present_with_its_minimum_ptx() {
    // Minimum `.version` per target, measured with ptxas 12.9.
    let expected = [
        ("50", 40), ("52", 41), ("53", 42), ("60", 50), ("61", 50), ("62", 50), ("70", 60),
        ("72", 61), ("75", 63), ("80", 70), ("86", 71), ("87", 74), ("89", 78), ("90", 78),
        ("90a", 80), ("100", 86), ("100a", 86), ("101", 86), ("101a", 86), ("103", 88),
        ("103a", 88), ("120", 87), ("120a", 87),
    ];
    for (sm, ptx) in expected {
        let t = Target::sm(sm).unwrap();
        assert_eq!(t.sm_tables().min_ptx, ptx, "sm_{sm}");
    }
}

#[test]
fn arch_specific_features_do_not_carry_forward() {
    assert!(Target::sm("90a").unwrap().has_feature("arch_specific_90a"));
    assert!(!Target::sm("100").unwrap().has_feature("arch_specific_90a"));
    assert!(Target::sm("90a").unwrap().has_feature("bf16_math"), "sm_90a implies sm_90");
}

#[test]
fn sm_names_accept_common_spellings_and_reject_unknown_ones() {
    for spelling in ["80", "sm_80", "SM_80", "compute_80"] {
        assert_eq!(Target::sm(spelling).unwrap().name(), "sm_80");
    }
    assert_eq!(Target::sm("90a").unwrap().name(), "sm_90a");
    let err = Target::sm("sm_95").unwrap_err();
    assert!(err.to_string().contains("sm_9"), "{err}");
    assert!(Target::sm("").is_err());
}

#[test]
fn decisions_point_at_the_deciding_rule() {
    let t = Target::sm("80").unwrap();
    let d = t.decide(Opcode::FMA, Vt::V2BF16);
    assert!(!d.is_default);
    assert_eq!(d.rule.source.file, "target-desc/nvptx/legality.rules");
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../target-desc/nvptx/legality.rules")).unwrap();
    let line = text.lines().nth(d.rule.source.line as usize - 1).unwrap();
    assert!(line.contains("FMA") && line.contains("v2bf16"), "line {}: {line}", d.rule.source.line);
}

#[test]
fn the_action_table_uses_the_259_stride_layout() {
    let t = Target::sm("70").unwrap();
    let sm = t.sm_tables();
    assert_eq!(sm.actions.len(), 259 * tables::nvptx().vt_slots as usize);
    let byte = sm.actions[259 * Vt::V2F16.0 as usize + Opcode::FADD.0 as usize];
    assert_eq!(byte, Action::Legal as u8);
    assert!(Action::byte_is_legal(byte));
}

#[test]
fn condition_codes_follow_the_nibble_table() {
    use tables::CondCode;
    let sm50 = Target::sm("50").unwrap();
    let sm53 = Target::sm("53").unwrap();
    assert_eq!(sm50.cc_action(CondCode::OLT, Vt::F16), Action::Promote);
    assert_eq!(sm53.cc_action(CondCode::OLT, Vt::F16), Action::Legal);
    assert_eq!(sm53.cc_action(CondCode::OLT, Vt::I32), Action::Expand, "ordered codes do not apply to integers");
    assert_eq!(sm53.cc_action(CondCode::ULT, Vt::I32), Action::Legal);
    // The nibble read agrees with a direct decode of the packed word.
    let sm = sm53.sm_tables();
    let (cc, vt) = (CondCode::OLT.0 as usize, Vt::F16.0 as usize);
    let word = sm.cc_actions[15 * cc + (vt >> 3)];
    assert_eq!((word >> (4 * (vt & 7))) & 0xF, Action::Legal as u32);
}

#[test]
fn remat_exclusion_covers_memory_atomics_and_barriers() {
    let t = tables::nvptx();
    for op in [Opcode::LOAD, Opcode::STORE, Opcode::ATOMIC_CMP_SWAP, Opcode::ATOMIC_FENCE] {
        assert!(t.remat_excluded(op), "{op:?}");
    }
    for op in [Opcode::ADD, Opcode::FMA, Opcode::SETCC] {
        assert!(!t.remat_excluded(op), "{op:?}");
    }
    assert_eq!(t.knob("nv-remat-max-times").unwrap().default, target_desc::tables::KnobValue::Int(10));
    assert_eq!(t.knob("nv-remat-default-max-reg").unwrap().default, target_desc::tables::KnobValue::Int(70));
}

#[test]
fn bit_registers_stand_in_for_float_registers_of_their_width_only() {
    for t in Target::all() {
        let reads = |have, want| t.tables().register_reads_as(t.sm_tables(), have, want);
        // A .b32/.b64/.b16 register is a valid .f32/.f64/f16 operand ...
        assert!(reads(Vt::I32, Vt::F32) && reads(Vt::I64, Vt::F64) && reads(Vt::I16, Vt::F16) && reads(Vt::F16, Vt::I16), "{}", t.name());
        assert!(reads(Vt::V2F16, Vt::I32) && reads(Vt::I32, Vt::V2F16), "{}", t.name());
        // ... but an .f32/.f64 register is no integer operand, and widths never mix.
        assert!(!reads(Vt::F32, Vt::I32) && !reads(Vt::F64, Vt::I64), "{}", t.name());
        assert!(!reads(Vt::I32, Vt::F64) && !reads(Vt::I64, Vt::F32) && !reads(Vt::I1, Vt::I16), "{}", t.name());
    }
}
