//! The seam of the client's calls (see `seams/`): listings, results, content, schemas,
//! subscriptions, and a connect's last steps. Each default is the correct decision.

use serde_json::Value;

use crate::content::SeenRules;
use crate::error::Error;
use crate::icons::Verdict;
use crate::listing::ListingRules;
use crate::schema::Policy;
use crate::session::Session;
use crate::tools::{ToolOutput, ToolResult};

/// The decisions of the client's calls.
pub(crate) trait ClientSeams {
    /// Whether a new handshake starts a new HTTP session; correct: whenever the last was `lost`.
    fn renew_lost_session(&self, lost: bool) -> bool {
        lost
    }

    /// Runs once a modern-era connect succeeded; correct: nothing (no GET stream, no `ping`).
    async fn after_modern_connect(&self, _session: &Session) {}

    /// Cleans up after a failed connect; correct: the session is shut down.
    async fn clean_up_failed_connect(&self, session: &Session) {
        session.shutdown().await
    }

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

    /// Whether `resources/subscribe` may be sent; correct: only when `declared`.
    fn may_subscribe(&self, declared: bool) -> bool {
        declared
    }

    /// Whether a subscription lost with its stdio server is opened again; correct: yes.
    fn resends_listen(&self) -> bool {
        true
    }

    /// What is done with the icon `src`; correct: `verdict` (see [`crate::icons`]).
    fn icon_verdict(&self, verdict: Verdict, _src: &str) -> Verdict {
        verdict
    }

    /// An `Authorization` value sent with an icon fetch; correct: none (icons are fetched
    /// without credentials).
    fn icon_credentials(&self) -> Option<&'static str> {
        None
    }

    /// Whether an icon fetch answered with a redirect follows it; correct: never.
    fn icon_follows_redirects(&self) -> bool {
        false
    }

    /// The filter a `listen` step reports; correct: `acknowledged`, not `requested`.
    fn listen_filter(&self, _requested: &Value, acknowledged: Value) -> Value {
        acknowledged
    }
}

#[cfg(not(feature = "defects"))]
impl ClientSeams for crate::seams::Seams {}
