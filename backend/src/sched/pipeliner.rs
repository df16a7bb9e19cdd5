//! Swing modulo scheduling (`machine-pipeliner`, cicc-instruction-scheduling.txt
//! "MachinePipeliner"): overlaps the iterations of a single-block loop on SSA machine
//! code, before PHI elimination.
//!
//! 1. The loop: a block that branches to itself, entered from one preheader, leaving
//!    to one exit block; nothing in it that must stay in order with everything
//!    (calls, barriers, atomics, volatile or warp-synchronous instructions).
//! 2. The data dependence graph: the list scheduler's graph of the body ([`Dag`]) plus
//!    loop-carried edges: from the instruction computing a PHI's next value to every
//!    reader of the PHI (distance 1, or more through chains of PHIs), and between
//!    memory accesses of consecutive iterations that may touch the same bytes
//!    (`pipeliner-prune-loop-carried` uses the alias rules, else every pair with a
//!    store is ordered). `pipeliner-enable-copytophi` keeps a copy feeding a PHI after
//!    the PHI's readers.
//! 3. MII = max(RecMII, ResMII). RecMII: the smallest II at which no recurrence has
//!    more latency than II x its distance (longest-path feasibility, binary search);
//!    ResMII: per functional unit, the busy cycles the description's `issue` figures
//!    add up to, and the instruction count over the issue width.
//! 4. II search from MII over `pipeliner-ii-search-range` (or exactly
//!    `pipeliner-force-ii`). With `pipeliner-stage-latency` N (this backend's own knob;
//!    0, off, by default) a dependence counts at most N IIs at each II: a global load
//!    takes 400+ cycles, which no schedule of at most `pipeliner-max-stages` stages
//!    covers, so its reader is placed a stage or two later instead, and each warp has
//!    the loads of several iterations in flight while warp switching hides the rest
//!    (RecMII keeps the full latencies: a recurrence through memory stays too slow).
//!    ASAP/ALAP at that II, nodes ordered recurrences first, then
//!    by mobility, and each placed in the first free slot of the modulo reservation
//!    table within the window its placed neighbours allow. The exit test's inputs must
//!    land in stage 0 (so no iteration starts that the input would not run). Stage
//!    count at most `pipeliner-max-stages` + 1; with `pipeliner-register-pressure`,
//!    the kernel's registers (MaxLive of the modulo schedule plus the values live into
//!    the loop; [`kernel_pressure`]) within the target less
//!    `pipeliner-register-pressure-margin` percent. The success remark reports them.
//! 5. Code: a prologue of S-1 steps, each starting one more iteration and testing its
//!    exit condition (a loop that ends early drains what it started in an epilogue of
//!    its own: this is the guard for trip counts below the stage count), the kernel
//!    (one step of every stage; values that live longer than a step travel through new
//!    PHIs, the SSA form of modulo variable expansion), and the epilogue after it. The
//!    exit block gets PHIs joining the epilogues.
//!
//! 6. Profitability (this backend's own step; `pipeliner-skip-hidden-latency`): a warp
//!    scheduler hides one warp's latency by issuing from the others. If the warps the
//!    function's registers let reside per scheduler (the description's occupancy
//!    profile over MRPA's peak), each issuing its ResMII cycles per iteration, cover the
//!    iteration's critical path, the loop already runs at its issue rate and pipelining
//!    would only add code and the copies that carry values between stages (measured by
//!    `scripts/sched-loops.sh`: 22 -> 26 SASS instructions per iteration on sm_80, 21 ->
//!    29 on sm_90, for `tests/sched/sqrt_sum_f32.mir`). Loops waiting on memory, whose
//!    paths are hundreds of cycles, stay candidates.
//!
//! `--remarks pipeliner` gives one line per loop in the reference's words. With
//! `pipeliner-annotate-for-testing` the schedule is reported per instruction and the
//! loop left as it was.


use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use target_desc::tables::{SmTables, TargetTables};

use crate::machine::pressure::PressureSets;
use crate::mir::{opcode_info, Block, Function, Inst, Loc, Module, Opcode, Operand, ValueId};
use crate::options::Options;

use super::dag::{access, region, Dag, MemoryModel};
use super::model::{ordering, Ordering, SchedModel};

#[derive(Default)]
pub struct PipelinerStats {
    pub loops: usize,
    pub pipelined: usize,
    pub annotated: usize,
    pub remarks: Vec<(String, Loc, String)>,
}

/// Knob values, read once.
#[derive(Clone, Copy, Debug)]
pub struct PipelinerKnobs {
    pub max_mii: u32,
    pub force_ii: u32,
    pub max_stages: u32,
    pub prune_deps: bool,
    pub prune_loop_carried: bool,
    pub ignore_recmii: bool,
    pub show_mask: bool,
    pub dbg_res: bool,
    pub annotate: bool,
    pub search_range: u32,
    pub register_pressure: bool,
    pub pressure_margin: u32,
    pub copy_to_phi: bool,
    pub issue_width: u32,
    /// `pipeliner-skip-hidden-latency`: leave a loop whose latency the resident warps
    /// already hide.
    pub skip_hidden_latency: bool,
    /// `pipeliner-stage-latency`: schedule each dependence as if its latency were at
    /// most this many stages of II (0: the model's latencies).
    pub stage_latency: u32,
}

impl PipelinerKnobs {
    pub fn from(options: &Options, tables: &TargetTables) -> PipelinerKnobs {
        let int = |n: &str, d: i64| options.int(n).unwrap_or(d).max(0) as u32;
        let flag = |n: &str, d: bool| options.flag(n).unwrap_or(d);
        let width = int("pipeliner-force-issue-width", 0);
        PipelinerKnobs {
            max_mii: int("pipeliner-max-mii", 27),
            force_ii: int("pipeliner-force-ii", 0),
            max_stages: int("pipeliner-max-stages", 3),
            prune_deps: flag("pipeliner-prune-deps", true),
            prune_loop_carried: flag("pipeliner-prune-loop-carried", true),
            ignore_recmii: flag("pipeliner-ignore-recmii", false),
            show_mask: flag("pipeliner-show-mask", false),
            dbg_res: flag("pipeliner-dbg-res", false),
            annotate: flag("pipeliner-annotate-for-testing", false),
            search_range: int("pipeliner-ii-search-range", 10),
            register_pressure: flag("pipeliner-register-pressure", false),
            pressure_margin: int("pipeliner-register-pressure-margin", 5).min(100),
            copy_to_phi: flag("pipeliner-enable-copytophi", true),
            skip_hidden_latency: flag("pipeliner-skip-hidden-latency", true),
            stage_latency: int("pipeliner-stage-latency", 0),
            issue_width: if width > 0 {
                width
            } else {
                u32::from(tables.scheduling.issue_width).max(1)
            },
        }
    }
}

