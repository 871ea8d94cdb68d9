//! The plan loop against a scripted adapter: bookkeeping, sleep, redaction, the final close.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::{
    Adapter, Env, Kind, Step, StepError, block_on, read_env_from, redact, run_plan, undeclared,
};

#[derive(Default)]
struct Scripted {
    /// What the adapter was asked, in order.
    calls: Vec<String>,
}

impl Adapter for Scripted {
    type Connection = u32;
    const OPS: &'static [&'static str] = &["list_tools", "call_tool"];
    const FEATURES: &'static [&'static str] = &["roots"];

    async fn connect(
        &mut self,
        _: &Env,
        handlers: &Map<String, Value>,
    ) -> Result<(u32, Value), StepError> {
        self.calls.push(format!("connect {}", handlers.len()));
        Ok((7, json!({"protocolVersion":"2025-11-25"})))
    }

    async fn step(
        &mut self,
        connection: &mut u32,
        env: &Env,
        step: &Step,
    ) -> Result<Value, StepError> {
        self.calls.push(format!("{} on {connection}", step.op()));
        match step {
            Step::CallTool(call) if call.name == "leak" => Err(StepError::http_status(
                401,
                format!(
                    "refused Bearer {}",
                    env.bearer_token.as_deref().unwrap_or_default()
                ),
            )),
            _ => Ok(json!({"tools": []})),
        }
    }

    async fn close(&mut self, connection: u32, _: &Env) -> Result<(), StepError> {
        self.calls.push(format!("close {connection}"));
        Ok(())
    }

    fn limits(&self) -> &[&'static str] {
        &["choose_version"]
    }
}

fn env(plan: Value) -> Env {
    let plan = plan.to_string();
    read_env_from(|name| match name {
        "MCP_HARNESS_TRANSPORT" => Some("http".into()),
        "MCP_HARNESS_SERVER_URL" => Some("http://127.0.0.1:9/mcp".into()),
        "MCP_HARNESS_BEARER_TOKEN" => Some("tok-3141".into()),
        "MCP_HARNESS_PLAN" => Some(plan.clone()),
        _ => None,
    })
    .unwrap()
}

fn run(plan: Value) -> (Vec<Value>, Vec<String>) {
    let env = env(plan);
    let mut adapter = Scripted::default();
    let mut lines = Vec::new();
    block_on(run_plan(&mut adapter, &env, |line| lines.push(line)));
    (lines, adapter.calls)
}

fn kind(line: &Value) -> &str {
    line["error"]["kind"].as_str().unwrap_or("-")
}

#[test]
fn steps_before_connect_and_after_close_are_transport_closed() {
    let (lines, calls) = run(json!([
        {"op":"list_tools"}, {"op":"close"}, {"op":"teleport"},
        {"op":"connect"}, {"op":"list_tools"}, {"op":"close"}, {"op":"call_tool","name":"x"},
    ]));
    let kinds: Vec<&str> = lines.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "transport_closed",
            "transport_closed",
            "unsupported_op",
            "-",
            "-",
            "-",
            "transport_closed"
        ]
    );
    assert_eq!(lines[3]["limits"], json!(["choose_version", "tasks"])); // no tasks feature
    assert_eq!(lines[2]["op"], "teleport");
    assert_eq!(calls, ["connect 0", "list_tools on 7", "close 7"]);
}

#[test]
fn a_second_connect_closes_the_first_and_the_end_closes_silently() {
    let (lines, calls) = run(json!([
        {"op":"connect","handlers":{"roots/list":{"roots":[]}}}, {"op":"connect"}, {"op":"ping"}
    ]));
    assert_eq!(lines.len(), 3);
    assert_eq!(kind(&lines[2]), Kind::UnsupportedOp.as_str());
    assert_eq!(calls, ["connect 1", "close 7", "connect 0", "close 7"]);
}

#[test]
fn sleep_is_the_kits_and_bad_steps_are_reported_not_run() {
    let started = Instant::now();
    let (lines, calls) =
        run(json!([{"op":"sleep","ms":60}, {"op":"sleep"}, {"op":"connect","handlers":[]}]));
    assert!(started.elapsed() >= Duration::from_millis(60));
    assert_eq!(lines[0]["ok"], json!({}));
    assert_eq!(kind(&lines[1]), "unsupported_op");
    assert_eq!(kind(&lines[2]), "unsupported_op");
    assert!(calls.is_empty());
}

#[test]
fn the_bearer_token_is_blanked_out_of_messages() {
    let (lines, _) = run(json!([{"op":"connect"}, {"op":"call_tool","name":"leak"}]));
    assert_eq!(
        lines[1]["error"],
        json!({"kind":"http_status","status":401,"message":"refused Bearer [token]"})
    );
}

