//! Seam: what the server starts. Which client capabilities are declared, how server requests
//! are answered, what is surfaced as events (progress, log messages, list changes, resource
//! updates), how progress bears on a timeout, and how subscriptions are kept.
//!
//! Defects here: `no-client-capabilities`, `all-client-capabilities`, `roots-answer-empty`,
//! `no-roots-list-changed`, `elicitation-any-mode`, `no-elicitation-defaults`,
//! `no-progress-token`, `shared-progress-token`, `progress-after-completion`,
//! `progress-unknown-token`, `drop-events`, `no-timeout-reset`, `no-max-timeout`,
//! `subscribe-without-capability`, `listen-not-resent`, `foreign-subscription-events`,
//! `cache-survives-list-changed`, `log-elicitation-content`, `answer-cancelled-request`,
//! `request-events-missing`, `reports-requested-filter`, `ignore-answer-delay`,
//! `elicitation-url-always`, `no-sampling-tools`, `sampling-tools-always`.

use std::time::Duration;

use serde_json::{Value, json};

use super::Defects;

/// `caps` with `sampling.tools` taken out.
fn without_tools(mut caps: Value) -> Value {
    if let Some(Value::Object(sampling)) = caps.get_mut("sampling") {
        sampling.remove("tools");
    }
    caps
}

