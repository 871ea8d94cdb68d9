//! Deliberate defects, switched on one by one so the harness can prove each of its checks fails.
//!
//! A check that has never been seen failing proves nothing. Each flag below breaks the client
//! in exactly one way that one check exists to catch. All are off by default; the driver turns
//! them on with `--defect NAME`. Nothing but the harness's self-tests should use them.
//!
//! The rest of the client is written as a correct client: no module outside this one reads a
//! flag (the fields are private to it). A defect bends the client only at one of a few named
//! seams, each a decision point the correct code hands over before acting, and each in a file
//! of its own here:
//!
//! | seam | file | decision |
//! |---|---|---|
//! | what is sent | `sent.rs` | ids, each JSON-RPC message as written, HTTP request headers |
//! | what is read | `read.rs` | server requests and notifications, batches, stray responses, server exit and restart, content types, 403, results |
//! | version acceptance | `versions.rs` | the `initialize` answer, the version header, -32022 retries |
//! | era fallback | `era.rs` | probing, falling back, the era cache, the GET stream |
//! | cursor handling | `listing.rs` | the listing rules (repeated cursors, duplicate names, pages) |
//! | content as seen | `content.rs` | how content blocks, resource contents and completions are read |
//! | result cache | `cache.rs` | how long a result may be reused |
//! | `x-mcp-header` | `param_headers.rs` | tools kept, `Mcp-Param-*` headers and their values, the retry on a mismatch |
//! | giving up | `giving_up.rs` | timeouts, cancellation, how the server is told |
//! | shutdown escalation | `shutdown.rs` | close stdin → SIGTERM → SIGKILL, DELETE, cleanup |
//! | TLS policy | `tls.rs` | which URLs and redirects are allowed |
//! | output schemas | `schema.rs` | whether and how `structuredContent` is validated |
//! | what the server starts | `listening.rs` | client capabilities, answers to server requests, events, progress, subscriptions |
//! | HTTP streams | `streams.rs` | a broken request stream (resume, re-issue), reconnect delays, the GET stream's messages |
//! | authorization | `auth.rs` | discovery, registration, PKCE, `state`/`iss`, `resource`, scopes, step-up, refresh, where the token goes |
//!
//! With every flag off each seam returns the correct decision unchanged.

pub(crate) mod auth;
pub(crate) mod cache;
pub(crate) mod content;
pub(crate) mod era;
pub(crate) mod giving_up;
pub(crate) mod listening;
pub(crate) mod listing;
pub(crate) mod param_headers;
pub(crate) mod read;
pub(crate) mod schema;
pub(crate) mod sent;
pub(crate) mod shutdown;
pub(crate) mod ssrf;
pub(crate) mod streams;
pub(crate) mod tls;
pub(crate) mod versions;

