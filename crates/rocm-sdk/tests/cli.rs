//! The command line itself, without an installation: usage errors, the
//! `--version` flag's error path, and the man pages (`cargo xtask man`).

use fixtures::man_page::assert_valid_roff;
use std::fs;
use std::process::{Command, Output};

fn rocm_sdk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocm-sdk"))
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("ROCM_SDK_LOG")
        .output()
        .expect("rocm-sdk runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_missing_command_is_a_usage_error() {
    // Nothing at all: the help, as before `--version` existed.
    let out = rocm_sdk(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Usage:"), "{out:?}");
    // Options but no command.
    let out = rocm_sdk(&["--site-packages", "/nonexistent", "-v"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&out), @"
    error: 'rocm-sdk' requires a subcommand but one was not provided

    Usage: rocm-sdk [OPTIONS] [COMMAND]

    For more information, try '--help'.
    ");
}

#[test]
fn version_flag_fails_as_the_version_command_does() {
    let dir = tempfile::tempdir().unwrap();
    let sp = dir.path().to_str().unwrap();
    let flag = rocm_sdk(&["--site-packages", sp, "--version"]);
    let command = rocm_sdk(&["--site-packages", sp, "version"]);
    assert_eq!(flag.status.code(), Some(1));
    assert_eq!(flag.status.code(), command.status.code());
    assert_eq!(stderr(&flag), stderr(&command));
    assert!(stderr(&flag).starts_with("rocm-sdk: error: "), "{flag:?}");
}

#[test]
fn man_pages_for_the_program_and_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = rocm_sdk(&["generate-man", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let mut pages: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    assert_eq!(
        pages,
        [
            "rocm-sdk-init.1",
            "rocm-sdk-path.1",
            "rocm-sdk-targets.1",
            "rocm-sdk-test.1",
            "rocm-sdk-version.1",
            "rocm-sdk.1",
        ]
    );
    for page in &pages {
        let path = dir.path().join(page);
        assert!(
            fs::read_to_string(&path).unwrap().contains("\n.TH "),
            "{page}"
        );
        assert_valid_roff(&path);
    }
    // The generator is not part of the help (the reference's commands are).
    let help = String::from_utf8_lossy(&rocm_sdk(&["--help"]).stdout).into_owned();
    assert!(!help.contains("generate-man"), "{help}");
    assert!(help.contains("Usage:"), "{help}");
}

/// A missing site-packages is bad input (exit 1) for every command, never
/// a usage error (docs/behaviour.md#exit-status).
#[test]
fn a_missing_site_packages_is_bad_input_for_every_command() {
    const MISSING: &str = "/nonexistent/site-packages";
    for command in [
        &["init"][..],
        &["path", "--root"],
        &["version"],
        &["targets"],
        &["test", "--python", "/nonexistent/python3"],
    ] {
        let mut args = vec!["--site-packages", MISSING];
        args.extend(command);
        let out = rocm_sdk(&args);
        let seen = format!("exit {:?}\n{}", out.status.code(), stderr(&out));
        assert!(seen.starts_with("exit Some(1)\n"), "{command:?}: {seen}");
        insta::assert_snapshot!(format!("missing_site_packages_{}", command[0]), seen);
    }
    // The command line alone: a usage error.
    let out = rocm_sdk(&["--site-packages", MISSING, "path"]);
    assert_eq!(out.status.code(), Some(2));
}
