//! Jobs, whose rows are the queue. A claim is one statement that takes a queued job or a running job
//! whose lease expired, fairly across tenants (fewest running jobs first, see
//! [`Store::claim_next_capped`]), increments `attempt` and sets the lease; it commits at once. Every
//! later write by the worker is fenced on `(id, attempt, state = 'running')` and must hit exactly one
//! row, otherwise it fails with [`StoreError::LeaseLost`] and changes nothing. `attempt` only ever grows
//! (it counts claims), so a stale worker can never match the fence again.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::chunk::{ChunkTable, ChunkWriter};
use super::{
    id_text, now_ms, page_limit, page_of, parse_id, to_i64, to_u64, with_pool, with_tx, Cursor,
    Page, Result, Store, StoreError,
};
use crate::error_code::ErrorCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Succeeded,
    Failed,
    Cancelled,
}

impl JobState {
    pub const ALL: [JobState; 5] = [
        JobState::Queued,
        JobState::Running,
        JobState::Succeeded,
        JobState::Failed,
        JobState::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Cancelled
        )
    }
}

/// A job as the API shows it (without report and output, see [`Store::job_result`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub dataset_id: Uuid,
    pub state: JobState,
    pub spec_json: String,
    pub idempotency_key: Option<String>,
    pub request_hash: String,
    /// How many times the job was claimed; the fencing token of the current claim.
    pub attempt: i64,
    pub cancel_requested: bool,
    pub progress_json: Option<String>,
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// The display name given at submission.
    pub name: Option<String>,
    /// The free labels given at submission, as a JSON array of strings.
    pub labels_json: String,
    /// What the job asks for (JSON, see [`NewJob::summary_json`]).
    pub summary_json: Option<String>,
    /// What a succeeded job achieved (JSON, written by [`Store::complete_job_streamed`]).
    pub outcome_json: Option<String>,
    /// The name of the job's dataset (`None` once the dataset is gone).
    pub dataset_name: Option<String>,
    /// Where the job's state changes are posted (webhooks), if anywhere.
    pub callback_url: Option<String>,
}

/// Filters of [`Store::list_jobs`]; `None` matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobFilter {
    pub state: Option<JobState>,
    pub dataset_id: Option<Uuid>,
    /// Jobs carrying this label.
    pub label: Option<String>,
}

/// A job to queue ([`Store::create_job_with`]).
#[derive(Debug, Clone, Copy)]
pub struct NewJob<'a> {
    pub tenant: Uuid,
    pub dataset_id: Uuid,
    pub spec_json: &'a str,
    pub idempotency_key: Option<&'a str>,
    pub request_hash: &'a str,
    /// Display name.
    pub name: Option<&'a str>,
    /// Free labels (distinct).
    pub labels: &'a [String],
    /// The stored hierarchies the spec references; ids of no hierarchy of the tenant are skipped.
    pub hierarchy_ids: &'a [Uuid],
    /// What the job asks for, as JSON the store does not read (model, algorithm).
    pub summary_json: Option<&'a str>,
    /// Where the job's state changes are posted (an allowed URL), if anywhere.
    pub callback_url: Option<&'a str>,
}

/// What a worker needs to run a claimed job. Pass `attempt` back to every fenced write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedJob {
    pub id: Uuid,
    pub tenant: Uuid,
    pub dataset_id: Uuid,
    pub spec_json: String,
    pub attempt: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatAck {
    /// The job should stop and be marked cancelled ([`Store::mark_cancelled`]).
    pub cancel_requested: bool,
}

/// A succeeded job's report and the shape of its output (chunks `0..output_chunk_count`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobResult {
    pub report_json: String,
    pub output_chunk_count: u64,
    pub output_byte_size: u64,
    /// Lowercase hex SHA-256 of the whole output.
    pub output_sha256: String,
}

/// What a succeeded job stores besides its output ([`Store::complete_job_streamed`]).
#[derive(Debug, Clone, Copy)]
pub struct Completion<'a> {
    /// The report (JSON).
    pub report_json: &'a str,
    /// What the job achieved, for lists (JSON the store does not read).
    pub outcome_json: Option<&'a str>,
    /// The final progress (JSON).
    pub progress_json: &'a str,
}

macro_rules! job_columns {
    () => {
        "id, tenant_id, dataset_id, state, spec_json, idempotency_key, request_hash, attempt, \
         cancel_requested, progress_json, failure_code, failure_message, lease_owner, \
         lease_expires_at, created_at, updated_at, started_at, finished_at, name, labels_json, \
         summary_json, outcome_json, \
         (select d.name from dataset d where d.id = job.dataset_id and d.tenant_id = job.tenant_id) \
         as dataset_name, callback_url"
    };
}

