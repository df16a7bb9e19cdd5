//! Holds no code: the trybuild cases are in `ui/`, run by `tests/compile_errors.rs`.
