//! Broken or hostile artifact directories that must never become packages:
//! each is refused with exit 1, one line on stderr naming the file and the
//! reason, and `dist/` left exactly as it was.

use crate::common;

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

use common::copy_of_artifacts as copy_of;
use fixtures::Layout;

const HIP: &str = "core-hip_lib_generic";
const HIP_LIB: &str = "core-hip_lib_generic/core/clr/stage/lib/libamdhip64.so.7.1.0";

/// Every path under `dir` (hidden ones too) with the bytes of files.
fn snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            if path.is_dir() {
                stack.push(path);
                out.push((rel, None));
            } else {
                out.push((rel, Some(fs::read(&path).unwrap())));
            }
        }
    }
    out.sort();
    out
}

/// `therock-package build` of `artifact_dir`, run through `wrapper` (a
/// command and its arguments, empty for none).
fn build(wrapper: &[&str], artifact_dir: &Path, dest: &Path, extra: &[&str]) -> (i32, String) {
    let binary = env!("CARGO_BIN_EXE_therock-package");
    let mut command = match wrapper.split_first() {
        Some((program, args)) => {
            let mut c = Command::new(program);
            c.args(args).arg(binary);
            c
        }
        None => Command::new(binary),
    };
    let out = command
        .arg("build")
        .arg("--artifact-dir")
        .arg(artifact_dir)
        .arg("--dest-dir")
        .arg(dest)
        .args(extra)
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("ROCM_SDK_WHEEL_PLATFORM_TAG")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Builds into a destination whose `dist/` holds an earlier release and
/// checks the refusal: exit 1, one line naming `named` and `reason`,
/// `dist/` unchanged. Returns what was wrong, if anything.
fn refusal_problem(
    wrapper: &[&str],
    artifact_dir: &Path,
    extra: &[&str],
    named: &Path,
    reason: &str,
) -> Option<String> {
    let dest = tempfile::tempdir().unwrap();
    let dist = dest.path().join("dist");
    fs::create_dir_all(dist.join("gfx942")).unwrap();
    fs::write(
        dist.join("rocm_sdk_core-7.0.0-py3-none-linux_x86_64.whl"),
        b"an earlier release",
    )
    .unwrap();
    fs::write(dist.join("gfx942/rocm-7.0.0.tar.gz"), b"an earlier sdist").unwrap();
    let before = snapshot(&dist);
    let (code, stderr) = build(wrapper, artifact_dir, dest.path(), extra);
    let named = named.display().to_string();
    let problem = if code != 1 {
        format!("exit {code}")
    } else if stderr.lines().count() != 1 {
        "not one line".to_owned()
    } else if !stderr.contains(&named) {
        format!("does not name {named}")
    } else if !stderr.contains(reason) {
        format!("does not say {reason:?}")
    } else if snapshot(&dist) != before {
        "dist/ changed".to_owned()
    } else {
        return None;
    };
    Some(format!("{named} ({reason}): {problem}: {stderr}"))
}

/// Asserts that no case had a problem.
fn assert_all_refused(problems: impl IntoIterator<Item = Option<String>>) {
    let problems: Vec<String> = problems.into_iter().flatten().collect();
    assert!(problems.is_empty(), "{problems:#?}");
}

fn refused(artifact_dir: &Path, named: &Path, reason: &str) -> Option<String> {
    refusal_problem(&[], artifact_dir, &[], named, reason)
}

fn assert_builds(artifact_dir: &Path) {
    let dest = tempfile::tempdir().unwrap();
    let (code, stderr) = build(&[], artifact_dir, dest.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_symlinked_directory_in_a_manifest_prefix_is_refused() {
    // `core/clr/stage` reached through `core/clr -> /elsewhere/clr`: the
    // host directory's files must not end up in rocm-sdk-core.
    let copy = copy_of(Layout::Tree);
    let host = tempfile::tempdir().unwrap();
    let clr = copy.path().join(HIP).join("core/clr");
    fs::rename(&clr, host.path().join("clr")).unwrap();
    symlink(host.path().join("clr"), &clr).unwrap();
    assert_all_refused([refused(copy.path(), &clr, "is a symlink")]);
}

// ---- compressed archives ----

fn extension(layout: Layout) -> &'static str {
    match layout {
        Layout::TarZst => "zst",
        Layout::TarXz => "xz",
        Layout::Tree => unreachable!("archives only"),
    }
}

fn decompress(bytes: &[u8], layout: Layout) -> Vec<u8> {
    let mut tar = Vec::new();
    match layout {
        Layout::TarZst => zstd::stream::read::Decoder::new(bytes)
            .unwrap()
            .read_to_end(&mut tar)
            .unwrap(),
        Layout::TarXz => liblzma::read::XzDecoder::new(bytes)
            .read_to_end(&mut tar)
            .unwrap(),
        Layout::Tree => unreachable!("archives only"),
    };
    tar
}

/// A tar writer holding every member of the tar `original`, to add more.
fn copy_of_tar(original: &[u8]) -> tar::Builder<Vec<u8>> {
    let mut out = tar::Builder::new(Vec::new());
    let mut archive = tar::Archive::new(original);
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let mut header = entry.header().clone();
        let path = entry.path().unwrap().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        out.append_data(&mut header, path, data.as_slice()).unwrap();
    }
    out
}

/// Compressed with a checksum (zstd's content checksum, xz's CRC64).
fn compress(tar: &[u8], layout: Layout) -> Vec<u8> {
    match layout {
        Layout::TarZst => {
            let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
            e.include_checksum(true).unwrap();
            e.write_all(tar).unwrap();
            e.finish().unwrap()
        }
        Layout::TarXz => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
            e.write_all(tar).unwrap();
            e.finish().unwrap()
        }
        Layout::Tree => unreachable!("archives only"),
    }
}

