//! The `_dist_info.json` document every package ships (schema 1, described
//! in `docs/formats.md`): the Python `rocm_sdk._dist_info` facade, the
//! `rocm` sdist's backend and `rocm-sdk` all read it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::console_scripts::{ConsoleScript, all_console_scripts};
use crate::library::{Library, all_libraries};
use crate::library_path::{LibraryDir, library_path};
use crate::nonce::Nonce;
use crate::package::{Mode, Package, PackageKind, TARGET_PLACEHOLDER};
use crate::selector::Selector;

/// The schema this crate writes and reads.
pub const SCHEMA: u32 = 1;

/// The file name packages ship the document under.
pub const FILE_NAME: &str = "_dist_info.json";

/// Errors reading or writing the document.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    /// Not JSON, or not the shape of schema 1.
    #[error("{FILE_NAME} is not a valid dist-info document; reinstall the `rocm` packages")]
    Invalid(#[source] serde_json::Error),
    /// Written by a newer (or unknown) schema.
    #[error(
        "{FILE_NAME} has schema {found}, this tool reads schema {SCHEMA}; \
         install matching versions of `rocm` and `rocm-sdk-core`"
    )]
    UnsupportedSchema {
        /// The schema found.
        found: u64,
    },
}

/// One entry of `ALL_PACKAGES`: the names of a logical package. In the
/// templates, `{target}` stands for the target; in the two package
/// templates it is substituted with `-` replaced by `_`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageRecord {
    /// The logical name.
    pub logical: PackageKind,
    /// The dist name, with `{target}` when target specific.
    pub dist_template: String,
    /// The pure Python package, when there is one.
    pub pure_package_template: Option<String>,
    /// The platform package directory in site-packages (nonce included).
    pub platform_package_template: Option<String>,
    /// Whether every installation has it.
    pub required: bool,
    /// Whether the names depend on a target.
    pub target_specific: bool,
}

impl PackageRecord {
    /// The record of `package`.
    pub fn new(package: &Package) -> Self {
        let target = package.is_target_specific().then_some(TARGET_PLACEHOLDER);
        let expect = "templates exist for every package of the mode";
        Self {
            logical: package.kind(),
            dist_template: package.dist_name(target).expect(expect),
            pure_package_template: package.pure_package(target).expect(expect),
            platform_package_template: package.platform_package(target).expect(expect),
            required: package.kind().required(),
            target_specific: package.is_target_specific(),
        }
    }
}

/// The `_dist_info.json` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistInfo {
    /// Always [`SCHEMA`] when written by this crate.
    pub schema: u32,
    /// The nonce suffix of platform packages (`--version-suffix`),
    /// validated when read.
    pub nonce: Nonce,
    /// `ALL_PACKAGES`: the mode's logical packages, in docs/behaviour.md#package-names order.
    pub packages: Vec<PackageRecord>,
    /// `ALL_LIBRARIES`, in the order of docs/behaviour.md#library-table.
    pub libraries: Vec<Library>,
    /// Core's and the profiler's console scripts, in docs/behaviour.md#console-scripts order.
    pub console_scripts: Vec<ConsoleScript>,
    /// The shared-library directories in the order the loader should
    /// search them (docs/behaviour.md#library-path). Empty in documents
    /// written before it existed.
    #[serde(default)]
    pub library_path: Vec<LibraryDir>,
    /// Version, mode, targets and what the selector decides from.
    #[serde(flatten)]
    pub selector: Selector,
}

impl DistInfo {
    /// The document for a release described by `selector` whose platform
    /// packages carry `nonce`.
    pub fn new(selector: Selector, nonce: &Nonce) -> Self {
        let packages = PackageKind::ALL
            .into_iter()
            .filter(|&k| !(k == PackageKind::Device && selector.mode == Mode::Legacy))
            .map(|k| PackageRecord::new(&Package::new(k, selector.mode, nonce)))
            .collect();
        Self {
            schema: SCHEMA,
            nonce: nonce.clone(),
            packages,
            libraries: all_libraries(),
            console_scripts: all_console_scripts(),
            library_path: library_path(),
            selector,
        }
    }

    /// The platform package directory of `kind` when its name does not
    /// depend on a target (core, kpack libraries, device's overlay, devel,
    /// profiler), nonce included.
    ///
    /// ```
    /// # use dist_info::{document::DistInfo, families::FamilyTable, package::{Mode, PackageKind}};
    /// # use dist_info::selector::{SelectorInput, Selector};
    /// let selector = Selector::plan(Mode::Kpack, &"7.1.0".parse().unwrap(), &SelectorInput::default(), FamilyTable::builtin()).unwrap();
    /// let doc = DistInfo::new(selector, &"_n1".parse().unwrap());
    /// assert_eq!(doc.platform_package(PackageKind::Devel), Some("_rocm_sdk_devel_n1"));
    /// assert_eq!(doc.platform_package(PackageKind::Device), Some("_rocm_sdk_libraries_n1"));
    /// ```
    pub fn platform_package(&self, kind: PackageKind) -> Option<&str> {
        let record = self.packages.iter().find(|p| p.logical == kind)?;
        let name = record.platform_package_template.as_deref()?;
        (!name.contains(TARGET_PLACEHOLDER)).then_some(name)
    }

    /// The document as bytes: pretty JSON with every object's keys sorted
    /// and a final newline, so equal documents are equal bytes.
    pub fn to_json(&self) -> Vec<u8> {
        let value = serde_json::to_value(self).expect("the document serialises to JSON");
        let mut out = serde_json::to_vec_pretty(&sorted(value)).expect("JSON values serialise");
        out.push(b'\n');
        out
    }

    /// Reads a document, refusing schemas other than [`SCHEMA`].
    pub fn from_json(bytes: &[u8]) -> Result<Self, DocumentError> {
        let value: Value = serde_json::from_slice(bytes).map_err(DocumentError::Invalid)?;
        let found = value.get("schema").and_then(Value::as_u64);
        if found != Some(u64::from(SCHEMA)) {
            return Err(DocumentError::UnsupportedSchema {
                found: found.unwrap_or(0),
            });
        }
        serde_json::from_value(value).map_err(DocumentError::Invalid)
    }
}

/// Rebuilds every object with its keys inserted in sorted order, so the
/// output is sorted whether or not `serde_json` keeps insertion order
/// (another crate in the build may enable `preserve_order`).
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sorted(v)))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
