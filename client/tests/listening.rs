//! What the server starts, against a small scriptable Python stdio server: the capabilities the
//! handlers imply, answers to server requests (modes, defaults, a delayed answer the server
//! cancels), `set_roots`, progress (tokens in flight only, the timeout restarted by progress
//! under a maximum), events, resource subscriptions, and 2026-07-28 listen streams (correlated
//! by subscription id, re-sent after a restart, ending the cache of a changed list). Each
//! behaviour is also seen bent by its defect flag.

use std::time::Duration;

use mcp_harness_client::{
    Client, ClientOptions, Defects, Era, ErrorKind, Handlers, InputHandler, StdioCommand,
    ToolOutput,
};
use serde_json::{Value, json};

/// argv: MODE (`legacy`, `subscribe`: legacy declaring `resources.subscribe`, `modern`).
/// Tool `script` plays `before` (messages, or `{"sleep": ms}`), reads `wait` responses from the
/// client, answers with them (and the progress token it got), then plays `after`. `$token`,
/// `$id` and `$listen` in a message are the call's progress token, its id and the latest
/// listen request's id. Tool `seen` answers with every message received; `exit` exits.
const SCRIPT: &str = r#"
import json, sys, time
mode = sys.argv[1]
modern = mode == "modern"
seen, listens = [], []
def send(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()
def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    m = json.loads(line)
    seen.append(m)
    return m
def subst(o, token, rid):
    if o == "$token": return token
    if o == "$id": return rid
    if o == "$listen": return listens[-1] if listens else None
    if isinstance(o, dict): return {k: subst(v, token, rid) for k, v in o.items()}
    if isinstance(o, list): return [subst(v, token, rid) for v in o]
    return o
def play(items, token, rid):
    for it in items:
        if "sleep" in it:
            time.sleep(it["sleep"] / 1000.0)
        else:
            send(subst(it, token, rid))
def result(mid, r):
    if modern:
        r = dict(r, resultType="complete")
    send({"jsonrpc": "2.0", "id": mid, "result": r})
while True:
    m = read()
    method, mid, params = m.get("method"), m.get("id"), m.get("params") or {}
    if method is None or mid is None:
        continue
    if method == "initialize":
        caps = {"tools": {}, "resources": {"subscribe": mode == "subscribe"}}
        result(mid, {"protocolVersion": params["protocolVersion"], "capabilities": caps,
                     "serverInfo": {"name": "py"}})
    elif method == "server/discover":
        result(mid, {"supportedVersions": ["2026-07-28"], "ttlMs": 0,
                     "capabilities": {"tools": {"listChanged": True}}})
    elif method == "tools/list":
        tools = {"tools": [{"name": "t%d" % len(seen), "inputSchema": {"type": "object"}}]}
        if modern:
            tools["ttlMs"] = 60000
        result(mid, tools)
    elif method == "subscriptions/listen":
        listens.append(mid)
        send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
              "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": mid},
                         "notifications": {"toolsListChanged": True}}})
    elif method in ("resources/subscribe", "resources/unsubscribe"):
        result(mid, {})
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        if name == "script":
            play(args.get("before", []), token, mid)
            responses = []
            while len(responses) < args.get("wait", 0):
                r = read()
                if "method" not in r:
                    responses.append(r)
            result(mid, {"content": [], "structuredContent": {"responses": responses,
                                                              "token": token}})
            play(args.get("after", []), token, mid)
        elif name == "seen":
            result(mid, {"content": [], "structuredContent": {"messages": seen}})
        elif name == "exit":
            sys.exit(0)
"#;

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn server(mode: &str) -> StdioCommand {
    StdioCommand::from_argv(vec![
        "python3".into(),
        "-c".into(),
        SCRIPT.into(),
        mode.into(),
    ])
    .expect("argv")
}

fn handlers(v: Value) -> Handlers {
    let Value::Object(map) = v else {
        panic!("handlers must be an object")
    };
    Handlers::from_json(&map).expect("valid handlers")
}

