// `legal` on f16, which no register class holds on sm_50 (HalfRegs needs f16_math).
codegen_macros::target_tables!("tests/compile-errors/ui/descs/legal_on_non_register_type");
fn main() {}
