//! The crates keep to their layers (docs/architecture.md, "Layers"; docs/
//! using-the-crates.md), read from what `cargo tree -e normal` resolves
//! for each crate alone, so a feature another crate of the workspace
//! enables does not count:
//!
//! - the library crates take options values, not command lines: no library
//!   but `cli-output` (the binaries' terminal helper) builds clap, directly
//!   or not, and `pipeline` draws no terminal;
//! - the mechanism crates know ELF and launchers, not what a ROCm package
//!   is: `elf-surgery`, `trampoline-gen` and `link-check` build neither
//!   the model (`dist-info`) nor serde;
//! - no library builds through a second cargo: whatever links `pipeline`
//!   (or any other library crate) builds with one `cargo build` and no
//!   cross linker (docs/pipeline.md, "The native rocm-sdk"). Binaries may
//!   (`therock-package` builds the `rocm-sdk` it embeds);
//! - libraries take every value as an argument and speak in their own
//!   terms: no library reads the environment, and no library error
//!   message (an `#[error]` text, or the text of a hand-written `Display`
//!   of a type named `…Error`) names a flag of either binary
//!   (docs/using-the-crates.md, "One convention"). These read the
//!   sources themselves (`layers/rust_text.rs`).

mod common;
#[path = "layers/rust_text.rs"]
mod rust_text;

use std::path::{Path, PathBuf};

use common::{has_kind, is_kind, workspace};
use rust_text::{RustText, attributes, library_code, matching, rust_files};

/// The library crate that may build clap: the binaries' man pages and
/// errors are its `clap` feature.
const TERMINAL: &str = "cli-output";

/// The standard output of `cargo ARGS --offline` on the workspace.
fn cargo(args: &[&str]) -> String {
    common::cargo("Cargo.toml", args)
}

/// The package names of the normal-dependency tree of `package`.
fn normal_dependencies(package: &str) -> Vec<String> {
    cargo(&[
        "tree", "-e", "normal", "--prefix", "none", "--format", "{p}", "-p", package,
    ])
    .lines()
    .filter_map(|line| line.split_whitespace().next())
    .map(str::to_owned)
    .collect()
}

