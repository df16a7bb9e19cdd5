//! Peak memory through the pipeline (issue 15): the process's high-water RSS (`VmHWM`)
//! after reading, after parsing and after each pass of the default pipeline, then after
//! emission, on one MIR file:
//! `cargo run --release -p backend --example peak_memory -- FILE.mir [SM]` (SM default 80).
//! The allocator is the one `ptxc` uses, tuned the same way, so the last line is the
//! peak `ptxc compile -j 1` reaches; the step where the figure jumps is the one to fix.
//! Linux only (it reads /proc/self/status).

#[global_allocator]
static GLOBAL: backend::allocator::Allocator = backend::allocator::Allocator;

fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn main() {
    backend::allocator::tune();
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: peak_memory FILE.mir [SM]");
    let sm_name = args.next().unwrap_or_else(|| "80".to_string());
    let tables = tables::nvptx();
    let sm = tables.find_sm(&sm_name).expect("a known SM");
    let report = |step: &str| println!("{step:20} {:>9} KiB", peak_kib());
    report("start");
    let text = std::fs::read_to_string(&path).expect("the MIR file reads");
    report("read");
    let mut module = backend::mir::parser::parse_module(&text, &path, tables).unwrap_or_else(|e| panic!("{}", e.render()));
    report("parse");
    let source = backend::mir::verifier::Source { file: &path, text: &text };
    let mut cx = backend::passes::PassContext::new(tables, Some(sm), source);
    cx.checks = false;
    for pass in backend::passes::PASSES.iter().filter(|p| p.enabled(&cx.options)) {
        (pass.run)(&mut module, &cx).unwrap_or_else(|e| panic!("{}: {}", pass.name, e.iter().map(|e| e.render()).collect::<Vec<_>>().join("\n")));
        report(pass.name);
    }
    let instructions: usize = module.functions.iter().flat_map(|f| &f.blocks).map(|b| b.insts.len()).sum();
    // As `ptxc compile` emits: each function's MIR is dropped once its PTX exists.
    let ptx = backend::emit::emit_module_owned(module, tables, sm, &path, 1).expect("emits");
    report("emit");
    println!("{instructions} machine instructions, {} bytes of PTX", ptx.len());
}
