//! A newcomer's server for the process tests: the real binary's `serve` with its defaults (an embedded
//! SQLite database in `./data` of the given directory) on a free loopback port, killed however the test
//! ends.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary the suite built.
pub const BIN: &str = env!("CARGO_BIN_EXE_anonymizer");

/// A running `anonymizer serve`; killed when dropped.
pub struct LocalServer {
    child: Child,
    /// The loopback port it listens on.
    pub port: u16,
}

impl LocalServer {
    /// Starts `serve` in `dir` on a free port and waits (at most 30 s) until it accepts connections.
    pub fn start(dir: &Path) -> LocalServer {
        Self::start_with(dir, &[])
    }

    /// [`LocalServer::start`] with more arguments for `serve`.
    pub fn start_with(dir: &Path, arguments: &[&str]) -> LocalServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let child = Command::new(BIN)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(arguments)
            .current_dir(dir)
            .env_remove("DATABASE_URL")
            .env_remove("ANONYMIZER_DATA_DIR")
            .env_remove("ANONYMIZER_BOOTSTRAP_KEY")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let server = LocalServer { child, port };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the server did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
