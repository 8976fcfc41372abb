//! The Python packaging formats as the PyPA specifications define them,
//! apart from what a ROCm package is (that is `dist-info`): distribution
//! names ([`dist_name`], PEP 503), versions ([`version`], PEP 440), wheel
//! and sdist file names and compatibility tags ([`filename`]), `RECORD`
//! ([`record`]), the header block of core metadata, `PKG-INFO` and `WHEEL`
//! ([`core_metadata`]), `entry_points.txt` ([`entry_points`]), what a
//! member of a wheel or sdist may be ([`member`]), the time every member
//! carries ([`epoch`]) and the command an installation's `INSTALLER` calls
//! for ([`installer`]); and the one strict reader of each container a
//! package comes in, which every reader of untrusted packages uses: the
//! zip of a wheel ([`zip_archive`]) and the gzip-compressed tar of an
//! sdist ([`sdist_archive`]) (docs/verify.md#one-reading).
//!
//! Versions and the file names that carry them need the `pep440` feature
//! (on by default): PEP 440 is `pep440_rs`'s, the one implementation of
//! the workspace ([`version`]).
//!
//! No file-system access: the container readers read from any
//! `Read + Seek` (or `BufRead`) they are given; the rest is parsing and
//! rendering of text.
//!
//! ```
//! use pypa_formats::filename::WheelFilename;
//! use pypa_formats::version::Version;
//!
//! let wheel: WheelFilename = "rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl".parse().unwrap();
//! let version: Version = wheel.version.as_str().parse().unwrap();
//! assert!(version < "7.1.1".parse().unwrap());
//! ```

pub mod core_metadata;
pub mod dist_name;
pub mod entry_points;
pub mod epoch;
#[cfg(feature = "pep440")]
pub mod filename;
pub mod installer;
pub mod member;
pub mod record;
pub mod sdist_archive;
#[cfg(test)]
mod test_support;
#[cfg(feature = "pep440")]
pub mod version;
pub mod zip_archive;
