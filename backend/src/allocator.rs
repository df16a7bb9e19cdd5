//! The process allocator: binaries that compile (`ptxc`, the compile-time benchmarks)
//! install mimalloc as their global allocator and call [`tune`] first.
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
