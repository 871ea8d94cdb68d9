//! The `mcp-harness-driver` binary through the driver contract: outcome lines, exit codes, and
//! that every deliberate defect really changes what a check would see.

mod common;

use std::process::Command;

use common::{SERVER, process_exists, read_pidfile, temp_path};
use serde_json::{Value, json};

/// A driver run: the outcome lines and the stderr text.
struct Run {
    lines: Vec<Value>,
    stderr: String,
}

fn driver(defects: &[&str], server: &[&str], plan: Value, env: &[(&str, &str)]) -> Run {
    let mut argv = vec!["python3", "-c", SERVER];
    argv.extend_from_slice(server);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-harness-driver"));
    for d in defects {
        cmd.args(["--defect", d]);
    }
    cmd.env("MCP_HARNESS_CONTRACT", "1")
        .env("MCP_HARNESS_TRANSPORT", "stdio")
        .env("MCP_HARNESS_SERVER_COMMAND", json!(argv).to_string())
        .env("MCP_HARNESS_PLAN", plan.to_string())
        // Also the bound on `initialize`, which waits for a Python stub (behind a pyenv shim)
        // to start: 2 s was not enough beside other builds and suites.
        .env("MCP_HARNESS_TIMEOUT_MS", "5000")
        .env("MCP_HARNESS_PROTOCOL_VERSION", "2025-03-26")
        .env("MCP_HARNESS_SHUTDOWN_GRACE_MS", "100");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("driver runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "driver failed: {:?}\n{stderr}",
        out.status
    );
    let lines = String::from_utf8(out.stdout)
        .expect("stdout is UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect();
    Run { lines, stderr }
}

fn call(name: &str) -> Value {
    json!({"op": "call_tool", "name": name, "arguments": {}})
}

fn kind(line: &Value) -> &str {
    line["error"]["kind"].as_str().unwrap_or("ok")
}

/// The messages the server had received when `seen` was called at `step`.
fn wire(run: &Run, step: usize) -> Vec<Value> {
    run.lines[step]["ok"]["structured"]["messages"]
        .as_array()
        .cloned()
        .expect("a seen result")
}

fn methods(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect()
}

#[test]
fn a_plan_prints_one_line_per_step() {
    let plan = json!([
        {"op":"list_tools"},
        {"op":"connect"},
        {"op":"list_tools"},
        {"op":"call_tool","name":"echo","arguments":{"k":"v"}},
        call("text"),
        call("fail"),
        call("rpcerr"),
        {"op":"call_tool","name":"slow","arguments":{},"cancel_after_ms":50},
        {"op":"subscribe"},
        {"op":"close"},
        call("echo"),
    ]);
    let run = driver(&[], &["normal"], plan, &[]);
    let l = &run.lines;
    let kinds: Vec<&str> = l.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "transport_closed",
            "ok",
            "ok",
            "ok",
            "ok",
            "tool_error",
            "protocol_error",
            "cancelled",
            "unsupported_op",
            "ok",
            "transport_closed"
        ]
    );
    for (i, line) in l.iter().enumerate() {
        assert_eq!(line["step"], i);
    }
    assert_eq!(l[1]["ok"]["protocolVersion"], "2025-03-26");
    assert_eq!(l[1]["ok"]["serverInfo"]["name"], "py-normal");
    assert_eq!(l[2]["ok"]["tools"][0]["x-extra"], 1);
    assert_eq!(l[3]["ok"]["structured"], json!({"k":"v"}));
    assert!(l[3]["ok"]["content"].is_array(), "{}", l[3]);
    assert_eq!(l[4]["ok"]["text"], json!(["one", "two"]));
    assert_eq!(
        l[4]["ok"]["content"],
        json!([{"type":"text","text":"one"},
            {"type":"image","mimeType":"image/png","bytes":1,
             "sha256":"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"},
            {"type":"text","text":"two"}])
    );
    assert_eq!(l[6]["error"]["code"], -32602);
    assert!(l[5]["error"].get("code").is_none());
    assert_eq!(l[8]["op"], "subscribe");
    assert_eq!(l[9], json!({"step":9,"op":"close","ok":{}}));
}