fn options(defects: &[&str], handlers: Handlers) -> ClientOptions {
    let mut d = Defects::default();
    for name in defects {
        assert!(d.enable(name), "{name}");
    }
    ClientOptions {
        protocol_version: "2025-11-25".into(),
        request_timeout: Duration::from_secs(2),
        shutdown_grace: Duration::from_millis(200),
        handlers,
        defects: d,
        ..ClientOptions::default()
    }
}

async fn connect(mode: &str, options: ClientOptions) -> Client {
    Client::connect_stdio(&server(mode), options)
        .await
        .expect("connects")
}

async fn structured(client: &Client, name: &str, arguments: Value) -> Value {
    match client
        .call_tool(name, arguments)
        .await
        .expect("call")
        .output
    {
        ToolOutput::Structured(v) => v,
        other => panic!("expected structured output, got {other:?}"),
    }
}

async fn seen(client: &Client) -> Vec<Value> {
    let all = structured(client, "seen", json!({})).await;
    all["messages"].as_array().cloned().unwrap_or_default()
}

fn request(id: &str, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn note(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn all_handlers() -> Value {
    json!({
        "roots/list": {"roots": [{"uri": "file:///work", "name": "work"}]},
        "sampling/createMessage": {"role": "assistant", "content": {"type": "text", "text": "hi"},
                                   "model": "m", "stopReason": "endTurn"},
        "elicitation/create": {"action": "accept", "content": {"name": "Ada"}, "defaults": true}
    })
}

async fn declared(defects: &[&str], h: Value) -> Value {
    let client = connect("legacy", options(defects, handlers(h))).await;
    let messages = seen(&client).await;
    client.close().await;
    messages[0]["params"]["capabilities"].clone()
}

#[tokio::test]
async fn capabilities_are_exactly_those_the_handlers_imply() {
    assert_eq!(declared(&[], json!({})).await, json!({}));
    let all = json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {"form": {}}});
    assert_eq!(declared(&[], all_handlers()).await, all);
    let sampling = json!({"sampling/createMessage": {"role": "assistant"}});
    assert_eq!(
        declared(&[], sampling.clone()).await,
        json!({"sampling": {}})
    );
    assert_eq!(
        declared(&["no-client-capabilities"], all_handlers()).await,
        json!({})
    );
    assert_eq!(declared(&["all-client-capabilities"], sampling).await, all);
}

#[tokio::test]
async fn server_requests_are_answered_by_the_handlers_and_reported_in_order() {
    let client = connect("legacy", options(&[], handlers(all_handlers()))).await;
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "default": "Bob"}, "age": {"type": "integer", "default": 7}}});
    let before = json!([
        request("r1", "roots/list", json!({})),
        request(
            "s1",
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 5})
        ),
        request(
            "e1",
            "elicitation/create",
            json!({"message": "who?", "requestedSchema": schema})
        ),
        request(
            "e2",
            "elicitation/create",
            json!({"mode": "url", "url": "https://example.invalid/x", "message": "go",
                       "elicitationId": "x"})
        ),
        request("p1", "ping", json!({})),
    ]);
    let out = structured(&client, "script", json!({"before": before, "wait": 5})).await;
    let by_id = |id: &str| {
        out["responses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no response to {id}: {out}"))
    };
    assert_eq!(
        by_id("r1")["result"],
        json!({"roots": [{"uri": "file:///work", "name": "work"}]})
    );
    assert_eq!(by_id("s1")["result"]["model"], "m");
    assert_eq!(
        by_id("e1")["result"],
        json!({"action": "accept", "content": {"name": "Ada", "age": 7}})
    );
    assert_eq!(by_id("e2")["error"]["code"], -32602);
    assert_eq!(by_id("p1")["result"], json!({}));
    let events = client.events(0).await;
    let methods: Vec<&str> = events
        .iter()
        .map(|e| e["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "roots/list",
            "sampling/createMessage",
            "elicitation/create",
            "elicitation/create",
            "ping"
        ]
    );
    assert!(events.iter().all(|e| e["type"] == "request"));
    assert_eq!(events[1]["params"]["maxTokens"], 5);
    assert!(client.events(0).await.is_empty(), "events are taken once");
    client.close().await;
}

