//! A PostgreSQL connection driven on the thread that waits for it (docs/shared-store.md, "Fewer round
//! trips"): its socket is non-blocking, and the thread that sends a flight polls the connection itself and
//! sleeps in `poll(2)` on the socket until the answer is there. No other thread takes part, so a flight costs
//! the server's round trip and no hand-over between threads (which was most of a flight's time on loopback).

use super::super::postgres_tls::RustlsConnect;
use crate::store::sql::DbError;
use std::collections::HashMap;
use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, RawFd};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::config::Host;
use tokio_postgres::tls::MakeTlsConnect;

/// Where connections go, and how they are encrypted.
#[derive(Clone)]
pub(super) struct Target {
    pub config: tokio_postgres::Config,
    pub connector: RustlsConnect,
    pub connect_timeout: Duration,
}

/// The connection's own half, which reads and writes the socket: polled by whoever waits for an answer.
type Engine = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send>>;

/// One connection: the client that makes requests, the engine that carries them, and the statements
/// prepared on it.
pub(crate) struct Driven {
    /// Shared with the flights sent on it, which may be waited for after their sender returned.
    pub client: Arc<tokio_postgres::Client>,
    engine: std::sync::Mutex<Option<Engine>>,
    fd: RawFd,
    wants_write: Arc<AtomicBool>,
    statements: std::sync::Mutex<HashMap<String, tokio_postgres::Statement>>,
    /// How long answers took lately (a moving average, ns): while it is at most [`SPIN`], a wait spins
    /// that long before it sleeps.
    typical_wait_ns: std::sync::atomic::AtomicU64,
}

/// How long a wait spins before it sleeps on the socket, when answers have been coming within it. Waking a
/// sleeping thread costs tens of microseconds (more in a virtual machine, where the CPU halts), and a
/// flight's answer comes in several packets; a server on the same machine or next to it answers a flight in
/// a few hundred microseconds, so spinning through it saves about a third of a recorded call's time
/// (docs/shared-store.md, "Fewer round trips"). A server farther away answers later than this, and then
/// nothing spins: the thread sleeps at once.
const SPIN: Duration = Duration::from_micros(500);

