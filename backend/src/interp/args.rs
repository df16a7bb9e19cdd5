//! Inputs and output comparison for differential tests: seeded random kernel arguments
//! and NaN canonicalization of float buffers.
//!
//! Where it sits: beside [`super::run_kernel`]; tests call [`random_args`] to make
//! inputs, run a kernel before and after a transformation, and compare the buffers
//! after [`canonicalize_nans`].
//!
//! Why biased randomness: kernels use scalar parameters as sizes, counts and indices,
//! so mostly-small scalars keep runs in bounds (and interesting); buffers are plain
//! random bytes, large enough for thread-indexed accesses of a few blocks.

use target_desc::tables::TargetTables;

use super::compile::{Kind, Ty};
use super::float::{self, FloatFormat};
use super::int::mask;
use super::ArgValue;
use crate::mir::Function;

/// Size of each random buffer: 16 KiB covers 1024 threads of f32 or 256 of v4f32 / 2
/// blocks of f64 elements.
pub const RANDOM_BUFFER_BYTES: usize = 16 * 1024;

/// A small deterministic generator (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub fn bytes(&mut self, count: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(count + 8);
        while out.len() < count {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        out.truncate(count);
        out
    }
}

/// Random arguments for `function`'s parameters, the same for the same seed: a fresh
/// buffer of [`RANDOM_BUFFER_BYTES`] random bytes for each `p0`/`p1`/`p4` pointer, null
/// for other pointers, and scalars biased to small values (see [`random_lane`]).
pub fn random_args(function: &Function, tables: &TargetTables, seed: u64) -> Vec<ArgValue> {
    let mut rng = Rng::new(seed);
    function
        .params
        .iter()
        .map(|p| match Ty::from_vt(tables, p.ty) {
            Some(Ty { kind: Kind::Pointer(0 | 1 | 4), .. }) => ArgValue::Buffer(rng.bytes(RANDOM_BUFFER_BYTES)),
            Some(Ty { kind: Kind::Pointer(_), .. }) | None => ArgValue::Scalar(0),
            Some(ty) => {
                let mut bits = 0u128;
                for lane in 0..ty.lanes.min(128 / ty.bits.max(1)) {
                    bits |= random_lane(&mut rng, ty) << (lane * ty.bits);
                }
                ArgValue::Scalar(bits)
            }
        })
        .collect()
}

/// One random lane: integers mostly in 0..=16, sometimes up to 255, small negatives,
/// edge values or any bits; floats mostly small integers and halves, sometimes values up
/// to 1000, special values (zeros, infinities, NaN, extremes) or any bits.
pub fn random_lane(rng: &mut Rng, ty: Ty) -> u128 {
    let m = mask(ty.bits);
    let roll = rng.below(100);
    match ty.kind {
        Kind::Float(format) => {
            let value = match roll {
                0..=49 => (rng.below(129) as f64 - 64.0) / f64::from(1u32 << rng.below(3)),
                50..=69 => (rng.below(2_000_001) as f64 - 1_000_000.0) / 1000.0,
                70..=84 => {
                    let specials = [0.0, -0.0, 1.0, -1.0, 0.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
                    specials[rng.below(specials.len() as u64) as usize]
                }
                _ => return (u128::from(rng.next_u64()) | (u128::from(rng.next_u64()) << 64)) & m,
            };
            float::from_f64(format, value)
        }
        _ if ty.bits == 1 => u128::from(rng.below(2)),
        _ => {
            let value: i128 = match roll {
                0..=49 => rng.below(17) as i128,
                50..=69 => 17 + rng.below(239) as i128,
                70..=79 => -1 - rng.below(16) as i128,
                80..=84 => [0, 1, -1, i128::MAX, i128::MIN][rng.below(5) as usize],
                _ => (u128::from(rng.next_u64()) | (u128::from(rng.next_u64()) << 64)) as i128,
            };
            value as u128 & m
        }
    }
}

/// Replaces every NaN element of `bytes` (little-endian elements of `format`) by the
/// canonical quiet NaN, in place, so that outputs differing only in NaN payloads or
/// signs compare equal. A trailing partial element is left alone.
pub fn canonicalize_nans(bytes: &mut [u8], format: FloatFormat) {
    let size = (format.bits() / 8) as usize;
    let canonical = float::canonical_nan(format).to_le_bytes();
    for chunk in bytes.chunks_exact_mut(size) {
        let mut buffer = [0u8; 16];
        buffer[..size].copy_from_slice(chunk);
        if float::is_nan(format, u128::from_le_bytes(buffer)) {
            chunk.copy_from_slice(&canonical[..size]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_payloads_become_one_pattern() {
        let mut a = Vec::new();
        a.extend_from_slice(&f32::from_bits(0x7FC0_0001).to_le_bytes());
        a.extend_from_slice(&1.5f32.to_le_bytes());
        let mut b = Vec::new();
        b.extend_from_slice(&f32::from_bits(0xFFC0_0000).to_le_bytes());
        b.extend_from_slice(&1.5f32.to_le_bytes());
        assert_ne!(a, b);
        canonicalize_nans(&mut a, FloatFormat::F32);
        canonicalize_nans(&mut b, FloatFormat::F32);
        assert_eq!(a, b);
        assert_eq!(&a[4..], &1.5f32.to_le_bytes(), "non-NaN elements are untouched");
    }

    #[test]
    fn random_lanes_are_deterministic_and_mostly_small() {
        let i32_ty = Ty { kind: Kind::Int, bits: 32, lanes: 1 };
        let draw = |seed| {
            let mut rng = Rng::new(seed);
            (0..1000).map(|_| random_lane(&mut rng, i32_ty)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let small = draw(7).iter().filter(|&&v| v <= 16).count();
        assert!(small > 400, "about half the integers are in 0..=16, found {small}");
    }
}
