//! The task engine in both eras, on real (short) clocks.

use std::time::Duration;

use mcp_harness_scenarios::model::era::meta;
use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::modern::{self, Decision};

fn script(era: &str, task: Value) -> ServerScript {
    serde_json::from_value(json!({"era": era, "tasks": [task]})).unwrap()
}

fn reply(answer: Option<Answer>) -> Reply {
    answer.expect("the engine answers").reply
}

fn ok(answer: Option<Answer>) -> Value {
    match reply(answer) {
        Reply::Result(v) => v,
        other => panic!("expected a result, got {other:?}"),
    }
}

fn code(answer: Option<Answer>) -> i64 {
    match reply(answer) {
        Reply::Error(e) => e.code,
        other => panic!("expected an error, got {other:?}"),
    }
}

const V: Option<&str> = Some("2025-11-25");

fn legacy_get(store: &Store, s: &ServerScript, id: &str) -> Value {
    ok(store.legacy(s, V, "tasks/get", Some(&json!({"taskId": id}))))
}

fn create_legacy(store: &Store, s: &ServerScript) -> Value {
    let params = json!({"name": "slow", "arguments": {}, "task": {"ttl": 1000}});
    ok(store.legacy(s, V, "tools/call", Some(&params)))
}

fn timed(outcome: Value) -> Value {
    let mut task = json!({"tool": "slow", "poll_interval_ms": 25, "phases": [
        {"status": "working", "ms": 60, "message": "started"},
        {"status": "completed"}]});
    for (k, v) in outcome.as_object().unwrap() {
        task[k] = v.clone();
    }
    task
}

#[test]
fn legacy_tasks_are_declared_and_live_from_2025_11_25_only() {
    let s = script("legacy", timed(json!({"result": {"content": []}})));
    let declared = crate::script::capabilities(&s, Some("2025-11-25"));
    assert_eq!(declared["tasks"], legacy_capability());
    assert!(
        crate::script::capabilities(&s, Some("2025-06-18"))
            .get("tasks")
            .is_none()
    );
    let store = Store::default();
    let params = json!({"name": "slow", "task": {}});
    assert!(
        store
            .legacy(&s, Some("2025-06-18"), "tools/call", Some(&params))
            .is_none(),
        "before 2025-11-25 the call goes to the handlers"
    );
    // Without `params.task`, or for another tool, the handlers answer.
    assert!(
        store
            .legacy(&s, V, "tools/call", Some(&json!({"name": "slow"})))
            .is_none()
    );
    let other = json!({"name": "echo", "task": {}});
    assert!(store.legacy(&s, V, "tools/call", Some(&other)).is_none());
    // The built-in listing shows the task's tool as one that may run as a task.
    let listed = crate::script::choose(&s, "tools/list", None);
    let Reply::Result(listed) = listed.reply else {
        panic!("a listing")
    };
    assert_eq!(listed["tools"][0]["execution"]["taskSupport"], "required");
    let mut both = s.clone();
    both.handlers.push(mcp_harness_scenarios::model::Handler {
        params: Some(json!({"name": "slow"})),
        ..mcp_harness_scenarios::model::Handler::builtin_echo()
    });
    let Reply::Result(listed) = crate::script::choose(&both, "tools/list", None).reply else {
        panic!("a listing")
    };
    assert_eq!(listed["tools"].as_array().unwrap().len(), 1);
    assert_eq!(listed["tools"][0]["execution"]["taskSupport"], "optional");
}

#[tokio::test]
async fn legacy_phases_follow_the_clock_and_ids_count_up() {
    let s = script("legacy", timed(json!({"result": {"content": []}})));
    let store = Store::default();
    let created = create_legacy(&store, &s);
    let task = &created["task"];
    assert_eq!(task["taskId"], "task-1");
    assert_eq!(task["status"], "working");
    assert_eq!(task["statusMessage"], "started");
    assert_eq!(task["ttl"], 60_000);
    assert_eq!(task["pollInterval"], 25);
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(task["createdAt"], task["lastUpdatedAt"]);
    let second = create_legacy(&store, &s);
    assert_eq!(second["task"]["taskId"], "task-1-2");
    assert_eq!(legacy_get(&store, &s, "task-1")["status"], "working");
    tokio::time::sleep(Duration::from_millis(80)).await;
    let done = legacy_get(&store, &s, "task-1");
    assert_eq!(done["status"], "completed");
    assert!(done.get("statusMessage").is_none());
    assert!(done["lastUpdatedAt"].as_str() > done["createdAt"].as_str());
    assert!(
        done.pointer("/_meta").is_none(),
        "no related-task on tasks/get"
    );
    let listed = ok(store.legacy(&s, V, "tasks/list", Some(&json!({}))));
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 2);
    let cursor = json!({"cursor": "x"});
    assert_eq!(
        code(store.legacy(&s, V, "tasks/list", Some(&cursor))),
        -32602
    );
}

