//! Machine-to-machine clients (the `client_credentials` extension): a client registered
//! beforehand that authenticates at the token endpoint with a secret (HTTP Basic or the
//! form) or with a JWT assertion (`private_key_jwt`, RFC 7523 §2.2) signed by a P-256 key
//! this fake makes per trial and hands the client as PKCS#8 PEM. ring (already the tree's
//! crypto) makes the key and verifies ES256 signatures, so nothing new is linked.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use mcp_harness_scenarios::model::auth::MachineAuth;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use serde_json::{Value, json};

use super::secret;

/// The machine client's id.
pub const MACHINE_ID: &str = "mcp-harness-m2m";
/// The form value of `client_assertion_type` for a JWT assertion (RFC 7523 §2.2).
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How far a JWT's `exp` and `iat` may be off the fake's clock, in seconds.
const SKEW: i64 = 300;

/// A machine client and what it is handed.
pub struct Machine {
    /// How it authenticates.
    pub method: MachineAuth,
    /// Its secret, for `client_secret_basic` and `client_secret_post`.
    pub secret: Option<String>,
    /// Its private key as PKCS#8 PEM, for `private_key_jwt`.
    pub private_pem: Option<String>,
    /// The public key (an uncompressed P-256 point) that verifies its assertions.
    public: Vec<u8>,
}

impl Machine {
    /// A fresh machine client authenticating by `method` (a new secret or key pair).
    pub fn new(method: MachineAuth) -> Machine {
        let mut machine = Machine {
            method,
            secret: None,
            private_pem: None,
            public: Vec::new(),
        };
        match method {
            MachineAuth::ClientSecretBasic | MachineAuth::ClientSecretPost => {
                machine.secret = Some(secret::fresh("cs-"));
            }
            MachineAuth::PrivateKeyJwt => {
                let rng = SystemRandom::new();
                let made = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
                    .ok()
                    .and_then(|pkcs8| {
                        let pair = EcdsaKeyPair::from_pkcs8(
                            &ECDSA_P256_SHA256_FIXED_SIGNING,
                            pkcs8.as_ref(),
                            &rng,
                        )
                        .ok()?;
                        Some((pem(pkcs8.as_ref()), pair.public_key().as_ref().to_vec()))
                    });
                // A system without randomness cannot make a key: the client is then handed
                // none and every assertion is refused, which the trial shows.
                if let Some((private, public)) = made {
                    machine.private_pem = Some(private);
                    machine.public = public;
                }
            }
        }
        machine
    }

    /// `MCP_HARNESS_CLIENT_CREDENTIALS`: what the client is handed, as JSON; `dpop: true`
    /// when the trial wants DPoP-bound tokens.
    pub fn handed(&self, dpop: bool) -> String {
        let mut out = json!({"client_id": MACHINE_ID, "method": self.method.as_str()});
        if dpop {
            out["dpop"] = json!(true);
        }
        if let Some(secret) = &self.secret {
            out["client_secret"] = json!(secret);
        }
        if let Some(private) = &self.private_pem {
            out["private_key_pem"] = json!(private);
            out["alg"] = json!("ES256");
        }
        out.to_string()
    }

    /// Verifies a JWT client assertion (RFC 7523 §3): ES256 by this client's key, `iss` and
    /// `sub` the client id, `aud` one of `audiences`, `exp` not past (and `iat`, if given,
    /// not in the future) within [`SKEW`] of `now` (seconds since the epoch).
    pub fn verify(&self, assertion: &str, audiences: &[String], now: i64) -> Result<(), String> {
        let parts: Vec<&str> = assertion.split('.').collect();
        let [header, payload, signature] = parts.as_slice() else {
            return Err("not a JWT (three dot-separated parts)".into());
        };
        let decode = |part: &str, what: &str| {
            URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| format!("its {what} is not base64url"))
        };
        let json = |bytes: Vec<u8>, what: &str| {
            serde_json::from_slice::<Value>(&bytes).map_err(|_| format!("its {what} is not JSON"))
        };
        let header = json(decode(header, "header")?, "header")?;
        if header.get("alg").and_then(Value::as_str) != Some("ES256") {
            return Err(format!("alg is {}, not ES256", header["alg"]));
        }
        let claims = json(decode(payload, "payload")?, "payload")?;
        for claim in ["iss", "sub"] {
            if claims.get(claim).and_then(Value::as_str) != Some(MACHINE_ID) {
                return Err(format!("{claim} is {}, not the client id", claims[claim]));
            }
        }
        let aud_ok = match claims.get("aud") {
            Some(Value::String(a)) => audiences.contains(a),
            Some(Value::Array(list)) => list
                .iter()
                .any(|a| a.as_str().is_some_and(|a| audiences.iter().any(|x| x == a))),
            _ => false,
        };
        if !aud_ok {
            return Err(format!(
                "aud is {}, not the authorization server",
                claims["aud"]
            ));
        }
        match claims.get("exp").and_then(Value::as_i64) {
            Some(exp) if exp + SKEW >= now => {}
            Some(_) => return Err("exp is past".into()),
            None => return Err("exp is missing".into()),
        }
        if claims
            .get("iat")
            .and_then(Value::as_i64)
            .is_some_and(|iat| iat - SKEW > now)
        {
            return Err("iat is in the future".into());
        }
        let signature = decode(signature, "signature")?;
        let signed = &assertion[..header_and_payload_len(assertion)];
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &self.public)
            .verify(signed.as_bytes(), &signature)
            .map_err(|_| "the signature does not verify with the client's key".into())
    }
}

