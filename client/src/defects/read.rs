//! Seam: what is read. Whether server requests are answered and a server exit noticed, how
//! an HTTP answer's content type is taken, and how results become the caller's answer.
//!
//! Defects here: `ignore-server-requests`, `ignore-server-exit`, `json-only`,
//! `lenient-content-type`, `ignore-result-type`, `text-only`, `ignore-is-error`, `join-text`,
//! `rpc-error-as-empty`, `close-on-error`, `normalize-tools`, `ignore-forbidden`,
//! `object-structured-only`, `first-revision-content`, `no-restart`.

use serde_json::Value;

use super::Defects;
use crate::era::mrtr::Shape;
use crate::error::{Error, ErrorKind};
use crate::router::Router;
use crate::session::Session;
use crate::tools::ToolOutput;
use crate::transport::http::Body;

impl Defects {
    /// The router of a new connection; correct: one that answers server requests.
    pub(crate) fn router(&self) -> Router {
        match self.ignore_server_requests {
            true => Router::deaf(),
            false => Router::new(),
        }
    }

    /// The server's stdout closed; correct: every request in flight fails, and the connection
    /// ends (`router.close`) unless the server is to be started again (`restart`: a 2026-07-28
    /// stdio server), when the router stays open for the next request. Returns whether the
    /// server is to be started again.
    pub(crate) fn server_exited(&self, router: &Router, why: &str, restart: bool) -> bool {
        match (self.ignore_server_exit, restart && !self.no_restart) {
            (true, _) => false,
            (false, true) => {
                router.fail_pending(why);
                true
            }
            (false, false) => {
                router.close(why);
                false
            }
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
        outcome: Result<ToolOutput, Error>,
        session: &Session,
    ) -> Result<ToolOutput, Error> {
        let outcome = match outcome {
            Err(e) if e.kind == ErrorKind::ProtocolError && self.rpc_error_as_empty => {
                Ok(ToolOutput::Text(Vec::new()))
            }
            other => other,
        };
        if outcome.is_err() && self.close_on_error {
            session.shutdown().await;
        }
        outcome
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
    fn result_type_is_read_unless_ignored() {
        let banana = json!({"resultType":"banana"});
        let shape = |r| crate::era::mrtr::shape(r, "m", false);
        assert!(
            Defects::default()
                .result_shape(banana.clone(), shape)
                .is_err()
        );
        let lax = with("ignore-result-type").result_shape(banana, shape);
        assert!(matches!(lax, Ok(Shape::Complete(_))));
    }
}
