//! The member rules of the wheel reader (docs/behaviour.md#member-rules):
//! wheels whose RECORD matches every byte but whose members installers
//! refuse, or would write outside site-packages, are refused when opened,
//! naming each member and the rule.

use fixtures::raw_wheel::{FILE_MODE, RawWheel};
use wheel_writer::{ReadError, RecordProblem, WheelReader};

/// Opens the wheel and returns the error's text, with the temporary
/// directory written as `[dir]`.
fn refused(wheel: &RawWheel) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = wheel.write(dir.path());
    let error = WheelReader::open(&path).expect_err("the wheel is refused");
    assert!(
        matches!(error, ReadError::UnsafeMembers { .. }),
        "{error:?}"
    );
    error
        .to_string()
        .replace(&dir.path().display().to_string(), "[dir]")
}

#[test]
fn members_that_escape_are_refused() {
    let base = || RawWheel::new("evil", "1.0").file("evil/__init__.py", b"");
    insta::assert_snapshot!(refused(&base().file("../evil.txt", b"x")), @r#"wheel [dir]/evil-1.0-py3-none-linux_x86_64.whl holds a member that installers refuse or that would land outside site-packages: "../evil.txt" (not a clean relative path: `.` or `..` segment); rebuild it, or remove it from the directory"#);
    for (name, problem) in [
        ("/tmp/evil.txt", "absolute path"),
        ("evil/../../evil.txt", "`.` or `..` segment"),
        ("evil\\..\\..\\evil.txt", "backslash in path"),
        ("C:/evil.txt", "a Windows drive prefix"),
        ("evil/a\nb", "control character in path"),
        ("evil//x", "empty segment"),
    ] {
        let text = refused(&base().file(name, b"x"));
        assert!(
            text.contains(&format!("{name:?} (not a clean relative path: {problem}")),
            "{name:?}: {text}"
        );
    }
    // A name that is not UTF-8 is the zip reader's to refuse: readers
    // would decode it differently.
    let dir = tempfile::tempdir().unwrap();
    let path = base()
        .member(b"evil/\xff.txt", b"x", FILE_MODE)
        .write(dir.path());
    let error = WheelReader::open(&path).expect_err("refused");
    let text = fs_helpers::error_chain::Chain(&error).to_string();
    assert!(
        matches!(error, ReadError::Zip { .. })
            && text.contains("its name has the UTF-8 flag but is not UTF-8"),
        "{text}"
    );
}

#[test]
fn members_that_are_not_plain_files_are_refused() {
    let base = || RawWheel::new("evil", "1.0").file("evil/__init__.py", b"");
    for (mode, what) in [
        (
            0o120_777,
            "it is a symlink; packages carry regular files only",
        ),
        (0o020_644, "it is a device file"),
        (0o060_644, "it is a device file"),
        (0o010_644, "it is a FIFO"),
        (0o140_755, "it is a socket"),
        (
            0o104_755,
            "its mode has the setuid, setgid or sticky bits 0o4000",
        ),
        (
            0o102_755,
            "its mode has the setuid, setgid or sticky bits 0o2000",
        ),
        (0o040_755, "it is a directory"),
    ] {
        let text = refused(&base().member(b"evil/x", b"/etc/passwd", mode));
        assert!(
            text.contains(&format!("\"evil/x\" ({what}")),
            "{mode:o}: {text}"
        );
    }
    // A directory entry is a directory.
    let dir = tempfile::tempdir().unwrap();
    let path = base()
        .member(b"evil/sub/", b"", 0o040_755)
        .write(dir.path());
    assert!(
        WheelReader::open(&path)
            .unwrap()
            .verify()
            .unwrap()
            .is_valid()
    );
}

#[test]
fn a_name_given_twice_is_named_as_a_duplicate() {
    let wheel = RawWheel::new("evil", "1.0")
        .file("evil/a.py", b"print('checked')\n")
        .file("evil/a.py", b"print('installed')\n");
    insta::assert_snapshot!(refused(&wheel), @r#"wheel [dir]/evil-1.0-py3-none-linux_x86_64.whl holds a member that installers refuse or that would land outside site-packages: "evil/a.py" (a duplicate: the archive holds 2 members of this name); rebuild it, or remove it from the directory"#);
}

#[test]
fn a_record_row_outside_the_wheel_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = RawWheel::new("evil", "1.0")
        .file("evil/__init__.py", b"")
        .record_row("../../bin/evil,sha256=AAAA,4")
        .write(dir.path());
    let verification = WheelReader::open(&path).unwrap().verify().unwrap();
    assert_eq!(
        verification.problems,
        [RecordProblem::UnsafePath {
            path: "../../bin/evil".into(),
            problem: pypa_formats::member::PathProblem::DotSegment,
        }]
    );
    assert_eq!(
        verification.problems[0].to_string(),
        "../../bin/evil: listed in RECORD but not a clean relative path inside the wheel (`.` or `..` segment)"
    );
}

#[test]
fn a_sound_raw_wheel_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = RawWheel::new("fine", "1.0")
        .file("fine/__init__.py", b"")
        .member(b"fine/tool", b"#!/bin/sh\n", 0o100_755)
        .write(dir.path());
    let verification = WheelReader::open(&path).unwrap().verify().unwrap();
    assert!(verification.is_valid(), "{verification:?}");
}

/// The fuzz target's committed seeds (fuzz/seeds/wheel_reader, written by
/// fuzz/seeds/make_seeds.py with Python's zipfile, an independent writer):
/// the sound ones open, each hostile one is refused by its rule.
#[test]
fn the_fuzz_seeds_meet_the_member_rules() {
    let seeds =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/wheel_reader");
    let open = |name: &str| WheelReader::open(seeds.join(name));
    assert!(open("valid.whl").unwrap().verify().unwrap().is_valid());
    assert!(!open("tampered.whl").unwrap().verify().unwrap().is_valid());
    for (seed, said) in [
        (
            "escape.whl",
            "\"../evil.txt\" (not a clean relative path: `.` or `..` segment)",
        ),
        (
            "symlink.whl",
            "\"_rocm_sdk_core/bin/hipcc\" (it is a symlink",
        ),
        (
            "setuid.whl",
            "\"_rocm_sdk_core/bin/hipcc\" (its mode has the setuid",
        ),
        (
            "duplicate.whl",
            "\"_rocm_sdk_core/bin/hipcc\" (a duplicate: the archive holds 2 members",
        ),
    ] {
        let error = open(seed).expect_err(seed).to_string();
        assert!(error.contains(said), "{seed}: {error}");
    }
}
