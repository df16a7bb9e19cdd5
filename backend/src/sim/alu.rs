//! Integer and bit-manipulation semantics of PTX, on raw bits.
//!
//! Where it sits: below [`super::exec`]. Each function takes operands already masked
//! to their type's width and returns the result's bits (masked by the caller).
//! Undefined cases (division by zero, the signed division overflow) come back as
//! `Err` with the reason; everything else PTX defines, including shift amounts at or
//! above the width (`shl` gives 0, `shr.s` the sign), is computed here. The PTX ISA's
//! "Integer Arithmetic" and "Logic and Shift" instruction pages are the reference.

use super::isa::{IntBin, IntUn, PrmtMode, Ty};

pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `value`'s low `bits` bits, sign-extended to 64.
pub fn sext(value: u64, bits: u32) -> i64 {
    if bits >= 64 {
        value as i64
    } else if bits == 0 {
        0
    } else {
        let shift = 64 - bits;
        ((value << shift) as i64) >> shift
    }
}

/// The value of an operand of `ty` as a signed or unsigned 128-bit integer.
pub fn widen(value: u64, ty: Ty) -> i128 {
    if ty.is_signed() {
        i128::from(sext(value, ty.bits()))
    } else {
        i128::from(value & mask(ty.bits()))
    }
}

/// Two-operand integer operations (without carries).
pub fn int_binary(op: IntBin, ty: Ty, a: u64, b: u64, sat: bool) -> Result<u64, String> {
    let bits = ty.bits();
    let m = mask(bits);
    let (sa, sb) = (widen(a, ty), widen(b, ty));
    Ok(match op {
        IntBin::Add | IntBin::Sub => {
            let r = if op == IntBin::Add { sa + sb } else { sa - sb };
            if sat && ty.is_signed() {
                let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
                r.clamp(lo, hi) as u64 & m
            } else {
                r as u64 & m
            }
        }
        IntBin::MulLo => (sa.wrapping_mul(sb)) as u64 & m,
        IntBin::MulHi => {
            if bits == 64 {
                let product = if ty.is_signed() { (i128::from(a as i64) * i128::from(b as i64)) as u128 } else { u128::from(a) * u128::from(b) };
                (product >> 64) as u64
            } else {
                ((sa * sb) >> bits) as u64 & m
            }
        }
        IntBin::Mul24Lo | IntBin::Mul24Hi => {
            let (x, y) = if ty.is_signed() { (i128::from(sext(a, 24)), i128::from(sext(b, 24))) } else { (i128::from(a & 0xFF_FFFF), i128::from(b & 0xFF_FFFF)) };
            let product = x * y;
            if op == IntBin::Mul24Lo {
                product as u64 & m
            } else {
                (product >> 16) as u64 & m
            }
        }
        IntBin::Div | IntBin::Rem => {
            if sb == 0 {
                return Err(format!("{} by zero", if op == IntBin::Div { "division" } else { "remainder" }));
            }
            if ty.is_signed() && sa == -(1i128 << (bits - 1)) && sb == -1 {
                return Err(format!("signed {}-bit {} overflows (minimum by -1)", bits, if op == IntBin::Div { "division" } else { "remainder" }));
            }
            let r = if op == IntBin::Div { sa / sb } else { sa % sb };
            r as u64 & m
        }
        IntBin::Min | IntBin::Max => {
            let r = if (op == IntBin::Min) == (sa < sb) { sa } else { sb };
            // `.relu`: clamp negative results to 0.
            let r = if sat { r.max(0) } else { r };
            r as u64 & m
        }
        IntBin::And => a & b & m,
        IntBin::Or => (a | b) & m,
        IntBin::Xor => (a ^ b) & m,
        IntBin::Shl => {
            let amount = b & 0xFFFF_FFFF;
            if amount >= u64::from(bits) {
                0
            } else {
                (a << amount) & m
            }
        }
        IntBin::Shr => {
            let amount = (b & 0xFFFF_FFFF).min(u64::from(bits) - 1 + u64::from(!ty.is_signed()));
            if ty.is_signed() {
                (sext(a, bits) >> amount.min(63)) as u64 & m
            } else if amount >= u64::from(bits) {
                0
            } else {
                (a & m) >> amount
            }
        }
    })
}

