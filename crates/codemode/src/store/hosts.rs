//! The hosts of a shared store (docs/shared-store.md, "Hosts"): each machine (with its data directory) that
//! runs a runtime registers under a stable id with its connectors and a heartbeat. A run belongs to the host
//! that began it; an approval given on another host is written to the store as the pending call's decision and
//! the owner resumes it, so a machine's connectors only ever run on that machine. A host whose heartbeat
//! stopped is gone: its runs wait for it, or are adopted by a host with the same connectors.

use super::rows::{Holder, RunRow, run_row};
use super::sql::{Sql, args};
use super::{Result, Store, StoreError};
use crate::model::{Decision, ExecutionStatus, RunHost};
use crate::transitions::Holders;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A host whose last heartbeat is older than this is gone.
pub const HOST_TIMEOUT_MS: i64 = 30_000;

/// How long a host no run belongs to is remembered after its last sign of life: a laptop given away, a data
/// directory deleted, a container gone (docs/shared-store.md, "Hosts").
pub const HOST_FORGOTTEN_MS: i64 = 7 * 24 * 3600 * 1000;

/// How often a live host says so.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);

/// How often a process measures again how far its clock is from the database server's.
const OFFSET_EVERY: Duration = Duration::from_secs(600);

/// This process's host on a shared store: an id that stays the same across restarts (one per machine and
/// data directory, so the app and `codemode mcp` of one person are one host) and a name people recognise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostIdentity {
    pub id: String,
    pub name: String,
}

/// The result of adopting a run whose host is gone ([`Store::adopt`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Adoption {
    Adopted,
    /// Its host is alive (or it is already this host's).
    HostAlive(RunHost),
    /// This host lacks connectors the run was begun with.
    MissingConnectors(Vec<String>),
    /// It has no host: it is not a shared store's run.
    NoHost,
    Missing,
}

impl Store {
    /// This host's id, on a shared store.
    pub(super) fn host_id(&self) -> Option<&str> {
        self.host.as_ref().map(|host| host.id.as_str())
    }

