//! The conformance runner as a library, shared by the in-repository `cargo xtask` and the
//! installable `mcp-harness` binary (`src/bin/mcp-harness/`). Neither front end holds runner
//! logic: each picks where the built-in cases are (the tree for xtask, a copy the binary
//! carries) and which programs play the fake and the driver, then calls in here.
//!
//! | module         | role                                                               |
//! |----------------|--------------------------------------------------------------------|
//! | `case_from`    | a recorded session turned into a case (`case-from`)                |
//! | `cli`          | the `conformance`/`run` flags, one clap struct for both front ends |
//! | `conformance`  | trials, checks, verdicts, snapshots, baselines; `cases` for `--cases` |
//! | `offline`      | `check`: a recording graded by the always-on wire rules, offline   |
//! | `report`       | `results.json`, `junit.xml`, `report.html`, the matrix             |
//! | `requirements` | the catalogue and what cites each requirement                      |
//! | `record`       | `mcp-harness record`: the recording proxy, its redaction and faults |

pub mod case_from;
pub mod cli;
pub mod conformance;
pub mod offline;
pub mod record;
pub mod report;
pub mod requirements;
pub mod serve;
