// A result list longer than the opcode's results.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_result_count");
fn main() {}