/// The tar `original` with a 1 MiB incompressible member added, so that
/// the middle of the compressed stream is stored bytes: flipping one there
/// changes the content and nothing else, and only the checksum tells.
fn with_filler(original: &[u8]) -> Vec<u8> {
    let mut out = copy_of_tar(original);
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let filler: Vec<u8> = (0..1 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[3]
        })
        .collect();
    let mut header = tar::Header::new_gnu();
    header.set_size(filler.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(1_700_000_000);
    out.append_data(
        &mut header,
        "core/clr/stage/share/filler.bin",
        filler.as_slice(),
    )
    .unwrap();
    out.into_inner().unwrap()
}

#[test]
fn corrupt_or_cut_compressed_streams_are_refused() {
    let mut problems = Vec::new();
    for layout in [Layout::TarZst, Layout::TarXz] {
        let copy = copy_of(layout);
        let archive = copy.path().join(format!("{HIP}.tar.{}", extension(layout)));
        let tar = with_filler(&decompress(&fs::read(&archive).unwrap(), layout));
        let good = compress(&tar, layout);
        fs::write(&archive, &good).unwrap();
        assert_builds(copy.path());

        let mut flipped = good.clone();
        flipped[good.len() / 2] ^= 0x20;
        fs::write(&archive, &flipped).unwrap();
        problems.push(refused(copy.path(), &archive, "corrupt or truncated"));

        // The last four bytes: zstd's content checksum, xz's footer magic.
        fs::write(&archive, &good[..good.len() - 4]).unwrap();
        problems.push(refused(copy.path(), &archive, "corrupt or truncated"));
    }
    assert_all_refused(problems);
}

#[test]
fn a_tar_cut_at_a_member_boundary_is_refused() {
    // Cut right before libamdhip64's data member: the links before it are
    // complete, the library (and the end-of-archive marker) are missing.
    let copy = copy_of(Layout::TarZst);
    let archive = copy.path().join(format!("{HIP}.tar.zst"));
    let tar = decompress(&fs::read(&archive).unwrap(), Layout::TarZst);
    let mut cut = None;
    for entry in tar::Archive::new(tar.as_slice()).entries().unwrap() {
        let entry = entry.unwrap();
        if entry.path_bytes().ends_with(b"libamdhip64.so.7.1.0") {
            cut = Some(usize::try_from(entry.raw_header_position()).unwrap());
        }
    }
    let cut = cut.expect("the archive holds libamdhip64");
    fs::write(&archive, compress(&tar[..cut], Layout::TarZst)).unwrap();
    assert_all_refused([refused(
        copy.path(),
        &archive,
        "truncated archive: no end-of-archive marker",
    )]);
}

// ---- unreadable artifacts and manifests that are not files ----

