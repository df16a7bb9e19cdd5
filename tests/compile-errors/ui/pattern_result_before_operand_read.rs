// A template that writes its result before a later line reads an operand: the operand
// may share the result's register when its value dies at this instruction.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_result_before_operand_read");
fn main() {}
