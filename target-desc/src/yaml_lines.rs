//! Line numbers for YAML entries.
//!
//! serde_yaml reports positions for syntax errors only, but provenance needs the line
//! of every entry. The description files keep one entry per `- ` item, so a small
//! indentation scan recovers the line of each item of a section, and of a name within
//! an item, without a second YAML parser.

/// Indentation of a line, or `None` for blank and comment-only lines.
fn indent(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        None
    } else {
        Some(line.len() - trimmed.len())
    }
}

/// Finds `key:` at exactly `depth` within `lines[start..end]`; returns the key's line
/// index and the end of its block.
fn find_key(lines: &[&str], start: usize, end: usize, depth: usize, key: &str) -> Option<(usize, usize)> {
    let mut i = start;
    while i < end {
        if indent(lines[i]) == Some(depth) {
            let t = lines[i].trim_start();
            let t = t.strip_prefix("- ").unwrap_or(t);
            if t.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with(':')) {
                let mut j = i + 1;
                while j < end {
                    if let Some(d) = indent(lines[j]) {
                        if d <= depth {
                            break;
                        }
                    }
                    j += 1;
                }
                return Some((i, j));
            }
        }
        i += 1;
    }
    None
}

/// 1-based line of the key at the end of `path` (`["scheduling", "priorities"]`).
pub fn key_line(text: &str, path: &[&str]) -> Option<usize> {
    key_line_in(&text.lines().collect::<Vec<_>>(), path)
}

/// [`key_line`] on text already split into lines (for callers that look up several
/// keys of one text).
pub fn key_line_in(lines: &[&str], path: &[&str]) -> Option<usize> {
    let (mut start, mut end, mut depth) = (0, lines.len(), 0);
    let mut found = None;
    for key in path {
        let (line, block_end) = find_key(&lines, start, end, depth, key)?;
        found = Some(line + 1);
        start = line + 1;
        end = block_end;
        depth = (start..end).find_map(|i| indent(lines[i])).unwrap_or(depth + 2);
    }
    found
}

/// The top-level keys of a small document, found in one pass over its lines: for a
/// caller that looks up many of them (the MIR parser asks eight per function header,
/// and [`key_line_in`] scanned the header once for each). Answers as [`key_line_in`]
/// and [`item_lines_in`] do for a one-key path.
pub struct TopKeys<'l, 'a> {
    lines: &'l [&'a str],
    /// Each line at indentation 0: its index and its text after any `- `.
    top: Vec<(usize, &'a str)>,
}

impl<'l, 'a> TopKeys<'l, 'a> {
    pub fn new(lines: &'l [&'a str]) -> TopKeys<'l, 'a> {
        let top = lines.iter().enumerate().filter(|(_, l)| indent(l) == Some(0)).map(|(i, l)| (i, l.strip_prefix("- ").unwrap_or(l))).collect();
        TopKeys { lines, top }
    }

    /// The line index of `key:` and the end of its block (the next top-level line).
    fn find(&self, key: &str) -> Option<(usize, usize)> {
        let k = self.top.iter().position(|(_, t)| t.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with(':')))?;
        Some((self.top[k].0, self.top.get(k + 1).map_or(self.lines.len(), |e| e.0)))
    }

    /// 1-based line of `key:` (`key_line_in(lines, &[key])`).
    pub fn line(&self, key: &str) -> Option<usize> {
        self.find(key).map(|(line, _)| line + 1)
    }

    /// 1-based lines of the `- ` items under `key:` (`item_lines_in(lines, &[key])`).
    pub fn items(&self, key: &str) -> Vec<usize> {
        match self.find(key) {
            Some((line, end)) => items_between(self.lines, line + 1, end, 0),
            None => Vec::new(),
        }
    }
}

/// 1-based lines of the `- ` items of the block `lines[start..end]` under a key at
/// `depth`: those at the block's indentation.
fn items_between(lines: &[&str], start: usize, end: usize, depth: usize) -> Vec<usize> {
    let depth = (start..end).find_map(|i| indent(lines[i])).unwrap_or(depth + 2);
    (start..end).filter(|&i| indent(lines[i]) == Some(depth) && lines[i].trim_start().starts_with("- ")).map(|i| i + 1).collect()
}

