//! The core tools that need no GPU run and say what they are: each one the
//! build has is run through its console script (as a user would, so a
//! devel tool runs from the devel tree) and its output must contain a
//! known phrase. `hipconfig --rocmpath` is checked with the devel tree.

use std::path::Path;
use std::process::{Command, Output};

use dist_info::package::PackageKind;

use super::Context;
use super::host_needs::HostNeed;
use super::libraries::{runtime_dirs, walk};
use super::run::run;
use super::scripts::{script_path, tool_path};
use crate::report::{Category, Check};

/// A tool run: the console script, its arguments, and a phrase its output
/// (stdout and stderr) must contain.
struct ToolRun {
    script: &'static str,
    args: &'static [&'static str],
    expect: &'static str,
}

/// The GPU-independent tools `rocm-sdk test` runs, with what every ROCm
/// release of them prints (`AMD clang version ...`, `AMD LLD ...`).
const TOOL_RUNS: [ToolRun; 5] = [
    ToolRun {
        script: "hipcc",
        args: &["--version"],
        expect: "HIP version",
    },
    ToolRun {
        script: "amdclang",
        args: &["--version"],
        expect: "clang version",
    },
    ToolRun {
        script: "amdclang++",
        args: &["--version"],
        expect: "clang version",
    },
    ToolRun {
        script: "amdlld",
        args: &["-flavor", "ld.lld", "--version"],
        expect: "LLD",
    },
    ToolRun {
        script: "roc-obj-ls",
        args: &["-h"],
        expect: "Usage",
    },
];

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let Some(core) = cx.one(PackageKind::Core) else {
        return;
    };
    let mut absent = Vec::new();
    for tool in &TOOL_RUNS {
        let label = format!("{} {}", tool.script, tool.args.join(" "));
        let Some(script) = cx
            .document
            .console_scripts
            .iter()
            .find(|s| s.name == tool.script)
        else {
            continue;
        };
        if tool_path(cx, script).is_none() {
            absent.push(tool.script);
            continue;
        }
        let Some(program) = script_path(cx, core, tool.script).filter(|p| p.is_file()) else {
            checks.push(Check::failed(
                Category::Tools,
                label,
                format!(
                    "its console script is missing (see the scripts check); reinstall with `pip \
                     install --force-reinstall \"rocm-sdk-core=={}\"`",
                    core.version
                ),
            ));
            continue;
        };
        let check = match run(
            Command::new(&program).args(tool.args),
            cx.options.run_timeout,
        ) {
            Ok(out) => {
                let text = output_text(&out);
                if out.status.success() && text.contains(tool.expect) {
                    Check::passed(Category::Tools, label, first_line(&text))
                } else if out.status.success() {
                    Check::failed(
                        Category::Tools,
                        label,
                        format!(
                            "{} printed no {:?}: {}",
                            program.display(),
                            tool.expect,
                            first_line(&text)
                        ),
                    )
                } else {
                    failed_run(
                        cx,
                        Category::Tools,
                        label,
                        &program,
                        &out.status.to_string(),
                        &text,
                    )
                }
            }
            Err(e) => Check::failed(
                Category::Tools,
                label,
                format!("{}: {e}", program.display()),
            ),
        };
        checks.push(check);
    }
    if !absent.is_empty() {
        checks.push(Check::skipped(
            Category::Tools,
            format!("{} tools", absent.len()),
            format!("not part of this build: {}", absent.join(" ")),
        ));
    }
}

/// A tool that exited with an error: a warning when its output says the
/// host lacks what the tool expects from the host (and the ROCm packages do
/// not ship it), else a failure.
pub(super) fn failed_run(
    cx: &Context<'_>,
    category: Category,
    label: String,
    program: &Path,
    status: &str,
    text: &str,
) -> Check {
    let said = first_line(text);
    match HostNeed::in_output(text) {
        Some(need) if !shipped(cx, &need) => Check::warned(
            category,
            label,
            format!(
                "{} exited with {status}: this machine lacks {need}, which the tool expects from \
                 the host system; {}; it said: {said}",
                program.display(),
                need.remedy()
            ),
        ),
        _ => Check::failed(
            category,
            label,
            format!("{} exited with {status}: {said}", program.display()),
        ),
    }
}

/// Whether a runtime package ships what is missing (a library the tool
/// should have found inside the packages: their defect, not the host's).
fn shipped(cx: &Context<'_>, need: &HostNeed) -> bool {
    let HostNeed::Library(name) = need else {
        return false;
    };
    let mut files = Vec::new();
    for dir in runtime_dirs(cx) {
        walk(&dir, &mut files);
    }
    files
        .iter()
        .any(|f| f.file_name().is_some_and(|n| n == name.as_str()))
}

/// Stdout, then stderr.
pub(super) fn output_text(output: &Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    text
}

fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no output)")
        .to_owned()
}
