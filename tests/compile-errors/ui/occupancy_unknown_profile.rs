// An SM names an occupancy profile that does not exist (`maxwel`).
codegen_macros::target_tables!("tests/compile-errors/ui/descs/occupancy_unknown_profile");
fn main() {}
