//! The YAML half of the description language, as read by serde_yaml.
//!
//! A description is a directory with a `target.yaml` manifest that lists its files.
//! Every YAML file may hold any of the sections below; a section's entries are merged
//! across files, and a name defined twice is an error. Rules (legality, and later
//! instruction selection) live in `.rules` files written in the DSL of
//! [`crate::rules`]. These structs only give the shape; [`crate::build`] checks meaning.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The target's name, `nvptx`.
    pub target: String,
    /// The description files, in the order they are read.
    pub files: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sections {
    #[serde(default)]
    pub value_types: Vec<ValueType>,
    #[serde(default)]
    pub register_classes: Vec<RegisterClass>,
    #[serde(default)]
    pub categories: Vec<Category>,
    #[serde(default)]
    pub opcodes: Vec<Opcode>,
    #[serde(default)]
    pub condition_codes: Vec<CondCode>,
    #[serde(default)]
    pub intrinsics: Vec<Intrinsic>,
    #[serde(default)]
    pub features: Vec<Feature>,
    #[serde(default)]
    pub sms: Vec<Sm>,
    #[serde(default)]
    pub occupancy: Vec<Occupancy>,
    #[serde(default)]
    pub knobs: Vec<Knob>,
    pub remat: Option<Remat>,
    pub scheduling: Option<Scheduling>,
    #[serde(default)]
    pub ptx_isa: Vec<PtxRequirement>,
}

/// `{ insn: add.bf16, sm: sm_90, ptx: "7.8" }`: the lowest SM and PTX ISA version at
/// which an instruction form exists (read by the PTX simulator, as ptxas checks).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PtxRequirement {
    /// The opcode, then modifier words that must all be present: `atom.add.f64`.
    pub insn: String,
    pub sm: String,
    pub ptx: String,
}

/// `kind: int | float | vector | pointer`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueType {
    pub id: u32,
    pub name: String,
    pub kind: String,
    /// Scalars and pointers: the width in bits.
    pub bits: Option<u32>,
    /// Vectors: element type name and lane count.
    pub elem: Option<String>,
    pub lanes: Option<u32>,
    /// Pointers: the address space.
    pub addrspace: Option<u32>,
    /// Pointers: `false` for read-only memory (no stores, no atomics). Default `true`.
    pub writable: Option<bool>,
    /// Pointers: `true` for the generic (flat) address space, whose pointers may
    /// address every other space (LLVM's flat address space). At most one type.
    pub generic: Option<bool>,
    /// Pointers: `true` for the space a kernel's generic pointer arguments point into
    /// (the host can name only that memory; CUDA's global space). At most one type,
    /// not the generic one.
    pub kernel_args: Option<bool>,
    /// Floats: the stored mantissa (fraction) bits, where they differ from the IEEE 754
    /// binary format of the width (bf16: 7).
    pub mantissa: Option<u32>,
}

