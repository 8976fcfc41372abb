//! The install side against site-packages trees the tests build: results,
//! RECORD, order independence, hostile and corrupt archives, clear errors,
//! concurrency, crashes at every point, and uninstall cleanliness.

#![allow(clippy::type_complexity)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{
    Entry, Node, SitePackages, VERSION, devel_entries, pip_uninstall, record_paths, snapshot,
    unpack_concurrently, unpack_example, unpack_within, write_tar,
};
use devel_tar::{
    DIGEST_FILE, DevelWarning, Error, Step, TarCodec, TarDigest, UnpackOptions, UnpackOutcome,
    UnpackProgress, ensure, ensure_with, unpack,
};

/// Every step an unpack reported, in order.
#[derive(Debug, Default)]
struct Steps(Mutex<Vec<Step>>);

impl UnpackProgress for Steps {
    fn step(&self, step: &Step) {
        self.0.lock().unwrap().push(step.clone());
    }
}

fn ino(path: &std::path::Path) -> (u64, u64) {
    let m = fs::symlink_metadata(path).unwrap();
    (m.dev(), m.ino())
}

#[test]
fn unpacks_with_hard_links_symlinks_and_record_in_every_codec() {
    for compression in [
        TarCodec::None,
        TarCodec::Zstd { level: 3 },
        TarCodec::Xz { preset: 1 },
    ] {
        let site = SitePackages::with_devel(
            &write_tar(&devel_entries(), compression),
            compression.file_name(),
        );
        let report = ensure(&site.sp).unwrap();
        let sp = &site.sp;
        let d = sp.join("_rocm_sdk_devel");
        assert_eq!(
            report.unpack.outcome,
            UnpackOutcome::Unpacked {
                files: 3,
                hard_links: 5,
                symlinks: 2
            }
        );
        // Links to runtime files are hard links to the core file.
        assert_eq!(
            ino(&d.join("lib/libamdhip64.so.6")),
            ino(&sp.join("_rocm_sdk_core/lib/libamdhip64.so.6"))
        );
        // A soname alias chained to a runtime link ends at the same file.
        assert_eq!(
            ino(&d.join("lib/libamdhip64.so")),
            ino(&sp.join("_rocm_sdk_core/lib/libamdhip64.so.6"))
        );
        // A non-compiler link in bin/ is hard-linked; compiler links stay.
        assert_eq!(
            ino(&d.join("bin/hipconfig")),
            ino(&sp.join("_rocm_sdk_core/lib/llvm/bin/clang"))
        );
        assert_eq!(
            fs::read_link(d.join("bin/amdclang")).unwrap().to_str(),
            Some("../lib/llvm/bin/amdclang")
        );
        assert!(
            fs::symlink_metadata(d.join("lib/llvm/bin/amdclang"))
                .unwrap()
                .is_file()
        );
        // Directory links stay links.
        assert_eq!(
            fs::read_link(d.join("lib/rocm_sysdeps")).unwrap().to_str(),
            Some("../../_rocm_sdk_core/lib/rocm_sysdeps")
        );
        assert!(d.join("lib/rocm_sysdeps/lib/libz.so.1").is_file());
        assert!(d.join("share/doc/empty").is_dir());
        assert_eq!(
            fs::metadata(d.join("bin/hipcc")).unwrap().mode() & 0o777,
            0o755
        );
        // The dangling runtime link is skipped and reported.
        assert!(fs::symlink_metadata(d.join("lib/libmissing.so.1")).is_err());
        assert_eq!(
            report.warnings,
            [DevelWarning::DanglingLink {
                path: "_rocm_sdk_devel/lib/libmissing.so.1".into(),
                target: "../../_rocm_sdk_libraries/lib/libmissing.so.1".into(),
                missing: "_rocm_sdk_libraries".into(),
            }]
        );
        // The tar is gone and RECORD lists every path of the tree once.
        assert!(
            !sp.join("rocm_sdk_devel")
                .join(compression.file_name())
                .exists()
        );
        let listed = record_paths(&site.record("rocm_sdk_devel"));
        let unique: std::collections::BTreeSet<_> = listed.iter().collect();
        assert_eq!(unique.len(), listed.len(), "duplicate RECORD rows");
        for (rel, node) in snapshot(&d) {
            if !matches!(node, Node::Dir(_)) {
                let p = format!("_rocm_sdk_devel/{rel}");
                assert!(listed.contains(&p), "{p} not in RECORD");
            }
        }
        // A second call has nothing to do.
        let again = unpack(sp, &UnpackOptions::default()).unwrap();
        assert_eq!(again.outcome, UnpackOutcome::AlreadyUnpacked);
    }
}

#[test]
fn record_keeps_its_crlf_line_endings() {
    let site = SitePackages::empty();
    site.install_core();
    site.install_devel(
        &write_tar(&devel_entries(), TarCodec::None),
        "_devel.tar",
        "\r\n",
    );
    ensure(&site.sp).unwrap();
    let record = site.record("rocm_sdk_devel");
    assert!(record.ends_with("\r\n"));
    assert_eq!(record.matches('\n').count(), record.matches("\r\n").count());
    assert!(record.contains("_rocm_sdk_devel/bin/hipcc,,\r\n"));
}

