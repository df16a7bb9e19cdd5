//! Bit-exact IEEE 754 arithmetic for every float format of the description (f16, bf16,
//! f32, f64, f128), used by the reference interpreter.
//!
//! Where it sits: below the instruction semantics of `exec.rs`; every float value
//! the interpreter handles is raw bits, and this module turns bits into numbers and
//! numbers back into correctly rounded bits.
//!
//! Why its own rounding: the interpreter is the oracle of differential tests, so every
//! conversion must round exactly once, from the exact source value, in the requested
//! mode. [`encode`] rounds any value `mag * 2^exp` (a 128-bit magnitude and an exponent)
//! to any format in any of the four IEEE modes; conversions (f64 to f16 directly, i128
//! to f32, ...) and the narrow formats' arithmetic go through it. Arithmetic on f16,
//! bf16 and f32 is done in f64 and rounded once to the format, which is exact for
//! `+ - * /` and square root because f64 has more than `2p + 2` bits of precision for
//! those formats (p = 11, 8 and 24). Fused multiply-add of the 16-bit formats uses an
//! exact f64 product, an error-free sum and round-to-odd, so it is correctly rounded
//! too (no double rounding). f32 and f64 FMA use the host's fused `mul_add`.
//!
//! The `half` crate decodes f16/bf16 bits to f32 (exact). Its f64-to-f16 and
//! f64-to-bf16 conversions are not used for rounding: on x86 with F16C the former goes
//! through f32 (double rounding) and the latter drops the low 32 mantissa bits before
//! rounding.

/// A float format of the description.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FloatFormat {
    F16,
    BF16,
    F32,
    F64,
    F128,
}

/// An IEEE rounding direction (PTX `.rn .rz .rm .rp`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    NearestEven,
    TowardZero,
    Down,
    Up,
}

/// A float value taken apart: finite values are `(-1)^negative * magnitude * 2^exponent`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Decoded {
    Zero { negative: bool },
    Infinity { negative: bool },
    NaN,
    Finite { negative: bool, magnitude: u128, exponent: i32 },
}

