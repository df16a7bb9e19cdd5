//! The `ptxc` command line, as a library function so tests run it in-process.
//!
//! `ptxc audit` answers legality questions per SM (see [`crate::audit`]); `ptxc interp`
//! runs a kernel in the reference interpreter (see [`crate::interp`]).

use std::path::PathBuf;

use crate::audit::{self, AuditError};
use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "ptxc", version, about = "A table-driven NVPTX backend")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Query, dump, diff or verify the legality tables of the target description.
    ///
    /// Examples:
    ///   ptxc audit --sm 80 --op FADD --vt v2bf16 [--json]
    ///   ptxc audit --sm 70 --vt i128
    ///   ptxc audit --sm 80 --cc olt --vt f16
    ///   ptxc audit --sm 80 --dump [--json|--csv]
    ///   ptxc audit --diff 75 80 [--json]
    ///   ptxc audit --sm 80 --verify [--json]     # compile + ptxas a probe of every Legal cell
    ///   ptxc audit --verify --all-sms [--json]   # the same on every SM of the description
    ///
    /// --verify generates a small kernel for each instance of each Legal (opcode, type)
    /// cell (every operand type, condition code, address space, ...), compiles it
    /// through the whole pipeline and assembles the PTX with ptxas for that SM. It
    /// lists each failure with the rule that made the cell Legal and the failing stage
    /// or ptxas message, and each cell that cannot be probed with the reason; it exits
    /// with 1 when any cell fails. ptxas comes from --ptxas, $PTXAS or PATH.
    #[command(verbatim_doc_comment)]
    Audit(AuditArgs),
    /// Run one pass on a MIR file and print the resulting MIR.
    ///
    /// Passes: every stage of `compile`'s pipeline, by the names `compile
    /// --time-passes` prints (an unknown name gets the list); all but verify need
    /// --sm. A pass that -O or a --knob switches off prints its input unchanged.
    RunPass(RunPassArgs),
    /// Compile a MIR file to PTX.
    Compile(CompileArgs),
    /// Run a kernel in the reference interpreter and print its buffers as JSON.
    ///
    /// One --arg per kernel parameter, in order: a scalar (`3`, `-1`, `1.5`, `0x3c00` =
    /// raw float bits), a buffer (`f32[1,2,3.5]`, `i32[0;256]`) or random bytes
    /// (`random:4096`, `random:4096:f32`). Without any --arg, arguments are random
    /// (`--seed`). Buffers print decoded by their element type (or --view), else as hex.
    ///
    /// Examples:
    ///   ptxc interp saxpy.mir --entry saxpy --block 4 --arg 'f32[1,2,3,4]' --arg 'f32[0;4]' --arg 2 --arg 4
    ///   ptxc interp kernel.mir --entry k --grid 2 --block 64,2 --seed 7 --view i32
    #[command(verbatim_doc_comment)]
    Interp(InterpArgs),
    /// Run a kernel of a PTX file on the CPU and print its buffers as JSON.
    ///
    /// The arguments and the output are those of `ptxc interp`, so the two can be
    /// compared: one --arg per kernel parameter (a buffer for a 64-bit parameter becomes
    /// a global allocation whose address is passed; a byte-array parameter takes raw
    /// bytes (`i8[...]`, `random:16`) or a scalar of its size). Without --arg, 64-bit
    /// parameters get random buffers and the others random small values (--seed).
    /// --sm defaults to the file's .target; an instruction the SM or the .version lacks
    /// is an error, as ptxas would say.
    ///
    /// Examples:
    ///   ptxc sim saxpy.ptx --entry saxpy --block 4 --arg 'f32[1,2,3,4]' --arg 'f32[0;4]' --arg 2 --arg 4
    ///   ptxc sim kernel.ptx --entry k --grid 2 --block 64,2 --seed 7 --view i32
    #[command(verbatim_doc_comment)]
    Sim(SimArgs),
    /// List the knobs of the description's registry (`--knob NAME=VALUE` on compile and
    /// run-pass): name, type, default, the pass that reads it, and its help.
    ///
    /// A knob whose pass this backend does not have yet is listed as `(not read)`.
    Knobs(KnobsArgs),
}

#[derive(Args)]
struct KnobsArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Load the target description from DIR instead of the built-in one.
    #[arg(long, value_name = "DIR")]
    target_desc: Option<PathBuf>,
}

/// `-O` and `--knob`, shared by compile and run-pass.
#[derive(Args)]
struct OptArgs {
    /// Optimization level: -O0 (only what correctness needs) to -O3 (the default).
    #[arg(short = 'O', value_name = "LEVEL", default_value = "3")]
    opt_level: String,
    /// Set a knob of the description's registry (`ptxc knobs` lists them); repeatable.
    #[arg(long = "knob", value_name = "NAME=VALUE")]
    knobs: Vec<String>,
    /// Registers per thread for every function: the pressure-aware passes' target, and
    /// `.maxnreg N` on every kernel (a kernel's own smaller `maxnreg` stays).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=255))]
    maxreg: Option<u32>,
}

impl OptArgs {
    fn options(&self, tables: &target_desc::TargetTables) -> Result<crate::options::Options, String> {
        let level = crate::options::OptLevel::parse(&self.opt_level).map_err(|e| format!("error: {e}\n"))?;
        let mut options = crate::options::Options::new(tables, level);
        for k in &self.knobs {
            options.set(k).map_err(|e| e.render())?;
        }
        options.maxreg = self.maxreg;
        Ok(options)
    }
}

