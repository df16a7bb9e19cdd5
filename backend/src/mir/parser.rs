//! Reading `.mir` files: YAML documents through serde_yaml, function bodies through the
//! pest grammar in `body.pest`, names through the target tables.
//!
//! Positions are file positions: each document's offset and each body's first line and
//! indentation are tracked so that an error inside a body points at the file's line
//! and column. The parser stops at the first error (spec §5); the verifier reports all.

use serde::Deserialize;
use target_desc::error::did_you_mean;
use target_desc::tables::{TargetTables, VtId};
use target_desc::yaml_lines;

use super::syntax::{self, InstSyntax, Item, OperandSyntax, Rule};
use super::*;
use crate::diagnostics::MirError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModuleDoc {
    module: Option<String>,
    #[serde(default)]
    globals: Vec<GlobalDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GlobalDoc {
    name: String,
    space: String,
    #[serde(rename = "type")]
    ty: String,
    count: Option<u32>,
    align: Option<u32>,
    init: Option<Vec<serde_yaml::Value>>,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(super) struct FunctionDoc {
    pub(super) name: String,
    pub(super) kind: String,
    #[serde(default)]
    pub(super) params: Vec<ParamDoc>,
    #[serde(default)]
    pub(super) returns: Vec<String>,
    pub(super) attributes: Option<AttributesDoc>,
    /// Extension: the `.local` frame objects (`FRAME_INDEX k` addresses the k-th).
    #[serde(default)]
    pub(super) frame: Vec<FrameDoc>,
    /// Extension: `false` after PHI elimination (registers may have several definitions).
    #[serde(default = "yes")]
    pub(super) ssa: bool,
    pub(super) body: String,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(super) struct ParamDoc {
    pub(super) name: String,
    #[serde(rename = "type")]
    pub(super) ty: String,
    #[serde(default)]
    pub(super) noalias: bool,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(super) struct FrameDoc {
    pub(super) name: Option<String>,
    pub(super) size: u64,
    pub(super) align: Option<u32>,
    #[serde(default)]
    pub(super) spill: bool,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub(super) struct AttributesDoc {
    pub(super) maxntid: Option<Vec<u32>>,
    pub(super) minnctapersm: Option<u32>,
    pub(super) maxnreg: Option<u32>,
}

/// One YAML document of the stream and the file line its text starts on.
struct Document<'a> {
    text: String,
    first_line: usize,
    file: &'a str,
    full: &'a str,
    /// A function body cut out of the document before YAML sees it (see
    /// [`literal_body`]): its text and content indentation. `text` then ends with the
    /// `body: |` line.
    body: Option<(String, usize)>,
}

impl Document<'_> {
    fn error(&self, doc_line: usize, column: usize, message: impl Into<String>) -> MirError {
        MirError::at(self.file, self.full, self.first_line + doc_line.max(1) - 1, column, message)
    }

    /// An error at `token` in the item that starts at `doc_line`.
    fn error_at(&self, doc_line: usize, token: &str, message: impl Into<String>) -> MirError {
        let (line, column) = yaml_lines::find_token(&self.text, doc_line, 8, token);
        self.error(line, column, message)
    }

    /// An error at the value of `key:` in the item that starts at `doc_line` (so a
    /// value that also appears earlier in the item, like `{ name: ptr, type: ptr }`, is
    /// still found in the right place).
    fn error_at_value(&self, doc_line: usize, key: &str, value: &str, message: impl Into<String>) -> MirError {
        let pattern = format!("{key}:");
        for (offset, text) in self.text.lines().skip(doc_line.saturating_sub(1)).take(8).enumerate() {
            if let Some(at) = text.find(&pattern) {
                let after = at + pattern.len();
                if let Some(v) = text[after..].find(value) {
                    let column = text[..after + v].chars().count() + 1;
                    return self.error(doc_line + offset, column, message);
                }
            }
        }
        self.error_at(doc_line, value, message)
    }

    /// Parses the document; YAML syntax errors and schema errors (missing or unknown
    /// keys, wrong value types) are told apart.
    fn parse<T: for<'de> Deserialize<'de>>(&self, what: &str) -> Result<T, MirError> {
        serde_yaml::from_str(&self.text).map_err(|e| {
            let (line, column) = e.location().map(|l| (l.line(), l.column())).unwrap_or((1, 1));
            let line = line.min(self.text.lines().count().max(1));
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message).to_string();
            let schema = ["missing field", "unknown field", "invalid type", "invalid value", "invalid length", "duplicate field"]
                .iter()
                .any(|m| message.contains(m));
            let kind = if schema { format!("invalid {what}") } else { "invalid YAML".to_string() };
            self.error(line, column, format!("{kind}: {message}"))
        })
    }

    /// The document as `T`, from its YAML `value` already read: YAML is read once per
    /// document. A value that does not fit `T` is read again from the text, which
    /// fails the same way and gives the error its line and column.
    fn convert<T: for<'de> Deserialize<'de>>(&self, value: serde_yaml::Value, what: &str) -> Result<T, MirError> {
        match serde_yaml::from_value(value) {
            Ok(parsed) => Ok(parsed),
            Err(_) => self.parse(what),
        }
    }
}

/// Splits a YAML stream at `---` and `...` lines, remembering where each starts.
fn documents<'a>(text: &'a str, file: &'a str) -> Vec<Document<'a>> {
    let mut docs = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut first_line = 1;
    let flush = |current: &mut Vec<&str>, first_line: usize, docs: &mut Vec<Document<'a>>| {
        let meaningful = current.iter().any(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        });
        if meaningful {
            let (lines, body) = match literal_body(current) {
                Some((key, body, indent)) => (&current[..=key], Some((body, indent))),
                None => (&current[..], None),
            };
            docs.push(Document { text: lines.join("\n") + "\n", first_line, file, full: text, body });
        }
        current.clear();
    };
    for (i, line) in syntax::lines(text).enumerate() {
        let marker = line.trim_end();
        if marker == "---" || marker.starts_with("--- ") || marker == "..." {
            flush(&mut current, first_line, &mut docs);
            first_line = i + 2;
        } else {
            if current.is_empty() {
                first_line = i + 1;
            }
            current.push(line);
        }
    }
    flush(&mut current, first_line, &mut docs);
    docs
}

