//! A build from `.tar.zst` / `.tar.xz` artifacts writes the same `dist/`,
//! byte for byte, as the build of the same artifacts as directories, and
//! leaves nothing of its extraction behind (docs/artifacts.md, "Building
//! from archives").

use crate::common;

use std::fs;

use common::{Build, build_into, example};
use fixtures::{ExampleMode, Layout};

/// Builds `mode` from directories and from each of `layouts`: the same
/// `dist/`, and nothing but it and the lock beside it.
fn assert_archive_builds_match(mode: ExampleMode, layouts: &[Layout]) {
    let tree = Build::from_artifacts(&example().artifact_dir(mode, Layout::Tree), &[]);
    let expected = tree.digests();
    assert!(expected.len() > 3, "{mode:?}: {expected:?}");
    for &layout in layouts {
        let archives = Build::from_artifacts(&example().artifact_dir(mode, layout), &[]);
        assert_eq!(archives.digests(), expected, "{mode:?} {layout:?}");
        let dest = archives.dist().parent().unwrap().to_owned();
        let mut left: Vec<String> = fs::read_dir(&dest)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [".therock-package.lock", "dist"],
            "{mode:?} {layout:?}"
        );
    }
}

/// CI's sample: each archive format once, each mode once.
#[test]
fn archive_builds_match_the_directory_build_byte_for_byte() {
    assert_archive_builds_match(ExampleMode::Legacy, &[Layout::TarZst]);
    assert_archive_builds_match(ExampleMode::Kpack, &[Layout::TarXz]);
}

#[test]
#[ignore = "exhaustive: both modes from both archive formats (cargo xtask slow)"]
fn every_mode_and_archive_format_matches_the_directory_build() {
    for mode in ExampleMode::ALL {
        assert_archive_builds_match(mode, &[Layout::TarZst, Layout::TarXz]);
    }
}

#[test]
fn a_failed_archive_build_leaves_no_dist() {
    let dest = tempfile::tempdir().unwrap();
    let artifact_dir = example().artifact_dir(ExampleMode::Kpack, Layout::TarZst);
    let out = build_into(
        &artifact_dir,
        dest.path(),
        &["--version-suffix", "not a nonce!"],
    );
    assert!(!out.status.success());
    assert!(
        !dest.path().join("dist").exists(),
        "a failed build made dist/"
    );
    let left: Vec<_> = fs::read_dir(dest.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".therock-package-staging-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