#[derive(Args)]
struct SimArgs {
    /// The PTX file.
    input: PathBuf,
    /// The kernel to run.
    #[arg(long)]
    entry: String,
    /// Blocks in the grid: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    grid: String,
    /// Threads per block: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    block: String,
    /// One argument per kernel parameter, in order (see above).
    #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true)]
    args: Vec<String>,
    /// Stop after this many executed instructions (all threads together).
    #[arg(long, default_value_t = 100_000_000)]
    fuel: u64,
    /// Seed of random arguments and `random:N` buffers.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The SM to check instructions against (default: the file's .target).
    #[arg(long)]
    sm: Option<String>,
    /// Element type to show untyped buffers as (`f32`, `i8`, ...).
    #[arg(long, value_name = "TYPE")]
    view: Option<String>,
    /// Bytes of the kernel's `.extern .shared` array.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    dynamic_shared: u32,
    /// Load the target description from DIR instead of the built-in one.
    #[arg(long, value_name = "DIR")]
    target_desc: Option<PathBuf>,
}

#[derive(Args)]
struct InterpArgs {
    /// The MIR file.
    input: PathBuf,
    /// The kernel to run.
    #[arg(long)]
    entry: String,
    /// Blocks in the grid: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    grid: String,
    /// Threads per block: X[,Y[,Z]].
    #[arg(long, default_value = "1")]
    block: String,
    /// One argument per kernel parameter, in order (see above).
    #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true)]
    args: Vec<String>,
    /// Stop after this many executed instructions (all threads together).
    #[arg(long, default_value_t = 100_000_000)]
    fuel: u64,
    /// Seed of random arguments and `random:N` buffers.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Element type to show untyped buffers as (`f32`, `i8`, ...).
    #[arg(long, value_name = "TYPE")]
    view: Option<String>,
    /// Load the target description from DIR instead of the built-in one.
    #[arg(long, value_name = "DIR")]
    target_desc: Option<PathBuf>,
}

#[derive(Args)]
struct CompileArgs {
    /// The MIR file.
    input: PathBuf,
    /// The SM to compile for: `80`, `sm_80`, `90a`.
    #[arg(long)]
    sm: String,
    /// Write the PTX (or the MIR, with --stop-after) here instead of stdout (`-` is
    /// stdout).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the MIR after every pass to stderr.
    #[arg(long)]
    print_after_all: bool,
    /// Print the MIR after this pass to stderr (repeatable).
    #[arg(long, value_name = "PASS")]
    print_after: Vec<String>,
    /// Stop after this pass and output its MIR instead of PTX.
    #[arg(long, value_name = "PASS")]
    stop_after: Option<String>,
    /// Run the verifier after every pass.
    #[arg(long)]
    verify: bool,
    /// Print the decisions of a pass to stderr: `legalize` prints every legalization
    /// decision (node, type, SM, action and the description line that decided it),
    /// `combine` every rewrite, `machine-cse` every CSE made or refused, `machine-licm` every hoist made or refused, `nvptx-remat-block` every value pulled (with --knob nv-dump-remat-block=true every step), `phi-elim` its copy counts (and with --knob cssa-verbosity=1 every copy kept and why).
    #[arg(long, value_name = "PASS")]
    remarks: Option<String>,
    /// Print per function to stderr: max live registers per class and predicates
    /// before and after the allocator, virtual registers, the register target and what
    /// set it, and the occupancy reached (from the description's occupancy data).
    #[arg(long)]
    stats: bool,
    /// With --stats: print the statistics as JSON.
    #[arg(long, requires = "stats")]
    json: bool,
    /// Print the wall time of parsing, each pass and emission, with each one's share,
    /// to stderr (as llc's -time-passes).
    #[arg(long)]
    time_passes: bool,
    /// Compile the functions of the module on up to N threads (default: the machine's
    /// cores). The PTX is byte-identical for every N. Runs that print per pass
    /// (--remarks, --print-after, --stop-after, --verify, --stats) stay sequential.
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    #[command(flatten)]
    opt: OptArgs,
    /// Load the target description from DIR instead of the built-in one.
    #[arg(long, value_name = "DIR")]
    target_desc: Option<PathBuf>,
}

#[derive(Args)]
struct RunPassArgs {
    /// The pass to run.
    pass: String,
    /// The MIR file.
    input: PathBuf,
    /// The SM, for passes that need one.
    #[arg(long)]
    sm: Option<String>,
    /// Print the pass's decisions to stderr (as `compile --remarks PASS` does).
    #[arg(long)]
    remarks: bool,
    #[command(flatten)]
    opt: OptArgs,
    /// Load the target description from DIR instead of the built-in one.
    #[arg(long, value_name = "DIR")]
    target_desc: Option<PathBuf>,
}

#[derive(Args)]
struct AuditArgs {
    /// The SM to query or dump: `80`, `sm_80`, `90a`.
    #[arg(long)]
    sm: Option<String>,
    /// An opcode (with --vt): the action of the opcode on the type.
    #[arg(long)]
    op: Option<String>,
    /// A value type: alone, whether it is a register type; with --op or --cc, the row.
    #[arg(long)]
    vt: Option<String>,
    /// A condition code (with --vt): the condition-code action.
    #[arg(long)]
    cc: Option<String>,
    /// Print every entry of the SM's tables.
    #[arg(long)]
    dump: bool,
    /// Print every entry that differs between two SMs.
    #[arg(long, num_args = 2, value_names = ["FROM", "TO"])]
    diff: Option<Vec<String>>,
    /// Print JSON.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV (with --dump).
    #[arg(long)]
    csv: bool,
    /// Compile and assemble a probe kernel for every Legal cell of --sm (or --all-sms).
    #[arg(long)]
    verify: bool,
    /// With --verify: every SM of the description.
    #[arg(long, requires = "verify", conflicts_with = "sm")]
    all_sms: bool,
    /// With --verify: the ptxas to assemble with (default: $PTXAS, then PATH).
    #[arg(long, value_name = "PATH", requires = "verify")]
    ptxas: Option<PathBuf>,
    /// With --verify: only compile the probes, do not run ptxas.
    #[arg(long, requires = "verify")]
    no_assemble: bool,
    /// Audit the description in DIR (loaded at run time) instead of the built-in one.
    #[arg(long, value_name = "DIR")]
    target_desc: Option<PathBuf>,
}

