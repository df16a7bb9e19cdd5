// A rule whose condition (`sm_70 & !sm_60`) holds on no SM.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/never_applies_empty_condition");
fn main() {}
