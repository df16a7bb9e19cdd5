//! The syntax of a function body, line by line, before any name is resolved: what the
//! grammar in `body.pest` (docs/mir-spec.md §3) derives, with every token's byte offset
//! in the body so that diagnostics keep their file positions.
//!
//! Two producers build the same items. [`lex_body`] is the hot path: a hand-written
//! scanner over each line that accepts only what it is sure the grammar accepts and
//! gives up (returns `None`) on anything else. [`pest_items`] runs the pest grammar, the
//! specification; the parser uses it whenever the scanner gives up, so every syntax
//! error, and its wording, comes from the grammar. A property test
//! (`tests/body_lexer.rs`) checks that whenever the scanner answers, pest gives the same
//! items. On a 100k-instruction body pest spent about a third of a whole compile
//! growing its token queue (issue 15's measurements); the scanner makes parsing a small
//! share.

use pest::iterators::Pair;
use pest::Parser as _;
use pest_derive::Parser;

#[derive(Parser)]
#[grammar = "mir/body.pest"]
pub(crate) struct BodyParser;

/// A token's text and the byte offset of its first character in the body.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tok<'a> {
    pub text: &'a str,
    pub at: usize,
}

/// One item of the body: a block label or an instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Item<'a> {
    /// `bb.N[.name]:`; `at` is where `bb.` starts.
    Label { at: usize, number: Tok<'a>, name: Option<Tok<'a>> },
    Inst(InstSyntax<'a>),
}

/// `defs = OPCODE.flags operands`; `at` is the instruction's first character.
#[derive(Clone, Debug, PartialEq)]
pub struct InstSyntax<'a> {
    pub at: usize,
    pub defs: Vec<DefSyntax<'a>>,
    /// The opcode's name (its offset is the opcode's position).
    pub opcode: Tok<'a>,
    pub flags: Vec<Tok<'a>>,
    pub operands: Vec<OperandSyntax<'a>>,
}

/// `%reg:type`; `reg` keeps its `%` (so `reg.at` is where the definition starts).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct DefSyntax<'a> {
    pub reg: Tok<'a>,
    pub ty: Tok<'a>,
}

/// One operand; each token is the operand's whole text (`%bb.3`, `%v`, `@f`, `-0x1f`),
/// except `Mask` and `Align`, whose first token is the keyword.
#[derive(Clone, Debug, PartialEq)]
pub enum OperandSyntax<'a> {
    BlockRef(Tok<'a>),
    Vreg(Tok<'a>),
    Symbol(Tok<'a>),
    Mask(Tok<'a>, Vec<Tok<'a>>),
    Align(Tok<'a>, Tok<'a>),
    Hex(Tok<'a>),
    Integer(Tok<'a>),
    Float(Tok<'a>),
    Word(Tok<'a>),
}

impl OperandSyntax<'_> {
    /// Where the operand starts.
    pub fn at(&self) -> usize {
        match self {
            OperandSyntax::BlockRef(t)
            | OperandSyntax::Vreg(t)
            | OperandSyntax::Symbol(t)
            | OperandSyntax::Mask(t, _)
            | OperandSyntax::Align(t, _)
            | OperandSyntax::Hex(t)
            | OperandSyntax::Integer(t)
            | OperandSyntax::Float(t)
            | OperandSyntax::Word(t) => t.at,
        }
    }
}

/// The lines of `text` exactly as [`str::lines`] gives them (split at `\n`, a `\r` before
/// it dropped, no empty last line after a final line break), found with a SIMD byte
/// search: the front end splits whole files into lines, and `str::lines` cost about
/// twenty instructions a line more.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut breaks = memchr::memchr_iter(b'\n', text.as_bytes());
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let end = breaks.next().unwrap_or(text.len());
        let line = &text[start..end];
        start = end + 1;
        // `\r\n` ends a line; a `\r` alone at the very end of the text does not.
        Some(if end < text.len() { line.strip_suffix('\r').unwrap_or(line) } else { line })
    })
}

/// The body's items through the pest grammar (the specification).
pub fn pest_items(body: &str) -> Result<Vec<Item<'_>>, Box<pest::error::Error<Rule>>> {
    let mut pairs = BodyParser::parse(Rule::body, body).map_err(Box::new)?;
    let root = pairs.next().expect("grammar yields a body");
    let mut items = Vec::new();
    for pair in root.into_inner() {
        match pair.as_rule() {
            Rule::block_label => {
                let at = pair.as_span().start();
                let (mut number, mut name) = (None, None);
                for p in pair.into_inner() {
                    match p.as_rule() {
                        Rule::block_number => number = Some(tok(&p)),
                        Rule::block_name => name = Some(tok(&p)),
                        _ => {}
                    }
                }
                items.push(Item::Label { at, number: number.expect("grammar: block number"), name });
            }
            Rule::instruction => items.push(Item::Inst(pest_instruction(pair))),
            _ => {}
        }
    }
    Ok(items)
}

fn tok<'a>(p: &Pair<'a, Rule>) -> Tok<'a> {
    Tok { text: p.as_str(), at: p.as_span().start() }
}

