//! The `.devel_links/{T}.json` document a device wheel ships, and the
//! relative "link to a runtime file" rule of the devel tree
//! (docs/behaviour.md#devel-links), written once: the build plans the links
//! with it and the install reads the documents back.

use serde::{Deserialize, Serialize};

use crate::devel_tree::check_link_text;
use pypa_formats::member::check_relpath;

/// The target of the devel symlink for a file that a runtime package ships:
/// `"../"` once per segment of `relpath`, then the owner's platform package
/// directory, then `relpath` (docs/behaviour.md#devel-links). The link lives at
/// `_rocm_sdk_devel{N}/{relpath}`, so the `..` chain climbs back to
/// site-packages.
///
/// ```
/// assert_eq!(
///     dist_info::devel_links::devel_link_target("lib/libamdhip64.so.6", "_rocm_sdk_core"),
///     "../../_rocm_sdk_core/lib/libamdhip64.so.6"
/// );
/// ```
pub fn devel_link_target(relpath: &str, owner_platform_pkg: &str) -> String {
    let segments = relpath.split('/').filter(|s| !s.is_empty()).count();
    let mut target = "../".repeat(segments);
    target.push_str(owner_platform_pkg);
    target.push('/');
    target.push_str(relpath);
    target
}

/// One file of a device wheel to hard-link into the devel tree.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DevelLink {
    /// Path relative to the libraries platform package and to the devel tree.
    pub relpath: String,
    /// The file, relative to the directory of `_rocm_sdk_devel/{relpath}`.
    pub target: String,
}

/// `_rocm_sdk_libraries{N}/.devel_links/{T}.json`: the files of device
/// wheel `T` that belong in the devel tree too.
///
/// ```
/// use dist_info::devel_links::DevelLinks;
/// let doc = DevelLinks::new("7.1.0", "_rocm_sdk_libraries", ["lib/rocblas/library/k_gfx942.co".to_string()]);
/// assert_eq!(doc.links[0].target, "../../../../_rocm_sdk_libraries/lib/rocblas/library/k_gfx942.co");
/// assert_eq!(DevelLinks::from_json(&doc.to_json()).unwrap(), doc);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DevelLinks {
    /// The device wheel's version `V`.
    pub version: String,
    /// One entry per file, sorted by relpath.
    pub links: Vec<DevelLink>,
}

impl DevelLinks {
    /// The document for the files `relpaths` (relative to the libraries
    /// platform package `libraries`, nonce included) of a device wheel of
    /// version `version`: sorted, de-duplicated, each target computed by
    /// [`devel_link_target`], and never listing a `.devel_links/` document.
    pub fn new(version: &str, libraries: &str, relpaths: impl IntoIterator<Item = String>) -> Self {
        let mut relpaths: Vec<String> = relpaths
            .into_iter()
            .filter(|r| !r.starts_with(".devel_links/"))
            .collect();
        relpaths.sort();
        relpaths.dedup();
        let links = relpaths
            .into_iter()
            .map(|relpath| DevelLink {
                target: devel_link_target(&relpath, libraries),
                relpath,
            })
            .collect();
        Self {
            version: version.to_owned(),
            links,
        }
    }

    /// The document's file name for target `T`: `{T}.json`.
    pub fn file_name(target: &str) -> String {
        format!("{target}.json")
    }

    /// Serialises with stable key order, two-space indent and a final
    /// newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("plain strings serialise");
        text.push('\n');
        text
    }

    /// Parses a document and checks that every relpath is clean.
    pub fn from_json(text: &str) -> Result<Self, DevelLinksError> {
        let doc: DevelLinks = serde_json::from_str(text).map_err(DevelLinksError::Json)?;
        for link in &doc.links {
            check_relpath(&link.relpath).map_err(|problem| DevelLinksError::Relpath {
                relpath: link.relpath.clone(),
                problem,
            })?;
            check_link_text(&link.target).map_err(|problem| DevelLinksError::Target {
                relpath: link.relpath.clone(),
                problem,
            })?;
        }
        Ok(doc)
    }
}

