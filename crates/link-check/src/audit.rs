//! [`audit_wheel`]: which manylinux policies one wheel of a checked set
//! keeps to, the way auditwheel judges a wheel: the symbol versions its ELF
//! files need (per versioned namespace), the libraries they leave to the
//! system, and the blacklisted symbols they import.
//!
//! Two verdicts per wheel. The *tightest tag* judges the wheel inside its
//! release: a library another wheel of the set provides (through the
//! file's own search path) is not left to the system. The *standalone tag*
//! judges the wheel alone, as `auditwheel show` does: such a library counts
//! as an external dependency, which no manylinux policy allows.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::manylinux::{Arch, Policies, Policy};
use crate::report::{ElfReport, LinkReport, Resolution};
use crate::search_path::{SearchDir, join};
use crate::wheel_tree::WheelSetTree;

/// How many files a grouped problem names before "and N more".
const FILES_NAMED: usize = 3;
/// How many symbols a file's entry names.
const SYMBOLS_NAMED: usize = 3;

/// One reason a wheel does not keep to a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
pub enum Violation {
    /// A file needs a symbol version the policy does not allow.
    SymbolVersion {
        /// The file (path in site-packages).
        file: String,
        /// The library that provides the version (`libc.so.6`).
        library: String,
        /// The version (`GLIBC_2.34`).
        version: String,
        /// The file's imported symbols bound to that version.
        symbols: Vec<String>,
    },
    /// A file needs a library that neither the wheel set provides nor the
    /// policy lets it leave to the system.
    Library {
        /// The file.
        file: String,
        /// The soname.
        library: String,
    },
    /// A file is built for another architecture than the wheel's tag
    /// names (auditwheel: a wrong architecture); nothing else is judged of
    /// it.
    Architecture {
        /// The file.
        file: String,
        /// The architecture it is built for (`i386`).
        machine: String,
    },
    /// A file imports symbols the policy forbids taking from a library.
    Blacklisted {
        /// The file.
        file: String,
        /// The library the policy forbids them from (`libz.so.1`).
        library: String,
        /// The forbidden symbols the file imports.
        symbols: Vec<String>,
    },
}

impl Violation {
    fn file(&self) -> &str {
        match self {
            Violation::SymbolVersion { file, .. }
            | Violation::Library { file, .. }
            | Violation::Architecture { file, .. }
            | Violation::Blacklisted { file, .. } => file,
        }
    }
}

/// What a policy audit found for one wheel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct WheelAudit {
    /// The wheel's file name.
    pub wheel: String,
    /// The architecture its tag names.
    pub arch: Arch,
    /// How many host ELF files it holds (shared objects, dynamic executables).
    pub host_elf_files: usize,
    /// The platform tag it was checked against (`manylinux_2_28_x86_64`),
    /// `None` when no policy was required.
    pub policy: Option<String>,
    /// Why it does not keep to `policy` (empty when it does).
    pub violations: Vec<Violation>,
    /// The most compatible tag it satisfies inside its set
    /// (`manylinux_2_34_x86_64`; `linux_x86_64` when no manylinux policy
    /// admits it); `None` without host ELF files.
    pub tightest_tag: Option<String>,
    /// The same, judged alone as `auditwheel show` does: libraries from
    /// other wheels of the set count as external.
    pub standalone_tag: Option<String>,
    /// The most compatible tag its symbol versions alone allow
    /// (auditwheel's `sym_tag`).
    pub symbol_tag: Option<String>,
    /// Versions needed per library, over all its files (auditwheel's
    /// `versioned_symbols`; the loader's own versions left out).
    pub versioned_symbols: BTreeMap<String, BTreeSet<String>>,
    /// Libraries its files leave to the system.
    pub system_libraries: BTreeSet<String>,
    /// Libraries its files need that the release deliberately leaves to
    /// the system (`--exclude`).
    pub excluded_libraries: BTreeSet<String>,
    /// Libraries its files need that nothing provides: neither the set,
    /// nor an allowed system library, nor an exclusion.
    pub missing_libraries: BTreeSet<String>,
    /// Libraries its files take from other wheels of the set, with the
    /// wheels that provide them.
    pub from_other_wheels: BTreeMap<String, BTreeSet<String>>,
}

