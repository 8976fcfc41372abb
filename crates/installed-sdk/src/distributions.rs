//! The ROCm distributions installed in a site-packages: every
//! `*.dist-info` whose name fits one of the document's `dist_template`s
//! (`rocm`, `rocm-sdk-core`, `rocm-sdk-libraries-{target}`, ...).

use std::fs;
use std::path::{Path, PathBuf};

use dist_info::document::{DistInfo, PackageRecord};
use dist_info::package::{PackageKind, TARGET_PLACEHOLDER};
use pypa_formats::filename::DistInfoDir;

use crate::error::Error;

/// One installed ROCm distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distribution {
    /// The display name from METADATA (`rocm-sdk-libraries-gfx94X-dcgpu`).
    pub name: String,
    /// The version from METADATA.
    pub version: String,
    /// The logical package it is.
    pub kind: PackageKind,
    /// The target part of a target-specific name, case kept.
    pub target: Option<String>,
    /// Its `.dist-info` directory.
    pub dist_info: PathBuf,
    /// Its pure Python package directory, when it has one.
    pub pure_package: Option<PathBuf>,
    /// Its platform package directory, when it has one (device: the
    /// libraries directory it overlays; devel: the tree `rocm-sdk init` makes).
    pub platform_package: Option<PathBuf>,
}

impl Distribution {
    /// `RECORD` of this distribution.
    pub fn record(&self) -> PathBuf {
        self.dist_info.join("RECORD")
    }
}

/// Every installed distribution of `document`'s package set, sorted by
/// `.dist-info` directory name.
pub fn installed(site_packages: &Path, document: &DistInfo) -> Result<Vec<Distribution>, Error> {
    let entries = fs::read_dir(site_packages).map_err(|e| Error::read(site_packages, e))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(DistInfoDir::SUFFIX))
        .collect();
    names.sort();
    let mut found = Vec::new();
    for name in names {
        let dir = site_packages.join(&name);
        let Some((display, version)) = metadata_name_version(&dir) else {
            continue;
        };
        let Some((record, target)) = document
            .packages
            .iter()
            .find_map(|p| matches(p, &display).map(|m| (p, m.target)))
        else {
            continue;
        };
        let substitute = |template: &Option<String>| {
            template.as_deref().map(|t| {
                let t = match &target {
                    Some(target) => t.replace(TARGET_PLACEHOLDER, &target.replace('-', "_")),
                    None => t.to_owned(),
                };
                site_packages.join(t)
            })
        };
        found.push(Distribution {
            name: display,
            version,
            kind: record.logical,
            pure_package: substitute(&record.pure_package_template),
            platform_package: substitute(&record.platform_package_template),
            target,
            dist_info: dir,
        });
    }
    Ok(found)
}

/// Some when `name` is `record`'s distribution (with the target of a
/// target-specific name); compared case-insensitively with
/// `_` and `.` taken as `-` (which keeps lengths, so the target is cut from
/// the display name with its case).
fn matches(record: &PackageRecord, name: &str) -> Option<NameMatch> {
    let template = &record.dist_template;
    let norm = fold(name);
    match template.split_once(TARGET_PLACEHOLDER) {
        None => (fold(template) == norm).then_some(NameMatch { target: None }),
        Some((prefix, suffix)) => {
            let ok = norm.len() > prefix.len() + suffix.len()
                && norm.starts_with(&fold(prefix))
                && norm.ends_with(&fold(suffix));
            ok.then(|| name.get(prefix.len()..name.len() - suffix.len()))
                .flatten()
                .map(|t| NameMatch {
                    target: Some(t.to_owned()),
                })
        }
    }
}

/// A distribution name that fits a template.
#[derive(Debug, PartialEq, Eq)]
struct NameMatch {
    /// What stands for `{target}`, case kept.
    target: Option<String>,
}

/// Lower case with `_` and `.` as `-`: PEP 503 equality for names without
/// runs of separators, which all ROCm distribution names are. Unlike
/// `pypa_formats::dist_name::normalize` it keeps the length, so the target can
/// be cut from the display name at the template's offsets.
fn fold(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '_' | '.' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// `Name` and `Version` of a `.dist-info` directory's METADATA.
fn metadata_name_version(dist_info: &Path) -> Option<(String, String)> {
    // A regular file of reasonable size only: the header block is small.
    let bytes = fs_helpers::confined::read_regular(&dist_info.join("METADATA"), 16 << 20).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let headers = pypa_formats::core_metadata::headers(&text);
    let first = |key: &str| {
        headers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.clone())
    };
    Some((first("Name")?, first("Version")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(template: &str) -> PackageRecord {
        PackageRecord {
            logical: PackageKind::Libraries,
            dist_template: template.to_owned(),
            pure_package_template: None,
            platform_package_template: None,
            required: false,
            target_specific: template.contains(TARGET_PLACEHOLDER),
        }
    }

    #[test]
    fn target_specific_names_keep_the_target_case() {
        let r = record("rocm-sdk-libraries-{target}");
        assert_eq!(
            matches(&r, "rocm-sdk-libraries-gfx94X-dcgpu"),
            Some(NameMatch {
                target: Some("gfx94X-dcgpu".to_owned())
            })
        );
        assert_eq!(matches(&r, "rocm-sdk-libraries"), None);
        assert_eq!(matches(&r, "rocm-sdk-core"), None);
    }

    #[test]
    fn plain_names_compare_normalised() {
        let r = record("rocm-sdk-core");
        assert_eq!(
            matches(&r, "rocm_sdk_core"),
            Some(NameMatch { target: None })
        );
        assert_eq!(
            matches(&r, "ROCm-SDK-Core"),
            Some(NameMatch { target: None })
        );
        assert_eq!(matches(&r, "rocm-sdk-core-extra"), None);
    }

    #[test]
    fn metadata_header_stops_at_the_body() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("METADATA"),
            "Metadata-Version: 2.4\nName: rocm-sdk-core\nVersion: 7.1.0\n\nName: body\n",
        )
        .unwrap();
        assert_eq!(
            metadata_name_version(dir.path()),
            Some(("rocm-sdk-core".to_owned(), "7.1.0".to_owned()))
        );
    }
}
