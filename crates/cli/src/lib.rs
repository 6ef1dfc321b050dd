//! What the `codemode` binary shares with other hosts: its stdio MCP server, so an embedder (or the
//! benchmark) can serve agents exactly as `codemode mcp` does over a `Home` it opened itself.

pub mod mcp_server;
