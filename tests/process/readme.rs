//! The README's quick start, run as written: the curl session of its second block against the real
//! binary serving a fresh data directory. Only what a test cannot do as a newcomer would is changed:
//! `cargo run --release -q --` becomes the binary the suite built, and the port is a free one. The
//! files the block reads are copied under the same relative paths, so nothing is written in the
//! repository.

use std::path::Path;
use std::process::Command;

use crate::local_server::{LocalServer, BIN};

/// The shell block that follows "A first session with curl" in README.md.
fn session_block(readme: &str) -> String {
    let after = readme
        .split_once("A first session with curl")
        .expect("the quick start's curl session")
        .1;
    let body = after.split_once("```sh\n").expect("its shell block").1;
    body.split_once("```")
        .expect("the block's end")
        .0
        .to_string()
}

#[test]
fn the_quick_start_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let block = session_block(&readme);
    let dir = tempfile::tempdir().expect("temporary directory");
    for file in ["tests/data/adult/adult.csv", "examples/adult-builders.json"] {
        let target = dir.path().join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), &target).expect("copy the quick start's input");
    }
    // the first terminal: `serve` with its defaults (./data), in the same directory
    let server = LocalServer::start(dir.path());
    let port = server.port;
    assert!(block.contains("cargo run --release -q --") && block.contains("127.0.0.1:8080"));
    let script = block
        .replace("cargo run --release -q --", BIN)
        .replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"));
    let output = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(dir.path())
        .output()
        .expect("run bash");
    drop(server);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\nstdout: {stdout}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    // the report came back, and the output was saved under the name the service gave it
    assert!(stdout.contains("\"records\":30162"), "{stdout}");
    assert!(stdout.contains("\"warnings\""), "{stdout}");
    let saved: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".csv"))
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let csv = std::fs::read_to_string(dir.path().join(&saved[0])).unwrap();
    assert_eq!(csv.lines().count(), 30_163);
}
