//! Content as seen: content blocks and resource contents turned into what the caller is told,
//! as pure functions over JSON.
//!
//! Binary data is reported by what it decodes to (its length and SHA-256), never as the
//! base64 received, so an answer stays small and a client that cannot decode its data shows.
//! Decoding is strict (RFC 4648, standard alphabet, canonical padding): anything else, a block
//! of a type this client does not know, and resource contents with neither `text` nor `blob`
//! are `invalid_response`. A block's `annotations` are kept as received; `_meta` is dropped.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use crate::error::Error;

/// How content is read; [`SeenRules::SPEC`] are the contract's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SeenRules {
    /// Data that is not valid base64 fails the step (else its raw bytes are measured).
    pub(crate) strict_base64: bool,
    /// A block of an unknown type fails the step (else it is left out).
    pub(crate) reject_unknown: bool,
    /// A block's `annotations` are kept.
    pub(crate) keep_annotations: bool,
    /// Every block is reported (else only text blocks: no binary, resource or link blocks, and
    /// no prompt message whose content is not text).
    pub(crate) every_block: bool,
    /// `resources/read` reports blob contents (else they are left out).
    pub(crate) blob_contents: bool,
    /// `completion/complete` reports `total` and `hasMore` when received (else only `values`).
    pub(crate) completion_totals: bool,
    /// Resource contents with neither `text` nor `blob` fail the step (else they are
    /// reported with `uri` and `mimeType` only).
    pub(crate) reject_shapeless: bool,
}

impl SeenRules {
    /// The driver contract's reading.
    pub(crate) const SPEC: SeenRules = SeenRules {
        strict_base64: true,
        reject_unknown: true,
        keep_annotations: true,
        every_block: true,
        blob_contents: true,
        completion_totals: true,
        reject_shapeless: true,
    };
}

/// The blocks of a `content` array, as seen, in order. Absent or null is no blocks.
pub(crate) fn blocks(content: Option<&Value>, rules: SeenRules) -> Result<Vec<Value>, Error> {
    let blocks = match content {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(blocks)) => blocks,
        Some(other) => {
            return Err(Error::invalid(format!(
                "\"content\" is not an array of content blocks: {}",
                preview(other)
            )));
        }
    };
    let mut seen = Vec::with_capacity(blocks.len());
    for block in blocks {
        if let Some(block) = self::block(block, rules)? {
            seen.push(block);
        }
    }
    Ok(seen)
}

/// One content block as seen; `None` when the rules leave it out.
pub(crate) fn block(block: &Value, rules: SeenRules) -> Result<Option<Value>, Error> {
    let Some(kind) = block.get("type").and_then(Value::as_str) else {
        return Err(Error::invalid(format!(
            "a content block has no string \"type\": {}",
            preview(block)
        )));
    };
    if kind != "text" && !rules.every_block {
        return Ok(None);
    }
    let mut seen = Map::new();
    match kind {
        "text" => {
            seen.insert("type".into(), kind.into());
            seen.insert("text".into(), string(block, "text", "a text block")?.into());
        }
        "image" | "audio" => {
            seen.insert("type".into(), kind.into());
            copy_mime_type(block, &mut seen, "an image or audio block")?;
            let data = string(block, "data", "an image or audio block")?;
            measure(data, rules, &mut seen)?;
        }
        "resource" => {
            let Some(resource) = block.get("resource") else {
                return Err(Error::invalid(format!(
                    "an embedded resource block has no \"resource\": {}",
                    preview(block)
                )));
            };
            seen.insert("type".into(), kind.into());
            seen.insert("resource".into(), resource_contents(resource, rules)?);
        }
        "resource_link" => {
            let Value::Object(link) = block else {
                unreachable!("a value with a \"type\" member is an object")
            };
            seen = link.clone();
            seen.remove("annotations");
        }
        _ if rules.reject_unknown => {
            return Err(Error::invalid(format!(
                "a content block of unknown type {kind:?}"
            )));
        }
        _ => return Ok(None),
    }
    if rules.keep_annotations
        && let Some(annotations) = block.get("annotations")
    {
        seen.insert("annotations".into(), annotations.clone());
    }
    Ok(Some(Value::Object(seen)))
}

