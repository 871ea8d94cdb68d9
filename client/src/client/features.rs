//! The rest of what a client asks a server: resources, prompts, completion, ping and the log
//! level, in both eras.
//!
//! Listings share [`Client::list_all`]'s loop; `resources/read` and `prompts/get` may need
//! input in the modern era and so go through the same multi round-trip loop as `tools/call`.
//! Each answer is reshaped by [`crate::answers`]. `ping` and `logging/setLevel` are not
//! methods of 2026-07-28: a modern connection refuses `ping` itself (`capability_missing`)
//! and keeps the log level for the `_meta` of later requests.

use std::future::pending;

use serde_json::{Map, Value, json};

use super::seams::ClientSeams;
use super::{Client, Connection};
use crate::answers;
use crate::content::SeenRules;
use crate::era::InputHandler;
use crate::error::Error;
use crate::listing::ListKind;

impl Client {
    /// Lists every resource (`resources/list`), page by page; entries as received.
    pub async fn list_resources(&self) -> Result<Vec<Value>, Error> {
        self.list_all(ListKind::RESOURCES).await
    }

    /// Lists every resource template (`resources/templates/list`); entries as received.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, Error> {
        self.list_all(ListKind::RESOURCE_TEMPLATES).await
    }

    /// Lists every prompt (`prompts/list`); entries as received.
    pub async fn list_prompts(&self) -> Result<Vec<Value>, Error> {
        self.list_all(ListKind::PROMPTS).await
    }

    /// Reads the resource `uri` (`resources/read`); returns `{"contents":[…]}`, each
    /// contents as seen (text as received, a blob as its length and SHA-256). In the modern
    /// era `input` answers the server's input requests, as for [`Client::call_tool_with_input`].
    pub async fn read_resource(&self, uri: &str, input: &InputHandler) -> Result<Value, Error> {
        let params = json!({"uri": uri});
        let result = self.with_input("resources/read", params, input).await;
        self.answer(result, answers::read_resource, || json!({"contents": []}))
    }

    /// Gets the prompt `name` (`prompts/get`) with `arguments` (left out when `None`); returns
    /// `{"description":…,"messages":[{"role":…,"content":…}]}`, each content block as seen.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        input: &InputHandler,
    ) -> Result<Value, Error> {
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        if let Some(arguments) = arguments {
            params.insert("arguments".into(), Value::Object(arguments));
        }
        let result = self
            .with_input("prompts/get", Value::Object(params), input)
            .await;
        self.answer(result, answers::get_prompt, || json!({"messages": []}))
    }

    /// Asks for completions (`completion/complete`) of `argument` for `reference`, with
    /// `context` when given, each sent as given; returns the result's `completion` object
    /// (`values`, and `total` and `hasMore` when received).
    pub async fn complete(
        &self,
        reference: Value,
        argument: Value,
        context: Option<Value>,
    ) -> Result<Value, Error> {
        let mut params = Map::new();
        params.insert("ref".into(), reference);
        params.insert("argument".into(), argument);
        if let Some(context) = context {
            params.insert("context".into(), context);
        }
        let result = self
            .plain("completion/complete", Value::Object(params))
            .await;
        self.answer(result, answers::complete, || json!({"values": []}))
    }

    /// Sends `ping`; its result is not looked into. The modern era has no `ping`: refused
    /// locally with `capability_missing`.
    pub async fn ping(&self) -> Result<(), Error> {
        self.plain("ping", json!({})).await.map(drop)
    }

    /// Sets the server's log level (`logging/setLevel` with `level`). The modern era has no
    /// such method: the level is kept instead, and every later request carries it in
    /// `_meta["io.modelcontextprotocol/logLevel"]` (a server that did not declare `logging`
    /// refuses it locally with `capability_missing`).
    pub async fn set_logging_level(&self, level: &str) -> Result<(), Error> {
        if matches!(self.connection, Connection::Modern(_))
            && self.require("logging/setLevel").is_err()
        {
            self.require_capability("logging", "set_logging_level")?;
            self.session.keep_log_level(level);
            return Ok(());
        }
        self.plain("logging/setLevel", json!({"level": level}))
            .await
            .map(drop)
    }

    /// The caller's answer: the result reshaped by `reshape` under the seam's content rules,
    /// then past the seam that may pass a failure off as the `empty` answer.
    fn answer(
        &self,
        result: Result<Value, Error>,
        reshape: fn(&Value, SeenRules) -> Result<Value, Error>,
        empty: impl FnOnce() -> Value,
    ) -> Result<Value, Error> {
        let seams = self.session.seams();
        let rules = seams.content_rules();
        seams.answer_outcome(result.and_then(|r| reshape(&r, rules)), empty)
    }

    /// A request that may need input in the modern era (multi round-trip); a plain request in
    /// the legacy era.
    async fn with_input(
        &self,
        method: &str,
        params: Value,
        input: &InputHandler,
    ) -> Result<Value, Error> {
        self.require(method)?;
        match &self.connection {
            Connection::Legacy(_) => self.request(method, params, pending()).await,
            Connection::Modern(modern) => {
                let session = &self.session;
                let cancel = pending();
                modern
                    .call_with_input(session, method, params, input, cancel)
                    .await
            }
        }
    }

    /// A request of one round trip, once the server declared what it needs.
    async fn plain(&self, method: &str, params: Value) -> Result<Value, Error> {
        self.require(method)?;
        match &self.connection {
            Connection::Legacy(_) => self.request(method, params, pending()).await,
            Connection::Modern(modern) => modern.plain(&self.session, method, params).await,
        }
    }
}
