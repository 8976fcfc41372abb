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
