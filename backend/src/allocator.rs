//! The process allocator: binaries that compile (`ptxc`, the compile-time benchmarks)
//! install mimalloc ([`Allocator`]) as their global allocator and call [`tune`] first.
//!
//! The compiler allocates many small vectors per instruction and frees most of them
//! between passes. With glibc's malloc about a third of a 100k-instruction compile went
//! to its free lists; with mimalloc's defaults a third went to the kernel zeroing pages,
//! because freed memory was returned to the OS ("purged") after 10 ms and faulted back in
//! by the next pass. A compile is one short burst, so nothing is purged: system time on
//! a 100k-instruction kernel fell from 0.45 s to 0.01-0.05 s, peak memory rose 6%.
//! Transparent huge pages are off for the process: with them (the kernel's `madvise`
//! mode) some runs spent 0.3-0.4 s of system time compacting memory for 2 MiB pages, so
//! timings varied by half; without them a run takes 30k small page faults, every time.

/// mimalloc's `mi_option_purge_delay` (mimalloc.h, v3 numbering, as libmimalloc-sys
/// builds it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never return freed memory to the OS during the process; no huge pages.
pub fn tune() {
    // SAFETY: sets a process-wide option; mimalloc reads options atomically.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    // mimalloc reserved its arena (and asked for huge pages) before `main`, so its own
    // THP option comes too late; the process-wide switch applies at fault time.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only changes this process's THP policy.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// mimalloc as the global allocator, through its plain entry points.
///
/// The `mimalloc` crate's `MiMalloc` sends every request through `mi_malloc_aligned`,
/// whose fast path is only for blocks up to 1 KiB that happen to be aligned; larger
/// requests took mimalloc's generic aligned path (about 170 instructions each, 266k
/// times on a 100k-instruction compile of many small functions). Rust asks for at most
/// 16-byte alignment almost everywhere, which `mi_malloc` gives: its blocks are whole
/// words, and the ones a 16-aligned layout needs (sizes that are multiples of 16) start
/// 16-aligned. That is checked on every block anyway, and a block that is not aligned
/// enough is freed and asked for again through the aligned entry point, so the allocator
/// is correct whatever mimalloc's bins are.
pub struct Allocator;

/// The largest alignment asked of `mi_malloc` (mimalloc's `MI_MAX_ALIGN_SIZE`); larger
/// ones go to the aligned entry points directly.
const PLAIN_ALIGN: usize = 16;

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

fn aligned(p: *mut c_void, align: usize) -> bool {
    (p as usize) & (align - 1) == 0
}

/// A block for `layout` from `plain` (mimalloc's `mi_malloc` or `mi_zalloc`) when that
/// one is aligned enough, else from `aligned` (the same with an alignment).
///
/// # Safety
/// As [`GlobalAlloc::alloc`]: `layout` has a non-zero size.
#[inline]
unsafe fn allocate(layout: Layout, plain: unsafe extern "C" fn(usize) -> *mut c_void, aligned_alloc: unsafe extern "C" fn(usize, usize) -> *mut c_void) -> *mut u8 {
    let (size, align) = (layout.size(), layout.align());
    if align <= PLAIN_ALIGN && align <= size {
        let p = plain(size);
        if aligned(p, align) {
            return p as *mut u8;
        }
        mi::mi_free(p);
    }
    aligned_alloc(size, align) as *mut u8
}

// SAFETY: every block comes from mimalloc and goes back to it through `mi_free`, which
// accepts blocks from all of its entry points; a block is returned only when it has the
// layout's alignment (checked) and at least its size.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        allocate(layout, mi::mi_malloc, mi::mi_malloc_aligned)
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        allocate(layout, mi::mi_zalloc, mi::mi_zalloc_aligned)
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi::mi_free(ptr as *mut c_void);
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        if align <= PLAIN_ALIGN && align <= new_size {
            // `mi_realloc` moves the block only when it must; a moved block is a fresh
            // `mi_malloc` block, checked like any other.
            let p = mi::mi_realloc(ptr as *mut c_void, new_size);
            if p.is_null() || aligned(p, align) {
                return p as *mut u8;
            }
            // Not aligned enough: move it once more, through the aligned entry point.
            let q = mi::mi_malloc_aligned(new_size, align);
            if !q.is_null() {
                std::ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, new_size.min(layout.size()));
            }
            mi::mi_free(p);
            return q as *mut u8;
        }
        mi::mi_realloc_aligned(ptr as *mut c_void, new_size, align) as *mut u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block the allocator gives is aligned as asked and keeps its contents
    /// through `realloc`, for the small and large sizes and the alignments Rust asks
    /// for (including over 16, which take the aligned entry points).
    #[test]
    fn blocks_are_aligned_and_keep_their_contents() {
        let a = Allocator;
        for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1usize, 8, 16, 24, 48, 1000, 1024, 1040, 5000, 70000] {
                let Ok(layout) = Layout::from_size_align(size.max(align), align) else { continue };
                // SAFETY: non-zero sizes; every block is freed with its own layout.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null() && (p as usize).is_multiple_of(align), "alloc {layout:?}");
                    for k in 0..layout.size() {
                        *p.add(k) = k as u8;
                    }
                    // Grown, then shrunk below the original size.
                    let (mut block, mut held) = (p, layout);
                    for new_size in [layout.size() * 3 + 8, (layout.size() / 2).max(1)] {
                        let q = a.realloc(block, held, new_size);
                        assert!(!q.is_null() && (q as usize).is_multiple_of(align), "realloc {held:?} to {new_size}");
                        for k in 0..layout.size().min(new_size) {
                            assert_eq!(*q.add(k), k as u8, "realloc {held:?} to {new_size} lost byte {k}");
                        }
                        (block, held) = (q, Layout::from_size_align(new_size, align).unwrap());
                    }
                    a.dealloc(block, held);
                    let z = a.alloc_zeroed(layout);
                    assert!(!z.is_null() && (z as usize).is_multiple_of(align), "alloc_zeroed {layout:?}");
                    assert!((0..layout.size()).all(|k| *z.add(k) == 0), "alloc_zeroed {layout:?} not zeroed");
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
