//! In runtime wheels every ELF `DT_NEEDED` resolves inside the set through
//! the file's search path, or is an allowed manylinux_2_28 system library,
//! the loader, or a library `--exclude` leaves to the system (`link-check`
//! over the wheels virtually installed, one site-packages per platform).

use dist_info::requirement::Platform;
use link_check::{LinkChecker, LinkReport, SystemPolicy, WheelSetTree};

use super::Release;
use super::release::Kind;

/// The devel wheel ships its tree as a tar, unpacked at install time; its
/// links are checked where they land (`rocm-sdk test`).
const NOT_RUNTIME: &[&str] = &["rocm-sdk-devel"];

/// What the link check found.
pub(crate) struct Links {
    pub problems: Vec<String>,
    pub elf_count: usize,
    /// The Linux wheels and their report, imports read, for the
    /// manylinux audit.
    pub linux: Option<(WheelSetTree, LinkReport)>,
}

pub(crate) fn check(release: &Release, excluded: &[String]) -> Links {
    let mut links = Links {
        problems: Vec::new(),
        elf_count: 0,
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
        links.elf_count += report.files.len();
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
    links
}
