// A flag of a flag group has two members that both apply on sm_60 and sm_70: the text
// the flag becomes there would depend on the order of the members.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/flags_overlapping_members");
fn main() {}
