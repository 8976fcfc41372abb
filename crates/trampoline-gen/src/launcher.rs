//! A launcher: an image with its target written in, as bytes or a file.

use std::io::Write as _;
use std::path::Path;

use fs_helpers::atomic_write::AtomicFile;

use crate::slot_layout::{SLOT_LEN, SLOT_MARKER};
use crate::{Error, Platform, RelativeTarget, SlotError, image, slot};

/// A launcher for one platform and relative target: the bytes of an
/// executable to put where the symlink was.
#[derive(Clone, PartialEq, Eq)]
pub struct Launcher {
    platform: Platform,
    target: RelativeTarget,
    bytes: Vec<u8>,
}

impl Launcher {
    /// The file mode a launcher is written (and packaged) with.
    pub const MODE: u32 = 0o755;

    /// Makes the launcher that execs `target`, resolved against the
    /// launcher's own directory. No compiler runs: the target is written
    /// into the embedded image's slot, so the same inputs give the same
    /// bytes.
    ///
    /// Fails on an empty, absolute or NUL-containing target, or one longer
    /// than [`Platform::max_target_len`].
    pub fn for_target(platform: Platform, target: impl AsRef<Path>) -> Result<Launcher, Error> {
        let target = RelativeTarget::new(target)?;
        let max = platform.max_target_len();
        if target.len() > max {
            return Err(Error::TargetTooLong {
                target: target.as_str().to_owned(),
                len: target.len(),
                max,
                platform,
            });
        }
        let image = image::for_platform(platform);
        let bytes = slot::fill(image.bytes, image.slot_offset, &target);
        Ok(Launcher {
            platform,
            target,
            bytes,
        })
    }

    /// Recognises `bytes` as a launcher made by this build: the slot holds
    /// a valid target and every other byte equals one platform's image.
    /// Use [`read_target`] to read launchers of other builds too.
    pub fn parse(bytes: &[u8]) -> Result<Launcher, Error> {
        let (offset, target) = slot::read(bytes)?;
        let platform = Platform::ALL
            .iter()
            .copied()
            .find(|&p| {
                let image = image::for_platform(p);
                image.slot_offset == offset
                    && image.bytes.len() == bytes.len()
                    && image.bytes[..offset + SLOT_MARKER.len()]
                        == bytes[..offset + SLOT_MARKER.len()]
                    && image.bytes[offset + SLOT_LEN..] == bytes[offset + SLOT_LEN..]
            })
            .ok_or(SlotError::UnknownImage)?;
        Ok(Launcher {
            platform,
            target,
            bytes: bytes.to_vec(),
        })
    }

    /// The platform the launcher runs on.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// The relative target it execs.
    pub fn target(&self) -> &RelativeTarget {
        &self.target
    }

    /// The executable's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The executable's bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Writes the launcher to `path` with mode 0755, atomically
    /// (`fs_helpers::atomic_write`): the bytes go to a temporary file beside
    /// `path`, then renamed over it, so readers see the old file
    /// or the whole new one and a failure leaves no partial file.
    pub fn write_to(&self, path: &Path) -> Result<(), Error> {
        let err = |source| Error::Write {
            path: path.to_owned(),
            source,
        };
        let mut file = AtomicFile::create(path).map_err(err)?;
        file.write_all(&self.bytes).map_err(err)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            // Explicit, so the result does not depend on the umask.
            file.file()
                .set_permissions(std::fs::Permissions::from_mode(Self::MODE))
                .map_err(err)?;
        }
        file.commit().map_err(err)?;
        Ok(())
    }
}

impl std::fmt::Debug for Launcher {
    // The bytes are an executable image; their length says enough.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launcher")
            .field("platform", &self.platform)
            .field("target", &self.target.as_str())
            .field("len", &self.bytes.len())
            .finish()
    }
}

/// Reads the relative target out of launcher bytes, from this or any build
/// with the same slot layout (for `verify` and tests).
pub fn read_target(bytes: &[u8]) -> Result<RelativeTarget, Error> {
    Ok(slot::read(bytes)?.1)
}

/// Reads the relative target out of the launcher file at `path`.
pub fn read_target_file(path: &Path) -> Result<RelativeTarget, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })?;
    slot::read(&bytes)
        .map(|(_, target)| target)
        .map_err(|source| Error::NotALauncherFile {
            path: path.to_owned(),
            source,
        })
}
