//! Code-generation options: the optimization level (`-O0` to `-O3`, as llc) and the
//! knob settings (`--knob NAME=VALUE`), typed by the description's knob registry
//! (target-desc/nvptx/knobs.yaml, named after CICC's knobs in the reference notes).
//!
//! Passes read knobs by name through [`Options`]; the registry holds every name, type
//! and default, so the engine carries no NVPTX defaults. A name the registry lacks (a
//! description loaded with `--target-desc` may omit knobs) reads as unset and the
//! pass keeps its neutral behaviour.

use target_desc::tables::{KnobInfo, KnobValue, TargetTables};

/// `-O0` runs only what correctness needs; `-O3` (the default, as NVIDIA's compiler)
/// runs everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OptLevel(pub u8);

impl OptLevel {
    pub const O0: OptLevel = OptLevel(0);
    pub const O1: OptLevel = OptLevel(1);
    pub const O2: OptLevel = OptLevel(2);
    pub const O3: OptLevel = OptLevel(3);

    pub fn parse(text: &str) -> Result<OptLevel, String> {
        match text {
            "0" => Ok(OptLevel::O0),
            "1" => Ok(OptLevel::O1),
            "2" => Ok(OptLevel::O2),
            "3" => Ok(OptLevel::O3),
            _ => Err(format!("invalid optimization level `-O{text}`: expected -O0, -O1, -O2 or -O3")),
        }
    }
}

impl Default for OptLevel {
    fn default() -> OptLevel {
        OptLevel::O3
    }
}

/// The optimization level and every knob's value (the registry's default unless set).
#[derive(Clone, Debug)]
pub struct Options {
    pub opt_level: OptLevel,
    knobs: &'static [KnobInfo],
    values: Vec<KnobValue>,
    explicit: Vec<bool>,
    /// Passes to leave out of the pipeline whatever their level and knobs (for tests
    /// that check one pass at a time, and for bisecting).
    pub skip: Vec<String>,
    /// `--maxreg N`: registers per thread for every function (a kernel's own
    /// `maxnreg` is a tighter bound when smaller).
    pub maxreg: Option<u32>,
    /// Threads for the function-scoped passes (`ptxc compile -j N`); 1 runs every pass
    /// over the whole module in turn. The output is the same either way.
    pub jobs: usize,
}

/// A bad `--knob` argument, with the place in it to point at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnobError {
    /// The argument as given.
    pub argument: String,
    /// Byte range of the offending part of `argument`.
    pub span: (usize, usize),
    pub message: String,
    pub help: Option<String>,
}

impl KnobError {
    /// `error: ...` with the argument shown and the bad part underlined.
    pub fn render(&self) -> String {
        let prefix = "--knob ";
        let start = prefix.len() + self.argument[..self.span.0].chars().count();
        let width = self.argument[self.span.0..self.span.1].chars().count().max(1);
        let mut out = format!(
            "error: {}\n  --> command line: --knob {}, column {}\n   |\n   | {prefix}{}\n   | {}{}\n",
            self.message,
            self.argument,
            self.span.0 + 1,
            self.argument,
            " ".repeat(start),
            "^".repeat(width)
        );
        if let Some(help) = &self.help {
            out.push_str(&format!("   = help: {help}\n"));
        }
        out
    }
}

impl Options {
    /// Every knob at its registry default, at `level`.
    pub fn new(tables: &TargetTables, opt_level: OptLevel) -> Options {
        Options { opt_level, knobs: tables.knobs, values: tables.knobs.iter().map(|k| k.default.clone()).collect(), explicit: vec![false; tables.knobs.len()], skip: Vec::new(), maxreg: None, jobs: 1 }
    }

