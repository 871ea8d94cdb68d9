//! The session table: which `Mcp-Session-Id`s the fake has issued and how many requests each
//! has served, so the script can make a session expire and watch the client start over.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// Why a request's session header was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No `Mcp-Session-Id` header although sessions are on (HTTP 400).
    Missing,
    /// An id the fake never issued, or one that has ended or expired (HTTP 404).
    Unknown,
}

impl Refusal {
    /// The HTTP status that answers it.
    pub fn status(self) -> u16 {
        match self {
            Refusal::Missing => 400,
            Refusal::Unknown => 404,
        }
    }

    /// The code of the JSON-RPC error in the answer's body.
    pub fn code(self) -> i64 {
        match self {
            Refusal::Missing => -32000,
            Refusal::Unknown => -32001,
        }
    }

    /// The message of the JSON-RPC error in the answer's body.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::Missing => "Bad Request: Mcp-Session-Id header is required",
            Refusal::Unknown => "Session not found",
        }
    }
}

/// Issued sessions and their request counts. All methods take `&self`.
#[derive(Debug)]
pub struct Sessions {
    expire_after: Option<u32>,
    issued: AtomicU64,
    live: Mutex<HashMap<String, u32>>,
}

impl Sessions {
    /// An empty table whose sessions expire after `expire_after` requests, if given.
    pub fn new(expire_after: Option<u32>) -> Sessions {
        Sessions {
            expire_after,
            issued: AtomicU64::new(0),
            live: Mutex::new(HashMap::new()),
        }
    }

    /// Issues a fresh id: 32 hex digits, unique within the process and unpredictable enough
    /// that a client cannot get by with a hard-coded one. (The runner redacts them.)
    pub fn open(&self) -> String {
        let n = self.issued.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mix = |salt: u64| {
            let mut h = RandomState::new().build_hasher();
            h.write_u64(n);
            h.write_u128(nanos);
            h.write_u64(salt);
            h.finish()
        };
        let id = format!("{:016x}{:016x}", mix(1), mix(2));
        // The `initialize` that opens a session is its first request.
        self.table().insert(id.clone(), 1);
        id
    }

    /// Checks the session header of a request and counts the request against the session.
    /// The request after the `expire_after`-th (counting the `initialize` that opened the
    /// session as the first) finds the session gone.
    pub fn admit(&self, header: Option<&str>) -> Result<(), Refusal> {
        let id = header.ok_or(Refusal::Missing)?;
        let mut table = self.table();
        let served = table.get_mut(id).ok_or(Refusal::Unknown)?;
        if self.expire_after.is_some_and(|limit| *served >= limit) {
            table.remove(id);
            return Err(Refusal::Unknown);
        }
        *served += 1;
        Ok(())
    }

    /// Ends a session (a client's DELETE). Returns whether it was live.
    pub fn close(&self, id: &str) -> bool {
        self.table().remove(id).is_some()
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_fresh_hex_and_checked() {
        let sessions = Sessions::new(None);
        let a = sessions.open();
        let b = sessions.open();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(sessions.admit(None), Err(Refusal::Missing));
        assert_eq!(sessions.admit(Some("nope")), Err(Refusal::Unknown));
        assert_eq!(sessions.admit(Some(&a)), Ok(()));
        assert!(sessions.close(&a));
        assert!(!sessions.close(&a));
        assert_eq!(sessions.admit(Some(&a)), Err(Refusal::Unknown));
        assert_eq!(sessions.admit(Some(&b)), Ok(()));
    }

    #[test]
    fn sessions_expire_after_the_scripted_count() {
        // initialize, then two more requests, then gone.
        let sessions = Sessions::new(Some(3));
        let id = sessions.open();
        assert_eq!(sessions.admit(Some(&id)), Ok(()));
        assert_eq!(sessions.admit(Some(&id)), Ok(()));
        assert_eq!(sessions.admit(Some(&id)), Err(Refusal::Unknown));
        assert_eq!(sessions.admit(Some(&id)), Err(Refusal::Unknown));
        assert_eq!(Refusal::Missing.status(), 400);
        assert_eq!(Refusal::Unknown.status(), 404);
    }
}
