//! The phone page (docs/phone.md): a paired, mobile approval page served over HTTPS by `codemode serve` and by
//! the app's "Approve from a phone". It is a front end like the others — it parses a request, calls
//! [`codemode_api::Api`] and renders — and answers nothing but its pairing page to a browser without a
//! paired device's token.

mod addresses;
mod authority;
mod limits;
mod qr;
mod routes;

pub use authority::{Authority, Day};
pub use qr::{qr_svg, qr_text};

use codemode_api::FollowingApi;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// Where `codemode serve` listens unless told otherwise: this computer only, until a person chooses a
/// network.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8443";

/// Where the app's "Approve from a phone" listens: every interface, for phones on this network.
pub const NETWORK_LISTEN: &str = "0.0.0.0:8443";

/// Why the phone page could not be served.
#[derive(Debug, thiserror::Error)]
pub enum PhoneError {
    #[error("the phone page's certificate: {0}")]
    Certificate(String),
    #[error("cannot listen on {address}: {reason}")]
    Listen { address: String, reason: String },
}

/// What a running server tells the person: where to open it and what its authority's fingerprint is.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Serving {
    /// The address a phone opens (`https://…:8443`).
    pub url: String,
    /// SHA-256 of the certificate authority the page's certificate comes from.
    pub fingerprint: String,
    pub pid: u32,
    /// The serving process's start time, so a reused pid is not taken for it.
    pub started: u64,
}

impl Serving {
    /// What the server of data directory `dir` wrote when it started, if one runs.
    pub fn of(dir: &Path) -> Option<Serving> {
        let text = std::fs::read_to_string(serving_file(dir)).ok()?;
        let serving: Serving = serde_json::from_str(&text).ok()?;
        let owner = codemode::owner::ProcessIdentity {
            pid: serving.pid,
            started: serving.started,
        };
        owner.is_alive().then_some(serving)
    }
}

/// The link that pairs a device with `code` on the page at `url`.
pub fn pairing_link(url: &str, code: &str) -> String {
    format!("{url}/pair?code={code}")
}

/// The address a server listening on `listen` shows a person (on every interface: this computer's first
/// network address).
pub fn url_for(listen: SocketAddr) -> String {
    format!("https://{}", addresses::reachable(listen).shown)
}

fn serving_file(dir: &Path) -> PathBuf {
    dir.join("phone").join("serving.json")
}

/// The phone page, served until [`PhoneServer::stop`] (or until dropped).
pub struct PhoneServer {
    pub serving: Serving,
    pub local_addr: SocketAddr,
    dir: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl PhoneServer {
    /// Listens on `listen` and serves the page of `api`'s data directory with a certificate its authority
    /// signs for this computer's names and addresses.
    pub async fn start(
        api: Arc<FollowingApi>,
        listen: SocketAddr,
    ) -> Result<PhoneServer, PhoneError> {
        let dir = api.dir().to_owned();
        let authority = Authority::of(&dir)?;
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|e| PhoneError::Listen {
                address: listen.to_string(),
                reason: e.to_string(),
            })?;
        let local_addr = listener.local_addr().map_err(|e| PhoneError::Listen {
            address: listen.to_string(),
            reason: e.to_string(),
        })?;
        let reach = addresses::reachable(local_addr);
        let now = match api.current().await {
            Ok(api) => api.now_ms(),
            Err(_) => codemode::clock::Clock::now_ms(&codemode::clock::SystemClock),
        };
        let certificate =
            authority.server_certificate(&reach.names, &reach.addresses, Day::of_epoch_ms(now))?;
        let acceptor = tls_acceptor(&certificate)?;
        let serving = Serving {
            url: format!("https://{}", reach.shown),
            fingerprint: authority.fingerprint(),
            pid: std::process::id(),
            started: codemode::owner::ProcessIdentity::current().started,
        };
        let text = serde_json::to_string_pretty(&serving).unwrap_or_default();
        // Only for `codemode devices pair` to print the right link; the server works without it.
        let _ = connectors::owner_only::replace(&serving_file(&dir), text.as_bytes());
        let state = Arc::new(routes::State::new(api.clone(), serving.fingerprint.clone()));
        let accepting = accept_loop(listener, acceptor, state);
        let announcing = announce_loop(api, serving.url.clone());
        let task = tokio::spawn(async move {
            tokio::join!(accepting, announcing);
        });
        Ok(PhoneServer {
            serving,
            local_addr,
            dir,
            task,
        })
    }

    /// Stops listening; connections open now end with it.
    pub fn stop(self) {
        drop(self);
    }

    /// Serves until the task ends (it ends only when stopped).
    pub async fn run_forever(mut self) {
        let _ = (&mut self.task).await;
    }
}

impl Drop for PhoneServer {
    fn drop(&mut self) {
        self.task.abort();
        if Serving::of(&self.dir).is_some_and(|s| s.pid == std::process::id()) {
            let _ = std::fs::remove_file(serving_file(&self.dir));
        }
    }
}

fn tls_acceptor(certificate: &authority::ServerCertificate) -> Result<TlsAcceptor, PhoneError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |e: &dyn std::fmt::Display| PhoneError::Certificate(e.to_string());
    let chain = CertificateDer::pem_slice_iter(certificate.chain_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    let key = PrivateKeyDer::from_pem_slice(certificate.key_pem.as_bytes()).map_err(|e| bad(&e))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(&e))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| bad(&e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// How often waiting calls are looked at for webhooks when nothing changes: a failed announcement's retry
/// comes due without a change.
const ANNOUNCE_EVERY: std::time::Duration = std::time::Duration::from_secs(15);

/// Announces waiting calls to `runtime.webhooks` whenever the store changes (docs/phone.md, "Webhooks"); the
/// server does it because its address is what the links point to.
async fn announce_loop(api: Arc<FollowingApi>, url: String) {
    loop {
        let Ok(current) = api.current().await else {
            tokio::time::sleep(ANNOUNCE_EVERY).await;
            continue;
        };
        match current.announce_waiting(&url).await {
            Ok(attempts) => {
                for failed in attempts.iter().filter(|a| a.error.is_some()) {
                    eprintln!(
                        "codemode: webhook {} (attempt {} of {}) for {} call {}: {}",
                        failed.url,
                        failed.attempt,
                        codemode_api::WEBHOOK_ATTEMPTS,
                        failed.execution_id,
                        failed.seq,
                        failed.error.as_deref().unwrap_or_default()
                    );
                }
            }
            Err(error) => eprintln!("codemode: webhooks: {}", error.message),
        }
        // Taken after announcing: the announcements' own writes are not a change to announce.
        match current.change_token().ok() {
            Some(token) => current.changed(token, ANNOUNCE_EVERY).await,
            None => tokio::time::sleep(ANNOUNCE_EVERY).await,
        }
    }
}

async fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, state: Arc<routes::State>) {
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        let state = state.clone();
        tokio::spawn(async move {
            // A handshake that fails (a browser refusing the certificate, a port scan) ends that connection only.
            let Ok(tls) = acceptor.accept(stream).await else {
                return;
            };
            let service = hyper::service::service_fn(move |request| {
                routes::handle(state.clone(), peer.ip(), request)
            });
            let _ = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}
