//! The packaging plan (SPEC §3–§10).
//!
//! Given an [`artifacts`] catalog and the [`dist-info`] model, `layout` decides
//! for every file which package receives it and how: copy, patch the search
//! path, write a launcher, record a soname alias, link into devel, or drop it
//! with a reason. The plan is pure data: nothing is read beyond the catalog
//! and nothing is written. It is built by the pipeline issue; until then this
//! crate exposes no API.
