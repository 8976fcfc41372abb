//! Core metadata 2.4: the `METADATA` of a wheel and the `PKG-INFO` of an sdist.

use std::fmt::Write as _;

use pypa_formats::dist_name::DistName;
use pypa_formats::version::CanonicalVersion;

use crate::Error;

/// The core metadata of one distribution, as plain data.
///
/// Requirements and markers arrive already rendered as PEP 508 strings
/// (`rocm-sdk-core==7.0.0`, `rocm-sdk-devel==7.0.0; extra == "devel"`); list
/// fields are written in the order given, since their order carries meaning
/// for readers (and the caller's model is itself deterministic).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CoreMetadata {
    /// `Name`: the display name (`rocm-sdk-core`); file names use its escaped form.
    pub name: String,
    /// `Version`: a canonical PEP 440 version.
    pub version: String,
    /// `Summary`: one line.
    pub summary: Option<String>,
    /// `Author`.
    pub author: Option<String>,
    /// `Author-email`.
    pub author_email: Option<String>,
    /// `License-Expression`: an SPDX expression.
    pub license_expression: Option<String>,
    /// `License-File`: paths (relative to `.dist-info/licenses/`) of shipped licence files.
    pub license_files: Vec<String>,
    /// `Classifier` lines.
    pub classifiers: Vec<String>,
    /// `Project-URL` lines as (label, URL).
    pub project_urls: Vec<(String, String)>,
    /// `Requires-Python`: a version specifier (`>=3.9`).
    pub requires_python: Option<String>,
    /// `Requires-Dist` lines: PEP 508 requirements with markers.
    pub requires_dist: Vec<String>,
    /// `Provides-Extra` lines: normalised extra names.
    pub provides_extra: Vec<String>,
    /// `Dynamic` lines (PEP 643): fields an sdist's build may change.
    pub dynamic: Vec<String>,
    /// `Description-Content-Type` (`text/markdown`).
    pub description_content_type: Option<String>,
    /// The long description, written as the message body.
    pub description: Option<String>,
}

