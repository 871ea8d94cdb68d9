//! A bearer token never appears in any log, error, transcript, snapshot or report. The suite
//! runs with `--bearer-token` (every HTTPS trial gets the token, and the fake requires it)
//! against the reference client on every HTTPS trial, and against a leaky client that prints
//! its environment and arguments on stdout and stderr and sends the token inside a message on
//! a few trials of both transports ([`LEAKY_TRIALS`]); then every output is searched for the
//! token: the runner's stdout and stderr, results.json, junit.xml, report.html, whatever the
//! runner left in its temporary directory, and the snapshots. The authorization trials'
//! secrets get the same search in [`auth`] (one test binary, so one link).

#[path = "secrets/auth.rs"]
mod auth;
mod support;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::process::Output;

use mcp_harness::conformance::{snapshot, verdict};
use mcp_harness::report::RunResults;
use mcp_harness_scenarios::model::Transport;

const TOKEN_CHECK: &str = "never printed its bearer token";

/// Runs before the reference driver: prints everything it was given, both ways, and over
/// HTTPS sends an initialize whose clientInfo carries the token (the fake records bodies).
const LEAKY: &str = r#"#!/bin/sh
env
echo "args: $*"
env >&2
echo "the token is $MCP_HARNESS_BEARER_TOKEN, again: $MCP_HARNESS_BEARER_TOKEN" >&2
if [ -n "$MCP_HARNESS_BEARER_TOKEN" ]; then python3 "$(dirname "$0")/wire.py" >&2; fi
exec "$DRIVER" "$@"
"#;

