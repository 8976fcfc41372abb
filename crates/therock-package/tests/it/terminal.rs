//! How `therock-package` talks to a terminal, a pipe and a CI log
//! (docs/ci.md): a progress display on a terminal (run under `script`,
//! which gives the program a pseudo-terminal as a person's shell would),
//! one plain line per package in a pipe, nothing with `-q`, no colour with
//! `NO_COLOR`, `RUST_LOG` over `-v`/`-q`; and the machine-readable side:
//! `build --json`, `index --json`, completions, man pages, `--version`.

use crate::common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use common::{artifacts, ok, therock_package};
use fixtures::ExampleMode;
use fixtures::man_page::assert_valid_roff;
use fixtures::terminal::has_colour;

/// `build` of the kpack example into `dest` with `extra` flags, stderr a pipe.
fn build(dest: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let artifact_dir = artifacts(ExampleMode::Kpack);
    let mut command = Command::new(env!("CARGO_BIN_EXE_therock-package"));
    command
        .args(["build", "--artifact-dir"])
        .arg(&artifact_dir)
        .arg("--dest-dir")
        .arg(dest)
        .args(extra)
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("ROCM_SDK_WHEEL_PLATFORM_TAG")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("therock-package runs")
}

/// `build` run under `script -qfec`, so stdin, stdout and stderr are a
/// pseudo-terminal; returns everything the terminal showed.
fn build_on_a_terminal(dest: &Path, env: &[(&str, &str)]) -> String {
    let mut command = terminal_build(dest);
    command.envs(env.iter().copied());
    ok(&command.output().expect("script (util-linux) runs"))
}

