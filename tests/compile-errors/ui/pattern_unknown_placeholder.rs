// An instruction-selection template names an operand the pattern does not have.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_unknown_placeholder");
fn main() {}
