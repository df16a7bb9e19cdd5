// Two rules with overlapping, incomparable SM sets disagree on sm_60.
codegen_macros::target_tables!("tests/ui/descs/conflicting_overlapping_rules");
fn main() {}
