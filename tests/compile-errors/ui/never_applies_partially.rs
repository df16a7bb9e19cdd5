// A rule that still decides ADD but whose SUB is decided on every SM by more specific rules.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/never_applies_partially");
fn main() {}