/// `add.cc`/`addc`/`sub.cc`/`subc`: the result and the carry (for subtraction, the
/// borrow) out.
pub fn add_with_carry(ty: Ty, a: u64, b: u64, carry_in: bool, subtract: bool) -> (u64, bool) {
    let bits = ty.bits();
    let m = mask(bits);
    let (a, b) = (u128::from(a & m), u128::from(b & m));
    let c = u128::from(carry_in);
    if subtract {
        let subtrahend = b + c;
        let borrow = subtrahend > a;
        ((a.wrapping_sub(subtrahend)) as u64 & m, borrow)
    } else {
        let sum = a + b + c;
        (sum as u64 & m, sum >> bits != 0)
    }
}

/// The full product of two operands of `ty` as a 128-bit value (signed types
/// sign-extended).
pub fn full_product(ty: Ty, a: u64, b: u64) -> u128 {
    (widen(a, ty).wrapping_mul(widen(b, ty))) as u128
}

pub fn int_unary(op: IntUn, ty: Ty, a: u64) -> u64 {
    let bits = ty.bits();
    let m = mask(bits);
    let a = a & m;
    match op {
        IntUn::Abs => (widen(a, ty).unsigned_abs() as u64) & m,
        IntUn::Neg => a.wrapping_neg() & m,
        IntUn::Not => !a & m,
        IntUn::Cnot => u64::from(a == 0),
        IntUn::Popc => u64::from(a.count_ones()),
        IntUn::Clz => u64::from(a.leading_zeros() - (64 - bits)),
        IntUn::Brev => a.reverse_bits() >> (64 - bits),
        IntUn::Bfind | IntUn::BfindShiftAmt => {
            // The most significant non-sign bit; for a negative signed value, the
            // most significant 0.
            let v = if ty.is_signed() && sext(a, bits) < 0 { !a & m } else { a };
            if v == 0 {
                0xFFFF_FFFF
            } else {
                let position = 63 - u64::from(v.leading_zeros());
                if op == IntUn::BfindShiftAmt {
                    u64::from(bits) - 1 - position
                } else {
                    position
                }
            }
        }
    }
}

/// `bfe`: `len` bits of `a` from `pos`, zero- or sign-extended.
pub fn bfe(ty: Ty, a: u64, pos: u64, len: u64) -> u64 {
    let bits = u64::from(ty.bits());
    let (pos, len) = (pos & 0xFF, len & 0xFF);
    let msb = pos + len.saturating_sub(1);
    let sign = ty.is_signed() && len != 0 && (a >> msb.min(bits - 1)) & 1 == 1;
    let mut d = 0u64;
    for i in 0..bits {
        let bit = if i < len && pos + i < bits { (a >> (pos + i)) & 1 == 1 } else { sign };
        d |= u64::from(bit) << i;
    }
    d
}

/// `bfi`: `len` low bits of `insert` placed into `base` at `pos`.
pub fn bfi(ty: Ty, insert: u64, base: u64, pos: u64, len: u64) -> u64 {
    let bits = u64::from(ty.bits());
    let (pos, len) = (pos & 0xFF, len & 0xFF);
    let mut d = base & mask(ty.bits());
    for i in 0..len {
        if pos + i >= bits {
            break;
        }
        d = (d & !(1 << (pos + i))) | (((insert >> i) & 1) << (pos + i));
    }
    d
}

/// `prmt.b32` in every mode.
pub fn prmt(mode: PrmtMode, a: u64, b: u64, c: u64) -> u64 {
    let source = (a & 0xFFFF_FFFF) | ((b & 0xFFFF_FFFF) << 32);
    let byte = |k: u64| (source >> (8 * (k & 7))) & 0xFF;
    let selectors: [u64; 4] = match mode {
        PrmtMode::Default => {
            let mut d = 0;
            for i in 0..4 {
                let s = (c >> (4 * i)) & 0xF;
                let value = byte(s & 7);
                let value = if s & 8 != 0 { if value & 0x80 != 0 { 0xFF } else { 0 } } else { value };
                d |= value << (8 * i);
            }
            return d;
        }
        // Result bytes b0..b3 for c[1:0] = 0..3 (PTX ISA, prmt's table of modes).
        PrmtMode::F4e => match c & 3 {
            0 => [0, 1, 2, 3],
            1 => [1, 2, 3, 4],
            2 => [2, 3, 4, 5],
            _ => [3, 4, 5, 6],
        },
        PrmtMode::B4e => match c & 3 {
            0 => [0, 7, 6, 5],
            1 => [1, 0, 7, 6],
            2 => [2, 1, 0, 7],
            _ => [3, 2, 1, 0],
        },
        PrmtMode::Rc8 => {
            let k = c & 3;
            [k, k, k, k]
        }
        PrmtMode::Ecl => match c & 3 {
            0 => [0, 1, 2, 3],
            1 => [1, 1, 2, 3],
            2 => [2, 2, 2, 3],
            _ => [3, 3, 3, 3],
        },
        PrmtMode::Ecr => match c & 3 {
            0 => [0, 0, 0, 0],
            1 => [0, 1, 1, 1],
            2 => [0, 1, 2, 2],
            _ => [0, 1, 2, 3],
        },
        PrmtMode::Rc16 => match c & 3 {
            0 | 2 => [0, 1, 0, 1],
            _ => [2, 3, 2, 3],
        },
    };
    selectors.iter().enumerate().fold(0, |d, (i, &s)| d | (byte(s) << (8 * i)))
}

