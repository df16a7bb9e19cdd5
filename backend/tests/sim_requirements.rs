//! `ptxc sim` checks every instruction against the description's `ptx_isa` table
//! (target-desc/nvptx/ptx-isa.yaml) as ptxas does: a form the SM or the `.version`
//! does not reach is an error naming the entry. The pairs below were checked with
//! ptxas 12.9 (rejected one SM or version below, accepted at the entry's).

use backend::sim::Simulator;

fn kernel(version: &str, sm: &str, body: &str) -> String {
    format!(
        ".version {version}\n.target {sm}\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
         .reg .b16 %h<4>;\n.reg .b32 %r<4>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<4>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [p];\nmov.b16 %h1, 0;\nmov.b32 %r1, 1;\nmov.f32 %f1, 0f3F800000;\nmov.f64 %fd1, 0d3FF0000000000000;\n\
         {body}\nret;\n}}\n"
    )
}

fn check(version: &str, sm: &str, body: &str) -> Result<(), String> {
    let text = kernel(version, sm, body);
    Simulator::new(&text, "t.ptx", tables::nvptx(), None).map(|_| ()).map_err(|e| e.render("t.ptx", &text))
}

#[test]
fn forms_below_their_sm_are_rejected_with_the_entry() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("add.rn.bf16 %h2, %h1, %h1;", "sm_80", "sm_90", "sm_90"),
        ("atom.global.add.f64 %fd2, [%rd1], %fd1;", "sm_52", "sm_60", "sm_60"),
        ("min.NaN.f32 %f2, %f1, %f1;", "sm_75", "sm_80", "sm_80"),
        ("tanh.approx.f32 %f2, %f1;", "sm_72", "sm_75", "sm_75"),
        ("match.any.sync.b32 %r2, %r1, 0xffffffff;", "sm_62", "sm_70", "sm_70"),
        ("redux.sync.add.u32 %r2, %r1, 0xffffffff;", "sm_75", "sm_80", "sm_80"),
        ("atom.global.cas.b16 %h2, [%rd1], %h1, %h1;", "sm_62", "sm_70", "sm_70"),
        ("add.rn.f16 %h2, %h1, %h1;", "sm_52", "sm_53", "sm_53"),
        ("atom.sys.global.add.u32 %r2, [%rd1], %r1;", "sm_52", "sm_60", "sm_60"),
        ("ld.relaxed.gpu.global.u32 %r2, [%rd1];", "sm_62", "sm_70", "sm_70"),
        ("fma.rn.bf16 %h2, %h1, %h1, %h1;", "sm_75", "sm_80", "sm_80"),
        ("cvt.rn.bf16.f32 %h2, %f1;", "sm_75", "sm_80", "sm_80"),
    ];
    for (body, below, at, named) in cases {
        let e = check("7.8", below, body).expect_err(body);
        assert!(e.contains("ptx-isa.yaml") && e.contains(&format!("requires {named}")), "{body} on {below}: {e}");
        check("7.8", at, body).unwrap_or_else(|e| panic!("{body} on {at}: {e}"));
    }
    // A later SM implies the earlier ones: sm_90 has what sm_80 has.
    check("7.8", "sm_90", "min.f16 %h2, %h1, %h1;").unwrap();
}

#[test]
fn forms_below_their_ptx_version_are_rejected() {
    let e = check("6.4", "sm_53", "abs.f16 %h2, %h1;").unwrap_err();
    assert!(e.contains("requires PTX ISA .version 6.5"), "{e}");
    check("6.5", "sm_53", "abs.f16 %h2, %h1;").unwrap();
    let e = check("6.1", "sm_70", "activemask.b32 %r2;").unwrap_err();
    assert!(e.contains(".version 6.2"), "{e}");
}

#[test]
fn every_entry_keeps_its_provenance() {
    let tables = tables::nvptx();
    assert!(tables.ptx_isa.len() >= 60, "{} entries", tables.ptx_isa.len());
    for r in tables.ptx_isa {
        assert!(r.source.to_string().starts_with("target-desc/nvptx/ptx-isa.yaml:"), "{}: {}", r.insn, r.source);
    }
}
