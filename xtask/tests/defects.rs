//! Every check must be able to fail. Each row runs a deliberately broken client against one
//! case and requires the named check to fail with the named grade. The broken clients are
//! the reference driver with one `--defect`, or a small shell double around it. The same
//! cases pass against the unbroken driver, so each failure is the defect's; and the last
//! test requires every check of every case to appear among the failures.

mod support;

use std::collections::{BTreeSet, HashSet};

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Transport;
use xtask::conformance::verdict::Grade;

/// (client: a `--defect` name, or `sh:` and a command line where `{driver}` is the reference
/// driver; the trial, `case-id` (stdio) or `case-id@https`; a substring of the check that must fail; the grade it must give)
#[rustfmt::skip]
const MATRIX: &[(&str, &str, &str, Grade)] = &[
    ("sh:{driver}; exit 3", "handshake/happy-path", "exited with status 0", Grade::Fail),
    ("sh:echo 'starting up'; {driver}", "handshake/happy-path", "one outcome line per step", Grade::Fail),
    ("sh:{driver} | head -n 1", "tools/pagination-three-pages", "one outcome line per step", Grade::Fail),
    ("skip-initialized", "handshake/happy-path", "notifications/initialized follows", Grade::Fail),
    ("late-initialized", "handshake/initialized-before-other-requests", "the first two messages", Grade::Fail),
    ("late-initialized", "handshake/initialized-before-other-requests", "tools/list comes after", Grade::Fail),
    ("sh:true", "handshake/happy-path", "initialize carries a protocol version", Grade::Fail),
    ("sh:python3 -c \"import json,os;[print(json.dumps({'step':i,'op':s['op'],'error':{'kind':'timeout'}})) for i,s in enumerate(json.loads(os.environ['MCP_HARNESS_PLAN']))]\"", "handshake/happy-path", "step 0 (connect) succeeds", Grade::Fail),
    ("accept-any-version", "handshake/empty-negotiated-version", "step 0 (connect) fails", Grade::Fail),
    ("accept-any-version", "handshake/empty-negotiated-version", "no notifications/initialized", Grade::Fail),
    ("accept-any-version", "handshake/empty-negotiated-version", "no request after", Grade::Fail),
    ("accept-any-version", "handshake/empty-negotiated-version", "step 1 (list_tools) fails", Grade::Fail),
    ("accept-any-version", "handshake/unsupported-version", "step 0 (connect) fails", Grade::NonStrict),
    ("accept-any-version", "handshake/unsupported-version", "no notifications/initialized", Grade::NonStrict),
    ("accept-any-version", "handshake/unsupported-version", "no request after", Grade::NonStrict),
    ("ignore-initialize-error", "handshake/initialize-error", "step 0 (connect) fails", Grade::Fail),
    ("ignore-initialize-error", "handshake/initialize-error", "no notifications/initialized", Grade::Fail),
    ("no-timeout", "handshake/initialize-timeout", "within the trial deadline", Grade::Fail),
    ("cancel-initialize", "handshake/initialize-timeout", "initialize is never cancelled", Grade::Fail),
    ("first-page-only", "tools/pagination-three-pages", "step 1 (list_tools) succeeds", Grade::Fail),
    ("first-page-only", "tools/pagination-three-pages", "then each nextCursor", Grade::Fail),
    ("first-page-only", "tools/pagination-three-pages", "three pages are asked", Grade::Fail),
    ("first-page-only", "tools/pagination-empty-middle-page", "the page after the empty one", Grade::Fail),
    ("first-page-only", "tools/pagination-empty-string-cursor", "the empty cursor is sent back", Grade::Fail),
    ("mangle-cursor", "tools/pagination-cursor-echoed-exactly", "each cursor is echoed exactly", Grade::Fail),
    ("normalize-tools", "tools/input-schema-preserved", "step 1 (list_tools) succeeds", Grade::Fail),
    ("no-cursor-check", "tools/repeated-cursor-at-once", "fails with error kind repeated_cursor", Grade::Fail),
    ("no-cursor-check", "tools/repeated-cursor-after-two-pages", "fails with error kind repeated_cursor", Grade::Fail),
    ("first-page-only", "tools/repeated-cursor-at-once", "the client followed the first cursor", Grade::Fail),
    ("first-page-only", "tools/repeated-cursor-after-two-pages", "the client followed both cursors", Grade::Fail),
    ("allow-duplicate-names", "tools/duplicate-name-same-page", "duplicate_tool_name", Grade::Fail),
    ("allow-duplicate-names", "tools/duplicate-name-across-pages", "duplicate_tool_name", Grade::Fail),
    ("first-page-only", "tools/duplicate-name-across-pages", "the second page was asked", Grade::Fail),
    ("join-text", "calls/text-blocks", "step 1 (call_tool) succeeds", Grade::Fail),
    ("text-only", "calls/structured-content", "step 1 (call_tool) succeeds", Grade::Fail),
    ("ignore-is-error", "calls/is-error-result", "fails with error kind tool_error", Grade::Fail),
    ("close-on-error", "calls/is-error-result", "step 2 (call_tool) succeeds", Grade::Fail),
    ("close-on-error", "calls/is-error-result", "both calls reached the server", Grade::Fail),
    ("rpc-error-as-empty", "calls/jsonrpc-error", "fails with error kind protocol_error", Grade::Fail),
    ("close-on-error", "calls/jsonrpc-error", "both calls reached the server", Grade::Fail),
    ("rpc-error-as-empty", "calls/unknown-tool", "fails with error kind protocol_error", Grade::Fail),
    ("close-on-error", "calls/unknown-tool", "step 2 (call_tool) succeeds", Grade::Fail),
    ("no-timeout", "timeouts/call-timeout", "within the trial deadline", Grade::Fail),
    ("no-cancel-notification", "timeouts/call-timeout", "names the timed-out request", Grade::NonStrict),
    ("close-on-error", "timeouts/call-timeout", "the next call goes out", Grade::Fail),
    ("no-cancel-notification", "timeouts/caller-cancellation", "names the cancelled request", Grade::Fail),
    ("ignore-cancel", "timeouts/caller-cancellation", "fails with error kind cancelled", Grade::Fail),
    ("close-on-error", "timeouts/caller-cancellation", "step 2 (call_tool) succeeds", Grade::Fail),
    ("kill-first", "cleanup/exits-on-eof", "shutdown went", Grade::NonStrict),
    ("no-sigterm", "cleanup/ignores-eof", "not left running", Grade::Fail),
    ("kill-first", "cleanup/ignores-eof", "shutdown went", Grade::NonStrict),
    ("no-sigkill", "cleanup/ignores-sigterm", "not left running", Grade::Fail),
    ("kill-first", "cleanup/ignores-sigterm", "shutdown went", Grade::NonStrict),
    ("leak-on-handshake-failure", "cleanup/after-handshake-error", "not left running", Grade::Fail),
    ("ignore-initialize-error", "cleanup/after-handshake-error", "step 0 (connect) fails", Grade::Fail),
    ("kill-first", "cleanup/after-handshake-error", "shutdown went", Grade::NonStrict),
    ("ignore-is-error", "cleanup/after-tool-error", "fails with error kind tool_error", Grade::Fail),
    ("no-sigterm", "cleanup/after-tool-error", "not left running", Grade::Fail),
    ("kill-first", "cleanup/after-tool-error", "shutdown went", Grade::NonStrict),
    ("ignore-cancel", "cleanup/after-cancellation", "fails with error kind cancelled", Grade::Fail),
    ("no-sigterm", "cleanup/after-cancellation", "not left running", Grade::Fail),
    ("kill-first", "cleanup/after-cancellation", "shutdown went", Grade::NonStrict),
    ("ignore-server-exit", "cleanup/after-server-crash", "fails with error kind transport_closed", Grade::Fail),
    ("reuse-ids", "tools/pagination-three-pages", "never reused", Grade::Fail),
    ("id-on-notifications", "handshake/happy-path", "notifications carry no id", Grade::Fail),
    ("garbage-to-server", "handshake/happy-path", "one JSON-RPC 2.0 message", Grade::Fail),
    // A client that does nothing at all breaks every "was sent" check.
    ("sh:true", "handshake/empty-negotiated-version", "the client sent initialize", Grade::Fail),
    ("sh:true", "handshake/unsupported-version", "the client sent initialize", Grade::Fail),
    ("sh:true", "handshake/initialize-error", "the client sent initialize", Grade::Fail),
    ("sh:true", "handshake/initialize-timeout", "the client sent initialize", Grade::Fail),
    ("sh:true", "handshake/initialized-before-other-requests", "step 1 (list_tools) succeeds", Grade::Fail),
    ("sh:true", "tools/duplicate-name-same-page", "tools/list was asked", Grade::Fail),
    ("sh:true", "tools/input-schema-preserved", "tools/list was asked", Grade::Fail),
    ("sh:true", "calls/structured-content", "tools/call was sent", Grade::Fail),
    ("sh:true", "calls/unknown-tool", "the unknown name was sent as given", Grade::Fail),
    ("drop-arguments", "calls/text-blocks", "carries the name and the arguments exactly", Grade::Fail),
    ("sh:true", "cleanup/exits-on-eof", "the client sent initialize", Grade::Fail),
    ("sh:true", "cleanup/exits-on-eof", "step 1 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/ignores-eof", "the client sent initialize", Grade::Fail),
    ("sh:true", "cleanup/ignores-eof", "step 1 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/ignores-sigterm", "the client sent initialize", Grade::Fail),
    ("sh:true", "cleanup/ignores-sigterm", "step 1 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/after-handshake-error", "the client sent initialize", Grade::Fail),
    ("sh:true", "cleanup/after-tool-error", "the call was sent", Grade::Fail),
    ("sh:true", "cleanup/after-tool-error", "step 2 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/after-cancellation", "the call was sent", Grade::Fail),
    ("sh:true", "cleanup/after-cancellation", "step 2 (close) succeeds", Grade::Fail),
    ("sh:true", "cleanup/after-server-crash", "the call was sent", Grade::Fail),
    // Streamable HTTP: the always-on rules, then each HTTP case.
    ("accept-json-only", "calls/text-blocks@https", "accepts both application/json and text/event-stream", Grade::Fail),
    ("text-plain-body", "calls/text-blocks@https", "body is sent as application/json", Grade::Fail),
    ("sh:echo \"token: $MCP_HARNESS_BEARER_TOKEN\" >&2; {driver}", "http/bearer-token-sent@https", "never printed its bearer token", Grade::Fail),
    ("no-bearer", "http/bearer-token-sent@https", "every request carries the right bearer token", Grade::Fail),
    ("json-only", "http/sse-replies@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("json-only", "http/sse-replies@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "http/sse-replies@https", "step 0 (connect) succeeds", Grade::Fail),
    ("sh:true", "http/sse-replies@https", "the call reached the server", Grade::Fail),
    ("ignore-server-requests", "http/sse-interleaved-events@https", "ping is answered", Grade::Fail),
    ("json-only", "http/sse-interleaved-events@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "http/sse-interleaved-events@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("no-session-id", "http/session-id-echoed@https", "only the initialize POST goes without a session id", Grade::Fail),
    ("no-session-id", "http/session-id-echoed@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("no-session-id", "http/session-id-echoed@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "http/session-id-echoed@https", "the first POST is initialize", Grade::Fail),
    ("no-protocol-version-header", "http/protocol-version-header@https", "MCP-Protocol-Version: 2025-03-26", Grade::Fail),
    ("sh:true", "http/protocol-version-header@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("sh:true", "http/protocol-version-header@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("offered-version-header", "http/protocol-version-negotiated-down@https", "MCP-Protocol-Version: 2025-06-18", Grade::Fail),
    ("sh:true", "http/protocol-version-negotiated-down@https", "initialize offers 2025-11-25", Grade::Fail),
    ("sh:true", "http/protocol-version-negotiated-down@https", "step 0 (connect) succeeds", Grade::Fail),
    ("sh:true", "http/protocol-version-negotiated-down@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("sh:true", "http/protocol-version-negotiated-down@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("no-delete", "http/delete-on-close@https", "DELETE carries the session id", Grade::NonStrict),
    ("sh:true", "http/delete-on-close@https", "the handshake reached the server", Grade::Fail),
    ("sh:true", "http/delete-on-close@https", "step 1 (close) succeeds", Grade::Fail),
    ("sh:true", "http/delete-not-allowed@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("sh:true", "http/delete-not-allowed@https", "step 2 (close) succeeds", Grade::Fail),
    ("sh:true", "http/delete-not-allowed@https", "tools/list reached the server", Grade::Fail),
    ("no-reinitialize", "http/session-expired@https", "a second initialize follows the 404", Grade::Fail),
    ("no-reinitialize", "http/session-expired@https", "a new initialize is sent after the first", Grade::Fail),
    ("no-reinitialize", "http/session-expired@https", "step 3 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "http/session-expired@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("allow-insecure-http", "http/insecure-remote-refused@https", "step 0 (connect) fails with error kind insecure_url", Grade::Fail),
    ("sh:MCP_HARNESS_SERVER_URL=$(echo \"$MCP_HARNESS_SERVER_URL\" | sed s/mcp-harness.invalid/127.0.0.1/) {driver}", "http/insecure-remote-refused@https", "no request reached any server", Grade::Fail),
    ("sh:true", "http/insecure-remote-refused@https", "step 1 (list_tools) fails with error kind transport_closed", Grade::Fail),
    ("sh:true", "http/plain-loopback-accepted@https", "the call reached the server", Grade::Fail),
    ("sh:true", "http/plain-loopback-accepted@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("sh:true", "http/plain-loopback-accepted@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:python3 -c \"$ACCEPT_ANY_CERT\"", "http/untrusted-certificate-refused@https", "step 0 (connect) fails with error kind tls", Grade::Fail),
    ("sh:python3 -c \"$ACCEPT_ANY_CERT\"", "http/untrusted-certificate-refused@https", "no request got through", Grade::Fail),
    ("sh:true", "http/untrusted-certificate-refused@https", "step 1 (list_tools) fails", Grade::Fail),
    ("sh:python3 -c \"$ACCEPT_ANY_CERT\"", "http/wrong-name-certificate-refused@https", "step 0 (connect) fails with error kind tls", Grade::Fail),
    ("sh:python3 -c \"$ACCEPT_ANY_CERT\"", "http/wrong-name-certificate-refused@https", "no request got through", Grade::Fail),
    ("sh:true", "http/wrong-name-certificate-refused@https", "step 1 (list_tools) fails", Grade::Fail),
    ("sh:true", "http/bearer-token-sent@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("sh:true", "http/bearer-token-sent@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "http/http-error-status@https", "step 1 (call_tool) fails with error kind http_status", Grade::Fail),
    ("sh:true", "http/http-error-status@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "http/http-error-status@https", "both calls reached the server", Grade::Fail),
    ("lenient-content-type", "http/wrong-content-type@https", "step 1 (call_tool) fails with error kind invalid_response", Grade::Fail),
    ("sh:true", "http/wrong-content-type@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "http/wrong-content-type@https", "both calls reached the server", Grade::Fail),
    ("sh:true", "official/initialize@https", "initialize carries a protocol version", Grade::Fail),
    ("sh:python3 -c \"import json,os;[print(json.dumps({'step':i,'op':s['op'],'error':{'kind':'timeout'}})) for i,s in enumerate(json.loads(os.environ['MCP_HARNESS_PLAN']))]\"", "official/initialize@https", "step 0 (connect) succeeds", Grade::Fail),
    ("skip-initialized", "official/initialize@https", "notifications/initialized follows", Grade::Fail),
    ("drop-arguments", "official/tools-call@https", "call add_numbers with a=5 and b=3", Grade::Fail),
    ("sh:python3 -c \"import json,os;[print(json.dumps({'step':i,'op':s['op'],'error':{'kind':'timeout'}})) for i,s in enumerate(json.loads(os.environ['MCP_HARNESS_PLAN']))]\"", "official/tools-call@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("sh:python3 -c \"import json,os;[print(json.dumps({'step':i,'op':s['op'],'error':{'kind':'timeout'}})) for i,s in enumerate(json.loads(os.environ['MCP_HARNESS_PLAN']))]\"", "official/tools-call@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("json-only", "http/sse-cut-mid-stream@https", "step 1 (call_tool) fails with error kind transport_closed", Grade::Fail),
    ("sh:true", "http/sse-cut-mid-stream@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "http/sse-cut-mid-stream@https", "both calls reached the server", Grade::Fail),
    // Hostile servers (robust/): a client that does nothing fails every check of a case; then
    // the defects that break one behaviour each.
    ("sh:true", "robust/exit-mid-response", "step 1 (call_tool) fails with error kind transport_closed", Grade::Fail),
    ("sh:true", "robust/exit-after-answer", "step 1 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "robust/stdout-closed-server-alive", "step 1 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "robust/partial-line-then-silence", "step 1 (call_tool) fails with error kind timeout", Grade::Fail),
    ("sh:true", "robust/malformed-json-line-skipped", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/not-jsonrpc-line-skipped", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/invalid-utf8-line-skipped", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/malformed-json-instead-of-response", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/not-jsonrpc-instead-of-response", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/invalid-utf8-response", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/unknown-id-response-ignored", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/duplicate-response-ignored", "step 1 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "robust/response-to-notification-ignored", "step 0 (connect) succeeds", Grade::Fail),
    ("sh:true", "robust/very-large-response", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/stderr-flood-while-answering", "step 1 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "robust/notification-storm-during-call", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/response-dripped-byte-by-byte", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/connection-dropped-mid-response@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/sse-cut-mid-event@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/http-502-bad-gateway@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/http-503-service-unavailable@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/redirect-301-to-plain-http@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/redirect-301-to-other-host@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/redirect-302-to-plain-http@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/redirect-302-to-other-host@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/redirect-307-to-plain-http@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/redirect-307-to-other-host@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/redirect-308-to-plain-http@https", "step 1 (call_tool)", Grade::Fail),
    ("sh:true", "robust/redirect-308-to-other-host@https", "step 1 (call_tool)", Grade::Fail),
    ("ignore-server-exit", "robust/exit-mid-response", "step 1 (call_tool) fails with error kind transport_closed", Grade::Fail),
    ("ignore-server-exit", "robust/exit-after-answer", "step 2 (call_tool) fails with error kind transport_closed", Grade::Fail),
    ("ignore-server-exit", "robust/stdout-closed-server-alive", "step 2 (call_tool) fails with error kind transport_closed", Grade::Fail),
    ("kill-first", "robust/stdout-closed-server-alive", "the client closed the server's stdin and the server exited", Grade::Fail),
    ("no-timeout", "robust/partial-line-then-silence", "step 1 (call_tool) fails with error kind timeout", Grade::Fail),
    ("no-timeout", "robust/partial-line-then-silence@https", "step 1 (call_tool) fails with error kind timeout", Grade::Fail),
    ("no-cancel-notification", "robust/partial-line-then-silence", "names the timed-out request", Grade::NonStrict),
    ("close-on-error", "robust/malformed-json-instead-of-response", "step 2 (call_tool) succeeds", Grade::Fail),
    ("close-on-error", "robust/malformed-json-instead-of-response@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("no-timeout", "robust/malformed-json-instead-of-response", "step 1 (call_tool) fails with error kind invalid_response or timeout", Grade::Fail),
    ("close-on-error", "robust/not-jsonrpc-instead-of-response", "step 2 (call_tool) succeeds", Grade::Fail),
    ("close-on-error", "robust/not-jsonrpc-instead-of-response@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("no-timeout", "robust/not-jsonrpc-instead-of-response", "step 1 (call_tool) fails with error kind invalid_response or timeout", Grade::Fail),
    ("close-on-error", "robust/invalid-utf8-response", "step 2 (call_tool) succeeds", Grade::Fail),
    ("close-on-error", "robust/invalid-utf8-response@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("reuse-ids", "robust/duplicate-response-ignored", "step 2 (call_tool) succeeds with", Grade::Fail),
    ("skip-initialized", "robust/response-to-notification-ignored", "the handshake completed and both calls followed", Grade::Fail),
    ("sh:python3 -c \"$NO_STDERR_DRAIN\"", "robust/stderr-flood-while-answering", "step 1 (call_tool) succeeds", Grade::NonStrict),
    ("kill-first", "robust/stderr-flood-while-answering", "the client closed the server's stdin", Grade::NonStrict),
    ("close-on-error", "robust/connection-dropped-mid-response@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "robust/response-dripped-past-timeout@https", "step 1 (call_tool)", Grade::Fail),
    ("no-timeout", "robust/response-dripped-past-timeout@https", "step 1 (call_tool) fails with error kind timeout", Grade::Fail),
    ("close-on-error", "robust/response-dripped-past-timeout@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("json-only", "robust/sse-cut-mid-event@https", "step 1 (call_tool) fails with error kind transport_closed", Grade::Fail),
    ("close-on-error", "robust/sse-cut-mid-event@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("close-on-error", "robust/http-502-bad-gateway@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("close-on-error", "robust/http-503-service-unavailable@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("follow-redirects", "robust/redirect-301-to-plain-http@https", "step 1 (call_tool) fails with error kind insecure_url or http_status", Grade::Fail),
    ("close-on-error", "robust/redirect-301-to-plain-http@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("follow-redirects", "robust/redirect-301-to-other-host@https", "step 1 (call_tool) fails with error kind insecure_url or http_status", Grade::Fail),
    ("close-on-error", "robust/redirect-301-to-other-host@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("follow-redirects", "robust/redirect-302-to-plain-http@https", "step 1 (call_tool) fails with error kind insecure_url or http_status", Grade::Fail),
    ("close-on-error", "robust/redirect-302-to-plain-http@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("follow-redirects", "robust/redirect-302-to-other-host@https", "step 1 (call_tool) fails with error kind insecure_url or http_status", Grade::Fail),
    ("close-on-error", "robust/redirect-302-to-other-host@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("follow-redirects", "robust/redirect-307-to-plain-http@https", "step 1 (call_tool) fails with error kind insecure_url or http_status", Grade::Fail),
    ("close-on-error", "robust/redirect-307-to-plain-http@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("follow-redirects", "robust/redirect-307-to-other-host@https", "step 1 (call_tool) fails with error kind insecure_url or http_status", Grade::Fail),
    ("close-on-error", "robust/redirect-307-to-other-host@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("follow-redirects", "robust/redirect-308-to-plain-http@https", "step 1 (call_tool) fails with error kind insecure_url or http_status", Grade::Fail),
    ("close-on-error", "robust/redirect-308-to-plain-http@https", "step 2 (call_tool) succeeds", Grade::Fail),
    ("follow-redirects", "robust/redirect-308-to-other-host@https", "step 1 (call_tool) fails with error kind insecure_url or http_status", Grade::Fail),
    ("close-on-error", "robust/redirect-308-to-other-host@https", "step 2 (call_tool) succeeds", Grade::Fail),

    // Protocol eras (issue 7). Legacy revisions: the case runs once per revision.
    ("sh:true", "era/legacy/handshake-per-revision@stdio@2025-06-18", "initialize offers the trial's revision", Grade::Fail),
    ("sh:MCP_HARNESS_PROTOCOL_VERSION=2025-11-25 {driver}", "era/legacy/handshake-per-revision@stdio@2025-03-26", "initialize offers the trial's revision", Grade::Fail),
    ("sh:MCP_HARNESS_PROTOCOL_VERSION=2025-11-25 {driver}", "era/legacy/handshake-per-revision@https@2025-06-18", "initialize offers the trial's revision", Grade::Fail),
    ("skip-initialized", "era/legacy/handshake-per-revision@https@2025-11-25", "notifications/initialized comes before tools/list", Grade::Fail),
    ("sh:MCP_HARNESS_ERA=dual {driver}", "era/legacy/handshake-per-revision@stdio@2025-11-25", "no request carries modern _meta", Grade::Fail),
    ("no-protocol-version-header", "era/legacy/protocol-version-header-per-revision@https@2025-06-18", "MCP-Protocol-Version: <revision>", Grade::Fail),
    ("sh:true", "era/legacy/protocol-version-header-per-revision@https@2025-03-26", "the call reached the server", Grade::Fail),
    // Modern era.
    ("no-meta", "era/modern/discover-and-call", "every request carries _meta", Grade::Fail),
    ("no-meta", "era/modern/discover-and-call@https", "step 0 (connect) succeeds", Grade::Fail),
    ("drop-arguments", "era/modern/discover-and-call", "the call reached the server with its name and arguments", Grade::Fail),
    ("initialize-after-discover", "era/modern/discover-and-call", "no initialize and no notifications/initialized", Grade::Fail),
    ("initialize-after-discover", "era/modern/discover-and-call@https", "no notifications/initialized is sent", Grade::Fail),
    ("sh:true", "era/modern/discover-and-call", "step 1 (list_tools) succeeds", Grade::Fail),
    ("no-client-info", "era/modern/client-info", "clientInfo {name, version}", Grade::NonStrict),
    ("no-client-info", "era/modern/client-info@https", "clientInfo {name, version}", Grade::NonStrict),
    ("sh:true", "era/modern/client-info", "step 1 (call_tool) succeeds", Grade::Fail),
    ("no-discover-probe", "era/modern/discover-first", "step 0 (connect) succeeds", Grade::NonStrict),
    ("no-discover-probe", "era/modern/discover-first@https", "the discover op sends server/discover again", Grade::NonStrict),
    ("sh:true", "era/modern/discover-first", "step 1 (discover) succeeds", Grade::Fail),
    ("no-version-retry", "era/modern/unsupported-version-retry", "server/discover is sent again with the listed version and a new id", Grade::NonStrict),
    ("no-version-retry", "era/modern/unsupported-version-retry@https", "later requests use the agreed version", Grade::NonStrict),
    ("sh:MCP_HARNESS_ERA=dual {driver} --defect fallback-on-any-error", "era/modern/unsupported-version-retry", "no fallback to initialize after a modern error", Grade::Fail),
    ("sh:true", "era/modern/unsupported-version-retry", "step 0 (connect) succeeds", Grade::Fail),
    ("retry-any-version", "era/modern/no-common-version", "fails with error kind unsupported_version", Grade::Fail),
    ("retry-any-version", "era/modern/no-common-version@https", "no second server/discover", Grade::Fail),
    ("retry-any-version", "era/modern/no-common-version", "step 1 (list_tools) fails with error kind transport_closed", Grade::Fail),
    ("fallback-on-any-error", "era/modern/no-common-version", "no initialize after -32022", Grade::Fail),
    ("no-meta", "era/modern/no-common-version", "server/discover was sent once, with the offered version", Grade::Fail),
    ("sh:true", "era/modern/no-common-version", "step 0 (connect) fails with error kind unsupported_version", Grade::Fail),
    ("fallback-on-any-error", "era/modern/no-common-version@https", "no initialize after -32022", Grade::Fail),
    ("sh:MCP_HARNESS_ERA=dual {driver}", "era/modern/legacy-server-refused", "no initialize from a modern-only client", Grade::Fail),
    ("no-discover-probe", "era/modern/legacy-server-refused", "nothing but the probe reached the legacy server", Grade::Fail),
    ("sh:true", "era/modern/legacy-server-refused", "server/discover was sent", Grade::Fail),
    ("ignore-result-type", "era/modern/unknown-result-type", "step 1 (call_tool) fails with error kind invalid_response", Grade::Fail),
    ("ignore-result-type", "era/modern/unknown-result-type@https", "step 1 (call_tool) fails with error kind invalid_response", Grade::Fail),
    ("sh:true", "era/modern/unknown-result-type", "both calls reached the server", Grade::Fail),
    ("sh:true", "era/modern/absent-result-type", "step 1 (call_tool) succeeds", Grade::Fail),
    ("no-mcp-method-header", "era/modern/http-headers@https", "carry Mcp-Method", Grade::Fail),
    ("no-mcp-method-header", "era/modern/http-headers@https", "step 1 (list_tools) succeeds", Grade::Fail),
    ("no-mcp-name-header", "era/modern/http-headers@https", "carries Mcp-Name: echo", Grade::Fail),
    ("no-protocol-version-header", "era/modern/http-headers@https", "MCP-Protocol-Version: 2026-07-28 and no session id", Grade::Fail),
    ("get-stream-in-modern", "era/modern/http-headers@https", "no GET stream and no DELETE", Grade::Fail),
    ("cancel-with-notification-over-http", "era/modern/cancel-closes-stream@https", "no notifications/cancelled is posted", Grade::Fail),
    ("ignore-cancel", "era/modern/cancel-closes-stream@https", "fails with error kind cancelled", Grade::Fail),
    ("sh:true", "era/modern/cancel-closes-stream@https", "the slow call and the next call", Grade::Fail),
    ("keep-stream-on-cancel", "era/modern/cancel-closes-stream@https", "closed the cancelled call's response stream", Grade::Fail),
    ("no-cancel-notification", "era/modern/cancel-over-stdio", "notifications/cancelled names the cancelled call", Grade::Fail),
    ("ignore-cancel", "era/modern/cancel-over-stdio", "fails with error kind cancelled", Grade::Fail),
    ("sh:true", "era/modern/cancel-over-stdio", "step 2 (call_tool) succeeds", Grade::Fail),
    // Dual era: a modern server, then legacy servers of every kind.
    ("no-discover-probe", "era/dual/modern-server", "the first request is server/discover", Grade::Fail),
    ("no-discover-probe", "era/dual/modern-server@https", "no initialize to a modern server", Grade::Fail),
    ("initialize-after-discover", "era/dual/modern-server", "no initialize to a modern server", Grade::Fail),
    ("sh:true", "era/dual/modern-server", "step 1 (call_tool) succeeds", Grade::Fail),
    ("no-fallback", "era/dual/legacy-method-not-found@stdio@2025-03-26", "then initialize offering the legacy revision", Grade::Fail),
    ("no-fallback", "era/dual/legacy-method-not-found@stdio@2025-11-25", "step 0 (connect) succeeds", Grade::Fail),
    ("meta-after-fallback", "era/dual/legacy-method-not-found@stdio@2025-06-18", "no modern _meta", Grade::NonStrict),
    ("sh:MCP_HARNESS_LEGACY_PROTOCOL_VERSION=2025-03-26 {driver}", "era/dual/legacy-method-not-found@stdio@2025-11-25", "then initialize offering the legacy revision", Grade::Fail),
    ("sh:true", "era/dual/legacy-method-not-found@stdio@2025-06-18", "step 2 (call_tool) succeeds", Grade::Fail),
    ("fallback-on-one-code", "era/dual/legacy-invalid-params@stdio@2025-11-25", "then initialize offering the legacy revision", Grade::Fail),
    ("meta-after-fallback", "era/dual/legacy-invalid-params@stdio@2025-11-25", "no modern _meta", Grade::NonStrict),
    ("sh:true", "era/dual/legacy-invalid-params@stdio@2025-11-25", "step 1 (list_tools) succeeds", Grade::Fail),
    ("fallback-on-one-code", "era/dual/legacy-silent@stdio@2025-06-18", "step 0 (connect) succeeds", Grade::Fail),
    ("meta-after-fallback", "era/dual/legacy-silent@stdio@2025-06-18", "no modern _meta", Grade::NonStrict),
    ("sh:true", "era/dual/legacy-silent@stdio@2025-06-18", "then initialize offering the legacy revision", Grade::Fail),
    ("fallback-on-one-code", "era/dual/legacy-invalid-request@stdio@2025-03-26", "then initialize offering the legacy revision", Grade::Fail),
    ("meta-after-fallback", "era/dual/legacy-invalid-request@stdio@2025-03-26", "no modern _meta", Grade::NonStrict),
    ("sh:true", "era/dual/legacy-invalid-request@stdio@2025-03-26", "step 2 (call_tool) succeeds", Grade::Fail),
    ("no-fallback", "era/dual/legacy-http-session-required@https@2025-06-18", "the discover POST got 400, the initialize POST 200", Grade::Fail),
    ("fallback-on-one-code", "era/dual/legacy-http-session-required@https@2025-11-25", "then initialize offering the legacy revision", Grade::Fail),
    ("meta-after-fallback", "era/dual/legacy-http-session-required@https@2025-03-26", "no modern _meta", Grade::NonStrict),
    ("sh:true", "era/dual/legacy-http-session-required@https@2025-03-26", "step 1 (list_tools) succeeds", Grade::Fail),
    ("no-fallback", "era/dual/legacy-http-method-not-found@https@2025-03-26", "step 0 (connect) succeeds", Grade::Fail),
    ("fallback-on-one-code", "era/dual/legacy-http-method-not-found@https@2025-06-18", "then initialize offering the legacy revision", Grade::Fail),
    ("meta-after-fallback", "era/dual/legacy-http-method-not-found@https@2025-11-25", "no modern _meta", Grade::NonStrict),
    ("sh:true", "era/dual/legacy-http-method-not-found@https@2025-03-26", "step 2 (call_tool) succeeds", Grade::Fail),
    ("fallback-on-one-code", "era/dual/legacy-http-not-found@https@2025-03-26", "then initialize offering the legacy revision", Grade::Fail),
    ("meta-after-fallback", "era/dual/legacy-http-not-found@https@2025-03-26", "no modern _meta", Grade::NonStrict),
    ("sh:true", "era/dual/legacy-http-not-found@https@2025-03-26", "step 1 (list_tools) succeeds", Grade::Fail),
    ("fallback-on-any-error", "era/dual/missing-capability-error", "no initialize after a modern error", Grade::Fail),
    ("fallback-on-any-error", "era/dual/missing-capability-error@https", "step 0 (connect) fails with error kind protocol_error", Grade::Fail),
    ("sh:true", "era/dual/missing-capability-error", "server/discover was sent", Grade::Fail),
    ("no-era-cache", "era/dual/era-cached-per-origin@https", "server/discover was sent once for the two connects", Grade::NonStrict),
    ("sh:true", "era/dual/era-cached-per-origin@https", "the call after the second connect", Grade::Fail),
    ("no-discover-probe", "era/dual/stdio-probes-each-process", "each process got server/discover and then initialize", Grade::NonStrict),
    ("sh:true", "era/dual/stdio-probes-each-process", "step 0 (connect) succeeds", Grade::Fail),
    // Multi round-trip requests.
    ("reuse-id-on-retry", "era/mrtr/elicitation-accepted", "each retry uses a new id", Grade::Fail),
    ("reuse-id-on-retry", "era/mrtr/elicitation-accepted@https", "each retry uses a new id", Grade::Fail),
    ("alter-request-state", "era/mrtr/elicitation-accepted", "requestState is echoed exactly", Grade::Fail),
    ("alter-request-state", "era/mrtr/elicitation-accepted@https", "step 1 (call_tool) succeeds", Grade::Fail),
    ("bare-retry", "era/mrtr/elicitation-accepted", "the retry repeats the arguments", Grade::Fail),
    ("no-input-responses", "era/mrtr/elicitation-accepted", "answers the elicitation under its key", Grade::Fail),
    ("state-on-fresh-request", "era/mrtr/elicitation-accepted", "a fresh call carries no requestState", Grade::Fail),
    ("sh:true", "era/mrtr/elicitation-accepted", "step 2 (call_tool) succeeds", Grade::Fail),
    ("alter-request-state", "era/mrtr/several-rounds", "three rounds", Grade::Fail),
    ("reuse-id-on-retry", "era/mrtr/several-rounds@https", "three rounds", Grade::Fail),
    ("no-input-responses", "era/mrtr/several-rounds", "step 1 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "era/mrtr/several-rounds", "does not echo the first round's state", Grade::Fail),
    ("omit-declined", "era/mrtr/elicitation-declined", "the retry declines under the request's key", Grade::Fail),
    ("omit-declined", "era/mrtr/elicitation-declined@https", "step 1 (call_tool) succeeds", Grade::Fail),
    ("sh:true", "era/mrtr/elicitation-declined", "step 0 (connect) succeeds", Grade::Fail),
    ("no-input-responses", "era/mrtr/no-request-state", "the retry answers roots/list and has no requestState", Grade::Fail),
    ("sh:true", "era/mrtr/no-request-state", "step 1 (call_tool) succeeds", Grade::Fail),
    ("ignore-result-type", "era/mrtr/input-unsupported", "fails with error kind input_unsupported", Grade::NonStrict),
    ("sh:true", "era/mrtr/input-unsupported", "tools/call summarize was sent once", Grade::Fail),
    ("ignore-result-type", "era/mrtr/input-required-on-list", "step 1 (list_tools) fails with error kind invalid_response", Grade::Fail),
    ("sh:true", "era/mrtr/input-required-on-list", "tools/list and then the call reached the server", Grade::Fail),
    // Caching hints.
    ("no-cache", "era/cache/fresh-hit", "tools/list was asked once", Grade::NonStrict),
    ("no-cache", "era/cache/fresh-hit@https", "tools/list was asked once", Grade::NonStrict),
    ("sh:true", "era/cache/fresh-hit", "step 2 (list_tools) succeeds", Grade::Fail),
    ("ignore-ttl", "era/cache/expiry", "tools/list was asked twice", Grade::Fail),
    ("sh:true", "era/cache/expiry", "step 2 (sleep) succeeds", Grade::Fail),
    ("ignore-ttl", "era/cache/ttl-zero", "tools/list was asked three times", Grade::Fail),
    ("sh:true", "era/cache/ttl-zero", "step 3 (list_tools) succeeds", Grade::Fail),
    ("ignore-ttl", "era/cache/ttl-absent-or-negative", "the first page was asked twice", Grade::Fail),
    ("ignore-ttl", "era/cache/ttl-absent-or-negative@https", "the second page was asked twice", Grade::Fail),
    ("sh:true", "era/cache/ttl-absent-or-negative", "step 1 (list_tools) succeeds", Grade::Fail),
    ("cache-mrtr-retry", "era/cache/mrtr-retry-not-cached", "both calls started a fresh flow", Grade::Fail),
    ("cache-mrtr-retry", "era/cache/mrtr-retry-not-cached@https", "both flows were completed by a retry", Grade::Fail),
    ("sh:true", "era/cache/mrtr-retry-not-cached", "step 1 (call_tool) succeeds", Grade::Fail),
];

/// A client that never reads its server's stderr: it launches the server with stderr piped
/// and left full, performs the plan by hand over stdio, and reports a call as a timeout when
/// no answer comes in time.
const NO_STDERR_DRAIN: &str = r#"
import json, os, select, subprocess
argv = json.loads(os.environ["MCP_HARNESS_SERVER_COMMAND"])
wait = int(os.environ["MCP_HARNESS_TIMEOUT_MS"]) / 1000
server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
ids = [0]
def send(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
def ask(method, params):
    ids[0] += 1
    send({"jsonrpc": "2.0", "id": ids[0], "method": method, "params": params})
    while select.select([server.stdout], [], [], wait)[0]:
        line = server.stdout.readline()
        if not line:
            return None
        message = json.loads(line)
        if message.get("id") == ids[0]:
            return message
    return None
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    out = {"step": i, "op": step["op"]}
    if step["op"] == "connect":
        answer = ask("initialize", {"protocolVersion": os.environ["MCP_HARNESS_PROTOCOL_VERSION"], "capabilities": {}, "clientInfo": {"name": "no-stderr-drain", "version": "0"}})
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        out["ok"] = {"protocolVersion": answer["result"]["protocolVersion"]}
    elif step["op"] == "call_tool":
        answer = ask("tools/call", {"name": step["name"], "arguments": step.get("arguments", {})})
        if answer is None:
            out["error"] = {"kind": "timeout", "message": "no answer"}
        else:
            out["ok"] = {"text": [b["text"] for b in answer["result"]["content"] if b["type"] == "text"]}
    elif step["op"] == "close":
        server.stdin.close()
        server.kill()
        server.wait()
        out["ok"] = {}
    print(json.dumps(out), flush=True)
"#;

/// A broken TLS client: it accepts any certificate and name, then performs the handshake by
/// hand and reports success. No part of the harness or the reference client may do this.
const ACCEPT_ANY_CERT: &str = r#"
import json, os, ssl, http.client, urllib.parse
url = urllib.parse.urlparse(os.environ["MCP_HARNESS_SERVER_URL"])
conn = http.client.HTTPSConnection(url.hostname, url.port, context=ssl._create_unverified_context())
body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "careless", "version": "0"}}}
conn.request("POST", url.path, json.dumps(body), {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
result = json.loads(conn.getresponse().read())["result"]
for i, step in enumerate(json.loads(os.environ["MCP_HARNESS_PLAN"])):
    print(json.dumps({"step": i, "op": step["op"], "ok": {"protocolVersion": result["protocolVersion"]}}))
"#;

fn client_for(spec: &str) -> String {
    match spec.strip_prefix("sh:") {
        Some(script) => script
            .replace("{driver}", &support::driver_cmd(""))
            .replace("$ACCEPT_ANY_CERT", &quoted(ACCEPT_ANY_CERT))
            .replace("$NO_STDERR_DRAIN", &quoted(NO_STDERR_DRAIN)),
        None => support::driver_cmd(&format!("--defect {spec}")),
    }
}

/// A script made safe to sit inside double quotes in `sh -c`.
fn quoted(script: &str) -> String {
    script
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('$', "\\$")
}

/// `case-id` runs over stdio, `case-id@https` over HTTPS.
/// `case-id` runs over stdio, `case-id@https` over HTTPS; a case with revisions needs its
/// revision too: `case-id@stdio@2025-06-18`.
fn trial(spec: &str) -> (Case, Transport) {
    let mut parts = spec.split('@');
    let case = support::case(parts.next().unwrap_or_default());
    let transport = match parts.next() {
        Some("https") => Transport::Https,
        _ => Transport::Stdio,
    };
    let revision = parts.next().map(str::to_owned);
    assert_eq!(
        revision.is_some(),
        !case.scenario.revisions.is_empty(),
        "{spec}: name the revision exactly for a case with revisions"
    );
    let case = mcp_harness_scenarios::trials(&[case])
        .into_iter()
        .map(|(c, _)| c)
        .find(|c| c.revision == revision)
        .unwrap_or_else(|| panic!("{spec}: no such revision"));
    (case, transport)
}

/// Runs the matrix, requires each row's failure, and requires every check the reference
/// run makes (per case for the case's own checks, anywhere for the always-on ones) to be
/// among the checks some row made fail.
#[test]
fn every_check_is_seen_to_fail_against_a_broken_client() {
    let results = support::in_parallel(MATRIX.to_vec(), |(client, spec, check, grade)| {
        let (case, transport) = trial(spec);
        let eval = support::evaluate_on(&case, transport, &client_for(client));
        let failed: Vec<(bool, String)> = eval
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| (c.always_on, c.name.clone()))
            .collect();
        let hit = failed.iter().any(|(_, name)| name.contains(check));
        let problem = (!hit || eval.grade != grade).then(|| {
            format!(
                "{client} on {spec}: wanted check ~{check:?} failed and grade {}, got grade {} with failed checks {:?}",
                grade.as_str(),
                eval.grade.as_str(),
                failed.iter().map(|f| &f.1).collect::<Vec<_>>()
            )
        });
        (case.id, failed, problem)
    });
    let problems: Vec<String> = results.iter().filter_map(|r| r.2.clone()).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    let scope = |always_on: bool, id: &str| {
        if always_on {
            "(every case)".to_owned()
        } else {
            id.to_owned()
        }
    };
    let seen_failing: HashSet<(String, String)> = results
        .iter()
        .flat_map(|(id, failed, _)| {
            failed
                .iter()
                .map(move |(always, name)| (scope(*always, id), name.clone()))
        })
        .collect();
    let references = support::in_parallel(support::trials(), |(case, transport)| {
        let eval = support::evaluate_on(&case, transport, &support::driver_cmd(""));
        (case.id, eval.checks)
    });
    let never_failed: BTreeSet<String> = references
        .iter()
        .flat_map(|(id, checks)| {
            checks
                .iter()
                .map(move |c| (scope(c.always_on, id), c.name.clone()))
        })
        .filter(|key| !seen_failing.contains(key))
        .map(|(scope, name)| format!("{scope} :: {name}"))
        .collect();
    assert!(
        never_failed.is_empty(),
        "checks no broken client has been seen to fail (add a row with a defect that breaks each):\n{}",
        never_failed.into_iter().collect::<Vec<_>>().join("\n")
    );
}
