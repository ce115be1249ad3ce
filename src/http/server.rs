//! The accept loop: serves a router over HTTP/1.1, plain or TLS, with the protections a public listener
//! needs and that `axum::serve` does not give:
//!
//! - **a cap on open connections**: past it, a new connection is closed at once (counted in the log), so
//!   a flood of sockets can never exhaust the process's file descriptors or starve the database pool;
//! - **a header-read timeout**: a client must send a request's line and headers within it. hyper starts the
//!   timer whenever the connection waits for a request, so it is also the idle keep-alive timeout: an
//!   open connection that sends nothing is closed after it (slowloris, idle sockets);
//! - **a TLS handshake bounded by the same timeout**, and ALPN offering only `http/1.1`;
//! - **lingering close** (`linger.rs`): a connection answered before its body was read is drained for a
//!   moment before it closes, so the client reads the coded error instead of a connection reset;
//! - **graceful shutdown**: stop accepting, let requests in flight finish within a grace period, then
//!   drop what remains.
//!
//! Only HTTP/1.1 is served: every client of the API speaks it, and HTTP/2 has no idle timeout in hyper.

use std::future::Future;
use std::io;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;

use super::linger::LingeringStream;
use crate::telemetry::prometheus::ServiceMetrics;

/// Most header fields a request may carry.
const MAX_HEADERS: usize = 100;

/// How long to pause accepting after the operating system refused a socket (out of descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Limits of the listener (their defaults live with the `serve` flags in `config.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// Open connections at most; more are closed as they arrive.
    pub max_connections: usize,
    /// Time a client has to send a request's line and headers, and to finish a TLS handshake; also the
    /// idle time after which a keep-alive connection is closed.
    pub header_read_timeout: Duration,
    /// Time requests in flight get to finish once shutdown begins.
    pub shutdown_grace: Duration,
}

/// Why a TLS configuration could not be loaded. Names files, never their content.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file is missing, unreadable or holds no PEM certificate.
    #[error("cannot read a PEM certificate chain from {0}")]
    Certificate(String),
    /// The key file is missing, unreadable or holds no PEM private key.
    #[error("cannot read a PEM private key from {0}")]
    Key(String),
    /// rustls refused the pair (a key that does not match the certificate, an unsupported algorithm).
    #[error("the TLS certificate and key are not usable together: {0}")]
    Config(String),
}