/// Raw tar building, for member orders and contents the writer would never
/// produce.
fn raw_tar(members: &[(&str, tar::EntryType, &[u8], &str)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, kind, data, link) in members {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(*kind);
        h.set_mode(if *kind == tar::EntryType::Directory {
            0o755
        } else {
            0o644
        });
        h.set_size(data.len() as u64);
        // Written byte by byte: the tar crate refuses `..` and absolute names.
        let old = h.as_old_mut();
        old.name = [0; 100];
        old.name[..name.len()].copy_from_slice(name.as_bytes());
        old.linkname = [0; 100];
        old.linkname[..link.len()].copy_from_slice(link.as_bytes());
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap()
}

use tar::EntryType::{Directory as D, Link as H, Regular as F, Symlink as S};

#[test]
fn result_does_not_depend_on_member_order() {
    let members: Vec<(&str, tar::EntryType, &[u8], &str)> = vec![
        ("_rocm_sdk_devel/", D, b"", ""),
        ("_rocm_sdk_devel/lib/", D, b"", ""),
        ("_rocm_sdk_devel/lib/libx.so.1", F, b"x", ""),
        ("_rocm_sdk_devel/lib/libx.so", S, b"", "libx.so.1"),
        ("_rocm_sdk_devel/lib/a", S, b"", "b"),
        ("_rocm_sdk_devel/lib/b", S, b"", "libx.so"),
        (
            "_rocm_sdk_devel/lib/hard",
            H,
            b"",
            "_rocm_sdk_devel/lib/libx.so.1",
        ),
        (
            "_rocm_sdk_devel/lib/hip",
            S,
            b"",
            "../../_rocm_sdk_core/lib/libamdhip64.so.6",
        ),
        (
            "_rocm_sdk_devel/lib/sysdeps",
            S,
            b"",
            "../../_rocm_sdk_core/lib/rocm_sysdeps",
        ),
        (
            "_rocm_sdk_devel/lib/via_dir",
            S,
            b"",
            "sysdeps/lib/libz.so.1",
        ),
        ("_rocm_sdk_devel/bin/amdclang", S, b"", "../lib/a"),
        ("_rocm_sdk_devel/bin/tool", F, b"#!", ""),
    ];
    let mut reversed = members.clone();
    reversed.reverse();
    let mut rotated = members.clone();
    rotated.rotate_left(5);
    let mut snapshots = Vec::new();
    for order in [&members, &reversed, &rotated] {
        let site = SitePackages::with_devel(&raw_tar(order), "_devel.tar");
        ensure(&site.sp).unwrap();
        snapshots.push(snapshot(&site.sp.join("_rocm_sdk_devel")));
    }
    assert_eq!(snapshots[0], snapshots[1]);
    assert_eq!(snapshots[0], snapshots[2]);
    let s = &snapshots[0];
    // Every link to a file became a hard link to the same inode.
    let Node::File { inode_group, .. } = &s["lib/a"] else {
        panic!()
    };
    assert_eq!(inode_group, "lib/a");
    for p in ["lib/b", "lib/hard", "lib/libx.so", "lib/libx.so.1"] {
        let Node::File { inode_group, .. } = &s[p] else {
            panic!("{p}")
        };
        assert_eq!(inode_group, "lib/a", "{p}");
    }
    assert!(matches!(&s["lib/via_dir"], Node::File { .. }));
    assert_eq!(s["bin/amdclang"], Node::Symlink("../lib/a".into()));
    assert_eq!(
        s["lib/sysdeps"],
        Node::Symlink("../../_rocm_sdk_core/lib/rocm_sysdeps".into())
    );
}

fn assert_refused(members: &[(&str, tar::EntryType, &[u8], &str)], what: &str) {
    let site = SitePackages::with_devel(&raw_tar(members), "_devel.tar");
    let before = snapshot(&site.sp);
    let err = unpack(&site.sp, &UnpackOptions::default()).unwrap_err();
    assert!(matches!(err, Error::UnsafeMember { .. }), "{what}: {err}");
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert_eq!(snapshot(&site.sp), before, "{what}: something was written");
}

#[test]
fn hostile_members_are_refused_before_anything_is_written() {
    let ok: (&str, tar::EntryType, &[u8], &str) = ("_rocm_sdk_devel/ok", F, b"fine", "");
    let cases: Vec<(&str, Vec<(&str, tar::EntryType, &[u8], &str)>)> = vec![
        (
            "tar-slip",
            vec![ok, ("_rocm_sdk_devel/../../evil", F, b"x", "")],
        ),
        ("absolute", vec![ok, ("/tmp/evil", F, b"x", "")]),
        (
            "outside the devel root",
            vec![ok, ("_rocm_sdk_core/evil", F, b"x", "")],
        ),
        (
            "symlink escape",
            vec![ok, ("_rocm_sdk_devel/l", S, b"", "../../etc/passwd")],
        ),
        (
            "absolute symlink",
            vec![ok, ("_rocm_sdk_devel/l", S, b"", "/etc/passwd")],
        ),
        (
            "escape through a linked directory",
            vec![
                ok,
                ("_rocm_sdk_devel/d", S, b"", "../_rocm_sdk_core"),
                ("_rocm_sdk_devel/l", S, b"", "d/../../x"),
            ],
        ),
        (
            "hard link escape",
            vec![ok, ("_rocm_sdk_devel/h", H, b"", "../etc/passwd")],
        ),
        (
            "hard link out of the tree",
            vec![
                ok,
                (
                    "_rocm_sdk_devel/h",
                    H,
                    b"",
                    "_rocm_sdk_core/lib/libamdhip64.so.6",
                ),
            ],
        ),
        (
            "write through a symlinked directory",
            vec![
                ("_rocm_sdk_devel/d", S, b"", "../_rocm_sdk_core"),
                ("_rocm_sdk_devel/d/evil", F, b"x", ""),
            ],
        ),
        (
            "device file",
            vec![ok, ("_rocm_sdk_devel/dev", tar::EntryType::Char, b"", "")],
        ),
        (
            "fifo",
            vec![ok, ("_rocm_sdk_devel/p", tar::EntryType::Fifo, b"", "")],
        ),
        ("duplicate", vec![ok, ok]),
    ];
    for (what, members) in cases {
        assert_refused(&members, what);
    }
}

/// Hard-link cycles and chains longer than the bound are refused with the
/// members named, instead of being followed forever while the lock is held.
/// Each unpack runs as a child process with a deadline, so a hang fails the
/// test rather than the suite; every case runs twice, so a first refusal
/// that kept the lock would show as a hang of the second.
#[test]
fn hard_link_cycles_and_long_chains_are_refused_without_hanging() {
    let ok: (&str, tar::EntryType, &[u8], &str) = ("_rocm_sdk_devel/f", F, b"fine", "");
    let (a, b, c) = (
        "_rocm_sdk_devel/a",
        "_rocm_sdk_devel/b",
        "_rocm_sdk_devel/c",
    );
    // h00 -> f, h01 -> h00, ..., h40 -> h39: from h40, 41 hard links.
    let chain: Vec<String> = (0..=40)
        .map(|i| format!("_rocm_sdk_devel/h{i:02}"))
        .collect();
    let mut long = vec![ok, (chain[0].as_str(), H, b"", "_rocm_sdk_devel/f")];
    long.extend(
        chain
            .windows(2)
            .map(|w| (w[1].as_str(), H, &b""[..], w[0].as_str())),
    );
    let cases: Vec<(&str, Vec<(&str, tar::EntryType, &[u8], &str)>, &str)> = vec![
        (
            "two-member cycle",
            vec![ok, (a, H, b"", b), (b, H, b"", a)],
            "hard links form a cycle: _rocm_sdk_devel/a -> _rocm_sdk_devel/b -> _rocm_sdk_devel/a",
        ),
        (
            "three-member cycle",
            vec![ok, (a, H, b"", b), (b, H, b"", c), (c, H, b"", a)],
            "hard links form a cycle: _rocm_sdk_devel/a -> _rocm_sdk_devel/b -> _rocm_sdk_devel/c -> _rocm_sdk_devel/a",
        ),
        (
            "a link to itself",
            vec![ok, (a, H, b"", a)],
            "hard links form a cycle: _rocm_sdk_devel/a -> _rocm_sdk_devel/a",
        ),
        (
            "a chain longer than the bound",
            long,
            "member \"_rocm_sdk_devel/h40\" of",
        ),
    ];
    for (what, members, reason) in cases {
        let site = SitePackages::with_devel(&raw_tar(&members), "_devel.tar");
        let before = snapshot(&site.sp);
        for attempt in 1..=2 {
            let out = unpack_within(&site.sp, Duration::from_mins(1));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{what}, run {attempt}: {stderr}"
            );
            assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: {stderr}");
            assert!(stderr.contains(reason), "{what}: {stderr}");
            assert!(
                stderr.contains("hard links form a cycle") || stderr.contains("longer than 40"),
                "{what}: {stderr}"
            );
            assert!(stderr.contains("rocm_sdk_devel/_devel.tar"), "{stderr}");
            assert_eq!(snapshot(&site.sp), before, "{what}: something was written");
        }
    }
}

