//! What `verify`, `index` and `assemble` do with packages and shard outputs
//! they did not write (docs/behaviour.md#member-rules,
//! docs/behaviour.md#what-assemble-trusts): wheels and sdists whose
//! members an installer refuses or would write outside site-packages (with
//! RECORD regenerated to match), symlinks and FIFOs in a dist directory,
//! and shard manifests changed after their build. Each is refused with exit
//! 1 naming what is wrong, and nothing is written outside the destination.

use crate::common;

use std::fs;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{
    build_shards, copy_kpack_shards, copy_of_artifacts, fails, kpack_shards, ok, therock_package,
    verify,
};
use devel_tar::{DIGEST_FILE, TarDigest};
use fixtures::Layout;
use fixtures::raw_wheel::{FILE_MODE, RawWheel};

/// A wheel `evil-1.0` holding a harmless module and one `member`.
fn evil_wheel(name: &[u8], mode: u32) -> RawWheel {
    RawWheel::new("evil", "1.0")
        .file("evil/__init__.py", b"")
        .member(name, b"pwned\n", mode)
}

/// The hostile wheels: the member's name as the report quotes it, its
/// name and mode in the archive, and the rule the report names.
const HOSTILE: &[(&str, &[u8], u32, &str)] = &[
    (
        "../evil.txt",
        b"../evil.txt",
        FILE_MODE,
        "`.` or `..` segment",
    ),
    (
        "/tmp/evil.txt",
        b"/tmp/evil.txt",
        FILE_MODE,
        "absolute path",
    ),
    (
        "evil/../../evil.txt",
        b"evil/../../evil.txt",
        FILE_MODE,
        "`.` or `..` segment",
    ),
    (
        "evil\\\\..\\\\..\\\\evil.txt",
        b"evil\\..\\..\\evil.txt",
        FILE_MODE,
        "backslash in path",
    ),
    (
        "C:/evil.txt",
        b"C:/evil.txt",
        FILE_MODE,
        "a Windows drive prefix",
    ),
    (
        "evil/link",
        b"evil/link",
        0o120_777,
        "it is a symlink; packages carry regular files only",
    ),
    (
        "evil/suid",
        b"evil/suid",
        0o104_755,
        "its mode has the setuid, setgid or sticky bits 0o4000",
    ),
    (
        "evil/sgid",
        b"evil/sgid",
        0o102_755,
        "its mode has the setuid, setgid or sticky bits 0o2000",
    ),
    ("evil/tty", b"evil/tty", 0o020_666, "it is a device file"),
];

#[test]
fn verify_names_every_member_installers_refuse() {
    for (quoted, name, mode, rule) in HOSTILE {
        let work = tempfile::tempdir().unwrap();
        evil_wheel(name, *mode).write(work.path());
        let report = fails(&verify(&[work.path()], &[]));
        let expected = format!("evil-1.0-py3-none-linux_x86_64.whl: member \"{quoted}\" (");
        assert!(
            report.contains("FAILED  well-formed")
                && report.contains(&expected)
                && report.contains(rule)
                && report.contains(
                    "installers refuse it or would write it outside site-packages; rebuild the wheel"
                ),
            "{quoted}: {report}"
        );
    }
    let work = tempfile::tempdir().unwrap();
    RawWheel::new("evil", "1.0")
        .file("evil/a.py", b"print('checked')\n")
        .file("evil/a.py", b"print('installed')\n")
        .write(work.path());
    let report = fails(&verify(&[work.path()], &[]));
    assert!(
        report.contains(
            "member \"evil/a.py\" (a duplicate: the archive holds 2 members of this name)"
        ),
        "{report}"
    );
    let work = tempfile::tempdir().unwrap();
    RawWheel::new("evil", "1.0")
        .file("evil/__init__.py", b"")
        .record_row("../../bin/evil,sha256=AAAA,4")
        .write(work.path());
    let report = fails(&verify(&[work.path()], &[]));
    assert!(
        report.contains(
            "RECORD: ../../bin/evil: listed in RECORD but not a clean relative path inside the wheel (`.` or `..` segment)"
        ),
        "{report}"
    );
}

