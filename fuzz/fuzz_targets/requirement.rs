//! The `Requires-Dist` reader of `therock-package verify` (PEP 508 names,
//! version clauses and environment markers), evaluated on every platform
//! and extra a release uses.
//!
//! The reader lives in the binary crate; this target compiles its one
//! file, `crates/therock-package/src/verify/marker.rs`, which depends only
//! on `dist-info`. If that file changes its entry points (`parse`,
//! `applies`, `admits`), this target follows.
#![no_main]

#[allow(dead_code, unreachable_pub)]
#[path = "../../crates/therock-package/src/verify/marker.rs"]
mod marker;

use dist_info::requirement::Platform;
use libfuzzer_sys::fuzz_target;
use marker::{Env, Requirement};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(requirement) = Requirement::parse(text) else {
        return;
    };
    assert!(!requirement.name.is_empty());
    for platform in [Platform::Linux, Platform::Windows] {
        for extra in [
            None,
            Some("device"),
            Some("device-gfx942"),
            Some("Device_GFX942"),
        ] {
            let _ = requirement.applies(Env { platform, extra });
        }
    }
    for version in ["7.1.0", "7.1.0.post1", "7.1.0rc1", "not a version"] {
        let _ = requirement.admits(version);
    }
});
