//! Tried for real: a real MCP server from the npm registry (`@modelcontextprotocol/server-
//! everything`, pinned), recorded behind the stdio recorder while the reference client
//! talks to it through the driver contract; the recording checked, turned into a case, and
//! the case run: the reference client passes it, broken clients fail it. Loopback only: the
//! registry is the one thing reached, once, to install the server into the target directory
//! (kept there for later runs).

#[path = "support/outside.rs"]
mod outside;
use outside::{BIN, harness, text};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// The server, pinned: a version whose stdio transport runs on Node 20.
const PACKAGE: &str = "@modelcontextprotocol/server-everything@2025.11.25";

/// The server's entry point, installed from npm into the target directory on first use.
fn install_server() -> PathBuf {
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-server/npm-2025.11.25");
    let entry = prefix.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if entry.is_file() {
        return entry;
    }
    std::fs::create_dir_all(&prefix).expect("a directory in the target directory");
    let out = Command::new("npm")
        .args(["install", "--prefix"])
        .arg(&prefix)
        .args(["--no-audit", "--no-fund", "--no-save", PACKAGE])
        .output()
        .unwrap_or_else(|e| panic!("this test needs npm (and node) to install {PACKAGE}: {e}"));
    assert!(
        out.status.success() && entry.is_file(),
        "could not install {PACKAGE} from the npm registry (is the registry reachable?):\n{}",
        text(&out)
    );
    entry
}

/// The reference client's session with the server, recorded to `recording`; returns the
/// driver's outcome lines.
fn record_session(here: &Path, server: &Path, recording: &Path) -> Vec<Value> {
    let server_cmd = [
        "node".to_owned(),
        server.display().to_string(),
        "stdio".into(),
    ];
    let mut argv: Vec<String> = vec![BIN.into(), "record".into(), "--out".into()];
    argv.push(recording.display().to_string());
    // The same case `case-from` makes below, written by the recorder when the session ends.
    let to_case = here.join("to-case");
    argv.extend([
        "--to-case".into(),
        "real/everything".into(),
        "--case-dir".into(),
        to_case.display().to_string(),
    ]);
    argv.push("--".into());
    argv.extend(server_cmd);
    let plan = json!([
        {"op": "connect"},
        {"op": "list_tools"},
        {"op": "call_tool", "name": "add", "arguments": {"a": 1, "b": 2}},
        {"op": "call_tool", "name": "echo", "arguments": {"message": "hi"}},
        // Progress notifications come ahead of the answer, under the client's token.
        {"op": "call_tool", "name": "longRunningOperation", "arguments": {"duration": 1, "steps": 2}, "progress": true},
        {"op": "list_resources"},
        {"op": "read_resource", "uri": "test://static/resource/2"},
        {"op": "list_prompts"},
        {"op": "get_prompt", "name": "simple_prompt"},
        {"op": "complete", "ref": {"type": "ref/prompt", "name": "complex_prompt"}, "argument": {"name": "style", "value": "c"}},
        {"op": "set_logging_level", "level": "debug"},
        {"op": "ping"},
        {"op": "close"}
    ]);
    let out = Command::new(BIN)
        .current_dir(here)
        .arg("driver")
        .env("MCP_HARNESS_CONTRACT", "1")
        .env("MCP_HARNESS_SCENARIO", "real/everything")
        .env("MCP_HARNESS_TRANSPORT", "stdio")
        .env("MCP_HARNESS_TIMEOUT_MS", "20000")
        .env("MCP_HARNESS_PROTOCOL_VERSION", "2025-06-18")
        .env("MCP_HARNESS_SERVER_COMMAND", json!(argv).to_string())
        .env("MCP_HARNESS_PLAN", plan.to_string())
        .output()
        .expect("the driver starts");
    assert!(out.status.success(), "the driver: {}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("an outcome line"))
        .collect()
}

#[test]
fn a_real_servers_session_is_recorded_checked_and_replayed_as_a_case() {
    let server = install_server();
    let here = tempfile::Builder::new()
        .prefix("mcp-harness-real-server-")
        .tempdir()
        .expect("a temporary directory");
    let here = here.path();
    let recording = here.join("everything.jsonl");
    let lines = record_session(here, &server, &recording);
    assert_eq!(lines.len(), 13, "{lines:?}");
    for line in &lines {
        assert!(
            line.get("ok").is_some(),
            "the real server answers every step: {line}"
        );
    }
    let resources = lines[5]["ok"]["resources"].as_array().map_or(0, Vec::len);
    assert!(
        resources > 10,
        "the server lists its resources over several pages: {resources}"
    );

    // The reference client's recorded session shows no failure at must, should or profile.
    let out = harness(here, &["check", &recording.to_string_lossy()]);
    assert!(out.status.success(), "check: {}", text(&out));

    let cases = here.join("cases");
    let out = harness(
        here,
        &[
            "case-from",
            &recording.to_string_lossy(),
            "--name",
            "real/everything",
            "--out",
            &cases.to_string_lossy(),
        ],
    );
    assert!(out.status.success(), "case-from: {}", text(&out));
    let case: Value = serde_json::from_str(
        &std::fs::read_to_string(cases.join("real/everything.json")).expect("the case"),
    )
    .expect("JSON");
    assert_eq!(case["plan"].as_array().map(Vec::len), Some(13), "{case}");
    assert_eq!(
        std::fs::read_to_string(here.join("to-case/real/everything.json"))
            .expect("record --to-case wrote the case"),
        std::fs::read_to_string(cases.join("real/everything.json")).expect("the case"),
        "record --to-case and case-from make the same case"
    );
    // The long call's progress goes out again under the token the client under test sends.
    let sends: Vec<&Value> = case["server"]["handlers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["params"]["name"] == "longRunningOperation")
        .flat_map(|h| h["sends"].as_array().into_iter().flatten())
        .filter(|s| s["message"]["method"] == "notifications/progress")
        .collect();
    assert!(!sends.is_empty(), "{case}");
    for send in sends {
        assert_eq!(
            send["message"]["params"]["progressToken"],
            json!({"$request": "/params/_meta/progressToken"}),
            "{send}"
        );
    }

    let run = |client: &str| {
        harness(
            here,
            &[
                "run",
                "--only-cases",
                &cases.to_string_lossy(),
                "--client",
                client,
            ],
        )
    };
    let out = run(&format!("'{BIN}' driver"));
    assert!(out.status.success(), "the reference client: {}", text(&out));
    assert!(
        text(&out).contains("2 pass, 0 non-strict, 0 unimplemented, 0 fail"),
        "{}",
        text(&out)
    );

    for (defect, check) in [
        (
            "first-page-only",
            "pages of resources/list, each nextCursor in turn",
        ),
        (
            "drop-arguments",
            "the client sends tools/call of \"add\" with the recorded arguments",
        ),
    ] {
        let out = run(&format!("'{BIN}' driver --defect {defect}"));
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(101), "{defect}: {shown}");
        assert!(shown.contains("0 pass"), "{defect}: {shown}");
        assert!(shown.contains(check), "{defect}: {shown}");
    }
}
