//! Admission of uploads (and, with [`UploadGate::for_streams`], of event streams): at most
//! `max_uploads` in flight in this process and `max_uploads_per_tenant` for any one tenant. An upload that does not get a place is refused at once (never queued): 429
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
    /// What is admitted, in the refusals' words.
    noun: &'static str,
    /// The code of a refusal for the tenant's share.
    tenant_code: ErrorCode,
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
            noun: "uploads",
            tenant_code: ErrorCode::TooManyUploads,
        }
    }

    /// A gate for open event streams (long-lived responses), refusing with `too_many_streams`.
    pub fn for_streams(max_total: usize, max_per_tenant: usize) -> Self {
        UploadGate {
            noun: "event streams",
            tenant_code: ErrorCode::TooManyStreams,
            ..UploadGate::new(max_total, max_per_tenant)
        }
    }

    /// Takes a place for an upload of `tenant`, or the error to answer with.
    pub fn admit(&self, tenant: Uuid) -> Result<UploadPermit, ApiError> {
        let mut counts = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mine = counts.per_tenant.get(&tenant).copied().unwrap_or(0);
        if mine >= self.max_per_tenant {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                self.tenant_code,
                format!(
                    "this API key's tenant already has {} {} open; retry when one has finished",
                    self.max_per_tenant, self.noun
                ),
            )
            .with_retry_after(RETRY_AFTER_SECS));
        }
        if counts.total >= self.max_total {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::ServerBusy,
                format!(
                    "the server has as many {} open as it accepts at once; retry shortly",
                    self.noun
                ),
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

    #[test]
    fn a_stream_gate_refuses_with_its_own_code() {
        let gate = UploadGate::for_streams(2, 1);
        let a = Uuid::new_v4();
        let _a1 = gate.admit(a).unwrap();
        let refused = gate.admit(a).unwrap_err();
        assert_eq!(refused.code(), "too_many_streams");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let _b1 = gate.admit(Uuid::new_v4()).unwrap();
        let busy = gate.admit(Uuid::new_v4()).unwrap_err();
        assert_eq!(busy.code(), "server_busy");
    }
}