#[test]
fn a_step_that_needs_an_undeclared_feature_is_unsupported_and_the_rest_has_no_connection() {
    let (lines, calls) = run(json!([
        {"op":"connect"},
        {"op":"connect","handlers":{"roots/list":{"roots":[]},"elicitation/create":{"action":"decline"}}},
        {"op":"list_tools"},
        {"op":"connect"},
        {"op":"call_tool","name":"x","input":{"sampling/createMessage":{}}},
        {"op":"call_tool","name":"x","input":{"roots/list":{"roots":[]}}},
    ]));
    let kinds: Vec<&str> = lines.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "-",
            "unsupported_op",
            "transport_closed",
            "-",
            "unsupported_op",
            "-"
        ]
    );
    assert!(
        lines[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("elicitation"),
        "{lines:?}"
    );
    // The first connection was closed before the refused connect; nothing reached the library.
    assert_eq!(
        calls,
        [
            "connect 0",
            "close 7",
            "connect 0",
            "call_tool on 7",
            "close 7"
        ]
    );
}

#[test]
fn sampling_tools_and_url_consent_are_features() {
    let env = env(json!([]));
    let needs = |handlers: Value, declared: &[&str]| {
        let step = Step::parse(&json!({"op": "connect", "handlers": handlers}));
        crate::undeclared(&step.expect("a connect step"), &env, declared)
    };
    let tool_use = json!({"content": [{"type": "tool_use", "id": "c", "name": "w", "input": {}}]});
    let sampling = |answer: Value| json!({"sampling/createMessage": answer});
    assert_eq!(
        needs(sampling(tool_use.clone()), &["sampling"]),
        ["sampling_tools"]
    );
    assert_eq!(
        needs(sampling(json!({"rejected": true})), &["sampling"]),
        ["sampling_tools"]
    );
    let text = json!({"content": {"type": "text", "text": "t"}});
    assert!(needs(sampling(text), &["sampling"]).is_empty());
    assert!(needs(sampling(tool_use), &["sampling", "sampling_tools"]).is_empty());
    let browser = json!({"elicitation/create": {"url": {"action": "accept", "browser": true}}});
    assert_eq!(needs(browser.clone(), &["elicitation"]), ["url_consent"]);
    assert!(needs(browser, &["elicitation", "url_consent"]).is_empty());
    let plain = json!({"elicitation/create": {"url": {"action": "accept"}}});
    assert!(needs(plain, &["elicitation"]).is_empty());
}

#[test]
fn client_credentials_are_read_redacted_and_a_machine_connect_needs_their_feature() {
    let creds =
        json!({"client_id": "m2m", "method": "client_secret_post", "client_secret": "m2m-s3cret"});
    let with = |value: String| {
        read_env_from(move |name| match name {
            "MCP_HARNESS_TRANSPORT" => Some("http".into()),
            "MCP_HARNESS_SERVER_URL" => Some("http://127.0.0.1:9/mcp".into()),
            "MCP_HARNESS_PLAN" => Some("[]".into()),
            "MCP_HARNESS_AUTH_REDIRECT_URI" => Some("http://127.0.0.1:9/cb".into()),
            "MCP_HARNESS_CLIENT_CREDENTIALS" => Some(value.clone()),
            _ => None,
        })
    };
    let env = with(creds.to_string()).unwrap();
    assert_eq!(env.client_credentials, Some(creds));
    assert_eq!(redact("a m2m-s3cret b", None), "a [secret] b");
    let connect = Step::parse(&json!({"op": "connect"})).unwrap();
    assert_eq!(
        undeclared(&connect, &env, &["oauth"]),
        ["client_credentials"]
    );
    assert!(undeclared(&connect, &env, &["client_credentials"]).is_empty());
    // Credentials saying "dpop": true make the connect need the dpop feature too.
    let mut dpop = env.clone();
    dpop.client_credentials = Some(json!({"client_id": "m2m", "dpop": true}));
    assert_eq!(
        undeclared(&connect, &dpop, &["client_credentials"]),
        ["dpop"]
    );
    assert!(undeclared(&connect, &dpop, &["client_credentials", "dpop"]).is_empty());
    let dpop_bad = json!({"client_id": "m", "method": "client_secret_post",
        "client_secret": "m2m-s3cret", "dpop": "yes"});
    let e = with(dpop_bad.to_string()).unwrap_err();
    assert!(e.problem.contains("dpop") && !e.problem.contains("m2m-s3cret"));
    for bad in [
        "nope",
        r#"{"method":"private_key_jwt"}"#,
        r#"{"client_id":"m","method":"x"}"#,
        r#"{"client_id":"m","method":"private_key_jwt"}"#,
    ] {
        let e = with(bad.to_owned()).unwrap_err();
        assert_eq!(e.variable, "MCP_HARNESS_CLIENT_CREDENTIALS", "{bad}");
    }
}
