//! The process's job memory budget, shared by the jobs its workers run: a job reserves its estimated
//! working set ([`crate::domain::run::memory::job_memory_estimate`]) before its engine starts and gives it
//! back when the engine's thread is done. A job whose estimate fits the budget but not what is left
//! waits (its lease kept by the heartbeat) until running jobs give memory back, so jobs that each fit
//! never run out of memory together; a job larger than the whole budget fails at once — the API refuses
//! such jobs at submission, but a replica may run with a smaller budget than the one that accepted it.

use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::control::JobControl;
use crate::core::control::Control;

/// Reservations are counted in mebibytes, so that budgets up to petabytes fit a semaphore's permits.
const UNIT: u64 = 1 << 20;

/// How often a job waiting for memory looks at its stop flag (cancel, deadline, shutdown).
const STOP_POLL: Duration = Duration::from_millis(100);

/// The memory budget of the jobs a process runs at once.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    units: Arc<Semaphore>,
    total_units: u32,
}

/// Why a job got no reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The job needs more than the whole budget (bytes needed, bytes of budget).
    TooLarge { needed: u64, budget: u64 },
    /// The job was told to stop while it waited.
    Stopped,
}

/// Memory held by a running job; given back on drop.
#[derive(Debug)]
pub(crate) struct Reservation {
    _units: Option<OwnedSemaphorePermit>,
}

impl MemoryBudget {
    /// A budget of `bytes`; None when `bytes` is 0 (no budget).
    pub(crate) fn new(bytes: u64) -> Option<MemoryBudget> {
        if bytes == 0 {
            return None;
        }
        let total_units = u32::try_from((bytes / UNIT).max(1)).unwrap_or(u32::MAX);
        Some(MemoryBudget {
            units: Arc::new(Semaphore::new(total_units as usize)),
            total_units,
        })
    }

    /// The budget in bytes.
    pub(crate) fn bytes(&self) -> u64 {
        u64::from(self.total_units) * UNIT
    }

    /// Units not reserved now.
    pub(crate) fn available_bytes(&self) -> u64 {
        self.units.available_permits() as u64 * UNIT
    }

    /// Reserves `needed` bytes (rounded up to whole mebibytes), waiting while running jobs hold too
    /// much; stops waiting when `control` is told to stop.
    pub(crate) async fn reserve(
        &self,
        needed: u64,
        control: &JobControl,
    ) -> Result<Reservation, Refusal> {
        let units = needed.div_ceil(UNIT).max(1);
        if units > u64::from(self.total_units) {
            return Err(Refusal::TooLarge {
                needed,
                budget: self.bytes(),
            });
        }
        // `units` fits in u32: it is at most `total_units`
        let units = u32::try_from(units).unwrap_or(self.total_units);
        // one acquisition kept across the stop polls, so the job keeps its place in the semaphore's queue
        let mut acquire = pin!(self.units.clone().acquire_many_owned(units));
        loop {
            tokio::select! {
                permit = &mut acquire => {
                    return permit
                        .map(|permit| Reservation { _units: Some(permit) })
                        .map_err(|_| Refusal::Stopped);
                }
                () = tokio::time::sleep(STOP_POLL) => {
                    if control.is_cancelled() {
                        return Err(Refusal::Stopped);
                    }
                }
            }
        }
    }
}

impl Reservation {
    /// A reservation that holds nothing (no budget configured).
    pub(crate) fn none() -> Reservation {
        Reservation { _units: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::StopReason;
    use std::time::Instant;

    fn control() -> JobControl {
        JobControl::new(Instant::now() + Duration::from_secs(60))
    }

    #[test]
    fn no_budget_is_none_and_budgets_count_whole_mebibytes() {
        assert!(MemoryBudget::new(0).is_none());
        let budget = MemoryBudget::new(10 * UNIT + 5).expect("budget");
        assert_eq!(budget.bytes(), 10 * UNIT);
        assert_eq!(MemoryBudget::new(1).expect("tiny").bytes(), UNIT);
    }

    #[tokio::test]
    async fn a_job_larger_than_the_budget_is_refused_at_once() {
        let budget = MemoryBudget::new(10 * UNIT).expect("budget");
        let refusal = budget.reserve(10 * UNIT + 1, &control()).await;
        assert_eq!(
            refusal.map(|_| ()),
            Err(Refusal::TooLarge {
                needed: 10 * UNIT + 1,
                budget: 10 * UNIT
            })
        );
        assert_eq!(budget.available_bytes(), 10 * UNIT);
    }

    #[tokio::test]
    async fn a_job_waits_until_running_jobs_give_memory_back() {
        let budget = Arc::new(MemoryBudget::new(10 * UNIT).expect("budget"));
        let first = budget.reserve(6 * UNIT, &control()).await.expect("first");
        assert_eq!(budget.available_bytes(), 4 * UNIT);
        let waiting = {
            let budget = budget.clone();
            tokio::spawn(async move { budget.reserve(5 * UNIT, &control()).await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(!waiting.is_finished(), "5 MiB do not fit beside 6 of 10");
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("reserved once the first job gave its memory back")
            .expect("task");
        assert_eq!(second, Ok(()));
        assert_eq!(budget.available_bytes(), 10 * UNIT);
    }

    #[tokio::test]
    async fn a_waiting_job_stops_when_told_to() {
        let budget = MemoryBudget::new(10 * UNIT).expect("budget");
        let _held = budget.reserve(8 * UNIT, &control()).await.expect("held");
        let waiting = control();
        waiting.stop(StopReason::CancelRequested);
        let started = Instant::now();
        let refusal = budget.reserve(5 * UNIT, &waiting).await.map(|_| ());
        assert_eq!(refusal, Err(Refusal::Stopped));
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(budget.available_bytes(), 2 * UNIT);
    }
}
