//! The store's connections, kept open between transactions: at most [`MOST`] at once, each driven by the
//! thread that holds it ([`Driven`]).

use super::driven::{Driven, Target};
use crate::store::sql::DbError;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How many connections one store opens at most; more callers wait for one to come back.
const MOST: usize = 8;

/// How long a caller waits for a connection when all are taken, before it is told so.
const WAIT_FOR_ONE: Duration = Duration::from_secs(30);

pub(super) struct Pool {
    target: Target,
    state: Mutex<State>,
    returned: Condvar,
}

struct State {
    idle: Vec<Driven>,
    /// Connections open, idle ones included.
    open: usize,
}

/// A connection taken from the pool; it goes back when dropped, unless it was discarded or has closed. It
/// holds the pool, so a connection can wait for an answer after its taker has returned (a parked flight).
pub(crate) struct Pooled {
    pool: Arc<Pool>,
    driven: Option<Driven>,
    /// Whether it counts towards [`MOST`]: a parked one does not ([`Pooled::park`]).
    counted: bool,
}

impl Pool {
    pub(super) fn new(target: Target) -> Pool {
        Pool {
            target,
            state: Mutex::new(State {
                idle: Vec::new(),
                open: 0,
            }),
            returned: Condvar::new(),
        }
    }

    /// An open connection: an idle one that is still open, or a new one.
    pub(super) fn get(self: &Arc<Self>) -> Result<Pooled, DbError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            while let Some(driven) = state.idle.pop() {
                if driven.is_open() {
                    return Ok(Pooled {
                        pool: self.clone(),
                        driven: Some(driven),
                        counted: true,
                    });
                }
                state.open -= 1;
            }
            if state.open < MOST {
                state.open += 1;
                drop(state);
                return match Driven::connect(&self.target) {
                    Ok(driven) => Ok(Pooled {
                        pool: self.clone(),
                        driven: Some(driven),
                        counted: true,
                    }),
                    Err(error) => {
                        self.closed();
                        Err(error)
                    }
                };
            }
            let (next, waited) = self
                .returned
                .wait_timeout(state, WAIT_FOR_ONE)
                .unwrap_or_else(|p| p.into_inner());
            state = next;
            if waited.timed_out() && state.idle.is_empty() && state.open >= MOST {
                return Err(DbError::Pool(format!(
                    "all {MOST} connections to the store stayed busy for {} s",
                    WAIT_FOR_ONE.as_secs()
                )));
            }
        }
    }

    fn closed(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.open -= 1;
        self.returned.notify_one();
    }
}

impl Pooled {
    pub(crate) fn driven(&self) -> Result<&Driven, DbError> {
        self.driven
            .as_ref()
            .ok_or_else(|| DbError::Pool("the connection was discarded".to_owned()))
    }

    /// Closes the connection instead of returning it: it may be inside a transaction that could not be
    /// ended, and closing it makes the server roll that back.
    pub(crate) fn discard(&mut self) {
        if self.driven.take().is_some() && self.counted {
            self.pool.closed();
        }
    }

    /// Stops counting this connection towards [`MOST`] while a flight is parked on it: a run whose program
    /// computes between calls holds it idle meanwhile, and the others must still get theirs. It counts again
    /// when it goes back. So a process opens at most [`MOST`] connections plus one per parked flight (one
    /// per pass at most).
    pub(crate) fn park(&mut self) {
        if self.counted {
            self.counted = false;
            self.pool.closed();
        }
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let Some(driven) = self.driven.take() else {
            return;
        };
        if driven.client.is_closed() {
            if self.counted {
                self.pool.closed();
            }
            return;
        }
        let mut state = self.pool.state.lock().unwrap_or_else(|p| p.into_inner());
        if !self.counted {
            state.open += 1;
        }
        state.idle.push(driven);
        self.pool.returned.notify_one();
    }
}
