//! A package's RECORD as `verify` reads it (crates/pypa-formats `record`,
//! `parse_package_record`): plain text, CSV rows of three fields, at most
//! as many rows as the package can have.
//!
//! Beyond "no panic": never more rows than allowed, and the rows written
//! back with the one RECORD codec parse to the same rows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pypa_formats::record::{parse_package_record, parse_record, render_record};

const ROWS: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Ok(rows) = parse_package_record(data, ROWS) else {
        return;
    };
    assert!(rows.len() <= ROWS);
    let text = render_record(&rows);
    let again = parse_record(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(again, rows);
});
