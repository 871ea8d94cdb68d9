//! The reference client and the fakes implement the wire format independently, so a bug
//! they shared could not hide itself. This test fails when the manifests (any kind of
//! dependency, directly or through other workspace crates) make one of them depend on the
//! other, or the client on the scenarios crate.

use std::collections::BTreeSet;
use std::process::Command;

/// The workspace's packages and the names of every dependency each declares, read with
/// `cargo metadata --no-deps` (the manifests as cargo reads them, features included).
fn declared_dependencies() -> Vec<(String, BTreeSet<String>)> {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let deps = p["dependencies"].as_array().expect("dependencies");
            let names = deps.iter().filter_map(|d| d["name"].as_str());
            (
                p["name"].as_str().unwrap_or_default().to_owned(),
                names.map(str::to_owned).collect(),
            )
        })
        .collect()
}

/// Everything `from` depends on among `packages`, directly or through other packages.
fn reach(packages: &[(String, BTreeSet<String>)], from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut pending = vec![from.to_owned()];
    while let Some(name) = pending.pop() {
        for (_, deps) in packages.iter().filter(|(n, _)| *n == name) {
            for dep in deps {
                if seen.insert(dep.clone()) {
                    pending.push(dep.clone());
                }
            }
        }
    }
    seen
}

/// The forbidden edges among `packages`: `(from, to)` pairs `from` reaches.
fn forbidden<'a>(
    packages: &[(String, BTreeSet<String>)],
    rules: &[(&'a str, &'a str)],
) -> Vec<String> {
    rules
        .iter()
        .filter(|(from, to)| reach(packages, from).contains(*to))
        .map(|(from, to)| format!("{from} depends on {to}"))
        .collect()
}

const RULES: [(&str, &str); 3] = [
    ("mcp-harness-client", "mcp-harness-fakes"),
    ("mcp-harness-client", "mcp-harness-scenarios"),
    ("mcp-harness-fakes", "mcp-harness-client"),
];

#[test]
fn the_client_and_the_fakes_share_no_code() {
    let packages = declared_dependencies();
    for (crate_name, _) in RULES {
        assert!(
            packages.iter().any(|(name, _)| name == crate_name),
            "{crate_name} is not in the workspace: update this test"
        );
    }
    let found = forbidden(&packages, &RULES);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_forbidden_edge_is_named() {
    let packages = vec![
        (
            "mcp-harness-client".to_owned(),
            BTreeSet::from(["serde".to_owned(), "mcp-harness-fakes".to_owned()]),
        ),
        (
            "mcp-harness-fakes".to_owned(),
            BTreeSet::from(["mcp-harness-scenarios".to_owned()]),
        ),
    ];
    // Through the fakes, the client reaches the scenarios crate too.
    assert_eq!(
        forbidden(&packages, &RULES),
        [
            "mcp-harness-client depends on mcp-harness-fakes",
            "mcp-harness-client depends on mcp-harness-scenarios"
        ]
    );
    // A dev-dependency on the runner reaches the fakes through it.
    let through = vec![
        (
            "mcp-harness-client".to_owned(),
            BTreeSet::from(["mcp-harness".to_owned()]),
        ),
        (
            "mcp-harness".to_owned(),
            BTreeSet::from(["mcp-harness-fakes".to_owned()]),
        ),
    ];
    assert_eq!(
        forbidden(&through, &RULES),
        ["mcp-harness-client depends on mcp-harness-fakes"]
    );
}
