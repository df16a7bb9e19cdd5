// A flag operand where the opcode's signature has no bool operand.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_flag_not_bool");
fn main() {}
