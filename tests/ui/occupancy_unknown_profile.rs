// An SM names an occupancy profile that does not exist (`maxwel`).
codegen_macros::target_tables!("tests/ui/descs/occupancy_unknown_profile");
fn main() {}
