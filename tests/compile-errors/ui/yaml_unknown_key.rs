// An SM entry has an unknown field (`implied` for `implies`).
codegen_macros::target_tables!("tests/compile-errors/ui/descs/yaml_unknown_key");
fn main() {}