/// What a `ptxc` run printed and its exit code.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    /// 0 success, 1 bad input (an error was printed), 2 bad command line.
    pub code: i32,
}

/// Runs `ptxc` with `args` (the first item is the program name).
pub fn run<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let text = e.render().to_string();
            return if code == 0 { Output { stdout: text, ..Output::default() } } else { Output { stderr: text, code, ..Output::default() } };
        }
    };
    match cli.command {
        Command::Audit(args) => run_audit(args),
        Command::RunPass(args) => run_pass(args),
        Command::Compile(args) => compile(args),
        Command::Interp(args) => interp(args),
        Command::Sim(args) => sim(args),
        Command::Knobs(args) => knobs(args),
    }
}

/// `X`, `X,Y` or `X,Y,Z` (missing dimensions are 1).
fn parse_dims(text: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("expected --{what} X[,Y[,Z]], found `{text}`"));
    }
    let mut dims = [1u32; 3];
    for (d, part) in dims.iter_mut().zip(&parts) {
        *d = part.parse().map_err(|_| format!("expected --{what} X[,Y[,Z]] with positive numbers, found `{text}`"))?;
    }
    Ok(dims)
}

fn interp(args: InterpArgs) -> Output {
    let tables = match crate::load_tables(args.target_desc.as_deref()) {
        Ok(t) => t,
        Err(e) => return failure(render_desc_error(&e)),
    };
    let file = args.input.to_string_lossy().to_string();
    let text = match read_source(&args.input) {
        Ok(t) => t,
        Err(e) => return failure(e),
    };
    let module = match crate::mir::parser::parse_module(&text, &file, tables) {
        Ok(m) => m,
        Err(e) => return failure(e.render()),
    };
    let source = crate::mir::verifier::Source { file: &file, text: &text };
    let errors = crate::mir::verifier::verify_module(&module, tables, source);
    if !errors.is_empty() {
        return failure(render_all(&errors, &file));
    }
    let Some(function) = crate::interp::find_function(&module, &args.entry) else {
        let kernels: Vec<&str> = module.functions.iter().filter(|f| f.kind == crate::mir::FunctionKind::Kernel).map(|f| f.name.as_str()).collect();
        return failure(format!("error: no function @{} in {file} (kernels: {})\n", args.entry, kernels.join(", ")));
    };
    let launch = match (parse_dims(&args.grid, "grid"), parse_dims(&args.block, "block")) {
        (Ok(grid), Ok(block)) => crate::interp::Launch { grid, block },
        (Err(e), _) | (_, Err(e)) => return failure(format!("error: {e}\n")),
    };
    let view = match args.view.as_deref().map(|v| crate::interp::spec::element_type(tables, v)).transpose() {
        Ok(v) => v,
        Err(e) => return failure(format!("error: --view: {e}\n")),
    };
    let parsed: Vec<crate::interp::spec::ParsedArg> = if args.args.is_empty() {
        crate::interp::random_args(function, tables, args.seed)
            .into_iter()
            .map(|value| crate::interp::spec::ParsedArg { value, view: None, view_name: None })
            .collect()
    } else {
        if args.args.len() != function.params.len() {
            return failure(format!("error: @{} takes {} arguments, {} --arg given\n", function.name, function.params.len(), args.args.len()));
        }
        let mut parsed = Vec::with_capacity(args.args.len());
        for (k, (spec, param)) in args.args.iter().zip(&function.params).enumerate() {
            let ty = crate::interp::spec::param_type(tables, param.ty);
            match crate::interp::spec::parse_arg(spec, ty, tables, args.seed, k) {
                Ok(p) => parsed.push(p),
                Err(e) => return failure(format!("error: --arg {} (`{}`, parameter `{}`): {e}\n", k + 1, spec, param.name)),
            }
        }
        parsed
    };
    let values: Vec<crate::interp::ArgValue> = parsed.iter().map(|p| p.value.clone()).collect();
    match crate::interp::run_kernel(&module, tables, &args.entry, &launch, &values, args.fuel) {
        Ok(result) => {
            let report = crate::interp::spec::result_json(function, tables, &module.globals, &parsed, view, args.view.as_deref(), &result);
            Output { stdout: format!("{}\n", serde_json::to_string_pretty(&report).unwrap_or_default()), ..Output::default() }
        }
        Err(e) => failure(render_interp_error(&e, &module, &file, &text)),
    }
}

