//! Checking a matcher before it meets a value: its operators, their arguments and its paths,
//! so a case with a misspelt operator or one that can never match is rejected when loaded.

use serde_json::Value;

use super::{TYPES, operator};

/// Checks the operators and names of a matcher without a value to match, so that a case
/// with a misspelt operator is rejected when it is loaded rather than failing every client.
pub fn validate(matcher: &Value) -> Result<(), String> {
    validate_at("$", matcher)
}

fn validate_at(path: &str, matcher: &Value) -> Result<(), String> {
    match matcher {
        Value::Object(map) => {
            if let Some((op, arg)) = operator(matcher) {
                return match (op, arg) {
                    ("$absent" | "$absent_or_null" | "$present", Value::Bool(true)) => Ok(()),
                    ("$literal", _) => Ok(()),
                    ("$default", Value::Bool(_) | Value::Number(_) | Value::String(_)) => Ok(()),
                    ("$capture" | "$same", Value::String(_)) => Ok(()),
                    ("$contains", Value::String(part)) if part.is_empty() => Err(format!(
                        "{path}: operator $contains has an empty argument, which every string \
                         contains; expected the text to look for"
                    )),
                    ("$contains", Value::String(_)) => Ok(()),
                    ("$words", Value::String(text)) if text.split(' ').all(str::is_empty) => {
                        Err(format!(
                            "{path}: operator $words has no words; expected a space-separated \
                             list such as \"a b\""
                        ))
                    }
                    ("$words", Value::String(_)) => Ok(()),
                    ("$type", Value::String(t)) if TYPES.contains(&t.as_str()) => Ok(()),
                    ("$not", inner) => validate_at(path, inner),
                    ("$one_of", Value::Array(items)) if items.is_empty() => Err(format!(
                        "{path}: operator $one_of has no matchers, so nothing can match it; \
                         expected a non-empty array of matchers"
                    )),
                    ("$distinct", Value::String(member)) if !member.is_empty() => Ok(()),
                    ("$all_of", Value::Array(items)) if items.is_empty() => Err(format!(
                        "{path}: operator $all_of has no matchers; expected a non-empty array of matchers"
                    )),
                    ("$unordered" | "$one_of" | "$all_of", Value::Array(items)) => {
                        for (i, item) in items.iter().enumerate() {
                            validate_at(&format!("{path}[{i}]"), item)?;
                        }
                        Ok(())
                    }
                    _ => Err(format!(
                        "{path}: operator {op} has an invalid argument {arg}; expected \
                         $absent/$absent_or_null/$present: true, $default: a scalar, $capture/$same: \"name\", $contains/$words: \"text\", $type: one of {TYPES:?}, $not: matcher, $unordered/$one_of/$all_of: [matchers], $distinct: \"member\", $literal: any value"
                    )),
                };
            }
            if let Some(key) = map.keys().find(|k| k.starts_with('$')) {
                return Err(format!(
                    "{path}: unknown operator {key:?} (operators stand alone in their object: \
                     $absent, $absent_or_null, $present, $default, $type, $contains, $words, $capture, $same, $not, $unordered, $one_of, $all_of, $distinct, $literal)"
                ));
            }
            for (key, value) in map {
                validate_at(&format!("{path}.{key}"), value)?;
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                validate_at(&format!("{path}[{i}]"), item)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validation_names_the_bad_operator() {
        assert!(validate(&json!({"$unordered": [{"a": {"$present": true}}]})).is_ok());
        assert!(validate(&json!({"$unordered": {"a": 1}})).is_err());
        let err = validate(&json!({"t": {"$unordered": [{"$presnt": true}]}})).unwrap_err();
        assert!(err.contains("$.t[0]"), "{err}");
        assert!(validate(&json!({"a": {"$absent": true}})).is_ok());
        assert!(validate(&json!({"a": {"$absent_or_null": true}})).is_ok());
        assert!(validate(&json!({"a": {"$absent_or_null": false}})).is_err());
        let err = validate(&json!({"a": {"$abesnt": true}})).unwrap_err();
        assert!(err.contains("$.a") && err.contains("$abesnt"), "{err}");
        assert!(validate(&json!({"$type": "str"})).is_err());
        assert!(validate(&json!({"line": {"$contains": "pw"}})).is_ok());
        assert!(validate(&json!({"line": {"$contains": ""}})).is_err());
        assert!(validate(&json!({"line": {"$contains": 3}})).is_err());
    }

    #[test]
    fn an_empty_one_of_is_rejected_with_its_path() {
        let err = validate(&json!({"a": [1, {"method": {"$one_of": []}}]})).unwrap_err();
        assert!(
            err.contains("$.a[1].method") && err.contains("$one_of"),
            "{err}"
        );
        let err = validate(&json!({"$not": {"$one_of": []}})).unwrap_err();
        assert!(err.starts_with("$:"), "{err}");
        assert!(validate(&json!({"$one_of": ["a"]})).is_ok());
        // An empty $unordered is fine: it matches the empty array.
        assert!(validate(&json!({"$unordered": []})).is_ok());
    }
}
