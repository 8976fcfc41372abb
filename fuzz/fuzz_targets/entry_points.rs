//! `entry_points.txt` as every installer reads it alike (crates/pypa-formats
//! `entry_points`).
//!
//! Beyond "no panic": every accepted name is a script name and every value
//! an object reference, and the groups written back parse to the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pypa_formats::entry_points::{EntryPoints, check_object_reference, check_script_name};

fuzz_target!(|data: &[u8]| {
    let Ok(parsed) = EntryPoints::parse(data) else {
        return;
    };
    let mut text = String::new();
    for (group, entries) in parsed.groups() {
        text.push_str(&format!("[{group}]\n"));
        for entry in entries {
            assert!(check_script_name(&entry.name).is_ok(), "{entry:?}");
            assert!(check_object_reference(&entry.value).is_ok(), "{entry:?}");
            text.push_str(&format!("{} = {}\n", entry.name, entry.value));
        }
    }
    let again = EntryPoints::parse(text.as_bytes())
        .unwrap_or_else(|e| panic!("{text:?} does not parse again: {e}"));
    assert_eq!(again, parsed);
});
