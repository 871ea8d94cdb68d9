//! No secret of an authorization trial (access and refresh tokens, codes, client secrets: the
//! fake makes them as `at-`, `rt-`, `code-`, `cs-` and 32 hex digits) appears in any output.
//! The authorization cases run against the reference client, and a few against a leaky
//! client that prints its whole environment (the pre-registered client secret included) on
//! stdout and stderr before running the reference driver; then the runner's output, the
//! reports, its temporary files and the snapshots are searched for anything shaped like a
//! secret of the fake, and the leaky trials must fail the never-printed check.

use super::support;

use std::path::{Path, PathBuf};

use mcp_harness::report::RunResults;

const SECRET_CHECK: &str = "never printed a secret of its authorization";

const LEAKY: &str = r#"#!/bin/sh
env
env >&2
echo "secret: $MCP_HARNESS_AUTH_CLIENT_SECRET" >&2
exec "$DRIVER" "$@"
"#;

/// Trials with a pre-registered confidential client, so the leaky client has a secret to
/// print.
const LEAKY_TRIALS: &[&str] = &[
    "auth/registration-pre-registered@https",
    "auth/token-endpoint-auth-post@https",
];

/// Where text shaped like a secret of the authorization fake starts, if anywhere.
fn secret_shaped(bytes: &[u8]) -> Option<usize> {
    for prefix in [&b"at-"[..], b"rt-", b"code-", b"cs-"] {
        for (at, window) in bytes.windows(prefix.len()).enumerate() {
            if window != prefix {
                continue;
            }
            let rest = &bytes[at + prefix.len()..];
            let hex = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            let before_ok = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
            if hex == 32 && before_ok {
                return Some(at);
            }
        }
    }
    None
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => files_under(&path, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

#[test]
fn no_output_of_the_authorization_cases_contains_a_secret() {
    assert_eq!(
        secret_shaped(b"x at-0123456789abcdef0123456789abcdef y"),
        Some(2)
    );
    assert_eq!(
        secret_shaped(b"flat-0123456789abcdef0123456789abcdef"),
        None
    );
    let bins = support::bins();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("leaky.sh"), LEAKY).unwrap();
    let leaky = format!(
        "DRIVER={} sh {}",
        mcp_harness::conformance::shell_quote(&bins.driver),
        mcp_harness::conformance::shell_quote(&work.path().join("leaky.sh"))
    );
    let mut leaky_args = vec!["--client", leaky.as_str(), "--exact"];
    leaky_args.extend(LEAKY_TRIALS);
    let mut haystacks: Vec<(String, Vec<u8>)> = Vec::new();
    let mut results = Vec::new();
    for (label, args) in [("reference", vec!["auth/"]), ("leaky", leaky_args)] {
        let reports = work.path().join(format!("reports-{label}"));
        let tmp = work.path().join(format!("tmp-{label}"));
        std::fs::create_dir_all(&tmp).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-harness"))
            .args(["conformance", "--no-build"])
            .args(&args)
            .arg("--report-dir")
            .arg(&reports)
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        match label {
            "reference" => assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            ),
            _ => assert_eq!(out.status.code(), Some(101)),
        }
        haystacks.push((format!("{label}: stdout"), out.stdout));
        haystacks.push((format!("{label}: stderr"), out.stderr));
        let mut files = Vec::new();
        files_under(&reports, &mut files);
        files_under(&tmp, &mut files);
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            if file.extension().is_some_and(|e| e == "html") {
                let page = String::from_utf8_lossy(&bytes);
                let texts = mcp_harness::report::detail::page_texts(&page).unwrap();
                haystacks.push((
                    format!("{} (texts)", file.display()),
                    texts.join("\n").into_bytes(),
                ));
            }
            haystacks.push((file.display().to_string(), bytes));
        }
        results.push(RunResults::load(&reports.join("results.json")).unwrap());
    }
    let mut snapshots = Vec::new();
    files_under(&support::workspace_root().join("snapshots"), &mut snapshots);
    for file in snapshots.iter().filter(|f| {
        f.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("auth__"))
    }) {
        haystacks.push((file.display().to_string(), std::fs::read(file).unwrap()));
    }
    let leaked: Vec<&String> = haystacks
        .iter()
        .filter(|(_, bytes)| secret_shaped(bytes).is_some())
        .map(|(name, _)| name)
        .collect();
    assert!(leaked.is_empty(), "a secret of the fake in: {leaked:?}");
    assert!(results[0].trials.len() >= 40, "{}", results[0].trials.len());
    for trial in &results[1].trials {
        let caught = trial
            .checks
            .iter()
            .any(|c| c.name.contains(SECRET_CHECK) && !c.passed);
        assert!(caught, "{}: the printed secret was not caught", trial.name);
    }
    assert_eq!(results[1].trials.len(), LEAKY_TRIALS.len());
}
