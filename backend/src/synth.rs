//! Generated MIR for benchmarks and scaling tests: kernels of a requested instruction
//! count in the input shapes of issue 15 (straight-line code, loops, many PHIs, many
//! small blocks, deep loop nests, many functions with calls, legalization-heavy code,
//! wide parameter lists), each with its LLVM IR twin so that `scripts/compile-time.py`
//! can put ptxc beside `llc -O3` on the same program. [`SHAPES`] lists them.

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
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n    %n:i32 = ARG 1\n    %x:f32 = ARG 2\n    %three:i32 = CONSTANT 3\n    %v0:i32 = MUL %n, %three\n    BR %bb.1\n");
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

/// A chain of `depth`-deep loop nests (rotated loops, each level counting to `n`), the
/// innermost body a load, two float operations and a store: many loop levels, headers,
/// latches and PHIs.
pub fn nests(n: usize) -> String {
    const DEPTH: usize = 6;
    // Per nest: DEPTH-1 outer headers (PHI, BR), the innermost (PHI, 4 body, 3 latch)
    // and DEPTH-1 latches (ADD, SETCC, BRCOND).
    let per = 2 * (DEPTH - 1) + 8 + 3 * (DEPTH - 1);
    let count = (n / per).max(1);
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n    %n:i32 = ARG 1\n    %x:f32 = ARG 2\n    %zero:i32 = CONSTANT 0\n    %one:i32 = CONSTANT 1\n    BR %bb.1\n");
    let mut next = 1;
    let mut pred = 0;
    for k in 0..count {
        // Blocks: headers h[0..DEPTH] (h[DEPTH-1] is the innermost), latches l[0..DEPTH-1].
        let h: Vec<usize> = (0..DEPTH).map(|d| next + d).collect();
        let l: Vec<usize> = (0..DEPTH - 1).map(|d| next + DEPTH + (DEPTH - 2 - d)).collect();
        next += 2 * DEPTH - 1;
        for d in 0..DEPTH {
            let entry = if d == 0 { pred } else { h[d - 1] };
            let back = if d == DEPTH - 1 { h[d] } else { l[d] };
            let _ = write!(body, "  bb.{}:\n    %i{k}_{d}:i32 = PHI %zero, %bb.{entry}, %in{k}_{d}, %bb.{back}\n", h[d]);
            if d + 1 < DEPTH {
                let _ = writeln!(body, "    BR %bb.{}", h[d + 1]);
            }
        }
        let exit_of = |d: usize| if d == 0 { next } else { l[d - 1] };
        let d = DEPTH - 1;
        let _ = write!(
            body,
            "    %v{k}:f32 = LOAD %p\n    %w{k}:f32 = FADD %v{k}, %x\n    %u{k}:f32 = FMUL %w{k}, %x\n    STORE %u{k}, %p\n    %in{k}_{d}:i32 = ADD %i{k}_{d}, %one\n    %c{k}_{d}:i1 = SETCC lt, %in{k}_{d}, %n\n    BRCOND %c{k}_{d}, %bb.{}, %bb.{}\n",
            h[d],
            exit_of(d)
        );
        for d in (0..DEPTH - 1).rev() {
            let _ = write!(
                body,
                "  bb.{}:\n    %in{k}_{d}:i32 = ADD %i{k}_{d}, %one\n    %c{k}_{d}:i1 = SETCC lt, %in{k}_{d}, %n\n    BRCOND %c{k}_{d}, %bb.{}, %bb.{}\n",
                l[d],
                h[d],
                exit_of(d)
            );
        }
        pred = l[0];
    }
    let _ = write!(body, "  bb.{next}:\n    RET\n");
    kernel(&body)
}

