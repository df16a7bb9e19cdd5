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
//! A compile of a large input (`HUGE_PAGE_INPUT`) turns them back on, as its faults
//! cost seconds ([`allow_huge_pages`]).
//!
//! Two exceptions: blocks of 64 KiB and more come from the C library's heap, which
//! reuses freed memory better for a compile's large, growing tables (see
//! `LARGE_SIZE`); and a block that reallocation grows past `MAPPED_SIZE` (tens of MB,
//! the largest vectors of a big function) moves to a mapping of its own, grown by
//! `mremap` without copying (see `MAPPED_SIZE`).

/// mimalloc's `mi_option_purge_delay` (mimalloc.h, v3 numbering, as libmimalloc-sys
/// builds it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never return freed memory to the OS during the process; no huge pages (until
/// [`allow_huge_pages`]).
pub fn tune() {
    // SAFETY: sets a process-wide option; mimalloc reads options atomically.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    // The C library's heap serves the large blocks ([`LARGE_SIZE`]): from the heap
    // itself up to its largest threshold (not a mapping each, unmapped when freed and
    // faulted in again when the next one is made), and never trimmed, as mimalloc
    // never purges.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt with integer arguments only changes malloc's thresholds.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
    disable_huge_pages();
}

/// Turns transparent huge pages off for the process. mimalloc reserves its arena (and
/// asks for huge pages) at the first allocation, which the Rust runtime makes before
/// `main`, so mimalloc's own THP option comes too late; the process-wide switch
/// applies at fault time. `ptxc` runs this from `.init_array` too, before that first
/// allocation, so that the allocator's first block is not a whole 2 MiB page the
/// kernel zeroes.
pub extern "C" fn disable_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only changes this process's THP policy.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Inputs at least this large (bytes of MIR, about 400k instructions) compile with
/// transparent huge pages ([`allow_huge_pages`]).
pub const HUGE_PAGE_INPUT: usize = 16 << 20;

/// Lets the kernel back this process's memory with 2 MiB pages where mimalloc asked for
/// them, undoing [`tune`]'s switch: for a compile that will touch gigabytes. A compile of
/// a 1M-instruction i128/v8f16/bf16 kernel touches 3.5 GB, and faulting it in 4 KiB at a
/// time was 8-9 s of system time on the benchmark VM; with huge pages 5.5-6 s. Small
/// compiles keep them off: a fault that finds no free huge page waits for the kernel to
/// compact memory, 0.2-0.7 s now and then on a compile of 0.2 s.
pub fn allow_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with integer arguments only changes this process's THP policy.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0);
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

/// A block that reallocation grows to at least this size (with at most page alignment)
/// becomes a mapping of its own ([`mapped`]), so that growing it further moves its
/// pages instead of copying them.
///
/// The largest vectors of a compile (a big block's instructions, a function's values)
/// grow by reallocation. mimalloc gives a grown block fresh memory and copies into it:
/// every step touches the new size in fresh pages, which on a legalization-heavy 1M-line
/// kernel was a quarter of the compile (memmove into pages the kernel first zeroes),
/// and the old copies stayed resident. `mremap` moves the pages themselves. Blocks
/// allocated at their size stay with mimalloc, which reuses its freed memory for them
/// better than a mapping could (peak memory rose by a fifth on the shapes with many
/// blocks when every large block was mapped).
const MAPPED_SIZE: usize = 32 << 20;

/// Blocks of at least this size (with at most [`PLAIN_ALIGN`] alignment, and not
/// [`mapped`]) come from the C library's `malloc`, not mimalloc.
///
/// A compile's large blocks (a big block's instructions, a function's values, a pass's
/// per-value tables) are made and freed pass after pass, a little larger each time.
/// mimalloc keeps a freed large block's pages for blocks that fit in them, and a
/// growing sequence rarely fits, so each pass faulted in fresh pages: on a kernel of
/// 25k PHIs (100k instructions) mimalloc's resident peak was 72 MB for a live peak of
/// 43 MB, and page faults were a third of the compile. glibc's heap coalesces freed
/// neighbours and reuses them best-fit: with blocks from 64 KiB there, that kernel
/// takes 11.2k page faults instead of 15.5k and 173 ms instead of 187; the straight-line
/// kernel 9.1k instead of 13.2k. Thresholds of 16 and 32 KiB gave the same, 1 MiB more
/// faults than mimalloc alone. glibc's heap gets no huge pages ([`allow_huge_pages`]
/// is mimalloc's): a 1M-instruction legalization-heavy compile took 1.08M page faults
/// instead of 440k, in the same time (21.8-23.5 s). Routed by size, which `dealloc` and
/// `realloc` are given, so no block needs looking up.
const LARGE_SIZE: usize = 64 << 10;

#[inline]
fn is_large(size: usize, align: usize) -> bool {
    cfg!(all(target_os = "linux", target_env = "gnu")) && size >= LARGE_SIZE && align <= PLAIN_ALIGN
}

/// Mappings of anonymous private memory, whole pages, resized by `mremap`.
///
/// The live mappings are listed (there are a few at a time), so `dealloc` and
/// `realloc` tell them from mimalloc's blocks. A freed mapping is unmapped: keeping it
/// for the next growth (as mimalloc keeps its freed memory) saved no time on any shape
/// of the compile-time benchmark and kept up to 150 MB more resident on some.
#[cfg(target_os = "linux")]
mod mapped {
    use std::ffi::c_void;
    use std::sync::{Mutex, MutexGuard};

    /// Live mappings: (address, whole-page length). The list's own buffer is a few
    /// words, so growing or freeing it never comes back here (only blocks of at least
    /// [`super::MAPPED_SIZE`] look at the list) and the lock is never taken twice.
    static LIVE: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