/// Switches for deliberate misbehaviour; `Default` is a correct client (all off).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Defects {
    /// Never send `notifications/initialized` (breaks: initialized is sent after the handshake).
    skip_initialized: bool,
    /// Send `notifications/initialized` only after the first other request is written
    /// (breaks: initialized comes before any other request).
    late_initialized: bool,
    /// Accept an empty, missing or unsupported negotiated version (breaks: unsupported_version).
    accept_any_version: bool,
    /// Treat a JSON-RPC error answering `initialize` as success (breaks: handshake_failed).
    ignore_initialize_error: bool,
    /// Do not reject repeated cursors; stop after 50 pages instead (breaks: repeated_cursor).
    no_cursor_check: bool,
    /// Do not reject entries listed twice, in any listing (breaks: duplicate_tool_name,
    /// duplicate_name).
    allow_duplicate_names: bool,
    /// Ignore `nextCursor` and return the first page only (breaks: pagination is followed).
    first_page_only: bool,
    /// Append an `x` to every cursor sent, in any listing (breaks: the cursor is sent back
    /// exactly as received).
    mangle_cursor: bool,
    /// Ignore `structuredContent` and return text blocks (breaks: structured output preferred).
    text_only: bool,
    /// Treat an `isError: true` result as success (breaks: tool_error).
    ignore_is_error: bool,
    /// Report a JSON-RPC error answering `tools/call`, `resources/read`, `prompts/get` or
    /// `completion/complete` as an empty success (breaks: protocol_error on a call, no empty
    /// success for a failure).
    rpc_error_as_empty: bool,
    /// Never time out a request (breaks: timeout).
    no_timeout: bool,
    /// Never send `notifications/cancelled` (breaks: cancellation is announced to the server).
    no_cancel_notification: bool,
    /// Ignore the caller's cancellation (breaks: cancelled).
    ignore_cancel: bool,
    /// On shutdown close stdin and wait, then leave the child running
    /// (breaks: SIGTERM escalation, no orphan).
    no_sigterm: bool,
    /// On shutdown close stdin, wait, SIGTERM, wait, then leave the child
    /// (breaks: SIGKILL escalation, no orphan).
    no_sigkill: bool,
    /// On shutdown SIGKILL the child at once (breaks: stdin is closed first, graceful exit).
    kill_first: bool,
    /// When the handshake fails, leave the child running (breaks: cleanup after a failed handshake).
    leak_on_handshake_failure: bool,
    /// Shut the connection down after any failed `tools/call`
    /// (breaks: a failed request leaves the connection usable).
    close_on_error: bool,
    /// Use id 1 for every request (breaks: request ids are unique).
    reuse_ids: bool,
    /// Put an `id` on notifications (breaks: notifications carry no id).
    id_on_notifications: bool,
    /// Give requests a fractional id such as 1.5 (breaks: ids are strings or integers).
    float_ids: bool,
    /// Send `notifications/cancelled` for a timed-out `initialize` (breaks: initialize is never cancelled).
    cancel_initialize: bool,
    /// Write a line that is not JSON to the server before anything else
    /// (breaks: every line is a JSON-RPC message).
    garbage_to_server: bool,
    /// Do not fail pending requests when the server's stdout closes; they wait for their
    /// timeout instead (breaks: a server exit is reported as transport_closed).
    ignore_server_exit: bool,
    /// Keep only `name`, `description` and `inputSchema` of each tool (breaks: tools are
    /// passed through as received).
    normalize_tools: bool,
    /// Join the text blocks of a result into one string (breaks: text blocks in order).
    join_text: bool,
    /// Send `tools/call` with empty `arguments` (breaks: the call carries its arguments).
    drop_arguments: bool,
    /// HTTP: never send `Mcp-Session-Id` (breaks: the session id is sent on every later request).
    no_session_id: bool,
    /// HTTP: never send `MCP-Protocol-Version` (breaks: the negotiated version is sent on every
    /// request after initialization).
    no_protocol_version_header: bool,
    /// HTTP: send no `DELETE` on close (breaks: the session is deleted with its id).
    no_delete: bool,
    /// HTTP: allow plain `http://` to a host that is not loopback (breaks: insecure_url).
    allow_insecure_http: bool,
    /// HTTP: treat an SSE reply as invalid_response (breaks: both JSON and SSE replies parsed).
    json_only: bool,
    /// HTTP: do not send the caller's bearer token (breaks: `Authorization: Bearer` is sent).
    no_bearer: bool,
    /// HTTP: send `Accept: application/json` only (breaks: every POST accepts JSON and SSE).
    accept_json_only: bool,
    /// HTTP: label POST bodies `text/plain` (breaks: every POST body is application/json).
    text_plain_body: bool,
    /// Never answer the server's requests, `ping` included (breaks: a ping is answered).
    ignore_server_requests: bool,
    /// Modern era: answer server requests as in the legacy eras (breaks: a modern client never sends a response).
    answer_in_modern: bool,
    /// Answer a server request whose id is a number under that number as a string (breaks: a response echoes its request's id, type included).
    stringify_reply_ids: bool,
    /// Send the `code` of an error response to a server request as a string (breaks: error codes are integers).
    string_error_codes: bool,
    /// Answer every server notification with a -32601 error with a null id (breaks: no response to a notification).
    answer_notifications: bool,
    /// Fail every pending request as cancelled when the server sends `notifications/cancelled`, whatever it names (breaks: invalid cancellations are ignored).
    obey_server_cancel: bool,
    /// Refuse a JSON-RPC batch (an array) from the server as junk (breaks: batches are accepted at 2025-03-26).
    no_batches: bool,
    /// Report a `tools/call` answered with -32001 as `timeout` and with -32000 as `transport_closed`, meanings some libraries give those codes (breaks: no meaning assumed for -32000..-32019).
    assumed_code_meanings: bool,
    /// Modern era: send `ping` after connecting (breaks: a 2026-07-28 client sends no ping).
    ping_in_modern: bool,
    /// Hand a response whose id is not pending (a late answer to a cancelled request) to the
    /// oldest request still waiting (breaks: a response after the cancellation is ignored).
    misdeliver_stray_responses: bool,
    /// HTTP: send the offered version in `MCP-Protocol-Version` instead of the negotiated one
    /// (breaks: the header carries the negotiated version).
    offered_version_header: bool,
    /// HTTP: after a 404 for the session, go on without a new handshake
    /// (breaks: a new session is started with a fresh initialize).
    no_reinitialize: bool,
    /// HTTP: read any answer as JSON whatever its Content-Type (breaks: invalid_response for a
    /// wrong content type).
    lenient_content_type: bool,
    /// HTTP: follow every redirect, to any host and scheme, as reqwest does by default
    /// (breaks: a redirect to another host or to plain http:// is refused).
    follow_redirects: bool,
    /// Modern era: send requests without `_meta` (breaks: every request carries the protocol version and client capabilities in `_meta`).
    no_meta: bool,
    /// Modern era: leave `clientInfo` out of `_meta` (breaks: every request carries clientInfo).
    no_client_info: bool,
    /// Modern era: send a multi round-trip retry with the id of the request it retries (breaks: a retry has a new id).
    reuse_id_on_retry: bool,
    /// Modern era: append an `x` to the `requestState` echoed on a retry (breaks: requestState echoed exactly).
    alter_request_state: bool,
    /// Modern era: put the last `requestState` seen on later calls that should carry none, fresh calls and retries of a result without one (breaks: requestState never reused or added).
    state_on_fresh_request: bool,
    /// Modern era: treat every result as complete whatever its `resultType` (breaks: unknown resultType is invalid, input_required is handled).
    ignore_result_type: bool,
    /// Modern/dual era: connect without `server/discover`; dual goes straight to `initialize` (breaks: the era is probed with server/discover first).
    no_discover_probe: bool,
    /// Dual era: never fall back to `initialize`; a non-modern answer fails connect (breaks: fallback to the legacy handshake).
    no_fallback: bool,
    /// Dual era: fall back to `initialize` on modern errors too, -32022 included (breaks: a recognised modern error keeps the client modern).
    fallback_on_any_error: bool,
    /// Dual era: fall back only when the probe is answered with -32601 (breaks: the fallback is not keyed to one error code).
    fallback_on_one_code: bool,
    /// Modern era: on -32022 report unsupported_version at once (breaks: retry with a mutually supported version).
    no_version_retry: bool,
    /// Modern era: on -32022 retry with the first listed version, supported or not (breaks: the retry uses a mutually supported version).
    retry_any_version: bool,
    /// Modern era: keep every cacheable result forever, whatever its `ttlMs` (breaks: ttlMs 0/absent/negative is stale, entries expire).
    ignore_ttl: bool,
    /// Modern era: never cache (breaks: a fresh result is reused without traffic).
    no_cache: bool,
    /// Modern era: keep the result of a multi round-trip retry and answer the same call from it (breaks: retry results are never cached).
    cache_mrtr_retry: bool,
    /// Modern HTTP: no `Mcp-Method` header (breaks: Mcp-Method on every POST).
    no_mcp_method_header: bool,
    /// Modern HTTP: no `Mcp-Name` header (breaks: Mcp-Name on tools/call).
    no_mcp_name_header: bool,
    /// Modern HTTP: also POST `notifications/cancelled` when giving up on a request (breaks: closing the stream is the cancellation).
    cancel_with_notification_over_http: bool,
    /// Modern/dual era: after a successful discover also send `initialize` and `notifications/initialized` (breaks: no initialize towards a modern server).
    initialize_after_discover: bool,
    /// Modern HTTP: open the legacy standalone GET stream (breaks: no GET in the modern era).
    get_stream_in_modern: bool,
    /// Modern/dual HTTP: probe the era again on every connect (breaks: the era is cached per origin).
    no_era_cache: bool,
    /// Dual era: keep sending the modern `_meta` after falling back to legacy (breaks: the two eras' semantics are kept apart).
    meta_after_fallback: bool,
    /// Modern era: retry without `inputResponses` (breaks: every input request is answered on the retry).
    no_input_responses: bool,
    /// Modern era: leave a declined elicitation out of `inputResponses` (breaks: every key of inputRequests is answered).
    omit_declined: bool,
    /// Modern era: retry with only the name plus the input fields, without the original arguments (breaks: the retry repeats the original params).
    bare_retry: bool,
    /// HTTP: report a cancelled or timed-out request but leave its HTTP request (its response
    /// stream) open until close (breaks: the HTTP request is aborted; in 2026-07-28 closing
    /// the stream is the cancellation).
    keep_stream_on_cancel: bool,
    /// Send a `tools/list` while `initialize` still waits for its result (breaks: no request
    /// but ping before the initialize result).
    request_before_initialize_result: bool,
    /// Send `logging/setLevel` after the handshake although the server declared no `logging`
    /// (breaks: only negotiated capabilities are used).
    use_undeclared_capability: bool,
    /// Take an empty-string `nextCursor` as the end of the listing (breaks: an empty cursor is
    /// a cursor).
    empty_cursor_is_end: bool,
    /// HTTP: when a page request gets 404 (the session ended), start a new session and send the
    /// same cursor again (breaks: no cursor is carried into a new session).
    resume_listing_after_new_session: bool,
    /// Modern era: keep the cached pages when the server refuses a cursor with -32602 (breaks:
    /// an invalid cursor discards the cached pages).
    keep_pages_on_invalid_cursor: bool,
    /// Modern era: key cached results by method only (breaks: a cached result is never served
    /// for other params).
    cache_key_method_only: bool,
    /// Modern era: declare the server's `extensions` as the client's own in `_meta` (breaks: an
    /// extension only the server supports is ignored).
    claim_server_extensions: bool,
    /// HTTP: when the standalone GET stream drops, never open it again (breaks: a cut GET
    /// stream is reopened).
    no_stream_reconnect: bool,
    /// HTTP: treat a dropped standalone GET stream as a lost session, so `initialize` is sent
    /// again before the next request (breaks: reconnecting never re-sends earlier requests).
    reinitialize_on_reconnect: bool,
    /// HTTP: a 403 answering a request does not fail it; the request runs into its timeout
    /// (breaks: a refusal surfaces as an error at once).
    ignore_forbidden: bool,
    /// Refuse a `structuredContent` that is not an object, as a 2025-06-18 client would
    /// (breaks: any JSON value is structured content at 2026-07-28).
    object_structured_only: bool,
    /// Refuse a result holding content blocks other than text, image and embedded resource,
    /// or blocks with annotations, as a client written for 2024-11-05 would (breaks: every
    /// content type of the revision is read).
    first_revision_content: bool,
    /// Modern stdio: a server that exits on its own is not started again; the connection ends
    /// (breaks: the client should restart a server that exited unexpectedly).
    no_restart: bool,
    /// HTTP: reopen a dropped standalone GET stream without `Last-Event-ID` (breaks: a client
    /// resumes with the last event id it saw).
    no_last_event_id: bool,
    /// Follow a listing's pages without a cap, so pages that never end run into the deadline (breaks: a listing stops with an error when its pages do not end).
    no_page_cap: bool,
    /// At the page cap, return the entries gathered so far as a success (breaks: never a shorter list passed off as the whole one).
    truncate_at_page_cap: bool,
    /// Accept data that is not valid base64, measuring the raw string's bytes (breaks: invalid base64 is invalid_response).
    lenient_base64: bool,
    /// Leave out a content block of an unknown type instead of failing the step (breaks: an unknown content type is invalid_response).
    skip_unknown_content: bool,
    /// Leave `annotations` out of content as seen (breaks: a block's annotations are kept).
    drop_annotations: bool,
    /// Keep only text blocks in content as seen: binary, embedded resource and link blocks, and prompt messages that are not text, are left out (breaks: every content type is reported).
    text_content_only: bool,
    /// Leave blob contents out of a `resources/read` answer (breaks: binary resource contents are reported).
    blob_contents_dropped: bool,
    /// Send `prompts/get` without its `arguments` (breaks: the prompt's arguments are sent).
    drop_prompt_arguments: bool,
    /// Send `completion/complete` without its `context` (breaks: the context is sent as given).
    drop_completion_context: bool,
    /// Report only the `values` of a completion (breaks: `total` and `hasMore` are reported when received).
    drop_completion_total: bool,
    /// Send every request whatever the server declared, `ping` and `logging/setLevel` in the 2026-07-28 era included (breaks: capability_missing, nothing sent).
    ignore_server_capabilities: bool,
    /// Report resource contents with neither `text` nor `blob` by their `uri` and `mimeType`
    /// instead of failing the step (breaks: such contents are invalid_response).
    accept_shapeless_contents: bool,
    // Output schemas (seam `schema.rs`).
    /// Never validate `structuredContent` against `outputSchema` (breaks: schema_mismatch).
    no_output_validation: bool,
    /// Validate a schema without `$schema` as draft-07 (breaks: 2020-12 is the default dialect).
    draft_07_default: bool,
    /// No cost bounds and no time budget on validation (breaks: a costly schema fails in time).
    unbounded_schema: bool,
    /// A schema whose `$ref` cannot be resolved validates anything (breaks: an unresolved
    /// external reference is refused, not permissive).
    permissive_unresolved_ref: bool,
    /// Really fetch a `$ref` to an `http://` URL (breaks: no network reference is fetched).
    fetch_network_ref: bool,
    /// Modern HTTP: keep tools whose `x-mcp-header` annotation is invalid in the listing
    /// (breaks: such tools are left out of tools/list).
    keep_invalid_header_tools: bool,
    /// Modern HTTP: send no `Mcp-Param-*` header (breaks: annotated arguments are mirrored).
    no_param_headers: bool,
    /// Modern HTTP: send an empty `Mcp-Param-*` header for an annotated argument that is
    /// absent or null (breaks: the header is omitted then).
    param_header_when_absent: bool,
    /// Modern HTTP: send `Mcp-Name` and `Mcp-Param-*` values as they are, never in the
    /// `=?base64?…?=` form (breaks: unsafe values are base64-encoded).
    raw_header_values: bool,
    /// Modern HTTP: on a `HeaderMismatch` answering `tools/call`, neither list the tools again
    /// nor retry (breaks: the client re-lists and retries with the right headers).
    no_relist_on_header_mismatch: bool,
    /// Take a `nextCursor` of `null` for a cursor and send it back as the string `"null"`
    /// (breaks: a null `nextCursor` ends the listing like an absent one).
    null_cursor_followed: bool,
    /// Declare no client capabilities, whatever the handlers (breaks: the capabilities the handlers imply are declared).
    no_client_capabilities: bool,
    /// Declare `roots`, `sampling` and `elicitation` whatever the handlers (breaks: no capability is declared that no handler serves).
    all_client_capabilities: bool,
    /// Answer `roots/list` with no roots (breaks: roots/list is answered with the client's roots).
    roots_answer_empty: bool,
    /// `set_roots` sends no `notifications/roots/list_changed` (breaks: a client declaring `roots.listChanged` notifies).
    no_roots_list_changed: bool,
    /// Answer an elicitation in a mode not declared with an answer of another mode (breaks: -32602 for an undeclared mode).
    elicitation_any_mode: bool,
    /// Ignore `defaults: true`: the schema's defaults are not filled in (breaks: an accepted form carries the defaults).
    no_elicitation_defaults: bool,
    /// Send no `progressToken` when progress is asked for (breaks: the request carries a progress token).
    no_progress_token: bool,
    /// Use the same progress token for every request (breaks: tokens are unique among active requests).
    shared_progress_token: bool,
    /// Keep surfacing progress for a token after its request completed (breaks: no progress after the response).
    progress_after_completion: bool,
    /// Surface progress for tokens the client never sent (breaks: only its own tokens are surfaced).
    progress_unknown_token: bool,
    /// Report every `events` step as `[]` (breaks: what the server sent is surfaced).
    drop_events: bool,
    /// Never restart a call's timeout on progress (breaks: progress restarts the timeout).
    no_timeout_reset: bool,
    /// Restart the timeout on progress forever, with no maximum (breaks: the maximum timeout holds).
    no_max_timeout: bool,
    /// Send `resources/subscribe` although the server did not declare `resources.subscribe` (breaks: capability_missing).
    subscribe_without_capability: bool,
    /// Do not send `subscriptions/listen` again after a stdio server was restarted (breaks: the subscription is re-established).
    listen_not_resent: bool,
    /// Surface notifications tagged with another subscription's id (breaks: notifications are correlated by subscriptionId).
    foreign_subscription_events: bool,
    /// Keep a cached listing after its list_changed notification (breaks: the notification ends the cache entry).
    cache_survives_list_changed: bool,
    /// Print the content of elicitation answers on stderr (breaks: sensitive values are never logged).
    log_elicitation_content: bool,
    /// Answer a server request the server cancelled before the answer was sent (breaks: no answer after the cancellation).
    answer_cancelled_request: bool,
    /// Leave server requests out of `events` (breaks: every server request is reported).
    request_events_missing: bool,
    /// `listen` reports the filter it requested instead of the one the server acknowledged
    /// (breaks: the acknowledged filter is checked against the request).
    reports_requested_filter: bool,
    /// Answer a server request at once although its handler's answer says to wait
    /// (`delay_ms`) (breaks: the delayed answer comes after the delay, or never if cancelled).
    ignore_answer_delay: bool,
    /// Declare the `url` elicitation mode whenever `form` is declared (breaks: only the
    /// modes answered are declared).
    elicitation_url_always: bool,
    // HTTP streams (seam `streams.rs`).
    /// HTTP: when a request's SSE stream breaks before its response, POST the same request
    /// again (same id) instead of resuming with GET and `Last-Event-ID` (legacy) or
    /// re-issuing it with a new id (2026-07-28) (breaks: a cut stream is never answered by
    /// re-sending the request).
    resend_on_stream_cut: bool,
    /// HTTP: fail a request whose SSE stream breaks before its response, even when the
    /// stream carried event ids (legacy) or the revision says to re-issue it (2026-07-28)
    /// (breaks: a cut POST stream is resumed with GET and Last-Event-ID / re-issued).
    no_post_stream_resume: bool,
    /// HTTP: reconnect a stream after the client's own backoff, whatever `retry:` the server
    /// sent (breaks: the retry field is honoured before reconnecting).
    ignore_retry_field: bool,
    /// HTTP: read the standalone GET stream but hand none of its messages to the router, so
    /// its requests go unanswered and its notifications unseen (breaks: messages on the GET
    /// stream are handled).
    ignore_get_stream_messages: bool,
    /// The authorization seam's flags (`auth.rs`).
    auth: auth::AuthDefects,
    /// The SSRF seam's flags (`ssrf.rs`: `ssrf-unchecked`, `ssrf-check-name-once`).
    ssrf: ssrf::SsrfDefects,
}

