//! Webhooks in the store: each tenant's signing secrets, and the deliveries the job event triggers
//! create for jobs with a callback URL, with every attempt to send them. Deliveries of one job are
//! handed out in event order, one at a time: a job's `succeeded` is not sent before its `running` was
//! delivered or given up. A claim leases a delivery by moving its `next_attempt_at` past the send's
//! deadline, so a delivery whose sender died is claimed again later (at least once).

use uuid::Uuid;

use super::{id_text, now_ms, parse_id, with_pool, with_tx, Result, Store, StoreError};
use crate::error_code::ErrorCode;

/// A delivery that is due, as its sender needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDelivery {
    /// The job event it delivers (also the `webhook-id`).
    pub event_id: i64,
    /// The job's tenant.
    pub tenant_id: Uuid,
    /// The job.
    pub job_id: Uuid,
    /// Where it goes.
    pub url: String,
    /// The body, once the first attempt built it (every retry sends the same).
    pub body: Option<String>,
    /// Attempts made so far.
    pub attempts: i64,
    /// When the event happened (unix ms): retries end a retry window after it.
    pub created_at: i64,
    /// The claim's lease (unix ms), also its fence: an attempt is recorded only while the delivery is
    /// still leased until exactly this time, so a sender whose lease ran out and was taken over records
    /// nothing.
    pub lease_until: i64,
}

/// The outcome of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    /// When it started (unix ms).
    pub started_at: i64,
    /// How long it took.
    pub duration_ms: i64,
    /// The receiver's status, when it answered.
    pub status_code: Option<u16>,
    /// Why it failed without a status, or what the status means (never a value of the body).
    pub error: Option<String>,
}

/// What becomes of a delivery after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAttempt {
    /// The receiver accepted it.
    Delivered,
    /// Try again at this time (unix ms).
    RetryAt(i64),
    /// The retry window is over.
    GiveUp,
}

/// A delivery as `GET /v1/jobs/{id}/deliveries` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The job event it delivers.
    pub event_id: i64,
    /// The state the event reports.
    pub state: String,
    /// Where it goes.
    pub url: String,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    /// When it was created (unix ms).
    pub created_at: i64,
    /// The next attempt (unix ms), while pending.
    pub next_attempt_at: Option<i64>,
    /// When it was delivered or given up (unix ms).
    pub finished_at: Option<i64>,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptRecord>,
}

type DueRow = (i64, String, String, String, Option<String>, i64, i64);

/// Due deliveries, the oldest first, each the earliest pending one of its job.
macro_rules! due_deliveries {
    ($lock:literal) => {
        concat!(
            "update webhook_delivery set next_attempt_at = $2 where event_id in (\
               select d.event_id from webhook_delivery d \
               where d.status = 'pending' and d.next_attempt_at <= $1 \
               and not exists (select 1 from webhook_delivery e where e.job_id = d.job_id \
                 and e.status = 'pending' and e.event_id < d.event_id) \
               order by d.next_attempt_at, d.event_id limit $3",
            $lock,
            ") returning event_id, tenant_id, job_id, url, body, attempts, created_at"
        )
    };
}

impl Store {
    /// The tenant's signing secrets, newest first: the current one (created when the tenant has none)
    /// and those retired less than `overlap_ms` ago, which keep signing so that receivers can switch
    /// over. Returns the current secret's version with them.
    pub async fn webhook_secrets(
        &self,
        tenant: Uuid,
        overlap_ms: i64,
    ) -> Result<(i64, Vec<Vec<u8>>)> {
        let tenant_id = id_text(tenant);
        let mut rows = self.signing_rows(&tenant_id, overlap_ms).await?;
        if !rows.iter().any(|(_, _, retired)| retired.is_none()) {
            let secret = fresh_secret()?;
            with_pool!(self, pool => {
                sqlx::query(
                    "insert into webhook_secret (tenant_id, version, secret, created_at) \
                     select $1, next.version, $2, $3 from (select coalesce(max(version), 0) + 1 \
                       as version from webhook_secret where tenant_id = $1) next \
                     where not exists (select 1 from webhook_secret \
                       where tenant_id = $1 and retired_at is null) \
                     on conflict (tenant_id, version) do nothing",
                )
                .bind(&tenant_id)
                .bind(&secret[..])
                .bind(now_ms())
                .execute(pool)
                .await?
                .rows_affected()
            });
            rows = self.signing_rows(&tenant_id, overlap_ms).await?;
        }
        let current = rows
            .iter()
            .find(|(_, _, retired)| retired.is_none())
            .map(|(version, _, _)| *version)
            .ok_or(StoreError::Conflict(
                ErrorCode::Conflict,
                "the webhook secret changed while it was read; retry",
            ))?;
        Ok((current, rows.into_iter().map(|(_, s, _)| s).collect()))
    }