/// `ptxc sim`.
fn sim(args: SimArgs) -> Output {
    use crate::interp::spec::{parse_arg, ParsedArg};
    let tables = match crate::load_tables(args.target_desc.as_deref()) {
        Ok(t) => t,
        Err(e) => return failure(render_desc_error(&e)),
    };
    let file = args.input.to_string_lossy().to_string();
    let text = match read_source(&args.input) {
        Ok(t) => t,
        Err(e) => return failure(e),
    };
    let sm = match args.sm.as_deref().map(|s| audit::find_sm(tables, s)).transpose() {
        Ok(sm) => sm.map(|s| s.name),
        Err(e) => return failure(format!("error: {e}\n")),
    };
    let simulator = match crate::sim::Simulator::new(&text, &file, tables, sm) {
        Ok(s) => s,
        Err(e) => return failure(e.render(&file, &text)),
    };
    let Some(params) = simulator.kernel_params(&args.entry) else {
        return failure(format!("error: no kernel `{}` in {file} (kernels: {})\n", args.entry, simulator.kernels().join(", ")));
    };
    let launch = match (parse_dims(&args.grid, "grid"), parse_dims(&args.block, "block")) {
        (Ok(grid), Ok(block)) => crate::interp::Launch { grid, block },
        (Err(e), _) | (_, Err(e)) => return failure(format!("error: {e}\n")),
    };
    let view = match args.view.as_deref().map(|v| crate::interp::spec::element_type(tables, v)).transpose() {
        Ok(v) => v,
        Err(e) => return failure(format!("error: --view: {e}\n")),
    };
    let parsed: Vec<ParsedArg> = if args.args.is_empty() {
        crate::sim::random_args(&params, args.seed).into_iter().map(|value| ParsedArg { value, view: None, view_name: None }).collect()
    } else {
        if args.args.len() != params.len() {
            return failure(format!("error: `{}` takes {} arguments, {} --arg given\n", args.entry, params.len(), args.args.len()));
        }
        let mut parsed = Vec::with_capacity(params.len());
        for (k, (spec, param)) in args.args.iter().zip(&params).enumerate() {
            match parse_arg(spec, param.ty, tables, args.seed, k) {
                Ok(p) => parsed.push(p),
                Err(e) => return failure(format!("error: --arg {} (`{spec}`, parameter `{}`): {e}\n", k + 1, param.name)),
            }
        }
        parsed
    };
    let values: Vec<crate::interp::ArgValue> = parsed.iter().map(|p| p.value.clone()).collect();
    let options = crate::sim::Options { fuel: args.fuel, dynamic_shared_bytes: args.dynamic_shared };
    match simulator.run(&args.entry, &launch, &values, &options) {
        Ok(result) => {
            let view = view.zip(args.view.as_deref());
            let report = simulator.result_json(&args.entry, &parsed, view, &result);
            Output { stdout: format!("{}\n", serde_json::to_string_pretty(&report).unwrap_or_default()), ..Output::default() }
        }
        Err(e) => failure(e.render(&file, &text)),
    }
}

/// Reads a source file as UTF-8; a file that is not says where its first bad byte is.
pub fn read_source(path: &std::path::Path) -> Result<String, String> {
    let file = path.to_string_lossy();
    let bytes = std::fs::read(path).map_err(|e| format!("error: cannot read {file}: {e}\n"))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or("");
        let line_start = prefix.rfind('\n').map_or(0, |i| i + 1);
        let error = crate::diagnostics::MirError {
            file: file.to_string(),
            line: prefix.matches('\n').count() + 1,
            column: prefix[line_start..].chars().count() + 1,
            message: format!("the file is not UTF-8: expected a UTF-8 character, found the byte {:#04x}", bytes[valid]),
            context: None,
            source_line: Some(format!("{}\u{fffd}", &prefix[line_start..])),
        };
        error.render()
    })
}

/// An interpreter error at its instruction's source line, like the verifier's errors.
fn render_interp_error(e: &crate::interp::InterpError, module: &crate::mir::Module, file: &str, text: &str) -> String {
    use crate::interp::InterpError as E;
    let message = match e {
        E::Undefined { what, thread, .. } => format!("undefined behaviour in {thread}: {what}"),
        E::OutOfFuel { steps, .. } => format!("out of fuel after {steps} instructions (raise --fuel)"),
        E::Unsupported { what, .. } => format!("not supported by the interpreter: {what}"),
        E::Malformed { what, .. } => format!("malformed MIR: {what}"),
        E::BadArguments(what) => return format!("error: {what}\n"),
    };
    let Some((function, block, inst)) = e.location() else { return format!("error: {message}\n") };
    let loc = module
        .functions
        .iter()
        .find(|f| f.name == function)
        .and_then(|f| f.blocks.iter().find(|b| b.label() == block))
        .and_then(|b| b.insts.get(inst).map(|i| i.loc).or(Some(b.loc)));
    let Some(loc) = loc else { return format!("error: {e}\n") };
    let mut error = crate::diagnostics::MirError::at(file, text, loc.line as usize, loc.column as usize, message);
    error.context = Some(format!("function @{function}, {block}, instruction {}", inst + 1));
    error.render()
}

fn failure(stderr: String) -> Output {
    Output { stderr, code: 1, ..Output::default() }
}

fn render_all(errors: &[crate::diagnostics::MirError], file: &str) -> String {
    let mut out: String = errors.iter().map(|e| e.render()).collect();
    out.push_str(&format!("{} error{} in {file}\n", errors.len(), if errors.len() == 1 { "" } else { "s" }));
    out
}

/// `--time-passes`: one line per stage, wall time and share of the total, and the
/// process's peak resident memory once the stage has run (llc's `-track-memory`
/// column: where the peak is reached, and by which stage), then the total (the stages
/// in pipeline order, as llc's report lists its passes).
/// `threads`: when the function-scoped passes ran on several threads, their figures are
/// summed over the functions (thread time), the peak is only known at their end, and
/// the report adds the wall time.
/// What the wall-time line says of a run per batch of functions (`ptxc compile`'s two
/// batched pipelines).
const BATCHED: &str = "the function passes and emission above are summed over batches of functions";
const STREAMED: &str = "reading, every pass and emission above are summed over batches of functions, each read and compiled in turn";

