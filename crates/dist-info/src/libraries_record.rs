//! `_libraries.json`: which entries of the library table one runtime
//! distribution actually contains (schema 1, described in
//! `docs/formats.md`).
//!
//! The build writes one into the pure package directory of every
//! distribution that owns library-table entries (`rocm_sdk_core/`,
//! `rocm_sdk_libraries/`; never the platform directory, which the devel
//! tree mirrors file for file); the Python `find_libraries` and `rocm-sdk
//! test` read it. It is not part of `_dist_info.json`, which every package
//! ships with identical bytes.
//!
//! ```
//! use dist_info::libraries_record::LibrariesRecord;
//! use dist_info::package::PackageKind;
//! use dist_info::requirement::Platform;
//!
//! let shipped = ["lib/libamdhip64.so.7", "lib/libamd_comgr.so.3", "bin/hipcc"];
//! let record = LibrariesRecord::from_shipped_files(
//!     "rocm-sdk-core",
//!     PackageKind::Core,
//!     Platform::Linux,
//!     shipped,
//! );
//! assert_eq!(record.libraries["amdhip64"], "lib/libamdhip64.so.7");
//! assert!(!record.libraries.contains_key("hiprtc"));
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::library::all_libraries;
use crate::package::PackageKind;
use crate::requirement::Platform;

/// The schema this crate writes and reads.
pub const SCHEMA: u32 = 1;

/// The file name, inside the pure package directory.
pub const FILE_NAME: &str = "_libraries.json";

/// Errors reading a record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Not JSON, or not the shape of schema 1.
    #[error("{FILE_NAME} is not a valid library record; reinstall the distribution that ships it")]
    Invalid(#[source] serde_json::Error),
    /// Written by another schema.
    #[error(
        "{FILE_NAME} has schema {found}, this tool reads schema {SCHEMA}; install matching \
         versions of the `rocm` packages"
    )]
    UnsupportedSchema {
        /// The schema found (0 when absent).
        found: u64,
    },
}

/// The library-table entries one distribution ships.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibrariesRecord {
    /// Always [`SCHEMA`] when written by this crate.
    pub schema: u32,
    /// The distribution name, as METADATA `Name`.
    pub distribution: String,
    /// Short name → the file `find_libraries` returns for it, relative to
    /// the platform package directory, `/`-separated.
    pub libraries: BTreeMap<String, String>,
    /// The runtime aliases the distribution ships
    /// (docs/behaviour.md#runtime-aliases): the alias's path, relative to
    /// the platform package directory, → the SONAME it stands for.
    /// `initialize_process` loads the aliases of each library it preloads,
    /// so that the unversioned name reaches it from anywhere in the
    /// process. Written only when there are some.
    #[serde(default)]
    pub aliases: BTreeMap<String, String>,
}

impl LibrariesRecord {
    /// The record of `distribution`, a package of logical kind `kind`, built
    /// for `platform`, that ships `files` (relative to its platform package
    /// directory, `/`-separated). For each table entry of `kind`, the first
    /// file in sorted order that lies directly in the entry's directory and
    /// matches its pattern on `platform`; entries that match nothing are
    /// absent.
    pub fn from_shipped_files<I, S>(
        distribution: &str,
        kind: PackageKind,
        platform: Platform,
        files: I,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut files: Vec<String> = files.into_iter().map(|f| f.as_ref().to_owned()).collect();
        files.sort();
        let libraries = all_libraries()
            .into_iter()
            .filter(|library| library.package == kind)
            .filter_map(|library| {
                files
                    .iter()
                    .find(|file| library.matches(platform, file))
                    .map(|file| (library.shortname, file.clone()))
            })
            .collect();
        Self {
            schema: SCHEMA,
            distribution: distribution.to_owned(),
            libraries,
            aliases: BTreeMap::new(),
        }
    }

    /// This record listing `aliases` (relpath → SONAME) as the runtime
    /// aliases the distribution ships.
    #[must_use]
    pub fn with_aliases<I, S, T>(mut self, aliases: I) -> Self
    where
        I: IntoIterator<Item = (S, T)>,
        S: Into<String>,
        T: Into<String>,
    {
        self.aliases = aliases
            .into_iter()
            .map(|(a, b)| (a.into(), b.into()))
            .collect();
        self
    }

    /// The record as bytes: pretty JSON (two-space indentation), keys
    /// sorted, final newline.
    pub fn to_json(&self) -> Vec<u8> {
        // Keys inserted in sorted order, so the output is sorted whether or
        // not `serde_json` keeps insertion order.
        let mut value = serde_json::Map::new();
        if !self.aliases.is_empty() {
            value.insert("aliases".into(), serde_json::json!(self.aliases));
        }
        value.insert("distribution".into(), self.distribution.clone().into());
        value.insert("libraries".into(), serde_json::json!(self.libraries));
        value.insert("schema".into(), self.schema.into());
        let mut out = serde_json::to_vec_pretty(&value).expect("JSON values serialise");
        out.push(b'\n');
        out
    }