/// Resource contents as seen: `uri`, `mimeType` when received, and `text`, or for a `blob`
/// its decoded length and digest.
pub(crate) fn resource_contents(contents: &Value, rules: SeenRules) -> Result<Value, Error> {
    let what = "resource contents";
    if !contents.is_object() {
        return Err(Error::invalid(format!(
            "{what} are not an object: {}",
            preview(contents)
        )));
    }
    let mut seen = Map::new();
    seen.insert("uri".into(), string(contents, "uri", what)?.into());
    copy_mime_type(contents, &mut seen, what)?;
    match (contents.get("text"), contents.get("blob")) {
        (Some(Value::String(text)), _) => {
            seen.insert("text".into(), text.clone().into());
        }
        (None, Some(Value::String(blob))) => measure(blob, rules, &mut seen)?,
        (None, None) if !rules.reject_shapeless => {}
        _ => {
            return Err(Error::invalid(format!(
                "{what} have neither a string \"text\" nor a string \"blob\": {}",
                preview(contents)
            )));
        }
    }
    Ok(Value::Object(seen))
}

/// Whether resource contents carry binary data (`blob`) rather than text.
pub(crate) fn is_blob(contents: &Value) -> bool {
    contents.get("text").is_none() && contents.get("blob").is_some()
}

/// `bytes` and `sha256` of base64 `data`.
fn measure(data: &str, rules: SeenRules, seen: &mut Map<String, Value>) -> Result<(), Error> {
    let decoded = match STANDARD.decode(data) {
        Ok(bytes) => bytes,
        Err(_) if !rules.strict_base64 => data.as_bytes().to_vec(),
        Err(e) => {
            return Err(Error::invalid(format!(
                "data is not valid base64 (standard alphabet, padded): {e}"
            )));
        }
    };
    seen.insert("bytes".into(), decoded.len().into());
    seen.insert("sha256".into(), sha256_hex(&decoded).into());
    Ok(())
}

/// The SHA-256 of `bytes` in lower-case hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

fn copy_mime_type(from: &Value, to: &mut Map<String, Value>, what: &str) -> Result<(), Error> {
    match from.get("mimeType") {
        None => Ok(()),
        Some(Value::String(m)) => {
            to.insert("mimeType".into(), m.clone().into());
            Ok(())
        }
        Some(other) => Err(Error::invalid(format!(
            "the mimeType of {what} is not a string: {}",
            preview(other)
        ))),
    }
}

fn string<'a>(from: &'a Value, member: &str, what: &str) -> Result<&'a str, Error> {
    from.get(member).and_then(Value::as_str).ok_or_else(|| {
        Error::invalid(format!(
            "{what} has no string {member:?}: {}",
            preview(from)
        ))
    })
}

