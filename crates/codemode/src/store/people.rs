//! Who decided, as the store knows them (docs/design.md, "Who decided"): on SQLite the operating-system user
//! this process runs as; on PostgreSQL the role the server authenticated, which a trigger writes into every
//! person's decision (migration 15), so no front end — nor a patched binary — can name someone else.

use super::Store;
use crate::model::Decision;

impl Store {
    /// `decision` as this store records it: on SQLite a person's decision names the operating-system user;
    /// on PostgreSQL any `person` a front end put there is dropped, for the server's trigger to write.
    pub(super) fn attributed(&self, decision: &Decision) -> String {
        let mut decision = decision.clone();
        decision.person = if self.is_shared() || !decision.by.is_person() {
            None
        } else {
            os_user()
        };
        serde_json::to_string(&decision).unwrap_or_default()
    }
}

/// The name of the user this process runs as (its effective uid), from the system's user database.
fn os_user() -> Option<String> {
    // SAFETY: getpwuid_r writes into `entry` and `buffer`, which live until the name is copied out.
    unsafe {
        let uid = libc::geteuid();
        let mut entry: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let mut buffer = vec![0 as libc::c_char; 4096];
        let status = libc::getpwuid_r(
            uid,
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        );
        if status != 0 || found.is_null() || entry.pw_name.is_null() {
            return Some(format!("uid {uid}"));
        }
        Some(
            std::ffi::CStr::from_ptr(entry.pw_name)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_has_a_user_name() {
        let name = super::os_user().unwrap();
        assert!(!name.is_empty());
        if let Ok(user) = std::env::var("USER") {
            assert_eq!(name, user);
        }
    }
}