/// The command of a kpack build into `dest` on a pseudo-terminal, without
/// the variables of the caller's environment that change a build.
fn terminal_build(dest: &Path) -> Command {
    let artifact_dir = artifacts(ExampleMode::Kpack);
    let mut command = fixtures::terminal::command(
        Path::new(env!("CARGO_BIN_EXE_therock-package")),
        &[
            "build",
            "--artifact-dir",
            artifact_dir.to_str().unwrap(),
            "--dest-dir",
            dest.to_str().unwrap(),
        ],
    );
    command
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("ROCM_SDK_WHEEL_PLATFORM_TAG");
    command
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every wheel and sdist below `dist`, relative to it.
fn walk_packages(dist: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dist.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "whl" || e == "gz") {
                let rel = path.strip_prefix(dist).unwrap();
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// The paths the text report lists (one per written package).
fn reported_packages(stdout: &str) -> usize {
    stdout
        .lines()
        .filter(|l| {
            Path::new(l)
                .extension()
                .is_some_and(|ext| ext == "whl" || ext == "gz")
        })
        .count()
}

#[test]
fn a_terminal_shows_the_progress_display_in_colour() {
    let dest = tempfile::tempdir().unwrap();
    let screen = build_on_a_terminal(dest.path(), &[]);
    // The display: packages done/total, bytes and rate (an ETA only once
    // it means something, which a build this short may never reach).
    assert!(screen.contains(" packages"), "{screen:?}");
    assert!(screen.contains("B/s"), "{screen:?}");
    assert!(has_colour(&screen), "{screen:?}");
    // Not the plain lines meant for logs.
    assert!(!screen.contains("[1/"), "{screen:?}");
    // The report follows.
    assert!(screen.contains(" packages, "), "{screen:?}");
}

/// Bytes are credited as they are written: the build is held (the test
/// hook `first-bytes`, docs/pipeline.md) right after its first bytes were
/// counted, and the terminal then shows a byte count above zero while no
/// package is done yet. No ETA is shown before it means something.
#[test]
fn the_byte_count_grows_before_the_first_package_is_done() {
    use std::io::Read as _;

    let dest = tempfile::tempdir().unwrap();
    let gates = tempfile::tempdir().unwrap();
    let fifo = gates.path().join("first-bytes");
    ok(&Command::new("mkfifo").arg(&fifo).output().unwrap());
    let mut command = terminal_build(dest.path());
    command
        .env("THEROCK_PACKAGE_TEST_COMMIT_GATE", gates.path())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut screen = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0; 4096];
    // The display redraws while the build is held; read until a frame of
    // "0/N packages" shows bytes.
    let frame = loop {
        let n = screen.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the build ended without such a frame:\n{}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&seen).into_owned();
        if let Some(frame) = text
            .split(['\r', '\n'])
            .find(|f| f.contains(" 0/") && f.contains(" packages ") && !f.contains(" 0 B/"))
        {
            break frame.to_owned();
        }
    };
    fs::write(&fifo, b"go").unwrap();
    let mut rest = Vec::new();
    screen.read_to_end(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(frame.contains("B/s"), "{frame:?}");
    let all = String::from_utf8_lossy(&[seen, rest].concat()).into_owned();
    assert!(!all.contains("ETA 0s"), "{all:?}");
    assert!(all.contains(" packages, "), "{all:?}");
}

#[test]
fn no_color_keeps_the_display_without_colour() {
    let dest = tempfile::tempdir().unwrap();
    let screen = build_on_a_terminal(dest.path(), &[("NO_COLOR", "1")]);
    assert!(screen.contains("B/s"), "{screen:?}");
    assert!(!has_colour(&screen), "{screen:?}");
}

/// A pipe names each package once: its progress line on stderr; stdout
/// gets the summary with the dist directory (`--json` lists every file).
#[test]
fn a_pipe_gets_one_plain_line_per_package() {
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &[], &[]);
    let report = ok(&out);
    let log = stderr(&out);
    assert!(!log.contains('\x1b'), "{log:?}");
    assert!(!report.contains('\x1b'), "{report:?}");
    assert_eq!(reported_packages(&report), 0, "{report}");
    let written = walk_packages(&dest.path().join("dist"));
    let packages = written.len();
    assert!(packages > 3, "{written:?}");
    let lines: Vec<&str> = log.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(lines.len(), packages, "{log}");
    for (i, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("[{}/{packages}] ", i + 1)),
            "{line}"
        );
        let name = line.rsplit("  ").next().unwrap();
        assert!(
            written.contains(&name.to_owned()),
            "{line} names no written file"
        );
    }
    let summary = report.replace(dest.path().to_str().unwrap(), "DEST");
    assert!(
        summary.starts_with(&format!("{packages} packages, "))
            && summary.ends_with(": DEST/dist\n"),
        "{summary}"
    );
    // A legacy build names each package below its family folder, so its
    // same-named devel wheels are told apart.
    let legacy = tempfile::tempdir().unwrap();
    let out = therock_package(&[
        "build",
        "--artifact-dir",
        artifacts(ExampleMode::Legacy).to_str().unwrap(),
        "--dest-dir",
        legacy.path().to_str().unwrap(),
    ]);
    let summary = ok(&out).replace(legacy.path().to_str().unwrap(), "DEST");
    let mut names: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with('['))
        .map(|l| l.rsplit("  ").next().unwrap().to_owned())
        .collect();
    // In the order they finish; the set is what is pinned.
    names.sort();
    insta::assert_snapshot!(names.join("\n"), @"
    gfx110X-all/rocm-7.1.0.tar.gz
    gfx110X-all/rocm_sdk_devel-7.1.0-py3-none-linux_x86_64.whl
    gfx94X-dcgpu/rocm-7.1.0.tar.gz
    gfx94X-dcgpu/rocm_sdk_devel-7.1.0-py3-none-linux_x86_64.whl
    rocm_profiler-7.1.0-py3-none-linux_x86_64.whl
    rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl
    rocm_sdk_libraries_gfx110x_all-7.1.0-py3-none-linux_x86_64.whl
    rocm_sdk_libraries_gfx94x_dcgpu-7.1.0-py3-none-linux_x86_64.whl
    ");
    // Sizes and the time aside.
    let (count, rest) = summary.split_once(", ").unwrap();
    let place = rest.rsplit_once(": ").unwrap().1;
    insta::assert_snapshot!(format!("{count}, [size] in [time]: {place}"), @"8 packages, [size] in [time]: DEST/dist");
    // A warning in a pipe has no colour either.
    let out = build(dest.path(), &["--jobs", "100000"], &[]);
    let log = stderr(&out);
    assert!(log.contains("WARN"), "{log}");
    assert!(!log.contains('\x1b'), "{log:?}");
}

#[test]
fn quiet_prints_nothing_on_success() {
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &["-q"], &[]);
    assert_eq!(ok(&out), "");
    assert_eq!(stderr(&out), "");
    assert!(dest.path().join("dist").is_dir());
    // Errors still come through.
    let out = therock_package(&["-q", "index", "/nonexistent/dist"]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&out), @"therock-package: error: /nonexistent/dist is not a directory; pass the dist directory to index");
}

#[test]
fn rust_log_overrides_the_flags() {
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &["-q"], &[("RUST_LOG", "debug")]);
    ok(&out);
    let log = stderr(&out);
    assert!(log.contains("DEBUG"), "{log}");
    assert!(log.contains("writing rocm-sdk-core:"), "{log}");
    // Without it, `-v` is info: no debug lines.
    let out = build(dest.path(), &["-v"], &[]);
    let log = stderr(&out);
    assert!(log.contains("INFO"), "{log}");
    assert!(!log.contains("DEBUG"), "{log}");
}

