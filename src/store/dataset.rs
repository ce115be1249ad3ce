//! Datasets: uploads staged chunk by chunk into `dataset_chunk` and published at the end (all or
//! nothing, without a transaction held across the network), metadata, cursor-paginated listing,
//! chunk-by-chunk reading and deletion with everything that depends on them.

use uuid::Uuid;

use super::chunk::{ChunkTable, ChunkTarget, ChunkWriter};
use super::idempotency::{key_taken_or, Idempotency, Keyed};
use super::{
    id_text, now_ms, page_limit, page_of, parse_id, to_i64, to_u64, with_pool, Cursor, Page,
    Result, Store, StoreError,
};
use crate::error_code::ErrorCode;

/// A stored dataset (its bytes live in chunks `0..chunk_count`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataset {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub name: String,
    pub byte_size: u64,
    pub sha256: String,
    pub row_count: u64,
    pub columns_json: String,
    /// The field delimiter the CSV was uploaded with (one character).
    pub delimiter: String,
    pub chunk_count: u64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What the caller learned while streaming the upload. `byte_size` and `sha256` (lowercase hex) must
/// describe exactly the bytes written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetMeta {
    pub byte_size: u64,
    pub sha256: String,
    pub row_count: u64,
    pub columns_json: String,
    /// The field delimiter (one character).
    pub delimiter: String,
}

row_struct! {
    struct DatasetRow {
        id: String,
        tenant_id: String,
        name: String,
        byte_size: i64,
        sha256: String,
        row_count: i64,
        columns_json: String,
        delimiter: String,
        chunk_count: i64,
        created_at: i64,
        updated_at: i64,
    }
}

impl TryFrom<DatasetRow> for Dataset {
    type Error = StoreError;

