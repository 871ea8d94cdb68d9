//! Drives the Streamable HTTP fake over real loopback connections (TLS with the run's CA,
//! or plain HTTP) with a hand-written client, and checks its answers and its transcript.

mod support;

use mcp_harness_scenarios::model::Endpoint;
use mcp_harness_scenarios::transcript::Event;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support::trial::{ACCEPT_BOTH, INIT, Trial, rpc, statuses};
use support::{connect, sse_messages};

#[tokio::test]
async fn sessions_are_issued_required_and_checked() {
    let trial = Trial::start("sessions", json!({"http": {}}), None).await;
    let id = trial.initialize().await;
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");

    let missing = trial.post(&[], &rpc(2, "tools/list")).await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.header("content-type"), Some("application/json"));
    let unknown = trial
        .post(&[("Mcp-Session-Id", "0123")], &rpc(3, "tools/list"))
        .await;
    assert_eq!(unknown.status, 404);

    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let accepted = trial.post(&[("mcp-session-id", &id)], &note).await;
    assert_eq!(accepted.status, 202);
    assert!(accepted.body.is_empty());
    assert_eq!(accepted.header("content-type"), None);

    let listed = trial
        .post(
            &[
                ("Mcp-Session-Id", &id),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            &rpc(4, "tools/list"),
        )
        .await;
    assert_eq!(listed.status, 200);
    let answer: Value = serde_json::from_slice(&listed.body).expect("JSON body");
    assert_eq!(answer["id"], 4);
    // No handler lists tools and none calls one: the built-in listing is empty.
    assert_eq!(answer["result"]["tools"], serde_json::json!([]));

    let bad_version = trial
        .post(
            &[
                ("Mcp-Session-Id", &id),
                ("MCP-Protocol-Version", "1999-01-01"),
            ],
            &rpc(5, "ping"),
        )
        .await;
    assert_eq!(bad_version.status, 400);
    let elsewhere = trial
        .post(&[("Mcp-Session-Id", &id)], &rpc(6, "ping"))
        .await;
    assert_eq!(elsewhere.status, 200);
    let wrong_path = trial.send("GET", "/other", &[], "").await;
    assert_eq!(wrong_path.status, 404);

    // Connections are recorded as they open; this test is about the requests.
    let events: Vec<Event> = trial
        .finish()
        .await
        .into_iter()
        .filter(|e| *e != Event::Connected)
        .collect();
    assert_eq!(events[0], Event::Started);
    let want: Vec<(String, u16)> = [200, 400, 404, 202, 200, 400, 200]
        .iter()
        .map(|s| ("POST".to_owned(), *s))
        .chain([("GET".to_owned(), 404)])
        .collect();
    assert_eq!(statuses(&events), want);
    // Each POST is recorded as its request, then the message it carried.
    match (&events[1], &events[2]) {
        (Event::HttpRequest { path, headers, .. }, Event::Received { message }) => {
            assert_eq!(path, "/mcp");
            assert_eq!(headers["accept"], ACCEPT_BOTH);
            assert_eq!(headers["content-type"], "application/json");
            assert_eq!(message["method"], "initialize");
        }
        other => panic!("expected a request then its message, got {other:?}"),
    }
    assert!(matches!(&events[3], Event::Sent { message } if message["id"] == 1));
}

