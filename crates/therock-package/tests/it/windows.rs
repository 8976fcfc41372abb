//! A Windows build: the example's Windows tree (real PE DLLs, programs and
//! import libraries) packaged on Linux into `win_amd64` wheels, the same
//! build run by `therock-package.exe` under Wine, and the Windows
//! `rocm-sdk.exe` used under Wine in an installed layout (docs/windows.md).

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::wine::{Wine, therock_package_exe, windows_path};
use common::{Build, ok};

/// `IMAGE_FILE_MACHINE_AMD64`.
const PE_AMD64: u16 = 0x8664;

fn build_on_linux() -> &'static Build {
    static BUILD: std::sync::OnceLock<Build> = std::sync::OnceLock::new();
    BUILD.get_or_init(|| {
        Build::from_artifacts(fixtures::shared_windows(), &["--platform-tag", "win_amd64"])
    })
}

/// Every file below `root`, relative with `/`, with its bytes.
fn files_under(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            assert!(!meta.file_type().is_symlink(), "{}", path.display());
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_str().unwrap();
                out.insert(rel.replace('\\', "/"), fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// The family whose devel wheel the installed layout takes (a legacy
/// build with several families puts each devel wheel in a sub-directory).
const FAMILY: &str = "gfx110X-all";

/// Every wheel below `dist`, by its path relative to `dist`.
fn wheel_paths(dist: &Path) -> BTreeMap<String, PathBuf> {
    files_under(dist)
        .into_keys()
        .filter(|rel| Path::new(rel).extension().is_some_and(|e| e == "whl"))
        .map(|rel| (rel.clone(), dist.join(&rel)))
        .collect()
}

/// Unzips `wheels` into `dest`, as an installer lays out site-packages
/// (the `.dist-info` directories included).
fn unpack_wheels(wheels: &[&Path], dest: &Path) {
    ok(&Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\n\
             for w in sys.argv[2:]:\n\
             \x20   zipfile.ZipFile(w).extractall(sys.argv[1])\n",
        ])
        .arg(dest)
        .args(wheels)
        .output()
        .unwrap());
}

/// Wheel path (relative to `dist`) → its members.
fn wheels(dist: &Path) -> BTreeMap<String, BTreeMap<String, Vec<u8>>> {
    wheel_paths(dist)
        .into_iter()
        .map(|(name, path)| {
            let dir = tempfile::tempdir().unwrap();
            unpack_wheels(&[&path], dir.path());
            (name, files_under(dir.path()))
        })
        .collect()
}

/// The machine of a PE image, `None` when the bytes are not one.
fn pe_machine(bytes: &[u8]) -> Option<u16> {
    if !bytes.starts_with(b"MZ") || bytes.len() < 0x40 {
        return None;
    }
    let at = u32::from_le_bytes(bytes[0x3c..0x40].try_into().unwrap()) as usize;
    (bytes.get(at..at + 4)? == b"PE\0\0")
        .then(|| u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]))
}

/// The wheel whose path starts with `prefix`.
fn wheel<'a>(
    wheels: &'a BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    prefix: &str,
) -> &'a BTreeMap<String, Vec<u8>> {
    wheels
        .iter()
        .find(|(name, _)| name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}* wheel in {:?}", wheels.keys()))
        .1
}

