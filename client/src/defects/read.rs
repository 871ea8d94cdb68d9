//! Seam: what is read. Whether server requests are answered and a server exit noticed, how
//! an HTTP answer's content type is taken, and how results become the caller's answer.
//!
//! Defects here: `ignore-server-requests`, `answer-in-modern`, `stringify-reply-ids`,
//! `string-error-codes`, `answer-notifications`, `obey-server-cancel`, `no-batches`,
//! `assumed-code-meanings`, `misdeliver-stray-responses`, `ignore-server-exit`, `json-only`,
//! `lenient-content-type`, `ignore-result-type`, `text-only`, `ignore-is-error`, `join-text`,
//! `rpc-error-as-empty`, `close-on-error`, `normalize-tools`, `ignore-forbidden`,
//! `object-structured-only`, `first-revision-content`, `no-restart`, `strict-content-type`.

use serde_json::{Value, json};

use super::Defects;
use crate::era::mrtr::Shape;
use crate::error::{Error, ErrorKind};
use crate::jsonrpc::{self, Incoming};
use crate::seams::wire::{AfterExit, Body};
use crate::session::Session;
use crate::tools::{ToolOutput, ToolResult};

impl Defects {
    /// How a received frame becomes messages; correct: `classify`'s reading (a batch is
    /// taken element by element).
    pub(crate) fn read_frame(
        &self,
        frame: &[u8],
        classify: impl FnOnce(&[u8]) -> Vec<Result<Incoming, String>>,
    ) -> Vec<Result<Incoming, String>> {
        let batch = frame.trim_ascii_start().starts_with(b"[");
        match batch && self.no_batches {
            true => vec![Err("a batch, which the no-batches defect refuses".into())],
            false => classify(frame),
        }
    }

    /// The reply to a server request; correct: `reply` as it is (none in the 2026-07-28 era).
    /// `answer` makes the legacy answer for a defect that answers in the modern era.
    pub(crate) fn request_reply(
        &self,
        reply: Option<Value>,
        answer: impl FnOnce() -> Value,
    ) -> Option<Value> {
        if self.ignore_server_requests {
            return None;
        }
        let mut reply = match reply {
            None if self.answer_in_modern => Some(answer()),
            reply => reply,
        }?;
        if self.stringify_reply_ids {
            if let Some(id) = reply.get("id").filter(|id| id.is_number()) {
                reply["id"] = json!(id.to_string());
            }
        }
        if self.string_error_codes {
            if let Some(code) = reply.pointer("/error/code").filter(|c| c.is_number()) {
                reply["error"]["code"] = json!(code.to_string());
            }
        }
        Some(reply)
    }

    /// Who gets a response whose id is not pending (late, after a cancel or timeout, or
    /// never used); correct: nobody, it is ignored.
    pub(crate) fn stray_response_waiter<T>(&self, oldest: impl FnOnce() -> Option<T>) -> Option<T> {
        match self.misdeliver_stray_responses {
            true => oldest(),
            false => None,
        }
    }

    /// The reply to a server notification; correct: none.
    pub(crate) fn notification_reply(&self, method: &str) -> Option<Value> {
        self.answer_notifications.then(|| {
            jsonrpc::error_response(
                Value::Null,
                jsonrpc::METHOD_NOT_FOUND,
                &format!("notification not handled: {method}"),
            )
        })
    }

    /// The error every pending request fails with after a server notification; correct:
    /// none (a server's `notifications/cancelled` names one of its own requests, never ours).
    pub(crate) fn fails_all_after(&self, method: &str) -> Option<Error> {
        let why = "the server sent notifications/cancelled (obey-server-cancel defect)";
        (self.obey_server_cancel && method == "notifications/cancelled")
            .then(|| Error::new(ErrorKind::Cancelled, why))
    }

    /// What follows the server's stdout closing; correct: `correct`.
    pub(crate) fn after_server_exit(&self, correct: AfterExit) -> AfterExit {
        match correct {
            _ if self.ignore_server_exit => AfterExit::Nothing,
            AfterExit::FailPending if self.no_restart => AfterExit::Close,
            correct => correct,
        }
    }

