//! The harness's entry points, as a library so that tests drive the same code the
//! `cargo xtask` commands run. `main.rs` only parses the command line.

pub mod bench;
pub mod conformance;
pub mod fmt_cases;
pub mod paths;
pub mod report;
pub mod requirements;
pub mod schema;
pub mod sdk;
pub mod soak;
