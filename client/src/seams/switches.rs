//! The switchboard: one flag per deliberate defect, all off by default. Compiled only with
//! the `defects` feature; `defects/` gives each flag its meaning (its names, and what each
//! hook does when a flag is on). Nothing else reads a flag.

/// Switches for deliberate misbehaviour; `Default` is a correct client (all off).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Defects {
    /// Never send `notifications/initialized` (breaks: initialized is sent after the handshake).
    pub(crate) skip_initialized: bool,
    /// Send `notifications/initialized` only after the first other request is written
    /// (breaks: initialized comes before any other request).
    pub(crate) late_initialized: bool,
    /// Accept an empty, missing or unsupported negotiated version (breaks: unsupported_version).
    pub(crate) accept_any_version: bool,
    /// Treat a JSON-RPC error answering `initialize` as success (breaks: handshake_failed).
    pub(crate) ignore_initialize_error: bool,
    /// Do not reject repeated cursors; stop after 50 pages instead (breaks: repeated_cursor).
    pub(crate) no_cursor_check: bool,
    /// Do not reject entries listed twice, in any listing (breaks: duplicate_tool_name,
    /// duplicate_name).
    pub(crate) allow_duplicate_names: bool,
    /// Ignore `nextCursor` and return the first page only (breaks: pagination is followed).
    pub(crate) first_page_only: bool,
    /// Append an `x` to every cursor sent, in any listing (breaks: the cursor is sent back
    /// exactly as received).
    pub(crate) mangle_cursor: bool,
    /// Ignore `structuredContent` and return text blocks (breaks: structured output preferred).
    pub(crate) text_only: bool,
    /// Treat an `isError: true` result as success (breaks: tool_error).
    pub(crate) ignore_is_error: bool,
    /// Report a JSON-RPC error answering `tools/call`, `resources/read`, `prompts/get` or
    /// `completion/complete` as an empty success (breaks: protocol_error on a call, no empty
    /// success for a failure).
    pub(crate) rpc_error_as_empty: bool,
    /// Never time out a request (breaks: timeout).
    pub(crate) no_timeout: bool,
    /// Never send `notifications/cancelled` (breaks: cancellation is announced to the server).
    pub(crate) no_cancel_notification: bool,
    /// Ignore the caller's cancellation (breaks: cancelled).
    pub(crate) ignore_cancel: bool,
    /// On shutdown close stdin and wait, then leave the child running
    /// (breaks: SIGTERM escalation, no orphan).
    pub(crate) no_sigterm: bool,
    /// On shutdown close stdin, wait, SIGTERM, wait, then leave the child
    /// (breaks: SIGKILL escalation, no orphan).
    pub(crate) no_sigkill: bool,
    /// On shutdown SIGKILL the child at once (breaks: stdin is closed first, graceful exit).
    pub(crate) kill_first: bool,
    /// Start the stdio server in the client's own process group and signal only the direct
    /// child (breaks: a server behind a wrapper that forks is ended as a whole).
    pub(crate) kill_direct_child_only: bool,
    /// End a listing at a page shorter than the first, as if pages had a fixed size
    /// (breaks: no fixed page size may be assumed).
    pub(crate) fixed_page_size: bool,
    /// Send `notifications/cancelled` when the caller's cancel fires after the answer came
    /// (breaks: cancel only requests still in progress).
    pub(crate) cancel_answered: bool,
    /// HTTP: open the GET stream with `Accept: application/json` (breaks: a GET lists
    /// `text/event-stream` in Accept).
    pub(crate) get_accept_json: bool,
    /// When the handshake fails, leave the child running (breaks: cleanup after a failed handshake).
    pub(crate) leak_on_handshake_failure: bool,
    /// Shut the connection down after any failed `tools/call`
    /// (breaks: a failed request leaves the connection usable).
    pub(crate) close_on_error: bool,
    /// Use id 1 for every request (breaks: request ids are unique).
    pub(crate) reuse_ids: bool,
    /// Put an `id` on notifications (breaks: notifications carry no id).
    pub(crate) id_on_notifications: bool,
    /// Give requests a fractional id such as 1.5 (breaks: ids are strings or integers).
    pub(crate) float_ids: bool,
    /// Send `notifications/cancelled` for a timed-out `initialize` (breaks: initialize is never cancelled).
    pub(crate) cancel_initialize: bool,
    /// Write a line that is not JSON to the server before anything else
    /// (breaks: every line is a JSON-RPC message).
    pub(crate) garbage_to_server: bool,
    /// Do not fail pending requests when the server's stdout closes; they wait for their
    /// timeout instead (breaks: a server exit is reported as transport_closed).
    pub(crate) ignore_server_exit: bool,
    /// Keep only `name`, `description` and `inputSchema` of each tool (breaks: tools are
    /// passed through as received).
    pub(crate) normalize_tools: bool,
    /// Join the text blocks of a result into one string (breaks: text blocks in order).
    pub(crate) join_text: bool,
    /// Send `tools/call` with empty `arguments` (breaks: the call carries its arguments).
    pub(crate) drop_arguments: bool,
    /// Send `tools/call` arguments as a JSON string (breaks: the schema's `type`, SCHEMA-01).
    pub(crate) arguments_as_string: bool,
    /// Send `initialize` without `clientInfo` (breaks: the schema's `required`, SCHEMA-01).
    pub(crate) initialize_no_client_info: bool,
    /// Send `logging/setLevel` with a level outside `LoggingLevel` (breaks: the schema's
    /// `enum`, SCHEMA-01).
    pub(crate) log_level_unknown: bool,
    /// Send `completion/complete` with a `ref.type` no reference has (breaks: the schema's
    /// `const` inside an `anyOf`, SCHEMA-01).
    pub(crate) completion_ref_type: bool,
    /// Answer `roots/list` with `roots` an object (breaks: the schema's `type` in a
    /// response, SCHEMA-02).
    pub(crate) roots_not_array: bool,
    /// HTTP: never send `Mcp-Session-Id` (breaks: the session id is sent on every later request).
    pub(crate) no_session_id: bool,
    /// HTTP: never send `MCP-Protocol-Version`, nor on authorization metadata requests
    /// (breaks: the negotiated version is sent on every request after initialization, and
    /// during metadata discovery).
    pub(crate) no_protocol_version_header: bool,
    /// HTTP: send no `DELETE` on close (breaks: the session is deleted with its id).
    pub(crate) no_delete: bool,
    /// HTTP: allow plain `http://` to a host that is not loopback (breaks: insecure_url).
    pub(crate) allow_insecure_http: bool,
    /// HTTP: treat an SSE reply as invalid_response (breaks: both JSON and SSE replies parsed).
    pub(crate) json_only: bool,
    /// HTTP: do not send the caller's bearer token (breaks: `Authorization: Bearer` is sent).
    pub(crate) no_bearer: bool,
    /// HTTP: send `Accept: application/json` only (breaks: every POST accepts JSON and SSE).
    pub(crate) accept_json_only: bool,
    /// HTTP: label POST bodies `text/plain` (breaks: every POST body is application/json).
    pub(crate) text_plain_body: bool,
    /// Never answer the server's requests, `ping` included (breaks: a ping is answered).
    pub(crate) ignore_server_requests: bool,
    /// Modern era: answer server requests as in the legacy eras (breaks: a modern client never sends a response).
    pub(crate) answer_in_modern: bool,
    /// Answer a server request whose id is a number under that number as a string (breaks: a response echoes its request's id, type included).
    pub(crate) stringify_reply_ids: bool,
    /// Send the `code` of an error response to a server request as a string (breaks: error codes are integers).
    pub(crate) string_error_codes: bool,
    /// Answer every server notification with a -32601 error with a null id (breaks: no response to a notification).
    pub(crate) answer_notifications: bool,
    /// Fail every pending request as cancelled when the server sends `notifications/cancelled`, whatever it names (breaks: invalid cancellations are ignored).
    pub(crate) obey_server_cancel: bool,
    /// Refuse a JSON-RPC batch (an array) from the server as junk (breaks: batches are accepted at 2025-03-26).
    pub(crate) no_batches: bool,
    /// Report a `tools/call` answered with -32001 as `timeout` and with -32000 as `transport_closed`, meanings some libraries give those codes (breaks: no meaning assumed for -32000..-32019).
    pub(crate) assumed_code_meanings: bool,
    /// Modern era: send `ping` after connecting (breaks: a 2026-07-28 client sends no ping).
    pub(crate) ping_in_modern: bool,
    /// Hand a response whose id is not pending (a late answer to a cancelled request) to the
    /// oldest request still waiting (breaks: a response after the cancellation is ignored).
    pub(crate) misdeliver_stray_responses: bool,
    /// HTTP: send the offered version in `MCP-Protocol-Version` instead of the negotiated one
    /// (breaks: the header carries the negotiated version).
    pub(crate) offered_version_header: bool,
    /// HTTP: after a 404 for the session, go on without a new handshake
    /// (breaks: a new session is started with a fresh initialize).
    pub(crate) no_reinitialize: bool,
    /// HTTP: read any answer as JSON whatever its Content-Type (breaks: invalid_response for a
    /// wrong content type).
    pub(crate) lenient_content_type: bool,
    /// HTTP: follow every redirect, to any host and scheme, as reqwest does by default
    /// (breaks: a redirect to another host or to plain http:// is refused).
    pub(crate) follow_redirects: bool,
    /// Modern era: send requests without `_meta` (breaks: every request carries the protocol version and client capabilities in `_meta`).
    pub(crate) no_meta: bool,
    /// Modern era: leave `clientInfo` out of `_meta` (breaks: every request carries clientInfo).
    pub(crate) no_client_info: bool,
    /// Leave the caller's trace context out of every request (breaks: the trace context given
    /// arrives on every request).
    pub(crate) no_trace_context: bool,
    /// Send the trace context's `traceparent` in upper-case hex (breaks: trace context values
    /// follow W3C Trace Context).
    pub(crate) malformed_traceparent: bool,
    /// Give each request a trace id of its own (breaks: every request keeps the trace id given).
    pub(crate) new_trace_id: bool,
    /// Put a space in the trace context's `baggage` value (breaks: baggage follows W3C Baggage).
    pub(crate) malformed_baggage: bool,
    /// Modern era: put the kept log level on the first request after it only (breaks: the
    /// level set is on every later request).
    pub(crate) log_level_once: bool,
    /// Reach every icon whatever its scheme or origin (breaks: unsafe icon schemes and other
    /// origins are refused, nothing is fetched for them).
    pub(crate) icons_any_scheme: bool,
    /// Send an `Authorization` header with each icon fetch (breaks: icons are fetched
    /// without credentials).
    pub(crate) icon_credentials: bool,
    /// Follow a redirect answering an icon fetch (breaks: icon redirects are refused).
    pub(crate) icon_follows_redirects: bool,
    /// Modern era: send the kept log level capitalized, `Warning` (breaks: a per-request log
    /// level is a valid level, the one set).
    pub(crate) wrong_log_level: bool,
    /// Modern era: send a multi round-trip retry with the id of the request it retries (breaks: a retry has a new id).
    pub(crate) reuse_id_on_retry: bool,
    /// Modern era: append an `x` to the `requestState` echoed on a retry (breaks: requestState echoed exactly).
    pub(crate) alter_request_state: bool,
    /// Modern era: put the last `requestState` seen on later calls that should carry none, fresh calls and retries of a result without one (breaks: requestState never reused or added).
    pub(crate) state_on_fresh_request: bool,
    /// Modern era: treat every result as complete whatever its `resultType` (breaks: unknown resultType is invalid, input_required is handled).
    pub(crate) ignore_result_type: bool,
    /// Modern/dual era: connect without `server/discover`; dual goes straight to `initialize` (breaks: the era is probed with server/discover first).
    pub(crate) no_discover_probe: bool,
    /// Dual era: never fall back to `initialize`; a non-modern answer fails connect (breaks: fallback to the legacy handshake).
    pub(crate) no_fallback: bool,
    /// Dual era: fall back to `initialize` on modern errors too, -32022 included (breaks: a recognised modern error keeps the client modern).
    pub(crate) fallback_on_any_error: bool,
    /// Dual era: fall back only when the probe is answered with -32601 (breaks: the fallback is not keyed to one error code).
    pub(crate) fallback_on_one_code: bool,
    /// Modern era: on -32022 report unsupported_version at once (breaks: retry with a mutually supported version).
    pub(crate) no_version_retry: bool,
    /// Modern era: on -32022 retry with the first listed version, supported or not (breaks: the retry uses a mutually supported version).
    pub(crate) retry_any_version: bool,
    /// Modern era: keep every cacheable result forever, whatever its `ttlMs` (breaks: ttlMs 0/absent/negative is stale, entries expire).
    pub(crate) ignore_ttl: bool,
    /// Modern era: never cache (breaks: a fresh result is reused without traffic).
    pub(crate) no_cache: bool,
    /// Modern era: keep the result of a multi round-trip retry and answer the same call from it (breaks: retry results are never cached).
    pub(crate) cache_mrtr_retry: bool,
    /// Modern HTTP: no `Mcp-Method` header (breaks: Mcp-Method on every POST).
    pub(crate) no_mcp_method_header: bool,
    /// Modern HTTP: no `Mcp-Name` header (breaks: Mcp-Name on tools/call).
    pub(crate) no_mcp_name_header: bool,
    /// Modern HTTP: also POST `notifications/cancelled` when giving up on a request (breaks: closing the stream is the cancellation).
    pub(crate) cancel_with_notification_over_http: bool,
    /// Modern/dual era: after a successful discover also send `initialize` and `notifications/initialized` (breaks: no initialize towards a modern server).
    pub(crate) initialize_after_discover: bool,
    /// Modern HTTP: open the legacy standalone GET stream (breaks: no GET in the modern era).
    pub(crate) get_stream_in_modern: bool,
    /// Modern/dual HTTP: probe the era again on every connect (breaks: the era is cached per origin).
    pub(crate) no_era_cache: bool,
    /// Dual era: keep sending the modern `_meta` after falling back to legacy (breaks: the two eras' semantics are kept apart).
    pub(crate) meta_after_fallback: bool,
    /// Modern era: retry without `inputResponses` (breaks: every input request is answered on the retry).
    pub(crate) no_input_responses: bool,
    /// Modern era: leave a declined elicitation out of `inputResponses` (breaks: every key of inputRequests is answered).
    pub(crate) omit_declined: bool,
    /// Modern era: retry with only the name plus the input fields, without the original arguments (breaks: the retry repeats the original params).
    pub(crate) bare_retry: bool,
    /// HTTP: report a cancelled or timed-out request but leave its HTTP request (its response
    /// stream) open until close (breaks: the HTTP request is aborted; in 2026-07-28 closing
    /// the stream is the cancellation).
    pub(crate) keep_stream_on_cancel: bool,
    /// Send a `tools/list` while `initialize` still waits for its result (breaks: no request
    /// but ping before the initialize result).
    pub(crate) request_before_initialize_result: bool,
    /// Send `logging/setLevel` after the handshake although the server declared no `logging`
    /// (breaks: only negotiated capabilities are used).
    pub(crate) use_undeclared_capability: bool,
    /// Take an empty-string `nextCursor` as the end of the listing (breaks: an empty cursor is
    /// a cursor).
    pub(crate) empty_cursor_is_end: bool,
    /// HTTP: when a page request gets 404 (the session ended), start a new session and send the
    /// same cursor again (breaks: no cursor is carried into a new session).
    pub(crate) resume_listing_after_new_session: bool,
    /// Modern era: keep the cached pages when the server refuses a cursor with -32602 (breaks:
    /// an invalid cursor discards the cached pages).
    pub(crate) keep_pages_on_invalid_cursor: bool,
    /// Modern era: key cached results by method only (breaks: a cached result is never served
    /// for other params).
    pub(crate) cache_key_method_only: bool,
    /// Modern era: serve a `private` cached result whatever the access token (breaks: a
    /// private result is not served across authorization contexts).
    pub(crate) share_private_cache: bool,
    /// Modern era: declare the server's `extensions` as the client's own in `_meta` (breaks: an
    /// extension only the server supports is ignored).
    pub(crate) claim_server_extensions: bool,
    /// HTTP: when the standalone GET stream drops, never open it again (breaks: a cut GET
    /// stream is reopened).
    pub(crate) no_stream_reconnect: bool,
    /// HTTP: treat a dropped standalone GET stream as a lost session, so `initialize` is sent
    /// again before the next request (breaks: reconnecting never re-sends earlier requests).
    pub(crate) reinitialize_on_reconnect: bool,
    /// HTTP: a 403 answering a request does not fail it; the request runs into its timeout
    /// (breaks: a refusal surfaces as an error at once).
    pub(crate) ignore_forbidden: bool,
    /// Refuse a `structuredContent` that is not an object, as a 2025-06-18 client would
    /// (breaks: any JSON value is structured content at 2026-07-28).
    pub(crate) object_structured_only: bool,
    /// Refuse a result holding content blocks other than text, image and embedded resource,
    /// or blocks with annotations, as a client written for 2024-11-05 would (breaks: every
    /// content type of the revision is read).
    pub(crate) first_revision_content: bool,
    /// Modern stdio: a server that exits on its own is not started again; the connection ends
    /// (breaks: the client should restart a server that exited unexpectedly).
    pub(crate) no_restart: bool,
    /// HTTP: reopen a dropped standalone GET stream without `Last-Event-ID` (breaks: a client
    /// resumes with the last event id it saw).
    pub(crate) no_last_event_id: bool,
    /// HTTP: when a resumed request stream breaks again before any event, resume without
    /// `Last-Event-ID` (breaks: the stream is resumed from the last id received).
    pub(crate) forget_event_id_on_recut: bool,
    /// HTTP: read a body by its whole `Content-Type` value, parameters included (breaks:
    /// `application/json; charset=utf-8` is JSON).
    pub(crate) strict_content_type: bool,
    /// HTTP: never try the HTTP+SSE transport after a refused first POST (breaks: the
    /// fallback to a 2024-11-05 server).
    pub(crate) no_sse_fallback: bool,
    /// HTTP: try the HTTP+SSE transport after a refused first POST even when its body is a
    /// modern JSON-RPC error (breaks: a modern server is not taken for an HTTP+SSE one).
    pub(crate) sse_fallback_on_modern_error: bool,
    /// HTTP+SSE: POST messages to the URL the client was given instead of the `endpoint`
    /// event's URI (breaks: every message goes to the endpoint URI).
    pub(crate) sse_post_to_mcp_url: bool,
    /// Follow a listing's pages without a cap, so pages that never end run into the deadline (breaks: a listing stops with an error when its pages do not end).
    pub(crate) no_page_cap: bool,
    /// At the page cap, return the entries gathered so far as a success (breaks: never a shorter list passed off as the whole one).
    pub(crate) truncate_at_page_cap: bool,
    /// Accept data that is not valid base64, measuring the raw string's bytes (breaks: invalid base64 is invalid_response).
    pub(crate) lenient_base64: bool,
    /// Leave out a content block of an unknown type instead of failing the step (breaks: an unknown content type is invalid_response).
    pub(crate) skip_unknown_content: bool,
    /// Leave `annotations` out of content as seen (breaks: a block's annotations are kept).
    pub(crate) drop_annotations: bool,
    /// Keep only text blocks in content as seen: binary, embedded resource and link blocks, and prompt messages that are not text, are left out (breaks: every content type is reported).
    pub(crate) text_content_only: bool,
    /// Leave blob contents out of a `resources/read` answer (breaks: binary resource contents are reported).
    pub(crate) blob_contents_dropped: bool,
    /// Send `prompts/get` without its `arguments` (breaks: the prompt's arguments are sent).
    pub(crate) drop_prompt_arguments: bool,
    /// Send `completion/complete` without its `context` (breaks: the context is sent as given).
    pub(crate) drop_completion_context: bool,
    /// Report only the `values` of a completion (breaks: `total` and `hasMore` are reported when received).
    pub(crate) drop_completion_total: bool,
    /// Send every request whatever the server declared, `ping` and `logging/setLevel` in the 2026-07-28 era included (breaks: capability_missing, nothing sent).
    pub(crate) ignore_server_capabilities: bool,
    /// Report resource contents with neither `text` nor `blob` by their `uri` and `mimeType`
    /// instead of failing the step (breaks: such contents are invalid_response).
    pub(crate) accept_shapeless_contents: bool,
    // Output schemas (seam `schema.rs`).
    /// Never validate `structuredContent` against `outputSchema` (breaks: schema_mismatch).
    pub(crate) no_output_validation: bool,
    /// Validate a schema without `$schema` as draft-07 (breaks: 2020-12 is the default dialect).
    pub(crate) draft_07_default: bool,
    /// No cost bounds and no time budget on validation (breaks: a costly schema fails in time).
    pub(crate) unbounded_schema: bool,
    /// A schema whose `$ref` cannot be resolved validates anything (breaks: an unresolved
    /// external reference is refused, not permissive).
    pub(crate) permissive_unresolved_ref: bool,
    /// Really fetch a `$ref` to an `http://` URL (breaks: no network reference is fetched).
    pub(crate) fetch_network_ref: bool,
    /// Modern HTTP: keep tools whose `x-mcp-header` annotation is invalid in the listing
    /// (breaks: such tools are left out of tools/list).
    pub(crate) keep_invalid_header_tools: bool,
    /// Modern HTTP: send no `Mcp-Param-*` header (breaks: annotated arguments are mirrored).
    pub(crate) no_param_headers: bool,
    /// Modern HTTP: send an empty `Mcp-Param-*` header for an annotated argument that is
    /// absent or null (breaks: the header is omitted then).
    pub(crate) param_header_when_absent: bool,
    /// Modern HTTP: send `Mcp-Name` and `Mcp-Param-*` values as they are, never in the
    /// `=?base64?…?=` form (breaks: unsafe values are base64-encoded).
    pub(crate) raw_header_values: bool,
    /// Modern HTTP: on a `HeaderMismatch` answering `tools/call`, neither list the tools again
    /// nor retry (breaks: the client re-lists and retries with the right headers).
    pub(crate) no_relist_on_header_mismatch: bool,
    /// Take a `nextCursor` of `null` for a cursor and send it back as the string `"null"`
    /// (breaks: a null `nextCursor` ends the listing like an absent one).
    pub(crate) null_cursor_followed: bool,
    /// When a page request after the first fails with a JSON-RPC error, return the entries of
    /// the pages before it as a success (breaks: a failed page fails the listing with its error).
    pub(crate) partial_listing_on_error: bool,
    /// Declare no client capabilities, whatever the handlers (breaks: the capabilities the handlers imply are declared).
    pub(crate) no_client_capabilities: bool,
    /// Declare `roots`, `sampling` and `elicitation` whatever the handlers (breaks: no capability is declared that no handler serves).
    pub(crate) all_client_capabilities: bool,
    /// Answer `roots/list` with no roots (breaks: roots/list is answered with the client's roots).
    pub(crate) roots_answer_empty: bool,
    /// `set_roots` sends no `notifications/roots/list_changed` (breaks: a client declaring `roots.listChanged` notifies).
    pub(crate) no_roots_list_changed: bool,
    /// Answer an elicitation in a mode not declared with an answer of another mode (breaks: -32602 for an undeclared mode).
    pub(crate) elicitation_any_mode: bool,
    /// Ignore `defaults: true`: the schema's defaults are not filled in (breaks: an accepted form carries the defaults).
    pub(crate) no_elicitation_defaults: bool,
    /// Send no `progressToken` when progress is asked for (breaks: the request carries a progress token).
    pub(crate) no_progress_token: bool,
    /// Use the same progress token for every request (breaks: tokens are unique among active requests).
    pub(crate) shared_progress_token: bool,
    /// Keep surfacing progress for a token after its request completed (breaks: no progress after the response).
    pub(crate) progress_after_completion: bool,
    /// Surface progress for tokens the client never sent (breaks: only its own tokens are surfaced).
    pub(crate) progress_unknown_token: bool,
    /// Report every `events` step as `[]` (breaks: what the server sent is surfaced).
    pub(crate) drop_events: bool,
    /// Never restart a call's timeout on progress (breaks: progress restarts the timeout).
    pub(crate) no_timeout_reset: bool,
    /// Restart the timeout on progress forever, with no maximum (breaks: the maximum timeout holds).
    pub(crate) no_max_timeout: bool,
    /// Send `resources/subscribe` although the server did not declare `resources.subscribe` (breaks: capability_missing).
    pub(crate) subscribe_without_capability: bool,
    /// Do not send `subscriptions/listen` again after a stdio server was restarted (breaks: the subscription is re-established).
    pub(crate) listen_not_resent: bool,
    /// Surface notifications tagged with another subscription's id (breaks: notifications are correlated by subscriptionId).
    pub(crate) foreign_subscription_events: bool,
    /// Keep a cached listing after its list_changed notification (breaks: the notification ends the cache entry).
    pub(crate) cache_survives_list_changed: bool,
    /// Print the content of elicitation answers on stderr (breaks: sensitive values are never logged).
    pub(crate) log_elicitation_content: bool,
    /// Answer a server request the server cancelled before the answer was sent (breaks: no answer after the cancellation).
    pub(crate) answer_cancelled_request: bool,
    /// Leave server requests out of `events` (breaks: every server request is reported).
    pub(crate) request_events_missing: bool,
    /// Never declare `sampling.tools` (breaks: a client whose model uses tools declares it).
    pub(crate) no_sampling_tools: bool,
    /// Declare `sampling.tools` whenever `sampling` is declared (breaks: only a model that uses tools declares it).
    pub(crate) sampling_tools_always: bool,
    /// Answer a sampling request whose tool_use has no tool_result (breaks: -32602 for a missing tool result).
    pub(crate) accept_unanswered_tool_use: bool,
    /// Answer a sampling request whose user message mixes tool_result with other content (breaks: -32602 for mixed content).
    pub(crate) accept_mixed_tool_result: bool,
    /// Answer a rejected sampling request with -32603 (breaks: the rejection is the error -1).
    pub(crate) sampling_rejection_code: bool,
    /// Fetch a url-mode elicitation's URL on receipt (breaks: the URL is never pre-fetched).
    pub(crate) prefetch_elicitation_url: bool,
    /// Open the URL even when the user declined or cancelled (breaks: opened only with consent).
    pub(crate) open_url_without_consent: bool,
    /// Open the URL without its query and fragment (breaks: the full URL, unchanged).
    pub(crate) open_url_trimmed: bool,
    /// Leave the URL elicitations of a -32042 error unoffered (breaks: they are offered).
    pub(crate) ignore_url_elicitation_required: bool,
    /// Give a modern call up after accepting its URL elicitation (breaks: the call is retried).
    pub(crate) no_retry_after_url_accept: bool,
    /// Take an elicitation request without `mode` for url mode (breaks: it is form mode).
    pub(crate) missing_mode_as_url: bool,
    /// `listen` reports the filter it requested instead of the one the server acknowledged
    /// (breaks: the acknowledged filter is checked against the request).
    pub(crate) reports_requested_filter: bool,
    /// Answer a server request at once although its handler's answer says to wait
    /// (`delay_ms`) (breaks: the delayed answer comes after the delay, or never if cancelled).
    pub(crate) ignore_answer_delay: bool,
    /// Declare the `url` elicitation mode whenever `form` is declared (breaks: only the
    /// modes answered are declared).
    pub(crate) elicitation_url_always: bool,
    // HTTP streams (seam `streams.rs`).
    /// HTTP: when a request's SSE stream breaks before its response, POST the same request
    /// again (same id) instead of resuming with GET and `Last-Event-ID` (legacy) or
    /// re-issuing it with a new id (2026-07-28) (breaks: a cut stream is never answered by
    /// re-sending the request).
    pub(crate) resend_on_stream_cut: bool,
    /// HTTP: fail a request whose SSE stream breaks before its response, even when the
    /// stream carried event ids (legacy) or the revision says to re-issue it (2026-07-28)
    /// (breaks: a cut POST stream is resumed with GET and Last-Event-ID / re-issued).
    pub(crate) no_post_stream_resume: bool,
    /// HTTP: reconnect a stream after the client's own backoff, whatever `retry:` the server
    /// sent (breaks: the retry field is honoured before reconnecting).
    pub(crate) ignore_retry_field: bool,
    /// HTTP: read the standalone GET stream but hand none of its messages to the router, so
    /// its requests go unanswered and its notifications unseen (breaks: messages on the GET
    /// stream are handled).
    pub(crate) ignore_get_stream_messages: bool,
    // Tasks (seam `tasks.rs`; `task-no-mcp-name` in `sent.rs`, `task-cache-get` in `cache.rs`).
    /// Legacy: task-augment a call that accepts a task even when the server did not declare
    /// `tasks.requests.tools.call` or the tool's taskSupport is absent or `forbidden` (breaks:
    /// augmentation only where declared).
    pub(crate) task_ignore_capability: bool,
    /// Legacy: augment only calls that accept a task, so a `required` tool called without one
    /// is called plainly (breaks: a required tool is invoked as a task).
    pub(crate) task_ignore_required: bool,
    /// Poll `tasks/get` every 5 ms, whatever the poll interval (breaks: the poll interval is
    /// respected).
    pub(crate) task_busy_poll: bool,
    /// Cancel a task with `notifications/cancelled` naming its `tools/call` instead of
    /// `tasks/cancel` (breaks: tasks are cancelled with tasks/cancel).
    pub(crate) task_cancel_notification: bool,
    /// Never poll: wait for a status notification, then act on it (breaks: status
    /// notifications are not relied on).
    pub(crate) task_wait_for_status: bool,
    /// Legacy: answer a task's input request without its related-task `_meta` (breaks: the
    /// answer carries the related task).
    pub(crate) task_no_related_meta: bool,
    /// Put related-task `_meta` on `tasks/get`, `tasks/result` and `tasks/cancel` (breaks:
    /// requestors SHOULD NOT include it there).
    pub(crate) task_meta_on_polls: bool,
    /// Task-augment `tasks/get`, `tasks/result` and `tasks/cancel` with `params.task` (breaks:
    /// a requestor augments only the request types the receiver declared).
    pub(crate) task_augments_polls: bool,
    /// Legacy: at `input_required` keep polling and never call `tasks/result` until the task
    /// ends (breaks: tasks/result is called on input_required).
    pub(crate) task_poll_through_input: bool,
    /// Modern: answer every `inputRequests` key on every poll (breaks: each key is answered
    /// once).
    pub(crate) task_answer_twice: bool,
    /// Modern HTTP: send `tasks/*` without `Mcp-Name` (breaks: Mcp-Name is the taskId).
    pub(crate) task_no_mcp_name: bool,
    /// Modern: keep a `tasks/get` result by its `ttlMs` as if it were cacheable (breaks: a
    /// task's state is never cached).
    pub(crate) task_cache_get: bool,
    /// Modern: take a `CreateTaskResult` for any request and poll it (breaks: a
    /// CreateTaskResult to a request that cannot create a task is invalid).
    pub(crate) task_any_request: bool,
    /// Modern: report a `failed` task as an empty success (breaks: a failed task is a
    /// protocol_error with its code).
    pub(crate) task_failed_as_ok: bool,
    /// Receiver: answer a task-augmented request plainly although tasks were declared for it
    /// (breaks: a CreateTaskResult answers it).
    pub(crate) receiver_plain_answer: bool,
    /// Receiver: create tasks `completed` (breaks: a task begins `working`).
    pub(crate) receiver_not_working: bool,
    /// Receiver: answer `tasks/result` of a task not yet ended at once, with an error
    /// (breaks: tasks/result blocks until the task ends).
    pub(crate) receiver_result_early: bool,
    /// Receiver: `tasks/result` without the related-task `_meta` (breaks: the result carries
    /// it).
    pub(crate) receiver_result_no_meta: bool,
    /// Receiver: accept `tasks/cancel` of an ended task, answering the task (breaks: -32602).
    pub(crate) receiver_cancel_terminal_ok: bool,
    /// Receiver: answer a request about an unknown task id with a made-up task (breaks:
    /// -32602).
    pub(crate) receiver_unknown_task_ok: bool,
    /// Receiver: serve tasks without declaring the `tasks` capability (breaks: a receiver
    /// declares it).
    pub(crate) receiver_undeclared: bool,
    /// Receiver: answer `tasks/cancel` of a working task with the task as it is, and let it
    /// complete (breaks: cancelled before the answer, and for good).
    pub(crate) receiver_cancel_ignored: bool,
    /// Receiver: answer `tasks/list` with no tasks (breaks: a task tasks/get finds is listed).
    pub(crate) receiver_list_empty: bool,
    /// Receiver: task objects without `createdAt`, `lastUpdatedAt` and `ttl` (breaks: every
    /// task response carries them).
    pub(crate) receiver_task_bare: bool,
    /// Receiver: serve a task-augmented request as a task whatever its method, once any is
    /// declared (breaks: an undeclared request type is processed normally).
    pub(crate) receiver_any_method: bool,
    /// The authorization seam's flags (`auth.rs`).
    pub(crate) auth: AuthDefects,
    /// The SSRF seam's flags (`ssrf.rs`: `ssrf-unchecked`, `ssrf-check-name-once`).
    pub(crate) ssrf: SsrfDefects,
    /// The many-servers seam's flags (`servers.rs`).
    pub(crate) servers: ServersDefects,
    /// The telemetry seam's flags (`telemetry.rs`).
    pub(crate) telemetry: TelemetryDefects,
}

