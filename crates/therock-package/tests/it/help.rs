//! The help of every command, pinned: grouped options under headings,
//! `-v`/`-q` last under "Global options", examples at the end, no default
//! values that say nothing, no citations of files an installed binary's
//! user does not have.

use crate::common;

use common::therock_package;

/// `therock-package ARGS… -h`, checked for what no page may hold.
fn help(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("-h");
    let out = therock_package(&args);
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    for noise in [
        "[default: \"\"]",
        "[default: 0]",
        "docs/",
        ".md",
        "generate-man",
    ] {
        assert!(!text.contains(noise), "{args:?} shows {noise:?}:\n{text}");
    }
    text
}

#[test]
fn the_program() {
    insta::assert_snapshot!(help(&[]), @"
    Builds the ROCm Python packages from TheRock artifacts

    Usage: therock-package [OPTIONS] <COMMAND>

    Commands:
      inspect       Describe an artifact directory: mode, artifacts, targets, counts, warnings
      build         Build every package of the set into `--dest-dir/dist`
      plan          Print where every file would go, without writing anything
      assemble      Join the outputs of `build --shard K/N` into one release: check the shards, write the `rocm` sdists and the index, verify
      verify        Check a release before publishing: well-formed packages, one version, identical duplicates, reachable device extras, satisfiable requirements, complete targets, resolvable ELF links (exit 1 on any problem)
      index         Write the index pages of a dist directory: a find-links page, a PEP 503 simple tree, and the PEP 658 `.metadata` file of every wheel
      post-release  Write a post-release `X.postN` of the `rocm` selector beside the selector of a published release `X`: this program's selector code, the release's document, every requirement still pinned to `X`
      completions   Print a completion script for a shell (bash, zsh, fish, elvish, powershell)
      help          Print this message or the help of the given subcommand(s)

    Options:
      -h, --help     Print help (see more with '--help')
      -V, --version  Print version

    Global options:
      -v, --verbose...  More log output (repeat for more: info, debug, trace)
      -q, --quiet       Only errors: no progress and no report of what was done (a command's answer, such as `plan` or `verify`, still prints)

    Examples:
      therock-package inspect --artifact-dir build/artifacts
      therock-package build --artifact-dir build/artifacts --dest-dir out
      therock-package verify out/dist
      therock-package index out/dist --layout both

    Run `therock-package COMMAND --help` for the flags of one command.
    ");
}

#[test]
fn build() {
    insta::assert_snapshot!(help(&["build"]), @r"
    Build every package of the set into `--dest-dir/dist`

    Usage: therock-package build [OPTIONS] --artifact-dir <DIR> --dest-dir <DIR>

    Options:
      -h, --help  Print help (see more with '--help')

    Input and output:
          --artifact-dir <DIR>  TheRock's artifact directory (one `NAME_COMPONENT_TARGET` directory or `.tar.zst`/`.tar.xz` archive per artifact)
          --dest-dir <DIR>      Where `dist/` is written
          --build-packages      Write the packages (the default)
          --no-build-packages   Validate and write `plan.json` only
          --shard <K/N>         Build only shard K of N (`plan --shards N` lists them) and write `shard.json` beside `dist/` for `assemble`

    Release:
          --version <VERSION>
              The package version (default: the one `therock_manifest.json` records)
          --version-suffix <NONCE>
              Nonce appended to platform package directory names
          --linux-amdgpu-families <FAMILIES>
              Families the Linux release offers (`,` or `;` separated; empty: none)
          --windows-amdgpu-families <FAMILIES>
              Families the Windows release offers (`,` or `;` separated; empty: none)
          --platform-tag <TAG>
              Wheel platform tag (default: `ROCM_SDK_WHEEL_PLATFORM_TAG`, else the host's)
          --keep-absolute-search-paths
              Ship the absolute entries of host ELF files' search paths (`/home/builder/…/lib`: directories of the build host, which become `DT_RPATH`) instead of leaving them out with a warning
          --runtime-alias <NAME>
              An unversioned library name (`libamdhip64.so`) that gets a runtime alias besides the names the build finds (repeatable)

    Compression:
          --devel-compression <CODEC>     The devel tarball codec [possible values: none, xz, zstd]
          --devel-tarball-compression     Compress the devel tarball with xz (same as `--devel-compression xz`)
          --no-devel-tarball-compression  Store the devel tarball uncompressed (the default)
          --wheel-compression             Deflate wheel members (the default)
          --no-wheel-compression          Store wheel members uncompressed
          --compression-level <LEVEL>     Deflate level of wheel members (libdeflate): 1 fastest … 12 smallest, 0 stores them. Default 6, smaller than Python's zipfile at level 6
      -j, --jobs <N>                      Threads for extracting and compressing (default: one per core; at most four per core)

    Package metadata:
          --metadata <FILE>            A TOML file with the packages' `license-expression`, `[project-urls]` and `[summaries]`; unset keys keep their defaults
          --license-expression <SPDX>  `License-Expression` of every package (overrides `--metadata`)
          --project-url <LABEL=URL>    A `Project-URL` as `LABEL=URL` (repeatable; replaces the list of `--metadata` and the defaults)

    Report:
          --json     Print the report as JSON: every written file with its size and sha256
          --timings  Measure wall and CPU time per build step, package and phase, and add the table to the report (and `timings` to `--json`)
          --strict   Exit 1, as `verify` does, when the packages written fail the ELF-link check (every `DT_NEEDED` resolves); without it the build warns and exits 0

    Native programs:
          --rocm-sdk-linux <FILE>    The `rocm-sdk` program Linux core wheels carry, instead of the one built in (default: `THEROCK_PACKAGE_ROCM_SDK_LINUX`); checked before use
          --rocm-sdk-windows <FILE>  The `rocm-sdk.exe` program `win_amd64` core wheels carry, instead of the one built in (default: `THEROCK_PACKAGE_ROCM_SDK_WINDOWS`); checked before use

    Global options:
      -v, --verbose...  More log output (repeat for more: info, debug, trace)
      -q, --quiet       Only errors: no progress and no report of what was done (a command's answer, such as `plan` or `verify`, still prints)

    Examples:
      Build every package of a TheRock build into out/dist:
        therock-package build --artifact-dir build/artifacts --dest-dir out
      A release candidate offering two families on Linux:
        therock-package build --artifact-dir build/artifacts --dest-dir out \
          --version 7.1.0rc1 --linux-amdgpu-families 'gfx94X-dcgpu;gfx110X-dgpu'
      Shard 1 of 4 of a large build (then `assemble`):
        therock-package build --artifact-dir build/artifacts --dest-dir shard1 --shard 1/4
    ");
}

#[test]
fn plan() {
    insta::assert_snapshot!(help(&["plan"]), @"
    Print where every file would go, without writing anything

    Usage: therock-package plan [OPTIONS] --artifact-dir <DIR>

    Options:
      -h, --help  Print help (see more with '--help')

    Input and output:
          --artifact-dir <DIR>  TheRock's artifact directory (one `NAME_COMPONENT_TARGET` directory or `.tar.zst`/`.tar.xz` archive per artifact)

    Release:
          --version <VERSION>
              The package version (default: the one `therock_manifest.json` records)
          --version-suffix <NONCE>
              Nonce appended to platform package directory names
          --linux-amdgpu-families <FAMILIES>
              Families the Linux release offers (`,` or `;` separated; empty: none)
          --windows-amdgpu-families <FAMILIES>
              Families the Windows release offers (`,` or `;` separated; empty: none)
          --platform-tag <TAG>
              Wheel platform tag (default: `ROCM_SDK_WHEEL_PLATFORM_TAG`, else the host's)
          --keep-absolute-search-paths
              Ship the absolute entries of host ELF files' search paths (`/home/builder/…/lib`: directories of the build host, which become `DT_RPATH`) instead of leaving them out with a warning
          --runtime-alias <NAME>
              An unversioned library name (`libamdhip64.so`) that gets a runtime alias besides the names the build finds (repeatable)

    Compression:
          --devel-compression <CODEC>     The devel tarball codec [possible values: none, xz, zstd]
          --devel-tarball-compression     Compress the devel tarball with xz (same as `--devel-compression xz`)
          --no-devel-tarball-compression  Store the devel tarball uncompressed (the default)

    Package metadata:
          --metadata <FILE>            A TOML file with the packages' `license-expression`, `[project-urls]` and `[summaries]`; unset keys keep their defaults
          --license-expression <SPDX>  `License-Expression` of every package (overrides `--metadata`)
          --project-url <LABEL=URL>    A `Project-URL` as `LABEL=URL` (repeatable; replaces the list of `--metadata` and the defaults)

    Native programs:
          --rocm-sdk-linux <FILE>    The `rocm-sdk` program Linux core wheels carry, instead of the one built in (default: `THEROCK_PACKAGE_ROCM_SDK_LINUX`); checked before use
          --rocm-sdk-windows <FILE>  The `rocm-sdk.exe` program `win_amd64` core wheels carry, instead of the one built in (default: `THEROCK_PACKAGE_ROCM_SDK_WINDOWS`); checked before use

    Report:
          --json        Print the whole plan as JSON
          --shards <N>  Split the package set into N shards of balanced input bytes instead (with `--json`: a CI matrix)

    Global options:
      -v, --verbose...  More log output (repeat for more: info, debug, trace)
      -q, --quiet       Only errors: no progress and no report of what was done (a command's answer, such as `plan` or `verify`, still prints)

    Examples:
      therock-package plan --artifact-dir build/artifacts
      therock-package plan --artifact-dir build/artifacts --shards 4 --json
    ");
}

#[test]
fn inspect() {
    insta::assert_snapshot!(help(&["inspect"]), @r"
        Describe an artifact directory: mode, artifacts, targets, counts, warnings

        Usage: therock-package inspect [OPTIONS] --artifact-dir <DIR>

        Options:
              --artifact-dir <DIR>  The directory holding TheRock artifacts (directories, .tar.zst or .tar.xz)
              --json                Print JSON instead of text
          -h, --help                Print help

        Global options:
          -v, --verbose...  More log output (repeat for more: info, debug, trace)
          -q, --quiet       Only errors: no progress and no report of what was done (a command's answer, such as `plan` or `verify`, still prints)

        Examples:
          therock-package inspect --artifact-dir build/artifacts
          therock-package inspect --artifact-dir build/artifacts --json
        ");
}

#[test]
fn assemble() {
    insta::assert_snapshot!(help(&["assemble"]), @r"
    Join the outputs of `build --shard K/N` into one release: check the shards, write the `rocm` sdists and the index, verify

    Usage: therock-package assemble [OPTIONS] --dest-dir <DIR> <SHARD_DIR>...

    Arguments:
      <SHARD_DIR>...  The `--dest-dir` of every `build --shard K/N` of the release (one or more platforms, each split into its own shards)

    Options:
          --dest-dir <DIR>    Where the release's `dist/` is written (it must be new or empty)
          --policy <POLICY>   The manylinux policy every Linux wheel must keep to (`manylinux_2_28`, `manylinux2014`); default: the one each wheel's own tag claims
          --exclude <SONAME>  A library the release deliberately leaves to the system although no policy allows it (repeatable; auditwheel's `--exclude`)
      -h, --help              Print help

    Report:
          --json    Print what was assembled as JSON: each platform's shards and plan, every file of the release
          --strict  Refuse the release, writing nothing, when its only failing check is the ELF-link check (every `DT_NEEDED` resolves); without it the release is written with a warning, as `build` does

    Global options:
      -v, --verbose...  More log output (repeat for more: info, debug, trace)
      -q, --quiet       Only errors: no progress and no report of what was done (a command's answer, such as `plan` or `verify`, still prints)

    Examples:
      therock-package assemble shard1 shard2 shard3 shard4 --dest-dir release
    ");
}

#[test]
fn verify() {
    insta::assert_snapshot!(help(&["verify"]), @r"
        Check a release before publishing: well-formed packages, one version, identical duplicates, reachable device extras, satisfiable requirements, complete targets, resolvable ELF links (exit 1 on any problem)

        Usage: therock-package verify [OPTIONS] <DIST_DIR>...

        Arguments:
          <DIST_DIR>...  Dist directories of one release (searched recursively for `*.whl` and `*.tar.gz`)

        Options:
              --linux-amdgpu-families <FAMILIES>
                  Families the Linux release must offer (`,` or `;` separated): every target needs its device wheel (kpack) or every family its libraries wheel (legacy)
              --windows-amdgpu-families <FAMILIES>
                  Families the Windows release must offer
              --policy <POLICY>
                  The manylinux policy every Linux wheel must keep to (`manylinux_2_28`, `manylinux2014`); default: the one each wheel's own tag claims
              --exclude <SONAME>
                  A library the release deliberately leaves to the system although no policy allows it (repeatable; auditwheel's `--exclude`)
              --json
                  Print the report as JSON
          -h, --help
                  Print help

        Global options:
          -v, --verbose...  More log output (repeat for more: info, debug, trace)
          -q, --quiet       Only errors: no progress and no report of what was done (a command's answer, such as `plan` or `verify`, still prints)

        Examples:
          therock-package verify out/dist
          therock-package verify out/dist --linux-amdgpu-families gfx94X-dcgpu --json
        ");
}

#[test]
fn index() {
    insta::assert_snapshot!(help(&["index"]), @r"
        Write the index pages of a dist directory: a find-links page, a PEP 503 simple tree, and the PEP 658 `.metadata` file of every wheel

        Usage: therock-package index [OPTIONS] <DIST_DIR>

        Arguments:
          <DIST_DIR>  The dist directory to index (the pages are written into it)

        Options:
              --per-family       Legacy releases with several families: one index per `dist/{F}/` listing that family's packages and the shared ones beside it
              --layout <LAYOUT>  Which pages to write: the flat `index.html` (a `--find-links` source), the PEP 503 tree `simple/` (an `--index-url`), or both [default: flat] [possible values: flat, simple, both]
              --json             Print what was written as JSON
          -h, --help             Print help (see more with '--help')

        Global options:
          -v, --verbose...  More log output (repeat for more: info, debug, trace)
          -q, --quiet       Only errors: no progress and no report of what was done (a command's answer, such as `plan` or `verify`, still prints)

        Examples:
          therock-package index out/dist
          therock-package index out/dist --layout both --json
        ");
}

#[test]
fn completions() {
    let text = help(&["completions"]);
    assert!(!text.contains("--json"), "{text}");
    insta::assert_snapshot!(text, @r"
        Print a completion script for a shell (bash, zsh, fish, elvish, powershell)

        Usage: therock-package completions [OPTIONS] <SHELL>

        Arguments:
          <SHELL>  The shell [possible values: bash, elvish, fish, powershell, zsh]

        Options:
          -h, --help  Print help

        Global options:
          -v, --verbose...  More log output (repeat for more: info, debug, trace)
          -q, --quiet       Only errors: no progress and no report of what was done (a command's answer, such as `plan` or `verify`, still prints)

        Examples:
          therock-package completions bash > ~/.local/share/bash-completion/completions/therock-package
          therock-package completions zsh > ~/.zfunc/_therock-package
        ");
}

/// Completion scripts offer the visible commands only.
#[test]
fn completions_leave_out_hidden_commands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = therock_package(&["completions", shell]);
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("assemble"), "{shell}");
        assert!(!script.contains("generate-man"), "{shell}:\n{script}");
    }
}
