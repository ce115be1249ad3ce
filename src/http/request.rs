//! Request helpers shared by the resource modules: ids in paths (a malformed id is as unknown as a
//! missing one), store errors as 404s naming the resource, media types, display names and page
//! parameters.

use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::http::{header, HeaderMap};
use uuid::Uuid;

use super::ApiError;
use crate::error_code::ErrorCode;
use crate::store::{Cursor, StoreError};

/// Longest accepted display name, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// Default page size of list routes.
pub const DEFAULT_PAGE_SIZE: u32 = 50;

/// Largest page size of list routes.
pub const MAX_PAGE_SIZE: u32 = 500;

/// The id in a resource path; a malformed one is 404 `not_found` for `resource`, exactly like an
/// unknown id.
pub fn path_id(
    path: Result<Path<String>, PathRejection>,
    resource: &str,
) -> Result<Uuid, ApiError> {
    path.ok()
        .and_then(|Path(text)| Uuid::try_parse(&text).ok())
        .ok_or_else(|| ApiError::not_found(resource))
}

/// Maps a store error, answering an unknown (or another tenant's) id with 404 for `resource`.
pub fn store_error(resource: &str) -> impl Fn(StoreError) -> ApiError + '_ {
    move |e| match e {
        StoreError::NotFound => ApiError::not_found(resource),
        other => other.into(),
    }
}

/// Checks that the request's `Content-Type` is `expected` (parameters such as `charset` allowed);
/// otherwise 415 naming `expected`.
pub fn require_media_type(headers: &HeaderMap, expected: &str) -> Result<(), ApiError> {
    if media_type(headers).is_some_and(|m| m.eq_ignore_ascii_case(expected)) {
        Ok(())
    } else {
        Err(ApiError::unsupported_media_type(expected))
    }
}

/// The media type of `Content-Type` without its parameters, trimmed.
pub fn media_type(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or("").trim())
}

/// Checks a display name given as a query parameter: its length (400 `invalid_query`) and its
/// characters ([`check_name_characters`]).
pub fn check_name(name: &str) -> Result<(), ApiError> {
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidQuery,
            format!("name must be at most {MAX_NAME_CHARS} characters"),
        ));
    }
    check_name_characters(name)
}

/// A display name may not contain control characters (NUL, line breaks, tabs, escapes): 422
/// `invalid_characters`. The name is not echoed.
pub fn check_name_characters(name: &str) -> Result<(), ApiError> {
    if name.chars().any(char::is_control) {
        return Err(ApiError::unprocessable(
            ErrorCode::InvalidCharacters,
            "name may not contain control characters",
        ));
    }
    Ok(())
}

/// `limit` and `cursor` of a list route: 400 `invalid_query` for a limit outside 1..=500 or a cursor
/// this service did not return.
pub fn page_params(
    limit: Option<u32>,
    cursor: Option<&str>,
) -> Result<(u32, Option<Cursor>), ApiError> {
    let limit = limit.unwrap_or(DEFAULT_PAGE_SIZE);
    if !(1..=MAX_PAGE_SIZE).contains(&limit) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidQuery,
            format!("limit must be between 1 and {MAX_PAGE_SIZE}"),
        ));
    }
    let cursor = cursor
        .filter(|c| !c.is_empty())
        .map(str::parse::<Cursor>)
        .transpose()?;
    Ok((limit, cursor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_parameters_are_checked() {
        assert_eq!(page_params(None, None).unwrap(), (50, None));
        assert!(page_params(Some(0), None).is_err());
        assert!(page_params(Some(501), None).is_err());
        let e = page_params(Some(2), Some("nope")).unwrap_err();
        assert_eq!(e.code(), "invalid_query");
        let cursor = Cursor {
            created_at: 5,
            id: Uuid::new_v4(),
        };
        assert_eq!(
            page_params(Some(2), Some(&cursor.to_string())).unwrap(),
            (2, Some(cursor))
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("adult 2024 – Zürich").is_ok());
        assert_eq!(
            check_name(&"n".repeat(201)).unwrap_err().code(),
            "invalid_query"
        );
        for bad in ["a\0b", "a\nb", "tab\t", "\u{1b}[31m", "c1\u{85}"] {
            let e = check_name(bad).unwrap_err();
            assert_eq!(
                (e.status().as_u16(), e.code().as_str()),
                (422, "invalid_characters")
            );
        }
    }
}
