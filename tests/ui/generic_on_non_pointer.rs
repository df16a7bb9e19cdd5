// `generic` on a type that is not a pointer.
codegen_macros::target_tables!("tests/ui/descs/generic_on_non_pointer");
fn main() {}