/// The telemetry defects (see `defects/telemetry.rs`); all off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TelemetryDefects {
    /// Install no exporter though the environment asks for one (breaks: a span per request).
    pub(crate) no_spans: bool,
    /// Give `jsonrpc.request.id` another id than the wire's (breaks: the span's id is the
    /// request's).
    pub(crate) wrong_id: bool,
    /// Name spans `mcp.request` and the tool, prompt and resource attributes by other keys
    /// (breaks: the conventions' names).
    pub(crate) misnamed: bool,
    /// Put the access token held and every elicitation answer value in span attributes
    /// (breaks: no secret in what the client exports).
    pub(crate) token_in_span: bool,
    /// Send a `traceparent` whose parent id is not the span's (breaks: the wire's context is
    /// the span's).
    pub(crate) wire_not_span: bool,
    /// Leave `error.type`, `rpc.response.status_code` and the ERROR status off failed
    /// requests (breaks: errors are visible in the span).
    pub(crate) no_error_type: bool,
}

/// The many-servers defects (see `defects/servers.rs`); all off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ServersDefects {
    /// Expose every tool under its own name (breaks: colliding names are disambiguated).
    pub(crate) unnamespaced: bool,
    /// Prefix a shared tool name with the server's `serverInfo.name` (breaks: serverInfo.name
    /// is not relied upon for disambiguation).
    pub(crate) by_server_info: bool,
    /// Close every connection once a step on one server failed as `transport_closed`
    /// (breaks: one server's failure leaves the others working).
    pub(crate) close_all: bool,
}