fn time_report(times: &[Stage], threads: Option<(usize, std::time::Duration, &str)>) -> String {
    let total: f64 = times.iter().map(|s| s.time.as_secs_f64()).sum();
    let mut out = String::from("===== ptxc pass execution timing report =====\n   wall time (s)   share  peak RSS (MiB)  stage\n");
    for Stage { name, time, peak_kib } in times {
        let t = time.as_secs_f64();
        let share = if total > 0.0 { 100.0 * t / total } else { 0.0 };
        let peak = peak_kib.map_or(String::new(), |k| format!("{:.1}", k as f64 / 1024.0));
        out.push_str(&format!("  {t:>13.6}  {share:>5.1}%  {peak:>14}  {name}\n"));
    }
    out.push_str(&format!("  {total:>13.6}  100.0%  {:>14}  total\n", ""));
    if let Some((n, wall, how)) = threads {
        out.push_str(&format!("  {:>13.6}          wall time on {n} thread{} ({how})\n", wall.as_secs_f64(), if n == 1 { "" } else { "s" }));
    }
    out
}

/// One line of the `--time-passes` report.
struct Stage {
    name: &'static str,
    time: std::time::Duration,
    /// The process's peak resident set once the stage has run; `None` for a stage run
    /// on threads, whose peak is only known when all of them are done.
    peak_kib: Option<u64>,
}

impl Stage {
    fn new(name: &'static str, time: std::time::Duration) -> Stage {
        Stage { name, time, peak_kib: peak_rss_kib() }
    }
}

/// The peak resident set of the process so far, in KiB (`getrusage`'s `ru_maxrss`, which
/// Linux gives in KiB; other systems leave the column blank).
fn peak_rss_kib() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getrusage fills the struct it is given and reads nothing else.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0 {
            return u64::try_from(usage.ru_maxrss).ok();
        }
    }
    None
}

/// The passes `--remarks` reports on.
/// `sched` names both list schedulers and `pipeliner` the modulo scheduler, as the
/// reference's remarks do.
const REMARK_PASSES: &[&str] = &[
    "sroa",
    "legalize",
    "combine",
    "simplify-cfg",
    "slsr",
    "loop-reduce",
    "ldgxform",
    "nvptx-mem2reg",
    "machine-cse",
    "machine-licm",
    "machine-sink",
    "machine-cp",
    "machine-pipeliner",
    "pipeliner",
    "nvptx-remat-block",
    "phi-elim",
    "machine-scheduler",
    "post-RA-sched",
    "sched",
    "spill",
    "branch-folder",
];

/// Whether `--remarks NAME` asks for pass `pass`'s remarks.
fn remarks_wanted(name: Option<&str>, pass: &str) -> bool {
    match name {
        Some("sched") => matches!(pass, "machine-scheduler" | "post-RA-sched"),
        Some("pipeliner") => pass == "machine-pipeliner",
        Some(n) => n == pass,
        None => false,
    }
}

/// A module of several functions compiled a batch of functions at a time, read as it
/// goes (`passes::compile_streamed`), when nothing asks to see the module between
/// passes. `None` (nothing reported) to compile it whole, which also reports every
/// error: streaming gives up on the first.
/// Returns the PTX, the time of each stage and the number of threads.
fn compile_streamed(args: &CompileArgs, tables: &'static target_desc::tables::TargetTables, sm: &target_desc::tables::SmTables, text: &str, file: &str, jobs: usize) -> Option<(String, crate::passes::StageTimes, usize)> {
    let shown = args.print_after_all || !args.print_after.is_empty() || args.stop_after.is_some() || args.verify || args.stats || args.remarks.is_some();
    let mut options = args.opt.options(tables).ok()?;
    if shown || options.flag("nv-dump-remat-block") == Some(true) || options.flag("verify-machineinstrs") == Some(true) {
        return None;
    }
    options.jobs = jobs;
    let started = std::time::Instant::now();
    let streamed = crate::mir::parser::Streamed::new(text, file, tables)?;
    let headers = started.elapsed();
    let mut cx = crate::passes::PassContext::new(tables, Some(sm), crate::mir::verifier::Source { file, text });
    cx.options = options;
    cx.checks = false; // as the whole-module path without --verify
    let (ptx, mut times) = crate::passes::compile_streamed(&streamed, &cx)?;
    if let Some((_, parse)) = times.first_mut() {
        *parse += headers;
    }
    Some((ptx, times, jobs.min(streamed.signatures.len())))
}

