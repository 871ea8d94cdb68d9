//! `mcp-harness check`, as a user runs the installed binary outside the checkout: a real
//! recording of the reference client passes on both transports, in either format; a
//! hand-made recording breaking one rule fails naming it (so each family can fail); a
//! recording that exercises nothing is "not observed" throughout, exit 0 and no pass; bad
//! input exits 2 naming the file and line.

#[path = "support/outside.rs"]
mod outside;
use outside::{harness, text};

mod support;

use std::path::Path;

use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::transcript::{Event, Record};
use serde_json::{Value, json};

fn tempdir() -> tempfile::TempDir {
    outside::tempdir_named("mcp-harness-check-")
}

fn write_lines(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).expect("written");
}

/// `check --json` on `file` in `dir`: the exit code and each requirement's verdict.
fn verdicts(dir: &Path, file: &str, extra: &[&str]) -> (i32, Vec<(String, String)>, String) {
    let mut args = vec!["check", file, "--json"];
    args.extend(extra);
    let out = harness(dir, &args);
    let shown: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("--json prints JSON ({e}): {}", text(&out)));
    let rows = shown[0]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["requirement_id"].as_str().unwrap_or_default().to_owned(),
                c["verdict"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    (out.status.code().unwrap_or(-1), rows, text(&out))
}

fn verdict_of<'a>(rows: &'a [(String, String)], id: &str) -> &'a str {
    rows.iter()
        .find(|(i, _)| i == id)
        .map_or("absent", |(_, v)| v.as_str())
}

fn client(message: Value) -> Value {
    json!({"from": "client", "message": message})
}

fn server(message: Value) -> Value {
    json!({"from": "server", "message": message})
}

