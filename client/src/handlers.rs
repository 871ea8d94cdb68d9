//! The client's answers to the requests a server sends it (`roots/list`,
//! `sampling/createMessage`, `elicitation/create`), and the client capabilities they imply.
//!
//! The caller gives one answer per method ([`Handlers::from_json`]); the client declares
//! exactly the capabilities those answers serve, and answers each such request with the
//! answer's value as its `result`. In the 2026-07-28 era the same answers serve the input
//! requests of `input_required` results and of tasks. A task's request (2025-11-25, during
//! `tasks/result`) is answered with its related-task `_meta` (see the listener). Two members
//! of an answer are the client's own, never sent: `delay_ms` (wait that long before
//! answering, as a user taking time would; a cancellation arriving meanwhile means no answer
//! at all) and, on an elicitation answer, `defaults: true` (fill each member the requested
//! schema gives a `default` and the answer's `content` leaves out, as a user accepting a
//! pre-filled form would). An elicitation answer in url mode may say `browser: true`: the
//! caller plays the user's browser, so a consented URL is reported as opened (an event
//! `url_opened`; the client itself never fetches it). A sampling answer may say
//! `rejected: true`: the user rejected the request, answered with the error -1. A sampling
//! answer with `tool_use` content is a model that uses tools (`sampling.tools`; see
//! [`sampling`]).

mod sampling;

pub(crate) use sampling::ToolProblem;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::jsonrpc::INVALID_PARAMS;
use crate::seams::Seams;
use crate::seams::wire::Wire;

/// The methods a handler may answer.
pub const HANDLED_METHODS: [&str; 3] =
    ["roots/list", "sampling/createMessage", "elicitation/create"];

/// The error code a user's rejection of a sampling request is answered with.
const USER_REJECTED: i64 = -1;

/// The first legacy revision with elicitation modes (`form`, `url`) and sampling tools.
const MODES_SINCE: &str = "2025-11-25";

/// The first revision with tasks.
const TASKS_SINCE: &str = "2025-11-25";

/// One answer: the `result` sent, and how long to wait before sending it.
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    result: Value,
    delay: Option<Duration>,
    /// Elicitation only: fill the requested schema's defaults into `content`.
    defaults: bool,
    /// Elicitation (url mode) only: the caller plays the browser a consented URL opens in.
    browser: bool,
    /// Sampling only: the user rejected the request.
    rejected: bool,
}

/// Which client-own members an answer may carry besides its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Own {
    Roots,
    Sampling,
    Elicitation,
}

/// The elicitation answers: one (form mode), or one per mode.
#[derive(Debug, Clone, PartialEq)]
enum Elicitation {
    Form(Answer),
    ByMode(BTreeMap<String, Answer>),
}

/// The answers to server requests, by method; `Default` answers none (and declares nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Handlers {
    roots: Option<Answer>,
    sampling: Option<Answer>,
    elicitation: Option<Elicitation>,
    /// Methods served as tasks when a request asks (2025-11-25): declared in
    /// `capabilities.tasks.requests` (see [`crate::tasks::received`]).
    as_tasks: Vec<String>,
}

/// What the client does with one server request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Handled {
    /// Answer with this result, after this delay.
    Result(Value, Option<Duration>),
    /// Answer with this JSON-RPC error.
    Error(i64, String),
    /// No handler for it: answered as before (`ping` → `{}`, anything else -32601).
    Unhandled,
}

/// The revision a connection speaks, as far as the declared capabilities depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spoken<'a> {
    /// The 2026-07-28 era (capabilities in every request's `_meta`).
    pub(crate) modern: bool,
    /// The legacy version offered in `initialize` (ignored when modern).
    pub(crate) version: &'a str,
}

impl Spoken<'_> {
    /// Whether elicitation has modes (`form`, `url`) in this revision.
    fn has_modes(&self) -> bool {
        self.modern || self.version >= MODES_SINCE
    }

    /// Whether a server may augment its requests with tasks (2025-11-25's tasks; the
    /// 2026-07-28 era has no server requests).
    fn has_tasks(&self) -> bool {
        !self.modern && self.version >= TASKS_SINCE
    }
}

impl Handlers {
    /// No answers.
    pub fn new() -> Self {
        Handlers::default()
    }

