//! Remote MCP servers: HTTPS with the system's trust store and a connector's own CA, and OAuth sign-in as the
//! MCP authorization spec describes it (discovery, dynamic registration, PKCE, a loopback redirect, refresh),
//! with tokens kept owner-only in the data directory. See docs/remote-servers.md.

use crate::config::OAuthClient;
use crate::owner_only;
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, CredentialRefreshGuard, CredentialStore, OAuthClientConfig,
    StoredCredentials,
};
use std::error::Error as StdError;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long `codemode login` and the app's Sign in wait for the browser to come back.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// The name this client registers under with an authorization server.
const CLIENT_NAME: &str = "Codemode Console";

/// The HTTP client for one connector: the system's trust store (rustls-platform-verifier), plus the
/// certificates of `caFile` when given.
pub fn http_client(connector: &str, ca_file: Option<&Path>) -> Result<reqwest::Client, String> {
    let mut builder = reqwest::Client::builder();
    if let Some(path) = ca_file {
        let pem = std::fs::read(path).map_err(|e| {
            format!(
                "connector \"{connector}\": its caFile {} cannot be read: {e}",
                path.display()
            )
        })?;
        let certificates = reqwest::Certificate::from_pem_bundle(&pem)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                format!(
                    "connector \"{connector}\": its caFile {} holds no PEM certificate",
                    path.display()
                )
            })?;
        builder = builder.tls_certs_merge(certificates);
    }
    builder
        .build()
        .map_err(|e| format!("connector \"{connector}\": no HTTPS client: {}", chain(&e)))
}

/// Where a connector's sign-in is kept: `<data dir>/sign-in/<connector>.json`, 0600.
pub fn credentials_path(data_dir: &Path, connector: &str) -> PathBuf {
    data_dir.join("sign-in").join(format!("{connector}.json"))
}

/// Whether tokens are kept for this connector.
pub fn signed_in(path: &Path) -> bool {
    path.is_file()
}

/// Forgets a connector's tokens; `Ok(false)` when there were none.
pub fn sign_out(path: &Path) -> Result<bool, String> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(e) => Err(format!("{} cannot be removed: {e}", path.display())),
    }
}

/// The message of a call that needs a sign-in first: it names the command and the button.
pub fn sign_in_needed(connector: &str, why: &str) -> String {
    format!(
        "MCP server \"{connector}\" {why}: sign in with `codemode login {connector}`, or with Sign in on \
         \"{connector}\" in the app's Connectors view"
    )
}

/// The tokens of one connector in a file of their own. Every load reads the file, so a sign-in, a refresh or
/// a sign-out by another process (the app, `codemode mcp`) is seen at once; refreshes are serialised across
/// processes by a lock file, since a refresh token may be good for one use only.
#[derive(Clone)]
pub struct FileCredentials {
    path: PathBuf,
}

impl FileCredentials {
    pub fn new(path: PathBuf) -> Self {
        FileCredentials { path }
    }

