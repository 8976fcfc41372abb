//! `therock-package verify` (issue 9): the seed bug report's two-platform
//! release fails without the cross-platform family flags, naming the missing
//! extras, and passes with them; one negative test per check.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{Build, RELEASE_FAMILY_FLAGS, ok, therock_package, two_platform_release};

/// The passing release, built once per test binary.
fn good_release() -> &'static (Build, Build) {
    static RELEASE: OnceLock<(Build, Build)> = OnceLock::new();
    RELEASE.get_or_init(|| two_platform_release(true))
}

fn verify(dirs: &[&Path], extra: &[&str]) -> Output {
    let mut args = vec!["verify".to_owned()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    therock_package(&args)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Fails with exit 1 (not an error: a report) and returns the report.
fn fails(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected a failed verification:\nstdout:\n{}\nstderr:\n{}",
        stdout(out),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(out)
}

/// A copy of a dist directory the test may damage.
fn copy_dist(dist: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("dist");
    common::publish(&[dist.to_owned()], &copy);
    (tmp, copy)
}

fn find(dir: &Path, prefix: &str) -> PathBuf {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix}* in {}", dir.display()))
}

/// Rewrites a wheel with Python's zipfile: `tamper` appends bytes to a
/// member (RECORD left as it was), `drop` removes a member and its RECORD row.
fn rewrite_wheel(wheel: &Path, member: &str, mode: &str) {
    const SCRIPT: &str = r"
import sys, zipfile
src, member, mode = sys.argv[1:4]
dst = src + '.new'
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as zout:
    assert member in zin.namelist(), member
    for info in zin.infolist():
        data = zin.read(info)
        if info.filename == member:
            if mode == 'drop':
                continue
            data += b'tampered'
        if mode == 'drop' and info.filename.endswith('.dist-info/RECORD'):
            data = b''.join(l + b'\n' for l in data.splitlines() if not l.startswith(member.encode() + b','))
        zout.writestr(info, data)
";
    ok(&Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(wheel)
        .args([member, mode])
        .output()
        .unwrap());
    fs::rename(format!("{}.new", wheel.display()), wheel).unwrap();
}

/// The report with the temporary directories named by role, and the
/// tightest tags of wheels with programs (they follow the glibc of the
/// machine that built the example) as `[HOST TAG]`.
fn redact(report: &str, dirs: &[(&Path, &str)]) -> String {
    let mut out = report.to_owned();
    for (dir, name) in dirs {
        out = out.replace(&dir.display().to_string(), name);
    }
    out.lines()
        .map(
            |line| match (line.find("satisfies "), line.find(" (needs up to ")) {
                (Some(at), Some(needs)) if at < needs => {
                    let end = needs + line[needs..].find(')').unwrap() + 1;
                    format!(
                        "{}satisfies [HOST TAG] (needs up to [HOST VERSIONS]){}\n",
                        &line[..at],
                        &line[end..]
                    )
                }
                _ => format!("{line}\n"),
            },
        )
        .collect()
}

#[test]
fn seed_scenario_without_family_flags_fails_naming_the_missing_extras() {
    let (linux, windows) = two_platform_release(false);
    let report = fails(&verify(&[&linux.dist(), &windows.dist()], &[]));
    // The upload race: one file name, two contents; the difference is the extras.
    assert!(
        report.contains("rocm-7.1.0.tar.gz have the same file name but different bytes (extras only in the first: device-gfx942"),
        "{report}"
    );
    // Whichever sdist wins the race, a Linux user loses gfx942.
    assert!(
        report.contains("rocm[device-gfx942] does not exist, so rocm_sdk_device_gfx942-7.1.0-py3-none-linux_x86_64.whl is unreachable on linux"),
        "{report}"
    );
    assert!(
        report.contains("rocm[device-all] on linux does not require rocm-sdk-device-gfx942==7.1.0"),
        "{report}"
    );
    // And the Linux sdist sends Windows users to a package that does not exist for them.
    assert!(
        report.contains(
            "requires rocm-sdk-device-gfx942==7.1.0; extra == \"device-gfx942\" on win32"
        ),
        "{report}"
    );
    insta::assert_snapshot!(
        "seed_without_flags",
        redact(
            &report,
            &[(&linux.dist(), "[LINUX]"), (&windows.dist(), "[WINDOWS]")]
        )
    );

    // The same failure as JSON, for CI.
    let json: serde_json::Value = serde_json::from_str(&fails(&verify(
        &[&linux.dist(), &windows.dist()],
        &["--json"],
    )))
    .unwrap();
    assert_eq!(json["ok"], false);
    let failed: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "failed")
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        ["identical-duplicates", "device-extras", "requirements"]
    );
}

#[test]
fn seed_scenario_with_family_flags_passes() {
    let (linux, windows) = good_release();
    let sdist = |b: &Build| fs::read(b.dist().join("rocm-7.1.0.tar.gz")).unwrap();
    assert_eq!(
        sdist(linux),
        sdist(windows),
        "the rocm sdist is the same bytes on both platforms"
    );
    let out = verify(&[&linux.dist(), &windows.dist()], &RELEASE_FAMILY_FLAGS);
    let report = ok(&out);
    assert!(
        report.contains("release verified: every check passed"),
        "{report}"
    );
    assert!(report.contains("ok      completeness"), "{report}");
    assert!(report.contains("ok      elf-links"), "{report}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&verify(&[&linux.dist(), &windows.dist()], &["--json"]))).unwrap();
    assert_eq!(json["ok"], true);
    assert_eq!(json["files"].as_array().unwrap().len(), 13);
    assert_eq!(
        json["checks"][5]["status"], "skipped",
        "no family lists: completeness skipped"
    );
}

#[test]
fn tampered_wheel_fails_its_record() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    let wheel = find(&dist, "rocm_sdk_libraries-");
    rewrite_wheel(&wheel, "_rocm_sdk_libraries/lib/librocblas.so.5", "tamper");
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("FAILED  well-formed"), "{report}");
    assert!(
        report.contains("rocm_sdk_libraries-7.1.0-py3-none-linux_x86_64.whl: RECORD: _rocm_sdk_libraries/lib/librocblas.so.5: RECORD says sha256="),
        "{report}"
    );
}

