//! Windows packages hold only names Windows can hold (docs/windows.md#names,
//! docs/behaviour.md#windows-names): a build for `win_amd64` refuses, with
//! exit 1 naming the file, a device name, a trailing dot or space, a
//! reserved character, and two installed paths that differ only in case
//! (in one package, across the libraries and device wheels, in the devel
//! tarball); it warns about paths too long for `MAX_PATH`, leaves the
//! `:xnack±` variants out, and `verify` checks the same on Windows wheels.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{build_into, copy_of_artifacts, fails, ok, verify};
use fixtures::Layout;

/// Where the Windows example stages HIP's programs.
const HIP_RUN: &str = "core-hip_run_generic/core/clr/stage";

/// A private copy of the Windows example tree.
fn windows_tree() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("artifacts");
    ok(&Command::new("cp")
        .arg("-a")
        .arg(fixtures::shared_windows())
        .arg(&copy)
        .output()
        .unwrap());
    (tmp, copy)
}

/// Writes `relpath` (parents made) below `root` with a few bytes.
fn add(root: &Path, relpath: &str) -> PathBuf {
    let path = root.join(relpath);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, b"payload\n").unwrap();
    path
}

/// `build --platform-tag win_amd64 extra…` of `artifacts` into a fresh
/// destination.
fn build_windows(artifacts: &Path, extra: &[&str]) -> (tempfile::TempDir, Output) {
    let dest = tempfile::tempdir().unwrap();
    let mut flags = vec!["--platform-tag", "win_amd64"];
    flags.extend(extra);
    let out = build_into(artifacts, dest.path(), &flags);
    (dest, out)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 1 with one error line; the line.
fn refusal(out: &Output) -> String {
    let text = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let errors: Vec<&str> = text.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(errors.len(), 1, "{text}");
    errors[0].to_owned()
}

#[test]
fn a_windows_build_refuses_every_name_windows_cannot_hold() {
    let cases = [
        ("bin/CON", "`CON` is the device CON to Windows"),
        ("bin/aux.txt", "`aux.txt` is the device AUX to Windows"),
        ("bin/nul.dll", "`nul.dll` is the device NUL"),
        ("bin/COM1", "`COM1` is the device COM1"),
        ("bin/LPT9.log", "`LPT9.log` is the device LPT9"),
        ("bin/com\u{b2}.txt", "is the device COM\u{b2}"),
        ("bin/name.", "ends in a dot or a space"),
        ("bin/name ", "ends in a dot or a space"),
        ("bin/a:b", "holds `:`, which NTFS takes as a stream of `a`"),
        ("bin/a*b", "holds `*`"),
        ("bin/a?b", "holds `?`"),
        ("bin/a\"b", "holds `\"`"),
        ("bin/a<b", "holds `<`"),
        ("bin/a>b", "holds `>`"),
        ("bin/a|b", "holds `|`"),
        ("share/CON/readme.txt", "`CON` is the device CON"),
    ];
    let mut problems = Vec::new();
    for (relpath, reason) in cases {
        let (_tmp, tree) = windows_tree();
        let file = add(&tree.join(HIP_RUN), relpath);
        let (dest, out) = build_windows(&tree, &[]);
        let line = refusal(&out);
        if !line.contains(&file.display().to_string()) || !line.contains(reason) {
            problems.push(format!("{relpath}: {line}"));
        }
        if dest.path().join("dist").exists() {
            problems.push(format!("{relpath}: dist/ was written"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");

    // One message in full: the file, the name it ships as, why, what to do,
    // and the other names that would fail (here: the devel tree's copy).
    let (tmp, tree) = windows_tree();
    add(&tree.join(HIP_RUN), "bin/aux.txt");
    let line = refusal(&build_windows(&tree, &[]).1);
    let line = line.replace(&tmp.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!(line, @"therock-package: error: [TMP]/artifacts/core-hip_run_generic/core/clr/stage/bin/aux.txt: shipped as _rocm_sdk_core/bin/aux.txt in rocm-sdk-core, but `aux.txt` is the device AUX to Windows, which opens the device instead of a file; a win_amd64 package cannot hold it: rename or remove it in its artifact (1 more such name: _rocm_sdk_devel/bin/aux.txt)");
}

#[test]
fn names_that_differ_only_in_case_are_refused_in_a_package_and_in_the_devel_tarball() {
    // Beside `bin/hipInfo.exe` of the same artifact and package.
    let (tmp, tree) = windows_tree();
    add(&tree.join(HIP_RUN), "bin/HIPINFO.EXE");
    let line = refusal(&build_windows(&tree, &[]).1);
    let line = line.replace(&tmp.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!(line, @"therock-package: error: [TMP]/artifacts/core-hip_run_generic/core/clr/stage/bin/HIPINFO.EXE and [TMP]/artifacts/core-hip_run_generic/core/clr/stage/bin/hipInfo.exe: shipped as _rocm_sdk_core/bin/HIPINFO.EXE (rocm-sdk-core) and _rocm_sdk_core/bin/hipInfo.exe (rocm-sdk-core), one name to Windows (they differ only in case), so on install one would overwrite the other: rename one of them in its artifact (1 more such name: _rocm_sdk_devel/bin/HIPINFO.EXE / _rocm_sdk_devel/bin/hipInfo.exe)");

    // A header directory spelled differently: only the devel tarball holds
    // the development headers of rocBLAS.
    let (tmp, tree) = windows_tree();
    add(
        &tree.join("blas_dev_generic/math-libs/BLAS/rocBLAS/stage"),
        "include/ROCBLAS/internal.h",
    );
    let line = refusal(&build_windows(&tree, &[]).1);
    let line = line.replace(&tmp.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!(line, @"therock-package: error: [TMP]/artifacts/blas_dev_generic/math-libs/BLAS/rocBLAS/stage/include/ROCBLAS/internal.h and [TMP]/artifacts/blas_dev_generic/math-libs/BLAS/rocBLAS/stage/include/rocblas/rocblas.h: shipped as _rocm_sdk_devel/include/ROCBLAS/ (rocm-sdk-devel) and _rocm_sdk_devel/include/rocblas/ (rocm-sdk-devel), one name to Windows (they differ only in case), so on install one would overwrite the other: rename one of them in its artifact");
}

#[test]
fn names_that_differ_only_in_case_are_refused_across_the_libraries_and_device_wheels() {
    // The libraries wheel and the device wheels install into one
    // directory, `_rocm_sdk_libraries/`.
    let copy = copy_of_artifacts(Layout::Tree);
    add(
        &copy
            .path()
            .join("blas_lib_generic/math-libs/BLAS/rocBLAS/stage"),
        "lib/.kpack/BLAS_LIB_GFX1100.kpack",
    );
    let line = refusal(&build_windows(copy.path(), &[]).1);
    let line = line.replace(&copy.path().display().to_string(), "[TMP]");
    insta::assert_snapshot!(line, @"therock-package: error: [TMP]/blas_lib_generic/math-libs/BLAS/rocBLAS/stage/lib/.kpack/BLAS_LIB_GFX1100.kpack and [TMP]/blas_lib_gfx1100/math-libs/BLAS/rocBLAS/stage/lib/.kpack/blas_lib_gfx1100.kpack: shipped as _rocm_sdk_libraries/lib/.kpack/BLAS_LIB_GFX1100.kpack (rocm-sdk-libraries) and _rocm_sdk_libraries/lib/.kpack/blas_lib_gfx1100.kpack (rocm-sdk-device-gfx1100), one name to Windows (they differ only in case), so on install one would overwrite the other: rename one of them in its artifact");
    // A Linux build of the same tree holds both names.
    let dest = tempfile::tempdir().unwrap();
    ok(&build_into(
        copy.path(),
        dest.path(),
        &["--no-build-packages"],
    ));
}

#[test]
fn installed_paths_too_long_for_windows_are_warned_about_naming_the_longest() {
    let (_tmp, tree) = windows_tree();
    let (_dest, out) = build_windows(&tree, &["--no-build-packages"]);
    ok(&out);
    assert!(!stderr(&out).contains("MAX_PATH"), "{}", stderr(&out));
    let deep = format!("share/doc/{}/notes.txt", ["section"; 25].join("/"));
    let shorter = format!("share/doc/{}/n.txt", ["section"; 24].join("/"));
    add(&tree.join("base_lib_generic/base/aux-overlay/stage"), &deep);
    add(
        &tree.join("base_lib_generic/base/aux-overlay/stage"),
        &shorter,
    );
    let (_dest, out) = build_windows(&tree, &["--no-build-packages"]);
    ok(&out);
    let warnings: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.contains("MAX_PATH"))
        .map(str::to_owned)
        .collect();
    assert_eq!(warnings.len(), 1, "{}", stderr(&out));
    let longest = format!("_rocm_sdk_devel/{deep}");
    let warning = warnings[0].replace(&longest, "[LONGEST]");
    insta::assert_snapshot!(warning.trim(), @r"WARN 18 installed paths reach Windows' limit of 260 characters (MAX_PATH) below a typical site-packages (C:\Users\username\AppData\Local\Programs\Python\Python312\Lib\site-packages, 75 characters); the longest, [LONGEST] in rocm-sdk-devel, is 311 characters there: installers fail on such paths unless long paths are enabled (LongPathsEnabled), so shorten them if you can");
}

/// The `:xnack±` variants TheRock builds for Linux only stay out of a
/// Windows build, the artifacts named in one warning; the base target's
/// device wheel takes the plain artifacts.
#[test]
fn feature_variants_are_left_out_of_windows_packages() {
    let artifacts = common::artifacts(fixtures::ExampleMode::Kpack);
    let (dest, out) = build_windows(&artifacts, &["--no-build-packages"]);
    ok(&out);
    let log = stderr(&out);
    let left_out: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("left out of the Windows packages"))
        .collect();
    assert_eq!(left_out.len(), 1, "{log}");
    insta::assert_snapshot!(left_out[0].trim(), @"WARN left out of the Windows packages: blas_lib_gfx942:xnack+, fft_lib_gfx942:xnack+ (device artifacts of the feature variant gfx942:xnack+ of gfx942, which TheRock builds for Linux only; their files' names hold `:`, which NTFS takes as a stream, so no Windows package can hold them)");
    let plan: serde_json::Value =
        serde_json::from_slice(&fs::read(dest.path().join("plan.json")).unwrap()).unwrap();
    let dests: Vec<&str> = plan["packages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["files"].as_array().unwrap())
        .map(|f| f["dest"].as_str().unwrap())
        .collect();
    assert!(dests.iter().all(|d| !d.contains(':')), "{dests:?}");
    assert!(
        dests.contains(&"_rocm_sdk_libraries/lib/.kpack/blas_lib_gfx942.kpack"),
        "{dests:?}"
    );
}

/// Writes a `win_amd64` wheel by hand (Python's zipfile, RECORD right):
/// `members` are `(path, bytes)`; a member named `*/_devel.tar` gets a tar
/// of `tar_members`.
fn hand_made_wheel(dir: &Path, name: &str, members: &[&str], tar_members: &[&str]) -> PathBuf {
    const SCRIPT: &str = r#"
import base64, hashlib, io, sys, tarfile, zipfile
out, name, members, tar_members = sys.argv[1], sys.argv[2], sys.argv[3].split("\n"), sys.argv[4].split("\n")
dist_info = f"{name}-7.1.0.dist-info"
files = {}
for m in filter(None, members):
    if m.endswith("/_devel.tar"):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
            for t in filter(None, tar_members):
                info = tarfile.TarInfo(t)
                info.size = 1
                tar.addfile(info, io.BytesIO(b"x"))
        files[m] = buf.getvalue()
    else:
        files[m] = b"payload\n"
files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.4\nName: {name.replace('_', '-')}\nVersion: 7.1.0\n".encode()
files[f"{dist_info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: false\nTag: py3-none-win_amd64\n"
rows = []
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    rows.append(f"{path},sha256={digest},{len(data)}")
rows.append(f"{dist_info}/RECORD,,")
files[f"{dist_info}/RECORD"] = ("\n".join(rows) + "\n").encode()
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for path, data in files.items():
        z.writestr(path, data)
"#;
    let wheel = dir.join(format!("{name}-7.1.0-py3-none-win_amd64.whl"));
    ok(&Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(&wheel)
        .arg(name)
        .arg(members.join("\n"))
        .arg(tar_members.join("\n"))
        .output()
        .unwrap());
    wheel
}

#[test]
fn verify_refuses_windows_wheels_holding_names_windows_cannot_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    fs::create_dir(&dist).unwrap();
    hand_made_wheel(
        &dist,
        "rocm_sdk_core",
        &[
            "_rocm_sdk_core/__init__.py",
            "_rocm_sdk_core/bin/aux.txt",
            "_rocm_sdk_core/bin/Foo.dll",
            "_rocm_sdk_core/bin/foo.dll",
            "_rocm_sdk_core/share/CON/a",
            "_rocm_sdk_core/share/CON/b",
        ],
        &[],
    );
    hand_made_wheel(
        &dist,
        "rocm_sdk_libraries",
        &["_rocm_sdk_core/BIN/x.dll"],
        &[],
    );
    hand_made_wheel(
        &dist,
        "rocm_sdk_devel",
        &["rocm_sdk_devel/_devel.tar"],
        &["_rocm_sdk_devel/bin/CON", "_rocm_sdk_devel/lib/x.lib"],
    );
    let report = fails(&verify(&[&dist], &[]));
    let report = report.replace(&dist.display().to_string(), "[DIST]");
    // The check's line and its problems, up to the next check's line.
    let check: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.contains("windows-names"))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || l.starts_with(' '))
        .map(|(_, l)| l)
        .collect();
    insta::assert_snapshot!(check.join("\n"), @r"
    FAILED  windows-names: every wheel that installs on Windows, and its devel tarball, holds only names Windows can hold, none differing from another installed path only in case (3 wheels that install on Windows)
            - [DIST]/rocm_sdk_core-7.1.0-py3-none-win_amd64.whl: _rocm_sdk_core/bin/aux.txt: `aux.txt` is the device AUX to Windows, which opens the device instead of a file; Windows cannot hold it (rebuild without it)
            - [DIST]/rocm_sdk_core-7.1.0-py3-none-win_amd64.whl: _rocm_sdk_core/share/CON/: `CON` is the device CON to Windows, which opens the device instead of a file; Windows cannot hold it (rebuild without it)
            - [DIST]/rocm_sdk_devel-7.1.0-py3-none-win_amd64.whl (rocm_sdk_devel/_devel.tar): _rocm_sdk_devel/bin/CON: `CON` is the device CON to Windows, which opens the device instead of a file; Windows cannot hold it (rebuild without it)
            - [DIST]/rocm_sdk_libraries-7.1.0-py3-none-win_amd64.whl and [DIST]/rocm_sdk_core-7.1.0-py3-none-win_amd64.whl: _rocm_sdk_core/BIN and _rocm_sdk_core/bin differ only in case, one name to Windows, so on install one overwrites the other (rebuild with one of them renamed)
            - [DIST]/rocm_sdk_core-7.1.0-py3-none-win_amd64.whl: _rocm_sdk_core/bin/Foo.dll and _rocm_sdk_core/bin/foo.dll differ only in case, one name to Windows, so on install one overwrites the other (rebuild with one of them renamed)
    ");
}