/// Replaces what varies between runs (temporary paths, hashes, timings).
fn redact_build(mut json: serde_json::Value, dest: &Path) -> serde_json::Value {
    let dest = dest.to_str().unwrap();
    json["seconds"] = "[seconds]".into();
    json["dist_dir"] = json["dist_dir"]
        .as_str()
        .unwrap()
        .replace(dest, "[dest]")
        .into();
    for file in json["files"].as_array_mut().unwrap() {
        let sha = file["sha256"].as_str().unwrap();
        assert_eq!(sha.len(), 64);
        file["sha256"] = "[sha256]".into();
        file["path"] = file["path"]
            .as_str()
            .unwrap()
            .replace(dest, "[dest]")
            .into();
        file["size"] = "[size]".into();
    }
    json["total_size"] = "[size]".into();
    json
}

#[test]
fn build_json_lists_every_written_file_with_its_hash() {
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &["--json"], &[]);
    let json: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    // The hashes and sizes are those of the files on disk.
    let mut total = 0;
    for file in json["files"].as_array().unwrap() {
        let path = Path::new(file["path"].as_str().unwrap());
        let bytes = fs::read(path).unwrap();
        assert_eq!(file["size"], bytes.len());
        total += bytes.len();
        let sha = Command::new("sha256sum").arg(path).output().unwrap();
        let sha = String::from_utf8(sha.stdout).unwrap();
        assert_eq!(file["sha256"], sha.split_whitespace().next().unwrap());
    }
    assert_eq!(json["total_size"], total);
    insta::assert_json_snapshot!("build_json", redact_build(json, dest.path()));

    let out = build(dest.path(), &["--json", "--no-build-packages"], &[]);
    let json: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    insta::assert_json_snapshot!("build_json_plan_only", redact_build(json, dest.path()));
}

#[test]
fn index_json_lists_the_pages_and_links() {
    let dest = tempfile::tempdir().unwrap();
    ok(&build(dest.path(), &["-q"], &[]));
    let dist = dest.path().join("dist");
    let out = therock_package(&["index", "--json", dist.to_str().unwrap()]);
    let mut json: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let relative = |value: &mut serde_json::Value| {
        let path = value
            .as_str()
            .unwrap()
            .replace(dist.to_str().unwrap(), "[dist]");
        *value = path.into();
    };
    for file in json["metadata_files"].as_array_mut().unwrap() {
        assert!(
            Path::new(file.as_str().unwrap()).is_file(),
            "{file} was written"
        );
        relative(file);
    }
    for page in json["pages"].as_array_mut().unwrap() {
        assert!(Path::new(page["path"].as_str().unwrap()).is_file());
        relative(&mut page["path"]);
    }
    insta::assert_json_snapshot!("index_json", json);
    // `-q` drops the text report, not the JSON.
    assert_eq!(
        ok(&therock_package(&["-q", "index", dist.to_str().unwrap()])),
        ""
    );
}

#[test]
fn completions_are_valid_shell() {
    let script = ok(&therock_package(&["completions", "bash"]));
    assert!(script.contains("therock-package"), "{script}");
    for command in ["build", "verify", "index", "completions"] {
        assert!(script.contains(command), "{command}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("therock-package.bash");
    fs::write(&path, &script).unwrap();
    ok(&Command::new("bash").arg("-n").arg(&path).output().unwrap());
    let zsh = ok(&therock_package(&["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef therock-package"), "{zsh}");
    assert_eq!(
        therock_package(&["completions", "tcsh"]).status.code(),
        Some(2)
    );
}

#[test]
fn man_pages_for_the_program_and_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = therock_package(&["generate-man", dir.path().to_str().unwrap()]);
    ok(&out);
    let mut pages: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    assert_eq!(
        pages,
        [
            "therock-package-assemble.1",
            "therock-package-build.1",
            "therock-package-completions.1",
            "therock-package-index.1",
            "therock-package-inspect.1",
            "therock-package-plan.1",
            "therock-package-post-release.1",
            "therock-package-verify.1",
            "therock-package.1",
        ]
    );
    for page in &pages {
        assert_valid_roff(&dir.path().join(page));
    }
    let build = fs::read_to_string(dir.path().join("therock-package-build.1")).unwrap();
    assert!(build.contains("artifact\\-dir"), "{build}");
    // The generator is hidden from the help.
    let help = ok(&therock_package(&["--help"]));
    assert!(!help.contains("generate-man"), "{help}");
}

#[test]
fn version_flag_prints_the_version() {
    let out = ok(&therock_package(&["--version"]));
    assert_eq!(
        out,
        format!("therock-package {}\n", env!("CARGO_PKG_VERSION"))
    );
}