    /// The registry the values are typed by.
    pub fn knobs(&self) -> &'static [KnobInfo] {
        self.knobs
    }

    /// Applies one `NAME=VALUE` assignment, typed by the registry.
    pub fn set(&mut self, argument: &str) -> Result<(), KnobError> {
        let err = |span: (usize, usize), message: String, help: Option<String>| KnobError { argument: argument.to_string(), span, message, help };
        let Some((name, value)) = argument.split_once('=') else {
            let help = Some("write --knob NAME=VALUE; `ptxc knobs` lists the names".to_string());
            return Err(err((argument.len(), argument.len()), format!("expected `=` and a value after the knob name, found the end of `{argument}`"), help));
        };
        let name_span = (0, name.len());
        let value_span = (name.len() + 1, argument.len());
        let Some(index) = self.knobs.iter().position(|k| k.name == name) else {
            let close = target_desc::error::closest(name, self.knobs.iter().map(|k| k.name));
            let help = if close.is_empty() { "`ptxc knobs` lists every knob".to_string() } else { format!("the closest knobs are {}", close.join(", ")) };
            return Err(err(name_span, format!("unknown knob `{name}`"), Some(help)));
        };
        let knob = &self.knobs[index];
        let parsed = parse_value(knob, value).map_err(|expected| err(value_span, format!("knob `{name}` takes {expected}, found `{value}`"), Some(format!("default: {}; {}", knob.default, knob.help))))?;
        self.values[index] = parsed;
        self.explicit[index] = true;
        Ok(())
    }

    fn value(&self, name: &str) -> Option<&KnobValue> {
        let index = self.knobs.iter().position(|k| k.name == name)?;
        Some(&self.values[index])
    }

    /// A boolean knob's value, `None` if the registry has no such boolean knob.
    pub fn flag(&self, name: &str) -> Option<bool> {
        match self.value(name)? {
            KnobValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// An integer knob's value.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.value(name)? {
            KnobValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// A string or enum knob's value.
    pub fn string(&self, name: &str) -> Option<&str> {
        match self.value(name)? {
            KnobValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A list knob's items.
    pub fn list(&self, name: &str) -> Option<&'static [&'static str]> {
        match self.value(name)? {
            KnobValue::List(items) => Some(items),
            _ => None,
        }
    }

    /// Whether `--knob` set this knob (as opposed to its default).
    pub fn is_set(&self, name: &str) -> bool {
        self.knobs.iter().position(|k| k.name == name).is_some_and(|i| self.explicit[i])
    }
}

/// What a knob's type accepts, or the description of what it expected.
fn parse_value(knob: &KnobInfo, text: &str) -> Result<KnobValue, String> {
    match &knob.default {
        KnobValue::Bool(_) => match text {
            "true" | "1" | "on" => Ok(KnobValue::Bool(true)),
            "false" | "0" | "off" => Ok(KnobValue::Bool(false)),
            _ => Err("a boolean (true, false, 1, 0)".into()),
        },
        KnobValue::Int(_) => text.parse::<i64>().map(KnobValue::Int).map_err(|_| "an integer".into()),
        KnobValue::Str(_) if !knob.choices.is_empty() => {
            if knob.choices.contains(&text) {
                Ok(KnobValue::Str(leak(text)))
            } else {
                Err(format!("one of {}", knob.choices.join(", ")))
            }
        }
        KnobValue::Str(_) => Ok(KnobValue::Str(leak(text))),
        KnobValue::List(_) => Ok(KnobValue::List(leak_list(text.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()))),
    }
}

// Knob values live as long as the process (the registry's are `'static` too), and a
// command line sets a handful.
fn leak(text: &str) -> &'static str {
    Box::leak(text.to_string().into_boxed_str())
}

fn leak_list(items: Vec<&str>) -> &'static [&'static str] {
    Box::leak(items.into_iter().map(leak).collect::<Vec<_>>().into_boxed_slice())
}

/// The type a knob's default has, as `ptxc knobs` shows it.
pub fn type_name(knob: &KnobInfo) -> &'static str {
    match knob.default {
        KnobValue::Bool(_) => "bool",
        KnobValue::Int(_) => "int",
        KnobValue::Str(_) if !knob.choices.is_empty() => "enum",
        KnobValue::Str(_) => "string",
        KnobValue::List(_) => "list",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_are_typed_by_the_registry() {
        let mut o = Options::new(tables::nvptx(), OptLevel::O3);
        assert_eq!(o.flag("disable-machine-cse"), Some(false));
        o.set("disable-machine-cse=true").unwrap();
        assert_eq!(o.flag("disable-machine-cse"), Some(true));
        assert!(o.is_set("disable-machine-cse"));
        o.set("cssa-coalesce=0").unwrap();
        assert_eq!(o.int("cssa-coalesce"), Some(0));

        let e = o.set("cssa-coalesce=many").unwrap_err();
        assert!(e.message.contains("an integer"), "{e:?}");
        assert_eq!(&e.argument[e.span.0..e.span.1], "many");

        let e = o.set("disable-machine-cze=1").unwrap_err();
        assert!(e.help.as_deref().unwrap().contains("disable-machine-cse"), "{e:?}");
        assert_eq!(&e.argument[e.span.0..e.span.1], "disable-machine-cze");
        assert!(e.render().contains("^^^^^^^^^^^^^^^^^^^"), "{}", e.render());

        assert!(o.set("enable-machine-outliner=sometimes").unwrap_err().message.contains("one of disable, enable"));
        assert!(o.set("disable-machine-cse").unwrap_err().message.contains("expected `=`"));
    }
}
