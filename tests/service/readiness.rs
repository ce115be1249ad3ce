//! Readiness of the real binary while its PostgreSQL goes away and comes back. The server reaches its
//! database through a TCP proxy run by the test on 127.0.0.1, which forwards to TEST_DATABASE_URL, or
//! blackholes connections (accepts them and never answers), or refuses them (closes them at once);
//! every switch cuts the connections it was forwarding. `/readyz` must answer 503 within 1 s in both
//! outages, and 200 again once the proxy forwards, without a restart. The Dockerfile's health check
//! command runs against the same server. The database is a fresh one, dropped afterwards; the server is
//! killed if the test fails.

use crate::database;

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anonymizer::store::Backend;
use tokio::sync::watch;

const BIN: &str = env!("CARGO_BIN_EXE_anonymizer");

/// What the proxy does with connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Forward to the database.
    Forward,
    /// Accept and hold without a byte: a host that stopped answering.
    Blackhole,
    /// Close at once: a database that is down.
    Refuse,
}

/// A TCP proxy in front of the database; stops when dropped.
struct Proxy {
    address: SocketAddr,
    mode: watch::Sender<Mode>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let address = listener.local_addr().expect("proxy address");
        let (mode, modes) = watch::channel(Mode::Forward);
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let mut modes = modes.clone();
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    let mode = *modes.borrow_and_update();
                    match mode {
                        Mode::Refuse => drop(client),
                        Mode::Blackhole => {
                            let _ = modes.changed().await;
                            drop(client);
                        }
                        Mode::Forward => {
                            let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await
                            else {
                                return;
                            };
                            let mut client = client;
                            tokio::select! {
                                _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                                _ = modes.changed() => {}
                            }
                        }
                    }
                });
            }
        });
        Proxy {
            address,
            mode,
            task,
        }
    }

    /// Switches the mode; connections it was forwarding or holding are closed.
    fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `url` split around its `host:port` (the default port made explicit).
fn split_authority(url: &str) -> (String, String, String) {
    let scheme_end = url.find("://").expect("a URL") + 3;
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let host_start = authority.rfind('@').map_or(0, |at| at + 1);
    let host = &authority[host_start..];
    let host = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:5432")
    };
    (
        url[..scheme_end + host_start].to_string(),
        host,
        rest[authority_end..].to_string(),
    )
}

/// A running `anonymizer serve --role api`; killed when dropped.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Server {
    fn start(database_url: &str, dir: &Path) -> Server {
        let log = dir.join("server.log");
        let stderr = File::create(&log).expect("log file");
        let child = Command::new(BIN)
            .args(["serve", "--role", "api", "--listen", "127.0.0.1:0"])
            .env("DATABASE_URL", database_url)
            .env("ANONYMIZER_DATA_DIR", dir)
            .env("ANONYMIZER_LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("start the binary");
        Server { child, log }
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The address the server bound (from its `serving` log line), once it answers `/healthz`.
    async fn address(&mut self) -> SocketAddr {
        let started = Instant::now();
        loop {
            if let Some(exit) = self.child.try_wait().expect("try_wait") {
                panic!("the server exited with {exit}:\n{}", self.logs());
            }
            let address = self.logs().lines().find_map(|line| {
                let event: serde_json::Value = serde_json::from_str(line).ok()?;
                (event["message"] == "serving")
                    .then(|| event["address"].as_str()?.parse().ok())
                    .flatten()
            });
            if let Some(address) = address {
                if get(address, "/healthz")
                    .await
                    .is_ok_and(|(status, _)| status == 200)
                {
                    return address;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the server did not come up:\n{}",
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 GET on a blocking thread; the status and the body.
async fn get(address: SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    let path = path.to_string();
    tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(address)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        let status = response
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = response.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        Ok((status, body))
    })
    .await
    .expect("request thread")
}

/// `/readyz` with how long it took to answer.
async fn readyz(address: SocketAddr) -> (u16, String, Duration) {
    let started = Instant::now();
    let (status, body) = get(address, "/readyz").await.expect("/readyz answers");
    (status, body, started.elapsed())
}

/// The `HEALTHCHECK` command of the Dockerfile (its exec-form JSON array).
fn docker_health_check() -> Vec<String> {
    let dockerfile = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Dockerfile"))
        .expect("Dockerfile");
    let check = dockerfile
        .split("HEALTHCHECK")
        .nth(1)
        .expect("a HEALTHCHECK instruction");
    let command = check.split("CMD").nth(1).expect("a CMD").trim_start();
    let line = command.lines().next().expect("the command");
    serde_json::from_str(line).expect("an exec-form command")
}

/// Runs the Dockerfile's health check against `address` as the container would (ANONYMIZER_LISTEN on
/// every address of the port); whether it passed and how long it took.
async fn run_health_check(address: SocketAddr) -> (bool, Duration) {
    let command = docker_health_check();
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let status = Command::new(&command[0])
            .args(&command[1..])
            .env("ANONYMIZER_LISTEN", format!("0.0.0.0:{}", address.port()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run the health check");
        (status.success(), started.elapsed())
    })
    .await
    .expect("health check thread")
}

/// The bound of the issue: `/readyz` answers 503 within 1 s while the database is unreachable.
const READY_BOUND: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_reports_an_unreachable_database_within_a_second_and_recovers() {
    database::with_url(Backend::Postgres, |url| async move {
        let (prefix, upstream, rest) = split_authority(&url);
        let proxy = Proxy::start(upstream).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let mut server = Server::start(&format!("{prefix}{}{rest}", proxy.address), dir.path());
        let address = server.address().await;

        let (status, body, _) = readyz(address).await;
        assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
        let (healthy, _) = run_health_check(address).await;
        assert!(
            healthy,
            "the health check passes while the database answers"
        );

        for (mode, probes) in [(Mode::Blackhole, 3), (Mode::Refuse, 2)] {
            proxy.set(mode);
            for _ in 0..probes {
                let (status, body, took) = readyz(address).await;
                assert_eq!(status, 503, "{mode:?}: {body}");
                assert!(body.contains(r#""code":"unavailable""#), "{body}");
                assert!(
                    took < READY_BOUND,
                    "{mode:?}: /readyz took {took:?} to report the database down"
                );
                eprintln!("{mode:?}: 503 in {} ms", took.as_millis());
            }
            let (healthy, took) = run_health_check(address).await;
            assert!(!healthy, "{mode:?}: the health check fails");
            assert!(took < Duration::from_secs(3), "within Docker's timeout");
        }

        // back: ready again by itself (the next probe reconnects)
        proxy.set(Mode::Forward);
        let started = Instant::now();
        loop {
            let (status, _, _) = readyz(address).await;
            if status == 200 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "/readyz did not recover:\n{}",
                server.logs()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        eprintln!(
            "ready again {} ms after the database came back",
            started.elapsed().as_millis()
        );
        let (healthy, _) = run_health_check(address).await;
        assert!(healthy, "the health check passes again");
        drop(server);
        drop(proxy);
    })
    .await;
}

#[test]
fn the_proxy_url_keeps_credentials_database_and_parameters() {
    assert_eq!(
        split_authority("postgres://user:pw@db.example:6543/anon?sslmode=disable"),
        (
            "postgres://user:pw@".to_string(),
            "db.example:6543".to_string(),
            "/anon?sslmode=disable".to_string()
        )
    );
    assert_eq!(
        split_authority("postgres://127.0.0.1/anon").1,
        "127.0.0.1:5432"
    );
}
