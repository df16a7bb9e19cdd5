// Two rules with the same SM set (`f16_math` = `sm_60`) disagree on FADD f32.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/conflicting_rules");
fn main() {}
