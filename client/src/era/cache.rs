//! The result cache of the modern era: a cacheable result (`resultType` complete, `ttlMs` > 0)
//! is reused while fresh, so a repeated request costs no traffic.
//!
//! The key is the method plus the params without `_meta`, so a different cursor or uri never
//! hits another request's entry. An absent, zero or negative `ttlMs` means stale at once (not
//! stored). The cache belongs to one connection, which has one authorization context, so a
//! `private` entry is never served to another token. Results of multi round-trip retries are
//! never kept, and of all results only listing pages and `resources/read` results are (see
//! [`lifetime`]).

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::meta;
use crate::listing::ListKind;

/// How long a result may be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifetime {
    /// Not at all: it is stale at once.
    Never,
    /// For this long from now.
    For(Duration),
    /// For as long as the connection lasts (only a defect keeps a result so).
    #[cfg_attr(not(feature = "defects"), allow(dead_code))]
    Forever,
}

/// How long the result of `method` may be reused (`retry`: it answers a multi round-trip
/// retry): a page of a listing (`tools/list`, `resources/list`, `resources/templates/list`,
/// `prompts/list`) or a `resources/read` result for its positive `ttlMs` (the results
/// caching.mdx makes cacheable, `server/discover` aside: the `discover` step always asks);
/// nothing else, and never a retry's.
pub(crate) fn lifetime(method: &str, result: &Value, retry: bool) -> Lifetime {
    if retry || !cacheable(method) {
        return Lifetime::Never;
    }
    by_ttl(result)
}

/// Whether a result of `method` is ever kept: a listing page or a `resources/read` result.
pub(crate) fn cacheable(method: &str) -> bool {
    ListKind::is_listing(method) || method == "resources/read"
}

/// Fresh results by request key.
#[derive(Default)]
pub(crate) struct ResultCache {
    entries: HashMap<String, (Option<Instant>, Value)>,
}

/// The cache key of a request: its method and its params without `_meta`.
pub(crate) fn key(method: &str, params: &Value) -> String {
    format!("{method} {}", meta::without_meta(params))
}

impl ResultCache {
    /// The cached result for `key` while it is fresh; a stale entry is dropped.
    pub(crate) fn fresh(&mut self, key: &str) -> Option<Value> {
        let (expires, result) = self.entries.get(key)?;
        match expires {
            Some(at) if Instant::now() >= *at => {
                self.entries.remove(key);
                None
            }
            _ => Some(result.clone()),
        }
    }

    /// Drops every entry of `method` (all pages of a listing).
    pub(crate) fn discard(&mut self, method: &str) {
        let prefix = format!("{method} ");
        self.entries
            .retain(|key, _| key != method && !key.starts_with(&prefix));
    }

    /// Keeps `result` for `lifetime`.
    pub(crate) fn store(&mut self, key: String, result: &Value, lifetime: Lifetime) {
        let expires = match lifetime {
            Lifetime::Never => return,
            // A `ttlMs` too large for the clock (u64::MAX, 1e300) is "fresh for as long as we
            // run".
            Lifetime::For(ttl) => Instant::now().checked_add(ttl),
            Lifetime::Forever => None,
        };
        self.entries.insert(key, (expires, result.clone()));
    }
}

/// How long a result may be kept by its `ttlMs` alone, whatever its method.
pub(crate) fn by_ttl(result: &Value) -> Lifetime {
    ttl_ms(result).map_or(Lifetime::Never, |ms| {
        Lifetime::For(Duration::from_millis(ms))
    })
}

/// A positive `ttlMs`; absent, zero, negative or not a number means "do not keep".
fn ttl_ms(result: &Value) -> Option<u64> {
    let ttl = result.get("ttlMs")?;
    let ms = match (ttl.as_u64(), ttl.as_f64()) {
        (Some(ms), _) => ms,
        (None, Some(f)) if f >= 1.0 => f as u64,
        _ => return None,
    };
    (ms > 0).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_positive_ttls_are_kept() {
        let mut c = ResultCache::default();
        let page = |ttl| lifetime("tools/list", &ttl, false);
        for (i, ttl) in [json!(0), json!(-5), json!("60000"), json!(null)]
            .into_iter()
            .enumerate()
        {
            let k = format!("k{i}");
            let r = json!({"ttlMs": ttl});
            c.store(k.clone(), &r, page(r.clone()));
            assert_eq!(c.fresh(&k), None);
        }
        c.store("none".into(), &json!({}), page(json!({})));
        assert_eq!(c.fresh("none"), None);
        let r = json!({"ttlMs": 60000, "tools": []});
        c.store("yes".into(), &r, page(r.clone()));
        assert_eq!(c.fresh("yes"), Some(json!({"ttlMs": 60000, "tools": []})));
        for huge in [json!(u64::MAX), json!(1e300)] {
            let r = json!({"ttlMs": huge});
            c.store("huge".into(), &r, page(r.clone()));
            assert!(
                c.fresh("huge").is_some(),
                "a huge ttlMs is kept, without a panic"
            );
        }
    }

    #[test]
    fn entries_expire() {
        let mut c = ResultCache::default();
        c.store(
            "k".into(),
            &json!({}),
            Lifetime::For(Duration::from_millis(40)),
        );
        assert!(c.fresh("k").is_some());
        std::thread::sleep(Duration::from_millis(50));
        assert!(c.fresh("k").is_none());
    }

    #[test]
    fn keys_ignore_meta_but_not_params() {
        let a = key("tools/list", &json!({"cursor":"1","_meta":{"v":1}}));
        let b = key("tools/list", &json!({"cursor":"1","_meta":{"v":2}}));
        let c = key("tools/list", &json!({"cursor":"2"}));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(
            key("resources/list", &json!({})),
            key("tools/list", &json!({}))
        );
    }

    #[test]
    fn only_list_pages_are_kept_and_never_a_retry() {
        let r = json!({"ttlMs": 5000});
        assert_eq!(
            lifetime("tools/list", &r, false),
            Lifetime::For(Duration::from_secs(5))
        );
        assert_eq!(lifetime("tools/list", &r, true), Lifetime::Never);
        assert_eq!(lifetime("tools/call", &r, false), Lifetime::Never);
        for method in [
            "resources/list",
            "resources/templates/list",
            "prompts/list",
            "resources/read",
        ] {
            assert_eq!(
                lifetime(method, &r, false),
                Lifetime::For(Duration::from_secs(5))
            );
        }
        for method in [
            "prompts/get",
            "completion/complete",
            "server/discover",
            "tasks/get",
        ] {
            assert_eq!(lifetime(method, &r, false), Lifetime::Never);
        }
        let mut c = ResultCache::default();
        c.store("f".into(), &r, Lifetime::Forever);
        assert!(c.fresh("f").is_some());
    }
}
