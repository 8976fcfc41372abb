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

/// Every flag value that is wrong on the command line alone exits 2, with
/// clap's one `error:` line naming the flag (docs/behaviour.md#exit-status).
/// The artifact directory does not exist: a value judged later would exit 1.
#[test]
fn every_bad_flag_value_exits_2() {
    let dest = tempfile::tempdir().unwrap();
    let build = ["build", "--artifact-dir", MISSING, "--dest-dir", "DEST"];
    let bad: [&[&str]; 17] = [
        &["--version", "banana"],
        &["--version", ""],
        &["--version-suffix", "a-b"],
        &["--linux-amdgpu-families", "gfx999"],
        &["--windows-amdgpu-families", "gfx1100;nope"],
        &["--platform-tag", "linux-x86_64"],
        &["--platform-tag", ""],
        &["--devel-compression", "lz4"],
        &["--project-url", "nolabel"],
        &["--compression-level", "13"],
        &["--jobs", "banana"],
        &["--jobs", "-1"],
        &["--shard", "3/2"],
        &["--shard", "banana"],
        &["--no-wheel-compression", "--compression-level", "6"],
        &["--devel-tarball-compression", "--devel-compression", "zstd"],
        &["--metadata"],
    ];
    let mut table = String::new();
    for extra in bad {
        let mut args = build.to_vec();
        args.extend(extra);
        table += &line(&args, dest.path());
    }
    for args in [
        &["plan", "--artifact-dir", MISSING, "--shards", "banana"][..],
        &["plan", "--artifact-dir", MISSING, "--version", "7.x"],
        &["verify", MISSING, "--linux-amdgpu-families", "gfx999"],
        &["verify", MISSING, "--policy", "manylinux_9000"],
        &["index", MISSING, "--layout", "tree"],
        &["completions", "tcsh"],
    ] {
        table += &line(args, dest.path());
    }
    insta::assert_snapshot!(table, @"");
}

/// `exit N | args | the first line of stderr`, for the table above (the
/// missing input shown as `IN`, the common build flags left out).
fn line(args: &[&str], dest: &Path) -> String {
    let seen = status_and_stderr(args, dest);
    let (status, stderr) = seen.split_once('\n').unwrap();
    let shown = args
        .join(" ")
        .replace(
            " --artifact-dir /nonexistent/therock-input --dest-dir DEST",
            "",
        )
        .replace(MISSING, "IN");
    format!(
        "{status} | {shown} | {}\n",
        stderr.lines().next().unwrap_or("")
    )
}

/// A directory without artifacts (empty, unrelated, or one artifact instead
/// of the directory of them) is named as such, with what an artifact
/// directory looks like; for one artifact its parent is suggested.
#[test]
fn a_wrong_artifact_dir_says_what_an_artifact_dir_is() {
    let work = tempfile::tempdir().unwrap();
    let empty = work.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let unrelated = work.path().join("unrelated");
    std::fs::create_dir_all(unrelated.join("src")).unwrap();
    std::fs::write(unrelated.join("README.md"), "hello").unwrap();
    let one = common::artifacts(fixtures::ExampleMode::Kpack).join("base_lib_generic");
    let mut seen = String::new();
    for dir in [&empty, &unrelated, &one] {
        let out = therock_package(&["inspect", "--artifact-dir", dir.to_str().unwrap()]);
        seen += &format!(
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
                .replace(work.path().to_str().unwrap(), "WORK")
                .replace(
                    common::artifacts(fixtures::ExampleMode::Kpack)
                        .to_str()
                        .unwrap(),
                    "ARTIFACTS"
                )
        );
    }
    insta::assert_snapshot!(seen, @"");
}
