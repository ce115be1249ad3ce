//! Chunked payload writing shared by dataset uploads and job outputs: bytes are gathered into chunks of
//! exactly [`CHUNK_SIZE`] (the last one may be shorter) and inserted either inside the caller's
//! transaction (job outputs) or each in a short transaction of its own (staged uploads, see
//! `dataset.rs`), so at most one chunk is held in memory.

use sha2::{Digest, Sha256};

use super::{now_ms, with_tx, Result, Store, Tx, CHUNK_SIZE};
use crate::core::hex::hex;

/// Where full chunks go.
pub(super) enum ChunkTarget<'a> {
    /// Into the caller's open transaction.
    Tx(&'a mut Tx),
    /// Each chunk committed at once in a transaction of its own, which also touches the staged
    /// dataset's `updated_at` (so the stale-upload sweeper sees it is alive).
    Committed(&'a Store),
}

#[derive(Debug, Clone, Copy)]
pub(super) enum ChunkTable {
    Dataset,
    JobOutput,
}

impl ChunkTable {
    fn insert_sql(self) -> &'static str {
        match self {
            ChunkTable::Dataset => {
                "insert into dataset_chunk (dataset_id, seq, bytes) values ($1, $2, $3)"
            }
            ChunkTable::JobOutput => {
                "insert into job_output_chunk (job_id, seq, bytes) values ($1, $2, $3)"
            }
        }
    }

    /// Marks the owner alive, for owners that can go stale (staged datasets).
    fn touch_sql(self) -> Option<&'static str> {
        match self {
            ChunkTable::Dataset => Some("update dataset set updated_at = $2 where id = $1"),
            ChunkTable::JobOutput => None,
        }
    }
}

pub(super) struct ChunkWriter {
    table: ChunkTable,
    owner: String,
    buf: Vec<u8>,
    seq: i64,
    written: u64,
    sha256: Sha256,
}

impl ChunkWriter {
    pub(super) fn new(table: ChunkTable, owner: String) -> ChunkWriter {
        ChunkWriter {
            table,
            owner,
            buf: Vec::new(),
            seq: 0,
            written: 0,
            sha256: Sha256::new(),
        }
    }

    pub(super) fn written(&self) -> u64 {
        self.written
    }

    pub(super) async fn write(&mut self, tx: &mut Tx, data: &[u8]) -> Result<()> {
        self.write_to(&mut ChunkTarget::Tx(tx), data).await
    }

    pub(super) async fn write_to(
        &mut self,
        target: &mut ChunkTarget<'_>,
        mut data: &[u8],
    ) -> Result<()> {
        self.sha256.update(data);
        self.written += data.len() as u64;
        while !data.is_empty() {
            if self.buf.is_empty() && data.len() >= CHUNK_SIZE {
                // a whole chunk straight from the caller's buffer, without copying
                let (chunk, rest) = data.split_at(CHUNK_SIZE);
                self.insert(target, chunk).await?;
                data = rest;
                continue;
            }
            if self.buf.capacity() == 0 {
                self.buf.reserve_exact(CHUNK_SIZE);
            }
            let take = (CHUNK_SIZE - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() == CHUNK_SIZE {
                let chunk = std::mem::take(&mut self.buf);
                self.insert(target, &chunk).await?;
                self.buf = chunk;
                self.buf.clear();
            }
        }
        Ok(())
    }

    /// Writes the last, partial chunk. Returns (chunk count, byte count, sha256 hex).
    pub(super) async fn finish(self, tx: &mut Tx) -> Result<(i64, u64, String)> {
        self.finish_to(&mut ChunkTarget::Tx(tx)).await
    }

    /// [`ChunkWriter::finish`] into any target.
    pub(super) async fn finish_to(
        mut self,
        target: &mut ChunkTarget<'_>,
    ) -> Result<(i64, u64, String)> {
        if !self.buf.is_empty() {
            let chunk = std::mem::take(&mut self.buf);
            self.insert(target, &chunk).await?;
        }
        Ok((self.seq, self.written, hex(&self.sha256.finalize())))
    }

    async fn insert(&mut self, target: &mut ChunkTarget<'_>, chunk: &[u8]) -> Result<()> {
        debug_assert!(chunk.len() <= CHUNK_SIZE);
        match target {
            ChunkTarget::Tx(tx) => self.insert_in(tx, chunk).await?,
            ChunkTarget::Committed(store) => {
                // a closed semaphore cannot happen (it is never closed); write without a permit then
                let _permit = store.upload_writers.acquire().await.ok();
                let mut tx = store.begin_write().await?;
                self.insert_in(&mut tx, chunk).await?;
                if let Some(touch) = self.table.touch_sql() {
                    with_tx!(&mut tx, conn => {
                        sqlx::query(touch)
                            .bind(&self.owner)
                            .bind(now_ms())
                            .execute(&mut *conn)
                            .await?;
                    });
                }
                tx.commit().await?;
            }
        }
        self.seq += 1;
        Ok(())
    }

    async fn insert_in(&self, tx: &mut Tx, chunk: &[u8]) -> Result<()> {
        with_tx!(tx, conn => {
            sqlx::query(self.table.insert_sql())
                .bind(&self.owner)
                .bind(self.seq)
                .bind(chunk)
                .execute(&mut *conn)
                .await?;
        });
        Ok(())
    }
}
