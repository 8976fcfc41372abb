//! Shared helpers of the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use wheel_writer::{BytesSource, CoreMetadata, MemberSource, WheelBuilder, WheelTag};

/// Deterministic bytes that compress somewhat, like code and data tables.
pub fn structured(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let word = state.to_le_bytes();
        if state.is_multiple_of(3) {
            out.extend_from_slice(b"\x48\x89\xe5\x41\x57\x41\x56");
        } else {
            out.extend_from_slice(&word[..(state % 8) as usize]);
        }
    }
    out.truncate(len);
    out
}

pub fn bytes(data: impl Into<Vec<u8>>, executable: bool) -> Arc<dyn MemberSource> {
    Arc::new(BytesSource::new(data.into(), executable, "test bytes"))
}

/// The core-like metadata the snapshots use.
pub fn core_metadata() -> CoreMetadata {
    let mut m = CoreMetadata::new("rocm-sdk-core", "7.0.0rc1");
    m.summary = Some("ROCm core runtime libraries and tools".into());
    m.license_expression = Some("MIT".into());
    m.requires_python = Some(">=3.9".into());
    m.requires_dist = vec![
        "rocm-sdk-devel==7.0.0rc1; extra == \"devel\"".into(),
        "rocm-sdk-libraries==7.0.0rc1; sys_platform == \"linux\" and extra == \"libraries\"".into(),
    ];
    m.provides_extra = vec!["devel".into(), "libraries".into()];
    m.project_urls = vec![("Source".into(), "https://github.com/ROCm/TheRock".into())];
    m
}

/// A small wheel with a package, a platform dir, a large member, a script
/// and console scripts; `order` permutes the `add_file` calls.
pub fn sample_wheel(order: &[usize]) -> WheelBuilder {
    let files: Vec<(&str, Vec<u8>, bool)> = vec![
        (
            "rocm_sdk_core/__init__.py",
            b"__version__ = '7.0.0rc1'\n".to_vec(),
            false,
        ),
        (
            "rocm_sdk_core/_cli.py",
            b"def hipcc():\n    return 0\n".to_vec(),
            false,
        ),
        (
            "_rocm_sdk_core/lib/libamdhip64.so.7",
            structured(3 * 1024 * 1024 + 123, 7),
            true,
        ),
        ("_rocm_sdk_core/bin/hipcc", structured(5000, 9), true),
        ("_rocm_sdk_core/share/empty.txt", Vec::new(), false),
        (
            "_rocm_sdk_core/lib/libsame_a.so",
            structured(200_000, 11),
            false,
        ),
        (
            "_rocm_sdk_core/lib/libsame_b.so",
            structured(200_000, 11),
            false,
        ),
        (
            "_rocm_sdk_core/share/ünïcode name.txt",
            b"text\n".to_vec(),
            false,
        ),
    ];
    let mut wheel = WheelBuilder::new(core_metadata(), WheelTag::py3_none("linux_x86_64").unwrap())
        .unwrap()
        .with_generator("therock-package 0.1.0")
        .unwrap();
    for &i in order {
        let (path, data, exec) = &files[i % files.len()];
        wheel.add_file(path, bytes(data.clone(), *exec)).unwrap();
    }
    wheel
        .add_script(
            "rocm-sdk-launch",
            bytes(b"#!/bin/sh\nexit 0\n".to_vec(), true),
        )
        .unwrap();
    wheel
        .add_console_script("hipcc", "rocm_sdk_core._cli:hipcc")
        .unwrap();
    wheel
        .add_console_script("amdclang++", "rocm_sdk_core._cli:hipcc")
        .unwrap();
    wheel
}

pub const ALL: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

pub fn have_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs a command and fails the test with its output when it fails.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

pub fn zipfile_test(path: &Path) {
    run(Command::new("python3")
        .args(["-m", "zipfile", "-t"])
        .arg(path));
}
