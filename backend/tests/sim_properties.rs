//! Property tests of the simulator's front end and executor: no text makes them panic,
//! and every error lies inside the file. The inputs are mutations of real PTX (what
//! `ptxc compile` writes for corpus kernels): lines deleted, duplicated or swapped,
//! tokens replaced, the text truncated.

use backend::interp::{ArgValue, Launch};
use backend::sim::Simulator;
use proptest::prelude::*;

/// PTX of a few corpus kernels (loops, calls, shared memory, shuffles, i128, f16).
fn seeds() -> &'static [String] {
    static SEEDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
        ["loop_two_phis.mir", "device_calls.mir", "reduce_shared_sum.mir", "warp_shuffle_i32.mir", "i128_move.mir", "f16_arith.mir"]
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(root.join(f)).unwrap();
                backend::synth::compile(&text, "80").unwrap()
            })
            .collect()
    })
}

fn check(text: &str) {
    let tables = tables::nvptx();
    match Simulator::new(text, "mutated.ptx", tables, None) {
        Err(e) => {
            if let Some(at) = e.at {
                assert!(at as usize <= text.len(), "error offset {at} beyond the text ({} bytes): {e}", text.len());
            }
            let rendered = e.render("mutated.ptx", text);
            assert!(rendered.contains("error"), "{rendered}");
        }
        Ok(sim) => {
            for entry in sim.kernels() {
                let params = sim.kernel_params(entry).unwrap();
                let args: Vec<ArgValue> = params
                    .iter()
                    .map(|p| match (p.pointer_sized, p.bytes) {
                        (true, _) => ArgValue::Buffer(vec![0; 4096]),
                        (_, Some(n)) => ArgValue::Buffer(vec![0; n as usize]),
                        _ => ArgValue::Scalar(3),
                    })
                    .collect();
                let options = backend::sim::Options { fuel: 50_000, ..backend::sim::Options::default() };
                if let Err(e) = sim.run(entry, &Launch { grid: [1, 1, 1], block: [40, 1, 1] }, &args, &options) {
                    let rendered = sim.render_error(&e);
                    assert!(rendered.contains("error"), "{rendered}");
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    ReplaceChar(usize, char),
    Truncate(usize),
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut truncate = None;
    for m in mutations {
        let n = lines.len().max(1);
        match m {
            Mutation::DeleteLine(i) if !lines.is_empty() => {
                lines.remove(i % n);
            }
            Mutation::DuplicateLine(i) if !lines.is_empty() => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Mutation::SwapLines(i, j) if !lines.is_empty() => lines.swap(i % n, j % n),
            Mutation::ReplaceChar(i, c) if !lines.is_empty() => {
                let line = &mut lines[i % n];
                let chars: Vec<char> = line.chars().collect();
                if !chars.is_empty() {
                    let k = (i / n) % chars.len();
                    *line = chars[..k].iter().chain(std::iter::once(c)).chain(chars[k + 1..].iter()).collect();
                }
            }
            Mutation::Truncate(i) => truncate = Some(*i),
            _ => {}
        }
    }
    let mut out = lines.join("\n");
    if let Some(i) = truncate {
        let cut = i % (out.len() + 1);
        let cut = (0..=cut).rev().find(|c| out.is_char_boundary(*c)).unwrap_or(0);
        out.truncate(cut);
    }
    out
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<usize>(), prop_oneof![Just('{'), Just('}'), Just(';'), Just('%'), Just('['), Just('.'), Just('0'), Just('x'), Just('-'), Just('é')])
            .prop_map(|(i, c)| Mutation::ReplaceChar(i, c)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mutated_ptx_never_panics(seed in 0usize..6, mutations in proptest::collection::vec(mutation(), 1..6)) {
        let text = apply(&seeds()[seed], &mutations);
        check(&text);
    }

    #[test]
    fn ptx_shaped_noise_never_panics(words in proptest::collection::vec(prop_oneof![
        Just(".version 8.0\n"), Just(".target sm_80\n"), Just(".address_size 64\n"), Just(".entry k("), Just(")"), Just("{"), Just("}"),
        Just(".param .u64 p"), Just(".reg .b32 %r<4>;"), Just(".reg .pred %p;"), Just("ld.param.u64 %rd1, [p];"), Just("add.s32 %r1, %r2, 1;"),
        Just("@%p bra L;"), Just("L:"), Just("st.global.u32 [%rd1], %r1;"), Just("ret;"), Just("bar.sync 0;"), Just(","), Just("\n"),
        Just("shfl.sync.down.b32 %r1, %r2, 1, 31, -1;"), Just("setp.lt.s32 %p, %r1, 3;"), Just("call.uni f, ();"), Just("-(((")
    ], 0..40)) {
        check(&words.concat());
    }
}

#[test]
fn real_ptx_runs() {
    // The unmutated seeds decode and run (so the mutations start from working files).
    for text in seeds() {
        let sim = Simulator::new(text, "seed.ptx", tables::nvptx(), None).unwrap_or_else(|e| panic!("{}", e.render("seed.ptx", text)));
        assert!(!sim.kernels().is_empty());
    }
}