    fn try_from(row: DatasetRow) -> Result<Dataset> {
        Ok(Dataset {
            id: parse_id(&row.id)?,
            tenant_id: parse_id(&row.tenant_id)?,
            name: row.name,
            byte_size: to_u64(row.byte_size)?,
            sha256: row.sha256,
            row_count: to_u64(row.row_count)?,
            columns_json: row.columns_json,
            delimiter: row.delimiter,
            chunk_count: to_u64(row.chunk_count)?,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

macro_rules! dataset_columns {
    () => {
        "id, tenant_id, name, byte_size, sha256, row_count, columns_json, delimiter, chunk_count, created_at, \
         updated_at"
    };
}

/// An upload in progress, staged: the dataset row (state `staging`) and each full chunk are committed as
/// they arrive, each in a short transaction of its own, so an upload never holds a database connection or
/// SQLite's write lock while it waits for the network. Staged rows are invisible to every read; [`finish`]
/// publishes the dataset with one update, and [`abort`] deletes what was staged. An upload dropped without
/// either (a client that went away, a task cancelled) deletes its rows in the background; a process killed
/// mid-upload leaves rows that [`Store::purge_stale_uploads`] removes.
///
/// [`finish`]: DatasetUpload::finish
/// [`abort`]: DatasetUpload::abort
pub struct DatasetUpload {
    store: Store,
    writer: ChunkWriter,
    id: Uuid,
    tenant_id: Uuid,
    name: String,
    created_at: i64,
    settled: bool,
    idempotency: Option<Idempotency>,
}

impl std::fmt::Debug for DatasetUpload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatasetUpload")
            .field("id", &self.id)
            .field("tenant_id", &self.tenant_id)
            .field("bytes_written", &self.writer.written())
            .finish_non_exhaustive()
    }
}

impl DatasetUpload {
    /// The id the dataset will have once published.
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.writer.written()
    }

    /// Appends bytes; each full 1 MiB chunk is committed as it fills up.
    pub async fn write(&mut self, data: &[u8]) -> Result<()> {
        let store = self.store.clone();
        self.writer
            .write_to(&mut ChunkTarget::Committed(&store), data)
            .await
    }

    /// Stores `idempotency` with the dataset when it is published. If another dataset of the tenant holds
    /// the key by then, publishing deletes what was staged and fails with Conflict
    /// (`idempotency_conflict`); the caller then looks the key up ([`Store::dataset_by_idempotency_key`]).
    pub fn set_idempotency(&mut self, idempotency: Idempotency) {
        self.idempotency = Some(idempotency);
    }

    /// Writes the last chunk and the metadata, and publishes the dataset. Fails with Conflict (and
    /// deletes what was staged) when `meta.byte_size` or `meta.sha256` do not describe the bytes written.
    pub async fn finish(self, meta: DatasetMeta) -> Result<Dataset> {
        let DatasetMeta {
            byte_size,
            sha256,
            row_count,
            columns_json,
            delimiter,
        } = meta;
        self.publish(
            Some((byte_size, sha256)),
            row_count,
            columns_json,
            delimiter,
        )
        .await
    }

    /// Like [`finish`](DatasetUpload::finish), taking the size and SHA-256 from the bytes written (the
    /// upload hashes them as they arrive), so the caller need not hash them a second time.
    pub async fn finish_as_written(
        self,
        row_count: u64,
        columns_json: String,
        delimiter: String,
    ) -> Result<Dataset> {
        self.publish(None, row_count, columns_json, delimiter).await
    }

    /// Writes the last chunk, then publishes the metadata with one update; with `expected` (size,
    /// sha256), deletes the staged rows with Conflict unless they describe the bytes written.
    async fn publish(
        mut self,
        expected: Option<(u64, String)>,
        row_count: u64,
        columns_json: String,
        delimiter: String,
    ) -> Result<Dataset> {
        // settled from here on: every exit below either publishes or deletes explicitly
        self.settled = true;
        let store = self.store.clone();
        let writer = std::mem::replace(
            &mut self.writer,
            ChunkWriter::new(ChunkTable::Dataset, String::new()),
        );
        let finished = writer.finish_to(&mut ChunkTarget::Committed(&store)).await;
        let (chunk_count, written, sha256) = match finished {
            Ok(done) => done,
            Err(e) => {
                store.delete_staged(self.id).await.ok();
                return Err(e);
            }
        };
        if let Some((byte_size, expected_sha256)) = expected {
            if written != byte_size || !sha256.eq_ignore_ascii_case(&expected_sha256) {
                store.delete_staged(self.id).await?;
                return Err(StoreError::Conflict(
                    ErrorCode::Conflict,
                    "dataset size or checksum does not match the bytes written",
                ));
            }
        }
        let now = now_ms();
        let (key, request_hash) = match &self.idempotency {
            Some(i) => (Some(i.key.as_str()), Some(i.request_hash.as_str())),
            None => (None, None),
        };
        let sizes = to_i64(written).and_then(|w| Ok((w, to_i64(row_count)?)));
        let (written_i64, row_count_i64) = match sizes {
            Ok(sizes) => sizes,
            Err(error) => {
                store.delete_staged(self.id).await.ok();
                return Err(error);
            }
        };
        let outcome = with_pool!(store, pool => {
            sqlx::query(
                "update dataset set byte_size = $2, sha256 = $3, row_count = $4, columns_json = $5, \
                 chunk_count = $6, updated_at = $7, delimiter = $8, state = 'ready', \
                 idempotency_key = $9, request_hash = $10 \
                 where id = $1 and state = 'staging'",
            )
            .bind(id_text(self.id))
            .bind(written_i64)
            .bind(&sha256)
            .bind(row_count_i64)
            .bind(&columns_json)
            .bind(chunk_count)
            .bind(now)
            .bind(&delimiter)
            .bind(key)
            .bind(request_hash)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        });
        let published = match outcome {
            Ok(rows) => rows,
            Err(error) => {
                store.delete_staged(self.id).await.ok();
                return Err(key_taken_or(error, key.is_some()));
            }
        };
        if published != 1 {
            // the sweeper took it for abandoned (an upload stalled past the stale cutoff)
            return Err(StoreError::Conflict(
                ErrorCode::Conflict,
                "the upload was abandoned before it could be published",
            ));
        }
        Ok(Dataset {
            id: self.id,
            tenant_id: self.tenant_id,
            name: std::mem::take(&mut self.name),
            byte_size: written,
            sha256,
            row_count,
            columns_json,
            delimiter,
            chunk_count: to_u64(chunk_count)?,
            created_at: self.created_at,
            updated_at: now,
        })
    }

    /// Deletes what was staged: no dataset row and no chunk remain.
    pub async fn abort(mut self) -> Result<()> {
        self.settled = true;
        self.store.delete_staged(self.id).await
    }
}

impl Drop for DatasetUpload {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        // a dropped upload cannot wait for the database: delete its rows in the background (the
        // sweeper catches what this misses, e.g. when the runtime is shutting down)
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let store = self.store.clone();
            let id = self.id;
            runtime.spawn(async move {
                if let Err(e) = store.delete_staged(id).await {
                    tracing::warn!(dataset = %id, error = %e, "deleting an abandoned upload failed");
                }
            });
        }
    }
}

