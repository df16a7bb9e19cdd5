//! `ptxc sim` on the command line: the same arguments and JSON as `ptxc interp`,
//! located errors (syntax, undefined behaviour with the thread), and `ptxc compile`'s
//! diagnostic for a file that is not UTF-8.

use std::path::{Path, PathBuf};

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(name)
}

fn run(args: &[&str]) -> backend::cli::Output {
    backend::cli::run(std::iter::once("ptxc").chain(args.iter().copied()))
}

/// A file of `contents` in a directory of its own, removed when the guard is dropped.
fn temp(name: &str, contents: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}

fn json(out: &backend::cli::Output) -> serde_json::Value {
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn sim_prints_what_interp_prints_for_the_same_arguments() {
    let mir = corpus("saxpy_f32.mir");
    let ptx = run(&["compile", mir.to_str().unwrap(), "--sm", "80"]);
    assert_eq!(ptx.code, 0, "{}", ptx.stderr);
    let (_dir, ptx_path) = temp("saxpy.ptx", ptx.stdout.as_bytes());
    let args = ["--block", "8", "--arg", "random:32:f32", "--arg", "f32[1,2,3,4,5,6,7,8]", "--arg", "2.5", "--arg", "6", "--seed", "11"];
    let mut interp_args = vec!["interp", mir.to_str().unwrap(), "--entry", "saxpy"];
    interp_args.extend(args);
    let mut sim_args = vec!["sim", ptx_path.to_str().unwrap(), "--entry", "saxpy"];
    sim_args.extend(args);
    let (expected, got) = (json(&run(&interp_args)), json(&run(&sim_args)));
    assert_eq!(expected["buffers"][0]["values"], got["buffers"][0]["values"], "the same seed gives the same random bytes");
    assert_eq!(expected["buffers"][1]["values"], got["buffers"][1]["values"]);
    // y[i] = 2.5 * x[i] + y[i] for the first 6 threads; the last two untouched.
    let y = got["buffers"][1]["values"].as_array().unwrap();
    assert_eq!(y[6], serde_json::json!(7.0));
    assert_eq!(y[7], serde_json::json!(8.0));
    assert_eq!(got["entry"], "saxpy");
    assert!(got["steps"].as_u64().unwrap() > 8);
}

#[test]
fn syntax_errors_name_file_line_and_column() {
    let (_dir, path) = temp("bad.ptx", b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tadd.s32 %r1 %r2;\n}\n");
    let out = run(&["sim", path.to_str().unwrap(), "--entry", "k"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("bad.ptx:6:14: error: expected `,` or `;` after an operand, found `%r2`"), "{}", out.stderr);
    assert!(out.stderr.contains("6 | \tadd.s32 %r1 %r2;"), "{}", out.stderr);
}

#[test]
fn undefined_behaviour_names_the_line_and_thread() {
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd2, %rd1, %rd2;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";
    let (_dir, path) = temp("oob.ptx", text.as_bytes());
    let out = run(&["sim", path.to_str().unwrap(), "--entry", "k", "--block", "5", "--arg", "i32[0;4]"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("oob.ptx:12:2: error: undefined behaviour: out-of-bounds 4-byte access at offset 16"), "{}", out.stderr);
    assert!(out.stderr.contains("thread (4, 0, 0) of block (0, 0, 0)"), "{}", out.stderr);
    let out = run(&["sim", path.to_str().unwrap(), "--entry", "k", "--block", "4", "--arg", "i32[0;4]"]);
    assert_eq!(json(&out)["buffers"][0]["values"], serde_json::json!([0, 1, 2, 3]));
}

#[test]
fn unknown_kernels_and_bad_arguments_are_errors() {
    let (_dir, path) = temp("empty.ptx", b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u32 n)\n{\n\tret;\n}\n");
    let out = run(&["sim", path.to_str().unwrap(), "--entry", "nope"]);
    assert!(out.code == 1 && out.stderr.contains("no kernel `nope`") && out.stderr.contains("kernels: k"), "{}", out.stderr);
    let out = run(&["sim", path.to_str().unwrap(), "--entry", "k", "--arg", "1", "--arg", "2"]);
    assert!(out.code == 1 && out.stderr.contains("takes 1 arguments, 2 --arg given"), "{}", out.stderr);
    let out = run(&["sim", path.to_str().unwrap(), "--entry", "k", "--sm", "sm_70"]);
    assert!(out.code == 1 && out.stderr.contains("targets sm_80, which sm_70 does not implement"), "{}", out.stderr);
}

#[test]
fn compile_reports_the_first_byte_that_is_not_utf8() {
    let (_dir, path) = temp("latin1.mir", b"---\nname: k\nkind: kernel\nparams: []\nbody: |\n  bb.0:\n    ; caf\xe9\n    RET\n...\n");
    let out = run(&["compile", path.to_str().unwrap(), "--sm", "80"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("latin1.mir:7:10: error: the file is not UTF-8: expected a UTF-8 character, found the byte 0xe9"), "{}", out.stderr);
    assert!(out.stderr.contains("7 |     ; caf\u{fffd}"), "{}", out.stderr);
    let out = run(&["sim", path.to_str().unwrap(), "--entry", "k"]);
    assert!(out.stderr.contains("not UTF-8"), "{}", out.stderr);
}
