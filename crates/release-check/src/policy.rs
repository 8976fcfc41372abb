//! Every Linux wheel keeps to its manylinux policy (the one `--policy`
//! names, else the one its own platform tag claims), and every Linux wheel
//! gets the tightest tag it satisfies (`link-check`'s policy audit over the
//! wheels the link check read).

use link_check::{
    LinkReport, LinuxTag, Policies, PolicyName, WheelAudit, WheelSetTree, audit_wheel,
};

use super::Release;
use super::release::Kind;

/// What the manylinux check found.
pub(crate) struct PolicyCheck {
    /// `None` when no wheel had a policy to keep to (skipped).
    pub problems: Option<Vec<String>>,
    pub note: String,
    /// One summary line per audited wheel.
    pub details: Vec<String>,
    pub audits: Vec<WheelAudit>,
}

pub(crate) fn check(
    release: &Release,
    linux: Option<&(WheelSetTree, LinkReport)>,
    required: Option<PolicyName>,
) -> PolicyCheck {
    let mut audits = Vec::new();
    let mut checked = false;
    for file in release.unique() {
        let Kind::Wheel(wheel) = &file.kind else {
            continue;
        };
        let tags: Vec<LinuxTag> = wheel
            .platform_tags
            .iter()
            .filter_map(|t| LinuxTag::parse(t))
            .collect();
        let Some(arch) = tags.first().map(|t| t.arch()) else {
            continue;
        };
        // A wheel with several manylinux tags claims all of them: the most
        // compatible is the one to keep to.
        let claimed = Policies::auditwheel().iter().find(|p| {
            tags.iter()
                .any(|t| matches!(t, LinuxTag::Manylinux { policy, .. } if policy == p))
        });
        let policy = required.map(PolicyName::policy).or(claimed);
        checked |= policy.is_some();
        let audit = match linux {
            Some((tree, report)) => audit_wheel(report, tree, &file.file_name, arch, policy),
            None => continue,
        };
        audits.push(audit);
    }
    let note = match required {
        Some(name) => format!("--policy {name}"),
        None if checked => "each wheel's manylinux tag".to_owned(),
        None => "no manylinux tag and no --policy: tightest tags only".to_owned(),
    };
    PolicyCheck {
        problems: checked.then(|| audits.iter().flat_map(WheelAudit::problems).collect()),
        note,
        details: audits.iter().map(WheelAudit::summary).collect(),
        audits,
    }
}
