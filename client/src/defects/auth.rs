//! Seam: authorization. How the OAuth client discovers, registers, authorizes, checks the
//! redirect, uses and refreshes tokens, and where the token goes.
//!
//! Defects here: `auth-no-pkce`, `auth-pkce-without-s256`, `auth-ignore-state`,
//! `auth-ignore-iss`, `auth-no-resource`, `auth-token-to-any-origin`, `auth-token-in-url`,
//! `auth-no-issuer-check`, `auth-all-scopes`, `auth-no-step-up`, `auth-step-up-forever`,
//! `auth-no-refresh`, `auth-keep-old-refresh`, `auth-shared-credentials`, `auth-prefer-dcr`,
//! `auth-allow-http`, `auth-ignore-resource-metadata`, `auth-root-only-discovery`,
//! `auth-no-401-retry`, `auth-any-prm-resource`, `auth-resource-from-url`,
//! `auth-step-up-challenged-only`, `auth-secret-in-form`, `auth-token-auth-both`,
//! `auth-fallback-only-on-404`, `auth-no-application-type`, `auth-no-refresh-grant`,
//! `auth-offline-access-always`, `auth-needs-refresh-token`, `auth-iss-required`,
//! `auth-scopes-within-supported`, `auth-refresh-per-request`, `auth-cc-ignored`,
//! `auth-cc-aud-resource` (the DPoP ones are listed in `dpop.rs`).
//!
//! The flags live in [`AuthDefects`], one field of [`Defects`], so this seam adds its names
//! without touching the core list.

use reqwest::Url;

use super::Defects;
use crate::seams::AuthDefects;
use crate::seams::wire::Pkce as PkceChoice;
use crate::seams::wire::TokenMethod;

impl AuthDefects {
    /// The names this seam accepts.
    pub(crate) const NAMES: [&'static str; 38] = [
        "auth-no-pkce",
        "auth-pkce-without-s256",
        "auth-ignore-state",
        "auth-ignore-iss",
        "auth-no-resource",
        "auth-token-to-any-origin",
        "auth-token-in-url",
        "auth-no-issuer-check",
        "auth-all-scopes",
        "auth-no-step-up",
        "auth-step-up-forever",
        "auth-no-refresh",
        "auth-keep-old-refresh",
        "auth-shared-credentials",
        "auth-prefer-dcr",
        "auth-allow-http",
        "auth-ignore-resource-metadata",
        "auth-root-only-discovery",
        "auth-no-401-retry",
        "auth-any-prm-resource",
        "auth-resource-from-url",
        "auth-step-up-challenged-only",
        "auth-secret-in-form",
        "auth-token-auth-both",
        "auth-fallback-only-on-404",
        "auth-no-application-type",
        "auth-no-refresh-grant",
        "auth-offline-access-always",
        "auth-needs-refresh-token",
        "auth-iss-required",
        "auth-scopes-within-supported",
        "auth-refresh-per-request",
        "auth-cc-ignored",
        "auth-cc-aud-resource",
        "auth-dpop-no-proof",
        "auth-dpop-no-ath",
        "auth-dpop-jti-reused",
        "auth-dpop-ignores-nonce",
    ];

