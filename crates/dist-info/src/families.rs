//! The family → target table (docs/behaviour.md#family-table), kept as data in
//! `data/families.toml` and parsed once, and [`Family`], a name the table
//! knows: what a release offers is a list of them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::target::base_target;

/// The table shipped with this crate.
const BUILTIN_TOML: &str = include_str!("../data/families.toml");

/// Errors about family names and the family table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FamilyError {
    /// A name that is neither a family nor a target of the table.
    #[error(
        "unknown GPU family or target `{name}`; known families: {}; known targets: {}",
        .families.join(", "), .targets.join(", ")
    )]
    Unknown {
        /// The name as given.
        name: String,
        /// Every known family name, sorted.
        families: Vec<String>,
        /// Every known target, sorted.
        targets: Vec<String>,
    },
    /// The family table itself does not parse or is inconsistent.
    #[error("the GPU family table ({origin}) is invalid: {reason}; fix the TOML file")]
    InvalidTable {
        /// Where the table came from.
        origin: String,
        /// What is wrong.
        reason: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    families: BTreeMap<String, Vec<String>>,
}

/// Which base targets each family names. Every target is also its own family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyTable {
    families: BTreeMap<String, BTreeSet<String>>,
    targets: BTreeSet<String>,
}

impl FamilyTable {
    /// The built-in table (docs/behaviour.md#family-table), parsed on first use.
    pub fn builtin() -> &'static FamilyTable {
        static TABLE: OnceLock<FamilyTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            FamilyTable::from_toml(BUILTIN_TOML, "crates/dist-info/data/families.toml")
                .expect("the built-in family table is checked by the test suite")
        })
    }

    /// Parses a table in the format of `data/families.toml`; `origin` names
    /// it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, FamilyError> {
        let invalid = |reason: String| FamilyError::InvalidTable {
            origin: origin.to_owned(),
            reason,
        };
        let file: TableFile = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let mut families = BTreeMap::new();
        let mut targets = BTreeSet::new();
        for (name, members) in file.families {
            if members.is_empty() {
                return Err(invalid(format!("family `{name}` names no target")));
            }
            let members: BTreeSet<String> = members.into_iter().collect();
            if let Some(bad) = members.iter().find(|t| base_target(t) != t.as_str()) {
                return Err(invalid(format!(
                    "family `{name}` lists `{bad}`, which is not a base target"
                )));
            }
            targets.extend(members.iter().cloned());
            families.insert(name, members);
        }
        if let Some(clash) = families.keys().find(|f| targets.contains(*f)) {
            return Err(invalid(format!("`{clash}` is both a family and a target")));
        }
        Ok(Self { families, targets })
    }

    /// Every family name of the table (targets excluded), sorted.
    pub fn family_names(&self) -> impl Iterator<Item = &str> {
        self.families.keys().map(String::as_str)
    }

    /// Every target named by any family, sorted.
    pub fn targets(&self) -> impl Iterator<Item = &str> {
        self.targets.iter().map(String::as_str)
    }

    /// True when `name` is a family or a (possibly `:feature`-suffixed) target.
    pub fn is_known(&self, name: &str) -> bool {
        self.families.contains_key(name) || self.targets.contains(base_target(name))
    }

    /// The base targets `name` stands for, sorted: a family's members, or a
    /// target's own base.
    pub fn targets_of(&self, name: &str) -> Result<Vec<String>, FamilyError> {
        if let Some(members) = self.families.get(name) {
            return Ok(members.iter().cloned().collect());
        }
        let base = base_target(name);
        if self.targets.contains(base) {
            return Ok(vec![base.to_owned()]);
        }
        Err(self.unknown(name))
    }

    /// Parses a family list as given on the command line (`,` or `;`
    /// separated, items trimmed, empties dropped) and checks every name.
    /// An empty result means "this platform does not take part".
    ///
    /// ```
    /// use dist_info::families::FamilyTable;
    /// let t = FamilyTable::builtin();
    /// assert_eq!(t.parse_list(" gfx94X-dcgpu ;gfx1100,,").unwrap(), ["gfx94X-dcgpu", "gfx1100"]);
    /// assert!(t.parse_list("").unwrap().is_empty());
    /// assert!(t.parse_list("gfx9000").is_err());
    /// ```
    pub fn parse_list(&self, value: &str) -> Result<Vec<String>, FamilyError> {
        let mut out: Vec<String> = Vec::new();
        for item in split_list(value) {
            if !self.is_known(item) {
                return Err(self.unknown(item));
            }
            if !out.iter().any(|seen| seen == item) {
                out.push(item.to_owned());
            }
        }
        Ok(out)
    }

    /// The sorted union of the base targets of `names`.
    pub fn expand<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<String>, FamilyError> {
        let mut all = BTreeSet::new();
        for name in names {
            all.extend(self.targets_of(name.as_ref())?);
        }
        Ok(all.into_iter().collect())
    }

    fn unknown(&self, name: &str) -> FamilyError {
        FamilyError::Unknown {
            name: name.to_owned(),
            families: self.families.keys().cloned().collect(),
            targets: self.targets.iter().cloned().collect(),
        }
    }
}

