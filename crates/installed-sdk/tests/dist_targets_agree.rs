//! The build side (`artifacts`, reading TheRock's artifacts) and the
//! install side (`installed-sdk`, reading core's platform package) read
//! one `share/therock/dist_info.json` with one reader and one separator
//! rule (`dist_info::dist_targets`): the same bytes give the same targets
//! on both sides.

use std::fs;
use std::path::Path;

use artifacts::{ArtifactDir, BASE_ARTIFACT, DIST_INFO_PATH, THEROCK_MANIFEST_PATH};
use installed_sdk::{DIST_TARGETS_RELPATH, read_dist_targets};

fn write(path: &Path, bytes: &[u8]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

#[test]
fn build_and_install_read_the_same_targets_from_the_same_file() {
    // TheRock writes a CMake list (`;`); a hand-edited file may use `,`
    // and spaces: both sides accept both and agree.
    for document in [
        r#"{"dist_amdgpu_targets": "gfx942;gfx1100;gfx1101"}"#,
        r#"{"dist_amdgpu_targets": "gfx942, gfx1100;gfx1101"}"#,
        r#"{"dist_amdgpu_targets": "gfx942:xnack+;;gfx90a"}"#,
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let artifacts = tmp.path().join("artifacts");
        let base = artifacts.join(BASE_ARTIFACT);
        write(&base.join(DIST_INFO_PATH), document.as_bytes());
        write(&base.join(THEROCK_MANIFEST_PATH), b"{}");
        // The artifact's manifest lists its stage directories.
        write(
            &base.join("artifact_manifest.txt"),
            b"base/aux-overlay/stage\n",
        );
        let build = ArtifactDir::open(&artifacts).unwrap().dist_info().unwrap();
        let core = tmp.path().join("_rocm_sdk_core");
        write(&core.join(DIST_TARGETS_RELPATH), document.as_bytes());
        let install = read_dist_targets(&core).unwrap();
        assert_eq!(build.targets, install.targets, "{document}");
        assert_eq!(build.raw, install.raw, "{document}");
        assert!(build.targets.len() >= 2, "{document}: {:?}", build.targets);
    }
}
