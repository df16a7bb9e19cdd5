// A register class member's `when` names an undefined feature (`f16_maht`).
codegen_macros::target_tables!("tests/compile-errors/ui/descs/class_unknown_feature");
fn main() {}
