//! Writes the devel tarball and unpacks it safely into site-packages.
//!
//! Built by its own issue; this crate has no public API yet.