#[tokio::test]
async fn media_types_batches_and_junk_are_refused() {
    let trial = Trial::start("media", json!({"http": {"sessions": false}}), None).await;
    let json_only = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    ];
    assert_eq!(
        trial.send("POST", "/mcp", &json_only, INIT).await.status,
        406
    );
    let text = [("Content-Type", "text/plain"), ("Accept", ACCEPT_BOTH)];
    // Content-Type is not the fake's to refuse (no revision sets it): the body is judged.
    assert_eq!(trial.send("POST", "/mcp", &text, INIT).await.status, 200);
    assert_eq!(trial.post(&[], "{not json").await.status, 400);
    assert_eq!(trial.post(&[], &format!("[{INIT}]")).await.status, 400);
    assert_eq!(trial.post(&[], r#"{"hello":1}"#).await.status, 400);
    let response = r#"{"jsonrpc":"2.0","id":"s1","result":{}}"#;
    assert_eq!(trial.post(&[], response).await.status, 202);
    assert_eq!(trial.send("PUT", "/mcp", &[], "").await.status, 405);
    let events = trial.finish().await;
    assert!(events.iter().any(|e| matches!(e,
        Event::ReceivedInvalid { line, .. } if line == "{not json")));
    assert!(events.iter().any(|e| matches!(e,
        Event::Received { message } if message == &json!({"hello": 1}))));
}

#[tokio::test]
async fn answers_as_json_or_sse_with_events_before_and_split() {
    let server = json!({
        "http": {"replies": "sse", "sessions": false},
        "handlers": [
            {"method": "tools/list", "reply": {"result": {"tools": []}}, "http": {"format": "json"}},
            {"method": "tools/call", "reply": {"result": {"content": []}}, "http": {
                "events_before": [
                    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
                    {"jsonrpc": "2.0", "id": "s1", "method": "ping"}
                ],
                "split": true
            }},
        ],
    });
    let trial = Trial::start("formats", server, None).await;
    let listed = trial.post(&[], &rpc(1, "tools/list")).await;
    assert_eq!(listed.header("content-type"), Some("application/json"));
    let listed: Value = serde_json::from_slice(&listed.body).expect("JSON");
    assert_eq!(listed["result"], json!({"tools": []}));

    let pinged = trial.post(&[], &rpc(2, "ping")).await;
    assert_eq!(pinged.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        sse_messages(&pinged.text()),
        vec![json!({"jsonrpc": "2.0", "id": 2, "result": {}})]
    );

    let called = trial.post(&[], &rpc(3, "tools/call")).await;
    assert_eq!(called.status, 200);
    assert!(
        called.reads >= 3,
        "split stream came in {} reads",
        called.reads
    );
    let events = sse_messages(&called.text());
    assert_eq!(events.len(), 3, "{}", called.text());
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[1]["method"], "ping");
    assert_eq!(events[2]["id"], 3);
    // The client answers the server's ping: a response, accepted.
    let answer = r#"{"jsonrpc":"2.0","id":"s1","result":{}}"#;
    assert_eq!(trial.post(&[], answer).await.status, 202);

    let events = trial.finish().await;
    let sent: Vec<&Value> = events
        .iter()
        .filter_map(|e| match e {
            Event::Sent { message } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 5);
    assert_eq!(sent[2]["method"], "notifications/progress");
}

#[tokio::test]
async fn delete_ends_the_session_or_is_refused() {
    let trial = Trial::start("delete", json!({"http": {}}), None).await;
    let id = trial.initialize().await;
    let deleted = trial
        .send("DELETE", "/mcp", &[("Mcp-Session-Id", &id)], "")
        .await;
    assert_eq!(deleted.status, 200);
    let after = trial
        .post(&[("Mcp-Session-Id", &id)], &rpc(2, "ping"))
        .await;
    assert_eq!(after.status, 404);
    assert_eq!(
        trial
            .send("GET", "/mcp", &[("Accept", "text/event-stream")], "")
            .await
            .status,
        405
    );
    trial.finish().await;

    let trial = Trial::start(
        "no-delete",
        json!({"http": {"delete": "not_allowed"}}),
        None,
    )
    .await;
    let id = trial.initialize().await;
    let refused = trial
        .send("DELETE", "/mcp", &[("Mcp-Session-Id", &id)], "")
        .await;
    assert_eq!(refused.status, 405);
    assert!(
        refused
            .header("allow")
            .is_some_and(|a| !a.contains("DELETE"))
    );
    trial.finish().await;
}

#[tokio::test]
async fn sessions_expire_after_the_scripted_count() {
    let trial = Trial::start("expire", json!({"http": {"expire_session_after": 3}}), None).await;
    let id = trial.initialize().await;
    let session = [("Mcp-Session-Id", id.as_str())];
    // The initialize counts as the session's first request.
    assert_eq!(trial.post(&session, &rpc(2, "ping")).await.status, 200);
    assert_eq!(trial.post(&session, &rpc(3, "ping")).await.status, 200);
    assert_eq!(trial.post(&session, &rpc(4, "ping")).await.status, 404);
    // A new initialize starts a new session.
    let again = trial.initialize().await;
    assert_ne!(again, id);
    assert_eq!(
        trial
            .post(&[("Mcp-Session-Id", &again)], &rpc(5, "ping"))
            .await
            .status,
        200
    );
    trial.finish().await;
}

#[tokio::test]
async fn a_rule_with_times_counts_across_sessions_then_gives_way() {
    let trial = Trial::start(
        "times",
        json!({"handlers": [
            {"method": "tools/list", "params": {"cursor": "A"}, "times": 3,
             "reply": {"result": {"tools": [], "nextCursor": "A"}}},
            {"method": "tools/list", "params": {"cursor": "A"}, "reply": {"result": {"tools": []}}},
        ]}),
        None,
    )
    .await;
    let mut session = trial.initialize().await;
    for id in 1..=5 {
        if id == 3 {
            // A new session does not start the count again: it is the fake's.
            session = trial.initialize().await;
        }
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"cursor": "A"}});
        let listed = trial
            .post(&[("Mcp-Session-Id", &session)], &body.to_string())
            .await;
        assert_eq!(listed.status, 200, "{listed:?}");
        let answer: Value = serde_json::from_slice(&listed.body).expect("JSON body");
        assert_eq!(answer["id"], json!(id));
        assert_eq!(
            answer["result"].get("nextCursor").is_some(),
            id <= 3,
            "{answer}"
        );
    }
    trial.finish().await;
}

