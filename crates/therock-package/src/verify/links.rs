//! In runtime wheels every ELF `DT_NEEDED` resolves inside the set through
//! the file's search path, or is an allowed manylinux_2_28 system library
//! or the loader (`link-check` over the wheels virtually installed, one
//! site-packages per platform).

use link_check::{LinkChecker, WheelSetTree};

use super::Release;
use super::release::Kind;

/// The devel wheel ships its tree as a tar, unpacked at install time; its
/// links are checked where they land (`rocm-sdk test`).
const NOT_RUNTIME: &[&str] = &["rocm-sdk-devel"];

pub(crate) fn check(release: &Release) -> (Vec<String>, usize) {
    let mut problems = Vec::new();
    let mut checked = 0;
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
        let report =
            match WheelSetTree::open(&wheels).and_then(|tree| LinkChecker::new().check(&tree)) {
                Ok(report) => report,
                Err(e) => {
                    problems.push(format!(
                        "{}: cannot check the ELF links: {e}",
                        platform.sys_platform()
                    ));
                    continue;
                }
            };
        checked += report.files.len();
        problems.extend(
            report
                .unresolved()
                .map(|u| format!("{}: {u}", platform.sys_platform())),
        );
        problems.extend(report.unreadable.iter().map(|u| {
            format!(
                "{}: {} (in {}): not a readable ELF file: {}",
                platform.sys_platform(),
                u.path,
                u.origin.as_deref().unwrap_or("?"),
                u.reason
            )
        }));
    }
    (problems, checked)
}
