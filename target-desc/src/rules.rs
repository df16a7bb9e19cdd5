//! The rule DSL (grammar in `rules.pest`): parsing into a located syntax tree.
//!
//! Names are not resolved here; [`crate::build`] does that against the YAML sections,
//! so every error, syntactic or semantic, carries the rule's file, line and column.

use pest::iterators::Pair;
use pest::Parser;
use pest_derive::Parser;

use crate::error::{DescError, DescErrorKind};

#[derive(Parser)]
#[grammar = "rules.pest"]
struct RuleParser;

/// A name with its 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub line: usize,
    pub column: usize,
}

impl Name {
    fn from_pair(pair: &Pair<'_, Rule>) -> Name {
        let (line, column) = pair.line_col();
        Name { text: pair.as_str().to_string(), line, column }
    }

    pub fn is_set(&self) -> bool {
        self.text.starts_with('$')
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionSpec {
    Legal,
    Expand,
    Custom(Name),
    LibCall(Name),
    Promote(Option<Name>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    Atom(Name),
    Not(Box<Condition>),
    And(Vec<Condition>),
    Or(Vec<Condition>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleTable {
    /// The `[type][opcode]` action table.
    Actions,
    /// The condition-code table.
    CondCodes,
    /// The 1-D promotion table (no type list).
    Promotion,
    /// The 1-D FSINCOS table (no type list).
    Fsincos,
}

#[derive(Debug, Clone)]
pub struct RuleStmt {
    pub table: RuleTable,
    pub action: ActionSpec,
    /// Opcodes (or condition codes for [`RuleTable::CondCodes`]).
    pub keys: Vec<Name>,
    /// Types; empty for the 1-D tables.
    pub types: Vec<Name>,
    pub condition: Option<Condition>,
    pub line: usize,
    pub column: usize,
    /// The statement's text with whitespace collapsed.
    pub text: String,
}

/// An instruction-selection pattern: a generic opcode on operand kinds, for one or
/// more types, becoming a machine instruction with a PTX template.
#[derive(Debug, Clone)]
pub struct PatternStmt {
    pub name: Name,
    /// `for (i32: s32, i64: s64)`: the types the pattern is instantiated for, each with
    /// the text `{T}` stands for in the template.
    pub bindings: Vec<(Name, String)>,
    pub opcode: Name,
    /// The root's operands: leaves (names with their optional kind: `imm`, `cc`, `bb`,
    /// `sym`, a type, ...) and nested nodes.
    pub args: Vec<PatternArg>,
    /// `-> TYPE` or `-> (TYPE, TYPE, ...)`; empty without `->`.
    pub results: Vec<Name>,
    pub condition: Option<Condition>,
    /// The template without its quotes, and where it starts.
    pub template: String,
    pub template_line: usize,
    pub template_column: usize,
    /// `= custom(NAME)` instead of a template: the engine's emission hook writes it.
    pub hook: Option<Name>,
    pub line: usize,
    pub column: usize,
    pub text: String,
}

/// An operand of a pattern node.
#[derive(Debug, Clone)]
pub enum PatternArg {
    /// A named operand and its optional kind; a fixed symbol (`@llvm.nvvm.barrier0`) has
    /// the symbol as its name and the kind `@`.
    Leaf(Name, Option<Name>),
    /// A nested node: an instruction defining the operand's value, absorbed into the
    /// pattern (`ADD(MUL(a, b), c)`).
    Node(PatternNode),
}

/// A nested node of a pattern tree: `OPCODE[.flag...](OPERANDS) [: TYPE]`.
#[derive(Debug, Clone)]
pub struct PatternNode {
    /// The opcode with its flags, as written (`SIGN_EXTEND`, `FMA.ftz`).
    pub opcode: Name,
    pub args: Vec<PatternArg>,
    /// `: TYPE`: the node's result type, where the signatures leave it open.
    pub ty: Option<Name>,
    /// `shared NODE`: the instruction may have other users; it then stays for them and
    /// the pattern repeats it (for work the root's instruction does for free).
    pub shared: bool,
}

/// A flag group (`flags $scope(atom, fence) = _: ("", ".gpu"), cta: (".cta", ".cta");`):
/// the flags a pattern accepts where its opcode names `$scope`, and the template text
/// each becomes. Like LLVM's operand modifiers (NVPTX prints `.acquire.gpu` from an
/// ordering operand), the flags stay on the selected instruction instead of
/// multiplying the patterns.
#[derive(Debug, Clone)]
pub struct FlagsStmt {
    pub name: Name,
    /// Field names; empty for a group with one text per member.
    pub fields: Vec<Name>,
    pub members: Vec<FlagMemberStmt>,
    pub line: usize,
    pub column: usize,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct FlagMemberStmt {
    /// The flag, or `_` for its absence.
    pub flag: Name,
    /// One text per field, each with where it starts.
    pub texts: Vec<(String, usize, usize)>,
    pub condition: Option<Condition>,
}

#[derive(Debug, Clone)]
pub enum Statement {
    Set { name: Name, items: Vec<Name> },
    Flags(FlagsStmt),
    Pattern(PatternStmt),
    Default { condcode: bool, action: ActionSpec, line: usize, column: usize, text: String },
    Rule(RuleStmt),
}

/// Parses a `.rules` file.
pub fn parse_file(text: &str, file: &str) -> Result<Vec<Statement>, DescError> {
    let mut pairs = RuleParser::parse(Rule::file, text).map_err(|e| syntax_error(e, file, text))?;
    let file_pair = pairs.next().expect("the file rule always produces one pair");
    let mut out = Vec::new();
    for pair in file_pair.into_inner() {
        let (line, column) = pair.line_col();
        let text = collapse(pair.as_str());
        match pair.as_rule() {
            Rule::set_stmt => {
                let mut inner = pair.into_inner().filter(|p| matches!(p.as_rule(), Rule::set_ref | Rule::name_list));
                let name = Name::from_pair(&inner.next().expect("set name"));
                let items = names(inner.next().expect("set items"));
                out.push(Statement::Set { name, items });
            }
            Rule::default_stmt => {
                let mut condcode = false;
                let mut action = ActionSpec::Expand;
                for p in pair.into_inner() {
                    match p.as_rule() {
                        Rule::kw_condcode => condcode = true,
                        Rule::action => action = parse_action(p),
                        _ => {}
                    }
                }
                out.push(Statement::Default { condcode, action, line, column, text });
            }
            Rule::rule | Rule::cc_rule | Rule::one_dim_rule => {
                let mut table = if pair.as_rule() == Rule::cc_rule { RuleTable::CondCodes } else { RuleTable::Actions };
                let mut action = ActionSpec::Expand;
                let mut lists = Vec::new();
                let mut condition = None;
                for p in pair.into_inner() {
                    match p.as_rule() {
                        Rule::kw_promotion => table = RuleTable::Promotion,
                        Rule::kw_fsincos => table = RuleTable::Fsincos,
                        Rule::action => action = parse_action(p),
                        Rule::name_list => lists.push(names(p)),
                        Rule::condition => {
                            let expr = p.into_inner().nth(1).expect("condition expression");
                            condition = Some(parse_expr(expr));
                        }
                        _ => {}
                    }
                }
                let mut lists = lists.into_iter();
                let keys = lists.next().unwrap_or_default();
                let types = lists.next().unwrap_or_default();
                out.push(Statement::Rule(RuleStmt { table, action, keys, types, condition, line, column, text }));
            }
            Rule::pattern_stmt => out.push(Statement::Pattern(parse_pattern(pair, line, column, text))),
            Rule::flags_stmt => out.push(Statement::Flags(parse_flags(pair, line, column, text))),
            Rule::EOI => {}
            other => unreachable!("unexpected statement {other:?}"),
        }
    }
    Ok(out)
}

fn parse_pattern(pair: Pair<'_, Rule>, line: usize, column: usize, text: String) -> PatternStmt {
    let mut idents = Vec::new();
    let mut bindings = Vec::new();
    let mut args = Vec::new();
    let mut results = Vec::new();
    let mut condition = None;
    let mut template = String::new();
    let (mut template_line, mut template_column) = (line, column);
    let mut after_arrow = false;
    let mut hook = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::hook => hook = p.into_inner().find(|x| x.as_rule() == Rule::ident).map(|x| Name::from_pair(&x)),
            Rule::ident if after_arrow => {
                results.push(Name::from_pair(&p));
                after_arrow = false;
            }
            Rule::result_list => {
                results.extend(p.into_inner().filter(|x| x.as_rule() == Rule::ident).map(|x| Name::from_pair(&x)));
                after_arrow = false;
            }
            Rule::ident | Rule::pattern_op => idents.push(Name::from_pair(&p)),
            Rule::arrow => after_arrow = true,
            Rule::for_clause => {
                for b in p.into_inner().filter(|b| b.as_rule() == Rule::binding) {
                    let mut inner = b.into_inner().filter(|x| matches!(x.as_rule(), Rule::ident | Rule::suffix));
                    let ty = Name::from_pair(&inner.next().expect("binding type"));
                    let suffix = inner.next().expect("binding suffix").as_str().to_string();
                    bindings.push((ty, suffix));
                }
            }
            Rule::pattern_args => args = parse_args(p),
            Rule::condition => {
                let expr = p.into_inner().nth(1).expect("condition expression");
                condition = Some(parse_expr(expr));
            }
            Rule::template => {
                let (l, c) = p.line_col();
                template_line = l;
                template_column = c + 1;
                let raw = p.as_str();
                template = raw[1..raw.len() - 1].to_string();
            }
            _ => {}
        }
    }
    let mut idents = idents.into_iter();
    let name = idents.next().expect("pattern name");
    let opcode = idents.next().expect("pattern opcode");
    PatternStmt { name, bindings, opcode, args, results, condition, template, template_line, template_column, hook, line, column, text }
}

/// The operands of a pattern node (`pattern_args`), nested nodes included.
fn parse_args(pair: Pair<'_, Rule>) -> Vec<PatternArg> {
    let mut args = Vec::new();
    for a in pair.into_inner().filter(|a| a.as_rule() == Rule::pattern_arg) {
        let first = a.clone().into_inner().next();
        match first.as_ref().map(|x| x.as_rule()) {
            Some(Rule::symbol_arg) => {
                // A fixed symbol: the name is the symbol, the kind is `@`.
                let name = Name::from_pair(first.as_ref().expect("matched Some"));
                args.push(PatternArg::Leaf(name.clone(), Some(Name { text: "@".into(), ..name })));
            }
            Some(Rule::pattern_node) => {
                let node = first.expect("matched Some");
                let mut opcode = None;
                let mut inner_args = Vec::new();
                let mut ty = None;
                let mut shared = false;
                for x in node.into_inner() {
                    match x.as_rule() {
                        Rule::kw_shared => shared = true,
                        Rule::pattern_op => opcode = Some(Name::from_pair(&x)),
                        Rule::pattern_args => inner_args = parse_args(x),
                        Rule::ident => ty = Some(Name::from_pair(&x)),
                        _ => {}
                    }
                }
                args.push(PatternArg::Node(PatternNode { opcode: opcode.expect("node opcode"), args: inner_args, ty, shared }));
            }
            _ => {
                let mut inner = a.into_inner().filter(|x| x.as_rule() == Rule::ident);
                let name = Name::from_pair(&inner.next().expect("argument name"));
                let kind = inner.next().map(|k| Name::from_pair(&k));
                args.push(PatternArg::Leaf(name, kind));
            }
        }
    }
    args
}

fn parse_flags(pair: Pair<'_, Rule>, line: usize, column: usize, text: String) -> FlagsStmt {
    let mut name = None;
    let mut fields = Vec::new();
    let mut members = Vec::new();
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::set_ref => name = Some(Name::from_pair(&p)),
            Rule::field_list => fields.extend(p.into_inner().filter(|x| x.as_rule() == Rule::ident).map(|x| Name::from_pair(&x))),
            Rule::flag_member => {
                let mut flag = None;
                let mut texts = Vec::new();
                let mut condition = None;
                for m in p.into_inner() {
                    match m.as_rule() {
                        Rule::ident => flag = Some(Name::from_pair(&m)),
                        Rule::flag_texts => {
                            for t in m.into_inner().filter(|t| t.as_rule() == Rule::template) {
                                let (l, c) = t.line_col();
                                let raw = t.as_str();
                                texts.push((raw[1..raw.len() - 1].to_string(), l, c + 1));
                            }
                        }
                        Rule::condition => condition = Some(parse_expr(m.into_inner().nth(1).expect("condition expression"))),
                        _ => {}
                    }
                }
                members.push(FlagMemberStmt { flag: flag.expect("member flag"), texts, condition });
            }
            _ => {}
        }
    }
    FlagsStmt { name: name.expect("group name"), fields, members, line, column, text }
}

/// Parses a stand-alone condition (the `when:` of a YAML entry). `line`/`column` are
/// where the condition text starts, so errors point into the YAML file.
pub fn parse_condition(text: &str, file: &str, line: usize, column: usize) -> Result<Condition, DescError> {
    let mut pairs = RuleParser::parse(Rule::condition_only, text).map_err(|e| {
        let mut err = syntax_error(e, file, text);
        err.column += column.saturating_sub(1);
        err.line = line;
        err
    })?;
    let mut cond = parse_expr(pairs.next().expect("condition").into_inner().next().expect("expr"));
    shift_condition(&mut cond, line, column);
    Ok(cond)
}

fn shift_condition(cond: &mut Condition, line: usize, column: usize) {
    match cond {
        Condition::Atom(name) => {
            name.column += column.saturating_sub(1);
            name.line = line;
        }
        Condition::Not(inner) => shift_condition(inner, line, column),
        Condition::And(items) | Condition::Or(items) => {
            for c in items {
                shift_condition(c, line, column)
            }
        }
    }
}

fn collapse(text: &str) -> String {
    let without_comments: Vec<&str> =
        text.lines().map(|l| l.split('#').next().unwrap_or("")).collect();
    without_comments.join(" ").split_whitespace().collect::<Vec<_>>().join(" ")
}

fn names(list: Pair<'_, Rule>) -> Vec<Name> {
    list.into_inner().filter(|p| matches!(p.as_rule(), Rule::ident | Rule::set_ref)).map(|p| Name::from_pair(&p)).collect()
}

fn parse_action(pair: Pair<'_, Rule>) -> ActionSpec {
    let inner = pair.into_inner().next().expect("action alternative");
    let arg = |p: Pair<'_, Rule>| p.into_inner().next().map(|a| Name::from_pair(&a));
    match inner.as_rule() {
        Rule::legal => ActionSpec::Legal,
        Rule::expand => ActionSpec::Expand,
        Rule::custom => ActionSpec::Custom(arg(inner).expect("hook name")),
        Rule::libcall => ActionSpec::LibCall(arg(inner).expect("function name")),
        Rule::promote => ActionSpec::Promote(arg(inner)),
        other => unreachable!("unexpected action {other:?}"),
    }
}

fn parse_expr(pair: Pair<'_, Rule>) -> Condition {
    match pair.as_rule() {
        Rule::expr => {
            let mut terms: Vec<Condition> = pair.into_inner().map(parse_expr).collect();
            if terms.len() == 1 { terms.pop().expect("one term") } else { Condition::Or(terms) }
        }
        Rule::term => {
            let mut factors: Vec<Condition> = pair.into_inner().map(parse_expr).collect();
            if factors.len() == 1 { factors.pop().expect("one factor") } else { Condition::And(factors) }
        }
        Rule::factor => parse_expr(pair.into_inner().next().expect("factor content")),
        Rule::negation => Condition::Not(Box::new(parse_expr(pair.into_inner().next().expect("negated")))),
        Rule::ident => Condition::Atom(Name::from_pair(&pair)),
        other => unreachable!("unexpected condition node {other:?}"),
    }
}

fn describe(grammar_rule: &Rule) -> &'static str {
    match grammar_rule {
        Rule::ident => "a name",
        Rule::set_ref => "a set name (`$name`)",
        Rule::name_list => "a list of names",
        Rule::action | Rule::legal | Rule::expand | Rule::custom | Rule::libcall | Rule::promote => {
            "an action (`legal`, `expand`, `custom(hook)`, `libcall(function)`, `promote`)"
        }
        Rule::kw_set | Rule::set_stmt => "`set`",
        Rule::kw_default | Rule::default_stmt => "`default`",
        Rule::kw_condcode | Rule::cc_rule => "`condcode`",
        Rule::kw_promotion | Rule::kw_fsincos | Rule::one_dim_rule => "`promotion` or `fsincos`",
        Rule::kw_when | Rule::condition => "`when`",
        Rule::kw_pattern | Rule::pattern_stmt => "`pattern`",
        Rule::kw_flags | Rule::flags_stmt => "`flags`",
        Rule::pattern_op => "an opcode with flags (`ATOMIC_LOAD_ADD.$scope`)",
        Rule::field_list => "field names `(NAME, ...)`",
        Rule::flag_member => "a flag member (`FLAG: \"TEXT\"`)",
        Rule::flag_texts => "a quoted text or a list `(\"TEXT\", ...)`",
        Rule::template => "a quoted template",
        Rule::for_clause | Rule::kw_for => "`for (TYPE: SUFFIX, ...)`",
        Rule::binding => "`TYPE: SUFFIX`",
        Rule::suffix => "a suffix",
        Rule::pattern_args | Rule::pattern_arg => "pattern operands",
        Rule::pattern_node => "a nested node `OPCODE(OPERANDS)`",
        Rule::arrow => "`->`",
        Rule::result_list => "a result list `(TYPE, TYPE)`",
        Rule::expr | Rule::term | Rule::factor | Rule::negation => "a condition",
        Rule::EOI => "end of file",
        Rule::comma => "`,`",
        Rule::colon => "`:`",
        Rule::semi => "`;`",
        Rule::equals => "`=`",
        _ => "a statement",
    }
}

fn syntax_error(err: pest::error::Error<Rule>, file: &str, text: &str) -> DescError {
    let (line, column) = match err.line_col {
        pest::error::LineColLocation::Pos(p) => p,
        pest::error::LineColLocation::Span(p, _) => p,
    };
    let position = match err.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((p, _)) => p,
    };
    let mut expected: Vec<&str> = Vec::new();
    let mut wants_punctuation = false;
    if let pest::error::ErrorVariant::ParsingError { positives, .. } = &err.variant {
        for expected_rule in positives {
            wants_punctuation |= matches!(expected_rule, Rule::comma | Rule::colon | Rule::semi | Rule::equals);
            let d = describe(expected_rule);
            if !expected.contains(&d) {
                expected.push(d);
            }
        }
    }
    if expected.is_empty() {
        expected.push("a statement");
    }
    let rest = &text[position.min(text.len())..];
    // A missing `;` or `,` belongs right after the previous token, not at the start of
    // whatever follows (often on the next line).
    let (line, column) = if wants_punctuation {
        let before = &text[..position.min(text.len())];
        let end = before.trim_end().len();
        let line = before[..end].matches('\n').count() + 1;
        let column = before[..end].rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, column)
    } else {
        (line, column)
    };
    let found = match rest.split(|c: char| c.is_whitespace() || c == ';' || c == ',').find(|s| !s.is_empty()) {
        Some(token) => format!("`{token}`"),
        None if rest.trim().is_empty() => "end of file".to_string(),
        None => format!("`{}`", rest.chars().next().unwrap_or(' ')),
    };
    DescError::new(
        DescErrorKind::RuleSyntax { expected: expected.join(" or "), found },
        file,
        line,
        column,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_statement_form() {
        let src = "# comment\nset $int = i16, i32;\ndefault expand;\ndefault condcode legal;\n\
                   legal ADD, SUB : $int;\npromote(f32) FADD : f16 when !f16_math & sm_50;\n\
                   custom(hook) LOAD : v2f16 when (a | b) & !c;\nlibcall(__nv_fmodf) FREM : f32;\n\
                   condcode expand ueq : i32;\npromotion promote CTLZ, CTTZ;\nfsincos expand FSINCOS;\n";
        let stmts = parse_file(src, "x.rules").unwrap();
        assert_eq!(stmts.len(), 10);
        match &stmts[4] {
            Statement::Rule(r) => {
                assert_eq!(r.action, ActionSpec::Promote(Some(Name { text: "f32".into(), line: 6, column: 9 })));
                assert_eq!(r.line, 6);
                assert!(matches!(r.condition, Some(Condition::And(_))));
            }
            other => panic!("unexpected {other:?}"),
        }
        match &stmts[8] {
            Statement::Rule(r) => assert_eq!(r.table, RuleTable::Promotion),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn pattern_operands_nest() {
        let src = "pattern MADW : ADD(MUL(shared SIGN_EXTEND(a: i32): i64, b: imm.i64.s32), c) -> i64 = \"mad.wide.s32 {d}, {a}, {b}, {c}\";\n";
        let stmts = parse_file(src, "x.rules").unwrap();
        let Statement::Pattern(p) = &stmts[0] else { panic!("{stmts:?}") };
        assert_eq!(p.opcode.text, "ADD");
        let [PatternArg::Node(mul), PatternArg::Leaf(c, None)] = p.args.as_slice() else { panic!("{:?}", p.args) };
        assert_eq!((mul.opcode.text.as_str(), mul.shared, mul.ty.is_none(), c.text.as_str()), ("MUL", false, true, "c"));
        let [PatternArg::Node(ext), PatternArg::Leaf(b, Some(kind))] = mul.args.as_slice() else { panic!("{:?}", mul.args) };
        assert_eq!((b.text.as_str(), kind.text.as_str()), ("b", "imm.i64.s32"));
        assert!(ext.shared);
        assert_eq!((ext.opcode.text.as_str(), ext.ty.as_ref().map(|t| t.text.as_str())), ("SIGN_EXTEND", Some("i64")));
        assert_eq!((ext.opcode.line, ext.opcode.column), (1, 31));
        // A leaf may still be called `shared`.
        let stmts = parse_file("pattern X : ADD(shared, b) = \"\";", "x.rules").unwrap();
        let Statement::Pattern(p) = &stmts[0] else { panic!() };
        assert!(matches!(&p.args[0], PatternArg::Leaf(n, None) if n.text == "shared"));
    }

    #[test]
    fn a_misspelt_action_is_a_located_syntax_error() {
        let err = parse_file("legal ADD : i32;\nlegall SUB : i32;\n", "x.rules").unwrap_err();
        assert_eq!((err.line, err.column), (2, 1));
        let msg = err.to_string();
        assert!(msg.contains("expected") && msg.contains("found `legall`"), "{msg}");
    }

    #[test]
    fn a_missing_semicolon_is_reported() {
        let err = parse_file("legal ADD : i32\nlegal SUB : i32;\n", "x.rules").unwrap_err();
        // Reported right after `i32`, where the `;` belongs.
        assert_eq!((err.line, err.column), (1, 16), "{err}");
        assert!(err.to_string().contains("`;`") && err.to_string().contains("found `legal`"), "{err}");
    }
}
