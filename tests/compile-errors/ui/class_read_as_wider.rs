// A 32-bit class claims it can stand in for a 16-bit one.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/class_read_as_wider");
fn main() {}
