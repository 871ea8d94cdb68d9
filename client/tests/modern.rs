//! The 2026-07-28 era against the tiny recording HTTP server of `http_server` and a small
//! Python stdio server: the discover probe, `_meta` and the request-metadata headers, the
//! result cache, multi round-trip retries, the -32022 version retry, the dual-era fallback and
//! its per-origin cache, and cancellation by closing the stream.

mod http_server;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http_server::{Reply, Seen, mcp, result, start};
use mcp_harness_client::{
    Client, ClientOptions, Connected, Era, ErrorKind, HttpOptions, InputHandler, StdioCommand,
    ToolOutput,
};
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";
const STATE: &str = "st+/=é\u{1F600}\\\"";

fn options(era: Era) -> ClientOptions {
    ClientOptions {
        protocol_version: MODERN.into(),
        era,
        request_timeout: Duration::from_secs(2),
        shutdown_grace: Duration::from_millis(300),
        ..ClientOptions::default()
    }
}

fn meta_version(req: &Seen) -> Option<&str> {
    req.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str()
}

fn rpc_error(req: &Seen, code: i64, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": req.body["id"],
           "error": {"code": code, "message": "refused", "data": data}})
}

/// A modern server: discover, a cacheable tools/list, and a tool that asks for confirmation
/// once (elicitation, with an opaque state) before it completes.
fn modern(req: &Seen, _history: &[Seen]) -> Reply {
    if req.method != "POST" {
        return Reply::Status(405);
    }
    if meta_version(req) != Some(MODERN) {
        return Reply::Json(
            400,
            None,
            rpc_error(req, -32022, json!({"supported": [MODERN]})),
        );
    }
    let params = &req.body["params"];
    match req.rpc() {
        "server/discover" => Reply::Json(
            200,
            None,
            result(
                req,
                json!({"resultType": "complete", "supportedVersions": [MODERN],
                       "capabilities": {"tools": {}}, "ttlMs": 0,
                       "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-test"}}}),
            ),
        ),
        "tools/list" => Reply::Json(
            200,
            None,
            result(
                req,
                json!({"resultType": "complete", "tools": [{"name": "book"}],
                       "ttlMs": 60000, "cacheScope": "public"}),
            ),
        ),
        "tools/call" if params["requestState"] == STATE => {
            let answer = &params["inputResponses"]["confirm"];
            Reply::Json(
                200,
                None,
                result(
                    req,
                    json!({"resultType": "complete",
                           "content": [{"type": "text", "text": answer["action"]}]}),
                ),
            )
        }
        "tools/call" => Reply::Json(
            200,
            None,
            result(
                req,
                json!({"resultType": "input_required", "requestState": STATE,
                       "inputRequests": {"confirm": {"method": "elicitation/create",
                                                     "params": {"message": "sure?"}}}}),
            ),
        ),
        _ => Reply::Json(404, None, rpc_error(req, -32601, Value::Null)),
    }
}

