//! The manylinux policies as auditwheel defines them (PEP 600): per policy,
//! the system libraries a wheel may leave to the system, the symbol
//! versions it may need per versioned namespace (`GLIBC`, `GLIBCXX`,
//! `CXXABI`, `GCC`, `LIBATOMIC`, `ZLIB`) and architecture, and the symbols
//! it must not import from some of those libraries (the blacklist).
//!
//! The data is auditwheel's `manylinux-policy.json`, copied into
//! `data/manylinux-policy.json` (its source named at the top of the file)
//! and written as constants into `manylinux/table.rs`, which a test keeps
//! equal to the file: reading the policies needs no JSON parser.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

#[rustfmt::skip] // generated
mod table;

/// An architecture manylinux policies are defined for here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Arch {
    /// `x86_64`.
    #[cfg_attr(feature = "serde", serde(rename = "x86_64"))]
    X86_64,
    /// `aarch64`.
    #[cfg_attr(feature = "serde", serde(rename = "aarch64"))]
    Aarch64,
}

impl Arch {
    /// Every architecture, in a stable order.
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    /// The name used in platform tags and in the policy data.
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The ELF `e_machine` of files built for it.
    pub fn elf_machine(self) -> u16 {
        match self {
            Arch::X86_64 => 62,
            Arch::Aarch64 => 183,
        }
    }

    /// `linux_{arch}`: the tag of a wheel no manylinux policy admits.
    pub fn linux_tag(self) -> String {
        format!("linux_{self}")
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A Linux platform tag: `manylinux_2_28_x86_64`, `manylinux2014_aarch64`
/// or `linux_x86_64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxTag {
    /// A manylinux tag: the wheel claims this policy.
    Manylinux {
        /// The policy the tag names (legacy aliases resolved).
        policy: &'static Policy,
        /// Its architecture.
        arch: Arch,
    },
    /// `linux_{arch}`: no portability claim.
    Linux(Arch),
}

impl LinuxTag {
    /// Parses one platform tag; `None` for tags of other systems or
    /// architectures (`win_amd64`, `musllinux_1_2_x86_64`, `linux_armv7l`,
    /// `any`).
    ///
    /// ```
    /// use link_check::{Arch, LinuxTag};
    /// let Some(LinuxTag::Manylinux { policy, arch }) = LinuxTag::parse("manylinux2014_x86_64") else { panic!() };
    /// assert_eq!((policy.name(), arch), ("manylinux_2_17", Arch::X86_64));
    /// assert_eq!(LinuxTag::parse("linux_aarch64"), Some(LinuxTag::Linux(Arch::Aarch64)));
    /// assert_eq!(LinuxTag::parse("win_amd64"), None);
    /// ```
    pub fn parse(tag: &str) -> Option<LinuxTag> {
        let (stem, arch) = Arch::ALL.into_iter().find_map(|arch| {
            let stem = tag.strip_suffix(arch.as_str())?.strip_suffix('_')?;
            Some((stem, arch))
        })?;
        if stem == "linux" {
            return Some(LinuxTag::Linux(arch));
        }
        let policy = Policies::auditwheel().get(stem)?;
        policy
            .supports(arch)
            .then_some(LinuxTag::Manylinux { policy, arch })
    }

    /// The architecture.
    pub fn arch(self) -> Arch {
        match self {
            LinuxTag::Manylinux { arch, .. } | LinuxTag::Linux(arch) => arch,
        }
    }
}

/// One manylinux policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    name: String,
    aliases: Vec<String>,
    /// Higher is more compatible (older glibc): auditwheel's order.
    priority: u32,
    symbol_versions: BTreeMap<Arch, BTreeMap<String, BTreeSet<String>>>,
    /// auditwheel's `lib_whitelist`.
    libraries: Vec<String>,
    blacklist: BTreeMap<String, BTreeSet<String>>,
}

/// Names and the strings listed for each: a namespace's symbol versions,
/// a library's blacklisted symbols.
type NamedLists = &'static [(&'static str, &'static [&'static str])];

/// One policy as `manylinux/table.rs` holds it: the data file's fields.
struct PolicyData {
    name: &'static str,
    aliases: &'static [&'static str],
    priority: u32,
    symbol_versions: &'static [(Arch, NamedLists)],
    libraries: &'static [&'static str],
    blacklist: NamedLists,
}

impl From<&PolicyData> for Policy {
    fn from(data: &PolicyData) -> Self {
        fn owned<C: FromIterator<String>>(items: &[&str]) -> C {
            items.iter().map(|&s| s.to_owned()).collect()
        }
        Policy {
            name: data.name.to_owned(),
            aliases: owned(data.aliases),
            priority: data.priority,
            symbol_versions: data
                .symbol_versions
                .iter()
                .map(|(arch, namespaces)| {
                    let namespaces = namespaces
                        .iter()
                        .map(|(namespace, versions)| ((*namespace).to_owned(), owned(versions)))
                        .collect();
                    (*arch, namespaces)
                })
                .collect(),
            libraries: owned(data.libraries),
            blacklist: data
                .blacklist
                .iter()
                .map(|(library, symbols)| ((*library).to_owned(), owned(symbols)))
                .collect(),
        }
    }
}