pub fn run(
    module: &mut Module,
    tables: &TargetTables,
    sm: &SmTables,
    options: &Options,
) -> PipelinerStats {
    let model = SchedModel::new(tables, sm);
    let knobs = PipelinerKnobs::from(options, tables);
    let sets = PressureSets::new(tables, sm);
    let mut stats = PipelinerStats::default();
    for f in &mut module.functions {
        if !f.ssa {
            continue;
        }
        // Most functions have no single-block loop: skip the index for them.
        let has_self_loop = f.blocks.iter().any(|bl| {
            bl.insts
                .last()
                .is_some_and(|t| t.block_operands().any(|n| n == bl.number))
        });
        if !has_self_loop {
            continue;
        }
        let mut index = FunctionIndex::new(f, tables);
        // MRPA of the function (before any of its loops is rewritten), made when a loop
        // first gets a schedule.
        let mut mrpa: Option<Mrpa> = None;
        // Loops are rewritten in place (their blocks left where they are, so indices
        // stay valid) and the new blocks spliced in at the end, all at once.
        let mut replacements: Vec<(usize, Vec<Block>)> = Vec::new();
        for b in 0..f.blocks.len() {
            let Some(shape) = loop_shape(f, b, tables, &index) else {
                continue;
            };
            stats.loops += 1;
            let label = f.blocks[b].label();
            let loc = f.blocks[b].loc;
            let outcome = pipeline_loop(f, &shape, &model, &sets, options, &knobs, &mut mrpa, &mut index);
            let message = match outcome {
                Ok(Done::Pipelined {
                    ii,
                    mii,
                    rec,
                    res,
                    stages,
                    blocks,
                    extra,
                }) => {
                    stats.pipelined += 1;
                    replacements.push((b, blocks));
                    format!("{label}: Pipelined succesfully! II={ii}, MII={mii} (RecMII={rec}, ResMII={res}), stages={stages}{extra}")
                }
                Ok(Done::Annotated {
                    ii,
                    mii,
                    rec,
                    res,
                    stages,
                    lines,
                }) => {
                    stats.annotated += 1;
                    for (loc, line) in lines {
                        stats.remarks.push((f.name.clone(), loc, line));
                    }
                    format!("{label}: schedule found (annotated, not rewritten): II={ii}, MII={mii} (RecMII={rec}, ResMII={res}), stages={stages}")
                }
                Err(why) => format!("{label}: not pipelined: {why}"),
            };
            stats.remarks.push((f.name.clone(), loc, message));
        }
        if !replacements.is_empty() {
            let old = std::mem::take(&mut f.blocks);
            let mut replacements = replacements.into_iter().peekable();
            for (b, block) in old.into_iter().enumerate() {
                match replacements.peek() {
                    Some((r, _)) if *r == b => f.blocks.extend(
                        replacements
                            .next()
                            .map(|(_, blocks)| blocks)
                            .unwrap_or_default(),
                    ),
                    _ => f.blocks.push(block),
                }
            }
        }
    }
    super::dag::release_large_scratch();
    stats
}

/// What the pipeliner looks up across a function, built once so that each loop costs
/// time in its own size: block numbers to indices, predecessors, the blocks reading
/// each value, and the value names in use. The last two are per value, so they wait
/// until a loop passes the checks that need nothing of the function
/// ([`FunctionIndex::complete`]): a loop of thousands of instructions is refused as
/// too large without them.
struct FunctionIndex {
    index_of: HashMap<u32, usize>,
    /// Block number -> the numbers of the blocks branching to it.
    preds: HashMap<u32, Vec<u32>>,
    /// Value -> (block index, whether the read is a PHI's) for every read.
    reads: HashMap<u32, Vec<(usize, bool)>>,
    names: Names,
    /// Whether `reads` and `names` are built.
    complete: bool,
}

impl FunctionIndex {
    fn new(f: &Function, tables: &TargetTables) -> FunctionIndex {
        let mut preds: HashMap<u32, Vec<u32>> = HashMap::default();
        for block in &f.blocks {
            for inst in block.insts.iter().filter(|i| is_terminator(i, tables)) {
                for t in inst.block_operands() {
                    preds.entry(t).or_default().push(block.number);
                }
            }
        }
        for p in preds.values_mut() {
            p.sort_unstable();
            p.dedup();
        }
        FunctionIndex {
            index_of: f
                .blocks
                .iter()
                .enumerate()
                .map(|(i, b)| (b.number, i))
                .collect(),
            preds,
            reads: HashMap::default(),
            names: Names::default(),
            complete: false,
        }
    }

    /// Builds `reads` and `names` of `f`, which no loop has been rewritten in yet.
    fn complete(&mut self, f: &Function, tables: &TargetTables) {
        if std::mem::replace(&mut self.complete, true) {
            return;
        }
        for (bi, block) in f.blocks.iter().enumerate() {
            for inst in &block.insts {
                let phi = inst.is_phi(tables);
                for v in inst.uses() {
                    self.reads.entry(v.0).or_default().push((bi, phi));
                }
            }
        }
        self.names = crate::mir::NameSet::of(f);
    }
}

/// Whether `v` is read in a block other than `block`, by [`FunctionIndex::reads`] (for
/// a loop's value: read after the loop, exit PHIs included). A function of the field,
/// not a method, so callers can hold the index's other fields mutably.
fn read_outside(reads: &HashMap<u32, Vec<(usize, bool)>>, v: u32, block: usize) -> bool {
    reads.get(&v).is_some_and(|r| r.iter().any(|&(bi, _)| bi != block))
}

/// A single-block loop.
struct Shape {
    block: usize,
    preheader: usize,
    exit: usize,
    region: std::ops::Range<usize>,
}

fn is_terminator(inst: &Inst, tables: &TargetTables) -> bool {
    opcode_info(inst.opcode, tables)
        .is_some_and(|o| o.props & target_desc::tables::props::TERMINATOR != 0)
}

/// `b` as a single-block loop: it ends in one terminator naming itself and one other
/// block, and exactly one other block enters it.
fn loop_shape(
    f: &Function,
    b: usize,
    tables: &TargetTables,
    index: &FunctionIndex,
) -> Option<Shape> {
    let block = &f.blocks[b];
    let region = region(block, tables);
    if region.end + 1 != block.insts.len() {
        return None;
    }
    let term = block.insts.last()?;
    let targets: Vec<u32> = term.block_operands().collect();
    if targets.len() != 2 || !targets.contains(&block.number) || targets[0] == targets[1] {
        return None;
    }
    let exit_number = *targets.iter().find(|&&t| t != block.number)?;
    let exit = *index.index_of.get(&exit_number)?;
    let preds: Vec<u32> = index
        .preds
        .get(&block.number)?
        .iter()
        .copied()
        .filter(|&p| p != block.number)
        .collect();
    let [preheader] = preds.as_slice() else {
        return None;
    };
    let preheader = *index.index_of.get(preheader)?;
    Some(Shape {
        block: b,
        preheader,
        exit,
        region,
    })
}

enum Done {
    Pipelined {
        ii: u32,
        mii: u32,
        rec: u32,
        res: u32,
        stages: u32,
        blocks: Vec<Block>,
        extra: String,
    },
    Annotated {
        ii: u32,
        mii: u32,
        rec: u32,
        res: u32,
        stages: u32,
        lines: Vec<(Loc, String)>,
    },
}

/// One edge of the loop's graph: `to` starts at least `latency - II * distance` cycles
/// after `from`.
#[derive(Copy, Clone, Debug)]
struct LoopEdge {
    from: usize,
    to: usize,
    latency: i64,
    distance: i64,
}

/// A loop PHI: result, value on entry, value from the previous iteration.
#[derive(Clone, Copy, Debug)]
struct LoopPhi {
    value: ValueId,
    init: ValueId,
    latch: ValueId,
}

fn phis_of(f: &Function, shape: &Shape, tables: &TargetTables) -> Result<Vec<LoopPhi>, String> {
    let b_number = f.blocks[shape.block].number;
    let p_number = f.blocks[shape.preheader].number;
    let mut phis = Vec::new();
    for inst in f.blocks[shape.block]
        .insts
        .iter()
        .take_while(|i| i.is_phi(tables))
    {
        let mut init = None;
        let mut latch = None;
        for pair in inst.operands.chunks(2) {
            match pair {
                [Operand::Value(v), Operand::Block(p)] if *p == b_number => latch = Some(*v),
                [Operand::Value(v), Operand::Block(p)] if *p == p_number => init = Some(*v),
                _ => {
                    return Err(
                        "a PHI has an operand that is not a value from the preheader or the loop"
                            .into(),
                    )
                }
            }
        }
        match (inst.defs.first(), init, latch) {
            (Some(&value), Some(init), Some(latch)) => phis.push(LoopPhi { value, init, latch }),
            _ => return Err("a PHI lacks its preheader or loop operand".into()),
        }
    }
    Ok(phis)
}

