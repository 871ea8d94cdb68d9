//! Tasks as the requestor, against a small scriptable Python stdio server playing one task
//! per creating call (legacy 2025-11-25 and the 2026-07-28 extension): augmentation by
//! capability and `taskSupport`, polling at the suggested interval, `tasks/result` and its
//! input requests with the related-task `_meta`, modern `tasks/update`, failures, a task the
//! server cancels, the caller's cancel and maximum time, the background mode and the task
//! ops. Each behaviour is also seen bent by its defect flag.

use std::time::Duration;

use mcp_harness_client::{
    Client, ClientOptions, Defects, Era, ErrorKind, Handlers, InputHandler, StdioCommand, TaskCall,
    TaskOptions, ToolOutput,
};
use serde_json::{Value, json};

/// argv[1]: the configuration (JSON): `mode` (`legacy`, `modern`), `caps` (legacy task
/// capability, default all), `tools` (the listing), `poll_ms`, `phases` (`[status, ms]`,
/// the last lasting forever; `input_required` lasts until answered, then `settle_ms`),
/// `result` or `error`. Tool `seen` answers with every message received; any other tool
/// creates a task when asked for one (legacy `params.task`, modern the extension in `_meta`),
/// else answers plainly.
const SCRIPT: &str = r#"
import json, sys, time
cfg = json.loads(sys.argv[1])
modern = cfg["mode"] == "modern"
seen, tasks = [], {}
RT = "io.modelcontextprotocol/related-task"
def send(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
def read():
    line = sys.stdin.readline()
    if not line: sys.exit(0)
    m = json.loads(line); seen.append(m); return m
def result(mid, r):
    if modern and "resultType" not in r: r = dict(r, resultType="complete")
    send({"jsonrpc": "2.0", "id": mid, "result": r})
def error(mid, code, msg):
    send({"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": msg}})
def status(t):
    if t["cancelled"]: return "cancelled"
    at = t["start"]
    for i, (st, ms) in enumerate(cfg["phases"]):
        last = i == len(cfg["phases"]) - 1
        if st == "input_required":
            if t["answered"] is None or last: return st
            if time.time() < t["answered"] + cfg.get("settle_ms", 0) / 1000.0: return st
            at = t["answered"] + cfg.get("settle_ms", 0) / 1000.0
            continue
        if last or time.time() < at + ms / 1000.0: return st
        at += ms / 1000.0
    return cfg["phases"][-1][0]
def view(t, detailed):
    st = status(t)
    v = {"taskId": t["id"], "status": st, "createdAt": "2026-01-01T00:00:00Z",
         "lastUpdatedAt": "2026-01-01T00:00:00Z"}
    v["ttlMs" if modern else "ttl"] = 60000
    if "poll_ms" in cfg: v["pollIntervalMs" if modern else "pollInterval"] = cfg["poll_ms"]
    if modern and detailed:
        if st == "input_required":
            v["inputRequests"] = {"confirm": {"method": "elicitation/create",
                "params": {"message": "ok?", "requestedSchema": {"type": "object"}}}}
        if st == "completed": v["result"] = cfg.get("result")
        if st == "failed": v["error"] = cfg.get("error")
    return v
def find(mid, params):
    t = tasks.get(params.get("taskId"))
    if t is None: error(mid, -32602, "no such task")
    return t