    /// Reads a record, refusing schemas other than [`SCHEMA`].
    pub fn from_json(bytes: &[u8]) -> Result<Self, RecordError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(RecordError::Invalid)?;
        let found = value.get("schema").and_then(serde_json::Value::as_u64);
        if found != Some(u64::from(SCHEMA)) {
            return Err(RecordError::UnsupportedSchema {
                found: found.unwrap_or(0),
            });
        }
        serde_json::from_value(value).map_err(RecordError::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sorted_match_in_the_entry_directory_wins() {
        let record = LibrariesRecord::from_shipped_files(
            "rocm-sdk-core",
            PackageKind::Core,
            Platform::Linux,
            [
                "lib/libamdhip64.so.7",
                "lib/libamdhip64.so.6",
                "lib/llvm/lib/libamd_comgr.so.3",
                "lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5",
                "lib/librocm_sysdeps_liblzma.so.5",
                "lib/libhipblas.so.3",
            ],
        );
        let expected: BTreeMap<String, String> = [
            ("amdhip64", "lib/libamdhip64.so.6"),
            (
                "rocm_sysdeps_liblzma",
                "lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        // amd_comgr lies in a sub-directory and hipblas belongs to another
        // package: neither is recorded.
        assert_eq!(record.libraries, expected);
    }

    #[test]
    fn windows_uses_the_dll_patterns_under_bin() {
        let record = LibrariesRecord::from_shipped_files(
            "rocm-sdk-libraries",
            PackageKind::Libraries,
            Platform::Windows,
            ["bin/hipblas.dll", "lib/libhipblas.so.3", "bin/rccl.dll"],
        );
        assert_eq!(
            record.libraries.into_iter().collect::<Vec<_>>(),
            [("hipblas".to_owned(), "bin/hipblas.dll".to_owned())]
        );
    }

    #[test]
    fn bytes_are_sorted_pretty_json_and_read_back() {
        let record = LibrariesRecord::from_shipped_files(
            "rocm-sdk-core",
            PackageKind::Core,
            Platform::Linux,
            ["lib/libamdhip64.so.7", "lib/libamd_comgr.so.3"],
        );
        let bytes = record.to_json();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "{\n  \"distribution\": \"rocm-sdk-core\",\n  \"libraries\": {\n    \
             \"amd_comgr\": \"lib/libamd_comgr.so.3\",\n    \
             \"amdhip64\": \"lib/libamdhip64.so.7\"\n  },\n  \"schema\": 1\n}\n"
        );
        assert_eq!(LibrariesRecord::from_json(&bytes).unwrap(), record);
        let empty = LibrariesRecord::from_shipped_files(
            "rocm-sdk-libraries",
            PackageKind::Libraries,
            Platform::Linux,
            [""; 0],
        );
        assert_eq!(
            String::from_utf8(empty.to_json()).unwrap(),
            "{\n  \"distribution\": \"rocm-sdk-libraries\",\n  \"libraries\": {},\n  \"schema\": 1\n}\n"
        );
    }

    #[test]
    fn aliases_are_written_only_when_there_are_some() {
        let record = LibrariesRecord::from_shipped_files(
            "rocm-sdk-core",
            PackageKind::Core,
            Platform::Linux,
            ["lib/libamdhip64.so.7"],
        )
        .with_aliases([("lib/libamdhip64.so", "libamdhip64.so.7")]);
        let bytes = record.to_json();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            "{\n  \"aliases\": {\n    \"lib/libamdhip64.so\": \"libamdhip64.so.7\"\n  },\n  \
             \"distribution\": \"rocm-sdk-core\",\n  \"libraries\": {\n    \
             \"amdhip64\": \"lib/libamdhip64.so.7\"\n  },\n  \"schema\": 1\n}\n"
        );
        assert_eq!(LibrariesRecord::from_json(&bytes).unwrap(), record);
    }

    #[test]
    fn other_schemas_and_bad_json_are_refused() {
        let err =
            LibrariesRecord::from_json(br#"{"schema": 2, "distribution": "x", "libraries": {}}"#)
                .unwrap_err();
        assert!(matches!(err, RecordError::UnsupportedSchema { found: 2 }));
        assert!(err.to_string().contains("schema 2"), "{err}");
        let err = LibrariesRecord::from_json(b"{").unwrap_err();
        assert!(matches!(err, RecordError::Invalid(_)));
        assert!(
            !err.to_string().contains("EOF"),
            "the cause is printed once, by the chain"
        );
    }
}
