//! The nonce (`--version-suffix`): a suffix every platform package
//! directory of a release carries (`_rocm_sdk_core{N}`), so two releases'
//! native files never share a directory name (docs/dist-info.md).
//!
//! The reference appends the text verbatim and checks nothing, so
//! `--version-suffix A.B` gave `_rocm_sdk_coreA.B`, a directory Python
//! cannot import. Here it is parsed once, by one rule: empty, or 1 to
//! [`Nonce::MAX_LEN`] ASCII letters, digits and `_`, so that
//! `_rocm_sdk_core{N}` is a Python identifier on every file system.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A validated nonce; [`Nonce::NONE`] (empty) for ordinary releases.
///
/// ```
/// use dist_info::nonce::Nonce;
/// let n: Nonce = "_r7".parse().unwrap();
/// assert_eq!(format!("_rocm_sdk_core{n}"), "_rocm_sdk_core_r7");
/// assert!("123".parse::<Nonce>().is_ok());
/// assert!("A.B".parse::<Nonce>().is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Nonce(String);

/// Why a text is not a nonce; the message states the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{text:?} is not a nonce: {reason}; a nonce is empty or 1 to {max} ASCII letters, digits \
     and `_` (it ends Python package names such as _rocm_sdk_core{{nonce}})",
    max = Nonce::MAX_LEN
)]
pub struct NonceError {
    /// The text as given (cut to the first 80 characters).
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Nonce {
    /// No nonce: platform packages are named `_rocm_sdk_core` and so on.
    pub const NONE: Nonce = Nonce(String::new());

    /// The longest nonce, in characters: the longest platform package
    /// name plus the nonce stays far below the 255-byte limit of a file
    /// name.
    pub const MAX_LEN: usize = 64;

    /// The nonce as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is [`Nonce::NONE`].
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromStr for Nonce {
    type Err = NonceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let refuse = |reason: String| NonceError {
            text: text.chars().take(80).collect(),
            reason,
        };
        let length = text.chars().count();
        if length > Self::MAX_LEN {
            return Err(refuse(format!("it has {length} characters")));
        }
        if let Some(c) = text
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return Err(refuse(format!("it contains {c:?}")));
        }
        Ok(Self(text.to_owned()))
    }
}

impl fmt::Display for Nonce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Nonce {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Nonce {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_identifier_suffixes() {
        for ok in [
            "",
            "123",
            "_n1",
            "_DEFAULT",
            "abc_9",
            &"x".repeat(Nonce::MAX_LEN),
        ] {
            let nonce: Nonce = ok.parse().unwrap();
            assert_eq!(nonce.as_str(), ok);
            assert_eq!(nonce.to_string(), ok);
        }
    }

    #[test]
    fn refuses_what_python_cannot_import() {
        for (bad, why) in [
            ("A.B", "'.'"),
            ("x-y", "'-'"),
            ("a b", "' '"),
            ("é", "'é'"),
            ("a/b", "'/'"),
        ] {
            let err = bad.parse::<Nonce>().unwrap_err();
            assert!(err.to_string().contains(why), "{err}");
        }
        let long = "x".repeat(300);
        let err = long.parse::<Nonce>().unwrap_err();
        insta::assert_snapshot!(err.reason, @"it has 300 characters");
        insta::assert_snapshot!(
            "A.B".parse::<Nonce>().unwrap_err(),
            @r#""A.B" is not a nonce: it contains '.'; a nonce is empty or 1 to 64 ASCII letters, digits and `_` (it ends Python package names such as _rocm_sdk_core{nonce})"#
        );
    }

    #[test]
    fn json_round_trip_validates() {
        let n: Nonce = serde_json::from_str(r#""_n1""#).unwrap();
        assert_eq!(serde_json::to_string(&n).unwrap(), r#""_n1""#);
        assert!(serde_json::from_str::<Nonce>(r#""a.b""#).is_err());
    }
}
