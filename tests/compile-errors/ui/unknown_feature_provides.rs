// An SM `provides` a feature (`f16_mat`) that is not defined.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/unknown_feature_provides");
fn main() {}
