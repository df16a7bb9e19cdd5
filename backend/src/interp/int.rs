//! Two's-complement integer helpers of any width from 1 to 128 bits, for the reference
//! interpreter.
//!
//! Where it sits: below the instruction semantics of `exec.rs`. A value of an
//! `iN` type is held as a `u128` whose bits above `N` are zero; these helpers mask,
//! sign-extend and implement the operations that need more than 128 bits (the high
//! half of a 128-bit product, shifts of a pair of 128-bit halves).
//!
//! Why separate: these are the easiest places to get an edge case wrong (widths of 1 and
//! 128, negative high halves), so they are small pure functions with their own tests.

/// All-ones in the low `bits` bits.
#[inline]
pub fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// The value of the low `bits` bits as a signed integer.
#[inline]
pub fn signed(value: u128, bits: u32) -> i128 {
    if bits >= 128 {
        value as i128
    } else {
        let shift = 128 - bits;
        ((value << shift) as i128) >> shift
    }
}

/// Sign-extends the low `from` bits of `value` to `to` bits.
#[inline]
pub fn sign_extend(value: u128, from: u32, to: u32) -> u128 {
    (signed(value, from) as u128) & mask(to)
}

/// The full 256-bit product of two unsigned 128-bit numbers, as (low, high).
pub fn multiply_wide(a: u128, b: u128) -> (u128, u128) {
    let (a_low, a_high) = (a & u128::from(u64::MAX), a >> 64);
    let (b_low, b_high) = (b & u128::from(u64::MAX), b >> 64);
    let low_low = a_low * b_low;
    let low_high = a_low * b_high;
    let high_low = a_high * b_low;
    let high_high = a_high * b_high;
    let middle = (low_low >> 64) + (low_high & u128::from(u64::MAX)) + (high_low & u128::from(u64::MAX));
    let low = (low_low & u128::from(u64::MAX)) | (middle << 64);
    let high = high_high + (low_high >> 64) + (high_low >> 64) + (middle >> 64);
    (low, high)
}

/// The full `2 * bits`-bit product of two `bits`-bit numbers, unsigned or signed, as
/// (low half, high half), each masked to `bits`.
pub fn multiply_full(a: u128, b: u128, bits: u32, is_signed: bool) -> (u128, u128) {
    if bits <= 64 {
        let product = if is_signed { (signed(a, bits) * signed(b, bits)) as u128 } else { a * b };
        return (product & mask(bits), (product >> bits) & mask(bits));
    }
    if bits < 128 {
        // 65..127 bits: the product needs up to 254 bits; sign-extend to 128 and use
        // the 256-bit product, whose bits above 2 * bits are then dropped.
        let (a_wide, b_wide) = if is_signed { (signed(a, bits) as u128, signed(b, bits) as u128) } else { (a, b) };
        let (low, high) = signed_or_unsigned_wide(a_wide, b_wide, is_signed);
        let high_part = (low >> bits) | (high << (128 - bits));
        return (low & mask(bits), high_part & mask(bits));
    }
    signed_or_unsigned_wide(a, b, is_signed)
}

/// 128 x 128 -> 256 bits, the operands read as signed when `is_signed`.
fn signed_or_unsigned_wide(a: u128, b: u128, is_signed: bool) -> (u128, u128) {
    let (low, mut high) = multiply_wide(a, b);
    if is_signed {
        // (a - 2^128 [a < 0]) * (b - 2^128 [b < 0]) = a*b - 2^128 (b [a < 0] + a [b < 0]) (mod 2^256)
        if (a as i128) < 0 {
            high = high.wrapping_sub(b);
        }
        if (b as i128) < 0 {
            high = high.wrapping_sub(a);
        }
    }
    (low, high)
}

/// A 256-bit value as two halves, for the shifts of a pair of 128-bit parts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    pub low: u128,
    pub high: u128,
}

impl Pair {
    pub fn shift_left(self, amount: u32) -> Pair {
        match amount {
            0 => self,
            1..=127 => Pair { low: self.low << amount, high: (self.high << amount) | (self.low >> (128 - amount)) },
            128..=255 => Pair { low: 0, high: self.low << (amount - 128) },
            _ => Pair { low: 0, high: 0 },
        }
    }

