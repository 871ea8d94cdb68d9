//! What the client remembers between authorizations: tokens keyed by the resource (the MCP
//! server's canonical URI) and registered client credentials keyed by the authorization
//! server's `issuer`. Shared by every clone of the [`AuthOptions`](super::AuthOptions) it
//! belongs to, so a reconnect to the same server reuses its token and a second server that
//! shares an authorization server reuses the client registration, never the token.
//!
//! Held in memory only; its `Debug` shows counts, never a value.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use reqwest::Url;
use reqwest::header::HeaderValue;
use tokio::time::Instant;

use super::Secret;
use super::registration::Credentials;

/// The tokens held for one resource, and what refreshing them needs.
#[derive(Debug, Clone)]
pub(crate) struct Tokens {
    pub(crate) access: Secret,
    /// `Bearer …`, marked sensitive.
    pub(crate) header: HeaderValue,
    pub(crate) refresh: Option<Secret>,
    pub(crate) expires_at: Option<Instant>,
    /// The scopes asked for when these tokens were obtained (step-up adds to them).
    pub(crate) scopes: Vec<String>,
    pub(crate) token_endpoint: Url,
    /// The authorization server's `issuer`, as its metadata named it (a request's span
    /// carries it).
    pub(crate) issuer: Option<String>,
    pub(crate) credentials: Credentials,
    /// The RFC 8707 `resource` they were obtained for (a refresh names it again).
    pub(crate) resource: String,
    /// Which access token this is, set by the store: every token it keeps gets a new one
    /// (see [`AuthStore::generation`]).
    pub(crate) generation: u64,
}

impl Tokens {
    /// The tokens of a token endpoint's answer, obtained just now for `scopes` and the
    /// RFC 8707 `resource`; the store gives them their generation when it keeps them.
    pub(crate) fn from_answer(
        answer: super::flow::TokenAnswer,
        scopes: Vec<String>,
        token_endpoint: Url,
        credentials: Credentials,
        resource: String,
    ) -> Tokens {
        Tokens {
            access: answer.access,
            header: answer.header,
            refresh: answer.refresh,
            expires_at: answer.expires_in.map(|d| Instant::now() + d),
            scopes,
            token_endpoint,
            issuer: None,
            credentials,
            resource,
            generation: 0,
        }
    }

    /// Whether the server said the access token has expired by now.
    pub(crate) fn expired(&self) -> bool {
        self.expires_at.is_some_and(|at| Instant::now() >= at)
    }
}

#[derive(Default)]
struct Inner {
    tokens: HashMap<String, Tokens>,
    clients: HashMap<String, Credentials>,
    /// The issuer the caller's pre-registered credentials were first used with.
    pre_registered_issuer: Option<String>,
    /// The last access token generation handed out.
    generations: u64,
}

/// Tokens by resource and client credentials by issuer (see the module doc).
#[derive(Clone, Default)]
pub struct AuthStore(Arc<Mutex<Inner>>);

impl AuthStore {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn tokens(&self, resource: &str) -> Option<Tokens> {
        self.lock().tokens.get(resource).cloned()
    }

    /// Keeps `tokens` for `resource`, as a new generation (a new access token).
    pub(crate) fn keep_tokens(&self, resource: &str, mut tokens: Tokens) {
        let mut inner = self.lock();
        inner.generations += 1;
        tokens.generation = inner.generations;
        inner.tokens.insert(resource.to_owned(), tokens);
    }

    /// Which access token is held for `resource`: a number that changes with every new
    /// access token (a refresh, a new authorization), so a cache can tell authorization
    /// contexts apart without keeping the token. `None`: no token held.
    pub(crate) fn generation(&self, resource: &str) -> Option<u64> {
        self.lock().tokens.get(resource).map(|t| t.generation)
    }

    pub(crate) fn forget_tokens(&self, resource: &str) {
        self.lock().tokens.remove(resource);
    }

    /// The credentials registered with `issuer`; with `by_issuer` false (a defect), any
    /// credentials registered anywhere.
    pub(crate) fn client(&self, issuer: &str, by_issuer: bool) -> Option<Credentials> {
        let inner = self.lock();
        match by_issuer {
            true => inner.clients.get(issuer).cloned(),
            false => inner.clients.values().next().cloned(),
        }
    }

    /// Whether the caller's pre-registered credentials may be used with `issuer`: they belong
    /// to the first authorization server they were used with (the caller does not say which
    /// one it registered with), so another one never sees them. With `by_issuer` false (a
    /// defect), any.
    pub(crate) fn pre_registered_for(&self, issuer: &str, by_issuer: bool) -> bool {
        let mut inner = self.lock();
        let bound = inner
            .pre_registered_issuer
            .get_or_insert_with(|| issuer.to_owned());
        !by_issuer || bound == issuer
    }

    pub(crate) fn keep_client(&self, issuer: &str, credentials: Credentials) {
        self.lock().clients.insert(issuer.to_owned(), credentials);
    }
}

impl fmt::Debug for AuthStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.lock();
        f.debug_struct("AuthStore")
            .field("tokens", &inner.tokens.len())
            .field("clients", &inner.clients.len())
            .finish()
    }
}

impl PartialEq for AuthStore {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for AuthStore {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::registration::Method;

    fn creds(id: &str) -> Credentials {
        Credentials {
            client_id: id.into(),
            secret: Some(Secret::new("cl-s3cret")),
            method: Method::Basic,
        }
    }

    #[test]
    fn credentials_are_keyed_by_issuer() {
        let store = AuthStore::default();
        store.keep_client("https://as1", creds("one"));
        assert_eq!(store.client("https://as1", true), Some(creds("one")));
        assert_eq!(store.client("https://as2", true), None);
        // The defect finds any server's credentials.
        assert_eq!(store.client("https://as2", false), Some(creds("one")));
        // Pre-registered credentials belong to the first server they meet.
        assert!(store.pre_registered_for("https://as1", true));
        assert!(store.pre_registered_for("https://as1", true));
        assert!(!store.pre_registered_for("https://as2", true));
        assert!(store.pre_registered_for("https://as2", false));
        let shown = format!("{store:?}");
        assert!(
            !shown.contains("s3cret") && !shown.contains("one"),
            "{shown}"
        );
        assert_eq!(store, store.clone());
        assert_ne!(store, AuthStore::default());
    }
}
