//! The control-flow facts machine passes share: successors and predecessors (from the
//! terminators' block operands), the dominator tree, and natural loops (a back edge's
//! target is the header; its body is every block reaching the latch without passing
//! the header).
//!
//! Built once per function and pass, in time linear in the function (the dominator
//! computation is the verifier's iterative Cooper-Harvey-Kennedy algorithm, which is
//! near-linear on the reducible CFGs the front end accepts).

use target_desc::tables::{props, TargetTables};

use crate::mir::{opcode_info, Function};

pub struct Cfg {
    pub succs: Vec<Vec<usize>>,
    pub preds: Vec<Vec<usize>>,
    /// Immediate dominator; `None` for unreachable blocks, `Some(0)` for the entry.
    pub idom: Vec<Option<usize>>,
    /// Dominator-tree children, in layout order.
    pub children: Vec<Vec<usize>>,
    pre: Vec<usize>,
    post: Vec<usize>,
}

impl Cfg {
    pub fn new(f: &Function, tables: &TargetTables) -> Cfg {
        let n = f.blocks.len();
        let mut succs = vec![Vec::new(); n];
        for (b, block) in f.blocks.iter().enumerate() {
            for inst in &block.insts {
                let is_term = opcode_info(inst.opcode, tables).is_some_and(|o| o.props & props::TERMINATOR != 0);
                if !is_term {
                    continue;
                }
                for target in inst.block_operands() {
                    if let Some(t) = f.block_index(target) {
                        if !succs[b].contains(&t) {
                            succs[b].push(t);
                        }
                    }
                }
            }
        }
        let mut preds = vec![Vec::new(); n];
        for (b, s) in succs.iter().enumerate() {
            for &t in s {
                preds[t].push(b);
            }
        }
        let idom = crate::mir::verifier::dominators(&succs, &preds);
        let mut children = vec![Vec::new(); n];
        for (b, parent) in idom.iter().enumerate() {
            if let Some(p) = *parent {
                if p != b {
                    children[p].push(b);
                }
            }
        }
        // Dominator-tree interval numbers: a dominates b iff pre[a] <= pre[b] and
        // post[b] <= post[a].
        let (mut pre, mut post) = (vec![usize::MAX; n], vec![0; n]);
        if n > 0 {
            let mut clock = 0;
            let mut stack = vec![(0usize, 0usize)];
            pre[0] = 0;
            while let Some((b, next)) = stack.pop() {
                if next < children[b].len() {
                    stack.push((b, next + 1));
                    let c = children[b][next];
                    clock += 1;
                    pre[c] = clock;
                    stack.push((c, 0));
                } else {
                    clock += 1;
                    post[b] = clock;
                }
            }
        }
        Cfg { succs, preds, idom, children, pre, post }
    }

    pub fn reachable(&self, b: usize) -> bool {
        self.idom[b].is_some()
    }

    /// Whether block `a` dominates block `b` (every block dominates itself).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        self.reachable(a) && self.reachable(b) && self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
    }

    /// Blocks in dominator-tree preorder (reachable blocks only).
    pub fn dom_preorder(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.succs.len());
        if self.succs.is_empty() {
            return out;
        }
        let mut stack = vec![0usize];
        while let Some(b) = stack.pop() {
            out.push(b);
            stack.extend(self.children[b].iter().rev());
        }
        out
    }

    /// Natural loops, innermost last is not guaranteed: each with its header and body
    /// (header included), loops sharing a header merged.
    pub fn loops(&self) -> Vec<Loop> {
        let mut loops: Vec<Loop> = Vec::new();
        for (latch, s) in self.succs.iter().enumerate() {
            for &header in s {
                if !self.dominates(header, latch) {
                    continue;
                }
                let index = match loops.iter().position(|l| l.header == header) {
                    Some(i) => i,
                    None => {
                        loops.push(Loop { header, body: vec![false; self.succs.len()], blocks: vec![header] });
                        loops.last_mut().unwrap().body[header] = true;
                        loops.len() - 1
                    }
                };
                let l = &mut loops[index];
                let mut stack = vec![latch];
                while let Some(b) = stack.pop() {
                    if l.body[b] {
                        continue;
                    }
                    l.body[b] = true;
                    l.blocks.push(b);
                    stack.extend(self.preds[b].iter().copied().filter(|&p| self.reachable(p)));
                }
            }
        }
        for l in &mut loops {
            l.blocks.sort_unstable();
        }
        loops
    }
}

pub struct Loop {
    pub header: usize,
    /// Membership per block index.
    pub body: Vec<bool>,
    /// The member blocks in layout order.
    pub blocks: Vec<usize>,
}

impl Loop {
    /// The single block outside the loop that enters the header, if it has exactly one
    /// and that block's only successor is the header (a place to hoist into).
    pub fn preheader(&self, cfg: &Cfg) -> Option<usize> {
        let outside: Vec<usize> = cfg.preds[self.header].iter().copied().filter(|&p| !self.body[p]).collect();
        match outside.as_slice() {
            [p] if cfg.succs[*p].len() == 1 => Some(*p),
            _ => None,
        }
    }
}
