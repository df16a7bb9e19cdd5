//! The common shape of a function document's header, read without a YAML parser.
//!
//! Part of the front end ([`super::parser`]). A module of many small functions spent
//! about a third of its parse in serde_yaml for headers of a few lines (two passes:
//! YAML to a `Value`, the `Value` to the document). The headers the printer writes, and
//! almost every hand-written one, use a small subset of YAML: top-level `key: value`
//! lines, plain scalars, flow sequences and flow mappings, and block sequences of flow
//! mappings. [`read`] accepts exactly that subset and returns `None` for anything else
//! (quotes, anchors, tags, comments after a value, tabs, a duplicate or unknown key, a
//! scalar YAML might read as something other than a string or a number, a missing
//! key), and serde_yaml then reads the document as before, with its diagnostics. So
//! the subset never decides what a document means: where it answers, it answers what
//! serde_yaml answers, which the tests check on every `.mir` file of the repository
//! and on generated headers.

use super::parser::{AttributesDoc, FrameDoc, FunctionDoc, ParamDoc};

/// The function document of `text` (a header whose last key is `body: |`, the body
/// itself cut out already), or `None` when the text is not in the subset.
pub(super) fn read(text: &str) -> Option<FunctionDoc> {
    let mut name = None;
    let mut kind = None;
    let mut params = None;
    let mut returns = None;
    let mut attributes = None;
    let mut frame = None;
    let mut ssa = None;
    let mut body = false;
    // The block sequence being read (`params:` or `frame:` with no value) and the
    // indentation of its items.
    let mut sequence: Option<(&str, Option<usize>)> = None;
    for line in super::syntax::lines(text) {
        let trimmed = line.trim_start_matches(' ');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let special = line.bytes().any(|c| matches!(c, b'#' | b'\t' | b'"' | b'\'' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' | b'?'));
        if body || special && !is_body_key(line) {
            return None;
        }
        let indent = line.len() - trimmed.len();
        if indent > 0 {
            // An item of the block sequence just opened.
            let (key, item_indent) = sequence.as_mut()?;
            if *item_indent.get_or_insert(indent) != indent {
                return None;
            }
            let entries = flow_mapping(trimmed.strip_prefix("- ")?.trim_matches(' '))?;
            match *key {
                "params" => params.get_or_insert_with(Vec::new).push(param(&entries)?),
                _ => frame.get_or_insert_with(Vec::new).push(frame_object(&entries)?),
            }
            continue;
        }
        if let Some((_, None)) = sequence {
            return None; // `params:` with no items: null, which serde rejects
        }
        sequence = None;
        let (key, value) = match line.split_once(": ") {
            Some((key, value)) => (key, value.trim_matches(' ')),
            None => (line.trim_end_matches(' ').strip_suffix(':')?, ""),
        };
        match key {
            "name" if name.is_none() => name = Some(string(value)?),
            "kind" if kind.is_none() => kind = Some(string(value)?),
            "ssa" if ssa.is_none() => ssa = Some(boolean(value)?),
            "returns" if returns.is_none() => returns = Some(flow_sequence(value)?.into_iter().map(string).collect::<Option<Vec<_>>>()?),
            "attributes" if attributes.is_none() => attributes = Some(attributes_doc(&flow_mapping(value)?)?),
            "params" | "frame" if value.is_empty() => {
                if (key == "params" && params.is_some()) || (key == "frame" && frame.is_some()) {
                    return None;
                }
                sequence = Some((key, None));
            }
            "params" if params.is_none() && value == "[]" => params = Some(Vec::new()),
            "frame" if frame.is_none() && value == "[]" => frame = Some(Vec::new()),
            "body" if value == "|" => body = true,
            _ => return None,
        }
    }
    if !body || matches!(sequence, Some((_, None))) {
        return None;
    }
    Some(FunctionDoc {
        name: name?,
        kind: kind?,
        params: params.unwrap_or_default(),
        returns: returns.unwrap_or_default(),
        attributes,
        frame: frame.unwrap_or_default(),
        ssa: ssa.unwrap_or(true),
        body: String::new(),
    })
}

fn is_body_key(line: &str) -> bool {
    line.trim_end_matches(' ') == "body: |"
}

/// A plain scalar that YAML reads as this string: a name of letters, digits, `_`,
/// `.` and `$` starting with a letter or `_`, and not one of the words YAML 1.2 reads
/// as a boolean or null (serde_yaml follows YAML 1.2, where `yes`, `n` and `off` are
/// strings; the generated headers below include them).
fn string(s: &str) -> Option<String> {
    let mut chars = s.chars();
    let first = chars.next()?;
    let plain = (first.is_ascii_alphabetic() || first == '_') && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$'));
    let special = ["true", "false", "null"].iter().any(|w| s.eq_ignore_ascii_case(w));
    (plain && !special).then(|| s.to_string())
}

/// `true` or `false` (YAML 1.2's only booleans, as serde_yaml reads them).
fn boolean(s: &str) -> Option<bool> {
    match s {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// A decimal integer without sign or leading zeros.
fn integer<T: std::str::FromStr>(s: &str) -> Option<T> {
    let digits = !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    digits.then(|| s.parse().ok()).flatten()
}

/// The items of `[a, b, c]` (no nesting).
fn flow_sequence(s: &str) -> Option<Vec<&str>> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?.trim_matches(' ');
    if inner.is_empty() {
        return Some(Vec::new());
    }
    if inner.contains(['[', ']', '{', '}']) {
        return None;
    }
    inner.split(',').map(|item| Some(item.trim_matches(' ')).filter(|i| !i.is_empty())).collect()
}

/// The `key: value` entries of `{ k: v, k: [a, b] }`, values possibly flow sequences.
fn flow_mapping(s: &str) -> Option<Vec<(&str, &str)>> {
    let inner = s.strip_prefix('{')?.strip_suffix('}')?.trim_matches(' ');
    let mut entries = Vec::new();
    if inner.is_empty() {
        return Some(entries);
    }
    let mut rest = inner;
    loop {
        let (key, after) = rest.split_once(": ")?;
        let key = key.trim_matches(' ');
        let after = after.trim_start_matches(' ');
        // A value runs to the next comma outside brackets.
        let end = if after.starts_with('[') { after.find(']')? + 1 } else { after.find(',').unwrap_or(after.len()) };
        let value = after[..end].trim_matches(' ');
        if key.is_empty() || value.is_empty() || value.contains(['{', '}']) || entries.iter().any(|(k, _)| *k == key) {
            return None;
        }
        entries.push((key, value));
        rest = after[end..].trim_start_matches(' ');
        if rest.is_empty() {
            return Some(entries);
        }
        rest = rest.strip_prefix(',')?.trim_start_matches(' ');
        if rest.is_empty() {
            return None; // a trailing comma
        }
    }
}

fn param(entries: &[(&str, &str)]) -> Option<ParamDoc> {
    let (mut name, mut ty, mut noalias) = (None, None, None);
    for &(key, value) in entries {
        match key {
            "name" if name.is_none() => name = Some(string(value)?),
            "type" if ty.is_none() => ty = Some(string(value)?),
            "noalias" if noalias.is_none() => noalias = Some(boolean(value)?),
            _ => return None,
        }
    }
    Some(ParamDoc { name: name?, ty: ty?, noalias: noalias.unwrap_or(false) })
}

fn frame_object(entries: &[(&str, &str)]) -> Option<FrameDoc> {
    let mut object = FrameDoc { name: None, size: 0, align: None, spill: false };
    let mut size = None;
    for &(key, value) in entries {
        match key {
            "name" => object.name = Some(string(value)?),
            "size" => size = Some(integer(value)?),
            "align" => object.align = Some(integer(value)?),
            "spill" => object.spill = boolean(value)?,
            _ => return None,
        }
    }
    object.size = size?;
    Some(object)
}

fn attributes_doc(entries: &[(&str, &str)]) -> Option<AttributesDoc> {
    let mut attributes = AttributesDoc { maxntid: None, minnctapersm: None, maxnreg: None };
    for &(key, value) in entries {
        match key {
            "maxntid" => attributes.maxntid = Some(flow_sequence(value)?.into_iter().map(integer).collect::<Option<Vec<u32>>>()?),
            "minnctapersm" => attributes.minnctapersm = Some(integer(value)?),
            "maxnreg" => attributes.maxnreg = Some(integer(value)?),
            _ => return None,
        }
    }
    Some(attributes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What serde_yaml makes of the header, as the parser reads it.
    fn by_yaml(text: &str) -> Option<FunctionDoc> {
        serde_yaml::from_str::<FunctionDoc>(text).ok()
    }

    /// Wherever the fast reader answers, serde_yaml answers the same.
    fn agrees(text: &str) {
        if let Some(fast) = read(text) {
            assert_eq!(Some(fast), by_yaml(text), "header:\n{text}");
        }
    }

    #[test]
    fn reads_the_printers_headers() {
        let text = "name: saxpy\nkind: kernel\nparams:\n  - { name: a, type: f32 }\n  - { name: x, type: p1 }\nreturns: [f32, i32]\nssa: false\nattributes: { maxntid: [256, 1, 1], minnctapersm: 2, maxnreg: 64 }\nframe:\n  - { name: buf, size: 16, align: 4 }\n  - { size: 4, align: 4, spill: true }\nbody: |\n";
        let doc = read(text).expect("the printer's header shape is in the subset");
        assert_eq!(doc.name, "saxpy");
        assert_eq!(doc.params.len(), 2);
        assert_eq!(doc.params[1].ty, "p1");
        assert_eq!(doc.returns, ["f32", "i32"]);
        assert!(!doc.ssa);
        assert_eq!(doc.attributes.as_ref().and_then(|a| a.maxntid.clone()), Some(vec![256, 1, 1]));
        assert_eq!(doc.frame[1].spill, true);
        assert_eq!(Some(doc), by_yaml(text));
        assert!(read("name: f\nkind: device\nparams: []\nbody: |\n").is_some());
    }

    #[test]
    fn leaves_everything_else_to_yaml() {
        for text in [
            "name: \"f\"\nkind: device\nbody: |\n",          // quoted
            "name: f # a comment\nkind: device\nbody: |\n",  // comment after a value
            "name: f\nname: g\nkind: device\nbody: |\n",     // duplicate key
            "name: true\nkind: device\nbody: |\n",           // a boolean
            "name: 12\nkind: device\nbody: |\n",             // a number
            "name: f\nkind: device\nparams:\nbody: |\n",     // params: null
            "name: f\nkind: device\nparams:\n  - name: a\n    type: i32\nbody: |\n", // block mapping items
            "name: f\nkind: device\n",                       // no body
            "name: f\nkind: device\nbody: |\nextra: 1\n",    // a key after the body
            "name: f\nkind: device\ncolor: red\nbody: |\n",  // unknown key
            "name: f\nkind: device\nframe:\n  - { size: 010 }\nbody: |\n", // leading zero
        ] {
            assert!(read(text).is_none(), "{text}");
        }
    }

    #[test]
    fn agrees_with_yaml_on_every_function_document_of_the_repository() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        let mut dirs = vec![root.join("tests"), root.join("backend/tests")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "mir") {
                    files.push(path);
                }
            }
        }
        let (mut read_fast, mut documents) = (0, 0);
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            for doc in text.split("\n---").map(|d| d.split("\n...").next().unwrap_or("")) {
                let Some(key) = doc.find("\nbody: |\n").or_else(|| doc.starts_with("body: |\n").then_some(0)) else { continue };
                let header = format!("{}\n", &doc[..key + "\nbody: |".len()]);
                documents += 1;
                read_fast += usize::from(read(&header).is_some());
                agrees(&header);
            }
        }
        assert!(documents > 200, "found only {documents} function documents");
        // The subset is the common case, or it saves nothing.
        assert!(read_fast * 10 > documents * 9, "the fast reader took {read_fast} of {documents} headers");
    }

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec!["a", "x", "n", "y", "N", "Yes", "no", "On", "off", "true", "False", "NULL", "null", "f0", "_t", "a.b", "a$b", "i32", "p1", "v2f16", "kernel", "device", "0", "7", "010", "1e3", "0x10", "-1", "a-b", "a:b", "~", ".5", "inf", ".inf", "a b", ""]).prop_map(str::to_string),
            "[a-zA-Z_][a-zA-Z0-9_.$]{0,6}",
        ]
    }

    fn flow_map() -> impl Strategy<Value = String> {
        (prop::collection::vec((prop::sample::select(vec!["name", "type", "size", "align", "spill", "maxntid", "minnctapersm", "maxnreg", "other"]), scalar()), 0..4), prop::sample::select(vec![" ", "", "  "]))
            .prop_map(|(entries, pad)| format!("{{{pad}{}{pad}}}", entries.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", ")))
    }

    fn header_line() -> impl Strategy<Value = String> {
        prop_oneof![
            (prop::sample::select(vec!["name", "kind", "ssa", "returns", "attributes", "params", "frame", "color"]), scalar()).prop_map(|(k, v)| format!("{k}: {v}")),
            prop::collection::vec(scalar(), 0..4).prop_map(|v| format!("returns: [{}]", v.join(", "))),
            flow_map().prop_map(|m| format!("attributes: {m}")),
            (prop::sample::select(vec!["params", "frame"]), prop::collection::vec(flow_map(), 0..3), 1..4usize)
                .prop_map(|(k, items, indent)| std::iter::once(format!("{k}:")).chain(items.iter().map(|m| format!("{}- {m}", " ".repeat(indent)))).collect::<Vec<_>>().join("\n")),
            Just("# a comment".to_string()),
            Just(String::new()),
            Just("ssa: false".to_string()),
            Just("attributes: { maxntid: [64, 1, 1], maxnreg: 32 }".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Random headers near the subset: where the fast reader answers, it is YAML's answer.
        #[test]
        fn agrees_with_yaml_on_generated_headers(name in scalar(), kind in prop::sample::select(vec!["kernel", "device", "other"]), lines in prop::collection::vec(header_line(), 0..6)) {
            let text = format!("name: {name}\nkind: {kind}\n{}body: |\n", lines.iter().map(|l| format!("{l}\n")).collect::<String>());
            agrees(&text);
        }

        /// Well-formed headers with names in the subset are read fast.
        #[test]
        fn reads_well_formed_headers(name in "[a-z_][a-z0-9_]{0,5}", params in prop::collection::vec(("[a-z_][a-z0-9_]{0,5}", prop::sample::select(vec!["i32", "f32", "p1", "i64"])), 0..4)) {
            prop_assume!(string(&name).is_some() && params.iter().all(|(n, _)| string(n).is_some()));
            let items: String = params.iter().map(|(n, t)| format!("  - {{ name: {n}, type: {t} }}\n")).collect();
            let text = format!("name: {name}\nkind: device\nparams:\n{items}returns: [i32]\nbody: |\n");
            let text = if params.is_empty() { text.replace("params:\n", "params: []\n") } else { text };
            prop_assert!(read(&text).is_some(), "{}", text);
            agrees(&text);
        }
    }
}
