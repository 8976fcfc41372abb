//! The launcher images compiled by `build.rs` and embedded in the library,
//! with their slot offsets found (and checked) at compile time.

use crate::Platform;
use crate::slot_layout::{SLOT_LEN, SLOT_MARKER};

/// One embedded launcher image.
#[derive(Debug)]
pub(crate) struct Image {
    /// The image bytes, target slot empty.
    pub(crate) bytes: &'static [u8],
    /// Where the slot (its marker) starts.
    pub(crate) slot_offset: usize,
}

const LINUX_X86_64_BYTES: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/launcher-x86_64-linux"));

static LINUX_X86_64: Image = Image {
    bytes: LINUX_X86_64_BYTES,
    slot_offset: slot_offset(LINUX_X86_64_BYTES),
};

/// The image for `platform`.
pub(crate) fn for_platform(platform: Platform) -> &'static Image {
    match platform {
        Platform::LinuxX86_64 => &LINUX_X86_64,
    }
}

/// Offset of the slot marker, which must occur exactly once and be
/// followed by an empty slot; evaluated at compile time, so a bad image
/// fails the build rather than a packaging run.
const fn slot_offset(image: &[u8]) -> usize {
    let mut found = None;
    let mut i = 0;
    while i + SLOT_MARKER.len() <= image.len() {
        if marker_at(image, i) {
            assert!(
                found.is_none(),
                "the slot marker occurs more than once in a launcher image"
            );
            found = Some(i);
        }
        i += 1;
    }
    let Some(offset) = found else {
        panic!("the slot marker is missing from a launcher image");
    };
    assert!(
        offset + SLOT_LEN <= image.len(),
        "a launcher image ends inside its slot"
    );
    let mut j = offset + SLOT_MARKER.len();
    while j < offset + SLOT_LEN {
        assert!(image[j] == 0, "a launcher image's slot is not empty");
        j += 1;
    }
    offset
}

const fn marker_at(image: &[u8], at: usize) -> bool {
    let mut k = 0;
    while k < SLOT_MARKER.len() {
        if image[at + k] != SLOT_MARKER[k] {
            return false;
        }
        k += 1;
    }
    true
}
