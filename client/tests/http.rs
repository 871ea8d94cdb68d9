//! The client library over Streamable HTTP, against the tiny recording server of
//! `http_server`: both answer shapes, sessions and headers, close, the URL policy, the bearer
//! token, timeouts and cancellation, session expiry, bad answers, the server stream, TLS versus
//! refused connections, the redirect policy, the HTTP defects, and the driver binary.

mod http_server;

use std::time::{Duration, Instant};

use http_server::{Reply, Seen, Server, mcp, result, start};
use mcp_harness_client::{
    BearerToken, Client, ClientOptions, Defects, ErrorKind, HttpOptions, ToolOutput,
};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

fn options() -> ClientOptions {
    ClientOptions {
        protocol_version: "2025-06-18".into(),
        request_timeout: Duration::from_secs(2),
        shutdown_grace: Duration::from_millis(500),
        ..ClientOptions::default()
    }
}

async fn connect(server: &Server) -> Client {
    Client::connect_http(&server.url, HttpOptions::default(), options())
        .await
        .expect("connects")
}

#[tokio::test]
async fn json_and_sse_answers_with_session_and_version_headers() {
    let server = start(mcp).await;
    let client = connect(&server).await;
    assert_eq!(
        client.handshake().unwrap().protocol_version(),
        Some("2025-06-18")
    );
    assert_eq!(
        client.list_tools().await.unwrap(),
        [json!({"name": "echo"})]
    );
    let out = client.call_tool("echo", json!({"a": 1})).await.unwrap();
    assert_eq!(out.output, ToolOutput::Structured(json!({"a": 1})));
    client.close().await;
    client.close().await;
    let err = client.list_tools().await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::TransportClosed);

    let posts = server.posts();
    let methods: Vec<&str> = posts.iter().map(Seen::rpc).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            ""
        ]
    );
    assert_eq!(
        posts[4].body,
        json!({"jsonrpc": "2.0", "id": "srv-ping", "result": {}})
    );
    for post in &posts {
        assert_eq!(post.header("content-type"), Some("application/json"));
        let accept = post.header("accept").unwrap();
        assert!(accept.contains("application/json") && accept.contains("text/event-stream"));
    }
    assert_eq!(posts[0].header("mcp-session-id"), None);
    assert_eq!(posts[0].header("mcp-protocol-version"), None);
    let seen = server.seen();
    for later in &seen[1..] {
        assert_eq!(later.header("mcp-session-id"), Some("s-1"), "{later:?}");
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-06-18"));
    }
    assert!(
        seen.iter().any(|s| s.method == "GET"),
        "the GET stream was tried"
    );
    let deletes: Vec<&Seen> = seen.iter().filter(|s| s.method == "DELETE").collect();
    assert_eq!(deletes.len(), 1, "one DELETE, even when closed twice");
    assert_eq!(seen.last().unwrap().method, "DELETE");
}

#[tokio::test]
async fn a_delete_refused_with_405_is_fine_and_no_session_means_no_delete() {
    let server = start(|req, h| match req.method.as_str() {
        "DELETE" => Reply::Status(405),
        _ => mcp(req, h),
    })
    .await;
    let client = connect(&server).await;
    client.close().await;
    server
        .wait_for("a DELETE", |l| l.seen.iter().any(|s| s.method == "DELETE"))
        .await;

    let server = start(|req, h| match req.rpc() {
        "initialize" => Reply::Json(
            200,
            None,
            result(
                req,
                json!({"protocolVersion": "2025-03-26", "capabilities": {"tools": {}}}),
            ),
        ),
        _ => mcp(req, h),
    })
    .await;
    let client = connect(&server).await;
    client.list_tools().await.unwrap();
    client.close().await;
    let seen = server.seen();
    assert!(seen.iter().all(|s| s.method != "DELETE"));
    assert!(seen.iter().all(|s| s.header("mcp-session-id").is_none()));
    assert_eq!(seen[1].header("mcp-protocol-version"), Some("2025-03-26"));
}

#[tokio::test]
async fn plain_http_to_a_remote_host_is_refused_before_any_traffic() {
    for url in [
        "http://example.invalid/mcp",
        "ftp://127.0.0.1/mcp",
        "::not a url",
    ] {
        let started = Instant::now();
        let result = Client::connect_http(url, HttpOptions::default(), options()).await;
        let err = result.err().expect("refused");
        assert_eq!(err.kind, ErrorKind::InsecureUrl, "{url}: {err}");
        assert!(started.elapsed() < Duration::from_millis(200));
    }
}

