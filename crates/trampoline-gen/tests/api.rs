//! The library API: target validation, the slot, reading back, writing
//! files.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use trampoline_gen::{
    Error, Launcher, Platform, RelativeTarget, SlotError, read_target, read_target_file,
};

const MARKER: &[u8] = b"\x7ftrampoline-gen::target-slot::v1";

fn count_marker(bytes: &[u8]) -> usize {
    bytes.windows(MARKER.len()).filter(|w| *w == MARKER).count()
}

#[test]
fn marker_occurs_exactly_once_in_every_image() {
    for &platform in Platform::ALL {
        assert_eq!(count_marker(platform.image()), 1, "{platform}");
    }
}

#[test]
fn target_round_trips() {
    for target in [
        "tool",
        "../libexec/rocm_smi/rocm_smi.py",
        "../../../lib/llvm/bin/clang",
        "./x",
        "dir with spaces/ünïcödé",
    ] {
        let launcher = Launcher::for_target(Platform::LinuxX86_64, target).unwrap();
        assert_eq!(launcher.target().as_str(), target);
        assert_eq!(launcher.platform(), Platform::LinuxX86_64);
        assert_eq!(read_target(launcher.bytes()).unwrap().as_str(), target);
        let parsed = Launcher::parse(launcher.bytes()).unwrap();
        assert_eq!(parsed, launcher);
        assert_eq!(count_marker(launcher.bytes()), 1);
    }
}

#[test]
fn only_the_slot_changes() {
    let image = Platform::LinuxX86_64.image();
    let launcher = Launcher::for_target(Platform::LinuxX86_64, "../x").unwrap();
    let bytes = launcher.bytes();
    assert_eq!(bytes.len(), image.len());
    let changed: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] != image[i]).collect();
    let at = image
        .windows(MARKER.len())
        .position(|w| w == MARKER)
        .unwrap()
        + MARKER.len();
    assert_eq!(changed, [at, at + 1, at + 2, at + 3]);
    assert_eq!(&bytes[at..at + 5], b"../x\0");
}

#[test]
fn same_inputs_give_same_bytes() {
    let a = Launcher::for_target(Platform::LinuxX86_64, "../bin/a").unwrap();
    let b = Launcher::for_target(Platform::LinuxX86_64, "../bin/a").unwrap();
    let c = Launcher::for_target(Platform::LinuxX86_64, "../bin/b").unwrap();
    assert_eq!(a.bytes(), b.bytes());
    assert_ne!(a.bytes(), c.bytes());
}

#[test]
fn longest_target_fits_and_one_more_byte_does_not() {
    let max = Platform::LinuxX86_64.max_target_len();
    assert!(max >= 1024, "{max}");
    let mut longest = "a/".repeat(max / 2);
    longest.truncate(max - 1);
    longest.push('z');
    assert_eq!(longest.len(), max);
    let launcher = Launcher::for_target(Platform::LinuxX86_64, &longest).unwrap();
    assert_eq!(read_target(launcher.bytes()).unwrap().as_str(), longest);

    let too_long = format!("{longest}z");
    let error = Launcher::for_target(Platform::LinuxX86_64, &too_long).unwrap_err();
    assert!(
        matches!(error, Error::TargetTooLong { len, max: m, .. } if len == max + 1 && m == max),
        "{error:?}"
    );
    assert!(error.to_string().contains("at most"), "{error}");
}

#[test]
fn invalid_targets_are_rejected_with_typed_errors() {
    let p = Platform::LinuxX86_64;
    assert!(matches!(
        Launcher::for_target(p, ""),
        Err(Error::EmptyTarget)
    ));
    assert!(matches!(
        Launcher::for_target(p, "/usr/bin/true"),
        Err(Error::AbsoluteTarget { target }) if target == "/usr/bin/true"
    ));
    assert!(matches!(
        Launcher::for_target(p, "../bin\0/x"),
        Err(Error::NulInTarget { .. })
    ));
    assert!(matches!(
        Launcher::for_target(p, "../bin/"),
        Err(Error::DirectoryTarget { .. })
    ));
    {
        use std::os::unix::ffi::OsStrExt as _;
        let raw = Path::new(std::ffi::OsStr::from_bytes(b"../\xff"));
        assert!(matches!(
            Launcher::for_target(p, raw),
            Err(Error::NonUtf8Target { .. })
        ));
    }
    let message = Launcher::for_target(p, "/opt/rocm/bin/x")
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("/opt/rocm/bin/x") && message.contains("relative"),
        "{message}"
    );
}

#[test]
fn debug_output_is_short() {
    let launcher = Launcher::for_target(Platform::LinuxX86_64, "../x").unwrap();
    let text = format!("{launcher:?}");
    assert!(
        text.contains("\"../x\"") && text.contains("LinuxX86_64"),
        "{text}"
    );
    assert!(text.len() < 200, "{text}");
}

