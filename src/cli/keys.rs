//! `anonymizer keys create|list|revoke`: API keys, managed against the database the server uses. A new
//! key is printed once; only its hash is stored. Creating and revoking a key are audit events (the
//! `audit` log target on stderr, and the `--audit-log` file when given); `list` shows times in
//! RFC 3339 UTC, with each key's last use.

use uuid::Uuid;

use super::KeysCommand;
use crate::audit::{AuditEvent, AuditSink, Outcome};
use crate::http::time::rfc3339;
use crate::store::{ApiKeyRecord, Store, StoreError};

/// Runs a keys subcommand; errors are one-line messages.
pub fn run(command: KeysCommand) -> Result<(), String> {
    let database = match &command {
        KeysCommand::Create { database, .. }
        | KeysCommand::List { database }
        | KeysCommand::Revoke { database, .. } => database.clone(),
    };
    if !matches!(command, KeysCommand::List { .. }) {
        // the audit events go to the `audit` target; a second subscriber (tests) is not an error
        let _ = crate::telemetry::init_command(crate::config::LogFormat::detect());
    }
    let audit = AuditSink::open(database.audit_log.as_deref()).map_err(|e| {
        let path = database
            .audit_log
            .as_deref()
            .unwrap_or(std::path::Path::new(""));
        format!("cannot open the audit log {}: {e}", path.display())
    })?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let url = database.database_url();
    if let Some(file) = crate::config::sqlite_file(&url) {
        let absolute = std::path::absolute(&file).unwrap_or(file);
        let create = matches!(command, KeysCommand::Create { create: true, .. });
        if !absolute.exists() && !create {
            return Err(format!(
                "no database at {} (the data directory {} is relative to {}): run this where \
                 `anonymizer serve` runs, give --data-dir or DATABASE_URL, or pass --create to start \
                 a new database",
                absolute.display(),
                database.data_dir.display(),
                std::env::current_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|_| "the current directory".into()),
            ));
        }
        eprintln!("database: {}", absolute.display());
    }
    runtime.block_on(async move {
        let store = Store::connect(&url, 1)
            .await
            .map_err(|e| format!("cannot open the database: {e}"))?;
        store.migrate().await.map_err(|e| e.to_string())?;
        let result = match command {
            KeysCommand::Create { tenant, .. } => create(&store, &audit, &tenant).await,
            KeysCommand::List { .. } => list(&store).await,
            KeysCommand::Revoke { id, .. } => revoke(&store, &audit, &id).await,
        };
        store.close().await;
        result
    })
}

/// Creates a key, prints it on stdout and its record on stderr.
async fn create(store: &Store, audit: &AuditSink, tenant: &str) -> Result<(), String> {
    let tenant = tenant.trim();
    if tenant.is_empty() {
        return Err("the tenant name must not be empty".into());
    }
    match store.create_api_key(tenant).await {
        Ok((key, record)) => {
            audit.record(&AuditEvent::command(
                "key.create",
                Outcome::Success,
                Some(record.tenant_id),
                Some(record.id),
            ));
            println!("{key}");
            eprintln!(
                "created key {} (prefix {}) for tenant '{}'; it is shown only this once",
                record.id, record.prefix, record.tenant_name
            );
            Ok(())
        }
        Err(e) => {
            audit.record(&AuditEvent::command(
                "key.create",
                Outcome::Failed,
                None,
                None,
            ));
            Err(e.to_string())
        }
    }
}

/// Prints every key as a tab-separated table (never the keys themselves).
async fn list(store: &Store) -> Result<(), String> {
    let keys = store.list_api_keys().await.map_err(|e| e.to_string())?;
    println!("id\ttenant\tprefix\tcreated_at\tstatus\tlast_used_at\trevoked_at");
    for k in keys {
        println!("{}", list_line(&k));
    }
    Ok(())
}

/// One line of `keys list`: times in RFC 3339 UTC, `-` for none (a key never used, not revoked).
fn list_line(k: &ApiKeyRecord) -> String {
    let status = if k.revoked_at.is_some() {
        "revoked"
    } else {
        "active"
    };
    let time = |t: Option<i64>| t.map_or_else(|| "-".to_string(), rfc3339);
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}",
        k.id,
        k.tenant_name,
        k.prefix,
        rfc3339(k.created_at),
        status,
        time(k.last_used_at),
        time(k.revoked_at)
    )
}

/// Revokes the key with id `id`.
async fn revoke(store: &Store, audit: &AuditSink, id: &str) -> Result<(), String> {
    let id: Uuid = id.parse().map_err(|_| format!("'{id}' is not a key id"))?;
    // the tenant, for the audit event
    let tenant = store
        .list_api_keys()
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|k| k.id == id)
        .map(|k| k.tenant_id);
    let revoked = store.revoke_api_key(id).await;
    let outcome = if revoked.is_ok() {
        Outcome::Success
    } else {
        Outcome::Failed
    };
    audit.record(&AuditEvent::command(
        "key.revoke",
        outcome,
        tenant,
        Some(id),
    ));
    revoked.map_err(|e| match e {
        StoreError::NotFound => format!("no key with id {id}"),
        other => other.to_string(),
    })?;
    eprintln!("revoked key {id}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_lines_show_rfc3339_times_and_dashes() {
        let mut k = ApiKeyRecord {
            id: Uuid::nil(),
            tenant_id: Uuid::nil(),
            tenant_name: "acme".into(),
            prefix: "0123abcd".into(),
            created_at: 1_795_256_220_000,
            revoked_at: None,
            last_used_at: None,
        };
        assert_eq!(
            list_line(&k),
            format!(
                "{}\tacme\t0123abcd\t2026-11-21T10:17:00.000Z\tactive\t-\t-",
                Uuid::nil()
            )
        );
        k.last_used_at = Some(1_795_256_280_000);
        k.revoked_at = Some(1_795_256_340_500);
        assert!(list_line(&k)
            .ends_with("\trevoked\t2026-11-21T10:18:00.000Z\t2026-11-21T10:19:00.500Z"));
    }
}
