//! The seam of the era's steps (see `seams/`): the hooks the probe, the fallback, the version
//! retry and the result cache ask. Each default is the correct decision; the probe's
//! [`Verdict`] lives here, as only these decisions speak of it.

use serde_json::Value;

use super::cache::Lifetime;
use super::mrtr::Shape;
use super::{Connected, Discovery};
use crate::error::Error;
use crate::session::Session;

/// What an error answer to the probe means.
pub(crate) enum Verdict {
    /// A modern server that does not speak our version: try another.
    OtherVersion(Error),
    /// A legacy server: fall back to `initialize`.
    Legacy,
    /// Give up with this error.
    Fail(Error),
}

/// The decisions of the era's steps.
pub(crate) trait EraSeams {
    /// The origin whose era is cached; correct: the connection's.
    fn era_cache_origin<'a>(&self, origin: Option<&'a str>) -> Option<&'a str> {
        origin
    }

    /// What to connect with instead of the `server/discover` probe; correct: `None`, probe.
    async fn instead_of_probe(
        &self,
        _session: &Session,
        _dual: bool,
    ) -> Option<Result<Connected, Error>> {
        None
    }

    /// What an error answer to the probe means; correct: `judge(error, dual)`.
    fn judge_probe(
        &self,
        error: Error,
        dual: bool,
        judge: impl FnOnce(Error, bool) -> Verdict,
    ) -> Verdict {
        judge(error, dual)
    }

    /// Runs after a `DiscoverResult` was accepted; correct: nothing.
    async fn after_discover(&self, _session: &Session) {}

    /// The client capabilities a modern request declares in `_meta`; correct: `capabilities`.
    fn client_capabilities(&self, capabilities: &Value, _found: &Discovery) -> Value {
        capabilities.clone()
    }

    /// The version to retry with after -32022 (`tried`: every version sent so far); correct:
    /// `choose`'s.
    fn retry_version(
        &self,
        error: &Error,
        tried: &[String],
        choose: impl FnOnce(&Error, &[String]) -> Option<String>,
    ) -> Option<String> {
        choose(error, tried)
    }

    /// How long the result of `method` may be reused; correct: `lifetime`.
    fn cache_lifetime(
        &self,
        _method: &str,
        _retry: bool,
        _result: &Value,
        lifetime: Lifetime,
    ) -> Lifetime {
        lifetime
    }

    /// The cache key of a request of `method`; correct: `key` (method and params).
    fn cache_key(&self, _method: &str, key: String) -> String {
        key
    }

    /// Whether a result whose scope is `private` (or unsaid) is kept to the authorization
    /// context it was fetched in; correct: `private`.
    fn cache_private(&self, private: bool) -> bool {
        private
    }

    /// Whether a cursor the server refused drops the cached pages; correct: yes.
    fn discard_pages_on_invalid_cursor(&self) -> bool {
        true
    }

    /// Reads a modern result's `resultType`; correct: `shape`'s reading.
    fn result_shape(
        &self,
        result: Value,
        shape: impl FnOnce(Value) -> Result<Shape, Error>,
    ) -> Result<Shape, Error> {
        shape(result)
    }
}

#[cfg(not(feature = "defects"))]
impl EraSeams for crate::seams::Seams {}
