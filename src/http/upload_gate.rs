//! Admission of uploads: at most `max_uploads` in flight in this process and `max_uploads_per_tenant`
//! for any one tenant. An upload that does not get a place is refused at once (never queued): 429
//! `too_many_uploads` when its tenant is at its share, 503 `server_busy` when the process is full, both
//! with `Retry-After`. Holding places costs no database connection, so uploads can never take the
//! connections that status reads and job submissions need.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use uuid::Uuid;

use super::ApiError;
use crate::error_code::ErrorCode;

/// Seconds a refused client is asked to wait before trying again.
pub const RETRY_AFTER_SECS: u64 = 5;

/// Counts uploads in flight; cheap to clone (shared).
#[derive(Clone, Debug)]
pub struct UploadGate {
    inner: Arc<Mutex<Counts>>,
    max_total: usize,
    max_per_tenant: usize,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_tenant: HashMap<Uuid, usize>,
}

/// A place taken by one upload; given back when dropped.
#[derive(Debug)]
pub struct UploadPermit {
    inner: Arc<Mutex<Counts>>,
    tenant: Uuid,
}

impl UploadGate {
    /// A gate for `max_total` uploads, `max_per_tenant` of them per tenant (both at least 1).
    pub fn new(max_total: usize, max_per_tenant: usize) -> Self {
        UploadGate {
            inner: Arc::new(Mutex::new(Counts::default())),
            max_total: max_total.max(1),
            max_per_tenant: max_per_tenant.max(1),
        }
    }

    /// Takes a place for an upload of `tenant`, or the error to answer with.
    pub fn admit(&self, tenant: Uuid) -> Result<UploadPermit, ApiError> {
        let mut counts = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mine = counts.per_tenant.get(&tenant).copied().unwrap_or(0);
        if mine >= self.max_per_tenant {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::TooManyUploads,
                format!(
                    "this API key's tenant already has {} uploads in progress; retry when one has finished",
                    self.max_per_tenant
                ),
            )
            .with_retry_after(RETRY_AFTER_SECS));
        }
        if counts.total >= self.max_total {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::ServerBusy,
                "the server is receiving as many uploads as it accepts at once; retry shortly",
            )
            .with_retry_after(RETRY_AFTER_SECS));
        }
        counts.total += 1;
        *counts.per_tenant.entry(tenant).or_insert(0) += 1;
        Ok(UploadPermit {
            inner: self.inner.clone(),
            tenant,
        })
    }

    /// Uploads in flight.
    pub fn in_flight(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).total
    }
}

impl Drop for UploadPermit {
    fn drop(&mut self) {
        let mut counts = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        counts.total = counts.total.saturating_sub(1);
        if let Some(n) = counts.per_tenant.get_mut(&self.tenant) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.per_tenant.remove(&self.tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_bounded_per_tenant_and_in_total() {
        let gate = UploadGate::new(3, 2);
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let a1 = gate.admit(a).unwrap();
        let _a2 = gate.admit(a).unwrap();
        let refused = gate.admit(a).unwrap_err();
        assert_eq!(refused.code(), "too_many_uploads");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let _b1 = gate.admit(b).unwrap();
        let busy = gate.admit(b).unwrap_err();
        assert_eq!(busy.code(), "server_busy");
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(gate.in_flight(), 3);
        drop(a1);
        assert_eq!(gate.in_flight(), 2);
        let _b2 = gate.admit(b).unwrap();
        assert_eq!(gate.admit(b).unwrap_err().code(), "too_many_uploads");
    }
}
