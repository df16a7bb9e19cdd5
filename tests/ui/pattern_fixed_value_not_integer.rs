// A fixed-value immediate whose value is not an integer.
codegen_macros::target_tables!("tests/ui/descs/pattern_fixed_value_not_integer");
fn main() {}