/// A 2025-11-25 handshake, as import lines.
fn handshake() -> Vec<Value> {
    vec![
        client(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"c","version":"1"}}}),
        ),
        server(
            json!({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25",
            "capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}),
        ),
        client(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
    ]
}

#[test]
fn a_recording_of_the_reference_client_passes_on_both_transports_in_either_format() {
    let here = tempdir();
    let case = support::case("roots/list-answered");
    for transport in [Transport::Stdio, Transport::Https] {
        let eval = support::evaluate_on(&case, transport, &support::driver_cmd(""));
        assert!(
            support::failed_checks(&eval).is_empty(),
            "{:?}",
            support::failed_checks(&eval)
        );
        let records = eval.run.records.clone().expect("a transcript");
        let name = format!("reference-{}.jsonl", transport.as_str());
        let lines: Vec<Value> = records
            .iter()
            .map(|r| serde_json::to_value(r).expect("a record"))
            .collect();
        write_lines(&here.path().join(&name), &lines);
        let (code, rows, shown) = verdicts(here.path(), &name, &[]);
        assert_eq!(code, 0, "{shown}");
        for id in ["JSON-01", "JSON-02", "JSON-05", "SCHEMA-01", "SCHEMA-02"] {
            assert_eq!(verdict_of(&rows, id), "pass", "{id}: {shown}");
        }
        let (one, http) = match transport {
            Transport::Stdio => ("STDIO-02", "absent"),
            Transport::Https => ("HTTP-01", "pass"),
        };
        assert_eq!(verdict_of(&rows, one), "pass", "{shown}");
        for id in ["HTTP-02", "PROF-ERA-2", "HTTP-06"] {
            assert_eq!(verdict_of(&rows, id), http, "{id}: {shown}");
        }
        // The case speaks 2025-03-26, before the header existed.
        let header = if http == "pass" {
            "not observed"
        } else {
            "absent"
        };
        assert_eq!(verdict_of(&rows, "HTTP-09a"), header, "{shown}");
        assert_eq!(verdict_of(&rows, "JSON-10"), "not observed", "{shown}");
        assert!(!rows.iter().any(|(_, v)| v == "fail"), "{shown}");

        // The same session as import lines: the same verdicts (HTTP requests have no import
        // form, so the import of an HTTPS session reads as stdio).
        if transport == Transport::Stdio {
            let imported: Vec<Value> = records
                .iter()
                .filter_map(|r| match &r.event {
                    Event::Received { message } => Some(client(message.clone())),
                    Event::Sent { message } => Some(server(message.clone())),
                    _ => None,
                })
                .collect();
            write_lines(&here.path().join("imported.jsonl"), &imported);
            let (code, again, shown) = verdicts(here.path(), "imported.jsonl", &[]);
            assert_eq!(code, 0, "{shown}");
            assert_eq!(again, rows, "{shown}");
        }
    }
    // The lines a person reads: grouped by verdict, with the requirement ids.
    let out = harness(here.path(), &["check", "reference-stdio.jsonl"]);
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(
        shown.contains("revision 2025-03-26 (the initialize result)"),
        "{shown}"
    );
    assert!(shown.contains("  passed: "), "{shown}");
    assert!(shown.contains("✓ SCHEMA-02 [must]"), "{shown}");
    assert!(
        shown.contains("- JSON-10 [must] initialize is never part of a JSON-RPC batch: the client sent no batch"),
        "{shown}"
    );
    assert!(!shown.contains("failed:"), "{shown}");
}

#[test]
fn each_rule_family_fails_a_recording_that_breaks_it() {
    let here = tempdir();
    let with = |extra: Vec<Value>| {
        let mut lines = handshake();
        lines.extend(extra);
        lines
    };
    let modern_meta = |trace: &str| {
        json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":{},
            "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
            "traceparent": trace})
    };
    let post = |accept: &str, path: &str| {
        json!({"pid":1,"event":"http_request","method":"POST","path":path,
            "headers":{"accept":accept,"content-type":"application/json"},"status":200})
    };
    let received = |message: Value| json!({"pid":1,"event":"received","message":message});
    let initialize = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}});
    let cases: Vec<(&str, &str, Vec<Value>)> = vec![
        (
            "reused.jsonl",
            "JSON-02",
            with(vec![
                client(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})),
                client(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})),
            ]),
        ),
        (
            "numbered-notification.jsonl",
            "JSON-05",
            with(vec![client(
                json!({"jsonrpc":"2.0","id":7,"method":"notifications/cancelled","params":{"requestId":1}}),
            )]),
        ),
        (
            "schema.jsonl",
            "SCHEMA-01",
            with(vec![client(
                json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}),
            )]),
        ),
        (
            "batched-initialize.jsonl",
            "JSON-10",
            vec![client(
                json!([{"jsonrpc":"2.0","id":0,"method":"initialize","params":{
                "protocolVersion":"2025-03-26","capabilities":{},
                "clientInfo":{"name":"c","version":"1"}}}]),
            )],
        ),
        (
            "traceparent.jsonl",
            "TRACE-01",
            vec![client(json!({"jsonrpc":"2.0","id":1,"method":"tools/list",
                "params":{"_meta": modern_meta("00-not-a-trace-01")}}))],
        ),
        (
            "accept.jsonl",
            "HTTP-02",
            vec![
                post("application/json", "/mcp"),
                received(initialize.clone()),
            ],
        ),
        // Through a proxy the endpoint keeps the server's own path.
        (
            "accept-elsewhere.jsonl",
            "HTTP-02",
            vec![
                post("application/json", "/api/v1"),
                received(initialize.clone()),
            ],
        ),
    ];
    for (file, id, lines) in cases {
        write_lines(&here.path().join(file), &lines);
        let (code, rows, shown) = verdicts(here.path(), file, &[]);
        assert_eq!(code, 1, "{file}: {shown}");
        assert_eq!(verdict_of(&rows, id), "fail", "{file}: {shown}");
        let fails: Vec<&str> = rows
            .iter()
            .filter(|(_, v)| v == "fail")
            .map(|(i, _)| i.as_str())
            .collect();
        assert_eq!(fails, [id], "{file}: only the rule broken fails: {shown}");
        let out = harness(here.path(), &["check", file]);
        assert_eq!(out.status.code(), Some(1), "{file}");
        let shown = text(&out);
        assert!(shown.contains(&format!("✗ {id} [")), "{file}: {shown}");
        assert!(
            shown.contains("Expected: ") && shown.contains("Actual:   "),
            "{shown}"
        );
    }
}

