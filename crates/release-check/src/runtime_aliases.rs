//! Every runtime alias of the Linux runtime wheels (a `libX.so` whose
//! SONAME is its own name and whose one `DT_NEEDED` is a versioned form of
//! it: docs/behaviour.md#runtime-aliases) resolves inside the set, to a
//! real library, and shadows no real file: no other file of the set has
//! its name. Read from the ELF-links check's report.

use std::collections::BTreeSet;

use elf_surgery::{is_unversioned_name, is_versioned_form};
use link_check::{ElfReport, LinkReport, Resolution, WheelSetTree};

/// What the check found.
pub(crate) struct AliasCheck {
    /// `None` when the Linux wheels' links could not be read.
    pub problems: Option<Vec<String>>,
    pub count: usize,
}

fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The SONAME `file` stands for when it is a runtime alias.
fn alias_target(file: &ElfReport) -> Option<&str> {
    let name = base(&file.path);
    let [needed] = file.needed.as_slice() else {
        return None;
    };
    (file.soname.as_deref() == Some(name)
        && is_unversioned_name(name)
        && is_versioned_form(&needed.name, name))
    .then_some(needed.name.as_str())
}

pub(crate) fn check(linux: Option<&(WheelSetTree, LinkReport)>) -> AliasCheck {
    let Some((tree, report)) = linux else {
        return AliasCheck {
            problems: None,
            count: 0,
        };
    };
    let aliases: Vec<&ElfReport> = report
        .files
        .iter()
        .filter(|f| alias_target(f).is_some())
        .collect();
    let alias_paths: BTreeSet<&str> = aliases.iter().map(|a| a.path.as_str()).collect();
    let mut problems = Vec::new();
    for alias in &aliases {
        let origin = alias.origin.as_deref().unwrap_or("?");
        let target = alias_target(alias).expect("filtered on aliases");
        // What it resolves to has a versioned name, so it is no alias.
        match &alias.needed[0].resolution {
            Resolution::Tree { .. } => {}
            _ => problems.push(format!(
                "{} (in {origin}): the runtime alias stands for {target}, which its RUNPATH \
                 does not reach inside the set; rebuild the set with the library's package",
                alias.path
            )),
        }
        let name = base(&alias.path);
        let shadowed: Vec<&str> = tree
            .paths()
            .filter(|p| base(p) == name && !alias_paths.contains(p))
            .collect();
        for real in shadowed {
            problems.push(format!(
                "{} (in {origin}): the runtime alias has the name of the real file {real} \
                 (in {}); a lookup by name could find the alias instead of it; rebuild the set",
                alias.path,
                tree.providers(real).join(", ")
            ));
        }
        let providers = tree.providers(&alias.path);
        if providers.len() > 1 {
            problems.push(format!(
                "{}: the runtime alias is shipped by several wheels ({}); rebuild the set",
                alias.path,
                providers.join(", ")
            ));
        }
    }
    AliasCheck {
        problems: Some(problems),
        count: aliases.len(),
    }
}
