//! DPoP (RFC 9449, the MCP DPoP extension): proofs of possession the client signs per
//! request with a key of its own. The token endpoint wants a proof on every token request
//! and binds what it issues to the proof's key (its RFC 7638 thumbprint, `cnf.jkt`); the MCP
//! endpoint wants the token under the `DPoP` scheme with a proof by that key naming the
//! token's hash (`ath`). Either may first demand a server nonce (`use_dpop_nonce` with a
//! `DPoP-Nonce` header). A proof is shown in the transcript only by its verdict
//! (`[dpop proof: valid]`); ring (already the tree's crypto) verifies ES256 and hashes.

use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::digest::{SHA256, digest};
use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};
use serde_json::{Value, json};

use super::grant::Answer;
use super::state::State;
use super::{Auth, Role};

/// The request header that carries a proof.
pub const HEADER: &str = "dpop";

/// How far a proof's `iat` may be off the fake's clock, in seconds.
const SKEW: i64 = 300;

/// What a proof that verified says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// The thumbprint of its key (RFC 7638, base64url SHA-256).
    pub jkt: String,
    /// Its unique id.
    pub jti: String,
    /// The nonce it carries, if any.
    pub nonce: Option<String>,
    /// The access token hash it carries, if any.
    pub ath: Option<String>,
}

/// What a request must match: its method, the URLs it may name as `htu` (its target without
/// query or fragment), the time now (seconds since the epoch).
pub struct Expected<'a> {
    /// The HTTP method.
    pub htm: &'a str,
    /// The acceptable `htu` values.
    pub htu: &'a [String],
    /// Now.
    pub now: i64,
}

/// base64url(SHA-256(`value`)): a token's `ath`, a key's thumbprint.
pub fn hash(value: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(digest(&SHA256, value).as_ref())
}

/// Verifies the syntax and signature of one proof (RFC 9449 §4.2, §4.3 steps 1-11 except
/// the nonce, the `ath` and the `jti` replay, which depend on the endpoint and the trial).
pub fn verify(proof: &str, expected: &Expected<'_>) -> Result<Proof, String> {
    let parts: Vec<&str> = proof.split('.').collect();
    let [header_part, payload_part, signature_part] = parts.as_slice() else {
        return Err("not a JWT".into());
    };
    let decode = |part: &str, what: &str| {
        URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| format!("{what} not base64url"))
    };
    let object = |bytes: Vec<u8>, what: &str| match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        _ => Err(format!("{what} not a JSON object")),
    };
    let header = object(decode(header_part, "header")?, "header")?;
    if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
        return Err("typ not dpop+jwt".into());
    }
    if header.get("alg").and_then(Value::as_str) != Some("ES256") {
        return Err("alg not ES256".into());
    }
    let jwk = header.get("jwk").ok_or("no jwk")?;
    if jwk.get("d").is_some() {
        return Err("jwk has a private part".into());
    }
    let coordinate = |name: &str| -> Result<String, String> {
        let text = jwk
            .get(name)
            .and_then(Value::as_str)
            .ok_or("jwk not EC P-256")?;
        match URL_SAFE_NO_PAD.decode(text) {
            Ok(bytes) if bytes.len() == 32 => Ok(text.to_owned()),
            _ => Err("jwk not EC P-256".into()),
        }
    };
    if jwk.get("kty").and_then(Value::as_str) != Some("EC")
        || jwk.get("crv").and_then(Value::as_str) != Some("P-256")
    {
        return Err("jwk not EC P-256".into());
    }
    let (x, y) = (coordinate("x")?, coordinate("y")?);
    let mut point = vec![4u8];
    point.extend(URL_SAFE_NO_PAD.decode(&x).unwrap_or_default());
    point.extend(URL_SAFE_NO_PAD.decode(&y).unwrap_or_default());
    let signature = decode(signature_part, "signature")?;
    let signed = format!("{header_part}.{payload_part}");
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
        .verify(signed.as_bytes(), &signature)
        .map_err(|_| "signature does not verify with its jwk")?;
    let claims = object(decode(payload_part, "payload")?, "payload")?;
    let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
    let jti = text("jti").filter(|j| !j.is_empty()).ok_or("no jti")?;
    if text("htm").as_deref() != Some(expected.htm) {
        return Err(format!("htm not {}", expected.htm));
    }
    let htu = text("htu").ok_or("no htu")?;
    let bare = htu.split(['?', '#']).next().unwrap_or_default();
    if !expected.htu.iter().any(|u| u == bare) {
        return Err("htu not this endpoint".into());
    }
    match claims.get("iat").and_then(Value::as_i64) {
        Some(iat) if (iat - expected.now).abs() <= SKEW => {}
        Some(_) => return Err("iat not recent".into()),
        None => return Err("no iat".into()),
    }
    let canonical = json!({"crv": "P-256", "kty": "EC", "x": x, "y": y}).to_string();
    Ok(Proof {
        jkt: hash(canonical.as_bytes()),
        jti,
        nonce: text("nonce"),
        ath: text("ath"),
    })
}

