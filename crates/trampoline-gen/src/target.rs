//! The relative target a launcher execs, validated once.

use std::fmt;
use std::path::Path;

use crate::Error;

/// A target path relative to the launcher's own directory, with `/`
/// separators (`../libexec/rocm_smi/rocm_smi.py`): non-empty, not absolute,
/// no NUL, not ending in `/`, UTF-8. `..` components are fine; they are
/// resolved by the kernel against the launcher's real directory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelativeTarget(String);

impl RelativeTarget {
    /// Validates `target`.
    ///
    /// ```
    /// use trampoline_gen::RelativeTarget;
    /// assert!(RelativeTarget::new("../lib/llvm/bin/clang").is_ok());
    /// assert!(RelativeTarget::new("/usr/bin/clang").is_err());
    /// ```
    pub fn new(target: impl AsRef<Path>) -> Result<RelativeTarget, Error> {
        let target = target.as_ref();
        let Some(text) = target.to_str() else {
            return Err(Error::NonUtf8Target {
                target: target.to_owned(),
            });
        };
        if text.is_empty() {
            return Err(Error::EmptyTarget);
        }
        if text.contains('\0') {
            return Err(Error::NulInTarget {
                target: text.to_owned(),
            });
        }
        if text.starts_with('/') || target.is_absolute() {
            return Err(Error::AbsoluteTarget {
                target: text.to_owned(),
            });
        }
        if text.ends_with('/') {
            return Err(Error::DirectoryTarget {
                target: text.to_owned(),
            });
        }
        Ok(RelativeTarget(text.to_owned()))
    }

    /// The target as written into the launcher.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: an empty target is rejected by [`RelativeTarget::new`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for RelativeTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<Path> for RelativeTarget {
    fn as_ref(&self) -> &Path {
        Path::new(&self.0)
    }
}

impl AsRef<str> for RelativeTarget {
    fn as_ref(&self) -> &str {
        &self.0
    }
}
