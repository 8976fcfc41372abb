//! Every file a ROCm distribution installed still matches its RECORD row
//! (sha256 and size). Rows without a hash (RECORD itself, the paths
//! `rocm-sdk init` appends) are counted, not checked.

use dist_info::package::PackageKind;
use pypa_formats::installer::InstallCommand;

use super::Context;
use crate::record::{MISSING, read_record, verify_rows};
use crate::report::{Category, Check};
use fs_helpers::error_chain::Chain;

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    for dist in &cx.distributions {
        let name = format!("{} {}", dist.name, dist.version);
        let rows = match read_record(&dist.record()) {
            Ok(rows) => rows,
            Err(e) => {
                checks.push(Check::failed(
                    Category::Record,
                    name,
                    format!(
                        "{}; {}",
                        Chain(&e),
                        reinstall(cx.install, &dist.name, &dist.version)
                    ),
                ));
                continue;
            }
        };
        let mut verification = verify_rows(cx.sp(), &rows);
        if dist.kind == PackageKind::Devel {
            // `rocm-sdk init` deletes the tarball last: gone means unpacked.
            verification
                .mismatches
                .retain(|m| !(m.problem == MISSING && is_devel_tar(&m.path)));
        }
        let problems: Vec<String> = verification
            .mismatches
            .iter()
            .map(|m| format!("{}: {}", m.path, m.problem))
            .collect();
        let mut check = Check::from_problems(
            Category::Record,
            &name,
            format!(
                "{} files match RECORD, {} listed without hash",
                verification.checked, verification.unhashed
            ),
            &problems,
        );
        if !problems.is_empty() {
            check.reason.push_str("; ");
            check
                .reason
                .push_str(&reinstall(cx.install, &dist.name, &dist.version));
        }
        checks.push(check);
    }
}

/// What to run to restore a distribution's files.
fn reinstall(install: InstallCommand, name: &str, version: &str) -> String {
    format!("reinstall it with `{install} --force-reinstall --no-deps \"{name}=={version}\"`")
}

/// `rocm_sdk_devel/_devel.tar*`: the tarball `rocm-sdk init` consumes.
fn is_devel_tar(path: &str) -> bool {
    path.strip_prefix(devel_tar::DEVEL_PACKAGE_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|name| name.starts_with("_devel.tar"))
}
