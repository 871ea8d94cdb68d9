//! Deliberate defects, switched on one by one so the harness can prove each of its checks fails.
//!
//! A check that has never been seen failing proves nothing. Each flag of the switchboard
//! ([`Defects`], in `seams/switches.rs`) breaks the client in exactly one way that one check
//! exists to catch. All are off by default; the driver turns them on with `--defect NAME`.
//! This module is compiled only with the `defects` feature, which the harness's driver turns
//! on and the library as published does not.
//!
//! The rest of the client is written as a correct client and never imports from here: it asks
//! its seams (`seams/`), and `hooks.rs` hands each hook to the file here that decides it:
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
//! | icons | `icons.rs` | which icons are fetched, and how |
//! | giving up | `giving_up.rs` | timeouts, cancellation, how the server is told |
//! | shutdown escalation | `shutdown.rs` | close stdin → SIGTERM → SIGKILL, DELETE, cleanup |
//! | TLS policy | `tls.rs` | which URLs and redirects are allowed |
//! | output schemas | `schema.rs` | whether and how `structuredContent` is validated |
//! | the spec's schema | `spec_schema.rs` | messages the revision's published schema refuses (a step of what is sent) |
//! | what the server starts | `listening.rs` | client capabilities, answers to server requests, events, progress, subscriptions |
//! | sampling tools, URL consent | `consent.rs` | tool rules, a sampling rejection, what is done with an elicitation's URL |
//! | DPoP proofs | `dpop.rs` | whether proofs are sent, and their `ath`, `jti` and nonce |
//! | HTTP streams | `streams.rs` | a broken request stream (resume, re-issue), reconnect delays, the GET stream's messages |
//! | HTTP+SSE fallback | `legacy_sse.rs` | whether a refused first POST leads to the 2024-11-05 transport, where its messages go |
//! | tasks | `tasks.rs` | augmenting a call, polling, a task's input requests, cancelling, a CreateTaskResult's validity, a failed task |
//! | authorization | `auth.rs` | discovery, registration, PKCE, `state`/`iss`, `resource`, scopes, step-up, refresh, where the token goes |
//! | destinations (SSRF) | `ssrf.rs` | whether a discovered URL's destination is judged, once or where it is connected to; redirects to other origins |
//! | many servers | `servers.rs` | the tool names a model is given, one server's failure ending the others |
//! | telemetry | `telemetry.rs` | whether spans are exported, their request ids, names and error attributes, secrets in them, the wire's trace context |
//!
//! With every flag off each seam returns the correct decision unchanged.

pub(crate) mod auth;
pub(crate) mod cache;
pub(crate) mod consent;
pub(crate) mod content;
#[cfg(test)]
mod defaults;
pub(crate) mod dpop;
pub(crate) mod era;
pub(crate) mod giving_up;
mod hooks;
pub(crate) mod icons;
pub(crate) mod legacy_sse;
pub(crate) mod listening;
pub(crate) mod listing;
pub(crate) mod param_headers;
pub(crate) mod read;
pub(crate) mod schema;
pub(crate) mod sent;
pub(crate) mod servers;
pub(crate) mod shutdown;
mod spec_schema;
pub(crate) mod ssrf;
pub(crate) mod streams;
pub(crate) mod tasks;
pub(crate) mod telemetry;
pub(crate) mod tls;
pub(crate) mod versions;

pub(crate) use crate::seams::Defects;
use crate::seams::{AuthDefects, ServersDefects, SsrfDefects, TelemetryDefects};

