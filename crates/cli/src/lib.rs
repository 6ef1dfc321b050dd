//! What the `codemode` binary shares with other hosts: its stdio MCP server, the phone page's serving loop and
//! the async runtime it runs on,
//! so an embedder (or the benchmark) can serve agents exactly as `codemode mcp` does over a `Home` it opened
//! itself.

pub mod framing;
pub mod mcp_server;
pub mod phone_server;

/// The async runtime `codemode` runs every command on. Multi-threaded, because a pass blocks its thread and
/// hands the runtime over with `block_in_place`; one async worker, because a second one is woken for
/// every request to look for work to steal (about 5% of a request's time after an idle moment on a 2-core
/// VM, measured A/B), and the connectors' I/O and `codemode_wait` need no more.
pub fn async_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
}