/// A devel tar whose bytes differ from what pip installed (its RECORD
/// row, or the digest file RECORD vouches for), or that RECORD does not
/// vouch for, is refused and leaves the site as it was. An uncompressed tar
/// is hashed while its tree is written (docs/devel-tar.md): one whose
/// headers still parse is written, then undone, never committed; one whose
/// headers do not is named as changed, not as corrupt.
#[test]
fn a_tar_changed_after_install_is_refused_and_leaves_the_site_as_it_was() {
    let tar = write_tar(&devel_entries(), TarCodec::None);
    // The same length and still a well-formed tar: only a file's bytes differ.
    let at = tar.windows(11).position(|w| w == b"echo hipcc\n").unwrap();
    let mut tampered = tar.clone();
    tampered[at..at + 10].copy_from_slice(b"echo HIPCC");
    // The same length, the first header unreadable.
    let mut broken = tar.clone();
    broken[..100].fill(0xff);
    let row = format!(
        "rocm_sdk_devel/_devel.tar,{},{}\n",
        common::record_hash(&tar),
        tar.len()
    );
    let cases: Vec<(&str, Option<&[u8]>, Option<String>, &str, bool)> = vec![
        (
            "content changed",
            Some(&tampered),
            None,
            "blake3 differs from its digest file",
            true,
        ),
        (
            "header changed",
            Some(&broken),
            None,
            "blake3 differs from its digest file",
            false,
        ),
        // A devel wheel built before the digest file: RECORD's sha256.
        (
            "content changed, no digest file",
            Some(&tampered),
            None,
            "sha256 differs",
            true,
        ),
        ("digest file changed", None, None, "digest file", false),
        (
            "a row without a hash",
            None,
            Some(format!("rocm_sdk_devel/_devel.tar,,{}\n", tar.len())),
            "RECORD",
            false,
        ),
        ("no row", None, Some(String::new()), "RECORD", false),
    ];
    for (what, bytes, new_row, reason, written) in cases {
        let site = if what.ends_with("no digest file") {
            let site = SitePackages::empty();
            site.install_core();
            site.install_devel_without_digest(&tar, "_devel.tar");
            site
        } else {
            SitePackages::with_devel(&tar, "_devel.tar")
        };
        let tar_path = site.sp.join("rocm_sdk_devel/_devel.tar");
        if let Some(bytes) = bytes {
            fs::write(&tar_path, bytes).unwrap();
        }
        if what == "digest file changed" {
            // It describes the tampered tar; RECORD vouches for the original.
            let digest = TarDigest::of_reader("_devel.tar", tampered.as_slice()).unwrap();
            fs::write(
                site.sp.join("rocm_sdk_devel").join(DIGEST_FILE),
                digest.to_bytes(),
            )
            .unwrap();
        }
        if let Some(new_row) = new_row {
            let record = site.dist_info("rocm_sdk_devel").join("RECORD");
            let text = fs::read_to_string(&record).unwrap();
            assert!(text.contains(&row));
            fs::write(&record, text.replace(&row, &new_row)).unwrap();
        }
        let before = snapshot(&site.sp);
        let heard = Arc::new(Steps::default());
        let options = UnpackOptions {
            progress: Some(heard.clone()),
            ..UnpackOptions::default()
        };
        let err = unpack(&site.sp, &options)
            .err()
            .unwrap_or_else(|| panic!("{what}: the tar was unpacked"));
        let steps = heard.0.lock().unwrap().clone();
        let text = err.to_string();
        assert!(
            text.contains(&tar_path.display().to_string()),
            "{what}: {text}"
        );
        assert!(text.contains(reason), "{what}: {text}");
        assert!(
            text.contains("pip install --force-reinstall rocm-sdk-devel"),
            "{what}: {text}"
        );
        assert_eq!(
            steps.iter().any(|s| matches!(s, Step::Wrote { .. })),
            written,
            "{what}: {steps:?}"
        );
        assert!(!steps.contains(&Step::Committed), "{what}: {steps:?}");
        assert_eq!(snapshot(&site.sp), before, "{what}: something was left");
    }
}