/// `shf.l`/`shf.r` on 32 bits: the high (left) or low (right) word of the 64-bit
/// `b:a` shifted by `c`, the amount masked to 5 bits (`.wrap`) or clamped to 32.
pub fn shf(left: bool, clamp: bool, a: u64, b: u64, c: u64) -> u64 {
    let n = if clamp { (c & 0xFFFF_FFFF).min(32) } else { c & 31 };
    let joined = (a & 0xFFFF_FFFF) | ((b & 0xFFFF_FFFF) << 32);
    if left {
        ((u128::from(joined) << n) >> 32) as u64 & 0xFFFF_FFFF
    } else {
        (joined >> n) & 0xFFFF_FFFF
    }
}

/// `lop3.b32`: each result bit is `lut[(a << 2) | (b << 1) | c]` of the operand bits.
pub fn lop3(a: u64, b: u64, c: u64, lut: u64) -> u64 {
    let mut d = 0;
    for i in 0..32 {
        let index = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d |= ((lut >> index) & 1) << i;
    }
    d
}

/// `bmsk.b32 d, a, b`: `b` ones starting at bit `a`.
pub fn bmsk(clamp: bool, start: u64, width: u64) -> u64 {
    let (start, width) = if clamp { ((start & 0xFFFF_FFFF).min(32), (width & 0xFFFF_FFFF).min(32)) } else { (start & 31, width & 31) };
    let ones = if width >= 32 { u64::MAX } else { (1u64 << width) - 1 };
    (ones << start) & 0xFFFF_FFFF
}

/// `szext`: the low `width` bits of `a`, sign- or zero-extended to 32.
pub fn szext(clamp: bool, signed: bool, a: u64, width: u64) -> u64 {
    let width = if clamp { (width & 0xFFFF_FFFF).min(32) } else { width & 31 } as u32;
    if width == 0 {
        return 0;
    }
    if signed {
        sext(a, width) as u64 & 0xFFFF_FFFF
    } else {
        a & mask(width)
    }
}

/// `dp4a`: `c` plus the sum of the four byte products.
pub fn dp4a(a_signed: bool, b_signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let lane = |v: u64, k: u32, signed: bool| {
        let byte = (v >> (8 * k)) & 0xFF;
        if signed {
            i64::from(byte as u8 as i8)
        } else {
            byte as i64
        }
    };
    let sum: i64 = (0..4).map(|k| lane(a, k, a_signed) * lane(b, k, b_signed)).sum();
    (c as i64).wrapping_add(sum) as u64 & 0xFFFF_FFFF
}

