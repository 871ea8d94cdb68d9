//! Where a run's cases come from, loaded in one place: the built-in cases (the tree's
//! `scenarios/`, or the copy the installed binary carries and writes out), and the users' own
//! directories (`--cases DIR` adds one, `--only-cases DIR` adds one and drops the built-in
//! cases). The runner only names the sources.
//!
//! A user's case is the same thing as a built-in one: the same schema, the same loader, the
//! same checks. It resolves against the built-in requirements catalogue and fixtures, plus
//! what its directory adds: `DIR/requirements.json` (requirement ids of its own; without it a
//! case may cite only built-in ids) and `DIR/fixtures/*.json`. Its id is its path below `DIR`,
//! and its snapshots live in `DIR/snapshots/`. An id used twice, by a built-in case and a
//! user's or by two users' directories, is an error naming both files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{CATALOGUE_FILE, Case, FIXTURES_DIR, Library, load_dir};

/// The directory below a user's case directory that holds its snapshots (never case files).
pub const SNAPSHOTS_DIR: &str = "snapshots";

/// A run's case directories.
#[derive(Debug, Clone)]
pub struct Sources {
    /// The built-in cases' directory: its catalogue and fixtures serve the users' cases too.
    pub builtin: PathBuf,
    /// Whether the built-in cases run (not with `--only-cases`).
    pub with_builtin: bool,
    /// The users' case directories, absolute, in the order given.
    pub user_dirs: Vec<PathBuf>,
}

impl Sources {
    /// Loads every case of these sources, sorted by id; every problem at once (each names
    /// its file).
    pub fn load(&self) -> Result<Vec<Case>, Vec<String>> {
        let mut cases = Vec::new();
        let mut errors = Vec::new();
        if self.with_builtin {
            match load_dir(&self.builtin) {
                Ok(found) => cases.extend(found),
                Err(found) => errors.extend(found.iter().map(ToString::to_string)),
            }
        }
        if !self.user_dirs.is_empty() {
            match Library::find(&self.builtin) {
                Ok(base) => {
                    for dir in &self.user_dirs {
                        match load_user_dir(&base, dir) {
                            Ok(found) => cases.extend(found),
                            Err(found) => errors.extend(found),
                        }
                    }
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        errors.extend(collisions(self, &cases));
        if !errors.is_empty() {
            return Err(errors);
        }
        cases.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(cases)
    }
}

/// The cases of one user's directory, resolved against `base` with the directory's own
/// requirements and fixtures laid over it.
fn load_user_dir(base: &Library, dir: &Path) -> Result<Vec<Case>, Vec<String>> {
    let library = base.with_own(dir).map_err(|e| vec![e.to_string()])?;
    let files =
        case_files(dir).map_err(|e| vec![format!("{}: cannot read: {e}", dir.display())])?;
    if files.is_empty() {
        return Err(vec![format!(
            "{}: no case files (*.json outside {FIXTURES_DIR}/ and {SNAPSHOTS_DIR}/) in this --cases directory",
            dir.display()
        )]);
    }
    let own_catalogue = dir.join(CATALOGUE_FILE).is_file();
    let (mut cases, mut errors) = (Vec::new(), Vec::new());
    for file in files {
        let loaded = super::load_file(&library, dir, &file)
            .map_err(|e| e.to_string())
            .map_err(|e| match own_catalogue {
                false if e.contains("unknown requirement") => format!(
                    "{e}; a requirement of your own needs {}",
                    dir.join(CATALOGUE_FILE).display()
                ),
                _ => e,
            });
        match loaded {
            Ok(found) => cases.extend(found),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(cases)
    } else {
        Err(errors)
    }
}

/// The case files below a user's directory, sorted: [`super::case_files`] leaving out
/// `snapshots/` too.
fn case_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    super::json_files(dir, &[dir.join(FIXTURES_DIR), dir.join(SNAPSHOTS_DIR)])
}

/// One error per case id that two files use, naming both (a built-in file by its path below
/// the built-in directory, since the installed binary's copy lives in a temporary directory).
fn collisions(sources: &Sources, cases: &[Case]) -> Vec<String> {
    let mut first: HashMap<&str, &Path> = HashMap::new();
    let mut errors = Vec::new();
    for case in cases {
        match first.get(case.id.as_str()) {
            Some(&other) if other != case.path => errors.push(format!(
                "{}: the case id {:?} is already the id of {}; expected ids unique across the built-in cases and every --cases directory (rename one file)",
                case.path.display(),
                case.id,
                shown(sources, other)
            )),
            Some(_) => {}
            None => {
                first.insert(&case.id, &case.path);
            }
        }
    }
    errors
}

fn shown(sources: &Sources, path: &Path) -> String {
    match path.strip_prefix(&sources.builtin) {
        Ok(rel) if !sources.user_dirs.iter().any(|d| path.starts_with(d)) => {
            format!("the built-in case scenarios/{}", rel.display())
        }
        _ => path.display().to_string(),
    }
}
