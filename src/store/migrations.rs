//! The schema migrations of each backend, embedded in the binary (the folders under `migrations/` hold
//! files of the same names) and handed to sqlx's migrator as a migration source. A file
//! `0007_name.sql` is version 7 with the description `name` (underscores read as spaces), exactly as sqlx
//! names migrations it reads from a folder, so databases migrated before keep their checksums; a test
//! compares this list with the folders.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

/// Embeds the migration files, which both backends name alike: the file names (in order) and, per
/// backend, each file's SQL, read at compile time.
macro_rules! embedded {
    ($($file:literal),* $(,)?) => {
        /// The migrations of PostgreSQL: file name and SQL.
        pub const POSTGRES: &[(&str, &str)] = &[$((
            $file,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres/", $file)),
        )),*];

        /// The migrations of SQLite: file name and SQL.
        pub const SQLITE: &[(&str, &str)] = &[$((
            $file,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite/", $file)),
        )),*];
    };
}

embedded!(
    "0001_initial.sql",
    "0002_dataset_delimiter.sql",
    "0003_chunk_storage.sql",
    "0004_fair_claim.sql",
    "0005_api_key_last_used.sql",
    "0006_dataset_staging.sql",
    "0007_resources.sql",
    "0008_pseudonym_keys.sql",
    "0009_upload_idempotency.sql",
    "0010_job_events_and_webhooks.sql",
);

/// A list of embedded migration files as a sqlx migration source.
#[derive(Debug, Clone, Copy)]
pub struct Embedded(pub &'static [(&'static str, &'static str)]);

impl Embedded {
    /// The migrations, named as sqlx names the files of a folder.
    pub fn migrations(self) -> Result<Vec<Migration>, BoxDynError> {
        self.0
            .iter()
            .map(|&(file, sql)| {
                let (version, rest) = file
                    .split_once('_')
                    .ok_or_else(|| format!("migration {file} has no version prefix"))?;
                let version: i64 = version
                    .parse()
                    .map_err(|_| format!("migration {file} has no integer version"))?;
                let description = rest.trim_end_matches(".sql").replace('_', " ");
                Ok(Migration::new(
                    version,
                    Cow::Owned(description),
                    MigrationType::Simple,
                    Cow::Borrowed(sql),
                    sql.starts_with("-- no-transaction"),
                ))
            })
            .collect()
    }

    /// The migrator of these migrations.
    pub async fn migrator(self) -> Result<Migrator, sqlx::migrate::MigrateError> {
        Migrator::new(self).await
    }
}

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 's>> {
        Box::pin(async move { self.migrations() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every file of each folder is embedded, in order, with the version, description, checksum and
    /// transaction mode sqlx gives it when it reads the folder.
    #[tokio::test]
    async fn the_embedded_lists_are_the_folders() {
        for (backend, files) in [("postgres", POSTGRES), ("sqlite", SQLITE)] {
            let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(backend);
            let from_folder = Migrator::new(folder.as_path()).await.unwrap();
            let embedded = Embedded(files).migrator().await.unwrap();
            let key = |m: &Migration| {
                (
                    m.version,
                    m.description.to_string(),
                    m.checksum.to_vec(),
                    m.no_tx,
                    m.migration_type,
                )
            };
            let expected: Vec<_> = from_folder.iter().map(key).collect();
            let actual: Vec<_> = embedded.iter().map(key).collect();
            assert_eq!(actual, expected, "{backend}");
            assert!(!actual.is_empty());
        }
    }
}
