//! The devel tarball end to end against hostile input (docs/devel-tar.md,
//! "Safety rules"): what the build leaves out, and what `rocm-sdk init`
//! refuses, with one line naming the file, site-packages left as it was and
//! the lock released.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::{Build, Venv, ok};
use fixtures::{ExampleMode, Layout};

/// The kpack example built once, unchanged.
fn build() -> &'static Build {
    static BUILD: OnceLock<Build> = OnceLock::new();
    BUILD.get_or_init(|| Build::new(ExampleMode::Kpack, &[]))
}

/// A venv with `rocm-sdk-devel` (and so core) installed from `dist`, not
/// yet unpacked.
fn devel_installed(dist: &Path) -> Venv {
    let venv = Venv::new();
    ok(&venv.pip_install(dist, &["rocm-sdk-devel"]));
    venv
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `rocm-sdk init` in `venv` (the native program inside core, which finds
/// site-packages from its own location), killed and reported as a failure
/// when it has not finished after a minute: a hang fails the test, not the
/// suite.
fn init_within_a_minute(venv: &Venv) -> Output {
    let native = venv.site_packages().join("rocm_sdk_core/_bin/rocm-sdk");
    let mut child = Command::new(native)
        .arg("init")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_mins(1) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rocm-sdk init did not finish within a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Every path under `sp` with its size (links as their text), for "left as
/// it was" comparisons.
fn listing(sp: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![sp.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(sp).unwrap().display().to_string();
            if meta.is_dir() {
                if rel != "__pycache__" && !rel.ends_with("/__pycache__") {
                    stack.push(path);
                }
                out.push(format!("{rel}/"));
            } else if meta.file_type().is_symlink() {
                out.push(format!(
                    "{rel} -> {}",
                    fs::read_link(&path).unwrap().display()
                ));
            } else {
                out.push(format!("{rel} {}", fs::read(&path).unwrap().len()));
            }
        }
    }
    out.sort();
    out
}

/// Asserts a refused init: exit 1, one line naming the tar and saying each
/// of `words`, nothing changed in site-packages; then a second init is
/// refused the same way (the first released the lock).
fn assert_init_refused(venv: &Venv, words: &[&str]) {
    let sp = venv.site_packages();
    let before = listing(&sp);
    for run in 1..=2 {
        let out = init_within_a_minute(venv);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(1), "run {run}: {said}");
        assert_eq!(said.trim_end().lines().count(), 1, "run {run}: {said}");
        assert!(said.contains("rocm_sdk_devel/_devel.tar"), "{said}");
        for word in words {
            assert!(said.contains(word), "{word:?} missing: {said}");
        }
        assert_eq!(listing(&sp), before, "run {run} changed site-packages");
        let trees: Vec<_> = fs::read_dir(&sp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("_rocm_sdk_devel"))
            .collect();
        assert!(trees.is_empty(), "run {run} left {trees:?}");
    }
}

/// A copy of the kpack example with `links` (name, text) added to its HIP
/// headers (`include/hip/` of the devel tree).
fn example_with_header_links(links: &[(&str, &str)]) -> tempfile::TempDir {
    let copy = common::copy_of_artifacts(Layout::Tree);
    let include = copy
        .path()
        .join("core-hip_dev_generic/core/clr/stage/include/hip");
    for (name, target) in links {
        std::os::unix::fs::symlink(target, include.join(name)).unwrap();
    }
    copy
}

/// `therock-package build` of `artifact_dir` into `dest` with `extra`
/// flags; returns its stderr (the warnings).
fn build_warnings(artifact_dir: &Path, dest: &Path, extra: &[&str]) -> String {
    let built = common::build_into(artifact_dir, dest, extra);
    ok(&built);
    String::from_utf8_lossy(&built.stderr).into_owned()
}

/// Asserts that the build's log says `include/hip/{name}` was left out of
/// the devel tarball because of `why`.
fn assert_left_out(log: &str, name: &str, why: &str) {
    let named = format!("include/hip/{name} in core-hip_dev_generic");
    assert!(
        log.lines().any(|l| l.contains(&named)
            && l.contains("left out of the devel tarball")
            && l.contains(why)),
        "no warning says {named} was left out ({why}):\n{log}"
    );
}

/// Links of a dev artifact that the install would refuse: one out of
/// site-packages, a loop, one into a directory no package installs, and a
/// link through the loop. The build leaves them out with a warning naming
/// each, and `rocm-sdk init` unpacks the rest.
#[test]
fn links_the_install_would_refuse_are_left_out_and_init_succeeds() {
    let refused = [
        ("escape", "../../../../../../../../etc/passwd"),
        ("loop_a", "loop_b"),
        ("loop_b", "loop_a"),
        ("beside", "../../../x"),
        ("through_loop", "loop_a/x"),
    ];
    let links: Vec<_> = refused
        .iter()
        .chain(&[("kept", "hip_runtime.h")])
        .copied()
        .collect();
    let copy = example_with_header_links(&links);

    let dest = tempfile::tempdir().unwrap();
    let log = build_warnings(copy.path(), dest.path(), &[]);
    let venv = devel_installed(&dest.path().join("dist"));
    let out = init_within_a_minute(&venv);
    assert!(out.status.success(), "{}", text(&out));
    let hip = venv.site_packages().join("_rocm_sdk_devel/include/hip");
    assert!(hip.join("kept").is_file());
    for (name, _) in refused {
        assert!(
            fs::symlink_metadata(hip.join(name)).is_err(),
            "{name} was unpacked"
        );
    }
    for (name, _) in refused {
        assert_left_out(&log, name, "");
    }
}

/// With a nonce the tree is `_rocm_sdk_devel_n1`, and the build and the
/// install judge its links under that name, with the same rule: a link that
/// reaches the tree through its suffixed name is followed into it (kept
/// when it ends at a file, refused as a loop when it leads back to itself),
/// and one into the unsuffixed `_rocm_sdk_devel` is outside what the release
/// installs. The loop, shipped anyway in a tarball RECORD vouches for, is
/// refused by `rocm-sdk init` for the same reason the build gave.
#[test]
fn with_a_nonce_the_build_and_init_refuse_the_same_link() {
    let named_loop = "../../../_rocm_sdk_devel_n1/include/hip/named_loop";
    let copy = example_with_header_links(&[
        ("named_loop", named_loop),
        (
            "named_kept",
            "../../../_rocm_sdk_devel_n1/include/hip/hip_runtime.h",
        ),
        (
            "unsuffixed",
            "../../../_rocm_sdk_devel/include/hip/hip_runtime.h",
        ),
    ]);
    let dest = tempfile::tempdir().unwrap();
    let log = build_warnings(copy.path(), dest.path(), &["--version-suffix", "_n1"]);
    assert_left_out(&log, "named_loop", "more than 40 links");
    assert_left_out(&log, "unsuffixed", "it leads to _rocm_sdk_devel,");
    assert!(
        !log.lines()
            .any(|l| l.contains("include/hip/named_kept") && l.contains("left out")),
        "{log}"
    );

    let venv = devel_installed(&dest.path().join("dist"));
    let out = init_within_a_minute(&venv);
    assert!(out.status.success(), "{}", text(&out));
    let hip = venv.site_packages().join("_rocm_sdk_devel_n1/include/hip");
    let (kept, header) = (
        fs::symlink_metadata(hip.join("named_kept")).unwrap(),
        fs::metadata(hip.join("hip_runtime.h")).unwrap(),
    );
    assert!(kept.is_file(), "named_kept is not unpacked as a file");
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&kept),
        std::os::unix::fs::MetadataExt::ino(&header)
    );
    for name in ["named_loop", "unsuffixed"] {
        assert!(fs::symlink_metadata(hip.join(name)).is_err(), "{name}");
    }

    // The refused link in a tarball of its own, under the suffixed root.
    let venv = devel_installed(&dest.path().join("dist"));
    let tar = venv.site_packages().join("rocm_sdk_devel/_devel.tar");
    let mut builder = tar::Builder::new(Vec::new());
    for dir in ["", "include/", "include/hip/"] {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_mode(0o755);
        header.set_size(0);
        let name = format!("_rocm_sdk_devel_n1/{dir}");
        builder.append_data(&mut header, name, &[][..]).unwrap();
    }
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Symlink);
    header.set_mode(0o777);
    header.set_size(0);
    builder
        .append_link(
            &mut header,
            "_rocm_sdk_devel_n1/include/hip/named_loop",
            named_loop,
        )
        .unwrap();
    fs::write(&tar, builder.into_inner().unwrap()).unwrap();
    vouch_for_the_tar(&venv, &tar);
    assert_init_refused(
        &venv,
        &[
            "_rocm_sdk_devel_n1/include/hip/named_loop",
            "more than 40 links",
        ],
    );
}

