//! The control-flow facts machine passes share: successors and predecessors (from the
//! terminators' block operands), the dominator tree, and natural loops (a back edge's
//! target is the header; its body is every block reaching the latch without passing
//! the header).
//!
//! Built once per function and pass, in time linear in the function (the dominator
//! computation is the verifier's iterative Cooper-Harvey-Kennedy algorithm, which is
//! near-linear on the reducible CFGs the front end accepts).

use target_desc::tables::{props, TargetTables};

use crate::mir::{opcode_info, Function, Inst};

/// Whether every branch of `f` goes to a later block in layout order (blocks numbered
/// by position). Then `f` has no cycle, so no loop: the loop passes skip such a
/// function without building its CFG, which in a module of thousands of one-block
/// functions cost each of them every time. Reads only the terminators.
pub fn branches_only_forward(f: &Function, tables: &TargetTables) -> bool {
    f.blocks.iter().enumerate().all(|(b, block)| block.number as usize == b && terminators(&block.insts, tables).iter().all(|i| i.block_operands().all(|t| t as usize > b)))
}

/// The terminators that end a block: the only instructions whose block operands are
/// edges (the verifier's rule).
fn terminators<'i>(insts: &'i [Inst], tables: &TargetTables) -> &'i [Inst] {
    let is_term = |inst: &Inst| opcode_info(inst.opcode, tables).is_some_and(|o| o.props & props::TERMINATOR != 0);
    &insts[insts.iter().rposition(|i| !is_term(i)).map_or(0, |k| k + 1)..]
}

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
        // Blocks are numbered by position after the front end and most passes; a map
        // only when they are not (building one cost every function it in every pass).
        let index = crate::mir::BlockIndex::new(f);
        let index_of = |number: u32| index.get(number);
        let mut succs = vec![Vec::new(); n];
        for (b, block) in f.blocks.iter().enumerate() {
            for inst in terminators(&block.insts, tables) {
                for target in inst.block_operands() {
                    if let Some(t) = index_of(target) {
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

    /// The nearest block dominating both reachable blocks `a` and `b`: climb the
    /// dominator tree from whichever comes later in its preorder until they meet.
    pub fn nearest_common_dominator(&self, mut a: usize, mut b: usize) -> usize {
        while a != b {
            if self.pre[a] > self.pre[b] {
                a = self.idom[a].expect("a reachable block has an immediate dominator");
            } else {
                b = self.idom[b].expect("a reachable block has an immediate dominator");
            }
        }
        a
    }

    /// The dominator-tree preorder number of a reachable block: a block's dominators
    /// come before it in this order.
    pub fn preorder_number(&self, b: usize) -> usize {
        self.pre[b]
    }

    /// The dominator-tree postorder number of a reachable block: `a` dominates `b` iff
    /// `a`'s preorder number is at most `b`'s and its postorder number at least `b`'s.
    pub fn postorder_number(&self, b: usize) -> usize {
        self.post[b]
    }

    /// Reachable blocks in reverse postorder of a depth-first walk from the entry: every
    /// block after its predecessors except along back edges (forward dataflow order).
    pub fn reverse_postorder(&self) -> Vec<usize> {
        crate::mir::verifier::reverse_postorder(&self.succs)
    }

    /// Loop depth of every block: the number of natural loops containing it.
    pub fn loop_depths(&self) -> Vec<u32> {
        let mut depth = vec![0u32; self.succs.len()];
        for l in self.loops() {
            for &b in &l.blocks {
                depth[b] += 1;
            }
        }
        depth
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

    /// Natural loops, each with its header and body (header included), loops sharing
    /// a header merged; in order of their headers. Time: the sum of the loop sizes.
    pub fn loops(&self) -> Vec<Loop> {
        let mut back_edges: Vec<(usize, usize)> = Vec::new();
        for (latch, s) in self.succs.iter().enumerate() {
            for &header in s {
                if self.dominates(header, latch) {
                    back_edges.push((header, latch));
                }
            }
        }
        back_edges.sort_unstable();
        // `mark[b] == header + 1`: `b` is in the loop of `header` being built.
        let mut mark = vec![0usize; self.succs.len()];
        let mut loops: Vec<Loop> = Vec::new();
        for (header, latch) in back_edges {
            if loops.last().is_none_or(|l| l.header != header) {
                mark[header] = header + 1;
                loops.push(Loop { header, blocks: vec![header] });
            }
            let l = loops.last_mut().unwrap();
            let mut stack = vec![latch];
            while let Some(b) = stack.pop() {
                if mark[b] == header + 1 {
                    continue;
                }
                mark[b] = header + 1;
                l.blocks.push(b);
                stack.extend(self.preds[b].iter().copied().filter(|&p| self.reachable(p)));
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
    /// The member blocks in layout order.
    pub blocks: Vec<usize>,
}

impl Loop {
    pub fn contains(&self, b: usize) -> bool {
        self.blocks.binary_search(&b).is_ok()
    }

    /// The single block outside the loop that enters the header, if it has exactly one
    /// and that block's only successor is the header (a place to hoist into).
    pub fn preheader(&self, cfg: &Cfg) -> Option<usize> {
        let outside: Vec<usize> = cfg.preds[self.header].iter().copied().filter(|&p| !self.contains(p)).collect();
        match outside.as_slice() {
            [p] if cfg.succs[*p].len() == 1 => Some(*p),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::branches_only_forward;
    use crate::mir::parser::parse_module;

    fn forward(body: &str) -> bool {
        let body: String = body.lines().map(|l| format!("  {}\n", l.trim())).collect();
        let text = format!("---\nname: k\nkind: kernel\nparams: [{{ name: n, type: i32 }}]\nbody: |\n{body}...\n");
        let tables = tables::nvptx();
        let m = parse_module(&text, "t.mir", tables).unwrap_or_else(|e| panic!("{}", e.render()));
        branches_only_forward(&m.functions[0], tables)
    }

    /// Forward branches only (a diamond, one block) say so; a loop, a block branching to
    /// itself, or blocks not numbered by position do not.
    #[test]
    fn only_loop_free_layouts_branch_forward() {
        let diamond = "bb.0:\n%n:i32 = ARG 0\n%z:i32 = CONSTANT 0\n%c:i1 = SETCC lt, %n, %z\nBRCOND %c, %bb.1, %bb.2\nbb.1:\nBR %bb.2\nbb.2:\nRET";
        assert!(forward(diamond));
        assert!(forward("bb.0:\nRET"));
        let looped = "bb.0:\n%n:i32 = ARG 0\nBR %bb.1\nbb.1:\n%z:i32 = CONSTANT 0\n%c:i1 = SETCC lt, %n, %z\nBRCOND %c, %bb.1, %bb.2\nbb.2:\nRET";
        assert!(!forward(looped));
        let back = "bb.0:\n%n:i32 = ARG 0\nBR %bb.1\nbb.1:\n%z:i32 = CONSTANT 0\n%c:i1 = SETCC lt, %n, %z\nBRCOND %c, %bb.2, %bb.3\nbb.2:\nBR %bb.1\nbb.3:\nRET";
        assert!(!forward(back));
        let renumbered = "bb.0:\nBR %bb.2\nbb.2:\nRET";
        assert!(!forward(renumbered));
    }
}