/// A GPU family or target the built-in table knows (`gfx94X-dcgpu`,
/// `gfx1100`, `gfx942:xnack+`; every target is also its own family): one
/// item of what a release offers on a platform.
///
/// ```
/// use dist_info::families::Family;
/// let family: Family = "gfx94X-dcgpu".parse().unwrap();
/// assert_eq!(family.as_str(), "gfx94X-dcgpu");
/// assert!("gfx9000".parse::<Family>().is_err());
/// // A list as a command line spells it: `,` or `;` separated.
/// let list = Family::parse_list(" gfx94X-dcgpu ;gfx1100,,").unwrap();
/// assert_eq!(Family::join(&list), "gfx94X-dcgpu;gfx1100");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Family(String);

impl Family {
    /// The name as the table spells it.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Parses a list as a command line gives it (`,` or `;` separated,
    /// items trimmed, empties and repeats dropped, order kept), every name
    /// checked against the built-in table. An empty list means "this
    /// platform does not take part".
    pub fn parse_list(text: &str) -> Result<Vec<Family>, FamilyError> {
        let names = FamilyTable::builtin().parse_list(text)?;
        Ok(names.into_iter().map(Family).collect())
    }

    /// `list` written as [`Family::parse_list`] reads it back: the names
    /// joined by `;`.
    pub fn join(list: &[Family]) -> String {
        list.iter()
            .map(Family::as_str)
            .collect::<Vec<_>>()
            .join(";")
    }
}

impl FromStr for Family {
    type Err = FamilyError;

    fn from_str(name: &str) -> Result<Self, FamilyError> {
        let table = FamilyTable::builtin();
        if table.is_known(name) {
            Ok(Self(name.to_owned()))
        } else {
            Err(table.unknown(name))
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Family {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Splits a `,`/`;` separated list, trimming items and dropping empties.
pub fn split_list(value: &str) -> impl Iterator<Item = &str> {
    value
        .split([',', ';'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_matches_the_documented_table() {
        let t = FamilyTable::builtin();
        assert_eq!(t.targets_of("gfx94X-dcgpu").unwrap(), ["gfx942"]);
        assert_eq!(
            t.targets_of("gfx103X-dgpu").unwrap(),
            ["gfx1030", "gfx1031", "gfx1032", "gfx1034"]
        );
        assert_eq!(
            t.targets_of("dcgpu-all").unwrap(),
            ["gfx1250", "gfx908", "gfx90a", "gfx942", "gfx950"]
        );
        assert_eq!(t.targets_of("gfx90c-igpu").unwrap(), ["gfx90c"]);
        assert_eq!(t.family_names().count(), 25);
        // Every target is its own family, also with a feature suffix.
        assert_eq!(t.targets_of("gfx1151").unwrap(), ["gfx1151"]);
        assert_eq!(t.targets_of("gfx942:xnack+").unwrap(), ["gfx942"]);
        // The three umbrella families cover every target between them.
        let umbrella = t.expand(&["dcgpu-all", "dgpu-all", "igpu-all"]).unwrap();
        assert_eq!(umbrella, t.targets().collect::<Vec<_>>());
        assert_eq!(umbrella.len(), 28);
    }

    #[test]
    fn list_parsing() {
        let t = FamilyTable::builtin();
        assert_eq!(
            t.parse_list("gfx110X-all; gfx94X-dcgpu ,gfx110X-all")
                .unwrap(),
            ["gfx110X-all", "gfx94X-dcgpu"]
        );
        assert!(t.parse_list(" ; , ").unwrap().is_empty());
        let err = t.parse_list("gfx94X-dcgpu;gfx94x-dcgpu").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("`gfx94x-dcgpu`"), "{msg}");
        assert!(msg.contains("gfx94X-dcgpu, gfx950-all"), "{msg}");
        assert!(msg.contains("gfx1250"), "{msg}");
    }

    #[test]
    fn invalid_tables_are_rejected() {
        for text in [
            "[families]\nx = []",
            "[families]\nx = [\"gfx942:xnack+\"]",
            "[families]\nx = [\"gfx942\"]\ngfx942 = [\"gfx942\"]",
            "[other]\n",
            "not toml",
        ] {
            let err = FamilyTable::from_toml(text, "t.toml").unwrap_err();
            assert!(err.to_string().contains("t.toml"), "{err}");
        }
    }
}
