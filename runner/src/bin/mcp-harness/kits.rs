//! The adapter kits (`adapters/kits/<language>/`), carried in the binary so that a client
//! author who installed only `mcp-harness` can write one out beside an adapter:
//! `mcp-harness kit python` puts the Python kit in the current directory. Embedded here, in
//! the binary, for the reason [`crate::embedded`] gives.

use std::path::{Path, PathBuf};

use include_dir::{Dir, DirEntry, include_dir};

static KITS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../adapters/kits");

/// What a developer's tree may hold beside a kit and a user never needs.
const SKIPPED: [&str; 3] = ["__pycache__", "node_modules", "target"];

/// A kit, by the language of the adapters it serves.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Language {
    /// `mcp_harness_kit.py` (standard library only, Python 3.10+).
    Python,
    /// `mcp-harness-kit.mjs` (no dependencies, Node 20+).
    Js,
    /// The `mcp-harness-kit` crate (serde_json only).
    Rust,
}

impl Language {
    fn dir(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Js => "js",
            Language::Rust => "rust",
        }
    }
}

/// Writes `language`'s kit into `to` (the Rust kit as a crate directory `mcp-harness-kit`),
/// refusing to replace a file that exists unless `force`; returns the files written.
pub fn write(language: Language, to: &Path, force: bool) -> Result<Vec<PathBuf>, String> {
    let kit = KITS
        .get_dir(language.dir())
        .ok_or_else(|| format!("this binary carries no {} kit", language.dir()))?;
    let root = match language {
        Language::Rust => to.join("mcp-harness-kit"),
        Language::Python | Language::Js => to.to_path_buf(),
    };
    let mut files = Vec::new();
    collect(kit, kit.path(), &root, &mut files);
    if !force {
        let existing: Vec<String> = files
            .iter()
            .filter(|(path, _)| path.exists())
            .map(|(path, _)| path.display().to_string())
            .collect();
        if let Some(first) = existing.first() {
            let more = match existing.len() - 1 {
                0 => String::new(),
                n => format!(" and {n} more of the kit's files"),
            };
            return Err(format!(
                "not replacing {first}{more}, which already exist (pass --force to overwrite)"
            ));
        }
    }
    for (path, contents) in &files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(path, contents)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

/// The files below `dir`, as (target path, contents), leaving out [`SKIPPED`] directories.
fn collect(dir: &Dir<'static>, base: &Path, to: &Path, out: &mut Vec<(PathBuf, &'static [u8])>) {
    for entry in dir.entries() {
        let rel = entry.path().strip_prefix(base).unwrap_or(entry.path());
        match entry {
            DirEntry::Dir(sub) => {
                let skipped = sub
                    .path()
                    .file_name()
                    .is_some_and(|name| SKIPPED.iter().any(|s| name == *s));
                if !skipped {
                    collect(sub, base, to, out);
                }
            }
            DirEntry::File(file) => out.push((to.join(rel), file.contents())),
        }
    }
}
