//! The file-system helpers every crate of the workspace shares, at the
//! bottom of the layers: files that appear complete or not at all
//! ([`atomic_write`]), a directory handle that no path can lead out of
//! ([`confined`]: no `..`, no symbolic link followed), the SHA-256 of a file ([`file_hash`], feature
//! `hash`), which file a path names across hard links ([`file_id`]),
//! reads and writes at an offset that leave a shared cursor alone
//! ([`positioned`]), removing an entry without following links ([`remove`]), and an error
//! printed with its causes ([`error_chain`]) for messages that carry an
//! I/O error as text, with the control characters of quoted input escaped.
//!
//! Nothing here knows what a package is; the crates above decide what to
//! write and where.

pub mod atomic_write;
pub mod confined;
pub mod error_chain;
#[cfg(feature = "hash")]
pub mod file_hash;
pub mod file_id;
pub mod positioned;
pub mod remove;