impl Defects {
    /// Only the defect `name` (for the seams' unit tests).
    #[cfg(test)]
    pub(crate) fn only(name: &str) -> Defects {
        let mut d = Defects::default();
        assert!(d.enable(name), "unknown defect {name}");
        d
    }

    /// The names accepted by [`Defects::enable`], as spelled on the driver's command line.
    pub const NAMES: [&'static str; 140] = [
        "skip-initialized",
        "late-initialized",
        "accept-any-version",
        "ignore-initialize-error",
        "no-cursor-check",
        "allow-duplicate-names",
        "first-page-only",
        "mangle-cursor",
        "text-only",
        "ignore-is-error",
        "rpc-error-as-empty",
        "no-timeout",
        "no-cancel-notification",
        "ignore-cancel",
        "no-sigterm",
        "no-sigkill",
        "kill-first",
        "leak-on-handshake-failure",
        "close-on-error",
        "reuse-ids",
        "id-on-notifications",
        "float-ids",
        "cancel-initialize",
        "garbage-to-server",
        "ignore-server-exit",
        "normalize-tools",
        "join-text",
        "drop-arguments",
        "no-session-id",
        "no-protocol-version-header",
        "no-delete",
        "allow-insecure-http",
        "json-only",
        "no-bearer",
        "accept-json-only",
        "text-plain-body",
        "ignore-server-requests",
        "answer-in-modern",
        "stringify-reply-ids",
        "string-error-codes",
        "answer-notifications",
        "obey-server-cancel",
        "no-batches",
        "assumed-code-meanings",
        "ping-in-modern",
        "misdeliver-stray-responses",
        "offered-version-header",
        "no-reinitialize",
        "lenient-content-type",
        "follow-redirects",
        "no-meta",
        "no-client-info",
        "reuse-id-on-retry",
        "alter-request-state",
        "state-on-fresh-request",
        "ignore-result-type",
        "no-discover-probe",
        "no-fallback",
        "fallback-on-any-error",
        "fallback-on-one-code",
        "no-version-retry",
        "retry-any-version",
        "ignore-ttl",
        "no-cache",
        "cache-mrtr-retry",
        "no-mcp-method-header",
        "no-mcp-name-header",
        "cancel-with-notification-over-http",
        "initialize-after-discover",
        "get-stream-in-modern",
        "no-era-cache",
        "meta-after-fallback",
        "no-input-responses",
        "omit-declined",
        "bare-retry",
        "keep-stream-on-cancel",
        "request-before-initialize-result",
        "use-undeclared-capability",
        "empty-cursor-is-end",
        "resume-listing-after-new-session",
        "keep-pages-on-invalid-cursor",
        "cache-key-method-only",
        "claim-server-extensions",
        "no-stream-reconnect",
        "reinitialize-on-reconnect",
        "ignore-forbidden",
        "object-structured-only",
        "first-revision-content",
        "no-restart",
        "no-last-event-id",
        "no-page-cap",
        "truncate-at-page-cap",
        "lenient-base64",
        "skip-unknown-content",
        "drop-annotations",
        "text-content-only",
        "blob-contents-dropped",
        "drop-prompt-arguments",
        "drop-completion-context",
        "drop-completion-total",
        "ignore-server-capabilities",
        "accept-shapeless-contents",
        "no-output-validation",
        "draft-07-default",
        "unbounded-schema",
        "permissive-unresolved-ref",
        "fetch-network-ref",
        "keep-invalid-header-tools",
        "no-param-headers",
        "param-header-when-absent",
        "raw-header-values",
        "no-relist-on-header-mismatch",
        "null-cursor-followed",
        "no-client-capabilities",
        "all-client-capabilities",
        "roots-answer-empty",
        "no-roots-list-changed",
        "elicitation-any-mode",
        "no-elicitation-defaults",
        "no-progress-token",
        "shared-progress-token",
        "progress-after-completion",
        "progress-unknown-token",
        "drop-events",
        "no-timeout-reset",
        "no-max-timeout",
        "subscribe-without-capability",
        "listen-not-resent",
        "foreign-subscription-events",
        "cache-survives-list-changed",
        "log-elicitation-content",
        "answer-cancelled-request",
        "request-events-missing",
        "reports-requested-filter",
        "ignore-answer-delay",
        "elicitation-url-always",
        "resend-on-stream-cut",
        "no-post-stream-resume",
        "ignore-retry-field",
        "ignore-get-stream-messages",
    ];