#[tokio::test]
async fn bearer_token_is_required_and_never_recorded() {
    const TOKEN: &str = "tok-7f3a9c";
    let trial = Trial::start("bearer", json!({"http": {"sessions": false}}), Some(TOKEN)).await;
    let refused = trial.post(&[], INIT).await;
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    let wrong = trial.post(&[("Authorization", "Bearer nope")], INIT).await;
    assert_eq!(wrong.status, 401);
    let auth = format!("Bearer {TOKEN}");
    let ok = trial.post(&[("Authorization", &auth)], INIT).await;
    assert_eq!(ok.status, 200);
    let path = trial.transcript.clone();
    let events = trial.finish().await;
    let shown: Vec<Option<String>> = events
        .iter()
        .filter_map(|e| match e {
            Event::HttpRequest { headers, .. } => Some(headers.get("authorization").cloned()),
            _ => None,
        })
        .collect();
    let valid = Some("Bearer [valid]".to_owned());
    assert_eq!(shown, vec![None, Some("[invalid]".to_owned()), valid]);
    assert_eq!(
        statuses(&events).iter().map(|s| s.1).collect::<Vec<_>>(),
        [401, 401, 200]
    );
    let text = serde_json::to_string(&events).expect("events");
    assert!(!text.contains(TOKEN) && !text.contains("nope"));
    assert!(!path.exists());
}

#[tokio::test]
async fn tls_variants_present_the_certificates_they_should() {
    let trusted = Trial::start_on("tls-ok", json!({}), None, Endpoint::Trusted).await;
    assert_eq!(trusted.post(&[], INIT).await.status, 200);
    trusted.finish().await;

    for bad in [Endpoint::UntrustedCa, Endpoint::WrongName] {
        let trial = Trial::start_on("tls-bad", json!({}), None, bad).await;
        let err = match connect(trial.fake.addr, trial.client.as_ref()).await {
            Ok(_) => panic!("{bad:?}: a client trusting only the run CA accepted the certificate"),
            Err(e) => e.to_string(),
        };
        assert!(
            err.contains("certificate") || err.contains("Certificate"),
            "{bad:?}: {err}"
        );
        // A failed handshake is not a request: only the start and the connection (which
        // shows the client tried) are recorded.
        assert_eq!(trial.finish().await, vec![Event::Started, Event::Connected]);
    }

    let plain = Trial::start_on("plain", json!({}), None, Endpoint::PlainLoopback).await;
    assert!(plain.client.is_none());
    assert_eq!(plain.post(&[], INIT).await.status, 200);
    plain.finish().await;
}

