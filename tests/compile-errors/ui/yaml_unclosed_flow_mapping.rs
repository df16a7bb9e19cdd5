// Malformed YAML: the last SM's `{ ... }` mapping is never closed.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/yaml_unclosed_flow_mapping");
fn main() {}
