//! Validation and resolution: from parsed description files to [`TargetTables`].
//!
//! This is the one place that decides what a description means. The proc macro and the
//! runtime loader both call [`build`], so they cannot disagree. Order of work:
//! names (types, categories, features, SMs, opcodes, codes, intrinsics, knobs), then
//! register classes per SM, then the rules: each rule covers a set of
//! `(key, type)` cells on a set of SMs; per cell and SM the most specific covering rule
//! wins (its SM set is a strict subset of every other covering rule's). Equally specific
//! rules that disagree, duplicates, and rules that never win are errors.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::error::{closest, DescError, DescErrorKind, DescResult};
use crate::rules::{self, ActionSpec, Condition, Name, RuleStmt, RuleTable, Statement};
use crate::signature;
use crate::syntax::{self, ClassMember, Sections};
use crate::tables::*;
use crate::yaml_lines;

/// One description file: the path shown to users and its text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub display: String,
    pub text: Arc<str>,
}

fn leak<T>(items: Vec<T>) -> &'static [T] {
    Box::leak(items.into_boxed_slice())
}

fn leak_str(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// A set of SMs as a bit set over their index in the description (at most 128).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct SmSet(u128);

impl SmSet {
    fn contains(self, sm: usize) -> bool {
        self.0 >> sm & 1 == 1
    }
    fn is_subset(self, other: SmSet) -> bool {
        self.0 & !other.0 == 0
    }
    fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// An entry of any YAML section with where it was written.
struct Located<T> {
    file: usize,
    line: usize,
    item: T,
}

struct Builder {
    files: Vec<SourceFile>,
    rules: Vec<RuleInfo>,
    types: Vec<TypeInfo>,
    type_index: HashMap<String, usize>,
    categories: Vec<CategoryInfo>,
    features: Vec<FeatureInfo>,
    sm_names: Vec<String>,
    sm_sets_by_sm: Vec<SmSet>,
    sm_features: Vec<BTreeSet<u8>>,
    all_sms: SmSet,
    sets: HashMap<String, (Vec<Name>, usize, usize)>,
}

impl Builder {
    fn file(&self, index: usize) -> &SourceFile {
        &self.files[index]
    }

    fn err(&self, kind: DescErrorKind, file: usize, line: usize, column: usize) -> DescError {
        let f = self.file(file);
        DescError { kind, file: f.display.clone(), line, column, text: Some(f.text.clone()) }
    }

    /// An error at `token` inside the item starting at `line`.
    fn err_at(&self, kind: DescErrorKind, file: usize, line: usize, token: &str) -> DescError {
        let (line, column) = yaml_lines::find_token(&self.file(file).text, line, 8, token);
        self.err(kind, file, line, column)
    }

    fn source(&self, file: usize, line: usize) -> SourceLoc {
        SourceLoc { file: leak_str(&self.file(file).display), line: line as u32 }
    }

    fn add_rule(&mut self, file: usize, line: usize, text: &str) -> DescResult<u16> {
        let index = self.rules.len();
        if index > u16::MAX as usize {
            return Err(self.err(DescErrorKind::Invalid("too many rules (at most 65536)".into()), file, line, 1));
        }
        self.rules.push(RuleInfo { source: self.source(file, line), text: leak_str(text) });
        Ok(index as u16)
    }

    fn type_id(&self, name: &str) -> Option<u8> {
        self.type_index.get(name).map(|&i| self.types[i].id)
    }

    fn unknown(&self, what: &'static str, name: &str, candidates: Vec<&str>) -> DescErrorKind {
        DescErrorKind::Unknown { what, name: name.to_string(), suggestions: closest(name, candidates) }
    }

    /// Evaluates a condition to the set of SMs where it holds.
    fn eval(&self, cond: &Condition, file: usize) -> DescResult<SmSet> {
        Ok(match cond {
            Condition::Atom(name) => {
                if let Some(f) = self.features.iter().position(|f| f.name == name.text) {
                    let mut set = 0u128;
                    for (sm, feats) in self.sm_features.iter().enumerate() {
                        if feats.contains(&(f as u8)) {
                            set |= 1 << sm;
                        }
                    }
                    SmSet(set)
                } else if let Some(sm) = self.sm_names.iter().position(|s| *s == name.text) {
                    // An SM name stands for the SM and every SM that implies it.
                    let mut set = 0u128;
                    for (other, reach) in self.sm_sets_by_sm.iter().enumerate() {
                        if reach.contains(sm) {
                            set |= 1 << other;
                        }
                    }
                    SmSet(set)
                } else {
                    let candidates: Vec<&str> = self
                        .features
                        .iter()
                        .map(|f| f.name)
                        .chain(self.sm_names.iter().map(String::as_str))
                        .collect();
                    return Err(self.err(self.unknown("SM or feature", &name.text, candidates), file, name.line, name.column));
                }
            }
            Condition::Not(inner) => SmSet(!self.eval(inner, file)?.0 & self.all_sms.0),
            Condition::And(items) => {
                let mut set = self.all_sms;
                for c in items {
                    set = SmSet(set.0 & self.eval(c, file)?.0);
                }
                set
            }
            Condition::Or(items) => {
                let mut set = SmSet(0);
                for c in items {
                    set = SmSet(set.0 | self.eval(c, file)?.0);
                }
                set
            }
        })
    }

    /// The PTX version a condition requires: the largest `ptx` of the features it
    /// requires outright (positive atoms of a conjunction; alternatives and negations
    /// require nothing definite).
    fn required_ptx(&self, cond: &Condition) -> u16 {
        match cond {
            Condition::Atom(name) => self.features.iter().find(|f| f.name == name.text).map_or(0, |f| f.min_ptx),
            Condition::And(items) => items.iter().map(|c| self.required_ptx(c)).max().unwrap_or(0),
            Condition::Not(_) | Condition::Or(_) => 0,
        }
    }

    /// Expands `$set` references in a rule's name list.
    fn expand_names(&self, names: &[Name], file: usize) -> DescResult<Vec<Name>> {
        let mut out = Vec::new();
        for name in names {
            if name.is_set() {
                match self.sets.get(&name.text) {
                    Some((items, _, _)) => out.extend(items.iter().map(|i| Name { line: name.line, column: name.column, ..i.clone() })),
                    None => {
                        let candidates: Vec<&str> = self.sets.keys().map(String::as_str).collect();
                        return Err(self.err(self.unknown("set", &name.text, candidates), file, name.line, name.column));
                    }
                }
            } else {
                out.push(name.clone());
            }
        }
        Ok(out)
    }

    fn sm_list(&self, set: SmSet) -> String {
        let names: Vec<&str> =
            (0..self.sm_names.len()).filter(|&i| set.contains(i)).map(|i| self.sm_names[i].as_str()).collect();
        names.join(", ")
    }
}

fn parse_ptx_version(text: &str) -> Option<u16> {
    let (major, minor) = text.trim().split_once('.')?;
    let major: u16 = major.parse().ok()?;
    let minor: u16 = minor.parse().ok()?;
    (minor < 10).then_some(major * 10 + minor)
}

/// Keeps an error position inside the text (YAML reports end-of-input errors one line
/// past the last), so the source line can be shown.
pub(crate) fn clamp_position(text: &str, (line, column): (usize, usize)) -> (usize, usize) {
    let count = text.lines().count().max(1);
    if line > count {
        let last = text.lines().last().unwrap_or("");
        (count, last.chars().count() + 1)
    } else {
        (line, column)
    }
}

/// Reads the YAML of one file; an empty or comment-only file has no sections.
fn parse_yaml<T: for<'de> serde::Deserialize<'de> + Default>(file: &SourceFile) -> DescResult<T> {
    if file.text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#') || l.trim() == "---") {
        return Ok(T::default());
    }
    serde_yaml::from_str(&file.text).map_err(|e| {
        let (line, column) = clamp_position(&file.text, e.location().map(|l| (l.line(), l.column())).unwrap_or((1, 1)));
        // serde_yaml appends "at line X column Y"; the location is already in front.
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        DescError { kind: DescErrorKind::Yaml(message), file: file.display.clone(), line, column, text: Some(file.text.clone()) }
    })
}

impl Default for syntax::Manifest {
    fn default() -> Self {
        syntax::Manifest { target: String::new(), files: Vec::new() }
    }
}

/// Builds the tables from a manifest and the files it lists (in manifest order).
pub fn build(manifest: SourceFile, files: Vec<SourceFile>) -> DescResult<TargetTables> {
    let manifest_syntax: syntax::Manifest = parse_yaml(&manifest)?;
    let mut all_files = vec![manifest];
    all_files.extend(files);
    let mut b = Builder {
        files: all_files,
        rules: Vec::new(),
        types: Vec::new(),
        type_index: HashMap::new(),
        categories: Vec::new(),
        features: Vec::new(),
        sm_names: Vec::new(),
        sm_sets_by_sm: Vec::new(),
        sm_features: Vec::new(),
        all_sms: SmSet(0),
        sets: HashMap::new(),
    };

    // Parse every file first so syntax errors come before meaning errors.
    let mut sections: Vec<(usize, Sections)> = Vec::new();
    let mut rule_files: Vec<(usize, Vec<Statement>)> = Vec::new();
    for index in 1..b.files.len() {
        let file = b.file(index).clone();
        if file.display.ends_with(".rules") {
            rule_files.push((index, rules::parse_file(&file.text, &file.display).map_err(|mut e| {
                e.text = Some(file.text.clone());
                e
            })?));
        } else {
            sections.push((index, parse_yaml(&file)?));
        }
    }

    macro_rules! gather {
        ($field:ident, $path:expr) => {{
            let mut out = Vec::new();
            for (file, s) in sections.iter_mut() {
                let lines = yaml_lines::item_lines(&b.files[*file].text, &$path);
                let items = std::mem::take(&mut s.$field);
                let count = items.len();
                for (i, item) in items.into_iter().enumerate() {
                    let line = if lines.len() == count { lines[i] } else { yaml_lines::key_line(&b.files[*file].text, &$path).unwrap_or(1) };
                    out.push(Located { file: *file, line, item });
                }
            }
            out
        }};
    }

    let value_types = gather!(value_types, ["value_types"]);
    let categories = gather!(categories, ["categories"]);
    let features = gather!(features, ["features"]);
    let sms = gather!(sms, ["sms"]);
    let occupancy = gather!(occupancy, ["occupancy"]);
    let opcodes = gather!(opcodes, ["opcodes"]);
    let cond_codes = gather!(condition_codes, ["condition_codes"]);
    let intrinsics = gather!(intrinsics, ["intrinsics"]);
    let knobs = gather!(knobs, ["knobs"]);
    let ptx_isa = gather!(ptx_isa, ["ptx_isa"]);
    let classes = gather!(register_classes, ["register_classes"]);
    let mut remat = None;
    let mut scheduling = None;
    for (file, s) in sections.iter_mut() {
        if let Some(r) = s.remat.take() {
            let line = yaml_lines::key_line(&b.files[*file].text, &["remat"]).unwrap_or(1);
            if let Some(Located { file: f0, line: l0, .. }) = &remat {
                let first = format!("{}:{}", b.file(*f0).display, l0);
                return Err(b.err(DescErrorKind::Duplicate { what: "section", name: "remat".into(), first }, *file, line, 1));
            }
            remat = Some(Located { file: *file, line, item: r });
        }
        if let Some(r) = s.scheduling.take() {
            let line = yaml_lines::key_line(&b.files[*file].text, &["scheduling"]).unwrap_or(1);
            if let Some(Located { file: f0, line: l0, .. }) = &scheduling {
                let first = format!("{}:{}", b.file(*f0).display, l0);
                return Err(b.err(DescErrorKind::Duplicate { what: "section", name: "scheduling".into(), first }, *file, line, 1));
            }
            scheduling = Some(Located { file: *file, line, item: r });
        }
    }

    // ---- value types ----
    let mut seen_ids: HashMap<u32, (usize, usize)> = HashMap::new();
    let mut pending_vectors = Vec::new();
    for Located { file, line, item } in &value_types {
        let (file, line) = (*file, *line);
        if let Some(&(f0, l0)) = seen_ids.get(&item.id) {
            let first = format!("{}:{}", b.file(f0).display, l0);
            return Err(b.err_at(DescErrorKind::Duplicate { what: "type id", name: item.id.to_string(), first }, file, line, "id"));
        }
        seen_ids.insert(item.id, (file, line));
        if item.id == 0 || item.id as usize >= MAX_VT_SLOTS {
            return Err(b.err_at(
                DescErrorKind::Invalid(format!(
                    "type id {} is out of range: ids must be between 1 and {} (the condition-code table packs 8 types per word, {CC_STRIDE} words per code)",
                    item.id,
                    MAX_VT_SLOTS - 1
                )),
                file,
                line,
                &item.id.to_string(),
            ));
        }
        if let Some(&i) = b.type_index.get(&item.name) {
            let first = b.types[i].source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "type", name: item.name.clone(), first }, file, line, &item.name));
        }
        let kind = match item.kind.as_str() {
            "int" => TypeKind::Int,
            "float" => TypeKind::Float,
            "vector" => TypeKind::Vector,
            "pointer" => TypeKind::Pointer,
            other => {
                return Err(b.err_at(
                    b.unknown("type kind", other, vec!["int", "float", "vector", "pointer"]),
                    file,
                    line,
                    other,
                ))
            }
        };
        let missing = |what: &str| {
            b.err_at(DescErrorKind::Invalid(format!("a {} type needs `{what}`", item.kind)), file, line, &item.name)
        };
        if item.writable.is_some() && kind != TypeKind::Pointer {
            return Err(b.err_at(DescErrorKind::Invalid("`writable` applies to pointer types only".into()), file, line, "writable"));
        }
        if item.generic.is_some() && kind != TypeKind::Pointer {
            return Err(b.err_at(DescErrorKind::Invalid("`generic` applies to pointer types only".into()), file, line, "generic"));
        }
        if item.generic == Some(true) {
            if let Some(first) = b.types.iter().find(|t| t.generic) {
                let message = format!("only one pointer type may be `generic`; {} ({}) already is", first.name, first.source);
                return Err(b.err_at(DescErrorKind::Invalid(message), file, line, "generic"));
            }
        }
        if item.kernel_args.is_some() && (kind != TypeKind::Pointer || item.generic == Some(true)) {
            return Err(b.err_at(DescErrorKind::Invalid("`kernel_args` applies to non-generic pointer types only".into()), file, line, "kernel_args"));
        }
        if item.kernel_args == Some(true) {
            if let Some(first) = b.types.iter().find(|t| t.kernel_args) {
                let message = format!("only one pointer type may be `kernel_args`; {} ({}) already is", first.name, first.source);
                return Err(b.err_at(DescErrorKind::Invalid(message), file, line, "kernel_args"));
            }
        }
        if item.mantissa.is_some() && kind != TypeKind::Float {
            return Err(b.err_at(DescErrorKind::Invalid("`mantissa` applies to float types only".into()), file, line, "mantissa"));
        }
        // IEEE 754 binary formats unless the entry says otherwise.
        let mantissa = match (kind, item.mantissa, item.bits) {
            (TypeKind::Float, Some(m), Some(bits)) if m + 2 <= bits => m,
            (TypeKind::Float, Some(_), _) => {
                return Err(b.err_at(DescErrorKind::Invalid("`mantissa` must leave room for a sign and an exponent".into()), file, line, "mantissa"))
            }
            (TypeKind::Float, None, Some(16)) => 10,
            (TypeKind::Float, None, Some(32)) => 23,
            (TypeKind::Float, None, Some(64)) => 52,
            (TypeKind::Float, None, Some(128)) => 112,
            (TypeKind::Float, None, _) => {
                return Err(b.err_at(DescErrorKind::Invalid("a float type of a non-IEEE width needs `mantissa`".into()), file, line, &item.name))
            }
            _ => 0,
        };
        let (bits, lanes, addrspace) = match kind {
            TypeKind::Int | TypeKind::Float => (item.bits.ok_or_else(|| missing("bits"))?, 1, 0),
            TypeKind::Pointer => (item.bits.unwrap_or(64), 1, item.addrspace.ok_or_else(|| missing("addrspace"))?),
            TypeKind::Vector => {
                item.elem.as_ref().ok_or_else(|| missing("elem"))?;
                (0, item.lanes.ok_or_else(|| missing("lanes"))?, 0)
            }
        };
        let info = TypeInfo {
            id: item.id as u8,
            name: leak_str(&item.name),
            kind,
            bits: bits as u16,
            elem: item.id as u8,
            lanes: lanes as u16,
            addrspace: addrspace as u16,
            writable: item.writable.unwrap_or(true),
            generic: item.generic.unwrap_or(false),
            kernel_args: item.kernel_args.unwrap_or(false),
            mantissa: mantissa as u8,
            source: b.source(file, line),
        };
        b.type_index.insert(item.name.clone(), b.types.len());
        if kind == TypeKind::Vector {
            pending_vectors.push((b.types.len(), file, line, item.elem.clone().unwrap_or_default()));
        }
        b.types.push(info);
    }
    for (index, file, line, elem) in pending_vectors {
        let Some(&e) = b.type_index.get(&elem) else {
            let candidates: Vec<&str> = b.types.iter().map(|t| t.name).collect();
            return Err(b.err_at(b.unknown("type", &elem, candidates), file, line, &elem));
        };
        let element = b.types[e];
        if !matches!(element.kind, TypeKind::Int | TypeKind::Float) {
            return Err(b.err_at(DescErrorKind::Invalid(format!("vector element `{elem}` must be a scalar integer or float type")), file, line, &elem));
        }
        let t = &mut b.types[index];
        t.elem = element.id;
        t.bits = element.bits * t.lanes;
    }
    let vt_slots = b.types.iter().map(|t| t.id as usize + 1).max().unwrap_or(1);

    // ---- categories ----
    for Located { file, line, item } in &categories {
        if let Some(c) = b.categories.iter().find(|c| c.name == item.name) {
            let first = c.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "category", name: item.name.clone(), first }, *file, *line, &item.name));
        }
        let source = b.source(*file, *line);
        b.categories.push(CategoryInfo { name: leak_str(&item.name), help: leak_str(&item.help), source });
    }
    let category_index = |b: &Builder, name: &str, file: usize, line: usize, what: &'static str| -> DescResult<u8> {
        b.categories.iter().position(|c| c.name == name).map(|i| i as u8).ok_or_else(|| {
            b.err_at(b.unknown(what, name, b.categories.iter().map(|c| c.name).collect()), file, line, name)
        })
    };

    // ---- features ----
    for Located { file, line, item } in &features {
        if let Some(f) = b.features.iter().find(|f| f.name == item.name) {
            let first = f.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "feature", name: item.name.clone(), first }, *file, *line, &item.name));
        }
        let min_ptx = match &item.ptx {
            None => 0,
            Some(v) => parse_ptx_version(v).ok_or_else(|| {
                b.err_at(DescErrorKind::Invalid(format!("PTX version `{v}` is not of the form MAJOR.MINOR")), *file, *line, v)
            })?,
        };
        let source = b.source(*file, *line);
        b.features.push(FeatureInfo { name: leak_str(&item.name), help: leak_str(&item.help), min_ptx, source });
    }
    if b.features.len() > 255 {
        return Err(b.err(DescErrorKind::Invalid("too many features (at most 255)".into()), features[255].file, features[255].line, 1));
    }

    // ---- SM graph ----
    if sms.len() > 128 {
        return Err(b.err(DescErrorKind::Invalid("too many SMs (at most 128)".into()), sms[128].file, sms[128].line, 1));
    }
    for Located { file, line, item } in &sms {
        if let Some(i) = b.sm_names.iter().position(|n| *n == item.name) {
            let first = format!("{}:{}", b.file(sms[i].file).display, sms[i].line);
            return Err(b.err_at(DescErrorKind::Duplicate { what: "SM", name: item.name.clone(), first }, *file, *line, &item.name));
        }
        if !item.name.starts_with("sm_") {
            return Err(b.err_at(DescErrorKind::Invalid(format!("SM name `{}` must start with `sm_`", item.name)), *file, *line, &item.name));
        }
        b.sm_names.push(item.name.clone());
    }
    let mut implies: Vec<Vec<usize>> = Vec::new();
    for Located { file, line, item } in &sms {
        let mut edges = Vec::new();
        for target in &item.implies {
            match b.sm_names.iter().position(|n| n == target) {
                Some(t) => edges.push(t),
                None => {
                    let candidates = b.sm_names.iter().map(String::as_str).collect();
                    return Err(b.err_at(b.unknown("SM", target, candidates), *file, *line, target));
                }
            }
        }
        for feature in &item.provides {
            if !b.features.iter().any(|f| f.name == *feature) {
                let candidates = b.features.iter().map(|f| f.name).collect();
                return Err(b.err_at(b.unknown("feature", feature, candidates), *file, *line, feature));
            }
        }
        implies.push(edges);
    }
    // Cycle check by depth-first search, reporting the cycle's path.
    fn visit(sm: usize, implies: &[Vec<usize>], state: &mut [u8], path: &mut Vec<usize>) -> Option<Vec<usize>> {
        state[sm] = 1;
        path.push(sm);
        for &next in &implies[sm] {
            if state[next] == 1 {
                let start = path.iter().position(|&p| p == next).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(next);
                return Some(cycle);
            }
            if state[next] == 0 {
                if let Some(c) = visit(next, implies, state, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        state[sm] = 2;
        None
    }
    let mut state = vec![0u8; sms.len()];
    for sm in 0..sms.len() {
        if state[sm] == 0 {
            if let Some(cycle) = visit(sm, &implies, &mut state, &mut Vec::new()) {
                let text: Vec<&str> = cycle.iter().map(|&i| b.sm_names[i].as_str()).collect();
                let last = cycle[cycle.len() - 2];
                let target = &b.sm_names[cycle[cycle.len() - 1]];
                return Err(b.err_at(DescErrorKind::SmCycle(text.join(" implies ")), sms[last].file, sms[last].line, target));
            }
        }
    }
    // Reachability (reflexive, transitive) and feature closure.
    for sm in 0..sms.len() {
        let mut set = 0u128;
        let mut stack = vec![sm];
        while let Some(s) = stack.pop() {
            if set >> s & 1 == 0 {
                set |= 1 << s;
                stack.extend(&implies[s]);
            }
        }
        b.sm_sets_by_sm.push(SmSet(set));
        let mut feats = BTreeSet::new();
        for (other, Located { item, .. }) in sms.iter().enumerate() {
            if set >> other & 1 == 1 {
                for f in &item.provides {
                    feats.insert(b.features.iter().position(|x| x.name == *f).unwrap_or(0) as u8);
                }
            }
        }
        b.sm_features.push(feats);
        b.all_sms.0 |= 1 << sm;
    }

    // ---- occupancy profiles, then each SM's (own, else the first implied SM's) ----
    let mut profiles: Vec<OccupancyInfo> = Vec::new();
    for Located { file, line, item } in &occupancy {
        if let Some(p) = profiles.iter().find(|p| p.name == item.name) {
            let first = p.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "occupancy profile", name: item.name.clone(), first }, *file, *line, &item.name));
        }
        let fields = [
            ("regs_per_sm", item.regs_per_sm),
            ("regs_per_block", item.regs_per_block),
            ("max_regs_per_thread", item.max_regs_per_thread),
            ("reg_alloc_unit", item.reg_alloc_unit),
            ("sub_partitions", item.sub_partitions),
            ("max_warps_per_sm", item.max_warps_per_sm),
            ("max_blocks_per_sm", item.max_blocks_per_sm),
            ("max_threads_per_block", item.max_threads_per_block),
        ];
        if let Some((field, _)) = fields.iter().find(|(_, v)| *v == 0) {
            return Err(b.err_at(DescErrorKind::Invalid(format!("occupancy profile `{}`: `{field}` must be positive", item.name)), *file, *line, field));
        }
        if item.reg_alloc_unit % 32 != 0 {
            return Err(b.err_at(DescErrorKind::Invalid(format!("occupancy profile `{}`: `reg_alloc_unit` must be a multiple of the warp size (32), found {}", item.name, item.reg_alloc_unit)), *file, *line, "reg_alloc_unit"));
        }
        if item.max_regs_per_thread > 255 {
            return Err(b.err_at(DescErrorKind::Invalid(format!("occupancy profile `{}`: `max_regs_per_thread` is at most 255 (PTX's .maxnreg), found {}", item.name, item.max_regs_per_thread)), *file, *line, "max_regs_per_thread"));
        }
        profiles.push(OccupancyInfo {
            name: leak_str(&item.name),
            regs_per_sm: item.regs_per_sm,
            regs_per_block: item.regs_per_block,
            max_regs_per_thread: item.max_regs_per_thread,
            reg_alloc_unit: item.reg_alloc_unit,
            sub_partitions: item.sub_partitions,
            max_warps_per_sm: item.max_warps_per_sm,
            max_blocks_per_sm: item.max_blocks_per_sm,
            max_threads_per_block: item.max_threads_per_block,
            source: b.source(*file, *line),
        });
    }
    let mut own_profile: Vec<Option<OccupancyInfo>> = Vec::with_capacity(sms.len());
    for Located { file, line, item } in &sms {
        own_profile.push(match &item.occupancy {
            None => None,
            Some(name) => Some(*profiles.iter().find(|p| p.name == name).ok_or_else(|| {
                b.err_at(b.unknown("occupancy profile", name, profiles.iter().map(|p| p.name).collect()), *file, *line, name)
            })?),
        });
    }
    fn inherited(sm: usize, own: &[Option<OccupancyInfo>], implies: &[Vec<usize>]) -> Option<OccupancyInfo> {
        // The implies graph is acyclic (checked above), so this terminates.
        own[sm].or_else(|| implies[sm].iter().find_map(|&i| inherited(i, own, implies)))
    }
    let sm_occupancy: Vec<Option<OccupancyInfo>> = (0..sms.len()).map(|sm| inherited(sm, &own_profile, &implies)).collect();

    // ---- opcodes ----
    let mut opcode_infos: Vec<OpcodeInfo> = Vec::new();
    for Located { file, line, item } in &opcodes {
        let (file, line) = (*file, *line);
        if item.id as usize >= OPCODE_STRIDE {
            return Err(b.err_at(
                DescErrorKind::Invalid(format!(
                    "opcode id {} is out of range: ids must be below {OPCODE_STRIDE} (the action table's row stride)",
                    item.id
                )),
                file,
                line,
                &item.id.to_string(),
            ));
        }
        if let Some(o) = opcode_infos.iter().find(|o| o.name == item.name) {
            let first = o.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "opcode", name: item.name.clone(), first }, file, line, &item.name));
        }
        if let Some(o) = opcode_infos.iter().find(|o| o.id as u32 == item.id) {
            let first = format!("{} ({})", o.source, o.name);
            return Err(b.err_at(DescErrorKind::Duplicate { what: "opcode id", name: item.id.to_string(), first }, file, line, &item.id.to_string()));
        }
        let signature = build_signature(&b, &item.sig, &item.types, file, line)?;
        let props = build_props(&b, &item.props, file, line)?;
        let mut cats = Vec::new();
        for c in &item.categories {
            cats.push(category_index(&b, c, file, line, "category")?);
        }
        let flags: Vec<&'static str> = item.flags.iter().map(|f| leak_str(f)).collect();
        if let Some(index) = item.type_operand {
            let typed = signature.operands.get(index as usize).is_some_and(|o| matches!(o.kind, OperandKind::TypeVar(_) | OperandKind::Fixed(_)));
            if !typed {
                return Err(b.err_at(
                    DescErrorKind::Invalid(format!("type_operand {index} of `{}` is not a value operand of `{}`", item.name, item.sig)),
                    file,
                    line,
                    "type_operand",
                ));
            }
        }
        opcode_infos.push(OpcodeInfo {
            id: item.id as u16,
            name: leak_str(&item.name),
            signature,
            props,
            categories: leak(cats),
            flags: leak(flags),
            type_operand: item.type_operand.map(|i| i as u8),
            source: b.source(file, line),
        });
    }

    // ---- condition codes ----
    let mut cc_infos: Vec<CondCodeInfo> = Vec::new();
    for Located { file, line, item } in &cond_codes {
        if item.id >= 64 {
            return Err(b.err_at(DescErrorKind::Invalid(format!("condition code id {} is out of range (below 64)", item.id)), *file, *line, &item.id.to_string()));
        }
        if let Some(c) = cc_infos.iter().find(|c| c.name == item.name || c.id as u32 == item.id) {
            let first = c.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "condition code", name: item.name.clone(), first }, *file, *line, &item.name));
        }
        if let Some(t) = &item.int_type {
            if t != "s" && t != "u" {
                return Err(b.err_at(DescErrorKind::Invalid(format!("expected `s` or `u` for `int_type`, found `{t}`")), *file, *line, t));
            }
            if item.int.is_none() {
                return Err(b.err_at(DescErrorKind::Invalid("`int_type` needs an `int` form".into()), *file, *line, "int_type"));
            }
        }
        cc_infos.push(CondCodeInfo {
            id: item.id as u8,
            name: leak_str(&item.name),
            int_form: item.int.as_deref().map(leak_str),
            float_form: item.float.as_deref().map(leak_str),
            int_type: item.int_type.as_deref().map(leak_str),
            source: b.source(*file, *line),
        });
    }
    let cc_slots = cc_infos.iter().map(|c| c.id as usize + 1).max().unwrap_or(0);

    // ---- intrinsics ----
    let mut intrinsic_infos: Vec<IntrinsicInfo> = Vec::new();
    for Located { file, line, item } in &intrinsics {
        if let Some(i) = intrinsic_infos.iter().find(|i| i.name == item.name) {
            let first = i.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "intrinsic", name: item.name.clone(), first }, *file, *line, &item.name));
        }
        let signature = build_signature(&b, &item.sig, &item.types, *file, *line)?;
        let props = build_props(&b, &item.props, *file, *line)?;
        intrinsic_infos.push(IntrinsicInfo { name: leak_str(&item.name), signature, props, source: b.source(*file, *line) });
    }

    // ---- PTX instruction requirements ----
    let mut ptx_requirements: Vec<PtxRequirementInfo> = Vec::new();
    for Located { file, line, item } in &ptx_isa {
        let (file, line) = (*file, *line);
        let mut words = item.insn.split('.');
        let opcode = words.next().unwrap_or("");
        if opcode.is_empty() || !opcode.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()) || words.any(|w| w.is_empty()) {
            return Err(b.err_at(DescErrorKind::Invalid(format!("`{}` is not an instruction form such as `atom.add.f64`", item.insn)), file, line, &item.insn));
        }
        if let Some(r) = ptx_requirements.iter().find(|r| r.insn == item.insn) {
            let first = r.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "PTX instruction form", name: item.insn.clone(), first }, file, line, &item.insn));
        }
        let Some(sm) = b.sm_names.iter().position(|n| *n == item.sm) else {
            let candidates = b.sm_names.iter().map(String::as_str).collect();
            return Err(b.err_at(b.unknown("SM", &item.sm, candidates), file, line, &item.sm));
        };
        let ptx = parse_ptx_version(&item.ptx)
            .ok_or_else(|| b.err_at(DescErrorKind::Invalid(format!("PTX version `{}` is not of the form MAJOR.MINOR", item.ptx)), file, line, &item.ptx))?;
        ptx_requirements.push(PtxRequirementInfo { insn: leak_str(&item.insn), sm: sm as u8, ptx, source: b.source(file, line) });
    }

    // ---- knobs ----
    let mut knob_infos: Vec<KnobInfo> = Vec::new();
    for Located { file, line, item } in &knobs {
        let (file, line) = (*file, *line);
        if let Some(k) = knob_infos.iter().find(|k| k.name == item.name) {
            let first = k.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "knob", name: item.name.clone(), first }, file, line, &item.name));
        }
        let wrong = |expected: &str| {
            b.err_at(
                DescErrorKind::Invalid(format!(
                    "knob `{}` has type {} but its default `{}` is not {expected}",
                    item.name,
                    item.ty,
                    serde_yaml::to_string(&item.default).unwrap_or_default().trim()
                )),
                file,
                line,
                "default",
            )
        };
        use serde_yaml::Value;
        let default = match (item.ty.as_str(), &item.default) {
            ("bool", Value::Bool(v)) => KnobValue::Bool(*v),
            ("bool", _) => return Err(wrong("true or false")),
            ("int", Value::Number(n)) if n.as_i64().is_some() => KnobValue::Int(n.as_i64().unwrap_or(0)),
            ("int", _) => return Err(wrong("an integer")),
            ("string", Value::String(s)) => KnobValue::Str(leak_str(s)),
            ("string", _) => return Err(wrong("a string")),
            ("list", Value::Sequence(items)) => {
                let mut out = Vec::new();
                for i in items {
                    match i {
                        Value::String(s) => out.push(leak_str(s)),
                        _ => return Err(wrong("a list of strings")),
                    }
                }
                KnobValue::List(leak(out))
            }
            ("list", _) => return Err(wrong("a list of strings")),
            ("enum", Value::String(s)) if item.choices.contains(s) => KnobValue::Str(leak_str(s)),
            ("enum", _) => return Err(wrong(&format!("one of its choices ({})", item.choices.join(", ")))),
            (other, _) => {
                return Err(b.err_at(b.unknown("knob type", other, vec!["bool", "int", "string", "list", "enum"]), file, line, other))
            }
        };
        knob_infos.push(KnobInfo {
            name: leak_str(&item.name),
            default,
            choices: leak(item.choices.iter().map(|c| leak_str(c)).collect()),
            help: leak_str(&item.help),
            component: leak_str(&item.component),
            source: b.source(file, line),
        });
    }
    let knob_list = |b: &Builder, names: &[String], file: usize, line: usize| -> DescResult<&'static [u16]> {
        let mut out = Vec::new();
        for n in names {
            match knob_infos.iter().position(|k| k.name == n) {
                Some(i) => out.push(i as u16),
                None => {
                    let (l, _) = yaml_lines::find_token(&b.file(file).text, line, 200, n);
                    return Err(b.err_at(b.unknown("knob", n, knob_infos.iter().map(|k| k.name).collect()), file, l, n));
                }
            }
        }
        Ok(leak(out))
    };

    // ---- remat ----
    let remat_info = match &remat {
        None => RematInfo { excluded_categories: &[], excluded_opcodes: &[], knobs: &[], source: SourceLoc { file: "", line: 0 } },
        Some(Located { file, line, item }) => {
            let mut cats = Vec::new();
            for c in &item.non_rematerializable {
                let (l, _) = yaml_lines::find_token(&b.file(*file).text, *line, 50, c);
                cats.push(category_index(&b, c, *file, l, "remat category")?);
            }
            let mut excluded: Vec<u16> = opcode_infos
                .iter()
                .filter(|o| o.categories.iter().any(|c| cats.contains(c)))
                .map(|o| o.id)
                .collect();
            excluded.sort();
            RematInfo {
                excluded_categories: leak(cats),
                excluded_opcodes: leak(excluded),
                knobs: knob_list(&b, &item.knobs, *file, *line)?,
                source: b.source(*file, *line),
            }
        }
    };

    // ---- scheduling ----
    // Per class: its `by_sm` entries (SM index, latency, issue) and the class's line.
    let mut class_by_sm: Vec<(Vec<(usize, u32, u32)>, SourceLoc)> = Vec::new();
    let scheduling_info = match &scheduling {
        None => SchedulingInfo { priorities: &[], latency_classes: &[], issue_width: 1, units: &[], default_latency_class: 0, knobs: &[] },
        Some(Located { file, line, item }) => {
            let file = *file;
            let text = b.file(file).text.clone();
            let class_lines = yaml_lines::item_lines(&text, &["scheduling", "latency_classes"]);
            let mut classes = Vec::new();
            let mut units: Vec<&'static str> = Vec::new();
            for (i, c) in item.latency_classes.iter().enumerate() {
                let l = class_lines.get(i).copied().unwrap_or(*line);
                if classes.iter().any(|k: &LatencyClass| k.name == c.name) {
                    return Err(b.err_at(DescErrorKind::Invalid(format!("latency class `{}` is defined twice", c.name)), file, l, &c.name));
                }
                let mut cats = Vec::new();
                for cat in &c.categories {
                    cats.push(category_index(&b, cat, file, l, "category")?);
                }
                let mut types = Vec::new();
                for t in &c.types {
                    match b.type_id(t) {
                        Some(id) => types.push(id),
                        None => return Err(b.err_at(b.unknown("value type", t, b.types.iter().map(|t| t.name).collect()), file, l, t)),
                    }
                }
                let mut spaces = Vec::new();
                let pointers: Vec<&str> = b.types.iter().filter(|t| t.kind == TypeKind::Pointer).map(|t| t.name).collect();
                for s in &c.spaces {
                    match b.types.iter().find(|t| t.name == s && t.kind == TypeKind::Pointer) {
                        Some(t) => spaces.push(t.id),
                        None => return Err(b.err_at(b.unknown("pointer type", s, pointers.clone()), file, l, s)),
                    }
                }
                if c.latency == 0 || c.issue == 0 {
                    return Err(b.err_at(DescErrorKind::Invalid(format!("latency class `{}`: latency and issue must be at least 1", c.name)), file, l, "latency"));
                }
                let unit_name = c.unit.as_deref().unwrap_or(&c.name);
                let unit = match units.iter().position(|u| *u == unit_name) {
                    Some(u) => u,
                    None => {
                        units.push(leak_str(unit_name));
                        units.len() - 1
                    }
                };
                classes.push(LatencyClass {
                    name: leak_str(&c.name),
                    latency: c.latency,
                    issue: c.issue,
                    unit: unit as u8,
                    categories: leak(cats),
                    types: leak(types),
                    spaces: leak(spaces),
                    source: b.source(file, l),
                });
                // Per-SM entries: validated here, resolved per SM below.
                                let mut per_sm = Vec::new();
                for e in &c.by_sm {
                    // The entry's own line: the first after the class's naming its SM.
                    let needle = format!("sm: {}", e.sm);
                    let el = text.lines().enumerate().skip(l.saturating_sub(1)).find(|(_, line)| line.contains(&needle)).map_or(l, |(i, _)| i + 1);
                    let Some(sm) = b.sm_names.iter().position(|n| *n == e.sm) else {
                        return Err(b.err_at(b.unknown("SM", &e.sm, b.sm_names.iter().map(String::as_str).collect()), file, el, &e.sm));
                    };
                    let l = el;
                    if e.latency == 0 || e.issue == Some(0) {
                        return Err(b.err_at(DescErrorKind::Invalid(format!("latency class `{}` on {}: latency and issue must be at least 1", c.name, e.sm)), file, l, &e.sm));
                    }
                    if per_sm.iter().any(|(s, _, _)| *s == sm) {
                        return Err(b.err_at(DescErrorKind::Invalid(format!("latency class `{}` gives {} twice", c.name, e.sm)), file, l, &e.sm));
                    }
                    per_sm.push((sm, e.latency, e.issue.unwrap_or(c.issue)));
                }
                class_by_sm.push((per_sm, b.source(file, l)));
            }
            let default_latency_class = match classes.iter().position(|c| c.name == item.default_latency_class) {
                Some(i) => i as u8,
                None => {
                    let l = yaml_lines::key_line(&text, &["scheduling", "default_latency_class"]).unwrap_or(*line);
                    let name = &item.default_latency_class;
                    return Err(b.err_at(b.unknown("latency class", name, classes.iter().map(|c| c.name).collect()), file, l, name));
                }
            };
            let prio_lines = yaml_lines::item_lines(&text, &["scheduling", "priorities"]);
            let mut priorities = Vec::new();
            for (i, p) in item.priorities.iter().enumerate() {
                let l = prio_lines.get(i).copied().unwrap_or(*line);
                if p.start > p.end {
                    return Err(b.err_at(DescErrorKind::Invalid(format!("priority window `{}` starts after it ends ({} > {})", p.name, p.start, p.end)), file, l, "start"));
                }
                let mut cats = Vec::new();
                for cat in &p.categories {
                    cats.push(category_index(&b, cat, file, l, "category")?);
                }
                priorities.push(PriorityEntry {
                    name: leak_str(&p.name),
                    start: p.start,
                    end: p.end,
                    priority: p.priority,
                    window: p.window,
                    categories: leak(cats),
                    source: b.source(file, l),
                });
            }
            let knob_line = yaml_lines::key_line(&text, &["scheduling", "knobs"]).unwrap_or(*line);
            SchedulingInfo {
                priorities: leak(priorities),
                latency_classes: leak(classes),
                issue_width: item.issue_width.max(1),
                units: leak(units),
                default_latency_class,
                knobs: knob_list(&b, &item.knobs, file, knob_line)?,
            }
        }
    };

    // ---- register classes, per SM ----
    let n_sms = sms.len();
    let mut type_class = vec![vec![NO_CLASS; vt_slots]; n_sms];
    let mut type_sources: Vec<BTreeMap<u8, u16>> = vec![BTreeMap::new(); n_sms];
    let mut class_infos: Vec<RegisterClassInfo> = Vec::new();
    for Located { file, line, item } in &classes {
        let (file, line) = (*file, *line);
        if let Some(c) = class_infos.iter().find(|c| c.name == item.name) {
            let first = c.source.to_string();
            return Err(b.err_at(DescErrorKind::Duplicate { what: "register class", name: item.name.clone(), first }, file, line, &item.name));
        }
        let class_index = class_infos.len() as u8;
        let mut class_ptx = 0;
        let class_set = match &item.when {
            None => b.all_sms,
            Some(text) => {
                let (l, c) = yaml_lines::find_token(&b.file(file).text, line, 8, text.split_whitespace().next().unwrap_or(text));
                let cond = rules::parse_condition(text, &b.file(file).display, l, c).map_err(|mut e| {
                    e.text = Some(b.file(file).text.clone());
                    e
                })?;
                class_ptx = b.required_ptx(&cond);
                b.eval(&cond, file)?
            }
        };
        let mut members = Vec::new();
        let mut member_ptx = Vec::new();
        for member in &item.types {
            let (name, when) = match member {
                ClassMember::Plain(n) => (n, None),
                ClassMember::Gated { ty, when } => (ty, Some(when)),
            };
            let (member_line, _) = yaml_lines::find_token(&b.file(file).text, line, 12, name);
            let Some(vt) = b.type_id(name) else {
                let candidates = b.types.iter().map(|t| t.name).collect();
                return Err(b.err_at(b.unknown("type", name, candidates), file, member_line, name));
            };
            let mut ptx = class_ptx;
            let set = match when {
                None => class_set,
                Some(text) => {
                    let (l, c) = yaml_lines::find_token(&b.file(file).text, member_line, 2, text.split_whitespace().next().unwrap_or(text));
                    let cond = rules::parse_condition(text, &b.file(file).display, l, c).map_err(|mut e| {
                        e.text = Some(b.file(file).text.clone());
                        e
                    })?;
                    ptx = ptx.max(b.required_ptx(&cond));
                    SmSet(b.eval(&cond, file)?.0 & class_set.0)
                }
            };
            let rule = b.add_rule(file, member_line, &format!("{} ({}): {}", item.name, item.prefix, name))?;
            for sm in 0..n_sms {
                if set.contains(sm) {
                    let existing = type_class[sm][vt as usize];
                    if existing != NO_CLASS {
                        let other = class_infos.get(existing as usize).map(|c| c.name).unwrap_or(&item.name);
                        return Err(b.err_at(
                            DescErrorKind::Invalid(format!(
                                "type `{name}` would be in two register classes on {} ({other} and {})",
                                b.sm_names[sm], item.name
                            )),
                            file,
                            member_line,
                            name,
                        ));
                    }
                    type_class[sm][vt as usize] = class_index;
                    type_sources[sm].insert(vt, rule);
                }
            }
            members.push(vt);
            member_ptx.push(ptx);
        }
        if item.pressure_weight == 0 || item.pressure_weight > 255 {
            return Err(b.err_at(DescErrorKind::Invalid("pressure_weight must be between 1 and 255".into()), file, line, "pressure_weight"));
        }
        let param_carrier = match &item.param_carrier {
            None => None,
            Some(name) => {
                let (carrier_line, _) = yaml_lines::find_token(&b.file(file).text, line, 12, name);
                let Some(vt) = b.type_id(name) else {
                    let candidates = b.types.iter().map(|t| t.name).collect();
                    return Err(b.err_at(b.unknown("type", name, candidates), file, carrier_line, name));
                };
                let carrier_is_int = b.types.iter().any(|t| t.id == vt && t.kind == TypeKind::Int && t.lanes <= 1);
                if !carrier_is_int || members.contains(&vt) {
                    return Err(b.err_at(
                        DescErrorKind::Invalid(format!("param_carrier `{name}` must be a scalar integer type of another register class")),
                        file,
                        carrier_line,
                        name,
                    ));
                }
                Some(vt)
            }
        };
        class_infos.push(RegisterClassInfo {
            name: leak_str(&item.name),
            prefix: leak_str(&item.prefix),
            ptx_type: leak_str(&item.ptx_type),
            members: leak(members),
            member_ptx: leak(member_ptx),
            pressure_weight: item.pressure_weight as u8,
            storage_only: item.storage_only,
            param_carrier,
            pressure_limit: item.pressure_limit.map(|l| l.min(u32::from(u16::MAX)) as u16),
            read_as: &[],
            source: b.source(file, line),
        });
    }
    // `read_as` names classes, possibly later ones: resolved once all exist.
    for (index, Located { file, line, item }) in classes.iter().enumerate() {
        let (file, line) = (*file, *line);
        let width = |ptx: &str| ptx.trim_start_matches(|c: char| !c.is_ascii_digit()).parse::<u32>().ok();
        let mut read_as = Vec::new();
        for name in &item.read_as {
            let (at, _) = yaml_lines::find_token(&b.file(file).text, line, 12, name);
            let Some(other) = class_infos.iter().position(|c| c.name == name.as_str()) else {
                let candidates = class_infos.iter().map(|c| c.name).collect();
                return Err(b.err_at(b.unknown("register class", name, candidates), file, at, name));
            };
            let (mine, theirs) = (width(class_infos[index].ptx_type), width(class_infos[other].ptx_type));
            if other == index || mine.is_none() || mine != theirs {
                return Err(b.err_at(
                    DescErrorKind::Invalid(format!(
                        "read_as `{name}`: a class may be read as another class of the same register width only ({} is {}, {name} is {})",
                        item.name, class_infos[index].ptx_type, class_infos[other].ptx_type
                    )),
                    file,
                    at,
                    name,
                ));
            }
            read_as.push(other as u8);
        }
        class_infos[index].read_as = leak(read_as);
    }

    // ---- rules ----
    let resolved = resolve_rules(&mut b, &rule_files, &opcode_infos, &cc_infos, &type_class)?;
    let (flag_groups, group_index) = build_flag_groups(&mut b, &rule_files)?;
    let patterns = build_patterns(&mut b, &rule_files, &opcode_infos, &type_class, &resolved.actions, &flag_groups, &group_index)?;

    // ---- assemble ----
    let mut sm_tables = Vec::new();
    for (sm, Located { file, line, item }) in sms.iter().enumerate() {
        let min_ptx = parse_ptx_version(&item.ptx).ok_or_else(|| {
            b.err_at(DescErrorKind::Invalid(format!("PTX version `{}` is not of the form MAJOR.MINOR", item.ptx)), *file, *line, &item.ptx)
        })?;
        let mut cc_words = Vec::with_capacity(cc_slots * CC_STRIDE);
        for cc in 0..cc_slots {
            cc_words.extend_from_slice(&pack_cc_nibbles(&resolved.cc_nibbles[sm][cc]));
        }
        sm_tables.push(SmTables {
            name: leak_str(&item.name),
            min_ptx,
            implies: leak(implies[sm].iter().map(|&i| i as u8).collect()),
            features: leak(b.sm_features[sm].iter().copied().collect()),
            source: b.source(*file, *line),
            actions: leak(resolved.actions[sm].clone()),
            action_details: leak(resolved.details[sm].iter().map(|(k, v)| (*k, *v)).collect()),
            action_sources: leak(resolved.action_sources[sm].iter().map(|(k, v)| (*k, *v)).collect()),
            type_class: leak(type_class[sm].clone()),
            type_sources: leak(type_sources[sm].iter().map(|(k, v)| (*k, *v)).collect()),
            promotion: leak(resolved.promotion[sm].clone()),
            fsincos: leak(resolved.fsincos[sm].clone()),
            one_dim_sources: leak(resolved.one_dim_sources[sm].iter().map(|(k, v)| (*k, *v)).collect()),
            cc_actions: leak(cc_words),
            cc_sources: leak(resolved.cc_sources[sm].iter().map(|(k, v)| (*k, *v)).collect()),
            occupancy: sm_occupancy[sm],
            latencies: leak(
                scheduling_info
                    .latency_classes
                    .iter()
                    .zip(&class_by_sm)
                    .map(|(class, (per_sm, src))| {
                        // The SM's own entry, else the nearest implied SM's (breadth first).
                        let mut queue = std::collections::VecDeque::from([sm]);
                        let mut seen = vec![false; implies.len()];
                        while let Some(s) = queue.pop_front() {
                            if std::mem::replace(&mut seen[s], true) {
                                continue;
                            }
                            if let Some(&(_, latency, issue)) = per_sm.iter().find(|(x, _, _)| *x == s) {
                                return SchedCost { latency, issue, source: *src };
                            }
                            queue.extend(&implies[s]);
                        }
                        SchedCost { latency: class.latency, issue: class.issue, source: *src }
                    })
                    .collect(),
            ),
        });
    }

    let dynamic = |pairs: Vec<(&'static str, u16)>| NameMap::Dynamic(pairs.into_iter().collect());
    let names = NameMaps {
        opcodes: dynamic(opcode_infos.iter().map(|o| (o.name, o.id)).collect()),
        types: dynamic(b.types.iter().map(|t| (t.name, t.id as u16)).collect()),
        register_classes: dynamic(class_infos.iter().enumerate().map(|(i, c)| (c.name, i as u16)).collect()),
        sms: dynamic(sm_tables.iter().enumerate().map(|(i, s)| (s.name, i as u16)).collect()),
        features: dynamic(b.features.iter().enumerate().map(|(i, f)| (f.name, i as u16)).collect()),
        cond_codes: dynamic(cc_infos.iter().map(|c| (c.name, c.id as u16)).collect()),
        intrinsics: dynamic(intrinsic_infos.iter().enumerate().map(|(i, x)| (x.name, i as u16)).collect()),
        knobs: dynamic(knob_infos.iter().enumerate().map(|(i, k)| (k.name, i as u16)).collect()),
        machine_ops: dynamic(patterns.iter().enumerate().map(|(i, p)| (p.name, i as u16)).collect()),
    };
    let files: Vec<&'static str> = b.files.iter().map(|f| leak_str(&f.display)).collect();
    Ok(TargetTables {
        target: leak_str(&manifest_syntax.target),
        files: leak(files),
        vt_slots: vt_slots as u16,
        types: leak(b.types.clone()),
        opcode_slots: leak(crate::tables::opcode_slots(&opcode_infos)),
        opcodes: leak(opcode_infos),
        categories: leak(b.categories.clone()),
        cond_codes: leak(cc_infos),
        intrinsics: leak(intrinsic_infos),
        register_classes: leak(class_infos),
        features: leak(b.features.clone()),
        sms: leak(sm_tables),
        knobs: leak(knob_infos),
        remat: remat_info,
        scheduling: scheduling_info,
        rules: leak(b.rules.clone()),
        default_action: resolved.default_action,
        default_cc_action: resolved.default_cc_action,
        patterns: leak(patterns),
        flag_groups: leak(flag_groups),
        ptx_isa: leak(ptx_requirements),
        names,
    })
}

