// A template with a lone closing brace (a literal brace is written twice).
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_unmatched_brace");
fn main() {}