fn compile(args: CompileArgs) -> Output {
    let tables = match crate::load_tables(args.target_desc.as_deref()) {
        Ok(t) => t,
        Err(e) => return failure(render_desc_error(&e)),
    };
    let sm = match audit::find_sm(tables, &args.sm) {
        Ok(sm) => sm,
        Err(e) => return failure(format!("error: {e}\n")),
    };
    for name in args.print_after.iter().chain(args.stop_after.iter()) {
        if crate::passes::find(name).is_none() {
            let names: Vec<&str> = crate::passes::PASSES.iter().map(|p| p.name).collect();
            return failure(format!("error: unknown pass `{name}` (passes: {})\n", names.join(", ")));
        }
    }
    let file = args.input.to_string_lossy().to_string();
    let text = match read_source(&args.input) {
        Ok(t) => t,
        Err(e) => return failure(e),
    };
    if text.len() >= crate::allocator::HUGE_PAGE_INPUT {
        crate::allocator::allow_huge_pages();
    }
    let jobs = args.jobs.map(|j| j as usize).unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let started = std::time::Instant::now();
    if let Some((ptx, stages, threads)) = compile_streamed(&args, tables, sm, &text, &file, jobs) {
        let mut stderr = String::new();
        if args.time_passes {
            let mut times: Vec<Stage> = stages.into_iter().map(|(name, time)| Stage { name, time, peak_kib: None }).collect();
            if let Some(last) = times.last_mut() {
                last.peak_kib = peak_rss_kib();
            }
            stderr.push_str(&time_report(&times, Some((threads, started.elapsed(), STREAMED))));
        }
        return finish(ptx, args.output.as_deref(), stderr);
    }
    let mut module = match crate::mir::parser::parse_module_jobs(&text, &file, tables, jobs) {
        Ok(m) => m,
        Err(e) => return failure(e.render()),
    };
    let mut times = vec![Stage::new("parse", started.elapsed())];
    if let Some(pass) = args.remarks.as_deref() {
        if !REMARK_PASSES.contains(&pass) {
            return failure(format!("error: --remarks supports {}, found `{pass}`\n", REMARK_PASSES.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")));
        }
    }
    let source = crate::mir::verifier::Source { file: &file, text: &text };
    let remarks = std::cell::RefCell::new(Vec::new());
    let mut cx = crate::passes::PassContext::new(tables, Some(sm), source);
    cx.options = match args.opt.options(tables) {
        Ok(o) => o,
        Err(e) => return failure(e),
    };
    cx.checks = args.verify;
    cx.options.jobs = jobs;
    // `nv-dump-remat-block` prints the pass's decisions as its remarks.
    let remarks_pass = args.remarks.clone().or_else(|| (cx.options.flag("nv-dump-remat-block") == Some(true)).then(|| "nvptx-remat-block".to_string()));
    let verify_each = args.verify || cx.options.flag("verify-machineinstrs") == Some(true);
    if remarks_pass.is_some() {
        cx.remarks = Some(&remarks);
    }
    crate::passes::apply_maxreg(&mut module, &cx.options);
    let mut stderr = String::new();
    let mut before_allocation = None;
    // Passes printed or checked one at a time keep the sequential order.
    let per_pass_output = args.print_after_all || !args.print_after.is_empty() || args.stop_after.is_some() || verify_each || args.stats;
    let enabled: Vec<&'static crate::passes::PassInfo> = crate::passes::PASSES.iter().filter(|p| p.enabled(&cx.options)).collect();
    let mut threads = None;
    let mut compiled = None;
    for pass in crate::passes::PASSES {
        if pass.scope == crate::passes::Scope::Function && pass.enabled(&cx.options) && !per_pass_output && crate::passes::per_function(&module, &cx) {
            let rest: Vec<&'static crate::passes::PassInfo> = enabled.iter().copied().skip_while(|p| p.name != pass.name).collect();
            threads = Some(cx.options.jobs.min(module.functions.len()));
            match crate::passes::compile_per_function(&mut module, &cx, &rest) {
                Ok((ptx, summed)) => {
                    times.extend(rest.iter().map(|p| p.name).chain(["emit"]).zip(summed).map(|(name, time)| Stage { name, time, peak_kib: None }));
                    // The process's peak once everything is done.
                    if let Some(last) = times.last_mut() {
                        last.peak_kib = peak_rss_kib();
                    }
                    compiled = Some(ptx);
                }
                Err(errors) => {
                    stderr.push_str(&render_all(&errors, &file));
                    return failure(stderr);
                }
            }
            break;
        }
        if args.stats && pass.name == "phi-elim" {
            before_allocation = Some(crate::machine::stats::summarize(&module, tables, sm));
        }
        if !pass.enabled(&cx.options) {
            if args.stop_after.as_deref() == Some(pass.name) {
                return finish(crate::mir::printer::print_module(&module, tables), args.output.as_deref(), stderr);
            }
            continue;
        }
        let pass_started = std::time::Instant::now();
        let result = (pass.run)(&mut module, &cx);
        times.push(Stage::new(pass.name, pass_started.elapsed()));
        let wanted = remarks_wanted(remarks_pass.as_deref(), pass.name);
        for r in remarks.borrow_mut().drain(..).filter(|_| wanted) {
            stderr.push_str(&format!("{file}:{}:{}: remark: @{}: {}\n", r.loc.line, r.loc.column, r.function, r.message));
        }
        if let Err(errors) = result {
            stderr.push_str(&render_all(&errors, &file));
            return failure(stderr);
        }
        if verify_each && pass.name != "verify" {
            let errors = crate::mir::verifier::verify_module(&module, tables, source);
            if !errors.is_empty() {
                stderr.push_str(&format!("error: the MIR after `{}` does not verify (a compiler bug)\n", pass.name));
                stderr.push_str(&render_all(&errors, &file));
                return failure(stderr);
            }
        }
        let printed = || crate::mir::printer::print_module(&module, tables);
        if args.print_after_all || args.print_after.iter().any(|p| p == pass.name) {
            stderr.push_str(&format!("# *** MIR after {} ***\n{}", pass.name, printed()));
        }
        if args.stop_after.as_deref() == Some(pass.name) {
            return finish(printed(), args.output.as_deref(), stderr);
        }
    }
    if args.stats {
        let stats = crate::machine::stats::collect(&module, before_allocation.as_deref(), tables, sm, &cx.options);
        if args.json {
            stderr.push_str(&format!("{}\n", serde_json::to_string_pretty(&stats).unwrap_or_default()));
        } else {
            stderr.push_str(&crate::machine::stats::render(&stats));
        }
    }
    let emitted = match compiled {
        Some(ptx) => Ok(ptx),
        None => {
            let emit_started = std::time::Instant::now();
            let emitted = crate::emit::emit_module_owned(module, tables, sm, &file, cx.options.jobs);
            times.push(Stage::new("emit", emit_started.elapsed()));
            emitted
        }
    };
    if args.time_passes {
        stderr.push_str(&time_report(&times, threads.map(|n| (n, started.elapsed(), BATCHED))));
    }
    match emitted {
        Ok(ptx) => finish(ptx, args.output.as_deref(), stderr),
        Err(errors) => {
            stderr.push_str(&render_all(&errors, &file));
            failure(stderr)
        }
    }
}

fn knobs(args: KnobsArgs) -> Output {
    let tables = match crate::load_tables(args.target_desc.as_deref()) {
        Ok(t) => t,
        Err(e) => return failure(render_desc_error(&e)),
    };
    let rows = tables.knobs.iter().map(|k| (k, crate::options::type_name(k), crate::passes::knob_reader(k.name)));
    if args.json {
        let list: Vec<serde_json::Value> = rows
            .map(|(k, ty, reader)| {
                serde_json::json!({
                    "name": k.name, "type": ty, "default": k.default.to_string(), "choices": k.choices,
                    "component": k.component, "read_by": reader, "help": k.help, "source": k.source.to_string(),
                })
            })
            .collect();
        return Output { stdout: format!("{}\n", serde_json::to_string_pretty(&list).unwrap_or_default()), ..Output::default() };
    }
    let mut out = String::new();
    for (k, ty, reader) in rows {
        let ty = if k.choices.is_empty() { ty.to_string() } else { format!("enum({})", k.choices.join("|")) };
        let reader = reader.map_or_else(|| format!("{} (not read: no such pass yet)", k.component), |r| format!("read by {r}"));
        out.push_str(&format!("{} : {ty} = {}    [{reader}]\n    {}\n    ({})\n", k.name, k.default, k.help, k.source));
    }
    Output { stdout: out, ..Output::default() }
}

/// Writes `text` to `output`, or returns it as stdout (no output, or `-`, as for
/// llc's `-o -`).
fn finish(text: String, output: Option<&std::path::Path>, stderr: String) -> Output {
    match output {
        None => Output { stdout: text, stderr, code: 0 },
        Some(path) if path.as_os_str() == "-" => Output { stdout: text, stderr, code: 0 },
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => Output { stderr, ..Output::default() },
            Err(e) => failure(format!("{stderr}error: cannot write {}: {e}\n", path.display())),
        },
    }
}

fn run_pass(args: RunPassArgs) -> Output {
    let tables = match crate::load_tables(args.target_desc.as_deref()) {
        Ok(t) => t,
        Err(e) => return Output { stderr: render_desc_error(&e), code: 1, ..Output::default() },
    };
    let Some(pass) = crate::passes::find(&args.pass) else {
        let names: Vec<&str> = crate::passes::PASSES.iter().map(|p| p.name).collect();
        return Output { stderr: format!("error: unknown pass `{}` (passes: {})\n", args.pass, names.join(", ")), code: 1, ..Output::default() };
    };
    let file = args.input.to_string_lossy().to_string();
    let text = match read_source(&args.input) {
        Ok(t) => t,
        Err(e) => return Output { stderr: e, code: 1, ..Output::default() },
    };
    let mut module = match crate::mir::parser::parse_module(&text, &file, tables) {
        Ok(m) => m,
        Err(e) => return Output { stderr: e.render(), code: 1, ..Output::default() },
    };
    let sm = match args.sm.as_deref().map(|s| audit::find_sm(tables, s)).transpose() {
        Ok(sm) => sm,
        Err(e) => return Output { stderr: format!("error: {e}\n"), code: 1, ..Output::default() },
    };
    let mut cx = crate::passes::PassContext::new(tables, sm, crate::mir::verifier::Source { file: &file, text: &text });
    cx.options = match args.opt.options(tables) {
        Ok(o) => o,
        Err(e) => return Output { stderr: e, code: 1, ..Output::default() },
    };
    let remarks = std::cell::RefCell::new(Vec::new());
    if args.remarks {
        cx.remarks = Some(&remarks);
    }
    // The input is verified first, as `compile`'s pipeline starts with the verifier: a
    // pass may assume what the verifier checks (every use dominated by its definition,
    // operand types), and a hand-written input that breaks it gets the verifier's
    // diagnostic, not a pass's panic or endless loop.
    let input_errors = if pass.name == "verify" { Vec::new() } else { crate::mir::verifier::verify_module(&module, tables, cx.source) };
    // A pass its level or knob switches off leaves the MIR as it is, as in the pipeline.
    let result = if !input_errors.is_empty() {
        Err(input_errors)
    } else if pass.enabled(&cx.options) {
        (pass.run)(&mut module, &cx)
    } else {
        Ok(())
    };
    let remarks: String = remarks.take().into_iter().map(|r| format!("{file}:{}:{}: remark: @{}: {}\n", r.loc.line, r.loc.column, r.function, r.message)).collect();
    match result {
        Ok(()) => Output { stdout: crate::mir::printer::print_module(&module, tables), stderr: remarks, ..Output::default() },
        Err(errors) => {
            let mut stderr: String = errors.iter().map(|e| e.render()).collect();
            stderr.push_str(&format!("{} error{} in {file}\n", errors.len(), if errors.len() == 1 { "" } else { "s" }));
            Output { stderr, code: 1, ..Output::default() }
        }
    }
}

fn run_audit(args: AuditArgs) -> Output {
    let tables = match crate::load_tables(args.target_desc.as_deref()) {
        Ok(t) => t,
        Err(e) => return Output { stderr: render_desc_error(&e), code: 1, ..Output::default() },
    };
    if args.verify {
        return run_verify(tables, &args);
    }
    match audit_output(tables, &args) {
        Ok(text) => Output { stdout: text, ..Output::default() },
        Err(e) => Output { stderr: format!("error: {e}\n"), code: 1, ..Output::default() },
    }
}

/// `ptxc audit --verify`: exit code 1 when a cell fails or the request is bad.
fn run_verify(tables: &'static target_desc::TargetTables, args: &AuditArgs) -> Output {
    if args.dump || args.diff.is_some() || args.op.is_some() || args.vt.is_some() || args.cc.is_some() || args.csv {
        return failure("error: --verify checks whole SMs; drop --dump, --diff, --op, --vt, --cc and --csv\n".into());
    }
    let sms: Vec<&target_desc::tables::SmTables> = match (&args.sm, args.all_sms) {
        (_, true) => tables.sms.iter().collect(),
        (Some(name), false) => match audit::find_sm(tables, name) {
            Ok(sm) => vec![sm],
            Err(e) => return failure(format!("error: {e}\n")),
        },
        (None, false) => return failure("error: --verify needs --sm SM or --all-sms\n".into()),
    };
    let ptxas = if args.no_assemble {
        None
    } else {
        match crate::selfcheck::find_ptxas(args.ptxas.as_deref()) {
            Some(p) if !crate::selfcheck::runs(&p) => return failure(format!("error: cannot run ptxas at {}\n", p.display())),
            Some(p) => Some(p),
            None => return failure("error: ptxas not found: pass --ptxas PATH, set PTXAS, or use --no-assemble to only compile the probes\n".into()),
        }
    };
    let reports = crate::selfcheck::verify_sms(tables, &sms, ptxas.as_deref());
    let failed = reports.iter().any(|r| r.failed() > 0 || r.patterns_failed() > 0 || r.patterns_unprobed() > 0);
    let stdout = if args.json {
        let value = if args.all_sms { crate::selfcheck::report_json(&reports) } else { reports.first().map(crate::selfcheck::sm_json).unwrap_or_default() };
        format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default())
    } else {
        crate::selfcheck::report_text(&reports)
    };
    Output { stdout, stderr: String::new(), code: i32::from(failed) }
}

