//! Integration suite of `src/store`: every case runs against SQLite (a temp file) and PostgreSQL (a fresh
//! database per test on TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres, dropped
//! afterwards). Real databases, no mocks; a missing PostgreSQL fails the suite rather than skipping it.

use crate::database;

use std::collections::HashSet;
use std::future::Future;

use anonymizer::error_code::ErrorCode;
use anonymizer::store::{
    Backend, DatasetMeta, Idempotency, Job, JobFilter, JobState, Page, Store, StoreError,
    CHUNK_SIZE,
};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The progress a worker stores with a succeeded job.
const DONE: &str = r#"{"phase":"done","fraction":1.0}"#;

/// Runs `case` on a migrated store of each backend, then cleans up even when the case panicked.
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::run_sqlite(super::$case).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    super::run_postgres(super::$case).await;
                }
            }
        )*
    };
}

on_both_backends!(
    migrations_are_idempotent,
    api_keys_authenticate_until_revoked,
    upload_commits_or_leaves_nothing,
    staged_uploads_hold_no_lock_and_stale_ones_are_swept,
    chunked_round_trip_of_3_mib,
    tenants_are_isolated,
    lists_paginate_by_cursor,
    delete_dataset_cascades,
    idempotency_keys,
    concurrent_claimers_get_distinct_jobs,
    expired_lease_is_reclaimed_and_fenced,
    cancel_queued_and_running_jobs,
    a_cancel_before_the_terminal_write_wins,
    an_idempotency_key_is_published_once,
    complete_fail_and_release,
    retention_purges_old_data_but_not_live_jobs,
    imported_keys_authenticate_once,
    claims_are_fair_across_tenants,
    a_tenant_at_its_cap_waits_while_others_run,
    concurrent_claims_over_tenants_take_every_job_once,
    pseudonym_keys_are_created_once_and_rotated_one_at_a_time,
);

/// Runs `case` on a migrated store of each backend whose pool has a single connection.
macro_rules! on_both_backends_with_one_connection {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::database::with_store(anonymizer::store::Backend::Sqlite, 1, super::$case)
                        .await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    super::database::with_store(anonymizer::store::Backend::Postgres, 1, super::$case)
                        .await;
                }
            }
        )*
    };
}

on_both_backends_with_one_connection!(
    a_claim_that_waited_for_a_connection_gets_its_whole_lease,
    ping_answers_while_every_pooled_connection_is_busy,
);

async fn run_sqlite<F, Fut>(case: F)
where
    F: FnOnce(Store) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    database::with_store(Backend::Sqlite, 8, case).await
}

async fn run_postgres<F, Fut>(case: F)
where
    F: FnOnce(Store) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    database::with_store(Backend::Postgres, 10, case).await
}

// ---------------------------------------------------------------------------------------------------
// fixtures

async fn tenant(store: &Store, name: &str) -> Uuid {
    store
        .create_api_key(name)
        .await
        .expect("create key")
        .1
        .tenant_id
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Deterministic pseudo-random bytes (xorshift), so chunk boundaries see varied data.
fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

fn meta(bytes: &[u8]) -> DatasetMeta {
    DatasetMeta {
        byte_size: bytes.len() as u64,
        sha256: sha256_hex(bytes),
        row_count: 2,
        columns_json: r#"[{"name":"age"}]"#.to_string(),
        delimiter: ",".to_string(),
    }
}

async fn dataset(store: &Store, tenant: Uuid, name: &str, bytes: &[u8]) -> Uuid {
    let mut upload = store.begin_dataset(tenant, name).await.expect("begin");
    upload.write(bytes).await.expect("write");
    upload.finish(meta(bytes)).await.expect("finish").id
}

async fn job(store: &Store, tenant: Uuid, dataset: Uuid) -> Job {
    store
        .create_job(tenant, dataset, r#"{"k":5}"#, None, "hash")
        .await
        .expect("create job")
        .0
}

async fn read_dataset(store: &Store, id: Uuid) -> Vec<u8> {
    let mut out = Vec::new();
    let mut seq = 0;
    while let Some(chunk) = store.dataset_chunk(id, seq).await.expect("chunk") {
        assert!(chunk.len() <= CHUNK_SIZE);
        out.extend_from_slice(&chunk);
        seq += 1;
    }
    out
}

async fn read_output(store: &Store, id: Uuid) -> Vec<u8> {
    let mut out = Vec::new();
    let mut seq = 0;
    while let Some(chunk) = store.job_output_chunk(id, seq).await.expect("chunk") {
        assert!(chunk.len() <= CHUNK_SIZE);
        out.extend_from_slice(&chunk);
        seq += 1;
    }
    out
}

fn assert_not_found<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::NotFound)),
        "expected NotFound, got {result:?}"
    );
}

fn assert_lease_lost<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    assert!(
        matches!(result, Err(StoreError::LeaseLost)),
        "expected LeaseLost, got {result:?}"
    );
}

// ---------------------------------------------------------------------------------------------------
// cases

async fn migrations_are_idempotent(store: Store) {
    store.migrate().await.expect("second run");
    store.migrate().await.expect("third run");
    store.ping().await.expect("ping");
    let t = tenant(&store, "acme").await;
    let id = dataset(&store, t, "d", b"a\n1\n").await;
    store.migrate().await.expect("run with data");
    assert_eq!(store.get_dataset(t, id).await.expect("kept").byte_size, 4);
}