#[tokio::test]
async fn the_bearer_token_is_sent_but_never_shown() {
    let server = start(|req, h| match req.rpc() {
        "tools/list" => Reply::Json(401, None, json!({"echo": req.header("authorization")})),
        _ => mcp(req, h),
    })
    .await;
    let http = HttpOptions {
        bearer_token: Some(BearerToken::new("tok-SECRET-42")),
        ..HttpOptions::default()
    };
    let client = Client::connect_http(&server.url, http, options())
        .await
        .unwrap();
    let err = client.list_tools().await.unwrap_err();
    assert_eq!((err.kind, err.status), (ErrorKind::HttpStatus, Some(401)));
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    client.close().await;
    for seen in server.seen() {
        assert_eq!(
            seen.header("authorization"),
            Some("Bearer tok-SECRET-42"),
            "{seen:?}"
        );
    }
}

#[tokio::test]
async fn a_timeout_or_cancel_drops_the_request_and_announces_it() {
    let server = start(mcp).await;
    let options = ClientOptions {
        request_timeout: Duration::from_millis(300),
        ..options()
    };
    let client = Client::connect_http(&server.url, HttpOptions::default(), options)
        .await
        .unwrap();
    let err = client.call_tool("slow", json!({})).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Timeout);
    let cancel = tokio::time::sleep(Duration::from_millis(50));
    let err = client
        .call_tool_cancellable("slow", json!({}), cancel)
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Cancelled);
    server
        .wait_for("both connections dropped", |l| l.dropped == 2)
        .await;
    server
        .wait_for("two notifications/cancelled", |l| {
            let slow: Vec<&Value> = l
                .seen
                .iter()
                .filter(|s| s.body["params"]["name"] == "slow")
                .map(|s| &s.body["id"])
                .collect();
            let told: Vec<&Value> = l
                .seen
                .iter()
                .filter(|s| s.rpc() == "notifications/cancelled")
                .map(|s| &s.body["params"]["requestId"])
                .collect();
            slow.len() == 2 && told == slow
        })
        .await;
    assert!(client.list_tools().await.is_ok(), "still usable");
    client.close().await;
}

#[tokio::test]
async fn a_404_for_the_session_starts_a_new_one() {
    let server = start(|req, h| {
        let lists = h.iter().filter(|s| s.rpc() == "tools/list").count();
        match req.rpc() {
            "tools/list" if lists == 1 => Reply::Status(404),
            _ => mcp(req, h),
        }
    })
    .await;
    let client = connect(&server).await;
    let err = client.list_tools().await.unwrap_err();
    assert_eq!((err.kind, err.status), (ErrorKind::HttpStatus, Some(404)));
    client.list_tools().await.unwrap();
    client.close().await;
    let posts: Vec<(String, Option<String>)> = server
        .posts()
        .iter()
        .map(|s| {
            (
                s.rpc().to_owned(),
                s.header("mcp-session-id").map(str::to_owned),
            )
        })
        .collect();
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        posts,
        [
            ("initialize".into(), None),
            ("notifications/initialized".into(), s("s-1")),
            ("tools/list".into(), s("s-1")),
            ("initialize".into(), None),
            ("notifications/initialized".into(), s("s-2")),
            ("tools/list".into(), s("s-2")),
        ]
    );
    let delete = server
        .seen()
        .into_iter()
        .find(|s| s.method == "DELETE")
        .unwrap();
    assert_eq!(delete.header("mcp-session-id"), Some("s-2"));
}

#[tokio::test]
async fn bad_answers_fail_one_request_each() {
    let server = start(|req, h| match req.body["params"]["name"].as_str() {
        Some("plain") => Reply::Raw("text/plain", "hello"),
        Some("garbage") => Reply::Raw("application/json", "{\"not\": \"json-rpc\"}"),
        Some("cut") => Reply::Sse(vec![json!({"jsonrpc": "2.0", "method": "notifications/x"})]),
        Some("boom") => Reply::Status(500),
        _ => mcp(req, h),
    })
    .await;
    let client = connect(&server).await;
    for (tool, kind) in [
        ("plain", ErrorKind::InvalidResponse),
        ("garbage", ErrorKind::InvalidResponse),
        ("cut", ErrorKind::TransportClosed),
        ("boom", ErrorKind::HttpStatus),
    ] {
        let err = client.call_tool(tool, json!({})).await.unwrap_err();
        assert_eq!(err.kind, kind, "{tool}: {err}");
    }
    assert!(client.list_tools().await.is_ok(), "still usable");
    client.close().await;
}

