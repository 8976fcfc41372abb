//! The ROCm release model (not `.dist-info` handling, which is
//! `pypa-formats`'), shared by `therock-package` and `rocm-sdk`: packages,
//! libraries, families and targets, the release version's forms and
//! choice, requirements and extras of the `rocm` selector, target
//! selection, the `_dist_info.json` document, TheRock's
//! `share/therock/dist_info.json` (its one reader), the nonce, runtime
//! aliases, the safety rules of the devel tree that the build and the
//! install share, the install's own records of the links it made (read
//! back as untrusted input), the names Windows cannot hold, the name
//! lengths every file system holds, and one owner for every installed path.
//!
//! The Python packaging formats it builds on (names, PEP 440 versions,
//! file names, RECORD, member rules) are `pypa-formats`; file-system
//! helpers are `fs-helpers`. No I/O: callers read files and the
//! environment and pass values in; the documents are (de)serialised from
//! and to text.
//!
//! ```
//! use dist_info::families::{Family, FamilyTable};
//! use dist_info::package::{Mode, PackageKind};
//! use dist_info::selector::{SelectorInput, Selector};
//!
//! let family = |name: &str| name.parse::<Family>().unwrap();
//! let input = SelectorInput {
//!     packages: [PackageKind::Libraries].into(),
//!     linux_families: Some(vec![family("gfx94X-dcgpu"), family("gfx110X-dgpu")]),
//!     windows_families: Some(vec![family("gfx110X-dgpu")]),
//!     ..SelectorInput::default()
//! };
//! let selector = Selector::plan(Mode::Kpack, &"7.1.0".parse().unwrap(), &input, FamilyTable::builtin()).unwrap();
//! assert_eq!(selector.default_target.as_deref(), Some("gfx1100"));
//! let chosen = selector.select_target(None, Some("gfx942\n")).unwrap();
//! let metadata = selector.metadata(chosen.as_ref());
//! assert!(metadata.requires_dist().contains(
//!     &r#"rocm-sdk-device-gfx942==7.1.0; extra == "device" and sys_platform == "linux""#.to_owned()
//! ));
//! ```

pub mod console_scripts;
pub mod devel_links;
pub mod devel_state;
pub mod devel_tree;
pub mod dist_targets;
pub mod document;
pub mod families;
pub mod installed_paths;
pub mod libraries_record;
pub mod library;
pub mod library_path;
pub mod name_lengths;
pub mod nonce;
pub mod package;
pub mod project_metadata;
pub mod release_version;
pub mod requirement;
pub mod runtime_aliases;
pub mod selection;
pub mod selector;
pub mod target;
pub mod windows_names;