while True:
    m = read()
    method, mid, params = m.get("method"), m.get("id"), m.get("params") or {}
    if method is None or mid is None: continue
    if method == "initialize":
        caps = {"tools": {}, "tasks": cfg.get("caps", {"list": {}, "cancel": {},
                "requests": {"tools": {"call": {}}}})}
        result(mid, {"protocolVersion": params["protocolVersion"], "capabilities": caps,
                     "serverInfo": {"name": "py"}})
    elif method == "server/discover":
        result(mid, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {},
                     "extensions": {"io.modelcontextprotocol/tasks": {}}}})
    elif method == "tools/list":
        result(mid, {"tools": cfg.get("tools", [])})
    elif method == "tools/call" and params.get("name") == "seen":
        result(mid, {"content": [], "structuredContent": {"messages": seen}})
    elif method == "tools/call":
        caps = (params.get("_meta") or {}).get("io.modelcontextprotocol/clientCapabilities") or {}
        wants = "io.modelcontextprotocol/tasks" in (caps.get("extensions") or {}) if modern \
            else "task" in params
        if not wants:
            result(mid, {"content": [{"type": "text", "text": "plain"}]}); continue
        tid = "task-%d" % (len(tasks) + 1)
        t = tasks[tid] = {"id": tid, "start": time.time(), "answered": None, "cancelled": False}
        if modern: result(mid, dict(view(t, False), resultType="task"))
        else: result(mid, {"task": view(t, False)})
    elif method == "tasks/get":
        t = find(mid, params)
        if t: result(mid, view(t, True))
    elif method == "tasks/update":
        t = find(mid, params)
        if t:
            if "confirm" in (params.get("inputResponses") or {}) and t["answered"] is None:
                t["answered"] = time.time()
            result(mid, {})
    elif method == "tasks/cancel":
        t = find(mid, params)
        if t:
            t["cancelled"] = True
            result(mid, {} if modern else view(t, False))
    elif method == "tasks/list":
        result(mid, {"tasks": [view(t, False) for t in tasks.values()]})
    elif method == "tasks/result":
        t = find(mid, params)
        if not t: continue
        while status(t) not in ("completed", "failed", "cancelled"):
            if status(t) == "input_required" and t["answered"] is None:
                send({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                      "params": {"message": "ok?", "requestedSchema": {"type": "object"},
                                 "_meta": {RT: {"taskId": t["id"]}}}})
                while "method" in read(): pass
                t["answered"] = time.time()
            time.sleep(0.01)
        if cfg.get("error"): error(mid, cfg["error"]["code"], cfg["error"]["message"])
        else:
            r = dict(cfg.get("result") or {}); r["_meta"] = {RT: {"taskId": t["id"]}}
            result(mid, r)
"#;

const RELATED: &str = "io.modelcontextprotocol/related-task";

fn options(defects: &[&str], era: Era) -> ClientOptions {
    let mut d = Defects::default();
    for name in defects {
        assert!(d.enable(name), "{name}");
    }
    let handlers = json!({"elicitation/create": {"action": "accept", "content": {"ok": true}}});
    let Value::Object(handlers) = handlers else {
        unreachable!()
    };
    ClientOptions {
        protocol_version: match era {
            Era::Modern => "2026-07-28".into(),
            _ => "2025-11-25".into(),
        },
        era,
        request_timeout: Duration::from_secs(3),
        shutdown_grace: Duration::from_millis(200),
        handlers: Handlers::from_json(&handlers).expect("handlers"),
        defects: d,
        ..ClientOptions::default()
    }
}

async fn connect(config: Value, defects: &[&str]) -> Client {
    let era = match config["mode"].as_str() {
        Some("modern") => Era::Modern,
        _ => Era::Legacy,
    };
    let argv = vec![
        "python3".into(),
        "-c".into(),
        SCRIPT.into(),
        config.to_string(),
    ];
    let server = StdioCommand::from_argv(argv).expect("argv");
    Client::connect_stdio(&server, options(defects, era))
        .await
        .expect("connects")
}

/// Every message the server received, by method (the `seen` call left out).
async fn seen(client: &Client) -> Vec<Value> {
    let out = client.call_tool("seen", json!({})).await.expect("seen");
    let ToolOutput::Structured(all) = out.output else {
        panic!("structured")
    };
    client.close().await;
    all["messages"].as_array().cloned().unwrap_or_default()
}

fn sent<'a>(messages: &'a [Value], method: &str) -> Vec<&'a Value> {
    messages.iter().filter(|m| m["method"] == method).collect()
}

