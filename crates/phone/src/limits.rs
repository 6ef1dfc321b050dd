//! How often pairing may be tried: a code is about 2^49 guesses, and a few a minute from one address (and a
//! few more from all) make guessing one in its ten minutes hopeless.

use std::collections::VecDeque;
use std::net::IpAddr;

/// Attempts from one address in a minute.
const PER_ADDRESS: usize = 5;
/// Attempts from everyone in a minute.
const OVERALL: usize = 20;
const WINDOW_MS: i64 = 60_000;

/// The pairing attempts of the last minute.
#[derive(Default)]
pub struct PairingAttempts {
    recent: VecDeque<(i64, IpAddr)>,
}

impl PairingAttempts {
    /// Counts an attempt from `peer` at `now`; false (and not counted) when it is one too many.
    pub fn admit(&mut self, peer: IpAddr, now: i64) -> bool {
        while self
            .recent
            .front()
            .is_some_and(|(at, _)| now - at >= WINDOW_MS)
        {
            self.recent.pop_front();
        }
        let from_peer = self.recent.iter().filter(|(_, p)| *p == peer).count();
        if from_peer >= PER_ADDRESS || self.recent.len() >= OVERALL {
            return false;
        }
        self.recent.push_back((now, peer));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_a_minute_from_one_address_and_twenty_from_all() {
        let mut attempts = PairingAttempts::default();
        let one: IpAddr = "10.0.0.1".parse().unwrap();
        for i in 0..5 {
            assert!(attempts.admit(one, 0), "attempt {i}");
        }
        assert!(!attempts.admit(one, 10));
        assert!(attempts.admit(one, 60_000), "a minute later");
        for n in 2..=16u8 {
            assert!(attempts.admit(IpAddr::from([10, 0, 0, n]), 60_001));
        }
        // The 5 of the first minute expired; 1 + 15 now, and four more from others reach twenty.
        for n in 17..=20u8 {
            assert!(attempts.admit(IpAddr::from([10, 0, 0, n]), 60_002));
        }
        assert!(!attempts.admit(IpAddr::from([10, 0, 0, 99]), 60_003));
    }
}
