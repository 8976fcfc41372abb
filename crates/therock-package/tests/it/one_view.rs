//! One view of a release (docs/verify.md#one-reading): every case of the
//! table of packages readers were found to read differently is refused
//! by `verify` with one line naming the package and the member, and by
//! `assemble` where a shard can carry it; and the decompression bombs
//! leave `verify`, `index` and `assemble` under 256 MiB of memory (the
//! child's peak resident set, from `wait4`).
//!
//! The cases come from `fixtures::hostile`, built from the example's own
//! packages; the differential oracle over all of them is `tests/oracle.rs`.

// The measurements and verdicts are printed for the log of a run.
#![allow(clippy::print_stderr)]

use crate::common;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{Build, copy_kpack_shards, fails};
use fixtures::ExampleMode;
use fixtures::hostile::tar_model::TarModel;
use fixtures::hostile::{
    Case, bombs, device_wheel_cases, member_content, sdist_cases, wheel_cases, with_member_content,
};

/// The most memory a run may hold on a bomb.
const MAX_RSS_MIB: i64 = 256;

/// The program under test (`THEROCK_PACKAGE_UNDER_TEST` names another
/// build, to measure the readers before these).
fn program() -> PathBuf {
    std::env::var_os("THEROCK_PACKAGE_UNDER_TEST").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_therock-package")),
        PathBuf::from,
    )
}

fn release() -> PathBuf {
    Build::shared(ExampleMode::Kpack).dist()
}

fn source(prefix: &str) -> (Vec<u8>, String) {
    let path = fixtures::files::entry_starting_with(&release(), prefix);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    (fs::read(&path).unwrap(), name)
}

/// The table's cases, with the member each refusal must name.
fn table() -> Vec<(Case, &'static str)> {
    let (wheel, wheel_name) = source("rocm_profiler-");
    let (sdist, sdist_name) = source("rocm-");
    let members = [
        (
            "table-eocd-count-hides-a-record",
            "rocm_profiler/__init__.py",
        ),
        (
            "table-metadata-lone-cr",
            "rocm_profiler-7.1.0.dist-info/METADATA",
        ),
        (
            "table-wheel-version-2",
            "rocm_profiler-7.1.0.dist-info/WHEEL",
        ),
        (
            "table-data-scripts",
            "rocm_profiler-7.1.0.data/scripts/evil",
        ),
        (
            "table-data-data",
            "rocm_profiler-7.1.0.data/data/etc/evil.conf",
        ),
        ("table-elf-declares-1tib", "_rocm_profiler/lib/libbomb.so"),
        (
            "table-pax-path-and-gnu-long-name",
            "rocm-7.1.0/build_backend/rocm_sdk_build_backend.py",
        ),
        (
            "table-two-gzip-members",
            "rocm-7.1.0/build_backend/rocm_sdk_build_backend.py",
        ),
        (
            "table-devel-links-names-a-devel-directory",
            "_rocm_sdk_libraries/.devel_links/gfx942.json",
        ),
    ];
    let (device, device_name) = source("rocm_sdk_device_gfx942-");
    let mut cases = wheel_cases(&wheel, &wheel_name);
    cases.extend(sdist_cases(&sdist, &sdist_name));
    cases.extend(device_wheel_cases(&device, &device_name));
    let table: Vec<(Case, &str)> = cases
        .into_iter()
        .filter(|c| c.table)
        .map(|c| {
            let member = members
                .iter()
                .find(|(name, _)| *name == c.name)
                .unwrap_or_else(|| panic!("{} names its member here", c.name))
                .1;
            (c, member)
        })
        .collect();
    assert_eq!(table.len(), members.len(), "every case of the table");
    table
}

/// The example release in `dir` (hard links), with `name` replaced by
/// `bytes`.
fn release_with(dir: &Path, name: &str, bytes: &[u8]) {
    fs::create_dir_all(dir).unwrap();
    for entry in fs::read_dir(release()).unwrap() {
        let entry = entry.unwrap();
        let file = entry.file_name().to_string_lossy().into_owned();
        if file != name && entry.file_type().unwrap().is_file() {
            fs::hard_link(entry.path(), dir.join(&file)).unwrap();
        }
    }
    fs::write(dir.join(name), bytes).unwrap();
}

/// `verify DIR` by the program under test.
fn verify_release(dir: &Path) -> std::process::Output {
    Command::new(program())
        .arg("verify")
        .arg(dir)
        .output()
        .unwrap()
}

