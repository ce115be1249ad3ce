//! Bearer-token authentication. Every data route takes a [`Caller`]: the extractor reads
//! `Authorization: Bearer <api key>`, looks the key up (hashed) in the store and yields the tenant. A
//! missing, malformed, unknown or revoked key is 401 `unauthorized` with `WWW-Authenticate: Bearer`;
//! the answer never says which of those it was.
//!
//! A successful authentication also names the principal to the audit trail (the request's
//! [`AuditSlot`], when the route is audited) and notes the key's last use.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use uuid::Uuid;

use super::audit::AuditSlot;
use super::state::AppState;
use super::ApiError;
use crate::store::Principal;

/// The authenticated caller of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller(pub Principal);

impl Caller {
    /// The caller's tenant: every read and write of the request is scoped to it.
    pub fn tenant(&self) -> Uuid {
        self.0.tenant_id
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let token = parts
            .headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token)
            .ok_or_else(|| {
                ApiError::unauthorized("an API key is required: Authorization: Bearer <key>")
            })?;
        match state.store.authenticate(token).await? {
            Some(principal) => {
                if let Some(slot) = parts.extensions.get::<AuditSlot>() {
                    slot.fill(principal);
                }
                state.key_use.note(&state.store, principal.key_id);
                Ok(Caller(principal))
            }
            None => Err(ApiError::unauthorized("the API key is not valid")),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` value (scheme case-insensitive).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn parses_bearer_tokens() {
        assert_eq!(bearer_token("Bearer anz_abc"), Some("anz_abc"));
        assert_eq!(bearer_token("bearer  anz_abc "), Some("anz_abc"));
        assert_eq!(bearer_token("Basic dXNlcg=="), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer "), None);
    }
}