/// [`job_columns`] with an empty `spec_json`: status reads (polling, listing) skip the spec, which can
/// be megabytes of inline hierarchies.
macro_rules! job_status_columns {
    () => {
        "id, tenant_id, dataset_id, state, '' as spec_json, idempotency_key, request_hash, attempt, \
         cancel_requested, progress_json, failure_code, failure_message, lease_owner, \
         lease_expires_at, created_at, updated_at, started_at, finished_at, name, labels_json, \
         summary_json, outcome_json, \
         (select d.name from dataset d where d.id = job.dataset_id) as dataset_name, callback_url"
    };
}

row_struct! {
    struct JobRow {
        id: String,
        tenant_id: String,
        dataset_id: String,
        state: String,
        spec_json: String,
        idempotency_key: Option<String>,
        request_hash: String,
        attempt: i64,
        cancel_requested: bool,
        progress_json: Option<String>,
        failure_code: Option<String>,
        failure_message: Option<String>,
        lease_owner: Option<String>,
        lease_expires_at: Option<i64>,
        created_at: i64,
        updated_at: i64,
        started_at: Option<i64>,
        finished_at: Option<i64>,
        name: Option<String>,
        labels_json: String,
        summary_json: Option<String>,
        outcome_json: Option<String>,
        dataset_name: Option<String>,
        callback_url: Option<String>,
    }
}

/// Why a job has no result yet, naming its state (the 409 `job_not_succeeded` detail).
fn not_succeeded(state: JobState) -> &'static str {
    match state {
        JobState::Queued => "the job is queued: its result exists once it has succeeded",
        JobState::Running => "the job is running: its result exists once it has succeeded",
        JobState::Failed => "the job failed: it has no result",
        JobState::Cancelled => "the job was cancelled: it has no result",
        // a succeeded job whose result columns are not all set: a result being written
        JobState::Succeeded => "the job's result is not complete yet",
    }
}

fn parse_state(text: &str) -> Result<JobState> {
    JobState::parse(text)
        .ok_or_else(|| StoreError::Database("unknown job state in the database".into()))
}

impl TryFrom<JobRow> for Job {
    type Error = StoreError;

    fn try_from(row: JobRow) -> Result<Job> {
        Ok(Job {
            id: parse_id(&row.id)?,
            tenant_id: parse_id(&row.tenant_id)?,
            dataset_id: parse_id(&row.dataset_id)?,
            state: parse_state(&row.state)?,
            spec_json: row.spec_json,
            idempotency_key: row.idempotency_key,
            request_hash: row.request_hash,
            attempt: row.attempt,
            cancel_requested: row.cancel_requested,
            progress_json: row.progress_json,
            failure_code: row.failure_code,
            failure_message: row.failure_message,
            lease_owner: row.lease_owner,
            lease_expires_at: row.lease_expires_at,
            created_at: row.created_at,
            updated_at: row.updated_at,
            started_at: row.started_at,
            finished_at: row.finished_at,
            name: row.name,
            labels_json: row.labels_json,
            summary_json: row.summary_json,
            outcome_json: row.outcome_json,
            dataset_name: row.dataset_name,
            callback_url: row.callback_url,
        })
    }
}

/// The claim's update of the chosen job, shared by both backends; the job's id follows. A reclaimed job
/// whose cancellation was requested becomes cancelled instead of running again.
macro_rules! claim_update {
    () => {
        "update job set \
           state = case when cancel_requested then 'cancelled' else 'running' end, \
           attempt = case when cancel_requested then attempt else attempt + 1 end, \
           lease_owner = case when cancel_requested then null else $1 end, \
           lease_expires_at = case when cancel_requested then null else $3 end, \
           finished_at = case when cancel_requested then $2 else null end, \
           started_at = coalesce(started_at, $2), \
           updated_at = $2 \
         where id = ("
    };
}

/// The claimable jobs of the tenant `$tenant` (a column): queued, or running with an expired lease.
macro_rules! claimable_of {
    ($tenant:literal) => {
        concat!(
            "q.tenant_id = ",
            $tenant,
            " and q.state in ('queued', 'running') \
             and (q.state = 'queued' or q.lease_expires_at <= $2)"
        )
    };
}

