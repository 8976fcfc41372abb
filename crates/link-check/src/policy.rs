//! Which `DT_NEEDED` names may be left to the system: the libraries the
//! manylinux_2_28 policy allows, and the dynamic loader.

use std::collections::BTreeSet;

/// The manylinux_2_28 allowed list, as auditwheel ships it (see the comment
/// at the top of the data file for the exact source).
const MANYLINUX_2_28: &str = include_str!("../data/manylinux_2_28_libs.txt");

/// Sonames of the dynamic loader on the Linux architectures Python wheels
/// are built for. The loader is never shipped and never on an allowed list,
/// yet every dynamically linked glibc program may name it.
pub const LOADER_NAMES: &[&str] = &[
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
    "ld-linux.so.2",
    "ld-linux-armhf.so.3",
    "ld64.so.2",
    "ld64.so.1",
    "ld-linux-riscv64-lp64d.so.1",
];

/// The manylinux_2_28 allowed sonames, in auditwheel's order.
pub fn manylinux_2_28_libraries() -> impl Iterator<Item = &'static str> {
    MANYLINUX_2_28
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// The names a file may need without the tree providing them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPolicy {
    allowed: BTreeSet<String>,
    loaders: BTreeSet<String>,
}

impl Default for SystemPolicy {
    /// The manylinux_2_28 policy plus [`LOADER_NAMES`].
    fn default() -> Self {
        Self::manylinux_2_28()
    }
}

impl SystemPolicy {
    /// The manylinux_2_28 allowed list plus [`LOADER_NAMES`].
    pub fn manylinux_2_28() -> Self {
        Self {
            allowed: manylinux_2_28_libraries().map(str::to_owned).collect(),
            loaders: LOADER_NAMES.iter().map(|&s| s.to_owned()).collect(),
        }
    }

    /// Also allows `names` (for example libraries a driver install provides).
    #[must_use]
    pub fn with_allowed<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether `soname` is an allowed system library.
    pub fn allows(&self, soname: &str) -> bool {
        self.allowed.contains(soname)
    }

    /// Whether `soname` names the dynamic loader.
    pub fn is_loader(&self, soname: &str) -> bool {
        self.loaders.contains(soname)
    }

    /// The allowed sonames, sorted.
    pub fn allowed(&self) -> impl Iterator<Item = &str> {
        self.allowed.iter().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_auditwheels_manylinux_2_28() {
        let libs: Vec<_> = manylinux_2_28_libraries().collect();
        assert_eq!(libs.len(), 24);
        assert_eq!(libs[0], "libatomic.so.1");
        assert!(libs.contains(&"libstdc++.so.6"));
        assert!(libs.contains(&"libmvec.so.1"));
        assert!(!libs.contains(&"libcrypt.so.1"));
        assert!(!libs.iter().any(|l| l.starts_with("ld-")));
    }

    #[test]
    fn loader_is_not_a_library() {
        let p = SystemPolicy::default();
        assert!(p.is_loader("ld-linux-x86-64.so.2"));
        assert!(!p.allows("ld-linux-x86-64.so.2"));
        assert!(p.allows("libc.so.6"));
        assert!(!p.allows("libnuma.so.1"));
        assert!(
            p.clone()
                .with_allowed(["libnuma.so.1"])
                .allows("libnuma.so.1")
        );
    }
}
