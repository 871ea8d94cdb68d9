//! A run's case sources as the command line gives them. Loading them (the built-in cases,
//! each `--cases` directory laid over the catalogue and fixtures, colliding ids) is the
//! scenarios crate's [`Sources::load`]; the runner only checks the directories it was given
//! and finds a user's case's snapshots.

use std::path::{Path, PathBuf};

pub use mcp_harness_scenarios::load::sources::{SNAPSHOTS_DIR, Sources};

/// Makes each of `dirs` absolute (so that case paths handed to the fake work from any
/// directory), checking that it is a directory; the error names the flag and the path.
pub fn resolve_dirs(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    dirs.iter()
        .map(|dir| {
            if !dir.is_dir() {
                return Err(format!(
                    "--cases {}: expected a directory of case files, found {}",
                    dir.display(),
                    if dir.exists() {
                        "something else"
                    } else {
                        "nothing"
                    }
                ));
            }
            std::fs::canonicalize(dir).map_err(|e| format!("--cases {}: {e}", dir.display()))
        })
        .collect()
}

/// The snapshots directory of the user's directory a case file comes from; `None` for a
/// built-in case.
pub fn user_snapshots(sources: &Sources, case_path: &Path) -> Option<PathBuf> {
    sources
        .user_dirs
        .iter()
        .find(|dir| case_path.starts_with(dir))
        .map(|dir| dir.join(SNAPSHOTS_DIR))
}