/// `n / 24` device functions of about 20 instructions, each called once by the kernel
/// (many functions, many calls: what `-j` parallelizes).
pub fn calls(n: usize) -> String {
    let count = (n / 24).max(1);
    let mut text = String::new();
    for k in 0..count {
        let mut body = String::from("  bb.0:\n    %a:i32 = ARG 0\n    %x:f32 = ARG 1\n");
        let (mut i, mut f) = ("a".to_string(), "x".to_string());
        for j in 0..4 {
            let _ = write!(
                body,
                "    %c{j}:i32 = CONSTANT {}\n    %i{j}:i32 = ADD %{i}, %c{j}\n    %f{j}:f32 = FMUL %{f}, %{f}\n    %g{j}:f32 = FADD %f{j}, %x\n",
                k * 4 + j + 1
            );
            i = format!("i{j}");
            f = format!("g{j}");
        }
        let _ = write!(body, "    %s:f32 = SINT_TO_FP %{i}\n    %r:f32 = FADD %{f}, %s\n    RET %r\n");
        let _ = write!(text, "---\nname: f{k}\nkind: device\nparams:\n  - {{ name: a, type: i32 }}\n  - {{ name: x, type: f32 }}\nreturns: [f32]\nbody: |\n{body}...\n");
    }
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n    %n:i32 = ARG 1\n    %x:f32 = ARG 2\n");
    let mut acc = "x".to_string();
    for k in 0..count {
        let _ = writeln!(body, "    %r{k}:f32 = CALL @f{k}, %n, %{acc}");
        acc = format!("r{k}");
    }
    let _ = write!(body, "    STORE %{acc}, %p\n    RET\n");
    text + &kernel(&body)
}

/// Operations the SM cannot do as written (for sm_70: i128 multiply and add, v8f16 and
/// bf16 arithmetic): every type legalization path at once.
pub fn legalization_heavy(n: usize) -> String {
    let count = (n / 8).max(1);
    let mut body = String::from(
        "  bb.0:\n    %p:p1 = ARG 0\n    %n:i32 = ARG 1\n    %x:f32 = ARG 2\n    %q:i128 = LOAD %p\n    %h:v8f16 = LOAD %p, align 16\n    %b:bf16 = LOAD %p\n",
    );
    let (mut q, mut h, mut b) = ("q".to_string(), "h".to_string(), "b".to_string());
    for k in 0..count {
        let _ = write!(
            body,
            "    %qm{k}:i128 = MUL %{q}, %q\n    %qa{k}:i128 = ADD %qm{k}, %q\n    %hm{k}:v8f16 = FMUL %{h}, %h\n    %ha{k}:v8f16 = FADD %hm{k}, %h\n    %bm{k}:bf16 = FMUL %{b}, %b\n    %ba{k}:bf16 = FADD %bm{k}, %b\n    %qx{k}:i128 = XOR %qa{k}, %q\n    %hs{k}:v8f16 = FSUB %ha{k}, %h\n"
        );
        q = format!("qx{k}");
        h = format!("hs{k}");
        b = format!("ba{k}");
    }
    let _ = write!(body, "    STORE %{q}, %p\n    STORE %{h}, %p, align 16\n    STORE %{b}, %p\n    RET\n");
    kernel(&body)
}

/// A kernel with `n / 4` parameters, each read and folded into a sum (long parameter
/// lists: the ABI lowering and `.param` declarations).
pub fn wide_params(n: usize) -> String {
    let count = (n / 4).max(1);
    let mut params = String::from("  - { name: p, type: p1 }\n");
    let mut body = String::from("  bb.0:\n    %p:p1 = ARG 0\n    %s0:i32 = CONSTANT 0\n");
    for k in 0..count {
        let _ = writeln!(params, "  - {{ name: a{k}, type: i32 }}");
        let _ = write!(body, "    %a{k}:i32 = ARG {}\n    %m{k}:i32 = MUL %a{k}, %a{k}\n    %s{}:i32 = ADD %s{k}, %m{k}\n", k + 1, k + 1);
    }
    let _ = write!(body, "    STORE %s{count}, %p\n    RET\n");
    format!("---\nname: generated\nkind: kernel\nparams:\n{params}body: |\n{body}...\n")
}

