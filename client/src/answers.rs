//! The answers to `resources/read`, `prompts/get` and `completion/complete` in the shape the
//! caller is told, as pure functions over the result.
//!
//! Each takes the result as received and keeps what the driver contract reports: resource
//! contents and prompt message content as seen (see [`crate::content`]), the completion object
//! as received but for members it does not name. A result of the wrong shape is
//! `invalid_response`.

use serde_json::{Map, Value};

use crate::content::{self, SeenRules, preview};
use crate::error::Error;

/// A `resources/read` result as `{"contents":[…]}`, each contents as seen.
pub(crate) fn read_resource(result: &Value, rules: SeenRules) -> Result<Value, Error> {
    let Some(contents) = result.get("contents").and_then(Value::as_array) else {
        return Err(Error::invalid(format!(
            "the resources/read result has no \"contents\" array: {}",
            preview(result)
        )));
    };
    let mut seen = Vec::with_capacity(contents.len());
    for entry in contents {
        if !rules.blob_contents && content::is_blob(entry) {
            continue;
        }
        seen.push(content::resource_contents(entry, rules)?);
    }
    Ok(one("contents", Value::Array(seen)))
}

/// A `prompts/get` result as `{"description":…,"messages":[{"role":…,"content":…}]}`
/// (`description` only when received), each message's content as seen.
pub(crate) fn get_prompt(result: &Value, rules: SeenRules) -> Result<Value, Error> {
    let Some(messages) = result.get("messages").and_then(Value::as_array) else {
        return Err(Error::invalid(format!(
            "the prompts/get result has no \"messages\" array: {}",
            preview(result)
        )));
    };
    let mut answer = Map::new();
    if let Some(description) = result.get("description") {
        answer.insert("description".into(), description.clone());
    }
    let mut seen = Vec::with_capacity(messages.len());
    for message in messages {
        let (Some(role), Some(content)) = (
            message.get("role").and_then(Value::as_str),
            message.get("content"),
        ) else {
            return Err(Error::invalid(format!(
                "a prompt message needs a string \"role\" and a \"content\" block: {}",
                preview(message)
            )));
        };
        if let Some(content) = content::block(content, rules)? {
            let mut message = one("role", role.into());
            message["content"] = content;
            seen.push(message);
        }
    }
    answer.insert("messages".into(), Value::Array(seen));
    Ok(Value::Object(answer))
}

/// A `completion/complete` result's `completion` object: `values`, and `total` and `hasMore`
/// when received.
pub(crate) fn complete(result: &Value, rules: SeenRules) -> Result<Value, Error> {
    let completion = result.get("completion");
    let Some(values) = completion
        .and_then(|c| c.get("values"))
        .filter(|v| v.is_array())
    else {
        return Err(Error::invalid(format!(
            "the completion/complete result has no \"completion\" with a \"values\" array: {}",
            preview(result)
        )));
    };
    let mut answer = one("values", values.clone());
    if rules.completion_totals {
        for member in ["total", "hasMore"] {
            if let Some(value) = completion.and_then(|c| c.get(member)) {
                answer[member] = value.clone();
            }
        }
    }
    Ok(answer)
}

fn one(name: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(name.into(), value);
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    #[test]
    fn read_reports_contents_as_seen() {
        let result = json!({"contents":[
            {"uri":"file:///a.txt","mimeType":"text/plain","text":"A"},
            {"uri":"file:///b.bin","blob":"aGVsbG8="}], "_meta":{}});
        let seen = read_resource(&result, SeenRules::SPEC).unwrap();
        assert_eq!(seen["contents"][0], result["contents"][0]);
        assert_eq!(seen["contents"][1]["bytes"], 5);
        let no_blobs = SeenRules {
            blob_contents: false,
            ..SeenRules::SPEC
        };
        let seen = read_resource(&result, no_blobs).unwrap();
        assert_eq!(seen["contents"].as_array().unwrap().len(), 1);
        for bad in [
            json!({}),
            json!({"contents":{}}),
            json!({"contents":[{"uri":"a"}]}),
        ] {
            let e = read_resource(&bad, SeenRules::SPEC).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{bad}");
        }
    }

    #[test]
    fn prompts_keep_role_and_content_as_seen() {
        let result = json!({"description":"Review","messages":[
            {"role":"user","content":{"type":"text","text":"x = 1"}},
            {"role":"assistant","content":{"type":"image","data":"AA==","mimeType":"image/png"}}]});
        let seen = get_prompt(&result, SeenRules::SPEC).unwrap();
        assert_eq!(seen["description"], "Review");
        assert_eq!(seen["messages"][0], result["messages"][0]);
        assert_eq!(seen["messages"][1]["content"]["bytes"], 1);
        let bare = get_prompt(&json!({"messages":[]}), SeenRules::SPEC).unwrap();
        assert_eq!(bare, json!({"messages":[]}));
        let text_only = SeenRules {
            every_block: false,
            ..SeenRules::SPEC
        };
        let seen = get_prompt(&result, text_only).unwrap();
        assert_eq!(seen["messages"].as_array().unwrap().len(), 1);
        for bad in [
            json!({}),
            json!({"messages":[{"role":"user"}]}),
            json!({"messages":[{"content":{"type":"text","text":"x"}}]}),
            json!({"messages":[{"role":"user","content":{"type":"nope"}}]}),
        ] {
            let e = get_prompt(&bad, SeenRules::SPEC).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{bad}");
        }
    }

    #[test]
    fn completion_members_only_when_received() {
        let full = json!({"completion":{"values":["py","pyx"],"total":10,"hasMore":true,"x":1}});
        assert_eq!(
            complete(&full, SeenRules::SPEC).unwrap(),
            json!({"values":["py","pyx"],"total":10,"hasMore":true})
        );
        let bare = json!({"completion":{"values":[]}});
        assert_eq!(
            complete(&bare, SeenRules::SPEC).unwrap(),
            json!({"values":[]})
        );
        let values_only = SeenRules {
            completion_totals: false,
            ..SeenRules::SPEC
        };
        assert_eq!(
            complete(&full, values_only).unwrap(),
            json!({"values":["py","pyx"]})
        );
        for bad in [
            json!({}),
            json!({"completion":{}}),
            json!({"completion":{"values":"x"}}),
        ] {
            let e = complete(&bad, SeenRules::SPEC).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidResponse, "{bad}");
        }
    }
}
