//! Confinement (docs/devel-tar.md#confinement): whatever the state and
//! control files say, the unpack, the reconcile, the runtime-link repair
//! and the stamp write, link and delete only inside the package
//! directories `rocm-sdk` owns, and never in another user's tree.
//!
//! Each test plants something hostile, runs what `rocm-sdk init` runs, and
//! compares everything outside the owned places before and after: the
//! directory around site-packages (with files a hostile path names) and
//! the runtime packages the tree links from.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Node, SitePackages, VERSION, record_hash, snapshot, unpack_example};
use devel_tar::{DEVICE_LINKS_STAMP, DevelWarning, Error, RUNTIME_LINKS, ensure};

const GFX942: &[(&str, &[u8])] = &[
    ("lib/rocblas/library/Kernels_gfx942.co", b"co942"),
    ("lib/hipblaslt/library/gfx942/db.dat", b"db942"),
];
const STATE: &str = ".device-links-state.json";
const DEVICE: &str = "rocm_sdk_device_gfx942-7.1.0.dist-info";
const GONE_DEVICE: &str = "rocm_sdk_device_gfx1100-7.1.0.dist-info";

/// Site-packages with core, devel and a gfx942 device wheel, unpacked and
/// reconciled, and beside it `outside/` holding files a hostile path
/// names: `outside/x/file.txt`, `outside/x/emptydir/`, `outside/victim/rel.txt`
/// and `outside/secret` (0600, as another user's file).
struct Scene {
    site: SitePackages,
    outside: PathBuf,
}

