//! The contract as integrators use it: a Python client generated from `openapi.yaml` by
//! openapi-python-client (pinned, installed once into a virtual environment under `target/tools`) runs
//! `generated_client.py` against the real binary: upload with a retried Idempotency-Key, submit, poll
//! as Retry-After says, download and stream the output and check its checksum, 304 on If-None-Match.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::local_server::{LocalServer, BIN};
use crate::tools::run;

/// The generator's version: pinned, so that a new release cannot change the test's client.
const GENERATOR: &str = "openapi-python-client==0.29.1";

/// The virtual environment holding the generator, made on first use.
fn generator_env(root: &Path) -> PathBuf {
    let version = GENERATOR.rsplit('=').next().unwrap_or("pinned");
    let venv = root.join(format!("target/tools/openapi-python-client-{version}"));
    let python = venv.join("bin/python");
    if !venv.join("bin/openapi-python-client").exists() {
        run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv (Python 3 with venv is needed for the generated-client test)",
        );
        run(
            Command::new(&python).args(["-m", "pip", "install", "-q", GENERATOR]),
            "pip install openapi-python-client",
        );
    }
    venv
}

#[test]
fn a_client_generated_from_the_contract_runs_a_whole_session() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let venv = generator_env(root);
    let dir = tempfile::tempdir().expect("temporary directory");
    run(
        Command::new(venv.join("bin/openapi-python-client"))
            .args(["generate", "--meta", "none", "--output-path"])
            .arg(dir.path().join("anonymizer_client"))
            .arg("--path")
            .arg(root.join("openapi.yaml")),
        "openapi-python-client generate",
    );
    // the two uploads need their endpoints: a body type the generator cannot use would drop them
    for module in [
        "api/datasets/create_dataset.py",
        "api/jobs/get_job_output.py",
    ] {
        assert!(
            dir.path().join("anonymizer_client").join(module).exists(),
            "{module} was not generated"
        );
    }

    let server = LocalServer::start(dir.path());
    let port = server.port;
    let key = run(
        Command::new(BIN)
            .args(["keys", "create", "--tenant", "hospital-a"])
            .current_dir(dir.path())
            .env_remove("DATABASE_URL")
            .env_remove("ANONYMIZER_DATA_DIR"),
        "anonymizer keys create",
    );
    let session = run(
        Command::new(venv.join("bin/python"))
            .arg(root.join("tests/process/generated_client.py"))
            .current_dir(dir.path())
            .env("PYTHONPATH", dir.path())
            .env("API", format!("http://127.0.0.1:{port}"))
            .env("KEY", key.trim())
            .env("CSV", root.join("tests/data/adult/adult.csv"))
            .env("SPEC", root.join("examples/adult-builders.json")),
        "the generated client's session",
    );
    drop(server);
    let summary: serde_json::Value =
        serde_json::from_str(session.trim()).expect("the session prints its summary");
    assert!(
        summary["bytes"].as_u64().is_some_and(|n| n > 1_000_000),
        "{summary}"
    );
    assert_eq!(
        summary["sha256"].as_str().map(str::len),
        Some(64),
        "{summary}"
    );
}
