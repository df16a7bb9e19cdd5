//! Evaluation of single instructions on constant operands, for compile-time constant
//! folding (the `combine` pass).
//!
//! Where it sits: beside the interpreter's runs, sharing their code. An instruction is
//! resolved by the same `compile` step and executed by the same `exec` step as in a
//! run, on a register file holding only its operands and results, so a folded value is
//! bit for bit the value the interpreter computes when it runs the instruction (NaN
//! payloads, `.ftz`, rounding modes, i1..i128, vectors).
//!
//! Why a separate entry point: folding must never give a value where a run reports
//! undefined behaviour (division by zero, shifts not below the width, out-of-range
//! conversions or lane indices); those come back as [`Evaluation::Undefined`] and the
//! caller keeps the instruction. Approximate operations (`FSIN`, `FEXP2`, `.approx`
//! division, ...) are not folded: the interpreter computes them with the host's libm,
//! the GPU with its own approximation, and folding would replace one by the other.

use target_desc::tables::{props, TargetTables};

use super::compile::{self, FloatBinary, FloatUnary, Op, Ty};
use crate::mir::{Function, Inst, Opcode};

/// What evaluating an instruction on constant operands gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Evaluation {
    /// The lanes of each result, in order (a scalar has one lane).
    Values(Vec<Vec<u128>>),
    /// The interpreter reports undefined behaviour on these operands.
    Undefined(String),
    /// The instruction is not a pure computation the folder evaluates (memory, control
    /// flow, calls, approximate functions, types the interpreter does not model, ...).
    NotFoldable,
}

/// Generic opcodes never folded whatever their operands: they read state or have no
/// meaning outside a running function.
const NEVER: &[&str] = &["PHI", "ARG", "GLOBAL_ADDR", "FRAME_INDEX", "UNDEF", "CALL", "INTRINSIC", "PTR_ADD", "ADDRSPACECAST", "FSINCOS"];

/// Evaluates `inst` (of `function`) with `operands[k]` the lanes of its `k`-th value
/// operand. Non-value operands (condition codes, literals, masks) are the
/// instruction's own.
pub fn evaluate(tables: &TargetTables, function: &Function, inst: &Inst, operands: &[Vec<u128>]) -> Evaluation {
    let Opcode::Generic(opcode) = inst.opcode else { return Evaluation::NotFoldable };
    let Some(info) = tables.opcode_info(opcode) else { return Evaluation::NotFoldable };
    let effects = props::TERMINATOR | props::SIDE_EFFECTS | props::MAY_LOAD | props::MAY_STORE | props::CALL | props::CONVERGENT | props::BRANCH;
    if info.props & effects != 0 || NEVER.contains(&info.name) || inst.has_flag("approx") {
        return Evaluation::NotFoldable;
    }
    let ty = |v: crate::mir::ValueId| function.values.get(v.0 as usize).and_then(|x| Ty::from_vt(tables, x.ty));
    let Some(def_tys) = inst.defs.iter().map(|d| ty(*d)).collect::<Option<Vec<Ty>>>() else { return Evaluation::NotFoldable };
    let Some(arg_tys) = inst.uses().map(ty).collect::<Option<Vec<Ty>>>() else { return Evaluation::NotFoldable };
    if arg_tys.len() != operands.len() || arg_tys.iter().zip(operands).any(|(t, lanes)| lanes.len() != t.lanes as usize) {
        return Evaluation::NotFoldable;
    }
    let Ok(op) = compile::resolve_pure(tables, function, inst, &def_tys, &arg_tys) else { return Evaluation::NotFoldable };
    if !pure(&op) {
        return Evaluation::NotFoldable;
    }
    // The register file: results first, then operands, one slot per lane.
    let mut regs = Vec::new();
    let mut defs = Vec::with_capacity(def_tys.len());
    for t in &def_tys {
        defs.push(regs.len() as u32);
        regs.extend(std::iter::repeat_n(0u128, t.lanes as usize));
    }
    let mut args = Vec::with_capacity(arg_tys.len());
    for (t, lanes) in arg_tys.iter().zip(operands) {
        args.push(regs.len() as u32);
        regs.extend(lanes.iter().map(|l| l & super::int::mask(t.bits)));
    }
    let resolved = compile::Inst {
        op,
        defs: defs.clone().into(),
        def_tys: def_tys.clone().into(),
        args: args.into(),
        arg_tys: arg_tys.into(),
        ftz: inst.has_flag("ftz"),
        block: 0,
        index: 0,
    };
    match super::exec::evaluate_pure(&resolved, regs) {
        Ok(regs) => Evaluation::Values(defs.iter().zip(&def_tys).map(|(&d, t)| regs[d as usize..(d + t.lanes) as usize].to_vec()).collect()),
        Err(what) => Evaluation::Undefined(what),
    }
}

