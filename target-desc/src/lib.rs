//! The target description language and its loader.
//!
//! A target description is a directory (for NVPTX, `target-desc/nvptx/`) holding a
//! `target.yaml` manifest, YAML files for structured data (value types, register
//! classes, opcodes, condition codes, intrinsics, SM generations and features, knobs,
//! rematerialization and scheduling data) and `.rules` files in a small DSL for
//! legality. [`load_dir`] validates all of it and resolves the rules into
//! [`tables::TargetTables`]: the per-SM action tables of
//! `cicc-type-legalization.txt`, each entry with the file and line that decided it.
//!
//! The proc macro in `codegen-macros` calls the same [`build::build`] at compile time
//! and prints the result as static data, so compiled-in and runtime-loaded tables are
//! the same by construction (and a test checks it).

pub mod build;
pub mod error;
pub mod rules;
pub mod signature;
pub mod syntax;
pub mod tables;
pub mod yaml_lines;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use build::SourceFile;
pub use error::{DescError, DescErrorKind, DescResult};
pub use tables::TargetTables;

/// Re-exported so generated tables need only `target_desc` as a dependency.
pub use phf;

/// A loaded description and the files it was read from.
pub struct Loaded {
    pub tables: TargetTables,
    /// Absolute paths of every file read, manifest first (for rebuild tracking).
    pub paths: Vec<PathBuf>,
}

/// Loads the description in `dir`. `display_prefix` is how `dir` is shown in
/// provenance and errors (`target-desc/nvptx`); file paths are shown relative to it.
pub fn load_dir(dir: &Path, display_prefix: &str) -> DescResult<Loaded> {
    let display = |name: &str| {
        if display_prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}/{}", display_prefix.trim_end_matches('/'), name)
        }
    };
    let read = |name: &str| -> DescResult<(SourceFile, PathBuf)> {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            let reason = match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_string(),
                _ => e.to_string(),
            };
            DescError::new(DescErrorKind::Io(format!("`{name}`: {reason}")), &display(name), 1, 1)
        })?;
        Ok((SourceFile { display: display(name), text: Arc::from(text) }, path))
    };
    let (manifest, manifest_path) = read("target.yaml")?;
    let parsed: syntax::Manifest = serde_yaml::from_str(&manifest.text).map_err(|e| {
        let (line, column) = build::clamp_position(&manifest.text, e.location().map(|l| (l.line(), l.column())).unwrap_or((1, 1)));
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        DescError { kind: DescErrorKind::Yaml(message), file: manifest.display.clone(), line, column, text: Some(manifest.text.clone()) }
    })?;
    let mut files = Vec::new();
    let mut paths = vec![manifest_path];
    let lines = yaml_lines::item_lines(&manifest.text, &["files"]);
    for (i, name) in parsed.files.iter().enumerate() {
        let (file, path) = read(name).map_err(|mut e| {
            // Point at the manifest entry that names the missing file.
            e.file = manifest.display.clone();
            e.line = lines.get(i).copied().unwrap_or(1);
            e.column = yaml_lines::find_token(&manifest.text, e.line, 1, name).1;
            e.text = Some(manifest.text.clone());
            e
        })?;
        files.push(file);
        paths.push(path);
    }
    let tables = build::build(manifest, files)?;
    Ok(Loaded { tables, paths })
}
