//! The `Requires-Dist` reader of `therock-package verify` (PEP 508 names,
//! version clauses and environment markers), evaluated on every platform
//! and extra a release uses.
//!
//! The reader lives in the binary crate; this target compiles its one
//! file, `crates/release-check/src/pep508.rs`, which depends only
//! on `dist-info` and `pep508_rs`. If that file changes its entry points
//! (`parse`, `applies`, `admits`), this target follows.
#![no_main]

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/release-check/src/pep508.rs"]
mod pep508;

use libfuzzer_sys::fuzz_target;
use pep508::{Env, PYTHON_VERSIONS, Requirement};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(requirement) = Requirement::parse(text) else {
        return;
    };
    assert!(!requirement.name.is_empty());
    for platform_tag in ["manylinux_2_28_x86_64", "linux_aarch64", "win_amd64"] {
        for python in PYTHON_VERSIONS {
            for extra in [
                None,
                Some("device"),
                Some("device-gfx942"),
                Some("Device_GFX942"),
            ] {
                let _ = requirement.applies(Env {
                    platform_tag,
                    python,
                    extra,
                });
            }
        }
    }
    for version in ["7.1.0", "7.1.0.post1", "7.1.0rc1", "not a version"] {
        let _ = requirement.admits(version);
    }
});
