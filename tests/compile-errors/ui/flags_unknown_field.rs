// A template names a field its flag group does not have.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/flags_unknown_field");
fn main() {}