/// The smallest II in `0..=limit` at which no cycle of `edges` has positive slack
/// (`latency - II * distance` summed), or `None` when even `limit` has one.
fn rec_mii(n: usize, edges: &[LoopEdge], limit: u32) -> Option<u32> {
    let feasible = |ii: u32| longest_paths(n, edges, ii, &vec![0; n]).is_some();
    if !feasible(limit) {
        return None;
    }
    let (mut lo, mut hi) = (0u32, limit);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if feasible(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// Longest start times from `start` under the edges' weights at `ii` (Bellman-Ford);
/// `None` when a cycle keeps growing them.
fn longest_paths(n: usize, edges: &[LoopEdge], ii: u32, start: &[i64]) -> Option<Vec<i64>> {
    let mut t = start.to_vec();
    for round in 0..=n {
        let mut changed = false;
        for e in edges {
            let w = e.latency - i64::from(ii) * e.distance;
            if t[e.from] + w > t[e.to] {
                t[e.to] = t[e.from] + w;
                changed = true;
            }
        }
        if !changed {
            return Some(t);
        }
        if round == n {
            return None;
        }
    }
    Some(t)
}

/// A schedule: each node's cycle (from 0).
struct Schedule {
    ii: u32,
    cycle: Vec<i64>,
    stages: u32,
    mask: Vec<Vec<u32>>,
}

struct Node {
    insts: std::ops::Range<usize>,
    /// (functional unit, busy cycles) per instruction.
    uses: Vec<(usize, u32)>,
    /// Must be in stage 0 (computes what the exit test reads).
    exit_input: bool,
}

#[allow(clippy::too_many_arguments)]
fn try_ii(
    ii: u32,
    nodes: &[Node],
    edges: &[LoopEdge],
    preds: &[Vec<usize>],
    succs: &[Vec<usize>],
    order: &[usize],
    units: usize,
    issue_width: u32,
    top_down: bool,
) -> Result<Schedule, &'static str> {
    let n = nodes.len();
    let asap = longest_paths(n, edges, ii, &vec![0; n]).ok_or("unable to find schedule")?;
    let mut cycle: Vec<Option<i64>> = vec![None; n];
    let slots = ii as usize;
    // The modulo reservation table: busy cycles per unit and issue slot use per slot.
    let mut busy = vec![vec![0u32; slots]; units];
    let mut issued = vec![0u32; slots];
    for &v in order {
        let early = preds[v]
            .iter()
            .filter_map(|&e| {
                cycle[edges[e].from]
                    .map(|c| c + edges[e].latency - i64::from(ii) * edges[e].distance)
            })
            .max();
        let late = succs[v]
            .iter()
            .filter_map(|&e| {
                cycle[edges[e].to].map(|c| c - edges[e].latency + i64::from(ii) * edges[e].distance)
            })
            .min();
        let span = i64::from(ii);
        let mut candidates: Vec<i64> = match (early, late) {
            (Some(e), None) => (e..e + span).collect(),
            // Below successors only: as late as possible (short lifetimes), except
            // top-down, or for the exit test's inputs, which want the first stage.
            (None, Some(l)) if top_down || nodes[v].exit_input => {
                (asap[v].min(l).max(l - span + 1)..=l).collect()
            }
            (None, Some(l)) => (l - span + 1..=l).rev().collect(),
            (Some(e), Some(l)) => (e..=l.min(e + span - 1)).collect(),
            (None, None) => (asap[v]..asap[v] + span).collect(),
        };
        if nodes[v].exit_input {
            candidates.sort_unstable();
        }
        let fits = |c: i64, busy: &Vec<Vec<u32>>, issued: &Vec<u32>| -> bool {
            let mut need_busy: HashMap<(usize, usize), u32> = HashMap::default();
            let mut need_issue: HashMap<usize, u32> = HashMap::default();
            for (k, &(unit, cycles)) in nodes[v].uses.iter().enumerate() {
                if cycles > ii {
                    return false;
                }
                *need_issue.entry((c + k as i64).rem_euclid(slots as i64) as usize).or_default() += 1;
                for j in 0..cycles as usize {
                    *need_busy
                        .entry((unit, (c + (k + j) as i64).rem_euclid(slots as i64) as usize))
                        .or_default() += 1;
                }
            }
            need_busy.iter().all(|(&(u, s), &k)| busy[u][s] + k <= 1)
                && need_issue
                    .iter()
                    .all(|(&s, &k)| issued[s] + k <= issue_width)
        };
        let Some(c) = candidates
            .iter()
            .copied()
            .find(|&c| fits(c, &busy, &issued))
        else {
            return Err("unable to find schedule");
        };
        for (k, &(unit, cycles)) in nodes[v].uses.iter().enumerate() {
            issued[(c + k as i64).rem_euclid(slots as i64) as usize] += 1;
            for j in 0..cycles as usize {
                busy[unit][(c + (k + j) as i64).rem_euclid(slots as i64) as usize] += 1;
            }
        }
        cycle[v] = Some(c);
    }
    let cycle: Vec<i64> = cycle.into_iter().map(|c| c.unwrap_or(0)).collect();
    let first = cycle.iter().copied().min().unwrap_or(0);
    let cycle: Vec<i64> = cycle.iter().map(|c| c - first).collect();
    if nodes
        .iter()
        .zip(&cycle)
        .any(|(n, c)| n.exit_input && *c >= i64::from(ii))
    {
        return Err("unable to find schedule");
    }
    let last = cycle.iter().copied().max().unwrap_or(0);
    Ok(Schedule {
        ii,
        stages: (last / i64::from(ii)) as u32,
        cycle,
        mask: busy,
    })
}

/// MRPA of a function whose loops are being pipelined, and what the pipeliner reads of it.
struct Mrpa {
    pressure: crate::machine::pressure::Pressure,
    /// The warps per warp scheduler that the function's registers allow (its peak
    /// against the description's occupancy profile); 0 when the SM has no profile.
    warps: u32,
}

impl Mrpa {
    fn new(f: &Function, tables: &TargetTables, sets: &PressureSets) -> Mrpa {
        let cfg = crate::machine::cfg::Cfg::new(f, tables);
        let pressure = crate::machine::pressure::Pressure::compute(f, &cfg.preds, sets, tables);
        let warps = sets.occupancy.as_ref().map_or(0, |o| super::list::warps_for(Some(o), pressure.function_peak(0)) / o.sub_partitions.max(1));
        Mrpa { pressure, warps }
    }
}

#[allow(clippy::too_many_arguments)]
fn pipeline_loop(
    f: &mut Function,
    shape: &Shape,
    model: &SchedModel<'_>,
    sets: &PressureSets,
    options: &Options,
    knobs: &PipelinerKnobs,
    mrpa: &mut Option<Mrpa>,
    index: &mut FunctionIndex,
) -> Result<Done, String> {
    let tables = model.tables;
    let phis = phis_of(f, shape, tables)?;
    let region = &f.blocks[shape.block].insts[shape.region.clone()];
    if region.is_empty() {
        return Err("Invalid Minimal Initiation Interval: 0".into());
    }
    if region
        .iter()
        .any(|i| ordering(i, tables) == Ordering::Barrier)
    {
        return Err("unsupported instruction in the loop (call, barrier, fence, atomic, volatile access or warp-synchronous instruction)".into());
    }
    if region.len() > 1000 {
        return Err("loop too large (more than 1000 instructions)".into());
    }
    let body: Vec<Inst> = region.to_vec();
    index.complete(f, tables);
    let memory = MemoryModel::new(model);
    let dag = Dag::build(f, &body, shape.region.start, model, &memory);
    let n = dag.len();
    let mut unit_of_inst = vec![0usize; body.len()];
    for (u, r) in dag.units.iter().enumerate() {
        for i in r.clone() {
            unit_of_inst[i] = u;
        }
    }
    let mut def_unit: HashMap<u32, usize> = HashMap::default();
    for (i, inst) in body.iter().enumerate() {
        for d in &inst.defs {
            def_unit.insert(d.0, unit_of_inst[i]);
        }
    }
    let phi_index: HashMap<u32, usize> = phis
        .iter()
        .enumerate()
        .map(|(k, p)| (p.value.0, k))
        .collect();
    let mut edges: Vec<LoopEdge> = Vec::new();
    for (from, succ) in dag.succs.iter().enumerate() {
        for e in succ {
            edges.push(LoopEdge {
                from,
                to: e.other as usize,
                latency: i64::from(e.latency),
                distance: 0,
            });
        }
    }
    // Loop-carried register edges: through a PHI (and chains of them) to its reader.
    let carried = |v: ValueId| -> Option<(usize, i64)> {
        let (mut x, mut d) = (v, 0i64);
        while let Some(&k) = phi_index.get(&x.0) {
            x = phis[k].latch;
            d += 1;
            if d as usize > phis.len() {
                return None;
            }
        }
        def_unit.get(&x.0).map(|&u| (u, d))
    };
    let mut readers_of_phi: Vec<Vec<usize>> = vec![Vec::new(); phis.len()];
    for (i, inst) in body.iter().enumerate() {
        let to = unit_of_inst[i];
        for v in inst.uses() {
            if let Some(&k) = phi_index.get(&v.0) {
                readers_of_phi[k].push(to);
                if let Some((from, d)) = carried(v) {
                    edges.push(LoopEdge {
                        from,
                        to,
                        latency: i64::from(dag.latency[from]),
                        distance: d,
                    });
                }
            }
        }
    }
    if !knobs.prune_deps {
        // Unpruned: every PHI's next value before every PHI reader of the next iteration.
        for p in &phis {
            if let Some(&from) = def_unit.get(&p.latch.0) {
                for readers in &readers_of_phi {
                    for &to in readers {
                        edges.push(LoopEdge {
                            from,
                            to,
                            latency: 0,
                            distance: 1,
                        });
                    }
                }
            }
        }
    }
    if knobs.copy_to_phi {
        // CopyToPhi: a copy producing a PHI's next value goes after the PHI's readers
        // that come before it, so the old and new value need not both be live.
        for (k, p) in phis.iter().enumerate() {
            if let Some(&m) = def_unit.get(&p.latch.0) {
                if body[dag.units[m].start].is_copy(tables) {
                    for &r in &readers_of_phi[k] {
                        if r < m {
                            edges.push(LoopEdge {
                                from: r,
                                to: m,
                                latency: 0,
                                distance: 0,
                            });
                        }
                    }
                }
            }
        }
    }
    // Loop-carried memory order: a later access of one iteration before an earlier one
    // of the next, when either stores and they may overlap.
    let mem: Vec<(usize, bool, Option<super::dag::Access>)> = dag
        .units
        .iter()
        .enumerate()
        .filter_map(|(u, r)| {
            let inst = &body[r.start];
            match ordering(inst, tables) {
                Ordering::Load => Some((u, false, access(f, inst, tables))),
                Ordering::Store => Some((u, true, access(f, inst, tables))),
                // Unpruned, loads of memory nothing writes are ordered too.
                Ordering::Pure if !knobs.prune_loop_carried => {
                    access(f, inst, tables).map(|a| (u, false, Some(a)))
                }
                _ => None,
            }
        })
        .collect();
    if mem.len() > 256 {
        return Err("too many memory accesses in the loop (more than 256)".into());
    }
    for (i, a) in mem.iter().enumerate() {
        for b in &mem[i..] {
            if (a.1 || b.1)
                && (!knobs.prune_loop_carried
                    || memory.may_alias(a.2.as_ref(), b.2.as_ref()))
            {
                edges.push(LoopEdge {
                    from: b.0,
                    to: a.0,
                    latency: 0,
                    distance: 1,
                });
            }
        }
    }
    // Resources.
    let units = model.unit_count();
    let term = f.blocks[shape.block]
        .insts
        .last()
        .cloned()
        .ok_or("empty loop block")?;
    let exit_inputs: HashSet<usize> = term
        .uses()
        .filter_map(|v| def_unit.get(&v.0).copied())
        .collect();
    let nodes: Vec<Node> = dag
        .units
        .iter()
        .enumerate()
        .map(|(u, r)| Node {
            insts: r.clone(),
            uses: body[r.clone()].iter().map(|i| model.unit(f, i)).collect(),
            exit_input: exit_inputs.contains(&u),
        })
        .collect();
    let mut per_unit = vec![0u32; units];
    for node in &nodes {
        for &(u, c) in &node.uses {
            per_unit[u] += c;
        }
    }
    let res_mii = per_unit
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max((body.len() as u32).div_ceil(knobs.issue_width));
    let rec = if knobs.ignore_recmii {
        0
    } else {
        rec_mii(n, &edges, knobs.max_mii.max(res_mii) + 1).ok_or_else(|| format!("Minimal Initiation Interval too large: MII > SwpMaxMii ({}). Refer to -pipeliner-max-mii.", knobs.max_mii))?
    };
    let mii = rec.max(res_mii);
    if mii == 0 {
        return Err("Invalid Minimal Initiation Interval: 0".into());
    }
    if mii > knobs.max_mii {
        return Err(format!("Minimal Initiation Interval too large: MII ({mii}) > SwpMaxMii ({}). Refer to -pipeliner-max-mii.", knobs.max_mii));
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in edges.iter().enumerate() {
        preds[e.to].push(k);
        succs[e.from].push(k);
    }
    let in_recurrence = recurrences(n, &edges);
    let candidates: Vec<u32> = if knobs.force_ii > 0 {
        vec![knobs.force_ii]
    } else {
        (mii..mii + knobs.search_range.max(1)).collect()
    };
    let mut failure = String::from("Unable to find schedule");
    let mut found = None;
    let model_edges = edges;
    for ii in candidates {
        // Dependences longer than the stage budget are scheduled as that budget; the
        // critical path below and the profitability step use the full latencies.
        let capped: Vec<LoopEdge>;
        let edges: &[LoopEdge] = if knobs.stage_latency > 0 {
            let cap = i64::from(ii) * i64::from(knobs.stage_latency);
            capped = model_edges.iter().map(|e| LoopEdge { latency: e.latency.min(cap), ..*e }).collect();
            &capped
        } else {
            &model_edges
        };
        let Some(asap) = longest_paths(n, edges, ii, &vec![0; n]) else {
            continue;
        };
        let top = asap.iter().copied().max().unwrap_or(0);
        let mut alap: Vec<i64> = vec![top; n];
        // ALAP: latest starts, by the same relaxation on reversed edges.
        let reversed: Vec<LoopEdge> = edges
            .iter()
            .map(|e| LoopEdge {
                from: e.to,
                to: e.from,
                latency: e.latency,
                distance: e.distance,
            })
            .collect();
        if let Some(neg) = longest_paths(n, &reversed, ii, &vec![-top; n]) {
            alap = neg.iter().map(|t| -t).collect();
        }
        // The swing order first; where it boxes a node in between neighbours placed on
        // both sides, top-down in ASAP order (only predecessors within an iteration
        // are placed before a node; iterative modulo scheduling's order).
        let order = swing_order(n, edges, &asap, &alap, &in_recurrence);
        let attempt = try_ii(
            ii,
            &nodes,
            edges,
            &preds,
            &succs,
            &order,
            units,
            knobs.issue_width,
            false,
        )
        .or_else(|_| {
            let mut top_down: Vec<usize> = (0..n).collect();
            top_down.sort_by_key(|&v| (asap[v], v));
            try_ii(
                ii,
                &nodes,
                edges,
                &preds,
                &succs,
                &top_down,
                units,
                knobs.issue_width,
                true,
            )
        });
        match attempt {
            Err(why) => failure = capitalize(why),
            Ok(s) if s.stages == 0 => {
                return Err("No need to pipeline - no overlapped iterations in schedule.".into());
            }
            Ok(s) if s.stages > knobs.max_stages => {
                failure = format!("Too many stages in schedule: numStages ({}) > SwpMaxStages ({}). Refer to -pipeliner-max-stages.", s.stages, knobs.max_stages);
            }
            Ok(s) => {
                if knobs.register_pressure {
                    let live_in = mrpa.get_or_insert_with(|| Mrpa::new(f, tables, sets)).pressure.live_in_of(shape.block);
                    let read_after = |v: u32| read_outside(&index.reads, v, shape.block);
                    let estimate = kernel_pressure(f, &read_after, &body, &unit_of_inst, &s, &phis, &def_unit, live_in, sets);
                    let target = sets.targets(f, options)[0].max(0) as u64;
                    let limit = target * u64::from(100 - knobs.pressure_margin) / 100;
                    if u64::from(estimate) > limit {
                        failure = format!("register pressure of the schedule ({estimate}) above the limit ({limit}, the target less {}%)", knobs.pressure_margin);
                        continue;
                    }
                }
                found = Some(s);
                break;
            }
        }
    }
    let Some(schedule) = found else {
        return Err(failure);
    };
    let stages = schedule.stages + 1;
    // One iteration alone takes its critical path; pipelined, one starts every II.
    let asap0 = longest_paths(
        n,
        &model_edges
            .iter()
            .copied()
            .filter(|e| e.distance == 0)
            .collect::<Vec<_>>(),
        0,
        &vec![0; n],
    )
    .unwrap_or_else(|| vec![0; n]);
    let critical = (0..n)
        .map(|v| asap0[v] + i64::from(dag.latency[v]))
        .max()
        .unwrap_or(0);
    let live_in = mrpa.get_or_insert_with(|| Mrpa::new(f, tables, sets)).pressure.live_in_of(shape.block);
    let read_after = |v: u32| read_outside(&index.reads, v, shape.block);
    let pressure = kernel_pressure(f, &read_after, &body, &unit_of_inst, &schedule, &phis, &def_unit, live_in, sets);
    let mut extra = format!(", iteration critical path {critical} cycles, kernel register pressure {pressure}");
    if knobs.annotate || knobs.dbg_res {
        extra.push_str(&format!("; graph: {n} nodes, {} edges", model_edges.len()));
    }
    if knobs.dbg_res {
        let names = model.tables.scheduling.units;
        let usage: Vec<String> = per_unit
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(u, c)| format!("{}={c}", names.get(u).unwrap_or(&"?")))
            .collect();
        extra.push_str(&format!("; resources per iteration: {}", usage.join(", ")));
    }
    if knobs.show_mask {
        let names = model.tables.scheduling.units;
        let rows: Vec<String> = schedule
            .mask
            .iter()
            .enumerate()
            .filter(|(_, row)| row.iter().any(|&x| x > 0))
            .map(|(u, row)| {
                format!(
                    "{} [{}]",
                    names.get(u).unwrap_or(&"?"),
                    row.iter()
                        .map(|&x| if x > 0 { '#' } else { '.' })
                        .collect::<String>()
                )
            })
            .collect();
        extra.push_str(&format!("; mask: {}", rows.join(" ")));
    }
    if knobs.annotate {
        let mut lines = Vec::new();
        for (u, node) in nodes.iter().enumerate() {
            for i in node.insts.clone() {
                let c = schedule.cycle[u];
                lines.push((
                    body[i].loc,
                    format!(
                        "{}: stage {}, cycle {}",
                        body[i].opcode.name(tables),
                        c / i64::from(schedule.ii),
                        c
                    ),
                ));
            }
        }
        if let Some((_, l)) = lines.last_mut() {
            l.push_str(&extra);
        }
        return Ok(Done::Annotated {
            ii: schedule.ii,
            mii,
            rec,
            res: res_mii,
            stages,
            lines,
        });
    }
    // The warps per scheduler, each issuing ResMII cycles per iteration, against one
    // iteration's path: if they cover it, the scheduler never waits.
    let warps = if knobs.skip_hidden_latency { mrpa.get_or_insert_with(|| Mrpa::new(f, tables, sets)).warps } else { 0 };
    if warps > 0 && i64::from(warps) * i64::from(res_mii) >= critical {
        return Err(format!(
            "latency already hidden: {warps} warps per scheduler x {res_mii} cycles issued per iteration >= iteration critical path {critical} cycles (the schedule found: II {} in {stages} stages). Refer to -pipeliner-skip-hidden-latency.",
            schedule.ii
        ));
    }
    let blocks = expand(f, shape, &phis, &body, &dag.units, &schedule, model, index)?;
    Ok(Done::Pipelined {
        ii: schedule.ii,
        mii,
        rec,
        res: res_mii,
        stages,
        blocks,
        extra,
    })
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The swing order (Llosa et al., the SMS node ordering): recurrences first, most
/// critical first, then the other nodes; within a set, alternate sweeps down from
/// nodes already ordered (deepest first) and up towards them (earliest first), so that
/// a node is placed next to neighbours on one side only wherever the graph allows.
/// Ordering follows edges within one iteration.
fn swing_order(
    n: usize,
    edges: &[LoopEdge],
    asap: &[i64],
    alap: &[i64],
    in_recurrence: &[(bool, usize)],
) -> Vec<usize> {
    let mut preds = vec![Vec::new(); n];
    let mut succs = vec![Vec::new(); n];
    for e in edges.iter().filter(|e| e.distance == 0 && e.from != e.to) {
        preds[e.to].push(e.from);
        succs[e.from].push(e.to);
    }
    let top = asap.iter().copied().max().unwrap_or(0);
    let height: Vec<i64> = alap.iter().map(|a| top - a).collect();
    let mobility: Vec<i64> = (0..n).map(|v| (alap[v] - asap[v]).max(0)).collect();
    // Sets: each recurrence (by component), most constrained first (least mobility,
    // then earliest), then everything else.
    let mut comps: Vec<usize> = in_recurrence
        .iter()
        .filter(|(r, _)| *r)
        .map(|(_, c)| *c)
        .collect();
    comps.sort_unstable();
    comps.dedup();
    let key = |c: usize| {
        (0..n)
            .filter(|&v| in_recurrence[v] == (true, c))
            .map(|v| (mobility[v], asap[v]))
            .min()
            .unwrap_or((0, 0))
    };
    comps.sort_by_key(|&c| (key(c), c));
    let mut sets: Vec<Vec<usize>> = comps
        .iter()
        .map(|&c| (0..n).filter(|&v| in_recurrence[v] == (true, c)).collect())
        .collect();
    sets.push((0..n).filter(|&v| !in_recurrence[v].0).collect());
    let mut ordered = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for set in sets {
        let mut in_set = vec![false; n];
        for &v in &set {
            in_set[v] = true;
        }
        loop {
            let left: Vec<usize> = set.iter().copied().filter(|&v| !ordered[v]).collect();
            if left.is_empty() {
                break;
            }
            // Start below ordered nodes (top-down), above them (bottom-up), or at the
            // set's deepest node.
            let below: Vec<usize> = left
                .iter()
                .copied()
                .filter(|&v| preds[v].iter().any(|&p| ordered[p]))
                .collect();
            let above: Vec<usize> = left
                .iter()
                .copied()
                .filter(|&v| succs[v].iter().any(|&s| ordered[s]))
                .collect();
            let (mut ready, mut top_down) = if !below.is_empty() {
                (below, true)
            } else if !above.is_empty() {
                (above, false)
            } else {
                let v = *left
                    .iter()
                    .max_by_key(|&&v| (asap[v], std::cmp::Reverse(v)))
                    .unwrap_or(&left[0]);
                (vec![v], false)
            };
            while !ready.is_empty() {
                while !ready.is_empty() {
                    let pick = if top_down {
                        (0..ready.len()).max_by_key(|&i| {
                            (
                                height[ready[i]],
                                -mobility[ready[i]],
                                std::cmp::Reverse(ready[i]),
                            )
                        })
                    } else {
                        (0..ready.len()).max_by_key(|&i| {
                            (
                                asap[ready[i]],
                                -mobility[ready[i]],
                                std::cmp::Reverse(ready[i]),
                            )
                        })
                    }
                    .unwrap_or(0);
                    let v = ready.swap_remove(pick);
                    if ordered[v] {
                        continue;
                    }
                    ordered[v] = true;
                    order.push(v);
                    let next = if top_down { &succs[v] } else { &preds[v] };
                    for &w in next {
                        if in_set[w] && !ordered[w] && !ready.contains(&w) {
                            ready.push(w);
                        }
                    }
                }
                top_down = !top_down;
                ready = set
                    .iter()
                    .copied()
                    .filter(|&v| {
                        !ordered[v]
                            && if top_down {
                                preds[v].iter().any(|&p| ordered[p])
                            } else {
                                succs[v].iter().any(|&s| ordered[s])
                            }
                    })
                    .collect();
            }
        }
    }
    order
}

/// Per node: whether it lies on a cycle of the graph, and its component (Tarjan's
/// strongly connected components, iterative).
fn recurrences(n: usize, edges: &[LoopEdge]) -> Vec<(bool, usize)> {
    let mut adj = vec![Vec::new(); n];
    let mut self_loop = vec![false; n];
    for e in edges {
        adj[e.from].push(e.to);
        if e.from == e.to {
            self_loop[e.from] = true;
        }
    }
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut result: Vec<(bool, usize)> = self_loop.iter().map(|&l| (l, 0)).collect();
    let mut next = 0usize;
    let mut component = 0usize;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if *i < adj[v].len() {
                let w = adj[v][*i];
                *i += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut members = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        members.push(w);
                        if w == v {
                            break;
                        }
                    }
                    let cyclic = members.len() > 1;
                    for m in members {
                        result[m] = (result[m].0 || cyclic, component);
                    }
                    component += 1;
                }
            }
        }
    }
    result
}

