//! Console scripts exist and run: each script pip wrote (found through its
//! distribution's RECORD, so `--user` and `--prefix` installs work) is an
//! executable whose interpreter exists and whose entry point resolves; the
//! tools that can run without a GPU are run (`hipconfig --rocmpath` in
//! `devel`, the profiler's `--version`).

use std::fs;
use std::io::{BufRead, BufReader, Read as _};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use dist_info::console_scripts::ConsoleScript;
use dist_info::package::PackageKind;
use dist_info::requirement::Platform;

use super::Context;
use super::run::{first_line, run};
use super::tools::{failed_run, output_text};
use crate::distributions::Distribution;
use crate::record::{installed_path, read_record};
use crate::report::{Category, Check};
use fs_helpers::error_chain::Chain;

/// The profiler tools `rocm-sdk test` runs with `--version` (docs/behaviour.md#self-test).
const PROFILER_VERSION_TOOLS: [&str; 3] = [
    "rocprof-sys-sample",
    "rocprof-sys-run",
    "rocprof-sys-instrument",
];

/// The console scripts pip installs on this platform for installed packages,
/// with the distribution that owns each.
fn installed_scripts<'a>(cx: &'a Context<'_>) -> Vec<(&'a ConsoleScript, &'a Distribution)> {
    let host = if cfg!(windows) {
        Platform::Windows
    } else {
        Platform::Linux
    };
    cx.document
        .console_scripts
        .iter()
        .filter(|s| s.on(host))
        .filter_map(|s| {
            let owner = match s.package {
                PackageKind::Profiler => PackageKind::Profiler,
                _ => PackageKind::Core,
            };
            cx.one(owner).map(|d| (s, d))
        })
        .collect()
}

/// Where the installer wrote the script `name` of `dist`: its RECORD row
/// `bin/{name}` outside site-packages (`../../../bin/{name}` in a venv,
/// `bin/{name}` in a `uv --target` directory), found with
/// [`installed_path`] (which knows pip's `--target` layout). Rows of files
/// inside packages (`_rocm_sdk_core/bin/{name}`) are not scripts.
pub(super) fn script_path(cx: &Context<'_>, dist: &Distribution, name: &str) -> Option<PathBuf> {
    let rows = read_record(&dist.record()).ok()?;
    rows.iter()
        .find(|r| is_script_row(&r.path, name))
        .map(|r| installed_path(cx.sp(), &r.path))
}

/// `[../]*{bin,Scripts}/{name}`.
fn is_script_row(row: &str, name: &str) -> bool {
    let mut components: Vec<Component<'_>> = Path::new(row).components().collect();
    let file = components.pop();
    let dir = components.pop();
    file == Some(Component::Normal(name.as_ref()))
        && matches!(dir, Some(Component::Normal(d)) if d == "bin" || d == "Scripts")
        && components.iter().all(|c| *c == Component::ParentDir)
}

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let scripts = installed_scripts(cx);
    let pairs: Vec<(String, String)> = scripts
        .iter()
        .map(|(s, _)| {
            let (module, function) = s.entry_point().split_once(':').map_or_else(
                || (String::new(), String::new()),
                |(m, f)| (m.to_owned(), f.to_owned()),
            );
            (module, function)
        })
        .collect();
    let resolved = match cx.probe.attributes(&pairs) {
        Ok(resolved) => resolved,
        Err(e) => {
            checks.push(Check::failed(
                Category::Scripts,
                "entry points",
                Chain(&e).to_string(),
            ));
            vec![None; pairs.len()]
        }
    };
    let mut absent = Vec::new();
    for ((script, dist), entry_error) in scripts.iter().zip(resolved) {
        let mut problems = Vec::new();
        match script_path(cx, dist, &script.name) {
            None => problems.push(format!(
                "{} does not list a `{}` script; reinstall it with pip",
                cx.rel(&dist.record()),
                script.name
            )),
            Some(path) => problems.extend(script_file_problem(&path)),
        }
        if let Some(error) = entry_error {
            problems.push(format!(
                "entry point {} does not resolve: {error}",
                script.entry_point()
            ));
        }
        if !problems.is_empty() {
            checks.push(Check::failed(
                Category::Scripts,
                &script.name,
                problems.join("; "),
            ));
        } else if let Some(tool) = tool_path(cx, script) {
            checks.push(Check::passed(
                Category::Scripts,
                &script.name,
                format!("runs {}", cx.rel(&tool)),
            ));
        } else {
            absent.push(script.name.as_str());
        }
    }
    if !absent.is_empty() {
        // Every script of docs/behaviour.md#console-scripts is installed; a build may lack
        // some tools, and their scripts then say so when run.
        checks.push(Check::skipped(
            Category::Scripts,
            format!("{} scripts", absent.len()),
            format!(
                "their tools are not part of this build: {}",
                absent.join(" ")
            ),
        ));
    }
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