    fn store_error(&self, what: &str, e: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!("{what} {}: {e}", self.path.display()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                // serde's message names a position, never the bytes.
                .map_err(|e| self.store_error("unreadable sign-in in", e)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.store_error("cannot read", e)),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let bytes =
            serde_json::to_vec(&credentials).map_err(|e| self.store_error("cannot encode", e))?;
        // Replaced atomically: a reader sees the old tokens or the new, never half of them.
        owner_only::replace(&self.path, &bytes).map_err(|e| self.store_error("cannot write", e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        sign_out(&self.path)
            .map(|_| ())
            .map_err(AuthError::CredentialStoreError)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let lock = self.path.with_extension("lock");
        let file = tokio::task::spawn_blocking(move || owner_only::lock_exclusive(&lock))
            .await
            .map_err(|e| self.store_error("cannot lock", e))?
            .map_err(|e| self.store_error("cannot lock", e))?;
        Ok(Some(CredentialRefreshGuard::new(file)))
    }
}

/// The authorization for a server whose tokens are kept, ready to put on its requests (and to refresh them);
/// `None` when nobody signed in.
pub async fn stored_authorization(
    connector: &str,
    url: &str,
    client: &reqwest::Client,
    path: &Path,
    oauth: Option<&OAuthClient>,
) -> Result<Option<AuthorizationManager>, String> {
    if !signed_in(path) {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| format!("its address cannot be used for sign-in: {e}"))?;
    manager
        .with_client(client.clone())
        .map_err(|e| e.to_string())?;
    manager.set_credential_store(FileCredentials::new(path.to_owned()));
    match manager.initialize_from_store().await {
        Ok(true) => {
            // A confidential client refreshes with its secret, which the kept tokens do not hold.
            if let Some(OAuthClient {
                client_id: Some(id),
                client_secret: Some(secret),
                ..
            }) = oauth
            {
                manager
                    .configure_client(
                        OAuthClientConfig::new(id.clone(), url).with_client_secret(secret.clone()),
                    )
                    .map_err(|e| describe_auth_error(connector, &e))?;
            }
            Ok(Some(manager))
        }
        // Discarded: the server now names another authorization server.
        Ok(false) => Err(sign_in_needed(
            connector,
            "changed its authorization server, so its sign-in was dropped",
        )),
        Err(e) => Err(describe_auth_error(connector, &e)),
    }
}

/// Signs in to a remote server: discovers its authorization server, registers this client (or uses the one
/// `oauth` names), and hands the
/// authorization address to `open` (a browser, or a person reading it); then waits on a loopback port for the
/// redirect and exchanges its code for tokens, which are saved at `path`.
pub async fn sign_in(
    connector: &str,
    url: &str,
    ca_file: Option<&Path>,
    oauth: Option<&OAuthClient>,
    path: &Path,
    open: impl FnOnce(&str),
) -> Result<(), String> {
    let client = http_client(connector, ca_file)?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("no loopback port for the sign-in's redirect: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("no loopback port for the sign-in's redirect: {e}"))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let failed = |e: AuthError| describe_auth_error(connector, &e);
    let mut manager = AuthorizationManager::new(url).await.map_err(failed)?;
    manager.with_client(client.clone()).map_err(failed)?;
    // The tokens reach the file only once the code is exchanged; until then nothing is kept.
    manager.set_credential_store(FileCredentials::new(path.to_owned()));
    let metadata = manager
        .resolve_metadata_from_challenge(None)
        .await
        .map_err(failed)?;
    manager.set_metadata(metadata.metadata);
    // A pre-registered client if the connector names one; dynamic registration otherwise.
    let mut request = AuthorizationRequest::new(redirect).with_client_name(CLIENT_NAME);
    if let Some(oauth) = oauth {
        if let Some(id) = &oauth.client_id {
            request = request.with_preregistered_client(id.clone());
        }
        if let Some(secret) = &oauth.client_secret {
            request = request.with_client_secret(secret.clone());
        }
        if !oauth.scopes.is_empty() {
            request = request.with_scopes(oauth.scopes.iter().cloned());
        }
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed(e))?;
    open(session.get_authorization_url());
    let callback = tokio::time::timeout(SIGN_IN_TIMEOUT, redirected(&listener))
        .await
        .map_err(|_| {
            format!(
                "sign-in to \"{connector}\" was not completed within {} minutes",
                SIGN_IN_TIMEOUT.as_secs() / 60
            )
        })??;
    session
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(failed)?;
    Ok(())
}

/// Waits for the browser's redirect on the loopback listener and answers it with a page saying how it went;
/// requests for anything else (a favicon) are turned away without ending the wait.
async fn redirected(listener: &tokio::net::TcpListener) -> Result<AuthorizationCallback, String> {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let mut head = Vec::new();
        let mut buffer = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
        let head = String::from_utf8_lossy(&head);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("");
        if !target.starts_with("/callback") {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        }
        let address = format!("http://127.0.0.1{target}");
        let refused = url::Url::parse(&address).ok().and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "error")
                .map(|(_, v)| v.into_owned())
        });
        let result = match refused {
            Some(error) => Err(format!("the authorization server refused: {error}")),
            None => AuthorizationCallback::from_redirect_url(&address).map_err(|e| e.to_string()),
        };
        let page = match &result {
            Ok(_) => "Signed in. You can close this tab and return to Codemode Console.",
            Err(_) => "Sign-in failed. Return to Codemode Console to see why.",
        };
        let _ = stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{page}",
                    page.len()
                )
                .as_bytes(),
            )
            .await;
        return result;
    }
}

