// An SM `implies` an SM (`sm_65`) that is not defined.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/unknown_sm");
fn main() {}
