//! The report page as its reader meets it: the real binary serves an adult job (the README's session),
//! headless Chromium (Debian's `chromium`, installed by `scripts/test` when missing), driven by
//! playwright-core (pinned, installed once into `target/tools` with the machine's npm), loads
//! `report.html`: no console error, no network request, three charts that render (their screenshots
//! are not blank, their sizes are the page's), the dataset's SHA-256 and the achieved k on the page, a
//! caption on every table. The same server prints the page to PDF with the same Chromium. A copy of the
//! page with an image and a script added must be caught (the check can fail). One full-page screenshot
//! is kept in `target/test-artifacts/report-page.png`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::local_server::{LocalServer, BIN};
use crate::tools::{run, sha256_hex};

/// The driver's version: pinned, so that a release cannot change the test.
const PLAYWRIGHT: &str = "1.65.1";

/// The Chromium to drive: `ANONYMIZER_TEST_CHROMIUM`, else Debian's.
fn chromium() -> PathBuf {
    let path = std::env::var_os("ANONYMIZER_TEST_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.exists(),
        "the browser test needs Chromium at {} (apt-get install chromium; scripts/test installs it)",
        path.display()
    );
    path
}

/// playwright-core's directory, installed on first use.
fn playwright(root: &Path) -> PathBuf {
    let prefix = root.join(format!("target/tools/playwright-core-{PLAYWRIGHT}"));
    let module = prefix.join("node_modules/playwright-core");
    if !module.join("package.json").exists() {
        run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
                .arg(&prefix)
                .arg(format!("playwright-core@{PLAYWRIGHT}")),
            "npm install playwright-core (Node.js and npm are needed for the browser test)",
        );
    }
    module
}