impl Policy {
    /// The PEP 600 name, `manylinux_2_28`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Legacy names (`manylinux2014` for `manylinux_2_17`).
    pub fn aliases(&self) -> &[String] {
        &self.aliases
    }

    /// The platform tag for `arch`: `manylinux_2_28_x86_64`.
    pub fn tag(&self, arch: Arch) -> String {
        format!("{}_{arch}", self.name)
    }

    /// Whether the policy is defined for `arch` (manylinux_2_5 and
    /// manylinux_2_12 are not for aarch64).
    pub fn supports(&self, arch: Arch) -> bool {
        self.symbol_versions.contains_key(&arch)
    }

    /// The system libraries a wheel may need without shipping them, in
    /// auditwheel's order.
    pub fn libraries(&self) -> impl Iterator<Item = &str> {
        self.libraries.iter().map(String::as_str)
    }

    /// Whether `soname` may be left to the system.
    pub fn allows_library(&self, soname: &str) -> bool {
        self.libraries.iter().any(|l| l == soname)
    }

    /// Whether a file for `arch` may need symbol version `version`
    /// (`GLIBC_2.28`). The namespace is the text before the first `_`;
    /// versions of namespaces the policy does not limit (`OPENSSL_3.0.0`,
    /// `hip_4.2`) are always allowed, as auditwheel has it.
    pub fn allows_version(&self, arch: Arch, version: &str) -> bool {
        let (namespace, number) = version.split_once('_').unwrap_or((version, ""));
        match self
            .symbol_versions
            .get(&arch)
            .and_then(|v| v.get(namespace))
        {
            Some(allowed) => allowed.contains(number),
            None => true,
        }
    }

    /// The newest allowed version per namespace for `arch`, in the
    /// policy's own order (`GLIBC` → `2.28`), for messages.
    pub fn newest_versions(&self, arch: Arch) -> BTreeMap<&str, &str> {
        self.symbol_versions
            .get(&arch)
            .into_iter()
            .flatten()
            .filter_map(|(namespace, versions)| {
                versions
                    .iter()
                    .filter_map(|v| Some((version_key(v)?, v)))
                    .max()
                    .map(|(_, v)| (namespace.as_str(), v.as_str()))
            })
            .collect()
    }

    /// The symbols of `library` a wheel must not import (empty for most).
    pub fn blacklisted(&self, library: &str) -> Option<&BTreeSet<String>> {
        self.blacklist.get(library)
    }
}

/// Numeric key of a version number (`2.2.5` → `[2, 2, 5]`); `None` for
/// names like `TM_1` or `ABI_DT_RELR`.
fn version_key(number: &str) -> Option<Vec<u32>> {
    number.split('.').map(|p| p.parse().ok()).collect()
}

/// Every manylinux policy, most compatible first (auditwheel's priority
/// order: manylinux_2_5, manylinux_2_12, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policies {
    policies: Vec<Policy>,
}

impl Policies {
    /// The policies of the data file, parsed once.
    pub fn auditwheel() -> &'static Policies {
        static POLICIES: OnceLock<Policies> = OnceLock::new();
        POLICIES.get_or_init(|| {
            let mut policies: Vec<Policy> = table::POLICIES.iter().map(Policy::from).collect();
            policies.sort_by_key(|p| std::cmp::Reverse(p.priority));
            Policies { policies }
        })
    }

    /// The policy named `name` (`manylinux_2_28`) or aliased so
    /// (`manylinux2014`).
    pub fn get(&self, name: &str) -> Option<&Policy> {
        self.policies
            .iter()
            .find(|p| p.name == name || p.aliases.iter().any(|a| a == name))
    }

    /// Every policy defined for `arch`, most compatible first.
    pub fn for_arch(&self, arch: Arch) -> impl Iterator<Item = &Policy> {
        self.policies.iter().filter(move |p| p.supports(arch))
    }

    /// Every policy, most compatible first.
    pub fn iter(&self) -> impl Iterator<Item = &Policy> {
        self.policies.iter()
    }
}

/// A policy named on a command line: `manylinux_2_28` or a legacy alias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyName(&'static Policy);

impl PolicyName {
    /// The policy.
    pub fn policy(self) -> &'static Policy {
        self.0
    }
}

impl fmt::Display for PolicyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.name)
    }
}

/// Why a policy name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{given}: {reason}; known policies: {known}",
    known = known_policies()
)]
pub struct UnknownPolicy {
    given: String,
    reason: &'static str,
}