    pub fn shift_right(self, amount: u32, arithmetic: bool) -> Pair {
        let fill = if arithmetic && (self.high as i128) < 0 { u128::MAX } else { 0 };
        match amount {
            0 => self,
            1..=127 => Pair {
                low: (self.low >> amount) | (self.high << (128 - amount)),
                high: if arithmetic { ((self.high as i128) >> amount) as u128 } else { self.high >> amount },
            },
            128..=255 => Pair {
                low: if arithmetic { ((self.high as i128) >> (amount - 128)) as u128 } else { self.high >> (amount - 128) },
                high: fill,
            },
            _ => Pair { low: fill, high: fill },
        }
    }
}

/// The kind of a multi-word shift (`SHL_PARTS`, `SRA_PARTS`, `SRL_PARTS`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PartsShift {
    Left,
    RightArithmetic,
    RightLogical,
}

/// Shifts the `2 * bits`-bit value `high:low` by `amount` (below `2 * bits`), returning
/// the new (low, high) halves.
pub fn shift_parts(low: u128, high: u128, bits: u32, amount: u32, kind: PartsShift) -> (u128, u128) {
    if bits <= 64 {
        let wide_bits = 2 * bits;
        let value = low | (high << bits);
        let shifted = match kind {
            PartsShift::Left => value << amount,
            PartsShift::RightLogical => value >> amount,
            PartsShift::RightArithmetic => (signed(value, wide_bits) >> amount) as u128,
        } & mask(wide_bits);
        return (shifted & mask(bits), (shifted >> bits) & mask(bits));
    }
    // 65..128 bits per half: the 2N-bit value as a 256-bit pair, sign-extended for an
    // arithmetic shift, shifted, and split back into halves.
    let mut pair = if bits == 128 { Pair { low, high } } else { Pair { low: low | (high << bits), high: high >> (128 - bits) } };
    if kind == PartsShift::RightArithmetic && bits < 128 {
        pair.high = sign_extend(pair.high, 2 * bits - 128, 128);
    }
    let shifted = match kind {
        PartsShift::Left => pair.shift_left(amount),
        PartsShift::RightLogical => pair.shift_right(amount, false),
        PartsShift::RightArithmetic => pair.shift_right(amount, true),
    };
    if bits == 128 {
        return (shifted.low, shifted.high);
    }
    (shifted.low & mask(bits), ((shifted.low >> bits) | (shifted.high << (128 - bits))) & mask(bits))
}

/// Bit count helpers of a `bits`-bit value (zero-extended in a `u128`).
pub fn count_leading_zeros(value: u128, bits: u32) -> u128 {
    u128::from(value.leading_zeros().saturating_sub(128 - bits))
}

pub fn count_trailing_zeros(value: u128, bits: u32) -> u128 {
    if value == 0 {
        u128::from(bits)
    } else {
        u128::from(value.trailing_zeros())
    }
}

pub fn reverse_bits(value: u128, bits: u32) -> u128 {
    value.reverse_bits() >> (128 - bits)
}

/// Reverses the bytes of a value whose width is a multiple of 8.
pub fn swap_bytes(value: u128, bits: u32) -> u128 {
    value.swap_bytes() >> (128 - bits)
}

pub fn rotate_left(value: u128, amount: u128, bits: u32) -> u128 {
    let r = (amount % u128::from(bits)) as u32;
    if r == 0 {
        value
    } else {
        ((value << r) | (value >> (bits - r))) & mask(bits)
    }
}