#[test]
fn relative_target_accessors() {
    let target = RelativeTarget::new("../a").unwrap();
    assert_eq!(target.to_string(), "../a");
    assert_eq!(target.len(), 4);
    assert!(!target.is_empty());
    let as_path: &Path = target.as_ref();
    assert_eq!(as_path, Path::new("../a"));
    // A RelativeTarget is itself accepted where a path is.
    let launcher = Launcher::for_target(Platform::LinuxX86_64, &target).unwrap();
    assert_eq!(launcher.target(), &target);
}

#[test]
fn reading_non_launchers_fails_clearly() {
    assert!(matches!(
        read_target(b"\x7fELF not a launcher"),
        Err(Error::NotALauncher(SlotError::MarkerMissing))
    ));
    let blank = Platform::LinuxX86_64.image();
    assert!(matches!(
        read_target(blank),
        Err(Error::NotALauncher(SlotError::Empty))
    ));

    let launcher = Launcher::for_target(Platform::LinuxX86_64, "../x").unwrap();
    let bytes = launcher.bytes();
    let at = bytes
        .windows(MARKER.len())
        .position(|w| w == MARKER)
        .unwrap();

    let mut twice = bytes.to_vec();
    twice.extend_from_slice(MARKER);
    assert!(matches!(
        read_target(&twice),
        Err(Error::NotALauncher(SlotError::MarkerRepeated { count: 2 }))
    ));

    let truncated = &bytes[..at + MARKER.len() + 10];
    assert!(matches!(
        read_target(truncated),
        Err(Error::NotALauncher(SlotError::Truncated))
    ));

    let mut garbage_after = bytes.to_vec();
    garbage_after[at + MARKER.len() + 100] = b'x';
    assert!(matches!(
        read_target(&garbage_after),
        Err(Error::NotALauncher(SlotError::Corrupt))
    ));

    let mut absolute = bytes.to_vec();
    absolute[at + MARKER.len()] = b'/';
    assert!(matches!(
        read_target(&absolute),
        Err(Error::NotALauncher(SlotError::InvalidTarget(_)))
    ));

    // Readable slot, but code bytes that are not this build's image.
    let mut foreign = bytes.to_vec();
    *foreign.last_mut().unwrap() ^= 0xff;
    assert_eq!(read_target(&foreign).unwrap().as_str(), "../x");
    assert!(matches!(
        Launcher::parse(&foreign),
        Err(Error::NotALauncher(SlotError::UnknownImage))
    ));
}

#[test]
fn write_to_is_atomic_and_executable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tool");
    // Replaces what was there.
    std::fs::write(&path, "old").unwrap();
    let launcher = Launcher::for_target(Platform::LinuxX86_64, "../libexec/tool").unwrap();
    launcher.write_to(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), launcher.bytes());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, Launcher::MODE);
    assert_eq!(read_target_file(&path).unwrap().as_str(), "../libexec/tool");
    // No temporary file left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["tool"]);
}

#[test]
fn write_to_a_missing_directory_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/tool");
    let launcher = Launcher::for_target(Platform::LinuxX86_64, "x").unwrap();
    let error = launcher.write_to(&path).unwrap_err();
    assert!(matches!(&error, Error::Write { path: p, .. } if p == &path));
    assert!(error.to_string().contains("no/such/dir/tool"), "{error}");
}

#[test]
fn read_target_file_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    assert!(matches!(
        read_target_file(&missing),
        Err(Error::Read { .. })
    ));
    let text = dir.path().join("text");
    std::fs::write(&text, "#!/bin/sh\n").unwrap();
    let error = read_target_file(&text).unwrap_err();
    assert!(matches!(
        error,
        Error::NotALauncherFile {
            source: SlotError::MarkerMissing,
            ..
        }
    ));
    assert!(error.to_string().contains("text"), "{error}");
}

#[test]
fn wheel_tags_map_to_platforms() {
    for tag in [
        "linux_x86_64",
        "manylinux_2_28_x86_64",
        "manylinux2014_x86_64",
        "musllinux_1_2_x86_64",
    ] {
        assert_eq!(
            Platform::from_wheel_tag(tag).unwrap(),
            Platform::LinuxX86_64,
            "{tag}"
        );
    }
    for tag in [
        "win_amd64",
        "linux_aarch64",
        "macosx_11_0_arm64",
        "linux_x86_64_extra_",
        "any",
    ] {
        let error = Platform::from_wheel_tag(tag).unwrap_err();
        assert!(matches!(&error, Error::UnsupportedPlatform { tag: t, .. } if t == tag));
        assert!(error.to_string().contains("linux-x86_64"), "{error}");
    }
    assert_eq!(Platform::LinuxX86_64.to_string(), "linux-x86_64");
}
