//! The core wheel's `share/therock/dist_info.json` is one `rocm-sdk
//! targets` can read: parsed with the reader the build and the install
//! side use ([`dist_info::dist_targets`]).

use dist_info::dist_targets::{DistTargets, RELPATH};
use fs_helpers::error_chain::Chain;
use wheel_writer::{WheelReader, limits};

use super::Release;
use super::release::Kind;

/// The distribution that ships the document.
const CORE: &str = "rocm-sdk-core";

/// Its platform packages: `_rocm_sdk_core` and the same with a nonce.
const CORE_PLATFORM_PREFIX: &str = "_rocm_sdk_core";

/// Problems with the document of every readable core wheel (`None` when
/// the release has no core wheel: nothing to check).
pub(crate) fn check(release: &Release) -> Option<Vec<String>> {
    let cores: Vec<_> = release
        .unique()
        .filter(|f| matches!(&f.kind, Kind::Wheel(w) if w.readable && w.name == CORE))
        .collect();
    if cores.is_empty() {
        return None;
    }
    let mut problems = Vec::new();
    for core in cores {
        let Kind::Wheel(wheel) = &core.kind else {
            continue;
        };
        let members: Vec<&str> = wheel
            .record
            .iter()
            .map(|(path, _)| path.as_str())
            .filter(|path| {
                path.split_once('/').is_some_and(|(top, rest)| {
                    top.starts_with(CORE_PLATFORM_PREFIX) && rest == RELPATH
                })
            })
            .collect();
        if members.is_empty() {
            problems.push(format!(
                "{}: holds no {CORE_PLATFORM_PREFIX}/{RELPATH}, so `rocm-sdk targets` fails on \
                 every installation; rebuild it from a complete TheRock build",
                core.display
            ));
        }
        for member in members {
            let parsed = WheelReader::open(&core.path)
                .and_then(|mut reader| reader.read_member(member, limits::DOCUMENT))
                .map_err(|e| Chain(&e).to_string())
                .and_then(|bytes| DistTargets::parse(&bytes).map_err(|e| Chain(&e).to_string()));
            if let Err(reason) = parsed {
                problems.push(format!(
                    "{}: {member}: `rocm-sdk targets` could not read it: {reason}; fix \
                     share/therock/dist_info.json in the artifacts and rebuild",
                    core.display
                ));
            }
        }
    }
    Some(problems)
}
