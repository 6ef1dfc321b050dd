//! TLS to PostgreSQL with the rustls already in the tree (docs/shared-store.md, "TLS"): libpq's `sslmode`
//! (`disable`, `allow`, `prefer`, `require`, `verify-ca`, `verify-full`) and `sslrootcert` (a PEM file, or
//! `system` for the operating system's store) read from the store's URL, and the connector tokio-postgres
//! negotiates with.

use super::sql::DbError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

/// What the URL asks of the connection's encryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    /// `allow` and `prefer`: encrypted when the server offers it, the server not verified (libpq's default).
    Prefer,
    /// Encrypted, the server not verified (unless a root certificate is named: then as `verify-ca`, as libpq).
    Require,
    /// Encrypted, the server's certificate chain checked against the roots, not its name.
    VerifyCa,
    /// Encrypted, the chain and the server's name checked.
    VerifyFull,
}

/// Where the roots a server's certificate is checked against come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Roots {
    File(PathBuf),
    System,
}

/// The TLS half of a store URL, taken out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    pub mode: SslMode,
    pub roots: Option<Roots>,
}

/// Splits `sslmode` and `sslrootcert` out of `url` (a `postgres://…?…` URL or a `key=value` string): the URL
/// tokio-postgres reads (its `sslmode` one it knows) and what the connector needs.
pub(crate) fn split_url(url: &str) -> Result<(String, TlsSettings), DbError> {
    let mut mode = None;
    let mut roots = None;
    let mut take = |key: &str, value: &str| -> Result<bool, DbError> {
        match key {
            "sslmode" => {
                mode = Some(match value {
                    "disable" => SslMode::Disable,
                    "allow" | "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => {
                        return Err(DbError::Pool(format!(
                            "sslmode \"{other}\" is not one of disable, allow, prefer, require, verify-ca, \
                             verify-full"
                        )));
                    }
                });
                Ok(true)
            }
            "sslrootcert" => {
                roots = Some(match value {
                    "system" => Roots::System,
                    file => Roots::File(PathBuf::from(file)),
                });
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    let rest = if url.contains("://") {
        match url.split_once('?') {
            None => url.to_owned(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    let decoded: String = url_decoded(value);
                    if !take(key, &decoded)? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        let mut kept = Vec::new();
        for pair in url.split_whitespace() {
            match pair.split_once('=') {
                Some((key, value)) if take(key, value.trim_matches('\''))? => {}
                _ => kept.push(pair),
            }
        }
        kept.join(" ")
    };
    let mode = match (mode, &roots) {
        (Some(SslMode::Require), Some(_)) => SslMode::VerifyCa,
        (Some(mode), _) => mode,
        (None, _) => SslMode::Prefer,
    };
    if matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) && roots.is_none() {
        return Err(DbError::Pool(
            "sslmode=verify-ca and verify-full check the server against roots: add sslrootcert=FILE (a PEM \
             file of the certificate authority) or sslrootcert=system"
                .to_owned(),
        ));
    }
    let tokio_mode = match mode {
        SslMode::Disable => "disable",
        SslMode::Prefer => "prefer",
        _ => "require",
    };
    let joined = if rest.contains("://") {
        let separator = if rest.contains('?') { '&' } else { '?' };
        format!("{rest}{separator}sslmode={tokio_mode}")
    } else {
        format!("{rest} sslmode={tokio_mode}")
    };
    Ok((joined, TlsSettings { mode, roots }))
}

/// `%XX` escapes of a URL's query value, decoded (a path with spaces, say).
fn url_decoded(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The connector for `settings`: a rustls client checking what the mode asks for.
pub(crate) fn connector(settings: &TlsSettings) -> Result<RustlsConnect, DbError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| DbError::Pool(format!("TLS: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = match (&settings.roots, settings.mode) {
        (_, SslMode::Disable | SslMode::Prefer | SslMode::Require) => {
            Arc::new(Unverified(provider.clone()))
        }
        (Some(Roots::System), mode) => {
            let platform = rustls_platform_verifier::Verifier::new(provider.clone())
                .map_err(|e| DbError::Pool(format!("TLS: the system's roots: {e}")))?;
            name_checked(Arc::new(platform), mode)
        }
        (Some(Roots::File(file)), mode) => {
            let pem = std::fs::read(file)
                .map_err(|e| DbError::Pool(format!("sslrootcert {}: {e}", file.display())))?;
            let mut store = rustls::RootCertStore::empty();
            use rustls::pki_types::pem::PemObject;
            for certificate in CertificateDer::pem_slice_iter(&pem) {
                let certificate = certificate
                    .map_err(|e| DbError::Pool(format!("sslrootcert {}: {e}", file.display())))?;
                store
                    .add(certificate)
                    .map_err(|e| DbError::Pool(format!("sslrootcert {}: {e}", file.display())))?;
            }
            if store.is_empty() {
                return Err(DbError::Pool(format!(
                    "sslrootcert {} holds no certificate",
                    file.display()
                )));
            }
            let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(store),
                provider.clone(),
            )
            .build()
            .map_err(|e| DbError::Pool(format!("TLS: {e}")))?;
            name_checked(webpki, mode)
        }
        (None, _) => return Err(DbError::Pool("TLS: no roots to verify against".to_owned())),
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(RustlsConnect(Arc::new(config)))
}

fn name_checked(
    verifier: Arc<dyn ServerCertVerifier>,
    mode: SslMode,
) -> Arc<dyn ServerCertVerifier> {
    if mode == SslMode::VerifyFull {
        verifier
    } else {
        Arc::new(ChainOnly(verifier))
    }
}

/// `require` (and `prefer`) as libpq means them: encrypted, whoever answers. Handshake signatures are still
/// checked, so the session is with the holder of the certificate's key.
#[derive(Debug)]
struct Unverified(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to the roots; the name the server goes by is not checked.
#[derive(Debug)]
struct ChainOnly(Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// tokio-postgres's side of the connector: one rustls configuration, a session per connection.
#[derive(Clone)]
pub(crate) struct RustlsConnect(Arc<rustls::ClientConfig>);

/// A connection's TLS session toward one server name.
pub(crate) struct RustlsSession {
    config: Arc<rustls::ClientConfig>,
    name: ServerName<'static>,
}

impl<S> MakeTlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsSession;
    type Error = rustls::pki_types::InvalidDnsNameError;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsSession, Self::Error> {
        Ok(RustlsSession {
            config: self.0.clone(),
            name: ServerName::try_from(domain)?.to_owned(),
        })
    }
}

impl<S> TlsConnect<S> for RustlsSession
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let connector = tokio_rustls::TlsConnector::from(self.config);
        Box::pin(async move {
            let session = connector.connect(self.name, stream).await?;
            Ok(RustlsStream(session))
        })
    }
}

/// An encrypted connection to the server.
pub(crate) struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    /// SCRAM without channel binding: the server's certificate is checked by the verifier instead.
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(url: &str) -> (String, TlsSettings) {
        split_url(url).unwrap()
    }

    #[test]
    fn libpq_modes_are_read_and_tokio_postgres_gets_one_it_knows() {
        let (url, tls) = split(
            "postgres://ann@db/codemode?sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20x.pem&application_name=x",
        );
        assert_eq!(
            url,
            "postgres://ann@db/codemode?application_name=x&sslmode=require"
        );
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.roots, Some(Roots::File(PathBuf::from("/etc/ca x.pem"))));

        let (url, tls) = split("postgres://ann@db/codemode");
        assert_eq!(
            (url.as_str(), tls.mode),
            ("postgres://ann@db/codemode?sslmode=prefer", SslMode::Prefer)
        );

        let (url, tls) = split("host=db user=ann sslmode=disable");
        assert_eq!(
            (url.as_str(), tls.mode),
            ("host=db user=ann sslmode=disable", SslMode::Disable)
        );

        // libpq: require with a root certificate named checks the chain.
        let (_, tls) = split("postgres://db/x?sslmode=require&sslrootcert=system");
        assert_eq!(
            (tls.mode, tls.roots),
            (SslMode::VerifyCa, Some(Roots::System))
        );
    }

    #[test]
    fn a_mode_that_cannot_be_kept_is_refused_with_the_way_on() {
        let error = split_url("postgres://db/x?sslmode=verify-full")
            .unwrap_err()
            .to_string();
        assert!(error.contains("sslrootcert=FILE"), "{error}");
        let error = split_url("postgres://db/x?sslmode=verify")
            .unwrap_err()
            .to_string();
        assert!(error.contains("verify-full"), "{error}");
    }
}
