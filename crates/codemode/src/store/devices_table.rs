//! Paired phones (`cm_devices`), their one-time pairing codes (`cm_pairings`) and the signed links already
//! followed (`cm_links`), and the webhook announcements of waiting calls (`cm_announcements`) — docs/phone.md. Only hashes of codes and tokens are kept.

use super::sql::args;
use super::{Store, StoreError};
use serde::Serialize;

/// A device paired to approve from, as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Device {
    pub name: String,
    pub paired_at: i64,
    /// When it last asked for anything (to the minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<i64>,
    /// When it was revoked; a revoked device is refused everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<i64>,
}

/// What redeeming a pairing code came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redeemed {
    /// The device is paired under this name.
    Paired(String),
    /// No such code.
    Unknown,
    /// The code was redeemed before.
    Used,
    /// The code's ten minutes passed.
    Expired,
    /// Another device was paired under the code's name meanwhile.
    NameTaken(String),
}

/// How often a device's last use is written: a phone's page asks every few seconds.
const LAST_USE_EVERY_MS: i64 = 60_000;

/// How long an announcement is remembered: longer than a call waits by default, so none is announced twice.
const ANNOUNCEMENTS_KEPT_MS: i64 = 7 * 24 * 3600 * 1000;

/// How long a followed link's nonce is remembered: longer than any link lives.
const LINKS_KEPT_MS: i64 = 24 * 3600 * 1000;

