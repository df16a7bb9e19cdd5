//! The interpreter's memory: objects ("regions") in the global, shared and const state
//! spaces, and the 64-bit address encoding that names a byte in one of them.
//!
//! Where it sits: `exec.rs` resolves every LOAD, STORE and atomic through
//! [`Memory::resolve`]; kernel buffers, module globals and shared arrays are regions.
//!
//! Address encoding: `space << 56 | region << 32 | offset`, with `space` the PTX state
//! space number (1 global, 3 shared, 4 const), `region` the object's index and
//! `offset` a byte offset of 32 bits. A specific-space pointer (`p1`, `p3`, `p4`) and
//! the generic (`p0`) pointer to the same byte have the same bits, so `ADDRSPACECAST`
//! to `p0` is the identity and a cast from `p0` checks that the address lies in the
//! target space (undefined otherwise). An access through a specific-space pointer must
//! address that space. Because the region is part of the address, running off one
//! object never lands in another: pointer arithmetic past the end of an object (or
//! below its start, which borrows from the region bits) is caught at the access.
//! Frame objects (`FRAME_INDEX`) are local-space regions made per call and emptied
//! when the call returns; which of their bytes were ever written is tracked, and
//! reading one never written is undefined (as in the simulator, where such a byte is
//! an undefined value). Null (0) and the param space hold no objects. Regions start at address
//! offset 0, so an address's alignment is its offset's alignment.
//!
//! Why: the interpreter is an oracle, so every access is checked (bounds, alignment,
//! writes to const), and the encoding makes the check one table lookup.

use super::compile::Ty;
use crate::mir::AddressSpace;

/// Offsets are 32 bits: no object may be larger.
pub const MAX_REGION_BYTES: u64 = 1 << 32;
const REGION_BITS: u32 = 24;

pub const GLOBAL: u16 = 1;
pub const SHARED: u16 = 3;
pub const CONST: u16 = 4;
pub const LOCAL: u16 = 5;

pub fn address(space: u16, region: u32, offset: u32) -> u64 {
    (u64::from(space) << 56) | (u64::from(region) << 32) | u64::from(offset)
}

/// The state space an address lies in (0 for none).
pub fn space_of(address: u64) -> u16 {
    (address >> 56) as u16
}

pub fn space_number(space: AddressSpace) -> u16 {
    space.number()
}

pub fn space_name(space: u16) -> &'static str {
    match space {
        0 => "generic",
        GLOBAL => "global",
        SHARED => "shared",
        CONST => "const",
        LOCAL => "local",
        101 => "param",
        _ => "unknown",
    }
}

/// Bytes a value of type `ty` occupies in memory: each lane rounded up to whole bytes,
/// except vectors of `i1`, which are bit-packed.
pub fn stored_size(ty: Ty) -> u64 {
    if ty.bits == 1 && ty.lanes > 1 {
        u64::from(ty.lanes.div_ceil(8))
    } else {
        u64::from(ty.bits.div_ceil(8)) * u64::from(ty.lanes)
    }
}

/// One object.
pub struct Region {
    pub space: u16,
    pub bytes: Vec<u8>,
    pub read_only: bool,
    /// For messages: `buffer argument 0 (x)`, `@tile`.
    pub label: String,
    /// Frame objects: whether each byte has been written.
    pub written: Option<Vec<bool>>,
}

#[derive(Default)]
pub struct Memory {
    pub regions: Vec<Region>,
}

impl Memory {
    /// Adds a region, returning its base address, or `None` when it is too large or
    /// there are too many.
    pub fn add(&mut self, region: Region) -> Option<u64> {
        let index = self.regions.len() as u32;
        if index >= 1 << REGION_BITS || region.bytes.len() as u64 > MAX_REGION_BYTES {
            return None;
        }
        let base = address(region.space, index, 0);
        self.regions.push(region);
        Some(base)
    }

    /// The region and byte offset of an access of `size` bytes at `address`, through a
    /// pointer of address space `pointer_space`, aligned to `align`; the error says why
    /// the access is undefined.
    pub fn resolve(&self, address: u64, size: u64, align: u64, pointer_space: u16, write: bool) -> Result<(usize, usize), String> {
        let space = space_of(address);
        let region_index = ((address >> 32) & ((1 << REGION_BITS) - 1)) as usize;
        let offset = address & 0xFFFF_FFFF;
        let describe = || format!("address {address:#x}");
        if address == 0 {
            return Err("access through a null pointer".into());
        }
        if pointer_space != 0 && pointer_space != space {
            return Err(format!("a {} (p{pointer_space}) access to {} which is not in that space", space_name(pointer_space), describe()));
        }
        let Some(region) = self.regions.get(region_index).filter(|r| r.space == space) else {
            return Err(format!("{} points to no object", describe()));
        };
        if offset + size > region.bytes.len() as u64 {
            return Err(format!(
                "out-of-bounds access of {size} byte(s) at offset {offset} of {} ({} bytes)",
                region.label,
                region.bytes.len()
            ));
        }
        if align > 1 && !offset.is_multiple_of(align) {
            return Err(format!("misaligned access: offset {offset} of {} is not a multiple of the alignment {align}", region.label));
        }
        if write && region.read_only {
            return Err(format!("write to read-only {}", region.label));
        }
        Ok((region_index, offset as usize))
    }

