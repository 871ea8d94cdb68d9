//! The scenario loader on arbitrary text, as if it were a case file. Properties: no panic; an
//! error names a place and says something.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mcp_harness_scenarios::load::parse_case;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let root = Path::new("scenarios");
    if let Err(e) = parse_case(root, &root.join("fuzz/case.json"), text) {
        assert!(!e.location.is_empty() && !e.message.is_empty(), "{e}");
    }
});