/// The function body of a document whose last key is `body: |` (a literal block scalar
/// with clip chomping, the form the spec and the printer use), read directly: the key's
/// index among `lines`, the body text as YAML would give it, and its indentation.
/// A 100k-line body cost serde_yaml (twice: once as a Value, once as the function
/// document) and the key-position scans more than the rest of parsing; cutting it out
/// leaves YAML a few header lines. `None` for any other shape (an indentation
/// indicator, another chomping mode, a key after the body, tabs or over-indented blank
/// lines in the indentation): YAML then reads the whole document, as before. The
/// document's text always ends with a line break ([`documents`]), so the body does too.
fn literal_body(lines: &[&str]) -> Option<(usize, String, usize)> {
    let key = lines.iter().rposition(|l| l.trim_end() == "body: |")?;
    let content = &lines[key + 1..];
    let blank = |l: &str| l.bytes().all(|c| c == b' ');
    let first = content.iter().position(|l| !blank(l));
    let indent = match first {
        Some(k) => content[k].len() - content[k].trim_start_matches(' ').len(),
        None => 0,
    };
    if first.is_some() && indent == 0 {
        return None;
    }
    // YAML rejects leading blank lines longer than the indentation; let it say so.
    if content[..first.unwrap_or(content.len())].iter().any(|l| l.len() > indent) {
        return None;
    }
    let mut body = String::with_capacity(content.iter().map(|l| l.len() + 1).sum());
    let mut pending_blank = 0;
    for line in content {
        if blank(line) && line.len() <= indent {
            pending_blank += 1;
            continue;
        }
        if line.len() < indent || !line.as_bytes()[..indent].iter().all(|&c| c == b' ') {
            return None; // less indented: another key or a syntax error
        }
        for _ in 0..pending_blank {
            body.push('\n');
        }
        pending_blank = 0;
        body.push_str(&line[indent..]);
        body.push('\n');
    }
    Some((key, body, indent))
}

/// The description's generic opcode and type names, hashed once per parse. The
/// description's own name maps hash with SipHash (about 250 instructions a lookup), and
/// every function of a module of thousands looked its few names up again. A name
/// missing here is asked of the description (which then gives the error).
pub(super) struct NameIndex {
    opcodes: rustc_hash::FxHashMap<&'static str, target_desc::tables::OpcodeId>,
    types: rustc_hash::FxHashMap<&'static str, VtId>,
}

impl NameIndex {
    pub(super) fn new(tables: &TargetTables) -> NameIndex {
        NameIndex {
            opcodes: tables.opcodes.iter().filter_map(|o| Some((o.name, tables.opcode(o.name)?))).collect(),
            types: tables.types.iter().filter_map(|t| Some((t.name, tables.vt(t.name)?))).collect(),
        }
    }

    fn opcode(&self, tables: &TargetTables, name: &str) -> Option<target_desc::tables::OpcodeId> {
        self.opcodes.get(name).copied().or_else(|| tables.opcode(name))
    }

    fn vt(&self, tables: &TargetTables, name: &str) -> Result<VtId, String> {
        match self.types.get(name) {
            Some(&vt) => Ok(vt),
            None => lookup_type(tables, name),
        }
    }
}

fn lookup_type(tables: &TargetTables, name: &str) -> Result<VtId, String> {
    tables.vt(name).ok_or_else(|| {
        let hint = did_you_mean(name, tables.types.iter().map(|t| t.name), |n| format!("`{n}`"));
        format!("unknown type `{name}`{hint}")
    })
}

/// Parses a whole `.mir` file. `file` is the name used in diagnostics.
pub fn parse_module(text: &str, file: &str, tables: &TargetTables) -> Result<Module, MirError> {
    parse_module_jobs(text, file, tables, 1)
}

/// What one document of the file is, read on its own.
enum ParsedDocument {
    Function(Function),
    /// The module document, read in order with the others (its globals are checked
    /// against each other and it must come first).
    Module(serde_yaml::Value),
}

/// [`parse_module`] with the documents read on up to `jobs` threads. Documents are
/// independent until the checks across them (a function defined twice, the module
/// document's place), which run afterwards in file order, so the module and the first
/// error are those of a sequential read.
pub fn parse_module_jobs(text: &str, file: &str, tables: &TargetTables, jobs: usize) -> Result<Module, MirError> {
    let mut module = Module { name: None, globals: Vec::new(), functions: Vec::new() };
    let docs = documents(text, file);
    let index = NameIndex::new(tables);
    let parsed = crate::parallel::map_ordered(&docs, jobs, |doc| -> Result<ParsedDocument, MirError> {
        if doc.body.is_some() {
            if let Some(parsed) = super::header::read(&doc.text) {
                return Ok(ParsedDocument::Function(parse_function_doc(doc, parsed, tables, &index)?));
            }
        }
        let value: serde_yaml::Value = doc.parse("document")?;
        let keys: Vec<String> = match &value {
            serde_yaml::Value::Mapping(m) => m.keys().filter_map(|k| k.as_str().map(str::to_string)).collect(),
            _ => {
                return Err(doc.error(1, 1, "expected a module document (`module`, `globals`) or a function document (`name`, `kind`, `params`, `body`), found something that is not a mapping"))
            }
        };
        if keys.iter().any(|k| k == "name" || k == "body" || k == "kind") {
            Ok(ParsedDocument::Function(parse_function(doc, value, tables, &index)?))
        } else if keys.iter().any(|k| k == "module" || k == "globals") {
            Ok(ParsedDocument::Module(value))
        } else {
            Err(doc.error(
                1,
                1,
                format!("expected a module document (`module`, `globals`) or a function document (`name`, `kind`, `params`, `body`), found keys {}", keys.join(", ")),
            ))
        }
    });
    let mut defined: rustc_hash::FxHashMap<String, usize> = rustc_hash::FxHashMap::default();
    for (index, (doc, parsed)) in docs.iter().zip(parsed).enumerate() {
        match parsed? {
            ParsedDocument::Function(function) => {
                if let Some(other) = defined.get(&function.name).map(|&i| &module.functions[i]) {
                    return Err(doc.error_at(
                        yaml_lines::key_line(&doc.text, &["name"]).unwrap_or(1),
                        &function.name,
                        format!("function `{}` is defined twice (first at line {})", function.name, other.loc.line),
                    ));
                }
                defined.insert(function.name.clone(), module.functions.len());
                module.functions.push(function);
            }
            ParsedDocument::Module(value) => {
                if index != 0 {
                    return Err(doc.error(1, 1, "the module document must be the first document of the file"));
                }
                read_module_document(doc, value, tables, &mut module)?;
            }
        }
    }
    if module.functions.is_empty() {
        let line = text.lines().count().max(1);
        return Err(MirError::at(file, text, line, 1, "expected at least one function document, found none"));
    }
    Ok(module)
}