    /// Whether this store is shared by hosts (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        self.host.is_some()
    }

    /// The live processes holding the run: its pass's owner (only while it is running) and a rollback.
    pub(super) fn holders(&self, run: &RunRow) -> Holders {
        Holders {
            pass: run.owner.pid.filter(|_| {
                run.status == ExecutionStatus::Running && self.holder_alive(&run.owner)
            }),
            rollback: run
                .rollback
                .pid
                .filter(|_| self.holder_alive(&run.rollback)),
        }
    }

    /// Whether the process holding a run still lives: on this machine its process is looked up (whichever
    /// host it serves); on another machine its host's heartbeat says.
    pub(super) fn holder_alive(&self, holder: &Holder) -> bool {
        let Some(process) = holder.process() else {
            return false;
        };
        match (&holder.host, self.host_id()) {
            (Some(host), Some(me))
                if host != me && holder.machine.as_deref() != Some(&self.machine) =>
            {
                self.fresh(holder.heartbeat)
            }
            _ => process.is_alive(),
        }
    }

    fn fresh(&self, heartbeat: Option<i64>) -> bool {
        heartbeat.is_some_and(|at| at >= self.server_now() - HOST_TIMEOUT_MS)
    }

    /// Now by the database server's clock, as this process reads it: its own clock plus the offset it
    /// measured against the server's, again every [`OFFSET_EVERY`] (docs/shared-store.md, "Hosts"). On SQLite
    /// (one machine, one clock) its own clock.
    pub(super) fn server_now(&self) -> i64 {
        if self.is_shared() {
            let mut measured = self
                .offset_measured
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if measured.is_none_or(|at| at.elapsed() >= OFFSET_EVERY)
                && let Ok(offset) = self.measure_offset()
            {
                self.server_offset.store(offset, Ordering::SeqCst);
                *measured = Some(std::time::Instant::now());
            }
        }
        self.clock
            .now_ms()
            .saturating_add(self.server_offset.load(Ordering::SeqCst))
    }

    /// The server's clock minus this process's, read at the middle of one round trip — with, in the same
    /// query, who the server says this connection is and whether that role may delete runs.
    fn measure_offset(&self) -> Result<i64, StoreError> {
        let before = self.clock.now_ms();
        let started = std::time::Instant::now();
        let (server, login, may_delete): (i64, String, bool) = self.with(|connection| {
            connection.query_row(
                "SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT), session_user::text,
                        has_table_privilege('cm_log', 'DELETE')",
                args![],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
        })?;
        let half_trip = (started.elapsed().as_millis() / 2) as i64;
        self.may_delete_runs.store(may_delete, Ordering::SeqCst);
        *self.login.lock().unwrap_or_else(|p| p.into_inner()) = login;
        Ok(server - (before + half_trip))
    }

    /// The host a run belongs to, as shown: `None` on a store only one machine uses.
    pub(super) fn run_host(&self, owner: &Holder, name: Option<String>) -> Option<RunHost> {
        let id = owner.host.clone()?;
        let here = self.host_id() == Some(id.as_str());
        Some(RunHost {
            name: name.unwrap_or_else(|| id.clone()),
            alive: here || self.fresh(owner.heartbeat),
            here,
            id,
        })
    }

    /// Registers this host (again) with its connectors; a `serving` process (one that resumes what is handed to
    /// the host) also beats its heart. A one-shot command does not: it would make the host look alive for
    /// [`HOST_TIMEOUT_MS`] with nobody there to resume its runs.
    pub fn register_host(&self, connectors: &[String], serving: bool) -> Result<(), StoreError> {
        let Some(host) = self.host.clone() else {
            return Ok(());
        };
        let connectors = serde_json::to_string(connectors).unwrap_or_else(|_| "[]".to_owned());
        let now = self.server_now();
        let heartbeat = if serving { now } else { 0 };
        self.write(|tx| {
            tx.execute(
                "INSERT INTO cm_hosts (id, runtime, name, connectors, machine, pid, began_at, heartbeat_at)
                 VALUES (?1, ?2, ?3, ?4, ?7, ?5, ?6, ?8)
                 ON CONFLICT (id) DO UPDATE SET runtime = excluded.runtime, name = excluded.name,
                   connectors = excluded.connectors, machine = excluded.machine, pid = excluded.pid,
                   began_at = excluded.began_at,
                   heartbeat_at = CASE WHEN excluded.heartbeat_at > cm_hosts.heartbeat_at
                                       THEN excluded.heartbeat_at ELSE cm_hosts.heartbeat_at END",
                args![host.id, self.runtime, host.name, connectors, self.owner.pid, now, self.machine, heartbeat],
            )?;
            // Hosts silent for a week that no run or rollback names: nothing would show or need them again.
            tx.execute(
                "DELETE FROM cm_hosts WHERE runtime = ?1 AND id <> ?2 AND heartbeat_at < ?3 AND began_at < ?3
                   AND NOT EXISTS (SELECT 1 FROM cm_executions e
                                   WHERE e.owner_host = cm_hosts.id OR e.rollback_host = cm_hosts.id)",
                args![self.runtime, host.id, now - HOST_FORGOTTEN_MS],
            )?;
            Ok(())
        })
    }

    /// Says this host is alive.
    pub fn heartbeat(&self) -> Result<(), StoreError> {
        let Some(host) = self.host_id() else {
            return Ok(());
        };
        let now = self.server_now();
        self.write(|tx| {
            tx.execute(
                "UPDATE cm_hosts SET heartbeat_at = ?2 WHERE id = ?1 AND heartbeat_at < ?2",
                args![host, now],
            )?;
            Ok(())
        })
    }

    /// The decision another host handed to this one for the run `id`, if it still waits.
    pub fn handed_decision(&self, id: &str) -> Result<Option<Decision>, StoreError> {
        let Some(host) = self.host_id() else {
            return Ok(None);
        };
        self.with(|connection| {
            let text: Option<Option<String>> = connection.query_row_opt(
                "SELECT handed FROM cm_executions
                 WHERE id = ?1 AND runtime = ?2 AND owner_host = ?3 AND status = 'paused'",
                args![id, self.runtime, host],
                |row| row.get(0),
            )?;
            Ok(text.flatten().and_then(|t| serde_json::from_str(&t).ok()))
        })
    }

    /// This host's paused runs that another host approved: what it resumes on start and when its listener
    /// reconnects (a notification sent meanwhile is lost).
    pub fn handed_runs(&self) -> Result<Vec<String>, StoreError> {
        let Some(host) = self.host_id() else {
            return Ok(Vec::new());
        };
        self.with(|connection| {
            connection.query_map(
                "SELECT id FROM cm_executions
                 WHERE runtime = ?1 AND owner_host = ?2 AND status = 'paused' AND handed IS NOT NULL
                 ORDER BY created_at, id",
                args![self.runtime, host],
                |row| row.get(0),
            )
        })
    }

    /// Drops a decision this host cannot carry out (edited arguments its tool refuses): the run waits for a
    /// decision again.
    pub fn withdraw_handed(&self, id: &str, reason: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE cm_executions SET handed = NULL, handed_seq = NULL, handed_refused = ?3
                 WHERE id = ?1 AND runtime = ?2 AND status = 'paused'",
                args![id, self.runtime, reason],
            )?;
            Ok(())
        })
    }

    /// Why the run's own host refused the last decision handed to it, for the approver waiting on it.
    pub fn handed_refusal(&self, id: &str) -> Result<Option<String>, StoreError> {
        self.with(|connection| {
            let text: Option<Option<String>> = connection.query_row_opt(
                "SELECT handed_refused FROM cm_executions WHERE id = ?1 AND runtime = ?2",
                args![id, self.runtime],
                |row| row.get(0),
            )?;
            Ok(text.flatten())
        })
    }

    /// Adopts a run whose host is gone, for this host to decide and resume: allowed when this host has every
    /// connector the run was begun with (docs/shared-store.md, "A host that is gone").
    pub fn adopt(&self, id: &str, connectors: &[String]) -> Result<Adoption, StoreError> {
        let Some(me) = self.host_id() else {
            return Ok(Adoption::NoHost);
        };
        let now = self.clock.now_ms();
        self.write(|tx| {
            let Some(run) = run_row(tx, &self.runtime, id)? else {
                return Ok(Adoption::Missing);
            };
            let host_name = owner_host_name(tx, &run)?;
            let Some(host) = self.run_host(&run.owner, host_name) else {
                return Ok(Adoption::NoHost);
            };
            if host.alive {
                return Ok(Adoption::HostAlive(host));
            }
            let needs: Vec<String> = tx
                .query_row_opt(
                    "SELECT connectors FROM cm_executions WHERE id = ?1 AND runtime = ?2",
                    args![id, self.runtime],
                    |row| row.get::<String>(0),
                )?
                .and_then(|text| serde_json::from_str(&text).ok())
                .unwrap_or_default();
            let missing: Vec<String> = needs
                .into_iter()
                .filter(|name| !connectors.contains(name))
                .collect();
            if !missing.is_empty() {
                return Ok(Adoption::MissingConnectors(missing));
            }
            let adopted = tx.execute(
                "UPDATE cm_executions SET owner_host = ?2, updated_at = ?4
                 WHERE id = ?1 AND runtime = ?5 AND owner_host IS NOT DISTINCT FROM ?3",
                args![id, me, run.owner.host, now, self.runtime],
            )?;
            Ok(if adopted == 1 {
                Adoption::Adopted
            } else {
                Adoption::HostAlive(host)
            })
        })
    }
}

fn owner_host_name(tx: &dyn Sql, run: &RunRow) -> Result<Option<String>> {
    let Some(host) = &run.owner.host else {
        return Ok(None);
    };
    tx.query_row_opt(
        "SELECT name FROM cm_hosts WHERE id = ?1",
        args![host],
        |row| row.get(0),
    )
}

/// This machine's id: systemd's machine id, else this boot's, else the host name.
pub(super) fn this_machine() -> String {
    [
        "/etc/machine-id",
        "/var/lib/dbus/machine-id",
        "/proc/sys/kernel/random/boot_id",
        "/proc/sys/kernel/hostname",
    ]
    .iter()
    .find_map(|path| {
        std::fs::read_to_string(path)
            .ok()
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty())
    })
    .unwrap_or_default()
}

/// The host of every process on this machine that uses the store at `url` without naming its own host: an id
/// from the machine and the store, and the machine's name.
pub(super) fn machine_host(url: &str) -> HostIdentity {
    use sha2::Digest;
    let digest = sha2::Sha256::new()
        .chain_update(this_machine())
        .chain_update([0])
        .chain_update(url)
        .finalize();
    let id: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "this machine".to_owned());
    HostIdentity {
        id: format!("machine-{id}"),
        name,
    }
}
