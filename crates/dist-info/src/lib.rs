//! The metadata model shared by therock-package and rocm-sdk: packages, libraries, targets, versions, extras.
//!
//! Built by its own issue; this crate has no public API yet.
