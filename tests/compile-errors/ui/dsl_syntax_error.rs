// A rule missing its terminating `;`.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/dsl_syntax_error");
fn main() {}
