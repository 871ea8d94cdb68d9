//! What the server starts, as the client sees it: the answers to its requests (through
//! [`Handlers`]), and the events the client surfaces to its caller (server requests,
//! progress, log messages, list changes, resource updates), kept in arrival order until an
//! `events` step takes them.
//!
//! The router hands every server request and notification here. Progress is surfaced only for
//! the token of a request in flight: a token counts from the moment its request is registered
//! until its response is read (both under the router, so a notification read after the
//! response never counts). A notification tagged with a subscription id (2026-07-28) is
//! surfaced only when the id is one of the client's own `subscriptions/listen` requests. A
//! list change also marks that listing's cached pages for discarding.
//!
//! A handler answer with a delay is sent later by a task of its own, unless the server
//! cancelled the request meanwhile (`notifications/cancelled` naming it): then it is never
//! answered. Requests the client serves as a task receiver are answered in `receiving.rs`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::{Notify, oneshot, watch};

use crate::handlers::{Handled, Handlers, Spoken};
use crate::seams::Seams;
use crate::seams::wire::Wire;
use crate::tasks::received::Received;
use crate::tasks::seams::TaskSeams;

mod consent;
mod receiving;

/// `_meta` key of the subscription a notification belongs to (2026-07-28).
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The most events kept waiting for an `events` step.
pub(crate) const MAX_EVENTS: usize = 10_000;

/// Sends a late answer to a server request (set once the session exists).
type Replier = Box<dyn Fn(Value) + Send + Sync>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A request in flight that asked for progress.
#[derive(Clone)]
pub(crate) struct Tracked {
    /// Its token, as sent.
    token: Value,
    /// Woken by each progress notification for it.
    pub(crate) progressed: Arc<Notify>,
    /// Whether progress restarts its timeout.
    pub(crate) resets: bool,
    /// The longest it may take, progress or not.
    pub(crate) max: Option<Duration>,
}

/// The progress plans of calls, by token, and the tokens of the requests in flight, by id.
#[derive(Default)]
struct Progress {
    plans: HashMap<String, Option<Duration>>,
    by_id: HashMap<i64, Tracked>,
}

/// The client's side of what the server starts; one per connection, owned by the router.
pub(crate) struct Listener {
    handlers: Handlers,
    seams: Seams,
    /// The legacy version offered in `initialize` (what the capabilities were declared for).
    offered: Mutex<String>,
    roots: Mutex<Value>,
    events: Mutex<Vec<Value>>,
    /// Events were dropped since the last `events` step (see [`Listener::push`]).
    overflowed: AtomicBool,
    arrived: Notify,
    next_token: AtomicI64,
    progress: Mutex<Progress>,
    /// Server requests awaiting a delayed answer, by id (as JSON text): set when cancelled.
    answering: Arc<Mutex<HashMap<String, Arc<AtomicBool>>>>,
    /// Our `subscriptions/listen` requests in flight, with the waiter for the acknowledgment.
    subscriptions: Mutex<HashMap<i64, Option<oneshot::Sender<Value>>>>,
    /// Listings whose cached pages are to be dropped (a list change arrived).
    changed: Mutex<HashSet<String>>,
    /// The last `notifications/tasks/status` received (its params), for whoever watches.
    task_status: watch::Sender<Value>,
    /// The tasks the client runs as a receiver (2025-11-25).
    received: Arc<Received>,
    replier: Arc<OnceLock<Replier>>,
}

impl Listener {
    pub(crate) fn new(handlers: Handlers, seams: Seams) -> Self {
        Listener {
            roots: Mutex::new(handlers.roots()),
            handlers,
            seams,
            offered: Mutex::new(String::new()),
            events: Mutex::new(Vec::new()),
            overflowed: AtomicBool::new(false),
            arrived: Notify::new(),
            next_token: AtomicI64::new(1),
            progress: Mutex::new(Progress::default()),
            answering: Arc::default(),
            subscriptions: Mutex::new(HashMap::new()),
            changed: Mutex::new(HashSet::new()),
            task_status: watch::Sender::new(Value::Null),
            received: Arc::new(Received::new(seams)),
            replier: Arc::default(),
        }
    }

