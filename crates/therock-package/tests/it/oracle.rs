//! The differential oracle (docs/verify.md#the-oracle): hostile variants
//! of real packages (`fixtures::hostile`: the built-in example's
//! `rocm_profiler` wheel and `rocm` sdist, every case of the table the
//! one-view readers answer, and mutations of every structure a reader
//! walks) go to `verify` and to the real tools: Python's `zipfile`,
//! `gzip`, `tarfile` and `email` parser (`tests/oracle/views.py`), and
//! `pip install` and `uv pip install` into a fresh venv each.
//!
//! The rule: whenever a real tool reads a package differently from this
//! project's readers (other members, bytes or metadata, or an error; for
//! an installer, refusing a wheel, whose install only unpacks it), or
//! installs anything outside site-packages but the scripts the package
//! declares, or runs smuggled code, `verify` refuses it (exit 1, a problem
//! line naming the package). A crash of `verify` is never a refusal.
//!
//! CI runs a deterministic sample (every named case, every eighth of the
//! generated truncations and flipped fields); `cargo xtask slow` runs
//! all of them. `THEROCK_PACKAGE_UNDER_TEST=/path/to/therock-package`
//! runs the oracle against another build of the program (how it was seen
//! to fail on the readers before these); `ORACLE_RELEASE=/path/to/dist`
//! takes the packages of another release (a build of a real tree) instead
//! of the example's.

// The measurements and verdicts are printed for the log of a run.
#![allow(clippy::print_stderr)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{Build, Venv, ok, pinned_pip_python, site_packages_of, uv};
use fixtures::ExampleMode;
use fixtures::hostile::{Case, sample, sdist_cases, sha256_hex, wheel_cases};
use pypa_formats::core_metadata::HeaderBlock;
use pypa_formats::entry_points::EntryPoints;
use pypa_formats::sdist_archive::SdistArchive;
use serde_json::{Value, json};
use wheel_writer::WheelReader;

/// Every how many generated cases (truncations, flipped fields) CI takes.
const CI_STRIDE: usize = 8;

/// The program under test.
fn program() -> PathBuf {
    std::env::var_os("THEROCK_PACKAGE_UNDER_TEST").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_therock-package")),
        PathBuf::from,
    )
}

/// The release every variant is verified in: the built-in example
/// (kpack), or the dist directory `ORACLE_RELEASE` names (a build of a
/// real tree: problems it has of its own, such as unresolved links, are
/// not the variants').
fn release() -> PathBuf {
    std::env::var_os("ORACLE_RELEASE")
        .map_or_else(|| Build::shared(ExampleMode::Kpack).dist(), PathBuf::from)
}

/// The example's `rocm_profiler` wheel and `rocm` sdist: (bytes, file name).
fn sources() -> &'static [(Vec<u8>, String); 2] {
    static SOURCES: OnceLock<[(Vec<u8>, String); 2]> = OnceLock::new();
    SOURCES.get_or_init(|| {
        let dist = release();
        let read = |prefix: &str| {
            let path = fixtures::files::entry_starting_with(&dist, prefix);
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (fs::read(&path).unwrap(), name)
        };
        [read("rocm_profiler-"), read("rocm-")]
    })
}

/// Every case, or the CI sample of them.
fn cases(all: bool) -> Vec<Case> {
    let [(wheel, wheel_name), (sdist, sdist_name)] = sources();
    let mut cases = wheel_cases(wheel, wheel_name);
    cases.extend(sdist_cases(sdist, sdist_name));
    if all { cases } else { sample(cases, CI_STRIDE) }
}

/// How `verify` answered one package.
#[derive(Debug)]
enum Verdict {
    Accepted,
    Refused(String),
    Crashed(String),
}

/// `verify` of the release in `dir`, as it concerns the package
/// `file_name`: refused when a problem line names it.
fn verify(dir: &Path, file_name: &str) -> Verdict {
    let out = Command::new(program())
        .arg("verify")
        .arg(dir)
        .output()
        .expect("the program runs");
    let text = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    match out.status.code() {
        Some(0 | 1) => {
            let report = text(&out);
            let named = report
                .lines()
                .any(|l| l.trim_start().starts_with("- ") && l.contains(file_name));
            if named {
                Verdict::Refused(report)
            } else {
                Verdict::Accepted
            }
        }
        _ => Verdict::Crashed(format!("{}: {}", out.status, text(&out))),
    }
}

