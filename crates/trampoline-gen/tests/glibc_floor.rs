//! The launcher image runs on glibc 2.28 and newer hosts (docs/behaviour.md#native-binaries), and
//! the check that says so can fail.

mod common;

use std::process::Command;

use common::glibc::{FLOOR, GlibcNeed, GlibcVersion, check_glibc_floor, glibc_need};
use trampoline_gen::{Launcher, Platform};

#[test]
fn launcher_image_is_static() {
    for &platform in Platform::ALL {
        assert_eq!(
            glibc_need(platform.image()),
            Ok(GlibcNeed::Static),
            "{platform}"
        );
        let launcher = Launcher::for_target(platform, "../bin/tool").unwrap();
        assert!(check_glibc_floor(launcher.bytes()).is_ok());
    }
}

#[test]
fn check_rejects_a_binary_linked_against_a_newer_glibc() {
    // The probe is linked here, against this host's glibc; on a host newer
    // than the floor it must be reported (on an old host, nothing to prove).
    let image = std::fs::read(common::probe()).unwrap();
    let need = glibc_need(&image).unwrap();
    let GlibcNeed::Dynamic(versions) = &need else {
        panic!("the probe is dynamically linked, yet read as {need:?}");
    };
    assert!(versions.contains(&GlibcVersion([2, 2, 5])), "{versions:?}");
    if host_glibc() > FLOOR {
        let error = check_glibc_floor(&image).unwrap_err();
        assert!(error.contains("newer than the GLIBC_2.28 floor"), "{error}");
    }
}

#[test]
fn versions_match_readelf() {
    let probe = common::probe();
    let output = Command::new("readelf")
        .args(["--version-info", "--wide"])
        .arg(probe)
        .output()
        .expect("the tests need readelf (Debian package binutils)");
    let text = String::from_utf8(output.stdout).unwrap();
    let mut from_readelf: Vec<GlibcVersion> = text
        .split_whitespace()
        .filter_map(GlibcVersion::parse)
        .collect();
    from_readelf.sort_unstable();
    from_readelf.dedup();
    let ours = glibc_need(&std::fs::read(probe).unwrap()).unwrap();
    assert_eq!(ours, GlibcNeed::Dynamic(from_readelf));
}

#[test]
fn version_names_parse() {
    assert_eq!(
        GlibcVersion::parse("GLIBC_2.28"),
        Some(GlibcVersion([2, 28, 0]))
    );
    assert_eq!(
        GlibcVersion::parse("GLIBC_2.2.5"),
        Some(GlibcVersion([2, 2, 5]))
    );
    assert_eq!(GlibcVersion::parse("GLIBC_PRIVATE"), None);
    assert_eq!(GlibcVersion::parse("GCC_3.0"), None);
    assert!(GlibcVersion([2, 34, 0]) > FLOOR && GlibcVersion([2, 2, 5]) < FLOOR);
    assert_eq!(GlibcVersion([2, 2, 5]).to_string(), "GLIBC_2.2.5");
}

/// This host's glibc, from `ldd --version`'s first line.
fn host_glibc() -> GlibcVersion {
    let output = Command::new("ldd").arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let first = text.lines().next().unwrap_or_default();
    let number = first.rsplit(' ').next().unwrap_or_default();
    GlibcVersion::parse(&format!("GLIBC_{number}")).unwrap_or(GlibcVersion([0, 0, 0]))
}