fn build_signature(
    b: &Builder,
    text: &str,
    vars: &BTreeMap<String, String>,
    file: usize,
    line: usize,
) -> DescResult<Signature> {
    let parsed = signature::parse(text, vars, &|n| b.type_id(n))
        .map_err(|m| b.err_at(DescErrorKind::Invalid(format!("bad signature: {m}")), file, line, "sig"))?;
    let type_vars: Vec<TypeVar> =
        parsed.type_vars.iter().map(|(n, c)| TypeVar { name: leak_str(n), class: *c }).collect();
    Ok(Signature {
        text: leak_str(text),
        type_vars: leak(type_vars),
        operands: leak(parsed.operands),
        results: leak(parsed.results),
    })
}

fn build_props(b: &Builder, names: &[String], file: usize, line: usize) -> DescResult<u16> {
    let mut bits = 0;
    for n in names {
        match props::NAMES.iter().find(|(p, _)| p == n) {
            Some((_, bit)) => bits |= bit,
            None => return Err(b.err_at(b.unknown("property", n, props::NAMES.iter().map(|(p, _)| *p).collect()), file, line, n)),
        }
    }
    Ok(bits)
}

/// The rule tables resolved per SM.
struct Resolved {
    actions: Vec<Vec<u8>>,
    details: Vec<BTreeMap<u32, ActionDetail>>,
    action_sources: Vec<BTreeMap<u32, u16>>,
    promotion: Vec<Vec<u8>>,
    fsincos: Vec<Vec<u8>>,
    one_dim_sources: Vec<BTreeMap<u32, u16>>,
    cc_nibbles: Vec<Vec<Vec<u8>>>,
    cc_sources: Vec<BTreeMap<u32, u16>>,
    default_action: (Action, u16),
    default_cc_action: (Action, u16),
}