    /// Where late answers go (the session's transport); only the first call counts.
    pub(crate) fn set_replier(&self, replier: Replier) {
        let _ = self.replier.set(replier);
    }

    /// The client capabilities to declare in `spoken` (plus `extra`, a step's own input
    /// answers in the 2026-07-28 era, for methods no handler answers), through the seam.
    pub(crate) fn capabilities(&self, spoken: Spoken<'_>, extra: Option<&Value>) -> Value {
        let mut caps = self.handlers.capabilities(spoken);
        if !self.seams.declares_tasks()
            && let Value::Object(caps) = &mut caps
        {
            caps.remove("tasks");
        }
        if let (Value::Object(caps), Some(Value::Object(extra))) = (&mut caps, extra) {
            for (name, cap) in extra {
                caps.entry(name.clone()).or_insert_with(|| cap.clone());
            }
        }
        self.seams
            .declared_capabilities(caps, Handlers::form_only(spoken))
    }

    /// The capabilities of a 2026-07-28 request's `_meta` (`extra`: see
    /// [`Listener::capabilities`]).
    pub(crate) fn modern_capabilities(&self, extra: Option<&Value>) -> Value {
        let spoken = Spoken {
            modern: true,
            version: "",
        };
        self.capabilities(spoken, extra)
    }

    /// The `initialize` capabilities when offering `version` (remembered for the answers).
    pub(crate) fn offering(&self, version: &str) -> Value {
        *lock(&self.offered) = version.to_owned();
        let spoken = Spoken {
            modern: false,
            version,
        };
        self.capabilities(spoken, None)
    }

    /// Replaces the roots; returns whether the client announces the change (it declared
    /// `roots` with `listChanged`, which only the legacy eras have).
    pub(crate) fn set_roots(&self, roots: Vec<Value>, modern: bool) -> bool {
        *lock(&self.roots) = Value::Array(roots);
        let declared = self.handlers.answers("roots/list") && !modern;
        self.seams.announces_roots_change(declared)
    }

