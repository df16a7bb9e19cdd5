//! Writes the compile-time benchmark's inputs: for each shape of
//! `backend::synth::SHAPES` and each size, `SHAPE-SIZE.mir` and its LLVM IR twin
//! `SHAPE-SIZE.ll`, plus `shapes.tsv` (shape, size, SM, file stem) for the driver
//! script. `cargo run --release -p backend --example shapes -- OUTDIR 1000 10000 [SHAPE...]`
//! (`scripts/compile-time.py` runs it).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: shapes OUTDIR SIZE... [SHAPE...]");
        std::process::exit(2);
    };
    let sizes: Vec<usize> = args[1..].iter().filter_map(|a| a.parse().ok()).collect();
    let wanted: Vec<&String> = args[1..].iter().filter(|a| a.parse::<usize>().is_err()).collect();
    std::fs::create_dir_all(out).expect("create OUTDIR");
    let mut index = String::new();
    for shape in backend::synth::SHAPES.iter().filter(|s| wanted.is_empty() || wanted.iter().any(|w| *w == s.name)) {
        for &n in &sizes {
            let stem = format!("{}-{n}", shape.name);
            std::fs::write(format!("{out}/{stem}.mir"), (shape.mir)(n)).expect("write MIR");
            std::fs::write(format!("{out}/{stem}.ll"), (shape.llvm)(n)).expect("write LLVM IR");
            index.push_str(&format!("{}\t{n}\t{}\t{stem}\n", shape.name, shape.sm));
        }
    }
    std::fs::write(format!("{out}/shapes.tsv"), index).expect("write shapes.tsv");
}
