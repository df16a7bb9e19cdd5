//! The schedulers (issue 14) checked by execution, by MRPA and through their knobs.
//!
//! - Every loop kernel of `tests/sched/` on three SMs, at the default limits with
//!   dependences counted at most one II, and with the limits lifted: assembled by ptxas, then `ptxc sim` against the MIR
//!   interpreter at trip counts 0, 1, 2, one less than the stage count, the stage
//!   count, one more, and a large one.
//! - The list scheduler never raises a block's peak pressure (MRPA before and after),
//!   in latency and in pressure mode, with and without a hard register bound.
//! - Each scheduler and pipeliner knob changes what its pass does.

use std::path::{Path, PathBuf};

use backend::machine::pressure::{Pressure, PressureSets};
use backend::options::{OptLevel, Options};
use backend::passes::{PassContext, PASSES};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn path(rel: &str) -> String {
    root().join(rel).display().to_string()
}

fn ptxc(args: &[&str]) -> backend::cli::Output {
    backend::cli::run(std::iter::once("ptxc").chain(args.iter().copied()))
}

/// A loop kernel: its file, its arguments before the trip count `n` (the last
/// parameter), and the largest `n` its buffers allow.
struct LoopKernel {
    file: &'static str,
    args: &'static [&'static str],
    max_n: u32,
}

const LOOPS: &[LoopKernel] = &[
    LoopKernel {
        file: "dot_f32",
        args: &["random:1024:f32", "random:256:f32", "f32[0;4]"],
        max_n: 64,
    },
    LoopKernel {
        file: "stencil_f32",
        args: &["random:1024:f32", "f32[0;256]", "1.5"],
        max_n: 64,
    },
    LoopKernel {
        file: "horner_f64",
        args: &["random:512:f64", "f64[0;4]"],
        max_n: 64,
    },
    LoopKernel {
        file: "sqrt_sum_f32",
        args: &["f32[0;4]", "0.5"],
        max_n: 1000,
    },
    LoopKernel {
        file: "prefix_sum_i32",
        args: &["random:1024:i32"],
        max_n: 64,
    },
    LoopKernel {
        file: "fib_copy_i32",
        args: &["i32[0;4]"],
        max_n: 1000,
    },
];

/// The buffers' values of an `interp`/`sim` JSON report (names differ between the two).
fn buffer_values(json: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("bad JSON ({e}): {json}"));
    v["buffers"]
        .as_array()
        .expect("buffers")
        .iter()
        .map(|b| b["values"].clone())
        .collect()
}

