//! A pattern's PTX template (`add{T} {d}, {a}, {b}`) split into its pieces: the text
//! between placeholders, and each placeholder already told apart (a result, an operand
//! by its index, `{T}`, `{cc}`, a scratch register, ...).
//!
//! Part of emission ([`super`]). Emission used to read the template text again for
//! every instruction: find each brace, compare the key with the reserved names and the
//! pattern's operand names. A template without flag groups is the same for every
//! instruction of its pattern, so its pieces are made once per module ([`Templates`])
//! and shared by the functions emitted in parallel; a template with flag groups is
//! resolved once per combination of flags (they choose the text) and split for each
//! instruction. A
//! placeholder is only classified here: what it is wrong about (a missing result, an
//! unknown name) is reported when an instruction reaches it, as before.

use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;

use target_desc::tables::{PatternOperand, TargetTables};

use crate::mir::Flags;

/// One piece of a template, in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Piece<'t> {
    /// Text copied as it is (`{{` and `}}` have become one brace).
    Text(&'t str),
    /// `{tmp.TYPE}`: a scratch register, one per key and instruction (the whole key).
    Scratch(&'t str),
    /// `{d}`: the first result.
    Def,
    /// `{dN}` (when no operand is named so): result N, and the key for the error.
    Result(usize, &'t str),
    /// `{T}`: the pattern's type suffix.
    Suffix,
    /// `{param}` (operand 0, an `ARG`'s index) or `{param.NAME}` (operand NAME, the index
    /// of an `ARG` nested in a tree): the parameter symbol the index names.
    Param(usize),
    /// `{frame}`: the address of a frame object.
    Frame,
    /// `{cc}` or `{ccs}` (the key).
    CondCode(&'t str),
    /// An operand placeholder: its index among the pattern's operands, and its name.
    Operand(usize, &'t str),
    /// A placeholder naming nothing the pattern has.
    Unknown(&'t str),
    /// A `}` without its `{`: the template ends here with an error.
    UnmatchedClose,
}

/// `template`'s pieces, for a pattern with these operands.
pub(super) fn split<'t>(template: &'t str, operands: &[(&str, PatternOperand)]) -> Vec<Piece<'t>> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.bytes().position(|c| c == b'{' || c == b'}') {
        if open > 0 {
            pieces.push(Piece::Text(&rest[..open]));
        }
        // `{{` and `}}` are literal braces.
        if rest[open..].starts_with("{{") || rest[open..].starts_with("}}") {
            pieces.push(Piece::Text(&rest[open..open + 1]));
            rest = &rest[open + 2..];
            continue;
        }
        if rest[open..].starts_with('}') {
            pieces.push(Piece::UnmatchedClose);
            return pieces;
        }
        let close = rest.as_bytes()[open..].iter().position(|&c| c == b'}').map_or(rest.len(), |c| open + c);
        let key = &rest[open + 1..close];
        rest = rest.get(close + 1..).unwrap_or("");
        let named = |name: &str| operands.iter().position(|(n, _)| *n == name);
        let result_index = key.strip_prefix('d').and_then(|n| n.parse::<usize>().ok()).filter(|_| named(key).is_none());
        pieces.push(match key {
            _ if key.starts_with("tmp.") => Piece::Scratch(key),
            "d" => Piece::Def,
            _ if result_index.is_some() => Piece::Result(result_index.unwrap_or(0), key),
            "T" => Piece::Suffix,
            "param" => Piece::Param(0),
            _ if key.starts_with("param.") => match named(&key["param.".len()..]) {
                Some(k) => Piece::Param(k),
                None => Piece::Unknown(key),
            },
            "frame" => Piece::Frame,
            "cc" | "ccs" => Piece::CondCode(key),
            name => match named(name) {
                Some(k) => Piece::Operand(k, name),
                None => Piece::Unknown(name),
            },
        });
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    pieces
}

/// The pieces of every pattern's template that has no flag groups, made on first use
/// and shared by the threads emitting a module.
pub struct Templates<'t> {
    tables: &'t TargetTables,
    pieces: Vec<OnceLock<Vec<Piece<'static>>>>,
    /// Flag-group templates resolved for an instruction's flags, per pattern and SM: the
    /// flag combinations seen, each with its text. A module's instructions repeat a few
    /// combinations, and resolving one rewrites the template once per group member (a
    /// module of thousands of small functions resolved the same `ret` thousands of
    /// times).
    resolved: Mutex<Resolved>,
}

/// [`Templates::resolved`]'s texts: per (pattern, SM), each combination of flags seen.
type Resolved = FxHashMap<(u32, u32), Vec<(Flags, Arc<str>)>>;

impl<'t> Templates<'t> {
    pub fn new(tables: &'t TargetTables) -> Templates<'t> {
        Templates { tables, pieces: (0..tables.patterns.len()).map(|_| OnceLock::new()).collect(), resolved: Mutex::default() }
    }

    /// Pattern `m`'s template with its flag groups resolved for `flags` on SM
    /// `sm_index` ([`TargetTables::resolve_flag_groups`]).
    pub(super) fn resolved(&self, m: usize, flags: &Flags, sm_index: usize) -> Result<Arc<str>, String> {
        let key = (m as u32, sm_index as u32);
        let known = |cache: &Resolved| cache.get(&key).and_then(|seen| seen.iter().find(|(f, _)| f == flags).map(|(_, text)| text.clone()));
        if let Some(text) = known(&self.resolved.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(text);
        }
        let text: Arc<str> = self.tables.resolve_flag_groups(&self.tables.patterns[m], flags, sm_index)?.into();
        self.resolved.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default().push((flags.clone(), text.clone()));
        Ok(text)
    }

    /// The pieces of pattern `m`'s template (which has no flag groups).
    pub(super) fn of(&self, m: usize) -> &[Piece<'static>] {
        self.pieces[m].get_or_init(|| {
            let p = &self.tables.patterns[m];
            split(p.template, p.operands)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use target_desc::tables::PatternOperand;

    const OPS: &[(&str, PatternOperand)] = &[("a", PatternOperand::Literal), ("d1", PatternOperand::Literal)];

    #[test]
    fn classifies_placeholders_in_the_emitters_order() {
        use Piece::*;
        assert_eq!(
            split("mov{T} {d}, {a};{{x}} {d1} {d2} {tmp.i32} {cc}{ccs} {param} {frame} {zz}", OPS),
            vec![
                Text("mov"), Suffix, Text(" "), Def, Text(", "), Operand(0, "a"), Text(";"), Text("{"), Text("x"), Text("}"), Text(" "),
                // `d1` is an operand's name, so it is that operand; `d2` is result 2.
                Operand(1, "d1"), Text(" "), Result(2, "d2"), Text(" "), Scratch("tmp.i32"), Text(" "), CondCode("cc"), CondCode("ccs"),
                Text(" "), Param(0), Text(" "), Frame, Text(" "), Unknown("zz"),
            ]
        );
    }

    #[test]
    fn stops_at_an_unmatched_close_and_reads_an_unclosed_key_to_the_end() {
        assert_eq!(split("a}b", OPS), vec![Piece::Text("a"), Piece::UnmatchedClose]);
        assert_eq!(split("x {a", OPS), vec![Piece::Text("x "), Piece::Operand(0, "a")]);
    }
}
