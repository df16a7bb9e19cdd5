// A pattern uses f16 registers on an SM where f16 is not a register type.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_non_register_type");
fn main() {}