/// The authorization defects (see `defects/auth.rs`); all off by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AuthDefects {
    /// No `code_challenge` and no `code_verifier` (breaks: PKCE is used).
    pub(crate) no_pkce: bool,
    /// Proceed (with `plain` when listed, else without PKCE) when S256 is not advertised or
    /// the list is absent (breaks: refuse to proceed without S256).
    pub(crate) pkce_without_s256: bool,
    /// Do not compare `state` (breaks: a result without or with another state is discarded).
    pub(crate) ignore_state: bool,
    /// Do not check RFC 9207 `iss` (breaks: the issuer is validated in the response).
    pub(crate) ignore_iss: bool,
    /// Leave `resource` out of authorization and token requests (breaks: RFC 8707 resource).
    pub(crate) no_resource: bool,
    /// Send the access token on requests to the authorization server and to metadata
    /// locations of any origin (breaks: the token goes to the MCP server only).
    pub(crate) token_to_any_origin: bool,
    /// Also put the access token in the MCP URL's query as `access_token` (breaks: tokens
    /// never in a URL).
    pub(crate) token_in_url: bool,
    /// Accept authorization server metadata whose `issuer` differs from the one its URL was
    /// built from (breaks: issuer validation).
    pub(crate) no_issuer_check: bool,
    /// Ignore the challenge's `scope` and always ask for every `scopes_supported` (breaks:
    /// least privilege, the challenge is authoritative).
    pub(crate) all_scopes: bool,
    /// Treat 403 insufficient_scope as final (breaks: step-up authorization).
    pub(crate) no_step_up: bool,
    /// Re-authorize on every 403 insufficient_scope without the one-retry limit (breaks: retry
    /// limits on step-up).
    pub(crate) step_up_forever: bool,
    /// Never use a refresh token (breaks: refresh on expiry).
    pub(crate) no_refresh: bool,
    /// Keep using the first refresh token when the server rotates it (breaks: rotation).
    pub(crate) keep_old_refresh: bool,
    /// Reuse registered client credentials with any authorization server (breaks: credentials
    /// keyed by issuer).
    pub(crate) shared_credentials: bool,
    /// Register dynamically even when pre-registered credentials or a metadata document apply
    /// (breaks: the registration priority).
    pub(crate) prefer_dcr: bool,
    /// Accept `http://` authorization server endpoints and metadata (breaks: https only).
    pub(crate) allow_http: bool,
    /// Ignore the challenge's `resource_metadata`; probe the well-known URIs only (breaks:
    /// the header's URL is used when present).
    pub(crate) ignore_resource_metadata: bool,
    /// Try only the root well-known locations: no path insertion, no OpenID (breaks: the
    /// discovery order).
    pub(crate) root_only_discovery: bool,
    /// After obtaining a token on a 401, report the 401 instead of retrying (breaks: the
    /// request is retried with the token).
    pub(crate) no_401_retry: bool,
    /// Accept Protected Resource Metadata whose `resource` is the server's URL or a parent of
    /// it wherever the document was found (breaks: RFC 9728 §3.3, a well-known document
    /// names the identifier its URL was built from).
    pub(crate) any_prm_resource: bool,
    /// Send the server's canonical URI as `resource` even when PRM published another
    /// identifier for it (breaks: PRM's `resource` sent byte for byte).
    pub(crate) resource_from_url: bool,
    /// Step up with only the scopes the 403 names, dropping those already held (breaks: an
    /// increased set of scopes).
    pub(crate) step_up_challenged_only: bool,
    /// A `client_secret_basic` client puts its secret in the token request's form instead
    /// (breaks: HTTP Basic is RECOMMENDED over the form, RFC 6749 §2.3.1).
    pub(crate) secret_in_form: bool,
    /// A client with a secret sends it both in HTTP Basic and in the form (breaks: one
    /// authentication method per request).
    pub(crate) token_auth_both: bool,
    /// Try the next well-known location only after a 404, and give up after any other
    /// status (breaks: every location is tried in order).
    pub(crate) fallback_only_on_404: bool,
    /// Register without `application_type` (breaks: dynamic registration names one).
    pub(crate) no_application_type: bool,
    /// Register for the `authorization_code` grant only, though the client uses refresh
    /// tokens (breaks: `refresh_token` in `grant_types`).
    pub(crate) no_refresh_grant: bool,
    /// Add `offline_access` to every scope asked for, listed or not (breaks: only where the
    /// authorization server lists it).
    pub(crate) offline_access_always: bool,
    /// Refuse a token answer without a refresh token (breaks: refresh tokens are not assumed).
    pub(crate) needs_refresh_token: bool,
    /// Reject a redirect without `iss` even when the server does not advertise it (breaks:
    /// RFC 9207 §2.4's table: proceed).
    pub(crate) iss_required: bool,
    /// Ask only for the challenged scopes that `scopes_supported` also lists (breaks: the
    /// challenge's scopes are authoritative, in no set relation to `scopes_supported`).
    pub(crate) scopes_within_supported: bool,
    /// Refresh for every request that meets a 401, even when another request has just
    /// obtained a new token (breaks: requests that expire together share one refresh).
    pub(crate) refresh_per_request: bool,
    /// A machine client ignores its client credentials and authorizes as a user's client
    /// would (breaks: the `client_credentials` grant, no authorization request).
    pub(crate) cc_ignored: bool,
    /// A JWT client assertion names the MCP server as its `aud` (breaks: the authorization
    /// server is the audience, RFC 7523 §3).
    pub(crate) cc_aud_resource: bool,
    /// A DPoP client sends no proof (breaks: a proof on every token and MCP request).
    pub(crate) dpop_no_proof: bool,
    /// DPoP proofs at the MCP server leave out `ath` (breaks: the token's hash, RFC 9449 §4.2).
    pub(crate) dpop_no_ath: bool,
    /// Every DPoP proof has the first one's `jti` (breaks: a unique `jti` per proof).
    pub(crate) dpop_jti_reused: bool,
    /// DPoP proofs never carry the nonce a server asked for (breaks: the retry with it).
    pub(crate) dpop_ignores_nonce: bool,
}

/// The SSRF seam's flags (see `defects/ssrf.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SsrfDefects {
    pub(crate) unchecked: bool,
    pub(crate) check_name_once: bool,
}
