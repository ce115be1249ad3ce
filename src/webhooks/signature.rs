//! Signing of webhook deliveries, as the Standard Webhooks specification (standardwebhooks.com) defines
//! it, so that receivers can verify them with its libraries: the signed content is
//! `{webhook-id}.{webhook-timestamp}.{body}`, signed with HMAC-SHA-256 under the tenant's secret; the
//! `webhook-signature` header lists `v1,` and the base64 signature once per secret in use (during a
//! rotation, the new and the previous one). Secrets are shown to tenants as `whsec_` and the base64 of
//! their bytes.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of a secret's text form.
pub const SECRET_PREFIX: &str = "whsec_";

/// Bytes of a new secret.
pub const SECRET_BYTES: usize = 32;

/// The text form of a secret: `whsec_` and its base64.
pub fn secret_text(secret: &[u8]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(secret))
}

/// The signature of one delivery under one secret: `v1,` and the base64 of
/// HMAC-SHA-256(secret, `{id}.{timestamp}.{body}`).
pub fn sign(secret: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes keys of any length
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The `webhook-signature` header: the signatures under each secret, space-separated.
pub fn signature_header<S: AsRef<[u8]>>(
    secrets: &[S],
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .map(|s| sign(s.as_ref(), id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_standard_webhooks_reference_example() {
        // the example of the Standard Webhooks reference libraries' tests (Python's hmac agrees)
        let secret = STANDARD
            .decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
            .expect("base64");
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let timestamp = 1_614_265_330;
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            sign(&secret, id, timestamp, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn each_secret_signs_once_in_the_header() {
        let header = signature_header(&[b"one".as_slice(), b"two".as_slice()], "1", 2, b"{}");
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], sign(b"one", "1", 2, b"{}"));
        assert_eq!(parts[1], sign(b"two", "1", 2, b"{}"));
        assert_ne!(parts[0], parts[1]);
    }

    #[test]
    fn a_secret_is_shown_with_its_prefix() {
        assert_eq!(secret_text(&[0, 1, 2]), "whsec_AAEC");
    }
}
