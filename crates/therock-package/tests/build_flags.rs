//! Flags of `therock-package build` that are refused or bounded: an
//! invalid nonce (exit 1, one line naming the flag and the rule), the two
//! spellings of the devel codec disagreeing (a usage error, exit 2), and
//! `--jobs` capped at a multiple of the cores.

mod common;

use std::path::Path;

use common::{artifacts, ok, therock_package};
use fixtures::ExampleMode;

fn build(dest: &Path, extra: &[&str]) -> std::process::Output {
    let artifact_dir = artifacts(ExampleMode::Kpack);
    let mut args = vec![
        "build",
        "--artifact-dir",
        artifact_dir.to_str().unwrap(),
        "--dest-dir",
        dest.to_str().unwrap(),
    ];
    args.extend(extra);
    therock_package(&args)
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_nonce_python_cannot_import_is_refused() {
    let long = "x".repeat(300);
    for (nonce, why) in [
        ("A.B", "contains '.'"),
        ("x-y", "contains '-'"),
        ("a b", "contains ' '"),
        (long.as_str(), "has 300 characters"),
    ] {
        let dest = tempfile::tempdir().unwrap();
        let out = build(dest.path(), &["--version-suffix", nonce]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{nonce}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("invalid --version-suffix"), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(
            err.contains("a nonce is empty or 1 to 64 ASCII letters, digits and `_`"),
            "{err}"
        );
        assert!(!dest.path().join("dist").exists(), "{nonce} wrote dist/");
    }
}

#[test]
fn the_devel_codec_spellings_must_agree() {
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
        assert!(err.contains("give one of them"), "{err}");
        assert!(err.contains(conflict[2]), "{err}");
        assert!(!dest.path().join("dist").exists());
    }
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
    assert!(
        err.contains(&format!("using {cap} compression threads")),
        "{err}"
    );
    // A request within the cap is used as given.
    let dest = tempfile::tempdir().unwrap();
    let out = build(dest.path(), &["-v", "--jobs", "1"]);
    ok(&out);
    assert!(stderr(&out).contains("using 1 compression threads"));
}
