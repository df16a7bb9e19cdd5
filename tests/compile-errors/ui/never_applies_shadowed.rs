// A rule every cell of which is decided on every SM by a more specific rule.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/never_applies_shadowed");
fn main() {}