/// 1-based lines of the `- ` items of the sequence at `path`.
pub fn item_lines(text: &str, path: &[&str]) -> Vec<usize> {
    item_lines_in(&text.lines().collect::<Vec<_>>(), path)
}

/// [`item_lines`] on text already split into lines.
pub fn item_lines_in(lines: &[&str], path: &[&str]) -> Vec<usize> {
    let (mut start, mut end, mut depth) = (0, lines.len(), 0);
    for key in path {
        match find_key(lines, start, end, depth, key) {
            Some((line, block_end)) => {
                start = line + 1;
                end = block_end;
                depth = (start..end).find_map(|i| indent(lines[i])).unwrap_or(depth + 2);
            }
            None => return Vec::new(),
        }
    }
    (start..end)
        .filter(|&i| indent(lines[i]) == Some(depth) && lines[i].trim_start().starts_with("- "))
        .map(|i| i + 1)
        .collect()
}

/// The 1-based line and column of `token` as a whole word, searching from `from_line`
/// for at most `span` lines; falls back to the start of `from_line`.
pub fn find_token(text: &str, from_line: usize, span: usize, token: &str) -> (usize, usize) {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-';
    for (offset, line) in text.lines().skip(from_line.saturating_sub(1)).take(span.max(1)).enumerate() {
        let mut search = 0;
        while let Some(pos) = line[search..].find(token) {
            let at = search + pos;
            let before = line[..at].chars().next_back();
            let after = line[at + token.len()..].chars().next();
            if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
                return (from_line + offset, line[..at].chars().count() + 1);
            }
            search = at + token.len().max(1);
        }
    }
    let first = text.lines().nth(from_line.saturating_sub(1)).unwrap_or("");
    (from_line, first.len() - first.trim_start().len() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# header\nvalue_types:\n  # scalars\n  - { id: 1, name: i1 }\n  - { id: 5,\n      name: i32 }\nscheduling:\n  default_latency_class: alu\n  priorities:\n    - { name: a }\n    - { name: b }\n";

    #[test]
    fn finds_items_of_top_level_and_nested_sections() {
        assert_eq!(item_lines(TEXT, &["value_types"]), vec![4, 5]);
        assert_eq!(item_lines(TEXT, &["scheduling", "priorities"]), vec![10, 11]);
        assert_eq!(key_line(TEXT, &["scheduling"]), Some(7));
        assert!(item_lines(TEXT, &["missing"]).is_empty());
    }

    #[test]
    fn top_keys_answer_as_the_path_lookups() {
        let docs = [
            TEXT,
            "name: f\nkind: kernel\nparams:\n  - { name: a, type: i32 }\n  # a comment\n\n  - { name: b,\n      type: f32 }\nreturns: [f32]\nnames: x\nname : again\nbody: |\n",
            "# c\n- name: g\nparams: []\nframe:\n- { name: s, size: 4 }\n- { name: t, size: 8 }\nattributes: { maxntid: [64] }\nbody: |\n",
            "params:\nframe:\n    - { name: s }\n  - { name: t }\n",
            "",
        ];
        for doc in docs {
            let lines: Vec<&str> = doc.lines().collect();
            let keys = TopKeys::new(&lines);
            for key in ["name", "kind", "params", "returns", "frame", "attributes", "body", "names", "nam", "missing", "value_types", "scheduling"] {
                assert_eq!(keys.line(key), key_line_in(&lines, &[key]), "{key} in {doc:?}");
                assert_eq!(keys.items(key), item_lines_in(&lines, &[key]), "{key} in {doc:?}");
            }
        }
    }

    #[test]
    fn finds_whole_word_tokens() {
        assert_eq!(find_token(TEXT, 5, 2, "i32"), (6, 13));
        assert_eq!(find_token("a: i16, i1", 1, 1, "i1"), (1, 9));
    }
}
