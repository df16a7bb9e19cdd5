// A rule condition names a feature (`f16_maths`) that is not defined.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/unknown_feature");
fn main() {}