#[test]
fn what_nothing_exercised_is_not_observed_and_never_a_pass() {
    let here = tempdir();
    std::fs::write(here.path().join("empty.jsonl"), "").expect("written");
    write_lines(
        &here.path().join("server-only.jsonl"),
        &[server(
            json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}),
        )],
    );
    for file in ["empty.jsonl", "server-only.jsonl"] {
        let (code, rows, shown) = verdicts(here.path(), file, &[]);
        // A recording of nothing proves nothing: no failure, and no success either.
        assert_eq!(code, 1, "{file}: {shown}");
        assert!(shown.contains("nothing was judged in"), "{file}: {shown}");
        assert!(!rows.is_empty(), "{shown}");
        assert!(
            rows.iter().all(|(_, v)| v == "not observed"),
            "{file}: {shown}"
        );
        let out = harness(here.path(), &["check", file]);
        let shown = text(&out);
        assert!(shown.contains("0 failed, 0 passed, "), "{shown}");
        assert!(!shown.contains("passed: "), "{shown}");
    }
    // A recording with no initialize: --revision says which revision it speaks.
    write_lines(
        &here.path().join("no-handshake.jsonl"),
        &[
            client(json!({"jsonrpc":"2.0","id":1,"method":"tools/list"})),
            client(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"})),
        ],
    );
    let (_, rows, shown) = verdicts(here.path(), "no-handshake.jsonl", &[]);
    assert_eq!(verdict_of(&rows, "JSON-02"), "pass", "{shown}");
    assert!(shown.contains("assumed"), "{shown}");
    let (_, rows, shown) = verdicts(
        here.path(),
        "no-handshake.jsonl",
        &["--revision", "2026-07-28"],
    );
    assert_eq!(verdict_of(&rows, "JSON-03"), "pass", "{shown}");
    assert!(shown.contains("given with --revision"), "{shown}");

    // The report: one trial per recording, the requirements not observed listed as such.
    let out = harness(
        here.path(),
        &[
            "check",
            "empty.jsonl",
            "no-handshake.jsonl",
            "--report-dir",
            "report",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "the empty one: {}", text(&out));
    let results: Value = serde_json::from_str(
        &std::fs::read_to_string(here.path().join("report/results.json")).expect("results"),
    )
    .expect("JSON");
    let trials = results["trials"].as_array().expect("trials");
    assert_eq!(trials.len(), 2);
    let empty = trials
        .iter()
        .find(|t| t["name"] == "recording/empty.jsonl@stdio")
        .expect("the empty recording's trial");
    assert_eq!(empty["checks"].as_array().map(Vec::len), Some(0));
    assert_eq!(empty["grade"], "fail", "{empty}");
    assert!(
        empty["not_judged"]
            .as_array()
            .is_some_and(|n| n.iter().all(|r| r["verdict"] == "not observed") && n.len() > 3),
        "{empty}"
    );
    let page = std::fs::read_to_string(here.path().join("report/report.html")).expect("page");
    assert!(page.contains("recording/no-handshake.jsonl@stdio"));
}

#[test]
fn bad_input_exits_2_naming_the_file_and_line() {
    let here = tempdir();
    let record = serde_json::to_string(&Record {
        pid: 1,
        at_ms: None,
        event: Event::Started,
    })
    .expect("a record");
    let import = client(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    std::fs::write(here.path().join("bad.jsonl"), format!("{record}\n{{oops\n")).expect("w");
    std::fs::write(
        here.path().join("mixed.jsonl"),
        format!("{record}\n{import}\n"),
    )
    .expect("w");
    std::fs::write(here.path().join("good.jsonl"), format!("{record}\n")).expect("w");
    let cases = [
        (vec!["check", "bad.jsonl"], "bad.jsonl:2: not JSON"),
        (
            vec!["check", "good.jsonl", "mixed.jsonl"],
            "mixed.jsonl:2: an import line ({\"from\"",
        ),
        (
            vec!["check", "missing.jsonl"],
            "missing.jsonl: cannot read the recording",
        ),
        (
            vec!["check", "good.jsonl", "--revision", "2030-01-01"],
            "--revision 2030-01-01: not a revision the harness knows",
        ),
        (vec!["check"], "TRANSCRIPT"),
    ];
    for (args, want) in cases {
        let out = harness(here.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(want), "{args:?}: {}", text(&out));
        assert!(out.stdout.is_empty(), "nothing graded: {}", text(&out));
    }
}

#[test]
fn a_trials_own_transcript_grades_offline_as_it_did_live() {
    // `conformance --recheck` over whole runs is the full proof (README); here a few trials
    // of the reference client and of a client breaking STDIO-02, verdict for verdict.
    let doubles = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/doubles");
    let broken = format!(
        "python3 {} raw-newline",
        mcp_harness::conformance::shell_quote(&doubles.join("stdio-by-hand.py"))
    );
    let reference = support::driver_cmd("");
    let trials = [
        ("roots/list-answered", Transport::Https, &reference),
        ("era/dual/modern-server", Transport::Stdio, &reference),
        ("era/dual/modern-server", Transport::Https, &reference),
        ("http/session-id-echoed", Transport::Https, &reference),
        ("jsonrpc/newline-in-a-string", Transport::Stdio, &broken),
    ];
    let mut failed_live = 0;
    for (id, transport, client) in trials {
        let eval = support::evaluate_on(&support::case(id), transport, client);
        failed_live += eval
            .checks
            .iter()
            .filter(|c| c.always_on && !c.passed)
            .count();
        let compared = mcp_harness::offline::recheck::recheck(&eval.run, &eval.checks);
        assert!(
            matches!(compared, Ok(n) if n > 3),
            "{id}@{}: {compared:?}",
            transport.as_str()
        );
    }
    assert!(failed_live > 0, "the broken client failed a wire rule live");
}
