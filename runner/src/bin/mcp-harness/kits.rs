//! The adapter kits (`adapters/kits/<language>/`), carried in the binary so that a client
//! author who installed only `mcp-harness` can write one out beside an adapter:
//! `mcp-harness kit python` puts the Python kit in the current directory. Embedded here, in
//! the binary, for the reason [`crate::embedded`] gives.

use std::path::{Path, PathBuf};

use include_dir::{Dir, DirEntry, include_dir};

static KITS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../adapters/kits");

/// The Rust kit's example adapter: rmcp over stdio, tools only. The source is the one the
/// rmcp adapter's crate compiles as its example, so it cannot rot unseen.
const RUST_EXAMPLE: &str = include_str!("../../../../adapters/rmcp/examples/minimal.rs");

/// The example's manifest: the kit beside it by path, rmcp at the version the project's own
/// rmcp adapter pins, and what the example itself uses.
const RUST_EXAMPLE_MANIFEST: &str = r#"[package]
name = "example-adapter"
version = "0.1.0"
edition = "2024"
publish = false
description = "A minimal mcp-harness adapter on the Rust kit: rmcp over stdio, tools only (mcp-harness run --client 'cargo run -q --manifest-path example-adapter/Cargo.toml')"

# A workspace of its own, so it builds wherever it is written.
[workspace]

[dependencies]
mcp-harness-kit = { path = "../mcp-harness-kit" }
rmcp = { version = "=3.11.0", default-features = false, features = ["client", "transport-child-process"] }
serde_json = "1"
tokio = { version = "1", features = ["rt", "macros", "process"] }
"#;

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

/// Writes `language`'s kit into `to` (the Rust kit as a crate directory `mcp-harness-kit`,
/// with an example adapter crate `example-adapter` beside it), refusing to replace a file that exists unless `force`; returns the files written.
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
    if let Language::Rust = language {
        // The kit's crate, then an adapter crate on it beside it (the Python and JavaScript
        // kits carry their example adapters in their own directories).
        let example = to.join("example-adapter");
        files.push((example.join("Cargo.toml"), RUST_EXAMPLE_MANIFEST.as_bytes()));
        files.push((example.join("src/main.rs"), RUST_EXAMPLE.as_bytes()));
    }
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