/// Why a proof is refused, and the OAuth error that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `invalid_dpop_proof` or `use_dpop_nonce` (RFC 9449 §12.2).
    pub error: &'static str,
    /// For the description and the label.
    pub why: String,
}

impl Refusal {
    fn invalid(why: impl Into<String>) -> Refusal {
        Refusal {
            error: "invalid_dpop_proof",
            why: why.into(),
        }
    }
}

/// The transcript's label of a proof's verdict.
pub fn label(verdict: &Result<Proof, Refusal>) -> String {
    match verdict {
        Ok(proof) if proof.nonce.is_some() => "[dpop proof: valid, nonce]".to_owned(),
        Ok(_) => "[dpop proof: valid]".to_owned(),
        Err(r) => format!("[dpop proof: refused: {}]", r.why),
    }
}

/// The one `DPoP` header of a request (two or more, or none, is no proof: RFC 9449 §4.3).
fn proof_of(headers: &HeaderMap) -> Result<&str, Refusal> {
    let mut all = headers.get_all(HEADER).iter();
    match (all.next(), all.next()) {
        (Some(value), None) => value.to_str().map_err(|_| Refusal::invalid("not text")),
        (None, _) => Err(Refusal::invalid("none")),
        _ => Err(Refusal::invalid("more than one")),
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Auth {
    /// Whether the case plays DPoP.
    pub fn dpop(&self) -> bool {
        self.script.dpop.is_some()
    }

    /// The nonce a side demands, if the case makes it demand one.
    fn nonce(&self, resource: bool) -> Option<&str> {
        let script = self.script.dpop.as_ref()?;
        let wanted = match resource {
            true => script.rs_nonce,
            false => script.as_nonce,
        };
        wanted.then_some(match resource {
            true => self.dpop_nonces.1.as_str(),
            false => self.dpop_nonces.0.as_str(),
        })
    }

    /// The `DPoP-Nonce` the MCP endpoint sends with its challenges, if it demands one.
    pub fn resource_nonce(&self) -> Option<String> {
        self.nonce(true).map(str::to_owned)
    }

    /// Judges a request's proof: its syntax and signature, the nonce this side demands, the
    /// `ath` of `token` (MCP endpoint) and that its `jti` is new. `consume` records the
    /// `jti` (a label is computed without it, before the decision).
    fn judge_proof(
        &self,
        state: &mut State,
        headers: &HeaderMap,
        expected: &Expected<'_>,
        token: Option<&str>,
        consume: bool,
    ) -> Result<Proof, Refusal> {
        let proof = proof_of(headers)?;
        state.received(proof);
        let proof = verify(proof, expected).map_err(Refusal::invalid)?;
        if let Some(token) = token
            && proof.ath.as_deref() != Some(hash(token.as_bytes()).as_str())
        {
            return Err(Refusal::invalid(match proof.ath {
                None => "no ath",
                Some(_) => "ath not this token",
            }));
        }
        if state.dpop_jtis.contains(&proof.jti) {
            return Err(Refusal::invalid("jti reused"));
        }
        if consume {
            state.dpop_jtis.push(proof.jti.clone());
        }
        if let Some(nonce) = self.nonce(token.is_some())
            && proof.nonce.as_deref() != Some(nonce)
        {
            return Err(Refusal {
                error: "use_dpop_nonce",
                why: match proof.nonce {
                    None => "no nonce".to_owned(),
                    Some(_) => "nonce not current".to_owned(),
                },
            });
        }
        Ok(proof)
    }

    /// A token request's proof (`role`'s origin, `path`): its key's thumbprint, or the
    /// answer refusing it (400 `invalid_dpop_proof`, or `use_dpop_nonce` with the nonce),
    /// with the label either way.
    pub fn token_proof(
        &self,
        headers: &HeaderMap,
        role: Role,
        path: &str,
    ) -> (Result<String, (Answer, Option<String>)>, String) {
        let urls = self.urls_of(role, path);
        let expected = Expected {
            htm: "POST",
            htu: &urls,
            now: now(),
        };
        let mut state = self.state();
        let verdict = self.judge_proof(&mut state, headers, &expected, None, true);
        let label = label(&verdict);
        let result = match verdict {
            Ok(proof) => Ok(proof.jkt),
            Err(refusal) => {
                let nonce = (refusal.error == "use_dpop_nonce")
                    .then(|| self.nonce(false).map(str::to_owned))
                    .flatten();
                let answer = Answer::oauth_error(400, refusal.error, &refusal.why);
                Err((answer, nonce))
            }
        };
        (result, label)
    }

    /// Binds the token a 200 answer issues to the key `jkt` (`token_type` `DPoP`).
    pub fn bind(&self, answer: &mut Answer, jkt: &str) {
        let Some(body) = answer.json.as_mut().filter(|_| answer.status == 200) else {
            return;
        };
        let Some(token) = body.get("access_token").and_then(Value::as_str) else {
            return;
        };
        let mut state = self.state();
        if let Some(access) = state.tokens.iter_mut().find(|t| t.value == token) {
            access.jkt = Some(jkt.to_owned());
        }
        body["token_type"] = json!("DPoP");
    }

    /// At the MCP endpoint, for a request presenting the DPoP-bound `token` with the `DPoP`
    /// scheme: the proof's verdict, consumed or not (see [`Auth::judge_proof`]).
    pub(super) fn resource_proof(
        &self,
        state: &mut State,
        headers: &HeaderMap,
        method: &str,
        token: &str,
        jkt: &str,
        consume: bool,
    ) -> Result<Proof, Refusal> {
        let urls = self.urls_of(Role::Mcp, "/mcp");
        let expected = Expected {
            htm: method,
            htu: &urls,
            now: now(),
        };
        let proof = self.judge_proof(state, headers, &expected, Some(token), consume)?;
        if proof.jkt != jkt {
            return Err(Refusal::invalid("key not the token's"));
        }
        Ok(proof)
    }

    /// The URLs a request to `path` on `role`'s origin may name (`localhost` or
    /// `127.0.0.1`).
    fn urls_of(&self, role: Role, path: &str) -> Vec<String> {
        let url = format!("{}{path}", self.origin(role));
        vec![url.clone(), url.replacen("localhost", "127.0.0.1", 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};

    fn key() -> EcdsaKeyPair {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng).unwrap()
    }

    fn jwk(pair: &EcdsaKeyPair) -> Value {
        let point = pair.public_key().as_ref();
        json!({"kty": "EC", "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]), "y": URL_SAFE_NO_PAD.encode(&point[33..])})
    }

    fn sign(pair: &EcdsaKeyPair, header: Value, claims: Value) -> String {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig = pair.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
    }

    #[test]
    fn a_proof_is_verified_claim_by_claim() {
        let pair = key();
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk(&pair)});
        let now = 1_000_000;
        let claims = json!({"jti": "j1", "htm": "POST", "htu": "https://as/token", "iat": now});
        let urls = vec!["https://as/token".to_owned()];
        let expected = Expected {
            htm: "POST",
            htu: &urls,
            now,
        };
        let good = verify(&sign(&pair, header.clone(), claims.clone()), &expected).unwrap();
        assert_eq!(good.jti, "j1");
        // RFC 7638: the thumbprint of the members in lexical order, no spaces.
        let j = jwk(&pair);
        let canonical = format!(
            "{{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":{},\"y\":{}}}",
            j["x"], j["y"]
        );
        assert_eq!(good.jkt, hash(canonical.as_bytes()));
        let refused = |header: Value, claims: Value, why: &str| {
            let e = verify(&sign(&pair, header, claims), &expected).unwrap_err();
            assert!(e.contains(why), "{e} (expected {why})");
        };
        let with = |base: &Value, k: &str, v: Value| {
            let mut c = base.clone();
            c[k] = v;
            c
        };
        refused(with(&header, "typ", json!("JWT")), claims.clone(), "typ");
        refused(with(&header, "alg", json!("ES384")), claims.clone(), "alg");
        refused(
            with(&header, "jwk", json!({"kty": "RSA"})),
            claims.clone(),
            "jwk",
        );
        refused(header.clone(), with(&claims, "htm", json!("GET")), "htm");
        refused(
            header.clone(),
            with(&claims, "htu", json!("https://x")),
            "htu",
        );
        refused(
            header.clone(),
            with(&claims, "iat", json!(now - 1000)),
            "iat",
        );
        refused(header.clone(), with(&claims, "jti", json!("")), "jti");
        // Another key's signature does not verify with the jwk shown.
        let other = with(&header, "jwk", jwk(&key()));
        refused(other, claims, "signature");
        assert!(verify("a.b", &expected).is_err());
    }

    /// A proof by `pair` for `htm` on `htu`, with `extra` claims.
    fn proof(pair: &EcdsaKeyPair, htm: &str, htu: &str, jti: &str, extra: Value) -> String {
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk(pair)});
        let mut claims = json!({"jti": jti, "htm": htm, "htu": htu, "iat": now()});
        for (k, v) in extra.as_object().unwrap() {
            claims[k] = v.clone();
        }
        sign(pair, header, claims)
    }

    fn headers(pairs: &[(&'static str, String)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn a_bound_token_needs_the_dpop_scheme_and_a_proof_by_its_key() {
        use mcp_harness_scenarios::model::auth::{AuthScript, DpopScript, MachineAuth};
        let script = AuthScript {
            client_credentials: Some(MachineAuth::ClientSecretPost),
            dpop: Some(DpopScript::default()),
            ..AuthScript::default()
        };
        let ports = super::super::Ports {
            mcp: 1,
            auth: Some(2),
            as2: 3,
            plain: None,
        };
        let auth = Auth::new(script, "http://127.0.0.1:9/cb".into(), ports);
        let secret = auth.machine.as_ref().unwrap().secret.clone().unwrap();
        let pair = key();
        let token_url = format!("{}/token", auth.origin(Role::As));
        let at_token = headers(&[(HEADER, proof(&pair, "POST", &token_url, "t1", json!({})))]);
        let (verdict, label) = auth.token_proof(&at_token, Role::As, "/token");
        assert_eq!(label, "[dpop proof: valid]");
        let jkt = verdict.ok().unwrap();
        // The same proof again: its jti is used up.
        let (again, label) = auth.token_proof(&at_token, Role::As, "/token");
        assert!(again.is_err() && label.contains("jti reused"), "{label}");
        let form: crate::http::auth::grant::Params = vec![
            ("grant_type".into(), "client_credentials".into()),
            ("client_id".into(), super::super::machine::MACHINE_ID.into()),
            ("client_secret".into(), secret),
        ];
        let (mut answer, _, _) = auth.token(super::super::Server::First, &form, None);
        auth.bind(&mut answer, &jkt);
        let body = answer.json.unwrap();
        assert_eq!(body["token_type"], "DPoP");
        let token = body["access_token"].as_str().unwrap().to_owned();
        let ath = hash(token.as_bytes());
        let mcp = auth.resource();
        let request = |scheme: &str, proof: String| {
            headers(&[
                ("authorization", format!("{scheme} {token}")),
                (HEADER, proof),
            ])
        };
        let refused = |h: &HeaderMap, error: &str| {
            let (status, header) = auth.admit(h, "POST", None).unwrap();
            assert_eq!(status, 401);
            assert!(
                header.starts_with("DPoP") && header.contains(error),
                "{header}"
            );
        };
        let good = |jti: &str| proof(&pair, "POST", &mcp, jti, json!({"ath": ath}));
        refused(&request("Bearer", good("r1")), "invalid_token");
        let foreign = proof(&key(), "POST", &mcp, "r2", json!({"ath": ath}));
        refused(&request("DPoP", foreign), "invalid_dpop_proof");
        refused(
            &request("DPoP", proof(&pair, "POST", &mcp, "r3", json!({}))),
            "invalid_dpop_proof",
        );
        assert_eq!(auth.admit(&request("DPoP", good("r4")), "POST", None), None);
        assert_eq!(
            auth.proof_label(&request("DPoP", good("r4")), "POST")
                .unwrap(),
            "[dpop proof: refused: jti reused]"
        );
    }
}
