//! The modern era's operations over a session: fresh `_meta` on every request, a retry with
//! another version on -32022, listing pages (`tools/list`, `resources/list`, …) through the
//! result cache, and `tools/call`, `resources/read` and `prompts/get` as a multi round-trip
//! loop (new id and fresh `_meta` per round, no round's result reused), where a `tools/call`
//! that accepts a task may end with one (the tasks extension), and the tasks extension's own
//! requests.

use std::future::{Future, pending};
use std::pin::{Pin, pin};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Value, json};

use super::cache::{self, ResultCache};
use super::discover::{next_version, no_common_version, use_version};
use super::mrtr::{self, InputHandler, MAX_ROUNDS, Shape};
use super::seams::EraSeams;
use super::{Discovery, UNSUPPORTED_PROTOCOL_VERSION, meta};
use crate::error::Error;
use crate::jsonrpc::INVALID_PARAMS;
use crate::session::Session;
use crate::tasks::drive::{Called, Created, Drive, TaskEra};
use crate::tasks::{self, seams::TaskSeams};
use crate::telemetry::spans::Note;

/// A connection in the modern era: what `server/discover` found, the version in use, and the
/// result cache.
pub(crate) struct Modern {
    found: Discovery,
    version: Mutex<String>,
    cache: Mutex<ResultCache>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Modern {
    pub(crate) fn new(found: Discovery) -> Self {
        Modern {
            version: Mutex::new(found.version.clone()),
            found,
            cache: Mutex::new(ResultCache::default()),
        }
    }

    /// Drops every cached result of `method` (the server is thought to have changed it).
    pub(crate) fn forget(&self, method: &str) {
        lock(&self.cache).discard(method);
    }

    /// `params` with the `_meta` of a request sent now (version in use, the client's
    /// capabilities), for a request sent outside this type (`subscriptions/listen`).
    pub(crate) fn with_meta(&self, session: &Session, params: Value) -> Value {
        let declared = session.router().listener().modern_capabilities(None);
        let capabilities = session.seams().client_capabilities(&declared, &self.found);
        meta::with_meta(params, &lock(&self.version), &capabilities)
    }

    /// What `server/discover` found when connecting.
    pub(crate) fn found(&self) -> &Discovery {
        &self.found
    }

    /// One page of the listing `method`: a [`Modern::plain`] request (from the cache while
    /// fresh, else requested and offered to the cache). `input_required` is not a valid answer
    /// to a listing.
    pub(crate) async fn list_page(
        &self,
        session: &Session,
        method: &str,
        params: Value,
    ) -> Result<Value, Error> {
        let cursor = params.get("cursor").is_some();
        match self.plain(session, method, params).await {
            Err(e) if e.code == Some(INVALID_PARAMS) && cursor => {
                // A cursor the server refuses makes every page of the listing suspect: the
                // next listing starts over from the server (caching.mdx, Interaction with
                // Pagination).
                if session.seams().discard_pages_on_invalid_cursor() {
                    lock(&self.cache).discard(method);
                }
                Err(e)
            }
            page => page,
        }
    }

    /// A request of one round trip (a listing page, `completion/complete`, and under a defect
    /// `ping` or `logging/setLevel`), through the cache like every modern result; returned as
    /// received.
    pub(crate) async fn plain(
        &self,
        session: &Session,
        method: &str,
        params: Value,
    ) -> Result<Value, Error> {
        self.one_round(session, method, params, false).await
    }

    /// A request of the tasks extension (`tasks/get`, `tasks/update`, `tasks/cancel`),
    /// declaring the extension; its result as received. Like every modern result it is
    /// offered to the cache, whose rules keep none of these (a task's state is never reused).
    pub(crate) async fn task_request(
        &self,
        session: &Session,
        method: &str,
        params: Value,
    ) -> Result<Value, Error> {
        self.one_round(session, method, params, true).await
    }

    /// One round trip through the cache, declaring the tasks extension when `extension`.
    async fn one_round(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        extension: bool,
    ) -> Result<Value, Error> {
        let key = match self.fresh_or_key(session, method, &params) {
            Ok(result) => return Ok(result),
            Err(key) => key,
        };
        let cancel = pin!(pending::<()>());
        let mut declared = session.router().listener().modern_capabilities(None);
        if extension {
            declared = tasks::with_extension(declared);
        }
        let capabilities = session.seams().client_capabilities(&declared, &self.found);
        let (shape, _) = self
            .request(session, method, &params, &capabilities, MISS, cancel)
            .await?;
        let (Shape::Complete(result) | Shape::InputRequired(result) | Shape::Task(result)) = shape;
        self.offer(session, key, method, &result, false);
        Ok(result)
    }

    /// The cached result of `method` with `params` while it is fresh and may be served in the
    /// authorization context of now, else what its answer is to be offered to the cache
    /// under (the key, the context).
    fn fresh_or_key(
        &self,
        session: &Session,
        method: &str,
        params: &Value,
    ) -> Result<Value, Pending> {
        let key = session
            .seams()
            .cache_key(method, cache::key(method, params));
        let context = session.transport().auth_context();
        match lock(&self.cache).fresh(&key, context) {
            Some(result) => {
                session.tracing().cache_hit(method, params);
                Ok(result)
            }
            None => Err(Pending { key, context }),
        }
    }

    /// `method` (`tools/call`, `resources/read`, `prompts/get`) with multi round-trips, as
    /// [`Modern::call`] without accepting a task. A `CreateTaskResult` is then invalid; only
    /// a deliberate defect takes one, and drives it to its end.
    pub(crate) async fn call_with_input(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        input: &InputHandler,
        cancel: impl Future<Output = ()>,
    ) -> Result<Value, Error> {
        let mut cancel = pin!(cancel);
        match self
            .call(session, method, params, input, false, cancel.as_mut())
            .await?
        {
            Called::Done(result) => Ok(result),
            Called::Task(created) => {
                let drive = Drive {
                    session,
                    era: TaskEra::Modern(self),
                    call_id: created.call_id,
                    input,
                    deadline: None,
                };
                drive.run(&created.task, cancel).await
            }
        }
    }

    /// `method` (`tools/call`, `resources/read`, `prompts/get`) with multi round-trips: each
    /// `input_required` result is answered by a retry of the original params plus
    /// `inputResponses` and the echoed `requestState`, with a new id and fresh `_meta`, until
    /// a complete result (at most [`MAX_ROUNDS`] rounds), which is returned as received. Like
    /// every modern result it is offered to the cache, whose rules say what is kept (see
    /// [`cache::lifetime`]; never a retry's result). With `accept_task` the requests declare
    /// the tasks extension, and a `CreateTaskResult` ends the call as [`Called::Task`].
    pub(crate) async fn call<C: Future<Output = ()>>(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        input: &InputHandler,
        accept_task: bool,
        mut cancel: Pin<&mut C>,
    ) -> Result<Called, Error> {
        let key = match self.fresh_or_key(session, method, &params) {
            Ok(result) => return Ok(Called::Done(result)),
            Err(key) => key,
        };
        let listener = session.router().listener();
        let declared = listener.modern_capabilities(Some(&input.capabilities()));
        let declared = match accept_task {
            true => tasks::with_extension(declared),
            false => declared,
        };
        let capabilities = session.seams().client_capabilities(&declared, &self.found);
        let mut request = params.clone();
        for round in 0..MAX_ROUNDS {
            let note = Note {
                mrtr_round: (round > 0).then_some(round),
                cache: (round == 0).then_some("miss"),
                ..Note::default()
            };
            let (shape, call_id) = self
                .request(
                    session,
                    method,
                    &request,
                    &capabilities,
                    note,
                    cancel.as_mut(),
                )
                .await?;
            match shape {
                Shape::Complete(result) => {
                    self.offer(session, key, method, &result, round > 0);
                    return Ok(Called::Done(result));
                }
                Shape::InputRequired(result) => {
                    request = mrtr::retry_params(&params, &result, input, listener)?;
                }
                Shape::Task(result) => {
                    let task = tasks::modern_task(&result);
                    return Ok(Called::Task(Created { task, call_id }));
                }
            }
        }
        Err(Error::invalid(format!(
            "the server still asked for input after {MAX_ROUNDS} rounds of {method}"
        )))
    }

    /// Sends `server/discover` and returns the `DiscoverResult` as received.
    pub(crate) async fn discover(&self, session: &Session) -> Result<Value, Error> {
        let cancel = pin!(pending::<()>());
        let declared = session.router().listener().modern_capabilities(None);
        let (shape, _) = self
            .request(
                session,
                "server/discover",
                &json!({}),
                &declared,
                Note::default(),
                cancel,
            )
            .await?;
        let (Shape::Complete(result) | Shape::InputRequired(result) | Shape::Task(result)) = shape;
        Ok(result)
    }

    /// Sends `method` with `params` plus fresh `_meta`; on -32022 switches to a version both
    /// sides speak and sends it again (new id). Returns the result by its `resultType`, which
    /// only `tools/call`, `resources/read` and `prompts/get` may give as `input_required`, and
    /// only a `tools/call` declaring the tasks extension as `task`; with the id it answered.
    async fn request<C: Future<Output = ()>>(
        &self,
        session: &Session,
        method: &str,
        params: &Value,
        capabilities: &Value,
        mut note: Note,
        mut cancel: Pin<&mut C>,
    ) -> Result<(Shape, i64), Error> {
        let seams = session.seams();
        let may_require_input = mrtr::may_require_input(method);
        let extension = format!("/extensions/{}", tasks::EXTENSION.replace('/', "~1"));
        let declared = capabilities.pointer(&extension).is_some();
        let may_task = seams.may_create_task(method, tasks::may_create_task(method, declared));
        let mut tried: Vec<String> = Vec::new();
        loop {
            let version = lock(&self.version).clone();
            let full = meta::with_meta(params.clone(), &version, capabilities);
            let in_flight = session.start_noted(method, full, note, |_| {})?;
            let id = in_flight.id();
            let error = match in_flight.wait(cancel.as_mut()).await {
                Ok(result) => {
                    let shape = |r| mrtr::shape(r, method, may_require_input, may_task);
                    return seams.result_shape(result, shape).map(|shape| (shape, id));
                }
                Err(e) if e.code == Some(UNSUPPORTED_PROTOCOL_VERSION) => e,
                Err(e) => return Err(e),
            };
            tried.push(version);
            note = Note {
                retry_of: Some((id, "unsupported protocol version")),
                ..Note::default()
            };
            let Some(next) = seams.retry_version(&error, &tried, next_version) else {
                return Err(no_common_version(error));
            };
            use_version(session, &next);
            *lock(&self.version) = next;
        }
    }

    /// Offers a complete result to the cache, which keeps it for as long as it may be reused,
    /// and for a private one only in the context it was asked in. When the access token
    /// changed while the request ran (a refresh after a 401), which one it was answered under
    /// is unknown: the result is not kept.
    fn offer(&self, session: &Session, at: Pending, method: &str, result: &Value, retry: bool) {
        let seams = session.seams();
        let lifetime = cache::lifetime(method, result, retry);
        let lifetime = seams.cache_lifetime(method, retry, result, lifetime);
        let owner = match seams.cache_private(!cache::public(result)) {
            true if session.transport().auth_context() != at.context => return,
            true => Some(at.context),
            false => None,
        };
        lock(&self.cache).store(at.key, result, lifetime, owner);
    }
}

/// The note on a request sent after the cache had no fresh answer.
const MISS: Note = Note {
    retry_of: None,
    mrtr_round: None,
    cache: Some("miss"),
};

/// What an answer not found in the cache is offered to it under.
struct Pending {
    key: String,
    /// The authorization context the request was asked in.
    context: cache::Context,
}