/// A compressed tar is checked with the same digest as a plain one: BLAKE3
/// against the digest file when there is one, else RECORD's SHA-256. The
/// change is named even though the damaged stream no longer decodes.
#[test]
fn a_changed_compressed_tar_is_named_against_its_digest() {
    let zst = write_tar(&devel_entries(), TarCodec::Zstd { level: 3 });
    let mut tampered = zst.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 0xff;
    for (with_digest, reason) in [
        (true, "its blake3 differs from its digest file"),
        (false, "its sha256 differs from its RECORD row"),
    ] {
        let site = SitePackages::empty();
        site.install_core();
        if with_digest {
            site.install_devel(&zst, "_devel.tar.zst", "\n");
        } else {
            site.install_devel_without_digest(&zst, "_devel.tar.zst");
        }
        fs::write(site.sp.join("rocm_sdk_devel/_devel.tar.zst"), &tampered).unwrap();
        let before = snapshot(&site.sp);
        let err = unpack(&site.sp, &UnpackOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(reason), "{reason}: {err}");
        assert_eq!(snapshot(&site.sp), before, "{reason}");
    }
}

/// Touches the tar once its rows are recorded.
#[derive(Debug)]
struct TouchWhenRecorded(std::path::PathBuf);

impl UnpackProgress for TouchWhenRecorded {
    fn step(&self, step: &Step) {
        if *step == Step::Recorded {
            fs::File::options()
                .write(true)
                .open(&self.0)
                .and_then(|f| f.set_modified(std::time::UNIX_EPOCH))
                .unwrap();
        }
    }
}