/// `dp2a.lo`/`.hi`: `c` plus the two products of `a`'s 16-bit halves with bytes 0-1
/// (`.lo`) or 2-3 (`.hi`) of `b`.
pub fn dp2a(a_signed: bool, b_signed: bool, hi: bool, a: u64, b: u64, c: u64) -> u64 {
    let half = |k: u32| {
        let h = (a >> (16 * k)) & 0xFFFF;
        if a_signed {
            i64::from(h as u16 as i16)
        } else {
            h as i64
        }
    };
    let byte = |k: u32| {
        let v = (b >> (8 * k)) & 0xFF;
        if b_signed {
            i64::from(v as u8 as i8)
        } else {
            v as i64
        }
    };
    let base = if hi { 2 } else { 0 };
    let sum = half(0) * byte(base) + half(1) * byte(base + 1);
    (c as i64).wrapping_add(sum) as u64 & 0xFFFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values below are worked out by hand from the PTX ISA's definitions.

    #[test]
    fn shifts_at_and_beyond_the_width() {
        assert_eq!(int_binary(IntBin::Shl, Ty::B32, 1, 31, false), Ok(0x8000_0000));
        assert_eq!(int_binary(IntBin::Shl, Ty::B32, 1, 32, false), Ok(0));
        assert_eq!(int_binary(IntBin::Shr, Ty::U32, 0x8000_0000, 40, false), Ok(0));
        assert_eq!(int_binary(IntBin::Shr, Ty::S32, 0x8000_0000, 40, false), Ok(0xFFFF_FFFF));
        assert_eq!(int_binary(IntBin::Shr, Ty::S16, 0x8000, 3, false), Ok(0xF000));
        assert_eq!(int_binary(IntBin::Shr, Ty::S64, 1 << 63, 100, false), Ok(u64::MAX));
    }

    #[test]
    fn multiplication_halves() {
        // 0xFFFFFFFF * 2: unsigned high word 1, signed (-1 * 2) high word -1.
        assert_eq!(int_binary(IntBin::MulHi, Ty::U32, 0xFFFF_FFFF, 2, false), Ok(1));
        assert_eq!(int_binary(IntBin::MulHi, Ty::S32, 0xFFFF_FFFF, 2, false), Ok(0xFFFF_FFFF));
        assert_eq!(int_binary(IntBin::MulHi, Ty::U64, u64::MAX, u64::MAX, false), Ok(u64::MAX - 1));
        assert_eq!(int_binary(IntBin::MulLo, Ty::S16, 0x8000, 0xFFFF, false), Ok(0x8000));
        // mul24: 0x800000 is -2^23 as a signed 24-bit value.
        assert_eq!(int_binary(IntBin::Mul24Lo, Ty::S32, 0x80_0000, 2, false), Ok(0xFF00_0000));
        assert_eq!(int_binary(IntBin::Mul24Hi, Ty::U32, 0xFF_FFFF, 0xFF_FFFF, false), Ok(0xFFFF_FE00));
    }

    #[test]
    fn saturation_division_and_carries() {
        assert_eq!(int_binary(IntBin::Add, Ty::S32, 0x7FFF_FFFF, 1, true), Ok(0x7FFF_FFFF));
        assert_eq!(int_binary(IntBin::Sub, Ty::S32, 0x8000_0000, 1, true), Ok(0x8000_0000));
        assert!(int_binary(IntBin::Div, Ty::S32, 0x8000_0000, 0xFFFF_FFFF, false).is_err());
        assert!(int_binary(IntBin::Rem, Ty::U32, 5, 0, false).is_err());
        assert_eq!(int_binary(IntBin::Rem, Ty::S32, (-7i32) as u32 as u64, 2, false), Ok(0xFFFF_FFFF), "remainder takes the dividend's sign");
        assert_eq!(add_with_carry(Ty::U32, 0xFFFF_FFFF, 1, false, false), (0, true));
        assert_eq!(add_with_carry(Ty::U32, 0, 0, true, false), (1, false));
        assert_eq!(add_with_carry(Ty::U32, 0, 1, false, true), (0xFFFF_FFFF, true), "borrow");
        assert_eq!(add_with_carry(Ty::U32, 5, 4, true, true), (0, false));
        assert_eq!(add_with_carry(Ty::U64, u64::MAX, 0, true, false), (0, true));
    }

    #[test]
    fn bit_counting_and_finding() {
        assert_eq!(int_unary(IntUn::Clz, Ty::B32, 1), 31);
        assert_eq!(int_unary(IntUn::Clz, Ty::B64, 0), 64);
        assert_eq!(int_unary(IntUn::Popc, Ty::B64, u64::MAX), 64);
        assert_eq!(int_unary(IntUn::Brev, Ty::B32, 1), 0x8000_0000);
        assert_eq!(int_unary(IntUn::Bfind, Ty::U32, 0x10), 4);
        assert_eq!(int_unary(IntUn::Bfind, Ty::U32, 0), 0xFFFF_FFFF);
        assert_eq!(int_unary(IntUn::Bfind, Ty::S32, 0xFFFF_FFF0), 3, "most significant 0 of a negative value");
        assert_eq!(int_unary(IntUn::BfindShiftAmt, Ty::U32, 0x10), 27);
        assert_eq!(int_unary(IntUn::Abs, Ty::S32, 0x8000_0000), 0x8000_0000);
        assert_eq!(int_unary(IntUn::Cnot, Ty::B16, 0), 1);
    }

    #[test]
    fn bit_fields() {
        // bfe.u32 of 0xABCD from bit 4, 8 bits: 0xBC.
        assert_eq!(bfe(Ty::U32, 0xABCD, 4, 8), 0xBC);
        // bfe.s32: 0xF0 from bit 4, 4 bits is 0xF: sign-extended to -1.
        assert_eq!(bfe(Ty::S32, 0xF0, 4, 4), 0xFFFF_FFFF);
        // A field running past the top: the missing bits copy the sign (the msb).
        assert_eq!(bfe(Ty::S32, 0x8000_0000, 28, 8), 0xFFFF_FFF8);
        assert_eq!(bfe(Ty::U32, 0x8000_0000, 28, 8), 0x8);
        assert_eq!(bfe(Ty::S32, 0xFF, 0, 0), 0, "length 0");
        assert_eq!(bfi(Ty::B32, 0xF, 0xFFFF_0000, 4, 4), 0xFFFF_00F0);
        assert_eq!(bfi(Ty::B32, 0xFF, 0, 28, 8), 0xF000_0000, "bits past the top are dropped");
    }

    #[test]
    fn byte_permutes() {
        let (a, b) = (0x3322_1100, 0x7766_5544);
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x3210), 0x3322_1100);
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x7654), 0x7766_5544);
        assert_eq!(prmt(PrmtMode::Default, a, b, 0x5140), 0x5511_4400, "interleave the low bytes");
        assert_eq!(prmt(PrmtMode::Default, 0x80, 0, 0x8888), 0xFFFF_FFFF, "sign replication");
        assert_eq!(prmt(PrmtMode::F4e, a, b, 1), 0x4433_2211);
        assert_eq!(prmt(PrmtMode::B4e, a, b, 0), 0x5566_7700);
        assert_eq!(prmt(PrmtMode::Rc8, a, b, 2), 0x2222_2222);
        assert_eq!(prmt(PrmtMode::Ecl, a, b, 1), 0x3322_1111);
        assert_eq!(prmt(PrmtMode::Ecr, a, b, 2), 0x2222_1100);
        assert_eq!(prmt(PrmtMode::Rc16, a, b, 1), 0x3322_3322);
    }

    #[test]
    fn funnel_shifts() {
        assert_eq!(shf(true, false, 0x8000_0000, 0x1, 1), 0x3);
        assert_eq!(shf(false, false, 0x2, 0x1, 1), 0x8000_0001);
        assert_eq!(shf(true, true, 0xAAAA, 0xBBBB, 40), 0xAAAA, "clamped to 32: the low word");
        assert_eq!(shf(true, false, 0xAAAA, 0xBBBB, 32), 0xBBBB, "wrapped to 0");
        assert_eq!(shf(false, true, 0xAAAA, 0xBBBB, 32), 0xBBBB);
    }

    #[test]
    fn logic_masks_and_dot_products() {
        // lut 0x96 is a ^ b ^ c.
        assert_eq!(lop3(0b1100, 0b1010, 0b0110, 0x96), 0b0000);
        assert_eq!(lop3(0xF0, 0xCC, 0xAA, 0xE8), 0xE8, "the lut evaluated on its own operands");
        assert_eq!(bmsk(false, 4, 4), 0xF0);
        assert_eq!(bmsk(true, 0, 40), 0xFFFF_FFFF);
        assert_eq!(szext(false, true, 0x80, 8), 0xFFFF_FF80);
        assert_eq!(szext(true, false, 0xFFFF_FFFF, 40), 0xFFFF_FFFF);
        // dp4a.s32.s32: (-1*1) + (2*3) + 0 + 0, plus 10.
        assert_eq!(dp4a(true, true, 0x0000_02FF, 0x0000_0301, 10), 15);
        // dp2a.lo.u32.u32: 0x0002 * 3 + 0x0001 * 4 = 10.
        assert_eq!(dp2a(false, false, false, 0x0001_0002, 0x0000_0403, 0), 10);
    }
}
