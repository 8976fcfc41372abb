//! Flags of `therock-package build` that are refused or bounded: an
//! invalid nonce (a usage error judged while parsing, exit 2, one error
//! line naming the flag and the rule), the two
//! spellings of the devel codec disagreeing (a usage error, exit 2), and
//! `--jobs` capped at a multiple of the cores; what `-v` and `-vv` say.

use crate::common;

use std::path::Path;

use common::{artifacts, ok};
use fixtures::ExampleMode;

fn build(dest: &Path, extra: &[&str]) -> std::process::Output {
    common::build_into(&artifacts(ExampleMode::Kpack), dest, extra)
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_nonce_python_cannot_import_is_refused() {
    let long = "x".repeat(300);
    let mut errors = String::new();
    for nonce in ["A.B", "x-y", "a b", long.as_str()] {
        let dest = tempfile::tempdir().unwrap();
        let out = build(dest.path(), &["--version-suffix", nonce]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{nonce}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.contains("error")).count(),
            1,
            "{err}"
        );
        assert!(!dest.path().join("dist").exists(), "{nonce} wrote dist/");
        errors.push_str(err.lines().next().unwrap());
        errors.push('\n');
    }
    // One line each: the flag, the value (a long one shortened), what is
    // wrong with it and the rule.
    insta::assert_snapshot!(errors, @r#"
    error: invalid value 'A.B' for '--version-suffix <NONCE>': "A.B" is not a nonce: it contains '.'; a nonce is empty or 1 to 64 ASCII letters, digits and `_` (it ends Python package names such as _rocm_sdk_core{nonce})
    error: invalid value 'x-y' for '--version-suffix <NONCE>': "x-y" is not a nonce: it contains '-'; a nonce is empty or 1 to 64 ASCII letters, digits and `_` (it ends Python package names such as _rocm_sdk_core{nonce})
    error: invalid value 'a b' for '--version-suffix <NONCE>': "a b" is not a nonce: it contains ' '; a nonce is empty or 1 to 64 ASCII letters, digits and `_` (it ends Python package names such as _rocm_sdk_core{nonce})
    error: invalid value 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' for '--version-suffix <NONCE>': "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" is not a nonce: it has 300 characters; a nonce is empty or 1 to 64 ASCII letters, digits and `_` (it ends Python package names such as _rocm_sdk_core{nonce})
    "#);
}

#[test]
fn the_devel_codec_spellings_must_agree() {
    let mut errors = Vec::new();
    for conflict in [
        &[
            "--devel-compression",
            "zstd",
            "--no-devel-tarball-compression",
        ][..],
        &["--devel-compression", "none", "--devel-tarball-compression"],
        &["--devel-compression", "zstd", "--devel-tarball-compression"],
    ] {
        let dest = tempfile::tempdir().unwrap();
        let out = build(dest.path(), conflict);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{conflict:?}: {err}");
        assert!(!dest.path().join("dist").exists());
        errors.push(err.lines().next().unwrap_or_default().to_owned());
    }
    // The error line of each usage error (clap's usage lines follow it).
    insta::assert_snapshot!(errors.join("\n"), @"
    error: --no-devel-tarball-compression means --devel-compression none but --devel-compression zstd was given; give one of them
    error: --devel-tarball-compression means --devel-compression xz but --devel-compression none was given; give one of them
    error: --devel-tarball-compression means --devel-compression xz but --devel-compression zstd was given; give one of them
    ");
    // Agreeing spellings are fine.
    let dest = tempfile::tempdir().unwrap();
    ok(&build(
        dest.path(),
        &["--devel-compression", "xz", "--devel-tarball-compression"],
    ));
    assert!(
        walk_names(&dest.path().join("dist"))
            .iter()
            .any(|n| n.starts_with("rocm_sdk_devel-"))
    );
}

fn walk_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn jobs_are_capped_at_four_per_core() {
    let cores = std::thread::available_parallelism().unwrap().get();
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &["-v", "--jobs", "5000"]);
    ok(&out);
    let err = stderr(&out);
    let cap = 4 * cores;
    assert!(
        err.contains(&format!(
            "--jobs 5000 is more than 4 threads per core; using {cap}"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("using {cap} threads")), "{err}");
    // A request within the cap is used as given.
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &["-v", "--jobs", "1"]);
    ok(&out);
    assert!(stderr(&out).lines().any(|l| l.ends_with("using 1 thread")));
}

#[test]
fn verbose_lines_say_each_thing_once_and_name_their_file() {
    // `-v`: every line once (a skipped manifest line, a dropped link, a
    // written package were each said two or three ways).
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &["-v"]);
    ok(&out);
    let err = stderr(&out);
    let mut seen = std::collections::BTreeSet::new();
    for line in err.lines() {
        assert!(seen.insert(line), "said twice: {line}\n{err}");
    }
    let skipped: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("not-built"))
        .map(str::trim)
        .collect();
    insta::assert_snapshot!(skipped.join("\n"), @r#"INFO skipped manifest line "base/not-built/stage" of base_lib_generic: no such directory"#);
    // The staged path of a package is not where it lands: only the
    // progress line names it.
    assert!(!err.contains(".therock-package-staging"), "{err}");
    // `-vv`: each ELF edit's lines name the file edited.
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &["-vv"]);
    ok(&out);
    let err = stderr(&out);
    let edits: Vec<&str> = err.lines().filter(|l| l.contains("PT_LOAD")).collect();
    assert!(!edits.is_empty(), "{err}");
    for line in edits {
        assert!(line.contains("edit{file=_rocm_"), "{line}");
    }
}
