//! The client against hostile servers: very large messages (16 MiB, and past the size cap),
//! invalid UTF-8, malformed JSON and JSON that is not JSON-RPC, messages split across writes or
//! sharing one, and a line cut short. Each must end in a clear error of the right kind within
//! the timeout (or succeed), never a panic or a hang, with the client still usable afterwards.
//! Over stdio against a small Python server written for this file; over HTTP against the
//! recording server of `http_server`.

mod hostile_server;
mod http_server;

use std::time::{Duration, Instant};

use hostile_server::server;
use http_server::{Reply, mcp, result, start};
use mcp_harness_client::{Client, ClientOptions, ErrorKind, HttpOptions, ToolOutput};
use serde_json::json;

fn options(timeout: Duration, max: usize) -> ClientOptions {
    ClientOptions {
        protocol_version: "2025-06-18".into(),
        request_timeout: timeout,
        shutdown_grace: Duration::from_millis(300),
        max_message_bytes: max,
        ..ClientOptions::default()
    }
}

const MIB: usize = 1 << 20;

fn text_len(output: &ToolOutput) -> usize {
    match output {
        ToolOutput::Text(parts) => parts.iter().map(String::len).sum(),
        other => panic!("expected text, got {other:?}"),
    }
}

async fn echo_works(client: &Client) {
    let out = client.call_tool("echo", json!({})).await;
    assert_eq!(
        out.unwrap().output,
        ToolOutput::Text(vec!["echo".into()]),
        "still usable"
    );
}

#[tokio::test]
async fn stdio_a_16_mib_response_arrives_whole() {
    let client = Client::connect_stdio(&server(), options(Duration::from_secs(30), 64 * MIB))
        .await
        .unwrap();
    let started = Instant::now();
    let out = client
        .call_tool("big", json!({"bytes": 16 * MIB}))
        .await
        .unwrap();
    eprintln!("stdio: a 16 MiB response took {:?}", started.elapsed());
    assert_eq!(text_len(&out.output), 16 * MIB);
    echo_works(&client).await;
    client.close().await;
}

#[tokio::test]
async fn stdio_past_the_cap_is_invalid_response_at_once() {
    let client = Client::connect_stdio(&server(), options(Duration::from_secs(20), MIB))
        .await
        .unwrap();
    let started = Instant::now();
    let err = client
        .call_tool("endless", json!({"mib": 64}))
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(err.kind, ErrorKind::InvalidResponse, "{err}");
    assert!(
        err.message.contains("1048576-byte message size cap"),
        "{err}"
    );
    // The rest of the line is discarded as it comes; the next answer follows it.
    echo_works(&client).await;
    eprintln!("stdio: over the cap failed after {took:?}");
    client.close().await;
}

#[tokio::test]
async fn stdio_undecodable_answers_fail_their_request_and_noise_is_skipped() {
    let client = Client::connect_stdio(&server(), options(Duration::from_secs(5), 64 * MIB))
        .await
        .unwrap();
    for tool in ["bad-utf8", "malformed", "not-jsonrpc"] {
        let started = Instant::now();
        let err = client.call_tool(tool, json!({})).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidResponse, "{tool}: {err}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{tool} waited for the timeout"
        );
        echo_works(&client).await;
    }
    let out = client
        .call_tool("noise-then-answer", json!({}))
        .await
        .unwrap();
    assert_eq!(out.output, ToolOutput::Text(vec!["after the noise".into()]));
    client.close().await;
}

#[tokio::test]
async fn stdio_split_and_shared_writes_are_framed_right() {
    let client = Client::connect_stdio(&server(), options(Duration::from_secs(5), 64 * MIB))
        .await
        .unwrap();
    let out = client.call_tool("split", json!({})).await.unwrap();
    assert_eq!(out.output, ToolOutput::Text(vec!["split".into()]));
    let out = client.call_tool("three-in-one", json!({})).await.unwrap();
    assert_eq!(out.output, ToolOutput::Text(vec!["three".into()]));
    client.close().await;
}

#[tokio::test]
async fn stdio_a_line_cut_short_times_out_or_closes() {
    let client = Client::connect_stdio(&server(), options(Duration::from_secs(2), 64 * MIB))
        .await
        .unwrap();
    let err = client.call_tool("partial", json!({})).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Timeout, "{err}");
    let err = client
        .call_tool("partial-then-exit", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::TransportClosed, "{err}");
    client.close().await;
}

fn http_options(max: usize) -> ClientOptions {
    ClientOptions {
        request_timeout: Duration::from_secs(20),
        ..options(Duration::from_secs(20), max)
    }
}

/// A `tools/call` answer carrying `bytes` of text, as JSON-RPC text.
fn big_answer(req: &http_server::Seen, bytes: usize) -> String {
    result(
        req,
        json!({"content": [{"type": "text", "text": "z".repeat(bytes)}]}),
    )
    .to_string()
}

#[tokio::test]
async fn http_16_mib_answers_arrive_whole_and_past_the_cap_fail_the_request() {
    let server = start(|req, h| match req.body["params"]["name"].as_str() {
        Some("json") => {
            let n = req.body["params"]["arguments"]["bytes"].as_u64().unwrap() as usize;
            Reply::Raw(
                "application/json",
                Box::leak(big_answer(req, n).into_boxed_str()),
            )
        }
        Some("sse") => {
            let n = req.body["params"]["arguments"]["bytes"].as_u64().unwrap() as usize;
            Reply::SseText(format!("data: {}\n\n", big_answer(req, n)))
        }
        _ => mcp(req, h),
    })
    .await;
    let client = Client::connect_http(&server.url, HttpOptions::default(), http_options(64 * MIB))
        .await
        .unwrap();
    for tool in ["json", "sse"] {
        let started = Instant::now();
        let out = client
            .call_tool(tool, json!({"bytes": 16 * MIB}))
            .await
            .unwrap();
        eprintln!(
            "http {tool}: a 16 MiB response took {:?}",
            started.elapsed()
        );
        assert_eq!(text_len(&out.output), 16 * MIB);
    }
    client.close().await;

    let client = Client::connect_http(&server.url, HttpOptions::default(), http_options(MIB))
        .await
        .unwrap();
    for tool in ["json", "sse"] {
        let err = client
            .call_tool(tool, json!({"bytes": 2 * MIB}))
            .await
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidResponse, "{tool}: {err}");
        assert!(
            err.message.contains("1048576-byte message size cap"),
            "{err}"
        );
        let out = client
            .call_tool(tool, json!({"bytes": 1000}))
            .await
            .unwrap();
        assert_eq!(text_len(&out.output), 1000, "still usable");
    }
    client.close().await;
}

#[tokio::test]
async fn http_undecodable_events_fail_their_request() {
    let server = start(|req, h| match req.body["params"]["name"].as_str() {
        Some("malformed") => Reply::SseText("data: {\"jsonrpc\":\n\n".into()),
        Some("split-lines") => Reply::SseText(format!(
            "data: {}\r\ndata:\r\n\r\n",
            result(req, json!({"content": [{"type": "text", "text": "ok"}]}))
        )),
        _ => mcp(req, h),
    })
    .await;
    let client = Client::connect_http(&server.url, HttpOptions::default(), http_options(MIB))
        .await
        .unwrap();
    let err = client.call_tool("malformed", json!({})).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidResponse, "{err}");
    let out = client.call_tool("split-lines", json!({})).await.unwrap();
    assert_eq!(out.output, ToolOutput::Text(vec!["ok".into()]));
    client.close().await;
}
