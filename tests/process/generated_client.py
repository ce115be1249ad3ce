"""A hospital integrator's session, written only against a client generated from openapi.yaml by
openapi-python-client (no hand-written HTTP): upload the bundled Adult table with an Idempotency-Key
(and retry it), submit a job, poll it as Retry-After says, download the output and check its checksum,
stream it through the client's own session, and ask again with If-None-Match.

Run by tests/process/generated_client.rs with PYTHONPATH holding the generated package
`anonymizer_client`, and API, KEY, CSV and SPEC in the environment.
"""

import hashlib
import json
import os
import sys
import time

from anonymizer_client import AuthenticatedClient
from anonymizer_client.api.datasets import create_dataset
from anonymizer_client.api.jobs import create_job, get_job, get_job_output, get_job_result
from anonymizer_client.models import Dataset, Job, JobRequest
from anonymizer_client.types import File


def main() -> None:
    client = AuthenticatedClient(base_url=os.environ["API"], token=os.environ["KEY"], timeout=60.0)
    with open(os.environ["CSV"], "rb") as csv:
        payload = csv.read()

    # an upload and its retry: one dataset
    uploads = []
    for _ in range(2):
        with open(os.environ["CSV"], "rb") as body:
            answer = create_dataset.sync_detailed(
                client=client,
                body=File(payload=body, file_name="adult.csv", mime_type="text/csv"),
                name="adult",
                idempotency_key="etl-adult-2026-11-29",
            )
        assert answer.status_code == 201, (answer.status_code, answer.content[:300])
        assert isinstance(answer.parsed, Dataset), answer.parsed
        uploads.append(answer)
    first, retry = uploads
    assert retry.headers.get("idempotent-replayed") == "true", dict(retry.headers)
    assert first.parsed.id == retry.parsed.id
    dataset = first.parsed
    assert dataset.row_count == 30162, dataset.row_count
    assert dataset.sha256 == hashlib.sha256(payload).hexdigest()

    with open(os.environ["SPEC"], encoding="utf-8") as spec_file:
        spec = json.load(spec_file)
    spec["dataset_id"] = dataset.id
    submitted = create_job.sync_detailed(client=client, body=JobRequest.from_dict(spec))
    assert submitted.status_code == 202, (submitted.status_code, submitted.content[:300])
    job = submitted.parsed
    assert isinstance(job, Job), job
    wait = int(submitted.headers["retry-after"])

    # poll as the service says, until the job is done
    started = time.monotonic()
    while not job.done:
        assert time.monotonic() - started < 120, "the job did not finish"
        time.sleep(wait)
        polled = get_job.sync_detailed(job.id, client=client)
        assert polled.status_code == 200, polled.status_code
        job = polled.parsed
        if not job.done:
            wait = int(polled.headers["retry-after"])
    assert job.state == "succeeded", job.to_dict()

    report = get_job_result.sync_detailed(job.id, client=client)
    assert report.status_code == 200
    assert report.parsed.records == 30162

    # the output through the generated call, its checksum, then 304 for the copy we hold
    output = get_job_output.sync_detailed(job.id, client=client)
    assert output.status_code == 200, output.status_code
    checksum = output.headers["x-checksum-sha256"]
    body = output.parsed.payload.read()
    assert hashlib.sha256(body).hexdigest() == checksum
    # httpx asks for gzip, which makes the tag weak
    assert output.headers["etag"].removeprefix("W/") == f'"{checksum}"', output.headers["etag"]
    again = get_job_output.sync_detailed(job.id, client=client, if_none_match=output.headers["etag"])
    assert again.status_code == 304, again.status_code

    # streamed through the client's own session, from the link the job document gives
    digest = hashlib.sha256()
    streamed = 0
    with client.get_httpx_client().stream("GET", job.links.output) as response:
        assert response.status_code == 200
        for piece in response.iter_bytes():
            digest.update(piece)
            streamed += len(piece)
    assert digest.hexdigest() == checksum and streamed == len(body)
    print(json.dumps({"dataset": dataset.id, "job": job.id, "bytes": streamed, "sha256": checksum}))


if __name__ == "__main__":
    main()
    sys.exit(0)
