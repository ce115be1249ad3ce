//! The real binary's at-rest hygiene and audit file: under a permissive umask, `anonymizer keys` and
//! `anonymizer serve` create the data directory `0700` and the SQLite database with its `-wal` and
//! `-shm` files `0600`; `--audit-log` receives key creation and revocation from the command line and the
//! data requests of the server (created `0600`); `keys list` shows RFC 3339 times and the last use.

#![cfg(unix)]

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_anonymizer");

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The permission bits of `path`.
fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// The binary with `args`, the data directory and the audit log set, and umask 000 so that only modes
/// set on purpose are private.
fn anonymizer(data_dir: &Path, audit_log: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("RUST_LOG")
        .env("ANONYMIZER_DATA_DIR", data_dir)
        .env("ANONYMIZER_AUDIT_LOG", audit_log);
    // SAFETY: umask is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    command
}

fn keys(data_dir: &Path, audit_log: &Path, args: &[&str]) -> Output {
    let mut all = vec!["keys"];
    all.extend_from_slice(args);
    let output = anonymizer(data_dir, audit_log, &all)
        .output()
        .expect("keys runs");
    assert!(output.status.success(), "{output:?}");
    output
}

/// One HTTP/1.1 GET with a bearer key; the status.
fn get(port: u16, path: &str, key: &str) -> std::io::Result<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0))
}

/// Stops `child` with SIGTERM and waits for it.
fn stop(mut child: Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(exit) = child.try_wait().expect("wait") {
            assert!(exit.success(), "{exit:?}");
            return;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn audit_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("audit log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// The `keys list` line of key `id`, split at tabs.
fn listed(data_dir: &Path, audit_log: &Path, id: &str) -> Vec<String> {
    let out = String::from_utf8(keys(data_dir, audit_log, &["list"]).stdout).expect("UTF-8");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("id\ttenant\tprefix\tcreated_at\tstatus\tlast_used_at\trevoked_at")
    );
    lines
        .find(|l| l.starts_with(id))
        .unwrap_or_else(|| panic!("key {id} not listed: {out}"))
        .split('\t')
        .map(str::to_string)
        .collect()
}

fn is_rfc3339_utc(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 24 && b[4] == b'-' && b[10] == b'T' && b[19] == b'.' && b[23] == b'Z'
}

#[test]
fn data_files_are_private_and_the_audit_log_gets_every_operation() {
    let root = tempfile::tempdir().expect("temporary directory");
    let data = root.path().join("state/data");
    let audit_log = root.path().join("audit.jsonl");

    // a key, from the command line, into a data directory that does not exist yet
    let created = keys(
        &data,
        &audit_log,
        &["create", "--tenant", "clinic", "--create"],
    );
    let key = String::from_utf8(created.stdout).expect("UTF-8");
    let key = key.trim();
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&root.path().join("state")), 0o700);
    assert_eq!(mode(&data.join("anonymizer.db")), 0o600);
    assert_eq!(mode(&audit_log), 0o600);
    let events = audit_lines(&audit_log);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["operation"], "key.create");
    assert_eq!(events[0]["source"], "cli");
    let key_id = events[0]["resource_id"]
        .as_str()
        .expect("key id")
        .to_string();
    let tenant_id = events[0]["tenant_id"].as_str().expect("tenant").to_string();
    let line = listed(&data, &audit_log, &key_id);
    assert_eq!(line[1], "clinic");
    assert!(is_rfc3339_utc(&line[3]), "{line:?}");
    assert_eq!((line[4].as_str(), line[5].as_str()), ("active", "-"));

    // the server, with the database open (WAL): its files are private too
    let port = free_port();
    let log = File::create(root.path().join("serve.log")).expect("log file");
    let listen = format!("127.0.0.1:{port}");
    let child = anonymizer(
        &data,
        &audit_log,
        &["serve", "--listen", &listen, "--log-format", "json"],
    )
    .stdout(Stdio::null())
    .stderr(log)
    .spawn()
    .expect("serve starts");
    let started = Instant::now();
    while get(port, "/healthz", key).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server did not come up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(get(port, "/v1/datasets", key).expect("GET"), 200);
    for file in ["anonymizer.db", "anonymizer.db-wal", "anonymizer.db-shm"] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file}");
    }
    assert_eq!(get(port, "/v1/jobs", "anz_wrong").expect("GET"), 401);

    // the last use is written in the background: poll `keys list`
    let deadline = Instant::now() + Duration::from_secs(20);
    let last_used = loop {
        let line = listed(&data, &audit_log, &key_id);
        if line[5] != "-" {
            break line[5].clone();
        }
        assert!(Instant::now() < deadline, "no last use recorded: {line:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(is_rfc3339_utc(&last_used), "{last_used}");
    stop(child);

    keys(&data, &audit_log, &["revoke", &key_id]);
    let line = listed(&data, &audit_log, &key_id);
    assert_eq!(line[4], "revoked");
    assert!(is_rfc3339_utc(&line[6]), "{line:?}");

    let events = audit_lines(&audit_log);
    let operations: Vec<&str> = events
        .iter()
        .map(|e| e["operation"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        operations,
        ["key.create", "dataset.list", "job.list", "key.revoke"]
    );
    assert_eq!(events[1]["tenant_id"], tenant_id.as_str());
    assert_eq!(events[1]["key_id"], key_id.as_str());
    assert_eq!(events[1]["outcome"], "success");
    assert_eq!(events[2]["outcome"], "denied");
    assert_eq!(events[3]["tenant_id"], tenant_id.as_str());
    assert_eq!(events[3]["resource_id"], key_id.as_str());
    let text = std::fs::read_to_string(&audit_log).expect("audit log");
    assert!(!text.contains(key), "the key itself is never written");
    assert_eq!(mode(&audit_log), 0o600);
}
