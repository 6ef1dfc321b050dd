//! An [`Api`] that follows `connectors.json`: long-lived hosts (the app, `codemode mcp`) hold one, and each
//! operation first checks whether the file changed (a `stat`: its size, modification time and inode). If it
//! did — a connector added from the app, a rule or setting edited by hand, by the CLI or by another host —
//! the data directory is opened again and the operation runs on the new one. So every process uses what the
//! file says on its next operation, without a restart (docs/api.md, "Managing connectors").

use crate::{Api, ApiError};
use connectors::HomeOptions;
use connectors::config::FILE_NAME;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What identifies one version of the file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified_ns: i128,
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: meta.len(),
        modified_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        inode: meta.ino(),
    })
}

struct Opened {
    api: Result<Arc<Api>, ApiError>,
    stamp: Option<Stamp>,
}

/// The data directory, opened again whenever `connectors.json` changes.
pub struct FollowingApi {
    dir: PathBuf,
    options: HomeOptions,
    opened: tokio::sync::RwLock<Opened>,
    /// Bumped on every reopening, so a front end can tell that the connectors may have changed.
    generation: AtomicU64,
}

impl FollowingApi {
    pub async fn open(dir: &Path, options: HomeOptions) -> FollowingApi {
        let following = FollowingApi {
            dir: dir.to_owned(),
            options,
            opened: tokio::sync::RwLock::new(Opened {
                api: Err(ApiError::internal("not opened yet")),
                stamp: None,
            }),
            generation: AtomicU64::new(0),
        };
        following.reopen().await;
        following
    }

    /// Wraps an [`Api`] opened elsewhere (its file's current version is the one it read).
    pub fn from_api(api: Api, options: HomeOptions) -> FollowingApi {
        let dir = api.dir().to_owned();
        FollowingApi {
            opened: tokio::sync::RwLock::new(Opened {
                api: Ok(Arc::new(api)),
                stamp: stamp(&dir.join(FILE_NAME)),
            }),
            dir,
            options,
            generation: AtomicU64::new(0),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many times the data directory was opened again.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The API over the file as it is now: opened again first if the file changed since.
    /// The expiry sweep of a long-lived host, for as long as it runs: a round ([`Api::sweep`]) on the data
    /// directory as it is now every configured interval (read again each round, so a changed setting takes
    /// effect at the next), and between rounds the `decideWithin` deadlines as they fall due
    /// ([`Api::expire_overdue`]). `host` names the process in what it logs. One loop for every host, so the
    /// app and `codemode mcp` expire alike.
    pub async fn keep_sweeping(&self, host: &str) {
        let mut next_round = tokio::time::Instant::now();
        loop {
            let wait = match self.current().await {
                // A data directory that cannot be opened is reported where it is used; look again later.
                Err(_) => Duration::from_secs(60),
                Ok(api) => {
                    let result = if tokio::time::Instant::now() >= next_round {
                        next_round = tokio::time::Instant::now() + api.sweep_interval();
                        api.sweep().await
                    } else {
                        api.expire_overdue().await
                    };
                    match result {
                        Ok(expired) if !expired.is_empty() => {
                            eprintln!("{host}: expired {} paused run(s)", expired.len());
                        }
                        Ok(_) => {}
                        Err(error) => eprintln!("{host}: expiry sweep failed: {error}"),
                    }
                    api.next_deadline_in()
                        .min(next_round.saturating_duration_since(tokio::time::Instant::now()))
                }
            };
            tokio::time::sleep(wait).await;
        }
    }

    pub async fn current(&self) -> Result<Arc<Api>, ApiError> {
        let now = stamp(&self.dir.join(FILE_NAME));
        {
            let opened = self.opened.read().await;
            if opened.stamp == now {
                return opened.api.clone();
            }
        }
        let mut opened = self.opened.write().await;
        // Another caller may have reopened it while this one waited for the lock.
        let now = stamp(&self.dir.join(FILE_NAME));
        if opened.stamp != now {
            self.replace(&mut opened).await;
        }
        opened.api.clone()
    }

    /// Opens the data directory again, whether or not the file changed.
    pub async fn reopen(&self) {
        let mut opened = self.opened.write().await;
        self.replace(&mut opened).await;
    }

    async fn replace(&self, opened: &mut Opened) {
        // The stamp first: a change made while opening is seen by the next call.
        let stamp = stamp(&self.dir.join(FILE_NAME));
        let fresh = Api::open(&self.dir, self.options.clone())
            .await
            .map(Arc::new);
        let old = std::mem::replace(&mut opened.api, fresh);
        opened.stamp = stamp;
        self.generation.fetch_add(1, Ordering::SeqCst);
        if let Ok(old) = old {
            retire(old);
        }
    }

    /// Stops the MCP servers of the API in use.
    pub async fn shutdown(&self) {
        if let Ok(api) = &self.opened.read().await.api {
            api.shutdown().await;
        }
    }
}

/// Stops an API's MCP servers once nothing uses it any more: an operation that began on it (a run waiting on a
/// server's answer) finishes there.
fn retire(old: Arc<Api>) {
    tokio::spawn(async move {
        while Arc::strong_count(&old) > 1 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        old.shutdown().await;
    });
}
