//! `therock-package index` (issue 9): the published find-links page of the
//! two-platform release is sorted, encoded and deterministic, and pip and
//! uv resolve `rocm[device-gfx942]` through it on Linux.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{Build, Venv, ok, publish, therock_package, two_platform_release};
use fixtures::ExampleMode;

/// The Linux and Windows outputs of the release published into one
/// directory (the sdist is the same bytes on both), indexed.
fn published() -> &'static (tempfile::TempDir, PathBuf) {
    static PUBLISHED: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    PUBLISHED.get_or_init(|| {
        let (linux, windows) = two_platform_release(true);
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("whl");
        publish(&[linux.dist(), windows.dist()], &dir);
        ok(&therock_package(&["index", dir.to_str().unwrap()]));
        (tmp, dir)
    })
}

fn index_page() -> PathBuf {
    published().1.join("index.html")
}

fn sha256(path: &Path) -> String {
    let out = ok(&Command::new("sha256sum").arg(path).output().unwrap());
    out.split_whitespace().next().unwrap().to_owned()
}

#[test]
fn page_is_sorted_hashed_and_deterministic() {
    let dir = &published().1;
    let page = fs::read_to_string(index_page()).unwrap();
    // Every package once, with the sha256 of its bytes.
    let mut hrefs = Vec::new();
    for line in page.lines().filter(|l| l.contains("<a href=")) {
        let href = line.split('"').nth(1).unwrap();
        let (file, sha) = href.split_once("#sha256=").unwrap();
        assert_eq!(sha, sha256(&dir.join(file)), "{file}");
        hrefs.push(file.to_owned());
    }
    let mut sorted = hrefs.clone();
    sorted.sort();
    assert_eq!(hrefs, sorted);
    assert_eq!(
        hrefs.len(),
        12,
        "7 Linux packages + 5 Windows wheels (one shared sdist)"
    );
    // Regenerating gives the same bytes and leaves no temporary file.
    ok(&therock_package(&["index", dir.to_str().unwrap()]));
    assert_eq!(fs::read_to_string(index_page()).unwrap(), page);
    assert!(
        fs::read_dir(dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp"))
    );
    // Hashes depend on the host's gcc output (the example's ELF files).
    let redacted: String = page
        .lines()
        .map(|l| match l.split_once("#sha256=") {
            Some((head, tail)) => format!("{head}#sha256=[sha256]{}\n", &tail[64..]),
            None => format!("{l}\n"),
        })
        .collect();
    insta::assert_snapshot!("release_index", redacted);
}

#[test]
fn pip_resolves_the_device_wheel_through_the_page() {
    let venv = Venv::new();
    ok(&venv.pip_install(&index_page(), &["rocm[device-gfx942]"]));
    let files = venv.site_files();
    for dist_info in [
        "rocm_sdk_device_gfx942-7.1.0.dist-info",
        "rocm_sdk_libraries-7.1.0.dist-info",
        "rocm_sdk_core-7.1.0.dist-info",
    ] {
        assert!(
            files.iter().any(|f| f == dist_info),
            "{dist_info} not installed"
        );
    }
    assert!(
        !files
            .iter()
            .any(|f| f.starts_with("rocm_sdk_device_gfx1100"))
    );
}

#[test]
fn uv_resolves_the_device_wheel_through_the_page() {
    let venv = Venv::new();
    ok(&venv.uv_install(&index_page(), &["rocm[device-gfx942]"]));
    let files = venv.site_files();
    assert!(
        files
            .iter()
            .any(|f| f == "rocm_sdk_device_gfx942-7.1.0.dist-info"),
        "{files:?}"
    );
}

#[test]
fn legacy_release_gets_one_page_per_family() {
    let build = Build::new(ExampleMode::Legacy, &[]);
    let dist = build.dist();
    // Several families: each dist/{F}/ has its own rocm sdist, so one page cannot serve all.
    let out = therock_package(&["index", dist.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("twice") && err.contains("--per-family"),
        "{err}"
    );

    let report = ok(&therock_package(&[
        "index",
        "--per-family",
        dist.to_str().unwrap(),
    ]));
    let families: Vec<String> = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(families.len() >= 2, "{families:?}");
    let shared: Vec<String> = fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "whl"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for family in &families {
        let page = fs::read_to_string(dist.join(family).join("index.html")).unwrap();
        assert!(report.contains(&format!("{family}/index.html")), "{report}");
        assert!(page.contains("href=\"rocm-7.1.0.tar.gz#sha256="), "{page}");
        for wheel in &shared {
            assert!(
                page.contains(&format!("href=\"../{wheel}#sha256=")),
                "{wheel} missing from {family}"
            );
        }
    }
    // A family page is a complete find-links source: pip resolves from it alone.
    let family = &families[0];
    let venv = Venv::new();
    ok(&venv.pip_install(&dist.join(family).join("index.html"), &["rocm[libraries]"]));
    let libraries = format!(
        "rocm_sdk_libraries_{}-7.1.0.dist-info",
        family.replace('-', "_").to_lowercase()
    );
    assert!(
        venv.site_files().contains(&libraries),
        "{libraries} not installed"
    );
}