    /// Keeps one event for the next `events` step; past [`MAX_EVENTS`] waiting ones, later
    /// events are dropped (a server flooding notifications must not grow the client without
    /// bound), with one note on stderr.
    fn push(&self, event: Value) {
        let mut events = lock(&self.events);
        if events.len() >= MAX_EVENTS {
            if !self.overflowed.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "mcp-harness-client: more than {MAX_EVENTS} events wait to be reported; \
                     dropping later ones until they are taken"
                );
            }
            return;
        }
        events.push(event);
        drop(events);
        self.arrived.notify_waiters();
    }

    /// Takes every event so far, after waiting (at most `wait`) until there are `min`.
    pub(crate) async fn take_events(&self, min: usize, wait: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.arrived.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if lock(&self.events).len() >= min {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        let events = std::mem::take(&mut *lock(&self.events));
        self.overflowed.store(false, Ordering::Relaxed);
        self.seams.events_reported(events)
    }

    fn request_event(&self, method: &str, params: &Value) {
        if !self.seams.reports_requests() {
            return;
        }
        let mut event = Map::new();
        event.insert("type".into(), json!("request"));
        event.insert("method".into(), json!(method));
        if !params.is_null() {
            event.insert("params".into(), params.clone());
        }
        self.push(Value::Object(event));
    }

    /// A legacy server request `id`: reported, then answered by the handlers (`None`: not
    /// answered by them; the router answers as before). A delayed answer is sent later, and
    /// then `Some(None)` is returned: nothing to send now.
    pub(crate) fn server_request(
        &self,
        id: &Value,
        method: &str,
        params: &Value,
    ) -> Option<Option<Value>> {
        self.request_event(method, params);
        let offered = lock(&self.offered).clone();
        let spoken = Spoken {
            modern: false,
            version: &offered,
        };
        if method == "elicitation/create" {
            self.url_elicitation(params, spoken);
        }
        if self.handlers.serves_tasks(spoken)
            && let Some(reply) = self.task_request(id, method, params, spoken)
        {
            return Some(reply);
        }
        let roots = lock(&self.roots).clone();
        let handled = self
            .handlers
            .handle(method, params, &roots, spoken, &self.seams);
        // An answer about a task carries the task's related-task `_meta` (2025-11-25).
        let related = self
            .seams
            .answer_related(crate::tasks::related_task(params));
        let handled = match (handled, related) {
            (Handled::Result(result, delay), Some(related)) => {
                Handled::Result(crate::tasks::with_related_task(result, related), delay)
            }
            (handled, _) => handled,
        };
        match handled {
            Handled::Unhandled => None,
            Handled::Error(code, message) => Some(Some(crate::jsonrpc::error_response(
                id.clone(),
                code,
                &message,
            ))),
            Handled::Result(result, None) => {
                Some(Some(crate::jsonrpc::result_response(id.clone(), result)))
            }
            Handled::Result(result, Some(_)) if self.seams.answers_at_once() => {
                Some(Some(crate::jsonrpc::result_response(id.clone(), result)))
            }
            Handled::Result(result, Some(delay)) => {
                let reply = crate::jsonrpc::result_response(id.clone(), result);
                match tokio::runtime::Handle::try_current() {
                    Ok(runtime) => {
                        self.answer_later(&runtime, id, reply, delay);
                        Some(None)
                    }
                    Err(_) => Some(Some(reply)),
                }
            }
        }
    }

    fn answer_later(
        &self,
        runtime: &tokio::runtime::Handle,
        id: &Value,
        reply: Value,
        delay: Duration,
    ) {
        let key = id.to_string();
        let cancelled = Arc::new(AtomicBool::new(false));
        lock(&self.answering).insert(key.clone(), Arc::clone(&cancelled));
        let (answering, replier, seams) = (
            Arc::clone(&self.answering),
            Arc::clone(&self.replier),
            self.seams,
        );
        runtime.spawn(async move {
            tokio::time::sleep(delay).await;
            lock(&answering).remove(&key);
            if cancelled.load(Ordering::SeqCst) && !seams.answers_cancelled() {
                eprintln!(
                    "mcp-harness-client: the server cancelled its request {key}; not answering it"
                );
                return;
            }
            let fallback = reply.clone();
            let Some(reply) = seams.request_reply(Some(reply), || fallback) else {
                return;
            };
            if let Some(send) = replier.get() {
                send(reply);
            }
        });
    }

    /// The answer to a 2026-07-28 input request (`method`, `params`) from the handlers, when
    /// they give one (reported like a server request).
    pub(crate) fn input_answer(&self, method: &str, params: &Value) -> Option<Value> {
        let spoken = Spoken {
            modern: true,
            version: "",
        };
        let roots = lock(&self.roots).clone();
        if method == "elicitation/create" {
            self.url_elicitation(params, spoken);
        }
        match self
            .handlers
            .handle(method, params, &roots, spoken, &self.seams)
        {
            Handled::Result(result, _) => Some(result),
            Handled::Error(..) | Handled::Unhandled => None,
        }
    }

    /// Reports an input request of an `input_required` result as a request the server sent.
    pub(crate) fn input_requested(&self, method: &str, params: &Value) {
        self.request_event(method, params);
    }

    /// A fresh progress token for a call, with the call's maximum timeout; `None` when the
    /// client sends none. The plan lasts until [`Listener::end_progress`].
    pub(crate) fn new_progress(&self, max: Option<Duration>) -> Option<Value> {
        let token = self
            .seams
            .progress_token(|| self.next_token.fetch_add(1, Ordering::Relaxed))?;
        let token = json!(token);
        lock(&self.progress).plans.insert(token.to_string(), max);
        Some(token)
    }

    /// The call of `token` is over.
    pub(crate) fn end_progress(&self, token: &Value) {
        lock(&self.progress).plans.remove(&token.to_string());
    }

    /// Request `id` was registered with these `params`: if they carry a progress token, it
    /// counts from now on (see [`Tracked`]).
    pub(crate) fn track(&self, id: i64, params: &Value) -> Option<Tracked> {
        let token = params.pointer("/_meta/progressToken")?;
        let mut progress = lock(&self.progress);
        let max = progress.plans.get(&token.to_string()).copied().flatten();
        let (resets, max) = self.seams.progress_timeout((max.is_some(), max));
        let tracked = Tracked {
            token: token.clone(),
            progressed: Arc::new(Notify::new()),
            resets,
            max,
        };
        progress.by_id.insert(id, tracked.clone());
        Some(tracked)
    }

    /// Request `id` was answered: its token no longer counts.
    pub(crate) fn answered(&self, id: i64) {
        if self.seams.ends_progress_on_response() {
            lock(&self.progress).by_id.remove(&id);
        }
    }

    /// Request `id` was given up: its token no longer counts.
    pub(crate) fn forget(&self, id: i64) {
        lock(&self.progress).by_id.remove(&id);
    }

    /// Registers our `subscriptions/listen` request `id`; the receiver gets the acknowledged
    /// filter.
    pub(crate) fn open_subscription(&self, id: i64) -> oneshot::Receiver<Value> {
        let (tx, rx) = oneshot::channel();
        lock(&self.subscriptions).insert(id, Some(tx));
        rx
    }

    /// The subscription of ours a notification tagged `tag` belongs to: the listen request
    /// sent with that id, or the one the HTTP transport re-issued under it (a modern request
    /// whose stream broke goes out again once: `jsonrpc::reissued_id`).
    fn subscription(&self, tag: i64) -> Option<i64> {
        let subscriptions = lock(&self.subscriptions);
        crate::jsonrpc::original_ids(tag).find(|id| subscriptions.contains_key(id))
    }

    /// Our subscription `id` ended.
    pub(crate) fn close_subscription(&self, id: i64) {
        lock(&self.subscriptions).remove(&id);
    }

    /// A watch on the task status notifications: each change is the last one's params
    /// (only a deliberate defect waits on it; the correct client polls).
    pub(crate) fn task_statuses(&self) -> watch::Receiver<Value> {
        self.task_status.subscribe()
    }

    /// Whether a listing's cached pages are to be dropped (a list change arrived since the
    /// last call); clears the mark.
    pub(crate) fn take_changed(&self, method: &str) -> bool {
        lock(&self.changed).remove(method) && self.seams.list_change_ends_cache()
    }

    /// A server notification. Returns the id of a subscription of ours the server ended
    /// (`notifications/cancelled` naming a `subscriptions/listen` request).
    pub(crate) fn notification(&self, method: &str, params: &Value) -> Option<i64> {
        let tag = params
            .pointer("/_meta")
            .and_then(|m| m.get(SUBSCRIPTION_ID));
        if let Some(tag) = tag {
            let ours = tag.as_i64().and_then(|id| self.subscription(id)).is_some();
            if !ours && !self.seams.surfaces_foreign_subscription() {
                return None;
            }
        }
        match method {
            "notifications/progress" => self.progress(params),
            "notifications/message" => {
                let mut event = Map::new();
                event.insert("type".into(), json!("log"));
                event.insert("level".into(), field(params, "level"));
                if let Some(logger) = params.get("logger") {
                    event.insert("logger".into(), logger.clone());
                }
                event.insert("data".into(), field(params, "data"));
                self.push(Value::Object(event));
            }
            "notifications/tools/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/prompts/list_changed" => {
                let list = method
                    .trim_start_matches("notifications/")
                    .trim_end_matches("/list_changed");
                lock(&self.changed).insert(format!("{list}/list"));
                if list == "resources" {
                    lock(&self.changed).insert("resources/templates/list".into());
                }
                self.push(json!({"type": "list_changed", "list": list}));
            }
            "notifications/resources/updated" => {
                self.push(json!({"type": "resource_updated", "uri": field(params, "uri")}));
            }
            "notifications/subscriptions/acknowledged" => {
                let id = tag
                    .and_then(Value::as_i64)
                    .and_then(|id| self.subscription(id))?;
                let mut subscriptions = lock(&self.subscriptions);
                if let Some(tx) = subscriptions.get_mut(&id).and_then(Option::take) {
                    let filter = params.get("notifications").cloned();
                    let _ = tx.send(filter.unwrap_or_else(|| json!({})));
                }
            }
            "notifications/cancelled" => return self.cancelled(params),
            "notifications/tasks/status" => {
                self.push(
                    json!({"type": "task_status", "taskId": field(params, "taskId"),
                    "status": field(params, "status")}),
                );
                self.task_status.send_replace(params.clone());
            }
            _ => {}
        }
        None
    }

    fn progress(&self, params: &Value) {
        let token = params.get("progressToken").cloned().unwrap_or(Value::Null);
        let tracked = {
            let progress = lock(&self.progress);
            let found = progress.by_id.values().find(|t| t.token == token);
            found.map(|t| Arc::clone(&t.progressed))
        };
        match tracked {
            Some(progressed) => progressed.notify_one(),
            None if self.seams.surfaces_unknown_progress() => {}
            None => return,
        }
        let mut event = Map::new();
        event.insert("type".into(), json!("progress"));
        event.insert("progressToken".into(), token);
        event.insert("progress".into(), field(params, "progress"));
        for optional in ["total", "message"] {
            if let Some(value) = params.get(optional) {
                event.insert(optional.into(), value.clone());
            }
        }
        self.push(Value::Object(event));
    }

    /// The server cancelled a request: its own (a delayed answer is then not sent), or our
    /// subscription (returned, so the router ends it).
    fn cancelled(&self, params: &Value) -> Option<i64> {
        let id = params.get("requestId")?;
        if let Some(flag) = lock(&self.answering).get(&id.to_string()) {
            flag.store(true, Ordering::SeqCst);
        }
        let ours = id
            .as_i64()
            .filter(|id| lock(&self.subscriptions).contains_key(id));
        if let Some(id) = ours {
            self.close_subscription(id);
        }
        ours
    }
}

