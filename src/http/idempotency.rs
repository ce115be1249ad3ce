//! `Idempotency-Key` on the routes that create something (jobs, dataset and hierarchy uploads): the
//! key's syntax, the fingerprint of an upload request (its parameters and body), and the marks of a
//! replayed answer. A retry with the same key and the same request gets what the first request created,
//! with `Idempotent-Replayed: true`; the same key with another request is 409 `idempotency_conflict`.

use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use sha2::{Digest, Sha256};

use super::ApiError;
use crate::core::hex::hex;
use crate::error_code::ErrorCode;

/// Longest accepted `Idempotency-Key`.
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 200;

/// The request's `Idempotency-Key`: None when absent, 400 unless it is 1 to
/// [`MAX_IDEMPOTENCY_KEY_LEN`] printable ASCII characters.
pub fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|k| {
            !k.is_empty()
                && k.len() <= MAX_IDEMPOTENCY_KEY_LEN
                && k.bytes().all(|b| b.is_ascii_graphic())
        })
        .ok_or_else(|| {
            ApiError::bad_request(
                ErrorCode::BadRequest,
                format!(
                    "Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY_LEN} printable ASCII characters"
                ),
            )
        })?;
    Ok(Some(key.to_string()))
}

/// The fingerprint of an upload request: SHA-256 over the route, each parameter (name and value, absent
/// ones marked) and the body as the handler reads it (decompressed, before any transcoding).
#[derive(Debug, Clone)]
pub struct Fingerprint(Sha256);

impl Fingerprint {
    /// Starts the fingerprint of a request to `route` with `params`, in a fixed order.
    pub fn new(route: &str, params: &[(&str, Option<&str>)]) -> Self {
        let mut hasher = Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(route.as_bytes());
        for (name, value) in params {
            field(name.as_bytes());
            match value {
                Some(value) => field(value.as_bytes()),
                None => field(b"\xff"),
            }
        }
        Fingerprint(hasher)
    }

    /// Adds the next bytes of the body.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The fingerprint as lowercase hex.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

/// 409 `idempotency_conflict`: the key was used with another request.
pub fn conflict() -> ApiError {
    ApiError::conflict(
        ErrorCode::IdempotencyConflict,
        "idempotency key was used with a different request",
    )
}

/// Marks a response as the replay of an earlier request's (`Idempotent-Replayed: true`).
pub fn mark_replayed(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert("idempotent-replayed", HeaderValue::from_static("true"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print(route: &str, params: &[(&str, Option<&str>)], body: &[&[u8]]) -> String {
        let mut fingerprint = Fingerprint::new(route, params);
        for piece in body {
            fingerprint.update(piece);
        }
        fingerprint.finish()
    }

    #[test]
    fn fingerprints_follow_route_parameters_and_body_but_not_its_framing() {
        let base = print("dataset", &[("name", Some("a"))], &[b"x,y\n1,2\n"]);
        assert_eq!(base.len(), 64);
        // the same body in other frames
        assert_eq!(
            print("dataset", &[("name", Some("a"))], &[b"x,y\n", b"1,2\n"]),
            base
        );
        assert_ne!(
            print("hierarchy", &[("name", Some("a"))], &[b"x,y\n1,2\n"]),
            base
        );
        assert_ne!(
            print("dataset", &[("name", Some("b"))], &[b"x,y\n1,2\n"]),
            base
        );
        assert_ne!(print("dataset", &[("name", None)], &[b"x,y\n1,2\n"]), base);
        assert_ne!(
            print("dataset", &[("name", Some(""))], &[b"x,y\n1,2\n"]),
            base
        );
        assert_ne!(
            print("dataset", &[("name", Some("a"))], &[b"x,y\n1,3\n"]),
            base
        );
        // a parameter's value cannot run into the next one's name
        assert_ne!(
            print("dataset", &[("a", Some("bc")), ("d", None)], &[]),
            print("dataset", &[("a", Some("b")), ("cd", None)], &[])
        );
    }

    #[test]
    fn keys_are_printable_ascii_of_bounded_length() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert("idempotency-key", HeaderValue::from_str(value).unwrap());
            idempotency_key(&headers)
        };
        assert_eq!(idempotency_key(&HeaderMap::new()).unwrap(), None);
        assert_eq!(with(" k-1 ").unwrap().as_deref(), Some("k-1"));
        assert!(with("").is_err());
        assert!(with("a b").is_err());
        assert!(with(&"k".repeat(MAX_IDEMPOTENCY_KEY_LEN + 1)).is_err());
    }
}
