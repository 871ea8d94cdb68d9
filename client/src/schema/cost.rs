//! The static bounds on a schema, checked before it is compiled ("Implementations SHOULD apply
//! reasonable bounds, such as a maximum schema depth, a cap on the total number of
//! subschemas, or a per-validation time budget", 2026-07-28 § Composition-Keyword Resource
//! Use).
//!
//! Three numbers, each far above what a real tool's schema needs:
//! - nesting: at most [`MAX_DEPTH`] levels of JSON objects and arrays;
//! - size: at most [`MAX_VALUES`] JSON values;
//! - expansion: at most [`MAX_EXPANDED`] subschema evaluations once every local `$ref`
//!   (`#/json/pointer` or `#anchor`) is followed where it is used. This is what catches a small
//!   schema that costs exponential time: `d0 = allOf[d1, d1]`, `d1 = allOf[d2, d2]`, … A
//!   reference that leads back into itself (a recursive schema) counts once: its cost grows
//!   with the instance, not the schema, and the time budget covers that.

use std::collections::HashMap;

use serde_json::Value;

/// The deepest nesting of objects and arrays a schema may have.
pub(crate) const MAX_DEPTH: usize = 64;
/// The most JSON values a schema may hold.
pub(crate) const MAX_VALUES: usize = 100_000;
/// The most subschema evaluations a schema may expand to.
pub(crate) const MAX_EXPANDED: u64 = 1_000_000;

/// Whether `schema` is within the bounds; the error says which bound and by how much.
pub(crate) fn check(schema: &Value) -> Result<(), String> {
    let (values, depth) = measure(schema);
    if depth > MAX_DEPTH {
        return Err(format!(
            "the outputSchema nests {depth} levels deep, past this client's bound of {MAX_DEPTH}"
        ));
    }
    if values > MAX_VALUES {
        return Err(format!(
            "the outputSchema holds {values} values, past this client's bound of {MAX_VALUES}"
        ));
    }
    let mut walk = Expansion {
        root: schema,
        anchors: HashMap::new(),
        memo: HashMap::new(),
    };
    collect_anchors(schema, String::new(), &mut walk.anchors);
    let expanded = walk.cost(schema, String::new(), 0)?;
    if expanded > MAX_EXPANDED {
        return Err(format!(
            "the outputSchema expands to more than {MAX_EXPANDED} subschema evaluations \
             through its references, past this client's bound"
        ));
    }
    Ok(())
}

/// How many values `value` holds and how deep it nests, without recursion.
fn measure(value: &Value) -> (usize, usize) {
    let mut stack = vec![(value, 1usize)];
    let (mut values, mut deepest) = (0, 0);
    while let Some((v, depth)) = stack.pop() {
        values += 1;
        deepest = deepest.max(depth);
        match v {
            Value::Object(map) => stack.extend(map.values().map(|c| (c, depth + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    (values, deepest)
}

/// `$anchor` and `$dynamicAnchor` names, with the JSON pointer of the object naming them.
/// Called only on a schema within [`MAX_DEPTH`], so the recursion is bounded.
fn collect_anchors(value: &Value, at: String, anchors: &mut HashMap<String, String>) {
    match value {
        Value::Object(map) => {
            for key in ["$anchor", "$dynamicAnchor"] {
                if let Some(Value::String(name)) = map.get(key) {
                    anchors.entry(name.clone()).or_insert_with(|| at.clone());
                }
            }
            for (k, v) in map {
                collect_anchors(v, child(&at, k), anchors);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_anchors(v, child(&at, &i.to_string()), anchors);
            }
        }
        _ => {}
    }
}

fn child(at: &str, key: &str) -> String {
    format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The expanded cost, memoised by JSON pointer.
struct Expansion<'a> {
    root: &'a Value,
    anchors: HashMap<String, String>,
    /// `None` while a node is being costed (a reference back into it counts once).
    memo: HashMap<String, Option<u64>>,
}

impl Expansion<'_> {
    fn cost(&mut self, value: &Value, at: String, hops: usize) -> Result<u64, String> {
        if hops > MAX_DEPTH * 4 {
            return Err(format!(
                "the outputSchema's references lead more than {} levels deep, past this \
                 client's bound",
                MAX_DEPTH * 4
            ));
        }
        match self.memo.get(&at) {
            Some(Some(done)) => return Ok(*done),
            Some(None) => return Ok(1),
            None => {}
        }
        self.memo.insert(at.clone(), None);
        let mut total: u64 = 1;
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let part = match (k.as_str(), v) {
                        ("$ref" | "$dynamicRef", Value::String(target)) => {
                            self.follow(target, hops)?
                        }
                        (_, Value::Object(_) | Value::Array(_)) => {
                            self.cost(v, child(&at, k), hops + 1)?
                        }
                        _ => 0,
                    };
                    total = total.saturating_add(part);
                    if total > MAX_EXPANDED {
                        break;
                    }
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    total =
                        total.saturating_add(self.cost(v, child(&at, &i.to_string()), hops + 1)?);
                    if total > MAX_EXPANDED {
                        break;
                    }
                }
            }
            _ => total = 0,
        }
        self.memo.insert(at, Some(total));
        Ok(total)
    }

    /// The cost of what a local reference names; a reference elsewhere costs 1 here (it is
    /// never loaded, so compiling fails on it).
    fn follow(&mut self, target: &str, hops: usize) -> Result<u64, String> {
        let Some(fragment) = target.strip_prefix('#') else {
            return Ok(1);
        };
        let pointer = if fragment.is_empty() || fragment.starts_with('/') {
            fragment.to_owned()
        } else {
            match self.anchors.get(fragment) {
                Some(at) => at.clone(),
                None => return Ok(1),
            }
        };
        let root = self.root;
        match root.pointer(&pointer) {
            Some(found) => self.cost(found, pointer, hops + 1),
            None => Ok(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doubling_chain(links: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..links {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert(format!("d{links}"), json!({"type": "object"}));
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    }

    #[test]
    fn ordinary_schemas_pass() {
        let schema = json!({
            "$defs": {"temp": {"$anchor": "t", "type": "number"}},
            "type": "object",
            "properties": {"a": {"$ref": "#t"}, "b": {"$ref": "#/$defs/temp"}},
        });
        assert_eq!(check(&schema), Ok(()));
        assert_eq!(check(&doubling_chain(10)), Ok(()));
    }

    #[test]
    fn a_recursive_schema_counts_its_loop_once() {
        let tree = json!({"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#"}}}});
        assert_eq!(check(&tree), Ok(()));
    }

    #[test]
    fn exponential_expansion_depth_and_size_are_refused() {
        let why = check(&doubling_chain(40)).unwrap_err();
        assert!(why.contains("expands"), "{why}");
        let mut deep = json!({});
        for _ in 0..40 {
            deep = json!({"allOf": [deep]});
        }
        assert!(check(&deep).unwrap_err().contains("levels deep"));
        let wide = Value::Array(vec![json!(1); MAX_VALUES + 1]);
        assert!(
            check(&json!({"enum": wide}))
                .unwrap_err()
                .contains("values")
        );
    }
}
