//! The hooks asked by the connection's steps: the handshake, the era's probe and fallback, and
//! the client's listings and calls. Some act on the session (a defect may send more); each
//! default is the correct decision.

use serde_json::Value;

use crate::content::SeenRules;
use crate::era::cache::Lifetime;
use crate::era::mrtr::Shape;
use crate::era::{Connected, Discovery};
use crate::error::Error;
use crate::handshake::Handshake;
use crate::listing::ListingRules;
use crate::schema::Policy;
use crate::session::{InFlight, Session};
use crate::tools::{ToolOutput, ToolResult};

/// The decisions made by the connection's steps.
pub(crate) trait Steps {
    // Versions and the handshake.

    /// Judges the answer to `initialize`; correct: `judge`'s verdict.
    fn accept_initialize(
        &self,
        outcome: Result<Value, Error>,
        judge: impl FnOnce(Result<Value, Error>) -> Result<Handshake, Error>,
    ) -> Result<Handshake, Error> {
        judge(outcome)
    }

    /// The version sent in `MCP-Protocol-Version` after the handshake; correct: the negotiated.
    fn version_header<'a>(
        &self,
        _offered: &'a str,
        negotiated: Option<&'a str>,
    ) -> Option<&'a str> {
        negotiated
    }

    /// A request sent while `initialize` waits for its result; correct: none.
    fn while_initializing<'s>(&self, _session: &'s Session) -> Option<InFlight<'s>> {
        None
    }

    /// Runs once the handshake is done; correct: nothing.
    async fn after_handshake(&self, _session: &Session) {}

    /// Whether a new handshake starts a new HTTP session; correct: whenever the last was `lost`.
    fn renew_lost_session(&self, lost: bool) -> bool {
        lost
    }

    /// The version to retry with after -32022 (`tried`: every version sent so far); correct:
    /// `choose`'s.
    fn retry_version(
        &self,
        error: &Error,
        tried: &[String],
        choose: impl FnOnce(&Error, &[String]) -> Option<String>,
    ) -> Option<String> {
        choose(error, tried)
    }

    // The era.

    /// The origin whose era is cached; correct: the connection's.
    fn era_cache_origin<'a>(&self, origin: Option<&'a str>) -> Option<&'a str> {
        origin
    }

    /// What to connect with instead of the `server/discover` probe; correct: `None`, probe.
    async fn instead_of_probe(
        &self,
        _session: &Session,
        _dual: bool,
    ) -> Option<Result<Connected, Error>> {
        None
    }

    /// What an error answer to the probe means (`legacy`: the verdict that falls back);
    /// correct: `judge(error, dual)`.
    fn judge_probe<V>(
        &self,
        error: Error,
        dual: bool,
        _legacy: V,
        judge: impl FnOnce(Error, bool) -> V,
    ) -> V {
        judge(error, dual)
    }

    /// Runs after a `DiscoverResult` was accepted; correct: nothing.
    async fn after_discover(&self, _session: &Session) {}

    /// The client capabilities a modern request declares in `_meta`; correct: `capabilities`.
    fn client_capabilities(&self, capabilities: &Value, _found: &Discovery) -> Value {
        capabilities.clone()
    }

    /// Runs once a modern-era connect succeeded; correct: nothing (no GET stream, no `ping`).
    async fn after_modern_connect(&self, _session: &Session) {}

    /// Cleans up after a failed connect; correct: the session is shut down.
    async fn clean_up_failed_connect(&self, session: &Session) {
        session.shutdown().await
    }

    // Listings and the cache.

    /// The listing rules; correct: [`ListingRules::SPEC`].
    fn listing_rules(&self) -> ListingRules {
        ListingRules::SPEC
    }

    /// Whether a listing whose page request failed with `error` returns the pages before it;
    /// correct: never.
    fn partial_listing_on_error(&self, _error: &Error) -> bool {
        false
    }

    /// Whether a failed page request is sent again once a new session started; correct: never.
    fn resume_listing(&self, _error: &Error) -> bool {
        false
    }

    /// The tools a listing returns to the caller; correct: as received.
    fn tools_returned(&self, tools: Vec<Value>) -> Vec<Value> {
        tools
    }

    /// Whether a tool with an invalid `x-mcp-header` annotation stays listed; correct: no.
    fn keep_invalid_header_tools(&self) -> bool {
        false
    }

    /// Whether a `tools/call` refused with `HeaderMismatch` lists the tools again and
    /// retries; correct: yes.
    fn relist_on_header_mismatch(&self) -> bool {
        true
    }

    /// How long the result of `method` may be reused; correct: `lifetime`.
    fn cache_lifetime(&self, _method: &str, _retry: bool, lifetime: Lifetime) -> Lifetime {
        lifetime
    }

    /// The cache key of a request of `method`; correct: `key` (method and params).
    fn cache_key(&self, _method: &str, key: String) -> String {
        key
    }

    /// Whether a cursor the server refused drops the cached pages; correct: yes.
    fn discard_pages_on_invalid_cursor(&self) -> bool {
        true
    }

    // Calls and results.

    /// Whether a request is sent although the capability it needs is not `declared`;
    /// correct: only when declared.
    fn may_send_undeclared(&self, declared: bool) -> bool {
        declared
    }

    /// How content is read; correct: [`SeenRules::SPEC`].
    fn content_rules(&self) -> SeenRules {
        SeenRules::SPEC
    }

    /// The output-schema policy; correct: [`Policy::SPEC`].
    fn schema_policy(&self) -> Policy {
        Policy::SPEC
    }

    /// Reads a modern result's `resultType`; correct: `shape`'s reading.
    fn result_shape(
        &self,
        result: Value,
        shape: impl FnOnce(Value) -> Result<Shape, Error>,
    ) -> Result<Shape, Error> {
        shape(result)
    }

    /// A `tools/call` result as the caller's answer; correct: `output`'s.
    fn tool_output(
        &self,
        result: Value,
        output: impl FnOnce(Value) -> Result<ToolOutput, Error>,
    ) -> Result<ToolOutput, Error> {
        output(result)
    }

    /// What the caller gets for a finished `tools/call`; correct: `outcome` as it is.
    async fn call_outcome(
        &self,
        outcome: Result<ToolResult, Error>,
        _session: &Session,
    ) -> Result<ToolResult, Error> {
        outcome
    }

    /// What the caller gets for a finished `resources/read`, `prompts/get` or
    /// `completion/complete`; correct: `outcome` as it is.
    fn answer_outcome(
        &self,
        outcome: Result<Value, Error>,
        _empty: impl FnOnce() -> Value,
    ) -> Result<Value, Error> {
        outcome
    }

    // Subscriptions.

    /// Whether `resources/subscribe` may be sent; correct: only when `declared`.
    fn may_subscribe(&self, declared: bool) -> bool {
        declared
    }

    /// Whether a subscription lost with its stdio server is opened again; correct: yes.
    fn resends_listen(&self) -> bool {
        true
    }

    /// The filter a `listen` step reports; correct: `acknowledged`, not `requested`.
    fn listen_filter(&self, _requested: &Value, acknowledged: Value) -> Value {
        acknowledged
    }
}

#[cfg(not(feature = "defects"))]
impl Steps for super::Seams {}