/// One input shape of the compile-time benchmark: its MIR, its LLVM IR twin (the same
/// program for `llc`), and the SM it is compiled for.
pub struct Shape {
    pub name: &'static str,
    pub about: &'static str,
    pub sm: &'static str,
    pub mir: fn(usize) -> String,
    pub llvm: fn(usize) -> String,
}

/// Every shape of the compile-time benchmark, in report order.
pub const SHAPES: &[Shape] = &[
    Shape { name: "straight", about: "one block of integer and float chains", sm: "80", mir: straight_line, llvm: twins::straight_line },
    Shape { name: "looped", about: "many small loops, two PHIs each", sm: "80", mir: looped, llvm: twins::looped },
    Shape { name: "phis", about: "one loop carrying n/4 accumulators (long live ranges)", sm: "80", mir: many_phis, llvm: twins::many_phis },
    Shape { name: "diamonds", about: "a chain of if-then diamonds (many small blocks)", sm: "80", mir: diamonds, llvm: twins::diamonds },
    Shape { name: "nests", about: "loop nests six deep", sm: "80", mir: nests, llvm: twins::nests },
    Shape { name: "calls", about: "n/24 device functions, each called once", sm: "80", mir: calls, llvm: twins::calls },
    Shape { name: "legalize", about: "i128, v8f16 and bf16 arithmetic on sm_70", sm: "70", mir: legalization_heavy, llvm: twins::legalization_heavy },
    Shape { name: "params", about: "a kernel with n/4 parameters", sm: "80", mir: wide_params, llvm: twins::wide_params },
];

/// The LLVM IR twins of the shapes: the same instructions, blocks and values, written
/// for `llc -march=nvptx64`.
pub mod twins {
    use std::fmt::Write;

    const HEADER: &str = "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n\n";

    fn kernel(body: &str) -> String {
        format!("{HEADER}define ptx_kernel void @generated(ptr addrspace(1) %p, i32 %n, float %x) {{\nentry:\n{body}}}\n")
    }

    pub fn straight_line(n: usize) -> String {
        let mut body = String::new();
        let (mut i, mut f) = ("n".to_string(), "x".to_string());
        let mut k = 0;
        while k < n {
            let _ = write!(body, "  %i{k} = add i32 %{i}, 3\n  %j{k} = mul i32 %i{k}, %{i}\n  %f{k} = fmul float %{f}, %{f}\n  %g{k} = fadd float %f{k}, %x\n");
            i = format!("j{k}");
            f = format!("g{k}");
            k += 4;
        }
        let _ = write!(body, "  store float %{f}, ptr addrspace(1) %p\n  store i32 %{i}, ptr addrspace(1) %p\n  ret void\n");
        kernel(&body)
    }

    pub fn looped(n: usize) -> String {
        let loops = n.div_ceil(16).max(1);
        let mut body = String::from("  br label %h0\n");
        let mut acc = "x".to_string();
        for l in 0..loops {
            let prev = if l == 0 { "entry".to_string() } else { format!("e{}", l - 1) };
            let _ = write!(body, "h{l}:\n  %i{l} = phi i32 [0, %{prev}], [%in{l}, %h{l}]\n  %s{l} = phi float [%{acc}, %{prev}], [%sn{l}, %h{l}]\n");
            for k in 0..10 {
                let src = if k == 0 { format!("s{l}") } else { format!("t{l}_{}", k - 1) };
                let _ = writeln!(body, "  %t{l}_{k} = fadd float %{src}, %x");
            }
            let _ = write!(body, "  %sn{l} = fmul float %t{l}_9, %x\n  %in{l} = add i32 %i{l}, 1\n  %c{l} = icmp slt i32 %in{l}, %n\n  br i1 %c{l}, label %h{l}, label %e{l}\ne{l}:\n");
            acc = format!("sn{l}");
            if l + 1 < loops {
                let _ = writeln!(body, "  br label %h{}", l + 1);
            }
        }
        let _ = write!(body, "  store float %{acc}, ptr addrspace(1) %p\n  ret void\n");
        kernel(&body)
    }

