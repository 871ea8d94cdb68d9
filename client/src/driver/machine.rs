//! `MCP_HARNESS_CLIENT_CREDENTIALS`: a machine-to-machine client's credentials, as the
//! harness hands them (a JSON object: `client_id`, `method`, and `client_secret` or
//! `private_key_pem`), read into the library's [`ClientCredentials`].

use serde_json::Value;

use crate::auth::{ClientCredentials, MachineMethod, Secret};

const VAR: &str = "MCP_HARNESS_CLIENT_CREDENTIALS";

/// The credentials in `value`, or why they cannot be used (naming the variable and member;
/// never the secret).
pub(super) fn parse(value: &str) -> Result<ClientCredentials, String> {
    let doc: Value =
        serde_json::from_str(value).map_err(|e| format!("{VAR} is not a JSON object ({e})"))?;
    let text = |name: &str| {
        doc.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let client_id = text("client_id")
        .ok_or_else(|| format!("{VAR}: expected a string client_id"))?
        .to_owned();
    let method = text("method")
        .and_then(MachineMethod::from_name)
        .ok_or_else(|| {
            format!(
                "{VAR}: expected method client_secret_basic, client_secret_post or private_key_jwt"
            )
        })?;
    let secret = text("client_secret").map(Secret::new);
    let private_key_pem = text("private_key_pem").map(Secret::new);
    match method {
        MachineMethod::PrivateKeyJwt if private_key_pem.is_none() => {
            return Err(format!("{VAR}: private_key_jwt needs private_key_pem"));
        }
        MachineMethod::ClientSecretBasic | MachineMethod::ClientSecretPost if secret.is_none() => {
            return Err(format!(
                "{VAR}: {} needs client_secret",
                text("method").unwrap_or_default()
            ));
        }
        _ => {}
    }
    if text("alg").is_some_and(|alg| alg != "ES256") {
        return Err(format!(
            "{VAR}: alg must be ES256, the only one this client signs with"
        ));
    }
    let dpop = match doc.get("dpop") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => return Err(format!("{VAR}: dpop must be true or false")),
    };
    Ok(ClientCredentials {
        client_id,
        method,
        secret,
        private_key_pem,
        dpop,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_read_and_errors_name_the_member_not_the_secret() {
        let c = parse(r#"{"client_id":"m","method":"client_secret_post","client_secret":"cs-1"}"#)
            .unwrap();
        assert_eq!(c.method, MachineMethod::ClientSecretPost);
        assert_eq!(c.secret.unwrap().expose(), "cs-1");
        let jwt = parse(
            r#"{"client_id":"m","method":"private_key_jwt","private_key_pem":"k","alg":"ES256"}"#,
        );
        assert_eq!(jwt.unwrap().method, MachineMethod::PrivateKeyJwt);
        let dpop =
            r#"{"client_id":"m","method":"client_secret_post","client_secret":"c","dpop":true}"#;
        assert!(parse(dpop).unwrap().dpop);
        let bad = r#"{"client_id":"m","method":"client_secret_post","client_secret":"c","dpop":1}"#;
        assert!(parse(bad).unwrap_err().contains("dpop"));
        for (bad, says) in [
            ("nope", "not a JSON object"),
            (r#"{"method":"private_key_jwt"}"#, "client_id"),
            (r#"{"client_id":"m","method":"x"}"#, "method"),
            (
                r#"{"client_id":"m","method":"private_key_jwt"}"#,
                "private_key_pem",
            ),
            (
                r#"{"client_id":"m","method":"client_secret_basic"}"#,
                "client_secret",
            ),
            (
                r#"{"client_id":"m","method":"private_key_jwt","private_key_pem":"k","alg":"RS256"}"#,
                "ES256",
            ),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says) && e.contains(VAR), "{e}");
        }
    }
}
