//! Seam: tasks. When a call is task-augmented, how a task is polled, answered and cancelled,
//! and what its end is taken for.
//!
//! Defects here: `task-ignore-capability`, `task-ignore-required`, `task-busy-poll`,
//! `task-cancel-notification`, `task-wait-for-status`, `task-no-related-meta`,
//! `task-meta-on-polls`, `task-augments-polls`, `task-poll-through-input`, `task-answer-twice`, `task-any-request`,
//! `task-failed-as-ok`. (`task-no-mcp-name` is in `sent.rs`, `task-cache-get` in `cache.rs`.)
//! As a task receiver: `receiver-plain-answer`, `receiver-not-working`,
//! `receiver-result-early`, `receiver-result-no-meta`, `receiver-cancel-terminal-ok`,
//! `receiver-unknown-task-ok`, `receiver-undeclared`, `receiver-cancel-ignored`,
//! `receiver-list-empty`, `receiver-task-bare`, `receiver-any-method`.

use std::time::Duration;

use serde_json::{Value, json};

use super::Defects;
use crate::error::Error;

/// How often `task-busy-poll` polls, whatever the server suggested.
const BUSY_POLL: Duration = Duration::from_millis(5);

impl Defects {
    /// Legacy eras: whether a `tools/call` is task-augmented; correct: `decide`'s.
    pub(crate) fn augments(
        &self,
        declared: bool,
        support: Option<&str>,
        asked: bool,
        decide: impl FnOnce(bool, Option<&str>, bool) -> bool,
    ) -> bool {
        if self.task_ignore_capability && asked {
            return true;
        }
        // Only what the caller asked for: a `required` tool is called plainly.
        let asked_only = self.task_ignore_required && !asked;
        !asked_only && decide(declared, support, asked)
    }

    /// Modern era: whether a `CreateTaskResult` answers `method` validly; correct: `valid`.
    pub(crate) fn may_create_task(&self, _method: &str, valid: bool) -> bool {
        valid || self.task_any_request
    }

    /// The wait before the next poll; correct: `interval`.
    pub(crate) fn poll_delay(&self, interval: Duration) -> Duration {
        match self.task_busy_poll {
            true => BUSY_POLL,
            false => interval,
        }
    }

    /// Whether the next state is awaited from a status notification; correct: never.
    pub(crate) fn waits_for_status(&self) -> bool {
        self.task_wait_for_status
    }

    /// Legacy eras: whether `input_required` calls `tasks/result`; correct: yes.
    pub(crate) fn result_on_input_required(&self) -> bool {
        !self.task_poll_through_input
    }

    /// Modern era: whether answered keys are answered again; correct: never.
    pub(crate) fn answers_again(&self) -> bool {
        self.task_answer_twice
    }

    /// The params of a request about a task; correct: without related-task `_meta`, and
    /// not task-augmented.
    pub(crate) fn task_params(&self, params: Value, task_id: &str) -> Value {
        let mut params = match self.task_meta_on_polls {
            true => crate::tasks::with_related_task(params, &json!({"taskId": task_id})),
            false => params,
        };
        if self.task_augments_polls {
            params["task"] = json!({});
        }
        params
    }

    /// Whether a task is cancelled by `notifications/cancelled`; correct: never.
    pub(crate) fn cancels_by_notification(&self) -> bool {
        self.task_cancel_notification
    }