/// The general registers the kernel needs: MaxLive of the modulo schedule (Rau's
/// lifetime measure), plus the values live into the loop from outside (`live_in`,
/// MRPA's: what the loop reads but does not compute, and what lives through it).
///
/// A value lives from its definition's cycle to its last reader's (a reader of a PHI
/// it feeds reads it `distance` IIs later, in a later iteration), at least one cycle.
/// In the kernel every cycle `c` of the flat schedule runs at slot `c mod II`, so the
/// values live at a slot are those of every iteration in flight there: the lifetimes
/// are summed over the flat timeline and folded onto the II slots, and the fullest
/// slot is the estimate. Modulo variable expansion gives each of a value's
/// overlapping lifetimes a register of its own, so this is what the kernel's code
/// needs (the check against MRPA of generated kernels is in tests/tests/scheduling.rs).
/// A value read after the loop (`read_after`) must outlive every kernel iteration that
/// may be the last: its latest copy lives until the next copy is made, II cycles
/// later; one read after the loop through a PHI is the copy before that, 2 II.
#[allow(clippy::too_many_arguments)]
fn kernel_pressure(
    f: &Function,
    read_after: &dyn Fn(u32) -> bool,
    body: &[Inst],
    unit_of_inst: &[usize],
    s: &Schedule,
    phis: &[LoopPhi],
    def_unit: &HashMap<u32, usize>,
    live_in: &HashSet<u32>,
    sets: &PressureSets,
) -> u32 {
    let ii = i64::from(s.ii.max(1));
    let phi_index: HashMap<u32, usize> = phis.iter().enumerate().map(|(k, p)| (p.value.0, k)).collect();
    // The value a read stands for and how many iterations later it is read: a PHI
    // reads its latch value one iteration later (a chain of PHIs, one per link).
    let resolve = |v: u32| -> (u32, i64) {
        let (mut x, mut d) = (v, 0i64);
        while let Some(&k) = phi_index.get(&x) {
            x = phis[k].latch.0;
            d += 1;
            if d as usize > phis.len() {
                break;
            }
        }
        (x, d)
    };
    let weight = |v: u32| sets.of(f, ValueId(v)).filter(|(set, _)| *set == 0).map_or(0, |(_, w)| i64::from(w));
    let mut end: HashMap<u32, i64> = HashMap::default();
    let mut invariant: HashSet<u32> = HashSet::default();
    let def_cycle = |x: u32| def_unit.get(&x).map(|&u| s.cycle[u]);
    let live_after = phis.iter().map(|p| p.value.0).chain(body.iter().flat_map(|i| i.defs.iter().map(|d| d.0)));
    for v in live_after.filter(|&v| read_after(v)) {
        let (x, distance) = resolve(v);
        if let Some(at) = def_cycle(x) {
            let e = end.entry(x).or_insert(i64::MIN);
            *e = (*e).max(at + (distance + 1) * ii);
        }
    }
    for (i, inst) in body.iter().enumerate() {
        let at = s.cycle[unit_of_inst[i]];
        for v in inst.uses() {
            let (x, distance) = resolve(v.0);
            if def_unit.contains_key(&x) {
                let e = end.entry(x).or_insert(i64::MIN);
                *e = (*e).max(at + distance * ii);
            } else {
                invariant.insert(x);
            }
        }
    }
    let mut lifetimes: Vec<(i64, i64, i64)> = Vec::new();
    for (i, inst) in body.iter().enumerate() {
        let start = s.cycle[unit_of_inst[i]];
        for d in &inst.defs {
            let w = weight(d.0);
            if w > 0 {
                let stop = end.get(&d.0).copied().unwrap_or(i64::MIN).max(start + 1);
                lifetimes.push((start.max(0), stop.max(1), w));
            }
        }
    }
    let horizon = lifetimes.iter().map(|l| l.1).max().unwrap_or(0).max(0) as usize + 1;
    let mut delta = vec![0i64; horizon + 1];
    for &(start, stop, w) in &lifetimes {
        delta[start as usize] += w;
        delta[stop as usize] -= w;
    }
    let mut slots = vec![0i64; ii as usize];
    let mut live = 0i64;
    for (t, d) in delta.iter().enumerate().take(horizon) {
        live += d;
        slots[t % ii as usize] += live;
    }
    invariant.extend(live_in.iter().copied());
    let fixed: i64 = invariant.iter().map(|&v| weight(v)).sum();
    (slots.into_iter().max().unwrap_or(0) + fixed).clamp(0, i64::from(u32::MAX)) as u32
}

