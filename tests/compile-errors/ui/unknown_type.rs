// A legality rule names a type (`i33`) that no value_types entry defines.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/unknown_type");
fn main() {}
