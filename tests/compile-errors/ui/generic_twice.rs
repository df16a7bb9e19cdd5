// Two pointer types marked `generic`: the flat address space is one.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/generic_twice");
fn main() {}