    /// Switches on `name`; false if it is not one of this seam's.
    pub(crate) fn enable(&mut self, name: &str) -> bool {
        let flag = match name {
            "auth-no-pkce" => &mut self.no_pkce,
            "auth-pkce-without-s256" => &mut self.pkce_without_s256,
            "auth-ignore-state" => &mut self.ignore_state,
            "auth-ignore-iss" => &mut self.ignore_iss,
            "auth-no-resource" => &mut self.no_resource,
            "auth-token-to-any-origin" => &mut self.token_to_any_origin,
            "auth-token-in-url" => &mut self.token_in_url,
            "auth-no-issuer-check" => &mut self.no_issuer_check,
            "auth-all-scopes" => &mut self.all_scopes,
            "auth-no-step-up" => &mut self.no_step_up,
            "auth-step-up-forever" => &mut self.step_up_forever,
            "auth-no-refresh" => &mut self.no_refresh,
            "auth-keep-old-refresh" => &mut self.keep_old_refresh,
            "auth-shared-credentials" => &mut self.shared_credentials,
            "auth-prefer-dcr" => &mut self.prefer_dcr,
            "auth-allow-http" => &mut self.allow_http,
            "auth-ignore-resource-metadata" => &mut self.ignore_resource_metadata,
            "auth-root-only-discovery" => &mut self.root_only_discovery,
            "auth-no-401-retry" => &mut self.no_401_retry,
            "auth-any-prm-resource" => &mut self.any_prm_resource,
            "auth-resource-from-url" => &mut self.resource_from_url,
            "auth-step-up-challenged-only" => &mut self.step_up_challenged_only,
            "auth-secret-in-form" => &mut self.secret_in_form,
            "auth-token-auth-both" => &mut self.token_auth_both,
            "auth-fallback-only-on-404" => &mut self.fallback_only_on_404,
            "auth-no-application-type" => &mut self.no_application_type,
            "auth-no-refresh-grant" => &mut self.no_refresh_grant,
            "auth-offline-access-always" => &mut self.offline_access_always,
            "auth-needs-refresh-token" => &mut self.needs_refresh_token,
            "auth-iss-required" => &mut self.iss_required,
            "auth-scopes-within-supported" => &mut self.scopes_within_supported,
            "auth-refresh-per-request" => &mut self.refresh_per_request,
            "auth-cc-ignored" => &mut self.cc_ignored,
            "auth-cc-aud-resource" => &mut self.cc_aud_resource,
            "auth-dpop-no-proof" => &mut self.dpop_no_proof,
            "auth-dpop-no-ath" => &mut self.dpop_no_ath,
            "auth-dpop-jti-reused" => &mut self.dpop_jti_reused,
            "auth-dpop-ignores-nonce" => &mut self.dpop_ignores_nonce,
            _ => return false,
        };
        *flag = true;
        true
    }
}

impl Defects {
    /// Whether an authorization URL of this scheme may be used; correct: `https` only.
    pub(crate) fn auth_scheme_allowed(&self, correct: bool, url: &Url) -> bool {
        correct || (self.auth.allow_http && url.scheme() == "http")
    }

    /// Whether the access token goes with requests other than the MCP server's; correct: never.
    pub(crate) fn auth_token_to_any_origin(&self) -> bool {
        self.auth.token_to_any_origin
    }

    /// The MCP client's redirect policy; correct: `policy`. Under `auth-token-to-any-origin`
    /// no redirect is followed by the HTTP library (which would drop the token on another
    /// origin): [`Defects::auth_redirect_with_token`] follows it with the token instead.
    pub(crate) fn auth_redirects(
        &self,
        policy: reqwest::redirect::Policy,
    ) -> reqwest::redirect::Policy {
        match self.auth.token_to_any_origin {
            true => reqwest::redirect::Policy::none(),
            false => policy,
        }
    }

    /// Where an MCP request that carried a token is sent again, token included, after a
    /// redirect answered it; correct: nowhere (redirects are the redirect policy's, and the
    /// token never leaves the server's origin).
    pub(crate) fn auth_redirect_with_token(
        &self,
        status: u16,
        location: Option<&str>,
        from: &Url,
    ) -> Option<Url> {
        if !self.auth.token_to_any_origin || !(300..400).contains(&status) {
            return None;
        }
        from.join(location?).ok()
    }

    /// Whether a discovered URL skips the destination policy; correct: never. Under
    /// `auth-allow-http`, an `http://` URL does (a client that accepts plain HTTP endpoints
    /// checks nothing about them).
    pub(crate) fn auth_skips_destination_check(&self, url: &Url) -> bool {
        self.auth.allow_http && url.scheme() == "http"
    }

    /// Adds the token to an MCP request's URL; correct: the URL unchanged.
    pub(crate) fn auth_token_in_url(&self, url: &mut Url, token: &str) {
        if self.auth.token_in_url {
            url.query_pairs_mut().append_pair("access_token", token);
        }
    }

    /// Whether the challenge's `resource_metadata` is used; correct: yes.
    pub(crate) fn auth_uses_resource_metadata(&self) -> bool {
        !self.auth.ignore_resource_metadata
    }

    /// Whether every well-known location is tried in order; correct: yes.
    pub(crate) fn auth_full_discovery(&self) -> bool {
        !self.auth.root_only_discovery
    }

    /// Whether metadata is used; correct: only when its issuer is identical (`correct`).
    pub(crate) fn auth_issuer_accepted(&self, correct: bool) -> bool {
        correct || self.auth.no_issuer_check
    }

    /// Whether dynamic registration goes first; correct: no (pre-registered, then CIMD).
    pub(crate) fn auth_prefers_dcr(&self) -> bool {
        self.auth.prefer_dcr
    }

    /// Whether registered credentials are looked up by issuer; correct: yes.
    pub(crate) fn auth_credentials_by_issuer(&self) -> bool {
        !self.auth.shared_credentials
    }