/// Every tenant with the figures the claim ranks it by: its running jobs with a live lease, its latest
/// start, and its oldest claimable job's creation (null when it has nothing to claim). Each figure is
/// one short index range (migration 0004).
macro_rules! ranked_tenants {
    () => {
        concat!(
            "select t.id as tenant_id, \
               (select count(*) from job r where r.tenant_id = t.id and r.state = 'running' \
                  and r.lease_expires_at > $2) as running, \
               (select s.started_at from job s where s.tenant_id = t.id \
                  and s.started_at is not null order by s.started_at desc limit 1) as last_start, \
               (select q.created_at from job q where ",
            claimable_of!("t.id"),
            " order by q.created_at, q.id limit 1) as oldest \
             from tenant t"
        )
    };
}

/// Tenants that may claim (some claimable work, under the cap `$4` unless it is 0), fairest first: fewest
/// running jobs, then the longest since their latest start (round robin among equals), then the oldest
/// waiting job.
macro_rules! fair_filter_and_order {
    () => {
        " where ranked.oldest is not null and ($4 = 0 or ranked.running < $4) \
          order by ranked.running, coalesce(ranked.last_start, 0), ranked.oldest, ranked.tenant_id"
    };
}

/// The claim on PostgreSQL. The ordered tenant list feeds a lateral join in order and the outer `limit 1`
/// stops at the first tenant with an unlocked claimable job, so only the chosen job's row is locked
/// (`for update skip locked` cannot sit on the ranking, which aggregates). A tenant whose claimable jobs
/// are all being claimed by others is passed over for the next one.
const CLAIM_POSTGRES: &str = concat!(
    claim_update!(),
    "select c.id from (select ranked.tenant_id from (",
    ranked_tenants!(),
    ") ranked",
    fair_filter_and_order!(),
    ") tenants cross join lateral (select q.id from job q where ",
    claimable_of!("tenants.tenant_id"),
    " order by q.created_at, q.id limit 1 for update skip locked) c limit 1",
    ") returning id, tenant_id, dataset_id, spec_json, attempt, state"
);

/// The claim on SQLite, whose writers take turns (the claim runs in a `begin immediate` transaction):
/// the fairest tenant's oldest claimable job.
const CLAIM_SQLITE: &str = concat!(
    claim_update!(),
    "select (select q.id from job q where ",
    claimable_of!("ranked.tenant_id"),
    " order by q.created_at, q.id limit 1) from (",
    ranked_tenants!(),
    ") ranked",
    fair_filter_and_order!(),
    " limit 1) returning id, tenant_id, dataset_id, spec_json, attempt, state"
);

/// The fence of a completion on PostgreSQL: the attempt still runs the job and no cancel was requested;
/// the row stays locked until the transaction ends.
const FENCE_FOR_UPDATE_POSTGRES: &str = "select attempt from job where id = $1 and attempt = $2 \
     and state = 'running' and not cancel_requested for update";

/// [`FENCE_FOR_UPDATE_POSTGRES`] on SQLite, whose write transaction already excludes other writers.
const FENCE_SQLITE: &str = "select attempt from job where id = $1 and attempt = $2 \
     and state = 'running' and not cancel_requested";

/// What a claim returns: id, tenant, dataset, spec, attempt and the state it left the job in.
type ClaimRow = (String, String, String, String, i64, String);

/// A text or integer bind of a dynamically built query.
enum Arg {
    Text(String),
    Int(i64),
}

impl Store {
    /// Queues a job on the tenant's dataset. With an idempotency key, a repeat with the same
    /// `request_hash` returns the existing job (`created = false`) and one with another hash is a
    /// Conflict. Keys are scoped to the tenant.
    pub async fn create_job(
        &self,
        tenant: Uuid,
        dataset_id: Uuid,
        spec_json: &str,
        idempotency_key: Option<&str>,
        request_hash: &str,
    ) -> Result<(Job, bool)> {
        self.create_job_with(NewJob {
            tenant,
            dataset_id,
            spec_json,
            idempotency_key,
            request_hash,
            name: None,
            labels: &[],
            hierarchy_ids: &[],
            summary_json: None,
            callback_url: None,
        })
        .await
    }

