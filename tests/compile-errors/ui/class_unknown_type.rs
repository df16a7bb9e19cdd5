// A register class lists a member type (`f23`) that is not defined.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/class_unknown_type");
fn main() {}
