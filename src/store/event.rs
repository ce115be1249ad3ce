//! The job event log (`job_event`), appended by database triggers on every write that creates a job,
//! changes its state or attempt, requests its cancellation or stores new progress (see the
//! `job_events_and_webhooks` migration). Events commit in id order on both backends, so a reader that
//! resumes after the last id it saw misses nothing that was committed.

use uuid::Uuid;

use super::job::JobState;
use super::{id_text, parse_id, with_pool, Result, Store, StoreError};

/// What an event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The job was created, or its state or attempt changed.
    State,
    /// A cancellation of the running job was requested.
    CancelRequested,
    /// The running job stored new progress.
    Progress,
}

impl EventKind {
    /// The name streams and the database use.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::State => "state",
            EventKind::CancelRequested => "cancel_requested",
            EventKind::Progress => "progress",
        }
    }

    fn parse(text: &str) -> Result<EventKind> {
        match text {
            "state" => Ok(EventKind::State),
            "cancel_requested" => Ok(EventKind::CancelRequested),
            "progress" => Ok(EventKind::Progress),
            _ => Err(StoreError::Database("unknown job event kind".into())),
        }
    }
}

/// One event of one job: the job's state, attempt, cancel flag, progress and failure as the write that
/// produced the event left them.
#[derive(Debug, Clone, PartialEq)]
pub struct JobEvent {
    /// Increasing over the whole service (the SSE event id).
    pub id: i64,
    /// The job's tenant.
    pub tenant_id: Uuid,
    /// The job.
    pub job_id: Uuid,
    /// What happened.
    pub kind: EventKind,
    /// The job's state after it.
    pub state: JobState,
    /// The job's attempt after it.
    pub attempt: i64,
    /// Whether a cancellation was requested.
    pub cancel_requested: bool,
    /// The job's progress (JSON), if it has reported any.
    pub progress_json: Option<String>,
    /// The failure's code, once the job failed.
    pub failure_code: Option<String>,
    /// The failure's message (value-free), once the job failed.
    pub failure_message: Option<String>,
    /// When (unix ms).
    pub created_at: i64,
}

row_struct! {
    struct EventRow {
        id: i64,
        tenant_id: String,
        job_id: String,
        kind: String,
        state: String,
        attempt: i64,
        cancel_requested: bool,
        progress_json: Option<String>,
        failure_code: Option<String>,
        failure_message: Option<String>,
        created_at: i64,
    }
}

const EVENT_COLUMNS: &str = "id, tenant_id, job_id, kind, state, attempt, cancel_requested, \
                             progress_json, failure_code, failure_message, created_at";

impl TryFrom<EventRow> for JobEvent {
    type Error = StoreError;

    fn try_from(row: EventRow) -> Result<JobEvent> {
        Ok(JobEvent {
            id: row.id,
            tenant_id: parse_id(&row.tenant_id)?,
            job_id: parse_id(&row.job_id)?,
            kind: EventKind::parse(&row.kind)?,
            state: JobState::parse(&row.state)
                .ok_or_else(|| StoreError::Database("unknown job state in an event".into()))?,
            attempt: row.attempt,
            cancel_requested: row.cancel_requested,
            progress_json: row.progress_json,
            failure_code: row.failure_code,
            failure_message: row.failure_message,
            created_at: row.created_at,
        })
    }
}

impl Store {
    /// The tenant's events after id `after`, in id order, at most `limit`; only job `job`'s when given.
    pub async fn job_events(
        &self,
        tenant: Uuid,
        job: Option<Uuid>,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JobEvent>> {
        let limit = i64::from(limit.clamp(1, 1000));
        let rows: Vec<EventRow> = match job {
            Some(job) => with_pool!(self, pool => {
                sqlx::query_as(&format!(
                    "select {EVENT_COLUMNS} from job_event where job_id = $1 and tenant_id = $2 \
                     and id > $3 order by id limit $4"
                ))
                .bind(id_text(job))
                .bind(id_text(tenant))
                .bind(after)
                .bind(limit)
                .fetch_all(pool)
                .await?
            }),
            None => with_pool!(self, pool => {
                sqlx::query_as(&format!(
                    "select {EVENT_COLUMNS} from job_event where tenant_id = $1 and id > $2 \
                     order by id limit $3"
                ))
                .bind(id_text(tenant))
                .bind(after)
                .bind(limit)
                .fetch_all(pool)
                .await?
            }),
        };
        rows.into_iter().map(JobEvent::try_from).collect()
    }

    /// One event by id (any tenant's: the webhook dispatcher's view).
    pub async fn job_event(&self, id: i64) -> Result<JobEvent> {
        let row: Option<EventRow> = with_pool!(self, pool => {
            sqlx::query_as(&format!("select {EVENT_COLUMNS} from job_event where id = $1"))
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The id of the latest event of the whole service (0 when there is none).
    pub async fn latest_event_id(&self) -> Result<i64> {
        let id: Option<i64> = with_pool!(self, pool => {
            sqlx::query_scalar("select max(id) from job_event")
                .fetch_one(pool)
                .await?
        });
        Ok(id.unwrap_or(0))
    }

    /// Deletes the progress events older than `before_ms` (unix ms): state events stay with their job.
    pub async fn prune_progress_events(&self, before_ms: i64) -> Result<u64> {
        Ok(with_pool!(self, pool => {
            sqlx::query("delete from job_event where kind = 'progress' and created_at < $1")
                .bind(before_ms)
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }
}
