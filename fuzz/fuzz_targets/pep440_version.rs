//! The PEP 440 versions (crates/pypa-formats `version.rs`, over `pep440_rs`).
//!
//! Beyond "no panic": the canonical form (`Display`) parses back to an
//! equal version and is a fixed point, and the order is consistent with
//! equality.
#![no_main]

use std::cmp::Ordering;

use pypa_formats::version::{Version, matches_ignoring_post};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Two versions per input (split at the first newline) to check order.
    let (a, b) = text.split_once('\n').unwrap_or((text, "7.1.0"));
    let Ok(va) = Version::parse(a) else {
        return;
    };
    let canonical = va.to_string();
    let again = Version::parse(&canonical)
        .unwrap_or_else(|e| panic!("canonical form {canonical:?} of {a:?} does not parse: {e}"));
    assert_eq!(again, va, "{a:?} -> {canonical:?}");
    assert_eq!(
        again.to_string(),
        canonical,
        "canonical form is not a fixed point"
    );
    assert_eq!(va.cmp(&again), Ordering::Equal);
    let released = va.without_post().to_string();
    assert!(
        matches_ignoring_post(&canonical, &released),
        "{canonical:?} and {released:?} differ by more than .postN"
    );
    if let Ok(vb) = Version::parse(b) {
        assert_eq!(va.cmp(&vb) == Ordering::Equal, va == vb, "{a:?} vs {b:?}");
        assert_eq!(va.cmp(&vb), vb.cmp(&va).reverse(), "{a:?} vs {b:?}");
    }
});