#[test]
fn a_windows_tree_packages_on_linux_into_windows_wheels() {
    let build = build_on_linux();
    let wheels = wheels(&build.dist());
    for name in wheels.keys() {
        assert!(
            name.ends_with("-win_amd64.whl") || name.ends_with("-any.whl"),
            "{name}"
        );
    }
    let source = files_under(fixtures::shared_windows());
    let source_of = |name: &str| -> &Vec<u8> {
        source
            .iter()
            .find(|(rel, _)| rel.ends_with(&format!("/stage/{name}")))
            .unwrap_or_else(|| panic!("no {name} in the Windows tree"))
            .1
    };
    let core = wheel(&wheels, "rocm_sdk_core-");
    // DLLs and programs where the reference puts them on Windows, with
    // their bytes unchanged (no ELF surgery, no launchers).
    for shipped in [
        "bin/amdhip64_7.dll",
        "bin/hiprtc0701.dll",
        "bin/amd_comgr0701.dll",
        "bin/hipInfo.exe",
        "bin/hipconfig.exe",
        "lib/llvm/bin/clang.exe",
        "lib/llvm/bin/clang++.exe",
    ] {
        let bytes = core
            .get(&format!("_rocm_sdk_core/{shipped}"))
            .unwrap_or_else(|| panic!("core lacks {shipped}: {:?}", core.keys()));
        assert_eq!(bytes, source_of(shipped), "{shipped} was changed");
        assert_eq!(pe_machine(bytes), Some(PE_AMD64), "{shipped}");
    }
    let program = &core["rocm_sdk_core/_bin/rocm-sdk.exe"];
    assert_eq!(pe_machine(program), Some(PE_AMD64));
    assert!(!core.contains_key("rocm_sdk_core/_bin/rocm-sdk"));
    let record = String::from_utf8(core["rocm_sdk_core/_libraries.json"].clone()).unwrap();
    for dll in [
        "bin/amdhip64_7.dll",
        "bin/hiprtc0701.dll",
        "bin/amd_comgr0701.dll",
    ] {
        assert!(record.contains(dll), "{record}");
    }
    let libraries = wheel(&wheels, "rocm_sdk_libraries_gfx110x_all-");
    let blas = libraries
        .iter()
        .find(|(rel, _)| rel.ends_with("/bin/rocblas.dll"))
        .unwrap_or_else(|| panic!("no rocblas.dll: {:?}", libraries.keys()));
    assert_eq!(blas.1, source_of("bin/rocblas.dll"));
    // Import libraries stay in `lib/`, beside the headers.
    assert_eq!(
        core["_rocm_sdk_core/lib/amdhip64.lib"],
        *source_of("lib/amdhip64.lib")
    );
    let devel = wheel(&wheels, &format!("{FAMILY}/rocm_sdk_devel-"));
    assert!(
        devel.keys().any(|k| k.contains("/_devel.tar")),
        "{:?}",
        devel.keys()
    );
}

/// `therock-package.exe build` of the same tree under Wine.
fn build_under_wine() -> (tempfile::TempDir, Output) {
    let dest = tempfile::tempdir().unwrap();
    let out = Wine::get().run(
        therock_package_exe(),
        &[
            "build",
            "--artifact-dir",
            &windows_path(fixtures::shared_windows()),
            "--dest-dir",
            &windows_path(dest.path()),
            "--platform-tag",
            "win_amd64",
        ],
    );
    (dest, out)
}

