//! The per-request `_meta` of the modern era: protocol version, client capabilities and client
//! info on every request, since there is no handshake to carry them once.

use serde_json::{Map, Value, json};

/// `_meta` key of the request's protocol version (required).
pub(crate) const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities for this request (required, `{}` allowed).
pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's name and version (recommended).
pub(crate) const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the server's self-reported identity in a `DiscoverResult`.
pub(crate) const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// `params` with the modern `_meta` fields added (kept beside any `_meta` keys already there).
/// Non-object params are replaced by an object, since modern requests always have params.
pub(crate) fn with_meta(params: Value, version: &str, capabilities: &Value) -> Value {
    let (mut params, mut meta) = split_meta(params);
    meta.insert(PROTOCOL_VERSION.into(), json!(version));
    meta.insert(CLIENT_CAPABILITIES.into(), capabilities.clone());
    meta.insert(
        CLIENT_INFO.into(),
        json!({"name": "mcp-harness-client", "version": env!("CARGO_PKG_VERSION")}),
    );
    params.insert("_meta".into(), Value::Object(meta));
    Value::Object(params)
}

/// `params` as an object (non-object params become an empty one) and its `_meta` taken out
/// of it (empty when absent), for a caller that adds members and puts it back.
pub(crate) fn split_meta(params: Value) -> (Map<String, Value>, Map<String, Value>) {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let meta = match params.remove("_meta") {
        Some(Value::Object(meta)) => meta,
        _ => Map::new(),
    };
    (params, meta)
}

/// `params` without `_meta`: what identifies a request for the cache.
pub(crate) fn without_meta(params: &Value) -> Value {
    match params {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "_meta")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_added_beside_existing_meta() {
        let p = with_meta(
            json!({"name":"t","_meta":{"x":1}}),
            "2026-07-28",
            &json!({}),
        );
        let meta = &p["_meta"];
        assert_eq!(meta["x"], 1);
        assert_eq!(meta[PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(meta[CLIENT_CAPABILITIES], json!({}));
        assert_eq!(meta[CLIENT_INFO]["name"], "mcp-harness-client");
        assert_eq!(p["name"], "t");
        assert_eq!(without_meta(&p), json!({"name":"t"}));
        let bare = with_meta(json!(null), "v", &json!({}));
        assert!(bare["_meta"].is_object());
    }
}
