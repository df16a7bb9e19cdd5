//! Floating-point semantics of PTX: exact IEEE arithmetic in every rounding mode and
//! format, `.ftz`/`.sat`/`.relu`, min/max, comparisons, classification, conversions
//! and the approximate (`.approx`) functions.
//!
//! Where it sits: below [`super::exec`]; values are raw bits in a `u64`.
//!
//! Why soft float: PTX has `.rz/.rm/.rp` on add, mul, fma, div, sqrt and cvt, and the
//! host only rounds to nearest. [`add`], [`mul`], [`fma`], [`div`] and [`sqrt`] compute
//! the exact result as a 128-bit magnitude with a sticky bit and round it once with
//! [`float::encode`] (the MIR interpreter's rounding), in any mode and any format
//! (f16, bf16, f32, f64). Round-to-nearest f32 and f64 take the host's IEEE operations
//! instead (the same results, faster; a unit test compares the two paths).
//!
//! NaN results are PTX's canonical NaN (all fraction bits set: f32 `0x7fffffff`).
//! Approximate functions (`sin.approx`, `ex2.approx`, `rsqrt.approx`, `tanh.approx`,
//! `div.approx`, ...) return the correctly rounded result of the host's f64 function;
//! the PTX ISA allows up to its stated error (for example 2^-20.9 absolute for
//! `sin.approx.f32` in -pi..pi, 2 ulp for `ex2.approx.f32`), and an f64 libm result
//! rounded to f32 is within 1 ulp.

use crate::interp::float::{self, Decoded, FloatFormat, Rounding};

/// PTX's canonical NaN of `format`.
pub fn nan(format: FloatFormat) -> u64 {
    match format {
        FloatFormat::F16 | FloatFormat::BF16 => 0x7FFF,
        FloatFormat::F32 => 0x7FFF_FFFF,
        _ => 0x7FFF_FFFF_FFFF_FFFF,
    }
}

pub fn is_nan(format: FloatFormat, bits: u64) -> bool {
    float::is_nan(format, u128::from(bits))
}

fn sign_bit(format: FloatFormat) -> u64 {
    1u64 << (format.bits() - 1)
}

fn infinity(format: FloatFormat, negative: bool) -> u64 {
    let exponent_mask = (1u64 << format.exponent_bits()) - 1;
    (exponent_mask << format.fraction_bits()) | if negative { sign_bit(format) } else { 0 }
}

fn zero(format: FloatFormat, negative: bool) -> u64 {
    if negative {
        sign_bit(format)
    } else {
        0
    }
}

fn decode(format: FloatFormat, bits: u64) -> Decoded {
    float::decode(format, u128::from(bits))
}

fn encode(format: FloatFormat, negative: bool, magnitude: u128, exponent: i32, sticky: bool, mode: Rounding) -> u64 {
    float::encode(format, negative, magnitude, exponent, sticky, mode) as u64
}

/// The exact sum of two finite nonzero values, rounded once.
fn add_finite(format: FloatFormat, a: (bool, u128, i32), b: (bool, u128, i32), mode: Rounding) -> u64 {
    // Normalize both magnitudes to bit 125: every source has at most 106 significant
    // bits (an f64 product), so each keeps at least 19 zero bits at the bottom, which
    // makes the jammed sticky bit below harmless for rounding.
    let normalize = |(neg, m, e): (bool, u128, i32)| {
        let shift = 125 - (127 - m.leading_zeros() as i32);
        (neg, m << shift, e - shift)
    };
    let (na, ma, ea) = normalize(a);
    let (nb, mb, eb) = normalize(b);
    let ((nbig, mbig, ebig), (nsmall, msmall, esmall)) = if (ea, ma) >= (eb, mb) { ((na, ma, ea), (nb, mb, eb)) } else { ((nb, mb, eb), (na, ma, ea)) };
    let distance = (ebig - esmall) as u32;
    let shifted = if distance >= 127 {
        1
    } else {
        let kept = msmall >> distance;
        let lost = msmall & ((1u128 << distance) - 1);
        kept | u128::from(lost != 0)
    };
    if nbig == nsmall {
        encode(format, nbig, mbig + shifted, ebig, false, mode)
    } else {
        let difference = mbig - shifted;
        if difference == 0 {
            return zero(format, mode == Rounding::Down);
        }
        encode(format, nbig, difference, ebig, false, mode)
    }
}