#[tokio::test]
async fn modern_http_meta_headers_cache_and_multi_round_trip() {
    let server = start(modern).await;
    let client = Client::connect_http(&server.url, HttpOptions::default(), options(Era::Modern))
        .await
        .expect("connects");
    let Connected::Modern(found) = client.connected() else {
        panic!("not modern: {:?}", client.connected())
    };
    assert_eq!(found.version, MODERN);
    assert_eq!(found.server_info, Some(json!({"name": "modern-test"})));
    assert!(client.handshake().is_none());

    // The second listing is answered from the cache (ttlMs 60000).
    for _ in 0..2 {
        assert_eq!(
            client.list_tools().await.unwrap(),
            [json!({"name": "book"})]
        );
    }
    let accept = InputHandler::new().answer(
        "elicitation/create",
        json!({"action": "accept", "content": {}}),
    );
    let arguments = json!({"table": 4});
    let out = client
        .call_tool_with_input("book", arguments.clone(), &accept, std::future::pending())
        .await
        .unwrap();
    assert_eq!(out.output, ToolOutput::Text(vec!["accept".into()]));
    // Without a handler an elicitation is declined; the call is not cached either.
    let out = client.call_tool("book", arguments.clone()).await.unwrap();
    assert_eq!(out.output, ToolOutput::Text(vec!["decline".into()]));
    assert_eq!(
        client.discover().await.unwrap()["supportedVersions"],
        json!([MODERN])
    );
    client.close().await;

    let seen = server.seen();
    assert!(seen.iter().all(|s| s.method == "POST"), "no GET, no DELETE");
    let methods: Vec<&str> = seen.iter().map(Seen::rpc).collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call",
            "tools/call",
            "server/discover"
        ]
    );
    for s in &seen {
        assert_eq!(meta_version(s), Some(MODERN), "{:?}", s.body);
        let meta = &s.body["params"]["_meta"];
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "mcp-harness-client"
        );
        assert_eq!(s.header("mcp-protocol-version"), Some(MODERN));
        assert_eq!(s.header("mcp-method"), Some(s.rpc()));
        assert_eq!(s.header("mcp-session-id"), None);
        let name = (s.rpc() == "tools/call").then_some("book");
        assert_eq!(s.header("mcp-name"), name);
    }
    let (first, retry) = (&seen[2].body, &seen[3].body);
    assert_ne!(first["id"], retry["id"], "a retry has a new id");
    assert!(first["params"].get("requestState").is_none());
    assert_eq!(retry["params"]["requestState"], STATE);
    assert_eq!(retry["params"]["arguments"], arguments);
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"confirm": {"action": "accept", "content": {}}})
    );
    let caps = &retry["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(caps, &json!({"elicitation": {}}));
    assert_eq!(
        seen[5].body["params"]["inputResponses"],
        json!({"confirm": {"action": "decline"}})
    );
}

#[tokio::test]
async fn an_unsupported_version_is_retried_with_a_listed_one_or_refused() {
    let server = start(modern).await;
    let offer_future = ClientOptions {
        protocol_version: "2099-01-01".into(),
        ..options(Era::Modern)
    };
    let client = Client::connect_http(&server.url, HttpOptions::default(), offer_future)
        .await
        .expect("retries with 2026-07-28");
    assert!(matches!(client.connected(), Connected::Modern(f) if f.version == MODERN));
    client.close().await;
    let seen = server.seen();
    assert_eq!(meta_version(&seen[0]), Some("2099-01-01"));
    assert_eq!(meta_version(&seen[1]), Some(MODERN));
    assert_ne!(seen[0].body["id"], seen[1].body["id"]);

    let future_only = start(|req: &Seen, _: &[Seen]| {
        Reply::Json(
            400,
            None,
            rpc_error(req, -32022, json!({"supported": ["2027-01-01"]})),
        )
    })
    .await;
    let err = Client::connect_http(&future_only.url, HttpOptions::default(), options(Era::Dual))
        .await
        .err()
        .expect("no common version");
    assert_eq!(
        (err.kind, err.code),
        (ErrorKind::UnsupportedVersion, Some(-32022))
    );
    let methods: Vec<String> = future_only.posts().iter().map(|s| s.rpc().into()).collect();
    assert_eq!(
        methods,
        ["server/discover"],
        "no initialize after a modern error"
    );
}

/// The official suite's `request-metadata` scenario: the first request is refused with -32022
/// listing the very version that was sent. The client retries once with it, and gives up if it
/// is refused again, so it never loops.
#[tokio::test]
async fn a_refusal_listing_the_version_sent_is_retried_once() {
    for refusals in [1, usize::MAX] {
        let refused = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&refused);
        let server = start(move |req: &Seen, history: &[Seen]| match req.rpc() {
            "tools/call" if count.fetch_add(1, Ordering::SeqCst) < refusals => Reply::Json(
                400,
                None,
                rpc_error(req, -32022, json!({"supported": [MODERN]})),
            ),
            "tools/call" => Reply::Json(
                200,
                None,
                result(req, json!({"content": [{"type": "text", "text": "ok"}]})),
            ),
            _ => modern(req, history),
        })
        .await;
        let client =
            Client::connect_http(&server.url, HttpOptions::default(), options(Era::Modern))
                .await
                .unwrap();
        let outcome = client.call_tool("echo", json!({})).await;
        client.close().await;
        let calls: Vec<Seen> = server
            .posts()
            .into_iter()
            .filter(|s| s.rpc() == "tools/call")
            .collect();
        assert_eq!(
            calls.len(),
            2,
            "one retry, with the same version and a new id"
        );
        assert_eq!(meta_version(&calls[1]), Some(MODERN));
        assert_ne!(calls[0].body["id"], calls[1].body["id"]);
        match refusals {
            1 => assert_eq!(outcome.unwrap().output, ToolOutput::Text(vec!["ok".into()])),
            _ => {
                let err = outcome.unwrap_err();
                assert_eq!(
                    (err.kind, err.code),
                    (ErrorKind::UnsupportedVersion, Some(-32022))
                );
            }
        }
    }
}

