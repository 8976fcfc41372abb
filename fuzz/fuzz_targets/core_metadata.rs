//! The header block of METADATA, WHEEL and PKG-INFO as Python's email
//! parser reads it (crates/pypa-formats `core_metadata`).
//!
//! Beyond "no panic": what parses has printable-ASCII header names and
//! values without a lone carriage return, and written back as
//! `Name: value` lines it parses to the same headers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pypa_formats::core_metadata::HeaderBlock;

fuzz_target!(|data: &[u8]| {
    let Ok(block) = HeaderBlock::parse(data) else {
        return;
    };
    let mut text = String::new();
    for (name, value) in block.headers() {
        assert!(!name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':'));
        assert!(!value.starts_with([' ', '\t']), "{value:?}");
        text.push_str(name);
        text.push_str(": ");
        text.push_str(value);
        text.push('\n');
    }
    let again = HeaderBlock::parse(text.as_bytes())
        .unwrap_or_else(|e| panic!("{text:?} does not parse again: {e}"));
    assert_eq!(again, block, "{text:?}");
});
