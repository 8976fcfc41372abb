//! Launchers that exec a target at a path relative to their own location.
//!
//! Built by its own issue; this crate has no public API yet.
