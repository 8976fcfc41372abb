//! The install-side hot paths of `dist-info`, each against a baseline
//! measured in the same run:
//! - reading `_dist_info.json` (`DistInfo::from_json`, done on every
//!   `rocm-sdk` launch) against parsing the same bytes into an untyped
//!   `serde_json::Value`;
//! - `matches_ignoring_post` (run per installed device wheel on every tool
//!   launch) against a plain string comparison;
//! - planning a selector and computing its metadata against cloning its
//!   input.
//!
//! `cargo bench -p dist-info` (or `cargo xtask bench`). Prints per-call
//! times, ratios, and the whole run's wall and CPU time and peak RSS
//! (`bench_support`).

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![allow(clippy::cast_precision_loss, reason = "nanosecond statistics")]

use std::hint::black_box;
use std::time::Duration;

use bench_support::{measure_in_process, per_call, print_row};
use dist_info::document::DistInfo;
use dist_info::families::{Family, FamilyTable};
use dist_info::package::{Mode, PackageKind};
use dist_info::selector::{Selector, SelectorInput};
use pypa_formats::version::matches_ignoring_post;

/// Rounds per measurement; the median round counts.
const ROUNDS: usize = 5;

fn report(name: &str, ours: Duration, baseline: Duration, baseline_name: &str) {
    println!(
        "{name:<28} {:>10.0} ns/call   baseline ({baseline_name}) {:>9.0} ns/call   ratio {:.2}x",
        ours.as_nanos() as f64,
        baseline.as_nanos() as f64,
        ours.as_nanos() as f64 / baseline.as_nanos().max(1) as f64
    );
}

fn main() {
    let (sample, ()) = measure_in_process(run);
    print_row("whole run", sample);
}

fn run() {
    let input = SelectorInput {
        packages: [
            PackageKind::Libraries,
            PackageKind::Devel,
            PackageKind::Profiler,
        ]
        .into(),
        on_disk: vec!["gfx942".into(), "gfx950".into(), "gfx1100".into()],
        linux_families: Some(Family::parse_list("dcgpu-all;dgpu-all;igpu-all").unwrap()),
        windows_families: Some(Family::parse_list("dgpu-all;igpu-all").unwrap()),
        restrict_to_family: None,
    };
    let version = "7.1.0a20250301".parse().unwrap();
    let table = FamilyTable::builtin();
    let selector = Selector::plan(Mode::Kpack, &version, &input, table).unwrap();
    let bytes = DistInfo::new(selector.clone(), &dist_info::nonce::Nonce::NONE).to_json();
    println!(
        "dist-info bench: _dist_info.json of {} bytes, {} targets",
        bytes.len(),
        selector.available_targets.len()
    );

    let read = per_call(ROUNDS, 2_000, || {
        black_box(DistInfo::from_json(black_box(&bytes)).unwrap());
    });
    let raw = per_call(ROUNDS, 2_000, || {
        black_box(serde_json::from_slice::<serde_json::Value>(black_box(&bytes)).unwrap());
    });
    report("read _dist_info.json", read, raw, "untyped serde_json");

    let pairs = [
        ("7.1.0a20250301", "7.1.0a20250301.post1"),
        ("7.1.0.dev0+0123456789abcdef", "7.1.0.dev0+0123456789abcdef"),
        ("7.1.0rc1", "7.1.0rc2"),
    ];
    let post = per_call(ROUNDS, 100_000, || {
        for (a, b) in pairs {
            black_box(matches_ignoring_post(black_box(a), black_box(b)));
        }
    });
    let eq = per_call(ROUNDS, 100_000, || {
        for (a, b) in pairs {
            black_box(black_box(a) == black_box(b));
        }
    });
    report("matches_ignoring_post x3", post, eq, "string ==");

    let plan = per_call(ROUNDS, 2_000, || {
        let s = Selector::plan(Mode::Kpack, &version, black_box(&input), table).unwrap();
        let chosen = s.select_target(None, Some("gfx1100\n")).unwrap();
        black_box(s.metadata(chosen.as_ref()).requires_dist());
    });
    let clone = per_call(ROUNDS, 2_000, || {
        black_box(black_box(&input).clone());
    });
    report("plan + select + metadata", plan, clone, "clone input");
}
