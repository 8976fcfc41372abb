//! The libraries' errors said again in this command line's terms.
//!
//! A library error names what went wrong in its own words (the
//! destination, the version to build, a runtime alias asked for); where
//! the value came from a flag, the user should read the flag. Each error
//! of the chain is looked at on its own: one that stands for a flag is
//! said again naming it, every other one as the library says it, so the
//! causes print as before and each sentence is said once.

use std::error::Error;
use std::fmt;

use dist_info::release_version::VersionChoiceError;
use layout::CheckError;
use pipeline::{
    AssembleError, BuildError, Disagreement, IndexError, NativeProgramError, PlanError, Platform,
    ReleaseValue,
};

/// An error chain printed as `{:#}` prints it (`: ` between the causes),
/// each error in this command line's terms.
pub(crate) struct InFlagTerms<'a>(pub(crate) &'a anyhow::Error);

impl fmt::Display for InFlagTerms<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.chain().enumerate() {
            if i > 0 {
                f.write_str(": ")?;
            }
            match restated(error) {
                Some(text) => f.write_str(&text)?,
                None => write!(f, "{error}")?,
            }
        }
        Ok(())
    }
}

/// `error`'s own sentence naming the flag it stands for, if it stands
/// for one.
pub(crate) fn restated(error: &(dyn Error + 'static)) -> Option<String> {
    if let Some(e) = error.downcast_ref::<BuildError>() {
        build(e)
    } else if let Some(e) = error.downcast_ref::<PlanError>() {
        plan(e)
    } else if let Some(e) = error.downcast_ref::<AssembleError>() {
        assemble(e)
    } else if let Some(e) = error.downcast_ref::<IndexError>() {
        index(e)
    } else if let Some(e) = error.downcast_ref::<layout::Error>() {
        layout(e)
    } else if let Some(e) = error.downcast_ref::<VersionChoiceError>() {
        Some(version(e))
    } else if let Some(e) = error.downcast_ref::<NativeProgramError>() {
        native_program(e)
    } else {
        None
    }
}

fn build(error: &BuildError) -> Option<String> {
    match error {
        BuildError::Plan(e) => plan(e),
        BuildError::DestinationInsideArtifacts {
            dest_dir,
            artifact_dir,
            real,
        } => Some(format!(
            "--dest-dir {} is inside --artifact-dir {} (as {}): the next build would package \
             this one's output; choose a destination outside the artifact directory",
            dest_dir.display(),
            artifact_dir.display(),
            real.display()
        )),
        BuildError::ArtifactsInsideDestination {
            artifact_dir,
            dest_dir,
            real,
        } => Some(format!(
            "--artifact-dir {} is inside --dest-dir {} (as {}), where the build replaces dist/ \
             and removes what earlier builds left; choose a destination that does not hold the \
             artifact directory",
            artifact_dir.display(),
            dest_dir.display(),
            real.display()
        )),
        _ => None,
    }
}

fn plan(error: &PlanError) -> Option<String> {
    match error {
        PlanError::Version(e) => Some(version(e)),
        PlanError::Plan(e) => layout(e),
        PlanError::NativeProgram(e) => native_program(e),
        _ => None,
    }
}

fn version(error: &VersionChoiceError) -> String {
    match error {
        VersionChoiceError::Missing => "no package version: therock_manifest.json records none \
                                        (top-level key \"version\"); pass --version, e.g. \
                                        --version 7.1.0"
            .to_owned(),
        VersionChoiceError::InvalidManifest(_) => {
            "therock_manifest.json \"version\" (pass --version to override it)".to_owned()
        }
    }
}

fn layout(error: &layout::Error) -> Option<String> {
    let layout::Error::Check(check) = error else {
        return None;
    };
    match check {
        CheckError::AliasNotUnversioned { name } => Some(format!(
            "--runtime-alias {name:?}: not an unversioned library name; give a file name like \
             libamdhip64.so"
        )),
        CheckError::AliasWithoutLibrary { name } => Some(format!(
            "--runtime-alias {name}: no runtime package ships a library whose SONAME is a \
             versioned form of it ({name}.N); check the name or leave the flag out"
        )),
        CheckError::UneditedSearchPath { .. } => Some(check.to_string().replacen(
            "or keep absolute search paths to ship",
            "or pass --keep-absolute-search-paths to ship",
            1,
        )),
        _ => None,
    }
}

fn native_program(error: &NativeProgramError) -> Option<String> {
    let NativeProgramError::Missing {
        platform_tag,
        target,
        platform,
    } = error
    else {
        return None;
    };
    let (flag, linker) = match platform {
        Platform::Linux => ("linux", ""),
        Platform::Windows => (
            "windows",
            " and the mingw-w64 linker (Debian gcc-mingw-w64-x86-64)",
        ),
    };
    Some(format!(
        "cannot build {platform_tag} wheels: this therock-package has no rocm-sdk program for \
         them (Rust target {target}), and a wheel never ships another platform's program; name \
         one built for {target} (--rocm-sdk-{flag} FILE), or install the target (rustup target \
         add {target}){linker} and rebuild therock-package"
    ))
}

fn assemble(error: &AssembleError) -> Option<String> {
    match error {
        AssembleError::Index(e) => index(e),
        AssembleError::ReadShardManifest { path, .. } => Some(format!(
            "cannot read {}; pass the --dest-dir of a `therock-package build --shard K/N`",
            path.display()
        )),
        AssembleError::ShardPackageExtra { path, id } => Some(format!(
            "{} is not one of the packages of shard {id} (shard.json does not list it; left \
             there by another build?); build each shard into an empty --dest-dir",
            path.display()
        )),
        AssembleError::ShardCountDiffers {
            dir,
            id,
            reference_dir,
            reference_id,
            platform_tag,
        } => Some(format!(
            "{} is shard {id} but {} is shard {reference_id} of the same {platform_tag} plan: \
             build every shard with the --shards count `plan` was given",
            dir.display(),
            reference_dir.display()
        )),
        AssembleError::ShardsMissing {
            platform_tag,
            plan,
            count,
            missing,
        } => Some(format!(
            "the {platform_tag} plan {plan} has {count} shards but shard {} {} missing; pass \
             the --dest-dir of `build --shard {}` too",
            missing
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            if missing.len() == 1 { "is" } else { "are" },
            missing[0]
        )),
        AssembleError::DestinationNotEmpty { dist } => Some(format!(
            "{} is not empty; assemble writes a whole release: give a new or empty --dest-dir",
            dist.display()
        )),
        AssembleError::ShardsDisagree(e) => disagreement_flagged(error, &e.disagreement),
        AssembleError::LegsDisagree(e) => disagreement_flagged(error, &e.disagreement),
        _ => None,
    }
}

/// `error`'s message with its `disagreement` named by the flag or the
/// variable that gave the value.
fn disagreement_flagged(error: &AssembleError, disagreement: &Disagreement) -> Option<String> {
    let flagged = flagged(disagreement)?;
    Some(
        error
            .to_string()
            .replacen(&disagreement.to_string(), &flagged, 1),
    )
}

/// A disagreement on a value a flag or a variable gives, named by it.
fn flagged(disagreement: &Disagreement) -> Option<String> {
    let flag = match disagreement.what {
        ReleaseValue::LinuxFamilies => "--linux-amdgpu-families",
        ReleaseValue::WindowsFamilies => "--windows-amdgpu-families",
        ReleaseValue::SourceDateEpoch => "SOURCE_DATE_EPOCH",
        _ => return None,
    };
    Some(format!(
        "{flag}: {} and {}",
        disagreement.first, disagreement.other
    ))
}

fn index(error: &IndexError) -> Option<String> {
    match error {
        IndexError::NoFamilyDirectories { dir } => Some(format!(
            "{} has no per-family subdirectories (dist/{{F}}/, written by legacy builds with \
             several families); index it without --per-family",
            dir.display()
        )),
        IndexError::FileNameTwice {
            dir,
            file_name,
            first,
            second,
        } => Some(format!(
            "{} holds {file_name} twice ({first} and {second}); one page cannot offer both: use \
             --per-family for a legacy release with several families",
            dir.display()
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The phrase a restatement replaces is the library's own: a library
    /// that words it otherwise fails here, not silently in a message.
    #[test]
    fn replaced_phrases_are_the_libraries_own() {
        let check = CheckError::UneditedSearchPath {
            file: "lib/x.so".to_owned(),
            tag: "RUNPATH",
            entries: vec!["/build/lib".to_owned()],
            kind: "a static executable",
            package: "rocm-sdk-core".to_owned(),
        };
        let said = layout(&layout::Error::Check(check)).unwrap();
        assert!(
            said.contains("or pass --keep-absolute-search-paths to ship it anyway"),
            "{said}"
        );

        let disagreement = Disagreement {
            what: ReleaseValue::LinuxFamilies,
            first: "`gfx942`".to_owned(),
            other: "(not given)".to_owned(),
        };
        let error = AssembleError::LegsDisagree(Box::new(pipeline::LegsDisagree {
            first_platform: "linux_x86_64".to_owned(),
            first_dir: "a".into(),
            other_platform: "win_amd64".to_owned(),
            other_dir: "b".into(),
            disagreement,
        }));
        let said = assemble(&error).unwrap();
        assert!(
            said.contains("disagree on --linux-amdgpu-families: `gfx942` and (not given);"),
            "{said}"
        );

        let disagreement = Disagreement {
            what: ReleaseValue::SourceDateEpoch,
            first: "1700000000".to_owned(),
            other: "(unset)".to_owned(),
        };
        let error = AssembleError::ShardsDisagree(Box::new(pipeline::ShardsDisagree {
            first_dir: "a".into(),
            first_id: "1/2".parse().unwrap(),
            other_dir: "b".into(),
            other_id: "2/2".parse().unwrap(),
            platform_tag: "linux_x86_64".to_owned(),
            plan: "0123abcd".to_owned(),
            disagreement,
        }));
        let said = assemble(&error).unwrap();
        assert!(
            said.contains("disagree on SOURCE_DATE_EPOCH: 1700000000 and (unset)"),
            "{said}"
        );
    }

    #[test]
    fn an_error_that_stands_for_no_flag_is_said_as_the_library_says_it() {
        let error = anyhow::Error::new(PlanError::NoShards);
        assert_eq!(
            InFlagTerms(&error).to_string(),
            "0 shards: split the set into at least one"
        );
    }
}
