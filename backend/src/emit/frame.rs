//! Frame layout: where each frame object of a function lies in its `.local` depot.
//!
//! Runs inside emission, after everything that creates or removes frame objects (the
//! input's local arrays, the spiller's slots, machine mem2reg). One array per function,
//! `.local .align A .b8 __local_depotN[SIZE]`, as LLVM's NVPTX backend and CICC's
//! PrologEpilogInserter write it (cicc-machine-passes.txt, "PrologEpilogInserter"):
//! objects are placed by decreasing alignment, then in frame order, so padding is
//! needed only at the end and the layout depends on nothing but the frame list.
//! Spill slots that can share memory already share one object (the spiller's stack
//! slot coloring), so the layout never has to reason about lifetimes.

use crate::mir::Function;

pub struct FrameLayout {
    /// Byte offset of each frame object in the depot.
    pub offsets: Vec<u64>,
    pub size: u64,
    pub align: u32,
}

pub fn layout(f: &Function) -> FrameLayout {
    let mut order: Vec<usize> = (0..f.frame.len()).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(f.frame[k].align), k));
    let mut offsets = vec![0; f.frame.len()];
    let mut size = 0u64;
    let mut align = 1u32;
    for k in order {
        let o = &f.frame[k];
        size = size.next_multiple_of(u64::from(o.align));
        offsets[k] = size;
        size += o.size;
        align = align.max(o.align);
    }
    FrameLayout { offsets, size: size.next_multiple_of(u64::from(align)), align }
}

/// The depot's name: one per function, numbered by its position in the module (as llc).
pub fn depot_name(function_index: usize) -> String {
    format!("__local_depot{function_index}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mir::FrameObject;

    #[test]
    fn objects_are_aligned_and_packed_by_decreasing_alignment() {
        let t = tables::nvptx();
        let text = "---\nname: k\nkind: kernel\nbody: |\n  bb.0:\n    RET\n...\n";
        let mut f = crate::mir::parser::parse_module(text, "t.mir", t).unwrap().functions.remove(0);
        let object = |size, align| FrameObject { name: None, size, align, spill: false };
        // 1 byte, then 8 aligned to 8, then 4 aligned to 4, then 16 aligned to 16:
        // 16@0, 8@16, 4@24, 1@28; size 29 rounded up to the alignment 16 -> 32.
        f.frame = vec![object(1, 1), object(8, 8), object(4, 4), object(16, 16)];
        let l = layout(&f);
        assert_eq!(l.offsets, vec![28, 16, 24, 0]);
        assert_eq!((l.size, l.align), (32, 16));
        f.frame.clear();
        let l = layout(&f);
        assert_eq!((l.size, l.align), (0, 1));
    }
}
