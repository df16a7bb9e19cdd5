//! The NVPTX tables, generated at compile time from `target-desc/nvptx/`, behind a
//! typed API.
//!
//! ```
//! use tables::{Action, Opcode, Target, Vt};
//! let sm80 = Target::sm("80").unwrap();
//! assert_eq!(sm80.action(Opcode::FMA, Vt::V2BF16), Action::Legal);
//! assert!(!sm80.is_legal(Opcode::FADD, Vt::BF16));
//! ```
//!
//! The engine itself is generic over [`TargetTables`]; this crate is the compiled-in
//! NVPTX instance. A description loaded at run time (`ptxc --target-desc DIR`) has the
//! same type, so every tool works on both.

pub use target_desc::tables::{
    Action, ActionDetail, CondCodeId, Decision, OpcodeId, RegisterClassInfo, SmTables, TargetTables, VtId,
};

mod generated {
    codegen_macros::target_tables!("target-desc/nvptx");
}

pub use generated::{CondCode, Knob, Opcode, Vt, TABLES};

/// The compiled-in NVPTX tables.
pub fn nvptx() -> &'static TargetTables {
    &TABLES
}

/// An SM name that the description does not define.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown SM `{name}`{}", hint(.suggestions))]
pub struct UnknownSm {
    pub name: String,
    pub suggestions: Vec<String>,
}

fn hint(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; closest: {}", suggestions.join(", "))
    }
}

/// Looks up an SM in any tables, accepting `80`, `sm_80`, `90a`; an unknown name gets
/// the closest valid names.
pub fn find_sm<'t>(tables: &'t TargetTables, name: &str) -> Result<&'t SmTables, UnknownSm> {
    tables.find_sm(name).ok_or_else(|| {
        let bare = name.trim().to_ascii_lowercase();
        let bare = bare.trim_start_matches("sm_").trim_start_matches("compute_").to_string();
        let numbers: Vec<&str> = tables.sms.iter().map(|s| s.number()).collect();
        let mut suggestions: Vec<String> =
            target_desc::error::closest(&bare, numbers.iter().copied()).into_iter().map(|n| format!("sm_{n}")).collect();
        if suggestions.is_empty() {
            // Numerically nearest SMs, for inputs like `sm_95`.
            if let Ok(wanted) = bare.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<i64>() {
                let mut by_distance: Vec<(i64, &str)> = tables
                    .sms
                    .iter()
                    .filter_map(|s| s.number().trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<i64>().ok().map(|n| ((n - wanted).abs(), s.name)))
                    .collect();
                by_distance.sort();
                by_distance.dedup_by_key(|(_, n)| *n);
                suggestions = by_distance.into_iter().take(3).map(|(_, n)| n.to_string()).collect();
            }
        }
        UnknownSm { name: name.to_string(), suggestions }
    })
}

/// One SM of the compiled-in NVPTX description.
#[derive(Copy, Clone, Debug)]
pub struct Target {
    tables: &'static TargetTables,
    sm: &'static SmTables,
}

impl Target {
    /// `Target::sm("80")`, `Target::sm("sm_90a")`.
    pub fn sm(name: &str) -> Result<Target, UnknownSm> {
        Ok(Target { tables: &TABLES, sm: find_sm(&TABLES, name)? })
    }

    /// Every SM of the description, in description order.
    pub fn all() -> impl Iterator<Item = Target> {
        TABLES.sms.iter().map(|sm| Target { tables: &TABLES, sm })
    }

    pub fn name(&self) -> &'static str {
        self.sm.name
    }

    pub fn tables(&self) -> &'static TargetTables {
        self.tables
    }

    pub fn sm_tables(&self) -> &'static SmTables {
        self.sm
    }

    /// Minimum PTX ISA version, as `(major, minor)`.
    pub fn min_ptx(&self) -> (u16, u16) {
        (self.sm.min_ptx / 10, self.sm.min_ptx % 10)
    }

    #[inline]
    pub fn action(&self, opcode: OpcodeId, vt: VtId) -> Action {
        self.sm.action(opcode, vt)
    }

    #[inline]
    pub fn is_legal(&self, opcode: OpcodeId, vt: VtId) -> bool {
        self.sm.is_legal(opcode, vt)
    }

    #[inline]
    pub fn type_supported(&self, vt: VtId) -> bool {
        self.sm.type_supported(vt)
    }

    pub fn register_class(&self, vt: VtId) -> Option<&'static RegisterClassInfo> {
        self.tables.register_type(self.sm, vt).map(|(class, _)| class)
    }

    pub fn cc_action(&self, cc: CondCodeId, vt: VtId) -> Action {
        self.sm.cc_action(cc, vt)
    }

    /// The action and the description rule that decided it.
    pub fn decide(&self, opcode: OpcodeId, vt: VtId) -> Decision {
        self.tables.decide(self.sm, opcode, vt)
    }

    pub fn has_feature(&self, feature: &str) -> bool {
        self.tables.names.features.get(feature).is_some_and(|f| self.sm.has_feature(f as u8))
    }
}
