//! `anonymizer keys create|list|revoke`: API keys, managed against the database the server uses. A new
//! key is printed once; only its hash is stored.

use uuid::Uuid;

use super::KeysCommand;
use crate::store::Store;

/// Runs a keys subcommand; errors are one-line messages.
pub fn run(command: KeysCommand) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let database = match &command {
            KeysCommand::Create { database, .. }
            | KeysCommand::List { database }
            | KeysCommand::Revoke { database, .. } => database.database_url(),
        };
        let store = Store::connect(&database, 1)
            .await
            .map_err(|e| format!("cannot open the database: {e}"))?;
        store.migrate().await.map_err(|e| e.to_string())?;
        let result = match command {
            KeysCommand::Create { tenant, .. } => {
                let tenant = tenant.trim();
                if tenant.is_empty() {
                    return Err("the tenant name must not be empty".into());
                }
                let (key, record) = store
                    .create_api_key(tenant)
                    .await
                    .map_err(|e| e.to_string())?;
                println!("{key}");
                eprintln!(
                    "created key {} (prefix {}) for tenant '{}'; it is shown only this once",
                    record.id, record.prefix, record.tenant_name
                );
                Ok(())
            }
            KeysCommand::List { .. } => {
                let keys = store.list_api_keys().await.map_err(|e| e.to_string())?;
                println!("id\ttenant\tprefix\tcreated_at\tstatus");
                for k in keys {
                    let status = if k.revoked_at.is_some() {
                        "revoked"
                    } else {
                        "active"
                    };
                    println!(
                        "{}\t{}\t{}\t{}\t{}",
                        k.id, k.tenant_name, k.prefix, k.created_at, status
                    );
                }
                Ok(())
            }
            KeysCommand::Revoke { id, .. } => {
                let id: Uuid = id.parse().map_err(|_| format!("'{id}' is not a key id"))?;
                store.revoke_api_key(id).await.map_err(|e| match e {
                    crate::store::StoreError::NotFound => format!("no key with id {id}"),
                    other => other.to_string(),
                })?;
                eprintln!("revoked key {id}");
                Ok(())
            }
        };
        store.close().await;
        result
    })
}