    /// Reads the `handlers` object of a `connect` step: method → answer. Refuses an unknown
    /// method, an answer that is not an object, a `delay_ms` that is not a non-negative
    /// integer, a `defaults` that is not a boolean, and an elicitation answer that is neither
    /// one answer (with `action`) nor an object of answers by mode (`form`, `url`).
    pub fn from_json(handlers: &Map<String, Value>) -> Result<Self, String> {
        let mut out = Handlers::default();
        for (method, value) in handlers {
            let at = format!("handlers[{method:?}]");
            match method.as_str() {
                "roots/list" => out.roots = Some(answer(value, &at, Own::Roots)?),
                "sampling/createMessage" => {
                    out.sampling = Some(answer(value, &at, Own::Sampling)?);
                }
                "elicitation/create" => out.elicitation = Some(elicitation(value, &at)?),
                other => {
                    return Err(format!(
                        "{at}: the client answers no {other:?} requests; expected one of {}",
                        HANDLED_METHODS.join(", ")
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Serves `methods` (a subset of [`crate::tasks::received::TASK_METHODS`], each with a
    /// handler) as tasks when a request asks, from 2025-11-25 on (connect's `tasks`).
    pub fn serve_as_tasks(&mut self, methods: &[String]) -> Result<(), String> {
        for method in methods {
            if !crate::tasks::received::TASK_METHODS.contains(&method.as_str()) {
                return Err(format!(
                    "tasks: the client serves no {method:?} requests as tasks; expected some of {}",
                    crate::tasks::received::TASK_METHODS.join(", ")
                ));
            }
            if !self.answers(method) {
                return Err(format!(
                    "tasks: {method:?} has no answer in handlers; a task needs one to complete"
                ));
            }
            if !self.as_tasks.contains(method) {
                self.as_tasks.push(method.clone());
            }
        }
        Ok(())
    }

    /// Whether a request `method` with `params` in `spoken` is served as a task: a legacy
    /// revision with tasks, a method served as tasks, and `params.task` an object.
    pub(crate) fn as_task(&self, method: &str, params: &Value, spoken: Spoken<'_>) -> bool {
        spoken.has_tasks()
            && self.as_tasks.iter().any(|m| m == method)
            && params.get("task").is_some_and(Value::is_object)
    }

    /// Whether the client serves any request as a task in `spoken` (it then answers
    /// `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`).
    pub(crate) fn serves_tasks(&self, spoken: Spoken<'_>) -> bool {
        spoken.has_tasks() && !self.as_tasks.is_empty()
    }

    /// Whether a handler answers `method`.
    pub(crate) fn answers(&self, method: &str) -> bool {
        match method {
            "roots/list" => self.roots.is_some(),
            "sampling/createMessage" => self.sampling.is_some(),
            "elicitation/create" => self.elicitation.is_some(),
            _ => false,
        }
    }

    /// The elicitation answers' `content`, as given (the `token-in-span` defect only).
    #[cfg(feature = "defects")]
    pub(crate) fn elicitation_contents(&self) -> Vec<&Value> {
        let answers: Vec<&Answer> = match &self.elicitation {
            None => Vec::new(),
            Some(Elicitation::Form(answer)) => vec![answer],
            Some(Elicitation::ByMode(modes)) => modes.values().collect(),
        };
        answers
            .into_iter()
            .filter_map(|a| a.result.get("content"))
            .collect()
    }

    /// The roots the `roots/list` answer holds (empty without a handler).
    pub(crate) fn roots(&self) -> Value {
        self.roots
            .as_ref()
            .and_then(|a| a.result.get("roots").cloned())
            .unwrap_or_else(|| json!([]))
    }

    /// The client capabilities the handlers imply in the revision `spoken`: `roots` (with
    /// `listChanged` in the legacy eras, whose clients announce root changes), `sampling`,
    /// `elicitation` (`{}` before modes existed; then `{"form":{}}` for one answer, or one
    /// member per mode answered).
    pub(crate) fn capabilities(&self, spoken: Spoken<'_>) -> Value {
        let mut caps = Map::new();
        if self.roots.is_some() {
            let roots = match spoken.modern {
                true => json!({}),
                false => json!({"listChanged": true}),
            };
            caps.insert("roots".into(), roots);
        }
        if let Some(sampling) = &self.sampling {
            let tools = spoken.has_modes() && sampling::uses_tools(&sampling.result);
            let declared = match tools {
                true => json!({"tools": {}}),
                false => json!({}),
            };
            caps.insert("sampling".into(), declared);
        }
        if let Some(elicitation) = &self.elicitation {
            let declared = match (spoken.has_modes(), elicitation) {
                (false, _) => json!({}),
                (true, Elicitation::Form(_)) => json!({"form": {}}),
                (true, Elicitation::ByMode(modes)) => {
                    Value::Object(modes.keys().map(|mode| (mode.clone(), json!({}))).collect())
                }
            };
            caps.insert("elicitation".into(), declared);
        }
        if self.serves_tasks(spoken) {
            let tasks = crate::tasks::received::capability(&self.as_tasks);
            caps.insert("tasks".into(), tasks);
        }
        Value::Object(caps)
    }

    /// The `elicitation` capability a form-only client declares in `spoken`.
    pub(crate) fn form_only(spoken: Spoken<'_>) -> Value {
        match spoken.has_modes() {
            true => json!({"form": {}}),
            false => json!({}),
        }
    }

    /// How the request `method` with `params` is answered in `spoken`; `roots` are the
    /// client's current roots (`set_roots` replaces the handler's).
    pub(crate) fn handle(
        &self,
        method: &str,
        params: &Value,
        roots: &Value,
        spoken: Spoken<'_>,
        seams: &Seams,
    ) -> Handled {
        match method {
            "roots/list" => match &self.roots {
                Some(a) => {
                    let mut result = a.result.clone();
                    if let Value::Object(map) = &mut result {
                        map.insert("roots".into(), seams.roots_answered(roots.clone()));
                    }
                    Handled::Result(result, a.delay)
                }
                None => Handled::Unhandled,
            },
            "sampling/createMessage" => match &self.sampling {
                Some(a) => sample(a, params, seams),
                None => Handled::Unhandled,
            },
            "elicitation/create" => match &self.elicitation {
                Some(e) => elicit(e, params, spoken, seams),
                None => Handled::Unhandled,
            },
            _ => Handled::Unhandled,
        }
    }
}

impl Handlers {
    /// A url-mode elicitation (`params`) the caller's `url` answer plays the browser for
    /// (`browser: true`): its URL as received, and whether the user consented (`accept`).
    /// `None` for any other request, or a url answer without `browser`.
    pub(crate) fn url_consent(&self, params: &Value, spoken: Spoken<'_>) -> Option<(String, bool)> {
        let Some(Elicitation::ByMode(modes)) = &self.elicitation else {
            return None;
        };
        if !spoken.has_modes() || params.get("mode").and_then(Value::as_str) != Some("url") {
            return None;
        }
        let answer = modes.get("url").filter(|a| a.browser)?;
        let url = params.get("url").and_then(Value::as_str)?;
        let consented = answer.result.get("action").and_then(Value::as_str) == Some("accept");
        Some((url.to_owned(), consented))
    }
}

/// The answer to one sampling request: an error -1 when the user rejected it, -32602 when its
/// messages break the tool rules, else the answer.
fn sample(a: &Answer, params: &Value, seams: &Seams) -> Handled {
    if a.rejected {
        let code = seams.rejection_code(USER_REJECTED);
        return Handled::Error(code, "User rejected sampling request".into());
    }
    if let Some((problem, message)) = sampling::problem(params)
        && seams.refuses_tool_problem(problem)
    {
        return Handled::Error(INVALID_PARAMS, message);
    }
    Handled::Result(a.result.clone(), a.delay)
}

/// The answer to one elicitation: the declared mode's answer (a request without `mode` is
/// form mode), its content completed with the schema's defaults when asked; -32602 for a mode
/// not declared.
fn elicit(e: &Elicitation, params: &Value, spoken: Spoken<'_>, seams: &Seams) -> Handled {
    let absent = seams.mode_when_absent("form");
    let mode = params.get("mode").and_then(Value::as_str).unwrap_or(absent);
    let declared = |m: &str| spoken.has_modes() || m == "form";
    let chosen = match e {
        Elicitation::Form(a) => (mode == "form").then_some(a),
        Elicitation::ByMode(modes) => modes.get(mode).filter(|_| declared(mode)),
    };
    let any = || match e {
        Elicitation::Form(a) => Some(a),
        Elicitation::ByMode(modes) => modes.values().next(),
    };
    let Some(answer) = chosen.or_else(|| seams.answers_any_mode().then(any).flatten()) else {
        return Handled::Error(
            INVALID_PARAMS,
            format!("this client did not declare the elicitation mode {mode:?}"),
        );
    };
    let mut result = answer.result.clone();
    let accepted = result.get("action").and_then(Value::as_str) == Some("accept");
    if accepted && seams.fills_defaults(answer.defaults) {
        fill_defaults(&mut result, params);
    }
    seams.elicitation_answered(result.get("content"));
    Handled::Result(result, answer.delay)
}

/// Puts into `result.content` every `default` of `params.requestedSchema.properties` whose
/// member the content leaves out.
fn fill_defaults(result: &mut Value, params: &Value) {
    let Some(properties) = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    else {
        return;
    };
    let Value::Object(result) = result else {
        return;
    };
    let content = result
        .entry("content")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(content) = content else {
        return;
    };
    for (name, schema) in properties {
        if let Some(default) = schema.get("default") {
            content
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

/// One answer: an object, whose `delay_ms` (and, for an elicitation, `defaults`) are taken
/// out of the result.
fn answer(value: &Value, at: &str, own: Own) -> Result<Answer, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "{at}: expected an object (the result to answer with), got {value}"
        ));
    };
    let mut result = map.clone();
    let delay = match result.remove("delay_ms") {
        None => None,
        Some(ms) => match ms.as_u64() {
            Some(ms) => Some(Duration::from_millis(ms)),
            None => {
                return Err(format!(
                    "{at}.delay_ms: expected a non-negative integer (milliseconds), got {ms}"
                ));
            }
        },
    };
    let mut flag = |name: &str, allowed: bool| match (allowed, result.remove(name)) {
        (false, removed) => {
            if let Some(v) = removed {
                result.insert(name.to_owned(), v);
            }
            Ok(false)
        }
        (true, None) => Ok(false),
        (true, Some(Value::Bool(b))) => Ok(b),
        (true, Some(other)) => Err(format!("{at}.{name}: expected a boolean, got {other}")),
    };
    let defaults = flag("defaults", own == Own::Elicitation)?;
    let browser = flag("browser", own == Own::Elicitation)?;
    let rejected = flag("rejected", own == Own::Sampling)?;
    Ok(Answer {
        result: Value::Object(result),
        delay,
        defaults,
        browser,
        rejected,
    })
}

/// An elicitation handler: one answer (it has `action`), or answers by mode.
fn elicitation(value: &Value, at: &str) -> Result<Elicitation, String> {
    let Value::Object(map) = value else {
        return Err(format!("{at}: expected an object, got {value}"));
    };
    if map.contains_key("action") {
        return Ok(Elicitation::Form(answer(value, at, Own::Elicitation)?));
    }
    if map.is_empty() {
        return Err(format!(
            "{at}: expected an answer with \"action\", or answers by mode (\"form\", \"url\")"
        ));
    }
    let mut modes = BTreeMap::new();
    for (mode, answer_value) in map {
        if !matches!(mode.as_str(), "form" | "url") {
            return Err(format!(
                "{at}: {mode:?} is neither \"action\" nor a mode (\"form\", \"url\")"
            ));
        }
        modes.insert(
            mode.clone(),
            answer(answer_value, &format!("{at}.{mode}"), Own::Elicitation)?,
        );
    }
    Ok(Elicitation::ByMode(modes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handlers(v: Value) -> Handlers {
        let Value::Object(map) = v else { panic!() };
        Handlers::from_json(&map).unwrap()
    }

    const OLD: Spoken<'static> = Spoken {
        modern: false,
        version: "2025-06-18",
    };
    const NEW: Spoken<'static> = Spoken {
        modern: false,
        version: "2025-11-25",
    };
    const MODERN: Spoken<'static> = Spoken {
        modern: true,
        version: "",
    };

    #[test]
    fn capabilities_follow_the_handlers_and_the_revision() {
        assert_eq!(Handlers::new().capabilities(NEW), json!({}));
        let h = handlers(
            json!({"roots/list": {"roots": []}, "sampling/createMessage": {},
            "elicitation/create": {"action": "decline"}}),
        );
        assert_eq!(
            h.capabilities(NEW),
            json!({"roots": {"listChanged": true}, "sampling": {}, "elicitation": {"form": {}}})
        );
        assert_eq!(h.capabilities(OLD)["elicitation"], json!({}));
        assert_eq!(h.capabilities(MODERN)["roots"], json!({}));
        let by_mode = handlers(json!({"elicitation/create": {
            "form": {"action": "accept", "content": {}}, "url": {"action": "accept"}}}));
        assert_eq!(
            by_mode.capabilities(MODERN),
            json!({"elicitation": {"form": {}, "url": {}}})
        );
    }

    #[test]
    fn methods_served_as_tasks_are_declared_from_2025_11_25_and_need_a_handler() {
        let mut h = handlers(json!({"sampling/createMessage": {}, "roots/list": {"roots": []}}));
        let sampling = ["sampling/createMessage".to_owned()];
        assert!(h.serve_as_tasks(&["roots/list".to_owned()]).is_err());
        let e = h.serve_as_tasks(&["elicitation/create".to_owned()]);
        assert!(e.unwrap_err().contains("no answer in handlers"));
        h.serve_as_tasks(&sampling).unwrap();
        assert_eq!(
            h.capabilities(NEW)["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"sampling": {"createMessage": {}}}})
        );
        assert_eq!(h.capabilities(OLD).get("tasks"), None);
        assert_eq!(h.capabilities(MODERN).get("tasks"), None);
        let task = json!({"task": {}});
        assert!(h.as_task("sampling/createMessage", &task, NEW));
        assert!(!h.as_task("sampling/createMessage", &json!({}), NEW));
        assert!(!h.as_task("sampling/createMessage", &task, OLD));
        assert!(!h.as_task("roots/list", &task, NEW));
        assert!(!Handlers::new().serves_tasks(NEW));
    }

    #[test]
    fn bad_handlers_are_refused_with_where() {
        for (bad, says) in [
            (json!({"ping": {}}), "handlers[\"ping\"]"),
            (json!({"roots/list": []}), "expected an object"),
            (json!({"roots/list": {"delay_ms": -1}}), "delay_ms"),
            (json!({"elicitation/create": {}}), "action"),
            (json!({"elicitation/create": {"modal": {}}}), "\"modal\""),
            (
                json!({"elicitation/create": {"action": "accept", "defaults": 1}}),
                "defaults",
            ),
        ] {
            let Value::Object(map) = bad else { panic!() };
            let e = Handlers::from_json(&map).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn elicitations_are_answered_by_mode_with_defaults() {
        let ok = Seams::default();
        let h = handlers(json!({"elicitation/create": {
            "form": {"action": "accept", "content": {"name": "Ada"}, "defaults": true,
                     "delay_ms": 5}}}));
        let params = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "Bob"},
            "age": {"type": "integer", "default": 36},
            "tag": {"type": "string"}}}});
        let got = h.handle("elicitation/create", &params, &json!([]), NEW, &ok);
        assert_eq!(
            got,
            Handled::Result(
                json!({"action": "accept", "content": {"name": "Ada", "age": 36}}),
                Some(Duration::from_millis(5))
            )
        );
        #[cfg(feature = "defects")]
        {
            let plain = Seams::only("no-elicitation-defaults");
            let Handled::Result(r, _) =
                h.handle("elicitation/create", &params, &json!([]), NEW, &plain)
            else {
                panic!()
            };
            assert_eq!(r["content"], json!({"name": "Ada"}));
        }
        let url = json!({"mode": "url", "url": "https://example.invalid", "message": "m"});
        let refused = h.handle("elicitation/create", &url, &json!([]), NEW, &ok);
        assert!(matches!(refused, Handled::Error(-32602, _)), "{refused:?}");
        #[cfg(feature = "defects")]
        {
            let lax = Seams::only("elicitation-any-mode");
            let answered = h.handle("elicitation/create", &url, &json!([]), NEW, &lax);
            assert!(matches!(answered, Handled::Result(..)));
        }
    }

    #[test]
    fn sampling_tools_rejection_and_tool_rules() {
        let ok = Seams::default();
        let tools = handlers(json!({"sampling/createMessage": {
            "role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "w", "input": {}}],
            "model": "m"}}));
        assert_eq!(tools.capabilities(NEW)["sampling"], json!({"tools": {}}));
        assert_eq!(tools.capabilities(MODERN)["sampling"], json!({"tools": {}}));
        assert_eq!(tools.capabilities(OLD)["sampling"], json!({}));
        let mixed = json!({"messages": [{"role": "user", "content": [
            {"type": "text", "text": "t"}, {"type": "tool_result", "toolUseId": "c", "content": []}]}]});
        let refused = tools.handle("sampling/createMessage", &mixed, &json!([]), NEW, &ok);
        assert!(matches!(refused, Handled::Error(-32602, _)), "{refused:?}");
        let rejecting = handlers(json!({"sampling/createMessage": {"rejected": true}}));
        assert_eq!(rejecting.capabilities(NEW)["sampling"], json!({}));
        let got = rejecting.handle("sampling/createMessage", &json!({}), &json!([]), NEW, &ok);
        assert_eq!(
            got,
            Handled::Error(-1, "User rejected sampling request".into())
        );
        let Value::Object(bad) = json!({"sampling/createMessage": {"rejected": "yes"}}) else {
            panic!()
        };
        assert!(Handlers::from_json(&bad).unwrap_err().contains("rejected"));
        // `browser` is an elicitation answer's own member only: elsewhere it is sent as given.
        let roots = handlers(json!({"roots/list": {"roots": [], "browser": true}}));
        assert_eq!(
            roots.roots,
            Some(Answer {
                result: json!({"roots": [], "browser": true}),
                delay: None,
                defaults: false,
                browser: false,
                rejected: false,
            })
        );
    }

    #[test]
    fn a_url_is_consented_only_by_a_url_answer_playing_the_browser() {
        let url = json!({"mode": "url", "url": "https://x.example/a?b#c", "message": "m"});
        let form = json!({"message": "m", "requestedSchema": {"type": "object"}});
        let playing = |action: &str| {
            handlers(json!({"elicitation/create": {
                "form": {"action": "accept", "content": {}},
                "url": {"action": action, "browser": true}}}))
        };
        let consented = Some(("https://x.example/a?b#c".to_owned(), true));
        assert_eq!(playing("accept").url_consent(&url, NEW), consented);
        assert_eq!(
            playing("decline").url_consent(&url, NEW).map(|c| c.1),
            Some(false)
        );
        assert_eq!(playing("accept").url_consent(&form, NEW), None);
        assert_eq!(playing("accept").url_consent(&url, OLD), None);
        let silent = handlers(json!({"elicitation/create": {"url": {"action": "accept"}}}));
        assert_eq!(silent.url_consent(&url, NEW), None);
        let answered = playing("accept").handle(
            "elicitation/create",
            &url,
            &json!([]),
            NEW,
            &Seams::default(),
        );
        assert_eq!(answered, Handled::Result(json!({"action": "accept"}), None));
    }

    #[test]
    fn roots_come_from_the_current_list() {
        let h = handlers(json!({"roots/list": {"roots": [{"uri": "file:///a"}]}}));
        assert_eq!(h.roots(), json!([{"uri": "file:///a"}]));
        let now = json!([{"uri": "file:///b"}]);
        let ok = Seams::default();
        assert_eq!(
            h.handle("roots/list", &json!(null), &now, NEW, &ok),
            Handled::Result(json!({"roots": now}), None)
        );
        #[cfg(feature = "defects")]
        {
            let empty = Seams::only("roots-answer-empty");
            assert_eq!(
                h.handle("roots/list", &json!(null), &now, NEW, &empty),
                Handled::Result(json!({"roots": []}), None)
            );
        }
        assert_eq!(
            Handlers::new().handle("roots/list", &json!(null), &now, NEW, &ok),
            Handled::Unhandled
        );
    }
}