async fn api_keys_authenticate_until_revoked(store: Store) {
    let (key, record) = store.create_api_key("acme").await.expect("create");
    assert!(key.starts_with("anz_"));
    assert_eq!(key.len(), 4 + 64);
    assert!(key[4..].bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(record.prefix, key[4..12]);
    assert_eq!(record.tenant_name, "acme");
    assert_eq!(record.revoked_at, None);

    let principal = store
        .authenticate(&key)
        .await
        .expect("auth")
        .expect("valid");
    assert_eq!(principal.tenant_id, record.tenant_id);
    assert_eq!(principal.key_id, record.id);

    let (key2, record2) = store.create_api_key("acme").await.expect("second key");
    assert_ne!(key, key2);
    assert_eq!(record2.tenant_id, record.tenant_id, "same tenant reused");
    let (_, other) = store.create_api_key("globex").await.expect("other tenant");
    assert_ne!(other.tenant_id, record.tenant_id);

    assert_eq!(store.authenticate("anz_nope").await.expect("auth"), None);
    assert_eq!(store.authenticate("").await.expect("auth"), None);
    let mut tampered = key.clone();
    tampered.pop();
    tampered.push(if key.ends_with('0') { '1' } else { '0' });
    assert_eq!(store.authenticate(&tampered).await.expect("auth"), None);

    let listed = store.list_api_keys().await.expect("list");
    assert_eq!(listed.len(), 3);
    assert!(listed
        .iter()
        .all(|k| !k.prefix.is_empty() && k.revoked_at.is_none()));

    store.revoke_api_key(record.id).await.expect("revoke");
    assert_eq!(store.authenticate(&key).await.expect("auth"), None);
    assert!(store.authenticate(&key2).await.expect("auth").is_some());
    store
        .revoke_api_key(record.id)
        .await
        .expect("revoke again is fine");
    let listed = store.list_api_keys().await.expect("list");
    let revoked = listed.iter().find(|k| k.id == record.id).expect("listed");
    assert!(revoked.revoked_at.is_some());
    assert_not_found(store.revoke_api_key(Uuid::new_v4()).await);
}

async fn upload_commits_or_leaves_nothing(store: Store) {
    let t = tenant(&store, "acme").await;
    let body = payload(CHUNK_SIZE + 10, 1);

    // commit
    let mut upload = store.begin_dataset(t, "adult.csv").await.expect("begin");
    upload.write(&body).await.expect("write");
    assert_eq!(upload.bytes_written(), body.len() as u64);
    let committed = upload.finish(meta(&body)).await.expect("finish");
    let stored = store.get_dataset(t, committed.id).await.expect("get");
    assert_eq!(stored, committed);
    assert_eq!(stored.name, "adult.csv");
    assert_eq!(stored.byte_size, body.len() as u64);
    assert_eq!(stored.sha256, sha256_hex(&body));
    assert_eq!(stored.row_count, 2);
    assert_eq!(stored.chunk_count, 2);
    assert_eq!(store.chunk_count(committed.id).await.expect("count"), 2);

    // abort after two full chunks
    let mut upload = store.begin_dataset(t, "aborted").await.expect("begin");
    let aborted = upload.id();
    upload
        .write(&payload(2 * CHUNK_SIZE + 5, 2))
        .await
        .expect("write");
    upload.abort().await.expect("abort");
    assert_not_found(store.get_dataset(t, aborted).await);
    assert_eq!(store.chunk_count(aborted).await.expect("count"), 0);
    assert_eq!(store.dataset_chunk(aborted, 0).await.expect("chunk"), None);

    // dropped without finish (a client that disconnects)
    let mut upload = store.begin_dataset(t, "dropped").await.expect("begin");
    let dropped = upload.id();
    upload.write(&payload(CHUNK_SIZE, 3)).await.expect("write");
    drop(upload);
    assert_not_found(store.get_dataset(t, dropped).await);
    assert_eq!(store.chunk_count(dropped).await.expect("count"), 0);

    // metadata that does not describe the bytes is refused and rolled back
    let mut upload = store.begin_dataset(t, "lying").await.expect("begin");
    let lying = upload.id();
    upload.write(b"abc").await.expect("write");
    let wrong = DatasetMeta {
        byte_size: 4,
        ..meta(b"abc")
    };
    assert!(matches!(
        upload.finish(wrong).await,
        Err(StoreError::Conflict(..))
    ));
    assert_not_found(store.get_dataset(t, lying).await);
    assert_eq!(store.chunk_count(lying).await.expect("count"), 0);

    // an empty upload has no chunks
    let empty = dataset(&store, t, "empty", b"").await;
    assert_eq!(
        store.get_dataset(t, empty).await.expect("get").chunk_count,
        0
    );

    let page = store.list_datasets(t, None, 100).await.expect("list");
    let ids: HashSet<Uuid> = page.items.iter().map(|d| d.id).collect();
    assert_eq!(ids, HashSet::from([committed.id, empty]));
}

async fn staged_uploads_hold_no_lock_and_stale_ones_are_swept(store: Store) {
    let t = tenant(&store, "acme").await;
    // an upload in progress with two chunks committed...
    let mut slow = store.begin_dataset(t, "slow").await.expect("begin");
    let slow_id = slow.id();
    slow.write(&payload(2 * CHUNK_SIZE + 7, 4))
        .await
        .expect("write");
    // ...holds no lock: other writes go through at once, even on SQLite's single writer
    let started = std::time::Instant::now();
    let other = dataset(&store, t, "other", b"age\n1\n2\n").await;
    job(&store, t, other).await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "writes waited {:?} behind an open upload",
        started.elapsed()
    );
    // staged rows are invisible
    assert_not_found(store.get_dataset(t, slow_id).await);
    assert_eq!(store.chunk_count(slow_id).await.expect("count"), 0);
    let page = store.list_datasets(t, None, 100).await.expect("list");
    assert_eq!(page.items.len(), 1);
    assert_not_found(store.delete_dataset(t, slow_id).await);

    // a sweep with a cutoff before the upload's last write leaves it alone
    assert_eq!(
        store
            .purge_stale_uploads(unix_ms() - 60_000)
            .await
            .expect("purge"),
        0
    );
    // one after it deletes the staged rows (and never a published dataset)...
    assert_eq!(
        store
            .purge_stale_uploads(unix_ms() + 1_000)
            .await
            .expect("purge"),
        1
    );
    store
        .get_dataset(t, other)
        .await
        .expect("published datasets stay");
    // ...and the upload, should its client come back, cannot be published any more
    slow.write(b"late").await.ok();
    assert!(slow
        .finish_as_written(1, "[]".into(), ",".into())
        .await
        .is_err());
    assert_not_found(store.get_dataset(t, slow_id).await);
}

async fn chunked_round_trip_of_3_mib(store: Store) {
    let t = tenant(&store, "acme").await;
    let body = payload(3 * CHUNK_SIZE + 123, 7);
    let mut upload = store.begin_dataset(t, "big").await.expect("begin");
    // odd-sized writes cross chunk boundaries; a single large write goes through the copy-free path
    let (head, tail) = body.split_at(1_000_003);
    for piece in head.chunks(65_537) {
        upload.write(piece).await.expect("write");
    }
    upload.write(tail).await.expect("write");
    let stored = upload.finish(meta(&body)).await.expect("finish");
    assert_eq!(stored.chunk_count, 4);
    for seq in 0..3 {
        let chunk = store.dataset_chunk(stored.id, seq).await.expect("chunk");
        assert_eq!(
            chunk.map(|c| c.len()),
            Some(CHUNK_SIZE),
            "chunk {seq} is full"
        );
    }
    let back = read_dataset(&store, stored.id).await;
    assert_eq!(back.len(), body.len());
    assert_eq!(sha256_hex(&back), sha256_hex(&body));
    assert_eq!(
        store.get_dataset(t, stored.id).await.expect("get").sha256,
        sha256_hex(&body)
    );
}

