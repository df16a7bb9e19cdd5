//! Links `ptxc` as a position-dependent executable on Linux with glibc.
//!
//! A position-independent executable has the pointers in its static data (the
//! generated NVPTX tables: names, patterns, phf maps) relocated by the dynamic loader
//! at every start: 36k relocations, writing about 1 MB of pages. That was a third of
//! the CPU time of `ptxc --version` (3.6 to 2.3 ms) and a fifth of compiling a small
//! kernel (`examples/saxpy.mir`: 5.2 to 4.0 ms, median of 21 runs), and small kernels
//! are most of what a compiler is asked to compile. Linked with `-no-pie`, the linker
//! resolves them once. What it costs: the executable's own image is not placed at a
//! random address (its libraries, heap and stack still are).

fn main() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bin=ptxc=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