    /// The tenant's secrets that sign now (version, bytes, retirement), newest first.
    async fn signing_rows(
        &self,
        tenant_id: &str,
        overlap_ms: i64,
    ) -> Result<Vec<(i64, Vec<u8>, Option<i64>)>> {
        Ok(with_pool!(self, pool => {
            sqlx::query_as(
                "select version, secret, retired_at from webhook_secret \
                 where tenant_id = $1 and (retired_at is null or retired_at > $2) \
                 order by version desc",
            )
            .bind(tenant_id)
            .bind(now_ms().saturating_sub(overlap_ms))
            .fetch_all(pool)
            .await?
        }))
    }

    /// Retires the tenant's current secret and creates the next; returns the new version. Conflict when
    /// another rotation won the race.
    pub async fn rotate_webhook_secret(&self, tenant: Uuid) -> Result<i64> {
        let secret = fresh_secret()?;
        let now = now_ms();
        let tenant_id = id_text(tenant);
        let mut tx = self.begin_write().await?;
        let inserted = with_tx!(&mut tx, conn => {
            let latest: Option<i64> = sqlx::query_scalar(
                "select max(version) from webhook_secret where tenant_id = $1",
            )
            .bind(&tenant_id)
            .fetch_one(&mut *conn)
            .await?;
            sqlx::query(
                "update webhook_secret set retired_at = $2 where tenant_id = $1 and retired_at is null",
            )
            .bind(&tenant_id)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            let version = latest.unwrap_or(0) + 1;
            let rows = sqlx::query(
                "insert into webhook_secret (tenant_id, version, secret, created_at) \
                 values ($1, $2, $3, $4) on conflict (tenant_id, version) do nothing",
            )
            .bind(&tenant_id)
            .bind(version)
            .bind(&secret[..])
            .bind(now)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            (rows == 1).then_some(version)
        });
        let Some(version) = inserted else {
            return Err(StoreError::Conflict(
                ErrorCode::Conflict,
                "the webhook secret is being rotated by another request; retry",
            ));
        };
        tx.commit().await?;
        Ok(version)
    }

