//! The `INSTALLER` file of an installed distribution's `.dist-info`
//! (the PyPA "Recording installed projects" specification): the name of
//! the tool that installed it, on its first line. A remedy that tells the
//! user to reinstall names that tool's command, since an environment made
//! by uv has no pip.

use std::fmt;

/// The command that installs into an environment, as its distributions'
/// `INSTALLER` says it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InstallCommand {
    /// `pip install`: pip's own `INSTALLER`, an unknown tool's, or none.
    #[default]
    Pip,
    /// `uv pip install`: uv's.
    UvPip,
}

/// The tool an `INSTALLER` file holding `text` names (`pip`, `uv`): its
/// first line, trimmed, when that is a short word of printable ASCII.
pub fn installer_name(text: &str) -> Option<&str> {
    let name = text.lines().next()?.trim();
    (!name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_graphic()))
        .then_some(name)
}

impl InstallCommand {
    /// The command for an `INSTALLER` file holding `text`.
    pub fn from_installer_file(text: &str) -> Self {
        match installer_name(text) {
            Some("uv") => Self::UvPip,
            _ => Self::Pip,
        }
    }
}

impl fmt::Display for InstallCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pip => "pip install",
            Self::UvPip => "uv pip install",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{InstallCommand, installer_name};

    #[test]
    fn uv_s_installer_file_gives_uv_s_command_and_anything_else_pip_s() {
        for (text, command) in [
            ("uv\n", "uv pip install"),
            ("uv", "uv pip install"),
            (" uv \r\n", "uv pip install"),
            ("pip\n", "pip install"),
            ("poetry\n", "pip install"),
            ("", "pip install"),
            ("uvx\n", "pip install"),
        ] {
            let got = InstallCommand::from_installer_file(text).to_string();
            assert_eq!(got, command, "{text:?}");
        }
    }

    #[test]
    fn the_installer_is_a_short_printable_first_line() {
        assert_eq!(installer_name("uv\nmore\n"), Some("uv"));
        assert_eq!(installer_name("  pip \r\n"), Some("pip"));
        assert_eq!(installer_name(""), None);
        assert_eq!(installer_name("\n"), None);
        assert_eq!(installer_name("two words\n"), None);
        assert_eq!(installer_name(&"x".repeat(65)), None);
    }
}