fn field(params: &Value, name: &str) -> Value {
    params.get(name).cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener with the defect `defects` on (none: `""`).
    fn listener(defects: &str) -> Listener {
        let seams = match defects {
            "" => Seams::default(),
            #[cfg(feature = "defects")]
            name => Seams::only(name),
            #[cfg(not(feature = "defects"))]
            name => unreachable!("{name} needs the defects feature"),
        };
        Listener::new(Handlers::new(), seams)
    }

    #[tokio::test]
    async fn progress_counts_only_while_its_request_is_in_flight() {
        let l = listener("");
        let token = l.new_progress(None).unwrap();
        let note = json!({"progressToken": token, "progress": 1});
        l.notification("notifications/progress", &note);
        let tracked = l
            .track(4, &json!({"_meta": {"progressToken": token}}))
            .unwrap();
        assert!(!tracked.resets);
        l.notification(
            "notifications/progress",
            &json!({"progressToken": 99, "progress": 1}),
        );
        l.notification("notifications/progress", &note);
        l.answered(4);
        l.notification("notifications/progress", &note);
        let events = l.take_events(0, Duration::ZERO).await;
        assert_eq!(
            events,
            [json!({"type": "progress", "progressToken": token, "progress": 1})]
        );
        // The defects that bend this (built with the `defects` feature only).
        #[cfg(feature = "defects")]
        {
            let late = listener("progress-after-completion");
            let token = late.new_progress(None).unwrap();
            late.track(1, &json!({"_meta": {"progressToken": token}}));
            late.answered(1);
            late.notification("notifications/progress", &json!({"progressToken": token}));
            assert_eq!(late.take_events(0, Duration::ZERO).await.len(), 1);
            let any = listener("progress-unknown-token");
            any.notification("notifications/progress", &json!({"progressToken": "x"}));
            assert_eq!(any.take_events(0, Duration::ZERO).await.len(), 1);
        }
    }

    #[tokio::test]
    async fn events_keep_their_order_and_foreign_subscriptions_are_ignored() {
        let l = listener("");
        let rx = l.open_subscription(7);
        let mine = json!({"_meta": {SUBSCRIPTION_ID: 7}});
        let theirs = json!({"_meta": {SUBSCRIPTION_ID: 8}, "uri": "file:///x"});
        l.notification(
            "notifications/subscriptions/acknowledged",
            &json!({"_meta": {SUBSCRIPTION_ID: 7}, "notifications": {"toolsListChanged": true}}),
        );
        assert_eq!(rx.await.unwrap(), json!({"toolsListChanged": true}));
        // Re-issued over HTTP under the negative id, the stream is still ours.
        l.notification(
            "notifications/prompts/list_changed",
            &json!({"_meta": {SUBSCRIPTION_ID: -7}}),
        );
        assert_eq!(
            l.take_events(0, Duration::ZERO).await,
            [json!({"type": "list_changed", "list": "prompts"})]
        );
        l.notification(
            "notifications/message",
            &json!({"level": "info", "data": "d"}),
        );
        l.notification("notifications/resources/updated", &theirs);
        l.notification("notifications/tools/list_changed", &mine);
        assert!(l.take_changed("tools/list"));
        assert!(!l.take_changed("tools/list"));
        assert_eq!(
            l.take_events(2, Duration::from_secs(1)).await,
            [
                json!({"type": "log", "level": "info", "data": "d"}),
                json!({"type": "list_changed", "list": "tools"}),
            ]
        );
        // The defects that bend this (built with the `defects` feature only).
        #[cfg(feature = "defects")]
        {
            let lax = listener("foreign-subscription-events");
            lax.notification("notifications/resources/updated", &theirs);
            assert_eq!(lax.take_events(0, Duration::ZERO).await.len(), 1);
            let dropped = listener("drop-events");
            dropped.notification("notifications/message", &json!({"level": "info"}));
            assert!(dropped.take_events(1, Duration::ZERO).await.is_empty());
        }
    }

    #[tokio::test]
    async fn events_wait_for_the_minimum_at_most_the_time_given() {
        let l = Arc::new(listener(""));
        let late = Arc::clone(&l);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            late.notification("notifications/message", &json!({"level": "info"}));
        });
        assert_eq!(l.take_events(1, Duration::from_secs(5)).await.len(), 1);
        let started = std::time::Instant::now();
        assert!(l.take_events(1, Duration::from_millis(50)).await.is_empty());
        assert!(started.elapsed() >= Duration::from_millis(50));
    }

    #[tokio::test]
    async fn a_flood_is_capped() {
        let l = listener("");
        for _ in 0..MAX_EVENTS + 5 {
            l.notification("notifications/message", &json!({"level": "debug"}));
        }
        assert_eq!(l.take_events(0, Duration::ZERO).await.len(), MAX_EVENTS);
        l.notification("notifications/message", &json!({"level": "debug"}));
        assert_eq!(l.take_events(0, Duration::ZERO).await.len(), 1);
    }

    #[test]
    fn the_server_cancels_our_subscription() {
        let l = listener("");
        let _rx = l.open_subscription(3);
        assert_eq!(
            l.notification("notifications/cancelled", &json!({"requestId": 3})),
            Some(3)
        );
        assert_eq!(
            l.notification("notifications/cancelled", &json!({"requestId": 3})),
            None
        );
    }
}