impl CoreMetadata {
    /// Metadata with only the required fields set.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            ..Self::default()
        }
    }

    /// The name and version, parsed: a PEP 508 name and a version already in
    /// canonical PEP 440 form (this crate writes both verbatim into file
    /// names and metadata, so it refuses anything a normaliser would change).
    pub(crate) fn name_and_version(&self) -> Result<(DistName, CanonicalVersion), Error> {
        Ok((self.name.parse()?, self.version.parse()?))
    }

    /// Checks every field against what the format can carry.
    pub fn validate(&self) -> Result<(), Error> {
        self.name_and_version()?;
        let single = |field: &'static str, value: &str| -> Result<(), Error> {
            if value.is_empty() || value.contains(['\r', '\n']) {
                return Err(Error::InvalidMetadata {
                    field,
                    value: value.to_owned(),
                    reason: "it must be one non-empty line",
                });
            }
            Ok(())
        };
        let optional = [
            ("Summary", &self.summary),
            ("Author", &self.author),
            ("Author-email", &self.author_email),
            ("License-Expression", &self.license_expression),
            ("Requires-Python", &self.requires_python),
            ("Description-Content-Type", &self.description_content_type),
        ];
        for (field, value) in optional {
            if let Some(value) = value {
                single(field, value)?;
            }
        }
        for value in &self.license_files {
            single("License-File", value)?;
        }
        for value in &self.classifiers {
            single("Classifier", value)?;
        }
        for value in &self.requires_dist {
            single("Requires-Dist", value)?;
        }
        for (label, url) in &self.project_urls {
            single("Project-URL", label)?;
            single("Project-URL", url)?;
            if label.len() > 32 || label.contains(',') {
                return Err(Error::InvalidMetadata {
                    field: "Project-URL",
                    value: label.clone(),
                    reason: "a label is at most 32 characters and holds no comma",
                });
            }
        }
        for extra in &self.provides_extra {
            let normalised = extra
                .parse::<DistName>()
                .is_ok_and(|name| name.normalized() == *extra);
            if !normalised {
                return Err(Error::InvalidMetadata {
                    field: "Provides-Extra",
                    value: extra.clone(),
                    reason: "extra names must be normalised (lower-case letters, digits, single `-`)",
                });
            }
        }
        for field in &self.dynamic {
            let lower = field.to_ascii_lowercase();
            let well_formed = !field.is_empty()
                && field
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-');
            if !well_formed || matches!(lower.as_str(), "name" | "version" | "metadata-version") {
                return Err(Error::InvalidMetadata {
                    field: "Dynamic",
                    value: field.clone(),
                    reason: "it must name a field other than Name, Version and Metadata-Version",
                });
            }
        }
        Ok(())
    }

    /// The `METADATA`/`PKG-INFO` text (LF line ends), after [`Self::validate`].
    pub fn render(&self) -> Result<String, Error> {
        self.validate()?;
        let mut out = String::new();
        let mut line = |field: &str, value: &str| {
            let _ = writeln!(out, "{field}: {value}");
        };
        line("Metadata-Version", "2.4");
        line("Name", &self.name);
        line("Version", &self.version);
        for field in &self.dynamic {
            line("Dynamic", field);
        }
        let optional = [
            ("Summary", &self.summary),
            ("Author", &self.author),
            ("Author-email", &self.author_email),
            ("License-Expression", &self.license_expression),
        ];
        for (field, value) in optional {
            if let Some(value) = value {
                line(field, value);
            }
        }
        for value in &self.license_files {
            line("License-File", value);
        }
        for value in &self.classifiers {
            line("Classifier", value);
        }
        for (label, url) in &self.project_urls {
            line("Project-URL", &format!("{label}, {url}"));
        }
        if let Some(value) = &self.requires_python {
            line("Requires-Python", value);
        }
        for value in &self.requires_dist {
            line("Requires-Dist", value);
        }
        for value in &self.provides_extra {
            line("Provides-Extra", value);
        }
        if let Some(value) = &self.description_content_type {
            line("Description-Content-Type", value);
        }
        if let Some(description) = &self.description {
            // The body follows one empty line; normalise line ends to LF.
            out.push('\n');
            out.push_str(&description.replace("\r\n", "\n"));
            if !out.ends_with('\n') {
                out.push('\n');
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_may_not_name_identity_fields() {
        let mut m = CoreMetadata::new("rocm", "7.0.0");
        m.dynamic = vec!["Version".into()];
        assert!(m.render().is_err());
        m.dynamic = vec!["Requires-Dist".into()];
        assert!(m.render().unwrap().contains("Dynamic: Requires-Dist\n"));
    }

    #[test]
    fn extras_must_be_normalised() {
        let mut m = CoreMetadata::new("rocm", "7.0.0");
        for (extra, ok) in [
            ("device-gfx942", true),
            ("device_gfx942", false),
            ("Device", false),
            ("", false),
        ] {
            m.provides_extra = vec![extra.into()];
            assert_eq!(m.validate().is_ok(), ok, "{extra:?}");
        }
    }

    #[test]
    fn names_and_versions_are_checked_once_with_their_rule() {
        let err = CoreMetadata::new("-rocm", "7.0.0").validate().unwrap_err();
        assert!(matches!(err, Error::InvalidName(_)), "{err}");
        let err = CoreMetadata::new("rocm", "7.0.0-rc1")
            .validate()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "version \"7.0.0-rc1\" is not a canonical PEP 440 version (for example `7.0.0`, \
             `7.0.0rc1`, `7.0.0.dev0+abc`), its canonical spelling is `7.0.0rc1`; \
             normalise it before packaging"
        );
    }

    #[test]
    fn multi_line_values_are_refused() {
        let mut m = CoreMetadata::new("rocm", "7.0.0");
        m.summary = Some("one\ntwo".into());
        assert!(matches!(
            m.render(),
            Err(Error::InvalidMetadata {
                field: "Summary",
                ..
            })
        ));
    }
}
