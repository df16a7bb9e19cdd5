// Two rules with the same SM set (`!f16_math` = `!sm_60`) say the same thing.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/duplicate_rule");
fn main() {}
