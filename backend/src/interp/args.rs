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
/// buffer of [`RANDOM_BUFFER_BYTES`] for each `p0`/`p1`/`p4` pointer, null for other
/// pointers, and scalars biased to small values (see [`random_lane`]). A buffer the
/// kernel loads elements of one type from (see [`buffer_element_types`]) is filled
/// with random elements of that type, like scalars; other buffers get random bytes.
///
/// Half the seeds give *tame* inputs (no special values or arbitrary bit patterns in
/// typed buffers and scalars), because one NaN converted to an integer by one thread
/// makes the whole run undefined; the other half give *wild* inputs that exercise the
/// edge cases. (A vector parameter wider than 128 bits does not fit an
/// [`ArgValue::Scalar`]; [`super::run_kernel`] rejects such a kernel's arguments.)
pub fn random_args(function: &Function, tables: &TargetTables, seed: u64) -> Vec<ArgValue> {
    let mut rng = Rng::new(seed);
    let tame = rng.below(2) == 0;
    let element_types = buffer_element_types(function, tables);
    function
        .params
        .iter()
        .enumerate()
        .map(|(k, p)| match Ty::from_vt(tables, p.ty) {
            Some(Ty { kind: Kind::Pointer(0 | 1 | 4), .. }) => ArgValue::Buffer(match element_types.get(k).copied().flatten() {
                Some(element) => {
                    let size = super::memory::stored_size(element) as usize;
                    let mut bytes = vec![0u8; RANDOM_BUFFER_BYTES];
                    for chunk in bytes.chunks_exact_mut(size) {
                        super::memory::encode_lanes(&[random_lane(&mut rng, element, tame)], element, chunk);
                    }
                    bytes
                }
                None => rng.bytes(RANDOM_BUFFER_BYTES),
            }),
            Some(Ty { kind: Kind::Pointer(_), .. }) | None => ArgValue::Scalar(0),
            Some(ty) => {
                let mut bits = 0u128;
                for lane in 0..ty.lanes.min(128 / ty.bits.max(1)) {
                    bits |= random_lane(&mut rng, ty, tame) << (lane * ty.bits);
                }
                ArgValue::Scalar(bits)
            }
        })
        .collect()
}

/// Per parameter: the one scalar type the function loads from memory the parameter
/// points into (through `PTR_ADD`, `ADDRSPACECAST`, `COPY`, `PHI` and `SELECT`), or
/// `None` when it loads several types, none, or passes the pointer to a call.
pub fn buffer_element_types(function: &Function, tables: &TargetTables) -> Vec<Option<Ty>> {
    buffer_access_types(function, tables, false)
}

/// Per parameter: the one scalar type the function loads from or stores to memory the
/// parameter points into, as [`buffer_element_types`] (which counts loads only); the
/// differential tests read approximate results back with it.
pub fn buffer_stored_types(function: &Function, tables: &TargetTables) -> Vec<Option<Ty>> {
    buffer_access_types(function, tables, true)
}

