//! The library without the `defects` feature takes every hook's default; the driver with
//! no defect switched on takes `hooks.rs`. Both must be the same correct client.

use std::time::Duration;

use serde_json::json;

use crate::era::cache::Lifetime;
use crate::error::{Error, ErrorKind};

use crate::client::seams::ClientSeams;
use crate::era::seams::EraSeams;
use crate::handshake::seams::HandshakeSeams;
use crate::seams::Seams;
use crate::seams::wire::{Telling, Wire};
use crate::tasks::seams::TaskSeams;
use crate::telemetry::seams::TelemetrySeams;

/// Every hook at its default, as the library without the feature has them.
struct Plain;

impl Wire for Plain {
    type Memory = ();

    fn memory(&self, _modern_version: Option<String>) {}
}
impl EraSeams for Plain {}
impl HandshakeSeams for Plain {}
impl ClientSeams for Plain {}
impl TaskSeams for Plain {}
impl TelemetrySeams for Plain {}

#[test]
fn no_defect_on_decides_as_the_defaults_do() {
    let (off, plain) = (Seams::default(), Plain);
    assert_eq!(off.exports(), plain.exports());
    assert_eq!(off.span_request_id(7), plain.span_request_id(7));
    assert_eq!(off.conventional_names(), plain.conventional_names());
    assert_eq!(off.error_attributes(), plain.error_attributes());
    assert_eq!(off.content_rules(), plain.content_rules());
    assert_eq!(off.listing_rules(), plain.listing_rules());
    let (a, b) = (off.schema_policy(), plain.schema_policy());
    assert_eq!(
        (
            a.validate,
            a.default_draft,
            a.bounded,
            a.permissive_unresolved,
            a.network
        ),
        (
            b.validate,
            b.default_draft,
            b.bounded,
            b.permissive_unresolved,
            b.network
        )
    );
    for telling in [
        Telling::Not("x"),
        Telling::ByClosingTheStream,
        Telling::ByNotification,
    ] {
        for method in ["initialize", "tools/call"] {
            assert_eq!(
                off.telling(telling, method, true),
                plain.telling(telling, method, true)
            );
        }
    }
    let implied = json!({"roots": {"listChanged": true}, "elicitation": {"form": {}}});
    assert_eq!(
        off.declared_capabilities(implied.clone(), json!({})),
        plain.declared_capabilities(implied, json!({}))
    );
    for (declared, asked) in [(true, true), (false, false), (true, false)] {
        assert_eq!(
            off.announces_roots_change(declared),
            plain.announces_roots_change(declared)
        );
        assert_eq!(off.fills_defaults(asked), plain.fills_defaults(asked));
        assert_eq!(off.may_subscribe(declared), plain.may_subscribe(declared));
        assert_eq!(
            off.may_send_undeclared(declared),
            plain.may_send_undeclared(declared)
        );
        assert_eq!(
            off.delete_on_close(declared),
            plain.delete_on_close(declared)
        );
        assert_eq!(
            off.renew_lost_session(declared),
            plain.renew_lost_session(declared)
        );
    }
    for status in [None, Some(403), Some(500)] {
        assert_eq!(off.fails_on_status(status), plain.fails_on_status(status));
    }
    assert_eq!(
        [
            off.first_line().is_some(),
            off.kill_on_drop(),
            off.server_group(),
            off.cancels_after_answer(),
            off.metadata_version_header(),
            off.get_stream_delivers(),
            off.reopens_stream(),
            off.stream_drop_loses_session(),
            off.raw_header_values(),
            off.ssrf_filter_resolved(),
            off.answers_at_once(),
            off.answers_any_mode(),
            off.ends_progress_on_response(),
            off.surfaces_unknown_progress(),
            off.reports_requests(),
            off.list_change_ends_cache(),
            off.auth_full_discovery(),
            off.auth_uses_resource_metadata(),
            off.auth_prefers_dcr(),
            off.auth_refreshes(),
            off.relist_on_header_mismatch(),
            off.discard_pages_on_invalid_cursor(),
            off.cache_private(true),
            off.cache_private(false),
            off.keep_invalid_header_tools(),
        ],
        [
            plain.first_line().is_some(),
            plain.kill_on_drop(),
            plain.server_group(),
            plain.cancels_after_answer(),
            plain.metadata_version_header(),
            plain.get_stream_delivers(),
            plain.reopens_stream(),
            plain.stream_drop_loses_session(),
            plain.raw_header_values(),
            plain.ssrf_filter_resolved(),
            plain.answers_at_once(),
            plain.answers_any_mode(),
            plain.ends_progress_on_response(),
            plain.surfaces_unknown_progress(),
            plain.reports_requests(),
            plain.list_change_ends_cache(),
            plain.auth_full_discovery(),
            plain.auth_uses_resource_metadata(),
            plain.auth_prefers_dcr(),
            plain.auth_refreshes(),
            plain.relist_on_header_mismatch(),
            plain.discard_pages_on_invalid_cursor(),
            plain.cache_private(true),
            plain.cache_private(false),
            plain.keep_invalid_header_tools(),
        ]
    );
    // Tasks: augmentation, polling, answering, cancelling and a task's end.
    for declared in [true, false] {
        for support in [None, Some("forbidden"), Some("optional"), Some("required")] {
            for asked in [true, false] {
                assert_eq!(
                    off.augments(declared, support, asked, crate::tasks::augment),
                    plain.augments(declared, support, asked, crate::tasks::augment)
                );
            }
        }
        for method in ["tools/call", "resources/read", "tasks/get"] {
            assert_eq!(
                off.may_create_task(method, declared),
                plain.may_create_task(method, declared)
            );
        }
    }
    let interval = Duration::from_millis(250);
    assert_eq!(off.poll_delay(interval), plain.poll_delay(interval));
    assert_eq!(
        [
            off.waits_for_status(),
            off.result_on_input_required(),
            off.answers_again(),
            off.cancels_by_notification(),
        ],
        [
            plain.waits_for_status(),
            plain.result_on_input_required(),
            plain.answers_again(),
            plain.cancels_by_notification(),
        ]
    );
    let params = json!({"taskId": "t"});
    assert_eq!(
        off.task_params(params.clone(), "t"),
        plain.task_params(params, "t")
    );
    let related = json!({"taskId": "t"});
    assert_eq!(
        off.answer_related(Some(&related)),
        plain.answer_related(Some(&related))
    );
    let failed = || Error::new(ErrorKind::ProtocolError, "failed");
    assert_eq!(off.failed_outcome(failed()), plain.failed_outcome(failed()));
    // Tasks received: served as tasks, created working, results waited for and tagged, and
    // ended or unknown tasks refused.
    assert_eq!(
        [
            off.serves_as_task(true),
            off.serves_as_task(false),
            off.result_waits(),
            off.result_related(true),
            off.refuses_terminal_cancel(),
            off.refuses_unknown_task(),
            off.declares_tasks(),
            off.cancels_received(),
            off.lists_received(),
            off.task_times(),
        ],
        [
            plain.serves_as_task(true),
            plain.serves_as_task(false),
            plain.result_waits(),
            plain.result_related(true),
            plain.refuses_terminal_cancel(),
            plain.refuses_unknown_task(),
            plain.declares_tasks(),
            plain.cancels_received(),
            plain.lists_received(),
            plain.task_times(),
        ]
    );
    assert_eq!(
        off.created_status("working"),
        plain.created_status("working")
    );
    let got = json!({"ttlMs": 60000});
    for method in ["tasks/get", "tools/list"] {
        let correct = crate::era::cache::lifetime(method, &got, false);
        assert_eq!(
            off.cache_lifetime(method, false, &got, correct),
            plain.cache_lifetime(method, false, &got, correct)
        );
    }
    assert_eq!(
        off.cache_lifetime("tasks/get", false, &got, Lifetime::Never),
        Lifetime::Never
    );
    // What is sent: the correct client writes each message as built, with a fresh id.
    let memory = off.memory(Some("2026-07-28".into()));
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "t", "arguments": {"a": 1}, "requestState": "s"}});
    assert_eq!(
        off.messages(&memory, call.clone(), || 9),
        plain.messages(&(), call.clone(), || 9)
    );
    let params = &call["params"];
    assert_eq!(
        off.request_id(&memory, "tools/call", params, || 4),
        plain.request_id(&(), "tools/call", params, || 4)
    );
}