/// The module document's name and globals, into `module`.
fn read_module_document(doc: &Document, value: serde_yaml::Value, tables: &TargetTables, module: &mut Module) -> Result<(), MirError> {
    let parsed: ModuleDoc = doc.convert(value, "module document")?;
    module.name = parsed.module;
    let lines = yaml_lines::item_lines(&doc.text, &["globals"]);
    for (i, g) in parsed.globals.into_iter().enumerate() {
        let line = lines.get(i).copied().unwrap_or(1);
        let global = parse_global(doc, line, g, tables, &module.globals)?;
        module.globals.push(global);
    }
    Ok(())
}

/// A module read a batch of functions at a time: the driver compiles each batch while
/// the rest of the file is still text, so a module of thousands of functions never
/// holds all their MIR at once (issue 15: peak memory, and page faults, which were a
/// sixth of such a compile). What the batches need of the others is known up front:
/// the module document (its name and globals) and every function's signature.
pub struct Streamed<'a> {
    docs: Vec<Document<'a>>,
    /// The module's name and globals; no functions.
    pub module: Module,
    /// Every function's header ([`Function`] with no blocks), in file order: what a
    /// call is checked against.
    pub signatures: Vec<Function>,
    /// The document of each function and where its body starts, in file order.
    function_docs: Vec<(usize, BodyAt)>,
    index: NameIndex,
}

impl Streamed<'_> {
    /// Reads the file's documents and function headers; `None` when the file is not
    /// plain enough to stream (a header serde_yaml must read, a module document out of
    /// place, fewer than two functions) or has an error there: [`parse_module_jobs`]
    /// then reads it whole, with its diagnostics.
    pub fn new<'a>(text: &'a str, file: &'a str, tables: &TargetTables) -> Option<Streamed<'a>> {
        // A file of one function (a large kernel) goes no further than this look.
        if memchr::memmem::find_iter(text.as_bytes(), "\nbody: |").take(2).count() < 2 {
            return None;
        }
        let docs = documents(text, file);
        let index = NameIndex::new(tables);
        let mut module = Module { name: None, globals: Vec::new(), functions: Vec::new() };
        let mut signatures = Vec::with_capacity(docs.len());
        let mut function_docs = Vec::with_capacity(docs.len());
        let mut names = rustc_hash::FxHashSet::default();
        for (k, doc) in docs.iter().enumerate() {
            let header = if doc.body.is_some() { super::header::read(&doc.text) } else { None };
            let Some(header) = header else {
                // Only the first document may be something else: the module document.
                if k != 0 {
                    return None;
                }
                let value: serde_yaml::Value = doc.parse("document").ok()?;
                let serde_yaml::Value::Mapping(m) = &value else { return None };
                let is_module = m.keys().all(|key| matches!(key.as_str(), Some("module" | "globals")));
                if !is_module || m.is_empty() {
                    return None;
                }
                read_module_document(doc, value, tables, &mut module).ok()?;
                continue;
            };
            let (signature, at, _) = function_header(doc, header, tables, &index).ok()?;
            if !names.insert(signature.name.clone()) {
                return None;
            }
            signatures.push(signature);
            function_docs.push((k, at));
        }
        (signatures.len() > 1).then_some(Streamed { docs, module, signatures, function_docs, index })
    }

    /// How many lines function `k`'s body has (about its instructions).
    pub fn body_lines(&self, k: usize) -> usize {
        self.docs[self.function_docs[k].0].body.as_ref().map_or(1, |(body, _)| memchr::memchr_iter(b'\n', body.as_bytes()).count() + 1)
    }

    /// Function `k` (in file order), read whole.
    pub fn function(&self, k: usize, tables: &TargetTables) -> Result<Function, MirError> {
        let (doc, at) = (&self.docs[self.function_docs[k].0], self.function_docs[k].1);
        let mut function = self.signatures[k].clone();
        read_body(doc, &mut function, at, None, tables, &self.index)?;
        Ok(function)
    }
}