/// Windows runs any file pip wrote as a launcher (`NAME.exe`): there are no
/// mode bits to check.
#[cfg(windows)]
fn is_executable(meta: &fs::Metadata) -> bool {
    meta.is_file()
}

/// The script file exists, is executable, and its `#!` interpreter exists.
fn script_file_problem(path: &Path) -> Option<String> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => return Some(format!("{}: {e}; reinstall with pip", path.display())),
    };
    if !is_executable(&meta) {
        return Some(format!("{} is not executable", path.display()));
    }
    // A regular file only (a pipe would block), and its first line only.
    let mut first = String::new();
    let _ = fs_helpers::confined::open_regular(path)
        .map(|f| BufReader::new(f.take(4096)).read_line(&mut first));
    let interpreter = first.strip_prefix("#!")?.split_whitespace().next()?;
    // pip writes `#!/bin/sh` plus an exec line for long or spaced paths.
    if !Path::new(interpreter).exists() {
        return Some(format!(
            "{}: its interpreter {interpreter} does not exist (the environment moved?); reinstall with pip",
            path.display()
        ));
    }
    None
}

/// The tool a script runs: in the devel tree (when devel is installed and
/// the tool may unpack it) or in the owning platform package.
pub(super) fn tool_path(cx: &Context<'_>, script: &ConsoleScript) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if script.package == PackageKind::Core
        && !script.system_info
        && cx.site.has_devel()
        && let Ok(root) = cx.site.devel_root()
    {
        candidates.push(root.join(&script.relpath));
    }
    let owner = if script.package == PackageKind::Profiler {
        PackageKind::Profiler
    } else {
        PackageKind::Core
    };
    if let Some(dir) = cx.one(owner).and_then(|d| d.platform_package.as_ref()) {
        candidates.push(dir.join(&script.relpath));
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// `rocprof-sys-{sample,run,instrument} --version` through their scripts,
/// when the profiler is installed.
pub(super) fn profiler(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let Some(dist) = cx.one(PackageKind::Profiler) else {
        return;
    };
    for name in PROFILER_VERSION_TOOLS {
        let label = format!("{name} --version");
        let Some(script) = cx.document.console_scripts.iter().find(|s| s.name == name) else {
            continue;
        };
        if tool_path(cx, script).is_none() {
            checks.push(Check::skipped(
                Category::Profiler,
                label,
                format!("{} is not part of this build", script.relpath),
            ));
            continue;
        }
        let Some(path) = script_path(cx, dist, name) else {
            checks.push(Check::failed(
                Category::Profiler,
                label,
                format!("no `{name}` script in {}", cx.rel(&dist.record())),
            ));
            continue;
        };
        checks.push(
            match run(Command::new(&path).arg("--version"), cx.options.run_timeout) {
                Ok(out) if out.status.success() => {
                    Check::passed(Category::Profiler, label, first_line(&out))
                }
                Ok(out) => failed_run(
                    cx,
                    Category::Profiler,
                    label,
                    &path,
                    &out.status.to_string(),
                    &output_text(&out),
                ),
                Err(e) => Check::failed(
                    Category::Profiler,
                    label,
                    format!("{}: {e}", path.display()),
                ),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn script_rows_are_outside_packages() {
        assert!(is_script_row("../../../bin/hipcc", "hipcc"));
        assert!(is_script_row("bin/hipcc", "hipcc"));
        assert!(is_script_row("../../Scripts/hipcc", "hipcc"));
        assert!(!is_script_row("_rocm_sdk_core/bin/hipcc", "hipcc"));
        assert!(!is_script_row("../../../bin/hipcc", "hipconfig"));
        assert!(!is_script_row("../../../share/hipcc", "hipcc"));
    }

    #[test]
    fn script_files_need_mode_and_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("tool");
        fs::write(&script, "#!/nonexistent/python\n").unwrap();
        assert!(
            script_file_problem(&script)
                .unwrap()
                .contains("not executable")
        );
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            script_file_problem(&script)
                .unwrap()
                .contains("/nonexistent/python")
        );
        fs::write(&script, "#!/bin/sh\nexec true\n").unwrap();
        assert_eq!(script_file_problem(&script), None);
        assert!(script_file_problem(&dir.path().join("gone")).is_some());
    }
}
