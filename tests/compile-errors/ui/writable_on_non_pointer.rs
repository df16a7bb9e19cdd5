// `writable` on a type that is not a pointer.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/writable_on_non_pointer");
fn main() {}