fn parse_global(doc: &Document, line: usize, g: GlobalDoc, tables: &TargetTables, existing: &[Global]) -> Result<Global, MirError> {
    let space = match g.space.as_str() {
        "global" => AddressSpace::Global,
        "shared" => AddressSpace::Shared,
        "const" => AddressSpace::Const,
        other => return Err(doc.error_at_value(line, "space", other, format!("expected a global space (`global`, `shared` or `const`), found `{other}`"))),
    };
    if existing.iter().any(|e| e.name == g.name) {
        return Err(doc.error_at(line, &g.name, format!("global `{}` is defined twice", g.name)));
    }
    let ty = lookup_type(tables, &g.ty).map_err(|m| doc.error_at_value(line, "type", &g.ty, m))?;
    let count = g.count.unwrap_or(1);
    if count == 0 {
        return Err(doc.error_at(line, "count", "expected a `count` of at least 1, found 0"));
    }
    if let Some(a) = g.align {
        if !a.is_power_of_two() {
            return Err(doc.error_at(line, "align", format!("expected a power-of-two `align`, found {a}")));
        }
    }
    let init = match g.init {
        None => None,
        Some(items) => {
            if space == AddressSpace::Shared {
                return Err(doc.error_at(line, "init", "`init` is not allowed for `shared` globals (only `global` and `const`)"));
            }
            if items.len() != count as usize {
                return Err(doc.error_at(line, "init", format!("expected {count} initializer values (the global's `count`), found {}", items.len())));
            }
            let mut values = Vec::new();
            for item in items {
                let v = match &item {
                    serde_yaml::Value::Number(n) if n.is_i64() || n.is_u64() => {
                        InitValue::Int(n.as_i64().map(i128::from).or(n.as_u64().map(i128::from)).unwrap_or(0))
                    }
                    serde_yaml::Value::Number(n) => InitValue::Float(n.as_f64().unwrap_or(0.0)),
                    other => {
                        let found = serde_yaml::to_string(other).unwrap_or_default();
                        return Err(doc.error_at(line, "init", format!("expected numbers in `init`, found `{}`", found.trim())));
                    }
                };
                values.push(v);
            }
            Some(values)
        }
    };
    Ok(Global { name: g.name, space, ty, count, align: g.align, init, loc: Loc { line: (doc.first_line + line - 1) as u32, column: 1 } })
}

fn parse_function(doc: &Document, value: serde_yaml::Value, tables: &TargetTables, index: &NameIndex) -> Result<Function, MirError> {
    parse_function_doc(doc, doc.convert(value, "function document")?, tables, index)
}

/// A function from its header, read by serde_yaml or by [`super::header::read`].
fn parse_function_doc(doc: &Document, parsed: FunctionDoc, tables: &TargetTables, index: &NameIndex) -> Result<Function, MirError> {
    let (mut function, at, serde_body) = function_header(doc, parsed, tables, index)?;
    read_body(doc, &mut function, at, serde_body.as_deref(), tables, index)?;
    Ok(function)
}

/// Where a function's body starts in the file: its first line and its indentation.
#[derive(Clone, Copy, Debug)]
struct BodyAt {
    line: usize,
    indent: usize,
}

/// The function of a document without its body: its signature, attributes and frame,
/// and no blocks (what a caller needs to know of it); where the body starts; and the
/// body's text when YAML read it (`None` when it was cut out of the document, see
/// [`literal_body`]).
fn function_header(doc: &Document, parsed: FunctionDoc, tables: &TargetTables, index: &NameIndex) -> Result<(Function, BodyAt, Option<String>), MirError> {
    // The header's lines, split once for all the key positions below.
    let doc_lines: Vec<&str> = syntax::lines(&doc.text).collect();
    let keys = yaml_lines::TopKeys::new(&doc_lines);
    let name_line = keys.line("name").unwrap_or(1);
    let kind = match parsed.kind.as_str() {
        "kernel" => FunctionKind::Kernel,
        "device" => FunctionKind::Device,
        other => {
            let line = keys.line("kind").unwrap_or(1);
            return Err(doc.error_at_value(line, "kind", other, format!("expected `kernel` or `device` for `kind`, found `{other}`")));
        }
    };
    let param_lines = keys.items("params");
    let mut params = Vec::new();
    let mut param_names = rustc_hash::FxHashSet::default();
    for (i, p) in parsed.params.iter().enumerate() {
        let line = param_lines.get(i).copied().unwrap_or(1);
        let ty = index.vt(tables, &p.ty).map_err(|m| doc.error_at_value(line, "type", &p.ty, m))?;
        if !param_names.insert(p.name.as_str()) {
            return Err(doc.error_at(line, &p.name, format!("parameter `{}` is declared twice", p.name)));
        }
        if p.noalias && tables.type_info(ty).is_none_or(|t| t.kind != target_desc::tables::TypeKind::Pointer) {
            return Err(doc.error_at_value(line, "noalias", "true", format!("`noalias` is for pointer parameters; `{}` has type {}", p.name, p.ty)));
        }
        params.push(Param { name: p.name.clone(), ty, noalias: p.noalias });
    }
    let returns_line = keys.line("returns").unwrap_or(1);
    let mut returns = Vec::new();
    for r in &parsed.returns {
        returns.push(index.vt(tables, r).map_err(|m| doc.error_at(returns_line, r, m))?);
    }
    let attributes = match parsed.attributes {
        None => Attributes::default(),
        Some(a) => Attributes { maxntid: a.maxntid, minnctapersm: a.minnctapersm, maxnreg: a.maxnreg },
    };
    let frame_lines = keys.items("frame");
    let mut frame = Vec::new();
    for (i, o) in parsed.frame.iter().enumerate() {
        let line = frame_lines.get(i).copied().unwrap_or(1);
        if o.size == 0 || o.size > MAX_FRAME_OBJECT_BYTES {
            return Err(doc.error_at_value(line, "size", &o.size.to_string(), format!("expected a frame object size from 1 to {MAX_FRAME_OBJECT_BYTES} bytes, found {}", o.size)));
        }
        let align = o.align.unwrap_or(1);
        if !align.is_power_of_two() || align > 256 {
            return Err(doc.error_at_value(line, "align", &align.to_string(), format!("expected a power of two from 1 to 256 for `align`, found {align}")));
        }
        frame.push(FrameObject { name: o.name.clone(), size: o.size, align, spill: o.spill });
    }
    // Where the body's text starts in the file, and its indentation.
    let body_key = keys.line("body").unwrap_or(1);
    let key_text = doc_lines.get(body_key - 1).copied().unwrap_or("");
    let inline = key_text.split_once(':').map(|(_, rest)| rest.trim()).unwrap_or("");
    let block_scalar = inline.starts_with('|') || inline.starts_with('>');
    let (body_line, indent) = if block_scalar {
        // `|2` fixes the content indentation relative to the key; otherwise the first
        // non-blank line sets it (YAML's rule).
        let key_indent = key_text.len() - key_text.trim_start().len();
        let indicator = inline.chars().skip(1).find_map(|c| c.to_digit(10));
        let indent = match (indicator, &doc.body) {
            (_, Some((_, indent))) => *indent,
            (Some(n), None) => key_indent + n as usize,
            (None, None) => doc_lines
                .iter()
                .skip(body_key)
                .find(|l| !l.trim().is_empty())
                .map(|l| l.len() - l.trim_start().len())
                .unwrap_or(0),
        };
        (doc.first_line + body_key, indent)
    } else {
        (doc.first_line + body_key - 1, key_text.find(inline).unwrap_or(0))
    };
    let key_loc = |key: &str| {
        keys.line(key).map(|l| Loc { line: (doc.first_line + l - 1) as u32, column: 1 })
    };
    let function = Function {
        returns_loc: key_loc("returns"),
        attributes_loc: key_loc("attributes"),
        name: parsed.name,
        kind,
        params,
        returns,
        attributes,
        frame,
        values: Vec::new(),
        blocks: Vec::new(),
        ssa: parsed.ssa,
        loc: Loc { line: (doc.first_line + name_line - 1) as u32, column: 1 },
    };
    let serde_body = doc.body.is_none().then_some(parsed.body);
    Ok((function, BodyAt { line: body_line, indent }, serde_body))
}