#[tokio::test]
async fn answer_defects_are_visible() {
    let h = || handlers(all_handlers());
    let before = json!([
        request("r1", "roots/list", json!({})),
        request(
            "e1",
            "elicitation/create",
            json!({"message": "m", "requestedSchema":
            {"type": "object", "properties": {"age": {"type": "integer", "default": 7}}}})
        ),
        request(
            "e2",
            "elicitation/create",
            json!({"mode": "url", "url": "https://x.invalid",
            "message": "m", "elicitationId": "x"})
        ),
    ]);
    let script = json!({"before": before, "wait": 3});
    let client = connect(
        "legacy",
        options(
            &[
                "roots-answer-empty",
                "no-elicitation-defaults",
                "elicitation-any-mode",
                "request-events-missing",
            ],
            h(),
        ),
    )
    .await;
    let out = structured(&client, "script", script).await;
    let responses = out["responses"].as_array().unwrap().clone();
    assert_eq!(responses[0]["result"]["roots"], json!([]));
    assert_eq!(responses[1]["result"]["content"], json!({"name": "Ada"}));
    assert!(responses[2].get("result").is_some(), "{responses:?}");
    assert!(client.events(0).await.is_empty());
    client.close().await;
}

#[tokio::test]
async fn a_request_the_server_cancels_before_the_delayed_answer_is_never_answered() {
    let h = json!({"elicitation/create": {"action": "decline", "delay_ms": 150}});
    let before = json!([
        request(
            "e1",
            "elicitation/create",
            json!({"message": "m", "requestedSchema": {}})
        ),
        note(
            "notifications/cancelled",
            json!({"requestId": "e1", "reason": "changed my mind"})
        ),
        request(
            "e2",
            "elicitation/create",
            json!({"message": "m", "requestedSchema": {}})
        ),
    ]);
    for (defects, answered) in [(&[][..], false), (&["answer-cancelled-request"][..], true)] {
        let client = connect("legacy", options(defects, handlers(h.clone()))).await;
        let script = json!({"before": before, "wait": 1, "after": []});
        let started = std::time::Instant::now();
        let out = structured(&client, "script", script).await;
        assert!(started.elapsed() >= Duration::from_millis(150));
        if !answered {
            assert_eq!(out["responses"][0]["id"], "e2", "{out}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let to_e1 = seen(&client)
            .await
            .iter()
            .any(|m| m["id"] == "e1" && m.get("method").is_none());
        assert_eq!(to_e1, answered, "{defects:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn set_roots_announces_the_change_and_answers_with_the_new_roots() {
    for (defects, announced) in [(&[][..], true), (&["no-roots-list-changed"][..], false)] {
        let client = connect("legacy", options(defects, handlers(all_handlers()))).await;
        client
            .set_roots(vec![json!({"uri": "file:///other"})])
            .await
            .unwrap();
        let before = json!([request("r1", "roots/list", json!({}))]);
        let out = structured(&client, "script", json!({"before": before, "wait": 1})).await;
        assert_eq!(
            out["responses"][0]["result"],
            json!({"roots": [{"uri": "file:///other"}]})
        );
        let notified = seen(&client)
            .await
            .iter()
            .any(|m| m["method"] == "notifications/roots/list_changed" && m.get("id").is_none());
        assert_eq!(notified, announced, "{defects:?}");
        client.close().await;
    }
    // Without a roots handler nothing is declared, so nothing is announced.
    let client = connect("legacy", options(&[], Handlers::new())).await;
    client.set_roots(vec![]).await.unwrap();
    let notified = seen(&client)
        .await
        .iter()
        .any(|m| m["method"] == "notifications/roots/list_changed");
    assert!(!notified);
    client.close().await;
}

/// Calls `script` asking for progress; returns the token sent and the events after it.
async fn progress_run(defects: &[&str]) -> (Value, Vec<Value>) {
    let client = connect("legacy", options(defects, Handlers::new())).await;
    let progress = |token: Value, n: u32| {
        note(
            "notifications/progress",
            json!({"progressToken": token, "progress": n}),
        )
    };
    let script = json!({
        "before": [progress(json!("$token"), 1), progress(json!("never-sent"), 1),
                   note("notifications/message", json!({"level": "info", "data": "x"}))],
        "after": [progress(json!("$token"), 2)],
    });
    let out = client
        .call_tool_with_progress(
            "script",
            script,
            &InputHandler::new(),
            None,
            std::future::pending(),
        )
        .await
        .expect("call");
    let ToolOutput::Structured(out) = out.output else {
        panic!()
    };
    // Let the progress sent after the response arrive.
    let _ = seen(&client).await;
    let events = client.events(0).await;
    client.close().await;
    (out["token"].clone(), events)
}

#[tokio::test]
async fn progress_is_surfaced_only_for_a_token_of_a_request_in_flight() {
    let (token, events) = progress_run(&[]).await;
    assert!(token.is_i64() || token.is_string(), "{token}");
    assert_eq!(
        events,
        [
            json!({"type": "progress", "progressToken": token, "progress": 1}),
            json!({"type": "log", "level": "info", "data": "x"}),
        ]
    );
    let (_, late) = progress_run(&["progress-after-completion"]).await;
    assert_eq!(late.len(), 3, "{late:?}");
    let (_, unknown) = progress_run(&["progress-unknown-token"]).await;
    assert_eq!(unknown[1]["progressToken"], "never-sent", "{unknown:?}");
    let (none, quiet) = progress_run(&["no-progress-token"]).await;
    assert_eq!(none, Value::Null);
    assert_eq!(quiet.len(), 1, "only the log message: {quiet:?}");
    let (_, dropped) = progress_run(&["drop-events"]).await;
    assert!(dropped.is_empty());
}

#[tokio::test]
async fn tokens_are_fresh_per_request_unless_shared() {
    for (defects, same) in [(&[][..], false), (&["shared-progress-token"][..], true)] {
        let client = connect("legacy", options(defects, Handlers::new())).await;
        let mut tokens = Vec::new();
        for _ in 0..2 {
            let out = client
                .call_tool_with_progress(
                    "script",
                    json!({}),
                    &InputHandler::new(),
                    None,
                    std::future::pending(),
                )
                .await
                .unwrap();
            let ToolOutput::Structured(out) = out.output else {
                panic!()
            };
            tokens.push(out["token"].clone());
        }
        assert_eq!(tokens[0] == tokens[1], same, "{defects:?}: {tokens:?}");
        client.close().await;
    }
}

/// A call whose server reports progress every 900 ms for 2700 ms, with a 1500 ms timeout.
async fn slow_with_progress(defects: &[&str], max: Option<u64>) -> Result<(), ErrorKind> {
    let mut opts = options(defects, Handlers::new());
    opts.request_timeout = Duration::from_millis(1500);
    // The short timeout also bounds the handshake: a server slow to start (a loaded machine)
    // is given a few tries.
    let mut tries = 0;
    let client = loop {
        tries += 1;
        match Client::connect_stdio(&server("legacy"), opts.clone()).await {
            Ok(client) => break client,
            Err(e) if tries < 4 && e.kind == ErrorKind::Timeout => continue,
            Err(e) => panic!("connect: {e:?}"),
        }
    };
    let tick = note(
        "notifications/progress",
        json!({"progressToken": "$token", "progress": 1}),
    );
    let script = json!({"before": [tick, {"sleep": 900}, tick, {"sleep": 900}, tick,
                                    {"sleep": 900}]});
    let max = max.map(Duration::from_millis);
    let outcome = client
        .call_tool_with_progress(
            "script",
            script,
            &InputHandler::new(),
            max,
            std::future::pending(),
        )
        .await;
    client.close().await;
    outcome.map(drop).map_err(|e| e.kind)
}

#[tokio::test]
async fn progress_restarts_the_timeout_but_the_maximum_holds() {
    let (ok, timeout) = (Ok(()), Err(ErrorKind::Timeout));
    assert_eq!(
        slow_with_progress(&[], None).await,
        timeout,
        "no maximum: no reset"
    );
    assert_eq!(slow_with_progress(&[], Some(5000)).await, ok);
    assert_eq!(slow_with_progress(&[], Some(1400)).await, timeout);
    assert_eq!(
        slow_with_progress(&["no-timeout-reset"], Some(5000)).await,
        timeout
    );
    assert_eq!(
        slow_with_progress(&["no-max-timeout"], Some(1400)).await,
        ok
    );
}

#[tokio::test]
async fn resource_subscriptions_need_the_capability() {
    let client = connect("legacy", options(&[], Handlers::new())).await;
    let refused = client.subscribe_resource("file:///a").await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::CapabilityMissing);
    client.close().await;
    let client = connect("subscribe", options(&[], Handlers::new())).await;
    client.subscribe_resource("file:///a").await.unwrap();
    client.unsubscribe_resource("file:///a").await.unwrap();
    let methods: Vec<Value> = seen(&client)
        .await
        .iter()
        .map(|m| m["method"].clone())
        .collect();
    assert!(methods.contains(&json!("resources/subscribe")));
    assert!(methods.contains(&json!("resources/unsubscribe")));
    client.close().await;
    let client = connect(
        "legacy",
        options(&["subscribe-without-capability"], Handlers::new()),
    )
    .await;
    client.subscribe_resource("file:///a").await.unwrap();
    client.close().await;
}

fn modern(defects: &[&str]) -> ClientOptions {
    ClientOptions {
        protocol_version: "2026-07-28".into(),
        era: Era::Modern,
        ..options(defects, handlers(all_handlers()))
    }
}

fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Listens, lists the tools (cached), has the server send a list change on our stream and a
/// resource update tagged with another id; returns the events and whether the second listing
/// asked the server again.
async fn listen_run(defects: &[&str]) -> (Value, Vec<Value>, bool) {
    let client = connect("modern", modern(defects)).await;
    let ack = client
        .listen(json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}))
        .await
        .expect("acknowledged");
    let first = tool_names(&client.list_tools().await.unwrap());
    let after = json!([
        note(
            "notifications/tools/list_changed",
            json!({"_meta": {SUBSCRIPTION_ID: "$listen"}})
        ),
        note(
            "notifications/resources/updated",
            json!({"_meta": {SUBSCRIPTION_ID: 999}, "uri": "file:///a"})
        ),
    ]);
    structured(&client, "script", json!({"after": after})).await;
    let _ = seen(&client).await;
    let events = client.events(1).await;
    let second = tool_names(&client.list_tools().await.unwrap());
    client.close().await;
    (ack, events, first != second)
}

#[tokio::test]
async fn a_listen_stream_is_correlated_by_subscription_id_and_ends_the_cache() {
    let (ack, events, relisted) = listen_run(&[]).await;
    assert_eq!(ack, json!({"notifications": {"toolsListChanged": true}}));
    assert_eq!(events, [json!({"type": "list_changed", "list": "tools"})]);
    assert!(relisted, "the list change ends the cached listing");
    let (_, _, relisted) = listen_run(&["cache-survives-list-changed"]).await;
    assert!(!relisted);
    let (_, foreign, _) = listen_run(&["foreign-subscription-events"]).await;
    assert_eq!(foreign.len(), 2, "{foreign:?}");
}

async fn listens_after_restart(defects: &[&str]) -> usize {
    let client = connect("modern", modern(defects)).await;
    client
        .listen(json!({"toolsListChanged": true}))
        .await
        .unwrap();
    let gone = client.call_tool("exit", json!({})).await.unwrap_err();
    assert_eq!(gone.kind, ErrorKind::TransportClosed);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let listens = seen(&client)
        .await
        .iter()
        .filter(|m| m["method"] == "subscriptions/listen")
        .count();
    client.close().await;
    listens
}

#[tokio::test]
async fn a_listen_stream_is_sent_again_to_a_restarted_stdio_server() {
    assert_eq!(listens_after_restart(&[]).await, 1);
    assert_eq!(listens_after_restart(&["listen-not-resent"]).await, 0);
}

#[tokio::test]
async fn listen_and_subscribe_belong_to_their_eras() {
    let client = connect("legacy", options(&[], Handlers::new())).await;
    let e = client.listen(json!({})).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::CapabilityMissing);
    client.close().await;
    let client = connect("modern", modern(&[])).await;
    let e = client.subscribe_resource("file:///a").await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::CapabilityMissing);
    // The handlers' capabilities ride in every modern request's _meta.
    let messages = seen(&client).await;
    let caps = &messages[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(
        caps,
        &json!({"roots": {}, "sampling": {}, "elicitation": {"form": {}}})
    );
    client.close().await;
}

