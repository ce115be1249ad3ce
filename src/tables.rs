//! Stored datasets as encoded tables, with a small in-process cache shared by job validation (the API)
//! and the workers, so that a job submitted right after its upload is not parsed twice. Datasets are
//! immutable once committed, so an entry never goes stale; deleted datasets simply age out. A dataset is
//! parsed as its chunks arrive from the store, so loading holds the table and a few chunks, not the CSV.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use crate::codec::{read_table, CodecError, CsvOptions};
use crate::core::data::Table;
use crate::frame_reader::{parse_stored_chunks, ChunkGap};
use crate::store::{Dataset, Store, StoreError};

/// Default budget of the cache: 512 MiB of estimated table memory.
pub const DEFAULT_CACHE_BYTES: usize = 512 << 20;

/// Why a stored dataset could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Reading the chunks failed.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The stored bytes do not parse (they did at upload, so this means a change of the codec).
    #[error("{0}")]
    Codec(#[from] CodecError),
    /// The parser panicked or its task was cancelled.
    #[error("parsing the dataset failed unexpectedly")]
    Internal,
}

/// Recently used tables, least recently used evicted first, within a byte budget.
#[derive(Clone)]
pub struct TableCache {
    inner: Arc<Mutex<CacheState>>,
}

struct CacheState {
    budget: usize,
    used: usize,
    entries: VecDeque<(Uuid, Arc<Table>, usize)>,
}

impl Default for TableCache {
    fn default() -> Self {
        TableCache::with_budget(DEFAULT_CACHE_BYTES)
    }
}

impl std::fmt::Debug for TableCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableCache").finish_non_exhaustive()
    }
}

impl TableCache {
    /// A cache holding tables up to `budget` estimated bytes (0 disables caching).
    pub fn with_budget(budget: usize) -> Self {
        TableCache {
            inner: Arc::new(Mutex::new(CacheState {
                budget,
                used: 0,
                entries: VecDeque::new(),
            })),
        }
    }

    /// The cached table of dataset `id`, marked as most recently used.
    pub fn get(&self, id: Uuid) -> Option<Arc<Table>> {
        let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let position = state.entries.iter().position(|(k, _, _)| *k == id)?;
        let entry = state.entries.remove(position)?;
        let table = entry.1.clone();
        state.entries.push_back(entry);
        Some(table)
    }

    /// Caches `table` as dataset `id`, evicting the least recently used entries over the budget. A table
    /// larger than the whole budget is not cached.
    pub fn insert(&self, id: Uuid, table: Arc<Table>) {
        let size = estimated_bytes(&table);
        let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if size > state.budget {
            return;
        }
        if let Some(position) = state.entries.iter().position(|(k, _, _)| *k == id) {
            if let Some((_, _, old)) = state.entries.remove(position) {
                state.used -= old;
            }
        }
        while state.used + size > state.budget {
            match state.entries.pop_front() {
                Some((_, _, freed)) => state.used -= freed,
                None => break,
            }
        }
        state.used += size;
        state.entries.push_back((id, table, size));
    }

    /// Forgets dataset `id` (after its deletion).
    pub fn remove(&self, id: Uuid) {
        let mut state = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(position) = state.entries.iter().position(|(k, _, _)| *k == id) {
            if let Some((_, _, freed)) = state.entries.remove(position) {
                state.used -= freed;
            }
        }
    }

    /// The table of `dataset`: from the cache, or read chunk by chunk from the store and parsed on a
    /// blocking thread with the dataset's delimiter as the chunks arrive (a few chunks in flight, so the
    /// CSV is never held whole in memory).
    pub async fn load(&self, store: &Store, dataset: &Dataset) -> Result<Arc<Table>, LoadError> {
        if let Some(table) = self.get(dataset.id) {
            return Ok(table);
        }
        // the stored bytes passed the upload's field limit, which may have been lowered since
        let options =
            CsvOptions::with_delimiter(&dataset.delimiter)?.with_max_field_bytes(usize::MAX);
        let (parsed, gap) = parse_stored_chunks(
            dataset.chunk_count,
            CHUNKS_IN_FLIGHT,
            |seq| store.dataset_chunk(dataset.id, seq),
            move |frames| read_table(frames, &options),
        )
        .await;
        let parsed = parsed.ok_or(LoadError::Internal)?;
        // a chunk that could not be read makes the table incomplete, whatever the parser made of it
        match gap {
            Some(ChunkGap::Missing) => return Err(LoadError::Store(StoreError::NotFound)),
            Some(ChunkGap::Failed(error)) => return Err(LoadError::Store(error)),
            None => {}
        }
        let table = Arc::new(parsed?);
        self.insert(dataset.id, table.clone());
        Ok(table)
    }
}

/// Stored chunks queued for the parser at most (each up to [`crate::store::CHUNK_SIZE`]).
const CHUNKS_IN_FLIGHT: usize = 2;

/// Memory of a cached table: its heap bytes counted from capacities (see [`Table::heap_bytes`]) plus the
/// cache entry.
fn estimated_bytes(table: &Table) -> usize {
    table.heap_bytes() + std::mem::size_of::<Table>() + 64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: usize) -> Arc<Table> {
        let data: Vec<Vec<String>> = (0..rows).map(|i| vec![i.to_string()]).collect();
        let rows_ref: Vec<Vec<&str>> = data
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        Arc::new(Table::from_rows(&["a"], &rows_ref))
    }

    #[test]
    fn evicts_least_recently_used_within_the_budget() {
        let one = estimated_bytes(&table(100));
        let cache = TableCache::with_budget(one * 2);
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        cache.insert(a, table(100));
        cache.insert(b, table(100));
        assert!(cache.get(a).is_some()); // a is now the most recent
        cache.insert(c, table(100));
        assert!(cache.get(b).is_none());
        assert!(cache.get(a).is_some());
        assert!(cache.get(c).is_some());
        cache.remove(a);
        assert!(cache.get(a).is_none());
    }

    #[test]
    fn tables_over_the_budget_are_not_cached() {
        let cache = TableCache::with_budget(10);
        let id = Uuid::new_v4();
        cache.insert(id, table(100));
        assert!(cache.get(id).is_none());
    }
}