#[test]
fn legacy_unknown_ids_and_terminal_cancels_are_invalid_params() {
    let s = script(
        "legacy",
        json!({"tool": "slow", "phases": [{"status": "completed"}], "result": {"content": []}}),
    );
    let store = Store::default();
    let unknown = json!({"taskId": "nope"});
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        assert_eq!(
            code(store.legacy(&s, V, method, Some(&unknown))),
            -32602,
            "{method}"
        );
    }
    create_legacy(&store, &s);
    let known = json!({"taskId": "task-1"});
    assert_eq!(
        code(store.legacy(&s, V, "tasks/cancel", Some(&known))),
        -32602
    );
    // A terminal task's result is answered at once, with the related-task _meta.
    let result = ok(store.legacy(&s, V, "tasks/result", Some(&known)));
    assert_eq!(result["_meta"][RELATED_TASK], json!({"taskId": "task-1"}));
}

#[test]
fn legacy_cancel_moves_the_task_to_cancelled_before_answering() {
    let s = script("legacy", timed(json!({"result": {"content": []}})));
    let store = Store::default();
    create_legacy(&store, &s);
    let known = json!({"taskId": "task-1"});
    let answered = ok(store.legacy(&s, V, "tasks/cancel", Some(&known)));
    assert_eq!(answered["status"], "cancelled");
    assert_eq!(legacy_get(&store, &s, "task-1")["status"], "cancelled");
}

/// `tasks/result` blocks while the task works, sends its input request (once, with the
/// related-task `_meta`) when it needs input, goes on once answered, and answers the
/// outcome: the scripted error, as it is.
#[tokio::test]
async fn legacy_result_waits_sends_input_requests_and_answers_the_outcome() {
    let task = json!({"tool": "slow", "phases": [
        {"status": "working", "ms": 40},
        {"status": "input_required", "settles_ms": 30,
         "input_requests": {"confirm": {"method": "elicitation/create",
                                        "params": {"message": "sure?"}}}},
        {"status": "working", "ms": 20},
        {"status": "failed"}],
        "error": {"code": -32603, "message": "boom"}});
    let s = std::sync::Arc::new(script("legacy", task));
    let store = std::sync::Arc::new(Store::default());
    create_legacy(&store, &s);
    let waiting = store.legacy(&s, V, "tasks/result", Some(&json!({"taskId": "task-1"})));
    let waiting = waiting.expect("the engine answers");
    assert_eq!(waiting.task, Some(Work::Result("task-1".into())));
    let (tx, mut sent) = mpsc::unbounded_channel();
    let (s2, store2) = (s.clone(), store.clone());
    let outcome = tokio::spawn(async move {
        let send = |m| {
            let _ = tx.send(m);
            std::future::ready(())
        };
        store2.wait_result(&s2, "task-1", send).await
    });
    let request = tokio::time::timeout(Duration::from_secs(2), sent.recv())
        .await
        .expect("the input request in time")
        .unwrap();
    assert_eq!(request["id"], "task-1:confirm");
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "sure?");
    assert_eq!(
        request["params"]["_meta"][RELATED_TASK],
        json!({"taskId": "task-1"})
    );
    // Unanswered, the task waits: no outcome, no second request.
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert!(!outcome.is_finished());
    assert!(sent.try_recv().is_err());
    assert_eq!(legacy_get(&store, &s, "task-1")["status"], "input_required");
    let response =
        json!({"jsonrpc": "2.0", "id": "task-1:confirm", "result": {"action": "accept"}});
    store.arrived(&s, &response);
    // Settling: still input_required right after the answer.
    assert_eq!(legacy_get(&store, &s, "task-1")["status"], "input_required");
    let reply = tokio::time::timeout(Duration::from_secs(2), outcome)
        .await
        .expect("the outcome in time")
        .unwrap();
    match reply {
        Reply::Error(e) => assert_eq!((e.code, e.message.as_str()), (-32603, "boom")),
        other => panic!("expected the scripted error, got {other:?}"),
    }
    assert_eq!(legacy_get(&store, &s, "task-1")["status"], "failed");
    assert!(sent.try_recv().is_err(), "each input request is sent once");
}

