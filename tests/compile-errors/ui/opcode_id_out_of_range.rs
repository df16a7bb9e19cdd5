// An opcode id (259) does not fit the 259-wide action-table row.
codegen_macros::target_tables!("tests/compile-errors/ui/descs/opcode_id_out_of_range");
fn main() {}
