//! Each wheel platform's core wheel carries the `rocm-sdk` of that
//! platform, read back from the wheel's bytes (docs/pipeline.md, "The
//! native rocm-sdk").

use crate::common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{Build, ok};
use fixtures::ExampleMode;

/// `EM_X86_64` and `IMAGE_FILE_MACHINE_AMD64`.
const ELF_X86_64: u16 = 62;
const PE_AMD64: u16 = 0x8664;

/// Every `rocm_sdk_core/_bin/` member of the core wheel, by file name.
fn core_programs(dist: &Path) -> Vec<(String, Vec<u8>)> {
    let out_dir = tempfile::tempdir().unwrap();
    ok(&Command::new("python3")
        .args([
            "-c",
            r#"
import sys, zipfile, pathlib
dist, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
(wheel,) = dist.rglob("rocm_sdk_core-*.whl")
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("rocm_sdk_core/_bin/"):
            (out / name.rsplit("/", 1)[1]).write_bytes(z.read(name))
"#,
        ])
        .arg(dist)
        .arg(out_dir.path())
        .output()
        .unwrap());
    let mut programs: Vec<(String, Vec<u8>)> = fs::read_dir(out_dir.path())
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            (name, fs::read(&path).unwrap())
        })
        .collect();
    programs.sort();
    programs
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// The machine of a PE image: `MZ`, then `PE\0\0` where `e_lfanew` points.
fn pe_machine(bytes: &[u8]) -> Option<u16> {
    if !bytes.starts_with(b"MZ") || bytes.len() < 0x40 {
        return None;
    }
    let at = u32::from_le_bytes(bytes[0x3c..0x40].try_into().unwrap()) as usize;
    (bytes.get(at..at + 4)? == b"PE\0\0").then(|| u16_at(bytes, at + 4))
}

fn build(tag: &str) -> Build {
    Build::new(ExampleMode::Kpack, &["--platform-tag", tag])
}

#[test]
fn a_windows_core_wheel_carries_a_windows_program() {
    let programs = core_programs(&build("win_amd64").dist());
    let names: Vec<&str> = programs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["rocm-sdk.exe"]);
    assert_eq!(pe_machine(&programs[0].1), Some(PE_AMD64));
}

#[test]
fn a_linux_core_wheel_carries_a_linux_program() {
    let programs = core_programs(&build("linux_x86_64").dist());
    let names: Vec<&str> = programs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["rocm-sdk"]);
    let elf = &programs[0].1;
    assert!(elf.starts_with(b"\x7fELF"), "not an ELF file");
    assert_eq!(u16_at(elf, 18), ELF_X86_64);
}

/// A static x86-64 Linux executable without libc (it exits 0), built with
/// gcc: a valid program for Linux wheels that is not the built-in one.
fn static_program(dir: &Path) -> std::path::PathBuf {
    let source = dir.join("exit.c");
    fs::write(
        &source,
        "void _start(void) { __asm__ volatile(\"mov $60, %eax\\n xor %edi, %edi\\n syscall\"); }\n",
    )
    .unwrap();
    let program = dir.join("rocm-sdk");
    ok(&Command::new("gcc")
        .args(["-nostdlib", "-static", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .expect("gcc is installed by cargo xtask setup"));
    program
}

#[test]
fn a_named_program_replaces_the_built_in_one() {
    let dir = tempfile::tempdir().unwrap();
    let program = static_program(dir.path());
    let dest = tempfile::tempdir().unwrap();
    ok(&common::build_into(
        &common::artifacts(ExampleMode::Kpack),
        dest.path(),
        &[
            "--platform-tag",
            "linux_x86_64",
            "--rocm-sdk-linux",
            program.to_str().unwrap(),
        ],
    ));
    let programs = core_programs(&dest.path().join("dist"));
    assert_eq!(
        programs,
        [("rocm-sdk".to_owned(), fs::read(&program).unwrap())]
    );
}

#[test]
fn a_named_program_of_the_other_platform_is_refused_naming_it() {
    // Named by the variable: a Linux program for Windows wheels.
    let dir = tempfile::tempdir().unwrap();
    let program = static_program(dir.path());
    let dest = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_therock-package"))
        .args(["build", "--platform-tag", "win_amd64", "--artifact-dir"])
        .arg(common::artifacts(ExampleMode::Kpack))
        .arg("--dest-dir")
        .arg(dest.path())
        .env("THEROCK_PACKAGE_ROCM_SDK_WINDOWS", &program)
        .env_remove("THEROCK_PACKAGE_ROCM_SDK_LINUX")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr =
        String::from_utf8_lossy(&out.stderr).replace(&dir.path().display().to_string(), "TMP");
    insta::assert_snapshot!(stderr.trim_end(), @"therock-package: error: the rocm-sdk program TMP/rocm-sdk is a Linux (ELF) file, but win_amd64 wheels need an x86-64 Windows (PE) executable (Rust target x86_64-pc-windows-gnu); name the rocm-sdk built for x86_64-pc-windows-gnu");
    let written: Vec<_> = fs::read_dir(dest.path().join("dist"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(written.is_empty(), "{written:?}");
}
