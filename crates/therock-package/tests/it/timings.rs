//! `build --timings`: the shape of `timings` in `--json` (times redacted),
//! that the measured bytes add up to what was written, that the CPU time
//! of the phases fits inside their package's, and the text table. No
//! assertion on how long anything took.
#![allow(clippy::cast_precision_loss)]

use crate::common;

use std::path::Path;

use common::{artifacts, build_into, ok};
use fixtures::ExampleMode;
use serde_json::Value;

/// `build --json --timings` of `artifact_dir`: the report.
fn build_json(artifact_dir: &Path, dest: &Path) -> Value {
    let out = build_into(artifact_dir, dest, &["--json", "--timings", "-q"]);
    serde_json::from_str(&ok(&out)).expect("build --json prints JSON")
}

/// Replaces every time with `"[seconds]"` and every byte count with
/// `"[bytes]"`: what remains is the schema.
fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match key.as_str() {
                    "wall" | "cpu" | "busy" | "start" => *value = Value::from("[seconds]"),
                    "bytes" => *value = Value::from("[bytes]"),
                    "file" => *value = Value::from("[file]"),
                    _ => redact(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

#[test]
fn json_timings_have_the_documented_shape() {
    let dest = tempfile::tempdir().unwrap();
    let report = build_json(&artifacts(ExampleMode::Kpack), dest.path());
    let mut timings = report["timings"].clone();
    redact(&mut timings);
    insta::assert_json_snapshot!(timings);
}

#[test]
fn archive_builds_time_the_extraction() {
    let dest = tempfile::tempdir().unwrap();
    let example = common::example();
    let artifact_dir = example.artifact_dir(ExampleMode::Kpack, fixtures::Layout::TarZst);
    let report = build_json(&artifact_dir, dest.path());
    let steps: Vec<&str> = report["timings"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["extract", "plan", "packages", "commit", "hash"]);
}

fn seconds(value: &Value) -> f64 {
    value.as_f64().expect("a number of seconds")
}

fn phase<'v>(package: &'v Value, name: &str) -> &'v Value {
    package["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == name)
        .unwrap_or_else(|| panic!("no phase {name} in {package}"))
}

/// The sizes of a wheel's members, each read to its end (so checked).
fn member_sizes(wheel: &Path) -> Vec<u64> {
    let mut reader = wheel_writer::WheelReader::open(wheel).unwrap();
    let names: Vec<String> = reader.member_names().map(str::to_owned).collect();
    names
        .iter()
        .map(|name| {
            std::io::copy(&mut reader.open_member(name).unwrap(), &mut std::io::sink()).unwrap()
        })
        .collect()
}

#[test]
fn phases_add_up_to_the_packages() {
    let dest = tempfile::tempdir().unwrap();
    let report = build_json(&artifacts(ExampleMode::Legacy), dest.path());
    let timings = &report["timings"];
    let packages = timings["packages"].as_array().unwrap();
    let files = report["files"].as_array().unwrap();
    assert_eq!(packages.len(), files.len(), "one row per file written");
    // Clock reads are rounded to the microsecond.
    let slack = 1e-5;
    for (package, file) in packages.iter().zip(files) {
        let path = Path::new(file["path"].as_str().unwrap());
        assert_eq!(
            package["file"].as_str().unwrap(),
            path.file_name().unwrap().to_str().unwrap()
        );
        let phases = package["phases"].as_array().unwrap();
        if file["kind"] == "sdist" {
            assert!(phases.is_empty(), "{package}");
            continue;
        }
        let names: Vec<&str> = phases
            .iter()
            .map(|p| p["phase"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "elf-edit",
                "devel-tar",
                "lookup",
                "read",
                "hash",
                "compress",
                "write"
            ]
        );
        let bytes = |name| phase(package, name)["bytes"].as_u64().unwrap();
        // The writer's bytes are the wheel file, every byte once.
        assert_eq!(bytes("write"), file["size"].as_u64().unwrap(), "{package}");
        // The look-up pass reads the members that could be copied: at
        // least those whose size another member of the wheel has. Every
        // member is looked up or compressed; a compressed one is read,
        // hashed and compressed once.
        let sizes = member_sizes(path);
        let total: u64 = sizes.iter().sum();
        let shared: u64 = sizes
            .iter()
            .filter(|&&size| sizes.iter().filter(|&&s| s == size).count() > 1)
            .sum();
        assert!(
            (shared..=total).contains(&bytes("lookup")),
            "{package}: {shared} shared of {total}"
        );
        assert!(bytes("read") <= total, "{package}");
        assert!(bytes("read") + bytes("lookup") >= total, "{package}");
        assert_eq!(bytes("hash"), bytes("read"), "{package}");
        assert_eq!(bytes("compress"), bytes("read"), "{package}");
        // Phases are disjoint stretches of the package's threads.
        let phase_cpu: f64 = phases.iter().map(|p| seconds(&p["cpu"])).sum();
        assert!(
            phase_cpu <= seconds(&package["cpu"]) + slack * phases.len() as f64,
            "{package}"
        );
        for phase in phases {
            assert!(seconds(&phase["busy"]) >= 0.0 && seconds(&phase["cpu"]) >= 0.0);
        }
    }
    let devel = packages
        .iter()
        .find(|p| p["name"] == "rocm-sdk-devel")
        .expect("the example has a devel package");
    assert!(phase(devel, "devel-tar")["bytes"].as_u64().unwrap() > 0);
    let core = packages
        .iter()
        .find(|p| p["name"] == "rocm-sdk-core")
        .unwrap();
    assert!(phase(core, "compress")["bytes"].as_u64().unwrap() > 0);
    // Steps happen one after another inside the command.
    let steps: Vec<&str> = timings["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["plan", "packages", "commit", "hash"]);
    let step_wall: f64 = timings["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| seconds(&s["wall"]))
        .sum();
    assert!(step_wall <= seconds(&timings["wall"]) + slack * 5.0);
    // Packages are written several at once, each within the packages step.
    let packages_step = timings["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"] == "packages")
        .unwrap();
    for package in packages {
        let end = seconds(&package["start"]) + seconds(&package["wall"]);
        assert!(end <= seconds(&packages_step["wall"]) + slack, "{package}");
    }
}

#[test]
fn the_text_report_has_the_table() {
    let dest = tempfile::tempdir().unwrap();
    let artifact_dir = artifacts(ExampleMode::Kpack);
    let text = ok(&build_into(&artifact_dir, dest.path(), &["--timings"]));
    assert!(text.contains("timings ("), "{text}");
    assert!(text.contains("package / phase"), "{text}");
    for row in [
        "rocm-sdk-core",
        "rocm-sdk-devel",
        "elf-edit",
        "devel-tar",
        "compress",
        "[packages]",
        "[commit]",
        "total",
    ] {
        assert!(text.contains(row), "no {row} in\n{text}");
    }
    // Without the flag there is no table.
    let dest = tempfile::tempdir().unwrap();
    let text = ok(&build_into(&artifact_dir, dest.path(), &[]));
    assert!(!text.contains("timings ("), "{text}");
}