/// A TLS acceptor for a PEM certificate chain and private key (PKCS#8, PKCS#1 or SEC1), TLS 1.2 and 1.3,
/// ALPN `http/1.1`.
pub fn load_tls(certificate: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let certificate_error = || TlsError::Certificate(certificate.display().to_string());
    let chain = CertificateDer::pem_file_iter(certificate)
        .map_err(|_| certificate_error())?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| certificate_error())?;
    if chain.is_empty() {
        return Err(certificate_error());
    }
    let key =
        PrivateKeyDer::from_pem_file(key).map_err(|_| TlsError::Key(key.display().to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Serves `router` on `listener` until `shutdown` resolves, then drains connections for at most
/// `limits.shutdown_grace`. With `tls`, every connection must complete a TLS handshake first. Counts
/// connections in `metrics.connections`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ServerLimits,
    tls: Option<TlsAcceptor>,
    metrics: Arc<ServiceMetrics>,
    shutdown: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_headers(MAX_HEADERS)
        .keep_alive(true);
    let http = Arc::new(http);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(error) => {
                // EMFILE, ENFILE, ECONNABORTED...: the listener stays usable; pausing avoids a hot loop
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            let refused = metrics.connections.refused.fetch_add(1, Ordering::Relaxed) + 1;
            if refused.is_power_of_two() {
                tracing::warn!(
                    max_connections = limits.max_connections,
                    refused,
                    "connection cap reached; closing new connections"
                );
            }
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let stream = LingeringStream::new(stream, permit);
        let service = TowerToHyperService::new(router.clone());
        let http = http.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        let metrics = metrics.clone();
        metrics.connections.open.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            match tls {
                None => {
                    let connection = http.serve_connection(TokioIo::new(stream), service);
                    finish(watcher.watch(connection).await);
                }
                Some(acceptor) => {
                    let handshake =
                        tokio::time::timeout(limits.header_read_timeout, acceptor.accept(stream))
                            .await;
                    match handshake {
                        Ok(Ok(stream)) => {
                            let connection = http.serve_connection(TokioIo::new(stream), service);
                            finish(watcher.watch(connection).await);
                        }
                        Ok(Err(_)) | Err(_) => {
                            metrics
                                .connections
                                .failed_handshakes
                                .fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
            // the slot is given back when the stream has lingered (`LingeringStream`)
            metrics.connections.open.fetch_sub(1, Ordering::Relaxed);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_grace) => {
            tracing::warn!("connections still open after the shutdown grace period are dropped");
        }
    }
    Ok(())
}

/// Logs a connection's end when it is worth a line (not for clients that simply went away or timed out).
fn finish(result: Result<(), hyper::Error>) {
    if let Err(error) = result {
        if !(error.is_incomplete_message() || error.is_timeout() || is_disconnect(&error)) {
            tracing::debug!(%error, "connection ended with an error");
        }
    }
}

fn is_disconnect(error: &hyper::Error) -> bool {
    use std::error::Error as _;
    error
        .source()
        .and_then(|s| s.downcast_ref::<io::Error>())
        .is_some_and(|e| {
            matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::UnexpectedEof
            )
        })
}

/// Raises the soft limit on open files to the hard limit (as Go's runtime does), so that the connection
/// cap, not the operating system's default of 1024, bounds the sockets. Returns the soft limit now in
/// force, when it can be read.
pub fn raise_open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit only read and write the struct passed by pointer.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return None;
            }
            if limit.rlim_cur < limit.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: limit.rlim_max,
                    rlim_max: limit.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    limit = raised;
                }
            }
        }
        #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every unix
        Some(limit.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Descriptors kept free of client connections for the database pool, staged uploads and logs.
pub const RESERVED_FILE_DESCRIPTORS: u64 = 256;

/// The connection cap that fits `open_file_limit`: `requested`, lowered (with a warning) when the
/// process could not open that many sockets plus [`RESERVED_FILE_DESCRIPTORS`].
pub fn fit_connection_cap(requested: usize, open_file_limit: Option<u64>) -> usize {
    let Some(limit) = open_file_limit else {
        return requested;
    };
    let room = limit.saturating_sub(RESERVED_FILE_DESCRIPTORS).max(16);
    if requested as u64 > room {
        tracing::warn!(
            requested,
            open_file_limit = limit,
            using = room,
            "the open-file limit is too low for the connection cap; lowering the cap"
        );
        usize::try_from(room).unwrap_or(requested)
    } else {
        requested
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_fits_the_open_file_limit() {
        assert_eq!(fit_connection_cap(4096, None), 4096);
        assert_eq!(fit_connection_cap(4096, Some(1 << 20)), 4096);
        assert_eq!(fit_connection_cap(4096, Some(1024)), 768);
        assert_eq!(fit_connection_cap(4096, Some(100)), 16);
    }

    #[test]
    fn tls_errors_name_the_file_not_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.pem");
        let key = dir.path().join("key.pem");
        std::fs::write(&cert, "not a certificate").unwrap();
        std::fs::write(&key, "not a key").unwrap();
        let error = load_tls(&cert, &key).err().unwrap().to_string();
        assert!(error.contains("cert.pem"), "{error}");
        assert!(!error.contains("not a certificate"), "{error}");
        let missing = dir.path().join("missing.pem");
        assert!(matches!(
            load_tls(&missing, &key).err(),
            Some(TlsError::Certificate(_))
        ));
    }
}