#[tokio::test]
async fn a_bad_element_of_a_batch_is_skipped_and_the_rest_delivered() {
    let server = start(|req, h| {
        let bad = json!({"no": "jsonrpc"});
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message"});
        let ours = result(req, json!({"content": [{"type": "text", "text": "ok"}]}));
        match req.body["params"]["name"].as_str() {
            Some("json") => Reply::Json(200, None, json!([bad, note, ours])),
            Some("sse") => Reply::Sse(vec![json!([bad, ours])]),
            Some("json-none") => Reply::Json(200, None, json!([note, bad])),
            Some("sse-none") => Reply::Sse(vec![json!([bad, note])]),
            _ => mcp(req, h),
        }
    })
    .await;
    let client = connect(&server).await;
    for tool in ["json", "sse"] {
        let got = client.call_tool(tool, json!({})).await;
        assert_eq!(
            got.map(|r| r.output),
            Ok(ToolOutput::Text(vec!["ok".into()])),
            "{tool}"
        );
    }
    // Nothing in the frame answers the request: it fails, naming the bad element.
    for tool in ["json-none", "sse-none"] {
        let err = client.call_tool(tool, json!({})).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidResponse, "{tool}: {err}");
        assert!(err.message.contains("jsonrpc"), "{tool}: {err}");
    }
    client.close().await;
}

#[tokio::test]
async fn only_same_origin_307_and_308_redirects_are_followed() {
    let server = start(|req, h| {
        let calls = h.iter().filter(|s| s.rpc() == "tools/call").count();
        let url = req.header("host").map(|host| format!("http://{host}/mcp"));
        let to = |target: &str| target.replace("{same}", &url.clone().unwrap_or_default());
        match (req.body["params"]["name"].as_str(), calls % 2) {
            // A same-origin 307/308 once, then the answer.
            (Some("moved-307"), 1) => Reply::Redirect(307, to("{same}")),
            (Some("moved-308"), 1) => Reply::Redirect(308, to("{same}?again")),
            (Some("moved-301"), _) => Reply::Redirect(301, to("{same}")),
            (Some("loop"), _) => Reply::Redirect(307, to("{same}")),
            (Some("downgrade"), _) => Reply::Redirect(307, "http://mcp-harness.invalid/mcp".into()),
            (Some("elsewhere"), _) => {
                Reply::Redirect(308, "https://mcp-harness.invalid/mcp".into())
            }
            (Some("other-scheme"), _) => {
                Reply::Redirect(307, to("{same}").replace("http:", "https:"))
            }
            _ => mcp(req, h),
        }
    })
    .await;
    let client = connect(&server).await;
    let calls_of = |tool: &str| -> Vec<Seen> {
        let posts = server.posts().into_iter();
        posts.filter(|s| s.body["params"]["name"] == tool).collect()
    };
    for tool in ["moved-307", "moved-308"] {
        let out = client.call_tool(tool, json!({"n": 1})).await;
        assert!(out.is_ok(), "{tool}: {out:?}");
        let posts = calls_of(tool);
        assert_eq!(posts.len(), 2, "{tool}: followed once");
        assert_eq!(posts[0].body, posts[1].body, "{tool}: same body");
        assert!(posts[1].header("mcp-session-id").is_some());
    }
    for (tool, kind, status, posts) in [
        ("moved-301", ErrorKind::HttpStatus, Some(301), 1),
        ("loop", ErrorKind::HttpStatus, Some(307), 4),
        ("downgrade", ErrorKind::InsecureUrl, None, 1),
        ("elsewhere", ErrorKind::InsecureUrl, None, 1),
        ("other-scheme", ErrorKind::InsecureUrl, None, 1),
    ] {
        let err = client.call_tool(tool, json!({})).await.unwrap_err();
        assert_eq!((err.kind, err.status), (kind, status), "{tool}: {err}");
        assert_eq!(calls_of(tool).len(), posts, "{tool}");
        if kind == ErrorKind::InsecureUrl {
            assert!(err.message.contains("mcp-harness.invalid") || tool == "other-scheme");
        }
    }
    assert!(client.list_tools().await.is_ok(), "still usable");
    client.close().await;

    let mut follow = Defects::default();
    assert!(follow.enable("follow-redirects"));
    let lax = ClientOptions {
        defects: follow,
        ..options()
    };
    let client = Client::connect_http(&server.url, HttpOptions::default(), lax)
        .await
        .unwrap();
    let err = client.call_tool("downgrade", json!({})).await.unwrap_err();
    assert_ne!(err.kind, ErrorKind::InsecureUrl, "{err}");
    client.close().await;
}

