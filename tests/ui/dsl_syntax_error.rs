// A rule missing its terminating `;`.
codegen_macros::target_tables!("tests/ui/descs/dsl_syntax_error");
fn main() {}