    /// [`Store::create_job`] with a name, labels, referenced hierarchies and a summary, all written in
    /// the job's transaction.
    pub async fn create_job_with(&self, new: NewJob<'_>) -> Result<(Job, bool)> {
        let NewJob {
            tenant,
            dataset_id,
            spec_json,
            idempotency_key,
            request_hash,
            ..
        } = new;
        if let Some(key) = idempotency_key {
            if let Some(existing) = self
                .job_by_idempotency_key(tenant, key, request_hash)
                .await?
            {
                return Ok((existing, false));
            }
        }
        // the dataset must be the tenant's; a concurrent delete is caught by the foreign key
        self.get_dataset(tenant, dataset_id).await?;
        let now = now_ms();
        let id = id_text(Uuid::new_v4());
        let labels_json = serde_json::to_string(new.labels)
            .map_err(|_| StoreError::Database("labels could not be serialized".into()))?;
        let mut tx = self.begin_write().await?;
        let inserted = with_tx!(&mut tx, conn => {
            sqlx::query(
                "insert into job (id, tenant_id, dataset_id, state, spec_json, idempotency_key, \
                 request_hash, created_at, updated_at, name, labels_json, summary_json, callback_url) \
                 values ($1, $2, $3, 'queued', $4, $5, $6, $7, $7, $8, $9, $10, $11) \
                 on conflict (tenant_id, idempotency_key) do nothing",
            )
            .bind(&id)
            .bind(id_text(tenant))
            .bind(id_text(dataset_id))
            .bind(spec_json)
            .bind(idempotency_key)
            .bind(request_hash)
            .bind(now)
            .bind(new.name)
            .bind(&labels_json)
            .bind(new.summary_json)
            .bind(new.callback_url)
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        if inserted == 1 {
            for label in new.labels {
                with_tx!(&mut tx, conn => {
                    sqlx::query(
                        "insert into job_label (job_id, tenant_id, label) values ($1, $2, $3) \
                         on conflict do nothing",
                    )
                    .bind(&id)
                    .bind(id_text(tenant))
                    .bind(label)
                    .execute(&mut *conn)
                    .await?;
                });
            }
            for hierarchy in new.hierarchy_ids {
                let linked = with_tx!(&mut tx, conn => {
                    sqlx::query(
                        "insert into job_hierarchy (job_id, hierarchy_id) select $1, id from hierarchy \
                         where id = $2 and tenant_id = $3 on conflict do nothing",
                    )
                    .bind(&id)
                    .bind(id_text(*hierarchy))
                    .bind(id_text(tenant))
                    .execute(&mut *conn)
                    .await
                    .map(|done| done.rows_affected())
                });
                // the hierarchy was deleted since the job was validated: the job is not queued
                let gone = match linked {
                    Ok(rows) => rows == 0,
                    Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => true,
                    Err(e) => return Err(e.into()),
                };
                if gone {
                    tx.rollback().await?;
                    return Err(StoreError::Conflict(
                        ErrorCode::UnknownHierarchy,
                        "a hierarchy the job references was deleted meanwhile",
                    ));
                }
            }
        }
        tx.commit().await?;
        let row = if inserted == 1 {
            Some(self.get_job(tenant, parse_id(&id)?).await?)
        } else {
            None
        };
        match (row, idempotency_key) {
            (Some(job), _) => Ok((job, true)),
            // lost a race with a concurrent request carrying the same key
            (None, Some(key)) => self
                .job_by_idempotency_key(tenant, key, request_hash)
                .await?
                .map(|job| (job, false))
                .ok_or(StoreError::Conflict(
                    ErrorCode::IdempotencyConflict,
                    "idempotency key is in use",
                )),
            (None, None) => Err(StoreError::Database("job insert returned no row".into())),
        }
    }

    /// The tenant's job created with idempotency key `key`, if any; Conflict when it was created from a
    /// request with another hash.
    pub async fn job_by_idempotency_key(
        &self,
        tenant: Uuid,
        key: &str,
        request_hash: &str,
    ) -> Result<Option<Job>> {
        let row: Option<JobRow> = with_pool!(self, pool => {
            sqlx::query_as(concat!(
                "select ", job_columns!(), " from job where tenant_id = $1 and idempotency_key = $2"
            ))
            .bind(id_text(tenant))
            .bind(key)
            .fetch_optional(pool)
            .await?
        });
        match row {
            None => Ok(None),
            Some(row) if row.request_hash == request_hash => Ok(Some(row.try_into()?)),
            Some(_) => Err(StoreError::Conflict(
                ErrorCode::IdempotencyConflict,
                "idempotency key was used with a different request",
            )),
        }
    }

    /// The tenant's job; another tenant's id is NotFound.
    pub async fn get_job(&self, tenant: Uuid, id: Uuid) -> Result<Job> {
        let row: Option<JobRow> = with_pool!(self, pool => {
            sqlx::query_as(concat!(
                "select ", job_columns!(), " from job where id = $1 and tenant_id = $2"
            ))
            .bind(id_text(id))
            .bind(id_text(tenant))
            .fetch_optional(pool)
            .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The tenant's job without its spec (`spec_json` is empty): what status polling needs.
    pub async fn get_job_status(&self, tenant: Uuid, id: Uuid) -> Result<Job> {
        let row: Option<JobRow> = with_pool!(self, pool => {
            sqlx::query_as(concat!(
                "select ", job_status_columns!(), " from job where id = $1 and tenant_id = $2"
            ))
            .bind(id_text(id))
            .bind(id_text(tenant))
            .fetch_optional(pool)
            .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The tenant's jobs matching `filter`, newest first, at most `limit` (1..=1000) per page, without
    /// their specs (`spec_json` is empty).
    pub async fn list_jobs(
        &self,
        tenant: Uuid,
        filter: JobFilter,
        cursor: Option<Cursor>,
        limit: u32,
    ) -> Result<Page<Job>> {
        let limit = page_limit(limit);
        let mut sql = String::from(concat!(
            "select ",
            job_status_columns!(),
            " from job where tenant_id = $1"
        ));
        let mut args = vec![Arg::Text(id_text(tenant))];
        if let Some(state) = filter.state {
            args.push(Arg::Text(state.as_str().to_string()));
            sql.push_str(&format!(" and state = ${}", args.len()));
        }
        if let Some(dataset) = filter.dataset_id {
            args.push(Arg::Text(id_text(dataset)));
            sql.push_str(&format!(" and dataset_id = ${}", args.len()));
        }
        if let Some(label) = filter.label {
            args.push(Arg::Text(label));
            sql.push_str(&format!(
                " and id in (select l.job_id from job_label l where l.tenant_id = $1 and l.label = ${})",
                args.len()
            ));
        }
        if let Some(cursor) = cursor {
            args.push(Arg::Int(cursor.created_at));
            let at = args.len();
            args.push(Arg::Text(id_text(cursor.id)));
            let id = args.len();
            sql.push_str(&format!(
                " and (created_at < ${at} or (created_at = ${at} and id < ${id}))"
            ));
        }
        args.push(Arg::Int(limit + 1));
        sql.push_str(&format!(
            " order by created_at desc, id desc limit ${}",
            args.len()
        ));
        let rows: Vec<JobRow> = with_pool!(self, pool => {
            let mut query = sqlx::query_as(&sql);
            for arg in &args {
                query = match arg {
                    Arg::Text(text) => query.bind(text.as_str()),
                    Arg::Int(int) => query.bind(*int),
                };
            }
            query.fetch_all(pool).await?
        });
        let items = rows
            .into_iter()
            .map(Job::try_from)
            .collect::<Result<Vec<_>>>()?;
        Ok(page_of(items, limit, |j| Cursor {
            created_at: j.created_at,
            id: j.id,
        }))
    }

    /// Deletes the tenant's job with its output, report, labels and hierarchy references. A running
    /// job's worker loses its lease at its next write and stops; the caller asks for its cancellation
    /// first. NotFound when the tenant has no such job.
    pub async fn delete_job(&self, tenant: Uuid, id: Uuid) -> Result<()> {
        let deleted = with_pool!(self, pool => {
            sqlx::query("delete from job where id = $1 and tenant_id = $2")
                .bind(id_text(id))
                .bind(id_text(tenant))
                .execute(pool)
                .await?
                .rows_affected()
        });
        if deleted == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Cancels the tenant's job: a queued job becomes cancelled at once, a running one gets
    /// `cancel_requested` (its worker sees it on the next heartbeat). A finished job is returned
    /// unchanged. Returns the job as it is afterwards.
    pub async fn request_cancel(&self, tenant: Uuid, id: Uuid) -> Result<Job> {
        let now = now_ms();
        let row: Option<JobRow> = with_pool!(self, pool => {
            sqlx::query_as(concat!(
                "update job set \
                   cancel_requested = case when state = 'running' then true else cancel_requested end, \
                   finished_at = case when state = 'queued' then $3 else finished_at end, \
                   state = case when state = 'queued' then 'cancelled' else state end, \
                   updated_at = $3 \
                 where id = $1 and tenant_id = $2 and state in ('queued', 'running') returning ",
                job_columns!()
            ))
            .bind(id_text(id))
            .bind(id_text(tenant))
            .bind(now)
            .fetch_optional(pool)
            .await?
        });
        match row {
            Some(row) => row.try_into(),
            None => self.get_job(tenant, id).await,
        }
    }

    /// Claims a job for `worker_id` until `now + lease_ms`, fairly across tenants and without a cap on
    /// any tenant's running jobs; see [`Store::claim_next_capped`].
    pub async fn claim_next(&self, worker_id: &str, lease_ms: i64) -> Result<Option<ClaimedJob>> {
        self.claim_next_capped(worker_id, lease_ms, 0).await
    }

    /// Claims a queued job, or a running job whose lease expired (its worker is presumed dead), for
    /// `worker_id` until `now + lease_ms`. Returns None when there is nothing to do.
    ///
    /// The job is chosen fairly across tenants: among the tenants with claimable work and fewer than
    /// `tenant_max_running` running jobs (0: no cap), the one with the fewest running jobs, then the one
    /// whose latest start is the oldest, then the one with the oldest waiting job; that tenant's oldest
    /// claimable job is taken. On PostgreSQL concurrent claims do not see each other's uncommitted claims,
    /// so the cap may be overshot by the number of claims racing for one tenant.
    ///
    /// One statement, committed at once: no transaction stays open while the job runs. `now` is read
    /// once the claim holds its connection (and, on SQLite, the write lock), so waiting for a busy pool
    /// never shortens the lease it writes.
    pub async fn claim_next_capped(
        &self,
        worker_id: &str,
        lease_ms: i64,
        tenant_max_running: u32,
    ) -> Result<Option<ClaimedJob>> {
        let cap = i64::from(tenant_max_running);
        loop {
            let row: Option<ClaimRow> = match &self.pool {
                super::Pool::Postgres(pool) => {
                    let mut conn = pool.acquire().await?;
                    let now = now_ms();
                    sqlx::query_as(CLAIM_POSTGRES)
                        .bind(worker_id)
                        .bind(now)
                        .bind(now.saturating_add(lease_ms))
                        .bind(cap)
                        .fetch_optional(&mut *conn)
                        .await?
                }
                super::Pool::Sqlite(pool) => {
                    let mut tx = pool.begin_with("begin immediate").await?;
                    let now = now_ms();
                    let row = sqlx::query_as(CLAIM_SQLITE)
                        .bind(worker_id)
                        .bind(now)
                        .bind(now.saturating_add(lease_ms))
                        .bind(cap)
                        .fetch_optional(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    row
                }
            };
            let Some((id, tenant, dataset_id, spec_json, attempt, state)) = row else {
                return Ok(None);
            };
            if parse_state(&state)? != JobState::Running {
                // an abandoned job whose cancellation was requested: now cancelled, look further
                continue;
            }
            return Ok(Some(ClaimedJob {
                id: parse_id(&id)?,
                tenant: parse_id(&tenant)?,
                dataset_id: parse_id(&dataset_id)?,
                spec_json,
                attempt,
            }));
        }
    }

    /// Renews the lease to `now + lease_ms` (`now` read once the connection is held), stores the progress and reports a pending cancellation.
    /// LeaseLost when this attempt no longer owns the running job.
    pub async fn record_heartbeat(
        &self,
        id: Uuid,
        attempt: i64,
        progress_json: &str,
        lease_ms: i64,
    ) -> Result<HeartbeatAck> {
        let cancel: Option<bool> = with_pool!(self, pool => {
            // the connection first: a renewal that waited for a busy pool still lasts `lease_ms`
            let mut conn = pool.acquire().await?;
            let now = now_ms();
            sqlx::query_scalar(
                "update job set progress_json = $3, lease_expires_at = $4, updated_at = $5 \
                 where id = $1 and attempt = $2 and state = 'running' returning cancel_requested",
            )
            .bind(id_text(id))
            .bind(attempt)
            .bind(progress_json)
            .bind(now.saturating_add(lease_ms))
            .bind(now)
            .fetch_optional(&mut *conn)
            .await?
        });
        cancel
            .map(|cancel_requested| HeartbeatAck { cancel_requested })
            .ok_or(StoreError::LeaseLost)
    }

    /// Stores the output (re-chunked to 1 MiB), the report, the final progress and the state `succeeded`
    /// in one transaction. When the fence fails nothing is written and the result is LeaseLost, or
    /// CancelRequested when the attempt still owns the job but its cancellation was requested (a cancel
    /// that arrives before the terminal write wins, whatever phase the job was in).
    pub async fn complete_job<I, B>(
        &self,
        id: Uuid,
        attempt: i64,
        report_json: &str,
        progress_json: &str,
        output: I,
    ) -> Result<()>
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        let pieces = output.into_iter().map(Ok::<B, std::io::Error>);
        self.complete_job_streamed(
            id,
            attempt,
            Completion {
                report_json,
                outcome_json: None,
                progress_json,
            },
            futures_util::stream::iter(pieces),
        )
        .await
    }

    /// [`Store::complete_job`] with the output read from a stream as the transaction goes (a spooled
    /// file, one chunk in memory at a time); a read error rolls everything back.
    pub async fn complete_job_streamed<S, B>(
        &self,
        id: Uuid,
        attempt: i64,
        completion: Completion<'_>,
        output: S,
    ) -> Result<()>
    where
        S: futures_util::Stream<Item = std::io::Result<B>>,
        B: AsRef<[u8]>,
    {
        let mut tx = self.begin_write().await?;
        // the fence first, locking the row against a concurrent reclaim or cancel until the commit
        // (SQLite: the write transaction holds the database); the state is written last, so that the
        // job event it appends commits right after it is numbered (see the job_event migration)
        let fence = match self.backend() {
            super::Backend::Postgres => FENCE_FOR_UPDATE_POSTGRES,
            super::Backend::Sqlite => FENCE_SQLITE,
        };
        let owned: Option<i64> = with_tx!(&mut tx, conn => {
            sqlx::query_scalar(fence)
                .bind(id_text(id))
                .bind(attempt)
                .fetch_optional(&mut *conn)
                .await?
        });
        if owned.is_none() {
            tx.rollback().await?;
            return Err(self.missed_fence(id, attempt).await);
        }
        let mut writer = ChunkWriter::new(ChunkTable::JobOutput, id_text(id));
        let mut output = std::pin::pin!(output);
        while let Some(piece) = futures_util::StreamExt::next(&mut output).await {
            let piece = piece.map_err(sqlx::Error::Io)?;
            writer.write(&mut tx, piece.as_ref()).await?;
        }
        let (chunk_count, byte_size, sha256) = writer.finish(&mut tx).await?;
        let now = now_ms();
        let done = with_tx!(&mut tx, conn => {
            sqlx::query(
                "update job set state = 'succeeded', report_json = $3, progress_json = $5, \
                 outcome_json = $6, lease_owner = null, lease_expires_at = null, finished_at = $4, \
                 updated_at = $4, output_chunk_count = $7, output_byte_size = $8, output_sha256 = $9 \
                 where id = $1 and attempt = $2 and state = 'running' and not cancel_requested",
            )
            .bind(id_text(id))
            .bind(attempt)
            .bind(completion.report_json)
            .bind(now)
            .bind(completion.progress_json)
            .bind(completion.outcome_json)
            .bind(chunk_count)
            .bind(to_i64(byte_size)?)
            .bind(&sha256)
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        if done != 1 {
            tx.rollback().await?;
            return Err(self.missed_fence(id, attempt).await);
        }
        tx.commit().await
    }

    /// Marks the running job failed with a stable `code` and a value-free `message`. Fenced; like
    /// [`Store::complete_job`], CancelRequested when the job's cancellation was requested meanwhile.
    pub async fn fail_job(&self, id: Uuid, attempt: i64, code: &str, message: &str) -> Result<()> {
        let now = now_ms();
        let done = with_pool!(self, pool => {
            sqlx::query(
                "update job set state = 'failed', failure_code = $3, failure_message = $4, \
                 lease_owner = null, lease_expires_at = null, finished_at = $5, updated_at = $5 \
                 where id = $1 and attempt = $2 and state = 'running' and not cancel_requested",
            )
            .bind(id_text(id))
            .bind(attempt)
            .bind(code)
            .bind(message)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        if done == 1 {
            Ok(())
        } else {
            Err(self.missed_fence(id, attempt).await)
        }
    }

    /// Why a fenced write of a job's success or failure hit no row: the attempt still owns the job but
    /// its cancellation was requested ([`StoreError::CancelRequested`]), or the attempt lost the job.
    async fn missed_fence(&self, id: Uuid, attempt: i64) -> StoreError {
        match self.cancel_pending(id, attempt).await {
            Ok(Some(true)) => StoreError::CancelRequested,
            Ok(_) => StoreError::LeaseLost,
            Err(error) => error,
        }
    }

    /// Whether the running attempt `attempt` of job `id` has a cancel request; None when the attempt no
    /// longer runs the job.
    async fn cancel_pending(&self, id: Uuid, attempt: i64) -> Result<Option<bool>> {
        Ok(with_pool!(self, pool => {
            sqlx::query_scalar(
                "select cancel_requested from job \
                 where id = $1 and attempt = $2 and state = 'running'",
            )
            .bind(id_text(id))
            .bind(attempt)
            .fetch_optional(pool)
            .await?
        }))
    }

    /// Marks the running job cancelled (after its worker stopped on a cancel request). Fenced.
    pub async fn mark_cancelled(&self, id: Uuid, attempt: i64) -> Result<()> {
        let now = now_ms();
        let done = with_pool!(self, pool => {
            sqlx::query(
                "update job set state = 'cancelled', lease_owner = null, lease_expires_at = null, \
                 finished_at = $3, updated_at = $3 \
                 where id = $1 and attempt = $2 and state = 'running'",
            )
            .bind(id_text(id))
            .bind(attempt)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        fence(done)
    }

    /// Hands the running job back to the queue (graceful shutdown): state queued, lease cleared, or
    /// cancelled if a cancellation was requested meanwhile. The attempt count stays. Fenced.
    pub async fn release_job(&self, id: Uuid, attempt: i64) -> Result<()> {
        let now = now_ms();
        let done = with_pool!(self, pool => {
            sqlx::query(
                "update job set \
                   state = case when cancel_requested then 'cancelled' else 'queued' end, \
                   finished_at = case when cancel_requested then $3 else null end, \
                   lease_owner = null, lease_expires_at = null, updated_at = $3 \
                 where id = $1 and attempt = $2 and state = 'running'",
            )
            .bind(id_text(id))
            .bind(attempt)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        fence(done)
    }

    /// The report and output shape of the tenant's succeeded job. NotFound for an unknown or foreign id,
    /// Conflict while the job has not succeeded; the reason names its state.
    pub async fn job_result(&self, tenant: Uuid, id: Uuid) -> Result<JobResult> {
        type ResultRow = (
            String,
            Option<String>,
            Option<i64>,
            Option<i64>,
            Option<String>,
        );
        let row: Option<ResultRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "select state, report_json, output_chunk_count, output_byte_size, output_sha256 \
                 from job where id = $1 and tenant_id = $2",
            )
            .bind(id_text(id))
            .bind(id_text(tenant))
            .fetch_optional(pool)
            .await?
        });
        let (state, report, chunks, bytes, sha256) = row.ok_or(StoreError::NotFound)?;
        let state = parse_state(&state)?;
        match (state, report, chunks, bytes, sha256) {
            (JobState::Succeeded, Some(report_json), Some(chunks), Some(bytes), Some(sha256)) => {
                Ok(JobResult {
                    report_json,
                    output_chunk_count: to_u64(chunks)?,
                    output_byte_size: to_u64(bytes)?,
                    output_sha256: sha256,
                })
            }
            _ => Err(StoreError::Conflict(
                ErrorCode::JobNotSucceeded,
                not_succeeded(state),
            )),
        }
    }

    /// Chunk `seq` of a job's output, or None past the last one. Not tenant-scoped: call it only after
    /// [`Store::job_result`].
    pub async fn job_output_chunk(&self, id: Uuid, seq: u64) -> Result<Option<Vec<u8>>> {
        let seq = to_i64(seq)?;
        Ok(with_pool!(self, pool => {
            sqlx::query_scalar("select bytes from job_output_chunk where job_id = $1 and seq = $2")
                .bind(id_text(id))
                .bind(seq)
                .fetch_optional(pool)
                .await?
        }))
    }

    /// How many jobs are in each state, over all tenants (metrics: queue depth, jobs by state). Every
    /// state is present, with 0 when no job is in it.
    pub async fn count_jobs_by_state(&self) -> Result<Vec<(JobState, u64)>> {
        let rows: Vec<(String, i64)> = with_pool!(self, pool => {
            sqlx::query_as("select state, count(*) from job group by state")
                .fetch_all(pool)
                .await?
        });
        let mut counts: Vec<(JobState, u64)> = JobState::ALL.iter().map(|s| (*s, 0)).collect();
        for (state, count) in rows {
            let state = parse_state(&state)?;
            if let Some(slot) = counts.iter_mut().find(|(s, _)| *s == state) {
                slot.1 = to_u64(count)?;
            }
        }
        Ok(counts)
    }
}

fn fence(rows_affected: u64) -> Result<()> {
    if rows_affected == 1 {
        Ok(())
    } else {
        Err(StoreError::LeaseLost)
    }
}
