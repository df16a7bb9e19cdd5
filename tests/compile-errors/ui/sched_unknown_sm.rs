// A latency class gives figures for an SM (`sm_57`) the description does not define.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/sched_unknown_sm");
fn main() {}
