//! The client library against a small Python stdio server: the happy path, failures that leave
//! the connection usable, and shutdown escalation.

mod common;

use std::time::{Duration, Instant};

use common::{process_exists, server, server_args, temp_path};
use mcp_harness_client::{Client, ClientOptions, ErrorKind, ToolOutput};
use serde_json::{Value, json};

fn options() -> ClientOptions {
    ClientOptions {
        protocol_version: "2025-06-18".into(),
        request_timeout: Duration::from_secs(5),
        shutdown_grace: Duration::from_millis(100),
        ..ClientOptions::default()
    }
}

async fn seen(client: &Client) -> Vec<Value> {
    match client.call_tool("seen", json!({})).await.map(|r| r.output) {
        Ok(ToolOutput::Structured(v)) => v["messages"].as_array().cloned().unwrap_or_default(),
        other => panic!("seen failed: {other:?}"),
    }
}

#[tokio::test]
async fn connect_list_call_close() {
    let client = Client::connect_stdio(&server("normal"), options())
        .await
        .unwrap();
    assert_eq!(
        client.handshake().unwrap().protocol_version(),
        Some("2025-06-18")
    );
    assert_eq!(
        client.handshake().unwrap().server_info().unwrap()["name"],
        "py-normal"
    );

    let tools = client.list_tools().await.unwrap();
    assert_eq!(
        tools,
        [
            json!({"name":"echo","inputSchema":{"type":"object"},"x-extra":1}),
            json!({"name":"fail","inputSchema":{"type":"object"}}),
        ]
    );
    let echo = client
        .call_tool("echo", json!({"a": [1, 2]}))
        .await
        .unwrap();
    assert_eq!(echo.output, ToolOutput::Structured(json!({"a": [1, 2]})));
    let text = client.call_tool("text", json!({})).await.unwrap();
    assert_eq!(
        text.output,
        ToolOutput::Text(vec!["one".into(), "two".into()])
    );
    let fail = client.call_tool("fail", json!({})).await.unwrap_err();
    assert_eq!(
        (fail.kind, fail.message.as_str()),
        (ErrorKind::ToolError, "boom")
    );
    let rpc = client.call_tool("rpcerr", json!({})).await.unwrap_err();
    assert_eq!(
        (rpc.kind, rpc.code),
        (ErrorKind::ProtocolError, Some(-32602))
    );

    let wire = seen(&client).await;
    assert_eq!(wire[0]["method"], "initialize");
    assert_eq!(wire[0]["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(wire[0]["params"]["capabilities"], json!({}));
    assert_eq!(
        wire[0]["params"]["clientInfo"]["name"],
        "mcp-harness-client"
    );
    assert_eq!(
        wire[1],
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    );
    assert_eq!(wire[2]["params"], json!({}), "no cursor on the first page");
    assert_eq!(wire[3]["params"], json!({"cursor": ""}));
    assert_eq!(
        wire[4]["params"],
        json!({"name":"echo","arguments":{"a":[1,2]}})
    );
    let ids: Vec<i64> = wire.iter().filter_map(|m| m["id"].as_i64()).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6, 7, 8]);

    client.close().await;
    client.close().await;
    let after = client.list_tools().await.unwrap_err();
    assert_eq!(after.kind, ErrorKind::TransportClosed);
}

