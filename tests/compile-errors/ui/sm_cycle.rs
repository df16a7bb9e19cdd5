// sm_50 implies sm_60, which implies sm_50: the SM graph must be acyclic.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/sm_cycle");
fn main() {}