/// 2025-03-26 lets a client send a JSON-RPC batch and requires the server to take it: the fake
/// answers every request of it in one batch (JSON or one SSE event), 202 for a batch of
/// notifications, and records each message after a note. Once 2025-06-18 is negotiated, or
/// with `initialize` inside, the batch is refused with 400 and still recorded message by
/// message.
#[tokio::test]
async fn batches_are_taken_at_2025_03_26_only() {
    let init = |version: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": version, "capabilities": {},
                          "clientInfo": {"name": "t", "version": "0"}}})
        .to_string()
    };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let batch = format!("[{}, {note}, {}]", rpc(2, "ping"), rpc(3, "tools/list"));
    for replies in ["json", "sse"] {
        let server = json!({"http": {"sessions": false, "replies": replies}});
        let trial = Trial::start("batch", server, None).await;
        assert_eq!(trial.post(&[], &init("2025-03-26")).await.status, 200);
        let answered = trial.post(&[], &batch).await;
        assert_eq!(answered.status, 200);
        let answer: Value = match replies {
            "json" => serde_json::from_slice(&answered.body).expect("a JSON body"),
            _ => sse_messages(&answered.text()).remove(0),
        };
        let ids: Vec<&Value> = answer
            .as_array()
            .expect("a batch")
            .iter()
            .map(|r| &r["id"])
            .collect();
        assert_eq!(ids, [&json!(2), &json!(3)], "{answer}");
        let notes_only = format!("[{note}]");
        assert_eq!(trial.post(&[], &notes_only).await.status, 202);
        let with_init = format!("[{}]", init("2025-03-26"));
        assert_eq!(trial.post(&[], &with_init).await.status, 400);
        assert_eq!(trial.post(&[], "[]").await.status, 400);

        let events = trial.finish().await;
        let batch_at = events
            .iter()
            .position(|e| mcp_harness_fakes::batch::received_size(e) == Some(3))
            .expect("the batch is noted");
        assert!(matches!(
            &events[batch_at - 1],
            Event::HttpRequest { status: 200, .. }
        ));
        let received: Vec<&Value> = events[batch_at + 1..batch_at + 4]
            .iter()
            .map(|e| match e {
                Event::Received { message } => message,
                other => panic!("each message of the batch, got {other:?}"),
            })
            .collect();
        assert_eq!(received[1], &note);
        let sent = events
            .iter()
            .filter(|e| matches!(e, Event::Sent { message } if message["id"] == 2 || message["id"] == 3))
            .count();
        assert_eq!(sent, 2);
    }

    let trial = Trial::start("batch-later", json!({"http": {"sessions": false}}), None).await;
    assert_eq!(trial.post(&[], &init("2025-06-18")).await.status, 200);
    let refused = trial.post(&[], &batch).await;
    assert_eq!(refused.status, 400);
    let error: Value = serde_json::from_slice(&refused.body).expect("JSON error");
    assert_eq!(error["error"]["code"], json!(-32600));
    let events = trial.finish().await;
    assert!(
        events
            .iter()
            .any(|e| mcp_harness_fakes::batch::received_size(e) == Some(3))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Received { message } if message["id"] == 3))
    );
}