impl Store {
    /// Records a pairing code for a device to be called `name`; false when a device of that name is paired
    /// (not revoked).
    pub fn add_pairing(
        &self,
        name: &str,
        code_hash: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<bool, StoreError> {
        self.write(|tx| {
            let taken = tx
                .query_opt(
                    "SELECT name FROM cm_devices WHERE runtime = ?1 AND name = ?2 AND revoked_at IS NULL",
                    args![self.runtime, name],
                )?
                .is_some();
            if taken {
                return Ok(false);
            }
            // Codes that ended are of no use to anyone.
            tx.execute(
                "DELETE FROM cm_pairings WHERE runtime = ?1 AND (expires_at <= ?2 OR used_at IS NOT NULL)",
                args![self.runtime, now],
            )?;
            tx.execute(
                "INSERT INTO cm_pairings (code_hash, runtime, name, created_at, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                args![code_hash, self.runtime, name, now, expires_at],
            )?;
            Ok(true)
        })
    }

    /// Redeems a pairing code: marks it used and pairs the device with `token_hash`, in one transaction; a code
    /// is redeemed once, whoever comes second finds it [`Redeemed::Used`].
    pub fn redeem_pairing(
        &self,
        code_hash: &str,
        token_hash: &str,
        now: i64,
    ) -> Result<Redeemed, StoreError> {
        self.write(|tx| {
            let Some(row) = tx.query_opt(
                "SELECT name, expires_at, used_at FROM cm_pairings WHERE code_hash = ?1 AND runtime = ?2",
                args![code_hash, self.runtime],
            )?
            else {
                return Ok(Redeemed::Unknown);
            };
            let name: String = row.get(0)?;
            let expires_at: i64 = row.get(1)?;
            let used_at: Option<i64> = row.get(2)?;
            if used_at.is_some() {
                return Ok(Redeemed::Used);
            }
            if expires_at <= now {
                return Ok(Redeemed::Expired);
            }
            let claimed = tx.execute(
                "UPDATE cm_pairings SET used_at = ?3 WHERE code_hash = ?1 AND runtime = ?2 AND used_at IS NULL",
                args![code_hash, self.runtime, now],
            )?;
            if claimed != 1 {
                return Ok(Redeemed::Used);
            }
            let paired = tx.execute(
                "INSERT INTO cm_devices (runtime, name, token_hash, paired_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (runtime, name) DO UPDATE SET token_hash = excluded.token_hash,
                   paired_at = excluded.paired_at, last_used_at = NULL, revoked_at = NULL
                 WHERE cm_devices.revoked_at IS NOT NULL",
                args![self.runtime, name, token_hash, now],
            )?;
            Ok(if paired == 1 {
                Redeemed::Paired(name)
            } else {
                Redeemed::NameTaken(name)
            })
        })
    }

    /// The device holding the token of `token_hash`, unless it was revoked; its last use is brought up to
    /// `now` (at most once a minute).
    pub fn device_by_token(
        &self,
        token_hash: &str,
        now: i64,
    ) -> Result<Option<String>, StoreError> {
        let found = self.with(|connection| {
            connection.query_row_opt(
                "SELECT name, last_used_at FROM cm_devices
                 WHERE runtime = ?1 AND token_hash = ?2 AND revoked_at IS NULL",
                args![self.runtime, token_hash],
                |row| Ok((row.get::<String>(0)?, row.get::<Option<i64>>(1)?)),
            )
        })?;
        let Some((name, last_used_at)) = found else {
            return Ok(None);
        };
        if last_used_at.is_none_or(|at| now - at >= LAST_USE_EVERY_MS) {
            self.write(|tx| {
                tx.execute(
                    "UPDATE cm_devices SET last_used_at = ?3
                     WHERE runtime = ?1 AND token_hash = ?2 AND revoked_at IS NULL",
                    args![self.runtime, token_hash, now],
                )
            })?;
        }
        Ok(Some(name))
    }

    /// Whether the device `name` is paired and not revoked: what a decision from it is checked against, in
    /// case it was revoked between its request's check and its answer.
    pub fn device_active(&self, name: &str) -> Result<bool, StoreError> {
        self.with(|connection| {
            Ok(connection
                .query_opt(
                    "SELECT name FROM cm_devices WHERE runtime = ?1 AND name = ?2 AND revoked_at IS NULL",
                    args![self.runtime, name],
                )?
                .is_some())
        })
    }

    /// Every device paired here, revoked ones included, by name.
    pub fn devices(&self) -> Result<Vec<Device>, StoreError> {
        self.with(|connection| {
            connection.query_map(
                "SELECT name, paired_at, last_used_at, revoked_at FROM cm_devices WHERE runtime = ?1
                 ORDER BY name",
                args![self.runtime],
                |row| {
                    Ok(Device {
                        name: row.get(0)?,
                        paired_at: row.get(1)?,
                        last_used_at: row.get(2)?,
                        revoked_at: row.get(3)?,
                    })
                },
            )
        })
    }

    /// Revokes the device `name` at once; false when no such device is paired (or it was revoked before).
    pub fn revoke_device(&self, name: &str, now: i64) -> Result<bool, StoreError> {
        self.write(|tx| {
            let revoked = tx.execute(
                "UPDATE cm_devices SET revoked_at = ?3 WHERE runtime = ?1 AND name = ?2 AND revoked_at IS NULL",
                args![self.runtime, name, now],
            )?;
            Ok(revoked == 1)
        })
    }

    /// Marks a signed link's nonce followed; false when it was followed before (a link opens its card once).
    pub fn follow_link(&self, nonce: &str, now: i64) -> Result<bool, StoreError> {
        self.write(|tx| {
            tx.execute(
                "DELETE FROM cm_links WHERE runtime = ?1 AND used_at < ?2",
                args![self.runtime, now - LINKS_KEPT_MS],
            )?;
            let fresh = tx.execute(
                "INSERT INTO cm_links (nonce, runtime, used_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                args![nonce, self.runtime, now],
            )?;
            Ok(fresh == 1)
        })
    }

    /// The announcements with nothing to do now — sent, not due before a later attempt, or out of attempts —
    /// as (run, seq, webhook URL): read once per round, so a round writes only for the calls it claims.
    pub fn settled_announcements(
        &self,
        now: i64,
        max_attempts: u32,
    ) -> Result<std::collections::HashSet<(String, u64, String)>, StoreError> {
        self.with(|connection| {
            let rows = connection.query_map(
                "SELECT execution_id, seq, url FROM cm_announcements
                 WHERE runtime = ?1 AND (sent_at IS NOT NULL OR next_at > ?2 OR attempts >= ?3)",
                args![self.runtime, now, i64::from(max_attempts)],
                |row| {
                    Ok((
                        row.get::<String>(0)?,
                        row.get::<i64>(1)? as u64,
                        row.get::<String>(2)?,
                    ))
                },
            )?;
            Ok(rows.into_iter().collect())
        })
    }

    /// Claims the next attempt at announcing call `seq` of `execution_id` to the webhook `url`: the attempt's
    /// number, or `None` when it was sent, is not due before `next_at`, or had its `max_attempts`. Attempt n
    /// is due again at `retry_at(n)` unless [`Store::announcement_sent`] says it arrived: a process that
    /// stops mid-post leaves the call to be announced again, never forgotten.
    pub fn claim_announcement(
        &self,
        execution_id: &str,
        seq: u64,
        url: &str,
        now: i64,
        retry_at: &dyn Fn(u32) -> i64,
        max_attempts: u32,
    ) -> Result<Option<u32>, StoreError> {
        self.write(|tx| {
            tx.execute(
                "DELETE FROM cm_announcements WHERE runtime = ?1 AND created_at < ?2",
                args![self.runtime, now - ANNOUNCEMENTS_KEPT_MS],
            )?;
            tx.execute(
                "INSERT INTO cm_announcements (runtime, execution_id, seq, url, created_at, attempts, next_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 0, ?5) ON CONFLICT DO NOTHING",
                args![self.runtime, execution_id, seq as i64, url, now],
            )?;
            let Some(row) = tx.query_opt(
                "SELECT attempts, next_at, sent_at FROM cm_announcements
                 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3 AND url = ?4",
                args![self.runtime, execution_id, seq as i64, url],
            )?
            else {
                return Ok(None);
            };
            let attempts: i64 = row.get(0)?;
            let next_at: i64 = row.get(1)?;
            let sent_at: Option<i64> = row.get(2)?;
            if sent_at.is_some() || next_at > now || attempts >= i64::from(max_attempts) {
                return Ok(None);
            }
            let claimed = tx.execute(
                "UPDATE cm_announcements SET attempts = ?5, next_at = ?6
                 WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3 AND url = ?4 AND attempts = ?7
                   AND sent_at IS NULL",
                args![
                    self.runtime,
                    execution_id,
                    seq as i64,
                    url,
                    attempts + 1,
                    retry_at(attempts as u32 + 1),
                    attempts
                ],
            )?;
            Ok((claimed == 1).then_some(attempts as u32 + 1))
        })
    }

    /// Records that an announcement arrived, or why an attempt failed.
    pub fn announcement_result(
        &self,
        execution_id: &str,
        seq: u64,
        url: &str,
        result: Result<i64, &str>,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            match result {
                Ok(sent_at) => tx.execute(
                    "UPDATE cm_announcements SET sent_at = ?5, last_error = NULL
                     WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3 AND url = ?4",
                    args![self.runtime, execution_id, seq as i64, url, sent_at],
                )?,
                Err(error) => tx.execute(
                    "UPDATE cm_announcements SET last_error = ?5
                     WHERE runtime = ?1 AND execution_id = ?2 AND seq = ?3 AND url = ?4",
                    args![self.runtime, execution_id, seq as i64, url, error],
                )?,
            };
            Ok(())
        })
    }
}
