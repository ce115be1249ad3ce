//! Conditional GETs and polling hints: entity tags for job documents, results and outputs,
//! `If-None-Match` answered 304 Not Modified (RFC 9110 §13.1.2, weak comparison), and `Retry-After` for
//! clients polling an unfinished job.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::core::hex::push_hex;

/// How long a client polling an unfinished job should wait, in seconds (`Retry-After`).
pub const POLL_AFTER_SECONDS: u64 = 1;

/// A strong entity tag naming `bytes`: the first 128 bits of their SHA-256, quoted.
pub fn tag_of(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut tag = String::with_capacity(34);
    tag.push('"');
    push_hex(&digest[..16], &mut tag);
    tag.push('"');
    tag
}

/// A strong entity tag from a stored checksum (hex) and an optional suffix naming a part of it.
pub fn tag_of_checksum(checksum: &str, part: Option<&str>) -> String {
    match part {
        Some(part) => format!("\"{checksum}.{part}\""),
        None => format!("\"{checksum}\""),
    }
}

/// True when the request's `If-None-Match` lists `etag` (or is `*`), compared weakly: a `W/` prefix on
/// either side is ignored, as RFC 9110 asks for GET.
pub fn none_match(headers: &HeaderMap, etag: &str) -> bool {
    let ours = opaque(etag);
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|listed| listed == "*" || opaque(listed) == ours)
}

fn opaque(tag: &str) -> &str {
    tag.strip_prefix("W/").unwrap_or(tag)
}

/// True when the request's `Accept-Encoding` lists gzip with a non-zero weight (the output route then
/// compresses on the fly).
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let zero = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            name.eq_ignore_ascii_case("gzip") && !zero
        })
}

/// 304 Not Modified with the entity tag (and no body).
pub fn not_modified(etag: &str) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    set_etag(response.headers_mut(), etag);
    response
}

/// Sets `ETag` (a tag that is not a valid header value is left out).
pub fn set_etag(headers: &mut HeaderMap, etag: &str) {
    if let Ok(value) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, value);
    }
}

/// Sets `Retry-After` to [`POLL_AFTER_SECONDS`].
pub fn set_retry_after(headers: &mut HeaderMap) {
    headers.insert(header::RETRY_AFTER, HeaderValue::from(POLL_AFTER_SECONDS));
}

/// Makes the entity tag of a response whose body a layer compressed weak: the bytes on the wire are
/// no longer those the strong tag names (as HTTP servers do when they gzip on the fly).
pub async fn weaken_etag_when_encoded(mut response: Response) -> Response {
    let headers = response.headers_mut();
    if !headers.contains_key(header::CONTENT_ENCODING) {
        return response;
    }
    let weak = headers
        .get(header::ETAG)
        .and_then(|value| value.to_str().ok())
        .filter(|tag| !tag.starts_with("W/"))
        .and_then(|tag| HeaderValue::from_str(&format!("W/{tag}")).ok());
    if let Some(weak) = weak {
        headers.insert(header::ETAG, weak);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_if_none_match(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn tags_are_quoted_and_follow_the_bytes() {
        let tag = tag_of(b"abc");
        // SHA-256("abc") starts ba7816bf 8f01cfea 414140de 5dae2223
        assert_eq!(tag, "\"ba7816bf8f01cfea414140de5dae2223\"");
        assert_ne!(tag_of(b"abd"), tag);
        assert_eq!(tag_of_checksum("ff00", None), "\"ff00\"");
        assert_eq!(tag_of_checksum("ff00", Some("f2")), "\"ff00.f2\"");
    }

    #[test]
    fn if_none_match_compares_weakly_and_accepts_lists_and_star() {
        let tag = "\"aa\"";
        assert!(!none_match(&HeaderMap::new(), tag));
        assert!(none_match(&with_if_none_match(&["\"aa\""]), tag));
        assert!(none_match(&with_if_none_match(&["W/\"aa\""]), tag));
        assert!(none_match(&with_if_none_match(&["\"bb\", W/\"aa\""]), tag));
        assert!(none_match(&with_if_none_match(&["\"bb\"", "\"aa\""]), tag));
        assert!(none_match(&with_if_none_match(&["*"]), tag));
        assert!(!none_match(&with_if_none_match(&["\"bb\""]), tag));
        assert!(!none_match(&with_if_none_match(&["aa"]), tag));
    }

    #[test]
    fn gzip_is_accepted_unless_absent_or_weighted_zero() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
            headers
        };
        assert!(!accepts_gzip(&HeaderMap::new()));
        assert!(accepts_gzip(&with("gzip")));
        assert!(accepts_gzip(&with("br, GZIP;q=0.5")));
        assert!(!accepts_gzip(&with("gzip;q=0")));
        assert!(!accepts_gzip(&with("br, deflate")));
    }

    #[tokio::test]
    async fn a_compressed_response_gets_a_weak_tag() {
        let mut response = StatusCode::OK.into_response();
        set_etag(response.headers_mut(), "\"aa\"");
        let plain = weaken_etag_when_encoded(response).await;
        assert_eq!(plain.headers()[header::ETAG], "\"aa\"");
        let mut response = StatusCode::OK.into_response();
        set_etag(response.headers_mut(), "\"aa\"");
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        let gzipped = weaken_etag_when_encoded(response).await;
        assert_eq!(gzipped.headers()[header::ETAG], "W/\"aa\"");
    }
}
