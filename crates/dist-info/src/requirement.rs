//! Requirements as data, with their PEP 508 rendering (docs/behaviour.md#pins, #extras).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A platform a release targets, as the `sys_platform` marker names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Platform {
    /// `sys_platform == "linux"`.
    #[serde(rename = "linux")]
    Linux,
    /// `sys_platform == "win32"`.
    #[serde(rename = "win32")]
    Windows,
}

impl Platform {
    /// The platform a concrete wheel platform tag installs on: every `win*`
    /// tag (`win_amd64`, `win_arm64`, `win32`) is Windows; `linux_*`,
    /// `manylinux*` and `musllinux*` are Linux; anything else (`any`,
    /// `macosx_*`) is neither. The one place the build, `verify` and
    /// `assemble` tell a Windows tag from another.
    ///
    /// ```
    /// use dist_info::requirement::Platform;
    /// assert_eq!(Platform::of_wheel_tag("win_arm64"), Some(Platform::Windows));
    /// assert_eq!(Platform::of_wheel_tag("manylinux_2_28_x86_64"), Some(Platform::Linux));
    /// assert_eq!(Platform::of_wheel_tag("any"), None);
    /// ```
    pub fn of_wheel_tag(tag: &str) -> Option<Self> {
        if tag.starts_with("win") {
            Some(Platform::Windows)
        } else if ["linux", "manylinux", "musllinux"]
            .iter()
            .any(|prefix| tag.starts_with(prefix))
        {
            Some(Platform::Linux)
        } else {
            None
        }
    }

    /// Whether the wheel platform tag `tag` is a Windows tag
    /// ([`Platform::of_wheel_tag`]): its packages get Windows' rules
    /// (program modes, DLL search, the names of `windows_names`).
    pub fn is_windows_tag(tag: &str) -> bool {
        Self::of_wheel_tag(tag) == Some(Platform::Windows)
    }

    /// The value of Python's `sys.platform` on this platform.
    pub fn sys_platform(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Windows => "win32",
        }
    }
}

/// One requirement of the `rocm` sdist: always an exact pin `name==version`,
/// optionally limited to one platform and/or one extra.
///
/// ```
/// use dist_info::requirement::{Platform, Requirement};
/// let r = Requirement::pin("rocm-sdk-device-gfx942", "7.1.0")
///     .on_platform(Some(Platform::Linux))
///     .for_extra("device-gfx942");
/// assert_eq!(
///     r.to_string(),
///     r#"rocm-sdk-device-gfx942==7.1.0; extra == "device-gfx942" and sys_platform == "linux""#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Requirement {
    /// The distribution name (display form).
    pub name: String,
    /// The exact version pinned with `==`.
    pub version: String,
    /// The only platform this applies to, if any.
    pub platform: Option<Platform>,
    /// The extra (normalised, PEP 685) that brings it in, if any.
    pub extra: Option<String>,
}

impl Requirement {
    /// `name==version` for every platform, not behind an extra.
    pub fn pin(name: &str, version: &str) -> Self {
        Self {
            name: name.to_owned(),
            version: version.to_owned(),
            platform: None,
            extra: None,
        }
    }

    /// The same requirement limited to `platform` (`None`: all platforms).
    #[must_use]
    pub fn on_platform(mut self, platform: Option<Platform>) -> Self {
        self.platform = platform;
        self
    }

    /// The same requirement behind `extra` (normalised per PEP 685).
    #[must_use]
    pub fn for_extra(mut self, extra: &str) -> Self {
        self.extra = Some(pypa_formats::dist_name::normalize(extra));
        self
    }

    /// The environment marker alone (no `; `), `None` when unconditional.
    /// The extra clause comes first so a reader sees at once which extra a
    /// line belongs to; `and` is commutative, so pip reads either order.
    pub fn marker(&self) -> Option<String> {
        let mut clauses = Vec::new();
        if let Some(extra) = &self.extra {
            clauses.push(format!("extra == \"{extra}\""));
        }
        if let Some(platform) = self.platform {
            clauses.push(format!("sys_platform == \"{}\"", platform.sys_platform()));
        }
        (!clauses.is_empty()).then(|| clauses.join(" and "))
    }
}

impl fmt::Display for Requirement {
    /// The PEP 508 line as written after `Requires-Dist: `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=={}", self.name, self.version)?;
        if let Some(marker) = self.marker() {
            write!(f, "; {marker}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renderings() {
        assert_eq!(
            Requirement::pin("rocm-sdk-core", "7.1.0").to_string(),
            "rocm-sdk-core==7.1.0"
        );
        assert_eq!(
            Requirement::pin("rocm-sdk-devel", "7.1.0.dev0+abc")
                .for_extra("devel")
                .to_string(),
            "rocm-sdk-devel==7.1.0.dev0+abc; extra == \"devel\""
        );
        assert_eq!(
            Requirement::pin("rocm-profiler", "7.1.0")
                .on_platform(Some(Platform::Windows))
                .to_string(),
            "rocm-profiler==7.1.0; sys_platform == \"win32\""
        );
        assert_eq!(Requirement::pin("x", "1").marker(), None);
    }

    #[test]
    fn extra_normalisation() {
        for (extra, normalised) in [
            ("device-gfx942", "device-gfx942"),
            ("Device.-_All", "device-all"),
            ("libraries", "libraries"),
        ] {
            assert_eq!(
                Requirement::pin("a", "1").for_extra(extra).extra.as_deref(),
                Some(normalised)
            );
        }
        assert_eq!(
            Requirement::pin("a", "1")
                .for_extra("DEVICE_gfx1100")
                .extra
                .as_deref(),
            Some("device-gfx1100")
        );
    }
}