fn text(call: TaskCall) -> Vec<String> {
    match call {
        TaskCall::Done(done) => match done.output {
            ToolOutput::Text(texts) => texts,
            other => panic!("text expected, got {other:?}"),
        },
        TaskCall::Task(task) => panic!("a task came back: {task}"),
    }
}

fn done() -> Value {
    json!({"content": [{"type": "text", "text": "done"}]})
}

fn legacy(phases: Value) -> Value {
    json!({"mode": "legacy", "poll_ms": 50, "phases": phases, "result": done(),
        "tools": [{"name": "slow", "inputSchema": {"type": "object"},
                   "execution": {"taskSupport": "optional"}},
                  {"name": "must", "inputSchema": {"type": "object"},
                   "execution": {"taskSupport": "required"}}]})
}

async fn as_task(client: &Client, name: &str, options: &TaskOptions) -> Result<TaskCall, String> {
    let input = InputHandler::new();
    let called = client.call_tool_as_task(name, json!({}), options, &input, std::future::pending());
    called
        .await
        .map_err(|e| format!("{}: {}", e.kind, e.message))
}

#[tokio::test]
async fn legacy_augments_by_capability_and_task_support() {
    for (defects, tool, augmented) in [
        (&[][..], "must", true),
        (&["task-ignore-required"][..], "must", false),
    ] {
        let client = connect(legacy(json!([["working", 60], ["completed", 0]])), defects).await;
        client.list_tools().await.expect("listed");
        let out = client.call_tool(tool, json!({})).await.expect("called");
        let expected = if augmented { "done" } else { "plain" };
        assert_eq!(
            out.output,
            ToolOutput::Text(vec![expected.into()]),
            "{defects:?}"
        );
        let messages = seen(&client).await;
        let call = sent(&messages, "tools/call")[0];
        assert_eq!(
            call["params"].get("task").is_some(),
            augmented,
            "{defects:?}"
        );
    }
    // Not declared: never augmented, even when the caller accepts a task.
    let mut config = legacy(json!([["completed", 0]]));
    config["caps"] = json!({});
    for (defects, augmented) in [(&[][..], false), (&["task-ignore-capability"][..], true)] {
        let client = connect(config.clone(), defects).await;
        client.list_tools().await.expect("listed");
        let got = as_task(&client, "slow", &TaskOptions::default())
            .await
            .unwrap();
        let expected = if augmented { "done" } else { "plain" };
        assert_eq!(text(got), [expected], "{defects:?}");
        let messages = seen(&client).await;
        let call = sent(&messages, "tools/call")[0];
        assert_eq!(
            call["params"].get("task").is_some(),
            augmented,
            "{defects:?}"
        );
    }
}

#[tokio::test]
async fn legacy_polls_at_the_interval_and_answers_input_with_the_related_task() {
    let phases = json!([
        ["working", 300],
        ["input_required", 0],
        ["working", 50],
        ["completed", 0]
    ]);
    for defects in [&[][..], &["task-busy-poll"], &["task-no-related-meta"]] {
        let client = connect(legacy(phases.clone()), defects).await;
        client.list_tools().await.expect("listed");
        let options = TaskOptions {
            ttl_ms: Some(30000),
            ..TaskOptions::default()
        };
        let got = as_task(&client, "slow", &options).await.unwrap();
        assert_eq!(text(got), ["done"]);
        let events = client.events(0).await;
        assert_eq!(events[0]["method"], "elicitation/create", "{events:?}");
        let messages = seen(&client).await;
        assert_eq!(
            sent(&messages, "tools/call")[0]["params"]["task"],
            json!({"ttl": 30000})
        );
        let polls = sent(&messages, "tasks/get").len();
        match defects {
            ["task-busy-poll"] => assert!(polls > 20, "{polls} polls"),
            _ => assert!(
                (3..=8).contains(&polls),
                "{polls} polls at 50 ms over 300 ms"
            ),
        }
        assert_eq!(sent(&messages, "tasks/result").len(), 1);
        let answer = messages.iter().find(|m| m["id"] == "e1").expect("answered");
        assert_eq!(answer["result"]["action"], "accept");
        let related = answer["result"]["_meta"].get(RELATED);
        match defects {
            ["task-no-related-meta"] => assert_eq!(related, None),
            _ => assert_eq!(related, Some(&json!({"taskId": "task-1"}))),
        }
        for poll in sent(&messages, "tasks/get") {
            assert_eq!(poll["params"], json!({"taskId": "task-1"}));
        }
    }
}

