//! Time of each pass on generated kernels of a given size (backend::synth), for the
//! linear-time figures: `cargo run --release -p backend --example pass_times -- 10000 100000 1000000 [SHAPE...]`
//! (shapes: those of `backend::synth::SHAPES`; `NAME=VALUE` arguments set knobs, e.g.
//! `max-reg-kind=1 nv-remat-default-max-reg=8` to make block rematerialization work;
//! `maxreg=N` is `--maxreg N`, a hard bound that makes the spiller work).
//! Prints one line per (shape, size, pass) with milliseconds and the instruction count
//! after the pass. The passes run with checks off, as `ptxc compile` does.

use std::time::Instant;

#[global_allocator]
static GLOBAL: backend::allocator::Allocator = backend::allocator::Allocator;

fn main() {
    backend::allocator::tune();
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    // Shape names among the arguments select shapes (all by default).
    let wanted: Vec<String> = std::env::args().skip(1).filter(|a| a.parse::<usize>().is_err() && !a.contains('=')).collect();
    let knobs: Vec<String> = std::env::args().skip(1).filter(|a| a.contains('=')).collect();
    let sizes = if sizes.is_empty() { vec![10_000, 100_000] } else { sizes };
    let tables = tables::nvptx();
    for shape in backend::synth::SHAPES.iter().filter(|s| wanted.is_empty() || wanted.iter().any(|w| w == s.name)) {
        let (sm, generate, shape) = (tables.find_sm(shape.sm).expect("the shape's SM"), shape.mir, shape.name);
        for &n in &sizes {
            let text = generate(n);
            let start = Instant::now();
            let mut module = backend::mir::parser::parse_module(&text, "generated.mir", tables).expect("generated MIR parses");
            println!("{shape:8} {n:>8} {:>12} {:>9.1} ms", "parse", start.elapsed().as_secs_f64() * 1e3);
            let source = backend::mir::verifier::Source { file: "generated.mir", text: &text };
            let mut cx = backend::passes::PassContext::new(tables, Some(sm), source);
            cx.checks = false;
            for k in &knobs {
                match k.strip_prefix("maxreg=") {
                    Some(n) => cx.options.maxreg = Some(n.parse().expect("maxreg=N takes a number")),
                    None => cx.options.set(k).unwrap_or_else(|e| panic!("{}", e.render())),
                }
            }
            backend::passes::apply_maxreg(&mut module, &cx.options);
            let mut total = start.elapsed();
            for pass in backend::passes::PASSES.iter().filter(|p| p.enabled(&cx.options)) {
                let t = Instant::now();
                (pass.run)(&mut module, &cx).expect("the pass succeeds");
                let dt = t.elapsed();
                total += dt;
                let insts: usize = module.functions.iter().flat_map(|f| &f.blocks).map(|b| b.insts.len()).sum();
                println!("{shape:8} {n:>8} {:>12} {:>9.1} ms  ({insts} instructions after)", pass.name, dt.as_secs_f64() * 1e3);
            }
            let t = Instant::now();
            let ptx = backend::emit::emit_module(&module, tables, sm, "generated.mir").expect("emits");
            total += t.elapsed();
            println!("{shape:8} {n:>8} {:>12} {:>9.1} ms  ({} PTX lines)", "emit", t.elapsed().as_secs_f64() * 1e3, ptx.lines().count());
            println!("{shape:8} {n:>8} {:>12} {:>9.1} ms", "total", total.as_secs_f64() * 1e3);
        }
    }
}