impl Store {
    /// Starts an upload for `tenant`: its dataset row is committed at once in state `staging`, invisible
    /// to every read until the upload is finished.
    pub async fn begin_dataset(&self, tenant: Uuid, name: &str) -> Result<DatasetUpload> {
        self.begin_dataset_with_id(tenant, Uuid::new_v4(), name)
            .await
    }

    /// [`Store::begin_dataset`] with an id chosen by the caller (a fresh v4 UUID, so that a name can
    /// default to it).
    pub async fn begin_dataset_with_id(
        &self,
        tenant: Uuid,
        id: Uuid,
        name: &str,
    ) -> Result<DatasetUpload> {
        let now = now_ms();
        with_pool!(self, pool => {
            sqlx::query(
                "insert into dataset (id, tenant_id, name, byte_size, sha256, row_count, columns_json, \
                 chunk_count, created_at, updated_at, state) \
                 values ($1, $2, $3, 0, '', 0, '[]', 0, $4, $4, 'staging')",
            )
            .bind(id_text(id))
            .bind(id_text(tenant))
            .bind(name)
            .bind(now)
            .execute(pool)
            .await?;
        });
        Ok(DatasetUpload {
            store: self.clone(),
            writer: ChunkWriter::new(ChunkTable::Dataset, id_text(id)),
            id,
            tenant_id: tenant,
            name: name.to_string(),
            created_at: now,
            settled: false,
            idempotency: None,
        })
    }

    /// Deletes a staged (unpublished) dataset with its chunks; a published one is left alone.
    async fn delete_staged(&self, id: Uuid) -> Result<()> {
        with_pool!(self, pool => {
            sqlx::query("delete from dataset where id = $1 and state = 'staging'")
                .bind(id_text(id))
                .execute(pool)
                .await?;
        });
        Ok(())
    }

    /// Deletes staged uploads that wrote nothing since `cutoff_ms` (their process died or their client
    /// stalled far past the idle timeout). Returns how many were deleted.
    pub async fn purge_stale_uploads(&self, cutoff_ms: i64) -> Result<u64> {
        Ok(with_pool!(self, pool => {
            sqlx::query("delete from dataset where state = 'staging' and updated_at < $1")
                .bind(cutoff_ms)
                .execute(pool)
                .await?
                .rows_affected()
        }))
    }

    /// The tenant's published dataset stored under Idempotency-Key `key`, with the fingerprint of the
    /// request that stored it; None when no dataset holds the key.
    pub async fn dataset_by_idempotency_key(
        &self,
        tenant: Uuid,
        key: &str,
    ) -> Result<Option<Keyed<Dataset>>> {
        let row = self
            .keyed_row(
                "select id, request_hash from dataset \
                 where tenant_id = $1 and idempotency_key = $2 and state = 'ready'",
                tenant,
                key,
            )
            .await?;
        Ok(match row {
            Some((id, request_hash)) => Some(Keyed {
                stored: self.get_dataset(tenant, id).await?,
                request_hash,
            }),
            None => None,
        })
    }

