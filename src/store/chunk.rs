//! Chunked payload writing shared by dataset uploads and job outputs: bytes are gathered into chunks of
//! exactly [`CHUNK_SIZE`] (the last one may be shorter) and inserted inside the caller's transaction, so at
//! most one chunk is held in memory.

use sha2::{Digest, Sha256};

use super::{with_tx, Result, Tx, CHUNK_SIZE};

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

    pub(super) async fn write(&mut self, tx: &mut Tx, mut data: &[u8]) -> Result<()> {
        self.sha256.update(data);
        self.written += data.len() as u64;
        while !data.is_empty() {
            if self.buf.is_empty() && data.len() >= CHUNK_SIZE {
                // a whole chunk straight from the caller's buffer, without copying
                let (chunk, rest) = data.split_at(CHUNK_SIZE);
                self.insert(tx, chunk).await?;
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
                self.insert(tx, &chunk).await?;
                self.buf = chunk;
                self.buf.clear();
            }
        }
        Ok(())
    }

    /// Writes the last, partial chunk. Returns (chunk count, byte count, sha256 hex).
    pub(super) async fn finish(mut self, tx: &mut Tx) -> Result<(i64, u64, String)> {
        if !self.buf.is_empty() {
            let chunk = std::mem::take(&mut self.buf);
            self.insert(tx, &chunk).await?;
        }
        let digest = self.sha256.finalize();
        let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
        Ok((self.seq, self.written, hex))
    }

    async fn insert(&mut self, tx: &mut Tx, chunk: &[u8]) -> Result<()> {
        debug_assert!(chunk.len() <= CHUNK_SIZE);
        with_tx!(tx, conn => {
            sqlx::query(self.table.insert_sql())
                .bind(&self.owner)
                .bind(self.seq)
                .bind(chunk)
                .execute(&mut *conn)
                .await?;
        });
        self.seq += 1;
        Ok(())
    }
}
