//! Generated MIR for benchmarks and scaling tests: straight-line and looped kernels of
//! a requested instruction count, using only operations legal on every SM.

use std::fmt::Write;

/// A kernel of about `n` instructions in one block: a chain of integer and float
/// arithmetic with loads and stores, so every pass has work.
pub fn straight_line(n: usize) -> String {
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n    %a:i32 = ARG 1\n    %x:f32 = ARG 2\n    %c:i32 = CONSTANT 3\n");
    let (mut i, mut f) = ("a".to_string(), "x".to_string());
    let mut k = 0;
    while k < n {
        let _ = write!(
            body,
            "    %i{k}:i32 = ADD %{i}, %c\n    %j{k}:i32 = MUL %i{k}, %{i}\n    %f{k}:f32 = FMUL %{f}, %{f}\n    %g{k}:f32 = FADD %f{k}, %x\n"
        );
        i = format!("j{k}");
        f = format!("g{k}");
        k += 4;
    }
    let _ = write!(body, "    STORE %{f}, %p\n    STORE %{i}, %p\n    RET\n");
    kernel(&body)
}

/// A kernel of about `n` instructions spread over loops of 16-instruction bodies, each
/// with two PHIs, so blocks, branches and PHI elimination scale with `n`.
pub fn looped(n: usize) -> String {
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n    %n:i32 = ARG 1\n    %x:f32 = ARG 2\n    %zero:i32 = CONSTANT 0\n    %one:i32 = CONSTANT 1\n    BR %bb.1\n");
    let loops = n.div_ceil(16).max(1);
    let mut acc = "x".to_string();
    for l in 0..loops {
        let (header, exit) = (1 + 2 * l, 2 + 2 * l);
        let prev = if l == 0 { 0 } else { header - 1 };
        let _ = write!(
            body,
            "  bb.{header}:\n    %i{l}:i32 = PHI %zero, %bb.{prev}, %in{l}, %bb.{header}\n    %s{l}:f32 = PHI %{acc}, %bb.{prev}, %sn{l}, %bb.{header}\n"
        );
        for k in 0..10 {
            let src = if k == 0 { format!("s{l}") } else { format!("t{l}_{}", k - 1) };
            let _ = writeln!(body, "    %t{l}_{k}:f32 = FADD %{src}, %x");
        }
        let _ = write!(
            body,
            "    %sn{l}:f32 = FMUL %t{l}_9, %x\n    %in{l}:i32 = ADD %i{l}, %one\n    %c{l}:i1 = SETCC lt, %in{l}, %n\n    BRCOND %c{l}, %bb.{header}, %bb.{exit}\n  bb.{exit}:\n"
        );
        acc = format!("sn{l}");
        if l + 1 < loops {
            let _ = writeln!(body, "    BR %bb.{}", exit + 1);
        }
    }
    let _ = write!(body, "    STORE %{acc}, %p\n    RET\n");
    kernel(&body)
}

/// A kernel of about `n` instructions in one loop whose `n / 4` accumulators are all
/// carried by PHIs (long live ranges, many PHIs in one block: the out-of-SSA stress).
pub fn many_phis(n: usize) -> String {
    let count = (n / 4).max(1);
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n    %n:i32 = ARG 1\n    %x:f32 = ARG 2\n    %zero:i32 = CONSTANT 0\n    %one:i32 = CONSTANT 1\n    BR %bb.1\n  bb.1:\n");
    let _ = writeln!(body, "    %i:i32 = PHI %zero, %bb.0, %inext, %bb.1");
    for k in 0..count {
        let _ = writeln!(body, "    %a{k}:f32 = PHI %x, %bb.0, %b{k}, %bb.1");
    }
    for k in 0..count {
        let _ = writeln!(body, "    %b{k}:f32 = FADD %a{k}, %a{}", (k + 1) % count);
    }
    body.push_str("    %inext:i32 = ADD %i, %one\n    %more:i1 = SETCC lt, %inext, %n\n    BRCOND %more, %bb.1, %bb.2\n  bb.2:\n");
    for k in 0..count {
        let _ = writeln!(body, "    STORE %b{k}, %p");
    }
    body.push_str("    RET\n");
    kernel(&body)
}

/// A kernel of about `n` instructions in a chain of if-then diamonds, each joining
/// its two values with a PHI (many small blocks and branches).
pub fn diamonds(n: usize) -> String {
    let count = (n / 6).max(1);
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n    %n:i32 = ARG 1\n    %x:f32 = ARG 2\n    %v0:i32 = COPY %n\n    BR %bb.1\n");
    for k in 0..count {
        let (head, then, join) = (1 + 3 * k, 2 + 3 * k, 3 + 3 * k);
        let _ = write!(
            body,
            "  bb.{head}:\n    %c{k}:i1 = SETCC gt, %v{k}, %n\n    BRCOND %c{k}, %bb.{then}, %bb.{join}\n  bb.{then}:\n    %w{k}:i32 = XOR %v{k}, %n\n    BR %bb.{join}\n  bb.{join}:\n    %v{}:i32 = PHI %v{k}, %bb.{head}, %w{k}, %bb.{then}\n",
            k + 1
        );
        if k + 1 < count {
            let _ = writeln!(body, "    BR %bb.{}", join + 1);
        }
    }
    let _ = write!(body, "    STORE %v{count}, %p\n    RET\n");
    kernel(&body)
}

fn kernel(body: &str) -> String {
    format!("---\nname: generated\nkind: kernel\nparams:\n  - {{ name: p, type: p1 }}\n  - {{ name: n, type: i32 }}\n  - {{ name: x, type: f32 }}\nbody: |\n{body}...\n")
}

/// Compiles `text` for `sm` through the whole pipeline as `ptxc compile` does (the
/// passes' own checks off, so benchmarks measure the compiler); returns the PTX.
pub fn compile(text: &str, sm: &str) -> Result<String, String> {
    let tables = tables::nvptx();
    let sm = tables.find_sm(sm).ok_or("unknown SM")?;
    let mut module = crate::mir::parser::parse_module(text, "generated.mir", tables).map_err(|e| e.render())?;
    let source = crate::mir::verifier::Source { file: "generated.mir", text };
    let mut cx = crate::passes::PassContext::new(tables, Some(sm), source);
    cx.checks = false;
    crate::passes::compile_module(&mut module, &cx).map_err(|e| e.iter().map(|e| e.render()).collect::<String>())
}
