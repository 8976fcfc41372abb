//! A build from `.tar.zst` / `.tar.xz` artifacts writes the same `dist/`,
//! byte for byte, as the build of the same artifacts as directories, and
//! leaves nothing of its extraction behind (docs/artifacts.md, "Building
//! from archives").

mod common;

use std::fs;

use common::{Build, example, therock_package};
use fixtures::{ExampleMode, Layout};

#[test]
fn archive_builds_match_the_directory_build_byte_for_byte() {
    for mode in ExampleMode::ALL {
        let tree = Build::from_artifacts(&example().artifact_dir(mode, Layout::Tree), &[]);
        let expected = tree.digests();
        assert!(expected.len() > 3, "{mode:?}: {expected:?}");
        for layout in [Layout::TarZst, Layout::TarXz] {
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
}

#[test]
fn a_failed_archive_build_leaves_no_dist() {
    let dest = tempfile::tempdir().unwrap();
    let artifact_dir = example().artifact_dir(ExampleMode::Kpack, Layout::TarZst);
    let out = therock_package(&[
        "build",
        "--artifact-dir",
        artifact_dir.to_str().unwrap(),
        "--dest-dir",
        dest.path().to_str().unwrap(),
        "--version-suffix",
        "not a nonce!",
    ]);
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
