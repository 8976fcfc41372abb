//! In runtime wheels every ELF `DT_NEEDED` resolves inside the set through
//! the file's search path, or is an allowed manylinux_2_28 system library,
//! the loader, or a library `--exclude` leaves to the system (`link-check`
//! over the wheels virtually installed, one site-packages per platform).

use dist_info::requirement::Platform;
use link_check::{LinkChecker, LinkReport, SystemPolicy, WheelSetTree};
use serde::Serialize;

use super::Release;
use super::release::Kind;

/// The devel wheel ships its tree as a tar, unpacked at install time; its
/// links are checked where they land (`rocm-sdk test`).
const NOT_RUNTIME: &[&str] = &["rocm-sdk-devel"];

/// The ELF-link check in numbers: what `build` and `assemble` say in one
/// warning line, and `elf_links` in their `--json` and `verify --json`
/// (docs/formats.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ElfLinks {
    /// Whether every `DT_NEEDED` of every host ELF file resolves (and every
    /// file could be read).
    pub ok: bool,
    /// Host ELF files checked (shared objects and dynamic executables).
    pub files: usize,
    /// How many of them have unresolved `NEEDED` entries.
    pub unresolved_files: usize,
    /// The first unresolved entry, as `verify` words it.
    pub first: Option<String>,
}

impl ElfLinks {
    /// The numbers of one link report.
    pub fn of(report: &LinkReport) -> Self {
        let mut with_problems: Vec<&str> =
            report.unresolved().map(|u| u.file.path.as_str()).collect();
        with_problems.dedup();
        Self {
            ok: report.is_ok(),
            files: report.files.len(),
            unresolved_files: with_problems.len(),
            first: report.unresolved().next().map(|u| u.to_string()),
        }
    }
}

/// What the link check found.
pub(crate) struct Links {
    pub problems: Vec<String>,
    /// The same in numbers, every platform together.
    pub summary: ElfLinks,
    /// The Linux wheels and their report, imports read, for the
    /// manylinux audit.
    pub linux: Option<(WheelSetTree, LinkReport)>,
}

pub(crate) fn check(release: &Release, excluded: &[String]) -> Links {
    let mut links = Links {
        problems: Vec::new(),
        summary: ElfLinks {
            ok: true,
            files: 0,
            unresolved_files: 0,
            first: None,
        },
        linux: None,
    };
    for platform in release.platforms() {
        let wheels: Vec<_> = release
            .unique()
            .filter(|f| {
                matches!(&f.kind, Kind::Wheel(w) if w.readable)
                    && f.installs_on(platform)
                    && !NOT_RUNTIME.contains(&f.name())
            })
            .map(|f| f.path.clone())
            .collect();
        let mut checker =
            LinkChecker::new().with_policy(SystemPolicy::default().with_excluded(excluded));
        if platform == Platform::Linux {
            checker = checker.with_imports();
        }
        let checked = WheelSetTree::open(&wheels)
            .and_then(|tree| checker.check(&tree).map(|report| (tree, report)));
        let (tree, report) = match checked {
            Ok(checked) => checked,
            Err(e) => {
                links.problems.push(format!(
                    "{}: cannot check the ELF links: {e}",
                    platform.sys_platform()
                ));
                continue;
            }
        };
        let numbers = ElfLinks::of(&report);
        links.summary.files += numbers.files;
        links.summary.unresolved_files += numbers.unresolved_files;
        links.summary.first = links.summary.first.take().or(numbers.first);
        links.problems.extend(
            report
                .unresolved()
                .map(|u| format!("{}: {u}", platform.sys_platform())),
        );
        links.problems.extend(report.unreadable.iter().map(|u| {
            format!(
                "{}: {} (in {}): not a readable ELF file: {}",
                platform.sys_platform(),
                u.path,
                u.origin.as_deref().unwrap_or("?"),
                u.reason
            )
        }));
        if platform == Platform::Linux {
            links.linux = Some((tree, report));
        }
    }
    links.summary.ok = links.problems.is_empty();
    links
}
