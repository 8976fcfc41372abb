//! `cargo xtask <task>`: the project's own tasks, each a plain function.
//!
//! Tasks shell out to `cargo` and the host tools; they carry no heavy
//! dependencies so `cargo xtask` stays quick to build.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod ci;
mod cmd;
mod compare;
mod example;
mod fuzz;
mod man;
mod package;
mod python;
mod scale;

use std::process::ExitCode;

type Task = fn(&[String]) -> Result<(), String>;

/// `(name, task, help)`: the whole command surface of `cargo xtask`.
const TASKS: &[(&str, Task, &str)] = &[
    (
        "ci",
        ci::ci,
        "run exactly what CI runs: setup, fmt, clippy, tests, pylint, pytest",
    ),
    (
        "setup",
        ci::setup,
        "install what the tests need (Debian packages incl. mingw-w64 and Wine, the Windows Rust target)",
    ),
    (
        "slow",
        ci::slow,
        "run the exhaustive suites (#[ignore] tests, release build; minutes)",
    ),
    (
        "bench",
        ci::bench,
        "run every benchmark (slow; installs baselines)",
    ),
    (
        "scale",
        scale::scale,
        "build a synthetic full release at two sizes, 1 and 2 jobs [--gb N] [--mode kpack|legacy|both]",
    ),
    (
        "compare",
        compare::compare,
        "two therock-package binaries on real trees, interleaved: --baseline BIN [--new BIN] [--runs N] [--cold] TREE...",
    ),
    (
        "example",
        example::example,
        "generate the built-in example artifacts [--out DIR] (default example/)",
    ),
    (
        "demo",
        example::demo,
        "the main job on the built-in example: generate, inspect, build, install, test [--windows]",
    ),
    (
        "package",
        package::package,
        "cargo package of every library crate together, then a check of the packages",
    ),
    (
        "example-program",
        package::example_program,
        "build and run examples/package-a-release (outside the workspace) on the example",
    ),
    (
        "fuzz",
        fuzz::fuzz,
        "run the cargo-fuzz targets [--quick] [--seconds N] [target...] (nightly; 60 s each)",
    ),
    (
        "pylint",
        python::pylint,
        "ruff check, ruff format --check and mypy --strict over python/ (pinned tools)",
    ),
    (
        "pytest",
        python::pytest,
        "the Python unit tests on Python 3.9 and 3.13 (installed with uv)",
    ),
    (
        "deny",
        ci::deny,
        "check licences, bans and sources with cargo-deny",
    ),
    (
        "man",
        man::man,
        "write the man pages of both programs into DIR (default target/man)",
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((name, rest)) = args.split_first() else {
        usage();
        return ExitCode::from(2);
    };
    let Some((_, task, _)) = TASKS.iter().find(|(n, _, _)| n == name) else {
        eprintln!("xtask: unknown task `{name}`");
        usage();
        return ExitCode::from(2);
    };
    match task(rest) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask {name}: {message}");
            ExitCode::FAILURE
        }
    }
}

fn usage() {
    eprintln!("usage: cargo xtask <task> [args]\n\ntasks:");
    for (name, _, help) in TASKS {
        eprintln!("  {name:<8} {help}");
    }
}