fn finite(d: Decoded) -> Option<(bool, u128, i32)> {
    match d {
        Decoded::Finite { negative, magnitude, exponent } => Some((negative, magnitude, exponent)),
        _ => None,
    }
}

/// `a + b` rounded in `mode`.
pub fn add(format: FloatFormat, a: u64, b: u64, mode: Rounding) -> u64 {
    if mode == Rounding::NearestEven {
        match format {
            FloatFormat::F32 => return host32(f32::from_bits(a as u32) + f32::from_bits(b as u32)),
            FloatFormat::F64 => return host64(f64::from_bits(a) + f64::from_bits(b)),
            _ => {}
        }
    }
    add_soft(format, a, b, mode)
}

fn add_soft(format: FloatFormat, a: u64, b: u64, mode: Rounding) -> u64 {
    match (decode(format, a), decode(format, b)) {
        (Decoded::NaN, _) | (_, Decoded::NaN) => nan(format),
        (Decoded::Infinity { negative: x }, Decoded::Infinity { negative: y }) if x != y => nan(format),
        (Decoded::Infinity { negative }, _) | (_, Decoded::Infinity { negative }) => infinity(format, negative),
        (Decoded::Zero { negative: x }, Decoded::Zero { negative: y }) => zero(format, if x == y { x } else { mode == Rounding::Down }),
        (Decoded::Zero { .. }, _) => b,
        (_, Decoded::Zero { .. }) => a,
        (x, y) => add_finite(format, finite(x).expect("finite"), finite(y).expect("finite"), mode),
    }
}

pub fn sub(format: FloatFormat, a: u64, b: u64, mode: Rounding) -> u64 {
    add(format, a, b ^ sign_bit(format), mode)
}

/// `a * b` rounded in `mode`.
pub fn mul(format: FloatFormat, a: u64, b: u64, mode: Rounding) -> u64 {
    if mode == Rounding::NearestEven {
        match format {
            FloatFormat::F32 => return host32(f32::from_bits(a as u32) * f32::from_bits(b as u32)),
            FloatFormat::F64 => return host64(f64::from_bits(a) * f64::from_bits(b)),
            _ => {}
        }
    }
    let (da, db) = (decode(format, a), decode(format, b));
    let negative = (a ^ b) & sign_bit(format) != 0;
    match (da, db) {
        (Decoded::NaN, _) | (_, Decoded::NaN) => nan(format),
        (Decoded::Infinity { .. }, Decoded::Zero { .. }) | (Decoded::Zero { .. }, Decoded::Infinity { .. }) => nan(format),
        (Decoded::Infinity { .. }, _) | (_, Decoded::Infinity { .. }) => infinity(format, negative),
        (Decoded::Zero { .. }, _) | (_, Decoded::Zero { .. }) => zero(format, negative),
        (x, y) => {
            let (_, ma, ea) = finite(x).expect("finite");
            let (_, mb, eb) = finite(y).expect("finite");
            encode(format, negative, ma * mb, ea + eb, false, mode)
        }
    }
}

/// `a * b + c` with one rounding.
pub fn fma(format: FloatFormat, a: u64, b: u64, c: u64, mode: Rounding) -> u64 {
    if mode == Rounding::NearestEven {
        match format {
            FloatFormat::F32 => return host32(f32::from_bits(a as u32).mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32))),
            FloatFormat::F64 => return host64(f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c))),
            _ => {}
        }
    }
    fma_soft(format, a, b, c, mode)
}

