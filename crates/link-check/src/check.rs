//! [`LinkChecker`]: resolves every `DT_NEEDED` of every host ELF file.

use elf_surgery::{ElfClass, ElfFile, ElfKind};

use crate::Error;
use crate::policy::SystemPolicy;
use crate::report::{ElfReport, LinkReport, Needed, Resolution, SearchKind};
use crate::search_path::{SearchDir, expand_search_path, join, parent};
use crate::tree::{FileTree, ScanDepth, TreeElf};

/// The class and machine of the ELF files a check parsed, by path.
type Identities<'a> = std::collections::HashMap<&'a str, (Option<ElfClass>, Option<u16>)>;

/// What the loader compares before it takes a library it found.
fn identity(elf: &ElfFile) -> (Option<ElfClass>, Option<u16>) {
    (elf.class(), elf.machine())
}

/// Resolves needed libraries the way the loader does for a file's own
/// search path, restricted to a tree.
///
/// Per `DT_NEEDED` entry, in order: each directory of the file's `RUNPATH`
/// (or, without one, its `RPATH`) that lies inside the tree; then the
/// dynamic loader; then the system libraries the policy allows; then the
/// libraries it excludes. A name with a `/` is not searched for (the
/// loader opens it as a path) and only resolves if it names the loader.
#[derive(Debug, Clone, Default)]
pub struct LinkChecker {
    policy: SystemPolicy,
    prefixes: Vec<String>,
    depth: ScanDepth,
}

impl LinkChecker {
    /// A checker with the manylinux_2_28 policy that checks every file.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `policy` for the names the system may provide.
    #[must_use]
    pub fn with_policy(mut self, policy: SystemPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Also reads what every file imports (symbol versions, undefined
    /// symbols) into [`ElfReport::imports`], for policy audits.
    #[must_use]
    pub fn with_imports(mut self) -> Self {
        self.depth = ScanDepth::LinksAndImports;
        self
    }

    /// Checks only files under these top-level directories (e.g.
    /// `_rocm_sdk_core`); lookups still see the whole tree.
    #[must_use]
    pub fn only_under<I, S>(mut self, prefixes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.prefixes = prefixes
            .into_iter()
            .map(|p| p.into().trim_matches('/').to_owned())
            .collect();
        self
    }

    fn selects(&self, path: &str) -> bool {
        self.prefixes.is_empty()
            || self.prefixes.iter().any(|p| {
                p.is_empty()
                    || path
                        .strip_prefix(p.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
    }

    /// Scans `tree` and resolves every needed library of every host ELF
    /// file (shared objects and dynamic executables; device code, object
    /// files and static executables need nothing).
    pub fn check(&self, tree: &dyn FileTree) -> Result<LinkReport, Error> {
        let scan = tree.scan(&|p| self.selects(p), self.depth)?;
        // The loader passes over a candidate of another class or machine
        // (an x86_64 library in the directory an i386 one searches) and
        // goes on searching: so does the check, for the files it parsed.
        let identities: Identities<'_> = scan
            .files
            .iter()
            .map(|f| (f.path.as_str(), identity(&f.elf)))
            .collect();
        let files = scan
            .files
            .iter()
            .filter(|f| {
                matches!(
                    f.elf.kind(),
                    ElfKind::SharedObject | ElfKind::DynamicExecutable
                )
            })
            .map(|f| self.check_file_among(tree, f, &identities))
            .collect();
        Ok(LinkReport {
            files,
            unreadable: scan.unreadable,
        })
    }

    /// Resolves the needed libraries of one file of `tree` (any file of
    /// the tree by a needed name counts, whatever its class or machine).
    pub fn check_file(&self, tree: &dyn FileTree, file: &TreeElf) -> ElfReport {
        self.check_file_among(tree, file, &Identities::new())
    }

    /// [`LinkChecker::check_file`], passing over the files of `identities`
    /// whose class or machine is not the file's, as the loader does.
    fn check_file_among(
        &self,
        tree: &dyn FileTree,
        file: &TreeElf,
        identities: &Identities<'_>,
    ) -> ElfReport {
        let elf = &file.elf;
        let own = identity(elf);
        let loads = |candidate: &str| identities.get(candidate).is_none_or(|i| *i == own);
        let (search_kind, search_path) = match (elf.runpath(), elf.rpath()) {
            (Some(runpath), _) => (Some(SearchKind::Runpath), runpath),
            (None, Some(rpath)) => (Some(SearchKind::Rpath), rpath),
            (None, None) => (None, ""),
        };
        let search_dirs = if search_kind.is_some() {
            expand_search_path(search_path, parent(&file.path))
        } else {
            Vec::new()
        };
        let interpreter = elf.interpreter().map(|i| i.rsplit('/').next().unwrap_or(i));
        let needed = elf
            .needed()
            .iter()
            .map(|name| Needed {
                name: name.clone(),
                resolution: self.resolve(tree, name, &search_dirs, interpreter, &loads),
            })
            .collect();
        ElfReport {
            path: file.path.clone(),
            origin: file.origin.clone(),
            soname: elf.soname().map(str::to_owned),
            machine: elf.machine(),
            search_kind,
            search_dirs,
            needed,
            imports: file.imports.clone(),
        }
    }

    fn resolve(
        &self,
        tree: &dyn FileTree,
        name: &str,
        dirs: &[SearchDir],
        interpreter: Option<&str>,
        loads: &dyn Fn(&str) -> bool,
    ) -> Resolution {
        let base = name.rsplit('/').next().unwrap_or(name);
        if name.contains('/') {
            let is_loader = self.policy.is_loader(base) || interpreter == Some(base);
            return if is_loader && name.starts_with('/') {
                Resolution::Loader
            } else {
                Resolution::Unresolved
            };
        }
        for dir in dirs {
            if let SearchDir::Tree(dir) = dir {
                let candidate = join(dir, name);
                if tree.contains_file(&candidate) && loads(&candidate) {
                    return Resolution::Tree { path: candidate };
                }
            }
        }
        if self.policy.is_loader(name) || interpreter == Some(name) {
            Resolution::Loader
        } else if self.policy.allows(name) {
            Resolution::System
        } else if self.policy.excludes(name) {
            Resolution::Excluded
        } else {
            Resolution::Unresolved
        }
    }
}