/// A body cut short by a closed connection (a client killed at the deadline mid-POST) is no
/// message at all: nothing is recorded as received, so the always-on "one JSON-RPC message per
/// body" rule has nothing to hold against the client. A body longer than the fake reads is
/// the client's doing and is recorded as invalid.
#[tokio::test]
async fn a_cut_body_is_not_a_malformed_message_but_an_oversized_one_is() {
    use tokio::io::AsyncWriteExt;
    let trial = Trial::start_on("cut-body", json!({}), None, Endpoint::PlainLoopback).await;
    let post = |length: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
             accept: {ACCEPT_BOTH}\r\ncontent-length: {length}\r\n\r\n{{\"jsonrpc\":"
        )
    };
    // Announced 100 bytes, sent 11; then 9 MiB announced and sent (the fake reads 8).
    for (length, sent) in [(100, 0), (9 * 1024 * 1024, 9 * 1024 * 1024 - 11)] {
        let mut stream = connect(trial.fake.addr, None).await.expect("connect");
        stream.write_all(post(length).as_bytes()).await.unwrap();
        // The fake may answer and stop reading once past its limit: later writes may fail.
        let _ = stream.write_all(&vec![b' '; sent]).await;
        let _ = stream.flush().await;
        // Long enough for the fake to read the head and start on the body.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        drop(stream);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let events = trial.finish().await;
    let requests = events
        .iter()
        .filter(|e| matches!(e, Event::HttpRequest { .. }))
        .count();
    let invalid: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::ReceivedInvalid { .. }))
        .collect();
    assert_eq!(requests, 2, "{events:?}");
    assert!(
        matches!(invalid.as_slice(), [Event::ReceivedInvalid { error, .. }] if error.contains("longer than")),
        "{events:?}"
    );
}

/// A GET to `/mcp` (with `extra` headers), read for `limit`.
async fn get_stream(trial: &Trial, extra: &[(&str, &str)], limit: Duration) -> support::Reply {
    let mut stream = connect(trial.fake.addr, trial.client.as_ref())
        .await
        .expect("connect");
    let mut headers = vec![("Accept", "text/event-stream")];
    headers.extend_from_slice(extra);
    support::request(&mut stream, "GET", "/mcp", &headers, "", limit).await
}

fn call(id: u32, token: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "t", "_meta": {"progressToken": token}}})
    .to_string()
}