fn pest_instruction(pair: Pair<'_, Rule>) -> InstSyntax<'_> {
    let mut inst = InstSyntax { at: pair.as_span().start(), defs: Vec::new(), opcode: Tok { text: "", at: 0 }, flags: Default::default(), operands: Vec::new() };
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::defs => {
                for def in p.into_inner() {
                    let mut inner = def.into_inner();
                    let reg = tok(&inner.next().expect("grammar: vreg"));
                    let ty = tok(&inner.next().expect("grammar: type"));
                    inst.defs.push(DefSyntax { reg, ty });
                }
            }
            Rule::opcode => {
                let mut inner = p.into_inner();
                inst.opcode = tok(&inner.next().expect("grammar: opcode name"));
                inst.flags = inner.map(|f| tok(&f)).collect();
            }
            Rule::operands => {
                for o in p.into_inner() {
                    let t = tok(&o);
                    inst.operands.push(match o.as_rule() {
                        Rule::block_ref => OperandSyntax::BlockRef(t),
                        Rule::vreg => OperandSyntax::Vreg(t),
                        Rule::symbol => OperandSyntax::Symbol(t),
                        Rule::mask => OperandSyntax::Mask(Tok { text: "mask", at: t.at }, o.into_inner().map(|l| tok(&l)).collect()),
                        Rule::align => OperandSyntax::Align(Tok { text: "align", at: t.at }, tok(&o.into_inner().next().expect("grammar: align value"))),
                        Rule::hex => OperandSyntax::Hex(t),
                        Rule::integer => OperandSyntax::Integer(t),
                        Rule::float => OperandSyntax::Float(t),
                        Rule::word => OperandSyntax::Word(t),
                        other => unreachable!("operand rule {other:?}"),
                    });
                }
            }
            _ => {}
        }
    }
    inst
}

/// The body's items by the hand-written scanner, or `None` where it is not sure the
/// grammar would derive exactly these items (including every syntax error): the caller
/// then asks [`pest_items`].
pub fn lex_body(body: &str) -> Option<Vec<Item<'_>>> {
    let mut items = Vec::new();
    for line in body_lines(body)? {
        items.extend(line?);
    }
    Some(items)
}

/// The scanner one line at a time, so that a reader can take each item as it comes
/// instead of holding every item of a large body at once: per line, `Some(item)`, or
/// `None` for a blank or comment line; `None` from the iterator's item when the scanner
/// gives up on that line. `None` for the whole body when it has a lone `\r`, which
/// pest's NEWLINE takes. The items so far are those [`lex_body`] would give.
pub fn body_lines(body: &str) -> Option<BodyLines<'_>> {
    if body.contains('\r') {
        return None;
    }
    Some(BodyLines { body, start: 0, line: (0, 0, 0), spare: Spare::default() })
}

/// [`body_lines`]' iterator. A reader done with an instruction hands it back with
/// [`BodyLines::recycle`], and the next lines reuse its vectors: a line's three vectors
/// were a fifth of reading it.
pub struct BodyLines<'a> {
    body: &'a str,
    /// Where the next line starts; past the end when every line has been read.
    start: usize,
    /// The line read last: its number (from 1), start and end (its line break or the
    /// body's end).
    line: (usize, usize, usize),
    spare: Spare<'a>,
}

#[derive(Default)]
struct Spare<'a> {
    defs: Vec<DefSyntax<'a>>,
    flags: Vec<Tok<'a>>,
    operands: Vec<OperandSyntax<'a>>,
}

