//! Checks that every `DT_NEEDED` entry of every host ELF file in a tree of
//! files resolves: through the file's own `RPATH`/`RUNPATH` (with `$ORIGIN`
//! expanded relative to the file's directory) to a file inside the tree, or
//! to a system library a manylinux policy allows (manylinux_2_28 unless
//! told otherwise), or to the dynamic loader, or to a library the release
//! deliberately leaves to the system. Anything else is reported by name.
//!
//! Over a set of wheels it also audits each wheel against the manylinux
//! policies as auditwheel defines them ([`Policies`], [`audit_wheel`]):
//! the symbol versions its files need, the libraries they leave to the
//! system and the blacklisted symbols they import, down to the tightest
//! tag the wheel satisfies.
//!
//! The tree is anything implementing [`FileTree`]; three come with the crate:
//!
//! - [`DirTree`]: a directory on disk, for example an installed
//!   site-packages (what `rocm-sdk test` checks);
//! - [`WheelSetTree`]: the union of a set of wheels' members as `pip` would
//!   install them into one site-packages, read from the archives without
//!   unpacking (what `therock-package verify` checks before publishing);
//! - [`ListedTree`]: paths and ELF facts a caller already holds (what
//!   `therock-package build` checks the set it just wrote with).
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
//! ```no_run
//! use link_check::{Arch, LinkChecker, Policies, WheelSetTree, audit_wheel};
//!
//! let tree = WheelSetTree::open(["dist/rocm_sdk_core-7.1.0-py3-none-manylinux_2_28_x86_64.whl"])?;
//! let report = LinkChecker::new().with_imports().check(&tree)?;
//! let wheel = "rocm_sdk_core-7.1.0-py3-none-manylinux_2_28_x86_64.whl";
//! let audit = audit_wheel(&report, &tree, wheel, Arch::X86_64, Policies::auditwheel().get("manylinux_2_28"));
//! println!("{}", audit.summary()); // "...: satisfies manylinux_2_34_x86_64 (needs up to GLIBC_2.34)"
//! # Ok::<(), link_check::Error>(())
//! ```
//!
//! Design notes: `docs/link-check.md`.

mod audit;
mod check;
mod dir_tree;
mod elf_member;
mod error;
mod listed_tree;
mod manylinux;
mod policy;
mod report;
mod search_path;
mod tree;
mod wheel_tree;

pub use audit::{Violation, WheelAudit, audit_wheel};
pub use check::LinkChecker;
pub use dir_tree::DirTree;
pub use elf_member::{ElfMemberError, MAX_ELF_IN_MEMORY, MAX_ELF_MEMBER, parse_streamed};
pub use error::Error;
pub use listed_tree::ListedTree;
pub use manylinux::{Arch, LinuxTag, Policies, Policy, PolicyName, UnknownPolicy};
pub use policy::{LOADER_NAMES, SystemPolicy};
pub use report::{ElfReport, LinkReport, Needed, Resolution, SearchKind, Unreadable, Unresolved};
pub use search_path::{SearchDir, expand_search_path, normalize};
pub use tree::{FileTree, Scan, ScanDepth, TreeElf};
pub use wheel_tree::{WheelSetTree, installed_path};
