//! The metadata model shared by `therock-package` and `rocm-sdk`: packages,
//! libraries, families and targets, versions, requirements and extras of the
//! `rocm` selector, target selection, and the `_dist_info.json` document.
//!
//! No I/O beyond (de)serialising its own documents: callers read files and
//! the environment and pass values in.

pub mod version;