/// A write to the tar while it is unpacked (here after the scan, once the
/// rows are recorded) is refused even when the bytes the digest read were
/// the installed ones: the tree is never committed and the site is as it
/// was.
#[test]
fn a_tar_written_to_while_it_is_unpacked_is_not_committed() {
    let tar = write_tar(&devel_entries(), TarCodec::None);
    let site = SitePackages::with_devel(&tar, "_devel.tar");
    let tar_path = site.sp.join("rocm_sdk_devel/_devel.tar");
    let before = snapshot(&site.sp);
    let options = UnpackOptions {
        progress: Some(Arc::new(TouchWhenRecorded(tar_path.clone()))),
        ..UnpackOptions::default()
    };
    let err = unpack(&site.sp, &options).unwrap_err().to_string();
    assert!(err.contains("written to while it was unpacked"), "{err}");
    assert!(err.contains("nothing was unpacked"), "{err}");
    // Contents and modes: the tar's new mtime does not count.
    assert_eq!(snapshot(&site.sp), before);
}

#[test]
fn a_remedy_names_the_tool_that_installed_the_environment() {
    // A uv-made environment has no pip: its INSTALLER says uv.
    let tar = write_tar(&devel_entries(), TarCodec::None);
    for (installer, command) in [("uv\n", "uv pip install"), ("pip\n", "pip install")] {
        let site = SitePackages::with_devel(&tar, "_devel.tar");
        fs::write(
            site.dist_info("rocm_sdk_devel").join("INSTALLER"),
            installer,
        )
        .unwrap();
        let tar_path = site.sp.join("rocm_sdk_devel/_devel.tar");
        let bytes = fs::read(&tar_path).unwrap();
        fs::write(&tar_path, &bytes[..bytes.len() / 2]).unwrap();
        let err = unpack(&site.sp, &UnpackOptions::default())
            .unwrap_err()
            .to_string();
        let remedy = format!("Reinstall it with `{command} --force-reinstall rocm-sdk-devel`");
        assert!(err.ends_with(&remedy), "{installer:?}: {err}");
    }
}

#[test]
fn corrupt_and_truncated_tars_are_reported_without_writing() {
    let tar = write_tar(&devel_entries(), TarCodec::None);
    let zst = write_tar(&devel_entries(), TarCodec::Zstd { level: 3 });
    let xz = write_tar(&devel_entries(), TarCodec::Xz { preset: 1 });
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "mid-member",
            tar[..tar.len() / 2 + 100].to_vec(),
            "_devel.tar",
        ),
        (
            "at a member boundary",
            tar[..tar.len() - 1024].to_vec(),
            "_devel.tar",
        ),
        (
            "garbage header",
            [&tar[..512], &[0xffu8; 512][..]].concat(),
            "_devel.tar",
        ),
        ("zstd cut", zst[..zst.len() - 20].to_vec(), "_devel.tar.zst"),
        ("xz cut", xz[..xz.len() - 20].to_vec(), "_devel.tar.xz"),
    ];
    for (what, bytes, name) in cases {
        let site = SitePackages::with_devel(&bytes, name);
        let before = snapshot(&site.sp);
        let err = unpack(&site.sp, &UnpackOptions::default()).unwrap_err();
        assert!(matches!(err, Error::CorruptTar { .. }), "{what}: {err}");
        assert!(err.to_string().contains("--force-reinstall"), "{err}");
        assert_eq!(snapshot(&site.sp), before, "{what}");
    }
}

#[test]
fn missing_record_and_missing_devel_say_what_to_do() {
    let site = SitePackages::standard();
    fs::remove_file(site.dist_info("rocm_sdk_devel").join("RECORD")).unwrap();
    let err = unpack(&site.sp, &UnpackOptions::default()).unwrap_err();
    assert!(matches!(err, Error::NoRecord { .. }), "{err}");
    assert!(err.to_string().contains("virtual environment"));

    let site = SitePackages::standard();
    fs::remove_dir_all(site.dist_info("rocm_sdk_devel")).unwrap();
    let err = unpack(&site.sp, &UnpackOptions::default()).unwrap_err();
    assert!(matches!(err, Error::NoRecord { .. }), "{err}");

    let site = SitePackages::empty();
    let err = unpack(&site.sp, &UnpackOptions::default()).unwrap_err();
    assert!(matches!(err, Error::DevelNotInstalled { .. }), "{err}");
    assert!(err.to_string().contains("pip install rocm[devel]"));
}

/// Runs `unpack SP` as user `nobody` when `setpriv` can switch users (CI
/// runs as root, which ignores permissions).
#[test]
fn read_only_site_packages_is_a_clear_error() {
    let site = SitePackages::standard();
    let can_switch = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
        .status()
        .is_ok_and(|s| s.success());
    // The suite runs as root (README: CI installs its packages as root);
    // only root can give a tree to another user or become one.
    assert!(
        can_switch,
        "setpriv cannot switch to uid 65534: run the tests as root, as CI does"
    );
    let before = snapshot(&site.sp);
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(unpack_example())
        .arg(&site.sp)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("read-only for this user"), "{stderr}");
    assert_eq!(snapshot(&site.sp), before);
}

/// The tree a clean, uninterrupted unpack produces, for comparisons.
fn reference_tree() -> (SitePackages, std::collections::BTreeMap<String, Node>) {
    let site = SitePackages::standard();
    ensure(&site.sp).unwrap();
    let snap = snapshot(&site.sp);
    (site, snap)
}

#[test]
fn eight_concurrent_unpacks_all_succeed_with_the_complete_tree() {
    let (_reference, expected) = reference_tree();
    let site = SitePackages::standard();
    unpack_concurrently(&site.sp, 8);
    assert_eq!(normalised(&snapshot(&site.sp)), normalised(&expected));
}

