//! The plan's steps (CLIENTS.md, "Plan steps"), parsed and checked field by field, so an
//! adapter matches on a typed [`Step`] and never digs in JSON for a step's members.
//!
//! A step whose fields are malformed cannot be carried out by any client: it is reported as
//! `unsupported_op` with a message naming the member and what was expected. Values the
//! contract passes through "as given" (`arguments`, `ref`, `handlers`, answers) stay JSON.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::env::type_name;
use crate::error::StepError;

/// A W3C trace context to put in every request's `_meta` (CLIENTS.md, "Trace context").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    /// `version-traceid-parentid-flags`.
    pub traceparent: String,
    /// The `tracestate` list, when given.
    pub tracestate: Option<String>,
    /// The `baggage` list, when given.
    pub baggage: Option<String>,
}

/// One step of the plan.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// `connect`, with `handlers` by method (empty when none), the methods it serves as
    /// tasks (`tasks`, 2025-11-25; empty when none) and the trace context to propagate
    /// (`trace_context`; needs the `trace_context` feature).
    Connect {
        handlers: Map<String, Value>,
        tasks: Vec<Value>,
        trace_context: Option<TraceContext>,
    },
    Close,
    /// Carried out by the kit; an adapter never sees it.
    Sleep(Duration),
    Discover,
    ListTools,
    ListResources,
    ListResourceTemplates,
    ListPrompts,
    CallTool(CallTool),
    ReadResource {
        uri: String,
        /// Modern era: answers to input requests, by method (empty when none).
        input: Map<String, Value>,
    },
    GetPrompt {
        name: String,
        arguments: Option<Map<String, Value>>,
        input: Map<String, Value>,
    },
    /// `completion/complete`: `ref` and `argument` as given (objects), `context` when given.
    Complete {
        reference: Value,
        argument: Value,
        context: Option<Value>,
    },
    Ping,
    SetLoggingLevel {
        level: String,
    },
    /// Report the events surfaced since the last `events` step, after waiting for `min`.
    Events {
        min: usize,
    },
    SetRoots {
        roots: Vec<Value>,
    },
    SubscribeResource {
        uri: String,
    },
    UnsubscribeResource {
        uri: String,
    },
    /// `subscriptions/listen` with this filter (an object).
    Listen {
        notifications: Value,
    },
    /// One `tasks/get` of this task (CLIENTS.md § Tasks); needs the `tasks` feature.
    GetTask {
        task_id: String,
    },
    /// `tasks/cancel` of this task; needs the `tasks` feature.
    CancelTask {
        task_id: String,
    },
    /// `tasks/result` of this task (2025-11-25); needs the `tasks` feature.
    TaskResult {
        task_id: String,
    },
    /// `tasks/list`, every page (2025-11-25); needs the `tasks` feature.
    ListTasks,
    /// `together`: its steps, each parsed, to start at once on the open connection; the kit
    /// answers it `unsupported_op` unless the adapter lists `together` in `OPS` and runs
    /// them itself (its `step` takes `&mut self`).
    Together {
        steps: Vec<Step>,
    },
    /// An op the contract does not name (answered `unsupported_op`).
    Other {
        op: String,
    },
}

/// A `call_tool` step.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CallTool {
    pub name: String,
    /// `None` when the step has none (send none, or `{}` if the library insists).
    pub arguments: Option<Map<String, Value>>,
    pub cancel_after: Option<Duration>,
    pub progress: bool,
    pub max_timeout: Option<Duration>,
    pub input: Map<String, Value>,
    /// `task`: the caller accepts running the call as a task (`ttl` when given); `None` for
    /// a plain call. With it (or `background`) the step needs the `tasks` feature.
    pub task: Option<Map<String, Value>>,
    /// `background: true`: report the task as created instead of following it.
    pub background: bool,
}

impl CallTool {
    /// Whether this call is a task step (`task`, or `background: true`), which needs the
    /// `tasks` feature.
    pub fn is_task(&self) -> bool {
        self.task.is_some() || self.background
    }
}