/// Every crate of `crates/` with a library (`src/lib.rs`), by its package
/// name (the directory's name).
fn library_crates() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|dir| dir.join("src/lib.rs").is_file())
        .map(|dir| dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn is_clap(package: &str) -> bool {
    package == "clap" || package.starts_with("clap_")
}

#[test]
fn no_library_but_cli_output_builds_clap() {
    let libraries = library_crates();
    assert!(
        libraries.iter().any(|l| l == "pipeline") && libraries.iter().any(|l| l == TERMINAL),
        "the listing finds the library crates: {libraries:?}"
    );
    let mut offenders = Vec::new();
    for library in libraries.iter().filter(|l| *l != TERMINAL) {
        let dependencies = normal_dependencies(library);
        assert_eq!(
            dependencies.first(),
            Some(library),
            "the tree starts at the package itself"
        );
        let clap: Vec<&String> = dependencies.iter().filter(|d| is_clap(d)).collect();
        if !clap.is_empty() {
            offenders.push(format!("{library} builds {clap:?}"));
        }
    }
    assert!(
        offenders.is_empty(),
        "{offenders:?}: a library takes an options value; the flags live in the binaries \
         (docs/using-the-crates.md)"
    );
}

#[test]
fn the_check_sees_clap_where_it_is() {
    let dependencies = normal_dependencies(TERMINAL);
    assert!(dependencies.iter().any(|d| is_clap(d)), "{dependencies:?}");
}

#[test]
fn pipeline_draws_no_terminal() {
    // The progress display is the binary's (a `BuildProgress`): no
    // progress bar, terminal layer or log subscriber in the library.
    let dependencies = normal_dependencies("pipeline");
    let drawing: Vec<&String> = dependencies
        .iter()
        .filter(|d| ["indicatif", "console", "tracing-subscriber", TERMINAL].contains(&d.as_str()))
        .collect();
    assert!(drawing.is_empty(), "pipeline builds {drawing:?}");
}

/// The crates of the mechanism layer that must stay free of the model.
const MECHANISMS: &[&str] = &["elf-surgery", "trampoline-gen", "link-check"];

/// Packages none of them may build: the model, and serde in any part.
fn forbidden(package: &str) -> bool {
    package == "dist-info" || package == "serde" || package.starts_with("serde_")
}

#[test]
fn elf_surgery_trampoline_gen_and_link_check_build_neither_the_model_nor_serde() {
    for package in MECHANISMS {
        let dependencies = normal_dependencies(package);
        assert_eq!(
            dependencies.first().map(String::as_str),
            Some(*package),
            "the tree starts at the package itself"
        );
        assert!(
            dependencies.iter().any(|d| d == "fs-helpers"),
            "{package}: the tree lists its dependencies"
        );
        let bad: Vec<&String> = dependencies.iter().filter(|d| forbidden(d)).collect();
        assert!(
            bad.is_empty(),
            "{package} depends (directly or not) on {bad:?}; keep the mechanism free of \
             the ROCm model and of serde (docs/architecture.md, \"Layers\")"
        );
    }
}

#[test]
fn the_check_sees_serde_where_it_is() {
    // link-check with its `serde` feature, as release-check enables it.
    let dependencies = normal_dependencies("release-check");
    assert!(
        dependencies.iter().any(|d| forbidden(d)),
        "{dependencies:?}"
    );
}

/// The Rust files of a build script: its file, and the files of its own
/// directory when it is a `build/main.rs`.
fn script_sources(script: &Path) -> Vec<PathBuf> {
    let dir = script.parent().unwrap();
    if dir.file_name().is_some_and(|n| n == "build") {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        files.sort();
        files
    } else {
        vec![script.to_owned()]
    }
}

/// A build script finds the cargo running it through `CARGO`; one that
/// names it, or runs `cargo` by name, starts a second cargo.
fn starts_cargo(source: &str) -> bool {
    source.contains("\"CARGO\"") || source.contains("Command::new(\"cargo\")")
}

#[test]
fn no_library_crate_has_a_build_script_that_runs_cargo() {
    let metadata: serde_json::Value =
        serde_json::from_str(&cargo(&["metadata", "--format-version", "1", "--no-deps"])).unwrap();
    let mut offenders = Vec::new();
    let mut libraries = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        if !has_kind(package, "lib") {
            continue;
        }
        libraries.push(name.to_owned());
        let targets = package["targets"].as_array().unwrap();
        for target in targets.iter().filter(|t| is_kind(t, "custom-build")) {
            let script = PathBuf::from(target["src_path"].as_str().unwrap());
            for file in script_sources(&script) {
                if starts_cargo(&std::fs::read_to_string(&file).unwrap()) {
                    offenders.push(format!("{name}: {}", file.display()));
                }
            }
        }
    }
    assert!(libraries.iter().any(|n| n == "pipeline"), "{libraries:?}");
    assert!(
        offenders.is_empty(),
        "build scripts that run cargo: {offenders:?}"
    );
}

#[test]
fn the_binary_build_script_is_recognised_as_running_cargo() {
    // The check above can fail: therock-package's script (a binary's,
    // allowed) is one it would flag.
    let script = workspace().join("crates/therock-package/build.rs");
    assert!(starts_cargo(&std::fs::read_to_string(script).unwrap()));
}

/// The crates whose sources may read the environment and name flags: the
/// binaries, their terminal helper (`NO_COLOR`, `RUST_LOG`) and the
/// benchmarks' support. The test crates (`fixtures`) are outside `crates/`.
const NOT_LIBRARIES: &[&str] = &["therock-package", "rocm-sdk", TERMINAL, "bench-support"];

/// The binaries whose flags no library message may name.
const BINARIES: &[&str] = &["therock-package", "rocm-sdk"];

/// The library crates whose sources the two checks below read.
fn checked_libraries() -> Vec<String> {
    library_crates()
        .into_iter()
        .filter(|l| !NOT_LIBRARIES.contains(&l.as_str()))
        .collect()
}

/// The functions of `std::env` that read or change the environment.
const ENV_FUNCTIONS: &[&str] = &["var", "var_os", "vars", "vars_os", "set_var", "remove_var"];

