//! One owner for every installed path (docs/behaviour.md#one-owner): among
//! the packages that can be installed together — on one platform, one
//! package of each distribution name — no two ship the same path, and
//! none ships a file where another has a directory. pip and uv install
//! the second over the first without a word, and uninstalling either
//! deletes what the other still lists in its RECORD. The device wheels all
//! overlay `_rocm_sdk_libraries/`, so one file in two of them (a device
//! artifact holding another target's file) is the case that happens.
//!
//! The rule the build applies to its plan and `verify` to the published
//! wheels. Pure: paths are `/`-separated and relative to site-packages;
//! owners are whatever names the caller reports (distribution names, wheel
//! files).
//!
//! ```
//! use dist_info::installed_paths::{Overlap, shared_paths};
//! let shipped = [
//!     ("_rocm_sdk_libraries/.kpack/rand_gfx1030.kpack", "rocm-sdk-device-gfx1030"),
//!     ("_rocm_sdk_libraries/.kpack/rand_gfx1030.kpack", "rocm-sdk-device-gfx942"),
//!     ("_rocm_sdk_libraries/.kpack/rand_gfx942.kpack", "rocm-sdk-device-gfx942"),
//! ];
//! let shared = shared_paths(shipped);
//! assert_eq!(shared.len(), 1);
//! assert_eq!(shared[0].first, "rocm-sdk-device-gfx1030");
//! assert_eq!(shared[0].second, "rocm-sdk-device-gfx942");
//! assert_eq!(shared[0].overlap, Overlap::SameFile);
//! ```

use std::collections::{BTreeMap, BTreeSet};

/// How two packages' paths overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Overlap {
    /// Both ship the file at the path.
    SameFile,
    /// The first ships a file at the path; the second ships files below
    /// it, as if it were a directory.
    FileAndDirectory,
}

/// A path two packages installed together both claim.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, thiserror::Error)]
#[error("{}", self.describe())]
pub struct SharedPath {
    /// The installed path (for [`Overlap::FileAndDirectory`], the file).
    pub path: String,
    /// One owner (for [`Overlap::FileAndDirectory`], the file's).
    pub first: String,
    /// The other owner.
    pub second: String,
    /// How they overlap.
    pub overlap: Overlap,
}

impl SharedPath {
    fn describe(&self) -> String {
        let Self {
            path,
            first,
            second,
            ..
        } = self;
        match self.overlap {
            Overlap::SameFile => format!(
                "{path} is shipped by both {first} and {second}: installed together, one \
                 overwrites the other's file and uninstalling either deletes it"
            ),
            Overlap::FileAndDirectory => format!(
                "{path} is a file in {first} and a directory in {second}: the two cannot be \
                 installed together"
            ),
        }
    }
}

/// The paths of `shipped` (`(path, owner)` pairs: every file the packages
/// installed together ship) that two owners claim, sorted by path, each
/// pair of owners once per path (owners in sorted order). The same owner
/// twice is no conflict.
pub fn shared_paths<'a>(shipped: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<SharedPath> {
    let mut owners: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (path, owner) in shipped {
        owners.entry(path).or_default().insert(owner);
    }
    let mut shared = Vec::new();
    for (path, by) in &owners {
        let by: Vec<&str> = by.iter().copied().collect();
        for (i, first) in by.iter().enumerate() {
            for second in &by[i + 1..] {
                shared.push(SharedPath {
                    path: (*path).to_owned(),
                    first: (*first).to_owned(),
                    second: (*second).to_owned(),
                    overlap: Overlap::SameFile,
                });
            }
        }
        // Files below `path/`: `'0'` follows `'/'`, so the range holds
        // exactly the paths that start with `path/`.
        let below = format!("{path}/");
        let end = format!("{path}0");
        let mut other_owners = BTreeSet::new();
        for (_, their) in owners.range::<&str, _>(below.as_str()..end.as_str()) {
            other_owners.extend(their.iter().copied());
        }
        for first in &by {
            for second in other_owners.iter().filter(|o| *o != first) {
                shared.push(SharedPath {
                    path: (*path).to_owned(),
                    first: (*first).to_owned(),
                    second: (*second).to_owned(),
                    overlap: Overlap::FileAndDirectory,
                });
            }
        }
    }
    shared.sort();
    shared.dedup();
    shared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_owner_per_path_is_fine_and_the_same_owner_twice_too() {
        assert!(shared_paths([("a/x", "one"), ("a/y", "two"), ("a/x", "one")]).is_empty());
        // Directories are shared freely: only files are owned.
        assert!(shared_paths([("lib/a.so", "one"), ("lib/b.so", "two")]).is_empty());
    }

    #[test]
    fn a_file_two_owners_ship_is_named_with_both() {
        let shared = shared_paths([("x", "b"), ("x", "a"), ("x", "c")]);
        let pairs: Vec<(&str, &str)> = shared
            .iter()
            .map(|s| (s.first.as_str(), s.second.as_str()))
            .collect();
        assert_eq!(pairs, [("a", "b"), ("a", "c"), ("b", "c")]);
        insta::assert_snapshot!(shared[0], @"x is shipped by both a and b: installed together, one overwrites the other's file and uninstalling either deletes it");
    }

    #[test]
    fn a_file_where_another_package_has_a_directory() {
        let shared = shared_paths([
            ("lib/x", "file-owner"),
            ("lib/x/y", "dir-owner"),
            ("lib/x0", "z"),
        ]);
        assert_eq!(
            shared,
            [SharedPath {
                path: "lib/x".into(),
                first: "file-owner".into(),
                second: "dir-owner".into(),
                overlap: Overlap::FileAndDirectory,
            }]
        );
        insta::assert_snapshot!(shared[0], @"lib/x is a file in file-owner and a directory in dir-owner: the two cannot be installed together");
        // One package with a file and files below the same name is its
        // own writer's problem, not a conflict between packages.
        assert!(shared_paths([("lib/x", "one"), ("lib/x/y", "one")]).is_empty());
    }
}
