// A misspelt action (`legall`) in the rule DSL is a syntax error.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/action_typo");
fn main() {}
