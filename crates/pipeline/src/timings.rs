//! `build --timings`: wall and CPU time per build step, per package and per
//! phase of each package (docs/formats.md, docs/performance.md).
//!
//! Steps run one after another, so their wall time is elapsed time and
//! their CPU time is the whole process's over that interval. Packages are
//! written several at once: a package's wall time is from its start to its
//! end, and its CPU time that of the threads that worked on it (its
//! phases).
//! Phases run on many threads at once: their `busy` time is summed over
//! the threads (it can exceed the package's wall time) and their CPU time
//! is those threads' own (`wheel_writer::timings`).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde::Serialize;
use wheel_writer::timings::{PhaseTimes, PhaseTotal, WriteTimings, process_cpu_time};

/// Wall and process CPU time from a starting point.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stopwatch {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Stopwatch {
    pub(crate) fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: process_cpu_time(),
        }
    }

    /// (wall, CPU) since the start.
    pub(crate) fn read(&self) -> (Duration, Duration) {
        let cpu = match (self.cpu, process_cpu_time()) {
            (Some(start), Some(end)) => end.saturating_sub(start),
            _ => Duration::ZERO,
        };
        (self.wall.elapsed(), cpu)
    }
}

/// What the phases of one package's write measured, filled by every
/// thread that works on it.
#[derive(Debug, Default)]
pub(crate) struct PackageClock {
    /// Parsing ELF files and planning their search-path edits.
    pub(crate) elf_edit: PhaseTimes,
    /// Writing the devel tarball (reading, editing and encoding its members).
    pub(crate) devel_tar: PhaseTimes,
    /// The wheel writer's phases.
    pub(crate) write: WriteTimings,
}

impl PackageClock {
    /// The CPU time of every phase's threads: a package's own (packages
    /// are written at once, so the process's CPU time over a package's
    /// interval would count the others too).
    pub(crate) fn cpu(&self) -> Duration {
        self.elf_edit.total().cpu
            + self.devel_tar.total().cpu
            + self
                .write
                .totals()
                .into_iter()
                .map(|(_, total)| total.cpu)
                .sum::<Duration>()
    }

    /// The measured phases in pipeline order, as reported.
    fn phases(&self) -> Vec<PhaseTime> {
        let own = [
            ("elf-edit", self.elf_edit.total()),
            ("devel-tar", self.devel_tar.total()),
        ];
        let written = self
            .write
            .totals()
            .into_iter()
            .map(|(phase, total)| (phase.name(), total));
        own.into_iter()
            .chain(written)
            .map(|(name, total)| PhaseTime::new(name, total))
            .collect()
    }
}

/// Seconds with microsecond precision, as reported.
fn seconds(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e6
}

/// One phase of a package.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PhaseTime {
    phase: &'static str,
    /// Summed wall time of the phase's spans over every thread.
    busy: f64,
    cpu: f64,
    bytes: u64,
}

impl PhaseTime {
    fn new(phase: &'static str, total: PhaseTotal) -> Self {
        Self {
            phase,
            busy: seconds(total.wall),
            cpu: seconds(total.cpu),
            bytes: total.bytes,
        }
    }
}

/// One written package.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PackageTime {
    /// The distribution name (`rocm` for a selector sdist).
    name: String,
    /// The file written, without directories.
    file: String,
    /// When it began, from the start of the packages step (packages are
    /// written several at once).
    start: f64,
    wall: f64,
    cpu: f64,
    /// Empty for sdists, which are small and written in one step.
    phases: Vec<PhaseTime>,
}

/// One step of the build outside the packages.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StepTime {
    step: &'static str,
    wall: f64,
    cpu: f64,
}

/// The timings of one build, in the order things happened.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct BuildTimings {
    /// The whole command.
    wall: f64,
    cpu: f64,
    /// `extract` (archive artifacts only), `plan`, `packages`, `commit`,
    /// `hash` (`--json` only).
    steps: Vec<StepTime>,
    packages: Vec<PackageTime>,
}

impl BuildTimings {
    /// Records a build step measured by `clock`.
    pub(crate) fn step(&mut self, step: &'static str, clock: &Stopwatch) {
        let (wall, cpu) = clock.read();
        self.steps.push(StepTime {
            step,
            wall: seconds(wall),
            cpu: seconds(cpu),
        });
    }

    /// Records a package begun at `start` (from the packages step's
    /// start) that took `wall` and `cpu`, with its phases if any.
    pub(crate) fn package(
        &mut self,
        name: &str,
        file: &str,
        start: Duration,
        (wall, cpu): (Duration, Duration),
        phases: Option<&PackageClock>,
    ) {
        self.packages.push(PackageTime {
            name: name.to_owned(),
            file: file.to_owned(),
            start: seconds(start),
            wall: seconds(wall),
            cpu: seconds(cpu),
            phases: phases.map(PackageClock::phases).unwrap_or_default(),
        });
    }

    /// Appends the packages and steps of `other` (the packages step
    /// measured apart).
    pub(crate) fn extend(&mut self, other: BuildTimings) {
        self.steps.extend(other.steps);
        self.packages.extend(other.packages);
    }

    /// Sets the whole command's time.
    pub(crate) fn finish(&mut self, clock: &Stopwatch) {
        let (wall, cpu) = clock.read();
        self.wall = seconds(wall);
        self.cpu = seconds(cpu);
    }

    /// The table of the text report.
    pub(crate) fn to_text(&self) -> String {
        let mut out = String::from(
            "timings (busy: summed over threads; cpu: the threads of a package or phase, the process for a step)\n",
        );
        let _ = writeln!(
            out,
            "  {:<44} {:>9} {:>9} {:>11}",
            "package / phase", "wall", "cpu", "bytes"
        );
        for package in &self.packages {
            let _ = writeln!(
                out,
                "  {:<44} {:>8.3}s {:>8.3}s",
                package.name, package.wall, package.cpu
            );
            for phase in &package.phases {
                let _ = writeln!(
                    out,
                    "    {:<42} {:>7.3}s* {:>8.3}s {:>11}",
                    phase.phase,
                    phase.busy,
                    phase.cpu,
                    human_bytes(phase.bytes)
                );
            }
        }
        for step in &self.steps {
            let _ = writeln!(
                out,
                "  {:<44} {:>8.3}s {:>8.3}s",
                format!("[{}]", step.step),
                step.wall,
                step.cpu
            );
        }
        let _ = writeln!(
            out,
            "  {:<44} {:>8.3}s {:>8.3}s\n  * busy time",
            "total", self.wall, self.cpu
        );
        out
    }
}

/// `bytes` in the largest binary unit that keeps the number at least 1.
#[allow(clippy::cast_precision_loss)]
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}