#[tokio::test]
async fn dual_http_falls_back_on_a_plain_400_and_remembers_the_origin() {
    // A legacy server: the discover POST gets 400 without a JSON-RPC body.
    let server = start(|req: &Seen, history: &[Seen]| match req.rpc() {
        "server/discover" => Reply::Status(400),
        _ => mcp(req, history),
    })
    .await;
    let options = ClientOptions {
        legacy_protocol_version: "2025-06-18".into(),
        ..options(Era::Dual)
    };
    for _ in 0..2 {
        let client = Client::connect_http(&server.url, HttpOptions::default(), options.clone())
            .await
            .expect("falls back");
        let handshake = client.handshake().expect("legacy");
        assert_eq!(handshake.protocol_version(), Some("2025-06-18"));
        assert_eq!(
            client.list_tools().await.unwrap(),
            [json!({"name": "echo"})]
        );
        client.close().await;
    }
    let posts = server.posts();
    let probes = posts
        .iter()
        .filter(|s| s.rpc() == "server/discover")
        .count();
    assert_eq!(probes, 1, "the era is cached per origin");
    for s in posts.iter().filter(|s| s.rpc() != "server/discover") {
        assert!(
            s.body["params"].get("_meta").is_none(),
            "legacy requests carry no _meta"
        );
        assert_eq!(s.header("mcp-method"), None);
    }
}

#[tokio::test]
async fn modern_http_cancellation_closes_the_stream_without_a_notification() {
    let server = start(|req: &Seen, history: &[Seen]| match req.rpc() {
        "tools/call" => Reply::Hold,
        _ => modern(req, history),
    })
    .await;
    let client = Client::connect_http(&server.url, HttpOptions::default(), options(Era::Modern))
        .await
        .unwrap();
    let cancel = tokio::time::sleep(Duration::from_millis(100));
    let err = client
        .call_tool_cancellable("slow", json!({}), cancel)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Cancelled);
    server
        .wait_for("the dropped connection", |log| log.dropped == 1)
        .await;
    client.close().await;
    let methods: Vec<String> = server.seen().iter().map(|s| s.rpc().into()).collect();
    assert_eq!(methods, ["server/discover", "tools/call"]);
}

/// A legacy stdio server that answers anything but `initialize` before the handshake with
/// -32601 (or, with argv "silent", nothing at all).
const LEGACY_STDIO: &str = r#"
import json, sys
silent = sys.argv[1] == "silent"
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    def send(obj):
        sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": msg["params"]["protocolVersion"],
              "capabilities": {}, "serverInfo": {"name": "legacy", "seen": [m for m in seen]}}})
    elif mid is not None and not silent:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "unknown"}})
    seen = globals().get("seen", []) + [method]
    globals()["seen"] = seen
"#;

fn legacy_stdio(mode: &str) -> StdioCommand {
    StdioCommand::from_argv(vec![
        "python3".into(),
        "-c".into(),
        LEGACY_STDIO.into(),
        mode.into(),
    ])
    .unwrap()
}

#[tokio::test]
async fn dual_stdio_falls_back_after_an_error_or_silence_and_modern_only_refuses() {
    for mode in ["answers", "silent"] {
        let options = ClientOptions {
            request_timeout: Duration::from_millis(1500),
            ..options(Era::Dual)
        };
        let client = Client::connect_stdio(&legacy_stdio(mode), options)
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        let handshake = client.handshake().expect("legacy");
        assert_eq!(handshake.protocol_version(), Some("2025-11-25"));
        // The server saw the probe and nothing else before initialize (no cancellation).
        assert_eq!(
            handshake.server_info().unwrap()["seen"],
            json!(["server/discover"]),
            "{mode}"
        );
        client.close().await;
    }
    let err = Client::connect_stdio(&legacy_stdio("answers"), options(Era::Modern))
        .await
        .err()
        .expect("a modern-only client does not fall back");
    assert_eq!(
        (err.kind, err.code),
        (ErrorKind::UnsupportedVersion, Some(-32601))
    );
}