    /// Every name [`Defects::enable`] accepts: [`Defects::NAMES`] and the seams' own lists.
    pub fn all_names() -> impl Iterator<Item = &'static str> {
        Defects::NAMES
            .into_iter()
            .chain(auth::AuthDefects::NAMES)
            .chain(ssrf::SsrfDefects::NAMES)
    }

    /// Switch on the defect called `name`; returns false if there is no such defect.
    pub fn enable(&mut self, name: &str) -> bool {
        let flag = match name {
            "skip-initialized" => &mut self.skip_initialized,
            "late-initialized" => &mut self.late_initialized,
            "accept-any-version" => &mut self.accept_any_version,
            "ignore-initialize-error" => &mut self.ignore_initialize_error,
            "no-cursor-check" => &mut self.no_cursor_check,
            "allow-duplicate-names" => &mut self.allow_duplicate_names,
            "first-page-only" => &mut self.first_page_only,
            "mangle-cursor" => &mut self.mangle_cursor,
            "text-only" => &mut self.text_only,
            "ignore-is-error" => &mut self.ignore_is_error,
            "rpc-error-as-empty" => &mut self.rpc_error_as_empty,
            "no-timeout" => &mut self.no_timeout,
            "no-cancel-notification" => &mut self.no_cancel_notification,
            "ignore-cancel" => &mut self.ignore_cancel,
            "no-sigterm" => &mut self.no_sigterm,
            "no-sigkill" => &mut self.no_sigkill,
            "kill-first" => &mut self.kill_first,
            "leak-on-handshake-failure" => &mut self.leak_on_handshake_failure,
            "close-on-error" => &mut self.close_on_error,
            "reuse-ids" => &mut self.reuse_ids,
            "id-on-notifications" => &mut self.id_on_notifications,
            "float-ids" => &mut self.float_ids,
            "cancel-initialize" => &mut self.cancel_initialize,
            "garbage-to-server" => &mut self.garbage_to_server,
            "ignore-server-exit" => &mut self.ignore_server_exit,
            "normalize-tools" => &mut self.normalize_tools,
            "join-text" => &mut self.join_text,
            "drop-arguments" => &mut self.drop_arguments,
            "no-session-id" => &mut self.no_session_id,
            "no-protocol-version-header" => &mut self.no_protocol_version_header,
            "no-delete" => &mut self.no_delete,
            "allow-insecure-http" => &mut self.allow_insecure_http,
            "json-only" => &mut self.json_only,
            "no-bearer" => &mut self.no_bearer,
            "accept-json-only" => &mut self.accept_json_only,
            "text-plain-body" => &mut self.text_plain_body,
            "ignore-server-requests" => &mut self.ignore_server_requests,
            "answer-in-modern" => &mut self.answer_in_modern,
            "stringify-reply-ids" => &mut self.stringify_reply_ids,
            "string-error-codes" => &mut self.string_error_codes,
            "answer-notifications" => &mut self.answer_notifications,
            "obey-server-cancel" => &mut self.obey_server_cancel,
            "no-batches" => &mut self.no_batches,
            "assumed-code-meanings" => &mut self.assumed_code_meanings,
            "ping-in-modern" => &mut self.ping_in_modern,
            "misdeliver-stray-responses" => &mut self.misdeliver_stray_responses,
            "offered-version-header" => &mut self.offered_version_header,
            "no-reinitialize" => &mut self.no_reinitialize,
            "lenient-content-type" => &mut self.lenient_content_type,
            "follow-redirects" => &mut self.follow_redirects,
            "no-meta" => &mut self.no_meta,
            "no-client-info" => &mut self.no_client_info,
            "reuse-id-on-retry" => &mut self.reuse_id_on_retry,
            "alter-request-state" => &mut self.alter_request_state,
            "state-on-fresh-request" => &mut self.state_on_fresh_request,
            "ignore-result-type" => &mut self.ignore_result_type,
            "no-discover-probe" => &mut self.no_discover_probe,
            "no-fallback" => &mut self.no_fallback,
            "fallback-on-any-error" => &mut self.fallback_on_any_error,
            "fallback-on-one-code" => &mut self.fallback_on_one_code,
            "no-version-retry" => &mut self.no_version_retry,
            "retry-any-version" => &mut self.retry_any_version,
            "ignore-ttl" => &mut self.ignore_ttl,
            "no-cache" => &mut self.no_cache,
            "cache-mrtr-retry" => &mut self.cache_mrtr_retry,
            "no-mcp-method-header" => &mut self.no_mcp_method_header,
            "no-mcp-name-header" => &mut self.no_mcp_name_header,
            "cancel-with-notification-over-http" => &mut self.cancel_with_notification_over_http,
            "initialize-after-discover" => &mut self.initialize_after_discover,
            "get-stream-in-modern" => &mut self.get_stream_in_modern,
            "no-era-cache" => &mut self.no_era_cache,
            "meta-after-fallback" => &mut self.meta_after_fallback,
            "no-input-responses" => &mut self.no_input_responses,
            "omit-declined" => &mut self.omit_declined,
            "bare-retry" => &mut self.bare_retry,
            "keep-stream-on-cancel" => &mut self.keep_stream_on_cancel,
            "request-before-initialize-result" => &mut self.request_before_initialize_result,
            "use-undeclared-capability" => &mut self.use_undeclared_capability,
            "empty-cursor-is-end" => &mut self.empty_cursor_is_end,
            "resume-listing-after-new-session" => &mut self.resume_listing_after_new_session,
            "keep-pages-on-invalid-cursor" => &mut self.keep_pages_on_invalid_cursor,
            "cache-key-method-only" => &mut self.cache_key_method_only,
            "claim-server-extensions" => &mut self.claim_server_extensions,
            "no-stream-reconnect" => &mut self.no_stream_reconnect,
            "reinitialize-on-reconnect" => &mut self.reinitialize_on_reconnect,
            "ignore-forbidden" => &mut self.ignore_forbidden,
            "object-structured-only" => &mut self.object_structured_only,
            "first-revision-content" => &mut self.first_revision_content,
            "no-restart" => &mut self.no_restart,
            "no-last-event-id" => &mut self.no_last_event_id,
            "no-page-cap" => &mut self.no_page_cap,
            "truncate-at-page-cap" => &mut self.truncate_at_page_cap,
            "lenient-base64" => &mut self.lenient_base64,
            "skip-unknown-content" => &mut self.skip_unknown_content,
            "drop-annotations" => &mut self.drop_annotations,
            "text-content-only" => &mut self.text_content_only,
            "blob-contents-dropped" => &mut self.blob_contents_dropped,
            "drop-prompt-arguments" => &mut self.drop_prompt_arguments,
            "drop-completion-context" => &mut self.drop_completion_context,
            "drop-completion-total" => &mut self.drop_completion_total,
            "ignore-server-capabilities" => &mut self.ignore_server_capabilities,
            "accept-shapeless-contents" => &mut self.accept_shapeless_contents,
            "no-output-validation" => &mut self.no_output_validation,
            "draft-07-default" => &mut self.draft_07_default,
            "unbounded-schema" => &mut self.unbounded_schema,
            "permissive-unresolved-ref" => &mut self.permissive_unresolved_ref,
            "fetch-network-ref" => &mut self.fetch_network_ref,
            "keep-invalid-header-tools" => &mut self.keep_invalid_header_tools,
            "no-param-headers" => &mut self.no_param_headers,
            "param-header-when-absent" => &mut self.param_header_when_absent,
            "raw-header-values" => &mut self.raw_header_values,
            "no-relist-on-header-mismatch" => &mut self.no_relist_on_header_mismatch,
            "null-cursor-followed" => &mut self.null_cursor_followed,
            "no-client-capabilities" => &mut self.no_client_capabilities,
            "all-client-capabilities" => &mut self.all_client_capabilities,
            "roots-answer-empty" => &mut self.roots_answer_empty,
            "no-roots-list-changed" => &mut self.no_roots_list_changed,
            "elicitation-any-mode" => &mut self.elicitation_any_mode,
            "no-elicitation-defaults" => &mut self.no_elicitation_defaults,
            "no-progress-token" => &mut self.no_progress_token,
            "shared-progress-token" => &mut self.shared_progress_token,
            "progress-after-completion" => &mut self.progress_after_completion,
            "progress-unknown-token" => &mut self.progress_unknown_token,
            "drop-events" => &mut self.drop_events,
            "no-timeout-reset" => &mut self.no_timeout_reset,
            "no-max-timeout" => &mut self.no_max_timeout,
            "subscribe-without-capability" => &mut self.subscribe_without_capability,
            "listen-not-resent" => &mut self.listen_not_resent,
            "foreign-subscription-events" => &mut self.foreign_subscription_events,
            "cache-survives-list-changed" => &mut self.cache_survives_list_changed,
            "log-elicitation-content" => &mut self.log_elicitation_content,
            "answer-cancelled-request" => &mut self.answer_cancelled_request,
            "request-events-missing" => &mut self.request_events_missing,
            "reports-requested-filter" => &mut self.reports_requested_filter,
            "ignore-answer-delay" => &mut self.ignore_answer_delay,
            "elicitation-url-always" => &mut self.elicitation_url_always,
            "resend-on-stream-cut" => &mut self.resend_on_stream_cut,
            "no-post-stream-resume" => &mut self.no_post_stream_resume,
            "ignore-retry-field" => &mut self.ignore_retry_field,
            "ignore-get-stream-messages" => &mut self.ignore_get_stream_messages,
            _ => return self.auth.enable(name) || self.ssrf.enable(name),
        };
        *flag = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_switches_exactly_one_flag() {
        for name in Defects::NAMES {
            let mut d = Defects::default();
            assert!(d.enable(name), "{name} not accepted");
            assert_ne!(d, Defects::default(), "{name} changed nothing");
            let mut twice = d;
            for other in Defects::NAMES.iter().filter(|n| **n != name) {
                let mut alone = Defects::default();
                alone.enable(other);
                assert_ne!(alone, d, "{name} and {other} switch the same flag");
            }
            assert!(twice.enable(name));
            assert_eq!(twice, d);
        }
    }

    #[test]
    fn every_name_is_listed_in_a_seams_docs() {
        let docs: String = [
            include_str!("cache.rs"),
            include_str!("content.rs"),
            include_str!("era.rs"),
            include_str!("giving_up.rs"),
            include_str!("listening.rs"),
            include_str!("listing.rs"),
            include_str!("param_headers.rs"),
            include_str!("read.rs"),
            include_str!("schema.rs"),
            include_str!("sent.rs"),
            include_str!("shutdown.rs"),
            include_str!("streams.rs"),
            include_str!("tls.rs"),
            include_str!("versions.rs"),
        ]
        .iter()
        .flat_map(|file| file.lines().filter(|line| line.starts_with("//!")))
        .collect();
        for name in Defects::NAMES {
            assert!(
                docs.contains(&format!("`{name}`")),
                "{name} is in no seam's `//!` list of defects"
            );
        }
    }

    #[test]
    fn unknown_name_is_refused() {
        let mut d = Defects::default();
        assert!(!d.enable("no-such-defect"));
        assert_eq!(d, Defects::default());
    }
}