    pub fn many_phis(n: usize) -> String {
        let count = (n / 4).max(1);
        let mut body = String::from("  br label %loop\nloop:\n  %i = phi i32 [0, %entry], [%inext, %loop]\n");
        for k in 0..count {
            let _ = writeln!(body, "  %a{k} = phi float [%x, %entry], [%b{k}, %loop]");
        }
        for k in 0..count {
            let _ = writeln!(body, "  %b{k} = fadd float %a{k}, %a{}", (k + 1) % count);
        }
        body.push_str("  %inext = add i32 %i, 1\n  %more = icmp slt i32 %inext, %n\n  br i1 %more, label %loop, label %exit\nexit:\n");
        for k in 0..count {
            let _ = writeln!(body, "  store volatile float %b{k}, ptr addrspace(1) %p");
        }
        body.push_str("  ret void\n");
        kernel(&body)
    }

    pub fn diamonds(n: usize) -> String {
        let count = (n / 6).max(1);
        // `n * 3 > n` is not known, so llc cannot fold the chain away.
        let mut body = String::from("  %v0 = mul i32 %n, 3\n  br label %h0\n");
        let mut v = "v0".to_string();
        for k in 0..count {
            let _ = write!(
                body,
                "h{k}:\n  %c{k} = icmp sgt i32 %{v}, %n\n  br i1 %c{k}, label %t{k}, label %j{k}\nt{k}:\n  %w{k} = xor i32 %{v}, %n\n  br label %j{k}\nj{k}:\n  %v{} = phi i32 [%{v}, %h{k}], [%w{k}, %t{k}]\n",
                k + 1
            );
            v = format!("v{}", k + 1);
            if k + 1 < count {
                let _ = writeln!(body, "  br label %h{}", k + 1);
            }
        }
        let _ = write!(body, "  store i32 %{v}, ptr addrspace(1) %p\n  ret void\n");
        kernel(&body)
    }

    pub fn nests(n: usize) -> String {
        const DEPTH: usize = 6;
        let per = 2 * (DEPTH - 1) + 8 + 3 * (DEPTH - 1);
        let count = (n / per).max(1);
        let mut body = String::from("  br label %n0h0\n");
        let mut pred = "entry".to_string();
        for k in 0..count {
            let h = |d: usize| format!("n{k}h{d}");
            let l = |d: usize| format!("n{k}l{d}");
            let exit_of = |d: usize| if d == 0 { if k + 1 < count { format!("n{}h0", k + 1) } else { "done".to_string() } } else { l(d - 1) };
            for d in 0..DEPTH {
                let entry = if d == 0 { pred.clone() } else { h(d - 1) };
                let back = if d == DEPTH - 1 { h(d) } else { l(d) };
                let _ = write!(body, "{}:\n  %i{k}_{d} = phi i32 [0, %{entry}], [%in{k}_{d}, %{back}]\n", h(d));
                if d + 1 < DEPTH {
                    let _ = writeln!(body, "  br label %{}", h(d + 1));
                }
            }
            let d = DEPTH - 1;
            let _ = write!(
                body,
                "  %v{k} = load volatile float, ptr addrspace(1) %p\n  %w{k} = fadd float %v{k}, %x\n  %u{k} = fmul float %w{k}, %x\n  store volatile float %u{k}, ptr addrspace(1) %p\n  %in{k}_{d} = add i32 %i{k}_{d}, 1\n  %c{k}_{d} = icmp slt i32 %in{k}_{d}, %n\n  br i1 %c{k}_{d}, label %{}, label %{}\n",
                h(d),
                exit_of(d)
            );
            for d in (0..DEPTH - 1).rev() {
                let _ = write!(
                    body,
                    "{}:\n  %in{k}_{d} = add i32 %i{k}_{d}, 1\n  %c{k}_{d} = icmp slt i32 %in{k}_{d}, %n\n  br i1 %c{k}_{d}, label %{}, label %{}\n",
                    l(d),
                    h(d),
                    exit_of(d)
                );
            }
            pred = l(0);
        }
        body.push_str("done:\n  ret void\n");
        kernel(&body)
    }