/// N of a `... : N stages` line of the list the trip-count test keeps.
fn stage_count(line: &str) -> u32 {
    line.rsplit(": ").next().and_then(|t| t.split_whitespace().next()).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// `stages=N` of a pipeliner remark.
fn stages_of(remarks: &str) -> Option<u32> {
    let at = remarks.find("stages=")? + "stages=".len();
    remarks[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn pipelined_loops_agree_with_the_interpreter_at_every_trip_count() {
    let ptxas = tests::ptxas();
    let dir = tempfile::tempdir().unwrap();
    let mut pipelined = Vec::new();
    let mut runs = 0;
    for sm in ["sm_50", "sm_80", "sm_90"] {
        for k in LOOPS {
            let file = path(&format!("tests/sched/{}.mir", k.file));
            // Every loop within the default limits, each dependence counted at most one
            // II (past the warp-latency gate, which would leave the arithmetic ones
            // alone), and every loop with the limits lifted and full latencies: tens of
            // stages (the gate on: the memory loops' latency is more than the warps hide).
            for knobs in [
                &["--knob", "pipeliner-skip-hidden-latency=false", "--knob", "pipeliner-stage-latency=1"][..],
                &[
                    "--knob",
                    "pipeliner-max-stages=100",
                    "--knob",
                    "pipeliner-max-mii=100",
                ][..],
            ] {
                let mut args = vec![
                    "compile",
                    file.as_str(),
                    "--sm",
                    sm,
                    "--remarks",
                    "pipeliner",
                ];
                args.extend(knobs);
                let out = ptxc(&args);
                assert_eq!(out.code, 0, "{} on {sm} {knobs:?}: {}", k.file, out.stderr);
                if let Some(p) = &ptxas {
                    tests::assemble(p, &out.stdout, sm).unwrap_or_else(|e| {
                        panic!("ptxas rejects {} on {sm} {knobs:?}:\n{e}", k.file)
                    });
                }
                let stages = stages_of(&out.stderr);
                if let Some(s) = stages {
                    pipelined.push(format!("{} {sm} {knobs:?}: {s} stages", k.file));
                }
                let ptx = dir
                    .path()
                    .join(format!("{}-{sm}-{}.ptx", k.file, knobs.len()));
                std::fs::write(&ptx, &out.stdout).unwrap();
                let ptx = ptx.display().to_string();
                let s = stages.unwrap_or(3);
                let mut trips: Vec<u32> = vec![0, 1, 2, s.saturating_sub(1), s, s + 1, 50];
                trips.retain(|&n| n <= k.max_n);
                trips.sort_unstable();
                trips.dedup();
                for n in trips {
                    let n = n.to_string();
                    let mut common = vec!["--entry", k.file, "--block", "4", "--seed", "3"];
                    for a in k.args {
                        common.extend(["--arg", a]);
                    }
                    common.extend(["--arg", n.as_str()]);
                    let interp = ptxc(&[&["interp", file.as_str()][..], &common].concat());
                    let sim = ptxc(&[&["sim", ptx.as_str()][..], &common].concat());
                    assert_eq!(interp.code, 0, "interp {} n={n}: {}", k.file, interp.stderr);
                    assert_eq!(
                        sim.code, 0,
                        "sim {} on {sm} {knobs:?} n={n}: {}",
                        k.file, sim.stderr
                    );
                    assert_eq!(buffer_values(&interp.stdout), buffer_values(&sim.stdout), "{} on {sm} {knobs:?}, trip count {n}: the pipelined loop disagrees with the interpreter", k.file);
                    runs += 1;
                }
            }
        }
    }
    println!("{runs} runs agree; pipelined:\n{}", pipelined.join("\n"));
    // Within the default three stages: the arithmetic loop, and the memory loops with
    // their loads counted one II each; with full latencies the memory loops take the
    // lifted limits.
    for k in ["sqrt_sum_f32", "dot_f32", "stencil_f32", "horner_f64"] {
        assert!(
            pipelined
                .iter()
                .any(|p| p.starts_with(&format!("{k} sm_80 [\"--knob\", \"pipeliner-skip-hidden-latency=false\", \"--knob\", \"pipeliner-stage-latency=1\"]"))),
            "{k} is pipelined within the default limits: {pipelined:?}"
        );
    }
    for k in ["dot_f32", "stencil_f32", "horner_f64"] {
        assert!(
            pipelined
                .iter()
                .any(|p| p.starts_with(&format!("{k} sm_80 [\"--knob\", \"pipeliner-max-stages=100\"")) && stage_count(p) > 10),
            "{k} is pipelined in tens of stages with the limits lifted and full latencies: {pipelined:?}"
        );
    }
}

/// The kernel files the pressure check runs on.
fn kernel_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "tests/corpus",
        "tests/legalize",
        "tests/machine",
        "tests/sched",
    ] {
        for e in std::fs::read_dir(root().join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "mir") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    files
}

#[test]
fn list_scheduling_never_raises_a_blocks_pressure() {
    let tables = tables::nvptx();
    let (mut blocks, mut reordered, mut over_target) = (0usize, 0usize, 0usize);
    for file in kernel_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.display().to_string();
        let parsed = backend::mir::parser::parse_module(&text, &name, tables)
            .unwrap_or_else(|e| panic!("{}", e.render()));
        for sm_name in ["sm_50", "sm_80", "sm_90"] {
            let sm = tables.find_sm(sm_name).unwrap();
            for (sched4reg, maxreg) in [
                (false, None),
                (true, None),
                (false, Some(16)),
                (true, Some(16)),
            ] {
                let mut options = Options::new(tables, OptLevel::O3);
                options.maxreg = maxreg;
                options
                    .set(if sched4reg {
                        "nvptx-sched4reg=true"
                    } else {
                        "nvptx-sched4reg=false"
                    })
                    .unwrap();
                let source = backend::mir::verifier::Source {
                    file: &name,
                    text: &text,
                };
                let mut cx = PassContext::new(tables, Some(sm), source);
                cx.options = options.clone();
                let mut module = parsed.clone();
                backend::passes::apply_maxreg(&mut module, &options);
                let mut ok = true;
                for pass in PASSES
                    .iter()
                    .take_while(|p| p.name != "machine-scheduler")
                    .filter(|p| p.enabled(&options))
                {
                    if (pass.run)(&mut module, &cx).is_err() {
                        ok = false; // Rejected on this SM (atomics on sm_50): nothing to schedule.
                        break;
                    }
                }
                if !ok {
                    continue;
                }
                let before = module.clone();
                let scheduler = PASSES
                    .iter()
                    .find(|p| p.name == "machine-scheduler")
                    .unwrap();
                (scheduler.run)(&mut module, &cx).unwrap();
                let sets = PressureSets::new(tables, sm);
                for (f0, f1) in before.functions.iter().zip(&module.functions) {
                    let p0 = Pressure::compute(
                        f0,
                        &backend::machine::cfg::Cfg::new(f0, tables).preds,
                        &sets,
                        tables,
                    );
                    let p1 = Pressure::compute(
                        f1,
                        &backend::machine::cfg::Cfg::new(f1, tables).preds,
                        &sets,
                        tables,
                    );
                    let targets = sets.targets(f0, &options);
                    for b in 0..f0.blocks.len() {
                        blocks += 1;
                        if f0.blocks[b].insts != f1.blocks[b].insts {
                            reordered += 1;
                        }
                        if p0.peak[b]
                            .iter()
                            .zip(&targets)
                            .any(|(p, t)| i64::from(*p) > *t)
                        {
                            over_target += 1;
                        }
                        for s in 0..sets.names.len() {
                            assert!(
                                p1.peak[b][s] <= p0.peak[b][s],
                                "{name} @{} {} on {sm_name} (sched4reg {sched4reg}, maxreg {maxreg:?}): {} pressure {} -> {}",
                                f0.name,
                                f0.blocks[b].label(),
                                sets.names[s],
                                p0.peak[b][s],
                                p1.peak[b][s]
                            );
                        }
                    }
                }
            }
        }
    }
    println!("{blocks} blocks, {reordered} reordered, {over_target} over their target");
    assert!(
        reordered > 100,
        "the scheduler reorders blocks ({reordered})"
    );
    assert!(
        over_target > 10,
        "some blocks are over their target ({over_target})"
    );
}

/// The stderr remarks and the PTX of compiling `file` for sm_80 with `--remarks pass`
/// and `knobs`.
fn remarks(file: &str, pass: &str, knobs: &[&str]) -> (String, String) {
    remarks_on("80", file, pass, knobs)
}

fn remarks_on(sm: &str, file: &str, pass: &str, knobs: &[&str]) -> (String, String) {
    let file = path(file);
    let mut args = vec!["compile", file.as_str(), "--sm", sm, "--remarks", pass];
    for k in knobs {
        args.extend(["--knob", k]);
    }
    let out = ptxc(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    (out.stderr, out.stdout)
}

#[test]
fn pipeliner_knobs_take_effect() {
    let sqrt = "tests/sched/sqrt_sum_f32.mir";
    let dot = "tests/sched/dot_f32.mir";
    // By default the resident warps hide the square root loop's latency and the loop
    // is left alone; the dot product's loads wait longer than the warps can cover, so
    // with the stage limit lifted it is pipelined all the same.
    let (gated, gated_ptx) = remarks(sqrt, "pipeliner", &[]);
    assert!(
        gated.contains("not pipelined: latency already hidden: 16 warps per scheduler x 8 cycles issued per iteration >= iteration critical path 36 cycles"),
        "{gated}"
    );
    let (r, _) = remarks(dot, "pipeliner", &["pipeliner-max-stages=100"]);
    assert!(r.contains("Pipelined succesfully!"), "{r}");
    // With its loads' full 400-cycle latency the dot product needs more stages than the
    // default limit allows; counting each dependence one II (pipeliner-stage-latency=1)
    // it fits in four, and so does the square root loop, at a smaller II.
    let (r, _) = remarks(dot, "pipeliner", &[]);
    assert!(r.contains("not pipelined: Too many stages in schedule: numStages (") && r.contains(") > SwpMaxStages (3)"), "{r}");
    let (r, _) = remarks(dot, "pipeliner", &["pipeliner-stage-latency=1"]);
    assert!(r.contains("Pipelined succesfully! II=10, MII=10 (RecMII=4, ResMII=10), stages=4, iteration critical path 416 cycles"), "{r}");
    let (r, _) = remarks(sqrt, "pipeliner", &["pipeliner-skip-hidden-latency=false", "pipeliner-stage-latency=1"]);
    assert!(r.contains("Pipelined succesfully! II=8, MII=8 (RecMII=4, ResMII=8), stages=3"), "the square root counts one II too: {r}");
    // The rest of this test asks for every loop the limits allow.
    fn with<'a>(knobs: &[&'a str]) -> Vec<&'a str> {
        let mut knobs = knobs.to_vec();
        knobs.push("pipeliner-skip-hidden-latency=false");
        knobs
    }
    let swp = |file: &str, pass: &str, knobs: &[&str]| remarks(file, pass, &with(knobs));
    let swp_on = |sm: &str, file: &str, pass: &str, knobs: &[&str]| remarks_on(sm, file, pass, &with(knobs));
    let (default, default_ptx) = swp(sqrt, "pipeliner", &[]);
    assert!(
        default.contains("Pipelined succesfully! II=9, MII=8 (RecMII=4, ResMII=8), stages=4"),
        "{default}"
    );
    let (off, off_ptx) = swp(sqrt, "pipeliner", &["enable-pipeliner=false"]);
    assert!(!off.contains("Pipelined"), "{off}");
    assert_ne!(default_ptx, off_ptx);
    assert_eq!(gated_ptx, off_ptx, "a loop left alone by the gate is as without the pipeliner");
    let (r, _) = swp(sqrt, "pipeliner", &["pipeliner-max-mii=5"]);
    assert!(
        r.contains("Minimal Initiation Interval too large: MII (8) > SwpMaxMii (5)"),
        "{r}"
    );
    let (r, _) = swp(sqrt, "pipeliner", &["pipeliner-force-ii=20"]);
    assert!(r.contains("II=20,"), "{r}");
    let (r, _) = swp(sqrt, "pipeliner", &["pipeliner-max-stages=1"]);
    assert!(
        r.contains("Too many stages in schedule: numStages (")
            && r.contains(") > SwpMaxStages (1)"),
        "{r}"
    );
    let (r, _) = swp(
        sqrt,
        "pipeliner",
        &[
            "pipeliner-ignore-recmii=true",
            "pipeliner-force-issue-width=4",
        ],
    );
    assert!(r.contains("RecMII=0"), "{r}");
    // On sm_50 the dot product's nine instructions bound ResMII (the load unit's eight
    // busy cycles come next); two per cycle leave the load unit as the bound.
    let (r, _) = swp_on("50", dot, "pipeliner", &["pipeliner-max-stages=100"]);
    assert!(r.contains("ResMII=9)"), "{r}");
    let (r, _) = swp_on(
        "50",
        dot,
        "pipeliner",
        &["pipeliner-max-stages=100", "pipeliner-force-issue-width=2"],
    );
    assert!(r.contains("ResMII=8)"), "{r}");
    let (r, annotated_ptx) = swp(sqrt, "pipeliner", &["pipeliner-annotate-for-testing=true"]);
    assert!(
        r.contains("annotated, not rewritten") && r.contains("stage 0, cycle 0"),
        "{r}"
    );
    assert_eq!(
        annotated_ptx, off_ptx,
        "annotation leaves the loop as it was"
    );
    let (r, _) = swp(
        sqrt,
        "pipeliner",
        &["pipeliner-show-mask=true", "pipeliner-dbg-res=true"],
    );
    assert!(
        r.contains("; mask: ") && r.contains("; resources per iteration: "),
        "{r}"
    );
    let lifted = ["pipeliner-max-stages=100"];
    let (r, _) = swp(dot, "pipeliner", &lifted);
    assert!(r.contains("Pipelined succesfully! II=10, MII=10"), "{r}");
    let (r, _) = swp(
        dot,
        "pipeliner",
        &["pipeliner-max-stages=100", "pipeliner-force-ii=9"],
    );
    assert!(
        r.contains("Unable to find schedule"),
        "below ResMII the units are overbooked: {r}"
    );
    let (r, _) = swp(sqrt, "pipeliner", &["pipeliner-ii-search-range=1"]);
    assert!(
        r.contains("Too many stages in schedule"),
        "only II=MII is tried, and it needs too many stages: {r}"
    );
    let (r, _) = swp(
        dot,
        "pipeliner",
        &[
            "pipeliner-max-stages=100",
            "pipeliner-register-pressure=true",
            "pipeliner-register-pressure-margin=100",
        ],
    );
    assert!(r.contains("register pressure of the schedule"), "{r}");
    let (r, _) = swp(
        dot,
        "pipeliner",
        &[
            "pipeliner-max-stages=100",
            "pipeliner-register-pressure=true",
            "pipeliner-register-pressure-margin=0",
            "nv-remat-default-max-reg=255",
        ],
    );
    assert!(r.contains("Pipelined succesfully!"), "{r}");
    let stencil = "tests/sched/stencil_f32.mir";
    let (r, _) = swp(stencil, "pipeliner", &lifted);
    assert!(r.contains("Pipelined succesfully!"), "{r}");
    let (r, _) = swp(
        stencil,
        "pipeliner",
        &[
            "pipeliner-max-stages=100",
            "pipeliner-prune-loop-carried=false",
        ],
    );
    assert!(
        r.contains("Minimal Initiation Interval too large"),
        "unpruned, the invariant loads wait for the last iteration's store: {r}"
    );
    let (pruned, _) = swp(sqrt, "pipeliner", &["pipeliner-annotate-for-testing=true"]);
    let (unpruned, _) = swp(
        sqrt,
        "pipeliner",
        &[
            "pipeliner-annotate-for-testing=true",
            "pipeliner-prune-deps=false",
        ],
    );
    assert_ne!(
        pruned, unpruned,
        "dependences between unrelated PHIs change the schedule"
    );
    // The loop's COPY must reach the pipeliner: the combiner and machine-cp would fold it.
    let fib = "tests/sched/fib_copy_i32.mir";
    let (with, _) = swp(fib, "pipeliner", &["pipeliner-annotate-for-testing=true", "disable-combine=true", "disable-copyprop=true"]);
    let (without, _) = swp(
        fib,
        "pipeliner",
        &[
            "pipeliner-annotate-for-testing=true",
            "pipeliner-enable-copytophi=false",
            "disable-combine=true",
            "disable-copyprop=true",
        ],
    );
    assert_ne!(
        with, without,
        "CopyToPhi moves the copy after the PHI's readers"
    );
}

