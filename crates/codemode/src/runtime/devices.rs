//! Phones paired to approve from (docs/phone.md): pairing codes, device tokens and followed links, each kept
//! only as a SHA-256 hash, so a copy of the database pairs nothing and opens no link.

use super::*;
use crate::codec::sha256_hex;
use crate::store::{Device, Redeemed};

impl Runtime {
    /// Records the one-time `code` that pairs a device as `name`, valid until `expires_at`; false when a
    /// device of that name is paired.
    pub fn add_pairing(
        &self,
        name: &str,
        code: &str,
        expires_at: i64,
    ) -> Result<bool, RuntimeError> {
        Ok(self.inner.store.add_pairing(
            name,
            &sha256_hex(code.as_bytes()),
            self.inner.now(),
            expires_at,
        )?)
    }

    /// Redeems `code`, pairing the device that will present `token`.
    pub fn redeem_pairing(&self, code: &str, token: &str) -> Result<Redeemed, RuntimeError> {
        Ok(self.inner.store.redeem_pairing(
            &sha256_hex(code.as_bytes()),
            &sha256_hex(token.as_bytes()),
            self.inner.now(),
        )?)
    }

    /// The name of the (not revoked) device that holds `token`.
    pub fn device_by_token(&self, token: &str) -> Result<Option<String>, RuntimeError> {
        Ok(self
            .inner
            .store
            .device_by_token(&sha256_hex(token.as_bytes()), self.inner.now())?)
    }

    /// Whether device `name` is paired and not revoked.
    pub fn device_active(&self, name: &str) -> Result<bool, RuntimeError> {
        Ok(self.inner.store.device_active(name)?)
    }

    pub fn devices(&self) -> Result<Vec<Device>, RuntimeError> {
        Ok(self.inner.store.devices()?)
    }

    /// Revokes device `name` now; false when none of that name is paired.
    pub fn revoke_device(&self, name: &str) -> Result<bool, RuntimeError> {
        Ok(self.inner.store.revoke_device(name, self.inner.now())?)
    }

    /// Marks the link with `nonce` followed; false when it was followed before.
    pub fn follow_link(&self, nonce: &str) -> Result<bool, RuntimeError> {
        Ok(self
            .inner
            .store
            .follow_link(&sha256_hex(nonce.as_bytes()), self.inner.now())?)
    }

    /// The announcements with nothing to do now, as (run, seq, webhook URL).
    pub fn settled_announcements(
        &self,
        max_attempts: u32,
    ) -> Result<std::collections::HashSet<(String, u64, String)>, RuntimeError> {
        Ok(self
            .inner
            .store
            .settled_announcements(self.inner.now(), max_attempts)?)
    }

    /// Claims the next attempt at announcing a waiting call to a webhook ([`crate::store::Store::claim_announcement`]):
    /// its number, or `None` when there is nothing to send now. Attempt n, unless it arrives, is tried again
    /// `retry_after(n)` later.
    pub fn claim_announcement(
        &self,
        execution_id: &str,
        seq: u64,
        url: &str,
        retry_after: &dyn Fn(u32) -> std::time::Duration,
        max_attempts: u32,
    ) -> Result<Option<u32>, RuntimeError> {
        let now = self.inner.now();
        let retry_at = |attempt: u32| now.saturating_add(retry_after(attempt).as_millis() as i64);
        Ok(self.inner.store.claim_announcement(
            execution_id,
            seq,
            url,
            now,
            &retry_at,
            max_attempts,
        )?)
    }

    /// Records that the announcement arrived, or why the attempt failed.
    pub fn announcement_result(
        &self,
        execution_id: &str,
        seq: u64,
        url: &str,
        result: Result<(), &str>,
    ) -> Result<(), RuntimeError> {
        let result = result.map(|()| self.inner.now());
        Ok(self
            .inner
            .store
            .announcement_result(execution_id, seq, url, result)?)
    }
}
