//! The `rocm` selector sdists of a release (docs/behaviour.md#selector):
//! one, or one per family in a legacy release with several. The planner
//! plans them, and `assemble` plans them again from the packages the
//! shards delivered, so the document it publishes is never taken from a
//! shard's word.

use std::collections::BTreeSet;

use dist_info::document::DistInfo;
use dist_info::families::{Family, FamilyTable};
use dist_info::nonce::Nonce;
use dist_info::package::{Mode, PackageKind};
use dist_info::selector::{Selector, SelectorInput};
use pypa_formats::version::Version;

use crate::error::{Error, ModelError};
use crate::plan::SelectorPlan;

/// What a release's selectors are computed from.
#[derive(Debug, Clone, Copy)]
pub struct SelectorBasis<'a> {
    /// The packaging mode.
    pub mode: Mode,
    /// The version every requirement pins.
    pub version: &'a Version,
    /// Kpack: the device targets on disk (raw); legacy: the families built.
    pub on_disk: &'a [String],
    /// The kinds of the packages of the set.
    pub packages: &'a BTreeSet<PackageKind>,
    /// The families the Linux release offers, if a list decides.
    pub linux_families: Option<&'a [Family]>,
    /// The families the Windows release offers, if a list decides.
    pub windows_families: Option<&'a [Family]>,
    /// The nonce of the platform packages.
    pub nonce: &'a Nonce,
}

/// The selectors of a release: one arch-neutral selector, or in legacy
/// mode with several families one restricted to each, written to
/// `dist/{F}/`.
pub fn plan_selectors(basis: &SelectorBasis<'_>) -> Result<Vec<SelectorPlan>, Error> {
    let base = SelectorInput {
        packages: basis.packages.clone(),
        on_disk: basis.on_disk.to_vec(),
        linux_families: basis.linux_families.map(<[Family]>::to_vec),
        windows_families: basis.windows_families.map(<[Family]>::to_vec),
        restrict_to_family: None,
    };
    let restrictions: Vec<Option<String>> = if basis.mode == Mode::Legacy && basis.on_disk.len() > 1
    {
        basis.on_disk.iter().cloned().map(Some).collect()
    } else {
        vec![None]
    };
    restrictions
        .into_iter()
        .map(|restrict| {
            let input = SelectorInput {
                restrict_to_family: restrict.clone(),
                ..base.clone()
            };
            let selector =
                Selector::plan(basis.mode, basis.version, &input, FamilyTable::builtin())
                    .map_err(ModelError::Selector)?;
            let metadata = selector.metadata(None);
            let extras = metadata
                .extras
                .iter()
                .map(|e| {
                    (
                        e.name.clone(),
                        e.requirements.iter().map(ToString::to_string).collect(),
                    )
                })
                .collect();
            Ok(SelectorPlan {
                subdir: restrict.clone().unwrap_or_default(),
                restricted_to: restrict,
                dist_info_json: DistInfo::new(selector, basis.nonce).to_json(),
                extras,
            })
        })
        .collect()
}
