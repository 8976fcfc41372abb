//! Writes reproducible wheels and sdists, compressing members on every core.
//!
//! Built by its own issue; this crate has no public API yet.