/// A snapshot with inode groups kept and everything else as is; RECORD hash
/// columns are equal by construction.
fn normalised(s: &std::collections::BTreeMap<String, Node>) -> Vec<(String, Node)> {
    s.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Kills the example at step `n` of an unpack, then checks that the next
/// unpack yields the reference tree, and that pip can still uninstall
/// everything after the crash.
fn crash_at(n: usize, expected: &std::collections::BTreeMap<String, Node>) {
    let site = SitePackages::standard();
    let status = Command::new(unpack_example())
        .arg(&site.sp)
        .args(["--kill-at", &n.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "step {n} never came");
    // Uninstall straight after the crash leaves nothing behind ...
    let copy = SitePackages::empty();
    copy_tree(&site.sp, &copy.sp);
    for dist in ["rocm_sdk_devel", "rocm_sdk_core"] {
        pip_uninstall(&copy.sp, dist);
    }
    assert_eq!(
        snapshot(&copy.sp),
        BTreeMap::default(),
        "after a crash at step {n}"
    );
    // ... and the next unpack produces the identical tree.
    ensure(&site.sp).unwrap();
    assert_eq!(snapshot(&site.sp), *expected, "after a crash at step {n}");
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_kill_at_any_step_recovers_to_the_identical_tree() {
    let (_reference, expected) = reference_tree();
    // Steps: scanned, recorded, 10 paths written, committed (13 in all);
    // the exhaustive run is `crash_at_every_step` (ignored).
    for n in [1, 2, 3, 8, 12, 13] {
        crash_at(n, &expected);
    }
}

#[test]
#[ignore = "exhaustive: cargo test -p devel-tar -- --ignored"]
fn crash_at_every_step() {
    let (_reference, expected) = reference_tree();
    for n in 1..=13 {
        crash_at(n, &expected);
    }
}

#[test]
fn sigkill_after_varying_delays_recovers() {
    let (_reference, expected) = reference_tree();
    for delay_us in [0u64, 200, 500, 1000, 2000, 5000] {
        let site = SitePackages::standard();
        let mut child = Command::new(unpack_example())
            .arg(&site.sp)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(delay_us));
        let _ = child.kill();
        let _ = child.wait();
        ensure(&site.sp).unwrap();
        assert_eq!(snapshot(&site.sp), expected, "killed after {delay_us} µs");
    }
}

#[test]
fn uninstall_after_unpack_leaves_nothing() {
    let site = SitePackages::standard();
    ensure(&site.sp).unwrap();
    for dist in ["rocm_sdk_devel", "rocm_sdk_core"] {
        pip_uninstall(&site.sp, dist);
    }
    assert_eq!(snapshot(&site.sp), BTreeMap::default());
    let _ = VERSION;
}

#[test]
fn writer_is_deterministic_and_checks_its_input() {
    for c in [
        TarCodec::None,
        TarCodec::Zstd { level: 3 },
        TarCodec::Xz { preset: 1 },
    ] {
        assert_eq!(
            write_tar(&devel_entries(), c),
            write_tar(&devel_entries(), c)
        );
    }
    let tar = write_tar(&devel_entries(), TarCodec::None);
    let mut archive = tar::Archive::new(&tar[..]);
    for entry in archive.entries().unwrap() {
        let entry = entry.unwrap();
        let h = entry.header();
        assert!(entry.path().unwrap().starts_with("_rocm_sdk_devel"));
        assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
        assert_eq!(h.mtime().unwrap(), 315_532_800);
    }
    let mut w =
        devel_tar::DevelTarWriter::new(Vec::new(), &devel_tar::TarOptions::default()).unwrap();
    w.add_directory("b").unwrap();
    assert!(matches!(w.add_directory("a"), Err(Error::Unsorted { .. })));
    let err = w.add_file("c", 0o644, 10, &mut &b"short"[..]).unwrap_err();
    assert!(matches!(err, Error::SizeMismatch { .. }));
    assert!(
        w.finish().is_err(),
        "a writer with a short member must not finish"
    );
    let mut w =
        devel_tar::DevelTarWriter::new(Vec::new(), &devel_tar::TarOptions::default()).unwrap();
    assert!(w.add_directory("../x").is_err());
    assert!(w.add_symlink("x", "/abs").is_err());
    let _: Entry = Entry::Dir;
}

#[test]
fn atomic_file_output() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("_devel.tar.zst");
    let options = devel_tar::TarOptions {
        compression: TarCodec::Zstd { level: 3 },
        ..devel_tar::TarOptions::default()
    };
    let mut w = devel_tar::DevelTarWriter::create(&dest, &options).unwrap();
    w.add_file("f", 0o644, 1, &mut &b"x"[..]).unwrap();
    assert!(!dest.exists(), "visible before persist");
    w.finish().unwrap().persist().unwrap();
    assert!(dest.is_file());
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temporary file left"
    );
    // Dropped without persisting: nothing remains.
    let other = dir.path().join("_devel.tar");
    let w = devel_tar::DevelTarWriter::create(&other, &devel_tar::TarOptions::default()).unwrap();
    drop(w);
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// Files get exactly the tar's mode bits whatever the umask: `openat`
/// applies the umask, so a mode it would reduce is set again afterwards
/// (the unpack skips that `fchmod` only when the umask takes nothing).
/// Each umask runs in its own process, as the umask is process-wide.
#[test]
fn files_get_the_tars_mode_under_every_umask() {
    const MODES: [(&str, u32); 6] = [
        ("m444", 0o444),
        ("m640", 0o640),
        ("m644", 0o644),
        ("m664", 0o664),
        ("m700", 0o700),
        ("m755", 0o755),
    ];
    // Made by hand: the crate's writer only writes 0o644 and 0o755.
    let mut tar = tar::Builder::new(Vec::new());
    for (name, mode) in MODES {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(F);
        header.set_mode(mode);
        header.set_size(5);
        header.set_cksum();
        tar.append_data(
            &mut header,
            format!("_rocm_sdk_devel/{name}"),
            &b"data\n"[..],
        )
        .unwrap();
    }
    let tar = tar.into_inner().unwrap();
    let zst = zstd::encode_all(&tar[..], 3).unwrap();
    for (bytes, bytes_name) in [(&tar, "_devel.tar"), (&zst, "_devel.tar.zst")] {
        for umask in ["000", "002", "022", "027", "077"] {
            let site = SitePackages::with_devel(bytes, bytes_name);
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("umask {umask} && exec \"$0\" \"$1\""))
                .arg(unpack_example())
                .arg(&site.sp)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "umask {umask}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            for (name, mode) in MODES {
                let path = site.sp.join("_rocm_sdk_devel").join(name);
                assert_eq!(
                    fs::metadata(&path).unwrap().mode() & 0o7777,
                    mode,
                    "{name} from {bytes_name} under umask {umask}"
                );
            }
        }
    }
}