/// The problem lines of every failed check of a text report.
fn problems(report: &str) -> Vec<String> {
    report
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_case_of_the_table_is_refused_by_verify_with_one_line_naming_the_package_and_the_member() {
    let work = tempfile::tempdir().unwrap();
    for (case, member) in table() {
        let dir = work.path().join(&case.name);
        release_with(&dir, &case.file_name, &case.bytes);
        let report = fails(&verify_release(&dir));
        let lines: Vec<String> = problems(&report)
            .into_iter()
            .filter(|l| l.contains(&case.file_name))
            .collect();
        assert_eq!(lines.len(), 1, "{}: {report}", case.name);
        assert!(
            lines[0].contains(member) && lines[0].contains("rebuild"),
            "{}: {}",
            case.name,
            lines[0]
        );
    }
}

/// The library record and the devel tarball's runtime links name files
/// the release ships (the device links are a case of the table above).
#[test]
fn the_documents_the_install_side_acts_on_name_files_the_release_ships() {
    let work = tempfile::tempdir().unwrap();
    let (core, core_name) = source("rocm_sdk_core-");
    let record = "rocm_sdk_core/_libraries.json";
    let text = String::from_utf8(member_content(&core, record)).unwrap();
    let changed = text.replacen("lib/libamdhip64.so.7", "lib/libamdhip64.so.99", 1);
    assert_ne!(text, changed);
    let dir = work.path().join("record");
    release_with(
        &dir,
        &core_name,
        &with_member_content(&core, record, changed.as_bytes()),
    );
    let report = fails(&verify_release(&dir));
    let lines: Vec<String> = problems(&report)
        .into_iter()
        .filter(|l| l.contains(&core_name))
        .collect();
    assert!(
        lines.len() == 1
            && lines[0].contains(&format!(
                "member {record}: library amdhip64 is \"lib/libamdhip64.so.99\""
            )),
        "{report}"
    );

    let (devel, devel_name) = source("rocm_sdk_devel-");
    let tarball = "rocm_sdk_devel/_devel.tar";
    let mut tar = TarModel::parse_tar(&member_content(&devel, tarball));
    let link = tar
        .entries
        .iter_mut()
        .find(|e| e.typeflag == b'2' && e.linkname.starts_with(b"../../_rocm_sdk_core/bin/"))
        .expect("a runtime link");
    link.linkname = b"../../_rocm_sdk_core/bin/gone".to_vec();
    let dir = work.path().join("runtime-link");
    release_with(
        &dir,
        &devel_name,
        &with_member_content(&devel, tarball, &tar.tar_bytes()),
    );
    let report = fails(&verify_release(&dir));
    assert!(
        problems(&report).iter().any(|l| l.contains(&devel_name)
            && l.contains("it leads to _rocm_sdk_core/bin/gone, a path no runtime wheel")),
        "{report}"
    );
}

/// Copies of the shards under `work` with the package named `name`
/// replaced by `bytes` and vouched for in its shard's manifest.
fn shards_with(work: &Path, name: &str, bytes: &[u8]) -> Vec<PathBuf> {
    let copies = copy_kpack_shards(work);
    for copy in &copies {
        let manifest = copy.join("shard.json");
        let mut json: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
        for package in json["packages"].as_array_mut().unwrap() {
            if package["path"].as_str().unwrap().ends_with(name) {
                let path = copy.join("dist").join(package["path"].as_str().unwrap());
                fs::write(&path, bytes).unwrap();
                package["sha256"] = fixtures::hostile::sha256_hex(bytes).into();
                package["size"] = bytes.len().into();
            }
        }
        fs::write(&manifest, json.to_string()).unwrap();
    }
    copies
}

fn assemble(shards: &[PathBuf], dest: &Path) -> Command {
    let mut command = Command::new(program());
    command
        .arg("assemble")
        .args(shards)
        .arg("--dest-dir")
        .arg(dest)
        .env_remove("SOURCE_DATE_EPOCH");
    command
}

#[test]
fn every_wheel_case_of_the_table_is_refused_by_assemble_naming_the_package_and_the_member() {
    let work = tempfile::tempdir().unwrap();
    for (case, member) in table() {
        if Path::new(&case.file_name)
            .extension()
            .is_none_or(|e| e != "whl")
        {
            // assemble writes the sdist itself.
            continue;
        }
        let case_dir = work.path().join(&case.name);
        fs::create_dir_all(&case_dir).unwrap();
        let shards = shards_with(&case_dir, &case.file_name, &case.bytes);
        let dest = case_dir.join("release");
        let out = assemble(&shards, &dest).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}: {out:?}", case.name);
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(
            text.lines()
                .any(|l| l.contains(&case.file_name) && l.contains(member)),
            "{}: {text}",
            case.name
        );
        assert!(
            fs::read_dir(dest.join("dist")).map_or(true, |mut d| d.next().is_none()),
            "{}: a refused assemble published files",
            case.name
        );
    }
}

