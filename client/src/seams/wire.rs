//! The hooks asked where messages are written, read and carried: by the session, the router,
//! the listener and handlers, the transports, and authorization. Each default is the correct
//! decision; the types that only these decisions speak of live here too.

use std::future::Future;
use std::time::Duration;

use nix::sys::signal::Signal;
use reqwest::Url;
use reqwest::redirect::Policy;
use serde_json::Value;

use crate::error::Error;
use crate::jsonrpc::Incoming;

/// How the server learns that a request was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Telling {
    /// It is not told, for the reason given.
    Not(&'static str),
    /// Closing the request's response stream is the cancellation (modern HTTP).
    ByClosingTheStream,
    /// A `notifications/cancelled` naming the request.
    ByNotification,
}

/// One step of stopping the server; after each but the last it gets a grace period to exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Close its stdin (after flushing what is queued, within the grace period).
    CloseStdin,
    /// Send it a signal.
    Signal(Signal),
    /// Walk away, leaving it running (only a defect does this).
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    LeaveRunning,
}

/// What follows the server's stdout closing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterExit {
    /// Every request in flight fails and the connection ends.
    Close,
    /// Every request in flight fails; the router stays open for the restarted server.
    FailPending,
    /// Nothing: pending requests wait for their timeout (only a defect does this).
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    Nothing,
}

/// The body kinds a POST answer may have.
#[derive(Debug, PartialEq)]
pub(crate) enum Body {
    Json,
    EventStream,
    Other(String),
}

/// What a request does once its SSE response stream ended (or broke) before the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AfterCut {
    /// Give up: the request fails with the reason the stream ended.
    Fail,
    /// Legacy eras: resume the stream with a GET carrying `Last-Event-ID`.
    Resume,
    /// 2026-07-28: re-issue the request as a new request with a new id.
    Reissue,
    /// POST the very same request again, same id (only a defect does this).
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    Resend,
}

/// PKCE as the client will use it with one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pkce {
    S256,
    /// Only under a defect: the verifier sent as its own challenge.
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    Plain,
    /// Only under a defect: no PKCE at all.
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    Off,
}

/// How a confidential client with a secret authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenMethod {
    /// HTTP Basic.
    pub(crate) basic: bool,
    /// `client_secret` in the form.
    pub(crate) form: bool,
}

/// The decisions made where messages are written, read and carried.
pub(crate) trait Wire {
    // What is sent.

    /// What a session remembers between the messages it sends; nothing in the correct client.
    type Memory: Send + Sync;

    /// The memory of a new session (`modern_version`: the version a modern or dual-era client
    /// puts in `_meta`).
    fn memory(&self, modern_version: Option<String>) -> Self::Memory;

    /// The id a new request goes out with; correct: `fresh()`, never used before.
    fn request_id(
        &self,
        _memory: &Self::Memory,
        _method: &str,
        _params: &Value,
        fresh: impl FnOnce() -> i64,
    ) -> i64 {
        fresh()
    }

    /// The messages written for `message`, in order (`fresh` gives an unused id); correct:
    /// `[message]`.
    fn messages(
        &self,
        _memory: &Self::Memory,
        message: Value,
        _fresh: impl FnOnce() -> i64,
    ) -> Vec<Value> {
        vec![message]
    }

