//! `target_tables!`: loads a target description at compile time and emits its tables.
//!
//! The macro calls `target_desc::load_dir`, the same loader `ptxc --target-desc` uses at
//! run time, and prints the resulting [`TargetTables`] as plain `static` items:
//! byte-string arrays for the per-SM action tables, slices of struct literals for
//! everything else, and `phf` maps for every name-to-id lookup. It also emits
//! `include_bytes!` of each description file so Cargo rebuilds when one changes, and
//! associated constants (`Opcode::FADD`, `Vt::V2F16`, ...) for a typed API.
//!
//! An invalid description becomes a `compile_error!` that names the description file,
//! line and column, shows the line, and says what is wrong.
//!
//! Usage: `codegen_macros::target_tables!("target-desc/nvptx");` where the path is
//! relative to the workspace root (found by walking up from the invoking crate).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use proc_macro::TokenStream;
use proc_macro2::{Literal, Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use target_desc::tables::*;

#[proc_macro]
pub fn target_tables(input: TokenStream) -> TokenStream {
    let literal = match syn::parse::<syn::LitStr>(input) {
        Ok(l) => l,
        Err(e) => return e.to_compile_error().into(),
    };
    let relative = literal.value();
    let Some(dir) = find_description(&relative) else {
        let message = format!(
            "cannot find target description `{relative}` (looked for `{relative}/target.yaml` in the invoking crate's directory and its ancestors)"
        );
        return syn::Error::new(literal.span(), message).to_compile_error().into();
    };
    match target_desc::load_dir(&dir, &relative) {
        Ok(loaded) => Emitter::default().emit(&loaded.tables, &loaded.paths).into(),
        Err(error) => {
            // Track the files even on error, so fixing one triggers a rebuild.
            let mut tokens = syn::Error::new(literal.span(), render_error(&error)).to_compile_error();
            tokens.extend(track_files(&description_files(&dir)));
            tokens.into()
        }
    }
}

fn find_description(relative: &str) -> Option<PathBuf> {
    let start = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").ok()?);
    start.ancestors().map(|a| a.join(relative)).find(|p| p.join("target.yaml").is_file())
}

fn description_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn track_files(paths: &[PathBuf]) -> Tokens {
    let includes = paths.iter().map(|p| {
        let path = p.to_string_lossy().to_string();
        quote! { const _: &[u8] = include_bytes!(#path); }
    });
    quote! { #(#includes)* }
}

/// `file:line:col: message`, then the source line with a caret under the column.
fn render_error(error: &target_desc::DescError) -> String {
    let mut out = format!("invalid target description: {error}");
    if let Some(text) = &error.text {
        if let Some(line) = text.lines().nth(error.line.saturating_sub(1)) {
            let number = error.line.to_string();
            let pad = " ".repeat(number.len());
            let caret = format!("{}^", " ".repeat(error.column.saturating_sub(1)));
            out.push_str(&format!("\n{pad} |\n{number} | {line}\n{pad} | {caret}"));
        }
    }
    out
}

fn lit_str(s: &str) -> Literal {
    Literal::string(s)
}

fn opt_str(s: Option<&str>) -> Tokens {
    match s {
        Some(s) => quote! { ::core::option::Option::Some(#s) },
        None => quote! { ::core::option::Option::None },
    }
}

fn source(s: &SourceLoc) -> Tokens {
    let (file, line) = (s.file, s.line);
    quote! { ::target_desc::tables::SourceLoc { file: #file, line: #line } }
}

fn strs(items: &[&str]) -> Tokens {
    quote! { &[#(#items),*] }
}

fn u8s(items: &[u8]) -> Tokens {
    let items = items.iter().map(|i| Literal::u8_unsuffixed(*i));
    quote! { &[#(#items),*] }
}

fn u16s(items: &[u16]) -> Tokens {
    let items = items.iter().map(|i| Literal::u16_unsuffixed(*i));
    quote! { &[#(#items),*] }
}

fn pairs_u32_u16(items: &[(u32, u16)]) -> Tokens {
    let items = items.iter().map(|(a, b)| {
        let (a, b) = (Literal::u32_unsuffixed(*a), Literal::u16_unsuffixed(*b));
        quote! { (#a, #b) }
    });
    quote! { &[#(#items),*] }
}

fn type_class(c: TypeClass) -> Tokens {
    let name = format_ident!("{}", format!("{c:?}"));
    quote! { ::target_desc::tables::TypeClass::#name }
}

fn operand(o: &SigOperand) -> Tokens {
    let kind = match o.kind {
        OperandKind::TypeVar(i) => quote! { TypeVar(#i) },
        OperandKind::Fixed(t) => quote! { Fixed(#t) },
        OperandKind::Imm => quote! { Imm },
        OperandKind::FloatImm => quote! { FloatImm },
        OperandKind::CondCode => quote! { CondCode },
        OperandKind::Block => quote! { Block },
        OperandKind::Symbol => quote! { Symbol },
        OperandKind::ShuffleMask => quote! { ShuffleMask },
    };
    let (variadic, optional) = (o.variadic, o.optional);
    quote! {
        ::target_desc::tables::SigOperand {
            kind: ::target_desc::tables::OperandKind::#kind, variadic: #variadic, optional: #optional
        }
    }
}

fn signature(s: &Signature) -> Tokens {
    let text = s.text;
    let vars = s.type_vars.iter().map(|v| {
        let name = v.name;
        let class = type_class(v.class);
        quote! { ::target_desc::tables::TypeVar { name: #name, class: #class } }
    });
    let operands = s.operands.iter().map(operand);
    let results = s.results.iter().map(operand);
    quote! {
        ::target_desc::tables::Signature {
            text: #text,
            type_vars: &[#(#vars),*],
            operands: &[#(#operands),*],
            results: &[#(#results),*],
        }
    }
}

fn action(a: Action) -> Tokens {
    let name = format_ident!("{}", a.name());
    quote! { ::target_desc::tables::Action::#name }
}

fn detail(d: &ActionDetail) -> Tokens {
    match d {
        ActionDetail::CustomHook(h) => quote! { ::target_desc::tables::ActionDetail::CustomHook(#h) },
        ActionDetail::LibCall(f) => quote! { ::target_desc::tables::ActionDetail::LibCall(#f) },
        ActionDetail::PromoteTo(t) => quote! { ::target_desc::tables::ActionDetail::PromoteTo(#t) },
    }
}

fn knob_value(v: &KnobValue) -> Tokens {
    match v {
        KnobValue::Bool(b) => quote! { ::target_desc::tables::KnobValue::Bool(#b) },
        KnobValue::Int(i) => {
            let i = Literal::i64_unsuffixed(*i);
            quote! { ::target_desc::tables::KnobValue::Int(#i) }
        }
        KnobValue::Str(s) => quote! { ::target_desc::tables::KnobValue::Str(#s) },
        KnobValue::List(items) => {
            let items = strs(items);
            quote! { ::target_desc::tables::KnobValue::List(#items) }
        }
    }
}

/// A Rust identifier for a description name: `v2f16` -> `V2F16`,
/// `nv-remat-max-times` -> `NV_REMAT_MAX_TIMES`.
fn const_ident(name: &str) -> syn::Ident {
    let mut s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    syn::Ident::new(&s, Span::call_site())
}

/// Emits byte tables once each; SMs with identical tables share one array.
#[derive(Default)]
struct Emitter {
    byte_arrays: Vec<Tokens>,
    byte_array_ids: HashMap<Vec<u8>, syn::Ident>,
}

impl Emitter {
    fn bytes(&mut self, kind: &str, sm: &str, data: &[u8]) -> Tokens {
        if let Some(ident) = self.byte_array_ids.get(data) {
            return quote! { &#ident };
        }
        let ident = format_ident!("{}_{}", kind, const_ident(sm).to_string().trim_start_matches('_'));
        let len = data.len();
        let literal = Literal::byte_string(data);
        let doc = format!("{kind} bytes, first used by {sm}");
        self.byte_arrays.push(quote! {
            #[doc = #doc]
            static #ident: [u8; #len] = *#literal;
        });
        self.byte_array_ids.insert(data.to_vec(), ident.clone());
        quote! { &#ident }
    }

    fn name_map(name: &str, entries: Vec<(&'static str, u16)>) -> (syn::Ident, Tokens) {
        let ident = format_ident!("{}_NAMES", name);
        let mut map = phf_codegen::Map::new();
        let values: Vec<String> = entries.iter().map(|(_, v)| format!("{v}u16")).collect();
        for ((key, _), value) in entries.iter().zip(&values) {
            map.entry(*key, value);
        }
        // phf_codegen names the crate `::phf`; the generated code reaches it through
        // `target_desc` so invoking crates need no phf dependency of their own.
        let code = map.build().to_string().replace("::phf::", "::target_desc::phf::");
        let code: Tokens = code.parse().expect("phf_codegen emits valid Rust");
        (ident.clone(), quote! { pub static #ident: ::target_desc::phf::Map<&'static str, u16> = #code; })
    }

    fn emit(mut self, t: &TargetTables, paths: &[PathBuf]) -> Tokens {
        let target = t.target;
        let files = strs(t.files);
        let vt_slots = t.vt_slots;

        let types = t.types.iter().map(|ty| {
            let (id, name, bits, elem, lanes, addrspace, writable, generic, kernel_args, mantissa) = (ty.id, ty.name, ty.bits, ty.elem, ty.lanes, ty.addrspace, ty.writable, ty.generic, ty.kernel_args, ty.mantissa);
            let kind = format_ident!("{}", format!("{:?}", ty.kind));
            let src = source(&ty.source);
            quote! {
                ::target_desc::tables::TypeInfo {
                    id: #id, name: #name, kind: ::target_desc::tables::TypeKind::#kind, bits: #bits,
                    elem: #elem, lanes: #lanes, addrspace: #addrspace, writable: #writable, generic: #generic, kernel_args: #kernel_args, mantissa: #mantissa, source: #src,
                }
            }
        });
        let opcode_slots = target_desc::tables::opcode_slots(t.opcodes);
        let opcodes = t.opcodes.iter().map(|o| {
            let (id, name, props) = (o.id, o.name, o.props);
            let sig = signature(&o.signature);
            let cats = u8s(o.categories);
            let flags = strs(o.flags);
            let type_operand = match o.type_operand {
                Some(i) => quote! { ::core::option::Option::Some(#i) },
                None => quote! { ::core::option::Option::None },
            };
            let src = source(&o.source);
            quote! {
                ::target_desc::tables::OpcodeInfo {
                    id: #id, name: #name, signature: #sig, props: #props, categories: #cats,
                    flags: #flags, type_operand: #type_operand, source: #src,
                }
            }
        });
        let categories = t.categories.iter().map(|c| {
            let (name, help) = (c.name, c.help);
            let src = source(&c.source);
            quote! { ::target_desc::tables::CategoryInfo { name: #name, help: #help, source: #src } }
        });
        let cond_codes = t.cond_codes.iter().map(|c| {
            let (id, name) = (c.id, c.name);
            let (int_form, float_form, int_type) = (opt_str(c.int_form), opt_str(c.float_form), opt_str(c.int_type));
            let src = source(&c.source);
            quote! {
                ::target_desc::tables::CondCodeInfo {
                    id: #id, name: #name, int_form: #int_form, float_form: #float_form, int_type: #int_type, source: #src,
                }
            }
        });
        let ptx_isa = t.ptx_isa.iter().map(|r| {
            let (insn, sm, ptx) = (r.insn, r.sm, r.ptx);
            let src = source(&r.source);
            quote! { ::target_desc::tables::PtxRequirementInfo { insn: #insn, sm: #sm, ptx: #ptx, source: #src } }
        });
        let intrinsics = t.intrinsics.iter().map(|i| {
            let (name, props) = (i.name, i.props);
            let sig = signature(&i.signature);
            let src = source(&i.source);
            quote! { ::target_desc::tables::IntrinsicInfo { name: #name, signature: #sig, props: #props, source: #src } }
        });
        let classes = t.register_classes.iter().map(|c| {
            let (name, prefix, ptx_type, weight, storage_only) = (c.name, c.prefix, c.ptx_type, c.pressure_weight, c.storage_only);
            let members = u8s(c.members);
            let member_ptx = u16s(c.member_ptx);
            let read_as = u8s(c.read_as);
            let src = source(&c.source);
            let param_carrier = match c.param_carrier {
                Some(t) => quote! { Some(#t) },
                None => quote! { None },
            };
            let pressure_limit = match c.pressure_limit {
                Some(l) => quote! { Some(#l) },
                None => quote! { None },
            };
            quote! {
                ::target_desc::tables::RegisterClassInfo {
                    name: #name, prefix: #prefix, ptx_type: #ptx_type, members: #members, member_ptx: #member_ptx,
                    pressure_weight: #weight, storage_only: #storage_only, param_carrier: #param_carrier, pressure_limit: #pressure_limit, read_as: #read_as, source: #src,
                }
            }
        });
        let features = t.features.iter().map(|f| {
            let (name, help, min_ptx) = (f.name, f.help, f.min_ptx);
            let src = source(&f.source);
            quote! { ::target_desc::tables::FeatureInfo { name: #name, help: #help, min_ptx: #min_ptx, source: #src } }
        });
        let knobs = t.knobs.iter().map(|k| {
            let (name, help, component) = (k.name, k.help, k.component);
            let default = knob_value(&k.default);
            let choices = strs(k.choices);
            let src = source(&k.source);
            quote! {
                ::target_desc::tables::KnobInfo {
                    name: #name, default: #default, choices: #choices, help: #help,
                    component: #component, source: #src,
                }
            }
        });
        let rules = t.rules.iter().map(|r| {
            let text = lit_str(r.text);
            let src = source(&r.source);
            quote! { ::target_desc::tables::RuleInfo { source: #src, text: #text } }
        });
        let sms: Vec<Tokens> = t
            .sms
            .iter()
            .map(|sm| {
                let (name, min_ptx) = (sm.name, sm.min_ptx);
                let implies = u8s(sm.implies);
                let feats = u8s(sm.features);
                let src = source(&sm.source);
                let actions = self.bytes("ACTIONS", sm.name, sm.actions);
                let type_class = self.bytes("TYPE_CLASS", sm.name, sm.type_class);
                let promotion = self.bytes("PROMOTION", sm.name, sm.promotion);
                let fsincos = self.bytes("FSINCOS", sm.name, sm.fsincos);
                let details = sm.action_details.iter().map(|(cell, d)| {
                    let cell = Literal::u32_unsuffixed(*cell);
                    let d = detail(d);
                    quote! { (#cell, #d) }
                });
                let action_sources = pairs_u32_u16(sm.action_sources);
                let type_sources = sm.type_sources.iter().map(|(vt, r)| {
                    let (vt, r) = (Literal::u8_unsuffixed(*vt), Literal::u16_unsuffixed(*r));
                    quote! { (#vt, #r) }
                });
                let one_dim_sources = pairs_u32_u16(sm.one_dim_sources);
                let cc_actions = sm.cc_actions.iter().map(|w| Literal::u32_unsuffixed(*w));
                let cc_sources = pairs_u32_u16(sm.cc_sources);
                let occupancy = match &sm.occupancy {
                    None => quote! { None },
                    Some(o) => {
                        let (name, src) = (o.name, source(&o.source));
                        let (a, b, c, d, e, f, g, h) = (o.regs_per_sm, o.regs_per_block, o.max_regs_per_thread, o.reg_alloc_unit, o.sub_partitions, o.max_warps_per_sm, o.max_blocks_per_sm, o.max_threads_per_block);
                        quote! { Some(::target_desc::tables::OccupancyInfo {
                            name: #name, regs_per_sm: #a, regs_per_block: #b, max_regs_per_thread: #c, reg_alloc_unit: #d,
                            sub_partitions: #e, max_warps_per_sm: #f, max_blocks_per_sm: #g, max_threads_per_block: #h, source: #src,
                        }) }
                    }
                };
                let latencies = sm.latencies.iter().map(|c| {
                    let (latency, issue, src) = (c.latency, c.issue, source(&c.source));
                    quote! { ::target_desc::tables::SchedCost { latency: #latency, issue: #issue, source: #src } }
                });
                quote! {
                    ::target_desc::tables::SmTables {
                        name: #name,
                        min_ptx: #min_ptx,
                        implies: #implies,
                        features: #feats,
                        source: #src,
                        actions: #actions,
                        action_details: &[#(#details),*],
                        action_sources: #action_sources,
                        type_class: #type_class,
                        type_sources: &[#(#type_sources),*],
                        promotion: #promotion,
                        fsincos: #fsincos,
                        one_dim_sources: #one_dim_sources,
                        cc_actions: &[#(#cc_actions),*],
                        cc_sources: #cc_sources,
                        occupancy: #occupancy,
                        latencies: &[#(#latencies),*],
                    }
                }
            })
            .collect();
        let remat = {
            let r = &t.remat;
            let (cats, ops, knobs) = (u8s(r.excluded_categories), u16s(r.excluded_opcodes), u16s(r.knobs));
            let src = source(&r.source);
            quote! {
                ::target_desc::tables::RematInfo {
                    excluded_categories: #cats, excluded_opcodes: #ops, knobs: #knobs, source: #src,
                }
            }
        };
        let scheduling = {
            let s = &t.scheduling;
            let priorities = s.priorities.iter().map(|p| {
                let (name, start, end, priority, window) = (p.name, p.start, p.end, p.priority, p.window);
                let cats = u8s(p.categories);
                let src = source(&p.source);
                quote! {
                    ::target_desc::tables::PriorityEntry {
                        name: #name, start: #start, end: #end, priority: #priority, window: #window,
                        categories: #cats, source: #src,
                    }
                }
            });
            let classes = s.latency_classes.iter().map(|c| {
                let (name, latency, issue, unit) = (c.name, c.latency, c.issue, c.unit);
                let (cats, types, spaces) = (u8s(c.categories), u8s(c.types), u8s(c.spaces));
                let src = source(&c.source);
                quote! { ::target_desc::tables::LatencyClass {
                    name: #name, latency: #latency, issue: #issue, unit: #unit, categories: #cats, types: #types, spaces: #spaces, source: #src,
                } }
            });
            let units = s.units.iter();
            let default_class = s.default_latency_class;
            let issue_width = s.issue_width;
            let knobs = u16s(s.knobs);
            quote! {
                ::target_desc::tables::SchedulingInfo {
                    priorities: &[#(#priorities),*],
                    latency_classes: &[#(#classes),*],
                    issue_width: #issue_width,
                    units: &[#(#units),*],
                    default_latency_class: #default_class,
                    knobs: #knobs,
                }
            }
        };
        let patterns = t.patterns.iter().map(|p| {
            let (name, opcode, template, suffix, priority, rule, min_ptx) = (p.name, p.opcode, p.template, p.suffix, p.priority, p.rule, p.min_ptx);
            let sms = Literal::u128_unsuffixed(p.sms);
            let flags = strs(p.flags);
            let operands = p.operands.iter().map(|(n, o)| {
                let o = match o {
                    PatternOperand::Reg(t) => quote! { Reg(#t) },
                    PatternOperand::Imm(t) => quote! { Imm(#t) },
                    PatternOperand::Literal => quote! { Literal },
                    PatternOperand::CondCode => quote! { CondCode },
                    PatternOperand::Block => quote! { Block },
                    PatternOperand::Symbol => quote! { Symbol },
                    PatternOperand::SymbolIs(name) => quote! { SymbolIs(#name) },
                    PatternOperand::Values => quote! { Values },
                    PatternOperand::Flag => quote! { Flag },
                    PatternOperand::LiteralIs(n) => quote! { LiteralIs(#n) },
                    PatternOperand::ImmIs(t, n) => quote! { ImmIs(#t, #n) },
                    PatternOperand::ImmRange(t, min, max) => quote! { ImmRange(#t, #min, #max) },
                    PatternOperand::LowMask(t) => quote! { LowMask(#t) },
                };
                quote! { (#n, ::target_desc::tables::PatternOperand::#o) }
            });
            let results = p.results.iter().map(|r| match r {
                PatternResult::Reg(t) => quote! { ::target_desc::tables::PatternResult::Reg(#t) },
                PatternResult::Flag => quote! { ::target_desc::tables::PatternResult::Flag },
            });
            let nodes = p.nodes.iter().map(|n| {
                let (opcode, flags, shared) = (n.opcode, strs(n.flags), n.shared);
                let ty = match n.ty {
                    Some(t) => quote! { ::core::option::Option::Some(#t) },
                    None => quote! { ::core::option::Option::None },
                };
                let args = n.args.iter().map(|a| match a {
                    NodeArg::Leaf(k) => quote! { ::target_desc::tables::NodeArg::Leaf(#k) },
                    NodeArg::Node(k) => quote! { ::target_desc::tables::NodeArg::Node(#k) },
                });
                quote! { ::target_desc::tables::PatternNode { opcode: #opcode, flags: #flags, ty: #ty, args: &[#(#args),*], shared: #shared } }
            });
            let any_results = p.any_results;
            let kernel_only = p.kernel_only;
            let hook = opt_str(p.hook);
            let flag_groups = u16s(p.flag_groups);
            quote! {
                ::target_desc::tables::PatternInfo {
                    name: #name, opcode: #opcode, flags: #flags, flag_groups: #flag_groups, operands: &[#(#operands),*], nodes: &[#(#nodes),*], results: &[#(#results),*], sms: #sms, kernel_only: #kernel_only, min_ptx: #min_ptx,
                    template: #template, any_results: #any_results, hook: #hook, suffix: #suffix, priority: #priority, rule: #rule,
                }
            }
        });
        let flag_groups = t.flag_groups.iter().map(|g| {
            let (name, fields) = (g.name, strs(g.fields));
            let members = g.members.iter().map(|m| {
                let (flag, texts, min_ptx, rule) = (m.flag, strs(m.texts), m.min_ptx, m.rule);
                let sms = Literal::u128_unsuffixed(m.sms);
                quote! { ::target_desc::tables::FlagMember { flag: #flag, texts: #texts, sms: #sms, min_ptx: #min_ptx, rule: #rule } }
            });
            quote! { ::target_desc::tables::FlagGroupInfo { name: #name, fields: #fields, members: &[#(#members),*] } }
        });
        let (default_action, default_rule) = (action(t.default_action.0), t.default_action.1);
        let (default_cc, default_cc_rule) = (action(t.default_cc_action.0), t.default_cc_action.1);

        let maps = [
            ("OPCODE", t.names.opcodes.entries()),
            ("TYPE", t.names.types.entries()),
            ("REGISTER_CLASS", t.names.register_classes.entries()),
            ("SM", t.names.sms.entries()),
            ("FEATURE", t.names.features.entries()),
            ("COND_CODE", t.names.cond_codes.entries()),
            ("INTRINSIC", t.names.intrinsics.entries()),
            ("KNOB", t.names.knobs.entries()),
            ("MACHINE_OP", t.names.machine_ops.entries()),
        ];
        let mut map_items = Vec::new();
        let mut map_idents = Vec::new();
        for (name, entries) in maps {
            let (ident, item) = Self::name_map(name, entries);
            map_items.push(item);
            map_idents.push(ident);
        }
        let [op_map, ty_map, class_map, sm_map, feat_map, cc_map, intr_map, knob_map, machine_map] =
            <[syn::Ident; 9]>::try_from(map_idents).expect("nine maps");

        let opcode_consts = t.opcodes.iter().map(|o| {
            let ident = const_ident(o.name);
            let id = o.id;
            let doc = format!("`{}` (opcode {}), {}", o.name, o.id, o.source);
            quote! { #[doc = #doc] pub const #ident: ::target_desc::tables::OpcodeId = ::target_desc::tables::OpcodeId(#id); }
        });
        let vt_consts = t.types.iter().map(|ty| {
            let ident = const_ident(ty.name);
            let id = ty.id;
            let doc = format!("`{}` (SimpleVT {}), {}", ty.name, ty.id, ty.source);
            quote! { #[doc = #doc] pub const #ident: ::target_desc::tables::VtId = ::target_desc::tables::VtId(#id); }
        });
        let cc_consts = t.cond_codes.iter().map(|c| {
            let ident = const_ident(c.name);
            let id = c.id;
            let doc = format!("`{}` (condition code {}), {}", c.name, c.id, c.source);
            quote! { #[doc = #doc] pub const #ident: ::target_desc::tables::CondCodeId = ::target_desc::tables::CondCodeId(#id); }
        });
        let knob_consts = t.knobs.iter().enumerate().map(|(i, k)| {
            let ident = const_ident(k.name);
            let i = i as u16;
            let doc = format!("`{}` (default {}): {}", k.name, k.default, k.help);
            quote! { #[doc = #doc] pub const #ident: u16 = #i; }
        });
        let byte_arrays = &self.byte_arrays;
        let tracking = track_files(paths);

        quote! {
            #tracking

            #(#byte_arrays)*

            #(#map_items)*

            /// The tables generated from the description.
            pub static TABLES: ::target_desc::tables::TargetTables = ::target_desc::tables::TargetTables {
                target: #target,
                files: #files,
                vt_slots: #vt_slots,
                types: &[#(#types),*],
                opcodes: &[#(#opcodes),*],
                opcode_slots: &[#(#opcode_slots),*],
                categories: &[#(#categories),*],
                cond_codes: &[#(#cond_codes),*],
                intrinsics: &[#(#intrinsics),*],
                register_classes: &[#(#classes),*],
                features: &[#(#features),*],
                sms: &[#(#sms),*],
                knobs: &[#(#knobs),*],
                remat: #remat,
                scheduling: #scheduling,
                rules: &[#(#rules),*],
                default_action: (#default_action, #default_rule),
                default_cc_action: (#default_cc, #default_cc_rule),
                patterns: &[#(#patterns),*],
                flag_groups: &[#(#flag_groups),*],
                ptx_isa: &[#(#ptx_isa),*],
                names: ::target_desc::tables::NameMaps {
                    opcodes: ::target_desc::tables::NameMap::Static(&#op_map),
                    types: ::target_desc::tables::NameMap::Static(&#ty_map),
                    register_classes: ::target_desc::tables::NameMap::Static(&#class_map),
                    sms: ::target_desc::tables::NameMap::Static(&#sm_map),
                    features: ::target_desc::tables::NameMap::Static(&#feat_map),
                    cond_codes: ::target_desc::tables::NameMap::Static(&#cc_map),
                    intrinsics: ::target_desc::tables::NameMap::Static(&#intr_map),
                    knobs: ::target_desc::tables::NameMap::Static(&#knob_map),
                    machine_ops: ::target_desc::tables::NameMap::Static(&#machine_map),
                },
            };

            /// Opcode ids by name: `Opcode::FADD`.
            pub struct Opcode;
            impl Opcode { #(#opcode_consts)* }

            /// Value type ids by name: `Vt::V2F16`.
            pub struct Vt;
            impl Vt { #(#vt_consts)* }

            /// Condition code ids by name: `CondCode::OLT`.
            pub struct CondCode;
            impl CondCode { #(#cc_consts)* }

            /// Knob indices (into `TABLES.knobs`) by name: `Knob::NV_REMAT_MAX_TIMES`.
            pub struct Knob;
            impl Knob { #(#knob_consts)* }
        }
    }
}
