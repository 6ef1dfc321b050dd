//! `codemode-worker`: the sandbox process. It runs one program pass at a time for the host that started it,
//! speaking the pipe protocol on stdin/stdout, and exits when the host goes away.

use codemode::sandbox::{Channel, prewarm, serve};
use std::io::{BufReader, Read};
use std::time::Duration;

/// Stdin read straight from the descriptor, under one large buffer (std's own would add a second).
struct RawStdin;

impl Read for RawStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: reading into a valid buffer from fd 0, which this process owns.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(n as usize)
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--prewarm") {
        prewarm();
    }
    exit_when_orphaned();
    let channel = Channel::over_fd(
        Box::new(BufReader::with_capacity(1 << 16, RawStdin)),
        Box::new(std::io::stdout().lock()),
        0,
    );
    serve(&channel);
}

/// A worker stuck in a busy loop never reads stdin, so it would not notice its host dying; a small thread
/// watches the parent instead.
fn exit_when_orphaned() {
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    let _ = std::thread::Builder::new()
        .name("orphan-watch".to_owned())
        .stack_size(64 * 1024)
        .spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(500));
                // SAFETY: as above.
                if unsafe { libc::getppid() } != parent {
                    std::process::exit(0);
                }
            }
        });
}