    /// PKCE with a server; correct: `correct` (S256, or a refusal when not advertised).
    pub(crate) fn auth_pkce(
        &self,
        correct: Result<PkceChoice, String>,
        advertised: Option<&[String]>,
    ) -> Result<PkceChoice, String> {
        if self.auth.no_pkce {
            return correct.map(|_| PkceChoice::Off);
        }
        match correct {
            Err(_) if self.auth.pkce_without_s256 => {
                let plain = advertised.is_some_and(|l| l.iter().any(|m| m == "plain"));
                Ok(if plain {
                    PkceChoice::Plain
                } else {
                    PkceChoice::Off
                })
            }
            other => other,
        }
    }

    /// The scopes asked for; correct: `correct` (the selection strategy or the step-up set).
    pub(crate) fn auth_scopes(
        &self,
        correct: Vec<String>,
        supported: Option<&[String]>,
    ) -> Vec<String> {
        match (self.auth.all_scopes, supported) {
            (true, Some(all)) => all.to_vec(),
            _ if self.auth.scopes_within_supported => {
                let all = supported.unwrap_or_default();
                correct.into_iter().filter(|s| all.contains(s)).collect()
            }
            _ => correct,
        }
    }

    /// The `resource` parameter; correct: the canonical resource.
    pub(crate) fn auth_resource<'a>(&self, resource: &'a str) -> Option<&'a str> {
        (!self.auth.no_resource).then_some(resource)
    }

    /// Whether a well-known PRM document may name any parent of the server; correct: no, the
    /// identifier its URL was built from.
    pub(crate) fn auth_any_prm_resource(&self) -> bool {
        self.auth.any_prm_resource
    }

    /// The identifier sent as `resource`; correct: `published`, PRM's `resource` (the
    /// defect: the server's canonical URI).
    pub(crate) fn auth_prm_resource<'a>(&self, published: &'a str, canonical: &'a str) -> &'a str {
        match self.auth.resource_from_url {
            true => canonical,
            false => published,
        }
    }

    /// Whether a step-up keeps the scopes already held besides the challenged ones; correct:
    /// yes (an increased set).
    pub(crate) fn auth_step_up_keeps_scopes(&self) -> bool {
        !self.auth.step_up_challenged_only
    }

    /// How a client registered for `client_secret_basic` or `client_secret_post` sends its
    /// secret; correct: `correct`, as registered, never both.
    pub(crate) fn auth_token_method(&self, correct: TokenMethod) -> TokenMethod {
        match correct.basic {
            true if self.auth.secret_in_form => TokenMethod {
                basic: false,
                form: true,
            },
            _ if self.auth.token_auth_both => TokenMethod {
                basic: true,
                form: true,
            },
            _ => correct,
        }
    }

    /// Whether `state` is compared; correct: yes.
    pub(crate) fn auth_checks_state(&self) -> bool {
        !self.auth.ignore_state
    }

    /// Whether RFC 9207 `iss` is checked; correct: yes.
    pub(crate) fn auth_checks_iss(&self) -> bool {
        !self.auth.ignore_iss
    }

    /// Whether 403 insufficient_scope starts a step-up; correct: yes.
    pub(crate) fn auth_steps_up(&self) -> bool {
        !self.auth.no_step_up
    }

    /// Whether step-up ignores the one-retry limit; correct: no.
    pub(crate) fn auth_step_up_unbounded(&self) -> bool {
        self.auth.step_up_forever
    }

    /// Whether a held refresh token is used; correct: yes.
    pub(crate) fn auth_refreshes(&self) -> bool {
        !self.auth.no_refresh
    }

    /// The refresh token kept after a rotation; correct: the `new` one.
    pub(crate) fn auth_rotated_refresh<S: Clone>(&self, new: S, old: &S) -> S {
        match self.auth.keep_old_refresh {
            true => old.clone(),
            false => new,
        }
    }

    /// Whether a request is sent again once a 401 brought a token; correct: yes.
    pub(crate) fn auth_retries_after_401(&self) -> bool {
        !self.auth.no_401_retry
    }

    /// Whether discovery tries the next location after `status`; correct: yes.
    pub(crate) fn auth_tries_next_location(&self, status: u16) -> bool {
        !self.auth.fallback_only_on_404 || status == 404
    }

    /// The registration body; correct: `correct`.
    pub(crate) fn auth_registration(&self, mut correct: serde_json::Value) -> serde_json::Value {
        if let Some(body) = correct.as_object_mut() {
            if self.auth.no_application_type {
                body.remove("application_type");
            }
            if self.auth.no_refresh_grant {
                body.insert(
                    "grant_types".into(),
                    serde_json::json!(["authorization_code"]),
                );
            }
        }
        correct
    }

    /// Whether `offline_access` is added; correct: `listed`.
    pub(crate) fn auth_adds_offline_access(&self, listed: bool) -> bool {
        listed || self.auth.offline_access_always
    }

    /// Whether a token answer is used; correct: yes.
    pub(crate) fn auth_token_answer_usable(&self, has_refresh: bool) -> bool {
        has_refresh || !self.auth.needs_refresh_token
    }

    /// Whether a newer token another request obtained is used; correct: yes.
    pub(crate) fn auth_shares_new_token(&self) -> bool {
        !self.auth.refresh_per_request
    }

    /// Whether a machine client's credentials are used; correct: yes.
    pub(crate) fn auth_uses_client_credentials(&self) -> bool {
        !self.auth.cc_ignored
    }

    /// A JWT assertion's `aud`; correct: `correct` (the issuer).
    pub(crate) fn auth_assertion_audience<'a>(
        &self,
        correct: &'a str,
        resource: &'a str,
    ) -> &'a str {
        match self.auth.cc_aud_resource {
            true => resource,
            false => correct,
        }
    }

    /// Whether a redirect without `iss` is rejected; correct: `advertised`.
    pub(crate) fn auth_iss_required(&self, advertised: bool) -> bool {
        advertised || self.auth.iss_required
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Secret;

    #[test]
    fn every_auth_name_switches_its_own_flag() {
        for name in AuthDefects::NAMES {
            let mut d = AuthDefects::default();
            assert!(d.enable(name), "{name}");
            assert_ne!(d, AuthDefects::default(), "{name}");
            for other in AuthDefects::NAMES.iter().filter(|n| **n != name) {
                let mut alone = AuthDefects::default();
                alone.enable(other);
                assert_ne!(alone, d, "{name} and {other}");
            }
            assert!(
                !Defects::NAMES.contains(&name),
                "{name} is also a core defect"
            );
        }
        assert!(!AuthDefects::default().enable("no-such-defect"));
    }

    #[test]
    fn a_correct_client_keeps_every_decision() {
        let d = Defects::default();
        let http = Url::parse("http://127.0.0.1/x").unwrap();
        assert!(!d.auth_scheme_allowed(false, &http));
        assert!(!d.auth_token_to_any_origin());
        assert!(
            d.auth_redirect_with_token(307, Some("https://b/x"), &http)
                .is_none()
        );
        assert!(!d.auth_skips_destination_check(&http));
        let mut url = Url::parse("https://h/mcp").unwrap();
        d.auth_token_in_url(&mut url, "t");
        assert_eq!(url.as_str(), "https://h/mcp");
        assert!(d.auth_uses_resource_metadata() && d.auth_full_discovery());
        assert!(!d.auth_issuer_accepted(false) && d.auth_issuer_accepted(true));
        assert!(!d.auth_prefers_dcr() && d.auth_credentials_by_issuer());
        assert_eq!(
            d.auth_pkce(Err("no".into()), Some(&["plain".into()])),
            Err("no".into())
        );
        assert_eq!(
            d.auth_pkce(Ok(PkceChoice::S256), None),
            Ok(PkceChoice::S256)
        );
        let all = ["a".to_owned(), "b".to_owned()];
        assert_eq!(d.auth_scopes(vec!["a".into()], Some(&all)), ["a"]);
        assert_eq!(d.auth_resource("r"), Some("r"));
        assert!(d.auth_checks_state() && d.auth_checks_iss() && d.auth_steps_up());
        assert!(!d.auth_step_up_unbounded() && d.auth_refreshes() && d.auth_retries_after_401());
        assert!(!d.auth_any_prm_resource() && d.auth_step_up_keeps_scopes());
        let basic = TokenMethod {
            basic: true,
            form: false,
        };
        assert_eq!(d.auth_token_method(basic), basic);
        assert_eq!(
            d.auth_prm_resource("https://h", "https://h/mcp"),
            "https://h"
        );
        let (new, old) = (Secret::new("n"), Secret::new("o"));
        assert_eq!(d.auth_rotated_refresh(new.clone(), &old), new);
        assert!(d.auth_tries_next_location(403) && d.auth_tries_next_location(404));
        let body = serde_json::json!({"application_type": "native", "grant_types": ["x"]});
        assert_eq!(d.auth_registration(body.clone()), body);
        assert!(!d.auth_adds_offline_access(false) && d.auth_adds_offline_access(true));
        assert!(d.auth_token_answer_usable(false));
        assert!(!d.auth_iss_required(false) && d.auth_iss_required(true));
        assert!(d.auth_shares_new_token() && d.auth_uses_client_credentials());
        assert_eq!(
            d.auth_assertion_audience("https://as", "https://mcp"),
            "https://as"
        );
    }

    #[test]
    fn each_defect_bends_its_decision() {
        let on = |name| {
            let mut d = Defects::default();
            assert!(d.enable(name));
            d
        };
        let http = Url::parse("http://127.0.0.1/x").unwrap();
        assert!(on("auth-allow-http").auth_scheme_allowed(false, &http));
        assert!(on("auth-allow-http").auth_skips_destination_check(&http));
        let any = on("auth-token-to-any-origin");
        let to = any.auth_redirect_with_token(307, Some("https://b/x"), &http);
        assert_eq!(to.unwrap().as_str(), "https://b/x");
        assert!(
            any.auth_redirect_with_token(200, Some("https://b/x"), &http)
                .is_none()
        );
        let mut url = Url::parse("https://h/mcp").unwrap();
        on("auth-token-in-url").auth_token_in_url(&mut url, "t");
        assert_eq!(url.as_str(), "https://h/mcp?access_token=t");
        assert_eq!(
            on("auth-no-pkce").auth_pkce(Ok(PkceChoice::S256), None),
            Ok(PkceChoice::Off)
        );
        let lax = on("auth-pkce-without-s256");
        assert_eq!(
            lax.auth_pkce(Err("x".into()), Some(&["plain".into()])),
            Ok(PkceChoice::Plain)
        );
        assert_eq!(lax.auth_pkce(Err("x".into()), None), Ok(PkceChoice::Off));
        let all = ["a".to_owned(), "b".to_owned()];
        assert_eq!(
            on("auth-all-scopes").auth_scopes(vec!["a".into()], Some(&all)),
            ["a", "b"]
        );
        assert_eq!(on("auth-no-resource").auth_resource("r"), None);
        assert!(on("auth-any-prm-resource").auth_any_prm_resource());
        assert_eq!(
            on("auth-resource-from-url").auth_prm_resource("https://h", "https://h/mcp"),
            "https://h/mcp"
        );
        assert!(!on("auth-step-up-challenged-only").auth_step_up_keeps_scopes());
        let form = TokenMethod {
            basic: false,
            form: true,
        };
        let basic = TokenMethod {
            basic: true,
            form: false,
        };
        assert_eq!(on("auth-secret-in-form").auth_token_method(basic), form);
        assert_eq!(on("auth-secret-in-form").auth_token_method(form), form);
        let both = TokenMethod {
            basic: true,
            form: true,
        };
        assert_eq!(on("auth-token-auth-both").auth_token_method(basic), both);
        assert_eq!(on("auth-token-auth-both").auth_token_method(form), both);
        let (new, old) = (Secret::new("n"), Secret::new("o"));
        assert_eq!(
            on("auth-keep-old-refresh").auth_rotated_refresh(new, &old),
            old
        );
        let only_404 = on("auth-fallback-only-on-404");
        assert!(!only_404.auth_tries_next_location(403) && only_404.auth_tries_next_location(404));
        let body = serde_json::json!({"application_type": "native", "grant_types": ["a", "r"]});
        let shown = on("auth-no-application-type").auth_registration(body.clone());
        assert!(shown.get("application_type").is_none());
        let shown = on("auth-no-refresh-grant").auth_registration(body);
        assert_eq!(
            shown["grant_types"],
            serde_json::json!(["authorization_code"])
        );
        assert!(on("auth-offline-access-always").auth_adds_offline_access(false));
        assert!(!on("auth-needs-refresh-token").auth_token_answer_usable(false));
        assert!(on("auth-iss-required").auth_iss_required(false));
        assert!(!on("auth-refresh-per-request").auth_shares_new_token());
        assert!(!on("auth-cc-ignored").auth_uses_client_credentials());
        let aud = on("auth-cc-aud-resource").auth_assertion_audience("https://as", "https://mcp");
        assert_eq!(aud, "https://mcp");
        let within = on("auth-scopes-within-supported");
        assert!(within.auth_scopes(vec!["x".into()], Some(&all)).is_empty());
        assert_eq!(within.auth_scopes(vec!["a".into()], Some(&all)), ["a"]);
    }
}