impl Defects {
    /// The client capabilities declared (in `initialize`, or a modern request's `_meta`);
    /// correct: `implied`, those the handlers imply. `elicitation` is the shape the revision
    /// spoken gives a form-only declaration.
    pub(crate) fn declared_capabilities(&self, implied: Value, elicitation: Value) -> Value {
        if self.no_client_capabilities {
            return json!({});
        }
        if self.all_client_capabilities {
            let mut all = match implied {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            all.entry("roots")
                .or_insert_with(|| json!({"listChanged": true}));
            all.entry("sampling").or_insert_with(|| json!({}));
            all.entry("elicitation").or_insert(elicitation);
            return Value::Object(all);
        }
        if self.no_sampling_tools || self.sampling_tools_always {
            let mut caps = implied;
            if let Some(Value::Object(sampling)) = caps.get_mut("sampling") {
                match self.sampling_tools_always {
                    true => sampling.entry("tools").or_insert_with(|| json!({})),
                    false => return without_tools(caps),
                };
            }
            return caps;
        }
        if self.elicitation_url_always {
            let mut caps = implied;
            if let Some(Value::Object(modes)) = caps.get_mut("elicitation") {
                if modes.contains_key("form") {
                    modes.entry("url").or_insert_with(|| json!({}));
                }
            }
            return caps;
        }
        implied
    }

    /// Whether a server request is answered at once, even when its handler's answer says to
    /// wait (`delay_ms`); correct: no, the answer waits (and is dropped if the server
    /// cancels meanwhile).
    pub(crate) fn answers_at_once(&self) -> bool {
        self.ignore_answer_delay
    }

    /// The roots a `roots/list` is answered with; correct: `roots`.
    pub(crate) fn roots_answered(&self, roots: Value) -> Value {
        match self.roots_answer_empty {
            true => json!([]),
            false => self.roots_shape(roots),
        }
    }

    /// Whether `set_roots` sends `notifications/roots/list_changed` (`declared`: the client
    /// declared `roots.listChanged`); correct: exactly when declared.
    pub(crate) fn announces_roots_change(&self, declared: bool) -> bool {
        declared && !self.no_roots_list_changed
    }

    /// Whether an elicitation in a mode not declared is answered with another mode's answer;
    /// correct: no, it is refused with -32602.
    pub(crate) fn answers_any_mode(&self) -> bool {
        self.elicitation_any_mode
    }

    /// Whether an elicitation answer marked `defaults: true` gets the schema's defaults;
    /// correct: yes.
    pub(crate) fn fills_defaults(&self, asked: bool) -> bool {
        asked && !self.no_elicitation_defaults
    }

    /// What happens to the content of an elicitation answer besides being sent: correct,
    /// nothing (it may be sensitive, and is never logged).
    pub(crate) fn elicitation_answered(&self, content: Option<&Value>) {
        if self.log_elicitation_content
            && let Some(content) = content
        {
            eprintln!("mcp-harness-client: answering an elicitation with {content}");
        }
    }

    /// The progress token of a request that asks for progress (`fresh` makes a new one);
    /// correct: a fresh one per request.
    pub(crate) fn progress_token(&self, fresh: impl FnOnce() -> i64) -> Option<i64> {
        match (self.no_progress_token, self.shared_progress_token) {
            (true, _) => None,
            (false, true) => Some(1),
            (false, false) => Some(fresh()),
        }
    }

    /// Whether a request's progress token stops counting when its response arrives; correct:
    /// yes (progress after the response is not surfaced).
    pub(crate) fn ends_progress_on_response(&self) -> bool {
        !self.progress_after_completion
    }

    /// Whether progress for a token of no request in flight is surfaced; correct: no.
    pub(crate) fn surfaces_unknown_progress(&self) -> bool {
        self.progress_unknown_token
    }

    /// The events an `events` step reports; correct: `events`.
    pub(crate) fn events_reported(&self, events: Vec<Value>) -> Vec<Value> {
        match self.drop_events {
            true => Vec::new(),
            false => events,
        }
    }

    /// Whether a server request is reported as an event; correct: yes.
    pub(crate) fn reports_requests(&self) -> bool {
        !self.request_events_missing
    }

    /// How progress bears on a call's timeout: whether it restarts it, and the maximum;
    /// correct: `correct`.
    pub(crate) fn progress_timeout(
        &self,
        (reset, max): (bool, Option<Duration>),
    ) -> (bool, Option<Duration>) {
        let max = match self.no_max_timeout {
            true => None,
            false => max,
        };
        (reset && !self.no_timeout_reset, max)
    }

    /// Whether `resources/subscribe` may be sent (`declared`: the server declared
    /// `resources.subscribe`); correct: only then.
    pub(crate) fn may_subscribe(&self, declared: bool) -> bool {
        declared || self.subscribe_without_capability
    }

    /// Whether a subscription lost with its stdio server is opened again on the restarted
    /// one; correct: yes (the server keeps no subscription across restarts).
    pub(crate) fn resends_listen(&self) -> bool {
        !self.listen_not_resent
    }

    /// Whether a notification tagged with a subscription id the client does not hold is
    /// surfaced; correct: no.
    pub(crate) fn surfaces_foreign_subscription(&self) -> bool {
        self.foreign_subscription_events
    }

    /// Whether a list_changed notification ends the cached entries of that listing; correct:
    /// yes.
    pub(crate) fn list_change_ends_cache(&self) -> bool {
        !self.cache_survives_list_changed
    }

    /// The filter a `listen` step reports; correct: `acknowledged`, what the server agreed to
    /// honour (not `requested`).
    pub(crate) fn listen_filter(&self, requested: &Value, acknowledged: Value) -> Value {
        match self.reports_requested_filter {
            true => requested.clone(),
            false => acknowledged,
        }
    }

    /// Whether a server request is answered although the server cancelled it meanwhile;
    /// correct: no.
    pub(crate) fn answers_cancelled(&self) -> bool {
        self.answer_cancelled_request
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(name: &str) -> Defects {
        Defects::only(name)
    }

    #[test]
    fn capability_defects_bend_the_declaration() {
        let implied = json!({"sampling": {}});
        let form = json!({"form": {}});
        let ok = Defects::default();
        assert_eq!(
            ok.declared_capabilities(implied.clone(), form.clone()),
            implied
        );
        let none = with("no-client-capabilities").declared_capabilities(implied.clone(), json!({}));
        assert_eq!(none, json!({}));
        let all = with("all-client-capabilities").declared_capabilities(implied, form);
        assert_eq!(
            all,
            json!({"sampling": {}, "roots": {"listChanged": true}, "elicitation": {"form": {}}})
        );
    }

    #[test]
    fn answer_and_event_defects() {
        let ok = Defects::default();
        assert_eq!(ok.roots_answered(json!([1])), json!([1]));
        assert_eq!(
            with("roots-answer-empty").roots_answered(json!([1])),
            json!([])
        );
        assert!(ok.announces_roots_change(true));
        assert!(!ok.announces_roots_change(false));
        assert!(!with("no-roots-list-changed").announces_roots_change(true));
        assert!(!ok.answers_any_mode());
        assert!(with("elicitation-any-mode").answers_any_mode());
        assert!(ok.fills_defaults(true) && !ok.fills_defaults(false));
        assert!(!with("no-elicitation-defaults").fills_defaults(true));
        assert_eq!(ok.progress_token(|| 7), Some(7));
        assert_eq!(with("no-progress-token").progress_token(|| 7), None);
        assert_eq!(with("shared-progress-token").progress_token(|| 7), Some(1));
        assert!(ok.ends_progress_on_response());
        assert!(!with("progress-after-completion").ends_progress_on_response());
        assert!(with("progress-unknown-token").surfaces_unknown_progress());
        assert_eq!(
            with("drop-events").events_reported(vec![json!(1)]),
            Vec::<Value>::new()
        );
        assert_eq!(ok.events_reported(vec![json!(1)]), [json!(1)]);
        assert!(!with("request-events-missing").reports_requests());
        assert!(ok.may_subscribe(true) && !ok.may_subscribe(false));
        assert!(with("subscribe-without-capability").may_subscribe(false));
        assert!(!with("listen-not-resent").resends_listen());
        assert!(with("foreign-subscription-events").surfaces_foreign_subscription());
        assert!(!with("cache-survives-list-changed").list_change_ends_cache());
        assert!(with("answer-cancelled-request").answers_cancelled());
        let (asked, got) = (json!({"a": true, "b": true}), json!({"a": true}));
        assert_eq!(ok.listen_filter(&asked, got.clone()), got);
        assert_eq!(
            with("reports-requested-filter").listen_filter(&asked, got),
            asked
        );
    }

    #[test]
    fn progress_bears_on_the_timeout_only_with_a_maximum() {
        let max = Some(Duration::from_secs(3));
        let ok = Defects::default();
        assert_eq!(ok.progress_timeout((false, None)), (false, None));
        assert_eq!(ok.progress_timeout((true, max)), (true, max));
        let no_reset = with("no-timeout-reset").progress_timeout((true, max));
        assert_eq!(no_reset, (false, max));
        let no_max = with("no-max-timeout").progress_timeout((true, max));
        assert_eq!(no_max, (true, None));
    }
}
