// An `int` knob has a non-integer default (`ten`).
codegen_macros::target_tables!("tests/compile-errors/ui/descs/knob_wrong_default_type");
fn main() {}