/// A member of a register class, optionally present only where a condition holds.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ClassMember {
    Plain(String),
    Gated {
        #[serde(rename = "type")]
        ty: String,
        when: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterClass {
    pub name: String,
    pub prefix: String,
    pub ptx_type: String,
    pub types: Vec<ClassMember>,
    pub pressure_weight: u32,
    /// A condition over SMs and features (same syntax as a rule's `when`).
    pub when: Option<String>,
    /// Registers that can only be moved, loaded, stored and taken apart.
    #[serde(default)]
    pub storage_only: bool,
    /// The integer type this class's values travel as across a `.param` boundary, for a
    /// class whose registers cannot be `.param` values (`.pred`).
    pub param_carrier: Option<String>,
    /// A class the hardware has few registers of (`.pred`: P0-P6), whose pressure is
    /// tracked apart from the others and checked against this count.
    pub pressure_limit: Option<u32>,
    /// Other classes of the same width whose operands this class's registers may fill
    /// (PTX: a `.b32` register is a valid `.f32` operand), so a copy between the two
    /// classes can be propagated into its readers.
    #[serde(default)]
    pub read_as: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Category {
    pub name: String,
    pub help: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Opcode {
    pub id: u32,
    pub name: String,
    /// `(T, T) -> T`, see [`crate::signature`].
    pub sig: String,
    /// Type variable classes: `{ T: int }`.
    #[serde(default)]
    pub types: BTreeMap<String, String>,
    #[serde(default)]
    pub props: Vec<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    #[serde(default)]
    pub flags: Vec<String>,
    /// Index of the operand whose type selects the action-table row; the first
    /// result's type when absent.
    pub type_operand: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CondCode {
    pub id: u32,
    pub name: String,
    /// PTX comparison for integer operands, absent when the code has no integer meaning.
    pub int: Option<String>,
    /// PTX comparison for float operands, absent when the code has no float meaning.
    pub float: Option<String>,
    /// `s` or `u`: the integer type the comparison needs (`setp.lo.u32`).
    pub int_type: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intrinsic {
    pub name: String,
    pub sig: String,
    #[serde(default)]
    pub types: BTreeMap<String, String>,
    #[serde(default)]
    pub props: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feature {
    pub name: String,
    pub help: String,
    /// Minimum PTX ISA version, `"8.3"`; defaults to no requirement beyond the SM's.
    pub ptx: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sm {
    pub name: String,
    /// Minimum PTX ISA version that knows the target, `"7.0"`.
    pub ptx: String,
    #[serde(default)]
    pub implies: Vec<String>,
    #[serde(default)]
    pub provides: Vec<String>,
    /// The occupancy profile (an `occupancy:` entry's name); without one, the SM
    /// inherits the profile of the first SM it implies that has one.
    pub occupancy: Option<String>,
}

/// An occupancy profile: the register file and residency limits of a family of SMs
/// (the CUDA Programming Guide's compute-capability table and `cuda_occupancy.h`),
/// from which a register target follows for a requested occupancy.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Occupancy {
    pub name: String,
    /// 32-bit registers per SM.
    pub regs_per_sm: u32,
    /// 32-bit registers one thread block may use.
    pub regs_per_block: u32,
    /// Registers one thread may use (`.maxnreg` at most this).
    pub max_regs_per_thread: u32,
    /// Registers are given to warps in units of this many.
    pub reg_alloc_unit: u32,
    /// Register-file partitions per SM (a warp's registers come from one).
    pub sub_partitions: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knob {
    pub name: String,
    /// `bool | int | string | list | enum`.
    #[serde(rename = "type")]
    pub ty: String,
    pub default: serde_yaml::Value,
    #[serde(default)]
    pub choices: Vec<String>,
    pub help: String,
    pub component: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remat {
    pub non_rematerializable: Vec<String>,
    #[serde(default)]
    pub knobs: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scheduling {
    /// Instructions one warp scheduler issues per cycle (the pipeliner's resource
    /// bound on the instruction count).
    #[serde(default = "one_u8")]
    pub issue_width: u8,
    pub latency_classes: Vec<LatencyClass>,
    pub default_latency_class: String,
    pub priorities: Vec<Priority>,
    #[serde(default)]
    pub knobs: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyClass {
    pub name: String,
    pub latency: u32,
    /// Cycles the class's functional unit is busy per warp instruction (reciprocal
    /// throughput), for the pipeliner's resource bound.
    #[serde(default = "one")]
    pub issue: u32,
    /// The functional unit the class occupies (default: the class's own name).
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    /// Value types the class is limited to (the instruction's row type).
    #[serde(default)]
    pub types: Vec<String>,
    /// Pointer types (address spaces) a memory access must use for the class.
    #[serde(default)]
    pub spaces: Vec<String>,
    /// Per-SM-family figures: an SM takes the entry of itself or of the nearest SM it
    /// implies.
    #[serde(default)]
    pub by_sm: Vec<LatencyBySm>,
}

fn one() -> u32 {
    1
}

fn one_u8() -> u8 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyBySm {
    pub sm: String,
    pub latency: u32,
    #[serde(default)]
    pub issue: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Priority {
    pub name: String,
    pub start: u32,
    pub end: u32,
    pub priority: u32,
    pub window: u32,
    #[serde(default)]
    pub categories: Vec<String>,
}
