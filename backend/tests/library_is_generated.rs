//! The f64 math functions of `target-desc/nvptx/library.mir` and its 2/pi table are the
//! output of `scripts/gen-library-math.py` (their constants are computed there, in
//! 60- and 400-digit decimals): the file must hold exactly what the script prints, so
//! an edit by hand or a change to the script alone fails here. Needs python3, which
//! under `CI` is a failure when missing.

use std::path::Path;
use std::process::Command;

fn run_script(args: &[&str]) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = match Command::new("python3").arg(root.join("scripts/gen-library-math.py")).args(args).output() {
        Ok(o) => o,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "python3 is needed to check library.mir against its generator: {e}");
            eprintln!("python3 not found ({e}); skipping");
            return None;
        }
    };
    assert!(output.status.success(), "gen-library-math.py {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
    Some(String::from_utf8(output.stdout).unwrap())
}

#[test]
fn library_math_is_what_the_generator_prints() {
    let library = backend::legalize::library::LIBRARY;
    let Some(functions) = run_script(&[]) else { return };
    let Some(globals) = run_script(&["--globals"]) else { return };
    let start = library.find("# exp2 in f64").expect("library.mir has no generated section");
    assert_eq!(library[start..].trim_end(), functions.trim_end(), "library.mir's functions differ from `python3 scripts/gen-library-math.py`");
    assert!(library.contains(globals.trim_end()), "library.mir's module globals differ from `python3 scripts/gen-library-math.py --globals`");
}
