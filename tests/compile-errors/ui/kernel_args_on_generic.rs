// `kernel_args` on the generic pointer type: kernel arguments point into one specific space.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/kernel_args_on_generic");
fn main() {}