fn fma_soft(format: FloatFormat, a: u64, b: u64, c: u64, mode: Rounding) -> u64 {
    let (da, db, dc) = (decode(format, a), decode(format, b), decode(format, c));
    let product_negative = (a ^ b) & sign_bit(format) != 0;
    if matches!(da, Decoded::NaN) || matches!(db, Decoded::NaN) || matches!(dc, Decoded::NaN) {
        return nan(format);
    }
    let product_infinite = matches!(da, Decoded::Infinity { .. }) || matches!(db, Decoded::Infinity { .. });
    let product_zero = matches!(da, Decoded::Zero { .. }) || matches!(db, Decoded::Zero { .. });
    if product_infinite && product_zero {
        return nan(format);
    }
    if product_infinite {
        if let Decoded::Infinity { negative } = dc {
            if negative != product_negative {
                return nan(format);
            }
        }
        return infinity(format, product_negative);
    }
    if let Decoded::Infinity { negative } = dc {
        return infinity(format, negative);
    }
    if product_zero {
        return match dc {
            Decoded::Zero { negative } => zero(format, if negative == product_negative { negative } else { mode == Rounding::Down }),
            _ => c,
        };
    }
    let (_, ma, ea) = finite(da).expect("finite");
    let (_, mb, eb) = finite(db).expect("finite");
    let product = (product_negative, ma * mb, ea + eb);
    match finite(dc) {
        None => encode(format, product_negative, product.1, product.2, false, mode),
        Some(addend) => add_finite(format, product, addend, mode),
    }
}

/// `a / b` rounded in `mode`.
pub fn div(format: FloatFormat, a: u64, b: u64, mode: Rounding) -> u64 {
    if mode == Rounding::NearestEven {
        match format {
            FloatFormat::F32 => return host32(f32::from_bits(a as u32) / f32::from_bits(b as u32)),
            FloatFormat::F64 => return host64(f64::from_bits(a) / f64::from_bits(b)),
            _ => {}
        }
    }
    let negative = (a ^ b) & sign_bit(format) != 0;
    match (decode(format, a), decode(format, b)) {
        (Decoded::NaN, _) | (_, Decoded::NaN) => nan(format),
        (Decoded::Infinity { .. }, Decoded::Infinity { .. }) | (Decoded::Zero { .. }, Decoded::Zero { .. }) => nan(format),
        (Decoded::Infinity { .. }, _) | (_, Decoded::Zero { .. }) => infinity(format, negative),
        (_, Decoded::Infinity { .. }) | (Decoded::Zero { .. }, _) => zero(format, negative),
        (x, y) => {
            let (_, ma, ea) = finite(x).expect("finite");
            let (_, mb, eb) = finite(y).expect("finite");
            let shift = 126 - (127 - ma.leading_zeros() as i32);
            let numerator = ma << shift;
            let quotient = numerator / mb;
            let remainder = numerator % mb;
            encode(format, negative, quotient, ea - shift - eb, remainder != 0, mode)
        }
    }
}

/// Square root rounded in `mode`.
pub fn sqrt(format: FloatFormat, a: u64, mode: Rounding) -> u64 {
    if mode == Rounding::NearestEven {
        match format {
            FloatFormat::F32 => return host32(f32::from_bits(a as u32).sqrt()),
            FloatFormat::F64 => return host64(f64::from_bits(a).sqrt()),
            _ => {}
        }
    }
    match decode(format, a) {
        Decoded::NaN => nan(format),
        Decoded::Zero { .. } => a,
        Decoded::Infinity { negative: false } => a,
        Decoded::Infinity { negative: true } | Decoded::Finite { negative: true, .. } => nan(format),
        Decoded::Finite { magnitude, exponent, .. } => {
            let top = 127 - magnitude.leading_zeros() as i32;
            let mut shift = 124 - top;
            if (exponent - shift).rem_euclid(2) != 0 {
                shift += 1;
            }
            let m = magnitude << shift;
            let root = isqrt(m);
            let exact = root * root == m;
            encode(format, false, root, (exponent - shift) / 2, !exact, mode)
        }
    }
}

