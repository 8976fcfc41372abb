//! Unversioned library names that programs are known to open at run time
//! by name (docs/behaviour.md#runtime-aliases): the build makes a runtime
//! alias for each one the set has a versioned library of, besides the names
//! it finds in the set's own files and the ones asked for with
//! `--runtime-alias`.

/// A name known to be opened by name, and by whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownName {
    /// The unversioned file name (`libamdhip64.so`).
    pub name: &'static str,
    /// Who opens it, for the plan's reasons.
    pub opened_by: &'static str,
}

/// The names known to be opened by name; a name the set has no versioned
/// library of is passed over.
pub const KNOWN_NAMES: &[KnownName] = &[
    KnownName {
        name: "libamdhip64.so",
        opened_by: "programs that load HIP at run time (PyTorch's preloading among them)",
    },
    KnownName {
        name: "libhiprtc.so",
        opened_by: "programs that compile kernels at run time",
    },
    KnownName {
        name: "libhsa-amd-aqlprofile64.so",
        opened_by: "the HSA runtime, for hardware counters (rocprofv3 --pmc)",
    },
    KnownName {
        name: "librocprofv3-list-avail.so",
        opened_by: "rocprofv3 --list-avail",
    },
    KnownName {
        name: "libamd_smi.so",
        opened_by: "the amdsmi Python bindings",
    },
    KnownName {
        name: "librocm_smi64.so",
        opened_by: "the rocm_smi Python bindings",
    },
];

#[cfg(test)]
mod tests {
    use super::KNOWN_NAMES;

    #[test]
    fn known_names_are_unversioned_library_names_each_once() {
        let mut names: Vec<&str> = KNOWN_NAMES.iter().map(|k| k.name).collect();
        assert!(
            names.iter().all(|n| n.starts_with("lib")
                && n.as_bytes().ends_with(b".so")
                && !n.contains('/'))
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KNOWN_NAMES.len());
    }
}
