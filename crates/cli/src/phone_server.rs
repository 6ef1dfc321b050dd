//! `codemode serve`: the phone page (docs/phone.md) for as long as the process runs, sweeping expired runs as
//! `codemode mcp` does, until Ctrl-C or SIGTERM.

use codemode_api::{Api, ApiError, FollowingApi};
use connectors::{Home, HomeOptions};
use std::net::SocketAddr;
use std::sync::Arc;

/// Serves the page of the data directory `home` opened on `listen`; returns when told to stop.
pub async fn serve(home: Home, options: HomeOptions, listen: SocketAddr) -> Result<(), ApiError> {
    let api = Arc::new(FollowingApi::from_api(Api::new(home), options));
    let server = codemode_phone::PhoneServer::start(api.clone(), listen)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    eprintln!(
        "codemode serve: the phone page is at {}\n  certificate authority fingerprint {}\n  pair a phone with: \
         codemode devices pair NAME\n  Ctrl-C stops it.",
        server.serving.url, server.serving.fingerprint
    );
    let sweeper = {
        let api = api.clone();
        tokio::spawn(async move { api.keep_sweeping("codemode serve").await })
    };
    stopped().await;
    sweeper.abort();
    server.stop();
    api.shutdown().await;
    Ok(())
}

/// Ctrl-C, or SIGTERM from a service manager.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