/// Reads the body of `function` (made by [`function_header`]) into it: `serde_body`, or
/// the body cut out of `doc`.
fn read_body(doc: &Document, function: &mut Function, at: BodyAt, serde_body: Option<&str>, tables: &TargetTables, index: &NameIndex) -> Result<(), MirError> {
    let body: &str = match (&doc.body, serde_body) {
        (Some((body, _)), _) => body,
        (None, body) => body.unwrap_or(""),
    };
    // About one value per line: reserved once rather than grown (and rehashed) by
    // doubling through a large body.
    let lines = memchr::memchr_iter(b'\n', body.as_bytes()).count() + 1;
    function.values.reserve(lines);
    BodyReader {
        tables,
        file: doc.file,
        full: doc.full,
        body,
        line_starts: std::cell::OnceCell::new(),
        body_line: at.line,
        indent: at.indent,
        function,
        names: rustc_hash::FxHashMap::with_capacity_and_hasher(lines, Default::default()),
        index,
        blocks_seen: Default::default(),
        pending: Vec::new(),
        line: Default::default(),
    }
    .read(body)
}

/// A line of a function body: its number (from 1; 0 for none yet), where it starts and
/// ends (its line break or the body's end), and whether it is ASCII (then a column is a
/// byte offset).
#[derive(Clone, Copy, Default)]
struct BodyLine {
    number: usize,
    start: usize,
    end: usize,
    ascii: bool,
}

struct BodyReader<'a> {
    tables: &'a TargetTables,
    file: &'a str,
    full: &'a str,
    body: &'a str,
    /// Byte offset of each body line's start, made only when a position off the line
    /// being read needs its line (an error about an earlier use, or the grammar's
    /// items): positions become line and column by binary search (pest's own
    /// `line_col` rescans the input and is quadratic).
    line_starts: std::cell::OnceCell<Vec<usize>>,
    /// Block number -> line of its label, for duplicate detection.
    blocks_seen: rustc_hash::FxHashMap<u32, u32>,
    body_line: usize,
    indent: usize,
    function: &'a mut Function,
    /// Each value's id (where it was defined first is asked of the instructions read,
    /// for the one diagnostic that says).
    names: rustc_hash::FxHashMap<&'a str, ValueId>,
    /// Type and generic opcode names, hashed once for the whole parse.
    index: &'a NameIndex,
    /// Uses to resolve once every definition is known: (block, inst, operand, name, offset).
    pending: Vec<(usize, usize, usize, &'a str, usize)>,
    /// The body line being read (the scanner says which), or the one [`BodyReader::loc`]
    /// found last: tokens come in order, so this is almost always the answer.
    line: std::cell::Cell<BodyLine>,
}

impl<'a> BodyReader<'a> {
    /// The file position of body byte `offset`.
    fn loc(&self, offset: usize) -> Loc {
        let mut line = self.line.get();
        if line.number == 0 || offset < line.start || offset > line.end {
            // The next line (tokens come in order), else a search of the line starts.
            let next = (line.number > 0 && offset > line.end && line.end < self.body.len()).then(|| self.line_from(line.number + 1, line.end + 1));
            line = match next {
                Some(next) if offset <= next.end => next,
                _ => {
                    let starts = self.line_starts.get_or_init(|| std::iter::once(0).chain(memchr::memchr_iter(b'\n', self.body.as_bytes()).map(|i| i + 1)).collect());
                    let number = starts.partition_point(|&start| start <= offset).max(1);
                    self.line_from(number, starts[number - 1])
                }
            };
            self.line.set(line);
        }
        let column = if line.ascii { offset - line.start + 1 } else { self.body.get(line.start..offset).map_or(1, |text| text.chars().count() + 1) };
        Loc { line: (self.body_line + line.number - 1) as u32, column: (column + self.indent) as u32 }
    }

    /// Body line `number`, which starts at `start`.
    fn line_from(&self, number: usize, start: usize) -> BodyLine {
        let bytes = self.body.as_bytes();
        let end = memchr::memchr(b'\n', &bytes[start.min(bytes.len())..]).map_or(bytes.len(), |k| start + k);
        self.line_between(number, start.min(end), end)
    }

    /// Body line `number`, from `start` to `end` (its line break or the body's end).
    fn line_between(&self, number: usize, start: usize, end: usize) -> BodyLine {
        BodyLine { number, start, end, ascii: self.body.as_bytes()[start..end].is_ascii() }
    }

