//! The client's requests in the modern era: fresh `_meta` on every request, a retry with
//! another version on -32022, `tools/list` pages through the result cache, and `tools/call`
//! as a multi round-trip loop (new id and fresh `_meta` per round, nothing cached).

use std::future::{Future, pending};
use std::pin::{Pin, pin};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Value, json};

use super::cache::{self, ResultCache};
use super::discover::{self, no_common_version};
use super::mrtr::{self, InputHandler, MAX_ROUNDS, Shape};
use super::{Discovery, UNSUPPORTED_PROTOCOL_VERSION, meta};
use crate::client::Client;
use crate::error::{Error, ErrorKind};
use crate::tools::{self, ToolOutput};

/// Per-connection state of the modern era.
pub(crate) struct Modern {
    version: Mutex<String>,
    cache: Mutex<ResultCache>,
    /// The last `requestState` seen (kept only for the `state-on-fresh-request` defect).
    last_state: Mutex<Option<Value>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Modern {
    pub(crate) fn new(found: &Discovery) -> Self {
        Modern {
            version: Mutex::new(found.version.clone()),
            cache: Mutex::new(ResultCache::default()),
            last_state: Mutex::new(None),
        }
    }
}

impl Client {
    /// Sends `method` with `params` plus fresh `_meta`; on -32022 switches to a version both
    /// sides speak and sends it once more (new id). Returns the result and the request's id.
    /// `reuse` is an id to send the first attempt with (only the `reuse-id-on-retry` defect).
    async fn modern_request<C: Future<Output = ()>>(
        &self,
        modern: &Modern,
        method: &str,
        params: &Value,
        capabilities: &Value,
        mut cancel: Pin<&mut C>,
        mut reuse: Option<i64>,
    ) -> Result<(Value, i64), Error> {
        let defects = &self.session.options().defects;
        let mut tried: Vec<String> = Vec::new();
        loop {
            let version = lock(&modern.version).clone();
            let full = meta::with_meta(params.clone(), &version, capabilities, defects);
            let in_flight = match reuse.take() {
                Some(id) => self.session.start_as(id, method, full)?,
                None => self.session.start(method, full)?,
            };
            let id = in_flight.id();
            let error = match in_flight.wait(cancel.as_mut()).await {
                Ok(result) => return Ok((result, id)),
                Err(e) if e.code == Some(UNSUPPORTED_PROTOCOL_VERSION) => e,
                Err(e) => return Err(e),
            };
            tried.push(version);
            let next = match defects.no_version_retry {
                true => None,
                false => discover::next_version(&error, &tried, defects),
            };
            let Some(next) = next else {
                return Err(no_common_version(error));
            };
            discover::use_version(&self.session, &next);
            *lock(&modern.version) = next;
        }
    }

    /// One `tools/list` page: from the cache while fresh, else requested (and cached by its
    /// `ttlMs`). `input_required` is not a valid answer to `tools/list`.
    pub(crate) async fn modern_tools_page(
        &self,
        modern: &Modern,
        params: Value,
    ) -> Result<Value, Error> {
        let defects = &self.session.options().defects;
        let key = cache::key("tools/list", &params);
        if let Some(page) = lock(&modern.cache).fresh(&key) {
            return Ok(page);
        }
        let cancel = pin!(pending::<()>());
        let (result, _) = self
            .modern_request(modern, "tools/list", &params, &json!({}), cancel, None)
            .await?;
        let (Shape::Complete(page) | Shape::InputRequired(page)) =
            mrtr::shape(result, "tools/list", false, defects)?;
        lock(&modern.cache).store(key, &page, defects);
        Ok(page)
    }

    /// `tools/call` with multi round-trips: each `input_required` result is answered by a retry
    /// of the original params plus `inputResponses` and the echoed `requestState`, with a new
    /// id and fresh `_meta`, until a complete result (at most [`MAX_ROUNDS`] rounds).
    pub(crate) async fn modern_call(
        &self,
        modern: &Modern,
        params: Value,
        input: &InputHandler,
        cancel: impl Future<Output = ()>,
    ) -> Result<ToolOutput, Error> {
        let defects = &self.session.options().defects;
        let capabilities = input.capabilities();
        let key = cache::key("tools/call", &params);
        if defects.cache_mrtr_retry {
            if let Some(result) = lock(&modern.cache).fresh(&key) {
                return tools::call_output(result, defects);
            }
        }
        let mut cancel = pin!(cancel);
        let mut request = params.clone();
        let mut reuse = None;
        for round in 0..MAX_ROUNDS {
            if defects.state_on_fresh_request && request.get("requestState").is_none() {
                if let (Some(state), Some(obj)) =
                    (lock(&modern.last_state).clone(), request.as_object_mut())
                {
                    obj.insert("requestState".into(), state);
                }
            }
            let (result, id) = self
                .modern_request(
                    modern,
                    "tools/call",
                    &request,
                    &capabilities,
                    cancel.as_mut(),
                    reuse,
                )
                .await?;
            match mrtr::shape(result, "tools/call", true, defects)? {
                Shape::Complete(result) => {
                    if round > 0 && defects.cache_mrtr_retry {
                        lock(&modern.cache).store_forever(key, &result);
                    }
                    return tools::call_output(result, defects);
                }
                Shape::InputRequired(result) => {
                    request = mrtr::retry_params(&params, &result, input, defects)?;
                    if let Some(state) = result.get("requestState") {
                        if defects.state_on_fresh_request {
                            *lock(&modern.last_state) = Some(state.clone());
                        }
                    }
                    reuse = defects.reuse_id_on_retry.then_some(id);
                }
            }
        }
        Err(Error::invalid(format!(
            "the server still asked for input after {MAX_ROUNDS} rounds of tools/call"
        )))
    }

    /// Sends `server/discover` and returns the `DiscoverResult` as received. Only a modern-era
    /// connection can: in the legacy era this is `unsupported_op`.
    pub async fn discover(&self) -> Result<Value, Error> {
        let Some(modern) = &self.modern else {
            return Err(Error::new(
                ErrorKind::UnsupportedOp,
                "server/discover is a modern-era request; this connection speaks the legacy era",
            ));
        };
        let defects = &self.session.options().defects;
        let cancel = pin!(pending::<()>());
        let (result, _) = self
            .modern_request(
                modern,
                "server/discover",
                &json!({}),
                &json!({}),
                cancel,
                None,
            )
            .await?;
        let (Shape::Complete(result) | Shape::InputRequired(result)) =
            mrtr::shape(result, "server/discover", false, defects)?;
        Ok(result)
    }
}
