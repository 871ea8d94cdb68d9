//! The 2026-07-28 era's spans over Streamable HTTP, in-process with the SDK's in-memory
//! exporter: each POSTed request has its own CLIENT span whose context its `_meta` carries,
//! a multi round-trip retry is a step of its own, and a listing answered from the cache is an
//! INTERNAL span with no request. The global provider is process-wide: one test per file.

mod http_server;

use std::time::Duration;

use http_server::{Reply, Seen, result, start};
use mcp_harness_client::{Client, ClientOptions, Era, HttpOptions, InputHandler};
use opentelemetry::trace::{SpanKind, Status};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;

const MODERN: &str = "2026-07-28";

fn modern(req: &Seen, _history: &[Seen]) -> Reply {
    let params = &req.body["params"];
    let reply = match req.rpc() {
        "server/discover" => json!({"resultType": "complete", "supportedVersions": [MODERN],
            "capabilities": {"tools": {}}, "ttlMs": 0,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern-test"}}}),
        "tools/list" => json!({"resultType": "complete", "tools": [{"name": "book"}],
            "ttlMs": 60000, "cacheScope": "public"}),
        "tools/call" if params.get("requestState").is_some() => json!({"resultType": "complete",
            "content": [{"type": "text", "text": "booked"}]}),
        "tools/call" => json!({"resultType": "input_required", "requestState": "s1",
            "inputRequests": {"confirm": {"method": "elicitation/create",
                                          "params": {"message": "sure?"}}}}),
        _ => return Reply::Status(405),
    };
    Reply::Json(200, None, result(req, reply))
}

fn attr(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.as_str().into_owned())
}

fn events(span: &SpanData) -> Vec<&str> {
    span.events.iter().map(|e| e.name.as_ref()).collect()
}

#[tokio::test]
async fn modern_http_requests_each_have_their_span_and_the_cache_is_visible() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    opentelemetry::global::set_tracer_provider(provider.clone());

    let server = start(modern).await;
    let options = ClientOptions {
        protocol_version: MODERN.into(),
        era: Era::Modern,
        request_timeout: Duration::from_secs(2),
        ..ClientOptions::default()
    };
    let client = Client::connect_http(&server.url, HttpOptions::default(), options)
        .await
        .expect("connects");
    for _ in 0..2 {
        client.list_tools().await.unwrap();
    }
    let secret_answer = "answer-in-no-span-4471";
    let input = InputHandler::new().answer(
        "elicitation/create",
        json!({"action": "accept", "content": {"note": secret_answer}}),
    );
    client
        .call_tool_with_input("book", json!({"table": 4}), &input, std::future::pending())
        .await
        .unwrap();
    client.close().await;
    let _ = provider.force_flush();
    let spans = exporter.get_finished_spans().unwrap();

    let seen: Vec<Seen> = server
        .seen()
        .into_iter()
        .filter(|s| s.method == "POST")
        .collect();
    let rpcs: Vec<&str> = seen.iter().map(Seen::rpc).collect();
    assert_eq!(
        rpcs,
        ["server/discover", "tools/list", "tools/call", "tools/call"]
    );
    let port = server
        .url
        .split(':')
        .nth(2)
        .and_then(|p| p.split('/').next())
        .unwrap();
    for (i, request) in seen.iter().enumerate() {
        let id = request.body["id"].to_string();
        let mine: Vec<&SpanData> = spans
            .iter()
            .filter(|s| attr(s, "jsonrpc.request.id").as_deref() == Some(id.as_str()))
            .collect();
        assert_eq!(mine.len(), 1, "one span for {}: {spans:#?}", request.body);
        let span = mine[0];
        assert_eq!(span.span_kind, SpanKind::Client);
        assert_eq!(
            attr(span, "mcp.method.name").as_deref(),
            Some(request.rpc())
        );
        assert_eq!(attr(span, "mcp_harness.era").as_deref(), Some("modern"));
        assert_eq!(attr(span, "mcp.protocol.version").as_deref(), Some(MODERN));
        assert_eq!(attr(span, "network.transport").as_deref(), Some("tcp"));
        assert_eq!(attr(span, "server.address").as_deref(), Some("127.0.0.1"));
        assert_eq!(attr(span, "server.port").as_deref(), Some(port));
        assert_eq!(
            attr(span, "mcp_harness.final_status").as_deref(),
            Some("ok")
        );
        let context = &span.span_context;
        let wire = request.body["params"]["_meta"]["traceparent"]
            .as_str()
            .unwrap();
        assert_eq!(
            wire,
            format!("00-{}-{}-01", context.trace_id(), context.span_id())
        );
        assert_eq!(span.status, Status::Unset);
        match i {
            1 | 2 => assert_eq!(attr(span, "mcp_harness.cache").as_deref(), Some("miss")),
            3 => {
                assert!(events(span).contains(&"mrtr.step"), "{span:?}");
                assert_eq!(
                    attr(span, "mcp_harness.result.type").as_deref(),
                    Some("complete")
                );
            }
            _ => assert!(events(span).contains(&"capabilities")),
        }
    }
    let first_call = spans.iter().find(|s| s.name == "tools/call book").unwrap();
    assert_eq!(
        attr(first_call, "gen_ai.tool.name").as_deref(),
        Some("book")
    );
    let hit: Vec<&SpanData> = spans
        .iter()
        .filter(|s| attr(s, "mcp_harness.cache").as_deref() == Some("hit"))
        .collect();
    assert_eq!(hit.len(), 1, "the second listing came from the cache");
    assert_eq!(hit[0].span_kind, SpanKind::Internal);
    assert!(attr(hit[0], "jsonrpc.request.id").is_none());
    assert!(
        !format!("{spans:?}").contains(secret_answer),
        "no answer in a span"
    );
    assert!(
        !format!("{spans:?}").contains("\"table\""),
        "no argument in a span"
    );
}