#[cfg(test)]
impl crate::seams::Seams {
    /// Only the defect `name` (for the unit tests of a seam's caller).
    pub(crate) fn only(name: &str) -> Self {
        crate::seams::Seams(Defects::only(name))
    }
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
    pub const NAMES: [&'static str; 201] = [
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
        "kill-direct-child-only",
        "fixed-page-size",
        "cancel-answered",
        "get-accept-json",
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
        "arguments-as-string",
        "initialize-no-client-info",
        "log-level-unknown",
        "completion-ref-type",
        "roots-not-array",
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
        "no-trace-context",
        "malformed-traceparent",
        "new-trace-id",
        "malformed-baggage",
        "log-level-once",
        "icons-any-scheme",
        "icon-credentials",
        "icon-follows-redirects",
        "wrong-log-level",
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
        "share-private-cache",
        "claim-server-extensions",
        "no-stream-reconnect",
        "reinitialize-on-reconnect",
        "ignore-forbidden",
        "object-structured-only",
        "first-revision-content",
        "no-restart",
        "no-last-event-id",
        "forget-event-id-on-recut",
        "strict-content-type",
        "no-sse-fallback",
        "sse-fallback-on-modern-error",
        "sse-post-to-mcp-url",
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
        "partial-listing-on-error",
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
        "no-sampling-tools",
        "sampling-tools-always",
        "accept-unanswered-tool-use",
        "accept-mixed-tool-result",
        "sampling-rejection-code",
        "prefetch-elicitation-url",
        "open-url-without-consent",
        "open-url-trimmed",
        "ignore-url-elicitation-required",
        "no-retry-after-url-accept",
        "missing-mode-as-url",
        "reports-requested-filter",
        "ignore-answer-delay",
        "elicitation-url-always",
        "resend-on-stream-cut",
        "no-post-stream-resume",
        "ignore-retry-field",
        "ignore-get-stream-messages",
        "task-ignore-capability",
        "task-ignore-required",
        "task-busy-poll",
        "task-cancel-notification",
        "task-wait-for-status",
        "task-no-related-meta",
        "task-meta-on-polls",
        "task-augments-polls",
        "task-poll-through-input",
        "task-answer-twice",
        "task-no-mcp-name",
        "task-cache-get",
        "task-any-request",
        "task-failed-as-ok",
        "receiver-plain-answer",
        "receiver-not-working",
        "receiver-result-early",
        "receiver-result-no-meta",
        "receiver-cancel-terminal-ok",
        "receiver-unknown-task-ok",
        "receiver-undeclared",
        "receiver-cancel-ignored",
        "receiver-list-empty",
        "receiver-task-bare",
        "receiver-any-method",
    ];