impl Driven {
    /// Connects to the first of `target`'s hosts that answers.
    pub(super) fn connect(target: &Target) -> Result<Driven, DbError> {
        let config = &target.config;
        let hosts = config.get_hosts();
        let addresses = config.get_hostaddrs();
        let count = hosts.len().max(addresses.len());
        if count == 0 {
            return Err(DbError::Pool(
                "the store's address names no host".to_owned(),
            ));
        }
        let mut failure = None;
        for index in 0..count {
            let port = config
                .get_ports()
                .get(index)
                .or_else(|| config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            let attempt = match (hosts.get(index), addresses.get(index)) {
                (host, Some(address)) => {
                    let name = match host {
                        Some(Host::Tcp(name)) => name.clone(),
                        _ => address.to_string(),
                    };
                    Self::connect_tcp(target, &name, &[(*address, port).into()])
                }
                (Some(Host::Tcp(name)), None) => match (name.as_str(), port).to_socket_addrs() {
                    Ok(found) => Self::connect_tcp(target, name, &found.collect::<Vec<_>>()),
                    Err(e) => Err(DbError::Connect(format!("{name}: {e}"))),
                },
                (Some(Host::Unix(folder)), None) => Self::connect_unix(target, folder, port),
                (None, None) => continue,
            };
            match attempt {
                Ok(driven) => return Ok(driven),
                Err(error) => failure = Some(error),
            }
        }
        Err(failure.unwrap_or_else(|| DbError::Connect("no address to connect to".to_owned())))
    }

    fn connect_tcp(
        target: &Target,
        name: &str,
        addresses: &[std::net::SocketAddr],
    ) -> Result<Driven, DbError> {
        let mut failure = DbError::Connect(format!("{name}: no address"));
        for address in addresses {
            let stream = match TcpStream::connect_timeout(address, target.connect_timeout) {
                Ok(stream) => stream,
                Err(e) => {
                    failure = DbError::Connect(e.to_string());
                    continue;
                }
            };
            // Requests are small and answered at once: Nagle's delay would cost a flight 40 ms.
            stream.set_nodelay(true).map_err(connect_error)?;
            stream.set_nonblocking(true).map_err(connect_error)?;
            let socket = Socket::new(Stream::Tcp(stream));
            let mut connector = target.connector.clone();
            let tls = MakeTlsConnect::<Socket>::make_tls_connect(&mut connector, name)
                .map_err(|e| DbError::Pool(format!("{name} is not a host name for TLS: {e}")))?;
            match Self::start(target, &target.config, socket, tls) {
                Ok(driven) => return Ok(driven),
                Err(error) => failure = error,
            }
        }
        Err(failure)
    }

    fn connect_unix(
        target: &Target,
        folder: &std::path::Path,
        port: u16,
    ) -> Result<Driven, DbError> {
        let path = folder.join(format!(".s.PGSQL.{port}"));
        let stream = std::os::unix::net::UnixStream::connect(&path)
            .map_err(|e| DbError::Connect(format!("{}: {e}", path.display())))?;
        stream.set_nonblocking(true).map_err(connect_error)?;
        // As libpq: TLS is not used over a Unix socket (it never leaves the machine).
        let mut config = target.config.clone();
        config.ssl_mode(tokio_postgres::config::SslMode::Disable);
        Self::start(
            target,
            &config,
            Socket::new(Stream::Unix(stream)),
            tokio_postgres::NoTls,
        )
    }

    /// The startup exchange (TLS, authentication) on a connected socket.
    fn start<T>(
        target: &Target,
        config: &tokio_postgres::Config,
        socket: Socket,
        tls: T,
    ) -> Result<Driven, DbError>
    where
        T: tokio_postgres::tls::TlsConnect<Socket>,
        T::Stream: Send + 'static,
    {
        let fd = socket.stream.fd();
        let wants_write = socket.wants_write.clone();
        let deadline = Instant::now() + target.connect_timeout;
        let startup = pin!(config.connect_raw(socket, tls));
        let (client, connection) = wait_for(fd, &wants_write, None, startup, deadline, None)
            .ok_or_else(|| DbError::Connect("timed out while starting the session".to_owned()))??;
        Ok(Driven {
            client: Arc::new(client),
            engine: std::sync::Mutex::new(Some(Box::pin(connection))),
            fd,
            wants_write,
            statements: std::sync::Mutex::new(HashMap::new()),
            // Until answers have been timed, as if they came from a nearby server.
            typical_wait_ns: std::sync::atomic::AtomicU64::new(200_000),
        })
    }

    /// Drives the connection until `request` is answered. When the connection ends meanwhile, the request
    /// fails as tokio-postgres fails requests on a closed connection.
    pub(crate) fn wait<F: Future>(&self, request: F) -> F::Output {
        let mut engine = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        let mut request = pin!(request);
        let started = Instant::now();
        let typical = Duration::from_nanos(self.typical_wait_ns.load(Ordering::Relaxed));
        let spin_until = (typical <= SPIN).then_some(started + SPIN);
        // No deadline: waiting ends with the answer, or with the connection's end (which answers too).
        loop {
            let hour = Instant::now() + Duration::from_secs(3_600);
            if let Some(answer) = wait_for(
                self.fd,
                &self.wants_write,
                Some(&mut engine),
                request.as_mut(),
                hour,
                spin_until,
            ) {
                let took = started.elapsed().as_nanos().min(u128::from(u32::MAX)) as u64;
                let typical = self.typical_wait_ns.load(Ordering::Relaxed);
                self.typical_wait_ns
                    .store(typical - typical / 8 + took / 8, Ordering::Relaxed);
                return answer;
            }
        }
    }

    /// Hands `request` to the server without waiting for its answer: drives the connection until everything
    /// it sends is written, and returns, or answers when the answer came already. The request is then waited
    /// for with [`Driven::wait`]; nothing else may be sent on the connection before.
    pub(crate) fn send<F: Future + Unpin>(&self, request: &mut F) -> Option<F::Output> {
        let mut engine = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            // A deadline already passed: polls until neither the request nor the connection asks for more.
            let now = Instant::now();
            let polled = wait_for(
                self.fd,
                &self.wants_write,
                Some(&mut engine),
                Pin::new(&mut *request),
                now,
                None,
            );
            if polled.is_some() {
                return polled;
            }
            if engine.is_none() || !self.wants_write.load(Ordering::SeqCst) {
                return None;
            }
            // The socket is full: what is left is written once it takes more, so the server never holds a
            // transaction's locks waiting for the rest of it while this thread goes on.
            let mut poll = libc::pollfd {
                fd: self.fd,
                events: libc::POLLOUT | libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd on the socket this connection owns; an error only loops again.
            unsafe { libc::poll(&mut poll, 1, 1_000) };
        }
    }

    /// `sql` when it was prepared on this connection already.
    pub(crate) fn cached(&self, sql: &str) -> Option<tokio_postgres::Statement> {
        self.statements
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(sql)
            .cloned()
    }

    /// Whether the connection is still open: reads what the server sent while it lay in the pool (a
    /// shutdown notice, an end of file) without waiting.
    pub(super) fn is_open(&self) -> bool {
        let mut engine = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        let Some(running) = engine.as_mut() else {
            return false;
        };
        let waker = Waker::from(Arc::new(Woken::default()));
        if running
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            *engine = None;
        }
        engine.is_some() && !self.client.is_closed()
    }