/// A rule after name resolution.
struct ResolvedRule<'s> {
    stmt: &'s RuleStmt,
    file: usize,
    set: SmSet,
    action: Action,
    detail: Option<ActionDetail>,
    rule_index: u16,
    /// `(key, type)` cells; the type is 0 for the 1-D tables.
    cells: Vec<(u16, u8, usize, usize)>,
    /// Position of each cell in `cells`, and how often each cell decided an entry.
    cell_index: HashMap<(u16, u8), usize>,
    cell_wins: Vec<usize>,
    /// The type names as written, with positions, for per-type diagnostics.
    type_names: Vec<(u8, Name)>,
    wins: usize,
}

fn resolve_rules(
    b: &mut Builder,
    rule_files: &[(usize, Vec<Statement>)],
    opcodes: &[OpcodeInfo],
    ccs: &[CondCodeInfo],
    type_class: &[Vec<u8>],
) -> DescResult<Resolved> {
    let n_sms = b.sm_names.len();
    let vt_slots = type_class.first().map(Vec::len).unwrap_or(1);
    let mut default_action: Option<(Action, u16, usize, usize)> = None;
    let mut default_cc: Option<(Action, u16, usize, usize)> = None;
    let mut resolved: Vec<ResolvedRule> = Vec::new();

    for (file, stmts) in rule_files {
        let file = *file;
        for stmt in stmts {
            match stmt {
                Statement::Set { name, items } => {
                    if let Some((_, f0, l0)) = b.sets.get(&name.text) {
                        let first = format!("{}:{}", b.file(*f0).display, l0);
                        return Err(b.err(DescErrorKind::Duplicate { what: "set", name: name.text.clone(), first }, file, name.line, name.column));
                    }
                    let expanded = b.expand_names(items, file)?;
                    b.sets.insert(name.text.clone(), (expanded, file, name.line));
                }
                Statement::Default { condcode, action, line, column, text } => {
                    let (act, detail) = match action {
                        ActionSpec::Legal => (Action::Legal, None),
                        ActionSpec::Expand => (Action::Expand, None),
                        ActionSpec::Promote(None) => (Action::Promote, None),
                        _ => (Action::Custom, Some(())),
                    };
                    if detail.is_some() {
                        return Err(b.err(DescErrorKind::Invalid("a default action takes no argument: use legal, expand or promote".into()), file, *line, *column));
                    }
                    let slot = if *condcode { &default_cc } else { &default_action };
                    if let Some((_, _, f0, l0)) = slot {
                        let first = format!("{}:{}", b.file(*f0).display, l0);
                        let what = if *condcode { "default condcode" } else { "default" };
                        return Err(b.err(DescErrorKind::Duplicate { what: "statement", name: what.into(), first }, file, *line, *column));
                    }
                    let index = b.add_rule(file, *line, text)?;
                    if *condcode {
                        default_cc = Some((act, index, file, *line));
                    } else {
                        default_action = Some((act, index, file, *line));
                    }
                }
                Statement::Rule(rule) => {
                    let r = resolve_one(b, rule, file, opcodes, ccs, type_class)?;
                    resolved.push(r);
                }
                Statement::Pattern(_) | Statement::Flags(_) => {}
            }
        }
    }
    let first_rules_file = rule_files.first().map(|(f, _)| *f).unwrap_or(0);
    let Some((default_act, default_idx, _, _)) = default_action else {
        return Err(b.err(DescErrorKind::Invalid("missing `default ACTION;` statement for the action table".into()), first_rules_file, 1, 1));
    };
    let Some((default_cc_act, default_cc_idx, _, _)) = default_cc else {
        return Err(b.err(DescErrorKind::Invalid("missing `default condcode ACTION;` statement for the condition-code table".into()), first_rules_file, 1, 1));
    };

    let mut out = Resolved {
        actions: vec![vec![default_act as u8; OPCODE_STRIDE * vt_slots]; n_sms],
        details: vec![BTreeMap::new(); n_sms],
        action_sources: vec![BTreeMap::new(); n_sms],
        promotion: vec![vec![Action::Legal as u8; OPCODE_STRIDE]; n_sms],
        fsincos: vec![vec![Action::Legal as u8; OPCODE_STRIDE]; n_sms],
        one_dim_sources: vec![BTreeMap::new(); n_sms],
        cc_nibbles: vec![vec![vec![default_cc_act as u8; MAX_VT_SLOTS]; ccs.iter().map(|c| c.id as usize + 1).max().unwrap_or(0)]; n_sms],
        cc_sources: vec![BTreeMap::new(); n_sms],
        default_action: (default_act, default_idx),
        default_cc_action: (default_cc_act, default_cc_idx),
    };

    // Group rules by (table, key, type) cell, in a deterministic order.
    let mut cells: BTreeMap<(u8, u16, u8), Vec<usize>> = BTreeMap::new();
    for (ri, r) in resolved.iter().enumerate() {
        let table = match r.stmt.table {
            RuleTable::Actions => 0,
            RuleTable::CondCodes => 1,
            RuleTable::Promotion => 2,
            RuleTable::Fsincos => 3,
        };
        for &(key, vt, _, _) in &r.cells {
            let entry = cells.entry((table, key, vt)).or_default();
            if !entry.contains(&ri) {
                entry.push(ri);
            }
        }
    }

    for (&(table, key, vt), candidates) in &cells {
        for sm in 0..n_sms {
            let applicable: Vec<usize> = candidates.iter().copied().filter(|&r| resolved[r].set.contains(sm)).collect();
            if applicable.is_empty() {
                continue;
            }
            // The winner is a rule whose set is a subset of every other applicable set.
            let mut best = applicable[0];
            for &r in &applicable[1..] {
                if resolved[r].set.0.count_ones() < resolved[best].set.0.count_ones() {
                    best = r;
                }
            }
            let mut co_winners = vec![best];
            for &other in &applicable {
                if other == best {
                    continue;
                }
                let (bs, os) = (resolved[best].set, resolved[other].set);
                if bs.is_subset(os) && bs != os {
                    continue;
                }
                let same_action = resolved[best].action == resolved[other].action && resolved[best].detail == resolved[other].detail;
                let (later, earlier) = if other > best { (other, best) } else { (best, other) };
                let describe_key = |b: &Builder| -> (String, String) {
                    let key_name = match table {
                        1 => ccs.iter().find(|c| c.id as u16 == key).map(|c| c.name.to_string()),
                        _ => opcodes.iter().find(|o| o.id == key).map(|o| o.name.to_string()),
                    }
                    .unwrap_or_default();
                    let ty = if table >= 2 { "any type".to_string() } else { b.types.iter().find(|t| t.id == vt).map(|t| t.name.to_string()).unwrap_or_default() };
                    (key_name, ty)
                };
                if bs == os && same_action {
                    let r = &resolved[later];
                    let first = format!("{}:{}", b.file(resolved[earlier].file).display, resolved[earlier].stmt.line);
                    let (key_name, ty) = describe_key(b);
                    return Err(b.err(
                        DescErrorKind::Duplicate { what: "rule for", name: format!("{key_name} on {ty}"), first },
                        r.file,
                        r.stmt.line,
                        r.stmt.column,
                    ));
                }
                if !same_action {
                    let (key_name, ty) = describe_key(b);
                    let r = &resolved[later];
                    let e = &resolved[earlier];
                    return Err(b.err(
                        DescErrorKind::Conflict {
                            other: format!("{}:{}", b.file(e.file).display, e.stmt.line),
                            sm: b.sm_names[sm].clone(),
                            op: key_name,
                            ty,
                            this_action: action_text(&r.stmt.action),
                            other_action: action_text(&e.stmt.action),
                            this_sms: b.sm_list(r.set),
                            other_sms: b.sm_list(e.set),
                        },
                        r.file,
                        r.stmt.line,
                        r.stmt.column,
                    ));
                }
                // Incomparable but agreeing rules: both decide the entry.
                co_winners.push(other);
            }
            for &w in &co_winners {
                let r = &mut resolved[w];
                r.wins += 1;
                if let Some(&i) = r.cell_index.get(&(key, vt)) {
                    r.cell_wins[i] += 1;
                }
            }
            let winner = &resolved[best];
            let byte = winner.action as u8;
            match table {
                0 => {
                    let cell = (OPCODE_STRIDE * vt as usize + key as usize) as u32;
                    out.actions[sm][cell as usize] = byte;
                    out.action_sources[sm].insert(cell, winner.rule_index);
                    if let Some(d) = winner.detail {
                        out.details[sm].insert(cell, d);
                    }
                }
                1 => {
                    out.cc_nibbles[sm][key as usize][vt as usize] = byte;
                    out.cc_sources[sm].insert(key as u32 * MAX_VT_SLOTS as u32 + vt as u32, winner.rule_index);
                }
                2 => {
                    out.promotion[sm][key as usize] = byte;
                    out.one_dim_sources[sm].insert(key as u32, winner.rule_index);
                }
                _ => {
                    out.fsincos[sm][key as usize] = byte;
                    out.one_dim_sources[sm].insert(key as u32 + OPCODE_STRIDE as u32, winner.rule_index);
                }
            }
        }
    }

    for r in &resolved {
        if r.wins == 0 {
            return Err(b.err(
                DescErrorKind::NeverApplies(
                    "every entry it names is decided by a more specific rule".to_string(),
                ),
                r.file,
                r.stmt.line,
                r.stmt.column,
            ));
        }
        // A name whose every entry is decided elsewhere is dead text in the rule.
        let mut key_wins: BTreeMap<u16, (usize, usize, usize)> = BTreeMap::new();
        let mut type_wins: BTreeMap<u8, usize> = BTreeMap::new();
        for (i, &(key, vt, line, column)) in r.cells.iter().enumerate() {
            key_wins.entry(key).or_insert((0, line, column)).0 += r.cell_wins[i];
            *type_wins.entry(vt).or_insert(0) += r.cell_wins[i];
        }
        if let Some((_, (_, line, column))) = key_wins.iter().find(|(_, (w, _, _))| *w == 0) {
            // The name as written at its position (an opcode, or the `$set` it came from).
            let written = b.file(r.file).text.lines().nth(line - 1).unwrap_or("");
            let name: String = written
                .chars()
                .skip(column - 1)
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
                .collect();
            return Err(b.err(
                DescErrorKind::Invalid(format!("`{name}` in this rule never applies: each of its entries is decided by a more specific rule")),
                r.file,
                *line,
                *column,
            ));
        }
        if matches!(r.stmt.table, RuleTable::Actions | RuleTable::CondCodes) {
            if let Some((vt, _)) = type_wins.iter().find(|(_, w)| **w == 0) {
                if let Some((_, name)) = r.type_names.iter().find(|(t, _)| t == vt) {
                    return Err(b.err(
                        DescErrorKind::Invalid(format!("`{}` in this rule never applies: each of its entries is decided by a more specific rule", name.text)),
                        r.file,
                        name.line,
                        name.column,
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// An action as the DSL spells it: `libcall(__nv_fmodf)`.
fn action_text(action: &ActionSpec) -> String {
    match action {
        ActionSpec::Legal => "legal".into(),
        ActionSpec::Expand => "expand".into(),
        ActionSpec::Custom(h) => format!("custom({})", h.text),
        ActionSpec::LibCall(f) => format!("libcall({})", f.text),
        ActionSpec::Promote(None) => "promote".into(),
        ActionSpec::Promote(Some(t)) => format!("promote({})", t.text),
    }
}

fn resolve_one<'s>(
    b: &mut Builder,
    rule: &'s RuleStmt,
    file: usize,
    opcodes: &[OpcodeInfo],
    ccs: &[CondCodeInfo],
    type_class: &[Vec<u8>],
) -> DescResult<ResolvedRule<'s>> {
    let set = match &rule.condition {
        None => b.all_sms,
        Some(c) => b.eval(c, file)?,
    };
    if set.is_empty() {
        return Err(b.err(
            DescErrorKind::NeverApplies(format!("its condition `{}` holds on no SM", rule.text.split(" when ").nth(1).unwrap_or("").trim_end_matches(';'))),
            file,
            rule.line,
            rule.column,
        ));
    }
    let keys = b.expand_names(&rule.keys, file)?;
    let types = b.expand_names(&rule.types, file)?;
    let mut key_ids = Vec::new();
    for k in &keys {
        let id = if rule.table == RuleTable::CondCodes {
            ccs.iter().find(|c| c.name == k.text).map(|c| c.id as u16).ok_or_else(|| {
                b.err(b.unknown("condition code", &k.text, ccs.iter().map(|c| c.name).collect()), file, k.line, k.column)
            })?
        } else {
            opcodes.iter().find(|o| o.name == k.text).map(|o| o.id).ok_or_else(|| {
                b.err(b.unknown("opcode", &k.text, opcodes.iter().map(|o| o.name).collect()), file, k.line, k.column)
            })?
        };
        key_ids.push((id, k));
    }
    let mut type_ids = Vec::new();
    for t in &types {
        let id = b.type_id(&t.text).ok_or_else(|| {
            b.err(b.unknown("type", &t.text, b.types.iter().map(|t| t.name).collect()), file, t.line, t.column)
        })?;
        type_ids.push((id, t));
    }
    let (action, detail) = match &rule.action {
        ActionSpec::Legal => (Action::Legal, None),
        ActionSpec::Expand => (Action::Expand, None),
        ActionSpec::Custom(hook) => (Action::Custom, Some(ActionDetail::CustomHook(leak_str(&hook.text)))),
        ActionSpec::LibCall(func) => (Action::LibCall, Some(ActionDetail::LibCall(leak_str(&func.text)))),
        ActionSpec::Promote(None) => (Action::Promote, None),
        ActionSpec::Promote(Some(target)) => {
            let id = b.type_id(&target.text).ok_or_else(|| {
                b.err(b.unknown("type", &target.text, b.types.iter().map(|t| t.name).collect()), file, target.line, target.column)
            })?;
            for sm in 0..b.sm_names.len() {
                if set.contains(sm) && type_class[sm][id as usize] == NO_CLASS {
                    return Err(b.err(
                        DescErrorKind::Invalid(format!("promotion target `{}` is not a register type on {}", target.text, b.sm_names[sm])),
                        file,
                        target.line,
                        target.column,
                    ));
                }
            }
            (Action::Promote, Some(ActionDetail::PromoteTo(id)))
        }
    };
    if action == Action::Legal && rule.table == RuleTable::Actions {
        for &(vt, t) in &type_ids {
            let missing: Vec<usize> = (0..b.sm_names.len()).filter(|&sm| set.contains(sm) && type_class[sm][vt as usize] == NO_CLASS).collect();
            if !missing.is_empty() {
                let mut missing_set = SmSet(0);
                for sm in missing {
                    missing_set.0 |= 1 << sm;
                }
                return Err(b.err(
                    DescErrorKind::Invalid(format!(
                        "`legal` on `{}`, which is not a register type on {} (add a condition, or a register class member)",
                        t.text,
                        b.sm_list(missing_set)
                    )),
                    file,
                    t.line,
                    t.column,
                ));
            }
        }
    }
    let mut cells = Vec::new();
    match rule.table {
        RuleTable::Actions | RuleTable::CondCodes => {
            if type_ids.is_empty() {
                return Err(b.err(DescErrorKind::Invalid("a rule needs a type list after `:`".into()), file, rule.line, rule.column));
            }
            for &(k, kn) in &key_ids {
                for &(t, _) in &type_ids {
                    if cells.iter().any(|&(ck, ct, _, _)| ck == k && ct == t) {
                        return Err(b.err(DescErrorKind::Invalid(format!("`{}` is named twice in this rule", kn.text)), file, kn.line, kn.column));
                    }
                    cells.push((k, t, kn.line, kn.column));
                }
            }
        }
        RuleTable::Promotion | RuleTable::Fsincos => {
            for &(k, kn) in &key_ids {
                cells.push((k, 0, kn.line, kn.column));
            }
        }
    }
    let rule_index = b.add_rule(file, rule.line, &rule.text)?;
    let cell_index = cells.iter().enumerate().map(|(i, &(k, t, _, _))| ((k, t), i)).collect();
    let cell_wins = vec![0; cells.len()];
    let type_names = type_ids.iter().map(|&(t, n)| (t, n.clone())).collect();
    Ok(ResolvedRule { stmt: rule, file, set, action, detail, rule_index, cells, cell_index, cell_wins, type_names, wins: 0 })
}

/// Is `operand` of `sig` a bool (a type variable of class `bool`)?
fn is_bool(sig: &Signature, operand: Option<&SigOperand>) -> bool {
    matches!(operand.map(|o| o.kind), Some(OperandKind::TypeVar(v)) if sig.type_vars.get(v as usize).is_some_and(|t| t.class == TypeClass::Bool))
}

/// Whether `leaf` is the index (first operand) of one of the tree's ARG nodes, the
/// parameter `{param.LEAF}` names.
fn param_leaf(tree: &Tree<'_>, leaf: &str) -> bool {
    tree.nodes.iter().any(|n| {
        n.op.name == "ARG"
            && matches!(n.args.first(), Some(NodeArg::Leaf(k)) if tree.operands.get(*k as usize).is_some_and(|(name, kind)| *name == leaf && *kind == PatternOperand::Literal))
    })
}

/// A pattern condition without its `kernel` conjunct, and whether it had one; the
/// `kernel` atom found anywhere else (under `!` or `|`) is an error.
fn split_kernel(cond: &Condition) -> Result<(bool, Option<Condition>), Name> {
    fn find_kernel(c: &Condition) -> Option<&Name> {
        match c {
            Condition::Atom(n) => (n.text == "kernel").then_some(n),
            Condition::Not(inner) => find_kernel(inner),
            Condition::And(items) | Condition::Or(items) => items.iter().find_map(find_kernel),
        }
    }
    let is_kernel = |c: &Condition| matches!(c, Condition::Atom(n) if n.text == "kernel");
    match cond {
        c if is_kernel(c) => Ok((true, None)),
        Condition::And(items) if items.iter().any(is_kernel) => {
            let mut rest: Vec<Condition> = items.iter().filter(|c| !is_kernel(c)).cloned().collect();
            if let Some(at) = rest.iter().find_map(find_kernel) {
                return Err(at.clone());
            }
            Ok((true, if rest.len() == 1 { rest.pop() } else { Some(Condition::And(rest)) }))
        }
        c => match find_kernel(c) {
            Some(at) => Err(at.clone()),
            None => Ok((false, Some(c.clone()))),
        },
    }
}

/// The `{NAME}` placeholders of a text (`{{`/`}}` are literal braces).
fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        if rest[open..].starts_with("{{") {
            rest = &rest[open + 2..];
            continue;
        }
        let Some(close) = rest[open..].find('}') else { break };
        out.push(&rest[open + 1..open + close]);
        rest = &rest[open + close + 1..];
    }
    out
}

/// Whether `{NAME}` or `{NAME.FIELD}` names a text of `group`.
fn flag_field_known(group: &FlagGroupInfo, placeholder: &str) -> bool {
    match placeholder.split_once('.') {
        None => placeholder == group.name,
        Some((g, field)) => g == group.name && group.fields.contains(&field),
    }
}

/// The value of `lit.N` / `imm.TYPE.N` (decimal, `-` allowed).
fn literal_value(b: &Builder, text: &str, kind: &Name, file: usize) -> DescResult<i64> {
    text.parse::<i64>().map_err(|_| {
        b.err(DescErrorKind::Invalid(format!("`{}`: expected an integer value after the last `.`, found `{text}`", kind.text)), file, kind.line, kind.column)
    })
}

/// Every `flags` statement, and the index of each group by name (without the `$`).
fn build_flag_groups(b: &mut Builder, rule_files: &[(usize, Vec<Statement>)]) -> DescResult<(Vec<FlagGroupInfo>, HashMap<String, (u16, usize, usize)>)> {
    let mut groups = Vec::new();
    let mut index: HashMap<String, (u16, usize, usize)> = HashMap::new();
    for (file, stmts) in rule_files {
        let file = *file;
        for stmt in stmts {
            let Statement::Flags(g) = stmt else { continue };
            let name = g.name.text.trim_start_matches('$').to_string();
            if let Some((_, f0, l0)) = index.get(&name) {
                let first = format!("{}:{}", b.file(*f0).display, l0);
                return Err(b.err(DescErrorKind::Duplicate { what: "flag group", name: g.name.text.clone(), first }, file, g.name.line, g.name.column));
            }
            let rule = b.add_rule(file, g.line, &g.text)?;
            let fields: Vec<&'static str> = g.fields.iter().map(|f| leak_str(&f.text)).collect();
            let arity = fields.len().max(1);
            let mut members: Vec<FlagMember> = Vec::new();
            for m in &g.members {
                if m.texts.len() != arity {
                    let expected = if fields.is_empty() { "one text".to_string() } else { format!("{} texts ({})", fields.len(), fields.join(", ")) };
                    return Err(b.err(DescErrorKind::Invalid(format!("flag member `{}` has {} text(s), expected {expected}", m.flag.text, m.texts.len())), file, m.flag.line, m.flag.column));
                }
                let sms = match &m.condition {
                    None => b.all_sms,
                    Some(c) => b.eval(c, file)?,
                };
                if sms.is_empty() {
                    return Err(b.err(DescErrorKind::NeverApplies(format!("flag member `{}`: its condition holds on no SM", m.flag.text)), file, m.flag.line, m.flag.column));
                }
                let flag = if m.flag.text == "_" { "" } else { leak_str(&m.flag.text) };
                if let Some(other) = members.iter().find(|o| o.flag == flag && o.sms & sms.0 != 0) {
                    let sm = (0..b.sm_names.len()).find(|&i| other.sms & sms.0 >> i & 1 == 1).map_or("?", |i| b.sm_names[i].as_str());
                    return Err(b.err(
                        DescErrorKind::Invalid(format!("flag member `{}` applies twice on {sm}: members of one flag need disjoint `when` conditions", m.flag.text)),
                        file,
                        m.flag.line,
                        m.flag.column,
                    ));
                }
                let min_ptx = m.condition.as_ref().map_or(0, |c| b.required_ptx(c));
                let texts: Vec<&'static str> = m.texts.iter().map(|(t, _, _)| leak_str(&t.replace("\\n", "\n"))).collect();
                members.push(FlagMember { flag, texts: leak(texts), sms: sms.0, min_ptx, rule });
            }
            index.insert(name.clone(), (groups.len() as u16, file, g.line));
            groups.push(FlagGroupInfo { name: leak_str(&name), fields: leak(fields), members: leak(members) });
        }
    }
    Ok((groups, index))
}

/// A pattern's tree while it is built: leaves and nodes in preorder.
struct Tree<'o> {
    file: usize,
    operands: Vec<(&'static str, PatternOperand)>,
    /// Where each leaf is written.
    leaf_names: Vec<Name>,
    nodes: Vec<TreeNode<'o>>,
}

struct TreeNode<'o> {
    op: &'o OpcodeInfo,
    /// The opcode as written (its position locates errors about the node).
    name: Name,
    flags: Vec<&'static str>,
    /// A nested node's result type (written or inferred); `None` for the root.
    ty: Option<u8>,
    shared: bool,
    args: Vec<NodeArg>,
    /// Where each operand is written: a leaf's name or a nested node's opcode.
    arg_names: Vec<Name>,
}

impl Tree<'_> {
    /// The value type of an operand, where known.
    fn arg_type(&self, arg: NodeArg) -> Option<u8> {
        match arg {
            NodeArg::Leaf(k) => self.operands[k as usize].1.value_type(),
            NodeArg::Node(m) => self.nodes[m as usize].ty,
        }
    }
}

/// Opcode properties that keep an instruction out of a nested node: absorbing it moves
/// it to its user, which must not reorder an effect or a memory access.
const NOT_NESTABLE: u16 = props::TERMINATOR | props::SIDE_EFFECTS | props::MAY_LOAD | props::MAY_STORE | props::CALL | props::CONVERGENT | props::BRANCH | props::SCHED_BOUNDARY;

/// The signature operand that describes operand `j` (a variadic operand repeats).
fn sig_slot(sig: &Signature, j: usize) -> Option<&SigOperand> {
    match sig.operands.iter().position(|o| o.variadic) {
        Some(v) if j >= v => sig.operands.get(v),
        _ => sig.operands.get(j),
    }
}

/// The operand kind a leaf written `name: kind` stands for. `bound` types bare operands.
fn leaf_operand(b: &Builder, file: usize, name: &Name, kind: Option<&Name>, type_or_bound: &dyn Fn(&Builder, Option<&Name>, &Name) -> DescResult<u8>) -> DescResult<PatternOperand> {
    let k = kind.map(|k| k.text.as_str());
    Ok(match k {
        Some("imm") => PatternOperand::Imm(type_or_bound(b, None, name)?),
        Some("@") => PatternOperand::SymbolIs(leak_str(&name.text[1..])),
        Some("values") => PatternOperand::Values,
        Some(k) if k.starts_with("imm.") => {
            let kind = kind.expect("matched Some");
            // `imm.TYPE`, `imm.TYPE.VALUE`, `imm.TYPE.s32` (a range), `imm.TYPE.lowmask`,
            // or the last two of the `for` type (`imm.s32`, `imm.lowmask`).
            let rest = &k[4..];
            let (ty_text, constraint) = match rest.split_once('.') {
                Some((t, v)) => (Some(t), Some(v)),
                None if b.type_id(rest).is_some() => (Some(rest), None),
                None => (None, Some(rest)),
            };
            let ty = match ty_text {
                Some(t) => type_or_bound(b, Some(&Name { text: t.to_string(), column: kind.column + 4, ..kind.clone() }), name)?,
                None => type_or_bound(b, None, name)?,
            };
            match constraint {
                None => PatternOperand::Imm(ty),
                Some("lowmask") => PatternOperand::LowMask(ty),
                Some(c) if range_bits(c).is_some() => {
                    let (signed, bits) = range_bits(c).expect("checked");
                    if signed {
                        PatternOperand::ImmRange(ty, -(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
                    } else {
                        PatternOperand::ImmRange(ty, 0, ((1i128 << bits) - 1).min(i64::MAX as i128) as i64)
                    }
                }
                // A float constant by its value (`imm.f32.1.0`), held as its bits.
                Some(v) if matches!(ty_text, Some("f32" | "f64")) && v.parse::<f64>().is_ok() && v.parse::<i64>().is_err() => {
                    let x = v.parse::<f64>().expect("checked");
                    let bits = if ty_text == Some("f32") { i64::from((x as f32).to_bits()) } else { x.to_bits() as i64 };
                    PatternOperand::ImmIs(ty, bits)
                }
                Some(v) => PatternOperand::ImmIs(ty, v.parse::<i64>().map_err(|_| {
                    b.err(
                        DescErrorKind::Invalid(format!("`{}`: expected an integer value, a range (`s32`, `u16`, ...) or `lowmask` after the type, found `{v}`", kind.text)),
                        file,
                        kind.line,
                        kind.column,
                    )
                })?),
            }
        }
        Some(k) if k.starts_with("lit.") => {
            let kind = kind.expect("matched Some");
            PatternOperand::LiteralIs(literal_value(b, &k[4..], kind, file)?)
        }
        Some("lit") => PatternOperand::Literal,
        Some("flag") => PatternOperand::Flag,
        Some("cc") => PatternOperand::CondCode,
        Some("bb") => PatternOperand::Block,
        Some("sym") => PatternOperand::Symbol,
        _ => PatternOperand::Reg(type_or_bound(b, kind, name)?),
    })
}

/// `s32` -> (signed, 32), `u16` -> (unsigned, 16): the values of that PTX operand type.
fn range_bits(text: &str) -> Option<(bool, u32)> {
    let signed = match text.as_bytes().first()? {
        b's' => true,
        b'u' => false,
        _ => return None,
    };
    let bits: u32 = text[1..].parse().ok()?;
    (1..=64).contains(&bits).then_some((signed, bits))
}

/// Adds node `node`'s operands to the tree: leaves, and nested nodes with theirs.
fn build_tree_args<'o>(
    b: &Builder,
    tree: &mut Tree<'o>,
    node: usize,
    args: &[rules::PatternArg],
    opcodes: &'o [OpcodeInfo],
    type_or_bound: &dyn Fn(&Builder, Option<&Name>, &Name) -> DescResult<u8>,
) -> DescResult<()> {
    let file = tree.file;
    let op = tree.nodes[node].op;
    let root = node == 0;
    for arg in args {
        let position = tree.nodes[node].args.len();
        match arg {
            rules::PatternArg::Leaf(name, kind) => {
                let operand = leaf_operand(b, file, name, kind.as_ref(), type_or_bound)?;
                if tree.operands.iter().any(|(n, _)| *n == name.text) {
                    return Err(b.err(DescErrorKind::Invalid(format!("operand name `{}` is used twice", name.text)), file, name.line, name.column));
                }
                // A flag stands for a bool operand of the signature.
                if operand == PatternOperand::Flag && !is_bool(&op.signature, op.signature.operands.get(position)) {
                    return Err(b.err(
                        DescErrorKind::Invalid(format!(
                            "`{}: flag` stands for an i1 operand, but operand {} of {} (`{}`) is not a bool",
                            name.text,
                            position + 1,
                            op.name,
                            op.signature.text
                        )),
                        file,
                        name.line,
                        name.column,
                    ));
                }
                if !root && matches!(operand, PatternOperand::Flag | PatternOperand::Values) {
                    return Err(b.err(
                        DescErrorKind::Invalid(format!("`{}: {}` can only be an operand of the pattern's root, not of a nested node", name.text, kind.as_ref().map_or("", |k| k.text.as_str()))),
                        file,
                        name.line,
                        name.column,
                    ));
                }
                tree.nodes[node].args.push(NodeArg::Leaf(tree.operands.len() as u8));
                tree.nodes[node].arg_names.push(name.clone());
                tree.operands.push((leak_str(&name.text), operand));
                tree.leaf_names.push(name.clone());
            }
            rules::PatternArg::Node(n) => {
                // `SIGN_EXTEND`, `FMA.ftz`: an opcode and the flags it must carry.
                let mut parts = n.opcode.text.split('.');
                let base = parts.next().unwrap_or("");
                let mut flags: Vec<&'static str> = Vec::new();
                for f in parts {
                    if f.starts_with('$') {
                        return Err(b.err(DescErrorKind::Invalid(format!("flag group `{f}` on a nested node: only the pattern's root takes flag groups")), file, n.opcode.line, n.opcode.column));
                    }
                    flags.push(leak_str(f));
                }
                flags.sort();
                let Some(inner) = opcodes.iter().find(|o| o.name == base) else {
                    let candidates = opcodes.iter().map(|o| o.name).collect();
                    return Err(b.err(b.unknown("opcode", base, candidates), file, n.opcode.line, n.opcode.column));
                };
                if let Some(bad) = flags.iter().find(|f| !inner.flags.contains(f)) {
                    return Err(b.err(DescErrorKind::Invalid(format!("{} has no flag `.{bad}` (it accepts: {})", inner.name, inner.flags.join(", "))), file, n.opcode.line, n.opcode.column));
                }
                if inner.props & NOT_NESTABLE != 0 {
                    let what: Vec<&str> = props::NAMES.iter().filter(|(_, bit)| inner.props & bit & NOT_NESTABLE != 0).map(|(name, _)| *name).collect();
                    return Err(b.err(
                        DescErrorKind::Invalid(format!(
                            "{} cannot be a nested node ({}): absorbing it into its user would move it",
                            inner.name,
                            what.join(", ")
                        )),
                        file,
                        n.opcode.line,
                        n.opcode.column,
                    ));
                }
                if inner.signature.operands.iter().any(|o| o.kind == OperandKind::Block) {
                    return Err(b.err(
                        DescErrorKind::Invalid(format!("{} (`{}`) cannot be a nested node: it names blocks (control flow stays where it is)", inner.name, inner.signature.text)),
                        file,
                        n.opcode.line,
                        n.opcode.column,
                    ));
                }
                if inner.signature.results.len() != 1 || inner.signature.results[0].variadic {
                    return Err(b.err(
                        DescErrorKind::Invalid(format!("{} (`{}`) cannot be a nested node: a nested node defines exactly one value", inner.name, inner.signature.text)),
                        file,
                        n.opcode.line,
                        n.opcode.column,
                    ));
                }
                let ty = match &n.ty {
                    Some(t) => Some(b.type_id(&t.text).ok_or_else(|| b.err(b.unknown("type", &t.text, b.types.iter().map(|t| t.name).collect()), file, t.line, t.column))?),
                    None => None,
                };
                if tree.nodes.len() >= u8::MAX as usize {
                    return Err(b.err(DescErrorKind::Invalid("a pattern has at most 255 nodes".into()), file, n.opcode.line, n.opcode.column));
                }
                let index = tree.nodes.len();
                tree.nodes[node].args.push(NodeArg::Node(index as u8));
                tree.nodes[node].arg_names.push(n.opcode.clone());
                tree.nodes.push(TreeNode { op: inner, name: n.opcode.clone(), flags, ty, shared: n.shared, args: Vec::new(), arg_names: Vec::new() });
                build_tree_args(b, tree, index, &n.args, opcodes, type_or_bound)?;
            }
        }
    }
    if tree.operands.len() > u8::MAX as usize {
        let at = &tree.nodes[node].name;
        return Err(b.err(DescErrorKind::Invalid("a pattern has at most 255 operands".into()), file, at.line, at.column));
    }
    // Operand count, and each operand's kind, against the signature.
    let this = &tree.nodes[node];
    let count = this.args.len();
    let fixed: Vec<_> = op.signature.operands.iter().filter(|o| !o.variadic).collect();
    let required = fixed.iter().filter(|o| !o.optional).count();
    let variadic = op.signature.operands.iter().any(|o| o.variadic);
    let values = this.args.last().is_some_and(|a| matches!(a, NodeArg::Leaf(k) if tree.operands[*k as usize].1 == PatternOperand::Values));
    if (count < required && !values) || (!variadic && count > fixed.len()) {
        return Err(b.err(
            DescErrorKind::Invalid(format!("{} takes {} operands (`{}`), the pattern gives {}", op.name, fixed.len(), op.signature.text, count)),
            file,
            this.name.line,
            this.name.column,
        ));
    }
    for (j, (arg, at)) in this.args.iter().zip(&this.arg_names).enumerate() {
        let Some(slot) = sig_slot(&op.signature, j) else { continue };
        let value_slot = matches!(slot.kind, OperandKind::TypeVar(_) | OperandKind::Fixed(_));
        let (fits, what) = match arg {
            NodeArg::Node(_) => (value_slot, "a nested node (a value)"),
            NodeArg::Leaf(k) => match tree.operands[*k as usize].1 {
                PatternOperand::Values => (true, ""),
                PatternOperand::Reg(_) | PatternOperand::Imm(_) | PatternOperand::ImmIs(..) | PatternOperand::ImmRange(..) | PatternOperand::LowMask(_) | PatternOperand::Flag => {
                    (value_slot, "a value")
                }
                PatternOperand::Literal | PatternOperand::LiteralIs(_) => (matches!(slot.kind, OperandKind::Imm | OperandKind::FloatImm), "a literal"),
                PatternOperand::CondCode => (slot.kind == OperandKind::CondCode, "a condition code"),
                PatternOperand::Block => (slot.kind == OperandKind::Block, "a block"),
                PatternOperand::Symbol | PatternOperand::SymbolIs(_) => (slot.kind == OperandKind::Symbol, "a symbol"),
            },
        };
        if !fits {
            return Err(b.err(
                DescErrorKind::Invalid(format!(
                    "`{}` is {what}, but operand {} of {} (`{}`) is {}",
                    at.text,
                    j + 1,
                    op.name,
                    op.signature.text,
                    slot_text(slot.kind)
                )),
                file,
                at.line,
                at.column,
            ));
        }
    }
    Ok(())
}

fn slot_text(kind: OperandKind) -> &'static str {
    match kind {
        OperandKind::TypeVar(_) | OperandKind::Fixed(_) => "a value",
        OperandKind::Imm => "an integer literal",
        OperandKind::FloatImm => "a float literal",
        OperandKind::CondCode => "a condition code",
        OperandKind::Block => "a block",
        OperandKind::Symbol => "a symbol",
        OperandKind::ShuffleMask => "a shuffle mask",
    }
}

/// Types every node of the tree against its opcode's signature: each type variable
/// takes one type per node, within its class, and a nested node's result is the type
/// of the operand it stands for. Types propagate through the tree until nothing
/// changes; a nested node whose type stays open needs `: TYPE`.
fn infer_tree_types(b: &Builder, tree: &mut Tree<'_>, results: &[PatternResult], any_results: bool) -> DescResult<()> {
    let file = tree.file;
    let type_name = |t: u8| b.types.iter().find(|x| x.id == t).map_or("?", |x| x.name);
    let in_class = |t: u8, class: TypeClass| -> bool {
        let Some(info) = b.types.iter().find(|x| x.id == t) else { return false };
        let elem = b.types.iter().find(|x| x.id == info.elem);
        match class {
            TypeClass::Any => true,
            TypeClass::Int => info.kind == TypeKind::Int || (info.kind == TypeKind::Vector && elem.is_some_and(|e| e.kind == TypeKind::Int)),
            TypeClass::ScalarInt => info.kind == TypeKind::Int,
            TypeClass::Float => info.kind == TypeKind::Float || (info.kind == TypeKind::Vector && elem.is_some_and(|e| e.kind == TypeKind::Float)),
            TypeClass::ScalarFloat => info.kind == TypeKind::Float,
            TypeClass::Pointer => info.kind == TypeKind::Pointer,
            TypeClass::Vector => info.kind == TypeKind::Vector,
            TypeClass::Bool => info.bits == 1 && info.kind == TypeKind::Int || (info.kind == TypeKind::Vector && elem.is_some_and(|e| e.kind == TypeKind::Int && e.bits == 1)),
        }
    };
    let mut binds: Vec<Vec<Option<u8>>> = tree.nodes.iter().map(|n| vec![None; n.op.signature.type_vars.len()]).collect();
    // Binds a type variable of node `n` to `t`, or fails where the node's other operands
    // (or its class) disagree. `what` describes the operand, `at` locates it.
    let bind = |binds: &mut Vec<Vec<Option<u8>>>, tree: &Tree<'_>, n: usize, var: u8, t: u8, what: &str, at: &Name| -> DescResult<bool> {
        let sig = &tree.nodes[n].op.signature;
        let tv = sig.type_vars[var as usize];
        if !in_class(t, tv.class) {
            let class = TypeClass::NAMES.iter().find(|(_, c)| *c == tv.class).map_or("?", |(name, _)| name);
            return Err(b.err(
                DescErrorKind::Invalid(format!("{what} is {}, but {} (`{}`) needs {} of class `{class}` there", type_name(t), tree.nodes[n].op.name, sig.text, tv.name)),
                file,
                at.line,
                at.column,
            ));
        }
        match binds[n][var as usize] {
            Some(u) if u != t => Err(b.err(
                DescErrorKind::Invalid(format!(
                    "{what} is {}, but {} (`{}`) has {} = {} here, so no instruction can match",
                    type_name(t),
                    tree.nodes[n].op.name,
                    sig.text,
                    tv.name,
                    type_name(u)
                )),
                file,
                at.line,
                at.column,
            )),
            Some(_) => Ok(false),
            None => {
                binds[n][var as usize] = Some(t);
                Ok(true)
            }
        }
    };
    loop {
        let mut changed = false;
        for n in 0..tree.nodes.len() {
            let sig = tree.nodes[n].op.signature;
            for j in 0..tree.nodes[n].args.len() {
                let (arg, at) = (tree.nodes[n].args[j], tree.nodes[n].arg_names[j].clone());
                let Some(slot) = sig_slot(&sig, j) else { continue };
                let actual = tree.arg_type(arg);
                let what = match arg {
                    NodeArg::Leaf(_) => format!("`{}`", at.text),
                    NodeArg::Node(_) => format!("the nested {}", at.text),
                };
                let what = format!("{what} (operand {} of {})", j + 1, tree.nodes[n].op.name);
                match slot.kind {
                    // A variadic operand's values need not share a type.
                    OperandKind::TypeVar(var) if slot.variadic => {
                        if let Some(t) = actual {
                            let tv = sig.type_vars[var as usize];
                            if !in_class(t, tv.class) {
                                let mut probe = binds.clone();
                                probe[n][var as usize] = None;
                                bind(&mut probe, tree, n, var, t, &what, &at)?;
                            }
                        }
                    }
                    OperandKind::TypeVar(var) => match (actual, arg) {
                        (Some(t), _) => changed |= bind(&mut binds, tree, n, var, t, &what, &at)?,
                        (None, NodeArg::Node(m)) => {
                            if let Some(t) = binds[n][var as usize] {
                                tree.nodes[m as usize].ty = Some(t);
                                changed = true;
                            }
                        }
                        _ => {}
                    },
                    OperandKind::Fixed(f) => match (actual, arg) {
                        (Some(t), _) if t != f => {
                            return Err(b.err(
                                DescErrorKind::Invalid(format!("{what} is {}, but {} (`{}`) takes {} there", type_name(t), tree.nodes[n].op.name, sig.text, type_name(f))),
                                file,
                                at.line,
                                at.column,
                            ))
                        }
                        (None, NodeArg::Node(m)) => {
                            tree.nodes[m as usize].ty = Some(f);
                            changed = true;
                        }
                        _ => {}
                    },
                    _ => {}
                }
            }
            // The node's result(s).
            let at = tree.nodes[n].name.clone();
            if n == 0 {
                if any_results || sig.results.iter().any(|r| r.variadic) {
                    continue;
                }
                for (k, (r, slot)) in results.iter().zip(sig.results).enumerate() {
                    let PatternResult::Reg(t) = *r else { continue };
                    let what = format!("result {} of the pattern", k + 1);
                    match slot.kind {
                        OperandKind::TypeVar(var) => changed |= bind(&mut binds, tree, n, var, t, &what, &at)?,
                        OperandKind::Fixed(f) if f != t => {
                            return Err(b.err(DescErrorKind::Invalid(format!("{what} is {}, but {} (`{}`) gives {}", type_name(t), tree.nodes[n].op.name, sig.text, type_name(f))), file, at.line, at.column))
                        }
                        _ => {}
                    }
                }
            } else {
                let what = format!("the result of the nested {}", tree.nodes[n].op.name);
                match (sig.results[0].kind, tree.nodes[n].ty) {
                    (OperandKind::TypeVar(var), Some(t)) => changed |= bind(&mut binds, tree, n, var, t, &what, &at)?,
                    (OperandKind::TypeVar(var), None) => {
                        if let Some(t) = binds[n][var as usize] {
                            tree.nodes[n].ty = Some(t);
                            changed = true;
                        }
                    }
                    (OperandKind::Fixed(f), Some(t)) if f != t => {
                        return Err(b.err(DescErrorKind::Invalid(format!("{what} is {}, but {} (`{}`) gives {}", type_name(t), tree.nodes[n].op.name, sig.text, type_name(f))), file, at.line, at.column))
                    }
                    (OperandKind::Fixed(f), None) => {
                        tree.nodes[n].ty = Some(f);
                        changed = true;
                    }
                    _ => {}
                }
            }
        }
        if !changed {
            break;
        }
    }
    if let Some(open) = tree.nodes[1..].iter().find(|n| n.ty.is_none()) {
        return Err(b.err(
            DescErrorKind::Invalid(format!("the type of the nested {} cannot be inferred from the signatures: write its result type (`{}(...): TYPE`)", open.op.name, open.name.text)),
            file,
            open.name.line,
            open.name.column,
        ));
    }
    Ok(())
}