    /// Claims up to `limit` due deliveries, leasing each until `lease_until` (unix ms).
    pub async fn claim_deliveries(&self, lease_until: i64, limit: u32) -> Result<Vec<DueDelivery>> {
        let limit = i64::from(limit.max(1));
        let rows: Vec<DueRow> = match &self.pool {
            super::Pool::Postgres(pool) => {
                sqlx::query_as(due_deliveries!(" for update skip locked"))
                    .bind(now_ms())
                    .bind(lease_until)
                    .bind(limit)
                    .fetch_all(pool)
                    .await?
            }
            super::Pool::Sqlite(pool) => {
                let mut tx = pool.begin_with("begin immediate").await?;
                let rows = sqlx::query_as(due_deliveries!(""))
                    .bind(now_ms())
                    .bind(lease_until)
                    .bind(limit)
                    .fetch_all(&mut *tx)
                    .await?;
                tx.commit().await?;
                rows
            }
        };
        let mut due = rows
            .into_iter()
            .map(|(event_id, tenant, job, url, body, attempts, created_at)| {
                Ok(DueDelivery {
                    event_id,
                    tenant_id: parse_id(&tenant)?,
                    job_id: parse_id(&job)?,
                    url,
                    body,
                    attempts,
                    created_at,
                    lease_until,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        due.sort_by_key(|d| d.event_id);
        Ok(due)
    }

    /// Stores the body of a delivery's first attempt unless one is stored already; returns the stored
    /// body (every attempt sends the same).
    pub async fn fix_delivery_body(&self, event_id: i64, body: &str) -> Result<String> {
        let stored: Option<Option<String>> = with_pool!(self, pool => {
            sqlx::query(
                "update webhook_delivery set body = $2 where event_id = $1 and body is null",
            )
            .bind(event_id)
            .bind(body)
            .execute(pool)
            .await?;
            sqlx::query_scalar("select body from webhook_delivery where event_id = $1")
                .bind(event_id)
                .fetch_optional(pool)
                .await?
        });
        stored.flatten().ok_or(StoreError::NotFound)
    }

    /// Records an attempt of a claimed delivery and what follows it, in one transaction; nothing when the
    /// claim's lease was taken over meanwhile.
    pub async fn record_delivery_attempt(
        &self,
        delivery: &DueDelivery,
        attempt: &AttemptRecord,
        after: AfterAttempt,
    ) -> Result<()> {
        let event_id = delivery.event_id;
        let now = now_ms();
        let (status, next, finished) = match after {
            AfterAttempt::Delivered => ("delivered", now, Some(now)),
            AfterAttempt::RetryAt(at) => ("pending", at, None),
            AfterAttempt::GiveUp => ("failed", now, Some(now)),
        };
        let mut tx = self.begin_write().await?;
        with_tx!(&mut tx, conn => {
            let updated = sqlx::query(
                "update webhook_delivery set attempts = attempts + 1, status = $2, \
                 next_attempt_at = $3, finished_at = $4 where event_id = $1 and status = 'pending' \
                 and next_attempt_at = $5",
            )
            .bind(event_id)
            .bind(status)
            .bind(next)
            .bind(finished)
            .bind(delivery.lease_until)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if updated == 1 {
                sqlx::query(
                    "insert into webhook_attempt (event_id, seq, started_at, duration_ms, status_code, \
                     error) select $1, attempts, $2, $3, $4, $5 from webhook_delivery where event_id = $1",
                )
                .bind(event_id)
                .bind(attempt.started_at)
                .bind(attempt.duration_ms)
                .bind(attempt.status_code.map(i64::from))
                .bind(attempt.error.as_deref())
                .execute(&mut *conn)
                .await?;
            }
        });
        tx.commit().await
    }

    /// The deliveries of the tenant's job with their attempts, oldest first. NotFound when the tenant
    /// has no such job.
    pub async fn job_deliveries(&self, tenant: Uuid, job: Uuid) -> Result<Vec<Delivery>> {
        self.get_job_status(tenant, job).await?;
        type Row = (i64, String, String, String, i64, i64, Option<i64>);
        let rows: Vec<Row> = with_pool!(self, pool => {
            sqlx::query_as(
                "select d.event_id, e.state, d.url, d.status, d.created_at, d.next_attempt_at, \
                 d.finished_at from webhook_delivery d join job_event e on e.id = d.event_id \
                 where d.job_id = $1 and d.tenant_id = $2 order by d.event_id",
            )
            .bind(id_text(job))
            .bind(id_text(tenant))
            .fetch_all(pool)
            .await?
        });
        type AttemptRow = (i64, i64, i64, Option<i64>, Option<String>);
        let attempts: Vec<AttemptRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "select a.event_id, a.started_at, a.duration_ms, a.status_code, a.error \
                 from webhook_attempt a join webhook_delivery d on d.event_id = a.event_id \
                 where d.job_id = $1 and d.tenant_id = $2 order by a.event_id, a.seq",
            )
            .bind(id_text(job))
            .bind(id_text(tenant))
            .fetch_all(pool)
            .await?
        });
        Ok(rows
            .into_iter()
            .map(
                |(event_id, state, url, status, created_at, next, finished_at)| {
                    let pending = status == "pending";
                    Delivery {
                        event_id,
                        state,
                        url,
                        status,
                        created_at,
                        next_attempt_at: pending.then_some(next),
                        finished_at,
                        attempts: attempts
                            .iter()
                            .filter(|a| a.0 == event_id)
                            .map(|(_, started_at, duration_ms, code, error)| AttemptRecord {
                                started_at: *started_at,
                                duration_ms: *duration_ms,
                                status_code: code.and_then(|c| u16::try_from(c).ok()),
                                error: error.clone(),
                            })
                            .collect(),
                    }
                },
            )
            .collect())
    }
}

/// A new secret of 32 bytes from the operating system's randomness.
fn fresh_secret() -> Result<[u8; crate::webhooks::signature::SECRET_BYTES]> {
    use rand_core::{OsRng, RngCore};
    let mut secret = [0u8; crate::webhooks::signature::SECRET_BYTES];
    OsRng
        .try_fill_bytes(&mut secret)
        .map_err(|_| StoreError::Invalid("the operating system gave no random bytes"))?;
    Ok(secret)
}
