//! The PTX tokenizer: source text to tokens with byte offsets.
//!
//! Where it sits: the first step of [`super::parser`]. Hand-written because PTX's
//! lexical rules are small and irregular (dotted directive words with `::` parts,
//! `%`-prefixed names, `0f`/`0d` hexadecimal float literals, C comments) and the
//! simulator reads large files: one pass, no allocation per token but the token vector.

use super::SimError;

/// What a token is; its text is `source[start..end]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// A name: `add`, `%r1`, `$L__BB0_2`, `__local_depot0`, `_`.
    Ident,
    /// A dotted word: `.reg`, `.global`, `.shared::cta`, `.L2::evict_last`.
    Dot,
    /// An integer literal: `42`, `0x7f`, `0b101`, `017`, with an optional `U`.
    Int,
    /// A float literal: `0f3F800000`, `0d3FF0000000000000`, `1.5`, `1e-3`.
    Float,
    /// A string literal, quotes included.
    Str,
    /// One punctuation character: `, ; : { } [ ] ( ) < > + - ! | @ = * / ~ & ^`.
    Punct(u8),
    End,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub start: u32,
    pub end: u32,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%'
}

fn is_ident_continue(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

/// Splits `text` into tokens; the last one is [`TokenKind::End`].
pub fn tokenize(text: &str) -> Result<Vec<Token>, SimError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::with_capacity(text.len() / 4);
    let mut i = 0usize;
    let error = |at: usize, message: String| SimError::parse(at, message);
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let start = i;
            i += 2;
            loop {
                if i + 1 >= bytes.len() {
                    return Err(error(start, "unterminated `/*` comment".into()));
                }
                if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        let kind = if is_ident_start(c) {
            i += 1;
            while i < bytes.len() && is_ident_continue(bytes[i]) {
                i += 1;
            }
            TokenKind::Ident
        } else if c == b'.' && bytes.get(i + 1).is_some_and(|&d| d.is_ascii_alphabetic() || d == b'_') {
            i += 1;
            loop {
                while i < bytes.len() && is_ident_continue(bytes[i]) {
                    i += 1;
                }
                if bytes.get(i) == Some(&b':') && bytes.get(i + 1) == Some(&b':') && bytes.get(i + 2).is_some_and(|&d| is_ident_continue(d)) {
                    i += 2;
                    continue;
                }
                break;
            }
            TokenKind::Dot
        } else if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            lex_number(bytes, &mut i).map_err(|m| error(start, m))?
        } else if c == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\n' {
                    return Err(error(start, "unterminated string literal".into()));
                }
                i += 1;
            }
            if i >= bytes.len() {
                return Err(error(start, "unterminated string literal".into()));
            }
            i += 1;
            TokenKind::Str
        } else if b",;:{}[]()<>+-!|@=*/~&^".contains(&c) {
            i += 1;
            TokenKind::Punct(c)
        } else {
            let found = text[i..].chars().next().unwrap_or('?');
            return Err(error(i, format!("unexpected character `{}`", found.escape_default())));
        };
        tokens.push(Token { kind, start: start as u32, end: i as u32 });
    }
    tokens.push(Token { kind: TokenKind::End, start: bytes.len() as u32, end: bytes.len() as u32 });
    Ok(tokens)
}

