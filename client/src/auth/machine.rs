//! Machine-to-machine authorization (the MCP `client_credentials` extension): a client with
//! credentials registered beforehand obtains its access token with the `client_credentials`
//! grant (OAuth 2.1 §4.2), no user and no authorization request, authenticating with its
//! secret or with a JWT assertion (`private_key_jwt`, RFC 7523 §2.2) signed by its key.
//! ring (already in the tree) signs ES256; base64 encodes.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use reqwest::Url;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use serde_json::json;

use reqwest::header::HeaderValue;

use super::dpop::{Dpop, Side, asks_for_nonce};
use super::flow::{TokenAnswer, token_answer, token_request_proved};
use super::net::{Answer, ClientAuth, failed};
use super::registration::{Credentials, Method};
use super::{Net, Secret};
use crate::error::Error;
use crate::seams::wire::Wire;

/// How a machine client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MachineMethod {
    /// `client_secret_basic`: HTTP Basic with the id and secret.
    ClientSecretBasic,
    /// `client_secret_post`: `client_id` and `client_secret` in the form.
    ClientSecretPost,
    /// `private_key_jwt`: a JWT assertion signed with the client's ES256 (P-256) key.
    PrivateKeyJwt,
}

impl MachineMethod {
    /// The method by its registered name.
    pub fn from_name(name: &str) -> Option<MachineMethod> {
        match name {
            "client_secret_basic" => Some(MachineMethod::ClientSecretBasic),
            "client_secret_post" => Some(MachineMethod::ClientSecretPost),
            "private_key_jwt" => Some(MachineMethod::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// A machine client's credentials, registered with the authorization server beforehand.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The client id.
    pub client_id: String,
    /// How it authenticates.
    pub method: MachineMethod,
    /// The client secret (`client_secret_basic`, `client_secret_post`).
    pub secret: Option<Secret>,
    /// The PKCS#8 PEM of its P-256 private key (`private_key_jwt`).
    pub private_key_pem: Option<Secret>,
    /// DPoP (RFC 9449): prove possession of a per-connection key on every token request
    /// and MCP request, and take tokens bound to it.
    pub dpop: bool,
}

/// Written by hand: the secret and the key are never shown.
impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("method", &self.method)
            .field("dpop", &self.dpop)
            .finish_non_exhaustive()
    }
}

/// Obtains an access token with the `client_credentials` grant at `endpoint`, for
/// `resource` and `scopes`; a JWT assertion names `audience` (the issuer) as its `aud`.
/// With `dpop`, each token request carries a proof, and an answer asking for a nonce it has
/// not handed out before is followed by one more request with it (RFC 9449 §8).
pub(crate) async fn token(
    net: &Net,
    endpoint: &Url,
    creds: &ClientCredentials,
    audience: &str,
    scopes: &[String],
    resource: Option<&str>,
    dpop: Option<&Dpop>,
) -> Result<TokenAnswer, Error> {
    let mut tries = 0;
    loop {
        tries += 1;
        let proof = match dpop {
            Some(dpop) => Some(dpop.proof("POST", endpoint, None, Side::Token)?),
            None => None,
        };
        let answer = request(net, endpoint, creds, audience, scopes, resource, proof).await?;
        if let Some(dpop) = dpop
            && tries == 1
            && answer.status == 400
            && asks_for_nonce(
                answer
                    .json
                    .as_ref()
                    .and_then(|j| j.get("error"))
                    .and_then(serde_json::Value::as_str),
            )
            && dpop.take_nonce(Side::Token, answer.dpop_nonce.as_deref())
        {
            continue;
        }
        return token_answer(answer, "the client credentials grant");
    }
}

/// One `client_credentials` token request, with `proof` as its DPoP header if given.
async fn request(
    net: &Net,
    endpoint: &Url,
    creds: &ClientCredentials,
    audience: &str,
    scopes: &[String],
    resource: Option<&str>,
    proof: Option<HeaderValue>,
) -> Result<Answer, Error> {
    let mut form = vec![("grant_type", "client_credentials".to_owned())];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    if let Some(resource) = resource {
        form.push(("resource", resource.to_owned()));
    }
    let what = "the client credentials grant";
    match creds.method {
        MachineMethod::PrivateKeyJwt => {
            let audience = net
                .seams
                .auth_assertion_audience(audience, resource.unwrap_or_default());
            let assertion = assertion(creds, audience)?;
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            ));
            form.push(("client_assertion", assertion.expose().to_owned()));
            let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            net.post_form_proved(endpoint, what, &pairs, ClientAuth::InForm, None, proof)
                .await
        }
        method => {
            let secret = creds.secret.clone().ok_or_else(|| {
                failed("a client_secret_basic or client_secret_post client needs a secret")
            })?;
            let method = match method {
                MachineMethod::ClientSecretPost => Method::Post,
                _ => Method::Basic,
            };
            let credentials = Credentials {
                client_id: creds.client_id.clone(),
                secret: Some(secret),
                method,
            };
            token_request_proved(net, endpoint, &credentials, form, what, None, proof).await
        }
    }
}

