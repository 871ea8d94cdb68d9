//! `sdk` and `bench` outside the library: both need what only a checkout of this repository
//! has (the adapters' sources and baselines, cargo to build the rmcp adapter and the release
//! binaries the bench measures, the SDKs' toolchains), so the binary hands them to
//! `cargo xtask` in a checkout, and says which of these it could not find.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The checkout whose `cargo xtask` runs `sdk` and `bench`: the nearest directory at or
/// above the current one that is a checkout, else the one this binary was built from, if it
/// is still there. The error names what is missing.
pub fn find() -> Result<PathBuf, String> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if let Some(found) = here.ancestors().find(|dir| is_checkout(dir)) {
        return Ok(found.to_owned());
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_owned)
        .unwrap_or_default();
    if is_checkout(&built_from) {
        return Ok(built_from);
    }
    Err(format!(
        "this needs a checkout of the mcp-harness repository (a directory with Cargo.toml, \
         xtask/, runner/ and adapters/): none at or above {}, and the one this binary was \
         built from ({}) is gone; run it inside a checkout",
        here.display(),
        built_from.display()
    ))
}

fn is_checkout(dir: &Path) -> bool {
    dir.join("Cargo.toml").is_file()
        && dir.join("xtask").join("Cargo.toml").is_file()
        && dir.join("runner").join("Cargo.toml").is_file()
        && dir.join("adapters").is_dir()
}

/// Runs `cargo xtask <command> <args>` of the checkout, from the current directory (so that
/// relative paths in `args` mean what the user meant), and exits as it does.
pub fn delegate(command: &str, args: &[OsString]) -> ExitCode {
    let root = match find() {
        Ok(root) => root,
        Err(e) => {
            eprintln!("error: mcp-harness {command}: {e}");
            return ExitCode::from(2);
        }
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!(
        "mcp-harness {command}: running `cargo xtask {command}` in {}",
        root.display()
    );
    let status = Command::new(&cargo)
        .args(["run", "--quiet", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .args(["--package", "xtask", "--", command])
        .args(args)
        .status();
    match status {
        Ok(status) => match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::from(1),
        },
        Err(e) => {
            eprintln!(
                "error: mcp-harness {command}: cannot run cargo ({}): {e}; `{command}` builds in the checkout {} and needs the Rust toolchain on PATH",
                cargo.to_string_lossy(),
                root.display()
            );
            ExitCode::from(2)
        }
    }
}