/// Where a value comes from when a generated instruction reads it.
struct Expander<'a> {
    phis: &'a [LoopPhi],
    phi_index: HashMap<u32, usize>,
    /// Body value -> stage of its instruction.
    stage_of_value: HashMap<u32, i64>,
    stages: i64,
}

impl Expander<'_> {
    /// Body instruction `inst` copied for absolute iteration `iter` of straight-line
    /// code (a prologue step, an early exit's epilogue) whose values are `env`; its
    /// results join `env`.
    fn copy_straight(
        &self,
        f: &mut Function,
        names: &mut Names,
        env: &mut HashMap<(u32, i64), ValueId>,
        inst: &Inst,
        iter: i64,
    ) -> Result<Inst, String> {
        let mut defs = Vec::new();
        let copy = copy_inst(f, names, inst, |_, _, v| self.absolute(env, v, iter), |old, new| defs.push((old, new)))?;
        for (old, new) in defs {
            env.insert((old.0, iter), new);
        }
        Ok(copy)
    }

    /// `v` in absolute iteration `i`, in straight-line code whose values are `env`.
    fn absolute(
        &self,
        env: &HashMap<(u32, i64), ValueId>,
        v: ValueId,
        i: i64,
    ) -> Result<ValueId, String> {
        if let Some(&k) = self.phi_index.get(&v.0) {
            return if i == 0 {
                Ok(self.phis[k].init)
            } else {
                self.absolute(env, self.phis[k].latch, i - 1)
            };
        }
        if self.stage_of_value.contains_key(&v.0) {
            return env
                .get(&(v.0, i))
                .copied()
                .ok_or_else(|| format!("internal: value {} of iteration {i} not generated", v.0));
        }
        Ok(v)
    }
}

