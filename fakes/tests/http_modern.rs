//! The HTTP fake in the modern (2026-07-28) and dual eras, and playing a legacy revision:
//! `_meta` and header checks with their statuses, no sessions, and the revision's rules.

mod support;

use mcp_harness_scenarios::transcript::Event;
use serde_json::{Value, json};
use support::trial::{INIT, Trial, statuses};

const V: &str = "2026-07-28";

fn request(id: u32, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn meta(version: &str) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": version,
           "io.modelcontextprotocol/clientCapabilities": {}})
}

fn body(reply: &support::Reply) -> Value {
    serde_json::from_slice(&reply.body).expect("a JSON body")
}

#[tokio::test]
async fn a_modern_fake_checks_meta_versions_and_headers() {
    let server = json!({"era": "modern", "handlers": [
        {"method": "tools/call", "params": {"name": "echo"}, "reply": {"result": {"content": []}}}
    ]});
    let trial = Trial::start("modern", server, None).await;
    let headers = |method: &'static str| vec![("MCP-Protocol-Version", V), ("Mcp-Method", method)];
    let discover = request(1, "server/discover", json!({"_meta": meta(V)}));
    let found = trial.post(&headers("server/discover"), &discover).await;
    assert_eq!(found.status, 200, "{found:?}");
    let found = body(&found);
    assert_eq!(found["result"]["resultType"], "complete");
    assert_eq!(found["result"]["supportedVersions"], json!([V]));
    assert!(found.get("mcp-session-id").is_none());

    let bare = trial
        .post(&headers("tools/list"), &request(2, "tools/list", json!({})))
        .await;
    assert_eq!(
        (bare.status, body(&bare)["error"]["code"].clone()),
        (400, json!(-32602))
    );
    let old = request(3, "tools/list", json!({"_meta": meta("2025-11-25")}));
    let old = trial.post(&headers("tools/list"), &old).await;
    assert_eq!(old.status, 400);
    assert_eq!(body(&old)["error"]["data"]["supported"], json!([V]));
    assert_eq!(body(&old)["id"], 3);
    let init = trial.post(&headers("initialize"), INIT).await;
    assert_eq!(
        (init.status, body(&init)["error"]["code"].clone()),
        (404, json!(-32601))
    );

    let call = request(4, "tools/call", json!({"name": "echo", "_meta": meta(V)}));
    let nameless = trial.post(&headers("tools/call"), &call).await;
    assert_eq!(
        (nameless.status, body(&nameless)["error"]["code"].clone()),
        (400, json!(-32020))
    );
    let mut named = headers("tools/call");
    named.push(("Mcp-Name", "echo"));
    assert_eq!(trial.post(&named, &call).await.status, 200);
    assert_eq!(trial.send("GET", "/mcp", &[], "").await.status, 405);
    assert_eq!(trial.send("DELETE", "/mcp", &[], "").await.status, 405);

    let events = trial.finish().await;
    let recorded = events.iter().find_map(|e| match e {
        Event::HttpRequest { headers, .. } if headers.contains_key("mcp-name") => Some(headers),
        _ => None,
    });
    assert_eq!(
        recorded.expect("a recorded Mcp-Name")["mcp-method"],
        "tools/call"
    );
}

#[tokio::test]
async fn a_dual_fake_serves_both_eras() {
    let trial = Trial::start("dual", json!({"era": "dual"}), None).await;
    let discover = request(1, "server/discover", json!({"_meta": meta(V)}));
    let found = trial
        .post(
            &[
                ("MCP-Protocol-Version", V),
                ("Mcp-Method", "server/discover"),
            ],
            &discover,
        )
        .await;
    assert_eq!(found.status, 200, "{found:?}");
    let session = trial.initialize().await;
    assert!(!session.is_empty());
    trial.finish().await;
}

#[tokio::test]
async fn a_legacy_fake_follows_its_revision() {
    // 2025-03-26 had no MCP-Protocol-Version header: such a server never looks at it.
    let old = Trial::start_at(
        "rev-old",
        json!({"http": {"sessions": false}}),
        "2025-03-26",
    )
    .await;
    let discover = request(1, "server/discover", json!({"_meta": meta(V)}));
    let reply = old.post(&[("MCP-Protocol-Version", V)], &discover).await;
    assert_eq!(
        (reply.status, body(&reply)["error"]["code"].clone()),
        (200, json!(-32601))
    );
    // A newer offer is answered with the revision played.
    let init = request(
        2,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(
        body(&old.post(&[], &init).await)["result"]["protocolVersion"],
        "2025-03-26"
    );
    old.finish().await;

    let new = Trial::start_at(
        "rev-new",
        json!({"http": {"sessions": false}}),
        "2025-06-18",
    )
    .await;
    assert_eq!(
        new.post(&[("MCP-Protocol-Version", V)], &discover)
            .await
            .status,
        400
    );
    let events = new.finish().await;
    assert_eq!(statuses(&events), vec![("POST".to_owned(), 400)]);
}

/// `subscriptions/listen` is built in: an SSE stream that opens with the acknowledgement
/// (the subscription id, the filter asked for), carries the rule's messages naming the
/// subscription, and stays open until the client closes it, which is recorded.
#[tokio::test]
async fn listen_opens_a_subscription_stream() {
    let server = json!({"era": "modern", "handlers": [
        {"method": "subscriptions/listen", "reply": {"result": {"toolsListChanged": true}},
         "sends": [{"delay_ms": 50, "message": {"jsonrpc": "2.0",
                    "method": "notifications/tools/list_changed"}}]}
    ]});
    let trial = Trial::start("listen", server, None).await;
    let listen = request(
        7,
        "subscriptions/listen",
        json!({"_meta": meta(V), "notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
    );
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", support::trial::ACCEPT_BOTH),
        ("MCP-Protocol-Version", V),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    let mut stream = support::connect(trial.fake.addr, trial.client.as_ref())
        .await
        .expect("connect");
    let open = support::request(
        &mut stream,
        "POST",
        "/mcp",
        &headers,
        &listen,
        std::time::Duration::from_millis(600),
    )
    .await;
    assert_eq!(open.status, 200);
    assert!(!open.closed, "the subscription stays open");
    let messages = support::sse_messages(&open.text());
    assert_eq!(messages.len(), 2, "{}", open.text());
    assert_eq!(
        messages[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        messages[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    // The rule's result is the filter acknowledged.
    assert_eq!(
        messages[0]["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_eq!(messages[1]["method"], "notifications/tools/list_changed");
    assert_eq!(
        messages[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    drop(stream);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let events = trial.finish().await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::StreamClosed { id } if *id == 7)),
        "{events:?}"
    );
}