#[test]
fn scheduler_knobs_take_effect() {
    let file = "tests/corpus/int_ops_i64.mir";
    let (default, default_ptx) = remarks(file, "sched", &[]);
    assert!(
        default.contains("pressure mode") && default.contains("; reordered"),
        "{default}"
    );
    let (off, off_ptx) = remarks(file, "sched", &["enable-misched=false"]);
    assert!(!off.contains("units"), "{off}");
    assert_ne!(default_ptx, off_ptx);
    let (r, latency_ptx) = remarks(file, "sched", &["nvptx-sched4reg=false"]);
    assert!(
        r.contains("latency mode:") && !r.contains("pressure mode:"),
        "{r}"
    );
    assert_ne!(latency_ptx, default_ptx);
    // The simple pipeline schedules after allocation only.
    let (r, _) = remarks(file, "sched", &["usedessa=1"]);
    assert!(
        r.contains("skipped: usedessa=1") && r.contains("reordered"),
        "{r}"
    );
    let (r, _) = remarks(file, "sched", &["usedessa=1", "disable-post-ra=true"]);
    assert!(!r.contains("units"), "{r}");
    let (r, _) = remarks(file, "sched", &["misched-postra=true"]);
    assert_eq!(
        r.matches("@*: blocks").count(),
        2,
        "both schedulers ran: {r}"
    );
    // Headroom lets latency cost registers in blocks under their target.
    let (r, _) = remarks(
        "tests/corpus/local_arrays.mir",
        "sched",
        &["nvptx-sched4reg=false", "sched-latency-headroom=8"],
    );
    let (r0, _) = remarks(
        "tests/corpus/local_arrays.mir",
        "sched",
        &["nvptx-sched4reg=false"],
    );
    assert_ne!(r, r0);
}