/// `evil-1.0.tar.gz` with PKG-INFO and pyproject.toml, then `extra`
/// (name, entry type, mode).
fn evil_sdist(dir: &Path, extra: (&str, tar::EntryType, u32)) -> PathBuf {
    let path = dir.join("evil-1.0.tar.gz");
    let file = fs::File::create(&path).unwrap();
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        file,
        flate2::Compression::default(),
    ));
    let mut add = |name: &str, kind: tar::EntryType, mode: u32, bytes: &[u8]| {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(kind);
        header.set_mode(mode);
        header.set_size(bytes.len() as u64);
        // Raw, so `..` gets in (`set_path` refuses it).
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        tar.append(&header, bytes).unwrap();
    };
    let pkg_info = b"Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n\n";
    add(
        "evil-1.0/PKG-INFO",
        tar::EntryType::Regular,
        0o644,
        pkg_info,
    );
    add(
        "evil-1.0/pyproject.toml",
        tar::EntryType::Regular,
        0o644,
        b"",
    );
    let (name, kind, mode) = extra;
    let bytes: &[u8] = if kind == tar::EntryType::Regular {
        b"pwned\n"
    } else {
        b""
    };
    add(name, kind, mode, bytes);
    tar.into_inner().unwrap().finish().unwrap();
    path
}