    /// The tenant's dataset; another tenant's id is NotFound.
    pub async fn get_dataset(&self, tenant: Uuid, id: Uuid) -> Result<Dataset> {
        let row: Option<DatasetRow> = with_pool!(self, pool => {
            sqlx::query_as(concat!(
                "select ", dataset_columns!(), " from dataset where id = $1 and tenant_id = $2 \
                 and state = 'ready'"
            ))
            .bind(id_text(id))
            .bind(id_text(tenant))
            .fetch_optional(pool)
            .await?
        });
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The tenant's datasets, newest first, at most `limit` (1..=1000) per page.
    pub async fn list_datasets(
        &self,
        tenant: Uuid,
        cursor: Option<Cursor>,
        limit: u32,
    ) -> Result<Page<Dataset>> {
        let limit = page_limit(limit);
        let rows: Vec<DatasetRow> = match cursor {
            None => with_pool!(self, pool => {
                sqlx::query_as(concat!(
                    "select ", dataset_columns!(), " from dataset where tenant_id = $1 and state = 'ready' \
                     order by created_at desc, id desc limit $2"
                ))
                .bind(id_text(tenant))
                .bind(limit + 1)
                .fetch_all(pool)
                .await?
            }),
            Some(cursor) => with_pool!(self, pool => {
                sqlx::query_as(concat!(
                    "select ", dataset_columns!(), " from dataset where tenant_id = $1 and state = 'ready' \
                     and (created_at < $2 or (created_at = $2 and id < $3)) \
                     order by created_at desc, id desc limit $4"
                ))
                .bind(id_text(tenant))
                .bind(cursor.created_at)
                .bind(id_text(cursor.id))
                .bind(limit + 1)
                .fetch_all(pool)
                .await?
            }),
        };
        let items = rows
            .into_iter()
            .map(Dataset::try_from)
            .collect::<Result<Vec<_>>>()?;
        Ok(page_of(items, limit, |d| Cursor {
            created_at: d.created_at,
            id: d.id,
        }))
    }

    /// Deletes the tenant's dataset with its chunks, its jobs and their outputs (one statement; the
    /// foreign keys cascade). A job running on it loses its lease.
    pub async fn delete_dataset(&self, tenant: Uuid, id: Uuid) -> Result<()> {
        let deleted = with_pool!(self, pool => {
            sqlx::query("delete from dataset where id = $1 and tenant_id = $2 and state = 'ready'")
                .bind(id_text(id))
                .bind(id_text(tenant))
                .execute(pool)
                .await?
                .rows_affected()
        });
        if deleted == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Chunk `seq` of a dataset, or None past the last one. Not tenant-scoped: call it only for a dataset
    /// obtained from [`Store::get_dataset`].
    pub async fn dataset_chunk(&self, id: Uuid, seq: u64) -> Result<Option<Vec<u8>>> {
        let seq = to_i64(seq)?;
        Ok(with_pool!(self, pool => {
            sqlx::query_scalar("select bytes from dataset_chunk where dataset_id = $1 and seq = $2")
                .bind(id_text(id))
                .bind(seq)
                .fetch_optional(pool)
                .await?
        }))
    }

    /// How many chunks a committed dataset has (0 for an unknown id).
    pub async fn chunk_count(&self, id: Uuid) -> Result<u64> {
        let count: i64 = with_pool!(self, pool => {
            sqlx::query_scalar(
                "select count(*) from dataset_chunk where dataset_id = $1 \
                 and exists (select 1 from dataset where id = $1 and state = 'ready')",
            )
                .bind(id_text(id))
                .fetch_one(pool)
                .await?
        });
        to_u64(count)
    }
}