/// A small deterministic generator (xorshift) for the random loops below.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A random rotated loop: `k` i32 accumulators and a counter in PHIs, a load of
/// `in[i]` (invariant or not), a random chain of integer operations over them, a store
/// of one of the results to `out[i]` (or none), the accumulators written to
/// `out[32 + j]` after the loop. One thread; `n` at most 16.
fn random_loop(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let k = 1 + r.below(3) as usize;
    let mut text = String::from("---\nname: random_loop\nkind: kernel\nparams:\n  - { name: in, type: p1 }\n  - { name: out, type: p1 }\n  - { name: n, type: i32 }\nbody: |\n  bb.0.entry:\n");
    text.push_str("    %in:p1 = ARG 0\n    %out:p1 = ARG 1\n    %n:i32 = ARG 2\n    %zero:i32 = CONSTANT 0\n    %one:i32 = CONSTANT 1\n    %four:i64 = CONSTANT 4\n");
    for j in 0..k {
        text.push_str(&format!(
            "    %init{j}:i32 = CONSTANT {}\n",
            r.below(1000) as i64 - 500
        ));
    }
    text.push_str("    %has:i1 = SETCC gt, %n, %zero\n    BRCOND %has, %bb.1, %bb.2\n  bb.1.loop:\n    %i:i32 = PHI %zero, %bb.0, %inext, %bb.1\n");
    for j in 0..k {
        text.push_str(&format!(
            "    %a{j}:i32 = PHI %init{j}, %bb.0, %a{j}n, %bb.1\n"
        ));
    }
    let load = if r.below(2) == 0 {
        "LOAD.invariant"
    } else {
        "LOAD"
    };
    text.push_str(&format!("    %i64:i64 = SIGN_EXTEND %i\n    %off:i64 = MUL %i64, %four\n    %pin:p1 = PTR_ADD %in, %off\n    %x:i32 = {load} %pin\n"));
    let mut pool: Vec<String> = vec!["i".into(), "x".into()];
    pool.extend((0..k).map(|j| format!("a{j}")));
    let ops = ["ADD", "SUB", "MUL", "XOR", "AND", "OR"];
    for m in 0..2 + r.below(8) as usize {
        let op = ops[r.below(ops.len() as u64) as usize];
        let a = pool[r.below(pool.len() as u64) as usize].clone();
        let b = pool[r.below(pool.len() as u64) as usize].clone();
        text.push_str(&format!("    %v{m}:i32 = {op} %{a}, %{b}\n"));
        pool.push(format!("v{m}"));
    }
    for j in 0..k {
        let v = pool[pool.len() - 1 - r.below(3.min(pool.len() as u64)) as usize].clone();
        text.push_str(&format!("    %a{j}n:i32 = ADD %a{j}, %{v}\n"));
    }
    if r.below(3) > 0 {
        let v = pool[r.below(pool.len() as u64) as usize].clone();
        text.push_str(&format!(
            "    %pout:p1 = PTR_ADD %out, %off\n    STORE %{v}, %pout\n"
        ));
    }
    text.push_str("    %inext:i32 = ADD %i, %one\n    %more:i1 = SETCC lt, %inext, %n\n    BRCOND %more, %bb.1, %bb.2\n  bb.2.exit:\n");
    for j in 0..k {
        text.push_str(&format!(
            "    %r{j}:i32 = PHI %init{j}, %bb.0, %a{j}n, %bb.1\n"
        ));
    }
    for j in 0..k {
        text.push_str(&format!("    %c{j}:i64 = CONSTANT {}\n    %p{j}:p1 = PTR_ADD %out, %c{j}\n    STORE %r{j}, %p{j}\n", 128 + 4 * j));
    }
    text.push_str("    RET\n...\n");
    text
}

