//! Seam: the result cache. How long a modern result may be reused.
//!
//! Defects here: `no-cache`, `ignore-ttl`, `cache-mrtr-retry`, `cache-key-method-only`,
//! `keep-pages-on-invalid-cursor`, `task-cache-get` (a `tasks/get` result kept by its `ttlMs`,
//! as if it were cacheable), `share-private-cache` (a `private` result served whatever the
//! access token, as if one connection were one authorization context).

use serde_json::Value;

use super::Defects;
use crate::era::cache::{Lifetime, by_ttl, cacheable};

impl Defects {
    /// How long the result of `method` may be reused (`retry`: it answers a multi round-trip
    /// retry); correct: `lifetime`.
    pub(crate) fn cache_lifetime(
        &self,
        method: &str,
        retry: bool,
        result: &Value,
        lifetime: Lifetime,
    ) -> Lifetime {
        match retry {
            _ if self.no_cache => Lifetime::Never,
            false if method == "tasks/get" && self.task_cache_get => by_ttl(result),
            false if cacheable(method) && self.ignore_ttl => Lifetime::Forever,
            true if self.cache_mrtr_retry => Lifetime::Forever,
            _ => lifetime,
        }
    }

    /// The cache key of a request of `method`; correct: `key` (method and params).
    pub(crate) fn cache_key(&self, method: &str, key: String) -> String {
        match self.cache_key_method_only {
            true => method.to_owned(),
            false => key,
        }
    }

    /// Whether a `private` (or unscoped) result is kept to the authorization context it was
    /// fetched in; correct: `private`.
    pub(crate) fn cache_private(&self, private: bool) -> bool {
        private && !self.share_private_cache
    }

    /// Whether a cursor the server refused (-32602) drops every cached page of its listing;
    /// correct: yes.
    pub(crate) fn discard_pages_on_invalid_cursor(&self) -> bool {
        !self.keep_pages_on_invalid_cursor
    }
}