/// Audits `wheel` (a file name of `tree`) using `report`, the
/// [`crate::LinkChecker`] report of `tree` made
/// [`with_imports`](crate::LinkChecker::with_imports) (without imports,
/// symbol versions and blacklisted symbols are not seen). `arch` is the
/// architecture the wheel's tag names; `required`, the policy it must keep
/// to, if any.
pub fn audit_wheel(
    report: &LinkReport,
    tree: &WheelSetTree,
    wheel: &str,
    arch: Arch,
    required: Option<&Policy>,
) -> WheelAudit {
    let files: Vec<FileFacts<'_>> = report
        .files
        .iter()
        .filter(|f| f.origin.as_deref() == Some(wheel))
        .map(|f| FileFacts::new(f, tree, wheel, arch))
        .collect();
    let policies = Policies::auditwheel();
    let best = |judge: &dyn Fn(&Policy) -> bool| -> Option<String> {
        (!files.is_empty()).then(|| {
            policies
                .for_arch(arch)
                .find(|p| judge(p))
                .map_or_else(|| arch.linux_tag(), |p| p.tag(arch))
        })
    };
    let mut audit = WheelAudit {
        wheel: wheel.to_owned(),
        arch,
        host_elf_files: files.len(),
        policy: required.map(|p| p.tag(arch)),
        violations: required.map_or_else(Vec::new, |p| violations(&files, p, arch, Scope::Set)),
        tightest_tag: best(&|p| violations(&files, p, arch, Scope::Set).is_empty()),
        standalone_tag: best(&|p| violations(&files, p, arch, Scope::Alone).is_empty()),
        symbol_tag: best(&|p| {
            violations(&files, p, arch, Scope::Set)
                .iter()
                .all(|v| !matches!(v, Violation::SymbolVersion { .. }))
        }),
        versioned_symbols: BTreeMap::new(),
        system_libraries: BTreeSet::new(),
        excluded_libraries: BTreeSet::new(),
        missing_libraries: BTreeSet::new(),
        from_other_wheels: BTreeMap::new(),
    };
    for file in &files {
        for need in &file.needs {
            audit
                .versioned_symbols
                .entry(need.library.to_owned())
                .or_default()
                .insert(need.version.to_owned());
        }
        audit
            .system_libraries
            .extend(file.system.iter().map(|&s| s.to_owned()));
        audit
            .excluded_libraries
            .extend(file.excluded.iter().map(|&s| s.to_owned()));
        audit
            .missing_libraries
            .extend(file.unresolved.iter().map(|&s| s.to_owned()));
        for (library, wheels) in &file.other_wheels {
            audit
                .from_other_wheels
                .entry((*library).to_owned())
                .or_default()
                .extend(wheels.iter().cloned());
        }
    }
    audit
}

/// Whether libraries found in other wheels of the set count.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Inside the set: they are provided.
    Set,
    /// Alone: they are external dependencies.
    Alone,
}

/// One version a file needs, with the symbols bound to it.
struct VersionUse<'a> {
    library: &'a str,
    version: &'a str,
    symbols: Vec<&'a str>,
}

/// What one host ELF file of the wheel asks of the system.
struct FileFacts<'a> {
    path: &'a str,
    /// The architecture it is built for, when it is not the wheel's.
    foreign_machine: Option<String>,
    needs: Vec<VersionUse<'a>>,
    system: Vec<&'a str>,
    unresolved: Vec<&'a str>,
    excluded: Vec<&'a str>,
    other_wheels: Vec<(&'a str, Vec<String>)>,
    needed: Vec<&'a str>,
    /// Undefined symbols bound strongly (a weak one may be missing).
    strong_imports: BTreeSet<&'a str>,
}

impl<'a> FileFacts<'a> {
    fn new(file: &'a ElfReport, tree: &WheelSetTree, wheel: &str, arch: Arch) -> Self {
        let mut facts = FileFacts {
            path: &file.path,
            foreign_machine: file
                .machine
                .filter(|&m| m != arch.elf_machine())
                .map(machine_name),
            needs: Vec::new(),
            system: Vec::new(),
            unresolved: Vec::new(),
            excluded: Vec::new(),
            other_wheels: Vec::new(),
            needed: file.needed.iter().map(|n| n.name.as_str()).collect(),
            strong_imports: BTreeSet::new(),
        };
        for needed in &file.needed {
            let name = needed.name.as_str();
            match &needed.resolution {
                Resolution::System => facts.system.push(name),
                Resolution::Unresolved => facts.unresolved.push(name),
                Resolution::Excluded => facts.excluded.push(name),
                Resolution::Loader => {}
                Resolution::Tree { path } => {
                    if !resolves_within(file, name, tree, wheel) {
                        facts
                            .other_wheels
                            .push((name, tree.providers(path).to_vec()));
                    }
                }
            }
        }
        if let Some(imports) = &file.imports {
            for need in &imports.needs {
                // auditwheel leaves the loader's own versions out.
                if need.library.starts_with("ld-linux")
                    || crate::LOADER_NAMES.contains(&need.library.as_str())
                {
                    continue;
                }
                for version in &need.versions {
                    let symbols = imports
                        .symbols
                        .iter()
                        .filter(|s| {
                            s.version
                                .as_ref()
                                .is_some_and(|v| v.library == need.library && &v.name == version)
                        })
                        .map(|s| s.name.as_str())
                        .collect();
                    facts.needs.push(VersionUse {
                        library: &need.library,
                        version,
                        symbols,
                    });
                }
            }
            facts.strong_imports = imports
                .symbols
                .iter()
                .filter(|s| !s.weak)
                .map(|s| s.name.as_str())
                .collect();
        }
        facts
    }
}

