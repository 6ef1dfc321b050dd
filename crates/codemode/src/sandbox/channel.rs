//! The worker's end of the pipe to the host: one message out, one message in, and waiting for the host
//! between passes.

use crate::protocol::{HostMessage, WorkerMessage, read_message, readable_within, write_message};
use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::rc::Rc;

/// The pipe to the host, shared by every native function of a pass.
pub struct Channel {
    input: RefCell<Box<dyn BufRead>>,
    output: RefCell<Box<dyn Write>>,
    line: RefCell<String>,
    /// The descriptor under `input`, to wait on without reading.
    input_fd: Option<i32>,
}

impl Channel {
    pub fn new(input: Box<dyn BufRead>, output: Box<dyn Write>) -> Rc<Self> {
        Self::with_fd(input, output, None)
    }

    /// A channel whose input reads from `fd`, so that the worker can wait for the host without reading.
    pub fn over_fd(input: Box<dyn BufRead>, output: Box<dyn Write>, fd: i32) -> Rc<Self> {
        Self::with_fd(input, output, Some(fd))
    }

    fn with_fd(input: Box<dyn BufRead>, output: Box<dyn Write>, input_fd: Option<i32>) -> Rc<Self> {
        Rc::new(Channel {
            input: RefCell::new(input),
            output: RefCell::new(output),
            line: RefCell::new(String::new()),
            input_fd,
        })
    }

    /// Whether the host writes something within `timeout`. Only asked between passes, when nothing the host
    /// sent is left unread in the buffer.
    pub(super) fn input_within(&self, timeout: std::time::Duration) -> bool {
        let Some(fd) = self.input_fd else {
            return false;
        };
        let millis = timeout.as_millis().min(i32::MAX as u128) as i32;
        readable_within(fd, millis).unwrap_or(false)
    }

    /// Sends a message. A host that went away leaves nothing to work for, so the worker exits.
    pub fn send(&self, message: &WorkerMessage) {
        if write_message(&mut *self.output.borrow_mut(), message).is_err() {
            std::process::exit(0);
        }
    }

    /// Waits for the next host message; exits when the host closed the pipe.
    pub fn receive(&self) -> HostMessage {
        match read_message(&mut *self.input.borrow_mut(), &mut self.line.borrow_mut()) {
            Ok(Some(message)) => message,
            _ => std::process::exit(0),
        }
    }

    pub(super) fn request(&self, message: &WorkerMessage) -> HostMessage {
        self.send(message);
        self.receive()
    }
}
