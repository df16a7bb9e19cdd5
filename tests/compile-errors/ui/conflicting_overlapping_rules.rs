// Two rules with overlapping, incomparable SM sets disagree on sm_60.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/conflicting_overlapping_rules");
fn main() {}