#[test]
fn unusable_configuration_exits_2() {
    let bin = env!("CARGO_BIN_EXE_mcp-harness-driver");
    let out = Command::new(bin).env_clear().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MCP_HARNESS_CONTRACT"));
    assert!(out.stdout.is_empty());
    let out = Command::new(bin)
        .args(["--defect", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-sigkill"));
}

#[test]
fn defects_in_the_handshake() {
    let seen = json!([{"op":"connect"}, call("seen"), call("seen")]);
    let right = driver(&[], &["normal"], seen.clone(), &[]);
    assert_eq!(
        methods(&wire(&right, 1))[..2],
        ["initialize", "notifications/initialized"]
    );
    assert!(wire(&right, 1)[1].get("id").is_none());

    let skip = driver(&["skip-initialized"], &["normal"], seen.clone(), &[]);
    assert!(!methods(&wire(&skip, 2)).contains(&"notifications/initialized"));
    let late = driver(&["late-initialized"], &["normal"], seen.clone(), &[]);
    assert_eq!(
        methods(&wire(&late, 2))[1..3],
        ["tools/call", "notifications/initialized"]
    );
    let ids = driver(&["id-on-notifications"], &["normal"], seen.clone(), &[]);
    assert!(wire(&ids, 1)[1].get("id").is_some());
    let reuse = driver(&["reuse-ids"], &["normal"], seen, &[]);
    assert!(
        wire(&reuse, 2)
            .iter()
            .filter_map(|m| m.get("id"))
            .all(|id| id == 1)
    );

    let connect = json!([{"op":"connect"}]);
    let bad = driver(&[], &["badversion"], connect.clone(), &[]);
    assert_eq!(kind(&bad.lines[0]), "unsupported_version");
    let any = driver(
        &["accept-any-version"],
        &["badversion"],
        connect.clone(),
        &[],
    );
    assert_eq!(any.lines[0]["ok"]["protocolVersion"], "1999-01-01");
    let refused = driver(&[], &["refuse"], connect.clone(), &[]);
    assert_eq!(refused.lines[0]["error"]["code"], -32602);
    let ignored = driver(&["ignore-initialize-error"], &["refuse"], connect, &[]);
    assert_eq!(ignored.lines[0]["ok"]["protocolVersion"], Value::Null);
}

#[test]
fn defects_in_listing() {
    let list = json!([{"op":"connect"}, {"op":"list_tools"}]);
    let count = |run: &Run| run.lines[1]["ok"]["tools"].as_array().map(Vec::len);
    assert_eq!(
        kind(&driver(&[], &["loop"], list.clone(), &[]).lines[1]),
        "repeated_cursor"
    );
    assert_eq!(
        count(&driver(&["no-cursor-check"], &["loop"], list.clone(), &[])),
        Some(50)
    );
    assert_eq!(
        kind(&driver(&[], &["dupe"], list.clone(), &[]).lines[1]),
        "duplicate_tool_name"
    );
    assert_eq!(
        count(&driver(
            &["allow-duplicate-names"],
            &["dupe"],
            list.clone(),
            &[]
        )),
        Some(2)
    );
    assert_eq!(
        count(&driver(
            &["first-page-only"],
            &["normal"],
            list.clone(),
            &[]
        )),
        Some(1)
    );
    let mangled = driver(&["mangle-cursor"], &["normal"], list, &[]);
    assert_eq!(kind(&mangled.lines[1]), "protocol_error");
}

#[test]
fn defects_in_calls() {
    let plan = json!([{"op":"connect"}, call("echo"), call("fail"), call("rpcerr"), call("echo")]);
    let l = driver(&["text-only"], &["normal"], plan.clone(), &[]).lines;
    assert_eq!(l[1]["ok"]["text"], json!(["{}"]));
    let l = driver(&["ignore-is-error"], &["normal"], plan.clone(), &[]).lines;
    assert_eq!(l[2]["ok"]["structured"], json!({"x":1}));
    let l = driver(&["rpc-error-as-empty"], &["normal"], plan.clone(), &[]).lines;
    assert_eq!(l[3]["ok"], json!({"text":[],"content":[]}));
    let l = driver(&["close-on-error"], &["normal"], plan, &[]).lines;
    assert_eq!(kind(&l[3]), "transport_closed");
    assert_eq!(kind(&l[4]), "transport_closed");
}

/// A timeout long enough for a loaded machine to start Python and answer `initialize` (1 s
/// was not, at load 10 on two cores).
const TIMEOUT_MS: &str = "3000";

/// A call the timeout ends (its cancel comes well after), then one the caller cancels.
fn slow_plan() -> Value {
    let slow =
        |ms: u64| json!({"op":"call_tool","name":"slow","arguments":{},"cancel_after_ms":ms});
    json!([{"op":"connect"}, slow(8000), slow(50), call("seen")])
}

fn cancel_notes(run: &Run) -> usize {
    let wire = wire(run, 3);
    methods(&wire)
        .iter()
        .filter(|m| **m == "notifications/cancelled")
        .count()
}

#[test]
fn timeout_and_cancel_are_announced() {
    let env = [("MCP_HARNESS_TIMEOUT_MS", TIMEOUT_MS)];
    let right = driver(&[], &["normal"], slow_plan(), &env);
    assert_eq!(kind(&right.lines[1]), "timeout");
    assert_eq!(kind(&right.lines[2]), "cancelled");
    assert_eq!(cancel_notes(&right), 2);
    let no_note = driver(&["no-cancel-notification"], &["normal"], slow_plan(), &env);
    assert_eq!(kind(&no_note.lines[2]), "cancelled");
    assert_eq!(cancel_notes(&no_note), 0);
}

#[test]
fn defects_in_timeouts_and_cancellation() {
    let env = [("MCP_HARNESS_TIMEOUT_MS", TIMEOUT_MS)];
    let no_timeout = driver(&["no-timeout"], &["normal"], slow_plan(), &env);
    assert_eq!(kind(&no_timeout.lines[1]), "cancelled");
    let ignore = driver(&["ignore-cancel"], &["normal"], slow_plan(), &env);
    assert_eq!(kind(&ignore.lines[2]), "timeout");
}

/// Runs a one-connect plan against a server that writes a pid file; returns (pid, saw EOF).
fn shutdown_with(defects: &[&str], mode: &str) -> (i32, bool) {
    let pidfile = temp_path("driver-pid");
    let path = pidfile.to_string_lossy().into_owned();
    driver(
        defects,
        &[mode, &path],
        json!([{"op":"connect"}, {"op":"close"}]),
        &[],
    );
    read_pidfile(&pidfile)
}

fn kill_leftover(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
}

#[test]
fn defects_in_shutdown() {
    let (pid, eof) = shutdown_with(&[], "stubborn");
    assert!(eof && !process_exists(pid));
    let (pid, eof) = shutdown_with(&["kill-first"], "normal");
    assert!(
        !eof && !process_exists(pid),
        "kill-first still closed stdin first"
    );
    for defect in ["no-sigterm", "no-sigkill", "leak-on-handshake-failure"] {
        let mode = if defect.starts_with("leak") {
            "refuse-stubborn"
        } else {
            "stubborn"
        };
        let (pid, _) = shutdown_with(&[defect], mode);
        let left = process_exists(pid);
        kill_leftover(pid);
        assert!(left, "{defect} did not leave the server behind");
    }
    let (pid, _) = shutdown_with(&[], "refuse-stubborn");
    assert!(!process_exists(pid));
}

#[test]
fn a_chatty_server_does_not_leak_onto_stdout() {
    let run = driver(
        &[],
        &["chatty"],
        json!([{"op":"connect"}, call("echo")]),
        &[],
    );
    assert_eq!(run.lines.len(), 2);
    assert!(run.stderr.contains("[server] xxxx"));
    assert!(run.stderr.contains("not JSON"));
}
