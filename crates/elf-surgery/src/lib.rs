//! Reads ELF facts and edits search paths in process, verified before anything is written.
//!
//! Built by its own issue; this crate has no public API yet.