impl Scene {
    fn new() -> Self {
        let site = SitePackages::standard();
        site.install_device("gfx942", VERSION, GFX942);
        ensure(&site.sp).unwrap();
        let outside = site.sp.parent().unwrap().join("outside");
        fs::create_dir_all(outside.join("x/emptydir")).unwrap();
        fs::create_dir_all(outside.join("victim")).unwrap();
        fs::write(outside.join("x/file.txt"), "file").unwrap();
        fs::write(outside.join("victim/rel.txt"), "victim").unwrap();
        fs::write(outside.join("secret"), "secret").unwrap();
        fs::set_permissions(
            outside.join("secret"),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .unwrap();
        Self { site, outside }
    }

    fn sp(&self) -> &Path {
        &self.site.sp
    }

    fn tree(&self) -> PathBuf {
        self.sp().join("_rocm_sdk_devel")
    }

    /// Everything outside the places `rocm-sdk` may change: the directory
    /// around site-packages and the runtime packages (their files by
    /// content and mode; hard links into the tree do not count).
    fn outside_state(&self) -> BTreeMap<String, Node> {
        let mut all = snapshot(&self.outside);
        for package in ["_rocm_sdk_core", "_rocm_sdk_libraries"] {
            for (path, node) in snapshot(&self.sp().join(package)) {
                all.insert(format!("{package}/{path}"), node);
            }
        }
        all
    }

    /// A path to `outside/{rel}` as seen from site-packages, climbing with
    /// `..` (what the hostile state wrote).
    fn climbing(rel: &str) -> String {
        format!("../outside/{rel}")
    }

    fn absolute(&self, rel: &str) -> String {
        self.outside.join(rel).display().to_string()
    }

    /// Makes the stamp stale (as any `pip install` of a device wheel does).
    fn stale_stamp(&self) {
        fs::write(self.tree().join(DEVICE_LINKS_STAMP), "stale\n").unwrap();
    }
}

/// The first case: a state listing, for a device no longer
/// installed, links and a created directory outside site-packages.
#[test]
fn a_state_naming_paths_outside_is_ignored_and_nothing_outside_is_deleted() {
    let scene = Scene::new();
    let state = serde_json::json!({
        "devices": {
            GONE_DEVICE: {
                "links": [scene.absolute("x/file.txt"), Scene::climbing("victim/rel.txt")],
                "sources": [],
                "created_dirs": [scene.absolute("x/emptydir")],
            }
        }
    });
    fs::write(scene.tree().join(STATE), state.to_string()).unwrap();
    scene.stale_stamp();
    let before = scene.outside_state();
    let report = ensure(scene.sp()).unwrap();
    assert_eq!(scene.outside_state(), before);
    assert!(scene.outside.join("x/emptydir").is_dir());
    let ignored: Vec<&DevelWarning> = report
        .warnings
        .iter()
        .filter(|w| matches!(w, DevelWarning::IgnoredState { .. }))
        .collect();
    assert_eq!(ignored.len(), 1, "{:?}", report.warnings);
    let said = ignored[0].to_string();
    assert!(
        said.starts_with("ignored _rocm_sdk_devel/.device-links-state.json ("),
        "{said}"
    );
    assert!(said.contains(&scene.absolute("x/file.txt")), "{said}");
    // The state was written anew, from what is installed.
    let state = fs::read_to_string(scene.tree().join(STATE)).unwrap();
    assert!(
        state.contains(DEVICE) && !state.contains(GONE_DEVICE),
        "{state}"
    );
}

/// A state that looks right but names a file of the devel tarball (or one
/// the device wheel never listed) for a device that is gone: the file stays.
#[test]
fn a_state_naming_a_file_of_the_tarball_does_not_remove_it() {
    let scene = Scene::new();
    let header = "_rocm_sdk_devel/include/hip/hip_runtime.h";
    let state = serde_json::json!({
        "devices": {
            GONE_DEVICE: {"links": [header], "sources": [], "created_dirs": ["_rocm_sdk_devel/include/hip"]}
        }
    });
    fs::write(scene.tree().join(STATE), state.to_string()).unwrap();
    scene.stale_stamp();
    let report = ensure(scene.sp()).unwrap();
    assert_eq!(report.reconcile.removed, 0);
    assert_eq!(
        fs::read(scene.sp().join(header)).unwrap(),
        b"#pragma once\n"
    );
}

/// The second case: the marker, the state, the stamp and the
/// temporary names the old reconcile used replaced by links to files
/// elsewhere. Each is replaced, never written through.
#[test]
fn markers_state_and_stamp_that_are_links_are_replaced_not_written_through() {
    let scene = Scene::new();
    let marker = format!(".{DEVICE}.links");
    let planted = [
        marker.as_str(),
        STATE,
        DEVICE_LINKS_STAMP,
        ".device-links-stamp.tmp",
        ".device-links-state.json.tmp",
    ];
    for (i, name) in planted.iter().enumerate() {
        let target = scene.outside.join(format!("target-{i}"));
        fs::write(&target, format!("target {i}")).unwrap();
        let _ = fs::remove_file(scene.tree().join(name));
        symlink(&target, scene.tree().join(name)).unwrap();
    }
    // The device wheel was reinstalled: its links are made again.
    fs::remove_file(scene.tree().join(GFX942[0].0)).unwrap();
    let before = scene.outside_state();
    ensure(scene.sp()).unwrap();
    assert_eq!(scene.outside_state(), before);
    for name in [marker.as_str(), STATE, DEVICE_LINKS_STAMP] {
        let meta = fs::symlink_metadata(scene.tree().join(name)).unwrap();
        assert!(meta.is_file(), "{name} is a regular file again");
    }
    assert!(scene.tree().join(GFX942[0].0).is_file());
}

/// The third case: a runtime-links pair whose file is reached
/// through a directory link in site-packages: refused, nothing linked.
#[test]
fn a_runtime_link_through_a_linked_directory_is_refused() {
    let scene = Scene::new();
    symlink(&scene.outside, scene.sp().join("_rocm_sdk_core/evil")).unwrap();
    let record = serde_json::json!({
        "schema": 1,
        "links": [["_rocm_sdk_devel/lib/stolen", "_rocm_sdk_core/evil/secret"]]
    });
    fs::write(scene.tree().join(RUNTIME_LINKS), record.to_string()).unwrap();
    let before = scene.outside_state();
    let err = ensure(scene.sp()).unwrap_err();
    let said = fs_helpers::error_chain::Chain(&err).to_string();
    assert!(
        said.contains(&format!("_rocm_sdk_devel/{RUNTIME_LINKS}")),
        "names the file that gave the path: {said}"
    );
    assert!(!scene.tree().join("lib/stolen").exists());
    assert_eq!(scene.outside.join("secret").metadata().unwrap().nlink(), 1);
    assert_eq!(scene.outside_state(), before);
}

/// A pair out of place in the record (a runtime file of no runtime
/// package, a devel path the devel RECORD does not list) is refused too.
#[test]
fn a_runtime_link_the_records_do_not_vouch_for_is_refused() {
    let scene = Scene::new();
    for (link, source, said) in [
        (
            "_rocm_sdk_devel/lib/stolen",
            "otherpkg/secret",
            "runtime package",
        ),
        (
            "_rocm_sdk_devel/lib/stolen",
            "_rocm_sdk_core/lib/libamdhip64.so.6",
            "RECORD lists",
        ),
        (
            "_rocm_sdk_devel/lib/libamdhip64.so.6",
            "_rocm_sdk_core/__init__.py.missing",
            "RECORD lists",
        ),
    ] {
        let record = serde_json::json!({"schema": 1, "links": [[link, source]]});
        fs::write(scene.tree().join(RUNTIME_LINKS), record.to_string()).unwrap();
        if link.ends_with("libamdhip64.so.6") {
            fs::write(scene.sp().join("_rocm_sdk_core/__init__.py.missing"), "x").unwrap();
            fs::remove_file(scene.sp().join(link)).unwrap();
        }
        let err = ensure(scene.sp()).unwrap_err();
        assert!(matches!(err, Error::InvalidRuntimeLinks { .. }), "{err}");
        assert!(err.to_string().contains(said), "{err}");
        assert!(!scene.tree().join("lib/stolen").exists());
    }
}

/// The fourth case: a links document naming `include`. A changed
/// document is refused by its RECORD row; a device wheel whose own
/// document (and file) say so is refused before the directory is touched.
#[test]
fn a_device_link_never_replaces_a_directory_of_the_tree() {
    let scene = Scene::new();
    let doc = scene
        .sp()
        .join("_rocm_sdk_libraries/.devel_links/gfx942.json");
    let text = serde_json::json!({
        "version": VERSION,
        "links": [{"relpath": "include", "target": "../_rocm_sdk_libraries/include"}]
    });
    fs::write(&doc, text.to_string()).unwrap();
    scene.stale_stamp();
    let err = ensure(scene.sp()).unwrap_err();
    assert!(err.to_string().contains("changed after install"), "{err}");
    assert!(scene.tree().join("include/hip/hip_runtime.h").is_file());

    // A device wheel that ships a file `include` and says so.
    let scene = Scene::new();
    scene
        .site
        .install_device("gfx1100", VERSION, &[("include", b"not a directory")]);
    let err = ensure(scene.sp()).unwrap_err();
    assert!(matches!(err, Error::InvalidDevelLinks { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("\"include\" names a directory of the devel tree"),
        "{err}"
    );
    assert!(scene.tree().join("include/hip/hip_runtime.h").is_file());
}

/// A document whose link leads to a file of another package, or to a file
/// its device wheel never installed, is refused.
#[test]
fn a_device_link_must_be_a_file_its_wheel_installed() {
    let scene = Scene::new();
    let doc_rel = "_rocm_sdk_libraries/.devel_links/gfx942.json";
    for (relpath, target, said) in [
        (
            "lib/stolen",
            "../../_rocm_sdk_core/lib/libamdhip64.so.6",
            "is not \"../../_rocm_sdk_libraries/lib/stolen\"",
        ),
        (
            "lib/libz.so.1",
            "../../_rocm_sdk_libraries/lib/libz.so.1",
            "RECORD does not list it",
        ),
    ] {
        let text = serde_json::json!({
            "version": VERSION,
            "links": [{"relpath": relpath, "target": target}]
        })
        .to_string();
        fs::write(scene.sp().join(doc_rel), &text).unwrap();
        // As a hostile wheel would ship it: RECORD agrees with the file.
        let dist_info = scene.sp().join(DEVICE);
        let record = fs::read_to_string(dist_info.join("RECORD")).unwrap();
        let record: String = record
            .lines()
            .map(|line| {
                if line.starts_with(doc_rel) {
                    format!(
                        "{doc_rel},{},{}\n",
                        record_hash(text.as_bytes()),
                        text.len()
                    )
                } else {
                    format!("{line}\n")
                }
            })
            .collect();
        fs::write(dist_info.join("RECORD"), record).unwrap();
        scene.stale_stamp();
        let err = ensure(scene.sp()).unwrap_err();
        assert!(matches!(err, Error::InvalidDevelLinks { .. }), "{err}");
        assert!(err.to_string().contains(said), "{err}");
        assert!(!scene.tree().join("lib/stolen").exists());
    }
}

/// Every state and control file the tool reads, planted with links to
/// files elsewhere, absolute paths and `..`: nothing outside the owned
/// places changes, whatever each run says.
#[test]
fn nothing_outside_changes_whatever_the_state_and_control_files_say() {
    type Plant = fn(&Scene);
    let plants: Vec<(&str, Plant)> = vec![
        ("state is a link", |s| {
            link_out(s, &s.tree().join(STATE), "state");
        }),
        ("state with absolute and climbing paths", |s| {
            let state = serde_json::json!({"devices": {DEVICE: {
                "links": [s.absolute("x/file.txt"), "_rocm_sdk_devel/../../outside/victim/rel.txt"],
                "sources": ["/etc/hostname", "../outside/secret"],
                "created_dirs": [Scene::climbing("x/emptydir")],
            }}});
            fs::write(s.tree().join(STATE), state.to_string()).unwrap();
        }),
        ("stamp is a pipe", |s| {
            let stamp = s.tree().join(DEVICE_LINKS_STAMP);
            let _ = fs::remove_file(&stamp);
            assert!(
                Command::new("mkfifo")
                    .arg(&stamp)
                    .status()
                    .unwrap()
                    .success()
            );
        }),
        ("stamp is a link to a device", |s| {
            let _ = fs::remove_file(s.tree().join(DEVICE_LINKS_STAMP));
            symlink("/dev/zero", s.tree().join(DEVICE_LINKS_STAMP)).unwrap();
        }),
        ("state is a pipe", |s| {
            let state = s.tree().join(STATE);
            let _ = fs::remove_file(&state);
            assert!(
                Command::new("mkfifo")
                    .arg(&state)
                    .status()
                    .unwrap()
                    .success()
            );
        }),
        ("runtime links is a link", |s| {
            link_out(s, &s.tree().join(RUNTIME_LINKS), "runtime");
        }),
        ("runtime links with climbing and absolute pairs", |s| {
            let record = serde_json::json!({"schema": 1, "links": [
                ["_rocm_sdk_devel/lib/a", Scene::climbing("secret")],
                [s.absolute("x/file.txt"), "_rocm_sdk_core/lib/libamdhip64.so.6"],
            ]});
            fs::write(s.tree().join(RUNTIME_LINKS), record.to_string()).unwrap();
        }),
        ("device RECORD is a link", |s| {
            link_out(s, &s.sp().join(DEVICE).join("RECORD"), "record");
        }),
        ("devel RECORD is a link", |s| {
            let record = s.site.dist_info("rocm_sdk_devel").join("RECORD");
            link_out(s, &record, "devel-record");
        }),
        ("links document is a link", |s| {
            let doc = s.sp().join("_rocm_sdk_libraries/.devel_links/gfx942.json");
            link_out(s, &doc, "doc");
        }),
        ("links directory is a link", |s| {
            let dir = s.sp().join("_rocm_sdk_libraries/.devel_links");
            fs::rename(&dir, s.outside.join("devel_links")).unwrap();
            symlink(s.outside.join("devel_links"), &dir).unwrap();
        }),
        ("a tree directory is a link", |s| {
            let dir = s.tree().join("lib/rocblas");
            fs::remove_dir_all(&dir).unwrap();
            symlink(s.outside.join("x"), &dir).unwrap();
        }),
        ("the tree is a link", |s| {
            fs::rename(s.tree(), s.outside.join("tree")).unwrap();
            symlink(s.outside.join("tree"), s.tree()).unwrap();
        }),
        ("the devel package directory is a link", |s| {
            let dir = s.sp().join("rocm_sdk_devel");
            fs::rename(&dir, s.outside.join("pkg")).unwrap();
            symlink(s.outside.join("pkg"), &dir).unwrap();
        }),
        ("the devel document is a link", |s| {
            link_out(s, &s.sp().join("rocm_sdk_devel/_dist_info.json"), "doc");
        }),
        ("the libraries package is a link", |s| {
            let dir = s.sp().join("_rocm_sdk_libraries");
            fs::rename(&dir, s.outside.join("libraries")).unwrap();
            symlink(s.outside.join("libraries"), &dir).unwrap();
        }),
    ];
    for (what, plant) in plants {
        let scene = Scene::new();
        plant(&scene);
        // Every run of interest: the device links made again, the runtime
        // links mended, the stamp written.
        let _ = fs::remove_file(scene.tree().join(GFX942[1].0));
        let core_clang = scene.sp().join("_rocm_sdk_core/lib/llvm/bin/clang");
        if core_clang.exists() {
            let bytes = fs::read(&core_clang).unwrap();
            fs::remove_file(&core_clang).unwrap();
            fs::write(&core_clang, bytes).unwrap();
        }
        if !matches!(what, "stamp is a pipe" | "stamp is a link to a device") {
            scene.stale_stamp();
        }
        let before = scene.outside_state();
        // Twice, as child processes bounded in time and memory: a reader
        // that waits on a pipe or reads a device fails the test, never the
        // machine.
        for run in ["first", "second"] {
            let out = bounded_unpack(scene.sp());
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                scene.outside_state(),
                before,
                "{what} ({run} run): {stderr}"
            );
            if !out.status.success() {
                assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: {stderr}");
            }
        }
    }
}

/// `unpack SP` (unpack and reconcile, as `init` runs them) in a child
/// limited to 2 GiB of address space and killed after a minute.
fn bounded_unpack(sp: &Path) -> std::process::Output {
    let mut child = Command::new("prlimit")
        .arg("--as=2147483648")
        .arg("--")
        .arg(unpack_example())
        .arg(sp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_mins(1) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the unpack of {} did not finish within a minute",
                sp.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Replaces `path` with a link to a new file `outside/{name}`.
fn link_out(scene: &Scene, path: &Path, name: &str) {
    let target = scene.outside.join(name);
    fs::write(&target, "{}").unwrap();
    let _ = fs::remove_file(path);
    symlink(&target, path).unwrap();
}

/// What a writer killed before its rename leaves: its temporary, which the
/// devel RECORD lists (so pip's uninstall still removes the whole tree),
/// and the row. The next run removes both, and nothing else.
#[test]
fn a_temporary_left_by_a_killed_writer_is_removed_with_its_row() {
    let left_name = "..device-links-state.json.0123456789ab.tmp";
    let with_leftover = || {
        let scene = Scene::new();
        fs::write(scene.tree().join(left_name), "{}").unwrap();
        let record = scene.site.dist_info("rocm_sdk_devel").join("RECORD");
        let before = fs::read_to_string(&record).unwrap();
        fs::write(&record, format!("{before}_rocm_sdk_devel/{left_name},,\n")).unwrap();
        (scene, before)
    };

    let (scene, before) = with_leftover();
    let unrelated = scene.tree().join(".keep.0123456789ab.tmp");
    fs::write(&unrelated, "kept").unwrap();
    scene.stale_stamp();
    ensure(scene.sp()).unwrap();
    assert!(!scene.tree().join(left_name).exists());
    assert!(unrelated.exists());
    assert_eq!(scene.site.record("rocm_sdk_devel"), before);

    // Uninstalled as it was left, the tree goes as a whole.
    let (scene, _) = with_leftover();
    for name in ["rocm_sdk_device_gfx942", "rocm_sdk_devel"] {
        common::pip_uninstall(scene.sp(), name);
    }
    assert!(!scene.tree().exists(), "{:?}", walk(&scene.tree()));
}

/// The owner rule (docs/devel-tar.md#owner): an installation that belongs
/// to another user is not changed, with the remedy; its owner's own run
/// works.
#[test]
fn another_users_installation_is_not_changed() {
    const OWNER: &str = "12345";
    let can_switch = Command::new("setpriv")
        .args(["--reuid", OWNER, "--regid", OWNER, "--clear-groups", "true"])
        .status()
        .is_ok_and(|s| s.success());
    // The suite runs as root (README: CI installs its packages as root);
    // only root can give a tree to another user or become one.
    assert!(
        can_switch,
        "setpriv cannot switch to uid {OWNER}: run the tests as root, as CI does"
    );
    let site = SitePackages::standard();
    site.install_device("gfx942", VERSION, GFX942);
    let chown = |path: &Path| {
        assert!(
            Command::new("chown")
                .args(["-R", &format!("{OWNER}:{OWNER}")])
                .arg(path)
                .status()
                .unwrap()
                .success()
        );
    };
    chown(&site.sp);
    // Root (this test) runs init in the user's site: refused, unchanged.
    let before = snapshot(&site.sp);
    let err = ensure(&site.sp).unwrap_err();
    assert!(matches!(err, Error::OtherOwner { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("run `rocm-sdk init` once as the user who installed the packages"),
        "{err}"
    );
    assert_eq!(snapshot(&site.sp), before);

    // The owner unpacks; root then finds a stale stamp: still refused.
    let out = Command::new("setpriv")
        .args([
            &format!("--reuid={OWNER}"),
            &format!("--regid={OWNER}"),
            "--clear-groups",
        ])
        .arg(unpack_example())
        .arg(&site.sp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs::write(
        site.sp.join("_rocm_sdk_devel").join(DEVICE_LINKS_STAMP),
        "stale\n",
    )
    .unwrap();
    chown(&site.sp);
    let before = snapshot(&site.sp);
    let err = ensure(&site.sp).unwrap_err();
    assert!(matches!(err, Error::OtherOwner { .. }), "{err}");
    assert_eq!(snapshot(&site.sp), before);
    let uid = |p: &Path| fs::symlink_metadata(p).unwrap().uid();
    assert!(
        walk(&site.sp)
            .iter()
            .all(|p| uid(p) == OWNER.parse::<u32>().unwrap()),
        "every path still belongs to the owner"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if fs::symlink_metadata(&path).unwrap().is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
