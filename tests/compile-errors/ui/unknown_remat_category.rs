// remat.non_rematerializable names a category (`memroy`) that is not defined.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/unknown_remat_category");
fn main() {}
