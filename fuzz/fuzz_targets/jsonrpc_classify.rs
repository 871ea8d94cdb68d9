//! The JSON-RPC classifier and the lenient id finder on arbitrary bytes (a stdio line, a JSON
//! body, an event's data), and the id finder on every prefix's worth of a cut message.
//! Properties: no panic; an id the finder reports is one it could read as an integer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_harness_client::decode::{classify, response_id};

fuzz_target!(|data: &[u8]| {
    let _ = classify(data);
    for cut in [data.len(), data.len() / 2, data.len() / 3] {
        if let Some(id) = response_id(&data[..cut]) {
            let text = id.to_string();
            assert!(
                data[..cut]
                    .windows(text.len())
                    .any(|w| w == text.as_bytes())
            );
        }
    }
});
