// Two opcodes share the name `ADD`.
codegen_macros::target_tables!("tests/ui/descs/duplicate_opcode");
fn main() {}
