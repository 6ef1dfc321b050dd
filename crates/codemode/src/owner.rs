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

    /// Whether this exact process still runs.
    pub fn is_alive(self) -> bool {
        match start_time(self.pid) {
            Some(started) => self.started == 0 || started == self.started,
            None => false,
        }
    }
}

fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; the fields after the last ')' are fixed.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
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
}