#[tokio::test]
async fn the_server_stream_is_served_and_resumed() {
    let server = start(|req, h| {
        let gets = h.iter().filter(|s| s.method == "GET").count();
        match (req.method.as_str(), gets) {
            ("GET", 1) => Reply::SseText(
                "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"g-1\",\"method\":\"ping\"}\n\n".into(),
            ),
            ("GET", _) => Reply::Status(405),
            _ => mcp(req, h),
        }
    })
    .await;
    let client = connect(&server).await;
    server
        .wait_for("a second GET", |l| {
            l.seen.iter().filter(|s| s.method == "GET").count() == 2
        })
        .await;
    client.close().await;
    let seen = server.seen();
    assert!(
        seen.iter()
            .any(|s| s.body == json!({"jsonrpc": "2.0", "id": "g-1", "result": {}}))
    );
    let again = seen.iter().filter(|s| s.method == "GET").nth(1).unwrap();
    assert_eq!(again.header("last-event-id"), Some("e1"));
    assert_eq!(again.header("mcp-session-id"), Some("s-1"));
    assert_eq!(again.header("accept"), Some("text/event-stream"));
}

#[tokio::test]
async fn tls_failures_and_refused_connections_are_told_apart() {
    // Not a TLS server: whatever it answers breaks the handshake.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        }
    });
    let url = format!("https://{addr}/mcp");
    let err = Client::connect_http(&url, HttpOptions::default(), options())
        .await
        .err()
        .unwrap();
    assert_eq!(err.kind, ErrorKind::Tls, "{err}");

    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let err = Client::connect_http(&url, HttpOptions::default(), options())
        .await
        .err()
        .unwrap();
    assert_eq!(err.kind, ErrorKind::TransportClosed, "{err}");
}

#[tokio::test]
async fn http_defects_change_the_wire() {
    let server = start(mcp).await;
    let mut defects = Defects::default();
    for name in [
        "no-session-id",
        "no-protocol-version-header",
        "no-bearer",
        "no-delete",
        "json-only",
    ] {
        assert!(defects.enable(name));
    }
    let http = HttpOptions {
        bearer_token: Some(BearerToken::new("t")),
        ..HttpOptions::default()
    };
    let client = Client::connect_http(
        &server.url,
        http,
        ClientOptions {
            defects,
            ..options()
        },
    )
    .await
    .unwrap();
    let err = client.call_tool("echo", json!({})).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::InvalidResponse);
    client.close().await;
    let seen = server.seen();
    assert!(seen.iter().all(|s| s.method != "DELETE"));
    for s in &seen {
        assert_eq!(s.header("authorization"), None);
        assert_eq!(s.header("mcp-session-id"), None);
        assert_eq!(s.header("mcp-protocol-version"), None);
    }
    let mut late = Defects::default();
    late.enable("late-initialized");
    let server = start(mcp).await;
    let options_late = ClientOptions {
        defects: late,
        ..options()
    };
    let client = Client::connect_http(&server.url, HttpOptions::default(), options_late)
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    client.close().await;
    let order: Vec<String> = server.posts().iter().map(|s| s.rpc().to_owned()).collect();
    assert_eq!(
        order,
        ["initialize", "tools/list", "notifications/initialized"]
    );

    let mut lax = Defects::default();
    lax.enable("allow-insecure-http");
    let options = ClientOptions {
        defects: lax,
        ..options()
    };
    let err = Client::connect_http(
        "http://example.invalid/mcp",
        HttpOptions::default(),
        options,
    )
    .await
    .err()
    .unwrap();
    assert_eq!(err.kind, ErrorKind::TransportClosed, "{err}");
}

#[tokio::test]
async fn the_driver_speaks_http() {
    let server = start(|req, h| match req.rpc() {
        "tools/list" => Reply::Status(401),
        _ => mcp(req, h),
    })
    .await;
    let plan = json!([{"op": "connect"}, {"op": "list_tools"},
                      {"op": "call_tool", "name": "echo", "arguments": {"x": 2}}, {"op": "close"}]);
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-harness-driver"))
        .arg(&server.url)
        .env("MCP_HARNESS_CONTRACT", "1")
        .env("MCP_HARNESS_TRANSPORT", "http")
        .env_remove("MCP_HARNESS_SERVER_URL")
        .env("MCP_HARNESS_BEARER_TOKEN", "drv-SECRET")
        .env("MCP_HARNESS_PLAN", plan.to_string())
        .env("MCP_HARNESS_TIMEOUT_MS", "2000")
        .env("MCP_HARNESS_PROTOCOL_VERSION", "2025-03-26")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("SECRET"), "{stderr}");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["ok"]["protocolVersion"], "2025-03-26");
    assert_eq!(lines[1]["error"]["kind"], "http_status");
    assert_eq!(lines[1]["error"]["status"], 401);
    assert_eq!(lines[2]["ok"]["structured"], json!({"x": 2}));
    assert_eq!(lines[3]["ok"], json!({}));
    let seen = server.seen();
    assert!(
        seen.iter()
            .all(|s| s.header("authorization") == Some("Bearer drv-SECRET"))
    );
    assert_eq!(seen.last().unwrap().method, "DELETE");
}
