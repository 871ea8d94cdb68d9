//! The conformance runner as a library, shared by the in-repository `cargo xtask` and the
//! installable `mcp-harness` binary (`src/bin/mcp-harness/`). Neither front end holds runner
//! logic: each picks where the built-in cases are (the tree for xtask, a copy the binary
//! carries) and which programs play the fake and the driver, then calls in here.
//!
//! | module         | role                                                               |
//! |----------------|--------------------------------------------------------------------|
//! | `cli`          | the `conformance`/`run` flags, one clap struct for both front ends |
//! | `conformance`  | trials, checks, verdicts, snapshots, baselines; `cases` for `--cases` |
//! | `report`       | `results.json`, `junit.xml`, `report.html`, the matrix             |
//! | `sdk`          | pinned SDKs and their adapters, run with their baselines            |
//! | `bench`        | the reference client, the suite and the fakes, measured            |
//! | `soak`         | the suite repeated, verdicts that change between runs              |
//! | `requirements` | the catalogue and what cites each requirement                      |
//! | `paths`        | the checkout and its harness binaries (repository runs only)       |

pub mod bench;
pub mod cli;
pub mod conformance;
pub mod paths;
pub mod report;
pub mod requirements;
pub mod sdk;
pub mod soak;