    fn error(&self, loc: Loc, message: impl Into<String>) -> MirError {
        MirError::at(self.file, self.full, loc.line as usize, loc.column as usize, message)
    }

    fn read(mut self, body: &'a str) -> Result<(), MirError> {
        // The scanner is the fast path; the grammar decides whenever the scanner is not
        // sure, so syntax errors always come from the grammar.
        // Each scanned line is read at once, so a large body's items are never all held.
        // The answer is what reading the grammar's items in order gives: a syntax error
        // anywhere comes before the first error of meaning.
        let mut done = 0;
        let mut complete = false;
        if let Some(mut lines) = syntax::body_lines(body) {
            complete = true;
            while let Some(line) = lines.next() {
                match line {
                    None => {
                        complete = false;
                        break;
                    }
                    Some(None) => {}
                    Some(Some(item)) => {
                        let (number, start, end) = lines.line();
                        self.line.set(self.line_between(number, start, end));
                        let read = self.item(&item);
                        if let Item::Inst(inst) = item {
                            lines.recycle(inst);
                        }
                        if let Err(e) = read {
                            return Err(match syntax::lex_body(body) {
                                Some(_) => e,
                                None => syntax::pest_items(body).err().map_or(e, |s| self.syntax_error(*s, body)),
                            });
                        }
                        done += 1;
                    }
                }
            }
        }
        if !complete {
            let items = syntax::pest_items(body).map_err(|e| self.syntax_error(*e, body))?;
            for item in items.iter().skip(done) {
                self.item(item)?;
            }
        }
        if self.function.blocks.is_empty() {
            let loc = Loc { line: self.body_line as u32, column: self.indent as u32 + 1 };
            return Err(self.error(loc, "expected at least one block (`bb.0:`) in the body, found none"));
        }
        for (b, i, o, name, at) in std::mem::take(&mut self.pending) {
            match self.names.get(name) {
                Some(&id) => self.function.blocks[b].insts[i].operands[o] = Operand::Value(id),
                None => {
                    let hint = did_you_mean(name, self.names.keys().copied(), |n| format!("%{n}"));
                    return Err(self.error(self.loc(at), format!("use of undefined value %{name}{hint}")));
                }
            }
        }
        Ok(())
    }

    fn item(&mut self, item: &Item<'a>) -> Result<(), MirError> {
        match item {
            &Item::Label { at, number, name } => self.block(at, number, name),
            Item::Inst(inst) => self.instruction(inst),
        }
    }

    fn block(&mut self, at: usize, number: syntax::Tok<'_>, name: Option<syntax::Tok<'_>>) -> Result<(), MirError> {
        let loc = self.loc(at);
        let number: u32 = number.text.parse().map_err(|_| self.error(loc, format!("block number `{}` is too large", number.text)))?;
        let name = name.map(|n| n.text.to_string());
        if let Some(first) = self.blocks_seen.get(&number) {
            return Err(self.error(loc, format!("block number {number} is used twice (first at line {first})")));
        }
        self.blocks_seen.insert(number, loc.line);
        let insts = Vec::with_capacity(self.lines_before_next_label(at));
        self.function.blocks.push(Block { number, name, insts, loc });
        Ok(())
    }