    pub fn calls(n: usize) -> String {
        let count = (n / 24).max(1);
        let mut text = String::from(HEADER);
        for k in 0..count {
            let _ = write!(text, "define internal float @f{k}(i32 %a, float %x) noinline {{\nentry:\n");
            let (mut i, mut f) = ("a".to_string(), "x".to_string());
            for j in 0..4 {
                let _ = write!(text, "  %i{j} = add i32 %{i}, {}\n  %f{j} = fmul float %{f}, %{f}\n  %g{j} = fadd float %f{j}, %x\n", k * 4 + j + 1);
                i = format!("i{j}");
                f = format!("g{j}");
            }
            let _ = write!(text, "  %s = sitofp i32 %{i} to float\n  %r = fadd float %{f}, %s\n  ret float %r\n}}\n\n");
        }
        let mut body = String::new();
        let mut acc = "x".to_string();
        for k in 0..count {
            let _ = writeln!(body, "  %r{k} = call float @f{k}(i32 %n, float %{acc})");
            acc = format!("r{k}");
        }
        let _ = write!(body, "  store float %{acc}, ptr addrspace(1) %p\n  ret void\n");
        let _ = write!(text, "define ptx_kernel void @generated(ptr addrspace(1) %p, i32 %n, float %x) {{\nentry:\n{body}}}\n");
        text
    }

    pub fn legalization_heavy(n: usize) -> String {
        let count = (n / 8).max(1);
        let mut body = String::from(
            "  %q = load i128, ptr addrspace(1) %p\n  %h = load <8 x half>, ptr addrspace(1) %p, align 16\n  %b = load bfloat, ptr addrspace(1) %p\n",
        );
        let (mut q, mut h, mut b) = ("q".to_string(), "h".to_string(), "b".to_string());
        for k in 0..count {
            let _ = write!(
                body,
                "  %qm{k} = mul i128 %{q}, %q\n  %qa{k} = add i128 %qm{k}, %q\n  %hm{k} = fmul <8 x half> %{h}, %h\n  %ha{k} = fadd <8 x half> %hm{k}, %h\n  %bm{k} = fmul bfloat %{b}, %b\n  %ba{k} = fadd bfloat %bm{k}, %b\n  %qx{k} = xor i128 %qa{k}, %q\n  %hs{k} = fsub <8 x half> %ha{k}, %h\n"
            );
            q = format!("qx{k}");
            h = format!("hs{k}");
            b = format!("ba{k}");
        }
        let _ = write!(body, "  store i128 %{q}, ptr addrspace(1) %p\n  store <8 x half> %{h}, ptr addrspace(1) %p, align 16\n  store bfloat %{b}, ptr addrspace(1) %p\n  ret void\n");
        kernel(&body)
    }

    pub fn wide_params(n: usize) -> String {
        let count = (n / 4).max(1);
        let params: Vec<String> = (0..count).map(|k| format!("i32 %a{k}")).collect();
        let mut body = String::from("  %s0 = add i32 0, 0\n");
        for k in 0..count {
            let _ = write!(body, "  %m{k} = mul i32 %a{k}, %a{k}\n  %s{} = add i32 %s{k}, %m{k}\n", k + 1);
        }
        let _ = write!(body, "  store i32 %s{count}, ptr addrspace(1) %p\n  ret void\n");
        format!("{HEADER}define ptx_kernel void @generated(ptr addrspace(1) %p, {}) {{\nentry:\n{body}}}\n", params.join(", "))
    }
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
