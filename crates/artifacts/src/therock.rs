//! The build's own description: `therock_manifest.json`, and where
//! `dist_info.json` lives (its reader is [`dist_info::dist_targets`]).

use std::path::{Path, PathBuf};

use dist_info::package::Mode;
use serde_json::Value;

use crate::{Error, Result};

/// The artifact that carries the build description.
pub const BASE_ARTIFACT: &str = "base_lib_generic";

/// Where `therock_manifest.json` lives inside [`BASE_ARTIFACT`].
pub const THEROCK_MANIFEST_PATH: &str =
    "base/aux-overlay/stage/share/therock/therock_manifest.json";

/// Where `dist_info.json` lives inside [`BASE_ARTIFACT`] (its relpath in the
/// merged tree is `share/therock/dist_info.json`).
pub const DIST_INFO_PATH: &str = "base/aux-overlay/stage/share/therock/dist_info.json";

/// What this project reads from `therock_manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TheRockManifest {
    /// How the build split its artifacts: [`Mode::Kpack`] (generic host
    /// artifacts plus per-target device artifacts) when
    /// `flags.KPACK_SPLIT_ARTIFACTS` is truthy, else [`Mode::Legacy`]
    /// (per-family artifacts, `blas_lib_gfx94X-dcgpu`).
    pub mode: Mode,
    /// The top-level `"version"` string, when the build recorded one.
    pub version: Option<String>,
}

impl TheRockManifest {
    /// Reads the document from a file.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&bytes, path)
    }

    /// Parses the document; `origin` names it in errors.
    pub fn parse(bytes: &[u8], origin: &Path) -> Result<Self> {
        let bad = bad_json(origin);
        let doc = parse_json(bytes, origin)?;
        let Value::Object(top) = &doc else {
            return Err(bad("expected a JSON object at the top level".into()));
        };
        let kpack = match top.get("flags") {
            None | Some(Value::Null) => false,
            Some(Value::Object(flags)) => flags.get("KPACK_SPLIT_ARTIFACTS").is_some_and(truthy),
            Some(_) => return Err(bad("\"flags\" must be an object".into())),
        };
        let version = match top.get("version") {
            Some(Value::String(v)) if !v.trim().is_empty() => Some(v.trim().to_owned()),
            None | Some(Value::Null | Value::String(_)) => None,
            Some(_) => return Err(bad("\"version\" must be a string".into())),
        };
        Ok(Self {
            mode: if kpack { Mode::Kpack } else { Mode::Legacy },
            version,
        })
    }
}

/// The error for `origin`, a JSON document that is not what it should be.
fn bad_json(origin: &Path) -> impl Fn(String) -> Error + '_ {
    |reason| Error::BadJson {
        path: origin.to_path_buf(),
        reason,
    }
}

/// `bytes` as JSON, or the error naming `origin`.
fn parse_json(bytes: &[u8], origin: &Path) -> Result<Value> {
    serde_json::from_slice(bytes).map_err(|e| bad_json(origin)(format!("not valid JSON: {e}")))
}

/// JSON truthiness, except that strings follow CMake (the flags come from
/// CMake options): `OFF`, `NO`, `FALSE`, `0`, `N`, `IGNORE`, `NOTFOUND`,
/// `*-NOTFOUND` and the empty string are false, any other string true.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => {
            let s = s.trim().to_ascii_uppercase();
            !(matches!(
                s.as_str(),
                "" | "0" | "OFF" | "NO" | "FALSE" | "N" | "IGNORE" | "NOTFOUND"
            ) || s.ends_with("-NOTFOUND"))
        }
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Where a missing build description was expected, for the error.
pub(crate) fn expected_path(dir: &Path, path_in_artifact: &str) -> PathBuf {
    dir.join(BASE_ARTIFACT).join(path_in_artifact)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(json: &str) -> Mode {
        TheRockManifest::parse(json.as_bytes(), Path::new("m.json"))
            .unwrap()
            .mode
    }

    #[test]
    fn kpack_flag_truthiness() {
        assert_eq!(
            mode(r#"{"flags":{"KPACK_SPLIT_ARTIFACTS":true}}"#),
            Mode::Kpack
        );
        assert_eq!(
            mode(r#"{"flags":{"KPACK_SPLIT_ARTIFACTS":1}}"#),
            Mode::Kpack
        );
        assert_eq!(
            mode(r#"{"flags":{"KPACK_SPLIT_ARTIFACTS":"ON"}}"#),
            Mode::Kpack
        );
        for off in ["false", "0", r#""OFF""#, r#""""#, "null", r#""x-NOTFOUND""#] {
            assert_eq!(
                mode(&format!(r#"{{"flags":{{"KPACK_SPLIT_ARTIFACTS":{off}}}}}"#)),
                Mode::Legacy,
                "{off}"
            );
        }
        assert_eq!(mode(r#"{"flags":{}}"#), Mode::Legacy);
        assert_eq!(mode("{}"), Mode::Legacy);
    }

    #[test]
    fn version_is_optional_string() {
        let m = TheRockManifest::parse(br#"{"version":"7.1.0"}"#, Path::new("m")).unwrap();
        assert_eq!(m.version.as_deref(), Some("7.1.0"));
        let e = TheRockManifest::parse(br#"{"version":7}"#, Path::new("x/m.json")).unwrap_err();
        assert!(e.to_string().starts_with("x/m.json:"), "{e}");
        let e = TheRockManifest::parse(b"{", Path::new("x/m.json")).unwrap_err();
        assert!(e.to_string().contains("not valid JSON"), "{e}");
    }
}
