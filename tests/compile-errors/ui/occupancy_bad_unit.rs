// An occupancy profile whose register allocation unit is not a whole number of warps.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/occupancy_bad_unit");
fn main() {}