impl<'a> BodyLines<'a> {
    /// Keeps `inst`'s vectors for the next lines.
    pub fn recycle(&mut self, inst: InstSyntax<'a>) {
        let InstSyntax { mut defs, mut flags, mut operands, .. } = inst;
        defs.clear();
        flags.clear();
        operands.clear();
        self.spare = Spare { defs, flags, operands };
    }

    /// The line read last: its number (from 1), start and end offsets in the body.
    pub fn line(&self) -> (usize, usize, usize) {
        self.line
    }
}

impl<'a> Iterator for BodyLines<'a> {
    type Item = Option<Option<Item<'a>>>;

    fn next(&mut self) -> Option<Self::Item> {
        let body = self.body;
        if self.start > body.len() {
            return None;
        }
        let len = memchr::memchr(b'\n', &body.as_bytes()[self.start..]).unwrap_or(body.len() - self.start);
        let mut s = Scanner { b: body.as_bytes(), text: body, pos: self.start, end: self.start + len };
        self.line = (self.line.0 + 1, self.start, self.start + len);
        self.start += len + 1;
        s.skip();
        if s.pos == s.end {
            return Some(Some(None));
        }
        let item = s.item(&mut self.spare);
        let Some(item) = item else { return Some(None) };
        s.skip();
        Some((s.pos == s.end).then_some(Some(item)))
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    text: &'a str,
    pos: usize,
    /// End of the current line (exclusive).
    end: usize,
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        (self.pos < self.end).then(|| self.b[self.pos])
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        (self.pos + k < self.end).then(|| self.b[self.pos + k])
    }