const WIRE: &str = r#"
import http.client, json, os, ssl, urllib.parse
url = urllib.parse.urlparse(os.environ["MCP_HARNESS_SERVER_URL"])
token = os.environ["MCP_HARNESS_BEARER_TOKEN"]
try:
    if url.scheme == "https":
        ctx = ssl.create_default_context(cafile=os.environ["MCP_HARNESS_CA_FILE"])
        conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=2)
    else:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=2)
    body = {"jsonrpc": "2.0", "id": 99, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": token, "version": token}}}
    conn.request("POST", url.path + "?token=" + token, json.dumps(body), {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": "Bearer " + token, "X-Leak": token})
    print("answer:", conn.getresponse().read()[:200], token)
except Exception as e:
    print("wire leak failed:", e, token)
"#;

/// The leaky client's trials. It leaks the same way in every trial, and the runner writes
/// every trial's output (failure report, transcript, rerun line, JUnit and HTML entries)
/// through the same code, so a few trials suffice: plain calls and SSE over HTTPS, the case
/// about the token, a redirect to another host (where the token must not follow), a trial
/// at a protocol revision, and stdio trials (which get no token, but whose failures are
/// reported by the same run). Stdio trials get no token at all, so the reference client
/// runs the HTTPS trials only.
const LEAKY_TRIALS: &[&str] = &[
    "calls/text-blocks@https",
    "http/bearer-token-sent@https",
    "http/sse-replies@https",
    "robust/redirect-307-to-other-host@https",
    "era/legacy/protocol-version-header-per-revision@https@2025-06-18",
    "calls/text-blocks@stdio",
    "cleanup/ignores-eof@stdio",
];

fn fresh_token() -> String {
    let word = || RandomState::new().build_hasher().finish();
    format!("tok-{:016x}{:016x}", word(), word())
}

fn run(args: &[&str], token: &str, reports: &Path, tmp: &Path) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mcp-harness"))
        .args(["conformance", "--no-build", "--bearer-token", token])
        .args(args)
        .arg("--report-dir")
        .arg(reports)
        .env("TMPDIR", tmp)
        .output()
        .unwrap()
}

/// Every file under `dir` (recursively), skipping `skip`.
fn files_under(dir: &Path, skip: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if skip.contains(&name.as_str()) {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() => files_under(&path, skip, out),
            Ok(t) if t.is_file() => out.push(path),
            _ => {}
        }
    }
}

/// Searches `haystacks` for the token and for its secret part; returns where it was found.
fn search(haystacks: &[(String, Vec<u8>)], needles: &[&str]) -> Vec<String> {
    haystacks
        .iter()
        .filter(|(_, bytes)| {
            needles
                .iter()
                .any(|n| bytes.windows(n.len()).any(|w| w == n.as_bytes()))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

#[test]
fn no_output_of_a_run_with_a_bearer_token_contains_it() {
    let bins = support::bins();
    let token = fresh_token();
    let secret_part = token.trim_start_matches("tok-").to_owned();
    let work = tempfile::tempdir().unwrap();
    let leaky_dir = work.path().join("leaky");
    std::fs::create_dir_all(&leaky_dir).unwrap();
    std::fs::write(leaky_dir.join("leaky.sh"), LEAKY).unwrap();
    std::fs::write(leaky_dir.join("wire.py"), WIRE).unwrap();
    let leaky = format!(
        "DRIVER={} sh {}",
        mcp_harness::conformance::shell_quote(&bins.driver),
        mcp_harness::conformance::shell_quote(&leaky_dir.join("leaky.sh"))
    );

    let mut haystacks: Vec<(String, Vec<u8>)> = Vec::new();
    let mut results = Vec::new();
    let mut leaky_args = vec!["--client", leaky.as_str(), "--exact"];
    leaky_args.extend(LEAKY_TRIALS);
    for (label, args) in [("reference", vec!["@https"]), ("leaky", leaky_args)] {
        let reports = work.path().join(format!("reports-{label}"));
        let tmp = work.path().join(format!("tmp-{label}"));
        std::fs::create_dir_all(&tmp).unwrap();
        let out = run(&args, &token, &reports, &tmp);
        let code = out.status.code();
        match label {
            "reference" => assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&out.stdout)),
            _ => assert_eq!(code, Some(101)),
        }
        haystacks.push((format!("{label}: stdout"), out.stdout));
        haystacks.push((format!("{label}: stderr"), out.stderr));
        let mut files = Vec::new();
        files_under(&reports, &[], &mut files);
        files_under(&tmp, &[], &mut files);
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            // An HTML page carries its transcripts compressed: look into them too.
            if file.extension().is_some_and(|e| e == "html") {
                let page = String::from_utf8_lossy(&bytes);
                let texts = mcp_harness::report::detail::page_texts(&page).unwrap();
                assert!(!texts.is_empty(), "{}: no texts", file.display());
                haystacks.push((
                    format!("{} (texts)", file.display()),
                    texts.join("\n").into_bytes(),
                ));
            }
            haystacks.push((file.display().to_string(), bytes));
        }
        results.push((
            label,
            RunResults::load(&reports.join("results.json")).unwrap(),
        ));
    }
    // Snapshots, and any pending snapshot written anywhere in the workspace.
    let mut files = Vec::new();
    files_under(
        &support::workspace_root(),
        &["target", ".git", "node_modules"],
        &mut files,
    );
    let snapshot_files: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| {
            let name = f.to_string_lossy();
            name.ends_with(".snap")
                || name.ends_with(".snap.new")
                || name.ends_with(".pending-snap")
        })
        .collect();
    assert!(!snapshot_files.is_empty());
    for file in &snapshot_files {
        haystacks.push((file.display().to_string(), std::fs::read(file).unwrap()));
    }

    // The runs were the ones meant: every HTTPS trial of the suite, and the leaky trials.
    let all_https = support::trials()
        .iter()
        .map(|(case, transport)| case.trial_name(*transport))
        .filter(|name| name.contains("@https"))
        .count();
    assert_eq!(results[0].1.trials.len(), all_https);
    let leaky_ran: Vec<&str> = results[1]
        .1
        .trials
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    let mut leaky_meant = LEAKY_TRIALS.to_vec();
    leaky_meant.sort();
    let mut leaky_ran_sorted = leaky_ran.clone();
    leaky_ran_sorted.sort();
    assert_eq!(leaky_ran_sorted, leaky_meant);

    // The token was really handed out: every HTTPS trial made the check, the reference
    // client passed it everywhere, the leaky one failed it everywhere, and what it sent
    // inside a message reached the transcript redacted.
    for (label, run) in &results {
        let https: Vec<_> = run
            .trials
            .iter()
            .filter(|t| t.name.ends_with("@https"))
            .collect();
        assert!(!https.is_empty());
        for t in https {
            // An authorization trial gets its tokens from its authorization server, not the
            // run's: it makes the never-printed check over every secret of the trial instead.
            let check = t.checks.iter().find(|c| {
                c.name.contains(TOKEN_CHECK)
                    || c.name
                        .contains("never printed a secret of its authorization")
            });
            let passed = check.map(|c| c.passed);
            let want = Some(*label == "reference");
            assert_eq!(passed, want, "{label} {}: {check:?}", t.name);
        }
    }
    let leaky_run = &results[1].1;
    assert!(
        leaky_run.trials.iter().any(|t| t
            .transcript
            .contains(r#""clientInfo":{"name":"[redacted]""#)),
        "the token sent in a message is redacted from the transcript"
    );

    let found = search(&haystacks, &[&token, &secret_part]);
    let bytes: usize = haystacks.iter().map(|(_, b)| b.len()).sum();
    eprintln!(
        "searched {} outputs ({bytes} bytes; {} snapshot files) for the token: found in {}",
        haystacks.len(),
        snapshot_files.len(),
        found.len()
    );
    for (name, b) in &haystacks {
        if !name.ends_with(".snap") {
            eprintln!("  {name}: {} bytes", b.len());
        }
    }
    assert!(found.is_empty(), "the token leaked into: {found:#?}");
}

/// Tokens handed to clients all start with this; none may reach anything the harness writes.
const TOKEN_PREFIX: &str = "mcp-harness-secret-";

#[test]
fn the_bearer_token_reaches_no_transcript_snapshot_or_report() {
    let case = support::case("http/bearer-token-sent");
    let leaky = format!(
        "echo \"token: $MCP_HARNESS_BEARER_TOKEN\" >&2; echo \"$MCP_HARNESS_BEARER_TOKEN\"; {}",
        support::driver_cmd("")
    );
    for client in [support::driver_cmd(""), leaky] {
        let eval = support::evaluate_on(&case, Transport::Https, &client);
        let transcript = format!("{:?}", eval.run.records);
        let snapshot = snapshot::render(&eval.run);
        let report = verdict::render_failure(eval.grade, &eval.checks, &eval.run, true);
        let checks = format!("{:?}", eval.checks);
        for (what, text) in [
            ("transcript", &transcript),
            ("snapshot", &snapshot),
            ("report", &report),
            ("checks", &checks),
        ] {
            assert!(
                !text.contains(TOKEN_PREFIX),
                "the token reached the {what} with client {client}:\n{text}"
            );
        }
        assert!(transcript.contains("Bearer [valid]"), "{transcript}");
    }
}