/// Messages before the reply travel on the request's stream (which makes it SSE), those
/// after it on the standalone GET stream.
#[tokio::test]
async fn sends_travel_on_the_post_stream_and_the_get_stream() {
    let server = json!({
        "http": {"sessions": false, "get": "stream"},
        "handlers": [{"method": "tools/call", "reply": {"result": {"content": []}}, "sends": [
            {"message": {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": {"$request": "/params/_meta/progressToken"}, "progress": 1}}},
            {"at": "after", "message": {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "after"}}},
        ]}],
    });
    let trial = Arc::new(Trial::start("sends-http", server, None).await);
    let listener = Arc::clone(&trial);
    let get =
        tokio::spawn(async move { get_stream(&listener, &[], Duration::from_millis(1200)).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let answer = trial.post(&[], &call(5, "tok")).await;
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let messages = sse_messages(&answer.text());
    assert_eq!(messages.len(), 2, "{}", answer.text());
    assert_eq!(messages[0]["params"]["progressToken"], "tok");
    assert_eq!(messages[1]["id"], 5);
    let got = get.await.expect("the GET");
    assert_eq!(got.status, 200);
    let on_get = sse_messages(&got.text());
    assert_eq!(on_get.len(), 1, "{}", got.text());
    assert_eq!(on_get[0]["params"]["data"], "after");
    let trial = Arc::into_inner(trial).expect("one owner");
    let sent = trial
        .finish()
        .await
        .into_iter()
        .filter(|e| matches!(e, Event::Sent { .. }))
        .count();
    assert_eq!(sent, 3);
}

/// A request to the client marked `await_response` holds the rule until the client POSTs
/// its response (202); the response is recorded before what follows.
#[tokio::test]
async fn a_rule_waits_for_the_clients_posted_response() {
    let server = json!({
        "http": {"sessions": false},
        "handlers": [{"method": "tools/call", "reply": {"result": {"content": []}}, "sends": [
            {"await_response": true,
             "message": {"jsonrpc": "2.0", "id": "q1", "method": "roots/list"}},
        ]}],
    });
    let trial = Arc::new(Trial::start("await-http", server, None).await);
    let caller = Arc::clone(&trial);
    let started = std::time::Instant::now();
    let call = tokio::spawn(async move { caller.post(&[], &call(6, "t")).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let response = json!({"jsonrpc": "2.0", "id": "q1", "result": {"roots": []}});
    let accepted = trial.post(&[], &response.to_string()).await;
    assert_eq!(accepted.status, 202);
    let answer = call.await.expect("the call");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_millis(4000), "{took:?}");
    let messages = sse_messages(&answer.text());
    assert_eq!(messages[0]["method"], "roots/list");
    assert_eq!(messages[1]["id"], 6);
    let trial = Arc::into_inner(trial).expect("one owner");
    let events = trial.finish().await;
    let at = |wanted: &dyn Fn(&Event) -> bool| events.iter().position(wanted).expect("recorded");
    let received = at(&|e| matches!(e, Event::Received { message } if message == &response));
    let answered = at(&|e| matches!(e, Event::Sent { message } if message["id"] == 6));
    assert!(received < answered, "{events:?}");
}

/// A rule on a notification answers it 202 and sends its messages on the GET stream; with
/// no GET stream open they wait for one.
#[tokio::test]
async fn a_notification_rule_sends_on_the_next_get_stream() {
    let server = json!({
        "http": {"sessions": false, "get": "stream"},
        "handlers": [{"method": "notifications/initialized", "reply": "hang", "sends": [
            {"message": {"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}},
        ]}],
    });
    let trial = Trial::start("notified-http", server, None).await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let accepted = trial.post(&[], &note).await;
    assert_eq!(accepted.status, 202);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let got = get_stream(&trial, &[], Duration::from_millis(500)).await;
    assert_eq!(
        sse_messages(&got.text()),
        vec![json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})]
    );
    let events = trial.finish().await;
    let get = events
        .iter()
        .position(|e| matches!(e, Event::HttpRequest { method, .. } if method == "GET"));
    let sent = events.iter().position(|e| matches!(e, Event::Sent { .. }));
    assert!(get < sent, "queued until the GET: {events:?}");
}

/// With event ids, a POST stream cut after one event is finished on the GET that resumes
/// it: the events not yet delivered, then the response, then the stream ends. The GET is
/// recorded with its `Last-Event-ID`, and the response is recorded once.
#[tokio::test]
async fn a_cut_post_stream_is_resumed_by_get_with_last_event_id() {
    let progress = |n: u32| {
        json!({"message": {"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": n}}, "delay_ms": 50})
    };
    let server = json!({
        "http": {"sessions": false, "get": "stream", "event_ids": true, "retry_ms": 40},
        "handlers": [{"method": "tools/call", "reply": {"result": {"content": []}},
                      "http": {"cut_after_events": 1},
                      "sends": [progress(1), progress(2)]}],
    });
    let trial = Trial::start("resume-post", server, None).await;
    let cut = trial.post(&[], &call(7, "t")).await;
    assert!(cut.closed);
    let text = cut.text();
    assert!(text.starts_with("id: p1-0\nretry: 40\ndata:\n\n"), "{text}");
    let first = sse_messages(&text);
    assert_eq!(first.len(), 1, "{text}");
    assert_eq!(first[0]["params"]["progress"], 1);
    assert!(text.contains("id: p1-1\n"), "{text}");

    let resumed = get_stream(&trial, &[("Last-Event-ID", "p1-1")], Duration::from_secs(3)).await;
    assert!(
        resumed.closed,
        "a resumed POST stream ends after its response"
    );
    let rest = sse_messages(&resumed.text());
    assert_eq!(rest.len(), 2, "{}", resumed.text());
    assert_eq!(rest[0]["params"]["progress"], 2);
    assert_eq!(rest[1]["id"], 7);
    assert!(resumed.text().contains("id: p1-3\n"));

    let events = trial.finish().await;
    let resumed_with = events.iter().find_map(|e| match e {
        Event::HttpRequest {
            method, headers, ..
        } if method == "GET" => headers.get("last-event-id").cloned(),
        _ => None,
    });
    assert_eq!(resumed_with.as_deref(), Some("p1-1"));
    let responses = events
        .iter()
        .filter(|e| matches!(e, Event::Sent { message } if message["id"] == 7))
        .count();
    assert_eq!(responses, 1);
}

/// A GET naming an event of an earlier GET stream gets the events after it again; an
/// unknown id gets a new stream from now.
#[tokio::test]
async fn a_get_stream_is_resumed_from_its_last_event_id() {
    let server = json!({
        "http": {"sessions": false, "get": "stream", "event_ids": true},
        "handlers": [{"method": "tools/call", "reply": {"result": {}}, "sends": [
            {"at": "after", "message": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}},
        ]}],
    });
    let trial = Arc::new(Trial::start("resume-get", server, None).await);
    let listener = Arc::clone(&trial);
    let first =
        tokio::spawn(async move { get_stream(&listener, &[], Duration::from_millis(700)).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(trial.post(&[], &call(8, "t")).await.status, 200);
    let first = first.await.expect("the GET");
    let text = first.text();
    assert!(text.starts_with("id: g1-0\ndata:\n\n"), "{text}");
    assert!(text.contains("id: g1-1\n"), "{text}");
    let again = get_stream(
        &trial,
        &[("Last-Event-ID", "g1-0")],
        Duration::from_millis(300),
    )
    .await;
    let replayed = sse_messages(&again.text());
    assert_eq!(replayed.len(), 1, "{}", again.text());
    assert_eq!(replayed[0]["method"], "notifications/tools/list_changed");
    let fresh = get_stream(
        &trial,
        &[("Last-Event-ID", "zz-9")],
        Duration::from_millis(300),
    )
    .await;
    assert!(fresh.text().starts_with("id: g2-0\n"), "{}", fresh.text());
    assert!(sse_messages(&fresh.text()).is_empty());
    let trial = Arc::into_inner(trial).expect("one owner");
    let sent = trial
        .finish()
        .await
        .into_iter()
        .filter(|e| matches!(e, Event::Sent { message } if message.get("method").is_some()))
        .count();
    assert_eq!(sent, 1, "a replayed message is recorded once");
}

/// `keepalive_ms` writes comments on an open POST stream while its answer is pending.
#[tokio::test]
async fn keep_alives_fill_a_slow_sse_answer() {
    let server = json!({
        "http": {"sessions": false, "replies": "sse", "keepalive_ms": 40},
        "handlers": [{"method": "tools/call", "delay_ms": 300, "reply": {"result": {}}}],
    });
    let trial = Trial::start("keepalive", server, None).await;
    let answer = trial.post(&[], &call(9, "t")).await;
    let text = answer.text();
    assert!(text.matches(": keep-alive").count() >= 3, "{text}");
    assert_eq!(sse_messages(&text)[0]["id"], 9);
    trial.finish().await;
}

/// A `get: cut` stream's priming event carries the script's `retry` field.
#[tokio::test]
async fn a_cut_get_stream_carries_the_retry_field() {
    let server = json!({"http": {"sessions": false, "get": "cut", "retry_ms": 30}});
    let trial = Trial::start("cut-get-retry", server, None).await;
    let got = get_stream(&trial, &[], Duration::from_secs(3)).await;
    assert!(got.closed);
    assert!(
        got.text()
            .starts_with("retry: 30\nid: cut-stream-1\ndata:\n\n"),
        "{}",
        got.text()
    );
    trial.finish().await;
}