/// Why a text is no `.devel_links/{T}.json` document. The cause is part of
/// each message (not a source as well): the reader's error carries it as
/// its reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DevelLinksError {
    /// It is not the JSON of a document.
    #[error("{0}")]
    Json(serde_json::Error),
    /// A link's relpath is not a clean relative path.
    #[error("relpath {relpath:?}: {problem}")]
    Relpath {
        /// The relpath as written.
        relpath: String,
        /// What is wrong with it.
        problem: pypa_formats::member::PathProblem,
    },
    /// A link's target is no link text the devel tree may hold.
    #[error("target of {relpath:?}: {problem}")]
    Target {
        /// The link's relpath.
        relpath: String,
        /// What is wrong with its target.
        problem: crate::devel_tree::LinkProblem,
    },
    /// A link's target leaves site-packages or points into the devel
    /// tree (found where the document is applied).
    #[error(
        "the target {target:?} of {relpath:?} leaves site-packages or points into the devel tree"
    )]
    TargetOutside {
        /// The link's relpath.
        relpath: String,
        /// Its target.
        target: String,
    },
    /// A link's target is not the file of the libraries package at its
    /// relpath ([`devel_link_target`]), the only target a device wheel's
    /// document has.
    #[error("the target {target:?} of {relpath:?} is not {expected:?}")]
    UnexpectedTarget {
        /// The link's relpath.
        relpath: String,
        /// Its target.
        target: String,
        /// The one target the relpath allows.
        expected: String,
    },
    /// A link's file is not one the device wheel installed.
    #[error("{source_path} is not a file the device wheel installed (its RECORD does not list it)")]
    NotInstalled {
        /// The file, relative to site-packages.
        source_path: String,
    },
    /// The document is not the one the device wheel installed.
    #[error("it differs from its row in the device wheel's RECORD (it changed after install)")]
    Modified,
    /// A link's relpath names something of the devel tree that is not a
    /// device link: a directory, a symbolic link, a special file.
    #[error("{relpath:?} names a {what} of the devel tree, which a device link never replaces")]
    NotAFile {
        /// The link's relpath.
        relpath: String,
        /// What is there ("directory", "symbolic link", ...).
        what: &'static str,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_target_climbs_one_level_per_segment() {
        assert_eq!(devel_link_target("a", "_p"), "../_p/a");
        assert_eq!(
            devel_link_target("lib/llvm/bin/clang", "_rocm_sdk_core"),
            "../../../../_rocm_sdk_core/lib/llvm/bin/clang"
        );
    }

    #[test]
    fn new_sorts_dedups_and_skips_itself() {
        let doc = DevelLinks::new(
            "7.1.0",
            "_rocm_sdk_libraries",
            ["b/x", "a", "b/x", ".devel_links/gfx942.json"].map(String::from),
        );
        let rel: Vec<_> = doc.links.iter().map(|l| l.relpath.as_str()).collect();
        assert_eq!(rel, ["a", "b/x"]);
        assert_eq!(doc.links[0].target, "../_rocm_sdk_libraries/a");
    }

    #[test]
    fn unsafe_relpath_is_refused() {
        let text = r#"{"version":"1","links":[{"relpath":"../x","target":"../x"}]}"#;
        assert!(DevelLinks::from_json(text).is_err());
    }

    #[test]
    fn json_shape() {
        let doc = DevelLinks::new("7.1.0", "_rocm_sdk_libraries", ["lib/k.co".to_string()]);
        assert_eq!(
            doc.to_json(),
            "{\n  \"version\": \"7.1.0\",\n  \"links\": [\n    {\n      \"relpath\": \"lib/k.co\",\n      \"target\": \"../../_rocm_sdk_libraries/lib/k.co\"\n    }\n  ]\n}\n"
        );
    }
}