/// Floor of the square root of a 128-bit integer.
fn isqrt(n: u128) -> u128 {
    if n == 0 {
        return 0;
    }
    let mut x = (n as f64).sqrt() as u128;
    // The f64 estimate is within a few units; correct it exactly.
    while x.checked_mul(x).is_none_or(|sq| sq > n) {
        x -= 1;
    }
    while (x + 1).checked_mul(x + 1).is_some_and(|sq| sq <= n) {
        x += 1;
    }
    x
}

fn host32(x: f32) -> u64 {
    if x.is_nan() {
        nan(FloatFormat::F32)
    } else {
        u64::from(x.to_bits())
    }
}

fn host64(x: f64) -> u64 {
    if x.is_nan() {
        nan(FloatFormat::F64)
    } else {
        x.to_bits()
    }
}

/// `.ftz`: a subnormal f32 or f16 becomes a zero of its sign (PTX allows `.ftz` on
/// those two formats only).
pub fn flush(format: FloatFormat, ftz: bool, bits: u64) -> u64 {
    if ftz && matches!(format, FloatFormat::F32 | FloatFormat::F16) {
        float::flush_subnormal(format, u128::from(bits)) as u64
    } else {
        bits
    }
}

/// `.sat`: clamp to [0, 1], NaN to +0.
pub fn saturate(format: FloatFormat, bits: u64) -> u64 {
    if is_nan(format, bits) {
        return 0;
    }
    let one = float::from_f64(format, 1.0) as u64;
    if bits & sign_bit(format) != 0 {
        0
    } else if less(format, one, bits) {
        one
    } else {
        bits
    }
}

/// `.relu`: negative results become +0 and NaN the canonical NaN.
pub fn relu(format: FloatFormat, bits: u64) -> u64 {
    if is_nan(format, bits) {
        nan(format)
    } else if bits & sign_bit(format) != 0 {
        0
    } else {
        bits
    }
}

pub fn to_f64(format: FloatFormat, bits: u64) -> f64 {
    float::to_f64(format, u128::from(bits))
}

pub fn from_f64(format: FloatFormat, value: f64) -> u64 {
    if value.is_nan() {
        nan(format)
    } else {
        float::from_f64(format, value) as u64
    }
}

/// Numeric `a < b` (false with NaN), with -0 below +0 when `signed_zero`.
fn ordered_less(format: FloatFormat, a: u64, b: u64, signed_zero: bool) -> bool {
    let (x, y) = (to_f64(format, a), to_f64(format, b));
    if x == 0.0 && y == 0.0 && signed_zero {
        return a & sign_bit(format) != 0 && b & sign_bit(format) == 0;
    }
    x < y
}

fn less(format: FloatFormat, a: u64, b: u64) -> bool {
    ordered_less(format, a, b, false)
}

/// `min`/`max`: the non-NaN operand when one is NaN (NaN with `.NaN`), -0 below +0.
pub fn min_max(format: FloatFormat, a: u64, b: u64, max: bool, propagate_nan: bool) -> u64 {
    let (an, bn) = (is_nan(format, a), is_nan(format, b));
    if an && bn || propagate_nan && (an || bn) {
        return nan(format);
    }
    if an {
        return b;
    }
    if bn {
        return a;
    }
    // Equal operands (the same zero) give `a`; -0 orders below +0.
    let b_wins = if max { ordered_less(format, a, b, true) } else { ordered_less(format, b, a, true) };
    if b_wins {
        b
    } else {
        a
    }
}

/// `min.xorsign.abs`/`max.xorsign.abs`: of the magnitudes, with the XOR of the signs.
pub fn min_max_xorsign_abs(format: FloatFormat, a: u64, b: u64, max: bool, propagate_nan: bool) -> u64 {
    let sign = (a ^ b) & sign_bit(format);
    let m = min_max(format, a & !sign_bit(format), b & !sign_bit(format), max, propagate_nan);
    if is_nan(format, m) {
        m
    } else {
        m | sign
    }
}