    /// Spaces, tabs, and a `;` comment to the end of the line (the grammar's implicit
    /// WHITESPACE and COMMENT).
    fn skip(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' => self.pos += 1,
                b';' => self.pos = self.end,
                _ => break,
            }
        }
    }

    /// Spaces and tabs only.
    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// The longest run from `from` of bytes satisfying `class` (at least `min`).
    fn run(&mut self, from: usize, min: usize, class: impl Fn(u8) -> bool) -> Option<Tok<'a>> {
        let mut p = self.pos;
        while p < self.end && class(self.b[p]) {
            p += 1;
        }
        if p - self.pos < min {
            return None;
        }
        self.pos = p;
        Some(Tok { text: &self.text[from..p], at: from })
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// After an operand the grammar allows only blanks, a comment, `,` or the line end.
    fn at_delimiter(&self) -> bool {
        matches!(self.peek(), None | Some(b' ' | b'\t' | b',' | b';'))
    }

    /// The line's item, built in `spare`'s vectors (which it takes).
    fn item(&mut self, spare: &mut Spare<'a>) -> Option<Item<'a>> {
        let at = self.pos;
        if self.text[self.pos..self.end].starts_with("bb.") {
            self.pos += 3;
            let number = self.run(self.pos, 1, |c| c.is_ascii_digit())?;
            let name = if self.eat(b'.') { Some(self.run(self.pos, 1, |c| is_word(c) || c == b'-' || c == b'.')?) } else { None };
            self.skip_blanks();
            return self.eat(b':').then_some(Item::Label { at, number, name });
        }
        let mut defs = std::mem::take(&mut spare.defs);
        if self.peek() == Some(b'%') {
            loop {
                let reg = self.vreg()?;
                if !self.eat(b':') || !self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                    return None;
                }
                let ty = self.run(self.pos, 1, |c| c.is_ascii_alphanumeric())?;
                defs.push(DefSyntax { reg, ty });
                self.skip();
                if !self.eat(b',') {
                    break;
                }
                self.skip();
            }
            if !self.eat(b'=') {
                return None;
            }
            self.skip();
        }
        if !self.peek().is_some_and(|c| c.is_ascii_uppercase()) {
            return None;
        }
        let opcode = self.run(self.pos, 1, is_word)?;
        let mut flags = std::mem::take(&mut spare.flags);
        while self.eat(b'.') {
            flags.push(self.run(self.pos, 1, is_word)?);
        }
        self.skip();
        let mut operands = std::mem::take(&mut spare.operands);
        if self.pos < self.end {
            loop {
                operands.push(self.operand()?);
                if !self.at_delimiter() {
                    return None;
                }
                self.skip();
                if !self.eat(b',') {
                    break;
                }
                self.skip();
            }
        }
        Some(Item::Inst(InstSyntax { at, defs, opcode, flags, operands }))
    }

    fn vreg(&mut self) -> Option<Tok<'a>> {
        let at = self.pos;
        if !self.eat(b'%') {
            return None;
        }
        self.run(at, 1, |c| is_word(c) || c == b'.')
    }

    fn operand(&mut self) -> Option<OperandSyntax<'a>> {
        let at = self.pos;
        match self.peek()? {
            b'%' => {
                if self.text[at..self.end].starts_with("%bb.") {
                    let mut p = at + 4;
                    while p < self.end && self.b[p].is_ascii_digit() {
                        p += 1;
                    }
                    let follows_name = p < self.end && (is_word(self.b[p]) || self.b[p] == b'.');
                    if p > at + 4 && !follows_name {
                        self.pos = p;
                        return Some(OperandSyntax::BlockRef(Tok { text: &self.text[at..p], at }));
                    }
                }
                self.vreg().map(OperandSyntax::Vreg)
            }
            b'@' => {
                self.pos += 1;
                self.run(at, 1, |c| is_word(c) || c == b'.' || c == b'$').map(OperandSyntax::Symbol)
            }
            b'-' if self.peek_at(1).is_some_and(|c| c.is_ascii_lowercase()) => {
                self.pos += 1;
                self.word(at)
            }
            b'-' | b'0'..=b'9' => self.number(at),
            c if c.is_ascii_lowercase() => self.word(at),
            _ => None,
        }
    }

    /// A lower-case word: `mask(...)`, `align N`, or a condition code / `inf` / `nan`.
    fn word(&mut self, at: usize) -> Option<OperandSyntax<'a>> {
        let w = self.run(at, 1, is_word)?;
        // `mask`/`align` as keywords: the grammar also reads `align4` as `align 4` and
        // falls back to a word in subtler ways; leave every other spelling to pest.
        match w.text {
            "mask" => {
                let keyword = Tok { text: "mask", at };
                self.skip_blanks();
                if !self.eat(b'(') {
                    return None;
                }
                let mut lanes = Vec::new();
                loop {
                    self.skip_blanks();
                    let lane = self.pos;
                    self.eat(b'-');
                    lanes.push(self.run(lane, 1, |c| c.is_ascii_digit())?);
                    self.skip_blanks();
                    if self.eat(b')') {
                        return Some(OperandSyntax::Mask(keyword, lanes));
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            "align" => {
                let keyword = Tok { text: "align", at };
                self.skip_blanks();
                let value = self.pos;
                if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return None;
                }
                Some(OperandSyntax::Align(keyword, self.run(value, 1, |c| c.is_ascii_digit())?))
            }
            t if t.starts_with("mask") || t.starts_with("align") || t.starts_with("-mask") || t.starts_with("-align") => None,
            _ => Some(OperandSyntax::Word(w)),
        }
    }

    /// One or more decimal digits; whether there were any.
    fn digits(&mut self) -> bool {
        let from = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos > from
    }

    /// `hex | float | integer`, in the grammar's order.
    fn number(&mut self, at: usize) -> Option<OperandSyntax<'a>> {
        self.eat(b'-');
        if self.text[self.pos..self.end].starts_with("0x") {
            self.pos += 2;
            return self.run(at, 1, |c| c.is_ascii_hexdigit()).map(OperandSyntax::Hex);
        }
        // DIGIT+ ("." DIGIT+ exponent? | exponent)?, exponent = (e|E) (+|-)? DIGIT+
        if !self.digits() {
            return None;
        }
        let mut float = false;
        if self.eat(b'.') {
            if !self.digits() {
                return None;
            }
            float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !self.digits() {
                return None;
            }
            float = true;
        }
        let t = Tok { text: &self.text[at..self.pos], at };
        Some(if float { OperandSyntax::Float(t) } else { OperandSyntax::Integer(t) })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// [`super::lines`] is `str::lines`, line breaks and carriage returns anywhere.
        #[test]
        fn lines_are_str_lines(text in "[a\\r\\n ]{0,12}") {
            prop_assert_eq!(super::lines(&text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
        }
    }

    #[test]
    fn lines_edge_cases() {
        for text in ["", "\n", "\r", "\r\n", "a\r", "a\r\n", "a\n\n", "\n\r\n\r", "x\ry\nz"] {
            assert_eq!(super::lines(text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>(), "{text:?}");
        }
    }
}