    /// The media type of a `Content-Type` value; correct: its essence (the defect takes the
    /// whole value, parameters included).
    pub(crate) fn media_type<'a>(&self, essence: &'a str, whole: &'a str) -> &'a str {
        match self.strict_content_type {
            true => whole.trim(),
            false => essence,
        }
    }

    /// How an HTTP answer's body is read; correct: as its Content-Type says.
    pub(crate) fn reply_body(&self, body: Body) -> Body {
        match body {
            Body::Other(_) if self.lenient_content_type => Body::Json,
            Body::EventStream if self.json_only => {
                Body::Other("an SSE stream, which the json-only defect refuses".into())
            }
            body => body,
        }
    }

    /// Reads a modern result's `resultType`; correct: `shape`'s reading.
    pub(crate) fn result_shape(
        &self,
        result: Value,
        shape: impl FnOnce(Value) -> Result<Shape, Error>,
    ) -> Result<Shape, Error> {
        match result.is_object() && self.ignore_result_type {
            true => Ok(Shape::Complete(result)),
            false => shape(result),
        }
    }

    /// A `tools/call` result as the caller's answer; correct: `output`'s.
    pub(crate) fn tool_output(
        &self,
        mut result: Value,
        output: impl FnOnce(Value) -> Result<ToolOutput, Error>,
    ) -> Result<ToolOutput, Error> {
        if self.object_structured_only
            && let Some(structured) = result.get("structuredContent")
            && !(structured.is_object() || structured.is_null())
        {
            return Err(Error::invalid(format!(
                "structuredContent is not an object: {structured}"
            )));
        }
        let blocks = result.get("content").and_then(Value::as_array);
        let known = |b: &Value| {
            let kind = b.get("type").and_then(Value::as_str).unwrap_or_default();
            ["text", "image", "resource"].contains(&kind) && b.get("annotations").is_none()
        };
        if self.first_revision_content && blocks.is_some_and(|b| !b.iter().all(known)) {
            return Err(Error::invalid(
                "a content block of a type or shape unknown in 2024-11-05",
            ));
        }
        if let Value::Object(fields) = &mut result {
            if self.ignore_is_error {
                fields.remove("isError");
            }
            if self.text_only {
                fields.remove("structuredContent");
            }
        }
        match output(result)? {
            ToolOutput::Text(texts) if self.join_text => {
                Ok(ToolOutput::Text(vec![texts.join("\n")]))
            }
            answer => Ok(answer),
        }
    }

    /// Whether an HTTP error status fails its request at once; correct: always (`true`).
    pub(crate) fn fails_on_status(&self, status: Option<u16>) -> bool {
        !(self.ignore_forbidden && status == Some(403))
    }

    /// What the caller gets for a finished `tools/call`; correct: `outcome` as it is.
    pub(crate) async fn call_outcome(
        &self,
        outcome: Result<ToolResult, Error>,
        session: &Session,
    ) -> Result<ToolResult, Error> {
        let outcome = match outcome {
            Err(e) if e.kind == ErrorKind::ProtocolError && self.rpc_error_as_empty => {
                Ok(ToolResult {
                    output: ToolOutput::Text(Vec::new()),
                    content: Vec::new(),
                })
            }
            // As some libraries name -32001 a request timeout and -32000 a closed connection.
            Err(e) if self.assumed_code_meanings && e.code == Some(-32001) => {
                Err(e.with_kind(ErrorKind::Timeout))
            }
            Err(e) if self.assumed_code_meanings && e.code == Some(-32000) => {
                Err(e.with_kind(ErrorKind::TransportClosed))
            }
            other => other,
        };
        if outcome.is_err() && self.close_on_error {
            session.shutdown().await;
        }
        outcome
    }

    /// What the caller gets for a finished `resources/read`, `prompts/get` or
    /// `completion/complete`; correct: `outcome` as it is (`empty`: the empty answer a
    /// defect passes off as success).
    pub(crate) fn answer_outcome(
        &self,
        outcome: Result<Value, Error>,
        empty: impl FnOnce() -> Value,
    ) -> Result<Value, Error> {
        match outcome {
            Err(e) if e.kind == ErrorKind::ProtocolError && self.rpc_error_as_empty => Ok(empty()),
            other => other,
        }
    }

