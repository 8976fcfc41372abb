//! Writing a target into an image's slot and reading it back.
//!
//! Layout (see `launcher/slot_layout.rs`): marker, target bytes, NUL up to
//! the end of the slot. The marker stays in place so a launcher can be
//! read back (and rewritten) later.

use crate::slot_layout::{SLOT_LEN, SLOT_MARKER};
use crate::{RelativeTarget, SlotError};

/// A copy of `image` with `target` in the slot at `offset`. The caller has
/// checked that the target fits.
pub(crate) fn fill(image: &[u8], offset: usize, target: &RelativeTarget) -> Vec<u8> {
    let mut bytes = image.to_vec();
    let area = &mut bytes[offset + SLOT_MARKER.len()..offset + SLOT_LEN];
    area.fill(0);
    area[..target.len()].copy_from_slice(target.as_str().as_bytes());
    bytes
}

/// The slot offset and target of a launcher.
pub(crate) fn read(bytes: &[u8]) -> Result<(usize, RelativeTarget), SlotError> {
    let offset = find_marker(bytes)?;
    let area = bytes
        .get(offset + SLOT_MARKER.len()..offset + SLOT_LEN)
        .ok_or(SlotError::Truncated)?;
    let len = area
        .iter()
        .position(|&b| b == 0)
        .ok_or(SlotError::Corrupt)?;
    if area[len..].iter().any(|&b| b != 0) {
        return Err(SlotError::Corrupt);
    }
    if len == 0 {
        return Err(SlotError::Empty);
    }
    let text = std::str::from_utf8(&area[..len])
        .map_err(|_| SlotError::InvalidTarget("not UTF-8".to_owned()))?;
    let target = RelativeTarget::new(text).map_err(|e| SlotError::InvalidTarget(e.to_string()))?;
    Ok((offset, target))
}

/// The marker's offset; it must occur exactly once.
fn find_marker(bytes: &[u8]) -> Result<usize, SlotError> {
    let mut hits = bytes
        .windows(SLOT_MARKER.len())
        .enumerate()
        .filter(|(_, window)| *window == SLOT_MARKER)
        .map(|(i, _)| i);
    match hits.next() {
        None => Err(SlotError::MarkerMissing),
        Some(offset) => match hits.count() {
            0 => Ok(offset),
            more => Err(SlotError::MarkerRepeated { count: more + 1 }),
        },
    }
}