    /// Every name [`Defects::enable`] accepts: [`Defects::NAMES`] and the seams' own lists.
    pub fn all_names() -> impl Iterator<Item = &'static str> {
        Defects::NAMES
            .into_iter()
            .chain(AuthDefects::NAMES)
            .chain(SsrfDefects::NAMES)
            .chain(ServersDefects::NAMES)
            .chain(TelemetryDefects::NAMES)
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
            "kill-direct-child-only" => &mut self.kill_direct_child_only,
            "fixed-page-size" => &mut self.fixed_page_size,
            "cancel-answered" => &mut self.cancel_answered,
            "get-accept-json" => &mut self.get_accept_json,
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
            "arguments-as-string" => &mut self.arguments_as_string,
            "initialize-no-client-info" => &mut self.initialize_no_client_info,
            "log-level-unknown" => &mut self.log_level_unknown,
            "completion-ref-type" => &mut self.completion_ref_type,
            "roots-not-array" => &mut self.roots_not_array,
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
            "no-trace-context" => &mut self.no_trace_context,
            "malformed-traceparent" => &mut self.malformed_traceparent,
            "new-trace-id" => &mut self.new_trace_id,
            "malformed-baggage" => &mut self.malformed_baggage,
            "log-level-once" => &mut self.log_level_once,
            "icons-any-scheme" => &mut self.icons_any_scheme,
            "icon-credentials" => &mut self.icon_credentials,
            "icon-follows-redirects" => &mut self.icon_follows_redirects,
            "wrong-log-level" => &mut self.wrong_log_level,
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
            "share-private-cache" => &mut self.share_private_cache,
            "claim-server-extensions" => &mut self.claim_server_extensions,
            "no-stream-reconnect" => &mut self.no_stream_reconnect,
            "reinitialize-on-reconnect" => &mut self.reinitialize_on_reconnect,
            "ignore-forbidden" => &mut self.ignore_forbidden,
            "object-structured-only" => &mut self.object_structured_only,
            "first-revision-content" => &mut self.first_revision_content,
            "no-restart" => &mut self.no_restart,
            "no-last-event-id" => &mut self.no_last_event_id,
            "forget-event-id-on-recut" => &mut self.forget_event_id_on_recut,
            "strict-content-type" => &mut self.strict_content_type,
            "no-sse-fallback" => &mut self.no_sse_fallback,
            "sse-fallback-on-modern-error" => &mut self.sse_fallback_on_modern_error,
            "sse-post-to-mcp-url" => &mut self.sse_post_to_mcp_url,
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
            "partial-listing-on-error" => &mut self.partial_listing_on_error,
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
            "no-sampling-tools" => &mut self.no_sampling_tools,
            "sampling-tools-always" => &mut self.sampling_tools_always,
            "accept-unanswered-tool-use" => &mut self.accept_unanswered_tool_use,
            "accept-mixed-tool-result" => &mut self.accept_mixed_tool_result,
            "sampling-rejection-code" => &mut self.sampling_rejection_code,
            "prefetch-elicitation-url" => &mut self.prefetch_elicitation_url,
            "open-url-without-consent" => &mut self.open_url_without_consent,
            "open-url-trimmed" => &mut self.open_url_trimmed,
            "ignore-url-elicitation-required" => &mut self.ignore_url_elicitation_required,
            "no-retry-after-url-accept" => &mut self.no_retry_after_url_accept,
            "missing-mode-as-url" => &mut self.missing_mode_as_url,
            "reports-requested-filter" => &mut self.reports_requested_filter,
            "ignore-answer-delay" => &mut self.ignore_answer_delay,
            "elicitation-url-always" => &mut self.elicitation_url_always,
            "resend-on-stream-cut" => &mut self.resend_on_stream_cut,
            "no-post-stream-resume" => &mut self.no_post_stream_resume,
            "ignore-retry-field" => &mut self.ignore_retry_field,
            "ignore-get-stream-messages" => &mut self.ignore_get_stream_messages,
            "task-ignore-capability" => &mut self.task_ignore_capability,
            "task-ignore-required" => &mut self.task_ignore_required,
            "task-busy-poll" => &mut self.task_busy_poll,
            "task-cancel-notification" => &mut self.task_cancel_notification,
            "task-wait-for-status" => &mut self.task_wait_for_status,
            "task-no-related-meta" => &mut self.task_no_related_meta,
            "task-meta-on-polls" => &mut self.task_meta_on_polls,
            "task-augments-polls" => &mut self.task_augments_polls,
            "task-poll-through-input" => &mut self.task_poll_through_input,
            "task-answer-twice" => &mut self.task_answer_twice,
            "task-no-mcp-name" => &mut self.task_no_mcp_name,
            "task-cache-get" => &mut self.task_cache_get,
            "task-any-request" => &mut self.task_any_request,
            "task-failed-as-ok" => &mut self.task_failed_as_ok,
            "receiver-plain-answer" => &mut self.receiver_plain_answer,
            "receiver-not-working" => &mut self.receiver_not_working,
            "receiver-result-early" => &mut self.receiver_result_early,
            "receiver-result-no-meta" => &mut self.receiver_result_no_meta,
            "receiver-cancel-terminal-ok" => &mut self.receiver_cancel_terminal_ok,
            "receiver-unknown-task-ok" => &mut self.receiver_unknown_task_ok,
            "receiver-undeclared" => &mut self.receiver_undeclared,
            "receiver-cancel-ignored" => &mut self.receiver_cancel_ignored,
            "receiver-list-empty" => &mut self.receiver_list_empty,
            "receiver-task-bare" => &mut self.receiver_task_bare,
            "receiver-any-method" => &mut self.receiver_any_method,
            _ => {
                return self.auth.enable(name)
                    || self.ssrf.enable(name)
                    || self.servers.enable(name)
                    || self.telemetry.enable(name);
            }
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
            include_str!("consent.rs"),
            include_str!("content.rs"),
            include_str!("dpop.rs"),
            include_str!("era.rs"),
            include_str!("giving_up.rs"),
            include_str!("icons.rs"),
            include_str!("listening.rs"),
            include_str!("listing.rs"),
            include_str!("legacy_sse.rs"),
            include_str!("param_headers.rs"),
            include_str!("read.rs"),
            include_str!("schema.rs"),
            include_str!("sent.rs"),
            include_str!("spec_schema.rs"),
            include_str!("shutdown.rs"),
            include_str!("streams.rs"),
            include_str!("tasks.rs"),
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