#[test]
fn random_pipelined_loops_agree_with_the_interpreter() {
    let ptxas = tests::ptxas();
    let dir = tempfile::tempdir().unwrap();
    let count: u64 = std::env::var("SCHED_RANDOM_LOOPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let (mut pipelined, mut runs) = (0, 0);
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    for seed in 0..count {
        let text = random_loop(seed);
        if std::env::var("SCHED_DUMP").is_ok() {
            std::fs::write(format!("/tmp/rloop{seed}.mir"), &text).unwrap();
        }
        let mir = dir.path().join(format!("loop{seed}.mir"));
        std::fs::write(&mir, &text).unwrap();
        let mir = mir.display().to_string();
        for sm in ["sm_50", "sm_80"] {
            let out = ptxc(&[
                "compile",
                &mir,
                "--sm",
                sm,
                "--verify",
                "--remarks",
                "pipeliner",
                "--knob",
                "pipeliner-max-stages=100",
                "--knob",
                "pipeliner-max-mii=100",
            ]);
            assert_eq!(out.code, 0, "seed {seed} on {sm}:\n{}\n{text}", out.stderr);
            if let Some(p) = &ptxas {
                tests::assemble(p, &out.stdout, sm)
                    .unwrap_or_else(|e| panic!("ptxas rejects seed {seed} on {sm}:\n{e}"));
            }
            let stages = stages_of(&out.stderr);
            pipelined += usize::from(stages.is_some());
            if stages.is_none() {
                let why = out
                    .stderr
                    .lines()
                    .find(|l| l.contains("not pipelined"))
                    .unwrap_or("")
                    .split("not pipelined: ")
                    .nth(1)
                    .unwrap_or("")
                    .to_string();
                let why = why
                    .split(|c: char| c == '(' || c == ':')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string();
                *reasons.entry(why).or_insert(0usize) += 1;
            }
            let ptx = dir.path().join(format!("loop{seed}-{sm}.ptx"));
            std::fs::write(&ptx, &out.stdout).unwrap();
            let ptx = ptx.display().to_string();
            let s = stages.unwrap_or(3);
            let mut trips = vec![0, 1, 2, s.saturating_sub(1), s, s + 1, 16];
            trips.retain(|&n| n <= 16);
            trips.sort_unstable();
            trips.dedup();
            for n in trips {
                let n = n.to_string();
                let common = [
                    "--entry",
                    "random_loop",
                    "--block",
                    "1",
                    "--seed",
                    "5",
                    "--arg",
                    "random:64:i32",
                    "--arg",
                    "i32[0;48]",
                    "--arg",
                    n.as_str(),
                ];
                let interp = ptxc(&[&["interp", mir.as_str()][..], &common].concat());
                let sim = ptxc(&[&["sim", ptx.as_str()][..], &common].concat());
                assert_eq!(
                    interp.code, 0,
                    "interp seed {seed} n={n}: {}",
                    interp.stderr
                );
                assert_eq!(sim.code, 0, "sim seed {seed} on {sm} n={n}: {}", sim.stderr);
                assert_eq!(
                    buffer_values(&interp.stdout),
                    buffer_values(&sim.stdout),
                    "seed {seed} on {sm}, trip count {n}:\n{text}"
                );
                runs += 1;
            }
        }
    }
    println!("{count} random loops x 2 SMs: {pipelined} pipelined, {runs} runs agree; not pipelined: {reasons:?}");
    assert!(
        pipelined >= count as usize / 2,
        "random loops are pipelined with the limits lifted ({pipelined}; not: {reasons:?})"
    );
}

/// The pipeliner's register estimate (MaxLive of the modulo schedule, reported as
/// `kernel register pressure N` and checked by `pipeliner-register-pressure`) against
/// MRPA of the kernel block the pipeliner generates, on every loop kernel of
/// tests/sched/ that pipelines at several stage-latency settings. Modulo variable
/// expansion gives each overlapping lifetime a register, so the two agree exactly,
/// values of the loop read after it included (sqrt_sum_f32's last `i`, which the
/// estimate missed before it counted them).
#[test]
fn pipeliner_pressure_estimate_matches_the_generated_kernel() {
    let tables = tables::nvptx();
    let sm = tables.find_sm("sm_80").unwrap();
    let sets = PressureSets::new(tables, sm);
    let mut compared = Vec::new();
    for e in std::fs::read_dir(root().join("tests/sched")).unwrap().flatten() {
        let file = e.path();
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.display().to_string();
        let parsed = backend::mir::parser::parse_module(&text, &name, tables).unwrap_or_else(|e| panic!("{}", e.render()));
        for latency in ["0", "1", "2"] {
            let mut options = Options::new(tables, OptLevel::O3);
            for knob in ["pipeliner-max-stages=100", "pipeliner-skip-hidden-latency=false", &format!("pipeliner-stage-latency={latency}")] {
                options.set(knob).unwrap();
            }
            let source = backend::mir::verifier::Source { file: &name, text: &text };
            let sink = std::cell::RefCell::new(Vec::new());
            let mut cx = PassContext::new(tables, Some(sm), source);
            cx.options = options.clone();
            cx.remarks = Some(&sink);
            let mut module = parsed.clone();
            for pass in PASSES.iter().filter(|p| p.enabled(&options)) {
                (pass.run)(&mut module, &cx).unwrap_or_else(|e| panic!("{name}: {}", e[0].render()));
                if pass.name == "machine-pipeliner" {
                    break;
                }
            }
            let Some(estimate) = sink.borrow().iter().find_map(|r| {
                let at = r.message.find("kernel register pressure ")? + "kernel register pressure ".len();
                r.message[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse::<u32>().ok()
            }) else {
                continue;
            };
            let f = &module.functions[0];
            let cfg = backend::machine::cfg::Cfg::new(f, tables);
            let pressure = Pressure::compute(f, &cfg.preds, &sets, tables);
            // The kernel: the one block that branches to itself.
            let kernel = (0..f.blocks.len()).find(|&b| cfg.succs[b].contains(&b)).expect("a pipelined loop has a kernel block");
            let actual = pressure.peak[kernel][0];
            compared.push(format!("{name} stage-latency {latency}: estimate {estimate}, MRPA {actual}"));
            assert_eq!(
                estimate, actual,
                "{name} with pipeliner-stage-latency={latency}: estimated {estimate} registers, the kernel block needs {actual}"
            );
        }
    }
    println!("{}", compared.join("\n"));
    assert!(compared.len() >= 10, "only {} pipelined loops compared", compared.len());
}