#[test]
fn under_wine_the_windows_build_gives_byte_identical_wheels() {
    let (dest, out) = build_under_wine();
    ok(&out);
    let on_windows = files_under(&dest.path().join("dist"));
    let on_linux = files_under(&build_on_linux().dist());
    assert_eq!(
        on_windows.keys().collect::<Vec<_>>(),
        on_linux.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &on_linux {
        assert!(
            on_windows[name] == *bytes,
            "{name} differs between the hosts"
        );
    }
}

/// The Linux build's wheels unpacked as an installer would into
/// `venv/Lib/site-packages` (the Windows venv layout).
fn installed() -> (tempfile::TempDir, PathBuf) {
    let venv = tempfile::tempdir().unwrap();
    let site = venv.path().join("Lib").join("site-packages");
    fs::create_dir_all(&site).unwrap();
    let dist = build_on_linux().dist();
    let wheels = wheel_paths(&dist);
    let chosen: Vec<&Path> = wheels
        .iter()
        .filter(|(rel, _)| !rel.contains('/') || rel.starts_with(&format!("{FAMILY}/")))
        .map(|(_, path)| path.as_path())
        .collect();
    unpack_wheels(&chosen, &site);
    (venv, site)
}

fn rocm_sdk(site: &Path, args: &[&str]) -> Output {
    Wine::get().run(&site.join("rocm_sdk_core/_bin/rocm-sdk.exe"), args)
}

#[test]
fn under_wine_rocm_sdk_works_in_an_installed_windows_layout() {
    let (_venv, site) = installed();
    assert_eq!(ok(&rocm_sdk(&site, &["version"])).trim(), fixtures::VERSION);
    assert_eq!(
        ok(&rocm_sdk(&site, &["targets"])).trim(),
        "gfx942;gfx1100;gfx1101"
    );
    let init = ok(&rocm_sdk(&site, &["init"]));
    assert!(init.starts_with("devel tree ready: "), "{init}");
    let root = ok(&rocm_sdk(&site, &["path", "--root"]));
    let root = root.trim();
    assert!(
        root.starts_with("Z:\\") && root.ends_with("_rocm_sdk_devel"),
        "{root}"
    );
    // The devel tree came out without symlinks: the runtime files it shares
    // with core are hard links to core's.
    let devel = site.join("_rocm_sdk_devel");
    let tree = files_under(&devel);
    assert_eq!(
        tree["bin/amdhip64_7.dll"],
        fs::read(site.join("_rocm_sdk_core/bin/amdhip64_7.dll")).unwrap()
    );
    assert!(tree.contains_key("lib/amdhip64.lib"), "{:?}", tree.keys());
    let test = rocm_sdk(&site, &["test"]);
    let report = String::from_utf8_lossy(&test.stdout);
    for dll in [
        "_rocm_sdk_core\\bin\\amdhip64_7.dll",
        "_rocm_sdk_core\\bin\\amd_comgr0701.dll",
        "_rocm_sdk_core\\bin\\hiprtc0701.dll",
        "_rocm_sdk_libraries_gfx110X_all\\bin\\rocblas.dll",
        "_rocm_sdk_libraries_gfx110X_all\\bin\\hipfft.dll",
    ] {
        assert!(
            report
                .lines()
                .any(|l| l == format!("PASS libraries: {dll} (loads)")),
            "{dll} not reported as loading:\n{report}\n{}",
            String::from_utf8_lossy(&test.stderr)
        );
    }
}

/// Replaces the installed devel tarball with a tar of `members` (regular
/// files, parents implied) and its RECORD row with the new one's, without
/// a digest file, as a hostile index would serve it: the archive `rocm-sdk
/// init` then finds.
fn replace_devel_tarball(site: &Path, members: &[&str]) {
    const SCRIPT: &str = r#"
import base64, glob, hashlib, io, os, sys, tarfile
site, members = sys.argv[1], sys.argv[2:]
tar_path = os.path.join(site, "rocm_sdk_devel", "_devel.tar")
with tarfile.open(tar_path, "w", format=tarfile.GNU_FORMAT) as tar:
    for name in members:
        info = tarfile.TarInfo(name)
        info.size = 2
        tar.addfile(info, io.BytesIO(b"x\n"))
data = open(tar_path, "rb").read()
digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
(record,) = glob.glob(os.path.join(site, "rocm_sdk_devel-*.dist-info", "RECORD"))
rows = [
    f"rocm_sdk_devel/_devel.tar,sha256={digest},{len(data)}"
    if line.startswith("rocm_sdk_devel/_devel.tar,") else line
    for line in open(record, newline="").read().splitlines()
    if not line.startswith("rocm_sdk_devel/_devel.digest,")
]
open(record, "w", newline="").write("\n".join(rows) + "\n")
os.remove(os.path.join(site, "rocm_sdk_devel", "_devel.digest"))
"#;
    ok(&Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(site)
        .args(members)
        .output()
        .unwrap());
}

/// Every path below `root` with the bytes of files (`None` for directories).
fn tree_state(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                stack.push(path);
                out.insert(rel, None);
            } else {
                out.insert(rel, Some(fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// Under Wine, `rocm-sdk.exe init` refuses a devel tarball holding
/// `bin/CON` before anything is written: before, it failed on the device
/// half-way and left a partial tree that every retry failed on again.
#[test]
fn under_wine_init_refuses_a_devel_tarball_with_a_device_name_before_writing() {
    let (_venv, site) = installed();
    replace_devel_tarball(
        &site,
        &[
            "_rocm_sdk_devel/include/hip/hip_runtime.h",
            "_rocm_sdk_devel/bin/CON",
            "_rocm_sdk_devel/share/doc.txt",
        ],
    );
    let before = tree_state(&site);
    let out = rocm_sdk(&site, &["init"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("refusing unsafe member \"_rocm_sdk_devel/bin/CON\"")
            && stderr.contains("`CON` is the device CON to Windows")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(tree_state(&site) == before, "init wrote into site-packages");
    assert!(!site.join("_rocm_sdk_devel").exists());
}

/// Under Wine, `rocm-sdk.exe test` reports a RECORD row naming `bin\aux.txt`
/// instead of opening it: Windows opens AUX as the device, and the read
/// waited forever. The run gets a deadline so a regression fails instead
/// of hanging the suite.
#[test]
fn under_wine_the_self_check_never_opens_a_device_name_from_record() {
    let (_venv, site) = installed();
    let file = site.join("_rocm_sdk_core/bin/aux.txt");
    fs::write(&file, b"x\n").unwrap();
    let record = fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("rocm_sdk_core-")
        })
        .unwrap()
        .join("RECORD");
    let mut rows = fs::read_to_string(&record).unwrap();
    // `x\n`: its sha256 in RECORD's encoding.
    rows.push_str(
        "_rocm_sdk_core/bin/aux.txt,sha256=c8s4WKaHqElMozIwUwFigvPa051Cz2LKTnndoqrH2aw,2\n",
    );
    fs::write(&record, rows).unwrap();
    let mut child = Wine::get()
        .command(&site.join("rocm_sdk_core/_bin/rocm-sdk.exe"), &["test"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(5);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("rocm-sdk.exe test hangs on a RECORD row naming bin\\aux.txt");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let out = child.wait_with_output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("_rocm_sdk_core/bin/aux.txt")
            && report.contains("so it was not opened (Windows cannot hold the name)"),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// docs/devel-tar.md#confinement on Windows: a reconcile state naming a
/// file outside site-packages by a drive path and by `..\` is ignored (one
/// warning naming it) and nothing outside changes; a runtime-links pair
/// leading out is refused with one line naming the record.
#[test]
fn under_wine_state_files_lead_nowhere_outside() {
    let (venv, site) = installed();
    ok(&rocm_sdk(&site, &["init"]));
    let outside = venv.path().join("outside");
    fs::create_dir_all(outside.join("emptydir")).unwrap();
    fs::write(outside.join("file.txt"), "file").unwrap();
    let devel = site.join("_rocm_sdk_devel");
    let state = format!(
        r#"{{"devices": {{"rocm_sdk_device_gfx1100-{}.dist-info": {{"links": [{:?}, "..\\..\\..\\outside\\file.txt"], "sources": [], "created_dirs": [{:?}]}}}}}}"#,
        fixtures::VERSION,
        windows_path(&outside.join("file.txt")),
        windows_path(&outside.join("emptydir")),
    );
    fs::write(devel.join(".device-links-state.json"), state).unwrap();
    fs::write(devel.join(".device-links-stamp"), "stale\n").unwrap();
    let out = rocm_sdk(&site, &["init"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(outside.join("file.txt").is_file(), "deleted: {stderr}");
    assert!(outside.join("emptydir").is_dir(), "deleted: {stderr}");
    assert!(
        stderr.contains("ignored _rocm_sdk_devel/.device-links-state.json"),
        "{stderr}"
    );

    let record = r#"{"schema": 1, "links": [["_rocm_sdk_devel/bin/stolen", "_rocm_sdk_core/..\\..\\outside\\file.txt"]]}"#;
    fs::write(devel.join(".runtime-links.json"), record).unwrap();
    let out = rocm_sdk(&site, &["init"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(".runtime-links.json"), "{stderr}");
    assert!(!devel.join("bin/stolen").exists());
    assert_eq!(fs::read(outside.join("file.txt")).unwrap(), b"file");
}