    /// `sql` prepared on this connection, once.
    pub(crate) fn prepared(&self, sql: &str) -> Result<tokio_postgres::Statement, DbError> {
        if let Some(statement) = self.cached(sql) {
            return Ok(statement);
        }
        let statement = self.wait(self.client.prepare(sql))?;
        self.statements
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

fn connect_error(error: io::Error) -> DbError {
    DbError::Connect(error.to_string())
}

/// Polls `request` (and `engine`, which carries it) until it is ready, sleeping on `fd` in between; `None`
/// when `deadline` passed first.
fn wait_for<F: Future>(
    fd: RawFd,
    wants_write: &AtomicBool,
    mut engine: Option<&mut Option<Engine>>,
    mut request: Pin<&mut F>,
    deadline: Instant,
    spin_until: Option<Instant>,
) -> Option<F::Output> {
    let woken = Arc::new(Woken::default());
    let waker = Waker::from(woken.clone());
    let mut context = Context::from_waker(&waker);
    loop {
        woken.0.store(false, Ordering::SeqCst);
        wants_write.store(false, Ordering::SeqCst);
        if let Poll::Ready(answer) = request.as_mut().poll(&mut context) {
            return Some(answer);
        }
        if let Some(slot) = engine.as_deref_mut()
            && let Some(running) = slot.as_mut()
            && running.as_mut().poll(&mut context).is_ready()
        {
            // Dropping the engine answers every request still waiting with "connection closed".
            *slot = None;
            continue;
        }
        if woken.0.load(Ordering::SeqCst) {
            continue;
        }
        if spin_until.is_some_and(|until| Instant::now() < until) {
            // Yielding, not spinning hard: on a busy machine the server may be waiting for this very CPU.
            std::thread::yield_now();
            continue;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        let timeout = left.as_millis().clamp(1, 1_000) as i32;
        let mut events = libc::POLLIN;
        if wants_write.load(Ordering::SeqCst) {
            events |= libc::POLLOUT;
        }
        let mut poll = libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd, and the socket outlives the wait (its owner is borrowed here). An error
        // (EINTR) or a time-out only sends the loop round again.
        unsafe { libc::poll(&mut poll, 1, timeout) };
    }
}

/// Set when a future asks to be polled again (the client handing the engine a request, the engine
/// handing back an answer): then the loop polls again at once instead of sleeping on the socket.
#[derive(Default)]
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

enum Stream {
    Tcp(TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

impl Stream {
    fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(stream) => stream.as_raw_fd(),
            Stream::Unix(stream) => stream.as_raw_fd(),
        }
    }
}

/// A non-blocking socket for tokio-postgres: reading or writing what would block says "pending" and
/// notes what to wait for, and [`wait_for`] sleeps on it.
pub(super) struct Socket {
    stream: Stream,
    wants_write: Arc<AtomicBool>,
}

impl Socket {
    fn new(stream: Stream) -> Socket {
        Socket {
            stream,
            wants_write: Arc::new(AtomicBool::new(false)),
        }
    }

    fn io<T>(
        &mut self,
        write: bool,
        mut f: impl FnMut(&mut Stream) -> io::Result<T>,
    ) -> Poll<io::Result<T>> {
        loop {
            match f(&mut self.stream) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if write {
                        self.wants_write.store(true, Ordering::SeqCst);
                    }
                    return Poll::Pending;
                }
                other => return Poll::Ready(other),
            }
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let unfilled = buf.initialize_unfilled();
        match this.io(false, |stream| match stream {
            Stream::Tcp(s) => s.read(unfilled),
            Stream::Unix(s) => s.read(unfilled),
        }) {
            Poll::Ready(Ok(read)) => {
                buf.advance(read);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().io(true, |stream| match stream {
            Stream::Tcp(s) => s.write(data),
            Stream::Unix(s) => s.write(data),
        })
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        let how = std::net::Shutdown::Write;
        Poll::Ready(match &self.stream {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        })
    }
}