/// Whether a resolved operation computes its results from its operands alone, exactly.
fn pure(op: &Op) -> bool {
    match op {
        Op::FloatBinary(b) => *b != FloatBinary::Pow,
        Op::FloatUnary(u) => !matches!(u, FloatUnary::Sin | FloatUnary::Cos | FloatUnary::Exp2 | FloatUnary::Log2 | FloatUnary::Exp | FloatUnary::Log),
        Op::Constant(_)
        | Op::Copy
        | Op::Binary(_)
        | Op::Unary(_)
        | Op::SignExtendInReg(_)
        | Op::MulLoHi { .. }
        | Op::Overflow(_)
        | Op::ShiftParts(_)
        | Op::BuildPair
        | Op::ExtractElement(_)
        | Op::Fma { .. }
        | Op::CopySign
        | Op::SetCC(_)
        | Op::Select
        | Op::SelectCC(_)
        | Op::SignExtend
        | Op::ZeroExtend
        | Op::Truncate
        | Op::FpConvert(_)
        | Op::FpToInt { .. }
        | Op::IntToFp { .. }
        | Op::Bitcast
        | Op::BuildVector
        | Op::ExtractVectorElt
        | Op::InsertVectorElt
        | Op::ScalarToVector
        | Op::ConcatVectors
        | Op::ExtractSubvector
        | Op::InsertSubvector
        | Op::Prmt(_)
        | Op::Shuffle(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::parser::parse_module;

    fn function(body: &str) -> crate::mir::Module {
        let text = format!("---\nname: k\nkind: kernel\nparams: []\nbody: |\n  bb.0:\n{body}    RET\n...\n");
        parse_module(&text, "fold.mir", tables::nvptx()).unwrap_or_else(|e| panic!("{}", e.render()))
    }

    fn eval(body: &str, index: usize, operands: &[Vec<u128>]) -> Evaluation {
        let m = function(body);
        let f = &m.functions[0];
        evaluate(tables::nvptx(), f, &f.blocks[0].insts[index], operands)
    }

    #[test]
    fn folds_integers_floats_and_vectors_like_a_run() {
        let body = "    %a:i32 = CONSTANT 7\n    %b:i32 = CONSTANT -2\n    %c:i32 = SDIV %a, %b\n";
        assert_eq!(eval(body, 2, &[vec![7], vec![0xFFFF_FFFE]]), Evaluation::Values(vec![vec![0xFFFF_FFFD]]));
        let body = "    %a:f32 = FCONSTANT 1.0\n    %c:f32 = FADD.ftz %a, %a\n";
        let tiny = u128::from(f32::from_bits(1).to_bits());
        assert_eq!(eval(body, 1, &[vec![tiny], vec![tiny]]), Evaluation::Values(vec![vec![0]]), ".ftz flushes as in a run");
        let body = "    %a:v2f16 = UNDEF\n    %i:i32 = CONSTANT 1\n    %e:f16 = EXTRACT_VECTOR_ELT %a, %i\n";
        assert_eq!(eval(body, 2, &[vec![0x3C00, 0x4000], vec![1]]), Evaluation::Values(vec![vec![0x4000]]));
    }

    #[test]
    fn undefined_behaviour_is_not_a_value() {
        let body = "    %a:i32 = CONSTANT 7\n    %c:i32 = UDIV %a, %a\n";
        assert!(matches!(eval(body, 1, &[vec![7], vec![0]]), Evaluation::Undefined(_)));
        let body = "    %a:i16 = CONSTANT 7\n    %c:i16 = SHL %a, %a\n";
        assert!(matches!(eval(body, 1, &[vec![1], vec![16]]), Evaluation::Undefined(_)));
    }

    #[test]
    fn approximate_and_stateful_operations_are_not_folded() {
        let body = "    %a:f32 = FCONSTANT 1.0\n    %c:f32 = FSIN %a\n";
        assert_eq!(eval(body, 1, &[vec![0x3F80_0000]]), Evaluation::NotFoldable);
        let body = "    %a:f32 = FCONSTANT 1.0\n    %c:f32 = FDIV.approx %a, %a\n";
        assert_eq!(eval(body, 1, &[vec![0x3F80_0000], vec![0x3F80_0000]]), Evaluation::NotFoldable);
        let body = "    %a:i32 = UNDEF\n";
        assert_eq!(eval(body, 0, &[]), Evaluation::NotFoldable);
    }
}