/// The credentials a refresh would use: none is issued to a machine client, but the token
/// store keeps them beside its tokens.
pub(crate) fn credentials(creds: &ClientCredentials) -> Credentials {
    Credentials {
        client_id: creds.client_id.clone(),
        secret: creds.secret.clone(),
        method: match creds.method {
            MachineMethod::ClientSecretBasic => Method::Basic,
            MachineMethod::ClientSecretPost => Method::Post,
            MachineMethod::PrivateKeyJwt => Method::None,
        },
    }
}

/// A JWT client assertion (RFC 7523 §3): the client as `iss` and `sub`, `audience` as `aud`,
/// `iat` now, `exp` five minutes on, a random `jti`; signed ES256 with the client's key.
fn assertion(creds: &ClientCredentials, audience: &str) -> Result<Secret, Error> {
    let pem = creds
        .private_key_pem
        .as_ref()
        .ok_or_else(|| failed("a private_key_jwt client needs its private key"))?;
    let body: String = pem
        .expose()
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .map(str::trim)
        .collect();
    let der = STANDARD
        .decode(body)
        .map_err(|_| failed("the client's private key is not PEM (base64 between the lines)"))?;
    let rng = SystemRandom::new();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng)
        .map_err(|_| failed("the client's private key is not a PKCS#8 P-256 (ES256) key"))?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut jti = [0u8; 16];
    rng.fill(&mut jti)
        .map_err(|_| failed("no randomness for the assertion's jti"))?;
    let header = URL_SAFE_NO_PAD.encode(json!({"alg": "ES256", "typ": "JWT"}).to_string());
    let claims = json!({
        "iss": creds.client_id,
        "sub": creds.client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 300,
        "jti": URL_SAFE_NO_PAD.encode(jti),
    });
    let input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature = pair
        .sign(&rng, input.as_bytes())
        .map_err(|_| failed("signing the client assertion failed"))?;
    Ok(Secret::new(format!(
        "{input}.{}",
        URL_SAFE_NO_PAD.encode(signature.as_ref())
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair, UnparsedPublicKey};

    #[test]
    fn the_assertion_names_the_client_and_verifies_with_its_key() {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(pkcs8.as_ref())
        );
        let creds = ClientCredentials {
            client_id: "m2m".into(),
            method: MachineMethod::PrivateKeyJwt,
            secret: None,
            private_key_pem: Some(Secret::new(pem)),
            dpop: false,
        };
        let jwt = assertion(&creds, "https://as").unwrap();
        let jwt = jwt.expose();
        let (input, sig) = jwt.rsplit_once('.').unwrap();
        let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, pair.public_key().as_ref());
        public
            .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap())
            .unwrap();
        let payload = input.split('.').nth(1).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        assert_eq!(claims["iss"], "m2m");
        assert_eq!(claims["sub"], "m2m");
        assert_eq!(claims["aud"], "https://as");
        assert!(claims["exp"].as_u64() > claims["iat"].as_u64());
        let shown = format!("{creds:?}");
        assert!(!shown.contains("PRIVATE"), "{shown}");
        let bad = ClientCredentials {
            private_key_pem: Some(Secret::new("not a key")),
            ..creds
        };
        assert!(assertion(&bad, "https://as").is_err());
    }
}
