//! The descriptive core metadata every package of a release carries:
//! `Summary`, `License-Expression`, `Project-URL` and `Requires-Python`
//! (`docs/dist-info.md`).
//!
//! The defaults are constants, so two builds of the same artifacts write the
//! same bytes; a release overrides them with a small TOML file
//! (`therock-package build --metadata FILE`):
//!
//! ```
//! use dist_info::package::PackageKind;
//! use dist_info::project_metadata::ProjectMetadata;
//!
//! let metadata = ProjectMetadata::from_toml(r#"
//!     license-expression = "MIT AND Apache-2.0"
//!     [project-urls]
//!     Homepage = "https://example.org/rocm"
//!     [summaries]
//!     device = "Device code for {target}, built by Example Corp"
//! "#).unwrap();
//! assert_eq!(metadata.license_expression, "MIT AND Apache-2.0");
//! assert_eq!(metadata.project_urls, [("Homepage".to_owned(), "https://example.org/rocm".to_owned())]);
//! assert_eq!(metadata.summary(PackageKind::Device, Some("gfx942")), "Device code for gfx942, built by Example Corp");
//! assert_eq!(metadata.summary(PackageKind::Core, None), "ROCm SDK core runtime and tools");
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::package::PackageKind;

/// `Requires-Python` of every package: the oldest Python the shipped
/// Python code (`rocm_sdk`, the console scripts, the sdist's build
/// backend) runs on, which the project's tests run it on.
pub const REQUIRES_PYTHON: &str = ">=3.9";

/// The default `License-Expression`: ROCm's own licence.
pub const DEFAULT_LICENSE_EXPRESSION: &str = "MIT";

/// The default `Project-URL` lines, in order.
pub const DEFAULT_PROJECT_URLS: [(&str, &str); 4] = [
    ("Homepage", "https://github.com/ROCm/TheRock"),
    ("Documentation", "https://rocm.docs.amd.com"),
    ("Source", "https://github.com/ROCm/TheRock"),
    ("Issues", "https://github.com/ROCm/TheRock/issues"),
];

/// The descriptive metadata of a release's packages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectMetadata {
    /// `License-Expression`: an SPDX expression.
    pub license_expression: String,
    /// `Project-URL` lines as (label, URL), in order.
    pub project_urls: Vec<(String, String)>,
    /// `Summary` per package kind; `{target}` stands for the family or
    /// target of a libraries or device package. Kinds not listed keep
    /// the default.
    pub summaries: BTreeMap<PackageKind, String>,
}

impl Default for ProjectMetadata {
    fn default() -> Self {
        Self {
            license_expression: DEFAULT_LICENSE_EXPRESSION.to_owned(),
            project_urls: DEFAULT_PROJECT_URLS
                .iter()
                .map(|(label, url)| ((*label).to_owned(), (*url).to_owned()))
                .collect(),
            summaries: BTreeMap::new(),
        }
    }
}

/// A metadata file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MetadataFileError {
    /// Not TOML, or a key this file does not have.
    #[error(
        "it is not a valid metadata file (keys: license-expression, [project-urls], [summaries])"
    )]
    Toml(#[from] toml::de::Error),
    /// A value the core metadata cannot carry.
    #[error("{field} {value:?}: {reason}")]
    Invalid {
        /// The key.
        field: String,
        /// The value.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
}

/// The file as written (kebab-case keys, every key optional).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct MetadataFile {
    license_expression: Option<String>,
    project_urls: Option<toml::Table>,
    #[serde(default)]
    summaries: BTreeMap<String, String>,
}

