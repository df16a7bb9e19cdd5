// A .pred class names a float as the type its values cross a call as.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/class_bad_param_carrier");
fn main() {}
