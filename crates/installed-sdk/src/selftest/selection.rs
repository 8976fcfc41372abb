//! Does the installed `rocm` wheel's target selection still hold on this
//! machine? Installers cache that wheel by the sdist alone, so one built
//! for another GPU, environment or platform can be installed here
//! (docs/python.md, "Stale selections"). The comparison is the Python
//! one the import and the devel tools use (`rocm_sdk/_selection_record.py`),
//! here with GPU detection in full (`offload-arch` too): a mismatch is a
//! warning, since what is installed may still work.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use super::Context;
use crate::report::{Category, Check};

/// The check's Python side, run with `python -I -B -c`.
const SOURCE: &str = include_str!("selection.py");

/// What the check's name says in the report.
const NAME: &str = "rocm target selection";

#[derive(Deserialize)]
struct Answer {
    installed: bool,
    #[serde(default)]
    record: Option<Record>,
    #[serde(default)]
    warning: Option<String>,
    #[serde(default)]
    detected: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct Record {
    target: Option<String>,
    source: Option<String>,
}

/// What the installed `rocm` wheel selected and what this machine's
/// kernel lists now, for the report's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Selected {
    pub(super) target: Option<String>,
    pub(super) source: Option<String>,
    pub(super) detected: Option<Vec<String>>,
}

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) -> Option<Selected> {
    let (check, selected) = evaluate_with(command(cx.probe.python(), cx.sp()));
    checks.push(check);
    selected
}

/// The Python side for the installation at `site`, in this process's
/// environment (`ROCM_SDK_TARGET_FAMILY` and `PATH` count).
fn command(python: &Path, site: &Path) -> Command {
    let mut command = Command::new(python);
    command
        .args(["-I", "-B", "-c", SOURCE])
        .arg(site)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD");
    command
}

#[cfg(test)]
fn evaluate(command: Command) -> Check {
    evaluate_with(command).0
}

fn evaluate_with(mut command: Command) -> (Check, Option<Selected>) {
    let python = PathBuf::from(command.get_program());
    let output = command.output();
    let answer = output
        .as_ref()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            let text = String::from_utf8_lossy(&o.stdout);
            let last = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())?
                .to_owned();
            serde_json::from_str::<Answer>(&last).ok()
        });
    let selected = answer.as_ref().and_then(|a| {
        a.record.as_ref().map(|r| Selected {
            target: r.target.clone(),
            source: r.source.clone(),
            detected: a.detected.clone(),
        })
    });
    let check = match answer {
        None => Check::skipped(
            Category::Installation,
            NAME,
            format!(
                "{} could not compare the `rocm` wheel's selection with this machine: {}",
                python.display(),
                match &output {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
                    Err(e) => e.to_string(),
                }
            ),
        ),
        Some(Answer {
            installed: false, ..
        }) => Check::skipped(
            Category::Installation,
            NAME,
            "the installed `rocm` package has no selection check",
        ),
        Some(Answer { record: None, .. }) => Check::skipped(
            Category::Installation,
            NAME,
            "the installed `rocm` wheel records no selection inputs (an older `rocm`)",
        ),
        Some(Answer {
            warning: Some(warning),
            ..
        }) => Check::warned(Category::Installation, NAME, warning),
        Some(Answer {
            record: Some(record),
            ..
        }) => Check::passed(
            Category::Installation,
            NAME,
            match (record.target, record.source) {
                (Some(target), Some(source)) => {
                    format!("{target} ({source}) still holds on this machine")
                }
                _ => "no target offered; the platform still holds".to_owned(),
            },
        ),
    };
    (check, selected)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::report::Outcome;

    /// A site-packages holding this repository's `rocm_sdk` and `record`.
    fn site(record: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("rocm_sdk");
        fs::create_dir(&package).unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/rocm_sdk");
        for entry in fs::read_dir(source).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "py") {
                fs::copy(&path, package.join(path.file_name().unwrap())).unwrap();
            }
        }
        fs::write(
            package.join("_dist_info.json"),
            r#"{"schema": 1, "version": "7.1.0"}"#,
        )
        .unwrap();
        if let Some(record) = record {
            fs::write(package.join("_selection.json"), record).unwrap();
        }
        dir
    }

    fn record(machine: &str) -> String {
        format!(
            r#"{{"schema": 1, "target": "gfx942", "source": "environment", "requested": "gfx942",
               "gpu_archs": null, "available_targets": ["gfx1100", "gfx942"],
               "default_target": "gfx1100", "sys_platform": "linux", "machine": "{machine}"}}"#
        )
    }

    fn run(site: &Path, target: &str) -> Check {
        let mut command = command(Path::new("python3"), site);
        command.env("ROCM_SDK_TARGET_FAMILY", target);
        evaluate(command)
    }

    #[test]
    fn another_requested_target_warns_with_the_remedy() {
        let machine = std::env::consts::ARCH;
        let site = site(Some(&record(machine)));
        let check = run(site.path(), "gfx1100");
        assert_eq!(check.outcome, Outcome::Warned, "{check:?}");
        assert!(
            check
                .reason
                .contains("it selected gfx942 (from ROCM_SDK_TARGET_FAMILY=gfx942)")
                && check
                    .reason
                    .contains(r#"pip install --no-cache-dir --force-reinstall "rocm==7.1.0""#),
            "{}",
            check.reason
        );
        let check = run(site.path(), "gfx942");
        assert_eq!(check.outcome, Outcome::Passed, "{check:?}");
        assert_eq!(
            check.reason,
            "gfx942 (environment) still holds on this machine"
        );
    }

    #[test]
    fn another_platform_warns_and_no_record_skips() {
        let site_elsewhere = site(Some(&record("riscv64")));
        let check = run(site_elsewhere.path(), "gfx942");
        assert_eq!(check.outcome, Outcome::Warned, "{check:?}");
        assert!(
            check.reason.contains("it was built on linux/riscv64"),
            "{}",
            check.reason
        );
        let old = site(None);
        assert_eq!(run(old.path(), "gfx942").outcome, Outcome::Skipped);
    }
}