/// A tree large enough to be written by several threads (small ones are
/// written by the calling thread) comes out complete and identical from
/// every codec and for any number of writer threads (`jobs`).
#[test]
fn a_large_tree_is_written_by_worker_threads_completely() {
    let names: Vec<String> = (0..3)
        .flat_map(|d| (0..200).map(move |f| format!("include/d{d}/h{f:03}.h")))
        .collect();
    let contents: Vec<Vec<u8>> = names
        .iter()
        .map(|n| format!("// {n}\n").into_bytes())
        .collect();
    let mut entries: Vec<(&str, Entry)> = vec![("include", Entry::Dir)];
    let dirs = ["include/d0", "include/d1", "include/d2"];
    entries.extend(dirs.iter().map(|d| (*d, Entry::Dir)));
    // `Entry::File` holds static bytes: leak the test's few kilobytes.
    entries.extend(names.iter().zip(&contents).map(|(n, c)| {
        let data: &'static [u8] = Box::leak(c.clone().into_boxed_slice());
        (n.as_str(), Entry::File(data, 0o644))
    }));
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let mut trees = Vec::new();
    let runs = [TarCodec::None, TarCodec::Zstd { level: 3 }]
        .into_iter()
        .flat_map(|codec| [0, 1, 3].map(|jobs| (codec, jobs)));
    for (codec, jobs) in runs {
        let site = SitePackages::with_devel(&write_tar(&entries, codec), codec.file_name());
        let options = UnpackOptions {
            jobs,
            ..UnpackOptions::default()
        };
        let report = ensure_with(&site.sp, &options).unwrap();
        assert_eq!(
            report.unpack.outcome,
            UnpackOutcome::Unpacked {
                files: 600,
                hard_links: 0,
                symlinks: 0
            },
            "{codec:?}, {jobs} jobs"
        );
        for (name, data) in names.iter().zip(&contents) {
            let path = site.sp.join("_rocm_sdk_devel").join(name);
            assert_eq!(&fs::read(&path).unwrap(), data, "{}", path.display());
        }
        trees.push(snapshot(&site.sp.join("_rocm_sdk_devel")));
    }
    for (i, tree) in trees.iter().enumerate().skip(1) {
        assert_eq!(&trees[0], tree, "run {i}");
    }
}

