//! The records `rocm-sdk` keeps in the devel tree and reads back as
//! untrusted input (crates/dist-info `devel_state.rs`): the reconcile's
//! `.device-links-state.json` and the unpack's `.runtime-links.json`. The
//! first input byte picks the document and the nonce; the rest is the text.
//!
//! Beyond "no panic": a document that parses holds only paths where its
//! kind of path must be (links in the tree, files in a runtime package,
//! created directories above a link), and renders to text that parses back
//! equal and is a fixed point.
#![no_main]

use dist_info::devel_state::{DeviceLinksState, RuntimeLinks};
use dist_info::devel_tree::TreeNames;
use libfuzzer_sys::fuzz_target;
use pypa_formats::member::check_relpath;

fuzz_target!(|data: &[u8]| {
    let Some((&first, text)) = data.split_first() else {
        return;
    };
    let nonce = if first & 2 == 0 { "" } else { "_n1" };
    let names = TreeNames::new(&nonce.parse().expect("a valid nonce"));
    let in_tree = |path: &str| names.relpath(path).is_some_and(|rel| check_relpath(rel).is_ok());
    if first & 1 == 0 {
        let Ok(state) = DeviceLinksState::from_json(text, &names) else {
            return;
        };
        for (device, links) in &state.devices {
            assert!(device.starts_with("rocm_sdk_device_") && !device.contains('/'), "{device}");
            assert!(links.links.iter().all(|l| in_tree(l)), "{links:?}");
            assert!(links.created_dirs.iter().all(|d| in_tree(d)), "{links:?}");
            assert!(
                links.sources.iter().all(|s| s.starts_with(names.libraries())
                    && check_relpath(s).is_ok()
                    && !names.contains(s)),
                "{links:?}"
            );
        }
        let json = state.to_json();
        let again = DeviceLinksState::from_json(json.as_bytes(), &names)
            .unwrap_or_else(|e| panic!("{state:?} renders to {json:?}, which does not parse: {e}"));
        assert_eq!(again, state);
        assert_eq!(again.to_json(), json, "not a fixed point");
    } else {
        let Ok(record) = RuntimeLinks::from_json(text, &names) else {
            return;
        };
        for (link, source) in &record.links {
            assert!(in_tree(link), "{link}");
            let package = source.split('/').next().unwrap_or_default();
            assert!(names.is_runtime_package(package) && check_relpath(source).is_ok(), "{source}");
            assert!(!names.contains(source), "{source}");
        }
        let json = record.to_json();
        let again = RuntimeLinks::from_json(json.as_bytes(), &names)
            .unwrap_or_else(|e| panic!("{record:?} renders to {json:?}, which does not parse: {e}"));
        assert_eq!(again, record);
        assert_eq!(again.to_json(), json, "not a fixed point");
    }
});
