//! The time every member of a package carries: `SOURCE_DATE_EPOCH` when
//! the build sets it, never earlier than a zip header can hold, so a wheel
//! and the devel tarball inside it agree (docs/behaviour.md#reproducible).

/// The earliest time a zip header can hold: 1980-01-01T00:00:00Z, in
/// seconds since the Unix epoch.
pub const ZIP_EPOCH: u64 = 315_532_800;

/// The modification time written for every member: `source_date_epoch`
/// when given, clamped up to [`ZIP_EPOCH`]; [`ZIP_EPOCH`] otherwise.
///
/// ```
/// use pypa_formats::epoch::{ZIP_EPOCH, member_mtime};
/// assert_eq!(member_mtime(None), ZIP_EPOCH);
/// assert_eq!(member_mtime(Some(0)), ZIP_EPOCH);
/// assert_eq!(member_mtime(Some(1_700_000_000)), 1_700_000_000);
/// ```
#[must_use]
pub fn member_mtime(source_date_epoch: Option<u64>) -> u64 {
    source_date_epoch.unwrap_or(ZIP_EPOCH).max(ZIP_EPOCH)
}
