#!/usr/bin/env python3
"""Whole-service jobs on a generated census-like table (called by `scripts/bench service`).

For each run: start the release binary (`serve`, embedded SQLite in a fresh data directory, one worker
slot using every core), upload the table, store its hierarchies, submit the case's spec (its hierarchy
paths replaced by the stored ids), poll the job every 20 ms until it ends, and download the anonymized
CSV. The whole request path (upload + job + download) is timed, the job's submission (POST /v1/jobs)
also on its own, and the server's peak resident memory is
read from /proc (VmHWM) after the download. Prints the median over the runs and each part's median.

usage: bench-service.py BINARY DATA_DIR CASE RUNS
"""

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

KEY = "anz_" + "b" * 40


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(base, method, path, body=None, content_type=None, out=None):
    req = urllib.request.Request(base + path, data=body, method=method)
    req.add_header("Authorization", "Bearer " + KEY)
    if content_type:
        req.add_header("Content-Type", content_type)
    with urllib.request.urlopen(req, timeout=3600) as resp:
        if out is not None:
            shutil.copyfileobj(resp, out, 1 << 20)
            return None
        return json.loads(resp.read() or b"null")


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    return 0


def one_run(binary, data, case):
    work = tempfile.mkdtemp(prefix="bench-service-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, ANONYMIZER_BOOTSTRAP_KEY=KEY)
    env.setdefault("RUST_LOG", "warn")
    server = subprocess.Popen(
        [binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", work,
         "--worker-slots", "1", "--threads-per-job", str(os.cpu_count() or 1),
         "--upload-limit", str(1 << 40), "--job-deadline-secs", "3600"],
        env=env, stdout=subprocess.DEVNULL,
        stderr=open(os.environ["BENCH_SERVICE_LOG"], "w") if os.environ.get("BENCH_SERVICE_LOG") else subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(base + "/readyz", timeout=1)
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.05)
        spec = json.load(open(os.path.join(data, case + ".json")))
        # hierarchies are stored first (not timed: a hospital stores them once for many jobs)
        for column, attribute in spec["attributes"].items():
            source = attribute.get("hierarchy")
            if source and "path" in source:
                with open(os.path.join(data, source["path"]), "rb") as f:
                    stored = request(base, "POST", f"/v1/hierarchies?name={column}", f.read(), "text/csv")
                attribute["hierarchy"] = {"id": stored["id"]}
        delimiter = spec.pop("csv", {}).get("delimiter", ",")
        started = time.monotonic()
        with open(os.path.join(data, "census.csv"), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            req = urllib.request.Request(
                base + f"/v1/datasets?name=census&delimiter={urllib.parse.quote(delimiter)}",
                data=f, method="POST")
            req.add_header("Authorization", "Bearer " + KEY)
            req.add_header("Content-Type", "text/csv")
            req.add_header("Content-Length", str(size))
            with urllib.request.urlopen(req, timeout=3600) as resp:
                dataset = json.loads(resp.read())
        uploaded = time.monotonic()
        spec["dataset_id"] = dataset["id"]
        job = request(base, "POST", "/v1/jobs", json.dumps(spec).encode(), "application/json")
        submitted = time.monotonic()
        while True:
            status = request(base, "GET", f"/v1/jobs/{job['id']}")
            if status["state"] in ("succeeded", "failed", "cancelled"):
                break
            time.sleep(0.02)
        if status["state"] != "succeeded":
            raise SystemExit(f"job {status['state']}: {json.dumps(status.get('error'))}")
        finished = time.monotonic()
        with open(os.path.join(work, "out.csv"), "wb") as out:
            request(base, "GET", f"/v1/jobs/{job['id']}/output", out=out)
        downloaded = time.monotonic()
        peak = peak_rss_mib(server.pid)
        if os.environ.get("BENCH_SERVICE_VERBOSE"):
            print(json.dumps(status.get("progress")), file=sys.stderr)
        return {
            "whole": downloaded - started,
            "upload": uploaded - started,
            "job": finished - uploaded,
            "submit": submitted - uploaded,
            "download": downloaded - finished,
            "peak": peak,
        }
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    binary, data, case, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    results = [one_run(binary, data, case) for _ in range(runs)]
    med = {k: statistics.median(r[k] for r in results) for k in results[0]}
    print(f"median {med['whole']:8.3f} s  peak {max(r['peak'] for r in results):5d} MiB  "
          f"upload {med['upload']:.3f} s, job {med['job']:.3f} s (submission {med['submit']:.3f} s), "
          f"download {med['download']:.3f} s")


if __name__ == "__main__":
    main()
