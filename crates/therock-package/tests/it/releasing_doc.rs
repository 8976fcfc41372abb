//! The example workflow of `docs/releasing.md` only uses commands and
//! flags `therock-package` has.

use crate::common;

use common::{ok, therock_package};

/// The first ```` ```yaml ```` block of `docs/releasing.md`.
fn workflow() -> String {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/releasing.md"
    ))
    .unwrap();
    let start = doc
        .find("```yaml\n")
        .expect("docs/releasing.md has a yaml block")
        + 8;
    let len = doc[start..].find("\n```").expect("the yaml block ends");
    doc[start..start + len].to_owned()
}

/// Every `therock-package SUBCOMMAND ...` of a shell text, continuation
/// lines joined: the subcommand and its `--flags` (values dropped).
fn invocations(script: &str) -> Vec<(String, Vec<String>)> {
    let joined = script.replace("\\\n", " ");
    let mut found = Vec::new();
    for line in joined.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, word) in words.iter().enumerate() {
            let program = word.rsplit('/').next().unwrap_or(word);
            if program != "therock-package" || word.starts_with("target/") {
                continue;
            }
            let Some(subcommand) = words.get(i + 1).filter(|w| !w.starts_with('-')) else {
                continue;
            };
            let flags = words[i + 2..]
                .iter()
                .take_while(|w| !matches!(**w, "|" | ">" | "&&" | ";" | ")"))
                .filter(|w| w.starts_with("--"))
                .map(|w| w.split('=').next().unwrap().to_owned())
                .collect();
            found.push(((*subcommand).to_owned(), flags));
        }
    }
    found
}

/// The long flags a `--help` text defines (its option lines, not its prose).
fn defined_flags(help: &str) -> Vec<String> {
    let mut flags = Vec::new();
    for line in help
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
    {
        for word in line.split([' ', ',']).filter(|w| !w.is_empty()) {
            if let Some(flag) = word.strip_prefix("--") {
                flags.push(format!("--{}", flag.split('=').next().unwrap()));
            } else if !word.starts_with('-') {
                break;
            }
        }
    }
    flags
}

#[test]
fn every_command_and_flag_of_the_example_workflow_exists() {
    let workflow = workflow();
    let calls = invocations(&workflow);
    let subcommands: Vec<&str> = calls.iter().map(|(s, _)| s.as_str()).collect();
    for needed in ["plan", "build", "assemble"] {
        assert!(
            subcommands.contains(&needed),
            "no `{needed}` in {subcommands:?}"
        );
    }
    for (subcommand, flags) in &calls {
        let help = ok(&therock_package(&[subcommand, "--help"]));
        let defined = defined_flags(&help);
        for flag in flags {
            assert!(
                defined.contains(flag),
                "the workflow runs `therock-package {subcommand} {flag}`, which `{subcommand} --help` does not list:\n{help}"
            );
        }
    }
    // The build jobs run the plan's matrix; artifacts pass through the
    // standard actions only.
    assert!(workflow.contains("matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}"));
    assert!(workflow.contains("--shard \"${{ matrix.shard }}\""));
    for line in workflow.lines().filter(|l| l.contains("uses:")) {
        let action = line.split("uses:").nth(1).unwrap().trim();
        assert!(
            [
                "actions/checkout@",
                "actions/upload-artifact@",
                "actions/download-artifact@"
            ]
            .iter()
            .any(|a| action.starts_with(a)),
            "{action} is not a standard action"
        );
    }
}

#[test]
fn the_checker_sees_a_flag_that_does_not_exist() {
    let calls = invocations(
        "run: |\n  tool/therock-package build --artifact-dir a \\\n    --shards 3 --bogus=1 | tee x\n",
    );
    assert_eq!(
        calls,
        vec![(
            "build".to_owned(),
            vec![
                "--artifact-dir".to_owned(),
                "--shards".to_owned(),
                "--bogus".to_owned()
            ]
        )]
    );
    let defined = defined_flags(&ok(&therock_package(&["build", "--help"])));
    assert!(
        defined.contains(&"--artifact-dir".to_owned()),
        "{defined:?}"
    );
    assert!(defined.contains(&"--shard".to_owned()), "{defined:?}");
    assert!(defined.contains(&"--jobs".to_owned()), "{defined:?}");
    // `plan --shards` is named in `build --help`'s prose, not defined there.
    assert!(!defined.contains(&"--shards".to_owned()), "{defined:?}");
    assert!(!defined.contains(&"--bogus".to_owned()), "{defined:?}");
}