#[tokio::test]
async fn legacy_failures_and_a_task_the_server_cancelled() {
    let mut config = legacy(json!([["failed", 0]]));
    config["error"] = json!({"code": -32603, "message": "boom"});
    let client = connect(config, &[]).await;
    client.list_tools().await.expect("listed");
    let e = client.call_tool("must", json!({})).await.unwrap_err();
    assert_eq!((e.kind, e.code), (ErrorKind::ProtocolError, Some(-32603)));
    client.close().await;
    let client = connect(legacy(json!([["working", 30], ["cancelled", 0]])), &[]).await;
    client.list_tools().await.expect("listed");
    let e = client.call_tool("must", json!({})).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cancelled, "{}", e.message);
    let messages = seen(&client).await;
    assert!(sent(&messages, "tasks/cancel").is_empty());
}

#[tokio::test]
async fn cancelling_or_timing_out_a_task_is_tasks_cancel() {
    for (defects, timeout) in [
        (&[][..], false),
        (&[][..], true),
        (&["task-cancel-notification"][..], false),
    ] {
        let client = connect(legacy(json!([["working", 0]])), defects).await;
        client.list_tools().await.expect("listed");
        let options = TaskOptions {
            max_time: timeout.then_some(Duration::from_millis(150)),
            ..TaskOptions::default()
        };
        let cancel = async {
            match timeout {
                true => std::future::pending().await,
                false => tokio::time::sleep(Duration::from_millis(150)).await,
            }
        };
        let input = InputHandler::new();
        let called = client.call_tool_as_task("slow", json!({}), &options, &input, cancel);
        let e = called.await.unwrap_err();
        let kind = if timeout {
            ErrorKind::Timeout
        } else {
            ErrorKind::Cancelled
        };
        assert_eq!(e.kind, kind, "{}", e.message);
        let messages = seen(&client).await;
        let call_id = &sent(&messages, "tools/call")[0]["id"];
        let notes = sent(&messages, "notifications/cancelled");
        match defects {
            ["task-cancel-notification"] => {
                assert_eq!(notes[0]["params"]["requestId"], *call_id);
                assert!(sent(&messages, "tasks/cancel").is_empty());
            }
            _ => {
                assert!(notes.is_empty(), "{notes:?}");
                let cancels = sent(&messages, "tasks/cancel");
                assert_eq!(cancels[0]["params"], json!({"taskId": "task-1"}));
            }
        }
    }
}

#[tokio::test]
async fn background_tasks_and_the_task_ops() {
    let client = connect(legacy(json!([["working", 100], ["completed", 0]])), &[]).await;
    client.list_tools().await.expect("listed");
    let background = TaskOptions {
        background: true,
        ..TaskOptions::default()
    };
    let TaskCall::Task(task) = as_task(&client, "slow", &background).await.unwrap() else {
        panic!("a task")
    };
    assert_eq!(
        (&task["taskId"], &task["status"]),
        (&json!("task-1"), &json!("working"))
    );
    let got = client.get_task("task-1").await.expect("got");
    assert_eq!(got["taskId"], "task-1");
    let listed = client.list_tasks().await.expect("listed");
    assert_eq!(listed.len(), 1);
    let outcome = client.task_result("task-1").await.expect("result");
    assert_eq!(outcome.output, ToolOutput::Text(vec!["done".into()]));
    client.cancel_task("task-1").await.expect("cancelled");
    let e = client.get_task("task-9").await.unwrap_err();
    assert_eq!((e.kind, e.code), (ErrorKind::ProtocolError, Some(-32602)));
    client.close().await;
}