fn buffer_access_types(function: &Function, tables: &TargetTables, stores: bool) -> Vec<Option<Ty>> {
    use crate::mir::Operand;
    let name = |inst: &crate::mir::Inst| inst.opcode.generic().and_then(|o| tables.opcode_info(o)).map_or("", |i| i.name);
    // Which parameter each value points into; iterate to a fixed point for PHIs.
    let mut origin: Vec<Option<usize>> = vec![None; function.values.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for inst in function.blocks.iter().flat_map(|b| &b.insts) {
            let Some(&def) = inst.defs.first() else { continue };
            let derived = match name(inst) {
                "ARG" => inst.operands.first().and_then(|o| if let Operand::Int(k) = o { usize::try_from(k.get()).ok() } else { None }),
                "PTR_ADD" | "ADDRSPACECAST" | "COPY" => inst.uses().next().and_then(|v| origin.get(v.0 as usize).copied().flatten()),
                "PHI" | "SELECT" => inst.uses().find_map(|v| origin.get(v.0 as usize).copied().flatten()),
                _ => None,
            };
            if let Some(k) = derived {
                if origin.get(def.0 as usize).is_some_and(|o| o.is_none()) {
                    origin[def.0 as usize] = Some(k);
                    changed = true;
                }
            }
        }
    }
    let mut types: Vec<Option<Option<Ty>>> = vec![None; function.params.len()];
    let mut record = |k: usize, ty: Option<Ty>| {
        if let Some(slot) = types.get_mut(k) {
            *slot = match *slot {
                None => Some(ty),
                Some(previous) if previous == ty => Some(ty),
                Some(_) => Some(None),
            };
        }
    };
    for inst in function.blocks.iter().flat_map(|b| &b.insts) {
        let pointer_of = |index: usize| inst.uses().nth(index).and_then(|v| origin.get(v.0 as usize).copied().flatten());
        let op = name(inst);
        let (pointer, ty) = match op {
            "LOAD" => {
                let narrow = inst.flags.iter().find_map(|f| tables.vt(f).and_then(|v| Ty::from_vt(tables, v)));
                let value = inst.defs.first().and_then(|d| Ty::from_vt(tables, function.value(*d).ty));
                (pointer_of(0), narrow.or(value.map(|v| Ty { lanes: 1, ..v })))
            }
            "STORE" if stores => {
                let narrow = inst.flags.iter().find_map(|f| tables.vt(f).and_then(|v| Ty::from_vt(tables, v)));
                let value = inst.uses().next().and_then(|v| Ty::from_vt(tables, function.value(v).ty));
                (pointer_of(1), narrow.or(value.map(|v| Ty { lanes: 1, ..v })))
            }
            "CALL" => {
                for v in inst.uses() {
                    if let Some(k) = origin.get(v.0 as usize).copied().flatten() {
                        record(k, None);
                    }
                }
                continue;
            }
            _ if op.starts_with("ATOMIC_") => (pointer_of(0), inst.defs.first().and_then(|d| Ty::from_vt(tables, function.value(*d).ty))),
            _ => continue,
        };
        if let Some(k) = pointer {
            record(k, ty.filter(|t| !matches!(t.kind, Kind::Pointer(_))));
        }
    }
    types.into_iter().map(Option::flatten).collect()
}

/// One random lane: integers mostly in 0..=16, sometimes up to 255, small negatives,
/// and unless `tame` edge values or any bits; floats mostly small integers and halves,
/// sometimes values up to 1000, and unless `tame` special values (zeros, infinities,
/// NaN) or any bits.
pub fn random_lane(rng: &mut Rng, ty: Ty, tame: bool) -> u128 {
    let m = mask(ty.bits);
    let roll = match (tame, ty.kind) {
        (true, Kind::Float(_)) => rng.below(70),
        (true, _) => rng.below(80),
        (false, _) => rng.below(100),
    };
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
            (0..1000).map(|_| random_lane(&mut rng, i32_ty, false)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let small = draw(7).iter().filter(|&&v| v <= 16).count();
        assert!(small > 400, "about half the integers are in 0..=16, found {small}");
    }
}

/// The buffers of a run of `entry`, with NaNs canonicalized by the element type each
/// buffer is read as, else the type it is written as (an output buffer): for comparing
/// two runs whose NaN payloads may differ (the differential tests).
pub fn canonical_buffers(module: &crate::mir::Module, tables: &TargetTables, entry: &str, mut result: super::RunResult) -> Vec<Vec<u8>> {
    let Some(f) = module.functions.iter().find(|f| f.name == entry) else { return result.buffers };
    let stored = buffer_stored_types(f, tables);
    let types: Vec<Option<Ty>> = buffer_element_types(f, tables).into_iter().zip(stored).map(|(read, written)| read.or(written)).collect();
    let pointer_params = f.params.iter().enumerate().filter(|(_, p)| tables.type_info(p.ty).is_some_and(|t| t.kind == target_desc::tables::TypeKind::Pointer)).map(|(i, _)| i);
    for (buffer, param) in result.buffers.iter_mut().zip(pointer_params) {
        if let Some(format) = types.get(param).copied().flatten().and_then(|t| t.format()) {
            canonicalize_nans(buffer, format);
        }
    }
    result.buffers
}
