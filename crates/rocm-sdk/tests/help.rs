//! The help of every command, pinned: `Usage:` as in `therock-package`,
//! `-v`/`-q` last under "Global options", examples at the end.

use std::process::Command;

fn help(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("-h");
    let out = Command::new(env!("CARGO_BIN_EXE_rocm-sdk"))
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    for noise in ["usage:", "docs/", ".md", "generate-man", "site-packages <"] {
        assert!(!text.contains(noise), "{args:?} shows {noise:?}:\n{text}");
    }
    text
}

#[test]
fn the_program() {
    insta::assert_snapshot!(help(&[]), @"");
}

#[test]
fn init() {
    insta::assert_snapshot!(help(&["init"]), @"");
}

#[test]
fn path() {
    insta::assert_snapshot!(help(&["path"]), @"");
}

#[test]
fn version() {
    insta::assert_snapshot!(help(&["version"]), @"");
}

#[test]
fn targets() {
    insta::assert_snapshot!(help(&["targets"]), @"");
}

#[test]
fn test() {
    insta::assert_snapshot!(help(&["test"]), @"");
}

/// Values judged from the command line alone exit 2, as in `therock-package`.
#[test]
fn bad_flag_values_exit_2() {
    for args in [
        &["test", "--jobs", "banana"][..],
        &["test", "--jobs", "-1"],
        &["path", "--cmake", "--bin"],
        &["path"],
        &["no-such-command"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rocm-sdk"))
            .args(args)
            .args(["--site-packages", "/nonexistent"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
}
