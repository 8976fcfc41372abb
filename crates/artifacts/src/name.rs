//! Artifact names: `{name}_{component}_{target}`, as directories or archives.

use std::fmt;

/// The target field of generic (architecture-neutral) artifacts.
pub const GENERIC_TARGET: &str = "generic";

/// The name of an artifact: `{name}_{component}_{target}`.
///
/// None of the three fields is empty or contains `_` (or `/`); the target may
/// contain `:` (`gfx942:xnack+` in kpack-split builds).
///
/// ```
/// use artifacts::ArtifactName;
/// let n = ArtifactName::parse("core-hip_lib_gfx942:xnack+").unwrap();
/// assert_eq!((n.name(), n.component(), n.target()), ("core-hip", "lib", "gfx942:xnack+"));
/// assert_eq!(n.to_string(), "core-hip_lib_gfx942:xnack+");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ArtifactName {
    name: String,
    component: String,
    target: String,
}

impl ArtifactName {
    /// Builds a name from its three fields; `None` if a field is empty or
    /// contains `_`, `/` or NUL.
    pub fn new(name: &str, component: &str, target: &str) -> Option<Self> {
        let ok = |f: &str| !f.is_empty() && !f.contains(['_', '/', '\0']);
        (ok(name) && ok(component) && ok(target)).then(|| Self {
            name: name.to_owned(),
            component: component.to_owned(),
            target: target.to_owned(),
        })
    }

    /// Parses a directory name `{name}_{component}_{target}`; `None` when it
    /// does not have exactly three non-empty `_`-separated fields.
    pub fn parse(dir_name: &str) -> Option<Self> {
        let mut fields = dir_name.split('_');
        let (name, component, target) = (fields.next()?, fields.next()?, fields.next()?);
        if fields.next().is_some() {
            return None;
        }
        Self::new(name, component, target)
    }

    /// Parses an archive file name `{name}_{component}_{target}.tar.zst` or `.tar.xz`.
    pub fn parse_archive(file_name: &str) -> Option<(Self, ArchiveFormat)> {
        ArchiveFormat::ALL.into_iter().find_map(|format| {
            let stem = file_name.strip_suffix(format.extension())?;
            Some((Self::parse(stem)?, format))
        })
    }

    /// The artifact's name, e.g. `core-hip`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The component, e.g. `lib`, `run`, `dev`, `doc`, `dbg`, `test`.
    pub fn component(&self) -> &str {
        &self.component
    }

    /// The target: `generic`, a family (legacy) or a target (kpack-split).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Whether the target is `generic`.
    pub fn is_generic(&self) -> bool {
        self.target == GENERIC_TARGET
    }
}

impl fmt::Display for ArtifactName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}_{}", self.name, self.component, self.target)
    }
}

/// The compression of an archive artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArchiveFormat {
    /// `.tar.zst`
    TarZst,
    /// `.tar.xz`
    TarXz,
}

impl ArchiveFormat {
    /// Every supported format, in order of preference when both exist.
    pub const ALL: [Self; 2] = [Self::TarZst, Self::TarXz];

    /// The file-name extension, with its leading dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::TarZst => ".tar.zst",
            Self::TarXz => ".tar.xz",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_three_fields_with_colon_in_target() {
        let n = ArtifactName::parse("blas_lib_gfx942:xnack-").unwrap();
        assert_eq!(n.target(), "gfx942:xnack-");
        assert!(!n.is_generic());
        assert!(
            ArtifactName::parse("base_lib_generic")
                .unwrap()
                .is_generic()
        );
    }

    #[test]
    fn rejects_wrong_field_counts_and_empty_fields() {
        for bad in [
            "base_lib",
            "a_b_c_d",
            "_lib_generic",
            "base__generic",
            "base_lib_",
            "",
            "x",
        ] {
            assert_eq!(ArtifactName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn parses_archive_names() {
        let (n, f) = ArtifactName::parse_archive("fft_lib_gfx1100.tar.xz").unwrap();
        assert_eq!(
            (n.to_string().as_str(), f),
            ("fft_lib_gfx1100", ArchiveFormat::TarXz)
        );
        let (_, f) = ArtifactName::parse_archive("fft_lib_generic.tar.zst").unwrap();
        assert_eq!(f, ArchiveFormat::TarZst);
        assert_eq!(ArtifactName::parse_archive("fft_lib_generic.tar.gz"), None);
        assert_eq!(ArtifactName::parse_archive("fft_lib_generic"), None);
    }

    #[test]
    fn orders_by_name_component_target() {
        let mut v: Vec<_> = ["b_lib_x", "a_run_x", "a_lib_y", "a_lib_x"]
            .iter()
            .map(|s| ArtifactName::parse(s).unwrap())
            .collect();
        v.sort();
        let s: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(s, ["a_lib_x", "a_lib_y", "a_run_x", "b_lib_x"]);
    }
}
