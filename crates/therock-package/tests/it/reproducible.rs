//! Reproducibility: the same input gives the same bytes, whatever the file
//! system says about it, and the selector sdist is the same on every platform.

use crate::common;

use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::{Build, artifacts};
use fixtures::ExampleMode;

/// Every path under `root` (relative), sorted.
fn list(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        out.push(path.strip_prefix(root).unwrap().to_path_buf());
        if path.symlink_metadata().unwrap().is_dir() {
            list(root, &path, out);
        }
    }
}

/// Copies `from` into a new directory creating entries in a different order
/// (reverse, so directories are made on demand), with other mtimes and hard
/// links turned into copies, the way an unpacked download might look.
fn shuffled_copy(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    list(from, from, &mut paths);
    paths.sort();
    paths.reverse();
    let mut stamp = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    for rel in &paths {
        let src = from.join(rel);
        let dst = to.path().join(rel);
        let meta = src.symlink_metadata().unwrap();
        fs::create_dir_all(dst.parent().unwrap()).unwrap();
        if meta.file_type().is_symlink() {
            symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if meta.is_dir() {
            fs::create_dir_all(&dst).unwrap();
        } else {
            fs::copy(&src, &dst).unwrap();
            assert_eq!(
                fs::metadata(&dst).unwrap().mode() & 0o777,
                meta.mode() & 0o777
            );
            stamp += Duration::from_secs(7919);
            fs::File::options()
                .write(true)
                .open(&dst)
                .unwrap()
                .set_modified(stamp)
                .unwrap();
        }
    }
    to
}

#[test]
fn rebuild_from_shuffled_copy_gives_identical_dist() {
    for mode in ExampleMode::ALL {
        let first = Build::new(mode, &[]);
        let copy = shuffled_copy(&artifacts(mode));
        let second = Build::from_artifacts(copy.path(), &[]);
        let (a, b) = (first.digests(), second.digests());
        assert!(a.len() >= 6, "{mode:?}: {a:?}");
        assert_eq!(a, b, "{mode:?}: the rebuild differs");
    }
}

#[test]
fn rebuild_into_the_same_dest_gives_the_same_bytes() {
    let dest = tempfile::tempdir().unwrap();
    let args = |d: &Path| {
        vec![
            "build".to_owned(),
            "--artifact-dir".into(),
            artifacts(ExampleMode::Kpack).display().to_string(),
            "--dest-dir".into(),
            d.display().to_string(),
        ]
    };
    let run = || {
        let a = args(dest.path());
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        common::ok(&common::therock_package(&a));
        let mut files = Vec::new();
        list(
            &dest.path().join("dist"),
            &dest.path().join("dist"),
            &mut files,
        );
        files.sort();
        files
            .into_iter()
            .map(|f| {
                (
                    f.clone(),
                    fs::read(dest.path().join("dist").join(f)).unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let first = run();
    let second = run();
    assert_eq!(first, second);
}

#[test]
fn selector_sdist_is_the_same_whichever_platform_builds_it() {
    let flags = [
        "--linux-amdgpu-families",
        "gfx94X-dcgpu;gfx1100",
        "--windows-amdgpu-families",
        "gfx1100",
    ];
    let sdist = |tag: &str| {
        let mut args = flags.to_vec();
        args.extend(["--platform-tag", tag]);
        let build = Build::new(ExampleMode::Kpack, &args);
        fs::read(build.dist().join("rocm-7.1.0.tar.gz")).unwrap()
    };
    let linux = sdist("linux_x86_64");
    let windows = sdist("win_amd64");
    assert!(
        linux == windows,
        "the rocm sdist differs between the Linux and the Windows build"
    );
}
