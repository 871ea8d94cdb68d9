//! The built-in cases and their snapshots, carried inside the binary so that an installed
//! `mcp-harness` needs no source tree. A run writes them out to a temporary directory first:
//! the stdio fake is this same binary, started by the client under test with a case file's
//! path, and the loader resolves fixtures and the catalogue from files, so the files must
//! exist. Writing ~900 small files takes a few tens of milliseconds.
//!
//! `include_dir` embeds here, in the binary, and not in the library: `cargo xtask` links the
//! library and must keep reading the tree (editing a case must not rebuild it). It embeds
//! each file with `include_bytes!`, so editing a file rebuilds the binary; a file added or
//! removed is seen at the next build of this crate (stable Rust cannot track a directory).

use std::path::{Path, PathBuf};

use include_dir::{Dir, DirEntry, include_dir};

/// `scenarios/`: the cases, the catalogue, the fixtures and the schemas (and the scenarios
/// crate's own sources, which share the directory and are not written out).
static SCENARIOS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../scenarios");
/// `snapshots/`: the reference client's reviewed transcripts.
static SNAPSHOTS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../snapshots");

/// Entries of `scenarios/` that belong to the scenarios crate, not to the cases.
const CRATE_ENTRIES: [&str; 2] = ["src", "Cargo.toml"];

/// The built-in cases written out; the directory is removed when this is dropped.
pub struct Builtin {
    _dir: tempfile::TempDir,
    /// The scenarios root (requirements.json, fixtures/, the case directories).
    pub scenarios: PathBuf,
    /// The snapshots directory.
    pub snapshots: PathBuf,
}

/// Writes the built-in cases and snapshots to a fresh temporary directory.
pub fn write_out() -> Result<Builtin, String> {
    let dir = tempfile::Builder::new()
        .prefix("mcp-harness-cases-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary directory for the built-in cases: {e}"))?;
    let scenarios = dir.path().join("scenarios");
    let snapshots = dir.path().join("snapshots");
    let written = write_dir(&SCENARIOS, &scenarios, &CRATE_ENTRIES)
        .and_then(|()| write_dir(&SNAPSHOTS, &snapshots, &[]));
    written.map_err(|e| {
        format!(
            "cannot write the built-in cases to {}: {e}",
            dir.path().display()
        )
    })?;
    Ok(Builtin {
        _dir: dir,
        scenarios,
        snapshots,
    })
}

/// Writes `dir`'s tree below `to`, leaving out the top-level entries named in `skip`.
fn write_dir(dir: &Dir<'_>, to: &Path, skip: &[&str]) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in dir.entries() {
        let rel = entry
            .path()
            .strip_prefix(dir.path())
            .unwrap_or(entry.path());
        if skip.iter().any(|s| rel == Path::new(s)) {
            continue;
        }
        let target = to.join(rel);
        match entry {
            DirEntry::Dir(sub) => write_dir(sub, &target, &[])?,
            DirEntry::File(file) => std::fs::write(&target, file.contents())?,
        }
    }
    Ok(())
}

/// A schema shipped with the cases: `scenario.schema.json` or `fixture.schema.json`.
pub fn schema(name: &str) -> Option<&'static str> {
    SCENARIOS.get_file(name).and_then(|f| f.contents_utf8())
}

/// Built-in case `id` as shipped (`tools/pagination-three-pages`, or a trial name, whose
/// `@…` is dropped): the file's text, and for one variant of a family of cases in one file
/// that file's path. The error names the id and the closest ids there are.
pub fn case_text(id: &str) -> Result<(&'static str, Option<String>), String> {
    use mcp_harness::conformance::cases;
    let id = id.split('@').next().unwrap_or(id).trim_end_matches(".json");
    let id = id.strip_prefix("scenarios/").unwrap_or(id);
    let builtin = write_out()?;
    let loaded = cases::Sources {
        builtin: builtin.scenarios.clone(),
        with_builtin: true,
        user_dirs: Vec::new(),
    }
    .load()
    .map_err(|e| format!("the built-in cases do not load: {}", e.join("; ")))?;
    if let Some(case) = loaded.iter().find(|c| c.id == id) {
        let rel = case
            .path
            .strip_prefix(&builtin.scenarios)
            .unwrap_or(&case.path);
        let text = SCENARIOS
            .get_file(rel)
            .and_then(|f| f.contents_utf8())
            .ok_or_else(|| format!("this binary carries no {}", rel.display()))?;
        let family = case.variant.as_ref().map(|_| rel.display().to_string());
        return Ok((text, family));
    }
    let area = format!("{}/", id.split('/').next().unwrap_or(id));
    let near: Vec<&str> = loaded
        .iter()
        .map(|c| c.id.as_str())
        .filter(|other| other.starts_with(&area))
        .take(8)
        .collect();
    Err(match near.is_empty() {
        true => format!(
            "no built-in case `{id}`; expected a case id as `mcp-harness list` prints it, without `@<transport>` (e.g. `tools/pagination-three-pages`)"
        ),
        false => format!(
            "no built-in case `{id}`; cases of `{area}` include: {}",
            near.join(", ")
        ),
    })
}
