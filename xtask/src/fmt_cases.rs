//! `cargo xtask fmt-cases`: rewrites every case file, fixture and the requirements catalogue
//! in the one canonical shape (see `mcp_harness_scenarios::canonical`), or with `--check`
//! lists the files that differ from it.

use std::path::{Path, PathBuf};

use mcp_harness_scenarios::canonical;
use mcp_harness_scenarios::load::{self, CATALOGUE_FILE, FIXTURES_DIR};

/// What kind of file a path is, by where it sits.
fn formatter(root: &Path, path: &Path) -> fn(&str) -> Result<String, String> {
    if path.file_name().is_some_and(|n| n == CATALOGUE_FILE) {
        canonical::format_catalogue
    } else if path.starts_with(root.join(FIXTURES_DIR)) {
        canonical::format_fixture
    } else {
        canonical::format_case
    }
}

/// Every file the formatter owns below `root`: the cases, the fixtures, the catalogue.
pub fn files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = load::case_files(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let fixtures = root.join(FIXTURES_DIR);
    if let Ok(entries) = std::fs::read_dir(&fixtures) {
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        found.sort();
        files.extend(found);
    }
    let catalogue = root.join(CATALOGUE_FILE);
    if catalogue.is_file() {
        files.push(catalogue);
    }
    Ok(files)
}

/// Formats `paths` (default: every file below `root`). Returns the files that were (or with
/// `check`, would be) rewritten; a file that cannot be parsed is an error naming it.
pub fn run(root: &Path, paths: &[PathBuf], check: bool) -> Result<Vec<PathBuf>, String> {
    let files = match paths {
        [] => files(root)?,
        given => given.to_vec(),
    };
    let mut changed = Vec::new();
    let mut errors = Vec::new();
    for path in files {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                errors.push(format!("{}: cannot read: {e}", path.display()));
                continue;
            }
        };
        let root = load::find_root(&path).unwrap_or_else(|| root.to_owned());
        let formatted = match formatter(&root, &path)(&text) {
            Ok(formatted) => formatted,
            Err(e) => {
                errors.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if formatted != text {
            if !check && let Err(e) = std::fs::write(&path, &formatted) {
                errors.push(format!("{}: cannot write: {e}", path.display()));
                continue;
            }
            changed.push(path);
        }
    }
    if errors.is_empty() {
        Ok(changed)
    } else {
        Err(errors.join("\n"))
    }
}