/// A `_devel.tar` changed after pip installed it (same size, one byte of a
/// header file's content) is refused (against the digest file RECORD
/// vouches for) and site-packages is left as it was.
#[test]
fn init_refuses_a_devel_tar_changed_after_install() {
    let venv = devel_installed(&build().dist());
    let tar = venv.site_packages().join("rocm_sdk_devel/_devel.tar");
    let mut bytes = fs::read(&tar).unwrap();
    let at = bytes
        .windows(7)
        .position(|w| w == b"#pragma")
        .expect("a header in the tar");
    bytes[at] = b'/';
    fs::write(&tar, &bytes).unwrap();
    assert_init_refused(
        &venv,
        &[
            "changed after it was installed",
            "its blake3 differs from its digest file",
            "pip install --force-reinstall rocm-sdk-devel",
        ],
    );
}

/// A devel tar whose hard links form a cycle, installed with a RECORD that
/// vouches for it (as a broken or hostile build would ship it): refused
/// with the members named, and neither this init nor the next hangs.
#[test]
fn init_refuses_a_hard_link_cycle_without_hanging() {
    let venv = devel_installed(&build().dist());
    let sp = venv.site_packages();
    let tar = sp.join("rocm_sdk_devel/_devel.tar");
    let mut builder = tar::Builder::new(Vec::new());
    let mut member = |name: &str, kind: tar::EntryType, link: &str, data: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(0o644);
        header.set_size(data.len() as u64);
        if kind == tar::EntryType::Link {
            builder.append_link(&mut header, name, link).unwrap();
        } else {
            builder.append_data(&mut header, name, data).unwrap();
        }
    };
    member("_rocm_sdk_devel/", tar::EntryType::Directory, "", b"");
    member("_rocm_sdk_devel/f", tar::EntryType::Regular, "", b"data");
    member(
        "_rocm_sdk_devel/a",
        tar::EntryType::Link,
        "_rocm_sdk_devel/b",
        b"",
    );
    member(
        "_rocm_sdk_devel/b",
        tar::EntryType::Link,
        "_rocm_sdk_devel/a",
        b"",
    );
    fs::write(&tar, builder.into_inner().unwrap()).unwrap();
    vouch_for_the_tar(&venv, &tar);
    assert_init_refused(
        &venv,
        &["hard links form a cycle: _rocm_sdk_devel/a -> _rocm_sdk_devel/b -> _rocm_sdk_devel/a"],
    );
}

/// Rewrites the tar's RECORD row with its current sha256 and size, as pip
/// would have written it for this file, and removes the digest file (a
/// build before the digest file shipped none; Python has no BLAKE3 to
/// write a new one).
fn vouch_for_the_tar(venv: &Venv, tar: &Path) {
    let script = r#"
import base64, hashlib, pathlib, sys
sp, tar = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
data = tar.read_bytes()
digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
row = f"rocm_sdk_devel/_devel.tar,sha256={digest},{len(data)}"
record = next(sp.glob("rocm_sdk_devel-*.dist-info")) / "RECORD"
lines = [row if l.startswith("rocm_sdk_devel/_devel.tar,") else l
         for l in record.read_text().splitlines()
         if not l.startswith("rocm_sdk_devel/_devel.digest,")]
record.write_text("\n".join(lines) + "\n")
(tar.parent / "_devel.digest").unlink()
"#;
    let sp: PathBuf = venv.site_packages();
    ok(&venv.run(
        "python",
        &["-c", script, sp.to_str().unwrap(), tar.to_str().unwrap()],
    ));
}