/// A description error with its source line, as miette draws it (no colours, so the
/// text is the same on a terminal and in a log).
pub fn render_desc_error(e: &target_desc::DescError) -> String {
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
    let mut out = String::new();
    let diagnostic = e.to_diagnostic();
    if handler.render_report(&mut out, &diagnostic).is_err() {
        out = e.to_string();
    }
    out.push('\n');
    out
}

fn audit_output(tables: &'static target_desc::TargetTables, args: &AuditArgs) -> Result<String, AuditError> {
    let json = |v: serde_json::Value| format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default());
    if let Some(pair) = &args.diff {
        if args.sm.is_some() || args.dump || args.op.is_some() || args.vt.is_some() {
            return Err(AuditError::Usage("--diff takes two SMs and no --sm, --dump, --op or --vt".into()));
        }
        let from = audit::find_sm(tables, &pair[0])?;
        let to = audit::find_sm(tables, &pair[1])?;
        let rows = audit::diff(tables, from, to);
        return Ok(if args.json { json(audit::diff_json(from, to, &rows)) } else { audit::diff_text(from, to, &rows) });
    }
    let Some(sm_name) = &args.sm else {
        return Err(AuditError::Usage("give --sm SM (or --diff FROM TO); see `ptxc audit --help`".into()));
    };
    let sm = audit::find_sm(tables, sm_name)?;
    if args.dump {
        if args.op.is_some() || args.vt.is_some() || args.cc.is_some() {
            return Err(AuditError::Usage("--dump lists everything; drop --op, --vt and --cc".into()));
        }
        let rows = audit::entries(tables, sm);
        return Ok(if args.json {
            json(serde_json::Value::Array(rows.iter().map(|e| audit::entry_json(sm.name, e)).collect()))
        } else if args.csv {
            audit::dump_csv(sm, &rows)
        } else {
            audit::dump_text(sm, &rows)
        });
    }
    let value = match (&args.op, &args.cc, &args.vt) {
        (Some(_), Some(_), _) => return Err(AuditError::Usage("give --op or --cc, not both".into())),
        (Some(op), None, Some(vt)) => {
            audit::action_query(tables, sm, audit::find_opcode(tables, op)?, audit::find_vt(tables, vt)?)
        }
        (None, Some(cc), Some(vt)) => audit::cc_query(tables, sm, audit::find_cc(tables, cc)?, audit::find_vt(tables, vt)?),
        (Some(_), None, None) | (None, Some(_), None) => {
            return Err(AuditError::Usage("--op and --cc need --vt TYPE".into()))
        }
        (None, None, Some(vt)) => audit::type_query(tables, sm, audit::find_vt(tables, vt)?),
        (None, None, None) => audit::sm_summary(tables, sm),
    };
    // The SM summary is structured data with no separate text form.
    Ok(if args.json || value.get("features").is_some() {
        json(value)
    } else {
        audit::query_text(&value)
    })
}
