//! The PTX parser: tokens to a syntax tree ([`Module`]) that keeps every name and
//! every source position, nothing interpreted yet.
//!
//! Where it sits: after [`super::lexer`], before [`super::decode`], which resolves
//! names, checks instruction forms against the SM and turns the tree into the
//! executor's compact form. The grammar is the PTX ISA's (chapters "Syntax", "State
//! Spaces, Types, and Variables", "Directives"), limited to what a kernel needs: no
//! debugging sections (`.file`/`.loc`/`.section` are skipped), no textures or surfaces.

use super::lexer::{Token, TokenKind};
use super::SimError;

#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub version: Option<((u32, u32), u32)>,
    /// The `.target` words (`sm_80`, `texmode_independent`, ...) and where.
    pub target: Option<(Vec<String>, u32)>,
    pub address_size: u32,
    pub vars: Vec<VarDecl>,
    pub functions: Vec<FunctionDecl>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Linkage {
    None,
    Visible,
    Extern,
    Weak,
    Common,
}

/// A variable or register declaration: `.global .align 4 .u32 table[4] = {1, 2, 3, 4};`,
/// `.reg .b32 %r<7>;`, `.param .u64 .ptr .global .align 1 k_param_0`.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// `reg`, `global`, `shared`, `const`, `local`, `param`.
    pub space: String,
    pub linkage: Linkage,
    pub align: Option<u64>,
    /// The element type word without its dot: `b32`, `f32`, `pred`.
    pub ty: String,
    /// 1, 2, 4 or 8 for `.vN` declarations.
    pub vector: u32,
    pub names: Vec<DeclName>,
    /// `.ptr .global .align 8` on a kernel parameter: the space and alignment.
    pub pointee: Option<(String, u64)>,
    pub at: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DeclName {
    pub name: String,
    /// `%r<7>`: seven registers `%r0` ... `%r6`.
    pub range: Option<u32>,
    /// Array dimensions; `None` for `[]` (size from the initializer, or unsized extern).
    pub dims: Vec<Option<u64>>,
    pub init: Option<Init>,
    pub at: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Value(Operand),
    List(Vec<Init>, u32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDecl {
    pub name: String,
    pub is_entry: bool,
    pub linkage: Linkage,
    pub returns: Vec<VarDecl>,
    pub params: Vec<VarDecl>,
    /// Performance directives: `maxntid` with its numbers, `noreturn`, ...
    pub attributes: Vec<(String, Vec<u64>, u32)>,
    /// `None` for a declaration (`.extern .func f (...);`).
    pub body: Option<Vec<Stmt>>,
    pub at: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Label(String, u32),
    Inst(Inst),
    Decl(VarDecl),
    Scope(Vec<Stmt>, u32),
    /// `name: .callprototype ...;` (its shape is not needed to run indirect calls).
    Prototype(String, u32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// `@%p` or `@!%p`: the predicate register and whether it is negated.
    pub guard: Option<(String, bool, u32)>,
    pub opcode: String,
    /// The dotted words after the opcode, without their dots: `global`, `v2`, `f32`.
    pub mods: Vec<(String, u32)>,
    pub operands: Vec<Operand>,
    pub at: u32,
}

/// A literal as written; its bits depend on the instruction type using it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Literal {
    Int(i128),
    /// `0f...`: single-precision bits.
    F32(u32),
    /// `0d...`: double-precision bits.
    F64(u64),
    /// A decimal float (`1.5`), as a double.
    Decimal(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum AddrBase {
    None,
    Reg(String),
    Sym(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register or special register (`%r1`, `%tid.x`); `negated` for `!%p`.
    Reg { name: String, negated: bool, at: u32 },
    Imm { value: Literal, at: u32 },
    /// A symbol as a value, plus a byte offset: `mov.u64 %rd1, table`, `generic(x)+4`.
    Sym { name: String, offset: i64, generic: bool, at: u32 },
    /// `[base+offset]`.
    Addr { base: AddrBase, offset: i64, at: u32 },
    /// `{a, b, _}`.
    Vector(Vec<Operand>, u32),
    /// `(a, b)`: call arguments and results.
    List(Vec<Operand>, u32),
    /// `p|q`: two destinations.
    Pair(Box<Operand>, Box<Operand>, u32),
    /// `_`.
    Sink(u32),
}

impl Operand {
    pub fn at(&self) -> u32 {
        match self {
            Operand::Reg { at, .. } | Operand::Imm { at, .. } | Operand::Sym { at, .. } | Operand::Addr { at, .. } | Operand::Sink(at) => *at,
            Operand::Vector(_, at) | Operand::List(_, at) | Operand::Pair(_, _, at) => *at,
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    tokens: &'a [Token],
    pos: usize,
    /// Nesting of scopes, initializers and expressions, bounded so that hostile input
    /// cannot overflow the stack.
    depth: u32,
}

/// The deepest nesting the parser accepts.
const MAX_DEPTH: u32 = 200;

type PResult<T> = Result<T, SimError>;

/// Parses a whole PTX module.
pub fn parse(text: &str, tokens: &[Token]) -> PResult<Module> {
    let mut p = Parser { text, tokens, pos: 0, depth: 0 };
    p.module()
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Token {
        self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, k: usize) -> Token {
        self.tokens[(self.pos + k).min(self.tokens.len() - 1)]
    }

    fn text_of(&self, t: Token) -> &'a str {
        &self.text[t.start as usize..t.end as usize]
    }

    fn bump(&mut self) -> Token {
        let t = self.peek();
        if t.kind != TokenKind::End {
            self.pos += 1;
        }
        t
    }

    fn describe(&self, t: Token) -> String {
        match t.kind {
            TokenKind::End => "the end of the file".into(),
            _ => format!("`{}`", self.text_of(t)),
        }
    }

    fn expected<T>(&self, what: &str) -> PResult<T> {
        let t = self.peek();
        Err(SimError::parse(t.start as usize, format!("expected {what}, found {}", self.describe(t))))
    }

    fn is_punct(&self, c: u8) -> bool {
        self.peek().kind == TokenKind::Punct(c)
    }

    fn eat_punct(&mut self, c: u8) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: u8) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.expected(&format!("`{}`", c as char))
        }
    }

    fn is_dot(&self, word: &str) -> bool {
        let t = self.peek();
        t.kind == TokenKind::Dot && &self.text_of(t)[1..] == word
    }

    fn ident(&mut self, what: &str) -> PResult<(String, u32)> {
        let t = self.peek();
        if t.kind == TokenKind::Ident {
            self.pos += 1;
            Ok((self.text_of(t).to_string(), t.start))
        } else {
            self.expected(what)
        }
    }

    fn integer(&mut self, what: &str) -> PResult<u64> {
        let t = self.peek();
        if t.kind == TokenKind::Int {
            self.pos += 1;
            match parse_int(self.text_of(t)) {
                Some(v) if (0..=i128::from(u64::MAX)).contains(&v) => Ok(v as u64),
                _ => Err(SimError::parse(t.start as usize, format!("integer `{}` out of range", self.text_of(t)))),
            }
        } else {
            self.expected(what)
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let t = self.peek();
            return Err(SimError::parse(t.start as usize, format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn skip_to_semicolon(&mut self) {
        while !matches!(self.peek().kind, TokenKind::Punct(b';') | TokenKind::End) {
            self.pos += 1;
        }
        self.eat_punct(b';');
    }

    fn module(&mut self) -> PResult<Module> {
        let mut module = Module { version: None, target: None, address_size: 32, vars: Vec::new(), functions: Vec::new() };
        loop {
            let t = self.peek();
            match t.kind {
                TokenKind::End => break,
                TokenKind::Dot => {}
                _ => return self.expected("a directive (`.version`, `.target`, `.entry`, `.func`, a variable, ...)"),
            }
            let word = &self.text_of(t)[1..];
            match word {
                "version" => {
                    self.pos += 1;
                    let v = self.peek();
                    let text = self.text_of(v);
                    let parsed = text.split_once('.').and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                    match (v.kind, parsed) {
                        (TokenKind::Float, Some(version)) => {
                            self.pos += 1;
                            module.version = Some((version, t.start));
                        }
                        _ => return self.expected("a PTX ISA version such as `8.0`"),
                    }
                }
                "target" => {
                    self.pos += 1;
                    let mut words = vec![self.ident("a target such as `sm_80`")?.0];
                    while self.eat_punct(b',') {
                        words.push(self.ident("a target option")?.0);
                    }
                    module.target = Some((words, t.start));
                }
                "address_size" => {
                    self.pos += 1;
                    let size = self.integer("32 or 64")?;
                    if size != 32 && size != 64 {
                        return Err(SimError::parse(self.tokens[self.pos - 1].start as usize, format!("`.address_size` is 32 or 64, found {size}")));
                    }
                    module.address_size = size as u32;
                }
                "file" | "section" | "loc" => self.skip_directive(),
                "pragma" => self.skip_to_semicolon(),
                _ => {
                    let linkage = self.linkage();
                    if self.is_dot("entry") || self.is_dot("func") {
                        module.functions.push(self.function(linkage)?);
                    } else if self.is_dot("global") || self.is_dot("shared") || self.is_dot("const") {
                        let decl = self.declaration(linkage)?;
                        self.expect_punct(b';')?;
                        module.vars.push(decl);
                    } else {
                        return self.expected("`.entry`, `.func` or a `.global`, `.shared` or `.const` variable");
                    }
                }
            }
        }
        Ok(module)
    }

    fn skip_directive(&mut self) {
        // `.file 1 "a.cu"`, `.loc 1 2 3`, `.section .debug_info { ... }`: the directive's
        // words run to the end of its line, or to the brace that closes its block.
        self.pos += 1;
        while self.peek().kind != TokenKind::End && !self.line_break_before() {
            if self.is_punct(b'{') {
                let mut depth = 0usize;
                loop {
                    match self.bump().kind {
                        TokenKind::Punct(b'{') => depth += 1,
                        TokenKind::Punct(b'}') => {
                            depth -= 1;
                            if depth == 0 {
                                return;
                            }
                        }
                        TokenKind::End => return,
                        _ => {}
                    }
                }
            }
            if self.eat_punct(b';') {
                return;
            }
            self.pos += 1;
        }
    }

    /// Whether a newline separates the current token from the previous one.
    fn line_break_before(&self) -> bool {
        if self.pos == 0 {
            return true;
        }
        let previous = self.tokens[self.pos - 1];
        self.text[previous.end as usize..self.peek().start as usize].contains('\n')
    }

    fn linkage(&mut self) -> Linkage {
        let mut linkage = Linkage::None;
        loop {
            let l = if self.is_dot("visible") {
                Linkage::Visible
            } else if self.is_dot("extern") {
                Linkage::Extern
            } else if self.is_dot("weak") {
                Linkage::Weak
            } else if self.is_dot("common") {
                Linkage::Common
            } else {
                return linkage;
            };
            self.pos += 1;
            linkage = l;
        }
    }

    /// `.space [attributes] .type name[...] [= init], name2 ...` (no trailing `;`).
    fn declaration(&mut self, linkage: Linkage) -> PResult<VarDecl> {
        self.declaration_of(linkage, true)
    }

    /// A declaration; `several` allows a comma-separated list of names (not in
    /// parameter lists, where the comma separates parameters).
    fn declaration_of(&mut self, linkage: Linkage, several: bool) -> PResult<VarDecl> {
        let start = self.bump();
        let space = self.text_of(start)[1..].split("::").next().unwrap_or("").to_string();
        let mut decl = VarDecl { space, linkage, align: None, ty: String::new(), vector: 1, names: Vec::new(), pointee: None, at: start.start };
        let mut after_ptr = false;
        while self.peek().kind == TokenKind::Dot {
            let t = self.bump();
            let word = &self.text_of(t)[1..];
            match word {
                "align" => {
                    let a = self.integer("an alignment")?;
                    if !a.is_power_of_two() {
                        return Err(SimError::parse(t.start as usize, format!("alignment {a} is not a power of two")));
                    }
                    if after_ptr {
                        if let Some(p) = decl.pointee.as_mut() {
                            p.1 = a;
                        }
                    } else {
                        decl.align = Some(a);
                    }
                }
                "v2" | "v4" | "v8" => decl.vector = word[1..].parse().unwrap_or(1),
                "ptr" => {
                    after_ptr = true;
                    decl.pointee = Some(("generic".into(), 1));
                }
                "global" | "shared" | "const" | "local" if after_ptr => {
                    if let Some(p) = decl.pointee.as_mut() {
                        p.0 = word.to_string();
                    }
                }
                _ if decl.ty.is_empty() => decl.ty = word.to_string(),
                _ => return Err(SimError::parse(t.start as usize, format!("unexpected `{}` in a declaration of type .{}", self.text_of(t), decl.ty))),
            }
        }
        if decl.ty.is_empty() {
            return self.expected("a type such as `.b32`");
        }
        loop {
            let (name, at) = self.ident("a name")?;
            let mut item = DeclName { name, range: None, dims: Vec::new(), init: None, at };
            if self.eat_punct(b'<') {
                let n = self.integer("a register count")?;
                self.expect_punct(b'>')?;
                item.range = Some(u32::try_from(n).map_err(|_| SimError::parse(at as usize, "too many registers".into()))?);
            }
            while self.eat_punct(b'[') {
                if self.eat_punct(b']') {
                    item.dims.push(None);
                } else {
                    item.dims.push(Some(self.integer("an array size")?));
                    self.expect_punct(b']')?;
                }
            }
            if self.eat_punct(b'=') {
                item.init = Some(self.initializer()?);
            }
            decl.names.push(item);
            if !several || !self.eat_punct(b',') {
                break;
            }
        }
        Ok(decl)
    }

    fn initializer(&mut self) -> PResult<Init> {
        let t = self.peek();
        if self.eat_punct(b'{') {
            self.enter()?;
            let mut items = Vec::new();
            if !self.eat_punct(b'}') {
                loop {
                    items.push(self.initializer()?);
                    if self.eat_punct(b'}') {
                        break;
                    }
                    self.expect_punct(b',')?;
                }
            }
            self.depth -= 1;
            return Ok(Init::List(items, t.start));
        }
        Ok(Init::Value(self.operand()?))
    }

    fn function(&mut self, linkage: Linkage) -> PResult<FunctionDecl> {
        let kw = self.bump();
        let is_entry = &self.text_of(kw)[1..] == "entry";
        let mut returns = Vec::new();
        if !is_entry && self.is_punct(b'(') {
            returns = self.param_list()?;
        }
        let (name, _) = self.ident("a function name")?;
        let mut params = Vec::new();
        if self.is_punct(b'(') {
            params = self.param_list()?;
        }
        let mut attributes = Vec::new();
        while self.peek().kind == TokenKind::Dot {
            let t = self.bump();
            let word = self.text_of(t)[1..].to_string();
            if word == "pragma" {
                self.skip_to_semicolon();
                continue;
            }
            let mut values = Vec::new();
            if self.peek().kind == TokenKind::Int {
                values.push(self.integer("a number")?);
                while self.eat_punct(b',') {
                    values.push(self.integer("a number")?);
                }
            }
            attributes.push((word, values, t.start));
        }
        let body = if self.eat_punct(b';') {
            None
        } else if self.is_punct(b'{') {
            let open = self.bump();
            Some(self.statements(open.start)?)
        } else {
            return self.expected("`{` (a function body) or `;`");
        };
        Ok(FunctionDecl { name, is_entry, linkage, returns, params, attributes, body, at: kw.start })
    }

    fn param_list(&mut self) -> PResult<Vec<VarDecl>> {
        self.expect_punct(b'(')?;
        let mut params = Vec::new();
        if self.eat_punct(b')') {
            return Ok(params);
        }
        loop {
            if !(self.is_dot("param") || self.is_dot("reg")) {
                return self.expected("a parameter (`.param .b32 name` or `.reg .b32 name`)");
            }
            let decl = self.declaration_of(Linkage::None, false)?;
            params.push(decl);
            if self.eat_punct(b')') {
                return Ok(params);
            }
            self.expect_punct(b',')?;
        }
    }

    /// Statements up to the `}` closing a scope opened at `open`.
    fn statements(&mut self, open: u32) -> PResult<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            let t = self.peek();
            match t.kind {
                TokenKind::End => return Err(SimError::parse(open as usize, "this `{` is never closed".into())),
                TokenKind::Punct(b'}') => {
                    self.pos += 1;
                    return Ok(out);
                }
                TokenKind::Punct(b'{') => {
                    self.pos += 1;
                    self.enter()?;
                    out.push(Stmt::Scope(self.statements(t.start)?, t.start));
                    self.depth -= 1;
                }
                TokenKind::Punct(b';') => self.pos += 1,
                TokenKind::Dot => {
                    let word = &self.text_of(t)[1..];
                    match word.split("::").next().unwrap_or("") {
                        "reg" | "local" | "shared" | "param" | "const" | "global" => {
                            let decl = self.declaration(Linkage::None)?;
                            self.expect_punct(b';')?;
                            out.push(Stmt::Decl(decl));
                        }
                        "pragma" => self.skip_to_semicolon(),
                        "loc" | "file" | "section" => self.skip_directive(),
                        "visible" | "extern" | "weak" => {
                            let linkage = self.linkage();
                            let decl = self.declaration(linkage)?;
                            self.expect_punct(b';')?;
                            out.push(Stmt::Decl(decl));
                        }
                        _ => return Err(SimError::parse(t.start as usize, format!("unexpected directive `{}` in a function body", self.text_of(t)))),
                    }
                }
                TokenKind::Ident if self.peek_at(1).kind == TokenKind::Punct(b':') => {
                    let name = self.text_of(t).to_string();
                    self.pos += 2;
                    if self.is_dot("callprototype") {
                        self.skip_to_semicolon();
                        out.push(Stmt::Prototype(name, t.start));
                    } else {
                        out.push(Stmt::Label(name, t.start));
                    }
                }
                TokenKind::Ident | TokenKind::Punct(b'@') => out.push(Stmt::Inst(self.instruction()?)),
                _ => return self.expected("an instruction, a label, a declaration or `}`"),
            }
        }
    }

    fn instruction(&mut self) -> PResult<Inst> {
        let start = self.peek().start;
        let mut guard = None;
        if self.eat_punct(b'@') {
            let negated = self.eat_punct(b'!');
            let (name, at) = self.ident("a predicate register after `@`")?;
            guard = Some((name, negated, at));
        }
        let (opcode, _) = self.ident("an instruction")?;
        let mut mods = Vec::new();
        while self.peek().kind == TokenKind::Dot && !self.line_break_before_dot() {
            let t = self.bump();
            mods.push((self.text_of(t)[1..].to_string(), t.start));
        }
        let mut operands = Vec::new();
        if !self.is_punct(b';') {
            loop {
                let first = self.operand()?;
                let operand = if self.eat_punct(b'|') {
                    let second = self.operand()?;
                    let at = first.at();
                    Operand::Pair(Box::new(first), Box::new(second), at)
                } else {
                    first
                };
                operands.push(operand);
                if !self.eat_punct(b',') {
                    break;
                }
            }
        }
        if !self.eat_punct(b';') {
            return self.expected("`,` or `;` after an operand");
        }
        Ok(Inst { guard, opcode, mods, operands, at: start })
    }

    fn line_break_before_dot(&self) -> bool {
        // Modifiers follow their opcode directly; `ret\n.reg` would be two statements,
        // but PTX always ends `ret` with `;`, so only whitespace-free chains count.
        let previous = self.tokens[self.pos - 1];
        previous.end != self.peek().start
    }

    fn operand(&mut self) -> PResult<Operand> {
        self.enter()?;
        let result = self.operand_inner();
        self.depth -= 1;
        result
    }

    fn operand_inner(&mut self) -> PResult<Operand> {
        let t = self.peek();
        match t.kind {
            TokenKind::Punct(b'{') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    items.push(self.operand()?);
                    if self.eat_punct(b'}') {
                        break;
                    }
                    self.expect_punct(b',')?;
                }
                Ok(Operand::Vector(items, t.start))
            }
            TokenKind::Punct(b'(') => {
                self.pos += 1;
                let mut items = Vec::new();
                if !self.eat_punct(b')') {
                    loop {
                        items.push(self.operand()?);
                        if self.eat_punct(b')') {
                            break;
                        }
                        self.expect_punct(b',')?;
                    }
                }
                Ok(Operand::List(items, t.start))
            }
            TokenKind::Punct(b'[') => {
                self.pos += 1;
                let (base, offset) = self.address_expression()?;
                self.expect_punct(b']')?;
                Ok(Operand::Addr { base, offset, at: t.start })
            }
            TokenKind::Punct(b'!') => {
                self.pos += 1;
                match self.operand()? {
                    Operand::Reg { name, negated, at } => Ok(Operand::Reg { name, negated: !negated, at }),
                    _ => Err(SimError::parse(t.start as usize, "`!` negates only a predicate register".into())),
                }
            }
            TokenKind::Ident if self.text_of(t) == "_" => {
                self.pos += 1;
                Ok(Operand::Sink(t.start))
            }
            TokenKind::Ident if self.text_of(t) == "generic" && self.peek_at(1).kind == TokenKind::Punct(b'(') => {
                self.pos += 2;
                let (name, _) = self.ident("a variable name in `generic(...)`")?;
                self.expect_punct(b')')?;
                let offset = self.trailing_offset()?;
                Ok(Operand::Sym { name, offset, generic: true, at: t.start })
            }
            TokenKind::Ident if self.text_of(t).starts_with('%') => {
                self.pos += 1;
                let mut name = self.text_of(t).to_string();
                // Special registers with a component: `%tid.x`.
                if self.peek().kind == TokenKind::Dot && self.peek().start == t.end {
                    let c = self.bump();
                    name.push_str(self.text_of(c));
                }
                Ok(Operand::Reg { name, negated: false, at: t.start })
            }
            TokenKind::Ident => {
                self.pos += 1;
                let offset = self.trailing_offset()?;
                Ok(Operand::Sym { name: self.text_of(t).to_string(), offset, generic: false, at: t.start })
            }
            TokenKind::Int | TokenKind::Float | TokenKind::Punct(b'-') | TokenKind::Punct(b'~') => {
                let value = self.constant_expression()?;
                Ok(Operand::Imm { value, at: t.start })
            }
            _ => self.expected("an operand"),
        }
    }

    /// `+ 4`, `- 8`, `+-8` after a symbol (a constant byte offset), or nothing.
    fn trailing_offset(&mut self) -> PResult<i64> {
        let mut offset = 0i64;
        while self.is_punct(b'+') || self.is_punct(b'-') {
            let negative = self.bump().kind == TokenKind::Punct(b'-');
            let at = self.peek().start;
            let v = match self.constant_expression()? {
                Literal::Int(v) => v,
                _ => return Err(SimError::parse(at as usize, "expected an integer offset".into())),
            };
            let v = i64::try_from(v).map_err(|_| SimError::parse(at as usize, "offset out of range".into()))?;
            offset = if negative { offset.wrapping_sub(v) } else { offset.wrapping_add(v) };
        }
        Ok(offset)
    }

    /// Inside `[...]`: a register or symbol, then a constant offset; or a constant.
    fn address_expression(&mut self) -> PResult<(AddrBase, i64)> {
        let t = self.peek();
        match t.kind {
            TokenKind::Ident => {
                self.pos += 1;
                let name = self.text_of(t).to_string();
                let base = if name.starts_with('%') { AddrBase::Reg(name) } else { AddrBase::Sym(name) };
                Ok((base, self.trailing_offset()?))
            }
            _ => {
                let at = t.start;
                match self.constant_expression()? {
                    Literal::Int(v) => Ok((AddrBase::None, i64::try_from(v).map_err(|_| SimError::parse(at as usize, "address out of range".into()))?)),
                    _ => Err(SimError::parse(at as usize, "an address is a register, a variable or an integer".into())),
                }
            }
        }
    }

    /// A literal with unary `-`/`~` and binary `+ - * / << >> & | ^` on integers.
    fn constant_expression(&mut self) -> PResult<Literal> {
        let mut value = self.constant_term()?;
        loop {
            let t = self.peek();
            let op = match t.kind {
                TokenKind::Punct(c @ (b'+' | b'-' | b'*' | b'/' | b'&' | b'^')) => c,
                TokenKind::Punct(b'<') if self.peek_at(1).kind == TokenKind::Punct(b'<') => b'l',
                TokenKind::Punct(b'>') if self.peek_at(1).kind == TokenKind::Punct(b'>') => b'r',
                _ => return Ok(value),
            };
            // Inside `[...]` a following `+` belongs to the address; literals only
            // combine with literals.
            let next = if matches!(op, b'l' | b'r') { self.peek_at(2) } else { self.peek_at(1) };
            if !matches!(next.kind, TokenKind::Int | TokenKind::Punct(b'(') | TokenKind::Punct(b'-')) {
                return Ok(value);
            }
            self.pos += if matches!(op, b'l' | b'r') { 2 } else { 1 };
            let rhs = self.constant_term()?;
            let (Literal::Int(a), Literal::Int(b)) = (value, rhs) else {
                return Err(SimError::parse(t.start as usize, "arithmetic on float literals is not supported".into()));
            };
            value = Literal::Int(match op {
                b'+' => a.wrapping_add(b),
                b'-' => a.wrapping_sub(b),
                b'*' => a.wrapping_mul(b),
                b'/' if b != 0 => a / b,
                b'/' => return Err(SimError::parse(t.start as usize, "division by zero in a constant expression".into())),
                b'&' => a & b,
                b'^' => a ^ b,
                b'l' => a.wrapping_shl(b as u32),
                _ => a.wrapping_shr(b as u32),
            });
        }
    }

    fn constant_term(&mut self) -> PResult<Literal> {
        self.enter()?;
        let result = self.constant_term_inner();
        self.depth -= 1;
        result
    }

    fn constant_term_inner(&mut self) -> PResult<Literal> {
        let t = self.bump();
        match t.kind {
            TokenKind::Punct(b'-') => Ok(match self.constant_term()? {
                Literal::Int(v) => Literal::Int(v.wrapping_neg()),
                Literal::F32(b) => Literal::F32(b ^ 0x8000_0000),
                Literal::F64(b) => Literal::F64(b ^ (1 << 63)),
                Literal::Decimal(x) => Literal::Decimal(-x),
            }),
            TokenKind::Punct(b'~') => match self.constant_term()? {
                Literal::Int(v) => Ok(Literal::Int(!v)),
                _ => Err(SimError::parse(t.start as usize, "`~` applies to integers".into())),
            },
            TokenKind::Punct(b'(') => {
                let v = self.constant_expression()?;
                self.expect_punct(b')')?;
                Ok(v)
            }
            TokenKind::Int => parse_int(self.text_of(t)).map(Literal::Int).ok_or_else(|| SimError::parse(t.start as usize, format!("malformed integer `{}`", self.text_of(t)))),
            TokenKind::Float => parse_float(self.text_of(t)).ok_or_else(|| SimError::parse(t.start as usize, format!("malformed float `{}`", self.text_of(t)))),
            _ => {
                self.pos -= 1;
                self.expected("a number")
            }
        }
    }
}

/// An integer literal: decimal, `0x` hexadecimal, `0b` binary or `0` octal, with an
/// optional `U` suffix.
pub fn parse_int(text: &str) -> Option<i128> {
    let t = text.strip_suffix('U').unwrap_or(text);
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    u128::from_str_radix(digits, radix).ok().filter(|v| *v <= u128::from(u64::MAX)).map(|v| v as i128)
}

fn parse_float(text: &str) -> Option<Literal> {
    if let Some(h) = text.strip_prefix("0f").or_else(|| text.strip_prefix("0F")) {
        return u32::from_str_radix(h, 16).ok().map(Literal::F32);
    }
    if let Some(h) = text.strip_prefix("0d").or_else(|| text.strip_prefix("0D")) {
        return u64::from_str_radix(h, 16).ok().map(Literal::F64);
    }
    text.parse::<f64>().ok().map(Literal::Decimal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::lexer::tokenize;

    fn module(text: &str) -> Module {
        let tokens = tokenize(text).unwrap();
        parse(text, &tokens).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn kernel_with_params_attributes_and_body() {
        let m = module(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .global .align 4 .u32 table[4] = {1, 2, 3, 4};\n\
             .visible .entry k(\n .param .u64 .ptr .global .align 8 k_param_0,\n .param .align 16 .b8 k_param_1[16]\n)\n.maxntid 128, 1, 1\n{\n\
             .reg .pred %p<2>;\n .reg .b32 %r<5>;\n\
             ld.param.u64 %rd1, [k_param_0];\n @!%p1 bra $L__BB0_2;\n$L__BB0_2:\n setp.lt.s32 %p1|%p2, %r1, -4, !%p1;\n mov.b64 %rd2, {%r1, _};\n ret;\n}\n",
        );
        assert_eq!(module_summary(&m), "8.0 sm_80 64 vars=1 functions=1");
        let f = &m.functions[0];
        assert!(f.is_entry);
        assert_eq!(f.params[0].pointee, Some(("global".into(), 8)));
        assert_eq!(f.params[1].names[0].dims, vec![Some(16)]);
        assert_eq!(f.params[1].align, Some(16));
        assert_eq!(f.attributes[0].0, "maxntid");
        assert_eq!(f.attributes[0].1, vec![128, 1, 1]);
        let body = f.body.as_ref().unwrap();
        let Stmt::Inst(setp) = &body[5] else { panic!("{:?}", body[5]) };
        assert_eq!(setp.opcode, "setp");
        assert!(matches!(&setp.operands[0], Operand::Pair(..)));
        assert!(matches!(&setp.operands[2], Operand::Imm { value: Literal::Int(-4), .. }));
        assert!(matches!(&setp.operands[3], Operand::Reg { negated: true, .. }));
        let Stmt::Inst(bra) = &body[3] else { panic!() };
        assert_eq!(bra.guard.as_ref().map(|g| (g.0.as_str(), g.1)), Some(("%p1", true)));
        let Stmt::Decl(table) = &m.vars.iter().map(|v| Stmt::Decl(v.clone())).next().unwrap() else { panic!() };
        assert!(matches!(&table.names[0].init, Some(Init::List(items, _)) if items.len() == 4));
    }

    fn module_summary(m: &Module) -> String {
        let (v, _) = m.version.unwrap();
        format!("{}.{} {} {} vars={} functions={}", v.0, v.1, m.target.as_ref().unwrap().0[0], m.address_size, m.vars.len(), m.functions.len())
    }

    #[test]
    fn addresses_and_calls() {
        let m = module(
            ".version 7.0\n.target sm_70\n.address_size 64\n.func (.param .b32 r) f(.param .b32 a)\n{\n ld.param.b32 %r1, [a];\n st.param.b32 [r], %r1;\n ret;\n}\n\
             .entry k()\n{\n { .param .b32 param0; .param .b32 retval0; st.param.b32 [param0+0], 3; call.uni (retval0), f, (param0); }\n ld.global.f32 %f1, [%rd1+-8];\n ld.shared.u32 %r1, [table+4];\n mov.u32 %r1, %tid.x;\n}\n",
        );
        let k = &m.functions[1];
        let body = k.body.as_ref().unwrap();
        let Stmt::Scope(inner, _) = &body[0] else { panic!() };
        let Stmt::Inst(call) = &inner[3] else { panic!("{:?}", inner[3]) };
        assert_eq!(call.operands.len(), 3);
        assert!(matches!(&call.operands[0], Operand::List(v, _) if v.len() == 1));
        let Stmt::Inst(ld) = &body[1] else { panic!() };
        assert!(matches!(&ld.operands[1], Operand::Addr { base: AddrBase::Reg(r), offset: -8, .. } if r == "%rd1"));
        let Stmt::Inst(lds) = &body[2] else { panic!() };
        assert!(matches!(&lds.operands[1], Operand::Addr { base: AddrBase::Sym(s), offset: 4, .. } if s == "table"));
        let Stmt::Inst(mov) = &body[3] else { panic!() };
        assert!(matches!(&mov.operands[1], Operand::Reg { name, .. } if name == "%tid.x"));
    }

    #[test]
    fn syntax_errors_are_located() {
        let text = ".version 8.0\n.target sm_80\n.entry k()\n{\n add.s32 %r1 %r2;\n}\n";
        let tokens = tokenize(text).unwrap();
        let e = parse(text, &tokens).unwrap_err();
        assert!(e.to_string().contains("expected `,` or `;`"), "{e}");
        let text = ".version 8.0\n.target sm_80\n.entry k()\n{\n ret;\n";
        let tokens = tokenize(text).unwrap();
        assert!(parse(text, &tokens).unwrap_err().to_string().contains("never closed"));
    }

    #[test]
    fn literals() {
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("017"), Some(15));
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("4294967295U"), Some(4_294_967_295));
        assert_eq!(parse_float("0f3F800000"), Some(Literal::F32(0x3F80_0000)));
        assert_eq!(parse_float("1.5"), Some(Literal::Decimal(1.5)));
    }
}