#[tokio::test]
async fn timeout_and_cancel_leave_the_connection_usable() {
    // The timeout also bounds `initialize`, which waits for a Python stub to start: long
    // enough for a loaded machine to start it (600 ms was not, under a CPU hog).
    let opts = ClientOptions {
        request_timeout: Duration::from_millis(2000),
        ..options()
    };
    let client = Client::connect_stdio(&server("normal"), opts)
        .await
        .unwrap();
    let started = Instant::now();
    let timeout = client.call_tool("slow", json!({})).await.unwrap_err();
    assert_eq!(timeout.kind, ErrorKind::Timeout);
    assert!(started.elapsed() >= Duration::from_millis(2000));

    let cancel = tokio::time::sleep(Duration::from_millis(50));
    let cancelled = client
        .call_tool_cancellable("slow", json!({}), cancel)
        .await
        .unwrap_err();
    assert_eq!(cancelled.kind, ErrorKind::Cancelled);
    assert!(
        cancelled.message.contains("not proof"),
        "{}",
        cancelled.message
    );

    let wire = seen(&client).await;
    let notes: Vec<&Value> = wire
        .iter()
        .filter(|m| m["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(notes.len(), 2);
    assert_eq!(notes[0]["params"]["requestId"], 2);
    assert_eq!(notes[1]["params"]["requestId"], 3);
    assert!(
        notes
            .iter()
            .all(|n| n.get("id").is_none() && n["params"]["reason"].is_string())
    );
    client.close().await;
}

#[tokio::test]
async fn concurrent_requests_are_correlated_by_id() {
    let client = Client::connect_stdio(&server("normal"), options())
        .await
        .unwrap();
    let (held, released) = tokio::join!(client.call_tool("hold", json!({})), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        client.call_tool("release", json!({})).await
    });
    assert_eq!(
        held.unwrap().output,
        ToolOutput::Text(vec!["held 2".into()])
    );
    assert_eq!(
        released.unwrap().output,
        ToolOutput::Text(vec!["released".into()])
    );
    client.close().await;
}

#[tokio::test]
async fn chatty_server_noise_is_skipped_and_server_requests_answered() {
    let client = Client::connect_stdio(&server("chatty"), options())
        .await
        .unwrap();
    // The server's requests came before the first `seen` answer on its stdout, so our replies
    // were queued before the second `seen` request is written.
    seen(&client).await;
    let wire = seen(&client).await;
    let reply = |id: &str| wire.iter().find(|m| m["id"] == id).cloned();
    assert_eq!(
        reply("srv-1"),
        Some(json!({"jsonrpc":"2.0","id":"srv-1","result":{}}))
    );
    assert_eq!(reply("srv-2").unwrap()["error"]["code"], -32601);
    client.close().await;
}

#[tokio::test]
async fn pagination_faults_are_rejected() {
    let client = Client::connect_stdio(&server("loop"), options())
        .await
        .unwrap();
    let e = client.list_tools().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::RepeatedCursor);
    client.close().await;

    let client = Client::connect_stdio(&server("dupe"), options())
        .await
        .unwrap();
    let e = client.list_tools().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::DuplicateToolName);
    client.close().await;
}

#[tokio::test]
async fn server_exit_fails_the_request_with_transport_closed() {
    let client = Client::connect_stdio(&server("normal"), options())
        .await
        .unwrap();
    let e = client.call_tool("exit", json!({})).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::TransportClosed);
    let again = client.call_tool("echo", json!({})).await.unwrap_err();
    assert_eq!(again.kind, ErrorKind::TransportClosed);
    client.close().await;
}

#[tokio::test]
async fn stubborn_server_is_killed_and_reaped() {
    let client = Client::connect_stdio(&server("stubborn"), options())
        .await
        .unwrap();
    let pid = client.handshake().unwrap().server_info().unwrap()["pid"]
        .as_i64()
        .unwrap() as i32;
    let started = Instant::now();
    client.close().await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(200),
        "escalated too early: {took:?}"
    );
    assert!(took < Duration::from_secs(2), "close took {took:?}");
    assert!(
        !process_exists(pid),
        "server {pid} survived close or was not reaped"
    );
}

#[tokio::test]
async fn failed_handshakes_report_their_kind_and_clean_up() {
    let e = Client::connect_stdio(&server("refuse"), options())
        .await
        .err()
        .unwrap();
    assert_eq!((e.kind, e.code), (ErrorKind::HandshakeFailed, Some(-32602)));
    let e = Client::connect_stdio(&server("badversion"), options())
        .await
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::UnsupportedVersion);

    let quick = ClientOptions {
        request_timeout: Duration::from_millis(200),
        ..options()
    };
    let started = Instant::now();
    let e = Client::connect_stdio(&server("mute"), quick)
        .await
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(e.message.contains("never cancelled"), "{}", e.message);
    assert!(started.elapsed() < Duration::from_secs(2));

    let pidfile = temp_path("pid");
    let path = pidfile.to_string_lossy().into_owned();
    let started = Instant::now();
    let command = server_args(&["refuse-stubborn", &path]);
    let e = Client::connect_stdio(&command, options())
        .await
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::HandshakeFailed);
    assert!(started.elapsed() < Duration::from_secs(3));
    let (pid, saw_eof) = common::read_pidfile(&pidfile);
    assert!(saw_eof, "stdin was not closed first");
    assert!(
        !process_exists(pid),
        "server {pid} outlived a failed handshake"
    );
}

#[tokio::test]
async fn a_missing_program_is_transport_closed() {
    let command =
        mcp_harness_client::StdioCommand::from_argv(vec!["/nonexistent/mcp-server".into()])
            .unwrap();
    let e = Client::connect_stdio(&command, options())
        .await
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::TransportClosed);
}
