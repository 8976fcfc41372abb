//! A build with `jobs` set runs in a rayon pool of its own and leaves the
//! process's global pool to the caller (docs/pipeline.md, "Decisions"):
//! a library that set the global pool, as the build once did, would take
//! it from every later caller. Alone in its binary, so nothing else of
//! this process touches the global pool.

use fixtures::{ExampleMode, Layout};
use pipeline::{BuildOptions, NativePrograms, PlanOptions, Platform, build};

#[test]
fn builds_with_jobs_leave_the_global_pool_unset() {
    let launcher =
        trampoline_gen::Launcher::for_target(trampoline_gen::Platform::LinuxX86_64, "rocm-sdk")
            .unwrap();
    let artifacts = fixtures::shared().artifact_dir(ExampleMode::Kpack, Layout::Tree);
    for jobs in [1, 2] {
        let dest = tempfile::tempdir().unwrap();
        let report = build(&BuildOptions {
            plan: PlanOptions {
                artifact_dir: artifacts.clone(),
                // This library carries no rocm-sdk: the launcher image, a
                // real static program, stands in for it (docs/testing.md).
                native_programs: NativePrograms::new().with_bytes(
                    Platform::Linux,
                    "the launcher image",
                    launcher.clone().into_bytes(),
                ),
                ..PlanOptions::default()
            },
            dest_dir: dest.path().to_owned(),
            jobs,
            ..BuildOptions::default()
        })
        .unwrap();
        assert!(report.packages > 0);
    }
    // Still unset: the caller sizes it as it likes.
    rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build_global()
        .expect("the builds left rayon's global pool unset");
    assert_eq!(rayon::current_num_threads(), 3);
}