async fn tenants_are_isolated(store: Store) {
    let a = tenant(&store, "a").await;
    let b = tenant(&store, "b").await;
    let data = dataset(&store, a, "d", b"x\n1\n").await;
    let hierarchy = store
        .create_hierarchy(a, "age", r#"[["1","*"]]"#)
        .await
        .expect("hierarchy");
    let job = job(&store, a, data).await;

    assert!(store.get_dataset(a, data).await.is_ok());
    assert_not_found(store.get_dataset(b, data).await);
    assert_not_found(store.get_dataset(b, Uuid::new_v4()).await);
    assert!(store
        .list_datasets(b, None, 10)
        .await
        .expect("list")
        .items
        .is_empty());
    assert_not_found(store.delete_dataset(b, data).await);

    assert_eq!(
        store
            .get_hierarchy(a, hierarchy)
            .await
            .expect("own")
            .content_json,
        r#"[["1","*"]]"#
    );
    assert_not_found(store.get_hierarchy(b, hierarchy).await);
    assert_not_found(store.get_hierarchy(a, Uuid::new_v4()).await);

    assert!(store.get_job(a, job.id).await.is_ok());
    assert_not_found(store.get_job(b, job.id).await);
    assert_not_found(store.request_cancel(b, job.id).await);
    assert_not_found(store.job_result(b, job.id).await);
    assert_not_found(store.create_job(b, data, "{}", None, "h").await);
    assert!(store
        .list_jobs(b, JobFilter::default(), None, 10)
        .await
        .expect("list")
        .items
        .is_empty());

    // nothing of b's attempts changed a's rows
    assert_eq!(
        store.get_job(a, job.id).await.expect("job").state,
        JobState::Queued
    );
    assert!(store.get_dataset(a, data).await.is_ok());
}

async fn collect_pages<T, F, Fut>(limit: usize, mut fetch: F) -> Vec<T>
where
    F: FnMut(Option<anonymizer::store::Cursor>) -> Fut,
    Fut: Future<Output = Page<T>>,
{
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = fetch(cursor).await;
        assert!(page.items.len() <= limit);
        all.extend(page.items);
        match page.next_cursor {
            Some(next) => {
                // the text form round-trips
                let parsed: anonymizer::store::Cursor =
                    next.to_string().parse().expect("cursor parses");
                assert_eq!(parsed, next);
                cursor = Some(parsed);
            }
            None => return all,
        }
    }
}

async fn lists_paginate_by_cursor(store: Store) {
    let t = tenant(&store, "acme").await;
    let other = tenant(&store, "other").await;
    let mut datasets = Vec::new();
    for i in 0..5 {
        datasets.push(dataset(&store, t, &format!("d{i}"), b"a\n1\n").await);
    }
    dataset(&store, other, "foreign", b"a\n").await;

    let listed = collect_pages(2, |cursor| {
        let store = store.clone();
        async move { store.list_datasets(t, cursor, 2).await.expect("page") }
    })
    .await;
    assert_eq!(listed.len(), 5);
    let ids: Vec<Uuid> = listed.iter().map(|d| d.id).collect();
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 5, "no duplicates");
    assert_eq!(
        ids.iter().collect::<HashSet<_>>(),
        datasets.iter().collect::<HashSet<_>>()
    );
    for pair in listed.windows(2) {
        assert!(
            (pair[0].created_at, pair[0].id) > (pair[1].created_at, pair[1].id),
            "newest first"
        );
    }
    assert!("garbage".parse::<anonymizer::store::Cursor>().is_err());

    // jobs: 3 on d0, 4 on d1; one of d1's cancelled
    let mut on_d0 = HashSet::new();
    for _ in 0..3 {
        on_d0.insert(job(&store, t, datasets[0]).await.id);
    }
    let mut on_d1 = Vec::new();
    for _ in 0..4 {
        on_d1.push(job(&store, t, datasets[1]).await.id);
    }
    store.request_cancel(t, on_d1[0]).await.expect("cancel");

    let all = collect_pages(3, |cursor| {
        let store = store.clone();
        async move {
            store
                .list_jobs(t, JobFilter::default(), cursor, 3)
                .await
                .expect("page")
        }
    })
    .await;
    assert_eq!(all.len(), 7);
    assert_eq!(all.iter().map(|j| j.id).collect::<HashSet<_>>().len(), 7);

    let d0 = collect_pages(2, |cursor| {
        let store = store.clone();
        let filter = JobFilter {
            dataset_id: Some(datasets[0]),
            ..JobFilter::default()
        };
        async move { store.list_jobs(t, filter, cursor, 2).await.expect("page") }
    })
    .await;
    assert_eq!(d0.iter().map(|j| j.id).collect::<HashSet<_>>(), on_d0);

    let queued_d1 = collect_pages(1, |cursor| {
        let store = store.clone();
        let filter = JobFilter {
            state: Some(JobState::Queued),
            dataset_id: Some(datasets[1]),
            ..JobFilter::default()
        };
        async move { store.list_jobs(t, filter, cursor, 1).await.expect("page") }
    })
    .await;
    assert_eq!(
        queued_d1.iter().map(|j| j.id).collect::<HashSet<_>>(),
        on_d1[1..].iter().copied().collect::<HashSet<_>>()
    );
    let cancelled = store
        .list_jobs(
            t,
            JobFilter {
                state: Some(JobState::Cancelled),
                dataset_id: None,
                ..JobFilter::default()
            },
            None,
            10,
        )
        .await
        .expect("list");
    assert_eq!(cancelled.items.len(), 1);
    assert_eq!(cancelled.items[0].id, on_d1[0]);
    assert!(cancelled.next_cursor.is_none());

    let counts = store.count_jobs_by_state().await.expect("counts");
    assert!(counts.contains(&(JobState::Queued, 6)));
    assert!(counts.contains(&(JobState::Cancelled, 1)));
    assert!(counts.contains(&(JobState::Running, 0)));
}

