//! Every command maps its result through one exit status
//! (docs/behaviour.md#exit-status): a missing input path is bad input (1),
//! whatever the command; only the command line itself is a usage error (2).

mod common;

use std::path::Path;

use common::therock_package;

/// The exit status and stderr of a run, as one snapshot.
fn status_and_stderr(args: &[&str], dest: &Path) -> String {
    let dest = dest.to_str().unwrap();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "DEST" { dest } else { a })
        .collect();
    let out = therock_package(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).replace(dest, "DEST");
    format!("exit {:?}\n{stderr}", out.status.code())
}

const MISSING: &str = "/nonexistent/therock-input";

#[test]
fn a_missing_input_is_bad_input_for_every_command() {
    let dest = tempfile::tempdir().unwrap();
    let commands: [(&str, &[&str]); 6] = [
        ("inspect", &["inspect", "--artifact-dir", MISSING]),
        ("plan", &["plan", "--artifact-dir", MISSING]),
        (
            "build",
            &["build", "--artifact-dir", MISSING, "--dest-dir", "DEST"],
        ),
        ("assemble", &["assemble", MISSING, "--dest-dir", "DEST"]),
        ("verify", &["verify", MISSING]),
        ("index", &["index", MISSING]),
    ];
    for (name, args) in commands {
        let seen = status_and_stderr(args, dest.path());
        assert!(seen.starts_with("exit Some(1)\n"), "{name}: {seen}");
        insta::assert_snapshot!(format!("missing_input_{name}"), seen);
    }
}

#[test]
fn usage_errors_exit_2_for_every_command() {
    let dest = tempfile::tempdir().unwrap();
    let commands: [&[&str]; 7] = [
        &["inspect"],
        &["plan"],
        &["build", "--artifact-dir", MISSING],
        &["assemble", MISSING],
        &["verify"],
        &["index"],
        &["no-such-command"],
    ];
    for args in commands {
        let seen = status_and_stderr(args, dest.path());
        assert!(seen.starts_with("exit Some(2)\n"), "{args:?}: {seen}");
    }
}

#[test]
fn help_and_version_exit_0() {
    for args in [&["--help"][..], &["--version"], &["verify", "--help"]] {
        let out = therock_package(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
    }
}

/// A build that fails leaves the destination as it found it: directories
/// it had to create are gone again, lock file and all, and an existing
/// empty one is left empty.
#[test]
fn a_failed_build_leaves_the_destination_as_it_found_it() {
    let work = tempfile::tempdir().unwrap();
    // Artifacts without a manifest: refused after `dist/` was prepared.
    let artifacts = work.path().join("artifacts");
    std::fs::create_dir(&artifacts).unwrap();
    let new_dest = work.path().join("new/out");
    let existing = work.path().join("existing");
    std::fs::create_dir(&existing).unwrap();
    for dest in [&new_dest, &existing] {
        let out = therock_package(&[
            "build",
            "--artifact-dir",
            artifacts.to_str().unwrap(),
            "--dest-dir",
            dest.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        !work.path().join("new").exists(),
        "the new destination was left behind"
    );
    assert_eq!(std::fs::read_dir(&existing).unwrap().count(), 0);
}