pub fn rotate_right(value: u128, amount: u128, bits: u32) -> u128 {
    let r = (amount % u128::from(bits)) as u32;
    if r == 0 {
        value
    } else {
        ((value >> r) | (value << (bits - r))) & mask(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_sign_extension_at_the_edges() {
        assert_eq!(mask(1), 1);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(signed(1, 1), -1, "i1 true is -1 when read as signed");
        assert_eq!(signed(0x80, 8), -128);
        assert_eq!(signed(u128::MAX, 128), -1);
        assert_eq!(sign_extend(0x80, 8, 32), 0xFFFF_FF80);
        assert_eq!(sign_extend(0x7F, 8, 32), 0x7F);
    }

    #[test]
    fn wide_products_match_schoolbook() {
        // (2^128 - 1)^2 = 2^256 - 2^129 + 1: low 1, high 2^128 - 2.
        assert_eq!(multiply_wide(u128::MAX, u128::MAX), (1, u128::MAX - 1));
        // Signed: (-1) * (-1) = 1, high 0; (-1) * 2 = -2, high all ones.
        assert_eq!(multiply_full(u128::MAX, u128::MAX, 128, true), (1, 0));
        assert_eq!(multiply_full(u128::MAX, 2, 128, true), (u128::MAX - 1, u128::MAX));
        // i128::MIN * i128::MIN = 2^254: low 0, high 2^126.
        let min = 1u128 << 127;
        assert_eq!(multiply_full(min, min, 128, true), (0, 1 << 126));
        assert_eq!(multiply_full(min, min, 128, false), (0, 1 << 126));
        // Unsigned i32: 0xFFFFFFFF^2 = 0xFFFFFFFE_00000001.
        assert_eq!(multiply_full(0xFFFF_FFFF, 0xFFFF_FFFF, 32, false), (1, 0xFFFF_FFFE));
        // Signed i32: (-1)^2 = 1, high 0.
        assert_eq!(multiply_full(0xFFFF_FFFF, 0xFFFF_FFFF, 32, true), (1, 0));
        // Cross-check 64-bit halves against u128 arithmetic for a spread of values.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (a, b) = (u128::from(x), u128::from(x.rotate_left(17) ^ 0xDEAD_BEEF));
            let expected = a * b;
            assert_eq!(multiply_full(a, b, 64, false), (expected & mask(64), expected >> 64));
            let signed_expected = (signed(a, 64) * signed(b, 64)) as u128;
            assert_eq!(multiply_full(a, b, 64, true), (signed_expected & mask(64), (signed_expected >> 64) & mask(64)));
        }
    }

    #[test]
    fn i128_high_product_agrees_with_halves() {
        // (2^64 + 3) * (2^64 + 5) = 2^128 + 8 * 2^64 + 15: high 1, low 8 * 2^64 + 15.
        let (low, high) = multiply_full((1 << 64) + 3, (1 << 64) + 5, 128, false);
        assert_eq!((low, high), ((8 << 64) + 15, 1));
    }

    #[test]
    fn parts_shifts_of_i64_halves() {
        let (low, high) = (0x8000_0000_0000_0001u128, 0x1u128);
        assert_eq!(shift_parts(low, high, 64, 1, PartsShift::Left), (2, 3));
        assert_eq!(shift_parts(low, high, 64, 64, PartsShift::Left), (0, low));
        assert_eq!(shift_parts(low, high, 64, 1, PartsShift::RightLogical), (0xC000_0000_0000_0000, 0));
        let negative_high = 0x8000_0000_0000_0000u128;
        assert_eq!(shift_parts(0, negative_high, 64, 127, PartsShift::RightArithmetic), (mask(64), mask(64)));
        assert_eq!(shift_parts(0, negative_high, 64, 127, PartsShift::RightLogical), (1, 0));
    }

    #[test]
    fn parts_shifts_of_i128_halves() {
        let (low, high) = (u128::MAX, 0u128);
        assert_eq!(shift_parts(low, high, 128, 4, PartsShift::Left), (u128::MAX << 4, 0xF));
        assert_eq!(shift_parts(low, high, 128, 128, PartsShift::Left), (0, u128::MAX));
        assert_eq!(shift_parts(0, 1 << 127, 128, 255, PartsShift::RightArithmetic), (u128::MAX, u128::MAX));
        assert_eq!(shift_parts(0, 1 << 127, 128, 255, PartsShift::RightLogical), (1, 0));
        assert_eq!(shift_parts(5, 7, 128, 130, PartsShift::RightLogical), (1, 0));
        // Halves of 96 bits exercise the padding path.
        assert_eq!(shift_parts(mask(96), 0, 96, 8, PartsShift::Left), (mask(96) << 8 & mask(96), 0xFF));
        assert_eq!(shift_parts(0, 1 << 95, 96, 191, PartsShift::RightArithmetic), (mask(96), mask(96)));
    }

    #[test]
    fn bit_counts_and_rotations() {
        assert_eq!(count_leading_zeros(0, 32), 32);
        assert_eq!(count_leading_zeros(1, 32), 31);
        assert_eq!(count_leading_zeros(1, 1), 0);
        assert_eq!(count_trailing_zeros(0, 16), 16);
        assert_eq!(reverse_bits(1, 8), 0x80);
        assert_eq!(reverse_bits(1, 128), 1 << 127);
        assert_eq!(swap_bytes(0x1122_3344, 32), 0x4433_2211);
        assert_eq!(rotate_left(0x81, 1, 8), 0x03);
        assert_eq!(rotate_left(0x81, 9, 8), 0x03, "rotate amounts are taken modulo the width");
        assert_eq!(rotate_right(0x81, 1, 8), 0xC0);
        assert_eq!(rotate_left(1, 127, 128), 1 << 127);
    }
}
