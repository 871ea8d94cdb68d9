//! The HTTP fake's scripted faults, seen from a client: answers that never come, crashes
//! that drop the connection, bodies cut in half, wrong statuses and content types, held-open
//! streams, and a stop that ends all of them at once.

mod support;

use std::time::{Duration, Instant};

use mcp_harness_scenarios::transcript::Event;
use serde_json::{Value, json};
use support::trial::{ACCEPT_BOTH, Trial, rpc, statuses};
use support::{Reply, connect, request, sse_messages};

/// How long a test waits to be sure an answer is not coming.
const QUIET: Duration = Duration::from_millis(300);

fn post_headers() -> [(&'static str, &'static str); 2] {
    [
        ("Content-Type", "application/json"),
        ("Accept", ACCEPT_BOTH),
    ]
}

/// Starts a POST and reads its answer for at most `limit`, in the background.
fn post_in_background(
    trial: &Trial,
    body: String,
    limit: Duration,
) -> tokio::task::JoinHandle<Reply> {
    let addr = trial.fake.addr;
    let client = trial.client.clone();
    tokio::spawn(async move {
        let mut stream = connect(addr, client.as_ref()).await.expect("connect");
        request(&mut stream, "POST", "/mcp", &post_headers(), &body, limit).await
    })
}

fn server(handlers: Value) -> Value {
    json!({"http": {"sessions": false}, "handlers": handlers})
}

#[tokio::test]
async fn a_crash_drops_the_connection_without_an_answer() {
    let trial = Trial::start(
        "exit",
        server(json!([{"method": "tools/call", "reply": {"exit": 3}}])),
        None,
    )
    .await;
    let started = Instant::now();
    let reply = trial.post(&[], &rpc(1, "tools/call")).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(reply.status, 0);
    assert!(reply.body.is_empty() && reply.closed, "{reply:?}");
    let events = trial.finish().await;
    assert_eq!(statuses(&events), [("POST".to_owned(), 0)]);
    assert!(!events.iter().any(|e| matches!(e, Event::Sent { .. })));
}

#[tokio::test]
async fn cut_bodies_stop_halfway_and_close() {
    let handlers = json!([
        {"method": "tools/list", "reply": {"result": {"tools": []}}, "http": {"cut": true}},
        {"method": "tools/call", "reply": {"result": {"content": []}},
         "http": {"cut": true, "format": "sse", "split": true}},
    ]);
    let trial = Trial::start("cut", server(handlers), None).await;
    let json_cut = trial.post(&[], &rpc(1, "tools/list")).await;
    assert_eq!(json_cut.status, 200);
    assert!(json_cut.closed);
    let promised: usize = json_cut
        .header("content-length")
        .and_then(|l| l.parse().ok())
        .expect("a content length");
    assert_eq!(json_cut.body.len(), promised.div_ceil(2), "{json_cut:?}");
    let sse_cut = trial.post(&[], &rpc(2, "tools/call")).await;
    assert_eq!(sse_cut.header("content-type"), Some("text/event-stream"));
    assert!(sse_cut.closed && !sse_cut.body.is_empty());
    assert!(!sse_cut.text().ends_with("\n\n"), "{:?}", sse_cut.text());
    trial.finish().await;
}

#[tokio::test]
async fn scripted_status_content_type_raw_lines_and_delay() {
    let handlers = json!([
        {"method": "tools/list", "reply": {"result": {}}, "http": {"status": 503}},
        {"method": "ping", "reply": {"result": {}}, "http": {"content_type": "text/html"}},
        {"method": "tools/call", "reply": {"raw_line": "{\"jsonrpc\":"}, "http": {"format": "sse"}},
        {"method": "resources/list", "delay_ms": 150, "reply": {"error": {"code": -1, "message": "m"}}},
    ]);
    let trial = Trial::start("status", server(handlers), None).await;
    let failed = trial.post(&[], &rpc(1, "tools/list")).await;
    assert_eq!(failed.status, 503);
    assert!(
        failed
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/plain"))
    );
    let html = trial.post(&[], &rpc(2, "ping")).await;
    assert_eq!(
        (html.status, html.header("content-type")),
        (200, Some("text/html"))
    );
    let raw = trial.post(&[], &rpc(3, "tools/call")).await;
    assert_eq!(raw.text(), "event: message\ndata: {\"jsonrpc\":\n\n");
    let started = Instant::now();
    let late = trial.post(&[], &rpc(4, "resources/list")).await;
    assert!(started.elapsed() >= Duration::from_millis(150));
    let late: Value = serde_json::from_slice(&late.body).expect("JSON");
    assert_eq!(late["error"]["code"], -1);
    let events = trial.finish().await;
    let codes: Vec<u16> = statuses(&events).into_iter().map(|s| s.1).collect();
    assert_eq!(codes, [503, 200, 200, 200]);
    assert!(events.contains(&Event::SentRaw {
        line: "{\"jsonrpc\":".into()
    }));
}

#[tokio::test]
async fn hangs_and_streams_stay_open_until_stop() {
    let handlers = json!([
        {"method": "tools/call", "reply": "hang"},
        {"method": "prompts/list", "reply": "hang", "http": {"format": "sse"}},
        {"method": "tools/list", "reply": "hang", "http": {"format": "sse", "events_before": [
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
        ]}},
    ]);
    let mut script = server(handlers);
    script["http"] = json!({"sessions": false, "get": "stream"});
    let trial = Trial::start("hang", script, None).await;
    let json_hang = post_in_background(&trial, rpc(1, "tools/call"), Duration::from_secs(10));
    let sse_hang = post_in_background(&trial, rpc(2, "tools/list"), Duration::from_secs(10));
    let quiet_sse = post_in_background(&trial, rpc(3, "prompts/list"), QUIET);
    let mut stream = connect(trial.fake.addr, trial.client.as_ref())
        .await
        .expect("connect");
    let headers = [("Accept", "text/event-stream")];
    let get = request(&mut stream, "GET", "/mcp", &headers, "", QUIET).await;
    assert_eq!(get.status, 200);
    assert_eq!(get.header("content-type"), Some("text/event-stream"));
    assert!(!get.closed);
    assert!(get.text().starts_with(':'), "{:?}", get.text());

    // An SSE answer that hangs before its first event has still sent its headers.
    let quiet_sse = quiet_sse.await.expect("join");
    assert_eq!(
        (quiet_sse.status, quiet_sse.closed),
        (200, false),
        "{quiet_sse:?}"
    );

    let started = Instant::now();
    let events = trial.finish().await;
    let json_hang = json_hang.await.expect("join");
    let sse_hang = sse_hang.await.expect("join");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(json_hang.status, 0, "no answer at all: {json_hang:?}");
    assert!(json_hang.closed);
    assert_eq!(sse_hang.status, 200);
    assert!(sse_hang.closed);
    let progress = sse_messages(&sse_hang.text());
    assert_eq!(progress.len(), 1);
    assert_eq!(progress[0]["method"], "notifications/progress");
    let mut codes: Vec<u16> = statuses(&events).into_iter().map(|s| s.1).collect();
    codes.sort_unstable();
    assert_eq!(codes, [200, 200, 200, 200]);
}
