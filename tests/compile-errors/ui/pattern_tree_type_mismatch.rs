// A nested node whose result type its parent's signature rejects: ADD takes integers,
// FADD gives an f32, so no instruction can match the tree.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/pattern_tree_type_mismatch");
fn main() {}
