//! The records the install keeps in the devel tree about the links it
//! made (docs/devel-tar.md#confinement): `.device-links-state.json` (the
//! reconcile's links per device distribution) and `.runtime-links.json`
//! (the unpack's links to runtime files). Written by `rocm-sdk`, read back
//! as untrusted input: anyone who can write the tree can write them, so a
//! document is accepted whole or not at all, and only when every path in
//! it is clean and lies where that kind of path must lie.
//!
//! Pure: the caller reads the bytes (bounded by [`DOCUMENT_LIMIT`]) and
//! acts on the paths only through its confined directory handles.
//!
//! ```
//! use dist_info::devel_state::{DeviceLinks, DeviceLinksState};
//! use dist_info::devel_tree::TreeNames;
//!
//! let names = TreeNames::new(&dist_info::nonce::Nonce::NONE);
//! let mut state = DeviceLinksState::default();
//! state.devices.insert(
//!     "rocm_sdk_device_gfx942-7.1.0.dist-info".into(),
//!     DeviceLinks {
//!         links: vec!["_rocm_sdk_devel/lib/k.co".into()],
//!         sources: vec!["_rocm_sdk_libraries/lib/k.co".into()],
//!         created_dirs: vec![],
//!     },
//! );
//! let text = state.to_json();
//! assert_eq!(DeviceLinksState::from_json(text.as_bytes(), &names).unwrap(), state);
//! let hostile = text.replace("_rocm_sdk_devel/lib/k.co", "/tmp/x/file.txt");
//! assert!(DeviceLinksState::from_json(hostile.as_bytes(), &names).is_err());
//! ```

use std::collections::BTreeMap;

use pypa_formats::filename::DistInfoDir;
use pypa_formats::member::check_relpath;
use serde::{Deserialize, Serialize};

use crate::devel_tree::TreeNames;

/// The reconcile's state, relative to the devel tree.
pub const DEVICE_LINKS_STATE: &str = ".device-links-state.json";

/// The unpack's record of its runtime links, relative to the devel tree.
pub const RUNTIME_LINKS: &str = ".runtime-links.json";

/// The most bytes either document may have: a release's tree has tens of
/// thousands of links, each under 300 bytes.
pub const DOCUMENT_LIMIT: u64 = 64 << 20;

/// The dist-info prefix of device distributions.
const DEVICE_DIST_PREFIX: &str = "rocm_sdk_device_";

/// Why a document was refused. Each message names the entry at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Not UTF-8 JSON of the document's shape.
    #[error("it is not the document rocm-sdk writes ({0})")]
    Json(serde_json::Error),
    /// A schema this reader does not know.
    #[error("schema {found} (this rocm-sdk reads {expected})")]
    Schema {
        /// The schema the document says.
        found: u32,
        /// The one this reader knows.
        expected: u32,
    },
    /// A key that is no device distribution's dist-info directory.
    #[error("{name:?} is not the dist-info directory of a device distribution")]
    Device {
        /// The key.
        name: String,
    },
    /// A path of the devel tree that is not clean or not in the tree.
    #[error("{path:?} is not a clean path inside {tree}/")]
    NotInTree {
        /// The path.
        path: String,
        /// The tree's directory.
        tree: String,
    },
    /// A file a link is made from that is not a clean path of a runtime
    /// package (of the libraries package, for a device link).
    #[error("{path:?} is not a clean path inside {expected}")]
    NotARuntimeFile {
        /// The path.
        path: String,
        /// Where it must be.
        expected: String,
    },
    /// A directory recorded as made for links it is not a parent of.
    #[error("{path:?} is recorded as made for links of {device}, but holds none of them")]
    UnrelatedDirectory {
        /// The directory.
        path: String,
        /// The device distribution.
        device: String,
    },
    /// Links and the files they are do not pair up.
    #[error("{device} lists {links} links but {sources} files they are")]
    Unpaired {
        /// The device distribution.
        device: String,
        /// How many links.
        links: usize,
        /// How many files.
        sources: usize,
    },
}

/// `.device-links-state.json`: per device dist-info directory, the links
/// the last reconcile made and the directories it made for them.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceLinksState {
    /// By dist-info directory name (`rocm_sdk_device_gfx942-7.1.0.dist-info`).
    pub devices: BTreeMap<String, DeviceLinks>,
}

