//! The result cache of the modern era: a cacheable result (`resultType` complete, `ttlMs` > 0)
//! is reused while fresh, so a repeated request costs no traffic.
//!
//! The key is the method plus the params without `_meta`, so a different cursor or uri never
//! hits another request's entry. An absent, zero or negative `ttlMs` means stale at once (not
//! stored). The cache belongs to one connection, which has one authorization context, so a
//! `private` entry is never served to another token. Results of multi round-trip retries are
//! never offered to it (see [`super::mrtr`]).

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::meta;
use crate::defects::Defects;

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

    /// Keeps `result` for its `ttlMs`, if it has a positive one (under `ignore-ttl`: forever,
    /// whatever it says; under `no-cache`: never).
    pub(crate) fn store(&mut self, key: String, result: &Value, defects: &Defects) {
        if defects.no_cache {
            return;
        }
        if defects.ignore_ttl {
            self.entries.insert(key, (None, result.clone()));
            return;
        }
        let Some(ttl) = ttl_ms(result) else {
            return;
        };
        // A `ttlMs` too large for the clock (u64::MAX, 1e300) is "fresh for as long as we run".
        let expires = Instant::now().checked_add(Duration::from_millis(ttl));
        self.entries.insert(key, (expires, result.clone()));
    }

    /// Keeps `result` with no expiry (only the `cache-mrtr-retry` defect does this).
    pub(crate) fn store_forever(&mut self, key: String, result: &Value) {
        self.entries.insert(key, (None, result.clone()));
    }
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
        let d = Defects::default();
        let mut c = ResultCache::default();
        for (i, ttl) in [json!(0), json!(-5), json!("60000"), json!(null)]
            .into_iter()
            .enumerate()
        {
            let k = format!("k{i}");
            c.store(k.clone(), &json!({"ttlMs": ttl}), &d);
            assert_eq!(c.fresh(&k), None);
        }
        c.store("none".into(), &json!({}), &d);
        assert_eq!(c.fresh("none"), None);
        c.store("yes".into(), &json!({"ttlMs": 60000, "tools": []}), &d);
        assert_eq!(c.fresh("yes"), Some(json!({"ttlMs": 60000, "tools": []})));
        for huge in [json!(u64::MAX), json!(1e300)] {
            c.store("huge".into(), &json!({"ttlMs": huge}), &d);
            assert!(
                c.fresh("huge").is_some(),
                "a huge ttlMs is kept, without a panic"
            );
        }
    }

    #[test]
    fn entries_expire() {
        let mut c = ResultCache::default();
        c.store("k".into(), &json!({"ttlMs": 40}), &Defects::default());
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
    fn defects_change_what_is_kept() {
        let mut c = ResultCache::default();
        let d = Defects {
            ignore_ttl: true,
            ..Defects::default()
        };
        c.store("k".into(), &json!({"ttlMs": 0}), &d);
        assert!(c.fresh("k").is_some());
        let d = Defects {
            no_cache: true,
            ..Defects::default()
        };
        c.store("n".into(), &json!({"ttlMs": 5000}), &d);
        assert!(c.fresh("n").is_none());
    }
}