/// A float comparison of `setp`/`set` (integer codes do not reach here).
pub fn compare(format: FloatFormat, cmp: super::isa::Cmp, a: u64, b: u64) -> bool {
    use super::isa::Cmp::*;
    let unordered = is_nan(format, a) || is_nan(format, b);
    let (x, y) = (to_f64(format, a), to_f64(format, b));
    let ordered = |r: bool| !unordered && r;
    let or_unordered = |r: bool| unordered || r;
    match cmp {
        Eq => ordered(x == y),
        Ne => ordered(x != y),
        Lt | Lo => ordered(x < y),
        Le | Ls => ordered(x <= y),
        Gt | Hi => ordered(x > y),
        Ge | Hs => ordered(x >= y),
        Equ => or_unordered(x == y),
        Neu => or_unordered(x != y),
        Ltu => or_unordered(x < y),
        Leu => or_unordered(x <= y),
        Gtu => or_unordered(x > y),
        Geu => or_unordered(x >= y),
        Num => !unordered,
        Nan => unordered,
    }
}

/// `testp` classes: finite, infinite, number, notanumber, normal, subnormal. "As a
/// special case, positive and negative zero are considered normal numbers" (PTX ISA,
/// testp).
pub fn test_class(format: FloatFormat, class: u8, bits: u64) -> bool {
    let d = decode(format, bits);
    let subnormal = float::is_subnormal(format, u128::from(bits));
    match class {
        0 => matches!(d, Decoded::Zero { .. } | Decoded::Finite { .. }),
        1 => matches!(d, Decoded::Infinity { .. }),
        2 => !matches!(d, Decoded::NaN),
        3 => matches!(d, Decoded::NaN),
        4 => matches!(d, Decoded::Zero { .. } | Decoded::Finite { .. }) && !subnormal,
        _ => subnormal,
    }
}

/// The integer nearest to a float in `mode`: `(negative, magnitude)`, the magnitude
/// saturating at `u128::MAX`; `None` for NaN. Infinities give the saturated magnitude.
pub fn round_to_integer(format: FloatFormat, bits: u64, mode: Rounding) -> Option<(bool, u128)> {
    match decode(format, bits) {
        Decoded::NaN => None,
        Decoded::Zero { negative } => Some((negative, 0)),
        Decoded::Infinity { negative } => Some((negative, u128::MAX)),
        Decoded::Finite { negative, magnitude, exponent } => {
            if exponent >= 0 {
                let top = 127 - magnitude.leading_zeros() as i32 + exponent;
                return Some((negative, if top >= 128 { u128::MAX } else { magnitude << exponent }));
            }
            let shift = (-exponent) as u32;
            let (whole, fraction_half, fraction_rest) = if shift >= 128 {
                (0, false, magnitude != 0)
            } else {
                let whole = magnitude >> shift;
                let half = (magnitude >> (shift - 1)) & 1 == 1;
                let rest = magnitude & ((1u128 << (shift - 1)) - 1) != 0;
                (whole, half, rest)
            };
            let inexact = fraction_half || fraction_rest;
            let up = match mode {
                Rounding::NearestEven => fraction_half && (fraction_rest || whole & 1 == 1),
                Rounding::TowardZero => false,
                Rounding::Up => !negative && inexact,
                Rounding::Down => negative && inexact,
            };
            Some((negative, whole + u128::from(up)))
        }
    }
}

/// `cvt.rni.f32.f32` and friends: the integral value in the same format (sign kept).
pub fn round_to_integral(format: FloatFormat, bits: u64, mode: Rounding) -> u64 {
    match decode(format, bits) {
        Decoded::NaN => nan(format),
        Decoded::Zero { .. } | Decoded::Infinity { .. } => bits,
        Decoded::Finite { exponent, .. } if exponent >= 0 => bits,
        Decoded::Finite { negative, .. } => {
            let (_, magnitude) = round_to_integer(format, bits, mode).expect("finite");
            if magnitude == 0 {
                zero(format, negative)
            } else {
                encode(format, negative, magnitude, 0, false, Rounding::NearestEven)
            }
        }
    }
}

