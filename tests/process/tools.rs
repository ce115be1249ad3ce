//! Small helpers the process tests share: running a command that must succeed, and the checksum the
//! service and the report page print (lowercase hex SHA-256, computed here independently).

use std::process::Command;

use sha2::{Digest, Sha256};

/// Runs `command` and returns its stdout; panics with both outputs when it fails. `what` names it.
pub fn run(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({:?})\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
