//! The HTTP fake playing a 2025-11-25 task: `tasks/result` answered as an SSE stream that
//! carries the task's input request, waits for the client's POSTed answer, then ends with
//! the outcome; status notifications on the standalone GET stream.

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_harness_scenarios::transcript::Event;
use serde_json::json;
use support::sse_messages;
use support::trial::Trial;

const RELATED: &str = "io.modelcontextprotocol/related-task";

#[tokio::test]
async fn a_task_result_streams_its_input_request_then_the_outcome() {
    let server = json!({
        "http": {"sessions": false, "get": "stream"},
        "tasks": [{"tool": "slow", "notify": true, "phases": [
            {"status": "working", "ms": 100},
            {"status": "input_required",
             "input_requests": {"confirm": {"method": "elicitation/create", "params": {}}}},
            {"status": "completed"}],
            "result": {"content": [{"type": "text", "text": "done"}]}}]
    });
    let trial = Arc::new(Trial::start("tasks-http", server, None).await);
    let listener = Arc::clone(&trial);
    let get = tokio::spawn(async move {
        let mut stream = support::connect(listener.fake.addr, listener.client.as_ref())
            .await
            .expect("connect");
        let headers = [("Accept", "text/event-stream")];
        let limit = Duration::from_millis(1500);
        support::request(&mut stream, "GET", "/mcp", &headers, "", limit).await
    });
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "slow", "task": {}}});
    let created = trial.post(&[], &call.to_string()).await;
    let created: serde_json::Value = serde_json::from_slice(&created.body).expect("JSON");
    assert_eq!(created["result"]["task"]["status"], "working");

    let waiter = Arc::clone(&trial);
    let result = tokio::spawn(async move {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/result",
                          "params": {"taskId": "task-1"}});
        waiter.post(&[], &body.to_string()).await
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!result.is_finished(), "tasks/result waits for the answer");
    let answer = json!({"jsonrpc": "2.0", "id": "task-1:confirm", "result": {"action": "decline"}});
    let accepted = trial.post(&[], &answer.to_string()).await;
    assert_eq!(accepted.status, 202);
    let streamed = result.await.expect("the tasks/result answer");
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    let messages = sse_messages(&streamed.text());
    assert_eq!(messages.len(), 2, "{}", streamed.text());
    assert_eq!(messages[0]["method"], "elicitation/create");
    assert_eq!(messages[0]["params"]["_meta"][RELATED]["taskId"], "task-1");
    assert_eq!(messages[1]["id"], 3);
    assert_eq!(messages[1]["result"]["_meta"][RELATED]["taskId"], "task-1");

    let got = get.await.expect("the GET");
    let statuses: Vec<String> = sse_messages(&got.text())
        .iter()
        .filter(|m| m["method"] == "notifications/tasks/status")
        .map(|m| m["params"]["status"].as_str().unwrap_or("?").to_owned())
        .collect();
    assert_eq!(statuses, ["input_required", "completed"], "{}", got.text());
    let trial = Arc::into_inner(trial).expect("one owner");
    let events = trial.finish().await;
    let at = |wanted: &dyn Fn(&Event) -> bool| events.iter().position(wanted).expect("recorded");
    let asked =
        at(&|e| matches!(e, Event::Sent { message } if message["method"] == "elicitation/create"));
    let answered = at(&|e| matches!(e, Event::Received { message } if *message == answer));
    let outcome = at(&|e| matches!(e, Event::Sent { message } if message["id"] == 3));
    assert!(asked < answered && answered < outcome, "{events:?}");
}

/// 2026-07-28 over HTTP: a call declaring the extension creates a task; `tasks/get` needs
/// `Mcp-Name` = the task id (else 400, -32020) and shows the result once completed.
#[tokio::test]
async fn a_modern_task_is_polled_with_its_id_as_mcp_name() {
    const V: &str = "2026-07-28";
    let server = json!({"era": "modern", "tasks": [{"tool": "slow", "phases": [
        {"status": "working", "ms": 50}, {"status": "completed"}],
        "result": {"content": [{"type": "text", "text": "done"}]}}]});
    let trial = Trial::start("tasks-modern-http", server, None).await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    let body = |id: u32, method: &str, params: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    let parsed = |r: &support::Reply| -> serde_json::Value {
        serde_json::from_slice(&r.body).expect("a JSON body")
    };
    let call = body(1, "tools/call", json!({"name": "slow", "_meta": meta}));
    let headers = [
        ("MCP-Protocol-Version", V),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "slow"),
    ];
    let created = parsed(&trial.post(&headers, &call).await);
    assert_eq!(created["result"]["resultType"], "task");
    assert_eq!(created["result"]["taskId"], "task-1");
    tokio::time::sleep(Duration::from_millis(80)).await;
    let get = body(2, "tasks/get", json!({"taskId": "task-1", "_meta": meta}));
    let mut headers = vec![("MCP-Protocol-Version", V), ("Mcp-Method", "tasks/get")];
    let refused = trial.post(&headers, &get).await;
    assert_eq!(refused.status, 400);
    assert_eq!(parsed(&refused)["error"]["code"], -32020);
    headers.push(("Mcp-Name", "task-1"));
    let polled = trial.post(&headers, &get).await;
    assert_eq!(polled.status, 200);
    let polled = parsed(&polled);
    assert_eq!(polled["result"]["resultType"], "complete");
    assert_eq!(polled["result"]["status"], "completed");
    assert_eq!(polled["result"]["result"]["content"][0]["text"], "done");
    trial.finish().await;
}