fn lex_number(bytes: &[u8], i: &mut usize) -> Result<TokenKind, String> {
    let start = *i;
    let at = |k: usize| bytes.get(k).copied().unwrap_or(0);
    if at(start) == b'0' && matches!(at(start + 1), b'f' | b'F' | b'd' | b'D') && at(start + 2).is_ascii_hexdigit() {
        let digits = if matches!(at(start + 1), b'f' | b'F') { 8 } else { 16 };
        *i = start + 2;
        while at(*i).is_ascii_hexdigit() {
            *i += 1;
        }
        if *i - start - 2 != digits {
            return Err(format!("a `0{}` float literal has exactly {digits} hexadecimal digits", at(start + 1) as char));
        }
        return Ok(TokenKind::Float);
    }
    if at(start) == b'0' && matches!(at(start + 1), b'x' | b'X' | b'b' | b'B') {
        *i = start + 2;
        while at(*i).is_ascii_hexdigit() {
            *i += 1;
        }
        if at(*i) == b'U' {
            *i += 1;
        }
        return Ok(TokenKind::Int);
    }
    let mut float = false;
    while at(*i).is_ascii_digit() {
        *i += 1;
    }
    if at(*i) == b'.' && at(*i + 1).is_ascii_digit() || at(*i) == b'.' && !is_ident_continue(at(*i + 1)) {
        float = true;
        *i += 1;
        while at(*i).is_ascii_digit() {
            *i += 1;
        }
    }
    if matches!(at(*i), b'e' | b'E') && (at(*i + 1).is_ascii_digit() || matches!(at(*i + 1), b'+' | b'-') && at(*i + 2).is_ascii_digit()) {
        float = true;
        *i += 2;
        while at(*i).is_ascii_digit() {
            *i += 1;
        }
    }
    if !float && at(*i) == b'U' {
        *i += 1;
    }
    if is_ident_continue(at(*i)) {
        return Err(format!("malformed number `{}`", String::from_utf8_lossy(&bytes[start..=*i])));
    }
    Ok(if float { TokenKind::Float } else { TokenKind::Int })
}

/// Byte offsets of line starts, for turning an offset into a line and column.
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i as u32 + 1));
        LineIndex { starts }
    }

    /// 1-based line and column (in characters) of byte `offset`.
    pub fn position(&self, text: &str, offset: u32) -> (u32, u32) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1] as usize;
        let end = (offset as usize).min(text.len());
        let column = text.get(start..end).map_or(end - start, |s| s.chars().count()) + 1;
        (line as u32, column as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(TokenKind, &str)> {
        tokenize(text).unwrap().iter().map(|t| (t.kind, &text[t.start as usize..t.end as usize])).collect()
    }

    #[test]
    fn instruction_tokens() {
        let t = kinds("@!%p1 ld.global.nc.v2.f32 {%f1, %f2}, [%rd1+-8]; // comment");
        let texts: Vec<&str> = t.iter().map(|(_, s)| *s).collect();
        assert_eq!(texts, ["@", "!", "%p1", "ld", ".global", ".nc", ".v2", ".f32", "{", "%f1", ",", "%f2", "}", ",", "[", "%rd1", "+", "-", "8", "]", ";", ""]);
    }

    #[test]
    fn literals_and_scoped_words() {
        let t = kinds("mov.f32 %f1, 0f3F800000; .shared::cta 0d3FF0000000000000 1.5e-3 0x7fU 017 $L__BB0_2:");
        assert_eq!(t[4], (TokenKind::Float, "0f3F800000"));
        assert_eq!(t[6], (TokenKind::Dot, ".shared::cta"));
        assert_eq!(t[7], (TokenKind::Float, "0d3FF0000000000000"));
        assert_eq!(t[8], (TokenKind::Float, "1.5e-3"));
        assert_eq!(t[9], (TokenKind::Int, "0x7fU"));
        assert_eq!(t[10], (TokenKind::Int, "017"));
        assert_eq!(t[11], (TokenKind::Ident, "$L__BB0_2"));
    }

    #[test]
    fn errors_are_located() {
        let e = tokenize("add.s32 %r1, %r2, 0f3F80;").unwrap_err();
        assert!(e.to_string().contains("8 hexadecimal digits"), "{e}");
        assert!(tokenize("mov.u32 %r1, 1; /* open").is_err());
        assert!(tokenize("mov.u32 %r1, #1;").is_err());
    }

    #[test]
    fn line_index_counts_characters() {
        let text = "a\nbé c\n";
        let index = LineIndex::new(text);
        assert_eq!(index.position(text, 0), (1, 1));
        assert_eq!(index.position(text, 2), (2, 1));
        assert_eq!(index.position(text, 6), (2, 4), "é is one character of two bytes");
    }
}