impl FloatFormat {
    /// The format of a description type name (`f16`, `bf16`, `f32`, `f64`, `f128`).
    pub fn from_name(name: &str) -> Option<FloatFormat> {
        Some(match name {
            "f16" => FloatFormat::F16,
            "bf16" => FloatFormat::BF16,
            "f32" => FloatFormat::F32,
            "f64" => FloatFormat::F64,
            "f128" => FloatFormat::F128,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            FloatFormat::F16 => "f16",
            FloatFormat::BF16 => "bf16",
            FloatFormat::F32 => "f32",
            FloatFormat::F64 => "f64",
            FloatFormat::F128 => "f128",
        }
    }

    /// Total width in bits.
    pub fn bits(self) -> u32 {
        match self {
            FloatFormat::F16 | FloatFormat::BF16 => 16,
            FloatFormat::F32 => 32,
            FloatFormat::F64 => 64,
            FloatFormat::F128 => 128,
        }
    }

    pub fn exponent_bits(self) -> u32 {
        match self {
            FloatFormat::F16 => 5,
            FloatFormat::BF16 | FloatFormat::F32 => 8,
            FloatFormat::F64 => 11,
            FloatFormat::F128 => 15,
        }
    }

    /// Stored fraction bits (precision minus the implicit bit).
    pub fn fraction_bits(self) -> u32 {
        self.bits() - 1 - self.exponent_bits()
    }

    fn bias(self) -> i32 {
        (1 << (self.exponent_bits() - 1)) - 1
    }

    fn exponent_mask(self) -> u128 {
        (1u128 << self.exponent_bits()) - 1
    }

    fn fraction_mask(self) -> u128 {
        (1u128 << self.fraction_bits()) - 1
    }

    fn sign_bit(self) -> u128 {
        1u128 << (self.bits() - 1)
    }

    /// Whether arithmetic in this format is done through f64 (everything but f128).
    pub fn has_arithmetic(self) -> bool {
        self != FloatFormat::F128
    }
}

/// The quiet NaN the interpreter produces: positive, only the top fraction bit set.
pub fn canonical_nan(format: FloatFormat) -> u128 {
    (format.exponent_mask() << format.fraction_bits()) | (1u128 << (format.fraction_bits() - 1))
}

pub fn is_nan(format: FloatFormat, bits: u128) -> bool {
    let exponent = (bits >> format.fraction_bits()) & format.exponent_mask();
    exponent == format.exponent_mask() && bits & format.fraction_mask() != 0
}

pub fn is_subnormal(format: FloatFormat, bits: u128) -> bool {
    let exponent = (bits >> format.fraction_bits()) & format.exponent_mask();
    exponent == 0 && bits & format.fraction_mask() != 0
}

/// Replaces a subnormal by a zero of the same sign (`.ftz`); other values unchanged.
pub fn flush_subnormal(format: FloatFormat, bits: u128) -> u128 {
    if is_subnormal(format, bits) {
        bits & format.sign_bit()
    } else {
        bits
    }
}

pub fn is_negative(format: FloatFormat, bits: u128) -> bool {
    bits & format.sign_bit() != 0
}

pub fn negate(format: FloatFormat, bits: u128) -> u128 {
    bits ^ format.sign_bit()
}

pub fn absolute(format: FloatFormat, bits: u128) -> u128 {
    bits & !format.sign_bit()
}

/// Takes the bits of a value of `format` apart.
pub fn decode(format: FloatFormat, bits: u128) -> Decoded {
    let negative = is_negative(format, bits);
    let exponent = ((bits >> format.fraction_bits()) & format.exponent_mask()) as i32;
    let fraction = bits & format.fraction_mask();
    let fraction_bits = format.fraction_bits() as i32;
    if exponent == format.exponent_mask() as i32 {
        return if fraction == 0 { Decoded::Infinity { negative } } else { Decoded::NaN };
    }
    if exponent == 0 {
        if fraction == 0 {
            return Decoded::Zero { negative };
        }
        return Decoded::Finite { negative, magnitude: fraction, exponent: 1 - format.bias() - fraction_bits };
    }
    Decoded::Finite {
        negative,
        magnitude: fraction | (1u128 << fraction_bits),
        exponent: exponent - format.bias() - fraction_bits,
    }
}

/// Rounds `(-1)^negative * (magnitude + sticky) * 2^exponent` to `format` in `mode`,
/// where `sticky` says a nonzero amount below the magnitude's last bit was dropped.
pub fn encode(format: FloatFormat, negative: bool, magnitude: u128, exponent: i32, sticky: bool, mode: Rounding) -> u128 {
    let sign = if negative { format.sign_bit() } else { 0 };
    if magnitude == 0 && !sticky {
        return sign;
    }
    let precision = format.fraction_bits() as i32 + 1;
    let min_exponent = 1 - format.bias();
    // The value lies in [2^top, 2^(top + 1)); with only a sticky remainder it lies far
    // below any representable magnitude of the exponent given.
    let top = if magnitude == 0 { exponent - 1 } else { 127 - magnitude.leading_zeros() as i32 + exponent };
    // Exponent of the last kept bit.
    let mut quantum = top.max(min_exponent) - (precision - 1);
    let shift = i64::from(quantum) - i64::from(exponent);
    let (kept, round_bit, below) = if shift <= 0 {
        // Exact in the format's precision (only the sticky remainder is lost).
        let kept = if magnitude == 0 { 0 } else { magnitude << (-shift) as u32 };
        (kept, false, sticky)
    } else if shift > 128 {
        (0, false, true)
    } else {
        let shift = shift as u32;
        let kept = if shift == 128 { 0 } else { magnitude >> shift };
        let round_bit = (magnitude >> (shift - 1)) & 1 == 1;
        let below_mask = if shift == 1 { 0 } else { (1u128 << (shift - 1)) - 1 };
        (kept, round_bit, magnitude & below_mask != 0 || sticky)
    };
    let increment = match mode {
        Rounding::NearestEven => round_bit && (below || kept & 1 == 1),
        Rounding::TowardZero => false,
        Rounding::Up => !negative && (round_bit || below),
        Rounding::Down => negative && (round_bit || below),
    };
    let mut significand = kept + u128::from(increment);
    if significand == 1u128 << precision {
        significand >>= 1;
        quantum += 1;
    }
    let max_exponent = format.bias();
    if significand >> (precision - 1) == 0 {
        // Subnormal (or zero after rounding down): the exponent field is 0.
        return sign | significand;
    }
    let value_exponent = quantum + precision - 1;
    if value_exponent > max_exponent {
        return overflow(format, negative, mode);
    }
    let biased = (value_exponent + format.bias()) as u128;
    sign | (biased << format.fraction_bits()) | (significand & format.fraction_mask())
}

/// The result of a value too large for the format: infinity or the largest finite value,
/// by rounding direction.
fn overflow(format: FloatFormat, negative: bool, mode: Rounding) -> u128 {
    let sign = if negative { format.sign_bit() } else { 0 };
    let infinity = sign | (format.exponent_mask() << format.fraction_bits());
    let largest = sign | ((format.exponent_mask() - 1) << format.fraction_bits()) | format.fraction_mask();
    match mode {
        Rounding::NearestEven => infinity,
        Rounding::TowardZero => largest,
        Rounding::Up => if negative { largest } else { infinity },
        Rounding::Down => if negative { infinity } else { largest },
    }
}

/// Converts bits of `from` to `to`, rounding once in `mode`; NaN becomes the canonical NaN.
pub fn convert(from: FloatFormat, to: FloatFormat, bits: u128, mode: Rounding) -> u128 {
    match decode(from, bits) {
        Decoded::Zero { negative } => if negative { to.sign_bit() } else { 0 },
        Decoded::Infinity { negative } => (if negative { to.sign_bit() } else { 0 }) | (to.exponent_mask() << to.fraction_bits()),
        Decoded::NaN => canonical_nan(to),
        Decoded::Finite { negative, magnitude, exponent } => encode(to, negative, magnitude, exponent, false, mode),
    }
}

/// The value of bits of `format` as an f64; exact for every format but f128 (rounded).
pub fn to_f64(format: FloatFormat, bits: u128) -> f64 {
    match format {
        FloatFormat::F16 => half::f16::from_bits(bits as u16).to_f64(),
        FloatFormat::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
        FloatFormat::F32 => f64::from(f32::from_bits(bits as u32)),
        FloatFormat::F64 => f64::from_bits(bits as u64),
        FloatFormat::F128 => f64::from_bits(convert(FloatFormat::F128, FloatFormat::F64, bits, Rounding::NearestEven) as u64),
    }
}

/// Rounds an f64 to `format` (to nearest even); f64 NaNs keep their bits when the
/// format is f64 and become the canonical NaN otherwise.
pub fn from_f64(format: FloatFormat, value: f64) -> u128 {
    match format {
        FloatFormat::F64 => u128::from(value.to_bits()),
        // Rust's `as` rounds to nearest even from the exact f64 value.
        FloatFormat::F32 if !value.is_nan() => u128::from((value as f32).to_bits()),
        _ => convert(FloatFormat::F64, format, u128::from(value.to_bits()), Rounding::NearestEven),
    }
}

/// Correctly rounded `a * b + c` for the 16-bit formats: the product is exact in f64,
/// the sum's rounding error is recovered exactly (TwoSum), and the f64 sum is then
/// rounded to odd, which makes the final rounding to a format of at most 51 bits of
/// precision exact.
pub fn fma_narrow(format: FloatFormat, a: f64, b: f64, c: f64) -> u128 {
    let product = a * b;
    let sum = product + c;
    if !sum.is_finite() || !product.is_finite() {
        return from_f64(format, sum);
    }
    let virtual_c = sum - product;
    let error = (product - (sum - virtual_c)) + (c - virtual_c);
    let odd = if error != 0.0 && sum.to_bits() & 1 == 0 {
        // The exact value lies strictly between `sum` and its neighbour towards `error`;
        // one of the two has an odd significand, and `sum` does not.
        let away_from_zero = (error > 0.0) == (sum > 0.0);
        f64::from_bits(if away_from_zero { sum.to_bits() + 1 } else { sum.to_bits() - 1 })
    } else {
        sum
    };
    from_f64(format, odd)
}

/// Round-to-integral of a finite or special f64 value.
pub fn round_ties_away(value: f64) -> f64 {
    value.round()
}

/// The integer `value` truncated toward zero: `(negative, magnitude)`, or `None` when
/// the value is NaN, infinite or its integer part needs more than 128 bits.
pub fn truncate_to_integer(format: FloatFormat, bits: u128) -> Option<(bool, u128)> {
    match decode(format, bits) {
        Decoded::Zero { negative } => Some((negative, 0)),
        Decoded::Infinity { .. } | Decoded::NaN => None,
        Decoded::Finite { negative, magnitude, exponent } => {
            if exponent >= 0 {
                let top = 127 - magnitude.leading_zeros() as i32 + exponent;
                if top >= 128 {
                    return None;
                }
                Some((negative, magnitude << exponent))
            } else if exponent <= -128 {
                Some((negative, 0))
            } else {
                Some((negative, magnitude >> (-exponent)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use FloatFormat::*;

    const RNE: Rounding = Rounding::NearestEven;

    // Expected bit patterns below come from the IEEE 754 binary16 definition (bias 15,
    // 10 fraction bits): 1.0 = 0x3C00, 65504 = 0x7BFF (largest), 2^-24 = 0x0001
    // (smallest subnormal), 2^-14 = 0x0400 (smallest normal).

    #[test]
    fn f16_ties_round_to_even() {
        // 1 + 2^-11 is halfway between 1.0 (even) and 1 + 2^-10 (odd): down to 1.0.
        assert_eq!(from_f64(F16, 1.0 + 2f64.powi(-11)), 0x3C00);
        // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): up.
        assert_eq!(from_f64(F16, 1.0 + 3.0 * 2f64.powi(-11)), 0x3C02);
        // Just above the halfway point rounds up.
        assert_eq!(from_f64(F16, 1.0 + 2f64.powi(-11) + 2f64.powi(-30)), 0x3C01);
    }

    #[test]
    fn f16_overflow_goes_to_infinity_by_mode() {
        assert_eq!(from_f64(F16, 65504.0), 0x7BFF);
        // 65520 is halfway between 65504 and 2^16 (which is out of range): rounds to inf.
        assert_eq!(from_f64(F16, 65520.0), 0x7C00);
        assert_eq!(from_f64(F16, 65519.99), 0x7BFF);
        assert_eq!(from_f64(F16, -1e10), 0xFC00);
        let big = convert(F64, F16, u128::from(1e10f64.to_bits()), Rounding::TowardZero);
        assert_eq!(big, 0x7BFF, "toward zero saturates at the largest finite value");
        let neg = convert(F64, F16, u128::from((-1e10f64).to_bits()), Rounding::Up);
        assert_eq!(neg, 0xFBFF);
    }

    #[test]
    fn f16_subnormals_round_correctly() {
        assert_eq!(from_f64(F16, 2f64.powi(-24)), 0x0001);
        assert_eq!(from_f64(F16, 2f64.powi(-14)), 0x0400);
        // Half the smallest subnormal is a tie between 0 (even) and 2^-24: zero.
        assert_eq!(from_f64(F16, 2f64.powi(-25)), 0x0000);
        assert_eq!(from_f64(F16, -(2f64.powi(-25))), 0x8000);
        // A bit more than half rounds up to the smallest subnormal.
        assert_eq!(from_f64(F16, 2f64.powi(-25) * 1.0001), 0x0001);
        // 3 * 2^-25 is a tie between 2^-24 (odd) and 2^-23 (even): up to 0x0002.
        assert_eq!(from_f64(F16, 3.0 * 2f64.powi(-25)), 0x0002);
        // Rounding the largest subnormal up carries into the smallest normal.
        assert_eq!(from_f64(F16, 2f64.powi(-14) - 2f64.powi(-26)), 0x0400);
    }

    #[test]
    fn bf16_rounding_known_patterns() {
        // bf16 = the top 16 bits of an f32: 1.0 = 0x3F80, 1 + 2^-7 = 0x3F81.
        assert_eq!(from_f64(BF16, 1.0), 0x3F80);
        assert_eq!(from_f64(BF16, 1.0 + 2f64.powi(-8)), 0x3F80, "tie to even");
        assert_eq!(from_f64(BF16, 1.0 + 3.0 * 2f64.powi(-8)), 0x3F82, "tie to even (up)");
        // A tie in the top bits with a nonzero bit far below (beyond f32's precision)
        // must round up; truncating the f64 first would lose it.
        assert_eq!(from_f64(BF16, 1.0 + 2f64.powi(-8) + 2f64.powi(-40)), 0x3F81);
        assert_eq!(from_f64(BF16, f64::from(f32::MAX)), 0x7F80, "f32::MAX rounds up to inf in bf16");
    }

    #[test]
    fn f32_to_16_bit_formats_agree_with_half() {
        // `half`'s f32 conversions round to nearest even from the f32 bits; here it is
        // the reference. Pseudo-random f32 bit patterns cover every exponent.
        let mut state = 0x1234_5678_9abc_def0u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f32::from_bits(state as u32);
            if x.is_nan() {
                continue;
            }
            let bits = u128::from(x.to_bits());
            assert_eq!(convert(F32, F16, bits, RNE) as u16, half::f16::from_f32(x).to_bits(), "f16 of {x:e}");
            assert_eq!(convert(F32, BF16, bits, RNE) as u16, half::bf16::from_f32(x).to_bits(), "bf16 of {x:e}");
        }
    }

    #[test]
    fn f64_to_f16_rounds_directly_not_through_f32() {
        // x = 1 + 2^-11 + 2^-40: just above the f16 tie between 1.0 and 1 + 2^-10, so
        // the correct f16 is 0x3C01. Via f32, x first rounds to 1 + 2^-11 (the 2^-40
        // is below f32's precision), an exact tie, which then goes to even: 0x3C00.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(from_f64(F16, x), 0x3C01);
        let via_f32 = convert(F32, F16, u128::from((x as f32).to_bits()), RNE);
        assert_eq!(via_f32, 0x3C00, "the double-rounding path differs");
    }

    #[test]
    fn directed_rounding_modes() {
        let x = u128::from((1.0f64 + 2f64.powi(-30)).to_bits());
        assert_eq!(convert(F64, F32, x, Rounding::NearestEven), u128::from(1.0f32.to_bits()));
        assert_eq!(convert(F64, F32, x, Rounding::Up), u128::from(1.0f32.to_bits()) + 1);
        assert_eq!(convert(F64, F32, x, Rounding::Down), u128::from(1.0f32.to_bits()));
        let negative = u128::from((-1.0f64 - 2f64.powi(-30)).to_bits());
        assert_eq!(convert(F64, F32, negative, Rounding::Down), u128::from((-1.0f32).to_bits()) + 1);
        assert_eq!(convert(F64, F32, negative, Rounding::TowardZero), u128::from((-1.0f32).to_bits()));
    }

    #[test]
    fn large_integers_round_correctly() {
        // 2^64 - 1 as f32: rounds up to 2^64 (0x5F800000).
        assert_eq!(encode(F32, false, u128::from(u64::MAX), 0, false, RNE), 0x5F80_0000);
        // 2^24 + 1 is a tie between 2^24 (even) and 2^24 + 2: down.
        assert_eq!(encode(F32, false, (1 << 24) + 1, 0, false, RNE), u128::from(16_777_216f32.to_bits()));
        assert_eq!(encode(F32, false, (1 << 24) + 3, 0, false, RNE), u128::from(16_777_220f32.to_bits()));
        // u128::MAX as f64 is 2^128 (0x47F0000000000000); as f32 it overflows to inf.
        assert_eq!(encode(F64, false, u128::MAX, 0, false, RNE), 0x47F0_0000_0000_0000);
        assert_eq!(encode(F32, false, u128::MAX, 0, false, RNE), 0x7F80_0000);
        assert_eq!(encode(F32, false, u128::MAX, 0, false, Rounding::TowardZero), u128::from(f32::MAX.to_bits()));
    }

    #[test]
    fn f128_round_trips_f64() {
        for x in [1.0f64, -3.5, 1e-310, f64::MAX, f64::MIN_POSITIVE] {
            let wide = convert(F64, F128, u128::from(x.to_bits()), RNE);
            assert_eq!(convert(F128, F64, wide, RNE), u128::from(x.to_bits()), "{x:e}");
        }
        // 1.0 in binary128: exponent 16383 = 0x3FFF.
        assert_eq!(convert(F64, F128, u128::from(1.0f64.to_bits()), RNE), 0x3FFF << 112);
    }

    #[test]
    fn narrow_fma_is_correctly_rounded() {
        // bf16 keeps 8 significant bits. a = 1.5 and b = 1 + 2^-7 give the exact product
        // 1.10000011 (binary), a tie between 0x3FC1 (odd) and 0x3FC2 (even). Adding
        // c = -2^-100 puts the exact result just below the tie: the correct bf16 is
        // 0x3FC1. An f64 fma rounds the sum back onto the tie (2^-100 is far below
        // f64's precision at 1.5), and rounding that to bf16 gives 0x3FC2.
        let (a, b, c) = (1.5, 1.0 + 2f64.powi(-7), -(2f64.powi(-100)));
        assert_eq!(fma_narrow(BF16, a, b, c), 0x3FC1);
        assert_eq!(from_f64(BF16, a.mul_add(b, c)), 0x3FC2, "the double-rounding path differs");
        // The same with +2^-100 lands just above the tie: 0x3FC2 both ways.
        assert_eq!(fma_narrow(BF16, a, b, -c), 0x3FC2);
        // f16: (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20, an exact tie at 2^-9 (ulp 2^-19): even.
        let d = 1.0 + 2f64.powi(-10);
        assert_eq!(fma_narrow(F16, d, d, -1.0), from_f64(F16, 2f64.powi(-9)));
    }

    #[test]
    fn host_f32_mul_add_is_fused() {
        // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly (representable in f32); unfused
        // evaluation loses the 2^-24.
        let a = 1.0f32 + 2f32.powi(-12);
        assert_eq!(a.mul_add(a, -1.0), 2f32.powi(-11) + 2f32.powi(-24));
    }

    #[test]
    fn truncation_to_integer() {
        let bits = |x: f64| u128::from(x.to_bits());
        assert_eq!(truncate_to_integer(F64, bits(-2.75)), Some((true, 2)));
        assert_eq!(truncate_to_integer(F64, bits(0.5)), Some((false, 0)));
        assert_eq!(truncate_to_integer(F64, bits(2f64.powi(127))), Some((false, 1 << 127)));
        assert_eq!(truncate_to_integer(F64, bits(2f64.powi(128))), None);
        assert_eq!(truncate_to_integer(F64, bits(f64::NAN)), None);
    }
}
