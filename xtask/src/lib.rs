//! The repository's commands, as a library so that tests drive the same code the
//! `cargo xtask` commands run. `main.rs` only parses the command line. The runner itself is
//! the `mcp-harness` crate (runner/); what lives here serves only a checkout: the pinned
//! SDKs, the bench, the soak, the case formatter, the schemas and where the tree is.

pub mod bench;
pub mod child;
pub mod fmt_cases;
pub mod forward;
pub mod official_clients;
pub mod paths;
pub mod schema;
pub mod sdk;
pub mod soak;