impl Step {
    /// The op's name as the contract spells it.
    pub fn op(&self) -> &str {
        match self {
            Step::Connect { .. } => "connect",
            Step::Close => "close",
            Step::Sleep(_) => "sleep",
            Step::Discover => "discover",
            Step::ListTools => "list_tools",
            Step::ListResources => "list_resources",
            Step::ListResourceTemplates => "list_resource_templates",
            Step::ListPrompts => "list_prompts",
            Step::CallTool(_) => "call_tool",
            Step::ReadResource { .. } => "read_resource",
            Step::GetPrompt { .. } => "get_prompt",
            Step::Complete { .. } => "complete",
            Step::Ping => "ping",
            Step::SetLoggingLevel { .. } => "set_logging_level",
            Step::Events { .. } => "events",
            Step::SetRoots { .. } => "set_roots",
            Step::SubscribeResource { .. } => "subscribe_resource",
            Step::UnsubscribeResource { .. } => "unsubscribe_resource",
            Step::Listen { .. } => "listen",
            Step::GetTask { .. } => "get_task",
            Step::CancelTask { .. } => "cancel_task",
            Step::TaskResult { .. } => "task_result",
            Step::ListTasks => "list_tasks",
            Step::Together { .. } => "together",
            Step::Other { op } => op,
        }
    }

    /// Parses one step of the plan; the error names the member and what it should be.
    pub fn parse(step: &Value) -> Result<Step, StepError> {
        let Some(fields) = step.as_object() else {
            return Err(bad(format!(
                "a step must be an object, got {}",
                type_name(step)
            )));
        };
        let f = Fields { op: "", fields };
        let op = match fields.get("op") {
            Some(Value::String(op)) => op.as_str(),
            Some(other) => return Err(bad(format!("\"op\" must be a string, got {other}"))),
            None => return Err(bad("a step needs an \"op\"".into())),
        };
        let f = Fields { op, ..f };
        Ok(match op {
            "connect" => Step::Connect {
                handlers: f.object("handlers")?.unwrap_or_default(),
                tasks: f.array("tasks")?.unwrap_or_default(),
                trace_context: f.trace_context()?,
            },
            "close" => Step::Close,
            "sleep" => Step::Sleep(
                f.millis("ms")?
                    .ok_or_else(|| f.missing("ms", "milliseconds"))?,
            ),
            "discover" => Step::Discover,
            "list_tools" => Step::ListTools,
            "list_resources" => Step::ListResources,
            "list_resource_templates" => Step::ListResourceTemplates,
            "list_prompts" => Step::ListPrompts,
            "call_tool" => Step::CallTool(CallTool {
                name: f.string("name")?,
                arguments: f.object("arguments")?,
                cancel_after: f.millis("cancel_after_ms")?,
                progress: f.boolean("progress")?,
                max_timeout: f.millis("max_timeout_ms")?,
                input: f.object("input")?.unwrap_or_default(),
                task: f.object("task")?,
                background: f.boolean("background")?,
            }),
            "read_resource" => Step::ReadResource {
                uri: f.string("uri")?,
                input: f.object("input")?.unwrap_or_default(),
            },
            "get_prompt" => Step::GetPrompt {
                name: f.string("name")?,
                arguments: f.object("arguments")?,
                input: f.object("input")?.unwrap_or_default(),
            },
            "complete" => Step::Complete {
                reference: Value::Object(
                    f.object("ref")?
                        .ok_or_else(|| f.missing("ref", "an object"))?,
                ),
                argument: Value::Object(
                    f.object("argument")?
                        .ok_or_else(|| f.missing("argument", "an object"))?,
                ),
                context: f.object("context")?.map(Value::Object),
            },
            "ping" => Step::Ping,
            "set_logging_level" => Step::SetLoggingLevel {
                level: f.string("level")?,
            },
            "events" => Step::Events {
                min: match f.fields.get("min") {
                    None | Some(Value::Null) => 0,
                    Some(min) => min
                        .as_u64()
                        .and_then(|m| usize::try_from(m).ok())
                        .ok_or_else(|| f.wrong("min", "a non-negative integer", min))?,
                },
            },
            "set_roots" => Step::SetRoots {
                roots: match f.fields.get("roots") {
                    Some(Value::Array(roots)) => roots.clone(),
                    Some(other) => return Err(f.wrong("roots", "an array", other)),
                    None => return Err(f.missing("roots", "an array")),
                },
            },
            "subscribe_resource" => Step::SubscribeResource {
                uri: f.string("uri")?,
            },
            "unsubscribe_resource" => Step::UnsubscribeResource {
                uri: f.string("uri")?,
            },
            "listen" => Step::Listen {
                notifications: Value::Object(f.object("notifications")?.unwrap_or_default()),
            },
            "get_task" => Step::GetTask {
                task_id: f.string("task_id")?,
            },
            "cancel_task" => Step::CancelTask {
                task_id: f.string("task_id")?,
            },
            "task_result" => Step::TaskResult {
                task_id: f.string("task_id")?,
            },
            "list_tasks" => Step::ListTasks,
            "together" => Step::Together {
                steps: f
                    .array("steps")?
                    .ok_or_else(|| f.missing("steps", "an array of steps"))?
                    .iter()
                    .map(Step::parse)
                    .collect::<Result<_, _>>()?,
            },
            other => Step::Other {
                op: other.to_owned(),
            },
        })
    }
}

