//! Which `DT_NEEDED` names may be left to the system: the libraries a
//! manylinux policy allows, the dynamic loader, and the libraries a
//! release deliberately leaves to the system (excluded).

use std::collections::BTreeSet;

use crate::manylinux::{Policies, Policy};

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

/// The names a file may need without the tree providing them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPolicy {
    allowed: BTreeSet<String>,
    excluded: BTreeSet<String>,
    loaders: BTreeSet<String>,
}

impl Default for SystemPolicy {
    /// The manylinux_2_28 policy plus [`LOADER_NAMES`].
    fn default() -> Self {
        Self::manylinux_2_28()
    }
}

impl SystemPolicy {
    /// The libraries `policy` allows plus [`LOADER_NAMES`].
    pub fn manylinux(policy: &Policy) -> Self {
        Self {
            allowed: policy.libraries().map(str::to_owned).collect(),
            excluded: BTreeSet::new(),
            loaders: LOADER_NAMES.iter().map(|&s| s.to_owned()).collect(),
        }
    }

    /// The manylinux_2_28 allowed list plus [`LOADER_NAMES`].
    pub fn manylinux_2_28() -> Self {
        Self::manylinux(
            Policies::auditwheel()
                .get("manylinux_2_28")
                .expect("the policy data defines manylinux_2_28"),
        )
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

    /// Accepts `names` as left to the system on purpose, although no
    /// policy allows them (auditwheel's `--exclude`): they resolve as
    /// [`crate::Resolution::Excluded`] when the tree does not provide them.
    #[must_use]
    pub fn with_excluded<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.excluded.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether `soname` is an allowed system library.
    pub fn allows(&self, soname: &str) -> bool {
        self.allowed.contains(soname)
    }

    /// Whether `soname` is deliberately left to the system.
    pub fn excludes(&self, soname: &str) -> bool {
        self.excluded.contains(soname)
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
    fn loader_is_not_a_library() {
        let p = SystemPolicy::default();
        assert!(p.is_loader("ld-linux-x86-64.so.2"));
        assert!(!p.allows("ld-linux-x86-64.so.2"));
        assert!(p.allows("libc.so.6"));
        assert!(p.allows("libmvec.so.1"));
        assert!(!p.allows("libcrypt.so.1"));
        assert!(!p.allows("libnuma.so.1"));
        assert_eq!(p.allowed().count(), 24);
        assert!(
            p.clone()
                .with_allowed(["libnuma.so.1"])
                .allows("libnuma.so.1")
        );
        let excluding = p.with_excluded(["libnuma.so.1"]);
        assert!(excluding.excludes("libnuma.so.1") && !excluding.allows("libnuma.so.1"));
    }

    #[test]
    fn older_policies_allow_fewer_libraries() {
        let policies = Policies::auditwheel();
        let old = SystemPolicy::manylinux(policies.get("manylinux_2_17").unwrap());
        assert!(!old.allows("libmvec.so.1"));
        assert!(old.allows("libexpat.so.1"));
    }
}
