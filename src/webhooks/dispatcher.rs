//! The webhook dispatcher of an API process: claims due deliveries (leased, so replicas share the work
//! and a dead sender's deliveries come back), builds each one's body at its first attempt and keeps it
//! for every retry, signs it with the tenant's secrets, POSTs it without following redirects to an
//! address the policy allows, and records the attempt with what follows (delivered, retry at, given up).
//!
//! Headers (Standard Webhooks): `webhook-id` (the job event's id, the same on every retry, for
//! deduplication), `webhook-timestamp` (unix seconds of this attempt), `webhook-signature`. The body is
//! `{"type": "job.<state>", "timestamp": …, "data": <the job document as of the event>}`. Any 2xx
//! answer delivers; anything else (a redirect included) is retried.

use std::error::Error as StdError;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde_json::json;
use tokio::sync::watch;

use super::policy::CallbackPolicy;
use super::signature::signature_header;
use super::WebhookSettings;
use crate::http::jobs::job_json;
use crate::http::time::rfc3339;
use crate::store::{AfterAttempt, AttemptRecord, DueDelivery, JobEvent, Store, StoreError};

/// How often the dispatcher looks for due deliveries when it found none.
const POLL: Duration = Duration::from_millis(100);

/// Deliveries claimed at once, and sent at once: a claim is sent in one round, so that no lease runs
/// out before its delivery is tried.
const BATCH: u32 = 8;

/// Runs until `stopping` turns true.
pub async fn run(
    store: Store,
    settings: Arc<WebhookSettings>,
    mut stopping: watch::Receiver<bool>,
) {
    let client = match client(&settings) {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "cannot build the webhook client; no webhook will be sent");
            return;
        }
    };
    // one round: building the body, one attempt (at most `timeout`), recording it
    let lease = settings.timeout * 2 + Duration::from_secs(5);
    loop {
        if *stopping.borrow() {
            return;
        }
        let lease_until = crate::store::now_ms().saturating_add(millis(lease));
        match store.claim_deliveries(lease_until, BATCH).await {
            Ok(due) if !due.is_empty() => {
                futures_util::stream::iter(due)
                    .for_each_concurrent(BATCH as usize, |delivery| {
                        let (store, client, settings) = (&store, &client, &settings);
                        async move { deliver(store, client, settings, delivery).await }
                    })
                    .await;
                continue;
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "claiming webhook deliveries failed"),
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            _ = stopping.changed() => {}
        }
    }
}

/// The HTTP client: no redirects, a per-attempt timeout, and name resolution that keeps only the
/// addresses the policy allows (the connection goes to one of those).
fn client(settings: &WebhookSettings) -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(settings.timeout)
        .connect_timeout(settings.timeout)
        .user_agent(concat!("anonymizer-webhooks/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(CheckedResolver {
            policy: settings.policy.clone(),
        }))
        .no_proxy()
        .build()
}

/// Resolves names and drops the addresses the policy refuses; none left is an error.
struct CheckedResolver {
    policy: CallbackPolicy,
}