#[tokio::test]
async fn legacy_status_notifications_follow_each_change() {
    let mut task = timed(json!({"result": {"content": []}}));
    task["notify"] = json!(true);
    let s = script("legacy", task);
    let store = Store::default();
    let params = json!({"name": "slow", "task": {}});
    let created = store.legacy(&s, V, "tools/call", Some(&params)).unwrap();
    assert_eq!(created.task, Some(Work::Watch("task-1".into())));
    let (tx, mut sent) = mpsc::unbounded_channel();
    let send = |m| {
        let _ = tx.send(m);
        std::future::ready(())
    };
    tokio::time::timeout(
        Duration::from_secs(2),
        store.watch_status(&s, "task-1", send),
    )
    .await
    .expect("the watch ends with the task");
    let note = sent.try_recv().expect("one notification");
    assert_eq!(note["method"], "notifications/tasks/status");
    assert_eq!(note["params"]["status"], "completed");
    assert!(note["params"].get("_meta").is_none());
    assert!(sent.try_recv().is_err(), "one change, one notification");
}

fn modern_meta(extension: bool) -> Value {
    let capabilities = match extension {
        true => json!({"extensions": {EXTENSION: {}}}),
        false => json!({}),
    };
    json!({meta::PROTOCOL_VERSION: "2026-07-28", meta::CLIENT_CAPABILITIES: capabilities})
}

fn modern_call(store: &Store, s: &ServerScript, extension: bool) -> Option<Answer> {
    let params = json!({"name": "slow", "arguments": {}, "_meta": modern_meta(extension)});
    store.modern(s, "tools/call", Some(&params))
}

fn modern_get(store: &Store, s: &ServerScript) -> Value {
    let params = json!({"taskId": "task-1", "_meta": modern_meta(true)});
    ok(store.modern(s, "tasks/get", Some(&params)))
}

/// `tasks/update` answers outstanding keys only; once all are, the phase settles, then the
/// task goes on; `tasks/get` carries the input requests meanwhile and the result at the end.
#[tokio::test]
async fn modern_update_settles_then_the_task_completes() {
    let task = json!({"tool": "slow", "poll_interval_ms": 10, "ttl_ms": null, "phases": [
        {"status": "working", "ms": 30},
        {"status": "input_required", "settles_ms": 40,
         "input_requests": {"name": {"method": "elicitation/create", "params": {}}}},
        {"status": "completed"}],
        "result": {"content": [{"type": "text", "text": "hi"}]}});
    let s = script("modern", task);
    let store = Store::default();
    assert!(
        modern_call(&store, &s, false).is_none(),
        "no extension: no task"
    );
    let created = ok(modern_call(&store, &s, true));
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["taskId"], "task-1");
    assert_eq!(created["ttlMs"], Value::Null);
    assert_eq!(created["pollIntervalMs"], 10);
    assert!(
        created.get("task").is_none(),
        "the task's fields are flattened"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    let asking = modern_get(&store, &s);
    assert_eq!(asking["resultType"], "complete");
    assert_eq!(asking["status"], "input_required");
    assert_eq!(
        asking["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    let update = |responses: Value| {
        let params = json!({"taskId": "task-1", "inputResponses": responses});
        ok(store.modern(&s, "tasks/update", Some(&params)))
    };
    assert_eq!(
        update(json!({"other": {}})),
        json!({"resultType": "complete"})
    );
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(
        modern_get(&store, &s)["status"],
        "input_required",
        "unknown keys are ignored"
    );
    update(json!({"name": {"action": "accept", "content": {"name": "Ada"}}}));
    // Settling: the same input requests, for 40 ms.
    let settling = modern_get(&store, &s);
    assert_eq!(settling["status"], "input_required");
    assert_eq!(settling["inputRequests"], asking["inputRequests"]);
    tokio::time::sleep(Duration::from_millis(60)).await;
    let done = modern_get(&store, &s);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "hi");
    assert!(done.get("inputRequests").is_none());
    let unknown = json!({"taskId": "nope"});
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        assert_eq!(
            code(store.modern(&s, method, Some(&unknown))),
            -32602,
            "{method}"
        );
    }
    assert!(store.modern(&s, "tasks/result", Some(&unknown)).is_none());
    assert!(store.modern(&s, "tasks/list", None).is_none());
}

