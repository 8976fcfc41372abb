//! The platforms a launcher image exists for.

use std::fmt;

use crate::Error;
use crate::image;

/// A platform that launchers run on. Linux x86_64 now; aarch64 and Windows
/// images slot in later as new variants without changing callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Platform {
    /// Linux on x86_64 (wheel tags `linux_x86_64`, `manylinux*_x86_64`,
    /// `musllinux*_x86_64`): a static ELF executable with no libc, so it
    /// runs on any glibc or musl host.
    LinuxX86_64,
}

impl Platform {
    /// Every platform this build has a launcher image for.
    pub const ALL: &'static [Platform] = &[Platform::LinuxX86_64];

    /// The platform for a wheel platform tag (`linux_x86_64`,
    /// `manylinux_2_28_x86_64`, ...), or [`Error::UnsupportedPlatform`].
    ///
    /// ```
    /// use trampoline_gen::Platform;
    /// assert_eq!(Platform::from_wheel_tag("manylinux_2_28_x86_64")?, Platform::LinuxX86_64);
    /// assert!(Platform::from_wheel_tag("win_amd64").is_err());
    /// # Ok::<(), trampoline_gen::Error>(())
    /// ```
    pub fn from_wheel_tag(tag: &str) -> Result<Platform, Error> {
        let linux = tag.starts_with("linux_")
            || tag.starts_with("manylinux")
            || tag.starts_with("musllinux");
        if linux && tag.ends_with("_x86_64") {
            return Ok(Platform::LinuxX86_64);
        }
        Err(Error::UnsupportedPlatform {
            tag: tag.to_owned(),
            available: Platform::ALL
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// A short stable name, `linux-x86_64`.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::LinuxX86_64 => "linux-x86_64",
        }
    }

    /// The pristine launcher image (no target written), as embedded.
    pub fn image(self) -> &'static [u8] {
        image::for_platform(self).bytes
    }

    /// The longest relative target, in bytes, this platform's launcher
    /// holds (at least 1024).
    pub fn max_target_len(self) -> usize {
        crate::slot_layout::MAX_TARGET_LEN
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
