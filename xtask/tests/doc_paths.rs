//! The documents people navigate by (README.md, ARCHITECTURE.md, CLIENTS.md) name files and
//! folders of the repository in backticks. This test fails, naming the document, its line
//! and the path, when one of them names a path that does not exist, so a move or a rename
//! cannot leave the code map pointing at nothing.

use std::path::Path;

const DOCUMENTS: [&str; 3] = ["README.md", "ARCHITECTURE.md", "CLIENTS.md"];

/// The top-level folders a named path starts with; other backticked text (commands, JSON,
/// trial names such as `tools/pagination@stdio`) is not a path.
const ROOTS: [&str; 13] = [
    "client/",
    "fakes/",
    "scenarios/",
    "snapshots/",
    "runner/",
    "xtask/",
    "adapters/",
    "docs/",
    "fuzz/",
    ".ci/",
    ".cargo/",
    "packaging/",
    ".github/",
];

/// Backticked spans of a line that look like a repository path: under one of [`ROOTS`], no
/// placeholder (`<`, `*`, `{`, `…`) and no spaces.
fn named_paths(line: &str) -> Vec<&str> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| ROOTS.iter().any(|r| span.starts_with(r)))
        .filter(|span| !span.contains(['<', '*', '{', ' ', '…', '$']))
        // `path::test_fn` names a test by its file (the invariants list).
        .map(|span| span.split("::").next().unwrap_or(span))
        .map(|span| span.trim_end_matches([':', ',', '.']))
        .collect()
}

#[test]
fn the_documents_name_only_paths_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut missing = Vec::new();
    for doc in DOCUMENTS {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        // Under a heading that names a crate folder (`### \`runner/\` — ...`), `src/...`
        // and `tests/...` are that crate's.
        let mut section = String::new();
        for (n, line) in text.lines().enumerate() {
            if line.starts_with('#') {
                section = named_paths(line)
                    .first()
                    .map_or(String::new(), |p| p.to_string());
            }
            let relative = line
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|s| s.starts_with("src/") || s.starts_with("tests/"))
                .filter(|s| !s.contains(['<', '*', '{', ' ', '…', '$']))
                .filter(|_| section.ends_with('/'))
                .map(|s| format!("{section}{}", s.trim_end_matches([':', ',', '.'])));
            let paths = named_paths(line)
                .into_iter()
                .map(str::to_owned)
                .chain(relative);
            for path in paths {
                if !root.join(&path).exists() {
                    missing.push(format!("{doc}:{}: `{path}`", n + 1));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths named in the documents that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_path_is_told_from_other_backticked_text() {
    let line = "see `runner/src/lib.rs`, `tools/x@stdio`, `client/src/<mod>.rs` and `cargo test`";
    assert_eq!(named_paths(line), ["runner/src/lib.rs"]);
    let line = "(checked by `xtask/tests/cli.rs::a_baseline_is_strict_both_ways`)";
    assert_eq!(named_paths(line), ["xtask/tests/cli.rs"]);
}

/// CLIENTS.md shows the JavaScript kit's example adapter in full; `mcp-harness kit js` writes
/// the file: the two must be the same text, or the documentation rots unseen.
#[test]
fn the_documented_js_example_is_the_kits_example_adapter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let md = std::fs::read_to_string(root.join("CLIENTS.md")).unwrap();
    let example =
        std::fs::read_to_string(root.join("adapters/kits/js/example-adapter.mjs")).unwrap();
    let shown: Vec<&str> = md
        .split("```js\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("```").map(|(block, _)| block))
        .filter(|block| block.contains("from './mcp-harness-kit.mjs'"))
        .collect();
    assert_eq!(shown.len(), 1, "one JavaScript example in CLIENTS.md");
    assert_eq!(
        shown[0], example,
        "CLIENTS.md's example differs from the kit's"
    );
}
