//! Broken or hostile artifact directories that must never become packages:
//! each is refused with exit 1, one line on stderr naming the file and the
//! reason, and `dist/` left exactly as it was.

mod common;

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
            - _rocm_sdk_core/lib/libamdhip64.so.7 (in rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl): its RPATH searches the absolute directory /home/builder/TheRock/build/lib, a directory of the build host; rebuild without --keep-absolute-search-paths (a file the build does not edit, 32-bit or another machine's, must be left out of the artifacts)
            - _rocm_sdk_devel/bin/rocblas-devtool (in rocm_sdk_devel-7.1.0-py3-none-linux_x86_64.whl (rocm_sdk_devel/_devel.tar)): its RPATH searches the absolute directory /home/builder/TheRock/build/lib, a directory of the build host; rebuild without --keep-absolute-search-paths (a file the build does not edit, 32-bit or another machine's, must be left out of the artifacts)
    ");
}
