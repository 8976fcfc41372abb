//! Checks that every `DT_NEEDED` entry of every host ELF file in a tree of
//! files resolves: through the file's own `RPATH`/`RUNPATH` (with `$ORIGIN`
//! expanded relative to the file's directory) to a file inside the tree, or
//! to a system library the manylinux_2_28 policy allows, or to the dynamic
//! loader. Anything else is reported by name.
//!
//! The tree is anything implementing [`FileTree`]; two come with the crate:
//!
//! - [`DirTree`]: a directory on disk, for example an installed
//!   site-packages (what `rocm-sdk test` checks);
//! - [`WheelSetTree`]: the union of a set of wheels' members as `pip` would
//!   install them into one site-packages, read from the archives without
//!   unpacking (what `therock-package verify` checks before publishing).
//!
//! ```no_run
//! use link_check::{DirTree, LinkChecker};
//!
//! let tree = DirTree::open("venv/lib/python3.12/site-packages".as_ref())?;
//! let report = LinkChecker::new().only_under(["_rocm_sdk_core", "_rocm_sdk_libraries"]).check(&tree)?;
//! for problem in report.unresolved() {
//!     eprintln!("{problem}"); // "_rocm_sdk_core/lib/libfoo.so: NEEDED libbar.so.1 not found ..."
//! }
//! assert!(report.is_ok());
//! # Ok::<(), link_check::Error>(())
//! ```
//!
//! Design notes: `docs/link-check.md`.

mod check;
mod dir_tree;
mod error;
mod policy;
mod report;
mod search_path;
mod tree;
mod wheel_tree;

pub use check::LinkChecker;
pub use dir_tree::DirTree;
pub use error::Error;
pub use policy::{LOADER_NAMES, SystemPolicy, manylinux_2_28_libraries};
pub use report::{ElfReport, Needed, Report, Resolution, SearchKind, Unreadable, Unresolved};
pub use search_path::{SearchDir, expand_search_path, normalize};
pub use tree::{FileTree, Scan, TreeElf};
pub use wheel_tree::{WheelSetTree, installed_path};