    /// The tools a listing returns to the caller; correct: as received.
    pub(crate) fn tools_returned(&self, tools: Vec<Value>) -> Vec<Value> {
        if !self.normalize_tools {
            return tools;
        }
        let keep = ["name", "description", "inputSchema"];
        let trim = |tool: Value| match tool {
            Value::Object(map) => map
                .into_iter()
                .filter(|(k, _)| keep.contains(&k.as_str()))
                .collect(),
            other => other,
        };
        tools.into_iter().map(trim).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call_output;
    use serde_json::json;

    fn with(name: &str) -> Defects {
        Defects::only(name)
    }

    #[test]
    fn strict_content_type_takes_the_parameters_too() {
        let whole = "application/json; charset=utf-8";
        assert_eq!(
            Defects::default().media_type("application/json", whole),
            "application/json"
        );
        assert_eq!(
            with("strict-content-type").media_type("application/json", whole),
            whole
        );
    }

    #[test]
    fn result_defects_bend_the_answer() {
        let r = json!({"isError":true,"structuredContent":{"a":1},
                       "content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]});
        let ok = Defects::default();
        assert!(ok.tool_output(r.clone(), call_output).is_err());
        let lax = with("ignore-is-error").tool_output(r.clone(), call_output);
        assert_eq!(lax.unwrap(), ToolOutput::Structured(json!({"a":1})));
        let r = json!({"structuredContent":{"a":1},
                       "content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]});
        let text = with("text-only").tool_output(r.clone(), call_output);
        assert_eq!(
            text.unwrap(),
            ToolOutput::Text(vec!["x".into(), "y".into()])
        );
        let mut joined = with("text-only");
        joined.enable("join-text");
        assert_eq!(
            joined.tool_output(r, call_output).unwrap(),
            ToolOutput::Text(vec!["x\ny".into()])
        );
        let tools = vec![json!({"name":"a","title":"A","inputSchema":{}})];
        assert_eq!(ok.tools_returned(tools.clone()), tools);
        assert_eq!(
            with("normalize-tools").tools_returned(tools),
            [json!({"name":"a","inputSchema":{}})]
        );
    }

    #[test]
    fn reply_defects_bend_answers_to_the_server() {
        let ping = || json!({"jsonrpc":"2.0","id":7,"result":{}});
        let ok = Defects::default();
        assert_eq!(ok.request_reply(Some(ping()), ping), Some(ping()));
        assert_eq!(ok.request_reply(None, ping), None);
        assert_eq!(ok.notification_reply("notifications/x"), None);
        assert_eq!(
            with("answer-in-modern").request_reply(None, ping),
            Some(ping())
        );
        assert_eq!(
            with("ignore-server-requests").request_reply(Some(ping()), ping),
            None
        );
        let bent = with("stringify-reply-ids").request_reply(Some(ping()), ping);
        assert_eq!(bent.unwrap()["id"], json!("7"));
        let error = json!({"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"m"}});
        let bent = with("string-error-codes").request_reply(Some(error.clone()), || error);
        assert_eq!(bent.unwrap()["error"]["code"], json!("-32601"));
        let answer = with("answer-notifications").notification_reply("notifications/x");
        assert_eq!(answer.unwrap()["id"], Value::Null);
        let batch = br#"[{"jsonrpc":"2.0","method":"m"}]"#;
        assert!(ok.read_frame(batch, jsonrpc::classify_frame)[0].is_ok());
        assert!(with("no-batches").read_frame(batch, jsonrpc::classify_frame)[0].is_err());
    }

    #[test]
    fn result_type_is_read_unless_ignored() {
        let banana = json!({"resultType":"banana"});
        let shape = |r| crate::era::mrtr::shape(r, "m", false, false);
        assert!(
            Defects::default()
                .result_shape(banana.clone(), shape)
                .is_err()
        );
        let lax = with("ignore-result-type").result_shape(banana, shape);
        assert!(matches!(lax, Ok(Shape::Complete(_))));
    }
}