/// The length of `header.payload`, the signed part of a JWT.
fn header_and_payload_len(jwt: &str) -> usize {
    jwt.rfind('.').unwrap_or(jwt.len())
}

/// PKCS#8 DER as PEM (`PRIVATE KEY`), lines of 64.
fn pem(der: &[u8]) -> String {
    let text = STANDARD.encode(der);
    let mut out = String::from("-----BEGIN PRIVATE KEY-----\n");
    for chunk in text.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str("-----END PRIVATE KEY-----\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Signs `claims` as the client would, with the key in `pem`.
    fn assertion(pem: &str, alg: &str, claims: Value) -> String {
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        let der = STANDARD.decode(body).unwrap();
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng).unwrap();
        let header = URL_SAFE_NO_PAD.encode(json!({"alg": alg, "typ": "JWT"}).to_string());
        let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
        let input = format!("{header}.{payload}");
        let sig = pair.sign(&rng, input.as_bytes()).unwrap();
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
    }

    #[test]
    fn a_jwt_assertion_is_verified_claim_by_claim() {
        let m = Machine::new(MachineAuth::PrivateKeyJwt);
        let pem = m.private_pem.clone().unwrap();
        let aud = vec!["https://as".to_owned(), "https://as/token".to_owned()];
        let now = 1_000_000;
        let good = json!({"iss": MACHINE_ID, "sub": MACHINE_ID, "aud": "https://as",
            "exp": now + 60, "iat": now, "jti": "j1"});
        assert_eq!(
            m.verify(&assertion(&pem, "ES256", good.clone()), &aud, now),
            Ok(())
        );
        let listed = json!({"iss": MACHINE_ID, "sub": MACHINE_ID, "aud": ["x", "https://as/token"],
            "exp": now + 60});
        assert_eq!(
            m.verify(&assertion(&pem, "ES256", listed), &aud, now),
            Ok(())
        );
        let bad = |claims: Value, why: &str| {
            let e = m
                .verify(&assertion(&pem, "ES256", claims), &aud, now)
                .unwrap_err();
            assert!(e.contains(why), "{e} (expected {why})");
        };
        let with = |k: &str, v: Value| {
            let mut c = good.clone();
            c[k] = v;
            c
        };
        bad(with("iss", json!("other")), "iss");
        bad(with("sub", json!("other")), "sub");
        bad(with("aud", json!("https://mcp")), "aud");
        bad(with("exp", json!(now - 1000)), "exp is past");
        bad(with("iat", json!(now + 1000)), "iat");
        let e = m
            .verify(&assertion(&pem, "ES384", good.clone()), &aud, now)
            .unwrap_err();
        assert!(e.contains("ES256"), "{e}");
        // Another key's signature, and a tampered payload, do not verify.
        let other = Machine::new(MachineAuth::PrivateKeyJwt);
        let foreign = assertion(other.private_pem.as_deref().unwrap(), "ES256", good.clone());
        assert!(
            m.verify(&foreign, &aud, now)
                .unwrap_err()
                .contains("signature")
        );
        let signed = assertion(&pem, "ES256", good);
        let mut parts: Vec<String> = signed.split('.').map(str::to_owned).collect();
        parts[1] = URL_SAFE_NO_PAD.encode(with_sub_changed());
        assert!(m.verify(&parts.join("."), &aud, now).is_err());
        assert!(m.verify("a.b", &aud, now).unwrap_err().contains("three"));
    }

    fn with_sub_changed() -> String {
        json!({"iss": MACHINE_ID, "sub": MACHINE_ID, "aud": "https://as", "exp": i64::MAX / 2})
            .to_string()
    }

    #[test]
    fn what_the_client_is_handed_names_its_method() {
        let basic: Value =
            serde_json::from_str(&Machine::new(MachineAuth::ClientSecretBasic).handed(true))
                .unwrap();
        assert_eq!(basic["method"], "client_secret_basic");
        assert!(basic["client_secret"].as_str().unwrap().starts_with("cs-"));
        assert_eq!(basic["dpop"], true);
        let jwt: Value =
            serde_json::from_str(&Machine::new(MachineAuth::PrivateKeyJwt).handed(false)).unwrap();
        assert_eq!(jwt["alg"], "ES256");
        assert!(
            jwt["private_key_pem"]
                .as_str()
                .unwrap()
                .starts_with("-----BEGIN PRIVATE KEY-----\n")
        );
        assert!(jwt.get("client_secret").is_none());
        assert!(jwt.get("dpop").is_none());
    }
}
