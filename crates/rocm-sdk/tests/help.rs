//! The help of every command, pinned: `Usage:` as in `therock-package`,
//! `-v`/`-q` last under "Global options", examples at the end.

use std::process::Command;

fn help(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("-h");
    let out = Command::new(env!("CARGO_BIN_EXE_rocm-sdk"))
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    for noise in ["usage:", "docs/", ".md", "generate-man", "site-packages <"] {
        assert!(!text.contains(noise), "{args:?} shows {noise:?}:\n{text}");
    }
    text
}

#[test]
fn the_program() {
    insta::assert_snapshot!(help(&[]), @"
    Sets up and checks an installed ROCm Python SDK

    Usage: rocm-sdk [OPTIONS] [COMMAND]

    Commands:
      init     Unpack the devel tree and link installed device files into it
      path     Print a path of the devel tree (unpacking it on first use), or the shared-library directories
      version  Print the version of the installed ROCm packages
      targets  Print the GPU targets this ROCm release was built for
      test     Check the installation; ends with `N passed, N failed`
      help     Print this message or the help of the given subcommand(s)

    Options:
      -V, --version  Print the version of the installed ROCm packages (as `version`)
      -h, --help     Print help

    Global options:
      -v, --verbose...  More log output (repeat for more; `ROCM_SDK_LOG` or `RUST_LOG` override)
      -q, --quiet       Print nothing on success (warnings included)

    Examples:
      rocm-sdk test                 check the installation (paste this into a bug report)
      rocm-sdk init                 unpack the devel tree once, e.g. in a Dockerfile
      rocm-sdk path --cmake         for CMAKE_PREFIX_PATH
      rocm-sdk version --json

    Run `rocm-sdk COMMAND --help` for the flags of one command.
    ");
}

#[test]
fn init() {
    insta::assert_snapshot!(help(&["init"]), @r"
        Unpack the devel tree and link installed device files into it

        Usage: rocm-sdk init [OPTIONS]

        Options:
              --json  Print JSON
          -h, --help  Print help

        Global options:
          -v, --verbose...  More log output (repeat for more; `ROCM_SDK_LOG` or `RUST_LOG` override)
          -q, --quiet       Print nothing on success (warnings included)

        Examples:
          rocm-sdk init
          rocm-sdk init --json
        ");
}

#[test]
fn path() {
    insta::assert_snapshot!(help(&["path"]), @r#"
    Print a path of the devel tree (unpacking it on first use), or the shared-library directories

    Usage: rocm-sdk path [OPTIONS] <--cmake|--bin|--root|--library-path|--json>

    Options:
          --cmake         The CMake package directory (`<devel>/lib/cmake`)
          --bin           The directory of executables (`<devel>/bin`)
          --root          The root of the devel tree
          --library-path  The directories of the installation's shared libraries, in the order the loader should search them, joined as `LD_LIBRARY_PATH` (`PATH` on Windows) takes them. Never unpacks the devel tree
          --json          Print all three paths and the warnings as JSON (with `--library-path`: the directories as a JSON list)
      -h, --help          Print help

    Global options:
      -v, --verbose...  More log output (repeat for more; `ROCM_SDK_LOG` or `RUST_LOG` override)
      -q, --quiet       Print nothing on success (warnings included)

    Examples:
      cmake -DCMAKE_PREFIX_PATH="$(rocm-sdk path --cmake)" ..
      export PATH="$(rocm-sdk path --bin):$PATH"
      export LD_LIBRARY_PATH="$(rocm-sdk path --library-path)"
      rocm-sdk path --json
    "#);
}

#[test]
fn version() {
    insta::assert_snapshot!(help(&["version"]), @r"
        Print the version of the installed ROCm packages

        Usage: rocm-sdk version [OPTIONS]

        Options:
              --json  Print JSON
          -h, --help  Print help

        Global options:
          -v, --verbose...  More log output (repeat for more; `ROCM_SDK_LOG` or `RUST_LOG` override)
          -q, --quiet       Print nothing on success (warnings included)

        Examples:
          rocm-sdk version
          rocm-sdk version --json       every installed ROCm distribution too
        ");
}

#[test]
fn targets() {
    insta::assert_snapshot!(help(&["targets"]), @r"
        Print the GPU targets this ROCm release was built for

        Usage: rocm-sdk targets [OPTIONS]

        Options:
              --json  Print JSON
          -h, --help  Print help

        Global options:
          -v, --verbose...  More log output (repeat for more; `ROCM_SDK_LOG` or `RUST_LOG` override)
          -q, --quiet       Print nothing on success (warnings included)

        Examples:
          rocm-sdk targets
          rocm-sdk targets --json
        ");
}

#[test]
fn test() {
    insta::assert_snapshot!(help(&["test"]), @r"
        Check the installation; ends with `N passed, N failed`

        Usage: rocm-sdk test [OPTIONS]

        Options:
              --json             Print a JSON report instead of text
              --jobs <N>         Libraries loaded at the same time (default: one per core)
              --python <PYTHON>  The Python interpreter to check imports and library loads with (default: $ROCM_SDK_PYTHON, set by the `rocm-sdk` script, else the interpreter of the environment site-packages belongs to)
          -h, --help             Print help

        Global options:
          -v, --verbose...  More log output (repeat for more; `ROCM_SDK_LOG` or `RUST_LOG` override)
          -q, --quiet       Print nothing on success (warnings included)

        Examples:
          rocm-sdk test                 the report, failures named again at the end
          rocm-sdk test -q              only the failures
          rocm-sdk test --json > report.json
        ");
}

/// Values judged from the command line alone exit 2, as in `therock-package`.
#[test]
fn bad_flag_values_exit_2() {
    for args in [
        &["test", "--jobs", "banana"][..],
        &["test", "--jobs", "-1"],
        &["path", "--cmake", "--bin"],
        &["path"],
        &["no-such-command"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rocm-sdk"))
            .args(args)
            .args(["--site-packages", "/nonexistent"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
}
