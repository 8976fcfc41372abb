//! The devel tar's digest file (crates/devel-tar `digest_file.rs`), which
//! `rocm-sdk init` reads from an installed tree and `verify` from a wheel.
//!
//! Beyond "no panic": what parses renders to bytes that parse back equal,
//! and those bytes are a fixed point.
#![no_main]

use devel_tar::TarDigest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(digest) = TarDigest::parse(data) else {
        return;
    };
    let bytes = digest.to_bytes();
    let again = TarDigest::parse(&bytes)
        .unwrap_or_else(|e| panic!("{digest:?} renders to {bytes:?}, which does not parse: {e}"));
    assert_eq!(again, digest, "{bytes:?}");
    assert_eq!(again.to_bytes(), bytes, "not a fixed point");
});
