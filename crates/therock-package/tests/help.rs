//! The help of every command, pinned: grouped options under headings,
//! `-v`/`-q` last under "Global options", examples at the end, no default
//! values that say nothing, no citations of files an installed binary's
//! user does not have.

mod common;

use common::therock_package;

/// `therock-package ARGS… -h`, checked for what no page may hold.
fn help(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("-h");
    let out = therock_package(&args);
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    for noise in [
        "[default: \"\"]",
        "[default: 0]",
        "docs/",
        ".md",
        "generate-man",
    ] {
        assert!(!text.contains(noise), "{args:?} shows {noise:?}:\n{text}");
    }
    text
}

#[test]
fn the_program() {
    insta::assert_snapshot!(help(&[]), @"");
}

#[test]
fn build() {
    insta::assert_snapshot!(help(&["build"]), @"");
}

#[test]
fn plan() {
    insta::assert_snapshot!(help(&["plan"]), @"");
}

#[test]
fn inspect() {
    insta::assert_snapshot!(help(&["inspect"]), @"");
}

#[test]
fn assemble() {
    insta::assert_snapshot!(help(&["assemble"]), @"");
}

#[test]
fn verify() {
    insta::assert_snapshot!(help(&["verify"]), @"");
}

#[test]
fn index() {
    insta::assert_snapshot!(help(&["index"]), @"");
}

#[test]
fn completions() {
    let text = help(&["completions"]);
    assert!(!text.contains("--json"), "{text}");
    insta::assert_snapshot!(text, @"");
}

/// Completion scripts offer the visible commands only.
#[test]
fn completions_leave_out_hidden_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = therock_package(&["completions", shell]);
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("assemble"), "{shell}");
        assert!(!script.contains("generate-man"), "{shell}:\n{script}");
    }
}
