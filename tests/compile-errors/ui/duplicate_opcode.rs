// Two opcodes share the name `ADD`.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/duplicate_opcode");
fn main() {}
