// A flag operand (the hardware's carry) is named in the template, which cannot write it.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_flag_in_template");
fn main() {}