    fn live() -> MutexGuard<'static, Vec<(usize, usize)>> {
        LIVE.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn pages(size: usize) -> usize {
        size.next_multiple_of(4096)
    }

    /// Whether `p` is a live mapping.
    pub fn is_live(p: *mut u8) -> bool {
        live().iter().any(|&(a, _)| a == p as usize)
    }

    /// A new mapping of at least `size` bytes, or null.
    pub unsafe fn map(size: usize) -> *mut u8 {
        let length = pages(size);
        let p = libc::mmap(std::ptr::null_mut(), length, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if p == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        live().push((p as usize, length));
        p as *mut u8
    }

    /// The live mapping `p` resized to at least `size` bytes, moved if it must be (its
    /// pages move with it), or null (then `p` is unchanged).
    pub unsafe fn remap(p: *mut u8, size: usize) -> *mut u8 {
        let mut live = live();
        let Some(entry) = live.iter_mut().find(|(a, _)| *a == p as usize) else { return std::ptr::null_mut() };
        let length = pages(size);
        if entry.1 == length {
            return p;
        }
        let q = libc::mremap(p as *mut c_void, entry.1, length, libc::MREMAP_MAYMOVE);
        if q == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        *entry = (q as usize, length);
        q as *mut u8
    }

    /// Unmaps the live mapping `p`.
    pub unsafe fn unmap(p: *mut u8) {
        let mut live = live();
        let Some(i) = live.iter().position(|&(a, _)| a == p as usize) else { return };
        let (address, length) = live.swap_remove(i);
        drop(live);
        libc::munmap(address as *mut c_void, length);
    }
}

/// Elsewhere nothing is mapped: `map` fails, so every block stays with mimalloc.
#[cfg(not(target_os = "linux"))]
mod mapped {
    pub fn is_live(_: *mut u8) -> bool {
        false
    }
    pub unsafe fn map(_: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub unsafe fn remap(_: *mut u8, _: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub unsafe fn unmap(_: *mut u8) {}
}

/// Whether the block `p` of `size` bytes is one of [`mapped`]'s (only a block of at
/// least [`MAPPED_SIZE`] can be, so smaller ones never look at the list).
#[inline]
fn is_mapped(p: *mut u8, size: usize) -> bool {
    size >= MAPPED_SIZE && mapped::is_live(p)
}

// SAFETY: a block listed by [`mapped`] is an anonymous mapping of at least its size,
// page-aligned, resized by `mremap` and released by `munmap`; every other block
// comes from mimalloc and goes back to it through `mi_free`, which accepts blocks from
// all of its entry points. A block is returned only when it has the layout's alignment
// (checked, or a page) and at least its size; a move between the two kinds copies the
// smaller of the two sizes.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_large(layout.size(), layout.align()) {
            return libc::malloc(layout.size()) as *mut u8;
        }
        allocate(layout, mi::mi_malloc, mi::mi_malloc_aligned)
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_large(layout.size(), layout.align()) {
            return libc::calloc(1, layout.size()) as *mut u8;
        }
        allocate(layout, mi::mi_zalloc, mi::mi_zalloc_aligned)
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_mapped(ptr, layout.size()) {
            mapped::unmap(ptr);
            return;
        }
        if is_large(layout.size(), layout.align()) {
            libc::free(ptr as *mut c_void);
            return;
        }
        mi::mi_free(ptr as *mut c_void);
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        let was_mapped = is_mapped(ptr, layout.size());
        if was_mapped && new_size >= MAPPED_SIZE {
            return mapped::remap(ptr, new_size);
        }
        let grows_large = !was_mapped && new_size >= MAPPED_SIZE && new_size > layout.size() && align <= 4096;
        let new_layout = Layout::from_size_align_unchecked(new_size, align);
        let (old_large, new_large) = (!was_mapped && is_large(layout.size(), align), is_large(new_size, align));
        if was_mapped || grows_large || old_large != new_large {
            // Into a mapping, or out of one (shrunk below the size), or across
            // `LARGE_SIZE`: the contents copied. A mapping not to be had is a block of
            // the size from the allocator that serves it.
            let mut q = if grows_large { mapped::map(new_size) } else { std::ptr::null_mut() };
            if q.is_null() {
                q = self.alloc(new_layout);
            }
            if q.is_null() {
                return q;
            }
            std::ptr::copy_nonoverlapping(ptr, q, new_size.min(layout.size()));
            self.dealloc(ptr, layout);
            return q;
        }
        if old_large {
            return libc::realloc(ptr as *mut c_void, new_size) as *mut u8;
        }
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
    /// for (including over 16, which take the aligned entry points), across
    /// `LARGE_SIZE` both ways (mimalloc's blocks and the C library's), and across the
    /// size of mapped blocks both ways (a third of it grown past it, grown again by
    /// `mremap`, then shrunk back below it; a block over it grown into a mapping).
    #[test]
    fn blocks_are_aligned_and_keep_their_contents() {
        let a = Allocator;
        for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1usize, 8, 16, 24, 48, 1000, 1024, 1040, 5000, 40000, 70000, LARGE_SIZE, MAPPED_SIZE / 3 + 5, MAPPED_SIZE + 4097] {
                let Ok(layout) = Layout::from_size_align(size.max(align), align) else { continue };
                // SAFETY: non-zero sizes; every block is freed with its own layout.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null() && (p as usize).is_multiple_of(align), "alloc {layout:?}");
                    for k in 0..layout.size() {
                        *p.add(k) = k as u8;
                    }
                    // Grown twice, then shrunk below the original size.
                    let (mut block, mut held) = (p, layout);
                    for new_size in [layout.size() * 3 + 8, layout.size() * 5, (layout.size() / 2).max(1)] {
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
