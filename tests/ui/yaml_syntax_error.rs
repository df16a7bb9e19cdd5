// Malformed YAML: a key of an SM entry is indented one column too far.
codegen_macros::target_tables!("tests/ui/descs/yaml_syntax_error");
fn main() {}
