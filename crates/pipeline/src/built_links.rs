//! The build checks what it wrote (docs/behaviour.md#build-link-check):
//! the ELF-link check `verify` runs (`link-check`, default manylinux_2_28
//! system policy), applied to the runtime wheels just written, from the
//! facts the build already holds: the paths it planned and the ELF facts
//! of every host file it edited (the edit's own verification parses the
//! result) or copied, gathered while the wheels were written. No wheel is
//! read back.
//!
//! A failure is [`ElfLinks`] with `ok: false` in the build's report:
//! `therock-package` prints one warning line (how many ELF files have
//! unresolved `NEEDED` entries, the first one, and the next step) and
//! `elf_links` in `build --json`; the build still exits 0 (the reference
//! builds such trees) unless `--strict`.

use std::sync::{Mutex, PoisonError};

use dist_info::package::PackageKind;
use elf_surgery::ElfFile;
use layout::Plan;
use link_check::{LinkChecker, ListedTree, TreeElf};
use release_check::ElfLinks;

/// The ELF facts of the runtime files, collected while they are written.
#[derive(Debug, Default)]
pub(crate) struct BuiltElves {
    files: Mutex<Vec<TreeElf>>,
}

impl BuiltElves {
    /// Notes the facts of the file written at `dest`.
    pub(crate) fn record(&self, dest: &str, elf: ElfFile) {
        self.files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(TreeElf {
                path: dest.to_owned(),
                origin: None,
                elf,
                imports: None,
            });
    }

    fn take(self) -> Vec<TreeElf> {
        self.files
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether the check covers a package: the runtime wheels, as `verify`
/// (devel ships its tree as a tar, checked where it lands by `rocm-sdk
/// test`).
pub(crate) fn is_checked(kind: PackageKind) -> bool {
    !matches!(kind, PackageKind::Devel | PackageKind::Meta)
}

/// Runs the check over the runtime packages of `plan` with the facts in
/// `elves`.
pub(crate) fn check(plan: &Plan, elves: BuiltElves) -> ElfLinks {
    let paths = plan
        .packages
        .iter()
        .filter(|p| is_checked(p.kind))
        .flat_map(|p| p.files.iter().map(|f| f.dest.clone()));
    let tree = ListedTree::new(paths, elves.take());
    let report = LinkChecker::new()
        .check(&tree)
        .expect("a tree of facts has nothing to fail on");
    ElfLinks::of(&report)
}
