//! The harness's entry points, as a library so that tests drive the same code the
//! `cargo xtask` commands run. `main.rs` only parses the command line. The runner itself is
//! the `mcp-harness` crate (runner/); it is re-exported here under its old paths.

pub use mcp_harness::{bench, cli, conformance, paths, report, requirements, sdk, soak};

pub mod fmt_cases;
pub mod official_clients;
pub mod schema;
