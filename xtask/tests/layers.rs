//! The reference client and the fakes implement the wire format independently, so a bug
//! they shared could not hide itself. This test fails when a crate's manifest (any kind of
//! dependency) makes one of them depend on the other, or the client on the scenarios crate.

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

/// The forbidden edges among `packages`: `(from, to)` pairs a package declares.
fn forbidden<'a>(
    packages: &[(String, BTreeSet<String>)],
    rules: &[(&'a str, &'a str)],
) -> Vec<String> {
    rules
        .iter()
        .filter(|(from, to)| {
            packages
                .iter()
                .any(|(name, deps)| name == from && deps.contains(*to))
        })
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
    assert_eq!(
        forbidden(&packages, &RULES),
        ["mcp-harness-client depends on mcp-harness-fakes"]
    );
}