    /// A line written to a stdio server before anything else; correct: none.
    fn first_line(&self) -> Option<&'static str> {
        None
    }

    /// An HTTP request as it goes on the wire; correct: unchanged.
    fn http_request(&self, _request: &mut reqwest::Request) {}

    /// Whether authorization metadata requests carry `MCP-Protocol-Version`; correct: yes.
    fn metadata_version_header(&self) -> bool {
        true
    }

    // What is read.

    /// How a received frame becomes messages; correct: `classify`'s reading.
    fn read_frame(
        &self,
        frame: &[u8],
        classify: impl FnOnce(&[u8]) -> Vec<Result<Incoming, String>>,
    ) -> Vec<Result<Incoming, String>> {
        classify(frame)
    }

    /// The reply to a server request; correct: `reply` as it is (none in the 2026-07-28 era).
    /// `answer` makes the legacy answer for a defect that answers in the modern era.
    fn request_reply(
        &self,
        reply: Option<Value>,
        _answer: impl FnOnce() -> Value,
    ) -> Option<Value> {
        reply
    }

    /// Who gets a response whose id is not pending (`oldest`: the oldest request waiting);
    /// correct: nobody, it is ignored.
    fn stray_response_waiter<T>(&self, _oldest: impl FnOnce() -> Option<T>) -> Option<T> {
        None
    }

    /// The reply to a server notification; correct: none.
    fn notification_reply(&self, _method: &str) -> Option<Value> {
        None
    }

    /// The error every pending request fails with once a server notification `method` was
    /// read; correct: none (a server's `notifications/cancelled` names its own requests).
    fn fails_all_after(&self, _method: &str) -> Option<Error> {
        None
    }

    /// What follows the server's stdout closing; correct: `correct` (fail what is pending, and
    /// close unless a 2026-07-28 stdio server is started again for the next request).
    fn after_server_exit(&self, correct: AfterExit) -> AfterExit {
        correct
    }

    /// How an HTTP answer's body is read; correct: as its Content-Type says.
    fn reply_body(&self, body: Body) -> Body {
        body
    }

    /// Whether an HTTP error status fails its request at once; correct: always.
    fn fails_on_status(&self, _status: Option<u16>) -> bool {
        true
    }

    // HTTP streams.

    /// What follows a broken request stream; correct: `correct`. `resent` says whether the
    /// request was already POSTed a second time.
    fn after_stream_cut(&self, correct: AfterCut, _resent: bool) -> AfterCut {
        correct
    }

    /// How long to wait before reconnecting a stream; correct: `correct` (the server's `retry:`
    /// when it sent one, else `backoff`).
    fn reconnect_delay(&self, correct: Duration, _backoff: Duration) -> Duration {
        correct
    }

    /// Whether the messages of the standalone GET stream reach the router; correct: yes.
    fn get_stream_delivers(&self) -> bool {
        true
    }

    /// Whether a dropped standalone GET stream is opened again; correct: yes.
    fn reopens_stream(&self) -> bool {
        true
    }

    /// The `Last-Event-ID` a reopened GET stream resumes from; correct: the last id seen.
    fn resume_from<'a, T>(&self, last: Option<&'a T>) -> Option<&'a T> {
        last
    }

    /// Whether a dropped standalone GET stream costs the session; correct: no.
    fn stream_drop_loses_session(&self) -> bool {
        false
    }

    /// Whether a request's stream that was resumed and broke again before any event is
    /// resumed once more from the id the client had; correct: yes.
    fn keeps_event_id_after_recut(&self) -> bool {
        true
    }

    /// The media type that decides how a body is read, from a `Content-Type` value (`whole`)
    /// and its essence (the type before any parameter); correct: the essence.
    fn media_type<'a>(&self, essence: &'a str, _whole: &'a str) -> &'a str {
        essence
    }

    // The deprecated HTTP+SSE transport (2024-11-05).

    /// Whether a first POST refused 400, 404 or 405 is followed by the GET that looks for an
    /// HTTP+SSE server; correct: `correct` (no when the body is a recognised modern error,
    /// `modern_error`).
    fn sse_fallback(&self, correct: bool, _modern_error: bool) -> bool {
        correct
    }

    /// Where a message goes over the HTTP+SSE transport; correct: the URI of the server's
    /// `endpoint` event, not the URL the client was given.
    fn sse_post_url<'a>(&self, endpoint: &'a Url, _given: &'a Url) -> &'a Url {
        endpoint
    }

    // `x-mcp-header`.

    /// The `Mcp-Param-*` headers of a call (`present`: each header name with its value text;
    /// `absent`: the header names whose argument is absent or null); correct: `present`.
    fn param_headers(
        &self,
        present: Vec<(String, String)>,
        _absent: Vec<String>,
    ) -> Vec<(String, String)> {
        present
    }

    /// Whether `Mcp-Name` and `Mcp-Param-*` values go out as they are, unsafe or not;
    /// correct: no (unsafe values are sent in the `=?base64?…?=` form).
    fn raw_header_values(&self) -> bool {
        false
    }

    // Giving up.

    /// When a request times out; correct: when `timer` completes.
    fn timer(&self, timer: impl Future<Output = ()>) -> impl Future<Output = ()> {
        timer
    }

    /// When the caller's cancel is heeded; correct: when `cancel` completes.
    fn cancel<C: Future<Output = ()>>(&self, cancel: C) -> impl Future<Output = ()> {
        cancel
    }

    /// Whether a caller's cancel that fires after the request was answered still sends
    /// `notifications/cancelled` for it; correct: never (only requests still in progress
    /// are cancelled).
    fn cancels_after_answer(&self) -> bool {
        false
    }

    /// How the server is told that `method` was given up, and whether the request's exchange
    /// is dropped (`closes`: the transport cancels by closing the response stream); correct:
    /// `telling`, and the exchange always dropped.
    fn telling(&self, telling: Telling, _method: &str, _closes: bool) -> (bool, Telling) {
        (true, telling)
    }

    // Shutdown.

    /// Whether dropping the child process kills it; correct: yes, as a last resort.
    fn kill_on_drop(&self) -> bool {
        true
    }

    /// Whether the stdio server gets a process group of its own, which shutdown signals as
    /// a whole; correct: yes (a wrapper's grandchild is the server too).
    fn server_group(&self) -> bool {
        true
    }

    /// The steps that stop a stdio server; correct: `escalation`.
    fn escalation(&self, escalation: &'static [Stop]) -> &'static [Stop] {
        escalation
    }

    /// Whether closing an HTTP connection sends `DELETE`; correct: `has_session`.
    fn delete_on_close(&self, has_session: bool) -> bool {
        has_session
    }

    // TLS and destinations.

    /// Judges the server URL; correct: `check`'s verdict.
    fn server_url(
        &self,
        text: &str,
        check: impl FnOnce(&str) -> Result<Url, Error>,
    ) -> Result<Url, Error> {
        check(text)
    }

    /// The redirect policy of the MCP connection; correct: `policy`.
    fn redirects(&self, policy: Policy) -> Policy {
        policy
    }

    /// Whether the guarded resolver judges the addresses it hands the connector; correct: yes.
    fn ssrf_filter_resolved(&self) -> bool {
        true
    }

    /// The destination check of a discovered URL; correct: `correct()`.
    fn ssrf_check(
        &self,
        _url: &Url,
        correct: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        correct()
    }

    /// The redirect policy for discovered URLs; correct: `policy`.
    fn ssrf_redirects(&self, policy: Policy) -> Policy {
        policy
    }

    // What the server starts.

    /// The client capabilities declared; correct: `implied`, those the handlers imply
    /// (`elicitation`: the shape the revision gives a form-only declaration).
    fn declared_capabilities(&self, implied: Value, _elicitation: Value) -> Value {
        implied
    }

    /// Whether a server request is answered at once although its handler says to wait;
    /// correct: no.
    fn answers_at_once(&self) -> bool {
        false
    }

    /// The roots a `roots/list` is answered with; correct: `roots`.
    fn roots_answered(&self, roots: Value) -> Value {
        roots
    }

    /// Whether `set_roots` sends `notifications/roots/list_changed`; correct: exactly when
    /// `declared`.
    fn announces_roots_change(&self, declared: bool) -> bool {
        declared
    }

    /// Whether an elicitation in a mode not declared gets another mode's answer; correct: no.
    fn answers_any_mode(&self) -> bool {
        false
    }

    /// Whether an answer marked `defaults: true` (`asked`) gets the schema's defaults;
    /// correct: yes.
    fn fills_defaults(&self, asked: bool) -> bool {
        asked
    }

    /// What happens to an elicitation answer's content besides being sent; correct: nothing
    /// (it may be sensitive, and is never logged).
    fn elicitation_answered(&self, _content: Option<&Value>) {}

    /// The progress token of a request that asks for progress; correct: `fresh()`.
    fn progress_token(&self, fresh: impl FnOnce() -> i64) -> Option<i64> {
        Some(fresh())
    }

    /// Whether a progress token stops counting when its response arrives; correct: yes.
    fn ends_progress_on_response(&self) -> bool {
        true
    }

    /// Whether progress for a token of no request in flight is surfaced; correct: no.
    fn surfaces_unknown_progress(&self) -> bool {
        false
    }

    /// The events an `events` step reports; correct: `events`.
    fn events_reported(&self, events: Vec<Value>) -> Vec<Value> {
        events
    }

    /// The error code a user's rejection of a sampling request is answered with; correct:
    /// `code` (-1).
    fn rejection_code(&self, code: i64) -> i64 {
        code
    }

    /// Whether a sampling request breaking a tool rule is refused (-32602); correct: yes.
    fn refuses_tool_problem(&self, _problem: crate::handlers::ToolProblem) -> bool {
        true
    }

    /// The mode of an elicitation request without `mode`; correct: `form`.
    fn mode_when_absent(&self, form: &'static str) -> &'static str {
        form
    }

    /// What the client does with a url-mode elicitation's URL on receipt; correct: nothing
    /// (never fetched, not even its metadata).
    fn url_received(&self, _url: &str) {}

    /// Whether a URL is opened (`consented`: the user accepted); correct: only with consent.
    fn opens_url(&self, consented: bool) -> bool {
        consented
    }

    /// The URL the client opens; correct: `url`, as the server sent it.
    fn url_as_opened(&self, url: String) -> String {
        url
    }

    /// Whether the URL elicitations a -32042 error carries are offered to the user; correct:
    /// yes.
    fn offers_required_elicitations(&self) -> bool {
        true
    }

    /// Whether a modern call is retried after its URL elicitation was accepted; correct: yes.
    fn retries_after_url_accept(&self) -> bool {
        true
    }

    /// Whether a server request is reported as an event; correct: yes.
    fn reports_requests(&self) -> bool {
        true
    }

    /// Whether progress restarts a call's timeout, and the maximum; correct: `correct`
    /// (restarted when a maximum is given, and the maximum holds).
    fn progress_timeout(&self, correct: (bool, Option<Duration>)) -> (bool, Option<Duration>) {
        correct
    }

    /// Whether a notification tagged with a subscription the client does not hold is
    /// surfaced; correct: no.
    fn surfaces_foreign_subscription(&self) -> bool {
        false
    }

    /// Whether a list_changed notification ends the cached entries of that listing; correct:
    /// yes.
    fn list_change_ends_cache(&self) -> bool {
        true
    }

    /// Whether a server request is answered although the server cancelled it; correct: no.
    fn answers_cancelled(&self) -> bool {
        false
    }

    // Authorization.

    /// Whether an authorization URL may be used; correct: `correct` (`https` only).
    fn auth_scheme_allowed(&self, correct: bool, _url: &Url) -> bool {
        correct
    }

    /// Whether the access token goes with requests other than the MCP server's; correct: never.
    fn auth_token_to_any_origin(&self) -> bool {
        false
    }

    /// Where an MCP request that carried a token is sent again, token included, after a
    /// redirect answered it; correct: nowhere.
    fn auth_redirect_with_token(
        &self,
        _status: u16,
        _location: Option<&str>,
        _from: &Url,
    ) -> Option<Url> {
        None
    }

    /// Whether a discovered URL skips the destination policy; correct: never.
    fn auth_skips_destination_check(&self, _url: &Url) -> bool {
        false
    }

    /// Adds the token (`token`, the secret's value) to an MCP request's URL; correct: the URL
    /// unchanged.
    fn auth_token_in_url(&self, _url: &mut Url, _token: &str) {}

    /// Whether the challenge's `resource_metadata` is used; correct: yes.
    fn auth_uses_resource_metadata(&self) -> bool {
        true
    }

    /// Whether every well-known location is tried in order; correct: yes.
    fn auth_full_discovery(&self) -> bool {
        true
    }

    /// Whether metadata is used; correct: only when its issuer is identical (`correct`).
    fn auth_issuer_accepted(&self, correct: bool) -> bool {
        correct
    }

    /// Whether dynamic registration goes first; correct: no.
    fn auth_prefers_dcr(&self) -> bool {
        false
    }

    /// Whether registered credentials are looked up by issuer; correct: yes.
    fn auth_credentials_by_issuer(&self) -> bool {
        true
    }

    /// PKCE with a server; correct: `correct` (S256, or a refusal when not advertised).
    fn auth_pkce(
        &self,
        correct: Result<Pkce, String>,
        _advertised: Option<&[String]>,
    ) -> Result<Pkce, String> {
        correct
    }

    /// The scopes asked for; correct: `correct`.
    fn auth_scopes(&self, correct: Vec<String>, _supported: Option<&[String]>) -> Vec<String> {
        correct
    }

    /// The `resource` parameter; correct: the canonical resource.
    fn auth_resource<'a>(&self, resource: &'a str) -> Option<&'a str> {
        Some(resource)
    }

    /// Whether a well-known PRM document may name any parent of the server; correct: no.
    fn auth_any_prm_resource(&self) -> bool {
        false
    }

    /// The identifier sent as `resource`; correct: `published`, PRM's `resource`.
    fn auth_prm_resource<'a>(&self, published: &'a str, _canonical: &'a str) -> &'a str {
        published
    }

    /// Whether a step-up keeps the scopes already held; correct: yes.
    fn auth_step_up_keeps_scopes(&self) -> bool {
        true
    }

    /// How a client registered for `client_secret_basic` or `client_secret_post` sends its
    /// secret; correct: `correct`, as registered, never both.
    fn auth_token_method(&self, correct: TokenMethod) -> TokenMethod {
        correct
    }

    /// Whether `state` is compared; correct: yes.
    fn auth_checks_state(&self) -> bool {
        true
    }

    /// Whether RFC 9207 `iss` is checked; correct: yes.
    fn auth_checks_iss(&self) -> bool {
        true
    }

    /// Whether 403 insufficient_scope starts a step-up; correct: yes.
    fn auth_steps_up(&self) -> bool {
        true
    }

    /// Whether step-up ignores the one-retry limit; correct: no.
    fn auth_step_up_unbounded(&self) -> bool {
        false
    }

    /// Whether a held refresh token is used; correct: yes.
    fn auth_refreshes(&self) -> bool {
        true
    }

    /// The refresh token kept after a rotation; correct: the `new` one.
    fn auth_rotated_refresh<S: Clone>(&self, new: S, _old: &S) -> S {
        new
    }

    /// Whether a request is sent again once a 401 brought a token; correct: yes.
    fn auth_retries_after_401(&self) -> bool {
        true
    }

    /// Whether discovery tries the next well-known location after this non-200 status;
    /// correct: yes, whatever the status (the text names none).
    fn auth_tries_next_location(&self, _status: u16) -> bool {
        true
    }

    /// The dynamic registration request's body; correct: `correct` (with `application_type`
    /// and the `refresh_token` grant).
    fn auth_registration(&self, correct: Value) -> Value {
        correct
    }

    /// Whether `offline_access` is added to the scopes; correct: only when the authorization
    /// server lists it (`listed`).
    fn auth_adds_offline_access(&self, listed: bool) -> bool {
        listed
    }

    /// Whether a token answer is used; correct: yes, with or without a refresh token.
    fn auth_token_answer_usable(&self, _has_refresh: bool) -> bool {
        true
    }

    /// Whether a request that met a 401 uses the newer token another request obtained
    /// meanwhile instead of refreshing again; correct: yes (one refresh for all).
    fn auth_shares_new_token(&self) -> bool {
        true
    }

    /// Whether a machine client's credentials are used (the `client_credentials` grant);
    /// correct: yes.
    fn auth_uses_client_credentials(&self) -> bool {
        true
    }

    /// What a DPoP client's proofs are like: `None` sends none; correct: well-formed ones
    /// (the default [`Shape`](crate::auth::dpop::Shape)).
    fn auth_dpop_shape(&self) -> Option<crate::auth::dpop::Shape> {
        Some(crate::auth::dpop::Shape::default())
    }

    /// The `aud` of a JWT client assertion; correct: `correct`, the authorization server's
    /// issuer.
    fn auth_assertion_audience<'a>(&self, correct: &'a str, _resource: &'a str) -> &'a str {
        correct
    }

    /// Whether a redirect without `iss` is rejected; correct: only when the authorization
    /// server advertises `iss` (`advertised`, RFC 9207 §2.4).
    fn auth_iss_required(&self, advertised: bool) -> bool {
        advertised
    }
}

#[cfg(not(feature = "defects"))]
impl Wire for super::Seams {
    type Memory = ();

    fn memory(&self, _modern_version: Option<String>) {}
}