#[test]
fn an_artifact_directory_the_builder_cannot_read_is_refused() {
    let copy = copy_of(Layout::Tree);
    let artifact = copy.path().join(HIP);
    fs::set_permissions(&artifact, fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads anything: run the build without the capabilities that
    // bypass permission checks, so it meets EACCES as any user would.
    let wrapper = fixtures::privileges::without_permission_bypass();
    let problem = refusal_problem(
        wrapper,
        copy.path(),
        &[],
        &artifact.join("artifact_manifest.txt"),
        "Permission denied",
    );
    fs::set_permissions(&artifact, fs::Permissions::from_mode(0o755)).unwrap();
    assert_all_refused([problem]);
}

#[test]
fn a_manifest_that_is_not_a_regular_file_is_refused() {
    type Make = fn(&Path);
    let cases: [(&str, Make); 4] = [
        ("is a directory", |m| fs::create_dir(m).unwrap()),
        ("is a FIFO", |m| {
            let status = Command::new("mkfifo").arg(m).status().unwrap();
            assert!(status.success());
        }),
        ("is a symlink", |m| symlink("/dev/zero", m).unwrap()),
        ("is a symlink", |m| {
            fs::write(m.with_file_name("real_manifest.txt"), "core/clr/stage\n").unwrap();
            symlink("real_manifest.txt", m).unwrap();
        }),
    ];
    assert_all_refused(cases.map(|(reason, make)| {
        let copy = copy_of(Layout::Tree);
        let manifest = copy.path().join(HIP).join("artifact_manifest.txt");
        fs::remove_file(&manifest).unwrap();
        make(&manifest);
        refused(copy.path(), &manifest, reason)
    }));
}

// ---- runtime libraries ----

#[test]
fn an_empty_or_non_elf_runtime_library_is_refused() {
    let mut problems = Vec::new();
    for (bytes, reason) in [
        (&b""[..], "it is empty"),
        (&b"not a library\n"[..], "it is not an ELF file"),
    ] {
        let copy = copy_of(Layout::Tree);
        let lib = copy.path().join(HIP_LIB);
        fs::write(&lib, bytes).unwrap();
        problems.push(refused(copy.path(), &lib, reason));
    }
    // For a Windows tag the library table's DLL names are checked: an ELF
    // file named `amdhip64_7.dll` is not a DLL. (Without the `:xnack+`
    // artifacts, which a Windows build leaves out with a warning.)
    let copy = copy_of(Layout::Tree);
    for entry in fs::read_dir(copy.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(":xnack+") {
            fs::remove_dir_all(path).unwrap();
        }
    }
    let dll = copy
        .path()
        .join(HIP)
        .join("core/clr/stage/bin/amdhip64_7.dll");
    fs::create_dir_all(dll.parent().unwrap()).unwrap();
    fs::copy(copy.path().join(HIP_LIB), &dll).unwrap();
    problems.push(refusal_problem(
        &[],
        copy.path(),
        &["--platform-tag", "win_amd64"],
        &dll,
        "not a Windows DLL",
    ));
    assert_all_refused(problems);
}

// ---- what a manifest line is ----

const HIP_MANIFEST: &str = "core-hip_lib_generic/artifact_manifest.txt";

/// The member names of the only wheel in `dist` starting with `prefix`.
fn wheel_members(dist: &Path, prefix: &str) -> Vec<String> {
    let wheel = fixtures::files::entry_starting_with(dist, prefix);
    wheel_writer::WheelReader::open(&wheel)
        .unwrap()
        .member_names()
        .map(str::to_owned)
        .collect()
}

/// `therock-package plan` of `artifact_dir` (text): exit code and stderr,
/// each line trimmed (the log's level is indented).
fn plan(artifact_dir: &Path) -> (i32, String) {
    let out = common::therock_package(&["plan", "--artifact-dir", artifact_dir.to_str().unwrap()]);
    (out.status.code().unwrap_or(-1), trimmed(&out.stderr))
}

fn trimmed(stderr: &[u8]) -> String {
    let mut out = String::new();
    for line in String::from_utf8_lossy(stderr).lines() {
        out.push_str(line.trim());
        out.push('\n');
    }
    out
}

#[test]
fn a_byte_order_mark_before_the_first_manifest_line_is_not_part_of_it() {
    // An editor on Windows saved the manifest with a BOM: the line is
    // still `core/clr/stage`, and the HIP runtime still ships.
    let copy = copy_of(Layout::Tree);
    fs::write(copy.path().join(HIP_MANIFEST), "\u{feff}core/clr/stage\r\n").unwrap();
    let dest = tempfile::tempdir().unwrap();
    let (code, stderr) = build(&[], copy.path(), dest.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    let members = wheel_members(&dest.path().join("dist"), "rocm_sdk_core-");
    assert!(
        members
            .iter()
            .any(|m| m == "_rocm_sdk_core/lib/libamdhip64.so.7"),
        "{members:#?}"
    );
}

#[test]
fn a_manifest_line_with_whitespace_around_its_path_is_refused_naming_the_line() {
    let mut problems = Vec::new();
    for (text, line) in [
        ("core/clr/stage \n", r#"line 1 ("core/clr/stage ")"#),
        ("\n\tcore/clr/stage\n", r#"line 2 ("\tcore/clr/stage")"#),
    ] {
        let copy = copy_of(Layout::Tree);
        fs::write(copy.path().join(HIP_MANIFEST), text).unwrap();
        problems.push(refused(
            copy.path(),
            Path::new("core-hip_lib_generic: artifact_manifest.txt"),
            &format!("{line} starts or ends with whitespace"),
        ));
    }
    assert_all_refused(problems);
}

#[test]
fn an_artifact_that_contributes_no_file_to_any_package_is_a_warning() {
    // A misspelled manifest line: the directory does not exist, so the
    // artifact gives devel nothing. Said at the default level, once.
    let copy = copy_of(Layout::Tree);
    let prim = copy.path().join("prim_dev_generic");
    fs::write(
        prim.join("artifact_manifest.txt"),
        "math-libs/rocPRIM/stgae\n",
    )
    .unwrap();
    let (code, stderr) = plan(copy.path());
    assert_eq!(code, 0, "{stderr}");
    let stderr = stderr.replace(&copy.path().display().to_string(), "[ARTIFACTS]");
    insta::assert_snapshot!(stderr.trim_end(), @r#"WARN prim_dev_generic ([ARTIFACTS]/prim_dev_generic) contributes no file to any package: no directory its artifact_manifest.txt names exists ("math-libs/rocPRIM/stgae"); fix the manifest's lines"#);
}

// ---- file names ----

#[test]
fn a_control_character_in_a_file_name_is_refused_naming_the_file() {
    const REASON: &str = "the name holds a control character";
    let mut problems = Vec::new();
    // In a directory artifact: a file, a directory, a link's text; the
    // error shows the name escaped, so it stays one line.
    for (name, shown, make) in [
        ("bad\nname.txt", "bad\\nname.txt", 0),
        ("tab\tdir", "tab\\tdir", 1),
        ("esc\u{1b}[0m.txt", "esc\\u{1b}[0m.txt", 0),
        ("newline-link", "newline-link", 2),
    ] {
        let copy = copy_of(Layout::Tree);
        let lib = copy.path().join(HIP).join("core/clr/stage/lib");
        let path = lib.join(name);
        match make {
            0 => fs::write(&path, "x").unwrap(),
            1 => fs::create_dir_all(path.join("inside")).unwrap(),
            _ => symlink("target\nline", &path).unwrap(),
        }
        let reason = if make == 2 {
            "the link text holds a control character"
        } else {
            REASON
        };
        problems.push(refused(copy.path(), &lib.join(shown), reason));
    }
    // In an archive.
    let copy = copy_of(Layout::TarZst);
    let archive = copy.path().join(format!("{HIP}.tar.zst"));
    let mut out = copy_of_tar(&decompress(&fs::read(&archive).unwrap(), Layout::TarZst));
    let mut header = tar::Header::new_gnu();
    header.set_size(1);
    header.set_mode(0o644);
    header.set_mtime(1_700_000_000);
    out.append_data(&mut header, "core/clr/stage/lib/bad\nname", &b"x"[..])
        .unwrap();
    fs::write(
        &archive,
        compress(&out.into_inner().unwrap(), Layout::TarZst),
    )
    .unwrap();
    let mut shown = archive.clone().into_os_string();
    shown.push("!/core/clr/stage/lib/bad\\nname");
    problems.push(refused(copy.path(), Path::new(&shown), REASON));
    assert_all_refused(problems);
}

// ---- the build's GPU targets document ----

#[test]
fn a_dist_info_json_rocm_sdk_could_not_read_is_refused_naming_it() {
    let mut problems = Vec::new();
    for (text, reason) in [
        (
            "{\"dist_amdgpu_targets\": \"gfx942\",",
            "it is not valid JSON",
        ),
        (
            r#"{"dist_amdgpu_targets": ["gfx942", "gfx1100"]}"#,
            r#""dist_amdgpu_targets" is an array, not a string"#,
        ),
        ("{}", r#"it has no "dist_amdgpu_targets""#),
    ] {
        let copy = copy_of(Layout::Tree);
        let file = copy
            .path()
            .join("base_lib_generic/base/aux-overlay/stage/share/therock/dist_info.json");
        fs::write(&file, text).unwrap();
        problems.push(refused(copy.path(), &file, reason));
    }
    assert_all_refused(problems);
}

// ---- where the build writes ----

#[test]
fn a_destination_inside_the_artifact_directory_or_holding_it_is_refused() {
    // Inside a base directory, the next build would ship this one's wheels
    // in rocm-sdk-core; the destination need not exist yet.
    let copy = copy_of(Layout::Tree);
    let inside = copy.path().join(HIP).join("core/clr/stage/lib/out");
    let (code, stderr) = build(&[], copy.path(), &inside, &[]);
    assert_eq!((code, stderr.lines().count()), (1, 1), "{stderr}");
    assert!(
        stderr.contains("is inside --artifact-dir") && !inside.exists(),
        "{stderr}"
    );
    // The same through a link and `..`.
    let links = tempfile::tempdir().unwrap();
    symlink(copy.path().join(HIP), links.path().join("hip")).unwrap();
    let (code, stderr) = build(&[], copy.path(), &links.path().join("hip/new/../out"), &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("is inside --artifact-dir"), "{stderr}");
    assert!(!copy.path().join(HIP).join("out").exists());
    // The artifacts inside the destination (whose dist/ the build replaces).
    let dest = tempfile::tempdir().unwrap();
    let artifacts = dest.path().join("artifacts");
    fs::rename(copy.path(), &artifacts).unwrap();
    let (code, stderr) = build(&[], &artifacts, dest.path(), &["--no-build-packages"]);
    fs::rename(&artifacts, copy.path()).unwrap();
    assert_eq!((code, stderr.lines().count()), (1, 1), "{stderr}");
    assert!(stderr.contains("is inside --dest-dir"), "{stderr}");
    assert!(!dest.path().join("plan.json").exists());
}

// ---- ELF files ----

#[test]
fn an_elf_error_names_the_file_once() {
    let copy = copy_of(Layout::Tree);
    let lib = copy.path().join(HIP_LIB);
    let bytes = fs::read(&lib).unwrap();
    fs::write(&lib, &bytes[..200]).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let (code, stderr) = build(&[], copy.path(), dest.path(), &[]);
    assert_eq!(code, 1, "{stderr}");
    let named = lib.display().to_string();
    assert_eq!(stderr.matches(&named).count(), 1, "{stderr}");
    assert!(stderr.contains("the file is truncated"), "{stderr}");
}

/// Overwrites the SONAME `libamdhip64.so.7` in the HIP library's string
/// table with `soname` (padded with NULs, so the file keeps its layout).
fn with_soname(lib: &Path, soname: &str) {
    let old = b"libamdhip64.so.7\0";
    let mut bytes = fs::read(lib).unwrap();
    let at = bytes
        .windows(old.len())
        .position(|w| w == old)
        .expect("the library names its SONAME");
    let mut new = soname.as_bytes().to_vec();
    new.resize(old.len(), 0);
    bytes[at..at + old.len()].copy_from_slice(&new);
    fs::write(lib, bytes).unwrap();
}

#[test]
fn a_soname_that_is_not_a_file_name_is_refused_naming_the_library() {
    let mut problems = Vec::new();
    for soname in ["../../x", "", "lib/x.so"] {
        let copy = copy_of(Layout::Tree);
        let lib = copy.path().join(HIP_LIB);
        with_soname(&lib, soname);
        problems.push(refused(
            copy.path(),
            &lib,
            &format!("its SONAME {soname:?} is not a file name"),
        ));
    }
    assert_all_refused(problems);
}

#[test]
fn a_link_the_artifacts_cannot_follow_is_warned_about_once() {
    // Core and devel merge the same artifact: one warning per link, not
    // one per catalog and one more for the devel tarball.
    let copy = copy_of(Layout::Tree);
    let lib = copy.path().join(HIP).join("core/clr/stage/lib");
    symlink("/etc/hostname", lib.join("host-file")).unwrap();
    symlink("../../../../../../../../x", lib.join("climbs-out")).unwrap();
    // The profiler's artifacts feed no devel tree: its catalog says it.
    let profiler = copy
        .path()
        .join("rocprofiler-systems_lib_generic/profiler/rocprofiler-systems/stage/lib");
    symlink("/etc/hostname", profiler.join("librocprof-sys-host.so")).unwrap();
    let (code, stderr) = plan(copy.path());
    assert_eq!(code, 0, "{stderr}");
    insta::assert_snapshot!(stderr.trim_end(), @r#"
    WARN lib/climbs-out in core-hip_lib_generic: left out of the devel tarball: symlink to "../../../../../../../../x": it leads outside site-packages
    WARN lib/host-file in core-hip_lib_generic: left out of the devel tarball: symlink to "/etc/hostname": it reaches the absolute path "/etc/hostname"
    WARN symlink lib/librocprof-sys-host.so -> /etc/hostname in rocprofiler-systems_lib_generic not followed (absolute target outside the artifact tree); treated as dangling
    "#);
    // A build says the same, each once.
    let dest = tempfile::tempdir().unwrap();
    let (code, stderr) = build(&[], copy.path(), dest.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("WARN"))
        .map(str::trim)
        .collect();
    insta::assert_snapshot!(warnings.join("\n"), @r#"
    WARN lib/climbs-out in core-hip_lib_generic: left out of the devel tarball: symlink to "../../../../../../../../x": it leads outside site-packages
    WARN lib/host-file in core-hip_lib_generic: left out of the devel tarball: symlink to "/etc/hostname": it reaches the absolute path "/etc/hostname"
    WARN symlink lib/librocprof-sys-host.so -> /etc/hostname in rocprofiler-systems_lib_generic not followed (absolute target outside the artifact tree); treated as dangling
    "#);
}

// ---- search paths ----

const HIP_INFO: &str = "core-hip_run_generic/core/clr/stage/bin/hipInfo";
const DEVEL_ONLY_PROGRAM: &str =
    "blas_dev_generic/math-libs/BLAS/rocBLAS/stage/bin/rocblas-devtool";

/// The shipped HIP library's `(tag, search path)` in the core wheel of `dist`.
fn shipped_search_path(dist: &Path) -> (String, String) {
    let wheel = fixtures::files::entry_starting_with(dist, "rocm_sdk_core-");
    let bytes = wheel_writer::WheelReader::open(&wheel)
        .unwrap()
        .read_member("_rocm_sdk_core/lib/libamdhip64.so.7", u64::MAX)
        .unwrap();
    let elf = elf_surgery::ElfFile::parse(&mut std::io::Cursor::new(bytes)).unwrap();
    match (elf.rpath(), elf.runpath()) {
        (Some(rpath), None) => ("RPATH".into(), rpath.into()),
        other => panic!("expected a DT_RPATH only: {other:?}"),
    }
}

#[test]
fn absolute_search_path_entries_are_left_out_with_a_warning_unless_kept() {
    // A build host's directory before the library's own: as DT_RPATH it
    // would be searched first on every machine where it exists.
    let copy = copy_of(Layout::Tree);
    let host_dir = elf_surgery::SearchPathEdit::set(["/home/builder/TheRock/build/lib", "$ORIGIN"]);
    elf_surgery::edit_file(&copy.path().join(HIP_LIB), &host_dir).unwrap();
    // A program only the devel tarball ships (a dev artifact's), searched
    // the same way: `rocm-sdk init` unpacks it into site-packages.
    let devel_only = copy.path().join(DEVEL_ONLY_PROGRAM);
    fs::create_dir_all(devel_only.parent().unwrap()).unwrap();
    fs::copy(copy.path().join(HIP_INFO), &devel_only).unwrap();
    elf_surgery::edit_file(&devel_only, &host_dir).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let (code, stderr) = build(&[], copy.path(), dest.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    let stderr = stderr.replace(&copy.path().display().to_string(), "[ARTIFACTS]");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("WARN"))
        .map(str::trim)
        .collect();
    insta::assert_snapshot!(warnings.join("\n"), @"
    WARN [ARTIFACTS]/core-hip_lib_generic/core/clr/stage/lib/libamdhip64.so.7.1.0: left out the absolute search-path entries /home/builder/TheRock/build/lib (RUNPATH): they name directories of the build host, where any machine that has them could supply libraries; pass --keep-absolute-search-paths to ship them
    WARN [ARTIFACTS]/blas_dev_generic/math-libs/BLAS/rocBLAS/stage/bin/rocblas-devtool: left out the absolute search-path entries /home/builder/TheRock/build/lib (RUNPATH): they name directories of the build host, where any machine that has them could supply libraries; pass --keep-absolute-search-paths to ship them
    ");
    let dist = dest.path().join("dist");
    assert_eq!(
        shipped_search_path(&dist),
        (
            "RPATH".into(),
            "$ORIGIN:$ORIGIN/../../_rocm_sdk_core/lib/llvm/lib:$ORIGIN/../../_rocm_sdk_core/lib/rocm_sysdeps/lib".into()
        )
    );
    let report = common::ok(&common::verify(&[&dist], &[]));
    assert!(report.contains("ok      search-paths"), "{report}");

    // Kept on request: shipped, and `verify` names it.
    let kept = tempfile::tempdir().unwrap();
    let (code, stderr) = build(
        &[],
        copy.path(),
        kept.path(),
        &["--keep-absolute-search-paths"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("WARN"), "{stderr}");
    // The build says what verify will say, in its words.
    assert!(
        stderr.contains(
            "therock-package: warning: the release fails verify's search-paths check: \
             _rocm_sdk_core/lib/libamdhip64.so.7 (in rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl): \
             its RPATH searches the absolute directory /home/builder/TheRock/build/lib, a directory \
             of the build host; rebuild without --keep-absolute-search-paths (1 more)"
        ),
        "{stderr}"
    );
    let dist = kept.path().join("dist");
    assert!(
        shipped_search_path(&dist)
            .1
            .starts_with("/home/builder/TheRock/build/lib:$ORIGIN:"),
    );
    let report = common::fails(&common::verify(&[&dist], &[]));
    let problems: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("FAILED  search-paths"))
        .take_while(|l| !l.starts_with("skipped") && !l.starts_with("ok"))
        .collect();
    insta::assert_snapshot!(problems.join("\n"), @"
    FAILED  search-paths: no ELF file of a Linux wheel or of its devel tarball searches an absolute directory (a directory of the build host)
            - _rocm_sdk_core/lib/libamdhip64.so.7 (in rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl): its RPATH searches the absolute directory /home/builder/TheRock/build/lib, a directory of the build host; rebuild without --keep-absolute-search-paths
            - _rocm_sdk_devel/bin/rocblas-devtool (in rocm_sdk_devel-7.1.0-py3-none-linux_x86_64.whl (rocm_sdk_devel/_devel.tar)): its RPATH searches the absolute directory /home/builder/TheRock/build/lib, a directory of the build host; rebuild without --keep-absolute-search-paths
    ");
}

// ---- ELF files of every class ----

/// An i386 runtime as a multilib clang ships it (gcc-multilib, a
/// TEST_PACKAGES of xtask/src/ci.rs): a shared object whose RUNPATH names
/// a directory of the build host, then its own.
fn i386_runtime(dest: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("rt.c");
    fs::write(&source, "int __rt_probe(void) { return 32; }\n").unwrap();
    let status = Command::new("gcc")
        .args(["-m32", "-shared", "-fPIC", "-Wl,--enable-new-dtags"])
        .arg("-Wl,-rpath,/build/llvm-toolchain/stage2-bins/./lib:$ORIGIN/../lib")
        .arg("-Wl,-soname,libclang_rt.probe-i386.so")
        .arg("-o")
        .arg(dest)
        .arg(&source)
        .status()
        .expect("gcc runs");
    assert!(
        status.success(),
        "gcc -m32 (gcc-multilib) builds the runtime"
    );
}

#[test]
fn a_32_bit_library_with_the_build_hosts_search_path_is_edited_like_the_hosts_own() {
    let copy = copy_of(Layout::Tree);
    let runtime = copy
        .path()
        .join(HIP)
        .join("core/clr/stage/lib/libclang_rt.probe-i386.so");
    i386_runtime(&runtime);
    let dest = tempfile::tempdir().unwrap();
    let (code, stderr) = build(&[], copy.path(), dest.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("libclang_rt.probe-i386.so: left out the absolute search-path entries"),
        "{stderr}"
    );
    let dist = dest.path().join("dist");
    let wheel = fixtures::files::entry_starting_with(&dist, "rocm_sdk_core-");
    let bytes = wheel_writer::WheelReader::open(&wheel)
        .unwrap()
        .read_member("_rocm_sdk_core/lib/libclang_rt.probe-i386.so", 1 << 20)
        .unwrap();
    let elf = elf_surgery::ElfFile::parse(&mut std::io::Cursor::new(bytes)).unwrap();
    assert_eq!(elf.class(), Some(elf_surgery::ElfClass::Elf32));
    assert_eq!(
        (elf.rpath(), elf.runpath()),
        (
            Some(
                "$ORIGIN/../lib:$ORIGIN/../../_rocm_sdk_core/lib/llvm/lib:$ORIGIN/../../_rocm_sdk_core/lib/rocm_sysdeps/lib"
            ),
            None
        )
    );
    let report = common::ok(&common::verify(&[&dist], &[]));
    assert!(report.contains("ok      search-paths"), "{report}");
}

/// `elf` with its `e_machine` set to `EM_AMDGPU`: device code to the build,
/// which never edits it.
fn as_device_code(elf: &Path) {
    let mut bytes = fs::read(elf).unwrap();
    bytes[18..20].copy_from_slice(&object_em_amdgpu().to_le_bytes());
    fs::write(elf, bytes).unwrap();
}

fn object_em_amdgpu() -> u16 {
    224
}

#[test]
fn a_file_the_build_does_not_edit_that_searches_the_build_host_is_refused_or_reported_in_verifys_words()
 {
    // Device code in the devel tree whose RUNPATH names the build host:
    // `verify` reads every ELF file of the devel tarball, the build does
    // not edit device code.
    let copy = copy_of(Layout::Tree);
    let devel_only = copy.path().join(DEVEL_ONLY_PROGRAM);
    fs::create_dir_all(devel_only.parent().unwrap()).unwrap();
    fs::copy(copy.path().join(HIP_INFO), &devel_only).unwrap();
    let host_dir = elf_surgery::SearchPathEdit::set(["/home/builder/TheRock/build/lib", "$ORIGIN"]);
    elf_surgery::edit_file(&devel_only, &host_dir).unwrap();
    as_device_code(&devel_only);
    assert_all_refused([refused(
        copy.path(),
        &devel_only,
        "its RUNPATH searches the absolute directory /home/builder/TheRock/build/lib (of the \
         build host), and the build does not edit device code, object files or other ELF \
         types, so rocm-sdk-devel would ship it as it is",
    )]);

    // Kept on request, the build says what verify will say, in its words.
    let dest = tempfile::tempdir().unwrap();
    let (code, stderr) = build(
        &[],
        copy.path(),
        dest.path(),
        &["--keep-absolute-search-paths"],
    );
    assert_eq!(code, 0, "{stderr}");
    let warning = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix(
                "therock-package: warning: the release fails verify's search-paths check: ",
            )
        })
        .unwrap_or_else(|| panic!("no search-paths warning: {stderr}"));
    let dist = dest.path().join("dist");
    let report = common::fails(&common::verify(&[&dist], &[]));
    let problem = report
        .lines()
        .skip_while(|l| !l.starts_with("FAILED  search-paths"))
        .nth(1)
        .and_then(|l| l.trim().strip_prefix("- "))
        .unwrap_or_else(|| panic!("{report}"));
    let said = warning
        .split("; run `therock-package verify")
        .next()
        .unwrap();
    assert_eq!(said, problem);
    let failed: Vec<&str> = report.lines().filter(|l| l.starts_with("FAILED")).collect();
    assert_eq!(failed.len(), 1, "{report}");
    // Under --strict it is the verdict.
    let strict = tempfile::tempdir().unwrap();
    let (code, stderr) = build(
        &[],
        copy.path(),
        strict.path(),
        &["--keep-absolute-search-paths", "--strict"],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("therock-package: error: the release fails verify's search-paths check: "),
        "{stderr}"
    );
}

// ---- names every file system holds ----

/// The HIP archive artifact of a copy with one more file member at
/// `relpath` (below the manifest prefix).
fn archive_with_member(relpath: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let copy = copy_of(Layout::TarZst);
    let archive = copy.path().join(format!("{HIP}.tar.zst"));
    let mut out = copy_of_tar(&decompress(&fs::read(&archive).unwrap(), Layout::TarZst));
    let mut header = tar::Header::new_gnu();
    header.set_size(5);
    header.set_mode(0o644);
    header.set_mtime(1_700_000_000);
    out.append_data(
        &mut header,
        format!("core/clr/stage/{relpath}"),
        &b"data\n"[..],
    )
    .unwrap();
    fs::write(
        &archive,
        compress(&out.into_inner().unwrap(), Layout::TarZst),
    )
    .unwrap();
    (copy, archive)
}

#[test]
fn a_name_or_a_path_no_file_system_holds_is_refused_naming_it() {
    let mut problems = Vec::new();
    // A 304-byte name: ext4, XFS and NTFS hold at most 255.
    let (copy, archive) = archive_with_member(&format!("share/doc/{}.txt", "n".repeat(300)));
    problems.push(refused(
        copy.path(),
        &archive,
        "is 304 bytes long, more than the 255 bytes a file system holds in one name",
    ));
    // A 4296-character path of short names: past PATH_MAX below any
    // site-packages.
    let deep = format!("{}x.txt", format!("{}/", "d".repeat(199)).repeat(21));
    let (copy, archive) = archive_with_member(&format!("share/{deep}"));
    problems.push(refused(
        copy.path(),
        &archive,
        "stay within Linux's PATH_MAX of 4096 below a site-packages of up to 1024 bytes",
    ));
    assert_all_refused(problems);
}

// ---- one owner for every installed path ----

const DEVICE_LIB_942: &str = "blas_lib_gfx942/math-libs/BLAS/rocBLAS/stage/lib";
const DEVICE_LIB_1100: &str = "blas_lib_gfx1100/math-libs/BLAS/rocBLAS/stage/lib";
const GENERIC_LIB: &str = "blas_lib_generic/math-libs/BLAS/rocBLAS/stage/lib";

#[test]
fn two_packages_installed_together_shipping_one_path_are_refused_naming_both() {
    let mut problems = Vec::new();
    // A copy-paste error in a build: gfx942's artifact holds gfx1100's
    // archive, so both device wheels would ship it.
    let copy = copy_of(Layout::Tree);
    let from = copy
        .path()
        .join(DEVICE_LIB_1100)
        .join(".kpack/blas_lib_gfx1100.kpack");
    let into = copy
        .path()
        .join(DEVICE_LIB_942)
        .join(".kpack/blas_lib_gfx1100.kpack");
    fs::copy(&from, &into).unwrap();
    problems.push(refused(
        copy.path(),
        &into,
        "_rocm_sdk_libraries/lib/.kpack/blas_lib_gfx1100.kpack is shipped by both \
         rocm-sdk-device-gfx1100 and rocm-sdk-device-gfx942",
    ));
    // A device file at a path of the libraries wheel.
    let copy = copy_of(Layout::Tree);
    let relpath = "rocblas/library/Kernels.so-000-fallback.co";
    let into = copy.path().join(DEVICE_LIB_942).join(relpath);
    fs::copy(copy.path().join(GENERIC_LIB).join(relpath), &into).unwrap();
    problems.push(refused(
        copy.path(),
        &into,
        "_rocm_sdk_libraries/lib/rocblas/library/Kernels.so-000-fallback.co is shipped by both \
         rocm-sdk-device-gfx942 and rocm-sdk-libraries",
    ));
    assert_all_refused(problems);
}

// ---- messages ----

#[test]
fn a_manifest_version_with_control_characters_is_echoed_escaped() {
    let copy = copy_of(Layout::Tree);
    let manifest = copy
        .path()
        .join("base_lib_generic/base/aux-overlay/stage/share/therock/therock_manifest.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&fs::read(&manifest).unwrap()).unwrap();
    doc["version"] = "7.1.0\n\u{0}\u{1b}[31mred\u{1b}[0m".into();
    fs::write(&manifest, serde_json::to_vec(&doc).unwrap()).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_therock-package"))
        .arg("build")
        .arg("--artifact-dir")
        .arg(copy.path())
        .arg("--dest-dir")
        .arg(dest.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        !stderr.trim_end_matches('\n').chars().any(char::is_control),
        "a control character reached the terminal: {stderr:?}"
    );
    insta::assert_snapshot!(stderr.trim_end(), @r#"therock-package: error: therock_manifest.json "version" (pass --version to override it): version `7.1.0\n\0\u{1b}[31mred\u{1b}[0m` is not a valid PEP 440 version: after parsing `7.1.0\n`, found `\0\u{1b}[31mred\u{1b}[0m`, which is not part of a valid version; use a form like `7.1.0`, `7.1.0rc1`, `7.1.0a20250101` or `7.1.0.dev0+<sha>`"#);
}
