// A fixed-value immediate whose value is not an integer.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_fixed_value_not_integer");
fn main() {}
