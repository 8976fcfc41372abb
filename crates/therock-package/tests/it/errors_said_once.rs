//! Every error the command line can meet says each thing once: a message
//! never repeats its own cause, which the program prints after it.
//!
//! Each case breaks one input (a bad version, a missing directory, a bad
//! manifest, a broken ELF file, an unreadable artifact, a file that is not a
//! wheel, ...), runs the program and checks that it fails and that no
//! sentence of its output appears twice (`fixtures::sentences`); a failed
//! `verify` reports on stdout, so both streams are checked.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use fixtures::privileges::wrapped_command;
use fixtures::sentences::repeated_sentences;

const HIP: &str = "core-hip_lib_generic";
const HIP_LIB: &str = "core-hip_lib_generic/core/clr/stage/lib/libamdhip64.so.7.1.0";
const MANIFEST: &str =
    "base_lib_generic/base/aux-overlay/stage/share/therock/therock_manifest.json";

/// Runs `therock-package args…` through `wrapper` (a command and its
/// arguments, empty for none) and returns its exit code and stderr.
fn run(wrapper: &[&str], args: &[&Path]) -> (Option<i32>, String) {
    let binary = env!("CARGO_BIN_EXE_therock-package");
    let mut command = wrapped_command(wrapper, binary);
    let out = command
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("ROCM_SDK_WHEEL_PLATFORM_TAG")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    // A failed `verify` reports on stdout; an error goes to stderr.
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// What is wrong with one case's output, if anything.
fn problem(name: &str, (code, output): (Option<i32>, String)) -> Option<String> {
    if code == Some(0) || output.is_empty() {
        return Some(format!(
            "{name}: expected a failure, got {code:?}:\n{output}"
        ));
    }
    let repeated = repeated_sentences(&output);
    (!repeated.is_empty()).then(|| format!("{name}: said twice: {repeated:?} in\n{output}"))
}

fn p(s: &str) -> &Path {
    Path::new(s)
}

#[test]
fn every_error_of_the_command_line_says_each_thing_once() {
    let scratch = tempfile::tempdir().unwrap();
    let dest = scratch.path().join("dest");
    let missing = scratch.path().join("missing");
    let artifacts = common::copy_of_artifacts(fixtures::Layout::Tree);
    let art = artifacts.path();
    let build = |extra: &[&Path]| {
        let mut args = vec![p("build"), p("--artifact-dir"), art, p("--dest-dir"), &dest];
        args.extend(extra);
        run(&[], &args)
    };
    let mut problems = Vec::new();
    let mut check = |name: &str, outcome| problems.extend(problem(name, outcome));

    check("bad --version", build(&[p("--version"), p("notaversion")]));
    check(
        "unknown family",
        build(&[p("--linux-amdgpu-families"), p("gfx9999-nonesuch")]),
    );
    check(
        "missing artifact dir",
        run(
            &[],
            &[
                p("build"),
                p("--artifact-dir"),
                &missing,
                p("--dest-dir"),
                &dest,
            ],
        ),
    );
    check(
        "inspect missing dir",
        run(&[], &[p("inspect"), p("--artifact-dir"), &missing]),
    );
    check("verify missing dir", run(&[], &[p("verify"), &missing]));
    check("index missing dir", run(&[], &[p("index"), &missing]));
    check("missing metadata file", build(&[p("--metadata"), &missing]));
    let bad_toml = scratch.path().join("metadata.toml");
    fs::write(&bad_toml, "license-expression = [\n").unwrap();
    check("bad metadata file", build(&[p("--metadata"), &bad_toml]));

    // A destination that cannot be a directory.
    let file_dest = scratch.path().join("a-file");
    fs::write(&file_dest, "").unwrap();
    check(
        "destination is a file",
        run(
            &[],
            &[
                p("build"),
                p("--artifact-dir"),
                art,
                p("--dest-dir"),
                &file_dest,
            ],
        ),
    );

    // A file named like a wheel that is not a zip archive.
    let not_a_wheel = scratch.path().join("not-a-wheel");
    fs::create_dir(&not_a_wheel).unwrap();
    fs::write(
        not_a_wheel.join("rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl"),
        "no zip",
    )
    .unwrap();
    check(
        "verify a non-zip wheel",
        run(&[], &[p("verify"), &not_a_wheel]),
    );

    // The version therock_manifest.json records is not PEP 440.
    let manifest = art.join(MANIFEST);
    let original = fs::read_to_string(&manifest).unwrap();
    fs::write(&manifest, original.replace("7.1.0", "7.1.0~custom")).unwrap();
    check("bad manifest version", build(&[]));
    fs::write(&manifest, "{not json").unwrap();
    check("manifest not JSON", build(&[]));
    fs::write(&manifest, original).unwrap();

    // An artifact manifest line that leaves the artifact.
    let lines = art.join(HIP).join("artifact_manifest.txt");
    let original = fs::read_to_string(&lines).unwrap();
    fs::write(&lines, format!("{original}../../escape\n")).unwrap();
    check("unsafe manifest line", build(&[]));
    fs::write(&lines, original).unwrap();

    // A runtime library that is a broken ELF file.
    let lib = art.join(HIP_LIB);
    let original = fs::read(&lib).unwrap();
    fs::write(&lib, &original[..100]).unwrap();
    check("truncated ELF", build(&[]));
    let mut garbled = original.clone();
    garbled[0x20..0x28].fill(0xff); // e_phoff far past the end
    fs::write(&lib, &garbled).unwrap();
    check("garbled ELF", build(&[]));
    fs::write(&lib, &original).unwrap();

    // An artifact the builder may not read.
    let artifact = art.join(HIP);
    fs::set_permissions(&artifact, fs::Permissions::from_mode(0o000)).unwrap();
    check(
        "permission denied",
        run(
            fixtures::privileges::without_permission_bypass(),
            &[p("build"), p("--artifact-dir"), art, p("--dest-dir"), &dest],
        ),
    );
    fs::set_permissions(&artifact, fs::Permissions::from_mode(0o755)).unwrap();

    // Archives cut short.
    let archives = common::copy_of_artifacts(fixtures::Layout::TarZst);
    let archive = fs::read_dir(archives.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|path| path.to_string_lossy().contains(HIP))
        .unwrap();
    let bytes = fs::read(&archive).unwrap();
    fs::write(&archive, &bytes[..bytes.len() / 2]).unwrap();
    check(
        "truncated archive",
        run(
            &[],
            &[
                p("build"),
                p("--artifact-dir"),
                archives.path(),
                p("--dest-dir"),
                &dest,
            ],
        ),
    );

    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
