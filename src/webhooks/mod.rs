//! Webhooks: a job may name a callback URL, and each change of its state is POSTed there, signed with
//! the tenant's secret, retried with exponential backoff and jitter until the receiver accepts it or the
//! retry window ends. The deliveries are rows that the job event trigger writes with the state change
//! (so a crash loses none) and that the dispatcher of each API process claims, sends and records.
//!
//! - [`policy`]: which callback URLs and addresses are allowed (the operator's allowlist, SSRF rules).
//! - [`signature`]: the Standard Webhooks signature and secret format.
//! - [`dispatcher`]: the loop that sends due deliveries.

pub mod dispatcher;
pub mod policy;
pub mod signature;

use std::time::Duration;

pub use policy::{CallbackPolicy, Refusal};

/// How webhooks are sent.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// Which callback URLs and addresses are allowed.
    pub policy: CallbackPolicy,
    /// How long after its event a delivery is retried before it is given up.
    pub retry_for: Duration,
    /// The pause before the first retry; each later one doubles it (with jitter), up to `retry_max`.
    pub retry_base: Duration,
    /// The longest pause between two attempts.
    pub retry_max: Duration,
    /// How long one attempt may take (connect, send, answer).
    pub timeout: Duration,
    /// How long a rotated-out secret keeps signing beside the new one.
    pub secret_overlap: Duration,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            policy: CallbackPolicy::default(),
            retry_for: Duration::from_secs(24 * 3600),
            retry_base: Duration::from_secs(5),
            retry_max: Duration::from_secs(3600),
            timeout: Duration::from_secs(10),
            secret_overlap: Duration::from_secs(24 * 3600),
        }
    }
}

impl WebhookSettings {
    /// The pause after the `attempts`-th failed attempt: `retry_base` doubled per earlier failure, at
    /// most `retry_max`, of which a random half is taken off ("equal jitter"), so that receivers that
    /// come back are not hit by every sender at once. `unit` in [0, 1) draws the jitter.
    pub fn backoff(&self, attempts: u32, unit: f64) -> Duration {
        let doublings = attempts.saturating_sub(1).min(30);
        let full = self
            .retry_base
            .saturating_mul(1u32 << doublings)
            .min(self.retry_max);
        let half = full / 2;
        half + half.mul_f64(unit.clamp(0.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_with_half_of_it_jittered() {
        let settings = WebhookSettings {
            retry_base: Duration::from_secs(2),
            retry_max: Duration::from_secs(30),
            ..WebhookSettings::default()
        };
        assert_eq!(settings.backoff(1, 0.0), Duration::from_secs(1));
        assert_eq!(settings.backoff(1, 1.0), Duration::from_secs(2));
        assert_eq!(settings.backoff(2, 0.0), Duration::from_secs(2));
        assert_eq!(settings.backoff(3, 0.5), Duration::from_secs(6));
        assert_eq!(settings.backoff(10, 0.0), Duration::from_secs(15));
        assert_eq!(settings.backoff(10, 1.0), Duration::from_secs(30));
        assert_eq!(settings.backoff(u32::MAX, 1.0), Duration::from_secs(30));
    }
}