/// Every address of a callback's host was refused by the policy.
#[derive(Debug, thiserror::Error)]
#[error("the callback host resolves only to addresses that are not allowed")]
struct AddressNotAllowed;

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        Box::pin(async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let allowed: Vec<SocketAddr> = found
                .filter(|address| policy.address_allowed(address.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(Box::new(AddressNotAllowed) as Box<dyn StdError + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// One attempt of one delivery, recorded.
async fn deliver(
    store: &Store,
    client: &reqwest::Client,
    settings: &WebhookSettings,
    delivery: DueDelivery,
) {
    let event_id = delivery.event_id;
    if let Err(error) = attempt(store, client, settings, delivery).await {
        match error {
            // the job (and with it the delivery) was deleted meanwhile
            StoreError::NotFound => {}
            error => tracing::warn!(event_id, %error, "a webhook delivery could not be recorded"),
        }
    }
}

async fn attempt(
    store: &Store,
    client: &reqwest::Client,
    settings: &WebhookSettings,
    delivery: DueDelivery,
) -> Result<(), StoreError> {
    let body = match &delivery.body {
        Some(body) => body.clone(),
        None => {
            let event = store.job_event(delivery.event_id).await?;
            let body = payload(store, &event).await?;
            store.fix_delivery_body(delivery.event_id, &body).await?
        }
    };
    let started_at = crate::store::now_ms();
    let clock = Instant::now();
    let sent = send(store, client, settings, &delivery, &body).await?;
    let duration_ms = millis(clock.elapsed());
    let (status_code, error) = match sent {
        Sent::Answered(status) if status.is_redirection() => (
            Some(status.as_u16()),
            Some("the receiver redirected; redirects are not followed".to_string()),
        ),
        Sent::Answered(status) => (Some(status.as_u16()), None),
        Sent::Failed(reason) => (None, Some(reason)),
    };
    let delivered = status_code.is_some_and(|code| (200..300).contains(&code));
    let record = AttemptRecord {
        started_at,
        duration_ms,
        status_code,
        error,
    };
    let after = if delivered {
        AfterAttempt::Delivered
    } else {
        let attempts = u32::try_from(delivery.attempts.saturating_add(1)).unwrap_or(u32::MAX);
        let pause = settings.backoff(attempts, jitter_unit());
        let next = crate::store::now_ms().saturating_add(millis(pause));
        let window_end = delivery
            .created_at
            .saturating_add(millis(settings.retry_for));
        if next > window_end {
            AfterAttempt::GiveUp
        } else {
            AfterAttempt::RetryAt(next)
        }
    };
    store
        .record_delivery_attempt(&delivery, &record, after)
        .await
}

/// What an attempt's request came to.
enum Sent {
    /// The receiver answered with this status.
    Answered(reqwest::StatusCode),
    /// No answer, and why (never the URL or the body).
    Failed(String),
}

async fn send(
    store: &Store,
    client: &reqwest::Client,
    settings: &WebhookSettings,
    delivery: &DueDelivery,
    body: &str,
) -> Result<Sent, StoreError> {
    // the allowlist may have changed since the job was submitted
    let url = match settings.policy.check_url(&delivery.url) {
        Ok(url) => url,
        Err(refusal) => return Ok(Sent::Failed(format!("not sent: {refusal}"))),
    };
    let (_, secrets) = store
        .webhook_secrets(delivery.tenant_id, millis(settings.secret_overlap))
        .await?;
    let id = delivery.event_id.to_string();
    let timestamp = crate::store::now_ms().div_euclid(1000);
    let signature = signature_header(&secrets, &id, timestamp, body.as_bytes());
    let request = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header("webhook-id", &id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(body.to_string());
    Ok(match request.send().await {
        Ok(response) => Sent::Answered(response.status()),
        Err(error) => Sent::Failed(failure_reason(&error)),
    })
}

/// Why a request got no answer, in words that name neither the URL nor the body.
fn failure_reason(error: &reqwest::Error) -> String {
    let mut source: Option<&(dyn StdError + 'static)> = error.source();
    while let Some(cause) = source {
        if cause.downcast_ref::<AddressNotAllowed>().is_some() {
            return format!("not sent: {AddressNotAllowed}");
        }
        source = cause.source();
    }
    if error.is_timeout() {
        "the receiver did not answer in time".into()
    } else if error.is_connect() {
        "the connection to the receiver failed".into()
    } else {
        "the request failed before an answer".into()
    }
}

/// The body of a delivery: its type, the event's time and the job document as the event left it.
async fn payload(store: &Store, event: &JobEvent) -> Result<String, StoreError> {
    let mut job = store.get_job_status(event.tenant_id, event.job_id).await?;
    job.state = event.state;
    job.attempt = event.attempt;
    job.cancel_requested = event.cancel_requested;
    job.progress_json = event.progress_json.clone();
    job.failure_code = event.failure_code.clone();
    job.failure_message = event.failure_message.clone();
    job.updated_at = event.created_at;
    if !event.state.is_terminal() {
        job.finished_at = None;
    }
    let body = json!({
        "type": format!("job.{}", event.state.as_str()),
        "timestamp": rfc3339(event.created_at),
        "data": job_json(&job, false),
    });
    serde_json::to_string(&body).map_err(|_| StoreError::Database("a webhook body".into()))
}

/// A uniform draw in [0, 1) for the jitter.
fn jitter_unit() -> f64 {
    use rand_core::{OsRng, RngCore};
    (OsRng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
