//! The real binary as a service: `anonymizer keys` manages keys in a fresh SQLite database, and
//! `anonymizer serve` on a free port answers health, readiness and OpenAPI requests, returns problem+json
//! for unknown routes, and stops cleanly on SIGTERM.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_anonymizer");

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One HTTP/1.1 GET; returns the status and the body.
fn get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
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
}

#[test]
fn keys_are_created_listed_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let keys = |args: &[&str]| {
        Command::new(BIN)
            .arg("keys")
            .args(args)
            .env_remove("DATABASE_URL")
            .env("ANONYMIZER_DATA_DIR", dir.path())
            .output()
            .unwrap()
    };
    // no database yet: refused, saying where it looked, and nothing is created
    let refused = keys(&["create", "--tenant", "hospital-a"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let expected = std::path::absolute(dir.path().join("anonymizer.db")).unwrap();
    assert!(
        stderr.contains(&format!("no database at {}", expected.display()))
            && stderr.contains("--create"),
        "{stderr}"
    );
    assert!(!expected.exists());
    let created = keys(&["create", "--tenant", "hospital-a", "--create"]);
    assert!(created.status.success(), "{created:?}");
    assert!(String::from_utf8_lossy(&created.stderr)
        .contains(&format!("database: {}", expected.display())));
    let key = String::from_utf8(created.stdout).unwrap();
    assert!(
        key.trim().starts_with("anz_") && key.trim().len() == 68,
        "{key}"
    );
    let listed = String::from_utf8(keys(&["list"]).stdout).unwrap();
    assert!(
        listed.contains("hospital-a") && listed.contains("active"),
        "{listed}"
    );
    assert!(!listed.contains(key.trim()), "keys are never listed");
    let id = listed
        .lines()
        .nth(1)
        .unwrap()
        .split('\t')
        .next()
        .unwrap()
        .to_string();
    assert!(keys(&["revoke", &id]).status.success());
    assert!(String::from_utf8(keys(&["list"]).stdout)
        .unwrap()
        .contains("revoked"));
    let unknown = keys(&["revoke", "00000000-0000-4000-8000-000000000000"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8(unknown.stderr)
        .unwrap()
        .contains("no key with id"));
    assert!(!keys(&["create", "--tenant", " "]).status.success());
}

#[test]
fn serve_answers_health_readiness_and_openapi_then_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--log-format",
            "json",
        ])
        .env_remove("DATABASE_URL")
        .env("ANONYMIZER_DATA_DIR", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let health = loop {
        match get(port, "/healthz") {
            Ok(answer) => break answer,
            Err(_) if started.elapsed() < Duration::from_secs(20) => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(e) => {
                let _ = child.kill();
                panic!("the server did not come up: {e}");
            }
        }
    };
    assert_eq!(health.0, 200);
    let ready = get(port, "/readyz").unwrap();
    assert_eq!(ready, (200, r#"{"status":"ok"}"#.to_string()));
    let openapi = get(port, "/openapi.yaml").unwrap();
    assert_eq!(openapi.0, 200);
    assert!(
        openapi.1.starts_with("openapi: 3.1"),
        "{}",
        &openapi.1[..40.min(openapi.1.len())]
    );
    let unknown = get(port, "/nowhere").unwrap();
    assert_eq!(unknown.0, 404);
    assert!(unknown.1.contains("\"code\""), "{}", unknown.1);
    assert!(
        dir.path().join("anonymizer.db").exists(),
        "the default SQLite file is created"
    );
    // graceful stop
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit:?}");
    let mut logs = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    assert!(logs.contains("no API keys yet"), "{logs}");
    assert!(logs.contains("stopped"), "{logs}");
}
