//! The result cache of the modern era: a cacheable result (`resultType` complete, `ttlMs` > 0)
//! is reused while fresh, so a repeated request costs no traffic.
//!
//! The key is the method plus the params without `_meta`, so a different cursor or uri never
//! hits another request's entry. An absent, zero or negative `ttlMs` means stale at once (not
//! stored). A connection's authorization context changes with its access token (a refresh, a
//! new authorization), so every entry remembers the [`Context`] it was fetched in: a
//! `cacheScope: "private"` entry is served to that context alone (caching.mdx, Cache Scope
//! Field), a `public` one to any. Results of multi round-trip retries are never kept, and of
//! all results only listing pages and `resources/read` results are (see [`lifetime`]).

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

/// The authorization context a request is sent in: which access token the connection holds
/// (a generation number, never the token), `None` without one.
pub(crate) type Context = Option<u64>;

/// Whether `result` may be served in any authorization context: only when its `cacheScope` is
/// `"public"`. `"private"`, and an absent or unknown scope (no text says what they allow, so
/// the safe reading), keep it to the context it was fetched in.
pub(crate) fn public(result: &Value) -> bool {
    result.get("cacheScope").and_then(Value::as_str) == Some("public")
}

/// One kept result.
struct Entry {
    /// When it goes stale; `None`: never.
    expires: Option<Instant>,
    result: Value,
    /// The only context it is served to; `None`: any (a public result).
    owner: Option<Context>,
}

/// Fresh results by request key.
#[derive(Default)]
pub(crate) struct ResultCache {
    entries: HashMap<String, Entry>,
}

/// The cache key of a request: its method and its params without `_meta`.
pub(crate) fn key(method: &str, params: &Value) -> String {
    format!("{method} {}", meta::without_meta(params))
}

impl ResultCache {
    /// The cached result for `key` while it is fresh and may be served in `context`; a stale
    /// entry is dropped, one of another context kept (the next answer replaces it).
    pub(crate) fn fresh(&mut self, key: &str, context: Context) -> Option<Value> {
        let entry = self.entries.get(key)?;
        if entry.expires.is_some_and(|at| Instant::now() >= at) {
            self.entries.remove(key);
            return None;
        }
        match entry.owner {
            Some(owner) if owner != context => None,
            _ => Some(entry.result.clone()),
        }
    }

    /// Drops every entry of `method` (all pages of a listing).
    pub(crate) fn discard(&mut self, method: &str) {
        let prefix = format!("{method} ");
        self.entries
            .retain(|key, _| key != method && !key.starts_with(&prefix));
    }

    /// Keeps `result` for `lifetime`, for any context (`owner` `None`) or for one.
    pub(crate) fn store(
        &mut self,
        key: String,
        result: &Value,
        lifetime: Lifetime,
        owner: Option<Context>,
    ) {
        let expires = match lifetime {
            Lifetime::Never => return,
            // A `ttlMs` too large for the clock (u64::MAX, 1e300) is "fresh for as long as we
            // run".
            Lifetime::For(ttl) => Instant::now().checked_add(ttl),
            Lifetime::Forever => None,
        };
        let result = result.clone();
        self.entries.insert(
            key,
            Entry {
                expires,
                result,
                owner,
            },
        );
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
            c.store(k.clone(), &r, page(r.clone()), None);
            assert_eq!(c.fresh(&k, None), None);
        }
        c.store("none".into(), &json!({}), page(json!({})), None);
        assert_eq!(c.fresh("none", None), None);
        let r = json!({"ttlMs": 60000, "tools": []});
        c.store("yes".into(), &r, page(r.clone()), None);
        assert_eq!(
            c.fresh("yes", None),
            Some(json!({"ttlMs": 60000, "tools": []}))
        );
        for huge in [json!(u64::MAX), json!(1e300)] {
            let r = json!({"ttlMs": huge});
            c.store("huge".into(), &r, page(r.clone()), None);
            assert!(
                c.fresh("huge", None).is_some(),
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
            None,
        );
        assert!(c.fresh("k", None).is_some());
        std::thread::sleep(Duration::from_millis(50));
        assert!(c.fresh("k", None).is_none());
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
        c.store("f".into(), &r, Lifetime::Forever, None);
        assert!(c.fresh("f", None).is_some());
    }

    #[test]
    fn private_entries_stay_with_their_token() {
        let mut c = ResultCache::default();
        let ttl = Lifetime::For(Duration::from_secs(60));
        let private = json!({"cacheScope": "private", "ttlMs": 60000});
        let public = json!({"cacheScope": "public", "ttlMs": 60000});
        assert!(!super::public(&private) && super::public(&public));
        assert!(
            !super::public(&json!({"ttlMs": 1})),
            "absent scope: private"
        );
        c.store("p".into(), &private, ttl, Some(Some(1)));
        c.store("q".into(), &public, ttl, None);
        assert!(c.fresh("p", Some(1)).is_some());
        assert!(c.fresh("p", Some(2)).is_none(), "another access token");
        assert!(c.fresh("p", None).is_none(), "no token at all");
        assert!(c.fresh("q", Some(2)).is_some() && c.fresh("q", None).is_some());
    }
}