impl ProjectMetadata {
    /// Reads a metadata file: each key given replaces its default
    /// (`[project-urls]` replaces the whole list, in the file's order).
    pub fn from_toml(text: &str) -> Result<Self, MetadataFileError> {
        let file: MetadataFile = toml::from_str(text)?;
        let mut metadata = Self::default();
        if let Some(expression) = file.license_expression {
            one_line("license-expression", &expression)?;
            metadata.license_expression = expression;
        }
        if let Some(urls) = file.project_urls {
            metadata.project_urls.clear();
            for (label, url) in urls {
                let url = url.as_str().ok_or_else(|| MetadataFileError::Invalid {
                    field: format!("project-urls.{label}"),
                    value: url.to_string(),
                    reason: "a URL is a string",
                })?;
                if label.len() > 32 || label.contains(',') {
                    return Err(MetadataFileError::Invalid {
                        field: "project-urls".into(),
                        value: label,
                        reason: "a label is at most 32 characters and holds no comma",
                    });
                }
                one_line("project-urls", url)?;
                metadata.project_urls.push((label, url.to_owned()));
            }
        }
        for (name, summary) in file.summaries {
            let kind = name
                .parse::<PackageKind>()
                .map_err(|_| MetadataFileError::Invalid {
                    field: "summaries".into(),
                    value: name.clone(),
                    reason: "not a package; use meta, core, libraries, device, devel or profiler",
                })?;
            one_line("summaries", &summary)?;
            metadata.summaries.insert(kind, summary);
        }
        Ok(metadata)
    }

    /// The `Summary` of a package; `target` is the family of a legacy
    /// libraries package or the target of a device package.
    pub fn summary(&self, kind: PackageKind, target: Option<&str>) -> String {
        let target = target.unwrap_or_default();
        if let Some(summary) = self.summaries.get(&kind) {
            return summary.replace("{target}", target);
        }
        match kind {
            PackageKind::Meta => {
                "ROCm SDK: selects the packages this machine needs at install time".into()
            }
            PackageKind::Core => "ROCm SDK core runtime and tools".into(),
            PackageKind::Libraries if target.is_empty() => "ROCm SDK libraries (host code)".into(),
            PackageKind::Libraries => format!("ROCm SDK libraries for {target}"),
            PackageKind::Device => format!("ROCm SDK device code for {target}"),
            PackageKind::Devel => "ROCm SDK development tree".into(),
            PackageKind::Profiler => "ROCm profiling tools".into(),
        }
    }
}

fn one_line(field: &str, value: &str) -> Result<(), MetadataFileError> {
    if value.trim().is_empty() || value.contains(['\r', '\n']) {
        return Err(MetadataFileError::Invalid {
            field: field.to_owned(),
            value: value.to_owned(),
            reason: "it must be one non-empty line",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_keeps_every_default() {
        assert_eq!(
            ProjectMetadata::from_toml("").unwrap(),
            ProjectMetadata::default()
        );
    }

    #[test]
    fn bad_files_are_refused_with_the_key() {
        let err = ProjectMetadata::from_toml("licence = \"MIT\"").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("it is not a valid metadata file")
        );
        let err = ProjectMetadata::from_toml("[summaries]\nkernel = \"x\"").unwrap_err();
        insta::assert_snapshot!(err, @r#"summaries "kernel": not a package; use meta, core, libraries, device, devel or profiler"#);
        let err =
            ProjectMetadata::from_toml("[project-urls]\n\"a,b\" = \"https://x\"").unwrap_err();
        insta::assert_snapshot!(err, @r#"project-urls "a,b": a label is at most 32 characters and holds no comma"#);
        let err = ProjectMetadata::from_toml("license-expression = \"\"").unwrap_err();
        insta::assert_snapshot!(err, @r#"license-expression "": it must be one non-empty line"#);
    }

    #[test]
    fn project_urls_keep_the_file_order() {
        let metadata =
            ProjectMetadata::from_toml("[project-urls]\nZ = \"https://z\"\nA = \"https://a\"")
                .unwrap();
        let labels: Vec<&str> = metadata
            .project_urls
            .iter()
            .map(|(l, _)| l.as_str())
            .collect();
        assert_eq!(labels, ["Z", "A"]);
    }
}