/// The architecture an ELF `e_machine` names, as `uname -m` and auditwheel
/// spell it.
fn machine_name(machine: u16) -> String {
    match machine {
        3 => "i386".to_owned(),
        8 => "mips".to_owned(),
        20 => "ppc".to_owned(),
        21 => "ppc64".to_owned(),
        22 => "s390x".to_owned(),
        40 => "armv7l".to_owned(),
        62 => "x86_64".to_owned(),
        183 => "aarch64".to_owned(),
        243 => "riscv64".to_owned(),
        other => format!("ELF machine {other}"),
    }
}

/// Whether `name` resolves to a file of `wheel` itself through the file's
/// own search path (what an installation of that wheel alone would find).
fn resolves_within(file: &ElfReport, name: &str, tree: &WheelSetTree, wheel: &str) -> bool {
    file.search_dirs.iter().any(|dir| match dir {
        SearchDir::Tree(dir) => tree.providers(&join(dir, name)).iter().any(|w| w == wheel),
        _ => false,
    })
}

fn violations(
    files: &[FileFacts<'_>],
    policy: &Policy,
    arch: Arch,
    scope: Scope,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for file in files {
        if let Some(machine) = &file.foreign_machine {
            // Its symbol versions are another architecture's (i386's
            // GLIBC_2.0 is not "newer than" anything x86_64 allows).
            out.push(Violation::Architecture {
                file: file.path.to_owned(),
                machine: machine.clone(),
            });
            continue;
        }
        let library = |library: &str| Violation::Library {
            file: file.path.to_owned(),
            library: library.to_owned(),
        };
        for need in &file.needs {
            if !policy.allows_version(arch, need.version) {
                out.push(Violation::SymbolVersion {
                    file: file.path.to_owned(),
                    library: need.library.to_owned(),
                    version: need.version.to_owned(),
                    symbols: need.symbols.iter().map(|&s| s.to_owned()).collect(),
                });
            }
        }
        for name in &file.system {
            if !policy.allows_library(name) {
                out.push(library(name));
            }
        }
        out.extend(file.unresolved.iter().map(|name| library(name)));
        if scope == Scope::Alone {
            out.extend(file.other_wheels.iter().map(|(name, _)| library(name)));
        }
        for name in &file.needed {
            let Some(forbidden) = policy.blacklisted(name) else {
                continue;
            };
            let symbols: Vec<String> = forbidden
                .iter()
                .filter(|s| file.strong_imports.contains(s.as_str()))
                .cloned()
                .collect();
            if !symbols.is_empty() {
                out.push(Violation::Blacklisted {
                    file: file.path.to_owned(),
                    library: (*name).to_owned(),
                    symbols,
                });
            }
        }
    }
    out
}

impl WheelAudit {
    /// Whether the wheel keeps to the policy it was checked against.
    pub fn is_ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// One line on what the wheel satisfies, for reports:
    /// `rocm_sdk_core-…whl: satisfies manylinux_2_34_x86_64 (needs up to GLIBC_2.34)`.
    pub fn summary(&self) -> String {
        let Some(tightest) = &self.tightest_tag else {
            return format!("{}: no host ELF files", self.wheel);
        };
        let mut line = format!("{}: satisfies {tightest}", self.wheel);
        let newest = self.newest_versions();
        if !newest.is_empty() {
            let _ = write!(line, " (needs up to {})", newest.join(", "));
        }
        if self.standalone_tag.as_ref() != Some(tightest) {
            let _ = write!(
                line,
                "; alone, as auditwheel show judges it: {}",
                self.standalone_tag.as_deref().unwrap_or("-")
            );
            if !self.from_other_wheels.is_empty() {
                let from: Vec<String> = self
                    .from_other_wheels
                    .iter()
                    .map(|(library, wheels)| {
                        let wheels: Vec<&str> = wheels.iter().map(String::as_str).collect();
                        format!("{library} from {}", wheels.join(" or "))
                    })
                    .collect();
                let _ = write!(line, " (takes {})", from.join(", "));
            }
        }
        line
    }

    /// The newest version needed per namespace the policies limit, sorted
    /// by namespace (`GCC_3.3`, `GLIBC_2.34`).
    pub fn newest_versions(&self) -> Vec<String> {
        let limited = ["CXXABI", "GCC", "GLIBC", "GLIBCXX", "LIBATOMIC", "ZLIB"];
        let mut newest: BTreeMap<&str, (Vec<u32>, &str)> = BTreeMap::new();
        for version in self.versioned_symbols.values().flatten() {
            let Some((namespace, number)) = version.split_once('_') else {
                continue;
            };
            let Some(key) = number
                .split('.')
                .map(|p| p.parse().ok())
                .collect::<Option<Vec<u32>>>()
            else {
                continue;
            };
            if limited.contains(&namespace) && newest.get(namespace).is_none_or(|(k, _)| *k < key) {
                newest.insert(namespace, (key, version));
            }
        }
        newest.into_values().map(|(_, v)| v.to_owned()).collect()
    }

    /// The problems with the required policy as sentences: a headline with
    /// what the wheel satisfies and what to do, then one line per kind of
    /// violation (files grouped).
    pub fn problems(&self) -> Vec<String> {
        let Some(policy) = &self.policy else {
            return Vec::new();
        };
        if self.violations.is_empty() {
            return Vec::new();
        }
        let tightest = self.tightest_tag.as_deref().unwrap_or("-");
        let foreign = self
            .violations
            .iter()
            .any(|v| matches!(v, Violation::Architecture { .. }));
        let remedy = if foreign {
            format!(
                "leave out the files built for another architecture, or build them for {}",
                self.arch
            )
        } else if tightest.starts_with("manylinux") {
            format!(
                "build it on an older system (a {} image), or tag it {tightest}",
                policy.trim_end_matches(&format!("_{}", self.arch))
            )
        } else {
            "ship the libraries it needs in the set, or --exclude the ones the release leaves to the system on purpose".to_owned()
        };
        let mut out = vec![format!(
            "{} does not keep to {policy} (it satisfies {tightest}): {remedy}",
            self.wheel
        )];
        let allowed = Policies::auditwheel()
            .get(policy.trim_end_matches(&format!("_{}", self.arch)))
            .map(|p| p.newest_versions(self.arch))
            .unwrap_or_default();
        let mut groups: BTreeMap<String, Vec<&Violation>> = BTreeMap::new();
        for v in &self.violations {
            let key = match v {
                Violation::SymbolVersion {
                    library, version, ..
                } => {
                    let namespace = version.split_once('_').map_or(version.as_str(), |(n, _)| n);
                    let limit = allowed
                        .get(namespace)
                        .map(|newest| format!(" ({namespace} up to {newest})"))
                        .unwrap_or_default();
                    format!("needs {version} from {library}, newer than {policy} allows{limit}")
                }
                Violation::Library { library, .. } => format!(
                    "needs {library}, which neither the set provides nor {policy} lets it leave to the system"
                ),
                Violation::Blacklisted { library, .. } => {
                    format!("imports symbols of {library} that {policy} forbids")
                }
                Violation::Architecture { machine, .. } => format!(
                    "built for {machine}, not {} (a wrong architecture, as auditwheel says)",
                    self.arch
                ),
            };
            groups.entry(key).or_default().push(v);
        }
        for (what, violations) in groups {
            let named: Vec<String> = violations
                .iter()
                .take(FILES_NAMED)
                .map(|v| {
                    let symbols = match v {
                        Violation::SymbolVersion { symbols, .. }
                        | Violation::Blacklisted { symbols, .. } => symbols.as_slice(),
                        Violation::Library { .. } | Violation::Architecture { .. } => &[],
                    };
                    if symbols.is_empty() {
                        v.file().to_owned()
                    } else {
                        let mut shown: Vec<&str> = symbols
                            .iter()
                            .take(SYMBOLS_NAMED)
                            .map(String::as_str)
                            .collect();
                        if symbols.len() > SYMBOLS_NAMED {
                            shown.push("...");
                        }
                        format!("{} ({})", v.file(), shown.join(", "))
                    }
                })
                .collect();
            let mut line = format!("{}: {what}: {}", self.wheel, named.join(", "));
            let more = violations.len().saturating_sub(FILES_NAMED);
            if more > 0 {
                let _ = write!(line, " and {more} more files");
            }
            out.push(line);
        }
        out
    }
}