    /// How many lines follow the label at body offset `at` before the next line that
    /// starts like a label (`bb.`): room for the block's instructions (a few more when
    /// there are comments), reserved at once rather than grown by doubling from nothing,
    /// which was most of the parser's reallocations on modules of small functions. Each
    /// line is looked at once for the label above it.
    fn lines_before_next_label(&self, at: usize) -> usize {
        let bytes = self.body.as_bytes();
        let line_end = |from: usize| memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |k| from + k);
        let mut start = line_end(at.min(bytes.len())) + 1;
        let mut count = 0;
        while start <= bytes.len() {
            let end = line_end(start);
            if self.body[start..end].trim_start_matches([' ', '\t']).starts_with("bb.") {
                break;
            }
            count += 1;
            start = end + 1;
        }
        count
    }

    /// The line of `value`'s first definition: an instruction read already, or the one
    /// at `current` (which defines it twice).
    fn first_definition_line(&self, value: ValueId, current: Loc) -> u32 {
        let insts = self.function.blocks.iter().flat_map(|b| &b.insts);
        insts.filter(|i| i.defs.contains(&value)).map(|i| i.loc.line).next().unwrap_or(current.line)
    }

    fn instruction(&mut self, inst: &InstSyntax<'a>) -> Result<(), MirError> {
        let loc = self.loc(inst.at);
        if self.function.blocks.is_empty() {
            return Err(self.error(loc, "expected a block label (`bb.0:`) before the first instruction, found an instruction"));
        }
        let block = self.function.blocks.len() - 1;
        let index = self.function.blocks[block].insts.len();
        let mut defs = crate::mir::Defs::with_capacity(inst.defs.len());
        for def in &inst.defs {
            let name = &def.reg.text[1..];
            let vt = self.index.vt(self.tables, def.ty.text).map_err(|m| self.error(self.loc(def.ty.at), m))?;
            if let Some(&existing) = self.names.get(name) {
                if self.function.ssa {
                    return Err(self.error(self.loc(def.reg.at), format!("value %{name} is defined twice (first at line {}); MIR is in SSA form", self.first_definition_line(existing, loc))));
                }
                // After PHI elimination a register may be written again, with the same
                // type.
                if self.function.values[existing.0 as usize].ty != vt {
                    return Err(self.error(self.loc(def.ty.at), format!("register %{name} was defined with another type at line {}", self.first_definition_line(existing, loc))));
                }
                defs.push(existing);
                continue;
            }
            let id = ValueId(self.function.values.len() as u32);
            self.function.values.push(ValueInfo { name: name.into(), ty: vt });
            self.names.insert(name, id);
            defs.push(id);
        }
        let name = inst.opcode.text;
        let mut flags = Flags::with_capacity(inst.flags.len());
        // Generic opcodes first; the description keeps machine names distinct.
        let generic = self.index.opcode(self.tables, name);
        let machine = if generic.is_some() { None } else { self.tables.names.machine_ops.get(name) };
        let opcode = if let Some(m) = machine {
            // A machine instruction keeps only the flags its pattern's flag groups took
            // (`.acquire.gpu`), at most one per group; the rest are part of its name.
            let pattern = &self.tables.patterns[m as usize];
            let groups: Vec<_> = pattern.flag_groups.iter().map(|&g| &self.tables.flag_groups[g as usize]).collect();
            let mut taken = vec![false; groups.len()];
            for flag in &inst.flags {
                let f = flag.text;
                let Some((g, member)) = groups.iter().enumerate().find_map(|(g, group)| group.members.iter().find(|m| !f.is_empty() && m.flag == f).map(|m| (g, m.flag))) else {
                    let what = if groups.is_empty() {
                        "takes no flags (they are part of its name)".to_string()
                    } else {
                        let mut known: Vec<&str> = groups.iter().flat_map(|g| g.members.iter().map(|m| m.flag)).filter(|f| !f.is_empty()).collect();
                        known.dedup();
                        format!("accepts only the flags of its flag groups ({})", known.join(", "))
                    };
                    return Err(self.error(self.loc(flag.at), format!("machine instruction {name} {what}, found `.{f}`")));
                };
                if std::mem::replace(&mut taken[g], true) {
                    return Err(self.error(self.loc(flag.at), format!("machine instruction {name} has two flags of group ${}, found a second one `.{f}`", groups[g].name)));
                }
                flags.push(member);
            }
            Opcode::Machine(m)
        } else {
            let id = generic.ok_or_else(|| {
                let hint = did_you_mean(name, self.tables.opcodes.iter().map(|o| o.name), |n| format!("`{n}`"));
                self.error(self.loc(inst.opcode.at), format!("unknown opcode `{name}`{hint}"))
            })?;
            let info = self.tables.opcode_info(id).expect("named opcodes have info");
            for flag in &inst.flags {
                let f = flag.text;
                let Some(known_flag) = info.flags.iter().find(|k| **k == f) else {
                    let known = if info.flags.is_empty() { "none".to_string() } else { info.flags.join(", ") };
                    return Err(self.error(self.loc(flag.at), format!("unknown flag `.{f}` on {name} (it accepts: {known})")));
                };
                flags.push(*known_flag);
            }
            Opcode::Generic(id)
        };
        let mut operands = Vec::with_capacity(inst.operands.len());
        for (o, operand) in inst.operands.iter().enumerate() {
            operands.push(self.operand(operand, block, index, o)?);
        }
        self.function.blocks[block].insts.push(Inst { defs, opcode, flags, operands, loc });
        Ok(())
    }

    fn operand(&mut self, p: &OperandSyntax<'a>, block: usize, inst: usize, index: usize) -> Result<Operand, MirError> {
        // Positions become line and column only for a diagnostic.
        let at = p.at();
        Ok(match *p {
            OperandSyntax::BlockRef(t) => Operand::Block(t.text[4..].parse().map_err(|_| self.error(self.loc(at), format!("block number in `{}` is too large", t.text)))?),
            OperandSyntax::Vreg(t) => {
                // A value defined above is resolved now (a register written again keeps
                // its id, so this is the id the end of the body would give); the others
                // wait for every definition.
                let name = &t.text[1..];
                match self.names.get(name) {
                    Some(&id) => Operand::Value(id),
                    None => {
                        self.pending.push((block, inst, index, name, at));
                        Operand::Value(ValueId(u32::MAX))
                    }
                }
            }
            OperandSyntax::Symbol(t) => Operand::Symbol(t.text[1..].to_string().into()),
            OperandSyntax::Mask(_, ref lanes_syntax) => {
                let mut lanes = Vec::with_capacity(lanes_syntax.len());
                for lane in lanes_syntax {
                    let l = self.loc(lane.at);
                    let v: i32 = lane.text.parse().map_err(|_| self.error(l, format!("expected a lane index, found `{}`", lane.text)))?;
                    if v < -1 {
                        return Err(self.error(l, format!("expected a lane index or -1 (undefined), found {v}")));
                    }
                    lanes.push(v);
                }
                Operand::Mask(lanes.into())
            }
            OperandSyntax::Align(_, value) => {
                let l = self.loc(value.at);
                let a: u64 = value.text.parse().map_err(|_| self.error(l, format!("expected a positive alignment, found `{}`", value.text)))?;
                if !a.is_power_of_two() {
                    return Err(self.error(l, format!("expected a power-of-two alignment, found {a}")));
                }
                Operand::Align(a)
            }
            OperandSyntax::Hex(t) => {
                let text = t.text;
                let (negative, digits) = match text.strip_prefix('-') {
                    Some(rest) => (true, &rest[2..]),
                    None => (false, &text[2..]),
                };
                let v = i128::from_str_radix(digits, 16).map_err(|_| self.error(self.loc(at), format!("integer literal `{text}` is out of range")))?;
                Operand::int(if negative { -v } else { v })
            }
            OperandSyntax::Integer(t) => Operand::int(t.text.parse().map_err(|_| self.error(self.loc(at), format!("integer literal `{}` is out of range", t.text)))?),
            OperandSyntax::Float(t) => Operand::Float(t.text.parse().map_err(|_| self.error(self.loc(at), format!("malformed float literal `{}`", t.text)))?),
            OperandSyntax::Word(t) => match t.text {
                "inf" => Operand::Float(f64::INFINITY),
                "-inf" => Operand::Float(f64::NEG_INFINITY),
                "nan" => Operand::Float(f64::NAN),
                text => match self.tables.cond_code(text) {
                    Some(cc) => Operand::CondCode(cc),
                    None => {
                        let hint = did_you_mean(text, self.tables.cond_codes.iter().map(|c| c.name), |n| format!("`{n}`"));
                        return Err(self.error(self.loc(at), format!("expected an operand (a value, block, @symbol, condition code, number, `inf` or `nan`), found `{text}`{hint}")));
                    }
                },
            },
        })
    }

    fn syntax_error(&self, e: pest::error::Error<Rule>, body: &str) -> MirError {
        let (line, column) = match e.line_col {
            pest::error::LineColLocation::Pos(p) | pest::error::LineColLocation::Span(p, _) => p,
        };
        let position = match e.location {
            pest::error::InputLocation::Pos(p) | pest::error::InputLocation::Span((p, _)) => p,
        };
        let mut expected: Vec<&str> = Vec::new();
        if let pest::error::ErrorVariant::ParsingError { positives, .. } = &e.variant {
            for rule in positives {
                let d = describe(rule);
                if !expected.contains(&d) {
                    expected.push(d);
                }
            }
        }
        if expected.is_empty() {
            expected.push("an instruction or a block label");
        }
        let rest = &body[position.min(body.len())..];
        let found = match rest.split(|c: char| c.is_whitespace() || c == ',').find(|s| !s.is_empty()) {
            Some(token) if !rest.starts_with(['\n', '\r']) => format!("`{token}`"),
            _ if rest.is_empty() => "end of body".to_string(),
            _ => "end of line".to_string(),
        };
        let loc = Loc { line: (self.body_line + line - 1) as u32, column: (column + self.indent) as u32 };
        self.error(loc, format!("syntax error: expected {}, found {found}", expected.join(" or ")))
    }
}