/// What went wrong with a sign-in or a token, as a person can act on it.
fn describe_auth_error(connector: &str, error: &AuthError) -> String {
    match error {
        AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => {
            sign_in_needed(connector, "needs a new sign-in (it expired or was revoked)")
        }
        AuthError::NoAuthorizationSupport => {
            format!("MCP server \"{connector}\" does not offer OAuth sign-in")
        }
        AuthError::HttpError(e) => format!("sign-in to \"{connector}\" failed: {}", chain(e)),
        other => format!("sign-in to \"{connector}\" failed: {}", chain(other)),
    }
}

/// Why a connection to `url` failed: a certificate's problem or an unreachable host said in words, anything
/// else as the SDK says it.
pub fn describe_connect_error(url: &str, error: &(dyn StdError + 'static)) -> String {
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| url.to_owned());
    let causes = causes(error);
    if let Some(tls) = causes
        .iter()
        .find_map(|e| e.downcast_ref::<rustls::Error>())
    {
        return format!(
            "the certificate of {host} was refused: {}",
            certificate_reason(tls, &host)
        );
    }
    let unreachable = causes
        .iter()
        .filter_map(|e| e.downcast_ref::<reqwest::Error>())
        .any(|e| e.is_connect() || e.is_timeout());
    match (unreachable, causes.last()) {
        (true, Some(root)) => format!("cannot connect to {url}: {root}"),
        _ => error.to_string(),
    }
}

/// An error and its causes, outermost first. The SDK keeps some causes out of `source` (a transport's error
/// inside the initialisation's, the HTTP client's inside the transport's), and io::Error's `source` skips
/// the error it wraps; those are followed too.
fn causes<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut found = Vec::new();
    let mut current = Some(error);
    while let Some(e) = current {
        found.push(e);
        current = if let Some(ClientInitializeError::TransportError { error, .. }) =
            e.downcast_ref::<ClientInitializeError>()
        {
            Some(error as &(dyn StdError + 'static))
        } else if let Some(StreamableHttpError::Client(inner)) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            Some(inner as &(dyn StdError + 'static))
        } else if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner as &(dyn StdError + 'static))
        } else {
            e.source()
        };
        if found.len() > 32 {
            break;
        }
    }
    found
}

fn certificate_reason(error: &rustls::Error, host: &str) -> String {
    use rustls::CertificateError as C;
    match error {
        rustls::Error::InvalidCertificate(C::UnknownIssuer) => {
            "it is signed by an authority this machine does not trust (a private CA goes in the connector's \
             \"caFile\")"
                .to_owned()
        }
        rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        ) => format!("it is not valid for the name {host}"),
        rustls::Error::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            "it has expired".to_owned()
        }
        rustls::Error::InvalidCertificate(C::NotValidYet | C::NotValidYetContext { .. }) => {
            "it is not valid yet".to_owned()
        }
        rustls::Error::InvalidCertificate(C::Revoked) => "it was revoked".to_owned(),
        other => other.to_string(),
    }
}

/// An error with its causes, as one line.
pub fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = String::new();
    for e in causes(error) {
        let part = e.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}
