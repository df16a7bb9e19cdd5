// `kernel` is a property of the function, not of the SM: it can only be a conjunct of a
// pattern's condition, never under `|` or `!`.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_kernel_not_conjunct");
fn main() {}
