//! The generated case directories the bench's scale runs use: the project's cases copied again
//! and again under `copy-<n>/` until a trial count is reached, beside the catalogue, the
//! schemas and the fixtures as they are, so every copy has its own ids and the same fixtures.

use std::path::Path;

use mcp_harness_scenarios::load::{CATALOGUE_FILE, FIXTURES_DIR, case_files, load_cases};
use tempfile::TempDir;

/// How many trials the cases of `dir` make.
pub(super) fn case_count(dir: &Path) -> Result<usize, String> {
    mcp_harness_scenarios::load_dir(dir)
        .map(|cases| mcp_harness_scenarios::trials(&cases).len())
        .map_err(|errors| {
            let first = errors.first().map(ToString::to_string).unwrap_or_default();
            format!("the cases do not load: {first}")
        })
}

/// A case directory of at least `at_least` trials, made in a temporary directory inside
/// `parent` (removed when dropped): the catalogue, the schemas and the fixtures of
/// `from`, and its case files again and again (in order) under `copy-1/`, `copy-2/`, ...,
/// until the trials reach `at_least`.
pub(super) fn scaled_dir(from: &Path, at_least: usize, parent: &Path) -> Result<TempDir, String> {
    let io = |what: &Path| {
        let what = what.display().to_string();
        move |e: std::io::Error| format!("cannot copy {what}: {e}")
    };
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let temp = tempfile::Builder::new()
        .prefix("scale-")
        .tempdir_in(parent)
        .map_err(io(parent))?;
    let dir = temp.path();
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let path = entry.map_err(io(from))?.path();
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        if file_name == CATALOGUE_FILE || file_name.ends_with(".schema.json") {
            std::fs::copy(&path, dir.join(&*file_name)).map_err(io(&path))?;
        }
    }
    copy_tree(&from.join(FIXTURES_DIR), &dir.join(FIXTURES_DIR))?;
    let files = case_files(from).map_err(io(from))?;
    let mut counted = Vec::with_capacity(files.len());
    for file in &files {
        let cases = load_cases(from, file).map_err(|e| e.to_string())?;
        counted.push((file, mcp_harness_scenarios::trials(&cases).len()));
    }
    if counted.iter().all(|(_, n)| *n == 0) {
        return Err(format!("{} holds no trial", from.display()));
    }
    let mut total = 0;
    'copies: for copy in 1.. {
        for (file, trials) in &counted {
            if total >= at_least {
                break 'copies;
            }
            let rel = file
                .strip_prefix(from)
                .map_err(|_| format!("{} is not below {}", file.display(), from.display()))?;
            let to = dir.join(format!("copy-{copy}")).join(rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::copy(file, &to).map_err(io(file))?;
            total += trials;
        }
    }
    Ok(temp)
}

/// Copies a directory tree (the fixtures).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    if !from.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    for entry in
        std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?
    {
        let path = entry
            .map_err(|e| format!("cannot read {}: {e}", from.display()))?
            .path();
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copy_tree(&path, &target)?;
        } else {
            std::fs::copy(&path, &target)
                .map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths;

    #[test]
    fn a_scaled_directory_copies_every_case_under_distinct_ids_with_its_fixtures() {
        let work = tempfile::tempdir().expect("a temporary directory");
        let from = paths::scenarios_dir();
        let one = case_count(&from).expect("the suite loads");
        let dir = scaled_dir(&from, 2 * one, work.path()).expect("scaled");
        let cases = mcp_harness_scenarios::load_dir(dir.path()).expect("the copy loads");
        assert_eq!(mcp_harness_scenarios::trials(&cases).len(), 2 * one);
        assert!(cases.iter().any(|c| c.id.starts_with("copy-2/")));
        assert!(!cases.iter().any(|c| c.id.starts_with("copy-3/")));
        let partial = scaled_dir(&from, one + 1, work.path()).expect("scaled");
        let n = case_count(partial.path()).expect("loads");
        assert!(n > one && n < 2 * one, "{n}");
        let kept = dir.path().to_owned();
        drop(dir);
        assert!(!kept.exists());
    }
}
