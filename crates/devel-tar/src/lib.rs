//! The devel tarball of `rocm-sdk-devel` (docs/behaviour.md#devel): written at build time,
//! unpacked into site-packages at install time, and kept in step with the
//! installed device wheels (device-link reconcile).
//!
//! What a member or link may be is `dist_info::devel_tree`, the predicate
//! the build and this crate's install side share.
//!
//! Build side: [`DevelTarWriter`] streams a deterministic tar whose members
//! all start with the tree's directory, `_rocm_sdk_devel{nonce}/`
//! ([`TreeNames`]); the relative "link to a runtime file" rule
//! ([`devel_link_target`]) and the `.devel_links/{T}.json` document of a
//! device wheel ([`DevelLinks`]) are the model's, `dist_info::devel_links`.
//!
//! Install side: [`unpack`] expands `rocm_sdk_devel/_devel.tar*` into
//! `SP/_rocm_sdk_devel{nonce}/` (hard links, RECORD, locking, crash
//! recovery, the tar checked against its RECORD row, hostile-input checks),
//! [`reconcile_device_links`] links device-wheel files
//! into the tree, [`runtime_links`] / [`repair_runtime_links`] find and
//! mend devel paths an image layer separated from their runtime files,
//! and [`ensure`] does all three, as `rocm-sdk init` needs.
//! [`UnpackOptions`] is a plain struct built with named fields and
//! `..UnpackOptions::default()`; who hears of each [`Step`] is its
//! `progress`, an [`UnpackProgress`].
//! The protocol is documented in `docs/devel-tar.md`.
//!
//! ```no_run
//! # fn main() -> Result<(), devel_tar::Error> {
//! let report = devel_tar::ensure(std::path::Path::new("/venv/lib/python3.12/site-packages"))?;
//! for warning in &report.warnings {
//!     tracing::warn!("{warning}");
//! }
//! # Ok(())
//! # }
//! ```

mod compression;
mod counting;
mod digest_file;
mod error;
mod extract;
mod integrity;
mod lock;
mod positioned;
mod reconcile;
mod record;
mod relink;
mod resolve;
mod scan;
mod site;
mod stamp;
mod temporary;
mod tree_names;
mod tree_writer;
mod unpack;
mod warning;
mod writer;

pub use compression::TarCodec;
pub use digest_file::{DIGEST_FILE, TarDigest};
pub use dist_info::devel_links::{DevelLink, DevelLinks, devel_link_target};
pub use error::Error;
pub use reconcile::{ReconcileReport, reconcile_device_links};
pub use relink::{LinkState, RUNTIME_LINKS, RuntimeLink, repair_runtime_links, runtime_links};
pub use site::{install_command, read_installer};
pub use stamp::{DEVICE_LINKS_STAMP, device_links_stamp_is_current, expected_stamp};
pub use tree_names::{
    COMPILER_SYMLINKS, DEVEL_PACKAGE_DIR, TreeNames, installed_tree_names, is_compiler_symlink,
};
pub use unpack::{
    EnsureReport, Step, TREE_VERSION_FILE, UnpackOptions, UnpackOutcome, UnpackProgress,
    UnpackReport, ensure, ensure_with, unpack,
};
pub use warning::DevelWarning;
pub use writer::{DevelTarWriter, PendingFile, TarOptions};