fn headers_view(bytes: &[u8]) -> Value {
    match HeaderBlock::parse(bytes) {
        Ok(block) => json!({ "items": block.headers(), "defects": [] }),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// This project's reading of a package, in the shape of `views.py`'s.
fn our_view(path: &Path) -> Result<Value, String> {
    if path.extension().is_some_and(|e| e == "whl") {
        let mut wheel = WheelReader::open(path).map_err(|e| format!("{e:?}"))?;
        let names: Vec<String> = wheel.member_names().map(str::to_owned).collect();
        let mut members = BTreeMap::new();
        for name in &names {
            let mut bytes = Vec::new();
            wheel
                .open_member(name)
                .map_err(|e| format!("{e:?}"))?
                .read_to_end(&mut bytes)
                .map_err(|e| e.to_string())?;
            members.insert(name.clone(), sha256_hex(&bytes));
        }
        let di = wheel.dist_info_dir().to_owned();
        let mut view = json!({ "names": names, "members": members });
        for file in ["METADATA", "WHEEL", "entry_points.txt"] {
            let member = format!("{di}/{file}");
            if !names.contains(&member) {
                continue;
            }
            let bytes = wheel
                .read_member(&member, u64::MAX)
                .map_err(|e| format!("{e:?}"))?;
            view[file] = if file == "entry_points.txt" {
                match EntryPoints::parse(&bytes) {
                    Ok(parsed) => json!({ "items": parsed
                        .groups()
                        .flat_map(|(g, entries)| entries.iter().map(move |e| json!([g, e.name, e.value])))
                        .collect::<Vec<_>>() }),
                    Err(e) => json!({ "error": e.to_string() }),
                }
            } else {
                headers_view(&bytes)
            };
        }
        return Ok(view);
    }
    let file = fs::File::open(path).map_err(|e| e.to_string())?;
    let mut archive = SdistArchive::new(std::io::BufReader::new(file));
    let (mut names, mut members, mut pkg_info) = (Vec::new(), BTreeMap::new(), None);
    while let Some(mut member) = archive.next_member().map_err(|e| format!("{e:?}"))? {
        let mut bytes = Vec::new();
        member.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        if member.name.ends_with("/PKG-INFO") && member.name.matches('/').count() == 1 {
            pkg_info = Some(headers_view(&bytes));
        }
        members.insert(member.name.clone(), sha256_hex(&bytes));
        names.push(member.name.clone());
    }
    let types = vec!["0"; names.len()];
    let mut view = json!({ "names": names, "types": types, "members": members });
    if let Some(pkg_info) = pkg_info {
        view["PKG-INFO"] = pkg_info;
    }
    Ok(view)
}

/// Python's views of `paths`, in order.
fn python_views(paths: &[PathBuf], scratch: &Path) -> Vec<Value> {
    let list = scratch.join("packages.json");
    fs::write(&list, serde_json::to_string(paths).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/views.py");
    let out = ok(&Command::new("python3")
        .arg(script)
        .arg(&list)
        .output()
        .unwrap());
    serde_json::from_str(&out).unwrap()
}

/// Where Python's view of a package differs from ours.
fn differences(ours: &Value, theirs: &Value) -> Vec<String> {
    if let Some(error) = theirs.get("error") {
        return vec![format!("Python cannot read it: {error}")];
    }
    let mut out = Vec::new();
    for field in [
        "names",
        "types",
        "members",
        "METADATA",
        "WHEEL",
        "entry_points.txt",
        "PKG-INFO",
    ] {
        let (a, b) = (ours.get(field), theirs.get(field));
        if a != b {
            out.push(format!(
                "{field}: ours {}, Python's {}",
                a.map_or("(none)".to_owned(), |v| shorten(&v.to_string())),
                b.map_or("(none)".to_owned(), |v| shorten(&v.to_string()))
            ));
        }
    }
    if let Some(defects) = ["METADATA", "WHEEL", "PKG-INFO"]
        .iter()
        .filter_map(|f| theirs.get(f).and_then(|v| v.get("defects")))
        .find(|d| d.as_array().is_some_and(|a| !a.is_empty()))
    {
        out.push(format!("Python's email parser found defects {defects}"));
    }
    out
}

fn shorten(text: &str) -> String {
    if text.len() > 300 {
        format!("{}…", &text[..text.floor_char_boundary(300)])
    } else {
        text.to_owned()
    }
}

/// The installers the oracle runs.
#[derive(Debug, Clone, Copy)]
enum Tool {
    Pip,
    Uv,
}

/// Installs `package` with `tool` into a fresh venv and returns what is
/// wrong: a failure, files outside site-packages but the declared
/// scripts, files inside that our view does not account for (or with
/// other bytes), and a smuggled module or backend that ran.
fn install(tool: Tool, package: &Path, ours: &Value) -> Vec<String> {
    // `Value::Null` when our reader refuses it: then only what lands
    // outside site-packages is checked.
    let venv = Venv::new();
    let marker = venv.scratch().join("smuggled-code-ran");
    let before: BTreeSet<String> = entries(&venv.root());
    let mut command = match tool {
        Tool::Pip => {
            let mut c = Command::new(pinned_pip_python());
            c.args(["-m", "pip", "--python"])
                .arg(venv.bin("python"))
                .args([
                    "install",
                    "--no-deps",
                    "--no-index",
                    "--no-cache-dir",
                    "--disable-pip-version-check",
                ]);
            c
        }
        Tool::Uv => {
            let mut c = Command::new(uv());
            c.args([
                "pip",
                "install",
                "--no-deps",
                "--offline",
                "--no-index",
                "--no-cache",
                "--python",
            ])
            .arg(venv.bin("python"));
            c
        }
    };
    let out = command
        .arg(package)
        .env("ORACLE_MARKER", &marker)
        .env_remove("PYTHONPATH")
        .output()
        .unwrap();
    let mut problems = Vec::new();
    if marker.exists() {
        problems.push(format!("{tool:?}: smuggled code ran"));
    }
    let wheel = package.extension().is_some_and(|e| e == "whl");
    if !out.status.success() {
        // Installing a wheel only unpacks it: failing is reading it
        // otherwise. An sdist's install runs its build backend, which may
        // fail on content every reader reads alike (the views compared
        // above say whether they do).
        if wheel {
            problems.push(format!(
                "{tool:?} refuses it: {}",
                shorten(String::from_utf8_lossy(&out.stderr).trim())
            ));
        }
        return problems;
    }
    let site = site_packages_of(&venv.root());
    let site_rel = site
        .strip_prefix(venv.root())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let scripts: BTreeSet<String> = scripts(ours, &site);
    let after = entries(&venv.root());
    let members = ours["members"].as_object().cloned().unwrap_or_default();
    let wheel = wheel && !ours.is_null();
    for path in after.difference(&before) {
        let full = venv.root().join(path);
        if full.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let Some(inside) = path.strip_prefix(&format!("{site_rel}/")) else {
            // uv's lock of the environment.
            if !scripts.contains(path) && path != ".lock" {
                problems.push(format!("{tool:?} installs {path} outside site-packages"));
            }
            continue;
        };
        let generated = inside.contains("/__pycache__/")
            || inside
                .split('/')
                .next()
                .is_some_and(|top| top.ends_with(".dist-info"))
                && [
                    "INSTALLER",
                    "REQUESTED",
                    "RECORD",
                    "direct_url.json",
                    "uv_cache.json",
                    "uv_build.json",
                ]
                .iter()
                .any(|f| inside.ends_with(&format!("/{f}")));
        if !wheel || generated {
            continue;
        }
        match members.get(inside) {
            None => problems.push(format!(
                "{tool:?} installs {inside}, which our reader does not see"
            )),
            Some(expected) => {
                let actual = sha256_hex(&fs::read(&full).unwrap());
                if Value::String(actual) != *expected {
                    problems.push(format!(
                        "{tool:?} installs other bytes at {inside} than our reader reads"
                    ));
                }
            }
        }
    }
    // A script written through `..` lands outside the venv, where the
    // listing above cannot see it; the installer's RECORD names it.
    for recorded in installed_record_paths(&site) {
        let path = normalize(&site.join(&recorded));
        let under = |dir: &Path| path.starts_with(dir);
        let script = path
            .strip_prefix(venv.root())
            .is_ok_and(|rel| scripts.contains(&rel.to_string_lossy().into_owned()));
        if !under(&site) && !script {
            problems.push(format!(
                "{tool:?} installs {recorded} ({}), outside site-packages",
                path.display()
            ));
        }
    }
    let outside: Vec<_> = fs::read_dir(venv.scratch())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "venv")
        .collect();
    if !outside.is_empty() {
        problems.push(format!("{tool:?} writes outside the venv: {outside:?}"));
    }
    problems
}

/// The paths of every installed distribution's RECORD under `site`.
fn installed_record_paths(site: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in fs::read_dir(site).into_iter().flatten().flatten() {
        let record = entry.path().join("RECORD");
        if entry.file_name().to_string_lossy().ends_with(".dist-info")
            && let Ok(text) = fs::read_to_string(&record)
            && let Ok(rows) = pypa_formats::record::parse_record(&text)
        {
            out.extend(rows.into_iter().map(|r| r.path));
        }
    }
    out
}

/// `path` with `.` and `..` taken lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every entry under `root`, relative.
fn entries(root: &Path) -> BTreeSet<String> {
    fixtures::files::relative_entries(root)
        .into_iter()
        .collect()
}

/// The scripts an install may write to `bin/`: the console and GUI
/// scripts our view declares, or (an sdist, whose wheel is built at
/// install time) those of the `.dist-info` the install wrote.
fn scripts(ours: &Value, site: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut from = |items: &Value| {
        for item in items.as_array().into_iter().flatten() {
            if matches!(item[0].as_str(), Some("console_scripts" | "gui_scripts")) {
                names.insert(format!("bin/{}", item[1].as_str().unwrap()));
            }
        }
    };
    if let Some(items) = ours.get("entry_points.txt").and_then(|v| v.get("items")) {
        from(items);
    } else {
        for entry in fs::read_dir(site).into_iter().flatten().flatten() {
            let path = entry.path().join("entry_points.txt");
            if let Ok(bytes) = fs::read(&path)
                && let Ok(parsed) = EntryPoints::parse(&bytes)
            {
                let items: Vec<Value> = parsed
                    .groups()
                    .flat_map(|(g, es)| es.iter().map(move |e| json!([g, e.name, e.value])))
                    .collect();
                from(&Value::Array(items));
            }
        }
    }
    names
}

/// Runs the oracle over `cases`; returns the report and every violation
/// of its rule.
fn run(cases: &[Case], installs: bool) -> (String, Vec<String>) {
    let work = tempfile::tempdir().unwrap();
    let dist = release();
    let whole = work.path().join("the-release-itself");
    copy_release(&dist, &whole, None);
    for (_, source) in sources() {
        assert!(
            matches!(verify(&whole, source), Verdict::Accepted),
            "the release itself has a problem naming {source}"
        );
    }
    let mut paths = Vec::new();
    for case in cases {
        // The variant in place of its source, in the whole release (the
        // other packages hard-linked), so every other check passes.
        let dir = work.path().join(&case.name);
        copy_release(&dist, &dir, Some(&case.file_name));
        let path = dir.join(&case.file_name);
        fs::write(&path, &case.bytes).unwrap();
        paths.push(path);
    }
    let theirs = python_views(&paths, work.path());
    let mut report = String::new();
    let mut violations = Vec::new();
    for ((case, path), theirs) in cases.iter().zip(&paths).zip(&theirs) {
        let verdict = verify(path.parent().unwrap(), &case.file_name);
        let mut found = Vec::new();
        if let Verdict::Crashed(how) = &verdict {
            found.push(format!("verify crashed: {}", shorten(how)));
        }
        if matches!(verdict, Verdict::Accepted) {
            let ours = match our_view(path) {
                Err(e) => {
                    // Only a program other than this build's can get here.
                    found.push(format!(
                        "verify accepts what our reader refuses: {}",
                        shorten(&e)
                    ));
                    Value::Null
                }
                Ok(ours) => {
                    found.extend(differences(&ours, theirs));
                    ours
                }
            };
            if installs {
                for tool in [Tool::Pip, Tool::Uv] {
                    found.extend(install(tool, path, &ours));
                }
            }
        }
        let said = match &verdict {
            Verdict::Accepted => "accepted".to_owned(),
            Verdict::Refused(report) => format!("refused: {}", refusal_line(report)),
            Verdict::Crashed(_) => "crashed".to_owned(),
        };
        let _ = writeln!(report, "{:<44} {said}", case.name);
        if !found.is_empty() {
            violations.push(format!(
                "{} ({}): verify {said}, but {}",
                case.name,
                case.what,
                found.join("; ")
            ));
        }
    }
    (report, violations)
}

/// The packages of `dist` hard-linked into `dir`, but `leave_out`.
fn copy_release(dist: &Path, dir: &Path, leave_out: Option<&str>) {
    fs::create_dir_all(dir).unwrap();
    for entry in fs::read_dir(dist).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if Some(name.as_str()) != leave_out && entry.file_type().unwrap().is_file() {
            fs::hard_link(entry.path(), dir.join(&name)).unwrap();
        }
    }
}

/// The first problem line of a refusal.
fn refusal_line(report: &str) -> String {
    report
        .lines()
        .find(|l| l.trim_start().starts_with("- "))
        .or_else(|| report.lines().find(|l| l.contains("error")))
        .map_or_else(String::new, |l| shorten(l.trim()))
}

fn assert_no_violations(cases: &[Case], installs: bool) {
    let (report, violations) = run(cases, installs);
    eprintln!("{report}");
    assert!(
        violations.is_empty(),
        "the oracle found {} package(s) a real tool reads differently that verify does not refuse:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[test]
fn the_sample_of_hostile_packages_is_refused_wherever_a_real_tool_reads_it_differently() {
    let cases = cases(false);
    assert!(
        cases.iter().filter(|c| c.table).count() >= 8,
        "every case of the table is in the sample"
    );
    assert_no_violations(&cases, true);
}

#[test]
#[ignore = "slow: every generated variant, each installed with pip and uv when verify accepts it"]
fn every_hostile_package_is_refused_wherever_a_real_tool_reads_it_differently() {
    assert_no_violations(&cases(true), true);
}
