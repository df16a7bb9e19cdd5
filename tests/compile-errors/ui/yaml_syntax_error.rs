// Malformed YAML: a key of an SM entry is indented one column too far.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/yaml_syntax_error");
fn main() {}
