//! Stdout hygiene: outcome lines are the only thing on the real stdout.
//!
//! On Unix, [`Output::guard`] keeps a private duplicate of the real stdout (close-on-exec, so
//! the server and any other child never hold the harness's output pipe) and then points file
//! descriptor 1 at stderr. Everything else that writes to stdout from then on (`println!` in
//! the adapter or its library, a C library's `printf`, a child that inherits stdout) lands on
//! stderr and cannot corrupt an outcome line. Elsewhere stdout is used as it is, unguarded.

use std::fs::File;
use std::io::Write;

use serde_json::Value;

/// Where outcome lines go.
pub struct Output {
    real: Option<File>,
}

impl Output {
    /// Takes over stdout (see the module docs). If that fails (stdout closed, say), lines go to
    /// the process's stdout as it is, and the reason is noted on stderr.
    pub fn guard() -> Output {
        match guard() {
            Ok(real) => Output { real: Some(real) },
            Err(e) => {
                eprintln!(
                    "mcp-harness-kit: stdout is not guarded ({e}); library prints may mix with outcome lines"
                );
                Output { real: None }
            }
        }
    }

    /// Writes one outcome line (one `write` of the whole line, newline included). A vanished
    /// stdout leaves nobody to report to, so the error is ignored and the plan goes on.
    pub fn line(&mut self, line: &Value) {
        let mut text = line.to_string();
        text.push('\n');
        let _ = match &mut self.real {
            Some(real) => real.write_all(text.as_bytes()),
            None => {
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush())
            }
        };
    }
}

#[cfg(unix)]
fn guard() -> std::io::Result<File> {
    use std::os::fd::AsFd;

    unsafe extern "C" {
        fn dup2(old: std::ffi::c_int, new: std::ffi::c_int) -> std::ffi::c_int;
    }
    let stdout = std::io::stdout();
    stdout.lock().flush()?;
    // `try_clone_to_owned` duplicates with F_DUPFD_CLOEXEC: children never inherit it.
    let real = stdout.as_fd().try_clone_to_owned()?;
    // SAFETY: dup2 on the process's own standard descriptors; 2 is open (or dup2 fails and
    // says so), and no Rust object owns descriptor 1 (std's stdout writes to it by number).
    if unsafe { dup2(2, 1) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(File::from(real))
}

#[cfg(not(unix))]
fn guard() -> std::io::Result<File> {
    Err(std::io::Error::other("not supported on this platform"))
}