    /// The related-task `_meta` an answer carries; correct: the request's.
    pub(crate) fn answer_related<'a>(&self, related: Option<&'a Value>) -> Option<&'a Value> {
        related.filter(|_| !self.task_no_related_meta)
    }

    /// What a failed task is reported as; correct: its error.
    pub(crate) fn failed_outcome(&self, error: Error) -> Result<Value, Error> {
        match self.task_failed_as_ok {
            true => Ok(json!({"content": []})),
            false => Err(error),
        }
    }

    /// Receiver: whether a task-augmented request is served as a task; correct: `declared`.
    pub(crate) fn serves_as_task(&self, declared: bool) -> bool {
        (declared || self.receiver_any_method) && !self.receiver_plain_answer
    }

    /// Receiver: a new task's status; correct: `working`.
    pub(crate) fn created_status(&self, working: &'static str) -> &'static str {
        match self.receiver_not_working {
            true => "completed",
            false => working,
        }
    }

    /// Receiver: whether `tasks/result` waits for the end; correct: yes.
    pub(crate) fn result_waits(&self) -> bool {
        !self.receiver_result_early
    }

    /// Receiver: whether `tasks/result` carries the related-task `_meta`; correct: `with`.
    pub(crate) fn result_related(&self, with: bool) -> bool {
        with && !self.receiver_result_no_meta
    }

    /// Receiver: whether cancelling an ended task is refused; correct: yes.
    pub(crate) fn refuses_terminal_cancel(&self) -> bool {
        !self.receiver_cancel_terminal_ok
    }

    /// Receiver: whether an unknown task id is refused; correct: yes.
    pub(crate) fn refuses_unknown_task(&self) -> bool {
        !self.receiver_unknown_task_ok
    }

    /// Receiver: whether `tasks/list` lists the tasks; correct: yes.
    pub(crate) fn lists_received(&self) -> bool {
        !self.receiver_list_empty
    }

    /// Receiver: whether a task carries its times and ttl; correct: yes.
    pub(crate) fn task_times(&self) -> bool {
        !self.receiver_task_bare
    }

    /// Receiver: whether the `tasks` capability is declared; correct: yes.
    pub(crate) fn declares_tasks(&self) -> bool {
        !self.receiver_undeclared
    }

    /// Receiver: whether `tasks/cancel` cancels a working task; correct: yes.
    pub(crate) fn cancels_received(&self) -> bool {
        !self.receiver_cancel_ignored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::era::cache::Lifetime;
    use crate::error::ErrorKind;
    use crate::tasks::{RELATED_TASK, augment};

    #[test]
    fn each_defect_bends_one_decision() {
        let ok = Defects::default();
        let with = Defects::only;
        assert!(!ok.augments(false, None, true, augment));
        assert!(with("task-ignore-capability").augments(false, None, true, augment));
        assert!(ok.augments(true, Some("required"), false, augment));
        assert!(!with("task-ignore-required").augments(true, Some("required"), false, augment));
        assert!(with("task-ignore-required").augments(true, Some("required"), true, augment));
        assert!(with("task-any-request").may_create_task("resources/read", false));
        let second = Duration::from_secs(1);
        assert_eq!(ok.poll_delay(second), second);
        assert_eq!(with("task-busy-poll").poll_delay(second), BUSY_POLL);
        assert!(with("task-wait-for-status").waits_for_status());
        assert!(!with("task-poll-through-input").result_on_input_required());
        assert!(with("task-answer-twice").answers_again());
        assert!(with("task-cancel-notification").cancels_by_notification());
        let params = json!({"taskId": "t"});
        assert_eq!(ok.task_params(params.clone(), "t"), params);
        let augmented = with("task-augments-polls").task_params(params.clone(), "t");
        assert_eq!(augmented["task"], json!({}));
        let tagged = with("task-meta-on-polls").task_params(params, "t");
        assert_eq!(tagged["_meta"][RELATED_TASK], json!({"taskId": "t"}));
        let related = json!({"taskId": "t"});
        assert_eq!(ok.answer_related(Some(&related)), Some(&related));
        assert_eq!(
            with("task-no-related-meta").answer_related(Some(&related)),
            None
        );
        assert!(!with("receiver-plain-answer").serves_as_task(true));
        assert!(with("receiver-any-method").serves_as_task(false));
        assert_eq!(
            with("receiver-not-working").created_status("working"),
            "completed"
        );
        assert!(!with("receiver-result-early").result_waits());
        assert!(!with("receiver-result-no-meta").result_related(true));
        assert!(!with("receiver-cancel-terminal-ok").refuses_terminal_cancel());
        assert!(!with("receiver-unknown-task-ok").refuses_unknown_task());
        assert!(!with("receiver-undeclared").declares_tasks());
        assert!(!with("receiver-cancel-ignored").cancels_received());
        assert!(!with("receiver-list-empty").lists_received());
        assert!(!with("receiver-task-bare").task_times());
        let failed = || Error::new(ErrorKind::ProtocolError, "f");
        assert!(ok.failed_outcome(failed()).is_err());
        assert_eq!(
            with("task-failed-as-ok").failed_outcome(failed()),
            Ok(json!({"content": []}))
        );
        let got = json!({"ttlMs": 5000});
        assert_eq!(
            with("task-cache-get").cache_lifetime("tasks/get", false, &got, Lifetime::Never),
            Lifetime::For(Duration::from_secs(5))
        );
        assert_eq!(
            ok.cache_lifetime("tasks/get", false, &got, Lifetime::Never),
            Lifetime::Never
        );
    }

    #[test]
    fn task_no_mcp_name_drops_the_header_of_task_requests_only() {
        let request = |method: &str| {
            let url = reqwest::Url::parse("https://localhost/mcp").unwrap();
            let mut r = reqwest::Request::new(reqwest::Method::POST, url);
            let headers = r.headers_mut();
            headers.insert("mcp-method", method.parse().unwrap());
            headers.insert("mcp-name", "x".parse().unwrap());
            r
        };
        let defect = Defects::only("task-no-mcp-name");
        for (method, kept) in [
            ("tasks/get", false),
            ("tasks/cancel", false),
            ("tools/call", true),
        ] {
            let mut r = request(method);
            defect.http_request(&mut r);
            assert_eq!(r.headers().contains_key("mcp-name"), kept, "{method}");
            let mut r = request(method);
            Defects::default().http_request(&mut r);
            assert!(r.headers().contains_key("mcp-name"), "{method}");
        }
    }
}
