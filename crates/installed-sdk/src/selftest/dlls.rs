//! Windows: every DLL of the runtime packages loads.
//!
//! Windows has no Python-free need for a probe: loading a DLL runs no
//! process-wide setup that a later load could trip over, so this program
//! loads each DLL itself with `LoadLibraryExW`, searching the DLL's own
//! directory and the runtime packages' `bin` directories (as
//! `rocm_sdk.preload_libraries` arranges with `os.add_dll_directory`), and
//! frees it again. A DLL is recognised from its bytes: an `MZ` header whose
//! PE header has `IMAGE_FILE_DLL`.

use std::fs::File;
use std::io::Read;
use std::os::windows::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::{FreeLibrary, GetLastError};
use windows_sys::Win32::System::LibraryLoader::{
    AddDllDirectory, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR,
    LoadLibraryExW, RemoveDllDirectory,
};

use dist_info::windows_names::{self, NameProblem};

use super::Context;
use super::libraries::{runtime_dirs, walk};
use crate::report::{Category, Check};

/// `IMAGE_FILE_DLL` of the COFF header's characteristics.
const IMAGE_FILE_DLL: u16 = 0x2000;

pub(super) fn check(cx: &Context<'_>, checks: &mut Vec<Check>) {
    let dirs = runtime_dirs(cx);
    let (dlls, refused) = dlls(cx, &dirs);
    // Opening such a file opens a device (a read of AUX waits forever).
    checks.extend(refused.into_iter().map(|(path, problem)| {
        Check::failed(
            Category::Libraries,
            cx.rel(&path),
            format!("{problem}, so it was not opened; reinstall the package without it"),
        )
    }));
    if dlls.is_empty() {
        checks.push(Check::skipped(
            Category::Libraries,
            "shared libraries",
            "none installed",
        ));
        return;
    }
    let search = SearchDirs::add(dlls.iter().filter_map(|p| p.parent()));
    let mut found: Vec<Check> = dlls
        .iter()
        .map(|dll| {
            let name = cx.rel(dll);
            match load(dll) {
                Ok(()) => Check::passed(Category::Libraries, name, "loads"),
                Err(reason) => Check::failed(Category::Libraries, name, reason),
            }
        })
        .collect();
    drop(search);
    found.sort_by(|a, b| a.name.cmp(&b.name));
    checks.extend(found);
}

/// Every DLL under `dirs`, sorted, and the files whose site-packages path
/// Windows cannot hold (docs/windows.md#names), never opened.
fn dlls(cx: &Context<'_>, dirs: &[PathBuf]) -> (Vec<PathBuf>, Vec<(PathBuf, NameProblem)>) {
    let mut files = Vec::new();
    for dir in dirs {
        walk(dir, &mut files);
    }
    files.sort();
    let mut refused = Vec::new();
    let mut dlls = Vec::new();
    for path in files {
        let rel = cx.rel(&path).replace('\\', "/");
        match windows_names::check_path(&rel) {
            Err(problem) => refused.push((path, problem)),
            Ok(()) if is_dll(&path) => dlls.push(path),
            Ok(()) => {}
        }
    }
    (dlls, refused)
}

/// Whether the file is a PE image marked as a DLL.
fn is_dll(path: &Path) -> bool {
    let mut head = [0u8; 4096];
    let Ok(n) = File::open(path).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let head = &head[..n];
    if !head.starts_with(b"MZ") || head.len() < 0x40 {
        return false;
    }
    let at = u32::from_le_bytes([head[0x3c], head[0x3d], head[0x3e], head[0x3f]]) as usize;
    // Signature (4), machine (2), sections (2), stamp (4), symbols (4),
    // count (4), optional header size (2), characteristics (2).
    match head.get(at..at + 24) {
        Some(pe) if pe.starts_with(b"PE\0\0") => {
            u16::from_le_bytes([pe[22], pe[23]]) & IMAGE_FILE_DLL != 0
        }
        _ => false,
    }
}

fn wide(path: &Path) -> Vec<u16> {
    path.as_os_str().encode_wide().chain([0]).collect()
}

/// Loads and frees one DLL; the system's error when it does not load.
#[allow(unsafe_code)] // the loader API
fn load(dll: &Path) -> Result<(), String> {
    let path = wide(dll);
    // SAFETY: `path` is a NUL-terminated wide string that outlives the call.
    let module = unsafe {
        LoadLibraryExW(
            path.as_ptr(),
            std::ptr::null_mut(),
            LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS,
        )
    };
    if module.is_null() {
        // SAFETY: no other call since the failed load.
        let code = unsafe { GetLastError() };
        return Err(format!(
            "LoadLibraryExW failed: {} (a DLL it imports is missing or does not load)",
            std::io::Error::from_raw_os_error(code.cast_signed())
        ));
    }
    // SAFETY: `module` is the handle the successful load returned.
    unsafe { FreeLibrary(module) };
    Ok(())
}

/// Directories added to the process's DLL search path, removed on drop.
struct SearchDirs(Vec<*const core::ffi::c_void>);

impl SearchDirs {
    #[allow(unsafe_code)] // the loader API
    fn add<'a>(dirs: impl Iterator<Item = &'a Path>) -> Self {
        let mut unique: Vec<&Path> = dirs.collect();
        unique.sort();
        unique.dedup();
        let cookies = unique
            .into_iter()
            .filter_map(|dir| {
                let path = wide(dir);
                // SAFETY: `path` is a NUL-terminated wide string.
                let cookie = unsafe { AddDllDirectory(path.as_ptr()) };
                (!cookie.is_null()).then_some(cookie.cast_const())
            })
            .collect();
        Self(cookies)
    }
}

impl Drop for SearchDirs {
    #[allow(unsafe_code)] // the loader API
    fn drop(&mut self) {
        for cookie in &self.0 {
            // SAFETY: each cookie came from `AddDllDirectory`.
            unsafe { RemoveDllDirectory(*cookie) };
        }
    }
}
