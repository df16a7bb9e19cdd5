// Two pointer types marked `kernel_args`: kernel arguments point into one space.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/kernel_args_twice");
fn main() {}