/// At most 200 characters of `value`, for messages about a large answer.
pub(crate) fn preview(value: &Value) -> String {
    crate::error::excerpt(&value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    const HELLO_SHA: &str = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    fn seen(block: Value) -> Result<Option<Value>, Error> {
        self::block(&block, SeenRules::SPEC)
    }

    #[test]
    fn text_and_binary_blocks() {
        let text = json!({"type":"text","text":"hi","_meta":{"x":1},
            "annotations":{"audience":["user"],"priority":0.5}});
        assert_eq!(
            seen(text).unwrap().unwrap(),
            json!({"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5}})
        );
        let image = json!({"type":"image","data":"aGVsbG8=","mimeType":"image/png"});
        assert_eq!(
            seen(image).unwrap().unwrap(),
            json!({"type":"image","mimeType":"image/png","bytes":5,"sha256":HELLO_SHA})
        );
        let audio = json!({"type":"audio","data":""});
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(
            seen(audio).unwrap().unwrap(),
            json!({"type":"audio","bytes":0,"sha256":empty})
        );
    }

    #[test]
    fn base64_is_strict() {
        for bad in [
            "aGVsbG8",
            "aGVsbG8=\n",
            "aGV sbG8=",
            "aGVsbG9=",
            "aGVs_G8=",
            "%%%%",
        ] {
            let block = json!({"type":"image","data":bad,"mimeType":"image/png"});
            let e = seen(block.clone()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{bad}");
            let lenient = SeenRules {
                strict_base64: false,
                ..SeenRules::SPEC
            };
            let raw = self::block(&block, lenient).unwrap().unwrap();
            assert_eq!(raw["bytes"], bad.len(), "{bad}");
            assert_eq!(raw["sha256"], sha256_hex(bad.as_bytes()));
        }
        let url_safe = json!({"type":"image","data":"-_8=","mimeType":"x"});
        assert!(
            seen(url_safe).is_err(),
            "the URL-safe alphabet is not base64"
        );
    }

    #[test]
    fn resources_links_and_unknown_types() {
        let embedded = json!({"type":"resource","annotations":{"priority":1},
            "resource":{"uri":"file:///a","mimeType":"text/plain","text":"A","_meta":{}}});
        assert_eq!(
            seen(embedded).unwrap().unwrap(),
            json!({"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"A"},
                   "annotations":{"priority":1}})
        );
        let blob = json!({"type":"resource","resource":{"uri":"b","blob":"aGVsbG8="}});
        assert_eq!(
            seen(blob).unwrap().unwrap()["resource"],
            json!({"uri":"b","bytes":5,"sha256":HELLO_SHA})
        );
        let link = json!({"type":"resource_link","uri":"file:///b","name":"b","x-extra":true,
            "annotations":{"priority":1}});
        assert_eq!(seen(link.clone()).unwrap().unwrap(), link);
        let unknown = json!({"type":"hologram","data":"x"});
        assert_eq!(
            seen(unknown.clone()).unwrap_err().kind,
            ErrorKind::InvalidResponse
        );
        let skip = SeenRules {
            reject_unknown: false,
            ..SeenRules::SPEC
        };
        assert_eq!(self::block(&unknown, skip).unwrap(), None);
    }

    #[test]
    fn malformed_blocks_and_contents_are_invalid() {
        for bad in [
            json!({"text":"no type"}),
            json!({"type":"text"}),
            json!({"type":"text","text":1}),
            json!({"type":"image","mimeType":"image/png"}),
            json!({"type":"image","data":"AA==","mimeType":5}),
            json!({"type":"resource"}),
            json!({"type":"resource","resource":{"uri":"a"}}),
            json!({"type":"resource","resource":{"text":"no uri"}}),
            json!({"type":"resource","resource":{"uri":"a","blob":"***"}}),
        ] {
            let e = seen(bad.clone()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{bad}");
        }
        let e = blocks(Some(&json!({"type":"text"})), SeenRules::SPEC).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidResponse);
        assert_eq!(blocks(None, SeenRules::SPEC).unwrap(), Vec::<Value>::new());
        let lax = SeenRules {
            reject_shapeless: false,
            ..SeenRules::SPEC
        };
        let shapeless = json!({"uri":"a","mimeType":"m"});
        assert_eq!(resource_contents(&shapeless, lax).unwrap(), shapeless);
        assert!(resource_contents(&json!({"uri":"a","text":1}), lax).is_err());
        assert!(is_blob(&json!({"uri":"a","blob":""})));
        assert!(!is_blob(&json!({"uri":"a","text":""})));
    }

    #[test]
    fn rules_can_drop_annotations_and_non_text_blocks() {
        let content = json!([
            {"type":"text","text":"a","annotations":{"priority":1}},
            {"type":"image","data":"AA==","mimeType":"image/png"},
            {"type":"resource","resource":{"uri":"u","text":"t"}},
            {"type":"resource_link","uri":"u","name":"n"},
            {"type":"text","text":"b"}
        ]);
        let all = blocks(Some(&content), SeenRules::SPEC).unwrap();
        assert_eq!(all.len(), 5);
        assert_eq!(all[0]["annotations"], json!({"priority":1}));
        let bare = SeenRules {
            keep_annotations: false,
            every_block: false,
            ..SeenRules::SPEC
        };
        assert_eq!(
            blocks(Some(&content), bare).unwrap(),
            [
                json!({"type":"text","text":"a"}),
                json!({"type":"text","text":"b"})
            ]
        );
    }

    #[test]
    fn previews_are_short() {
        let long = json!("x".repeat(1000));
        assert_eq!(preview(&long).chars().count(), 201);
        assert_eq!(preview(&json!(1)), "1");
    }
}