/// The driver binary with the scripted server: outcome lines and stderr.
fn driver(defects: &[&str], plan: Value) -> (Vec<Value>, String) {
    let argv = json!(["python3", "-c", SCRIPT, "legacy"]);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-harness-driver"));
    for d in defects {
        cmd.args(["--defect", d]);
    }
    let out = cmd
        .env("MCP_HARNESS_CONTRACT", "1")
        .env("MCP_HARNESS_TRANSPORT", "stdio")
        .env("MCP_HARNESS_SERVER_COMMAND", argv.to_string())
        .env("MCP_HARNESS_PLAN", plan.to_string())
        .env("MCP_HARNESS_TIMEOUT_MS", "2000")
        .env("MCP_HARNESS_PROTOCOL_VERSION", "2025-11-25")
        .env("MCP_HARNESS_SHUTDOWN_GRACE_MS", "100")
        .output()
        .expect("driver runs");
    assert!(out.status.success());
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    (lines, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_driver_runs_the_steps_and_never_logs_what_the_user_entered() {
    let secret = "hunter2-secret";
    let elicit = request(
        "e1",
        "elicitation/create",
        json!({"message": "password?", "requestedSchema": {"type": "object"}}),
    );
    let plan = json!([
        {"op": "connect", "handlers": {
            "elicitation/create": {"action": "accept", "content": {"password": secret}},
            "roots/list": {"roots": []}}},
        {"op": "call_tool", "name": "script", "arguments": {"before": [elicit], "wait": 1},
         "progress": true, "max_timeout_ms": 5000},
        {"op": "events", "min": 1},
        {"op": "set_roots", "roots": [{"uri": "file:///new"}]},
        {"op": "subscribe_resource", "uri": "file:///a"},
        {"op": "listen", "notifications": {"toolsListChanged": true}},
        {"op": "close"}
    ]);
    let (lines, stderr) = driver(&[], plan.clone());
    assert_eq!(lines.len(), 7, "{lines:?}");
    let answer = &lines[1]["ok"]["structured"]["responses"][0]["result"];
    assert_eq!(answer["content"]["password"], secret);
    assert!(lines[1]["ok"]["structured"]["token"].is_number());
    let events = &lines[2]["ok"]["events"];
    assert_eq!(events[0]["type"], "request");
    assert_eq!(events[0]["method"], "elicitation/create");
    assert_eq!(lines[3]["ok"], json!({}));
    assert_eq!(lines[4]["error"]["kind"], "capability_missing");
    assert_eq!(lines[5]["error"]["kind"], "capability_missing");
    assert!(!stderr.contains(secret), "{stderr}");
    let (lines, stderr) = driver(&["log-elicitation-content"], plan);
    assert!(lines[1].get("ok").is_some());
    assert!(stderr.contains(secret), "the defect logs it");
}