/// On Windows (`windows_names`, the default there) an archive holding a
/// name Windows cannot hold, or two members that differ only in case, is
/// refused before anything is opened or written: `bin/aux.txt` would open
/// the AUX device and wait forever, `share/CON/` cannot be created. The
/// same archive unpacks where those are ordinary names.
#[test]
fn names_windows_cannot_hold_are_refused_on_windows_before_anything_is_written() {
    let ok: (&str, tar::EntryType, &[u8], &str) = ("_rocm_sdk_devel/ok", F, b"fine", "");
    let cases: Vec<(Vec<(&str, tar::EntryType, &[u8], &str)>, &str, &str)> = vec![
        (
            vec![ok, ("_rocm_sdk_devel/bin/CON", F, b"x", "")],
            "_rocm_sdk_devel/bin/CON",
            "`CON` is the device CON to Windows",
        ),
        (
            vec![ok, ("_rocm_sdk_devel/bin/aux.txt", F, b"x", "")],
            "_rocm_sdk_devel/bin/aux.txt",
            "`aux.txt` is the device AUX",
        ),
        (
            vec![
                ok,
                ("_rocm_sdk_devel/share/CON/", D, b"", ""),
                ("_rocm_sdk_devel/share/CON/x", F, b"x", ""),
            ],
            "_rocm_sdk_devel/share/CON",
            "`CON` is the device CON",
        ),
        (
            vec![ok, ("_rocm_sdk_devel/lib/a.", F, b"x", "")],
            "_rocm_sdk_devel/lib/a.",
            "ends in a dot or a space",
        ),
        (
            vec![ok, ("_rocm_sdk_devel/lib/k:xnack+.kpack", F, b"x", "")],
            "_rocm_sdk_devel/lib/k:xnack+.kpack",
            "which NTFS takes as a stream of `k`",
        ),
        (
            vec![ok, ("_rocm_sdk_devel/lib/l", S, b"", "../NUL.txt")],
            "_rocm_sdk_devel/lib/l",
            "link to \"../NUL.txt\": `NUL.txt` is the device NUL",
        ),
        (
            vec![
                ok,
                ("_rocm_sdk_devel/lib/Foo.dll", F, b"a", ""),
                ("_rocm_sdk_devel/lib/foo.dll", F, b"b", ""),
            ],
            "_rocm_sdk_devel/lib/foo.dll",
            "it differs from _rocm_sdk_devel/lib/Foo.dll only in case",
        ),
        (
            vec![
                ok,
                ("_rocm_sdk_devel/include/HIP/a.h", F, b"a", ""),
                ("_rocm_sdk_devel/include/hip/b.h", F, b"b", ""),
            ],
            "_rocm_sdk_devel/include/hip",
            "it differs from _rocm_sdk_devel/include/HIP only in case",
        ),
    ];
    for (members, member, reason) in cases {
        let site = SitePackages::with_devel(&raw_tar(&members), "_devel.tar");
        let before = snapshot(&site.sp);
        let windows = UnpackOptions {
            windows_names: true,
            ..UnpackOptions::default()
        };
        let err = unpack(&site.sp, &windows).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(&err, Error::UnsafeMember { member: m, .. } if m == member),
            "{member}: {text}"
        );
        assert!(text.contains(reason), "{member}: {text}");
        assert!(text.contains("nothing was written"), "{text}");
        assert_eq!(
            snapshot(&site.sp),
            before,
            "{member}: something was written"
        );
        // Where these are ordinary names, the same archive unpacks.
        let linux = UnpackOptions {
            windows_names: false,
            ..UnpackOptions::default()
        };
        unpack(&site.sp, &linux).unwrap_or_else(|e| panic!("{member}: {e}"));
    }
    let site = SitePackages::with_devel(
        &raw_tar(&[("_rocm_sdk_devel/bin/CON", F, b"x", "")]),
        "_devel.tar",
    );
    let err = unpack(
        &site.sp,
        &UnpackOptions {
            windows_names: true,
            ..UnpackOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    let err = err.replace(&site.sp.display().to_string(), "[SP]");
    insta::assert_snapshot!(err, @r#"refusing unsafe member "_rocm_sdk_devel/bin/CON" of [SP]/rocm_sdk_devel/_devel.tar: `CON` is the device CON to Windows, which opens the device instead of a file; nothing was written. This archive was not made by therock-package; reinstall rocm-sdk-devel from a trusted index"#);
}

/// A link that already dangled in the artifacts ships in the tarball
/// pointing at a path of the tree itself: no package installs anything
/// there, so the warning says so instead of advising an install.
#[test]
fn a_link_dangling_inside_the_tarball_is_not_blamed_on_a_missing_package() {
    let site = SitePackages::with_devel(
        &raw_tar(&[
            ("_rocm_sdk_devel/lib/", D, b"", ""),
            ("_rocm_sdk_devel/lib/libx.so", S, b"", "libx.so.9"),
            (
                "_rocm_sdk_devel/lib/libhip.so",
                S,
                b"",
                "../../_rocm_sdk_libraries/lib/libhip.so.1",
            ),
        ]),
        "_devel.tar",
    );
    let report = unpack(&site.sp, &UnpackOptions::default()).unwrap();
    assert_eq!(
        report.warnings,
        [
            DevelWarning::DanglingLink {
                path: "_rocm_sdk_devel/lib/libhip.so".into(),
                target: "../../_rocm_sdk_libraries/lib/libhip.so.1".into(),
                missing: "_rocm_sdk_libraries".into(),
            },
            DevelWarning::DanglingInTarball {
                path: "_rocm_sdk_devel/lib/libx.so".into(),
                target: "libx.so.9".into(),
                missing: "_rocm_sdk_devel/lib/libx.so.9".into(),
            },
        ]
    );
    insta::assert_snapshot!(report.warnings[1].to_string(), @"skipped devel link _rocm_sdk_devel/lib/libx.so -> libx.so.9: rocm-sdk-devel ships nothing at _rocm_sdk_devel/lib/libx.so.9 (the link already dangled in the ROCm build this release was made from); the rest of the tree is complete, and no package you can install provides it: report it to the release's publisher if a tool needs it");
}
