// A flag operand where the opcode's signature has no bool operand.
codegen_macros::target_tables!("tests/ui/descs/pattern_flag_not_bool");
fn main() {}