fn bad(message: String) -> StepError {
    StepError::unsupported(message)
}

struct Fields<'a> {
    op: &'a str,
    fields: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn wrong(&self, member: &str, expected: &str, got: &Value) -> StepError {
        bad(format!(
            "{}: \"{member}\" must be {expected}, got {got}",
            self.op
        ))
    }

    fn missing(&self, member: &str, expected: &str) -> StepError {
        bad(format!(
            "{}: \"{member}\" is required ({expected})",
            self.op
        ))
    }

    fn string(&self, member: &str) -> Result<String, StepError> {
        match self.fields.get(member) {
            Some(Value::String(text)) => Ok(text.clone()),
            Some(other) => Err(self.wrong(member, "a string", other)),
            None => Err(self.missing(member, "a string")),
        }
    }

    /// An optional object (absent or null: `None`).
    fn object(&self, member: &str) -> Result<Option<Map<String, Value>>, StepError> {
        match self.fields.get(member) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(object)) => Ok(Some(object.clone())),
            Some(other) => Err(self.wrong(member, "an object", other)),
        }
    }

    /// connect's optional `trace_context`: `{traceparent, tracestate?, baggage?}`, strings.
    fn trace_context(&self) -> Result<Option<TraceContext>, StepError> {
        let Some(context) = self.object("trace_context")? else {
            return Ok(None);
        };
        let expected = "an object of strings {traceparent, tracestate?, baggage?}";
        let wrong = || self.wrong("trace_context", expected, &Value::Object(context.clone()));
        let text = |key: &str| match context.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(wrong()),
        };
        Ok(Some(TraceContext {
            traceparent: text("traceparent")?.ok_or_else(wrong)?,
            tracestate: text("tracestate")?,
            baggage: text("baggage")?,
        }))
    }

    /// An optional array (absent or null: `None`).
    fn array(&self, member: &str) -> Result<Option<Vec<Value>>, StepError> {
        match self.fields.get(member) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items.clone())),
            Some(other) => Err(self.wrong(member, "an array", other)),
        }
    }

    fn millis(&self, member: &str) -> Result<Option<Duration>, StepError> {
        match self.fields.get(member) {
            None | Some(Value::Null) => Ok(None),
            Some(ms) => ms
                .as_u64()
                .map(|ms| Some(Duration::from_millis(ms)))
                .ok_or_else(|| self.wrong(member, "a non-negative integer (ms)", ms)),
        }
    }

    fn boolean(&self, member: &str) -> Result<bool, StepError> {
        match self.fields.get(member) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(other) => Err(self.wrong(member, "a boolean", other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Kind;
    use serde_json::json;

    #[test]
    fn call_tool_reads_every_member() {
        let step = Step::parse(&json!({"op":"call_tool","name":"slow","arguments":{"a":1},
            "cancel_after_ms":150,"progress":true,"max_timeout_ms":3000,
            "input":{"roots/list":{"roots":[]}}}))
        .unwrap();
        let Step::CallTool(call) = step else {
            panic!("{step:?}")
        };
        assert_eq!(call.name, "slow");
        assert_eq!(call.arguments.unwrap()["a"], 1);
        assert_eq!(call.cancel_after, Some(Duration::from_millis(150)));
        assert!(call.progress);
        assert_eq!(call.max_timeout, Some(Duration::from_millis(3000)));
        assert!(call.input.contains_key("roots/list"));
        assert!(!call.background && call.task.is_none());
    }

    #[test]
    fn task_steps_read_their_members() {
        let Step::CallTool(call) = Step::parse(
            &json!({"op":"call_tool","name":"slow","task":{"ttl":60000},"background":true}),
        )
        .unwrap() else {
            panic!("not a call_tool")
        };
        assert_eq!(call.task.unwrap()["ttl"], 60000);
        assert!(call.background);
        for (step, parsed) in [
            (
                json!({"op":"get_task","task_id":"task-1"}),
                Step::GetTask {
                    task_id: "task-1".into(),
                },
            ),
            (
                json!({"op":"cancel_task","task_id":"task-2"}),
                Step::CancelTask {
                    task_id: "task-2".into(),
                },
            ),
            (
                json!({"op":"task_result","task_id":""}),
                Step::TaskResult { task_id: "".into() },
            ),
            (json!({"op":"list_tasks"}), Step::ListTasks),
        ] {
            let got = Step::parse(&step).unwrap();
            assert_eq!(got.op(), step["op"]);
            assert_eq!(got, parsed);
        }
    }

    #[test]
    fn malformed_members_are_named() {
        for (step, needle) in [
            (json!({"op":"call_tool"}), "\"name\" is required"),
            (
                json!({"op":"call_tool","name":"x","arguments":[1]}),
                "\"arguments\" must be an object",
            ),
            (
                json!({"op":"sleep","ms":-1}),
                "\"ms\" must be a non-negative integer",
            ),
            (json!({"op":"events","min":"2"}), "\"min\""),
            (json!({"op":"set_roots"}), "\"roots\" is required"),
            (
                json!({"op":"complete","ref":{"type":"ref/prompt"}}),
                "\"argument\" is required",
            ),
            (
                json!({"op":"call_tool","name":"x","task":true}),
                "\"task\" must be an object",
            ),
            (
                json!({"op":"call_tool","name":"x","task":{},"background":"yes"}),
                "\"background\" must be a boolean",
            ),
            (json!({"op":"get_task"}), "\"task_id\" is required"),
            (
                json!({"op":"cancel_task","task_id":7}),
                "\"task_id\" must be a string",
            ),
            (
                json!({"op":"task_result","task_id":null}),
                "\"task_id\" must be a string",
            ),
            (json!({"op":7}), "\"op\" must be a string"),
            (json!([]), "a step must be an object"),
        ] {
            let error = Step::parse(&step).unwrap_err();
            assert_eq!(error.kind, Kind::UnsupportedOp);
            assert!(error.message.contains(needle), "{step}: {}", error.message);
        }
    }

    #[test]
    fn unknown_ops_and_plain_ops_parse() {
        assert_eq!(
            Step::parse(&json!({"op":"teleport"})).unwrap().op(),
            "teleport"
        );
        assert_eq!(Step::parse(&json!({"op":"ping"})).unwrap(), Step::Ping);
        assert_eq!(
            Step::parse(&json!({"op":"connect"})).unwrap(),
            Step::Connect {
                handlers: Map::new(),
                tasks: Vec::new(),
                trace_context: None,
            }
        );
    }
}
