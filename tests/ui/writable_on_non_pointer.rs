// `writable` on a type that is not a pointer.
codegen_macros::target_tables!("tests/ui/descs/writable_on_non_pointer");
fn main() {}