/// The links of one device distribution.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceLinks {
    /// Links made, site-packages-relative, inside the devel tree.
    pub links: Vec<String>,
    /// The device file each link is, in the order of `links`, inside the
    /// libraries package (empty in states written before it was kept).
    #[serde(default)]
    pub sources: Vec<String>,
    /// Directories made for them, site-packages-relative, inside the tree.
    pub created_dirs: Vec<String>,
}

impl DeviceLinksState {
    /// Parses and checks a state for the tree `names` gives.
    pub fn from_json(bytes: &[u8], names: &TreeNames) -> Result<Self, StateError> {
        let state: Self = serde_json::from_slice(bytes).map_err(StateError::Json)?;
        for (device, links) in &state.devices {
            check_device(device)?;
            links.check(device, names)?;
        }
        Ok(state)
    }

    /// The document's text: stable key order, two-space indent, final
    /// newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serialises") + "\n"
    }
}

impl DeviceLinks {
    fn check(&self, device: &str, names: &TreeNames) -> Result<(), StateError> {
        for link in &self.links {
            check_in_tree(link, names)?;
        }
        if !self.sources.is_empty() && self.sources.len() != self.links.len() {
            return Err(StateError::Unpaired {
                device: device.to_owned(),
                links: self.links.len(),
                sources: self.sources.len(),
            });
        }
        for source in &self.sources {
            let inside = source
                .strip_prefix(names.libraries())
                .is_some_and(|rest| rest.starts_with('/'));
            if !inside || check_relpath(source).is_err() {
                return Err(StateError::NotARuntimeFile {
                    path: source.clone(),
                    expected: format!("{}/", names.libraries()),
                });
            }
        }
        for dir in &self.created_dirs {
            check_in_tree(dir, names)?;
            let holds_a_link = self.links.iter().any(|link| {
                link.strip_prefix(dir.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
            });
            if !holds_a_link {
                return Err(StateError::UnrelatedDirectory {
                    path: dir.clone(),
                    device: device.to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// `.runtime-links.json`: `[devel path, runtime file]` pairs, both
/// site-packages-relative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeLinks {
    /// [`RuntimeLinks::SCHEMA`].
    pub schema: u32,
    /// `(devel path, runtime file)`, sorted.
    pub links: Vec<(String, String)>,
}

impl RuntimeLinks {
    /// The schema this reader writes and reads.
    pub const SCHEMA: u32 = 1;

    /// The record of `links`.
    pub fn new(links: Vec<(String, String)>) -> Self {
        Self {
            schema: Self::SCHEMA,
            links,
        }
    }

    /// Parses and checks a record for the tree `names` gives: every devel
    /// path a clean path inside the tree, every runtime file a clean path
    /// inside one of the release's runtime packages
    /// ([`TreeNames::is_runtime_package`]).
    pub fn from_json(bytes: &[u8], names: &TreeNames) -> Result<Self, StateError> {
        let record: Self = serde_json::from_slice(bytes).map_err(StateError::Json)?;
        if record.schema != Self::SCHEMA {
            return Err(StateError::Schema {
                found: record.schema,
                expected: Self::SCHEMA,
            });
        }
        for (link, source) in &record.links {
            check_in_tree(link, names)?;
            let package = source.split_once('/').map(|(first, _)| first);
            if check_relpath(source).is_err()
                || !package.is_some_and(|p| names.is_runtime_package(p))
            {
                return Err(StateError::NotARuntimeFile {
                    path: source.clone(),
                    expected: "a runtime package of this release".to_owned(),
                });
            }
        }
        Ok(record)
    }

    /// The document's text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serialises") + "\n"
    }
}

fn check_in_tree(path: &str, names: &TreeNames) -> Result<(), StateError> {
    match names.relpath(path) {
        Some(rel) if check_relpath(rel).is_ok() => Ok(()),
        _ => Err(StateError::NotInTree {
            path: path.to_owned(),
            tree: names.root().to_owned(),
        }),
    }
}

fn check_device(name: &str) -> Result<(), StateError> {
    let ok = name.starts_with(DEVICE_DIST_PREFIX)
        && !name.contains(['/', '\\'])
        && name.parse::<DistInfoDir>().is_ok();
    if ok {
        Ok(())
    } else {
        Err(StateError::Device {
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> TreeNames {
        TreeNames::new(&crate::nonce::Nonce::NONE)
    }

    const DEVICE: &str = "rocm_sdk_device_gfx942-7.1.0.dist-info";

    fn state(links: &[&str], sources: &[&str], dirs: &[&str]) -> String {
        let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let mut state = DeviceLinksState::default();
        state.devices.insert(
            DEVICE.into(),
            DeviceLinks {
                links: strings(links),
                sources: strings(sources),
                created_dirs: strings(dirs),
            },
        );
        state.to_json()
    }

    #[test]
    fn a_state_with_any_path_out_of_place_is_refused_whole() {
        let good = state(
            &["_rocm_sdk_devel/lib/x/k.co"],
            &["_rocm_sdk_libraries/lib/x/k.co"],
            &["_rocm_sdk_devel/lib/x"],
        );
        DeviceLinksState::from_json(good.as_bytes(), &names()).unwrap();
        let cases = [
            (
                state(&["/tmp/x/file.txt"], &[], &[]),
                "not a clean path inside",
            ),
            (
                state(&["../../../../victim/rel.txt"], &[], &[]),
                "not a clean path inside",
            ),
            (
                state(&["_rocm_sdk_devel/../x"], &[], &[]),
                "not a clean path inside",
            ),
            (
                state(&["_rocm_sdk_core/lib/x"], &[], &[]),
                "not a clean path inside",
            ),
            (
                state(&["_rocm_sdk_devel/a"], &["/etc/passwd"], &[]),
                "_rocm_sdk_libraries/",
            ),
            (
                state(&["_rocm_sdk_devel/a"], &["_rocm_sdk_core/a"], &[]),
                "_rocm_sdk_libraries/",
            ),
            (
                state(&["_rocm_sdk_devel/a/k"], &[], &["/tmp/x/emptydir"]),
                "not a clean path inside",
            ),
            (
                state(&["_rocm_sdk_devel/a/k"], &[], &["_rocm_sdk_devel/share"]),
                "holds none of them",
            ),
            (
                state(
                    &["_rocm_sdk_devel/a", "_rocm_sdk_devel/b"],
                    &["_rocm_sdk_libraries/a"],
                    &[],
                ),
                "lists 2 links but 1",
            ),
            (
                good.replace(DEVICE, "../x-1.0.dist-info"),
                "not the dist-info directory",
            ),
            (
                good.replace(DEVICE, "rocm_sdk_core-7.1.0.dist-info"),
                "not the dist-info directory",
            ),
            (
                good.replace("\"links\"", "\"extra\": 1, \"links\""),
                "unknown field",
            ),
            ("[".into(), "not the document"),
        ];
        for (text, said) in cases {
            let err = DeviceLinksState::from_json(text.as_bytes(), &names())
                .unwrap_err()
                .to_string();
            assert!(err.contains(said), "{text}: {err}");
        }
    }

    #[test]
    fn runtime_links_lead_from_the_tree_to_a_runtime_package_only() {
        let record = |link: &str, source: &str| {
            RuntimeLinks::new(vec![(link.to_owned(), source.to_owned())]).to_json()
        };
        let good = record("_rocm_sdk_devel/lib/x.so", "_rocm_sdk_core/lib/x.so");
        assert_eq!(
            RuntimeLinks::from_json(good.as_bytes(), &names())
                .unwrap()
                .links
                .len(),
            1
        );
        for (text, said) in [
            (
                record("_rocm_sdk_devel/lib/x.so", "../../etc/shadow"),
                "runtime package",
            ),
            (
                record("_rocm_sdk_devel/lib/x.so", "/etc/shadow"),
                "runtime package",
            ),
            (
                record("_rocm_sdk_devel/lib/x.so", "otherpkg/secret"),
                "runtime package",
            ),
            (
                record("_rocm_sdk_devel/lib/x.so", "_rocm_sdk_devel/lib/y"),
                "runtime package",
            ),
            (
                record("/tmp/x", "_rocm_sdk_core/lib/x.so"),
                "inside _rocm_sdk_devel/",
            ),
            (
                record("_rocm_sdk_devel", "_rocm_sdk_core/lib/x.so"),
                "inside _rocm_sdk_devel/",
            ),
            (good.replace("\"schema\": 1", "\"schema\": 2"), "schema 2"),
        ] {
            let err = RuntimeLinks::from_json(text.as_bytes(), &names())
                .unwrap_err()
                .to_string();
            assert!(err.contains(said), "{text}: {err}");
        }
    }
}