async fn delete_dataset_cascades(store: Store) {
    let t = tenant(&store, "acme").await;
    let doomed = dataset(&store, t, "doomed", &payload(CHUNK_SIZE + 1, 4)).await;
    let kept = dataset(&store, t, "kept", b"a\n1\n").await;
    let done = job(&store, t, doomed).await;
    let claimed = store
        .claim_next("w", 60_000)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(claimed.id, done.id);
    store
        .complete_job(done.id, claimed.attempt, "{}", DONE, [b"out".as_slice()])
        .await
        .expect("complete");
    let queued = job(&store, t, doomed).await;
    let kept_job = job(&store, t, kept).await;
    assert_eq!(read_output(&store, done.id).await, b"out");

    store.delete_dataset(t, doomed).await.expect("delete");
    assert_not_found(store.get_dataset(t, doomed).await);
    assert_eq!(store.chunk_count(doomed).await.expect("count"), 0);
    assert_eq!(store.dataset_chunk(doomed, 0).await.expect("chunk"), None);
    assert_not_found(store.get_job(t, done.id).await);
    assert_not_found(store.get_job(t, queued.id).await);
    assert_not_found(store.job_result(t, done.id).await);
    assert_eq!(
        store.job_output_chunk(done.id, 0).await.expect("chunk"),
        None
    );
    assert_not_found(store.delete_dataset(t, doomed).await);

    // the other dataset and its job are untouched
    assert_eq!(read_dataset(&store, kept).await, b"a\n1\n");
    assert_eq!(
        store.get_job(t, kept_job.id).await.expect("job").state,
        JobState::Queued
    );
}

async fn idempotency_keys(store: Store) {
    let a = tenant(&store, "a").await;
    let b = tenant(&store, "b").await;
    let data_a = dataset(&store, a, "d", b"x\n").await;
    let data_b = dataset(&store, b, "d", b"x\n").await;

    let (first, created) = store
        .create_job(a, data_a, r#"{"k":2}"#, Some("key-1"), "h1")
        .await
        .expect("create");
    assert!(created);
    assert_eq!(first.state, JobState::Queued);
    assert_eq!(first.idempotency_key.as_deref(), Some("key-1"));
    let (again, created) = store
        .create_job(a, data_a, r#"{"k":2}"#, Some("key-1"), "h1")
        .await
        .expect("repeat");
    assert!(!created);
    assert_eq!(again, first);

    let conflict = store
        .create_job(a, data_a, r#"{"k":3}"#, Some("key-1"), "h2")
        .await;
    assert!(
        matches!(conflict, Err(StoreError::Conflict(..))),
        "{conflict:?}"
    );

    // keys are per tenant; no key means a new job each time
    let (theirs, created) = store
        .create_job(b, data_b, r#"{"k":2}"#, Some("key-1"), "h1")
        .await
        .expect("other tenant");
    assert!(created);
    assert_ne!(theirs.id, first.id);
    let (x, _) = store
        .create_job(a, data_a, "{}", None, "h1")
        .await
        .expect("x");
    let (y, _) = store
        .create_job(a, data_a, "{}", None, "h1")
        .await
        .expect("y");
    assert_ne!(x.id, y.id);

    // concurrent repeats of one key create one job
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .create_job(a, data_a, "{}", Some("key-2"), "h3")
                .await
                .expect("create")
        }));
    }
    let mut ids = HashSet::new();
    let mut creations = 0;
    for task in tasks {
        let (job, created) = task.await.expect("task");
        ids.insert(job.id);
        creations += usize::from(created);
    }
    assert_eq!(ids.len(), 1);
    assert_eq!(creations, 1);
}

async fn concurrent_claimers_get_distinct_jobs(store: Store) {
    let t = tenant(&store, "acme").await;
    let data = dataset(&store, t, "d", b"x\n").await;
    let mut created = HashSet::new();
    for _ in 0..20 {
        created.insert(job(&store, t, data).await.id);
    }
    let mut workers = Vec::new();
    for w in 0..8 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(claimed) = store
                .claim_next(&format!("worker-{w}"), 60_000)
                .await
                .expect("claim")
            {
                assert_eq!(claimed.attempt, 1);
                mine.push(claimed.id);
            }
            mine
        }));
    }
    let mut claimed = Vec::new();
    for worker in workers {
        claimed.extend(worker.await.expect("worker"));
    }
    assert_eq!(claimed.len(), 20, "every job claimed once");
    assert_eq!(claimed.iter().copied().collect::<HashSet<_>>(), created);
    assert_eq!(store.claim_next("late", 60_000).await.expect("claim"), None);
    let running = store
        .list_jobs(
            t,
            JobFilter {
                state: Some(JobState::Running),
                dataset_id: None,
                ..JobFilter::default()
            },
            None,
            100,
        )
        .await
        .expect("list");
    assert_eq!(running.items.len(), 20);
    assert!(running
        .items
        .iter()
        .all(|j| j.lease_owner.is_some() && j.started_at.is_some()));
}

