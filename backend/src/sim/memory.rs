//! The simulator's state spaces and address encoding.
//!
//! Where it sits: [`super::exec`] turns every `ld`, `st`, atomic and `cvta` address into
//! a [`Location`] here, checking bounds and alignment against the object the address
//! points into.
//!
//! Addresses. A *specific* address is what `ld.shared`/`ld.local`/... take: for
//! shared, local, const and kernel-parameter memory an offset below 2^32 in that space
//! (shared variables are laid out from 0 in declaration order, like ptxas does);
//! for global memory the global address itself. A *generic* address carries its space
//! in the top byte, so generic and global addresses coincide and `cvta.to.global` is
//! the identity, as on the hardware:
//!
//! | space | specific | generic |
//! |---|---|---|
//! | global | `0x01 << 56 \| object << 32 \| offset` | the same |
//! | shared | `offset` | `0x03 << 56 \| offset` |
//! | const | `offset` | `0x04 << 56 \| offset` |
//! | local | `offset` | `0x05 << 56 \| offset` |
//! | kernel param | `offset` | `0x65 << 56 \| offset` |
//! | a device function's `.param` | `0x66 << 56 \| depth << 40 \| object << 32 \| offset` | the same |
//! | a function | `0x7f << 56 \| index` | |
//!
//! Each global object (kernel buffer, `.global` variable) has its own 4 GiB window, so
//! running off the end of one never lands in another; shared, const and local accesses
//! are checked against the variable they fall in, so an access straddling two
//! variables is reported too.

use super::isa::Space;

pub const GLOBAL_TAG: u64 = 0x01;
pub const SHARED_TAG: u64 = 0x03;
pub const CONST_TAG: u64 = 0x04;
pub const LOCAL_TAG: u64 = 0x05;
pub const KERNEL_PARAM_TAG: u64 = 0x65;
pub const FRAME_PARAM_TAG: u64 = 0x66;
pub const FUNCTION_TAG: u64 = 0x7f;
const OFFSET_MASK: u64 = 0xFFFF_FFFF;

pub fn tag(address: u64) -> u64 {
    address >> 56
}

pub fn global_address(object: u32, offset: u64) -> u64 {
    (GLOBAL_TAG << 56) | (u64::from(object) << 32) | (offset & OFFSET_MASK)
}

pub fn frame_param_address(depth: usize, object: u32, offset: u32) -> u64 {
    (FRAME_PARAM_TAG << 56) | ((depth as u64 & 0xFFFF) << 40) | (u64::from(object & 0xFF) << 32) | u64::from(offset)
}

/// The generic address of a specific address of `space`.
pub fn to_generic(space: Space, address: u64) -> Option<u64> {
    let tag = match space {
        Space::Global | Space::Generic => return Some(address),
        Space::Shared => SHARED_TAG,
        Space::Const => CONST_TAG,
        Space::Local => LOCAL_TAG,
        Space::Param if tag(address) == FRAME_PARAM_TAG => return Some(address),
        Space::Param => KERNEL_PARAM_TAG,
    };
    (address <= OFFSET_MASK).then_some((tag << 56) | address)
}

/// The space a generic address lies in, and its specific address there.
pub fn from_generic(address: u64) -> Option<(Space, u64)> {
    Some(match tag(address) {
        GLOBAL_TAG => (Space::Global, address),
        SHARED_TAG => (Space::Shared, address & OFFSET_MASK),
        CONST_TAG => (Space::Const, address & OFFSET_MASK),
        LOCAL_TAG => (Space::Local, address & OFFSET_MASK),
        KERNEL_PARAM_TAG => (Space::Param, address & OFFSET_MASK),
        FRAME_PARAM_TAG => (Space::Param, address),
        _ => return None,
    })
}

/// Where an access lands.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Global { object: u32, offset: u32 },
    Shared { offset: u32 },
    Const { offset: u32 },
    Local { offset: u32 },
    KernelParam { offset: u32 },
    /// Parameter object `object` of the frame at `depth` of the thread's call stack.
    FrameParam { depth: u32, object: u32, offset: u32 },
}

/// An object of global memory.
pub struct GlobalObject {
    pub bytes: Vec<u8>,
    pub read_only: bool,
    /// For messages: `buffer argument 0 (k_param_0)`, `table`.
    pub label: String,
}

/// A named range of a space laid out from offset 0 (shared, const, local).
#[derive(Clone, Debug)]
pub struct Range {
    pub start: u32,
    pub size: u32,
    pub label: String,
}

/// Finds the range holding `[offset, offset + size)`, or says why none does.
pub fn find_range(ranges: &[Range], offset: u64, size: u64, space: &str) -> Result<usize, String> {
    let k = ranges.partition_point(|r| u64::from(r.start) <= offset);
    if k > 0 {
        let r = &ranges[k - 1];
        let end = u64::from(r.start) + u64::from(r.size);
        if offset + size <= end {
            return Ok(k - 1);
        }
        if offset < end {
            return Err(format!(
                "{size}-byte access at {space} offset {offset} runs past the end of `{}` (offsets {}..{end})",
                r.label, r.start
            ));
        }
    }
    Err(format!("{space} offset {offset} is outside every {space} variable"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_round_trips() {
        for space in [Space::Shared, Space::Const, Space::Local, Space::Param] {
            let g = to_generic(space, 0x1234).unwrap();
            assert_eq!(from_generic(g), Some((space, 0x1234)));
        }
        let global = global_address(3, 16);
        assert_eq!(to_generic(Space::Global, global), Some(global));
        assert_eq!(from_generic(global), Some((Space::Global, global)));
        assert_eq!(from_generic(0), None, "null is in no space");
        assert_eq!(to_generic(Space::Shared, 1 << 40), None, "a shared address is 32 bits");
    }

    #[test]
    fn ranges_catch_straddling_accesses() {
        let ranges = vec![Range { start: 0, size: 16, label: "a".into() }, Range { start: 16, size: 8, label: "b".into() }];
        assert_eq!(find_range(&ranges, 12, 4, "shared"), Ok(0));
        assert_eq!(find_range(&ranges, 16, 8, "shared"), Ok(1));
        assert!(find_range(&ranges, 14, 4, "shared").unwrap_err().contains("runs past the end of `a`"));
        assert!(find_range(&ranges, 24, 1, "shared").unwrap_err().contains("outside"));
    }
}
