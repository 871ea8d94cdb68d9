//! Seam: the result cache. How long a modern result may be reused.
//!
//! Defects here: `no-cache`, `ignore-ttl`, `cache-mrtr-retry`.

use super::Defects;
use crate::era::cache::Lifetime;

impl Defects {
    /// How long the result of `method` may be reused (`retry`: it answers a multi round-trip
    /// retry); correct: `lifetime`.
    pub(crate) fn cache_lifetime(&self, method: &str, retry: bool, lifetime: Lifetime) -> Lifetime {
        match (method, retry) {
            _ if self.no_cache => Lifetime::Never,
            ("tools/list", false) if self.ignore_ttl => Lifetime::Forever,
            ("tools/call", true) if self.cache_mrtr_retry => Lifetime::Forever,
            _ => lifetime,
        }
    }
}
