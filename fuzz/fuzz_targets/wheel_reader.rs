//! The wheel reader (crates/wheel-writer `reader.rs`) that `therock-package
//! verify`, `index` and `assemble` run over every wheel of a release:
//! open, list, read each member, parse RECORD and check it. A wheel that
//! opens holds only members the member rules accept
//! (docs/behaviour.md#member-rules).
#![no_main]

use pypa_formats::member::check_relpath;
use libfuzzer_sys::fuzz_target;
use therock_package_fuzz::fresh_dir;
use wheel_writer::WheelReader;

fuzz_target!(|data: &[u8]| {
    let dir = fresh_dir("wheel");
    let path = dir.join("rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl");
    std::fs::write(&path, data).unwrap();
    let Ok(mut wheel) = WheelReader::open(&path) else {
        return;
    };
    assert!(wheel.dist_info_dir().to_ascii_lowercase().ends_with(".dist-info"));
    let names: Vec<String> = wheel.member_names().map(str::to_owned).collect();
    for name in names {
        let clean = name.strip_suffix('/').unwrap_or(&name);
        assert!(check_relpath(clean).is_ok(), "{name:?} passed open");
        if let Ok(Some(mode)) = wheel.member_mode(&name) {
            assert_ne!(mode & 0o170_000, 0o120_000, "symlink {name:?} passed open");
        }
        // Bounded: a member declaring more is refused unread.
        if let Ok(bytes) = wheel.read_member(&name, 1 << 20) {
            assert_eq!(bytes.len() as u64, wheel.member_size(&name).unwrap());
        }
    }
    let _ = wheel.record();
    if let Ok(verification) = wheel.verify() {
        let _ = verification.is_valid();
    }
});