#[test]
fn sdists_get_the_same_member_rules() {
    for (extra, rule) in [
        (
            ("evil-1.0/suid", tar::EntryType::Regular, 0o4755),
            "member evil-1.0/suid is refused: its mode has the setuid, setgid or sticky bits 0o4000",
        ),
        (
            ("evil-1.0/fifo", tar::EntryType::Fifo, 0o644),
            "member evil-1.0/fifo: it is a FIFO; an sdist of this project holds regular files only",
        ),
        (
            ("evil-1.0/tty", tar::EntryType::Char, 0o644),
            "member evil-1.0/tty: it is a device file; an sdist of this project holds regular files only",
        ),
        (
            ("evil-1.0/../evil.txt", tar::EntryType::Regular, 0o644),
            "member evil-1.0/../evil.txt is not a clean relative path (`.` or `..` segment)",
        ),
    ] {
        let work = tempfile::tempdir().unwrap();
        evil_sdist(work.path(), extra);
        let report = fails(&verify(&[work.path()], &[]));
        assert!(report.contains(rule), "{rule}: {report}");
        let out = therock_package(&["index", work.path().to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let error = String::from_utf8_lossy(&out.stderr);
        assert!(
            error.contains("is not a well-formed sdist") && error.contains(rule),
            "{error}"
        );
        assert!(!work.path().join("index.html").exists());
    }
}

#[test]
fn index_reads_wheels_through_the_same_reader() {
    let work = tempfile::tempdir().unwrap();
    evil_wheel(b"../evil.txt", FILE_MODE).write(work.path());
    let out = therock_package(&["index", work.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let error =
        String::from_utf8_lossy(&out.stderr).replace(&work.path().display().to_string(), "[dir]");
    insta::assert_snapshot!(error, @r#"therock-package: error: cannot read the METADATA of [dir]/evil-1.0-py3-none-linux_x86_64.whl; rebuild the wheel or remove it from the directory: wheel [dir]/evil-1.0-py3-none-linux_x86_64.whl holds a member that installers refuse or that would land outside site-packages: "../evil.txt" (not a clean relative path: `.` or `..` segment); rebuild it, or remove it from the directory"#);
    assert!(!work.path().join("index.html").exists());
    assert!(
        !work
            .path()
            .join("evil-1.0-py3-none-linux_x86_64.whl.metadata")
            .exists()
    );
}

/// A devel wheel whose digest file does not describe its tarball would
/// make every `rocm-sdk init` refuse the tarball: `verify` names it
/// (docs/devel-tar.md#the-digest-file).
#[test]
fn verify_checks_the_devel_tarball_against_its_digest_file() {
    let tar = b"the bytes of a devel tarball\n".repeat(1000);
    let sound = TarDigest::of_reader("_devel.tar", tar.as_slice()).unwrap();
    let devel = |digest: &[u8]| {
        RawWheel::new("rocm_sdk_devel", "1.0")
            .file("rocm_sdk_devel/__init__.py", b"")
            .file("rocm_sdk_devel/_devel.tar", &tar)
            .file(&format!("rocm_sdk_devel/{DIGEST_FILE}"), digest)
    };
    let work = tempfile::tempdir().unwrap();
    devel(&sound.to_bytes()).write(work.path());
    let report = String::from_utf8_lossy(&verify(&[work.path()], &[]).stdout).into_owned();
    assert!(report.contains("ok      well-formed"), "{report}");

    let mut changed = tar.clone();
    changed[7] ^= 1;
    let other = TarDigest::of_reader("_devel.tar", changed.as_slice()).unwrap();
    let elsewhere = TarDigest {
        tar_name: "_devel.tar.zst".to_owned(),
        ..sound.clone()
    };
    for (what, digest, said) in [
        (
            "another tarball's",
            other.to_bytes(),
            format!(
                "rocm_sdk_devel/_devel.tar is {} bytes with blake3 {}, the digest file lists {} bytes with blake3 {}",
                sound.size,
                sound.blake3_hex(),
                other.size,
                other.blake3_hex()
            ),
        ),
        (
            "naming a missing tarball",
            elsewhere.to_bytes(),
            "it describes rocm_sdk_devel/_devel.tar.zst, which the wheel does not hold".to_owned(),
        ),
        (
            "not one",
            b"junk".to_vec(),
            "is not a digest file".to_owned(),
        ),
        (
            "another member's",
            TarDigest::of_reader("__init__.py", &b""[..])
                .unwrap()
                .to_bytes(),
            "it describes __init__.py, which is not a devel tarball's name".to_owned(),
        ),
    ] {
        let work = tempfile::tempdir().unwrap();
        devel(&digest).write(work.path());
        let report = fails(&verify(&[work.path()], &[]));
        assert!(
            report.contains("FAILED  well-formed")
                && report.contains("member rocm_sdk_devel/_devel.digest: ")
                && report.contains(&said)
                && report
                    .contains("rebuild the wheel (rocm-sdk init would refuse the devel tarball)"),
            "{what}: {report}"
        );
    }
}

/// A dist directory whose only package is a sound wheel, plus `add(dir)`.
fn dist_with(add: impl Fn(&Path)) -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let dist = work.path().join("dist");
    RawWheel::new("fine", "1.0")
        .file("fine/__init__.py", b"")
        .write(&dist);
    add(&dist);
    work
}

fn mkfifo(path: &Path) {
    ok(&Command::new("mkfifo").arg(path).output().unwrap());
}

/// A case of a dist directory: what it is, how to make it, what is said.
type DistCase = (&'static str, fn(&Path), &'static str);

#[test]
fn symlinks_and_fifos_in_a_dist_directory_are_refused() {
    let cases: [DistCase; 3] = [
        (
            "a symlinked wheel",
            |dist| {
                std::os::unix::fs::symlink(
                    "fine-1.0-py3-none-linux_x86_64.whl",
                    dist.join("other-1.0-py3-none-linux_x86_64.whl"),
                )
                .unwrap();
            },
            "[dist]/other-1.0-py3-none-linux_x86_64.whl is a symlink to fine-1.0-py3-none-linux_x86_64.whl; \
             a dist directory holds regular files only: put the file itself there, or remove it",
        ),
        (
            "a FIFO named like a wheel",
            |dist| mkfifo(&dist.join("fifo-1.0-py3-none-linux_x86_64.whl")),
            "[dist]/fifo-1.0-py3-none-linux_x86_64.whl is a FIFO; a dist directory holds regular files only",
        ),
        (
            "a symlinked directory",
            |dist| std::os::unix::fs::symlink("/usr", dist.join("gfx942")).unwrap(),
            "[dist]/gfx942 is a symlink to the directory /usr; a dist directory holds regular files only",
        ),
    ];
    for (what, add, said) in cases {
        let work = dist_with(add);
        let dist = work.path().join("dist");
        let redact = |text: &str| text.replace(&dist.display().to_string(), "[dist]");
        let report = redact(&fails(&verify(&[&dist], &[])));
        assert!(
            report.contains("FAILED  well-formed") && report.contains(said),
            "{what}: {report}"
        );
        let out = therock_package(&["index", dist.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
        let error = redact(&String::from_utf8_lossy(&out.stderr));
        assert!(error.contains(said), "{what}: {error}");
        assert!(!dist.join("index.html").exists(), "{what}");
    }
}

/// `therock-package assemble SHARDS... --dest-dir DEST extra...`.
fn assemble(shards: &[PathBuf], dest: &Path, extra: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_therock-package"));
    command
        .arg("assemble")
        .args(shards)
        .arg("--dest-dir")
        .arg(dest)
        .args(extra)
        .env_remove("SOURCE_DATE_EPOCH");
    command.output().unwrap()
}

/// Edits the JSON manifest of `shard`.
fn edit_manifest(shard: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let path = shard.join("shard.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut manifest);
    fs::write(&path, manifest.to_string()).unwrap();
}

/// Runs a refused `assemble` into `work/release`: exit 1, nothing
/// published, and the error with `work` written as `[work]`.
fn refused(shards: &[PathBuf], work: &Path, extra: &[&str]) -> String {
    let dest = work.join("release");
    let out = assemble(shards, &dest, extra);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        fs::read_dir(dest.join("dist")).map_or(true, |mut d| d.next().is_none()),
        "a refused assemble published files"
    );
    String::from_utf8_lossy(&out.stderr).replace(&work.display().to_string(), "[work]")
}

#[test]
fn assemble_never_writes_outside_its_destination() {
    let work = tempfile::tempdir().unwrap();
    let shards = copy_kpack_shards(work.path());
    // From the staging directory inside `release/`, this is `work/escaped`.
    for shard in &shards {
        edit_manifest(shard, |m| {
            m["selectors"][0]["subdir"] = "../../../escaped".into();
        });
    }
    let error = refused(&shards, work.path(), &[]);
    insta::assert_snapshot!(error, @r#"therock-package: error: [work]/shard-1-of-2/shard.json names the rocm sdist directory "../../../escaped", an unsafe path (`.` or `..` segment): a shard's paths are clean relative paths inside its dist/, so the manifest is corrupt or was changed after its build; rebuild the shard"#);
    assert!(
        !work.path().join("escaped").exists(),
        "assemble wrote outside --dest-dir"
    );

    let work = tempfile::tempdir().unwrap();
    let shards = copy_kpack_shards(work.path());
    edit_manifest(&shards[1], |m| {
        m["packages"][0]["path"] = "../../shard-1-of-2/dist/x.whl".into();
    });
    let error = refused(&shards, work.path(), &[]);
    assert!(
        error.contains(
            "[work]/shard-2-of-2/shard.json names the package \"../../shard-1-of-2/dist/x.whl\", an unsafe path (`.` or `..` segment)"
        ),
        "{error}"
    );
}

#[test]
fn assemble_plans_the_rocm_sdist_document_again() {
    let work = tempfile::tempdir().unwrap();
    let shards = copy_kpack_shards(work.path());
    // The same change in every manifest: another default target and a
    // console script that runs a program outside the package.
    for shard in &shards {
        edit_manifest(shard, |m| {
            let text = m["selectors"][0]["dist_info_json"].as_str().unwrap();
            let mut doc: serde_json::Value = serde_json::from_str(text).unwrap();
            doc["default_target"] = "gfx942".into();
            doc["console_scripts"][0]["relpath"] = "../../../../bin/sh".into();
            m["selectors"][0]["dist_info_json"] = doc.to_string().into();
        });
    }
    let error = refused(&shards, work.path(), &[]);
    insta::assert_snapshot!(error, @"therock-package: error: [work]/shard-1-of-2/shard.json carries a _dist_info.json for the rocm sdist of dist/ that differs from the one the release's version, family lists and packages give (`console_scripts`, `default_target` differ); the manifest was changed after its build: rebuild the shard");

    // One manifest alone changed: its plan's other shards disagree.
    let work = tempfile::tempdir().unwrap();
    let shards = copy_kpack_shards(work.path());
    edit_manifest(&shards[1], |m| {
        m["linux_amdgpu_families"] = "gfx94X-dcgpu".into();
    });
    let error = refused(&shards, work.path(), &[]);
    assert!(
        error.contains(
            "[work]/shard-1-of-2 (shard 1/2) and [work]/shard-2-of-2 (shard 2/2) of the linux_x86_64 plan"
        ) && error.contains("disagree on --linux-amdgpu-families: (not given) and `gfx94X-dcgpu`"),
        "{error}"
    );
}

/// Replaces the package of `shard` whose path contains `which` with
/// `wheel`'s bytes under the same name, and vouches for it in the manifest.
fn swap_package(shard: &Path, which: &str, wheel: &RawWheel) -> String {
    let mut name = String::new();
    edit_manifest(shard, |m| {
        let record = m["packages"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|p| p["path"].as_str().unwrap().contains(which))
            .unwrap();
        let bytes = wheel.to_bytes();
        let path = shard.join("dist").join(record["path"].as_str().unwrap());
        fs::write(&path, &bytes).unwrap();
        let sha = ok(&Command::new("sha256sum").arg(&path).output().unwrap());
        record["sha256"] = sha.split_whitespace().next().unwrap().into();
        record["size"] = bytes.len().into();
    });
    for entry in fs::read_dir(shard.join("dist")).unwrap() {
        let entry = entry.unwrap().file_name().to_string_lossy().into_owned();
        if entry.contains(which) {
            name = entry;
        }
    }
    name
}

#[test]
fn assemble_reads_wheels_through_the_same_reader() {
    let work = tempfile::tempdir().unwrap();
    let shards = copy_kpack_shards(work.path());
    let wheel = RawWheel::new("rocm_sdk_device_gfx942", "7.1.0")
        .file("_rocm_sdk_libraries/lib/x.co", b"")
        .member(
            b"_rocm_sdk_libraries/../../../evil.txt",
            b"pwned\n",
            FILE_MODE,
        );
    let name = swap_package(&shards[1], "device_gfx942", &wheel);
    let error = refused(&shards, work.path(), &[]);
    assert!(
        error.contains(&format!("cannot read [work]/shard-2-of-2/dist/{name}; rebuild shard 2/2"))
            && error.contains(
                "\"_rocm_sdk_libraries/../../../evil.txt\" (not a clean relative path: `.` or `..` segment)"
            ),
        "{error}"
    );
}

#[test]
fn assemble_writes_to_a_destination_that_is_not_utf8() {
    let work = tempfile::tempdir().unwrap();
    let dest = work
        .path()
        .join(std::ffi::OsStr::from_bytes(b"release-\xff"));
    let out = assemble(kpack_shards(), &dest, &[]);
    let text = ok(&out);
    assert!(text.contains("(verified, indexed)"), "{text}");
    assert!(dest.join("dist").join("index.html").is_file());
    assert!(dest.join("dist").join("rocm-7.1.0.tar.gz").is_file());
}

/// Shards below a directory whose name is not UTF-8, assembled into
/// another: `assemble` hands verify and the index writer paths, never
/// their text.
#[test]
fn assemble_reads_shards_from_a_directory_that_is_not_utf8() {
    let work = tempfile::tempdir().unwrap();
    let from = work
        .path()
        .join(std::ffi::OsStr::from_bytes(b"shards-\xfe"));
    fs::create_dir(&from).unwrap();
    let shards = copy_kpack_shards(&from);
    let dest = from.join(std::ffi::OsStr::from_bytes(b"release-\xff"));
    let out = assemble(&shards, &dest, &[]);
    let text = ok(&out);
    assert!(text.contains("(verified, indexed)"), "{text}");
    assert!(dest.join("dist").join("index.html").is_file());
    assert!(dest.join("dist").join("rocm-7.1.0.tar.gz").is_file());
}

#[test]
fn assemble_takes_verify_s_policy() {
    let work = tempfile::tempdir().unwrap();
    // The example built here needs glibc 2.34 (docs/verify.md).
    let error = refused(kpack_shards(), work.path(), &["--policy", "manylinux_2_28"]);
    assert!(
        error.contains("the assembled release fails verify, so nothing was written")
            && error.contains("FAILED  manylinux")
            && error.contains("(--policy manylinux_2_28)"),
        "{error}"
    );
}

/// A copy of the kpack example in which `libhipfft.so.0.1` needs
/// `libdriver.so.1`, which no artifact ships (a library the release leaves
/// to the system); `scratch` holds the compiler's files.
fn kpack_needing_a_system_library(scratch: &Path) -> tempfile::TempDir {
    let copy = copy_of_artifacts(Layout::Tree);
    let compile = |out: &Path, soname: &str, source: &str, link: &[&Path]| {
        let src = scratch.join("src.c");
        fs::write(&src, source).unwrap();
        ok(&Command::new("gcc")
            .args(["-shared", "-fPIC", &format!("-Wl,-soname,{soname}"), "-o"])
            .arg(out)
            .arg(&src)
            .args(link)
            .output()
            .unwrap());
    };
    let driver = scratch.join("libdriver.so.1");
    compile(
        &driver,
        "libdriver.so.1",
        "int drive(void) { return 1; }\n",
        &[],
    );
    let lib = copy
        .path()
        .join("fft_lib_generic/math-libs/rocFFT/stage/lib/libhipfft.so.0.1");
    compile(
        &lib,
        "libhipfft.so.0",
        "int drive(void); int hipfft(void) { return drive(); }\n",
        &[&driver],
    );
    copy
}

#[test]
fn assemble_warns_about_unresolved_links_as_build_does_and_takes_verify_s_exclude() {
    let work = tempfile::tempdir().unwrap();
    let tree = kpack_needing_a_system_library(work.path());
    let shards = build_shards(&work.path().join("shards"), tree.path(), 2, &[]);
    // `--strict`: refused, as verify refuses it.
    let error = refused(&shards, work.path(), &["--strict"]);
    assert!(
        error.contains("FAILED  elf-links")
            && error.contains("_rocm_sdk_libraries/lib/libhipfft.so.0")
            && error.contains("NEEDED libdriver.so.1 not found"),
        "{error}"
    );
    // Without it: written, with build's one warning line.
    let warned = work.path().join("warned");
    let out = assemble(&shards, &warned, &[]);
    let text = ok(&out);
    assert!(text.contains("(verified, indexed)"), "{text}");
    let stderr =
        String::from_utf8_lossy(&out.stderr).replace(&work.path().display().to_string(), "[work]");
    insta::assert_snapshot!(stderr.trim_end(), @"therock-package: warning: the release fails verify's ELF-link check: 1 ELF file has unresolved NEEDED entries, the first: _rocm_sdk_libraries/lib/libhipfft.so.0 (in rocm_sdk_libraries-7.1.0-py3-none-linux_x86_64.whl): NEEDED libdriver.so.1 not found in _rocm_sdk_core/lib, _rocm_sdk_core/lib/rocm_sysdeps/lib, _rocm_sdk_core/lib/host-math/lib, _rocm_sdk_core/lib/llvm/lib, and it is neither an allowed system library nor the loader; run `therock-package verify [work]/warned/dist` to see all, and give it `--exclude SONAME` for libraries left to the system on purpose");
    let json = ok(&assemble(
        &shards,
        &work.path().join("json"),
        &["--json", "-q"],
    ));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["elf_links"]["ok"], false, "{json}");
    assert_eq!(json["elf_links"]["unresolved_files"], 1, "{json}");
    // Another check failing besides the links: refused without `--strict`
    // too (the example needs glibc 2.34).
    let error = refused(&shards, work.path(), &["--policy", "manylinux_2_28"]);
    assert!(
        error.contains("FAILED  elf-links") && error.contains("FAILED  manylinux"),
        "{error}"
    );

    let dest = work.path().join("release");
    let text = ok(&assemble(&shards, &dest, &["--exclude", "libdriver.so.1"]));
    assert!(text.contains("(verified, indexed)"), "{text}");
    let report = ok(&verify(
        &[&dest.join("dist")],
        &["--exclude", "libdriver.so.1"],
    ));
    assert!(report.contains("excluded: libdriver.so.1"), "{report}");
    fails(&verify(&[&dest.join("dist")], &[]));
}

/// The lines of `check`'s section of a text report: its status line and
/// its problems.
fn section<'r>(report: &'r str, check: &str) -> Vec<&'r str> {
    let mut lines = report
        .lines()
        .skip_while(|l| !l[8.min(l.len())..].starts_with(check));
    let head = lines.next().into_iter();
    head.chain(lines.take_while(|l| l.starts_with(' ')))
        .collect()
}

#[test]
fn verify_names_paths_no_file_system_holds_and_paths_two_wheels_installed_together_ship() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}x.txt", format!("{}/", "d".repeat(200)).repeat(21));
    RawWheel::new("long_names", "1.0")
        .file(&format!("long_names/{}.txt", "n".repeat(300)), b"x\n")
        .file(&format!("long_names/{deep}"), b"y\n")
        .write(dir.path());
    RawWheel::new("first", "1.0")
        .file("shared/same.txt", b"one\n")
        .file("shared/node", b"a file\n")
        .write(dir.path());
    RawWheel::new("second", "1.0")
        .file("shared/same.txt", b"two\n")
        .file("shared/node/below.txt", b"below a directory\n")
        .write(dir.path());
    let report =
        fails(&verify(&[dir.path()], &[])).replace(&dir.path().display().to_string(), "[DIR]");
    let lines: Vec<&str> = section(&report, "name-lengths")
        .into_iter()
        .chain(section(&report, "one-owner"))
        .collect();
    insta::assert_snapshot!(lines.join("\n"), @r#"
    FAILED  name-lengths: every path a wheel or its devel tarball installs has names of at most 255 bytes and fits Linux's PATH_MAX below a site-packages (3 wheels)
            - [DIR]/long_names-1.0-py3-none-linux_x86_64.whl: long_names/nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn…(165 characters)…nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn.txt: the name `nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn…` is 304 bytes long, more than the 255 bytes a file system holds in one name, so installers fail on it (File name too long); rebuild without it (shorten or rename it in its artifact)
            - [DIR]/long_names-1.0-py3-none-linux_x86_64.whl: long_names/ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd…(4087 characters)…dddddddddddddddddddddddddddddddddddddddddddd/x.txt: the installed path is 4237 bytes long, more than the 3070 bytes that stay within Linux's PATH_MAX of 4096 below a site-packages of up to 1024 bytes, so installers fail on it (File name too long); rebuild without it (shorten or rename it in its artifact)
    FAILED  one-owner: no two wheels installed together (on one platform) ship the same path
            - shared/node is a file in first and a directory in second: the two cannot be installed together ([DIR]/first-1.0-py3-none-linux_x86_64.whl and [DIR]/second-1.0-py3-none-linux_x86_64.whl); rebuild with the file in one of them
            - shared/same.txt is shipped by both first and second: installed together, one overwrites the other's file and uninstalling either deletes it ([DIR]/first-1.0-py3-none-linux_x86_64.whl and [DIR]/second-1.0-py3-none-linux_x86_64.whl); rebuild with the file in one of them
    "#);
    assert!(report.contains("ok      well-formed"), "{report}");
}