/// A 2026-07-28 stdio server whose `away` tool closes its stdout and then keeps running,
/// ignoring SIGTERM and never reading stdin again; `pid` answers with its process id.
const MODERN_STDIO: &str = r#"
import json, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "server/discover":
        result = {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                  "capabilities": {"tools": {}}, "ttlMs": 0,
                  "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-stdio"}}}
    elif method == "tools/call" and msg["params"]["name"] == "away":
        sys.stdout.flush()
        os.close(1)
        while True:
            time.sleep(1)
    else:
        result = {"resultType": "complete", "content": [], "structuredContent": {"pid": os.getpid()}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    sys.stdout.flush()
"#;

fn modern_stdio(program: &str) -> StdioCommand {
    StdioCommand::from_argv(vec![program.into(), "-c".into(), MODERN_STDIO.into()]).unwrap()
}

async fn server_pid(client: &Client) -> Result<i32, mcp_harness_client::Error> {
    match client.call_tool("pid", json!({})).await?.output {
        ToolOutput::Structured(v) => Ok(v["pid"].as_i64().expect("a pid") as i32),
        other => panic!("pid: {other:?}"),
    }
}

fn process_exists(pid: i32) -> bool {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

async fn gone_within(pid: i32, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    while process_exists(pid) {
        if std::time::Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

#[tokio::test]
async fn a_modern_stdio_server_that_closes_stdout_is_stopped_and_replaced() {
    let client = Client::connect_stdio(&modern_stdio("python3"), options(Era::Modern))
        .await
        .unwrap();
    let old = server_pid(&client).await.unwrap();
    let err = client.call_tool("away", json!({})).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::TransportClosed);
    let new = server_pid(&client).await.expect("a new server answers");
    assert_ne!(old, new);
    // Still running and deaf to SIGTERM: stdin closed, SIGTERM, SIGKILL, reaped (grace 300 ms).
    assert!(
        gone_within(old, Duration::from_secs(3)).await,
        "the old server {old} was never stopped or reaped"
    );
    // A second departure: close waits for the stopping of the replaced server.
    let err = client.call_tool("away", json!({})).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::TransportClosed);
    let third = server_pid(&client).await.unwrap();
    let _ = client.call_tool("away", json!({})).await;
    client.close().await;
    for pid in [new, third] {
        assert!(!process_exists(pid), "server {pid} outlived close");
    }
}

#[tokio::test]
async fn a_server_that_cannot_be_started_again_ends_the_connection() {
    // The program is a symlink named python3 (pyenv's shims go by their name), removed once
    // the first server runs, so starting another fails.
    let dir = std::env::temp_dir().join(format!("mcp-harness-restart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("python3");
    let _ = std::fs::remove_file(&link);
    let python = std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|p| p.join("python3"))
                .find(|p| p.is_file())
        })
        .expect("python3 on PATH");
    std::os::unix::fs::symlink(&python, &link).unwrap();
    let options = ClientOptions {
        request_timeout: Duration::from_secs(5),
        ..options(Era::Modern)
    };
    let client = Client::connect_stdio(&modern_stdio(&link.to_string_lossy()), options)
        .await
        .unwrap();
    let old = server_pid(&client).await.unwrap();
    std::fs::remove_file(&link).unwrap();
    let _ = std::fs::remove_dir(&dir);
    let err = client.call_tool("away", json!({})).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::TransportClosed);
    for attempt in ["the restart", "a later request"] {
        let started = std::time::Instant::now();
        let err = server_pid(&client).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::TransportClosed, "{attempt}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{attempt} waited {:?} instead of failing at once",
            started.elapsed()
        );
    }
    client.close().await;
    assert!(!process_exists(old), "the old server {old} outlived close");
}