/// The kernel's view: values of the current step, and PHIs ("slots") for older ones.
struct Kernel {
    /// Body value -> its value in the kernel (this step's).
    current: HashMap<u32, ValueId>,
    /// (value, iteration relative to the newest) -> kernel PHI.
    slots: HashMap<(u32, i64), ValueId>,
    /// Slots in creation order.
    slot_list: Vec<(ValueId, i64, ValueId)>,
}

impl Kernel {
    /// `v` of the iteration `r` steps relative to the one the kernel step starts
    /// (r <= 0), as the kernel reads it.
    fn get(
        &mut self,
        x: &Expander<'_>,
        f: &mut Function,
        names: &mut Names,
        v: ValueId,
        r: i64,
    ) -> Result<ValueId, String> {
        if let Some(&k) = x.phi_index.get(&v.0) {
            if r == -(x.stages - 1) {
                return Ok(self.slot(f, names, v, r));
            }
            return self.get(x, f, names, x.phis[k].latch, r - 1);
        }
        if let Some(&s) = x.stage_of_value.get(&v.0) {
            return match r.cmp(&-s) {
                std::cmp::Ordering::Equal => {
                    self.current.get(&v.0).copied().ok_or_else(|| {
                        "internal: kernel value read before its definition".to_string()
                    })
                }
                std::cmp::Ordering::Less => Ok(self.slot(f, names, v, r)),
                std::cmp::Ordering::Greater => {
                    Err("internal: kernel reads a value of a later step".to_string())
                }
            };
        }
        Ok(v)
    }

