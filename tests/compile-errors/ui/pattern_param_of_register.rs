// `{param.LEAF}` names the parameter of a nested ARG; a register leaf has none.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_param_of_register");
fn main() {}