#[tokio::test]
async fn modern_cancel_is_acknowledged_honoured_or_ignored() {
    let task = |cancel: &str| {
        json!({"tool": "slow", "cancel": cancel, "phases": [
            {"status": "working", "ms": 40}, {"status": "failed"}],
            "error": {"code": -32603, "message": "boom"}})
    };
    let cancel = json!({"taskId": "task-1"});
    let honour = script("modern", task("honour"));
    let store = Store::default();
    ok(modern_call(&store, &honour, true));
    let acked = ok(store.modern(&honour, "tasks/cancel", Some(&cancel)));
    assert_eq!(acked, json!({"resultType": "complete"}));
    assert_eq!(modern_get(&store, &honour)["status"], "cancelled");
    let ignore = script("modern", task("ignore"));
    let store = Store::default();
    ok(modern_call(&store, &ignore, true));
    ok(store.modern(&ignore, "tasks/cancel", Some(&cancel)));
    assert_eq!(modern_get(&store, &ignore)["status"], "working");
    tokio::time::sleep(Duration::from_millis(60)).await;
    let failed = modern_get(&store, &ignore);
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"], json!({"code": -32603, "message": "boom"}));
    assert!(failed.get("result").is_none());
}

/// Over HTTP `tasks/get`, `tasks/update` and `tasks/cancel` need `Mcp-Name` = the task id.
#[test]
fn modern_task_methods_need_the_task_id_as_mcp_name() {
    let s = script("modern", timed(json!({"result": {"content": []}})));
    let store = Store::default();
    ok(modern_call(&store, &s, true));
    let params = json!({"taskId": "task-1", "_meta": modern_meta(true)});
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let header = |name: Option<&'static str>| {
            move |h: &str| match h {
                "mcp-protocol-version" => Some("2026-07-28".to_owned()),
                "mcp-method" => Some(method.to_owned()),
                "mcp-name" => name.map(str::to_owned),
                _ => None,
            }
        };
        let decide = |reader: &dyn Fn(&str) -> Option<String>| {
            let tally = crate::script::Tally::default();
            modern::decide(
                &s,
                &tally,
                &store,
                None,
                method,
                Some(&params),
                Some(reader),
            )
        };
        for wrong in [None, Some("task-2")] {
            match decide(&header(wrong)) {
                Decision::Refuse(r) => assert_eq!(r.error.code, modern::HEADER_MISMATCH),
                Decision::Answer(a) => panic!("{method} without the right Mcp-Name: {a:?}"),
            }
        }
        match decide(&header(Some("task-1"))) {
            Decision::Answer(a) => assert!(matches!(a.reply, Reply::Result(_)), "{method}"),
            Decision::Refuse(r) => panic!("{method} refused: {r:?}"),
        }
    }
    // And discover declares the extension.
    let found = modern::discover_result(&s);
    assert_eq!(found["capabilities"]["extensions"][EXTENSION], json!({}));
}

/// A client that closed its `tasks/result` stream before answering gets the input request
/// again on its next `tasks/result`; once answered, it is not sent again.
#[tokio::test]
async fn legacy_a_new_result_wait_resends_what_is_unanswered() {
    let task = json!({"tool": "slow", "phases": [
        {"status": "working", "ms": 0},
        {"status": "input_required", "input_requests": {"k": {"method": "ping"}}},
        {"status": "completed"}],
        "result": {"content": []}});
    let s = std::sync::Arc::new(script("legacy", task));
    let store = std::sync::Arc::new(Store::default());
    create_legacy(&store, &s);
    let start = |s: std::sync::Arc<ServerScript>, store: std::sync::Arc<Store>| {
        let (tx, rx) = mpsc::unbounded_channel();
        let wait = tokio::spawn(async move {
            let send = |m| {
                let _ = tx.send(m);
                std::future::ready(())
            };
            store.wait_result(&s, "task-1", send).await
        });
        (wait, rx)
    };
    let (first, mut sent) = start(s.clone(), store.clone());
    let asked = tokio::time::timeout(Duration::from_secs(2), sent.recv()).await;
    assert_eq!(asked.unwrap().unwrap()["id"], "task-1:k");
    first.abort();
    let (second, mut again) = start(s.clone(), store.clone());
    let asked = tokio::time::timeout(Duration::from_secs(2), again.recv()).await;
    assert_eq!(asked.unwrap().unwrap()["id"], "task-1:k");
    store.arrived(
        &s,
        &json!({"jsonrpc": "2.0", "id": "task-1:k", "result": {}}),
    );
    let outcome = tokio::time::timeout(Duration::from_secs(2), second).await;
    assert!(matches!(outcome.unwrap().unwrap(), Reply::Result(_)));
    assert!(again.try_recv().is_err());
}
