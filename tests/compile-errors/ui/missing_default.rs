// A legality file without the `default ACTION;` statement.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/missing_default");
fn main() {}
