// An opcode list missing a `,` between two names.
codegen_macros::target_tables!("tests/ui/descs/dsl_missing_comma");
fn main() {}
