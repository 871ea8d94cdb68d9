//! The HTTP fake's hostile-server faults, seen from a client: redirects to the reserved
//! `.invalid` name, events and storms ahead of a response, padding, invalid UTF-8, a body
//! dripped a byte at a time or cut in half and held open, and an answered notification.

mod support;

use std::time::{Duration, Instant};

use mcp_harness_scenarios::transcript::Event;
use serde_json::{Value, json};
use support::sse_messages;
use support::trial::{Trial, rpc, statuses};

fn server(handlers: Value) -> Value {
    json!({"http": {"sessions": false}, "handlers": handlers})
}

#[tokio::test]
async fn redirects_point_at_the_invalid_name_on_the_fake_port() {
    let handlers = json!([
        {"method": "tools/call", "reply": {"result": {}}, "http": {"redirect": {"status": 307, "to": "plain_http"}}},
        {"method": "tools/list", "reply": {"result": {}}, "http": {"redirect": {"status": 301, "to": "other_host"}}},
    ]);
    let trial = Trial::start("redirect", server(handlers), None).await;
    let port = trial.fake.addr.port();
    let moved = trial.post(&[], &rpc(1, "tools/call")).await;
    assert_eq!(moved.status, 307);
    let location = format!("http://mcp-harness.invalid:{port}/mcp");
    assert_eq!(moved.header("location"), Some(location.as_str()));
    let other = trial.post(&[], &rpc(2, "tools/list")).await;
    assert_eq!(other.status, 301);
    let location = format!("https://mcp-harness.invalid:{port}/mcp");
    assert_eq!(other.header("location"), Some(location.as_str()));
    let events = trial.finish().await;
    let codes: Vec<u16> = statuses(&events).into_iter().map(|s| s.1).collect();
    assert_eq!(codes, [307, 301]);
    assert!(!events.iter().any(|e| matches!(e, Event::Sent { .. })));
}

#[tokio::test]
async fn items_ahead_become_events_and_padding_and_bad_bytes_reach_the_body() {
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": 1}});
    let handlers = json!([
        {"method": "tools/call", "reply": {"result": {"content": []}},
         "faults": {"before": [{"message": note, "repeat": 4}], "padding_bytes": 1000}},
        {"method": "tools/list", "reply": {"result": {"t": "a\u{fffd}"}}, "faults": {"invalid_utf8": true}},
    ]);
    let trial = Trial::start("ahead", server(handlers), None).await;
    let storm = trial.post(&[], &rpc(1, "tools/call")).await;
    assert_eq!(storm.header("content-type"), Some("text/event-stream"));
    let messages = sse_messages(&storm.text());
    assert_eq!(messages.len(), 5);
    assert!(messages[..4].iter().all(|m| *m == note));
    let data = messages[4]["result"]["content"][0]["data"]
        .as_str()
        .map(str::len);
    assert_eq!(data, Some(1000));
    let bad = trial.post(&[], &rpc(2, "tools/list")).await;
    assert!(std::str::from_utf8(&bad.body).is_err());
    assert!(bad.body.contains(&0xff));
    let events = trial.finish().await;
    let notes = events
        .iter()
        .filter(|e| matches!(e, Event::SentRaw { line } if line.contains("3 more times")))
        .count();
    assert_eq!(notes, 1, "{events:?}");
}

#[tokio::test]
async fn drips_and_stalls_and_answered_notifications() {
    let handlers = json!([
        {"method": "notifications/initialized", "reply": {"result": {}}},
        {"method": "tools/call", "reply": {"result": {}}, "faults": {"drip_ms": 2}},
        {"method": "tools/list", "reply": {"result": {"tools": []}}, "faults": {"truncate": "stall"}},
    ]);
    let trial = Trial::start("drip", server(handlers), None).await;
    let started = Instant::now();
    let dripped = trial.post(&[], &rpc(1, "tools/call")).await;
    let whole: Value = serde_json::from_slice(&dripped.body).expect("the whole body");
    assert_eq!(whole["id"], 1);
    assert!(dripped.reads > 10, "{} reads", dripped.reads);
    assert!(started.elapsed() >= Duration::from_millis(2 * 30));

    let stalled = {
        let addr = trial.fake.addr;
        let client = trial.client.clone();
        let mut stream = support::connect(addr, client.as_ref())
            .await
            .expect("connect");
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", support::trial::ACCEPT_BOTH),
        ];
        let body = rpc(2, "tools/list");
        support::request(
            &mut stream,
            "POST",
            "/mcp",
            &headers,
            &body,
            Duration::from_millis(300),
        )
        .await
    };
    assert_eq!(stalled.status, 200);
    assert!(!stalled.closed, "held open");
    let promised: usize = stalled
        .header("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap();
    assert_eq!(stalled.body.len(), promised.div_ceil(2));

    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let answered = trial.post(&[], &note).await;
    assert_eq!(answered.status, 200);
    let body: Value = serde_json::from_slice(&answered.body).expect("JSON");
    assert_eq!(body, json!({"jsonrpc": "2.0", "id": null, "result": {}}));
    trial.finish().await;
}