/// Instantiates every `pattern` statement: one machine instruction per `for` binding.
fn build_patterns(
    b: &mut Builder,
    rule_files: &[(usize, Vec<Statement>)],
    opcodes: &[OpcodeInfo],
    type_class: &[Vec<u8>],
    actions: &[Vec<u8>],
    flag_groups: &[FlagGroupInfo],
    group_index: &HashMap<String, (u16, usize, usize)>,
) -> DescResult<Vec<PatternInfo>> {
    let mut out: Vec<PatternInfo> = Vec::new();
    let mut first_seen: HashMap<String, (usize, usize)> = HashMap::new();
    for (file, stmts) in rule_files {
        let file = *file;
        for stmt in stmts {
            let Statement::Pattern(p) = stmt else { continue };
            // `LOAD.volatile`: the opcode and the flags the instruction must carry;
            // `ATOMIC_LOAD_ADD.$atom_scope`: a flag group.
            let mut parts = p.opcode.text.split('.');
            let base = parts.next().unwrap_or("");
            let (group_parts, fixed_parts): (Vec<&str>, Vec<&str>) = parts.partition(|f| f.starts_with('$'));
            let mut flags: Vec<&'static str> = fixed_parts.into_iter().map(leak_str).collect();
            flags.sort();
            let mut groups: Vec<u16> = Vec::new();
            for g in &group_parts {
                let Some(&(gi, _, _)) = group_index.get(&g[1..]) else {
                    let candidates = flag_groups.iter().map(|x| x.name).collect();
                    return Err(b.err(b.unknown("flag group", g, candidates), file, p.opcode.line, p.opcode.column));
                };
                if groups.contains(&gi) {
                    return Err(b.err(DescErrorKind::Invalid(format!("flag group `{g}` is named twice")), file, p.opcode.line, p.opcode.column));
                }
                groups.push(gi);
            }
            let Some(op) = opcodes.iter().find(|o| o.name == base) else {
                let candidates = opcodes.iter().map(|o| o.name).collect();
                return Err(b.err(b.unknown("opcode", base, candidates), file, p.opcode.line, p.opcode.column));
            };
            let group_flags = groups.iter().flat_map(|&g| flag_groups[g as usize].members.iter().map(|m| m.flag).filter(|f| !f.is_empty()));
            if let Some(bad) = flags.iter().copied().chain(group_flags.clone()).find(|f| !op.flags.contains(f)) {
                return Err(b.err(
                    DescErrorKind::Invalid(format!("{} has no flag `.{bad}` (it accepts: {})", op.name, op.flags.join(", "))),
                    file,
                    p.opcode.line,
                    p.opcode.column,
                ));
            }
            // A flag must tell which group (or fixed flag) it belongs to.
            let mut seen: Vec<&str> = flags.clone();
            for f in groups.iter().flat_map(|&g| {
                let mut own: Vec<&str> = flag_groups[g as usize].members.iter().map(|m| m.flag).filter(|f| !f.is_empty()).collect();
                own.sort_unstable();
                own.dedup();
                own
            }) {
                if seen.contains(&f) {
                    return Err(b.err(DescErrorKind::Invalid(format!("flag `.{f}` belongs to two flag groups (or a group and a fixed flag) of this pattern")), file, p.opcode.line, p.opcode.column));
                }
                seen.push(f);
            }
            // A member's text may name only groups after its own, so texts resolve without cycles.
            for (k, &g) in groups.iter().enumerate() {
                let group = &flag_groups[g as usize];
                for m in group.members {
                    for t in m.texts {
                        for name in placeholders(t) {
                            let base_name = name.split('.').next().unwrap_or("");
                            let later = groups[k + 1..].iter().any(|&h| flag_groups[h as usize].name == base_name && flag_field_known(&flag_groups[h as usize], name));
                            if !later {
                                let (_, gf, gl) = group_index[group.name];
                                return Err(b.err(
                                    DescErrorKind::Invalid(format!(
                                        "`{{{name}}}` in a member of flag group ${} is not a flag group named after ${} in this pattern's opcode (defined at {}:{gl})",
                                        group.name,
                                        group.name,
                                        b.file(gf).display
                                    )),
                                    file,
                                    p.opcode.line,
                                    p.opcode.column,
                                ));
                            }
                        }
                    }
                }
            }
            // `kernel` is not a property of the SM but of the function: a conjunct of its
            // own, checked by the selector.
            let (kernel_only, condition) = match p.condition.as_ref().map(split_kernel).transpose() {
                Ok(split) => split.unwrap_or((false, None)),
                Err(at) => {
                    return Err(b.err(
                        DescErrorKind::Invalid("`kernel` can only be a conjunct of a pattern's condition (`when kernel`, `when sm_70 & kernel`)".into()),
                        file,
                        at.line,
                        at.column,
                    ))
                }
            };
            let set = match &condition {
                None => b.all_sms,
                Some(c) => b.eval(c, file)?,
            };
            let min_ptx = condition.as_ref().map_or(0, |c| b.required_ptx(c));
            if set.is_empty() {
                return Err(b.err(DescErrorKind::NeverApplies("the pattern's condition holds on no SM".into()), file, p.line, p.column));
            }
            let rule = b.add_rule(file, p.line, &p.text)?;
            // No `for` clause: one instance, every operand typed explicitly.
            let bindings: Vec<Option<(&Name, &str)>> =
                if p.bindings.is_empty() { vec![None] } else { p.bindings.iter().map(|(n, s)| Some((n, s.as_str()))).collect() };
            for binding in bindings {
                let bound = match binding {
                    None => None,
                    Some((name, suffix)) => {
                        let Some(vt) = b.type_id(&name.text) else {
                            let candidates = b.types.iter().map(|t| t.name).collect();
                            return Err(b.err(b.unknown("type", &name.text, candidates), file, name.line, name.column));
                        };
                        Some((vt, name, suffix))
                    }
                };
                let type_or_bound = |b: &Builder, kind: Option<&Name>, what: &Name| -> DescResult<u8> {
                    match kind {
                        Some(k) => b.type_id(&k.text).ok_or_else(|| {
                            b.err(b.unknown("operand kind or type", &k.text, b.types.iter().map(|t| t.name).chain(["imm", "lit", "cc", "bb", "sym", "flag"]).collect()), file, k.line, k.column)
                        }),
                        None => bound.map(|(vt, _, _)| vt).ok_or_else(|| {
                            b.err(DescErrorKind::Invalid(format!("operand `{}` needs a type (`{}: i32`) or a `for` clause", what.text, what.text)), file, what.line, what.column)
                        }),
                    }
                };
                // The tree: nodes in preorder (the root first), leaves in preorder.
                let mut tree = Tree { file, operands: Vec::new(), leaf_names: Vec::new(), nodes: Vec::new() };
                tree.nodes.push(TreeNode { op, name: p.opcode.clone(), flags: flags.clone(), ty: None, shared: false, args: Vec::new(), arg_names: Vec::new() });
                build_tree_args(b, &mut tree, 0, &p.args, opcodes, &|b: &Builder, kind: Option<&Name>, what: &Name| type_or_bound(b, kind, what))?;
                let any_results = p.results.len() == 1 && p.results[0].text == "values";
                let mut results = Vec::new();
                match p.results.as_slice() {
                    [r] if r.text == "none" || r.text == "values" => {}
                    [] => {
                        let single = op.signature.results.len() == 1 && !op.signature.results[0].variadic;
                        if single {
                            results.push(PatternResult::Reg(type_or_bound(b, None, &p.name)?));
                        }
                    }
                    list => {
                        let fixed = op.signature.results.iter().any(|r| r.variadic);
                        if !fixed && list.len() != op.signature.results.len() {
                            return Err(b.err(
                                DescErrorKind::Invalid(format!(
                                    "{} has {} result{} (`{}`), the pattern gives {}",
                                    op.name,
                                    op.signature.results.len(),
                                    if op.signature.results.len() == 1 { "" } else { "s" },
                                    op.signature.text,
                                    list.len()
                                )),
                                file,
                                list[0].line,
                                list[0].column,
                            ));
                        }
                        for r in list {
                            if r.text == "flag" && !is_bool(&op.signature, op.signature.results.get(results.len())) {
                                return Err(b.err(
                                    DescErrorKind::Invalid(format!("result {} of {} (`{}`) is not a bool, so it cannot be a flag", results.len() + 1, op.name, op.signature.text)),
                                    file,
                                    r.line,
                                    r.column,
                                ));
                            }
                            // `T` is the `for` clause's type (`-> (T, T)` for a pair of them).
                            let kind = if r.text == "T" { None } else { Some(r) };
                            results.push(if r.text == "flag" { PatternResult::Flag } else { PatternResult::Reg(type_or_bound(b, kind, r)?) });
                        }
                    }
                }
                let result = match results.first() {
                    Some(PatternResult::Reg(t)) => Some(*t),
                    _ => None,
                };
                infer_tree_types(b, &mut tree, &results, any_results)?;
                let operands = tree.operands.clone();
                // Registers must exist where the pattern applies.
                let regs = operands
                    .iter()
                    .filter_map(|(_, o)| if let PatternOperand::Reg(t) = o { Some(*t) } else { None })
                    .chain(results.iter().filter_map(|r| if let PatternResult::Reg(t) = r { Some(*t) } else { None }))
                    .chain(tree.nodes.iter().filter_map(|n| n.ty));
                for t in regs {
                    if let Some(sm) = (0..b.sm_names.len()).find(|&sm| set.contains(sm) && type_class[sm][t as usize] == NO_CLASS) {
                        let ty = b.types.iter().find(|x| x.id == t).map(|x| x.name).unwrap_or("?");
                        return Err(b.err(
                            DescErrorKind::Invalid(format!("the pattern uses `{ty}` registers on {}, where `{ty}` is not a register type (add a `when` condition)", b.sm_names[sm])),
                            file,
                            p.line,
                            p.column,
                        ));
                    }
                }
                // A nested instruction exists after legalization only where its cell is Legal.
                for node in &tree.nodes[1..] {
                    let row = match node.op.type_operand {
                        Some(i) => node.args.get(i as usize).and_then(|a| tree.arg_type(*a)),
                        None => node.ty,
                    };
                    let Some(row) = row else { continue };
                    let cell = OPCODE_STRIDE * row as usize + node.op.id as usize;
                    if !(0..b.sm_names.len()).any(|sm| set.contains(sm) && actions[sm].get(cell) == Some(&(Action::Legal as u8))) {
                        let ty = b.types.iter().find(|x| x.id == row).map(|x| x.name).unwrap_or("?");
                        return Err(b.err(
                            DescErrorKind::NeverApplies(format!(
                                "the nested {} on {ty} is not Legal on any SM where the pattern applies ({}), so no instruction can match it",
                                node.op.name,
                                b.sm_list(set)
                            )),
                            file,
                            node.name.line,
                            node.name.column,
                        ));
                    }
                }
                // `{tmp.T}` is a scratch register of the `for` type.
                let template = match bound {
                    Some((vt, _, _)) => {
                        let ty = b.types.iter().find(|t| t.id == vt).map_or("?", |t| t.name);
                        p.template.replace("{tmp.T}", &format!("{{tmp.{ty}}}")).replace("{tmp.T.", &format!("{{tmp.{ty}."))
                    }
                    None => p.template.clone(),
                };
                // Template placeholders (`{{` and `}}` are literal braces).
                let mut rest = template.as_str();
                let mut offset = 0;
                loop {
                    let (Some(open), brace) = (rest.find(['{', '}']), rest.find(['{', '}']).map(|i| &rest[i..])) else { break };
                    if brace.is_some_and(|r| r.starts_with("{{") || r.starts_with("}}")) {
                        offset += open + 2;
                        rest = &rest[open + 2..];
                        continue;
                    }
                    if brace.is_some_and(|r| r.starts_with('}')) {
                        return Err(b.err(DescErrorKind::Invalid("unmatched `}` in template (write `}}` for a brace)".into()), file, p.template_line, p.template_column + offset + open));
                    }
                    let Some(close) = rest[open..].find('}') else {
                        return Err(b.err(DescErrorKind::Invalid("unclosed `{` in template".into()), file, p.template_line, p.template_column + offset + open));
                    };
                    let name = &rest[open + 1..open + close];
                    let scratch_type = name.strip_prefix("tmp.").map(|t| b.type_id(scratch_type_name(t)));
                    // `{d1}` is a result unless an operand has that name.
                    let result_index = name.strip_prefix('d').and_then(|n| n.parse::<usize>().ok()).filter(|_| !operands.iter().any(|(n, _)| *n == name));
                    let flag = operands.iter().any(|(n, o)| *n == name && *o == PatternOperand::Flag);
                    if flag {
                        return Err(b.err(
                            DescErrorKind::Invalid(format!("`{name}` is a flag: the hardware carries it, so the template cannot name it")),
                            file,
                            p.template_line,
                            p.template_column + offset + open,
                        ));
                    }
                    let known = match name {
                        _ if scratch_type.is_some() => scratch_type.flatten().is_some(),
                        "d" => result.is_some(),
                        _ if result_index.is_some() => result_index.is_some_and(|i| i > 0 && matches!(results.get(i), Some(PatternResult::Reg(_)))),
                        "T" => bound.is_some(),
                        "cc" | "ccs" => operands.iter().any(|(_, o)| *o == PatternOperand::CondCode),
                        "param" => op.name == "ARG",
                        // `{param.i}`: the parameter of the nested ARG whose index is leaf `i`.
                        _ if name.starts_with("param.") => param_leaf(&tree, &name["param.".len()..]),
                        // The frame object a FRAME_INDEX node names, as its depot address.
                        "frame" => tree.nodes.iter().any(|n| n.op.name == "FRAME_INDEX"),
                        _ if groups.iter().any(|&g| flag_field_known(&flag_groups[g as usize], name)) => true,
                        _ => operands.iter().any(|(n, _)| *n == name),
                    };
                    if !known {
                        let names: Vec<String> = operands.iter().filter(|(_, o)| *o != PatternOperand::Flag).map(|(n, _)| format!("{{{n}}}")).collect();
                        return Err(b.err(
                            DescErrorKind::Invalid(format!(
                                "unknown template placeholder `{{{name}}}` (this pattern has {}{}{}{}{})",
                                names.join(" "),
                                if result.is_some() { " {d}" } else { "" },
                                (1..results.len()).filter(|&i| matches!(results[i], PatternResult::Reg(_))).map(|i| format!(" {{d{i}}}")).collect::<String>(),
                                if bound.is_some() { " {T}" } else { "" },
                                groups
                                    .iter()
                                    .map(|&g| {
                                        let group = &flag_groups[g as usize];
                                        let fields: String = group.fields.iter().map(|f| format!(" {{{}.{f}}}", group.name)).collect();
                                        format!(" {{{}}}{fields}", group.name)
                                    })
                                    .collect::<String>()
                            )),
                            file,
                            p.template_line,
                            p.template_column + offset + open,
                        ));
                    }
                    offset += open + close + 1;
                    rest = &rest[open + close + 1..];
                }
                // Results are written only after the template's last read of a register
                // operand: an operand whose value dies at this instruction may share its
                // register with a result (PHI elimination coalesces them), so a line that
                // wrote the result earlier would clobber the operand for the lines after it
                // (USUBO's `sub` before its `setp`: random kernel 118026).
                let lines: Vec<&str> = template.split("\\n").collect();
                let is_register = |name: &str| operands.iter().any(|(n, k)| *n == name && matches!(k, PatternOperand::Reg(_) | PatternOperand::Values));
                let is_result = |name: &str| name == "d" || (name.strip_prefix('d').is_some_and(|n| n.parse::<usize>().is_ok()) && !operands.iter().any(|(n, _)| *n == name));
                if let Some(last_read) = lines.iter().rposition(|l| placeholders(l).iter().any(|n| is_register(n))) {
                    let early = lines[..last_read].iter().enumerate().find_map(|(i, l)| placeholders(l).into_iter().find(|n| is_result(n)).map(|n| (i, n)));
                    if let Some((line, name)) = early {
                        return Err(b.err(
                            DescErrorKind::Invalid(format!(
                                "result `{{{name}}}` is written on line {} of the template, before line {} reads an operand: an operand that dies here may share the result's register (write a `{{tmp.TYPE}}` and move it into `{{{name}}}` last)",
                                line + 1,
                                last_read + 1
                            )),
                            file,
                            p.template_line,
                            p.template_column,
                        ));
                    }
                }
                // In a tree every leaf carries something the instruction needs: a template
                // that does not name it drops an input of an absorbed instruction (fixed
                // values, flags and an ARG's index, which `{param}` names, say nothing more).
                // A one-node pattern may ignore an operand (the mask of a mask-less shfl).
                let used = if tree.nodes.len() > 1 { placeholders(&template) } else { Vec::new() };
                let cc_named = used.iter().any(|u| *u == "cc" || *u == "ccs");
                for ((leaf, kind), name) in operands.iter().zip(&tree.leaf_names) {
                    let silent = match kind {
                        PatternOperand::ImmIs(..) | PatternOperand::LiteralIs(_) | PatternOperand::SymbolIs(_) | PatternOperand::Flag => true,
                        PatternOperand::CondCode => cc_named,
                        PatternOperand::Literal => (op.name == "ARG" && used.contains(&"param")) || used.contains(&"frame") || used.contains(&format!("param.{leaf}").as_str()),
                        _ => p.hook.is_some(),
                    };
                    if tree.nodes.len() > 1 && !silent && !used.contains(leaf) {
                        return Err(b.err(DescErrorKind::Invalid(format!("operand `{leaf}` is not used by the template (write `{{{leaf}}}`)")), file, name.line, name.column));
                    }
                }
                if operands.iter().filter(|(_, k)| *k == PatternOperand::CondCode).count() > 1 {
                    let second = operands.iter().enumerate().filter(|(_, (_, k))| *k == PatternOperand::CondCode).nth(1).map_or(0, |(i, _)| i);
                    let at = &tree.leaf_names[second];
                    return Err(b.err(DescErrorKind::Invalid("a pattern takes at most one condition code (`{cc}` names it)".into()), file, at.line, at.column));
                }
                let name = match bound {
                    Some((_, ty, _)) => format!("{}_{}", p.name.text, ty.text),
                    None => p.name.text.clone(),
                };
                if let Some((f0, l0)) = first_seen.get(&name) {
                    let first = format!("{}:{}", b.file(*f0).display, l0);
                    return Err(b.err(DescErrorKind::Duplicate { what: "machine instruction", name, first }, file, p.name.line, p.name.column));
                }
                if let Some(generic) = opcodes.iter().find(|o| o.name == name) {
                    return Err(b.err(
                        DescErrorKind::Invalid(format!(
                            "machine instruction `{name}` has the name of the generic opcode {} ({}); MIR could not tell them apart",
                            generic.name, generic.source
                        )),
                        file,
                        p.name.line,
                        p.name.column,
                    ));
                }
                first_seen.insert(name.clone(), (file, p.line));
                // Folded immediates, then operands of a fixed value, make a pattern more specific.
                let priority = operands
                    .iter()
                    .map(|(_, o)| match o {
                        PatternOperand::Imm(_) | PatternOperand::LiteralIs(_) | PatternOperand::ImmRange(..) | PatternOperand::LowMask(_) => 1,
                        PatternOperand::ImmIs(..) => 2,
                        _ => 0,
                    })
                    .sum::<u8>();
                out.push(PatternInfo {
                    name: leak_str(&name),
                    opcode: op.id,
                    flags: leak(flags.clone()),
                    flag_groups: leak(groups.clone()),
                    operands: leak(operands),
                    nodes: leak(tree.nodes.iter().map(|n| PatternNode { opcode: n.op.id, flags: leak(n.flags.clone()), ty: n.ty, args: leak(n.args.clone()), shared: n.shared }).collect()),
                    results: leak(results),
                    sms: set.0,
                    kernel_only,
                    min_ptx,
                    template: leak_str(&template.replace("\\n", "\n")),
                    any_results,
                    hook: p.hook.as_ref().map(|h| leak_str(&h.text)),
                    suffix: leak_str(bound.map_or("", |(_, _, s)| s)),
                    priority,
                    rule,
                });
            }
        }
    }
    Ok(out)
}
