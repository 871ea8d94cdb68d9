//! DPoP (RFC 9449, the MCP DPoP extension): the client proves, request by request, that it
//! holds the key its access token is bound to. One ES256 (P-256) key per connection, made
//! here and never leaving the process; a fresh proof (new `jti`, `iat` now) on every token
//! request and every MCP request, naming the method and URL, and at the MCP server the
//! token's hash (`ath`). A server nonce (`DPoP-Nonce`, asked for with `use_dpop_nonce`) is
//! kept per side and put in later proofs. ring (already in the tree) makes the key and signs.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use reqwest::header::HeaderValue;
use ring::digest::{SHA256, digest};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};

use super::net::failed;
use crate::error::Error;

/// The request header of a proof.
pub(crate) const HEADER: &str = "dpop";
/// The response header of a server nonce.
pub(crate) const NONCE_HEADER: &str = "dpop-nonce";

/// Which server a nonce belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The authorization server's token endpoint.
    Token,
    /// The MCP server.
    Resource,
}

/// What a proof may leave out, or repeat, under a defect (`client/src/defects/auth.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Leave out `ath` at the MCP server.
    pub(crate) no_ath: bool,
    /// Reuse the first proof's `jti`.
    pub(crate) same_jti: bool,
    /// Put no nonce in, whatever the server asked for.
    pub(crate) no_nonce: bool,
}

/// One connection's DPoP key and the nonces the servers handed it.
pub(crate) struct Dpop {
    pair: EcdsaKeyPair,
    jwk: Value,
    rng: SystemRandom,
    nonces: Mutex<(Option<String>, Option<String>)>,
    first_jti: Mutex<Option<String>>,
    shape: Shape,
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop").finish_non_exhaustive()
    }
}

impl Dpop {
    /// A fresh key pair.
    pub(crate) fn new(shape: Shape) -> Result<Dpop, Error> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| failed("no randomness to make a DPoP key"))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| failed("the DPoP key just made does not load"))?;
        // An uncompressed P-256 point: 0x04, x (32 bytes), y (32 bytes).
        let point = pair.public_key().as_ref();
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Ok(Dpop {
            pair,
            jwk,
            rng,
            nonces: Mutex::new((None, None)),
            first_jti: Mutex::new(None),
            shape,
        })
    }

    fn nonce(&self, side: Side) -> Option<String> {
        let nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        match side {
            Side::Token => nonces.0.clone(),
            Side::Resource => nonces.1.clone(),
        }
    }

    /// Keeps the nonce of an answer that asks for one (`use_dpop_nonce`): true when it is new,
    /// so that the request is worth sending again.
    pub(crate) fn take_nonce(&self, side: Side, nonce: Option<&str>) -> bool {
        let Some(nonce) = nonce.filter(|n| !n.is_empty()) else {
            return false;
        };
        let mut nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        let slot = match side {
            Side::Token => &mut nonces.0,
            Side::Resource => &mut nonces.1,
        };
        let new = slot.as_deref() != Some(nonce);
        *slot = Some(nonce.to_owned());
        new
    }

    /// A proof for `method` on `url` (without query and fragment, RFC 9449 §4.2), naming
    /// `token`'s hash when given, and the nonce `side` handed out, if any.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &Url,
        token: Option<&str>,
        side: Side,
    ) -> Result<HeaderValue, Error> {
        let mut htu = url.clone();
        htu.set_query(None);
        htu.set_fragment(None);
        let mut id = [0u8; 16];
        self.rng
            .fill(&mut id)
            .map_err(|_| failed("no randomness for a DPoP proof's jti"))?;
        let mut jti = URL_SAFE_NO_PAD.encode(id);
        {
            let mut first = self.first_jti.lock().unwrap_or_else(|e| e.into_inner());
            match (&*first, self.shape.same_jti) {
                (Some(old), true) => jti = old.clone(),
                (None, _) => *first = Some(jti.clone()),
                _ => {}
            }
        }
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut claims = json!({"jti": jti, "htm": method, "htu": htu.as_str(), "iat": iat});
        if let Some(token) = token.filter(|_| !self.shape.no_ath) {
            claims["ath"] = json!(URL_SAFE_NO_PAD.encode(digest(&SHA256, token.as_bytes())));
        }
        if let Some(nonce) = self.nonce(side).filter(|_| !self.shape.no_nonce) {
            claims["nonce"] = json!(nonce);
        }
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&self.rng, input.as_bytes())
            .map_err(|_| failed("signing a DPoP proof failed"))?;
        let mut value = HeaderValue::try_from(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
        .map_err(|_| failed("a DPoP proof cannot be put in a header"))?;
        value.set_sensitive(true);
        Ok(value)
    }
}

/// Whether an answer asks for a nonce: `use_dpop_nonce` in its JSON `error` (token
/// endpoint, RFC 9449 §8) or its `WWW-Authenticate` (MCP server, §9).
pub(crate) fn asks_for_nonce(error: Option<&str>) -> bool {
    error == Some("use_dpop_nonce")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    fn parts(value: &HeaderValue) -> (Value, Value, String, Vec<u8>) {
        let text = value.to_str().unwrap();
        let (input, sig) = text.rsplit_once('.').unwrap();
        let (h, c) = input.split_once('.').unwrap();
        let json = |p: &str| serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap();
        (
            json(h),
            json(c),
            input.to_owned(),
            URL_SAFE_NO_PAD.decode(sig).unwrap(),
        )
    }

    #[test]
    fn proofs_are_fresh_signed_and_name_the_request() {
        let dpop = Dpop::new(Shape::default()).unwrap();
        let url = Url::parse("https://h:1/mcp?x=1#f").unwrap();
        let a = dpop
            .proof("POST", &url, Some("tok"), Side::Resource)
            .unwrap();
        let b = dpop
            .proof("POST", &url, Some("tok"), Side::Resource)
            .unwrap();
        let (header, claims, input, sig) = parts(&a);
        assert_eq!(header["typ"], "dpop+jwt");
        assert!(header["jwk"].get("d").is_none());
        assert_eq!(claims["htu"], "https://h:1/mcp");
        assert_eq!(claims["htm"], "POST");
        let ath = URL_SAFE_NO_PAD.encode(digest(&SHA256, b"tok"));
        assert_eq!(claims["ath"], ath);
        assert!(claims.get("nonce").is_none());
        assert_ne!(claims["jti"], parts(&b).1["jti"]);
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, dpop.pair.public_key().as_ref())
            .verify(input.as_bytes(), &sig)
            .unwrap();
        assert!(dpop.take_nonce(Side::Resource, Some("n1")));
        assert!(!dpop.take_nonce(Side::Resource, Some("n1")));
        let c = dpop.proof("GET", &url, None, Side::Resource).unwrap();
        assert_eq!(parts(&c).1["nonce"], "n1");
        assert!(parts(&c).1.get("ath").is_none());
        let t = dpop.proof("POST", &url, None, Side::Token).unwrap();
        assert!(parts(&t).1.get("nonce").is_none());
        assert!(a.is_sensitive());
    }
}