    /// Undefined when a byte of the access was never written (frame objects only).
    pub fn check_written(&self, region: usize, offset: usize, size: usize) -> Result<(), String> {
        let r = &self.regions[region];
        match &r.written {
            Some(w) if !w[offset..offset + size].iter().all(|&b| b) => Err(format!("read of {size} byte(s) at offset {offset} of {}, which were never written", r.label)),
            _ => Ok(()),
        }
    }

    pub fn bytes(&self, region: usize, offset: usize, size: usize) -> &[u8] {
        &self.regions[region].bytes[offset..offset + size]
    }

    pub fn bytes_mut(&mut self, region: usize, offset: usize, size: usize) -> &mut [u8] {
        if let Some(w) = &mut self.regions[region].written {
            w[offset..offset + size].fill(true);
        }
        &mut self.regions[region].bytes[offset..offset + size]
    }
}

/// Reads the lanes of a value of type `ty` (as stored) from `bytes` into `out`, each
/// masked to the lane width.
pub fn decode_lanes(bytes: &[u8], ty: Ty, out: &mut [u128]) {
    if ty.bits == 1 && ty.lanes > 1 {
        for (lane, slot) in out.iter_mut().enumerate().take(ty.lanes as usize) {
            *slot = u128::from((bytes[lane / 8] >> (lane % 8)) & 1);
        }
        return;
    }
    let lane_bytes = ty.bits.div_ceil(8) as usize;
    let mask = super::int::mask(ty.bits);
    for (lane, slot) in out.iter_mut().enumerate().take(ty.lanes as usize) {
        let mut buffer = [0u8; 16];
        buffer[..lane_bytes].copy_from_slice(&bytes[lane * lane_bytes..(lane + 1) * lane_bytes]);
        *slot = u128::from_le_bytes(buffer) & mask;
    }
}

/// Writes lanes of type `ty` (as stored) into `bytes`.
pub fn encode_lanes(lanes: &[u128], ty: Ty, bytes: &mut [u8]) {
    if ty.bits == 1 && ty.lanes > 1 {
        bytes.fill(0);
        for (lane, value) in lanes.iter().enumerate().take(ty.lanes as usize) {
            bytes[lane / 8] |= ((value & 1) as u8) << (lane % 8);
        }
        return;
    }
    let lane_bytes = ty.bits.div_ceil(8) as usize;
    let mask = super::int::mask(ty.bits);
    for (lane, value) in lanes.iter().enumerate().take(ty.lanes as usize) {
        let encoded = (value & mask).to_le_bytes();
        bytes[lane * lane_bytes..(lane + 1) * lane_bytes].copy_from_slice(&encoded[..lane_bytes]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::compile::Kind;

    fn memory() -> (Memory, u64, u64) {
        let mut m = Memory::default();
        let global = m.add(Region { space: GLOBAL, bytes: vec![0; 16], read_only: false, label: "buffer".into(), written: None }).unwrap();
        let constant = m.add(Region { space: CONST, bytes: vec![0; 8], read_only: true, label: "@lut".into(), written: None }).unwrap();
        (m, global, constant)
    }

    #[test]
    fn accesses_are_checked() {
        let (m, global, constant) = memory();
        assert_eq!(m.resolve(global + 12, 4, 4, GLOBAL, true), Ok((0, 12)));
        assert_eq!(m.resolve(global + 12, 4, 4, 0, false), Ok((0, 12)), "generic access to a global object");
        assert!(m.resolve(global + 16, 1, 1, GLOBAL, false).unwrap_err().contains("out-of-bounds"));
        assert!(m.resolve(global + 2, 4, 4, GLOBAL, false).unwrap_err().contains("misaligned"));
        assert!(m.resolve(global, 4, 4, SHARED, false).unwrap_err().contains("not in that space"));
        assert!(m.resolve(constant, 4, 4, CONST, true).unwrap_err().contains("read-only"));
        assert!(m.resolve(0, 4, 4, 0, false).unwrap_err().contains("null"));
        // Below the start of an object: the offset borrows from the region bits.
        let below = global.wrapping_sub(4);
        assert!(m.resolve(below, 4, 4, 0, false).is_err());
        // Past the end by a lot does not reach the next object.
        assert!(m.resolve(global + 0x1_0000_0000, 4, 4, 0, false).is_err());
    }

    #[test]
    fn lanes_round_trip_including_packed_booleans() {
        let v4i8 = Ty { kind: Kind::Int, bits: 8, lanes: 4 };
        let mut bytes = [0u8; 4];
        encode_lanes(&[1, 2, 0x1FF, 4], v4i8, &mut bytes);
        assert_eq!(bytes, [1, 2, 0xFF, 4]);
        let v2i1 = Ty { kind: Kind::Int, bits: 1, lanes: 2 };
        assert_eq!(stored_size(v2i1), 1);
        let mut packed = [0u8; 1];
        encode_lanes(&[1, 1], v2i1, &mut packed);
        assert_eq!(packed, [0b11]);
        let mut out = [0u128; 2];
        decode_lanes(&[0b10], v2i1, &mut out);
        assert_eq!(out, [0, 1]);
        let i1 = Ty { kind: Kind::Int, bits: 1, lanes: 1 };
        let mut one = [0u128; 1];
        decode_lanes(&[0xFE], i1, &mut one);
        assert_eq!(one, [0], "an i1 reads the low bit of its byte");
    }
}
