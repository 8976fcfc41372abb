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
pub struct PhaseTime {
    /// Its name (`elf-edit`, `devel-tar`, `read`, `compress`, ...).
    pub phase: &'static str,
    /// Summed wall time of the phase's spans over every thread, in seconds.
    pub busy: f64,
    /// CPU time of the threads, in seconds.
    pub cpu: f64,
    /// The bytes it handled.
    pub bytes: u64,
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
pub struct PackageTime {
    /// The distribution name (`rocm` for a selector sdist).
    pub name: String,
    /// The file written, without directories.
    pub file: String,
    /// When it began, in seconds from the start of the packages step
    /// (packages are written several at once).
    pub start: f64,
    /// Elapsed seconds.
    pub wall: f64,
    /// The CPU seconds of the threads that worked on it.
    pub cpu: f64,
    /// Empty for sdists, which are small and written in one step.
    pub phases: Vec<PhaseTime>,
}

/// One step of the build outside the packages.
#[derive(Debug, Clone, Serialize)]
pub struct StepTime {
    /// Its name (`extract`, `plan`, `packages`, `commit`, `hash`).
    pub step: &'static str,
    /// Elapsed seconds.
    pub wall: f64,
    /// The process's CPU seconds over that time.
    pub cpu: f64,
}

/// The timings of one build, in the order things happened
/// (docs/formats.md, docs/performance.md).
#[derive(Debug, Clone, Default, Serialize)]
pub struct BuildTimings {
    /// The whole command's elapsed seconds.
    pub wall: f64,
    /// Its CPU seconds.
    pub cpu: f64,
    /// `extract` (archive artifacts only), `plan`, `packages`, `commit`,
    /// `hash` (hashed files only).
    pub steps: Vec<StepTime>,
    /// Every package written.
    pub packages: Vec<PackageTime>,
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
}