fn known_policies() -> String {
    Policies::auditwheel()
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for PolicyName {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(policy) = Policies::auditwheel().get(s) {
            return Ok(PolicyName(policy));
        }
        let reason = if matches!(LinuxTag::parse(s), Some(LinuxTag::Manylinux { .. })) {
            "that is a platform tag; give the policy without the architecture (manylinux_2_28, not manylinux_2_28_x86_64)"
        } else {
            "not a manylinux policy auditwheel defines"
        };
        Err(UnknownPolicy {
            given: s.to_owned(),
            reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_is_auditwheels() {
        let all = Policies::auditwheel();
        let names: Vec<&str> = all.iter().map(Policy::name).collect();
        assert_eq!(names.first(), Some(&"manylinux_2_5"));
        assert_eq!(names.last(), Some(&"manylinux_2_41"));
        assert_eq!(names.len(), 16);
        let p = all.get("manylinux_2_28").unwrap();
        assert_eq!(p.libraries().count(), 24);
        assert_eq!(p.libraries().next(), Some("libatomic.so.1"));
        assert!(p.allows_library("libstdc++.so.6") && p.allows_library("libmvec.so.1"));
        assert!(!p.allows_library("libcrypt.so.1"));
        assert!(p.allows_version(Arch::X86_64, "GLIBC_2.28"));
        assert!(p.allows_version(Arch::X86_64, "GLIBC_2.2.5"));
        assert!(!p.allows_version(Arch::X86_64, "GLIBC_2.34"));
        assert!(!p.allows_version(Arch::X86_64, "GLIBC_PRIVATE"));
        assert!(!p.allows_version(Arch::X86_64, "GLIBCXX_3.4.30"));
        assert!(p.allows_version(Arch::X86_64, "CXXABI_1.3.11"));
        assert!(
            p.allows_version(Arch::X86_64, "OPENSSL_3.0.0"),
            "not limited"
        );
        assert_eq!(
            p.newest_versions(Arch::X86_64),
            BTreeMap::from([
                ("CXXABI", "1.3.11"),
                ("GCC", "7.0.0"),
                ("GLIBC", "2.28"),
                ("GLIBCXX", "3.4.24"),
                ("LIBATOMIC", "1.2"),
                ("ZLIB", "1.2.9"),
            ])
        );
        assert_eq!(all.get("manylinux2014").unwrap().name(), "manylinux_2_17");
        assert!(!all.get("manylinux_2_12").unwrap().supports(Arch::Aarch64));
        assert_eq!(all.for_arch(Arch::Aarch64).count(), 14);
        assert!(
            all.get("manylinux_2_17")
                .unwrap()
                .blacklisted("libc.so.6")
                .unwrap()
                .contains("__cxa_thread_atexit_impl")
        );
    }

    /// PEP 600: a newer policy allows everything an older one does. With
    /// blacklists that only shrink, "the most compatible policy a wheel
    /// satisfies" is the same whether the checks are combined per policy
    /// or, as auditwheel does, each check picks its own best policy.
    #[test]
    fn newer_policies_allow_more() {
        for arch in Arch::ALL {
            let policies: Vec<&Policy> = Policies::auditwheel().for_arch(arch).collect();
            for pair in policies.windows(2) {
                let (older, newer) = (pair[0], pair[1]);
                let context = format!("{} -> {} ({arch})", older.name, newer.name);
                assert!(older.priority > newer.priority, "{context}");
                assert!(
                    older.libraries().all(|l| newer.allows_library(l)),
                    "{context}"
                );
                for (namespace, versions) in &older.symbol_versions[&arch] {
                    let newer_versions = &newer.symbol_versions[&arch][namespace];
                    assert!(versions.is_subset(newer_versions), "{context} {namespace}");
                }
                for (library, symbols) in &newer.blacklist {
                    let older_symbols = older.blacklisted(library).unwrap();
                    assert!(symbols.is_subset(older_symbols), "{context} {library}");
                }
            }
        }
    }

    #[test]
    fn tags_and_names_parse() {
        let tag = LinuxTag::parse("manylinux_2_28_aarch64").unwrap();
        assert_eq!(tag.arch(), Arch::Aarch64);
        assert!(
            matches!(tag, LinuxTag::Manylinux { policy, .. } if policy.tag(Arch::Aarch64) == "manylinux_2_28_aarch64")
        );
        assert_eq!(
            LinuxTag::parse("manylinux1_x86_64").unwrap().arch(),
            Arch::X86_64
        );
        // No aarch64 manylinux1; unknown levels and other systems are not ours.
        assert_eq!(LinuxTag::parse("manylinux1_aarch64"), None);
        assert_eq!(LinuxTag::parse("manylinux_2_99_x86_64"), None);
        assert_eq!(LinuxTag::parse("musllinux_1_2_x86_64"), None);
        assert_eq!(LinuxTag::parse("linux_armv7l"), None);
        assert_eq!(LinuxTag::parse("x86_64"), None);

        assert_eq!(
            "manylinux2014".parse::<PolicyName>().unwrap().to_string(),
            "manylinux_2_17"
        );
        let err = "manylinux_2_28_x86_64".parse::<PolicyName>().unwrap_err();
        assert!(err.to_string().starts_with(
            "manylinux_2_28_x86_64: that is a platform tag; give the policy without the architecture"
        ));
        let err = "manylinux_2_99".parse::<PolicyName>().unwrap_err();
        assert!(
            err.to_string()
                .contains("not a manylinux policy auditwheel defines; known policies: manylinux_2_5, manylinux_2_12,"),
            "{err}"
        );
    }
}
