// Two leaves of one pattern tree with the same name.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_tree_duplicate_leaf");
fn main() {}
