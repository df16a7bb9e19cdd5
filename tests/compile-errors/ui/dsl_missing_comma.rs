// An opcode list missing a `,` between two names.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/dsl_missing_comma");
fn main() {}