#[test]
fn mismatched_version_is_named() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    let other = Build::new(fixtures::ExampleMode::Kpack, &["--version", "7.1.1"]);
    fs::remove_file(find(&dist, "rocm_sdk_libraries-")).unwrap();
    let newer = find(&other.dist(), "rocm_sdk_libraries-");
    fs::copy(&newer, dist.join(newer.file_name().unwrap())).unwrap();
    let report = fails(&verify(&[&dist], &[]));
    assert!(
        report.contains("the rocm* packages carry 2 different versions: 7.1.0 ("),
        "{report}"
    );
    assert!(
        report.contains("7.1.1 (")
            && report.contains("rocm_sdk_libraries-7.1.1-py3-none-linux_x86_64.whl)"),
        "{report}"
    );
    // The device wheels pin the libraries wheel of their own version.
    assert!(
        report.contains("requires rocm-sdk-libraries==7.1.0 on linux, which nothing in the set provides (the set has rocm_sdk_libraries-7.1.1-py3-none-linux_x86_64.whl (7.1.1))"),
        "{report}"
    );
}

#[test]
fn missing_requirement_is_named() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    fs::remove_file(find(&dist, "rocm_sdk_libraries-")).unwrap();
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("FAILED  requirements"), "{report}");
    assert!(
        report.contains("rocm_sdk_device_gfx942-7.1.0-py3-none-linux_x86_64.whl: requires rocm-sdk-libraries==7.1.0 on linux, which nothing in the set provides"),
        "{report}"
    );
    assert!(
        report.contains("rocm-7.1.0.tar.gz: requires rocm-sdk-libraries==7.1.0; extra == \"libraries\" on linux (extra libraries)"),
        "{report}"
    );
}

#[test]
fn unresolvable_needed_is_named() {
    let (_tmp, dist) = copy_dist(&good_release().0.dist());
    // A core wheel without the HIP runtime, RECORD consistent: well-formed,
    // but the libraries that link against it no longer load.
    rewrite_wheel(
        &find(&dist, "rocm_sdk_core-"),
        "_rocm_sdk_core/lib/libamdhip64.so.7",
        "drop",
    );
    let report = fails(&verify(&[&dist], &[]));
    assert!(report.contains("ok      well-formed"), "{report}");
    assert!(report.contains("FAILED  elf-links"), "{report}");
    assert!(
        report.contains("linux: _rocm_sdk_libraries/lib/librocblas.so.5 (in rocm_sdk_libraries-7.1.0-py3-none-linux_x86_64.whl): NEEDED libamdhip64.so.7 not found in _rocm_sdk_libraries/lib, _rocm_sdk_core/lib,"),
        "{report}"
    );
}

#[test]
fn incomplete_family_list_is_named() {
    let dist = good_release().0.dist();
    let report = fails(&verify(
        &[&dist],
        &["--linux-amdgpu-families", "gfx94X-dcgpu;gfx110X-dgpu"],
    ));
    assert!(
        report.contains("linux: no device wheels for gfx1101, gfx1102 (expected gfx1100, gfx1101, gfx1102, gfx942 from --linux-amdgpu-families"),
        "{report}"
    );
    // An unknown family is a problem of the check, named.
    let report = fails(&verify(&[&dist], &["--linux-amdgpu-families", "gfx9000"]));
    assert!(
        report.contains("--linux-amdgpu-families: ") && report.contains("gfx9000"),
        "{report}"
    );
}

#[test]
fn differing_wheels_name_the_members() {
    let (linux, _) = good_release();
    let (_tmp, dist) = copy_dist(&linux.dist());
    rewrite_wheel(
        &find(&dist, "rocm_sdk_libraries-"),
        "_rocm_sdk_libraries/lib/libhipfft.so.0",
        "drop",
    );
    let report = fails(&verify(&[&linux.dist(), &dist], &[]));
    assert!(
        report.contains("(members: _rocm_sdk_libraries/lib/libhipfft.so.0 only in the first)"),
        "{report}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let out = therock_package(&["verify", "/nonexistent/dist"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/dist is not a directory"));
    let out = therock_package(&["verify"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn legacy_release_with_per_family_directories_passes() {
    // Each dist/{F}/ holds its own rocm sdist and devel wheel: different
    // bytes under one name there are by design, not an upload race.
    let build = Build::new(fixtures::ExampleMode::Legacy, &[]);
    let report = ok(&verify(
        &[&build.dist()],
        &["--linux-amdgpu-families", "gfx94X-dcgpu;gfx110X-all"],
    ));
    assert!(report.contains("ok      identical-duplicates"), "{report}");
    assert!(report.contains("ok      completeness"), "{report}");
    // A family the release lacks is named as a missing libraries wheel.
    let report = fails(&verify(
        &[&build.dist()],
        &["--linux-amdgpu-families", "gfx950-dcgpu"],
    ));
    assert!(
        report.contains("linux: no libraries wheels for gfx950-dcgpu"),
        "{report}"
    );
}
