//! Reads TheRock artifact directories and archives into a sorted, safe catalog of entries.
//!
//! Built by its own issue; this crate has no public API yet.