/// What the page gave the browser (see report_browser.js).
fn load(root: &Path, page: &Path, screenshot: &Path) -> Value {
    let line = run(
        Command::new("node")
            .arg(root.join("tests/process/report_browser.js"))
            .arg(playwright(root))
            .arg(chromium())
            .arg(format!("file://{}", page.display()))
            .arg(screenshot),
        "node report_browser.js",
    );
    serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// The README's session against `port`, then the report page and PDF of its job into `dir`.
fn adult_job_pages(dir: &Path, port: u16) {
    let script = format!(
        r#"
KEY=$({BIN} keys create --tenant hospital-a)
H="Authorization: Bearer $KEY"
API=http://127.0.0.1:{port}
DATASET=$(curl -sS --fail-with-body -H "$H" -H 'content-type: text/csv' \
  --data-binary @tests/data/adult/adult.csv "$API/v1/datasets?name=adult" |
  grep -o '"id":"[^"]*"' | head -n 1 | cut -d '"' -f 4)
JOB=$(sed "1s/{{/{{\"dataset_id\": \"$DATASET\",/" examples/adult-builders.json |
  curl -sS --fail-with-body -H "$H" -H 'content-type: application/json' --data-binary @- "$API/v1/jobs" |
  grep -o '"id":"[^"]*"' | head -n 1 | cut -d '"' -f 4)
until curl -sS --fail-with-body -H "$H" "$API/v1/jobs/$JOB" | grep -q '"done":true'; do sleep 0.5; done
curl -sS --fail-with-body -H "$H" -o page.html "$API/v1/jobs/$JOB/report.html"
curl -sS --fail-with-body -H "$H" -o report.pdf -D pdf.headers "$API/v1/jobs/$JOB/report.pdf"
"#
    );
    let output = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .current_dir(dir)
        .env_remove("DATABASE_URL")
        .env_remove("ANONYMIZER_DATA_DIR")
        .output()
        .expect("run bash");
    assert!(
        output.status.success(),
        "the session failed ({:?})\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_report_page_renders_in_a_browser_without_fetching_anything() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let chromium = chromium();
    let dir = tempfile::tempdir().expect("temporary directory");
    for file in ["tests/data/adult/adult.csv", "examples/adult-builders.json"] {
        let target = dir.path().join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(root.join(file), &target).expect("copy the session's input");
    }
    let server = LocalServer::start_with(
        dir.path(),
        &["--pdf-renderer", chromium.to_str().expect("a UTF-8 path")],
    );
    adult_job_pages(dir.path(), server.port);
    drop(server);

    let page = dir.path().join("page.html");
    let artifacts = root.join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let screenshot = artifacts.join("report-page.png");
    let seen = load(root, &page, &screenshot);

    assert_eq!(seen["consoleMessages"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["requests"], serde_json::json!([]), "{seen}");
    let charts = seen["charts"].as_array().expect("charts");
    assert_eq!(charts.len(), 3, "{seen}");
    for (chart, ink) in charts.iter().zip(seen["chartInk"].as_array().unwrap()) {
        let (width, height) = (
            chart["width"].as_f64().unwrap(),
            chart["height"].as_f64().unwrap(),
        );
        assert!(width >= 600.0 && height >= 150.0, "{chart}");
        assert!(chart["bars"].as_u64().unwrap() >= 6, "{chart}");
        // the screenshot of the chart has the chart's size and is not blank
        assert!(
            (ink["width"].as_f64().unwrap() - width).abs() <= 2.0,
            "{ink} {chart}"
        );
        assert!(
            (ink["height"].as_f64().unwrap() - height).abs() <= 2.0,
            "{ink} {chart}"
        );
        assert!(
            ink["ink"].as_f64().unwrap() > 0.03,
            "blank chart: {ink} {chart}"
        );
    }
    let whole = &seen["pageInk"];
    assert_eq!(whole["width"], 1100, "{whole}");
    assert!(whole["height"].as_u64().unwrap() > 3000, "{whole}");
    assert!(whole["ink"].as_f64().unwrap() > 0.02, "{whole}");
    let png = std::fs::read(&screenshot).expect("the screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // the figures a reader checks
    let adult = std::fs::read(root.join("tests/data/adult/adult.csv")).unwrap();
    let sha256 = sha256_hex(&adult);
    let figures = &seen["figures"];
    assert_eq!(figures["sha256"], sha256.as_str(), "{figures}");
    let k = figures["k"].as_str().unwrap();
    let achieved: u64 = k.trim_start_matches("k = ").parse().expect("k");
    assert!(achieved >= 5, "{k}");
    assert_eq!(
        figures["captions"], 0,
        "a table without a caption: {figures}"
    );
    assert_eq!(figures["lang"], "en");
    assert_eq!(
        figures["headings"].as_array().unwrap().len(),
        8,
        "{figures}"
    );

    // the same page, printed by the server's renderer
    let pdf = std::fs::read(dir.path().join("report.pdf")).expect("the PDF");
    assert!(
        pdf.starts_with(b"%PDF-") && pdf.len() > 10_000,
        "{} bytes",
        pdf.len()
    );
    let headers = std::fs::read_to_string(dir.path().join("pdf.headers")).unwrap();
    assert!(
        headers
            .to_ascii_lowercase()
            .contains("content-type: application/pdf"),
        "{headers}"
    );

    // the check can fail: a page that fetches an image and runs a script is caught
    let html = std::fs::read_to_string(&page).unwrap();
    let tampered = dir.path().join("tampered.html");
    std::fs::write(
        &tampered,
        html.replacen(
            "<main>",
            r#"<main><img src="http://192.0.2.1/pixel.png" alt=""><script>console.error("ran")</script>"#,
            1,
        ),
    )
    .unwrap();
    let caught = load(root, &tampered, &dir.path().join("tampered.png"));
    let complaints = caught["consoleMessages"].as_array().unwrap().len()
        + caught["requests"].as_array().unwrap().len();
    assert!(complaints > 0, "the tampered page went unnoticed: {caught}");
}