fn modern(phases: Value) -> Value {
    json!({"mode": "modern", "poll_ms": 50, "phases": phases, "result": done(),
        "settle_ms": 150})
}

#[tokio::test]
async fn modern_declares_the_extension_and_answers_each_input_key_once() {
    let phases = json!([
        ["working", 60],
        ["input_required", 0],
        ["working", 30],
        ["completed", 0]
    ]);
    for defects in [&[][..], &["task-answer-twice"]] {
        let client = connect(modern(phases.clone()), defects).await;
        let got = as_task(&client, "slow", &TaskOptions::default())
            .await
            .unwrap();
        assert_eq!(text(got), ["done"]);
        let messages = seen(&client).await;
        let call = sent(&messages, "tools/call")[0];
        let caps = &call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert_eq!(
            caps["extensions"]["io.modelcontextprotocol/tasks"],
            json!({})
        );
        let updates = sent(&messages, "tasks/update");
        assert_eq!(
            updates[0]["params"]["inputResponses"]["confirm"]["action"],
            "accept"
        );
        match defects {
            [] => assert_eq!(updates.len(), 1),
            _ => assert!(updates.len() > 1, "{}", updates.len()),
        }
        assert!(sent(&messages, "tasks/result").is_empty());
    }
    // A plain call declares nothing and gets a plain answer.
    let client = connect(modern(json!([["completed", 0]])), &[]).await;
    let out = client.call_tool("slow", json!({})).await.expect("plain");
    assert_eq!(out.output, ToolOutput::Text(vec!["plain".into()]));
    client.close().await;
}

#[tokio::test]
async fn a_failed_modern_task_is_its_error() {
    let mut config = modern(json!([["working", 30], ["failed", 0]]));
    config["error"] = json!({"code": -32603, "message": "boom"});
    for defects in [&[][..], &["task-failed-as-ok"]] {
        let client = connect(config.clone(), defects).await;
        let got = as_task(&client, "slow", &TaskOptions::default()).await;
        match defects {
            [] => assert!(
                got.unwrap_err().starts_with("protocol_error"),
                "{defects:?}"
            ),
            _ => assert_eq!(text(got.unwrap()), Vec::<String>::new()),
        }
        client.close().await;
    }
}

#[tokio::test]
async fn the_defects_that_never_see_the_end_or_tag_their_polls() {
    let phases = json!([["working", 60], ["input_required", 0], ["completed", 0]]);
    let bounded = TaskOptions {
        max_time: Some(Duration::from_millis(600)),
        ..TaskOptions::default()
    };
    for defects in [
        &[][..],
        &["task-poll-through-input"],
        &["task-wait-for-status"],
        &["task-meta-on-polls"],
    ] {
        let client = connect(legacy(phases.clone()), defects).await;
        client.list_tools().await.expect("listed");
        let got = as_task(&client, "slow", &bounded).await;
        let messages = seen(&client).await;
        let polls = sent(&messages, "tasks/get");
        match defects {
            ["task-poll-through-input"] => {
                assert!(got.unwrap_err().starts_with("timeout"));
                assert!(sent(&messages, "tasks/result").is_empty());
                assert!(polls.len() > 3, "{}", polls.len());
            }
            ["task-wait-for-status"] => {
                assert!(got.unwrap_err().starts_with("timeout"));
                assert!(polls.is_empty(), "{polls:?}");
            }
            _ => {
                assert_eq!(text(got.unwrap()), ["done"]);
                let tagged = polls[0]["params"]["_meta"].get(RELATED).is_some();
                assert_eq!(tagged, defects == ["task-meta-on-polls"]);
            }
        }
    }
}