/// Converts between float formats, rounding in `mode` (NaN becomes canonical).
pub fn convert(from: FloatFormat, to: FloatFormat, bits: u64, mode: Rounding) -> u64 {
    if is_nan(from, bits) {
        return nan(to);
    }
    float::convert(from, to, u128::from(bits), mode) as u64
}

/// An integer value (`negative`, `magnitude`) as a float rounded in `mode`.
pub fn from_integer(to: FloatFormat, negative: bool, magnitude: u128, mode: Rounding) -> u64 {
    if magnitude == 0 {
        return 0;
    }
    encode(to, negative, magnitude, 0, false, mode)
}

/// `cvt.rna.tf32.f32`: 10 fraction bits, ties away from zero, kept as f32 bits.
pub fn to_tf32(bits: u64) -> u64 {
    let b = bits as u32;
    if is_nan(FloatFormat::F32, bits) {
        return nan(FloatFormat::F32);
    }
    if b & 0x7F80_0000 == 0x7F80_0000 {
        return bits;
    }
    let sign = b & 0x8000_0000;
    let magnitude = (b & 0x7FFF_FFFF) + 0x1000;
    u64::from(sign | (magnitude & 0x7FFF_E000).min(0x7F80_0000))
}

/// The approximate functions, correctly rounded from the host's f64 result.
pub fn approximate(op: super::isa::FloatUn, format: FloatFormat, bits: u64) -> u64 {
    use super::isa::FloatUn::*;
    let x = to_f64(format, bits);
    let y = match op {
        Sin => x.sin(),
        Cos => x.cos(),
        Lg2 => x.log2(),
        Ex2 => x.exp2(),
        Tanh => x.tanh(),
        Rcp => 1.0 / x,
        Rsqrt => 1.0 / x.sqrt(),
        Sqrt => x.sqrt(),
        Abs | Neg => x,
    };
    if format == FloatFormat::F64 {
        // `rcp.approx.ftz.f64` / `rsqrt.approx.f64`: the f64 result itself.
        return host64(y);
    }
    from_f64(format, y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use FloatFormat::*;

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    /// xorshift, for exhaustive-ish comparisons.
    fn random_bits(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn soft_paths_agree_with_the_host_when_rounding_to_nearest() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            let (a, b, c) = (random_bits(&mut s), random_bits(&mut s), random_bits(&mut s));
            let (a32, b32, c32) = (a & 0xFFFF_FFFF, b & 0xFFFF_FFFF, c & 0xFFFF_FFFF);
            let rn = Rounding::NearestEven;
            let canon = |fmt, x| if is_nan(fmt, x) { nan(fmt) } else { x };
            assert_eq!(add_soft(F32, a32, b32, rn), canon(F32, add(F32, a32, b32, rn)), "add {a32:#x} {b32:#x}");
            assert_eq!(add_soft(F64, a, b, rn), canon(F64, add(F64, a, b, rn)), "add {a:#x} {b:#x}");
            assert_eq!(fma_soft(F32, a32, b32, c32, rn), canon(F32, fma(F32, a32, b32, c32, rn)), "fma {a32:#x} {b32:#x} {c32:#x}");
            assert_eq!(fma_soft(F64, a, b, c, rn), canon(F64, fma(F64, a, b, c, rn)), "fma {a:#x} {b:#x} {c:#x}");
        }
    }

    #[test]
    fn directed_rounding_of_sums_and_products() {
        // 1 + 2^-30 is between 1 and 1 + 2^-23 in f32.
        let one = f(1.0);
        let tiny = f(2f32.powi(-30));
        assert_eq!(add(F32, one, tiny, Rounding::NearestEven), one);
        assert_eq!(add(F32, one, tiny, Rounding::TowardZero), one);
        assert_eq!(add(F32, one, tiny, Rounding::Up), one + 1);
        assert_eq!(add(F32, one, tiny, Rounding::Down), one);
        // 1 - 2^-30 rounds down to the f32 below 1 (0x3F7FFFFF) toward -inf.
        assert_eq!(sub(F32, one, tiny, Rounding::Down), 0x3F7F_FFFF);
        assert_eq!(sub(F32, one, tiny, Rounding::Up), one);
        // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: .rz drops the 2^-24.
        let a = f(1.0 + 2f32.powi(-12));
        assert_eq!(mul(F32, a, a, Rounding::TowardZero), f(1.0 + 2f32.powi(-11)));
        assert_eq!(mul(F32, a, a, Rounding::Up), f(1.0 + 2f32.powi(-11)) + 1);
        // x - x is +0, except -0 rounding toward -inf.
        assert_eq!(sub(F32, one, one, Rounding::Up), 0);
        assert_eq!(sub(F32, one, one, Rounding::Down), 0x8000_0000);
        // Overflow: .rz gives the largest finite value.
        let max = f(f32::MAX);
        assert_eq!(add(F32, max, max, Rounding::TowardZero), max);
        assert_eq!(add(F32, max, max, Rounding::NearestEven), f(f32::INFINITY));
    }

    #[test]
    fn division_and_square_root_in_every_mode() {
        // 1/3 = 0x3EAAAAAB to nearest, 0x3EAAAAAA toward zero/down.
        let (one, three) = (f(1.0), f(3.0));
        assert_eq!(div(F32, one, three, Rounding::NearestEven), 0x3EAA_AAAB);
        assert_eq!(div(F32, one, three, Rounding::TowardZero), 0x3EAA_AAAA);
        assert_eq!(div(F32, one, three, Rounding::Up), 0x3EAA_AAAB);
        assert_eq!(div(F64, 1f64.to_bits(), 3f64.to_bits(), Rounding::Down), 0x3FD5_5555_5555_5555);
        assert_eq!(div(F64, 1f64.to_bits(), 3f64.to_bits(), Rounding::Up), 0x3FD5_5555_5555_5556);
        // sqrt(2) = 0x3FB504F3 (nearest), 0x3FB504F3 down, 0x3FB504F4 up.
        assert_eq!(sqrt(F32, f(2.0), Rounding::Down), 0x3FB5_04F3);
        assert_eq!(sqrt(F32, f(2.0), Rounding::Up), 0x3FB5_04F4);
        assert_eq!(sqrt(F32, f(4.0), Rounding::Up), f(2.0), "exact roots do not move");
        assert_eq!(sqrt(F32, f(-1.0), Rounding::TowardZero), nan(F32));
        assert_eq!(sqrt(F32, 0x8000_0000, Rounding::Up), 0x8000_0000, "sqrt(-0) = -0");
        // Soft division agrees with the host to nearest.
        let mut s = 12345u64;
        for _ in 0..50_000 {
            let (a, b) = (random_bits(&mut s) & 0xFFFF_FFFF, random_bits(&mut s) & 0xFFFF_FFFF);
            let host = div(F32, a, b, Rounding::NearestEven);
            let soft = {
                let negative = (a ^ b) & 0x8000_0000 != 0;
                match (decode(F32, a), decode(F32, b)) {
                    (Decoded::Finite { magnitude: ma, exponent: ea, .. }, Decoded::Finite { magnitude: mb, exponent: eb, .. }) => {
                        let shift = 126 - (127 - ma.leading_zeros() as i32);
                        let n = ma << shift;
                        encode(F32, negative, n / mb, ea - shift - eb, n % mb != 0, Rounding::NearestEven)
                    }
                    _ => host,
                }
            };
            assert_eq!(soft, host, "{a:#x} / {b:#x}");
        }
    }

    #[test]
    fn half_precision_arithmetic_rounds_once() {
        // f16: 1 + 2^-11 is a tie between 1.0 and 1 + 2^-10: even (1.0); .rp goes up.
        let one = 0x3C00;
        let half_ulp = float::from_f64(F16, 2f64.powi(-11)) as u64;
        assert_eq!(add(F16, one, half_ulp, Rounding::NearestEven), 0x3C00);
        assert_eq!(add(F16, one, half_ulp, Rounding::Up), 0x3C01);
        // bf16 fma: 1.5 * (1 + 2^-7) - 2^-100 sits just below a tie (see the
        // interpreter's narrow_fma test): 0x3FC1.
        let a = float::from_f64(BF16, 1.5) as u64;
        let b = float::from_f64(BF16, 1.0 + 2f64.powi(-7)) as u64;
        let c = float::from_f64(BF16, -(2f64.powi(-100))) as u64;
        assert_eq!(fma(BF16, a, b, c, Rounding::NearestEven), 0x3FC1);
    }

    #[test]
    fn min_max_nan_and_zero_rules() {
        let nan32 = f(f32::NAN);
        assert_eq!(min_max(F32, nan32, f(2.0), false, false), f(2.0));
        assert_eq!(min_max(F32, nan32, f(2.0), false, true), nan(F32));
        assert_eq!(min_max(F32, nan32, nan32, true, false), nan(F32));
        assert_eq!(min_max(F32, f(0.0), f(-0.0), false, false), f(-0.0));
        assert_eq!(min_max(F32, f(-0.0), f(0.0), true, false), f(0.0));
        assert_eq!(min_max_xorsign_abs(F32, f(-3.0), f(2.0), true, false), f(-3.0));
        assert_eq!(min_max_xorsign_abs(F32, f(-3.0), f(-2.0), false, false), f(2.0));
    }

    #[test]
    fn integer_rounding_modes() {
        let r = |x: f32, m| round_to_integer(F32, f(x), m);
        assert_eq!(r(2.5, Rounding::NearestEven), Some((false, 2)));
        assert_eq!(r(3.5, Rounding::NearestEven), Some((false, 4)));
        assert_eq!(r(-2.5, Rounding::Down), Some((true, 3)));
        assert_eq!(r(-2.5, Rounding::Up), Some((true, 2)));
        assert_eq!(r(2.01, Rounding::Up), Some((false, 3)));
        assert_eq!(r(f32::NAN, Rounding::TowardZero), None);
        assert_eq!(round_to_integral(F32, f(-0.3), Rounding::NearestEven), f(-0.0));
        assert_eq!(round_to_integral(F32, f(2.5), Rounding::Up), f(3.0));
    }

    #[test]
    fn tf32_rounds_ties_away() {
        // 1 + 2^-11 (the tf32 tie) rounds away to 1 + 2^-10.
        assert_eq!(to_tf32(f(1.0 + 2f32.powi(-11))), f(1.0 + 2f32.powi(-10)));
        assert_eq!(to_tf32(f(1.0 + 2f32.powi(-12))), f(1.0));
        assert_eq!(to_tf32(f(-1.0 - 2f32.powi(-11))), f(-1.0 - 2f32.powi(-10)));
    }

    #[test]
    fn comparisons_and_classes() {
        use crate::sim::isa::Cmp;
        let nan32 = f(f32::NAN);
        assert!(!compare(F32, Cmp::Ne, nan32, f(1.0)));
        assert!(compare(F32, Cmp::Neu, nan32, f(1.0)));
        assert!(compare(F32, Cmp::Eq, f(0.0), f(-0.0)));
        assert!(compare(F32, Cmp::Nan, nan32, f(1.0)));
        assert!(test_class(F32, 5, 1), "smallest subnormal");
        assert!(!test_class(F32, 4, 1));
        assert!(test_class(F32, 0, 0), "zero is finite");
        assert!(test_class(F32, 4, 0) && test_class(F32, 4, 0x8000_0000), "testp.normal: zeros count as normal");
        assert!(!test_class(F32, 5, 0), "zero is not subnormal");
    }
}