async fn expired_lease_is_reclaimed_and_fenced(store: Store) {
    let t = tenant(&store, "acme").await;
    let data = dataset(&store, t, "d", b"x\n").await;
    let job = job(&store, t, data).await;

    // a zero lease expires at once: the first worker is presumed dead
    let first = store
        .claim_next("dead", 0)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!((first.id, first.attempt), (job.id, 1));
    assert_eq!(first.tenant, t);
    assert_eq!(first.dataset_id, data);
    assert_eq!(first.spec_json, job.spec_json);
    let second = store
        .claim_next("alive", 60_000)
        .await
        .expect("claim")
        .expect("reclaimed");
    assert_eq!((second.id, second.attempt), (job.id, 2));
    assert_eq!(
        store.claim_next("third", 60_000).await.expect("claim"),
        None,
        "lease is live"
    );

    // the stale attempt is fenced out of every write, and writes nothing
    assert_lease_lost(
        store
            .record_heartbeat(job.id, 1, r#"{"done":1}"#, 60_000)
            .await,
    );
    let big = payload(CHUNK_SIZE + 100, 9);
    assert_lease_lost(
        store
            .complete_job(job.id, 1, r#"{"stale":true}"#, DONE, [&big])
            .await,
    );
    assert_lease_lost(store.fail_job(job.id, 1, "internal_error", "stale").await);
    assert_lease_lost(store.mark_cancelled(job.id, 1).await);
    assert_lease_lost(store.release_job(job.id, 1).await);
    assert_eq!(
        store.job_output_chunk(job.id, 0).await.expect("chunk"),
        None
    );
    let now = store.get_job(t, job.id).await.expect("job");
    assert_eq!(now.state, JobState::Running);
    assert_eq!(now.attempt, 2);
    assert_eq!(now.lease_owner.as_deref(), Some("alive"));
    assert_eq!(now.progress_json, None);

    // the live attempt proceeds
    let ack = store
        .record_heartbeat(job.id, 2, r#"{"done":1}"#, 60_000)
        .await
        .expect("heartbeat");
    assert!(!ack.cancel_requested);
    store
        .complete_job(job.id, 2, r#"{"ok":true}"#, DONE, [b"a,b\n".as_slice()])
        .await
        .expect("complete");
    assert_eq!(
        store
            .job_result(t, job.id)
            .await
            .expect("result")
            .report_json,
        r#"{"ok":true}"#
    );
    assert_eq!(read_output(&store, job.id).await, b"a,b\n");
    // a finished job is never reclaimed, and its attempt can no longer write
    assert_eq!(store.claim_next("late", 0).await.expect("claim"), None);
    assert_lease_lost(store.record_heartbeat(job.id, 2, "{}", 60_000).await);
    assert_lease_lost(
        store
            .complete_job(job.id, 2, "{}", DONE, [b"x".as_slice()])
            .await,
    );
}

async fn cancel_queued_and_running_jobs(store: Store) {
    let t = tenant(&store, "acme").await;
    let data = dataset(&store, t, "d", b"x\n").await;

    // queued: cancelled at once, never claimed
    let queued = job(&store, t, data).await;
    let after = store.request_cancel(t, queued.id).await.expect("cancel");
    assert_eq!(after.state, JobState::Cancelled);
    assert!(after.finished_at.is_some());
    assert_eq!(store.claim_next("w", 60_000).await.expect("claim"), None);

    // running: flagged, seen by the heartbeat, then marked cancelled by the worker
    let running = job(&store, t, data).await;
    let claimed = store
        .claim_next("w", 60_000)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(claimed.id, running.id);
    let after = store.request_cancel(t, running.id).await.expect("cancel");
    assert_eq!(after.state, JobState::Running);
    assert!(after.cancel_requested);
    let ack = store
        .record_heartbeat(running.id, claimed.attempt, "{}", 60_000)
        .await
        .expect("heartbeat");
    assert!(ack.cancel_requested);
    store
        .mark_cancelled(running.id, claimed.attempt)
        .await
        .expect("mark cancelled");
    let after = store.get_job(t, running.id).await.expect("job");
    assert_eq!(after.state, JobState::Cancelled);
    assert!(after.finished_at.is_some());
    assert_eq!(after.lease_owner, None);
    assert_lease_lost(store.mark_cancelled(running.id, claimed.attempt).await);

    // a finished job is returned unchanged
    let again = store.request_cancel(t, running.id).await.expect("cancel");
    assert_eq!(again.state, JobState::Cancelled);

    // running with cancel requested and its worker dead: the reclaim cancels it instead of rerunning
    let orphan = job(&store, t, data).await;
    let claimed = store
        .claim_next("dead", 0)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(claimed.id, orphan.id);
    store.request_cancel(t, orphan.id).await.expect("cancel");
    assert_eq!(store.claim_next("w", 60_000).await.expect("claim"), None);
    assert_eq!(
        store.get_job(t, orphan.id).await.expect("job").state,
        JobState::Cancelled
    );
    assert!(matches!(
        store.job_result(t, orphan.id).await,
        Err(StoreError::Conflict(..))
    ));
}

/// A cancel that arrives after the worker's last heartbeat still wins: the success or failure write
/// finds it (CancelRequested, nothing written) and the attempt marks the job cancelled.
async fn a_cancel_before_the_terminal_write_wins(store: Store) {
    let t = tenant(&store, "acme").await;
    let data = dataset(&store, t, "d", b"x\n").await;
    let running = job(&store, t, data).await;
    let claimed = store
        .claim_next("w", 60_000)
        .await
        .expect("claim")
        .expect("job");
    store.request_cancel(t, running.id).await.expect("cancel");
    assert!(matches!(
        store
            .complete_job(running.id, claimed.attempt, "{}", DONE, [b"a\n".as_slice()])
            .await,
        Err(StoreError::CancelRequested)
    ));
    assert!(matches!(
        store
            .fail_job(running.id, claimed.attempt, "internal_error", "x")
            .await,
        Err(StoreError::CancelRequested)
    ));
    let still = store.get_job(t, running.id).await.expect("job");
    assert_eq!(still.state, JobState::Running);
    assert_eq!(read_output(&store, running.id).await, b"");
    store
        .mark_cancelled(running.id, claimed.attempt)
        .await
        .expect("mark cancelled");
    assert_eq!(
        store.get_job(t, running.id).await.expect("job").state,
        JobState::Cancelled
    );
    // once cancelled, the attempt's late write is a lost lease, not a cancel
    assert_lease_lost(
        store
            .complete_job(running.id, claimed.attempt, "{}", DONE, [b"a\n".as_slice()])
            .await,
    );
}

/// Two uploads under one Idempotency-Key: the first published keeps the key, the second is refused
/// with `idempotency_conflict` and leaves nothing staged; the key is found with its fingerprint. The same
/// for hierarchies; another tenant's identical key is its own.
async fn an_idempotency_key_is_published_once(store: Store) {
    let t = tenant(&store, "acme").await;
    let keyed = Idempotency {
        key: "etl-1".into(),
        request_hash: "h1".into(),
    };
    let bytes = b"a\n1\n";
    let mut first = store.begin_dataset(t, "one").await.expect("begin");
    let mut second = store.begin_dataset(t, "two").await.expect("begin");
    let loser = second.id();
    for upload in [&mut first, &mut second] {
        upload.write(bytes).await.expect("write");
        upload.set_idempotency(keyed.clone());
    }
    let winner = first.finish(meta(bytes)).await.expect("publish").id;
    assert!(matches!(
        second.finish(meta(bytes)).await,
        Err(StoreError::Conflict(ErrorCode::IdempotencyConflict, _))
    ));
    assert_not_found(store.get_dataset(t, loser).await);
    assert_eq!(store.chunk_count(loser).await.expect("chunks"), 0);
    assert_eq!(store.purge_stale_uploads(i64::MAX).await.expect("purge"), 0);
    let found = store
        .dataset_by_idempotency_key(t, "etl-1")
        .await
        .expect("lookup")
        .expect("the key is held");
    assert_eq!(found.stored.id, winner);
    assert_eq!(found.clone().replay("h1").map(|d| d.id), Some(winner));
    assert_eq!(found.replay("h2"), None);
    let other = tenant(&store, "other").await;
    assert!(store
        .dataset_by_idempotency_key(other, "etl-1")
        .await
        .expect("lookup")
        .is_none());

    let stored = store
        .create_hierarchy_with_id(t, Uuid::new_v4(), "h", "{}", None, Some(&keyed))
        .await
        .expect("first hierarchy");
    assert!(matches!(
        store
            .create_hierarchy_with_id(t, Uuid::new_v4(), "h", "{}", None, Some(&keyed))
            .await,
        Err(StoreError::Conflict(ErrorCode::IdempotencyConflict, _))
    ));
    let found = store
        .hierarchy_by_idempotency_key(t, "etl-1")
        .await
        .expect("lookup")
        .expect("the key is held");
    assert_eq!(found.stored.id, stored.id);
    store
        .create_hierarchy_with_id(other, Uuid::new_v4(), "h", "{}", None, Some(&keyed))
        .await
        .expect("another tenant's key");
}

async fn complete_fail_and_release(store: Store) {
    let t = tenant(&store, "acme").await;
    let data = dataset(&store, t, "d", b"x\n").await;
    // jobs are created one at a time: within one millisecond the claim order is by (random) id

    // complete: report, output and state together
    let ok = job(&store, t, data).await;
    let claimed = store
        .claim_next("w", 60_000)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(claimed.id, ok.id);
    assert!(matches!(
        store.job_result(t, ok.id).await,
        Err(StoreError::Conflict(..))
    ));
    store
        .record_heartbeat(
            ok.id,
            claimed.attempt,
            r#"{"phase":"search","fraction":0.5}"#,
            60_000,
        )
        .await
        .expect("heartbeat");
    assert_eq!(
        store
            .get_job(t, ok.id)
            .await
            .expect("job")
            .progress_json
            .as_deref(),
        Some(r#"{"phase":"search","fraction":0.5}"#)
    );
    let output = payload(2 * CHUNK_SIZE + CHUNK_SIZE / 2, 11);
    store
        .complete_job(
            ok.id,
            claimed.attempt,
            r#"{"k":5}"#,
            DONE,
            output.chunks(300_001).collect::<Vec<_>>(),
        )
        .await
        .expect("complete");
    let result = store.job_result(t, ok.id).await.expect("result");
    assert_eq!(result.report_json, r#"{"k":5}"#);
    assert_eq!(result.output_chunk_count, 3);
    assert_eq!(result.output_byte_size, output.len() as u64);
    assert_eq!(result.output_sha256, sha256_hex(&output));
    assert_eq!(
        sha256_hex(&read_output(&store, ok.id).await),
        sha256_hex(&output)
    );
    let done = store.get_job(t, ok.id).await.expect("job");
    assert_eq!(done.state, JobState::Succeeded);
    assert!(done.finished_at.is_some() && done.started_at.is_some());
    assert_eq!(done.lease_owner, None);

    // fail: code and message kept, no result
    let bad = job(&store, t, data).await;
    let claimed = store
        .claim_next("w", 60_000)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(claimed.id, bad.id);
    store
        .fail_job(
            bad.id,
            claimed.attempt,
            "invalid_spec",
            "k exceeds the row count",
        )
        .await
        .expect("fail");
    let failed = store.get_job(t, bad.id).await.expect("job");
    assert_eq!(failed.state, JobState::Failed);
    assert_eq!(failed.failure_code.as_deref(), Some("invalid_spec"));
    assert_eq!(
        failed.failure_message.as_deref(),
        Some("k exceeds the row count")
    );
    assert!(matches!(
        store.job_result(t, bad.id).await,
        Err(StoreError::Conflict(..))
    ));

    // release: back in the queue, claimed again with the next attempt
    let back = job(&store, t, data).await;
    let claimed = store
        .claim_next("w", 60_000)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(claimed.id, back.id);
    store
        .release_job(back.id, claimed.attempt)
        .await
        .expect("release");
    let released = store.get_job(t, back.id).await.expect("job");
    assert_eq!(released.state, JobState::Queued);
    assert_eq!(released.lease_owner, None);
    assert_eq!(released.lease_expires_at, None);
    assert_lease_lost(
        store
            .record_heartbeat(back.id, claimed.attempt, "{}", 60_000)
            .await,
    );
    let again = store
        .claim_next("w2", 60_000)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!((again.id, again.attempt), (back.id, claimed.attempt + 1));
    assert_eq!(store.claim_next("w3", 60_000).await.expect("claim"), None);
}

async fn retention_purges_old_data_but_not_live_jobs(store: Store) {
    let t = tenant(&store, "acme").await;
    let finished_data = dataset(&store, t, "finished", b"a\n1\n").await;
    let live_data = dataset(&store, t, "live", b"a\n2\n").await;
    let done = job(&store, t, finished_data).await;
    let claimed = store
        .claim_next("w", 60_000)
        .await
        .expect("claim")
        .expect("job");
    assert_eq!(claimed.id, done.id);
    store
        .complete_job(done.id, claimed.attempt, "{}", DONE, [b"out".as_slice()])
        .await
        .expect("complete");
    let live = job(&store, t, live_data).await;

    // a cutoff in the past deletes nothing, nor does a sweep keeping an hour
    let purged = store.purge_expired(0).await.expect("purge");
    assert_eq!(purged, anonymizer::store::Purged::default());
    let swept = anonymizer::retention::sweep(&store, std::time::Duration::from_secs(3600))
        .await
        .expect("sweep");
    assert_eq!(swept, anonymizer::store::Purged::default());

    // a cutoff in the future: the finished dataset goes with its job; the live one stays
    let purged = store.purge_expired(i64::MAX).await.expect("purge");
    assert_eq!(purged.datasets, 1);
    assert_not_found(store.get_dataset(t, finished_data).await);
    assert_not_found(store.get_job(t, done.id).await);
    assert_eq!(
        store.job_output_chunk(done.id, 0).await.expect("chunk"),
        None
    );
    assert_eq!(read_dataset(&store, live_data).await, b"a\n2\n");
    assert_eq!(
        store.get_job(t, live.id).await.expect("job").state,
        JobState::Queued
    );
}

async fn imported_keys_authenticate_once(store: Store) {
    let key = "anz_operator-chosen-secret-0123456789abcdef";
    let record = store.import_api_key("default", key).await.expect("import");
    let principal = store.authenticate(key).await.expect("auth").expect("valid");
    assert_eq!(principal.tenant_id, record.tenant_id);
    assert!(matches!(
        store.import_api_key("default", key).await,
        Err(StoreError::Conflict(..))
    ));
    for weak in [
        "anz_short",
        "no-prefix-0123456789abcdef0123456789abcdef",
        "anz_has space 0123456789abcdef0123456789",
    ] {
        assert!(
            matches!(
                store.import_api_key("default", weak).await,
                Err(StoreError::Invalid(_))
            ),
            "{weak}"
        );
    }
}

/// `url` with one more query parameter.
fn with_parameter(url: &str, parameter: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{parameter}")
}

/// PostgreSQL over TLS: `sslmode=require` connects encrypted (the server's own view, pg_stat_ssl, says
/// so), and `sslmode=verify-full` refuses a certificate no trusted authority signed (the test server's
/// self-signed one), so verification really happens. Needs a server with `ssl = on` (Debian's default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_connections_use_tls_when_asked() {
    let database = database::TestDatabase::create(Backend::Postgres).await;
    let required = with_parameter(&database.url, "sslmode=require");
    let store = Store::connect(&required, 2)
        .await
        .expect("sslmode=require connects (the test server must have ssl = on)");
    store.migrate().await.expect("migrate over TLS");
    store.ping().await.expect("ping over TLS");
    store.close().await;
    let pool = sqlx::PgPool::connect(&required).await.expect("connect");
    let encrypted: bool =
        sqlx::query_scalar("select ssl from pg_stat_ssl where pid = pg_backend_pid()")
            .fetch_one(&pool)
            .await
            .expect("pg_stat_ssl");
    pool.close().await;
    assert!(encrypted, "the connection is not encrypted");

    let verified = with_parameter(&database.url, "sslmode=verify-full");
    let refused = Store::connect(&verified, 1).await;
    assert!(
        refused.is_err(),
        "verify-full accepted a certificate no trusted authority signed"
    );
    database.drop().await;
}

// ---------------------------------------------------------------------------------------------------
// fairness, lease timing and readiness

/// Unix milliseconds, as the store writes them.
fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

/// A pause that puts the next claim (or job) in a later millisecond than the previous one, so "latest
/// start" and "oldest job" comparisons never tie (ties fall back to the random ids).
async fn next_millisecond() {
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
}

async fn claim(store: &Store) -> anonymizer::store::ClaimedJob {
    store
        .claim_next("w", 60_000)
        .await
        .expect("claim")
        .expect("a job to claim")
}

async fn claims_are_fair_across_tenants(store: Store) {
    let a = tenant(&store, "busy").await;
    let b = tenant(&store, "quiet").await;
    let data_a = dataset(&store, a, "d", b"x\n").await;
    let data_b = dataset(&store, b, "d", b"x\n").await;
    let mut backlog = Vec::new();
    for _ in 0..200 {
        backlog.push(job(&store, a, data_a).await.id);
        if backlog.len() <= 4 {
            // the claim order of the first ones is checked: no two in one millisecond
            next_millisecond().await;
        }
    }

    // one worker: the busy tenant's oldest job runs, and the quiet tenant submits meanwhile
    let first = claim(&store).await;
    assert_eq!(first.id, backlog[0]);
    let quiet = job(&store, b, data_b).await;
    store
        .complete_job(first.id, first.attempt, "{}", DONE, [b"x".as_slice()])
        .await
        .expect("complete");
    // the quiet tenant's job is next, not after the 199 older ones
    let next = claim(&store).await;
    assert_eq!(
        next.id, quiet.id,
        "the quiet tenant waited for one job only"
    );
    assert_eq!(next.tenant, b);

    // a second worker takes the busy tenant's next job: it has fewer running jobs now
    next_millisecond().await;
    let second = claim(&store).await;
    assert_eq!(second.id, backlog[1]);

    // with one running job each, the tenant whose latest start is older goes first (round robin)
    let quiet_more = [job(&store, b, data_b).await.id, {
        next_millisecond().await;
        job(&store, b, data_b).await.id
    }];
    next_millisecond().await;
    let third = claim(&store).await;
    assert_eq!(
        third.id, quiet_more[0],
        "quiet started before busy's latest start"
    );
    next_millisecond().await;
    let fourth = claim(&store).await;
    assert_eq!(fourth.id, backlog[2], "busy now has fewer running jobs");
    next_millisecond().await;
    let fifth = claim(&store).await;
    assert_eq!(
        fifth.id, quiet_more[1],
        "two each: quiet's latest start is older"
    );
    next_millisecond().await;
    let sixth = claim(&store).await;
    assert_eq!(sixth.id, backlog[3], "the quiet tenant has nothing left");
}

async fn a_tenant_at_its_cap_waits_while_others_run(store: Store) {
    let a = tenant(&store, "busy").await;
    let b = tenant(&store, "quiet").await;
    let data_a = dataset(&store, a, "d", b"x\n").await;
    let data_b = dataset(&store, b, "d", b"x\n").await;
    let mut backlog = Vec::new();
    for _ in 0..3 {
        backlog.push(job(&store, a, data_a).await.id);
        next_millisecond().await;
    }
    let quiet = job(&store, b, data_b).await;

    let first = store
        .claim_next_capped("w", 60_000, 1)
        .await
        .expect("claim");
    assert_eq!(first.as_ref().map(|j| j.id), Some(backlog[0]));
    let second = store
        .claim_next_capped("w", 60_000, 1)
        .await
        .expect("claim");
    assert_eq!(second.as_ref().map(|j| j.id), Some(quiet.id));
    // both tenants at the cap: nothing to claim, although the busy tenant has 2 queued jobs
    assert_eq!(
        store
            .claim_next_capped("w", 60_000, 1)
            .await
            .expect("claim"),
        None
    );
    // a cap of 2, or none, lets the busy tenant go on
    let third = store
        .claim_next_capped("w", 60_000, 2)
        .await
        .expect("claim");
    assert_eq!(third.as_ref().map(|j| j.id), Some(backlog[1]));
    assert_eq!(
        store
            .claim_next_capped("w", 60_000, 2)
            .await
            .expect("claim"),
        None
    );

    // a running job whose lease expired does not count: its worker is presumed dead
    let first = first.expect("first");
    let third = third.expect("third");
    store
        .complete_job(first.id, first.attempt, "{}", DONE, [b"x".as_slice()])
        .await
        .expect("complete");
    store
        .release_job(third.id, third.attempt)
        .await
        .expect("release");
    let dying = store
        .claim_next_capped("dead", 0, 1)
        .await
        .expect("claim")
        .expect("a job");
    assert_eq!(dying.id, backlog[1], "the released job is the oldest again");
    let reclaimed = store
        .claim_next_capped("alive", 60_000, 1)
        .await
        .expect("claim")
        .expect("the expired job");
    assert_eq!(
        (reclaimed.id, reclaimed.attempt),
        (dying.id, dying.attempt + 1)
    );
    assert_eq!(
        store
            .claim_next_capped("w", 60_000, 1)
            .await
            .expect("claim"),
        None
    );
    assert_eq!(claim(&store).await.id, backlog[2], "no cap");
}

async fn concurrent_claims_over_tenants_take_every_job_once(store: Store) {
    let mut created = HashSet::new();
    for name in ["a", "b", "c"] {
        let t = tenant(&store, name).await;
        let data = dataset(&store, t, "d", b"x\n").await;
        for _ in 0..10 {
            created.insert(job(&store, t, data).await.id);
        }
    }
    let mut workers = Vec::new();
    for w in 0..8 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(claimed) = store
                .claim_next(&format!("worker-{w}"), 60_000)
                .await
                .expect("claim")
            {
                assert_eq!(claimed.attempt, 1);
                mine.push(claimed.id);
            }
            mine
        }));
    }
    let mut claimed = Vec::new();
    for worker in workers {
        claimed.extend(worker.await.expect("worker"));
    }
    assert_eq!(claimed.len(), 30, "every job claimed once");
    assert_eq!(claimed.into_iter().collect::<HashSet<_>>(), created);
    assert_eq!(store.claim_next("late", 60_000).await.expect("claim"), None);
}

async fn a_claim_that_waited_for_a_connection_gets_its_whole_lease(store: Store) {
    const LEASE_MS: i64 = 1_000;
    let t = tenant(&store, "acme").await;
    let data = dataset(&store, t, "d", b"x\n").await;
    let queued = job(&store, t, data).await;

    // another user holds the pool's only connection while the claim waits for it
    let held = store.hold_connection().await.expect("hold");
    let claimer = tokio::spawn({
        let store = store.clone();
        async move { store.claim_next("w", LEASE_MS).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let released_at = unix_ms();
    drop(held);
    let claimed = claimer
        .await
        .expect("claimer")
        .expect("claim")
        .expect("the job");
    assert_eq!(claimed.id, queued.id);
    let lease = store
        .get_job(t, queued.id)
        .await
        .expect("job")
        .lease_expires_at
        .expect("a lease");
    assert!(
        lease >= released_at + LEASE_MS,
        "the lease was computed before the connection: it ends {} ms early",
        released_at + LEASE_MS - lease
    );

    // a heartbeat that waits for the connection renews for the whole lease too
    let held = store.hold_connection().await.expect("hold");
    let beat = tokio::spawn({
        let store = store.clone();
        async move {
            store
                .record_heartbeat(claimed.id, claimed.attempt, "{}", LEASE_MS)
                .await
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let released_at = unix_ms();
    drop(held);
    beat.await.expect("heartbeat task").expect("heartbeat");
    let lease = store
        .get_job(t, queued.id)
        .await
        .expect("job")
        .lease_expires_at
        .expect("a lease");
    assert!(
        lease >= released_at + LEASE_MS,
        "the renewal was computed before the connection: it ends {} ms early",
        released_at + LEASE_MS - lease
    );
}

async fn ping_answers_while_every_pooled_connection_is_busy(store: Store) {
    let held = store.hold_connection().await.expect("hold");
    // the pool's only connection is taken (its acquire timeout is 30 s); the probe has its own
    let pinged = tokio::time::timeout(std::time::Duration::from_secs(5), store.ping()).await;
    assert!(
        matches!(pinged, Ok(Ok(()))),
        "ping with a busy pool: {pinged:?}"
    );
    drop(held);
    store.ping().await.expect("ping");
}

/// A tenant's pseudonym key: eight first uses at once create one key; eight rotations at once each
/// either create the next version or answer Conflict, and versions stay consecutive; another tenant's
/// key is its own.
async fn pseudonym_keys_are_created_once_and_rotated_one_at_a_time(store: Store) {
    let t = tenant(&store, "acme").await;
    let other = tenant(&store, "globex").await;
    assert_eq!(store.pseudonym_key_info(t).await.expect("info"), None);
    let mut readers = Vec::new();
    for _ in 0..8 {
        let store = store.clone();
        readers.push(tokio::spawn(async move {
            let (info, key) = store.pseudonym_key(t).await.expect("first use");
            (info, key.fingerprint())
        }));
    }
    let mut seen = HashSet::new();
    for reader in readers {
        let (info, fingerprint) = reader.await.expect("reader");
        assert_eq!(info.version, 1);
        assert_eq!(info.fingerprint, fingerprint);
        seen.insert(fingerprint);
    }
    assert_eq!(seen.len(), 1, "one key for every first use");
    let first = seen.into_iter().next().expect("a fingerprint");

    let mut rotations = Vec::new();
    for _ in 0..8 {
        let store = store.clone();
        rotations.push(tokio::spawn(
            async move { store.rotate_pseudonym_key(t).await },
        ));
    }
    let mut versions = Vec::new();
    for rotation in rotations {
        match rotation.await.expect("rotation") {
            Ok(info) => versions.push(info.version),
            Err(StoreError::Conflict(..)) => {}
            Err(other) => panic!("{other}"),
        }
    }
    versions.sort_unstable();
    assert!(!versions.is_empty(), "at least one rotation succeeds");
    let expected: Vec<i64> = (2..2 + versions.len() as i64).collect();
    assert_eq!(versions, expected, "versions are consecutive");
    let current = store
        .pseudonym_key_info(t)
        .await
        .expect("info")
        .expect("a key");
    assert_eq!(current.version, *versions.last().expect("a version"));
    assert_ne!(current.fingerprint, first);
    let (_, key) = store.pseudonym_key(t).await.expect("current");
    assert_eq!(key.fingerprint(), current.fingerprint);

    let (theirs, _) = store.pseudonym_key(other).await.expect("other tenant");
    assert_eq!(theirs.version, 1);
    assert_ne!(theirs.fingerprint, first);
    assert_ne!(theirs.fingerprint, current.fingerprint);
}
