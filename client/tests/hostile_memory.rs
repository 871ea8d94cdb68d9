//! Memory stays bounded by the size cap while a server streams one enormous line. A test binary
//! of its own, so the process's peak memory is this test's alone.

mod hostile_server;

use std::time::{Duration, Instant};

use hostile_server::server;
use mcp_harness_client::{Client, ClientOptions, ErrorKind, ToolOutput};
use serde_json::json;

const MIB: usize = 1 << 20;

/// Peak resident memory of this process so far, in bytes.
fn peak_rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok());
    kb.expect("VmHWM in /proc/self/status") * 1024
}

#[tokio::test]
async fn a_256_mib_line_is_discarded_without_being_buffered() {
    let options = ClientOptions {
        protocol_version: "2025-06-18".into(),
        request_timeout: Duration::from_secs(60),
        shutdown_grace: Duration::from_millis(300),
        max_message_bytes: 4 * MIB,
        ..ClientOptions::default()
    };
    let client = Client::connect_stdio(&server(), options).await.unwrap();
    let before = peak_rss();
    let started = Instant::now();
    let err = client
        .call_tool("endless", json!({"mib": 256}))
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidResponse, "{err}");
    let failed = started.elapsed();
    // The next answer comes after the whole line has gone by.
    let out = client.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(out.output, ToolOutput::Text(vec!["echo".into()]));
    let grown = peak_rss().saturating_sub(before);
    eprintln!(
        "failed after {failed:?}; 256 MiB discarded in {:?}; peak memory grew by {} KiB",
        started.elapsed(),
        grown / 1024
    );
    assert!(grown < 32 * MIB, "peak memory grew by {grown} bytes");
    client.close().await;
}
