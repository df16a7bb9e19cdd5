// The manifest lists a file (`opcode.yaml`) that does not exist.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/missing_file");
fn main() {}