fn describe(rule: &Rule) -> &'static str {
    match rule {
        Rule::block_label | Rule::block_number => "a block label (`bb.N:`)",
        Rule::block_name => "a block name",
        Rule::instruction => "an instruction",
        Rule::defs | Rule::def => "a definition (`%v:type`)",
        Rule::type_name => "a type",
        Rule::opcode | Rule::opcode_name => "an opcode",
        Rule::flag => "a flag",
        Rule::operands => "operands",
        Rule::block_ref => "a block (`%bb.N`)",
        Rule::vreg => "a virtual register (`%name`)",
        Rule::symbol => "a symbol (`@name`)",
        Rule::mask => "`mask(...)`",
        Rule::align => "`align N`",
        Rule::hex | Rule::float | Rule::integer | Rule::exponent => "a number",
        Rule::word => "a condition code",
        Rule::EOI => "end of line",
        _ => "an instruction",
    }
}

#[cfg(test)]
mod tests {
    use super::literal_body;

    /// The directly read body is what YAML gives, on the shapes it accepts.
    #[test]
    fn literal_body_matches_yaml() {
        let cases = [
            "name: f\nbody: |\n  bb.0:\n    RET\n",
            "name: f\nbody: |\n  bb.0:\n\n    RET\n\n\n",
            "name: f\nbody: |\n\n  bb.0:\n      RET ; deeper\n  \n        \n",
            "name: f\nbody: |\n    bb.0:\n    RET\n",
            "name: f\nbody: |\n",
            "name: f\nbody: |\n # not a comment in a block scalar\n",
        ];
        for doc in cases {
            let lines: Vec<&str> = doc.lines().collect();
            let (key, body, _) = literal_body(&lines).unwrap_or_else(|| panic!("read directly: {doc:?}"));
            assert_eq!(lines[key], "body: |");
            let value: serde_yaml::Value = serde_yaml::from_str(doc).unwrap();
            assert_eq!(body, value["body"].as_str().unwrap(), "{doc:?}");
        }
        // Shapes left to YAML: a key after the body, chomping indicators, tabs, a
        // leading blank line longer than the indentation.
        for doc in ["body: |\n  bb.0:\nssa: false\n", "body: |-\n  bb.0:\n", "body: |\n\tbb.0:\n", "body: |\n     \n  bb.0:\n"] {
            let lines: Vec<&str> = doc.lines().collect();
            assert!(literal_body(&lines).is_none(), "{doc:?}");
        }
    }

    /// The body is read line by line as the scanner goes; a syntax error on a later
    /// line still comes before an error of meaning on an earlier one, as when every
    /// item was scanned first.
    #[test]
    fn a_later_syntax_error_wins_over_an_earlier_undefined_value() {
        let text = "---\nname: k\nkind: kernel\nbody: |\n  bb.0:\n    %a:i32 = ADD %b, %b\n    %c:i32 = ADD %a, @@@\n    RET\n...\n";
        let e = super::parse_module(text, "t.mir", tables::nvptx()).unwrap_err().render();
        assert!(e.contains("t.mir:7:22") && e.contains("syntax error"), "{e}");
        let text = text.replace(", @@@", ", %a");
        let e = super::parse_module(&text, "t.mir", tables::nvptx()).unwrap_err().render();
        assert!(e.contains("t.mir:6:") && e.contains("undefined value %b"), "{e}");
    }

    /// When the scanner gives up part-way (`align4`, which only the grammar reads as
    /// `align 4`), the grammar's items take over after those already read, so no
    /// line is read twice (which would define `%p` twice).
    #[test]
    fn the_grammar_takes_over_where_the_scanner_gives_up() {
        let text = "---\nname: k\nkind: kernel\nparams:\n  - { name: p, type: p1 }\nbody: |\n  bb.0:\n    %p:p1 = ARG 0\n    %a:i32 = LOAD %p, align4\n    STORE %a, %p\n    RET\n...\n";
        let body = "bb.0:\n  %p:p1 = ARG 0\n  %a:i32 = LOAD %p, align4\n";
        assert!(crate::mir::syntax::lex_body(body).is_none(), "the scanner must give up on `align4` for this test to mean anything");
        let module = super::parse_module(text, "t.mir", tables::nvptx()).unwrap_or_else(|e| panic!("{}", e.render()));
        let insts: Vec<usize> = module.functions[0].blocks.iter().map(|b| b.insts.len()).collect();
        assert_eq!(insts, vec![4]);
        assert_eq!(module.functions[0].values.len(), 2);
    }
}
