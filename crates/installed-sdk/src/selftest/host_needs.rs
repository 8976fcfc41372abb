//! What a tool that failed to run says the host lacks: an interpreter
//! module (Perl's `Can't locate File/Which.pm in @INC`, Python's `No module
//! named 'yaml'`) or a shared library (`error while loading shared
//! libraries: libz3.so.4: cannot open shared object file`). The tool is
//! packaged correctly and expects these from the host, so `rocm-sdk test`
//! warns, naming what is missing and how to get it, as it does for a
//! `DT_NEEDED` taken from the host (docs/behaviour.md#self-test). A library
//! the ROCm packages themselves ship is not the host's to provide: that
//! stays a failure.

use std::fmt;

/// Something the host lacks that a tool expects from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostNeed {
    /// A Perl module (`File::Which`).
    PerlModule(String),
    /// A Python module (`yaml`).
    PythonModule(String),
    /// A shared library the loader could not find (`libz3.so.4`).
    Library(String),
}

impl HostNeed {
    /// The first thing `output` (a failed run's stdout and stderr) says is
    /// missing, if it says so in one of the forms above.
    pub(crate) fn in_output(output: &str) -> Option<Self> {
        output.lines().find_map(|line| {
            perl_module(line)
                .map(Self::PerlModule)
                .or_else(|| python_module(line).map(Self::PythonModule))
                .or_else(|| library(line).map(Self::Library))
        })
    }

    /// How to get it: the distribution package, by each family's naming
    /// rule (Debian `libfile-which-perl`, Fedora `perl-File-Which`).
    pub(crate) fn remedy(&self) -> String {
        match self {
            Self::PerlModule(module) => {
                let debian = format!("lib{}-perl", module.replace("::", "-").to_lowercase());
                let fedora = format!("perl-{}", module.replace("::", "-"));
                format!(
                    "install the distribution package that provides it (Debian/Ubuntu: \
                     `apt install {debian}`, Fedora/RHEL: `dnf install {fedora}`) or `cpan \
                     {module}`"
                )
            }
            Self::PythonModule(module) => {
                let top = module.split('.').next().unwrap_or(module);
                format!(
                    "install it for the interpreter the tool runs with (Debian/Ubuntu: `apt \
                     install python3-{top}`, or `python3 -m pip install` the distribution that \
                     provides `{top}`)"
                )
            }
            Self::Library(_) => {
                "install the distribution package that provides it (Debian/Ubuntu: `apt-file \
                 search` names it, Fedora/RHEL: `dnf provides`)"
                    .to_owned()
            }
        }
    }
}

impl fmt::Display for HostNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PerlModule(module) => write!(f, "the Perl module {module}"),
            Self::PythonModule(module) => write!(f, "the Python module {module}"),
            Self::Library(name) => write!(f, "the shared library {name}"),
        }
    }
}

/// `Can't locate File/Which.pm in @INC (you may need to install the
/// File::Which module) ...` → `File::Which`.
fn perl_module(line: &str) -> Option<String> {
    let rest = line.split("Can't locate ").nth(1)?;
    let (file, after) = rest.split_once(' ')?;
    if !after.starts_with("in @INC") {
        return None;
    }
    let path = file.strip_suffix(".pm")?;
    let valid = !path.is_empty()
        && path
            .split('/')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    valid.then(|| path.replace('/', "::"))
}

/// `ModuleNotFoundError: No module named 'yaml'` → `yaml`.
fn python_module(line: &str) -> Option<String> {
    let rest = line.split("No module named '").nth(1)?;
    let (module, _) = rest.split_once('\'')?;
    let valid = !module.is_empty()
        && module
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    valid.then(|| module.to_owned())
}

/// `prog: error while loading shared libraries: libz3.so.4: cannot open
/// shared object file: No such file or directory` → `libz3.so.4`.
fn library(line: &str) -> Option<String> {
    let rest = line
        .split("error while loading shared libraries: ")
        .nth(1)?;
    let (name, after) = rest.split_once(": ")?;
    let valid = !name.is_empty() && !name.contains(['/', ' ']);
    (valid && after.starts_with("cannot open shared object file")).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_python_and_loader_messages_name_what_is_missing() {
        let perl = "Can't locate File/Which.pm in @INC (you may need to install the File::Which \
                    module) (@INC contains: /etc/perl /usr/share/perl5) at /x/roc-obj-ls line 25.\n\
                    BEGIN failed--compilation aborted at /x/roc-obj-ls line 25.";
        let need = HostNeed::in_output(perl).unwrap();
        assert_eq!(need, HostNeed::PerlModule("File::Which".into()));
        insta::assert_snapshot!(format!("{need}: {}", need.remedy()), @"the Perl module File::Which: install the distribution package that provides it (Debian/Ubuntu: `apt install libfile-which-perl`, Fedora/RHEL: `dnf install perl-File-Which`) or `cpan File::Which`");

        let python = "Traceback (most recent call last):\n  File \"x\", line 1\n\
                      ModuleNotFoundError: No module named 'yaml.constructor'";
        let need = HostNeed::in_output(python).unwrap();
        assert_eq!(need, HostNeed::PythonModule("yaml.constructor".into()));
        assert!(need.remedy().contains("python3-yaml"), "{}", need.remedy());

        let loader = "/sp/_rocm_sdk_core/bin/tool: error while loading shared libraries: \
                      libz3.so.4: cannot open shared object file: No such file or directory";
        assert_eq!(
            HostNeed::in_output(loader),
            Some(HostNeed::Library("libz3.so.4".into()))
        );
    }

    #[test]
    fn other_failures_name_nothing() {
        for text in [
            "Segmentation fault",
            "Can't locate object method \"new\" via package \"Foo\"",
            "error while loading shared libraries: libx.so: wrong ELF class: ELFCLASS32",
            "No module named ''",
            "",
        ] {
            assert_eq!(HostNeed::in_output(text), None, "{text}");
        }
    }
}
