// A leaf of a pattern tree the template does not name: the absorbed SUB's operand `b`
// would be dropped.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_tree_unused_leaf");
fn main() {}
