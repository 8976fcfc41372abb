//! The layout of the target slot, shared by the launcher image, the build
//! script that checks it and the library that fills it in.
//!
//! The slot is `SLOT_LEN` bytes of read-only data in the image: the
//! `SLOT_MARKER` (found by searching the image; it must occur exactly once),
//! then the relative target path, then NUL bytes up to the end of the slot.

/// Identifies the slot; versioned so a future layout gets a new marker.
pub(crate) const SLOT_MARKER: [u8; 32] = *b"\x7ftrampoline-gen::target-slot::v1";

/// Total slot size in bytes: marker, path and at least one terminating NUL.
pub(crate) const SLOT_LEN: usize = 4096;

/// The longest relative target the slot holds (the rest is the marker and
/// the terminating NUL).
pub(crate) const MAX_TARGET_LEN: usize = SLOT_LEN - SLOT_MARKER.len() - 1;
