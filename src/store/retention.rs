//! Retention: datasets (with their jobs and outputs, by cascade) and finished jobs older than a cutoff
//! are deleted. A dataset with a queued or running job is kept until the job finishes.

use super::{with_pool, Result, Store};

/// What one purge deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    /// Datasets deleted (their jobs and outputs went with them).
    pub datasets: u64,
    /// Finished jobs deleted on datasets that remain.
    pub jobs: u64,
}

impl Store {
    /// Deletes datasets created before `cutoff_ms` that have no live job, and finished jobs that
    /// finished before `cutoff_ms`.
    pub async fn purge_expired(&self, cutoff_ms: i64) -> Result<Purged> {
        let datasets = with_pool!(self, pool => {
            sqlx::query(
                "delete from dataset where created_at < $1 and not exists ( \
                   select 1 from job where job.dataset_id = dataset.id \
                   and job.state in ('queued', 'running'))",
            )
            .bind(cutoff_ms)
            .execute(pool)
            .await?
            .rows_affected()
        });
        let jobs = with_pool!(self, pool => {
            sqlx::query(
                "delete from job where state in ('succeeded', 'failed', 'cancelled') \
                 and finished_at < $1",
            )
            .bind(cutoff_ms)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(Purged { datasets, jobs })
    }
}