/// Where `code` (comments and literals blanked) calls or imports one of
/// [`ENV_FUNCTIONS`]: `env::var(`, `use std::env::var_os;`,
/// `use std::env::{self, vars}`.
fn env_reads(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("env::") {
        let start = from + at + "env::".len();
        from = start;
        let rest = &code[start..];
        let names: Vec<&str> = if rest.starts_with('{') {
            let end = matching(code, start, b'{', b'}').unwrap_or(code.len());
            code[start + 1..end].split(',').map(str::trim).collect()
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            vec![&rest[..end]]
        };
        found.extend(
            names
                .into_iter()
                .filter(|n| ENV_FUNCTIONS.contains(n))
                .map(|n| format!("std::env::{n}")),
        );
    }
    found
}

#[test]
fn no_library_reads_the_environment() {
    let libraries = checked_libraries();
    assert!(libraries.iter().any(|l| l == "pipeline"), "{libraries:?}");
    let mut offenders = Vec::new();
    for library in &libraries {
        for (file, _, code) in library_code(&workspace().join("crates").join(library).join("src")) {
            for read in env_reads(&code) {
                offenders.push(format!("{}: {read}", file.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "{offenders:#?}: a library takes every value as an argument; the binary reads the \
         environment and passes it in (docs/using-the-crates.md)"
    );
}

#[test]
fn the_environment_check_sees_reads_where_they_are() {
    // The binaries read the environment (their flags' defaults); the
    // check finds it there, and in each spelling a library could use.
    let main = workspace().join("crates/therock-package/src/main.rs");
    let text = RustText::new(&std::fs::read_to_string(main).unwrap());
    assert!(!env_reads(&text.code).is_empty());
    for (source, read) in [
        ("let x = std::env::var(\"A\");", "std::env::var"),
        ("use std::env::var_os;", "std::env::var_os"),
        ("use std::env::{self, set_var};", "std::env::set_var"),
        ("let v = env::vars();", "std::env::vars"),
    ] {
        assert_eq!(env_reads(&RustText::new(source).code), [read], "{source}");
    }
    assert!(
        env_reads(&RustText::new("// std::env::var(\"A\")\nlet s = \"env::var\";").code).is_empty()
    );
}

/// Every long flag of the binaries, from their clap definitions: each
/// `#[arg(long ...)]` field (`--field-name`, or `long = "name"`), clap's
/// own `--help`, and `--version` of a `#[command(version ...)]`.
fn binary_flags() -> Vec<String> {
    let mut flags = vec!["--help".to_owned()];
    for binary in BINARIES {
        for file in rust_files(&workspace().join("crates").join(binary).join("src")) {
            let text = RustText::new(&std::fs::read_to_string(&file).unwrap());
            for range in attributes(&text.code, "arg") {
                let inside = &text.code[range.start + "#[arg(".len()..range.end - 1];
                if let Some(name) = text.strings_in(&range).find(|_| named_long(inside)) {
                    flags.push(format!("--{name}"));
                } else if has_word(inside, "long") {
                    flags.push(format!(
                        "--{}",
                        field_after(&text.code, range.end).replace('_', "-")
                    ));
                }
            }
            for range in attributes(&text.code, "command") {
                if has_word(&text.code[range.clone()], "version") {
                    flags.push("--version".to_owned());
                }
            }
        }
    }
    flags.sort();
    flags.dedup();
    flags
}

/// `long = "name"` (the literal itself is blanked in the code).
fn named_long(inside: &str) -> bool {
    inside.split(',').any(|part| {
        let part = part.trim();
        part.starts_with("long") && part["long".len()..].trim_start().starts_with('=')
    })
}

/// Whether `word` stands alone in `code` (an attribute's argument list).
fn has_word(code: &str, word: &str) -> bool {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// The name of the field an attribute ending at `end` is on: the first
/// `name:` after it, past other attributes.
fn field_after(code: &str, end: usize) -> String {
    let rest = &code[end..];
    let colon = rest.find(':').expect("an attribute of a field");
    let before = &rest[..colon];
    before
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| !w.is_empty())
        .expect("a field name before its type")
        .to_owned()
}

/// The flags `text` names: each of `flags` standing alone (not the start
/// of a longer flag), and `--{` (a flag named at run time).
fn named_flags(text: &str, flags: &[String]) -> Vec<String> {
    let is_flag_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut named: Vec<String> = flags
        .iter()
        .filter(|flag| {
            text.match_indices(flag.as_str()).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + flag.len()..].chars().next();
                !before.is_some_and(is_flag_char) && !after.is_some_and(is_flag_char)
            })
        })
        .cloned()
        .collect();
    // `--{flag}`, `--rocm-sdk-{platform}`: a flag put together at run time.
    let run_time = text.match_indices("--").any(|(at, _)| {
        let rest = &text[at + 2..];
        let name = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(rest.len());
        rest[name..].starts_with('{') && !rest[name..].starts_with("{{")
    });
    if run_time {
        named.push("--{…}".to_owned());
    }
    named
}

/// The code range of each `impl ... Display for NameError` block in
/// `code`: from `impl` to its closing brace (an error type whose message
/// is written by hand rather than by `#[error]`).
fn error_display_impls(code: &str) -> Vec<std::ops::Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("Display for ") {
        let at = from + at;
        from = at + "Display for ".len();
        let name_end = code[from..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(code.len(), |end| from + end);
        let Some(start) = code[..at].rfind("impl") else {
            continue;
        };
        let Some(open) = code[name_end..].find('{').map(|b| name_end + b) else {
            continue;
        };
        if !code[from..name_end].ends_with("Error") {
            continue;
        }
        if let Some(close) = matching(code, open, b'{', b'}') {
            found.push(start..close + 1);
            from = close + 1;
        }
    }
    found
}

#[test]
fn no_library_error_names_a_flag() {
    let flags = binary_flags();
    let mut offenders = Vec::new();
    for library in checked_libraries() {
        for (file, text, code) in
            library_code(&workspace().join("crates").join(&library).join("src"))
        {
            let mut messages = attributes(&code, "error");
            messages.extend(error_display_impls(&code));
            for range in messages {
                for message in text.strings_in(&range) {
                    for flag in named_flags(message, &flags) {
                        offenders.push(format!("{}: {flag} in {message:?}", file.display()));
                    }
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "{offenders:#?}: a library error says what went wrong in the library's own terms; the \
         binary says which flag that was (docs/using-the-crates.md)"
    );
}

#[test]
fn the_flag_check_reads_hand_written_error_messages() {
    let source = "impl fmt::Display for BadError {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) \
                  -> fmt::Result {\n        f.write_str(\"pass --dest-dir\")\n    }\n}\n\
                  impl fmt::Display for Report { fn fmt() { \"--dest-dir\" } }";
    let text = RustText::new(source);
    let ranges = error_display_impls(&text.code);
    assert_eq!(ranges.len(), 1, "{ranges:?}");
    let messages: Vec<&str> = text.strings_in(&ranges[0]).collect();
    assert_eq!(messages, ["pass --dest-dir"]);
    assert_eq!(
        named_flags(messages[0], &binary_flags()),
        ["--dest-dir".to_owned()]
    );
}

#[test]
fn the_flag_check_sees_the_flags_of_both_binaries() {
    let flags = binary_flags();
    for flag in [
        "--artifact-dir",
        "--version-suffix",
        "--linux-amdgpu-families",
        "--exclude",
        "--per-family",
        "--site-packages",
        "--library-path",
        "--version",
        "--help",
    ] {
        assert!(flags.iter().any(|f| f == flag), "{flag} not in {flags:?}");
    }
    assert!(
        !flags.iter().any(|f| f == "--dir" || f == "--shard-dirs"),
        "{flags:?}"
    );
    assert_eq!(
        named_flags("invalid --version-suffix; see --version", &flags),
        ["--version", "--version-suffix"]
    );
    assert!(named_flags("pip install --force-reinstall rocm", &flags).is_empty());
    assert_eq!(named_flags("--{flag}", &flags), ["--{…}"]);
    assert_eq!(named_flags("(--rocm-sdk-{flag} FILE)", &flags), ["--{…}"]);
}
