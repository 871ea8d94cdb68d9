//! The task steps (CLIENTS.md § Tasks) through the kit's public API, as an adapter sees them:
//! without the `tasks` feature each is `unsupported_op` naming it and never reaches the
//! adapter; with it the adapter gets the typed step; a malformed `task_id` is named.

use mcp_harness_kit::{Adapter, Env, Step, StepError, block_on, read_env_from, run_plan};
use serde_json::{Map, Value, json};

/// An adapter with every task op; it records each step it is handed.
#[derive(Default)]
struct Tasks<const DECLARED: bool> {
    handed: Vec<Step>,
}

impl<const DECLARED: bool> Adapter for Tasks<DECLARED> {
    type Connection = ();
    const OPS: &'static [&'static str] = &[
        "call_tool",
        "get_task",
        "cancel_task",
        "task_result",
        "list_tasks",
        "fetch_icons",
    ];
    const FEATURES: &'static [&'static str] = if DECLARED { &["tasks"] } else { &["roots"] };

    async fn connect(&mut self, _: &Env, _: &Map<String, Value>) -> Result<((), Value), StepError> {
        Ok(((), json!({"protocolVersion":"2025-11-25"})))
    }

    async fn step(&mut self, _: &mut (), _: &Env, step: &Step) -> Result<Value, StepError> {
        self.handed.push(step.clone());
        Ok(json!({"op": step.op()}))
    }

    async fn close(&mut self, _: (), _: &Env) -> Result<(), StepError> {
        Ok(())
    }
}

fn run<const DECLARED: bool>(plan: Value) -> (Vec<Value>, Vec<Step>) {
    let plan = plan.to_string();
    let env = read_env_from(|name| match name {
        "MCP_HARNESS_TRANSPORT" => Some("stdio".into()),
        "MCP_HARNESS_SERVER_COMMAND" => Some(r#"["fake"]"#.into()),
        "MCP_HARNESS_PLAN" => Some(plan.clone()),
        _ => None,
    })
    .unwrap();
    let mut adapter = Tasks::<DECLARED>::default();
    let mut lines = Vec::new();
    block_on(run_plan(&mut adapter, &env, |line| lines.push(line)));
    (lines, adapter.handed)
}

fn task_steps() -> Vec<Value> {
    vec![
        json!({"op":"call_tool","name":"slow","task":{"ttl":60000}}),
        json!({"op":"call_tool","name":"slow","task":{},"background":true}),
        json!({"op":"call_tool","name":"slow","background":true}),
        json!({"op":"get_task","task_id":"task-1"}),
        json!({"op":"cancel_task","task_id":"task-1"}),
        json!({"op":"task_result","task_id":"task-1"}),
        json!({"op":"list_tasks"}),
    ]
}

/// A call with `background: false` and no `task` is a plain call.
fn plain() -> Value {
    json!({"op":"call_tool","name":"plain","background":false})
}

fn plan() -> Value {
    let mut plan = vec![json!({"op":"connect"})];
    plan.extend(task_steps());
    plan.push(plain());
    Value::Array(plan)
}

#[test]
fn without_the_tasks_feature_a_task_step_is_unsupported_op_naming_it() {
    let (lines, handed) = run::<false>(plan());
    assert_eq!(lines.len(), 9, "{lines:?}");
    for line in &lines[1..8] {
        assert_eq!(line["error"]["kind"], "unsupported_op", "{line}");
        let message = line["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("does not declare the feature tasks (the kit's features)"),
            "{message}"
        );
    }
    assert_eq!(lines[8]["ok"], json!({"op":"call_tool"}));
    assert_eq!(handed.len(), 1, "only the plain call reaches the adapter");
    assert_eq!(Step::parse(&plain()).unwrap(), handed[0]);
}

#[test]
fn with_the_tasks_feature_each_task_step_reaches_the_adapter_typed() {
    let (lines, handed) = run::<true>(plan());
    let oks: Vec<&Value> = lines.iter().map(|l| &l["ok"]).collect();
    let ops: Vec<Value> = plan()
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|s| json!({"op": s["op"]}))
        .collect();
    assert_eq!(oks[1..], ops.iter().collect::<Vec<_>>()[..], "{lines:?}");
    let expected: Vec<Step> = plan().as_array().unwrap()[1..]
        .iter()
        .map(|s| Step::parse(s).unwrap())
        .collect();
    assert_eq!(handed, expected);
    assert_eq!(
        handed[3],
        Step::GetTask {
            task_id: "task-1".into()
        }
    );
    let Step::CallTool(call) = &handed[1] else {
        panic!("{:?}", handed[1])
    };
    assert!(call.background && call.task == Some(Map::new()));
}

#[test]
fn a_malformed_task_id_is_unsupported_op_naming_the_field() {
    let (lines, handed) = run::<true>(json!([
        {"op":"connect"},
        {"op":"get_task","task_id":7},
        {"op":"cancel_task"},
        {"op":"task_result","task_id":null},
        {"op":"call_tool","name":"slow","task":"yes"},
    ]));
    assert_eq!(lines.len(), 5, "{lines:?}");
    for (line, field) in lines[1..]
        .iter()
        .zip(["task_id", "task_id", "task_id", "task"])
    {
        assert_eq!(line["error"]["kind"], "unsupported_op", "{line}");
        let message = line["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("\"{field}\"")), "{message}");
    }
    assert!(handed.is_empty(), "{handed:?}");
}

/// A connect that serves tasks (`tasks`, 2025-11-25) needs `task_receiver`, which this
/// adapter (declaring `tasks` alone) lacks; an empty list needs nothing.
#[test]
fn a_connect_serving_tasks_needs_the_task_receiver_feature() {
    let (lines, _) = run::<true>(json!([{"op":"connect","tasks":["sampling/createMessage"]}]));
    assert_eq!(lines[0]["error"]["kind"], "unsupported_op", "{lines:?}");
    let message = lines[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("does not declare the feature task_receiver"),
        "{message}"
    );
    let (lines, _) = run::<true>(json!([{"op":"connect","tasks":[]}]));
    assert!(lines[0].get("ok").is_some(), "{lines:?}");
}

/// A connect with a trace context needs `trace_context`, which this adapter lacks; a
/// malformed one is named.
#[test]
fn a_connect_with_a_trace_context_needs_the_trace_context_feature() {
    let context = json!({"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"});
    let (lines, _) = run::<true>(json!([{"op":"connect","trace_context":context}]));
    let message = lines[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("does not declare the feature trace_context"),
        "{message}"
    );
    let (lines, _) = run::<true>(json!([{"op":"connect","trace_context":{"baggage":"k=v"}}]));
    let message = lines[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("\"trace_context\""), "{message}");
    let parsed = Step::parse(&json!({"op":"connect","trace_context":context})).unwrap();
    let Step::Connect { trace_context, .. } = parsed else {
        panic!("{parsed:?}")
    };
    assert_eq!(
        trace_context.map(|c| c.traceparent),
        context["traceparent"].as_str().map(str::to_owned)
    );
}

/// `fetch_icons` needs `icons`, which this adapter lacks: it never reaches the adapter.
#[test]
fn fetch_icons_needs_the_icons_feature() {
    let (lines, handed) = run::<true>(json!([{"op":"connect"},{"op":"fetch_icons"}]));
    let message = lines[1]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("does not declare the feature icons"),
        "{message}"
    );
    assert!(handed.is_empty(), "{handed:?}");
}
