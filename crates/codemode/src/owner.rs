//! Which process owns a running pass: its pid and its start time, so a pid reused by another process is not
//! mistaken for the owner. A running execution whose owner is gone was interrupted by a crash.

/// A process, identified across pid reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessIdentity {
    pub pid: u32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22); 0 where unknown.
    pub started: u64,
}

impl ProcessIdentity {
    /// This process.
    pub fn current() -> Self {
        let pid = std::process::id();
        ProcessIdentity {
            pid,
            started: start_time(pid).unwrap_or(0),
        }
    }

    /// Whether this exact process still runs. A zombie (exited, not yet reaped by its parent) does not: it
    /// will never finish the pass or the rollback it held.
    pub fn is_alive(self) -> bool {
        match stat(self.pid) {
            Some(stat) if !stat.exited => self.started == 0 || stat.started == self.started,
            _ => false,
        }
    }
}

struct Stat {
    started: u64,
    /// State `Z` (zombie) or `X` (dead).
    exited: bool,
}

fn start_time(pid: u32) -> Option<u64> {
    stat(pid).map(|s| s.started)
}

fn stat(pid: u32) -> Option<Stat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; the fields after the last ')' are fixed: the state
    // (field 3) first, the start time (field 22) twentieth after it.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?;
    Some(Stat {
        exited: matches!(state, "Z" | "X"),
        started: fields.nth(18)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        let me = ProcessIdentity::current();
        assert!(me.started > 0);
        assert!(me.is_alive());
        assert!(
            !ProcessIdentity {
                started: me.started + 1,
                ..me
            }
            .is_alive()
        );
        assert!(
            !ProcessIdentity {
                pid: u32::MAX - 1,
                started: 1
            }
            .is_alive()
        );
    }

    #[test]
    fn a_zombie_is_not_alive() {
        // A child that exited and is not reaped yet stays in the process table as a zombie.
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("true starts");
        let pid = child.id();
        let zombie = (0..500).find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            stat(pid).filter(|s| s.exited)
        });
        let zombie = zombie.expect("the child becomes a zombie");
        let identity = ProcessIdentity {
            pid,
            started: zombie.started,
        };
        assert!(!identity.is_alive());
        child.wait().expect("reaped");
    }
}
