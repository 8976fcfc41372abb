//! Member paths: relative, `/`-separated, nothing that escapes on unpack.

use crate::Error;

/// Checks that `path` can be stored and unpacked safely: relative, `/`
/// separators, no empty, `.` or `..` segments, no backslash or NUL.
pub(crate) fn validate_member_path(path: &str) -> Result<(), Error> {
    let invalid = |reason| Error::InvalidPath {
        path: path.to_owned(),
        reason,
    };
    if path.is_empty() {
        return Err(invalid("it is empty"));
    }
    if path.starts_with('/') {
        return Err(invalid(
            "it is absolute; member paths are relative to the package root",
        ));
    }
    if path.contains(['\\', '\0']) {
        return Err(invalid(
            "it contains a backslash or NUL; use `/` as the separator",
        ));
    }
    if path
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return Err(invalid("it has an empty, `.` or `..` segment"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths_are_refused() {
        assert!(validate_member_path("_rocm_sdk_core/lib/libamdhip64.so.7").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "a//b",
            "a/",
            "./a",
            "a\\b",
            "a\0",
        ] {
            assert!(validate_member_path(bad).is_err(), "{bad:?}");
        }
    }
}