    fn slot(
        &mut self,
        f: &mut Function,
        names: &mut Names,
        v: ValueId,
        r: i64,
    ) -> ValueId {
        if let Some(&s) = self.slots.get(&(v.0, r)) {
            return s;
        }
        let name = format!("{}.swp{}", f.value(v).name, -r);
        let ty = f.value(v).ty;
        let s = f.fresh_value(names, &name, ty);
        self.slots.insert((v.0, r), s);
        self.slot_list.push((v, r, s));
        s
    }
}

type Names = crate::mir::NameSet;

/// A copy of `inst` reading `operand(v)` for each value and defining fresh values,
/// recorded by `record(old, new)`.
fn copy_inst(
    f: &mut Function,
    names: &mut Names,
    inst: &Inst,
    mut operand: impl FnMut(&mut Function, &mut Names, ValueId) -> Result<ValueId, String>,
    mut record: impl FnMut(ValueId, ValueId),
) -> Result<Inst, String> {
    let mut new = inst.clone();
    for o in &mut new.operands {
        if let Operand::Value(v) = o {
            *v = operand(f, names, *v)?;
        }
    }
    for d in &mut new.defs {
        let info = f.value(*d).clone();
        let fresh = f.fresh_value(names, &info.name, info.ty);
        record(*d, fresh);
        *d = fresh;
    }
    Ok(new)
}

