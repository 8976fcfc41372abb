//! The wheel reader (crates/wheel-writer `reader.rs`) that `therock-package
//! verify` runs over every wheel of a release: open, list, read each
//! member, parse RECORD and check it.
#![no_main]

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
    assert!(wheel.dist_info_dir().ends_with(".dist-info"));
    if let Ok(names) = wheel.member_names() {
        for name in names {
            let _ = wheel.member_mode(&name);
            let _ = wheel.read_member(&name);
        }
    }
    let _ = wheel.record();
    if let Ok(verification) = wheel.verify() {
        let _ = verification.is_valid();
    }
});
