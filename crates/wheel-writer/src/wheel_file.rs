//! The `WHEEL` file and `entry_points.txt` of a wheel's `.dist-info`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::Error;
use pypa_formats::entry_points::{check_object_reference, check_script_name};
use pypa_formats::filename::WheelTag;

/// Renders `WHEEL`: format version, generator, purelib flag, build and tags.
pub(crate) fn render_wheel_file(
    generator: &str,
    root_is_purelib: bool,
    build: Option<&str>,
    tag: &WheelTag,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Wheel-Version: 1.0");
    let _ = writeln!(out, "Generator: {generator}");
    let _ = writeln!(out, "Root-Is-Purelib: {root_is_purelib}");
    for tag in tag.expanded() {
        let _ = writeln!(out, "Tag: {tag}");
    }
    if let Some(build) = build {
        let _ = writeln!(out, "Build: {build}");
    }
    out
}

/// Checks one `console_scripts` entry with the rules every reader of
/// `entry_points.txt` applies (`pypa_formats::entry_points`): a script name
/// and a `module:attr` object reference.
pub(crate) fn validate_console_script(name: &str, value: &str) -> Result<(), Error> {
    check_script_name(name)
        .and_then(|()| check_object_reference(value))
        .map_err(|problem| Error::InvalidEntryPoint {
            name: name.to_owned(),
            value: value.to_owned(),
            problem,
        })
}

/// Renders `entry_points.txt` with its `[console_scripts]` section, sorted
/// by script name.
pub(crate) fn render_entry_points(console_scripts: &BTreeMap<String, String>) -> String {
    let mut out = String::from("[console_scripts]\n");
    for (name, value) in console_scripts {
        let _ = writeln!(out, "{name} = {value}");
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_scripts_are_checked() {
        assert!(validate_console_script("amdclang++", "rocm_sdk_core._cli:amdclang_pp").is_ok());
        assert!(validate_console_script("bad name", "a:b").is_err());
        assert!(validate_console_script("x", "a.b").is_err());
        assert!(validate_console_script("x", "a-b:c").is_err());
    }
}