/// Rewrites the loop into prologue, kernel and epilogues: the preheader and the exit
/// block are changed in place, and the blocks that replace the loop's are returned.
#[allow(clippy::too_many_arguments)]
fn expand(
    f: &mut Function,
    shape: &Shape,
    phis: &[LoopPhi],
    body: &[Inst],
    units: &[std::ops::Range<usize>],
    schedule: &Schedule,
    model: &SchedModel<'_>,
    index: &mut FunctionIndex,
) -> Result<Vec<Block>, String> {
    let tables = model.tables;
    let stages = i64::from(schedule.stages) + 1;
    let ii = i64::from(schedule.ii);
    let mut stage = vec![0i64; body.len()];
    let mut offset = vec![0i64; body.len()];
    for (u, r) in units.iter().enumerate() {
        for i in r.clone() {
            stage[i] = schedule.cycle[u] / ii;
            // Glued instructions keep their order through the index tie-break.
            offset[i] = schedule.cycle[u] % ii;
        }
    }
    // Kernel order: by cycle within the interval, older iterations first, then input
    // order; a glued unit stays together since its members share stage and offset.
    let mut order: Vec<usize> = (0..body.len()).collect();
    order.sort_by_key(|&i| (offset[i], -stage[i], i));
    let x = Expander {
        phis,
        phi_index: phis
            .iter()
            .enumerate()
            .map(|(k, p)| (p.value.0, k))
            .collect(),
        stage_of_value: body
            .iter()
            .enumerate()
            .flat_map(|(i, inst)| inst.defs.iter().map(move |d| (d.0, i)))
            .map(|(v, i)| (v, stage[i]))
            .collect(),
        stages,
    };
    let (names, reads) = (&mut index.names, &index.reads);
    let b = shape.block;
    let b_number = f.blocks[b].number;
    let exit_number = f.blocks[shape.exit].number;
    let term = f.blocks[b]
        .insts
        .last()
        .cloned()
        .ok_or("empty loop block")?;
    let loc = f.blocks[b].loc;
    let base_name = f.blocks[b].name.clone().unwrap_or_else(|| "loop".into());
    let mut next_number = f.blocks.iter().map(|bl| bl.number).max().unwrap_or(0) + 1;
    let mut fresh_block = |suffix: String| {
        let n = next_number;
        next_number += 1;
        Block {
            number: n,
            name: Some(format!("{base_name}.{suffix}")),
            insts: Vec::new(),
            loc,
        }
    };
    let br_opcode = tables.opcode("BR").ok_or("no BR opcode")?;
    let sm_index = tables
        .sms
        .iter()
        .position(|s| s.name == model.sm.name)
        .unwrap_or(0);
    let br = tables
        .patterns
        .iter()
        .position(|p| p.opcode == br_opcode.0 && p.sms >> sm_index & 1 == 1)
        .ok_or("no branch pattern")?;
    let branch_to = |target: u32| Inst {
        defs: Default::default(),
        opcode: Opcode::Machine(br as u16),
        flags: Default::default(),
        operands: vec![Operand::Block(target)],
        loc,
    };
    let retarget = |inst: &Inst, stay: u32, leave: u32| {
        let mut t = inst.clone();
        for o in &mut t.operands {
            if let Operand::Block(n) = o {
                *n = if *n == b_number { stay } else { leave };
            }
        }
        t
    };
    // Blocks: prologue steps, kernel, kernel epilogue, prologue epilogues.
    let prologue: Vec<Block> = (0..stages - 1)
        .map(|t| fresh_block(format!("prolog{t}")))
        .collect();
    let mut kernel_block = fresh_block("kernel".into());
    let mut kernel_epilogue = fresh_block("epilog".into());
    let mut early_epilogues: Vec<Block> = (0..stages - 1)
        .map(|t| fresh_block(format!("epilog.after{t}")))
        .collect();
    let mut prologue = prologue;
    // Live-out values: loop values read outside the loop (exit PHIs included).
    let loop_values: Vec<ValueId> = phis
        .iter()
        .map(|p| p.value)
        .chain(body.iter().flat_map(|i| i.defs.iter().copied()))
        .collect();
    let mut live_out: Vec<ValueId> = loop_values
        .iter()
        .copied()
        .filter(|v| read_outside(reads, v.0, b))
        .collect();
    live_out.sort_by_key(|v| v.0);
    // Exit block: other predecessors besides the loop make new PHIs there unsound for
    // values read outside its PHIs.
    let exit_has_other_preds = index
        .preds
        .get(&exit_number)
        .is_some_and(|p| p.iter().any(|&n| n != b_number));
    // ---- prologue ----
    let mut env: HashMap<(u32, i64), ValueId> = HashMap::default();
    let mut snapshots: Vec<HashMap<(u32, i64), ValueId>> = Vec::new();
    for t in 0..stages - 1 {
        let mut insts = Vec::new();
        for &i in &order {
            let s = stage[i];
            if s > t {
                continue;
            }
            insts.push(x.copy_straight(f, names, &mut env, &body[i], t - s)?);
        }
        let mut branch = term.clone();
        for o in &mut branch.operands {
            if let Operand::Value(v) = o {
                *v = x.absolute(&env, *v, t)?;
            }
        }
        let stay = if t + 1 < stages - 1 {
            prologue[(t + 1) as usize].number
        } else {
            kernel_block.number
        };
        insts.push(retarget(&branch, stay, early_epilogues[t as usize].number));
        prologue[t as usize].insts = insts;
        snapshots.push(env.clone());
    }
    // ---- kernel ----
    let mut k = Kernel {
        current: HashMap::default(),
        slots: HashMap::default(),
        slot_list: Vec::new(),
    };
    let mut kernel_insts = Vec::new();
    for &i in &order {
        let r = -stage[i];
        let mut defs = Vec::new();
        let copy = copy_inst(
            f,
            names,
            &body[i],
            |f, names, v| k.get(&x, f, names, v, r),
            |old, new| defs.push((old, new)),
        )?;
        for (old, new) in defs {
            k.current.insert(old.0, new);
        }
        kernel_insts.push(copy);
    }
    let mut branch = term.clone();
    for o in &mut branch.operands {
        if let Operand::Value(v) = o {
            *v = k.get(&x, f, names, *v, 0)?;
        }
    }
    let kernel_branch = retarget(&branch, kernel_block.number, kernel_epilogue.number);
    // ---- epilogue after the kernel: steps 1..S-1 relative to the last iteration ----
    let mut denv: HashMap<(u32, i64), ValueId> = HashMap::default();
    fn drain_get(
        x: &Expander<'_>,
        k: &mut Kernel,
        denv: &HashMap<(u32, i64), ValueId>,
        f: &mut Function,
        names: &mut Names,
        v: ValueId,
        r: i64,
    ) -> Result<ValueId, String> {
        if let Some(&p) = x.phi_index.get(&v.0) {
            // As far back as the kernel's oldest step, the kernel's own view (its slots)
            // answers; this also ends chains of PHIs that carry themselves.
            if r <= -(x.stages - 1) {
                return k.get(x, f, names, v, r);
            }
            return drain_get(x, k, denv, f, names, x.phis[p].latch, r - 1);
        }
        if let Some(&s) = x.stage_of_value.get(&v.0) {
            if r + s >= 1 {
                return denv
                    .get(&(v.0, r))
                    .copied()
                    .ok_or_else(|| "internal: epilogue value not generated".to_string());
            }
            return k.get(x, f, names, v, r);
        }
        Ok(v)
    }
    let mut epi_insts = Vec::new();
    for step in 1..stages {
        for &i in &order {
            let s = stage[i];
            if s < step {
                continue;
            }
            let r = step - s;
            let mut defs = Vec::new();
            let copy = copy_inst(
                f,
                names,
                &body[i],
                |f, names, v| drain_get(&x, &mut k, &denv, f, names, v, r),
                |old, new| defs.push((old, new)),
            )?;
            for (old, new) in defs {
                denv.insert((old.0, r), new);
            }
            epi_insts.push(copy);
        }
    }
    let mut kernel_exit_values = Vec::new();
    for &v in &live_out {
        kernel_exit_values.push(drain_get(&x, &mut k, &denv, f, names, v, 0)?);
    }
    epi_insts.push(branch_to(exit_number));
    kernel_epilogue.insts = epi_insts;
    // ---- epilogues after a prologue exit: iterations 0..=p exist ----
    let mut early_exit_values: Vec<Vec<ValueId>> = Vec::new();
    for p in 0..stages - 1 {
        let mut penv = snapshots[p as usize].clone();
        let mut insts = Vec::new();
        for step in p + 1..p + stages {
            for &i in &order {
                let s = stage[i];
                let iter = step - s;
                if s < step - p || iter < 0 || iter > p {
                    continue;
                }
                insts.push(x.copy_straight(f, names, &mut penv, &body[i], iter)?);
            }
        }
        let mut values = Vec::new();
        for &v in &live_out {
            values.push(x.absolute(&penv, v, p)?);
        }
        early_exit_values.push(values);
        insts.push(branch_to(exit_number));
        early_epilogues[p as usize].insts = insts;
    }
    // ---- kernel PHIs: close the slots (drains may have added some) ----
    let mut phi_insts = Vec::new();
    let phi_opcode = tables.opcode("PHI").ok_or("no PHI opcode")?;
    let last_prologue = prologue.last().map(|bl| bl.number).ok_or("no prologue")?;
    let mut done = 0;
    let full_env = snapshots.last().cloned().unwrap_or_default();
    while done < k.slot_list.len() {
        let (v, r, s) = k.slot_list[done];
        done += 1;
        let entry = x.absolute(&full_env, v, stages - 1 + r)?;
        let back = if let Some(&p) = x.phi_index.get(&v.0) {
            k.get(&x, f, names, phis[p].latch, r)?
        } else {
            k.get(&x, f, names, v, r + 1)?
        };
        phi_insts.push(Inst {
            defs: smallvec::smallvec![s],
            opcode: Opcode::Generic(phi_opcode),
            flags: Default::default(),
            operands: vec![
                Operand::Value(entry),
                Operand::Block(last_prologue),
                Operand::Value(back),
                Operand::Block(kernel_block.number),
            ],
            loc,
        });
    }
    phi_insts.extend(kernel_insts);
    phi_insts.push(kernel_branch);
    kernel_block.insts = phi_insts;
    // ---- the exit block: PHIs joining the epilogues ----
    let exits: Vec<u32> = early_epilogues
        .iter()
        .map(|bl| bl.number)
        .chain(std::iter::once(kernel_epilogue.number))
        .collect();
    let value_in = |exit_k: usize, v: ValueId| -> ValueId {
        match live_out.iter().position(|l| *l == v) {
            Some(j) if exit_k < early_exit_values.len() => early_exit_values[exit_k][j],
            Some(j) => kernel_exit_values[j],
            None => v,
        }
    };
    let exit = shape.exit;
    let mut replaced: HashMap<u32, ValueId> = HashMap::default();
    // Other reads of loop values after the loop read a new PHI of the exit block; check
    // that this is sound before changing anything outside the new blocks.
    let read_elsewhere: Vec<ValueId> = live_out
        .iter()
        .copied()
        .filter(|v| {
            index
                .reads
                .get(&v.0)
                .is_some_and(|r| r.iter().any(|&(bi, phi)| bi != b && !(bi == exit && phi)))
        })
        .collect();
    if !read_elsewhere.is_empty() && exit_has_other_preds {
        return Err(
            "internal: loop values read after an exit block with other predecessors".into(),
        );
    }
    // Existing PHIs of the exit block: the loop's entry becomes one entry per epilogue.
    for inst in f.blocks[exit]
        .insts
        .iter_mut()
        .take_while(|i| i.is_phi(tables))
    {
        let mut operands = Vec::new();
        for pair in inst.operands.chunks(2) {
            match pair {
                [Operand::Value(v), Operand::Block(p)] if *p == b_number => {
                    for (e, &num) in exits.iter().enumerate() {
                        operands.push(Operand::Value(value_in(e, *v)));
                        operands.push(Operand::Block(num));
                    }
                }
                other => operands.extend(other.iter().cloned()),
            }
        }
        inst.operands = operands;
    }
    let mut new_phis = Vec::new();
    for v in read_elsewhere {
        let info = f.value(v).clone();
        let merged = f.fresh_value(names, &format!("{}.swp.out", info.name), info.ty);
        let mut operands = Vec::new();
        for (e, &num) in exits.iter().enumerate() {
            operands.push(Operand::Value(value_in(e, v)));
            operands.push(Operand::Block(num));
        }
        new_phis.push(Inst {
            defs: smallvec::smallvec![merged],
            opcode: Opcode::Generic(phi_opcode),
            flags: Default::default(),
            operands,
            loc,
        });
        replaced.insert(v.0, merged);
    }
    let mut touched: Vec<usize> = replaced
        .keys()
        .flat_map(|v| index.reads.get(v).into_iter().flatten().map(|&(bi, _)| bi))
        .filter(|&bi| bi != b)
        .collect();
    touched.sort_unstable();
    touched.dedup();
    for bi in touched {
        for inst in f.blocks[bi]
            .insts
            .iter_mut()
            .filter(|i| !(bi == exit && i.is_phi(tables)))
        {
            for o in &mut inst.operands {
                if let Operand::Value(v) = o {
                    if let Some(&m) = replaced.get(&v.0) {
                        *v = m;
                    }
                }
            }
        }
    }
    let phi_count = f.blocks[exit]
        .insts
        .iter()
        .take_while(|i| i.is_phi(tables))
        .count();
    f.blocks[exit].insts.splice(phi_count..phi_count, new_phis);
    // The preheader enters the first prologue step.
    let first = prologue[0].number;
    for inst in f.blocks[shape.preheader]
        .insts
        .iter_mut()
        .filter(|i| is_terminator(i, tables))
    {
        for o in &mut inst.operands {
            if *o == Operand::Block(b_number) {
                *o = Operand::Block(first);
            }
        }
    }
    // The exit block's predecessors are now the epilogues.
    if let Some(p) = index.preds.get_mut(&exit_number) {
        p.retain(|&n| n != b_number);
        p.extend(exits.iter().copied());
    }
    let mut replacement: Vec<Block> = prologue;
    replacement.push(kernel_block);
    replacement.push(kernel_epilogue);
    early_epilogues.reverse();
    replacement.extend(early_epilogues);
    Ok(replacement)
}