/// Runs `program args…` and returns its exit code and peak RSS in MiB,
/// from `wait4` in a small Python parent: a child's peak starts at its
/// parent's resident set (Linux records the address space `exec`
/// replaces), and this test process is much larger than Python.
fn measured(program: &Path, args: &[&std::ffi::OsStr]) -> (Option<i32>, i64) {
    const PARENT: &str = "import os, sys\n\
        pid = os.fork()\n\
        if pid == 0:\n\
        \x20   null = os.open(os.devnull, os.O_WRONLY)\n\
        \x20   os.dup2(null, 1)\n\
        \x20   os.dup2(null, 2)\n\
        \x20   os.execv(sys.argv[1], sys.argv[1:])\n\
        _, status, usage = os.wait4(pid, 0)\n\
        print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n";
    let out = Command::new("python3")
        .args(["-c", PARENT])
        .arg(program)
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH")
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fields = text.split_whitespace();
    let code: i32 = fields.next().unwrap().parse().unwrap();
    let kib: i64 = fields.next().unwrap().parse().unwrap();
    ((code >= 0).then_some(code), kib / 1024)
}

/// The bombs of the table, `gib` GiB each, through `verify`, `index` and
/// `assemble` (wheels), each under [`MAX_RSS_MIB`]: `verify` and
/// `assemble` refuse them (exit 1); `index`, which reads a wheel's
/// METADATA only, refuses the sdist's or indexes the wheels without a
/// `.metadata` larger than a metadata file may be.
fn bombs_stay_small(gib: u64) {
    let work = tempfile::tempdir().unwrap();
    let wheel = source("rocm_profiler-");
    let sdist = source("rocm-");
    let mut table = String::new();
    let mut over = Vec::new();
    for bomb in bombs((&wheel.0, &wheel.1), (&sdist.0, &sdist.1), gib) {
        let dir = work.path().join(bomb.name);
        release_with(&dir.join("dist"), &bomb.file_name, &bomb.bytes);
        let dist = dir.join("dist");
        let mut runs = vec![
            (
                "verify",
                measured(&program(), &["verify".as_ref(), dist.as_os_str()]),
            ),
            (
                "index",
                measured(&program(), &["index".as_ref(), dist.as_os_str()]),
            ),
        ];
        if Path::new(&bomb.file_name)
            .extension()
            .is_some_and(|e| e == "whl")
        {
            let shards = shards_with(&dir, &bomb.file_name, &bomb.bytes);
            let dest = dir.join("release");
            let mut args: Vec<&std::ffi::OsStr> = vec!["assemble".as_ref()];
            args.extend(shards.iter().map(|s| s.as_os_str()));
            args.extend(["--dest-dir".as_ref(), dest.as_os_str()]);
            runs.push(("assemble", measured(&program(), &args)));
        }
        for (command, (code, mib)) in runs {
            let _ = writeln!(
                table,
                "{:<22} {command:<9} exit {code:?} {mib:>6} MiB",
                bomb.name
            );
            let refused = code == Some(1) || (command == "index" && code == Some(0));
            if !refused || mib >= MAX_RSS_MIB {
                over.push(format!("{} {command}: exit {code:?}, {mib} MiB", bomb.name));
            }
        }
        for entry in fs::read_dir(dir.join("dist")).unwrap() {
            let entry = entry.unwrap();
            if entry.path().extension().is_some_and(|e| e == "metadata") {
                let size = entry.metadata().unwrap().len();
                assert!(
                    size <= wheel_writer::limits::METADATA,
                    "{}: index wrote a .metadata of {size} bytes",
                    bomb.name
                );
            }
        }
    }
    eprintln!("{table}");
    assert!(
        over.is_empty(),
        "runs that did not refuse a bomb in under {MAX_RSS_MIB} MiB: {over:?}\n{table}"
    );
}

#[test]
fn verify_index_and_assemble_refuse_every_bomb_in_bounded_memory() {
    bombs_stay_small(3);
}
