use super::*;
use crate::tasks::RELATED_TASK;

fn store() -> Arc<Received> {
    Arc::new(Received::new(Seams::default()))
}

fn id_of(created: &Value) -> String {
    created["task"]["taskId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_task_works_then_completes_with_the_handlers_answer() {
    let s = store();
    let runtime = tokio::runtime::Handle::current();
    let params = json!({"task": {"ttl": 5000}});
    let answer = json!({"role": "assistant", "model": "m"});
    let created = s.create(
        &params,
        Ok(answer.clone()),
        Some(Duration::from_millis(80)),
        Some(&runtime),
    );
    let task = &created["task"];
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 5000);
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
    let id = id_of(&created);
    let other = id_of(&s.create(&json!({"task": {}}), Ok(json!({})), None, None));
    assert_ne!(id, other, "ids are unique");
    assert!(id.len() >= 20, "and not guessable: {id}");
    let get = s
        .serve("tasks/get", &json!({"taskId": id}))
        .unwrap()
        .unwrap();
    assert_eq!(get["status"], "working");
    assert_eq!(get["_meta"], Value::Null);
    let started = std::time::Instant::now();
    let result = s.result(&json!({"taskId": id})).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(50), "it waited");
    assert_eq!(result["model"], "m");
    assert_eq!(result["_meta"][RELATED_TASK], json!({"taskId": id}));
    let get = s
        .serve("tasks/get", &json!({"taskId": id}))
        .unwrap()
        .unwrap();
    assert_eq!(get["status"], "completed");
    let list = s.serve("tasks/list", &json!({})).unwrap().unwrap();
    assert_eq!(list["tasks"].as_array().unwrap().len(), 2);
    let refused = s.serve("tasks/cancel", &json!({"taskId": id})).unwrap();
    assert_eq!(refused.unwrap_err().0, INVALID_PARAMS);
}

#[tokio::test]
async fn cancelling_a_working_task_ends_it_for_good_and_unknown_ids_are_refused() {
    let s = store();
    let runtime = tokio::runtime::Handle::current();
    let created = s.create(
        &json!({"task": {}}),
        Ok(json!({})),
        Some(Duration::from_millis(30)),
        Some(&runtime),
    );
    assert_eq!(created["task"]["ttl"], DEFAULT_TTL_MS);
    let id = id_of(&created);
    let cancelled = s.serve("tasks/cancel", &json!({"taskId": id})).unwrap();
    assert_eq!(cancelled.unwrap()["status"], "cancelled");
    tokio::time::sleep(Duration::from_millis(60)).await;
    let get = s
        .serve("tasks/get", &json!({"taskId": id}))
        .unwrap()
        .unwrap();
    assert_eq!(get["status"], "cancelled");
    assert!(s.result(&json!({"taskId": id})).await.is_err());
    for method in ["tasks/get", "tasks/cancel"] {
        let e = s.serve(method, &json!({"taskId": "nope"})).unwrap();
        assert_eq!(e.unwrap_err().0, INVALID_PARAMS, "{method}");
    }
    assert_eq!(
        s.result(&json!({"taskId": "nope"})).await.unwrap_err().0,
        INVALID_PARAMS
    );
    assert!(s.serve("tools/list", &json!({})).is_none());
}

#[tokio::test]
async fn a_handler_error_fails_the_task_with_that_error() {
    let s = store();
    let created = s.create(
        &json!({"task": {}}),
        Err((INVALID_PARAMS, "mode".into())),
        None,
        None,
    );
    let id = id_of(&created);
    let get = s
        .serve("tasks/get", &json!({"taskId": id}))
        .unwrap()
        .unwrap();
    assert_eq!(get["status"], "failed");
    assert_eq!(
        s.result(&json!({"taskId": id})).await,
        Err((INVALID_PARAMS, "mode".into()))
    );
}

#[test]
fn the_capability_names_each_method_served() {
    let methods = ["sampling/createMessage".to_owned()];
    assert_eq!(
        capability(&methods),
        json!({"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}})
    );
}

#[cfg(feature = "defects")]
#[tokio::test]
async fn the_defects_bend_the_receiver() {
    let with = |name| Arc::new(Received::new(Seams::only(name)));
    let runtime = tokio::runtime::Handle::current();
    let slow = Some(Duration::from_secs(5));
    let s = with("receiver-not-working");
    let created = s.create(&json!({"task": {}}), Ok(json!({})), slow, Some(&runtime));
    assert_eq!(created["task"]["status"], "completed");
    let s = with("receiver-result-early");
    let id = id_of(&s.create(&json!({"task": {}}), Ok(json!({})), slow, Some(&runtime)));
    assert!(s.result(&json!({"taskId": id})).await.is_err());
    let s = with("receiver-result-no-meta");
    let id = id_of(&s.create(&json!({"task": {}}), Ok(json!({})), None, None));
    assert_eq!(s.result(&json!({"taskId": id})).await.unwrap(), json!({}));
    let s = with("receiver-cancel-terminal-ok");
    let id = id_of(&s.create(&json!({"task": {}}), Ok(json!({})), None, None));
    assert!(
        s.serve("tasks/cancel", &json!({"taskId": id}))
            .unwrap()
            .is_ok()
    );
    let s = with("receiver-unknown-task-ok");
    assert!(
        s.serve("tasks/get", &json!({"taskId": "x"}))
            .unwrap()
            .is_ok()
    );
}
