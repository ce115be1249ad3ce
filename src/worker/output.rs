//! A run's anonymized CSV on its way to the store. The engine's thread writes it into an unnamed
//! temporary file (in the system's temporary directory: `TMPDIR`), and the terminal write reads it back
//! chunk by chunk into the store's transaction, so a job's output is never held whole in memory beside
//! its table. Outputs built in memory (tests' executors) stay in memory.

use std::fs::File;
use std::io::{self, BufWriter, SeekFrom, Write};

use futures_util::stream::{self, Stream};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use crate::store::CHUNK_SIZE;

/// The anonymized table as CSV bytes.
#[derive(Debug)]
pub enum OutputCsv {
    /// Held in memory.
    Memory(Vec<u8>),
    /// In an unnamed temporary file (removed when dropped).
    Spooled {
        /// The file, written to its end.
        file: File,
        /// Its length in bytes.
        len: u64,
    },
}

impl From<Vec<u8>> for OutputCsv {
    fn from(bytes: Vec<u8>) -> Self {
        OutputCsv::Memory(bytes)
    }
}

impl OutputCsv {
    /// Runs `write` on a buffered writer into a new temporary file and keeps the file.
    pub fn spool<E>(
        write: impl FnOnce(&mut dyn Write) -> Result<(), E>,
    ) -> Result<Result<Self, E>, io::Error> {
        let mut file = tempfile::tempfile()?;
        let mut buffered = BufWriter::with_capacity(1 << 16, &mut file);
        if let Err(error) = write(&mut buffered) {
            return Ok(Err(error));
        }
        buffered.flush()?;
        drop(buffered);
        let len = file.metadata()?.len();
        Ok(Ok(OutputCsv::Spooled { file, len }))
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            OutputCsv::Memory(bytes) => bytes.len() as u64,
            OutputCsv::Spooled { len, .. } => *len,
        }
    }

    /// A reader of the bytes from the start (a spooled file is read through a new handle).
    pub fn reader(&self) -> io::Result<Box<dyn io::Read + '_>> {
        match self {
            OutputCsv::Memory(bytes) => Ok(Box::new(&bytes[..])),
            OutputCsv::Spooled { file, .. } => {
                use std::io::Seek;
                let mut handle = file.try_clone()?;
                handle.seek(SeekFrom::Start(0))?;
                Ok(Box::new(io::BufReader::new(handle)))
            }
        }
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes from the start, in chunks of at most [`CHUNK_SIZE`] (a file is read asynchronously,
    /// one chunk in memory at a time). Each call starts again from the first byte.
    pub fn chunks(&self) -> impl Stream<Item = io::Result<Vec<u8>>> + Send + '_ {
        let source = match self {
            OutputCsv::Memory(bytes) => Source::Memory(bytes.chunks(CHUNK_SIZE)),
            OutputCsv::Spooled { file, .. } => Source::Unopened(file.try_clone()),
        };
        stream::unfold(source, |source| async move {
            match source {
                Source::Memory(mut pieces) => pieces
                    .next()
                    .map(|piece| (Ok(piece.to_vec()), Source::Memory(pieces))),
                Source::Unopened(Err(error)) => Some((Err(error), Source::Done)),
                Source::Unopened(Ok(file)) => {
                    let mut file = tokio::fs::File::from_std(file);
                    match file.seek(SeekFrom::Start(0)).await {
                        Ok(_) => read_chunk(file).await,
                        Err(error) => Some((Err(error), Source::Done)),
                    }
                }
                Source::Reading(file) => read_chunk(file).await,
                Source::Done => None,
            }
        })
    }
}

/// Where the next chunk of [`OutputCsv::chunks`] comes from.
enum Source<'a> {
    Memory(std::slice::Chunks<'a, u8>),
    /// A handle on the spooled file, not yet rewound.
    Unopened(io::Result<File>),
    Reading(tokio::fs::File),
    Done,
}

/// The next chunk of `file` (full unless at its end), and where the one after comes from.
async fn read_chunk<'a>(mut file: tokio::fs::File) -> Option<(io::Result<Vec<u8>>, Source<'a>)> {
    let mut chunk = vec![0u8; CHUNK_SIZE];
    let mut filled = 0;
    while filled < CHUNK_SIZE {
        match file.read(&mut chunk[filled..]).await {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(error) => return Some((Err(error), Source::Done)),
        }
    }
    if filled == 0 {
        return None;
    }
    chunk.truncate(filled);
    Some((Ok(chunk), Source::Reading(file)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    async fn collect(output: &OutputCsv) -> Vec<Vec<u8>> {
        output
            .chunks()
            .map(|chunk| chunk.unwrap())
            .collect::<Vec<_>>()
            .await
    }

    #[tokio::test]
    async fn spooled_output_reads_back_in_chunks_every_time() {
        let bytes: Vec<u8> = (0..CHUNK_SIZE * 2 + 10).map(|i| (i % 251) as u8).collect();
        let spooled = OutputCsv::spool(|w| w.write_all(&bytes)).unwrap().unwrap();
        assert_eq!(spooled.len(), bytes.len() as u64);
        for _ in 0..2 {
            let chunks = collect(&spooled).await;
            assert_eq!(
                chunks.iter().map(Vec::len).collect::<Vec<_>>(),
                [CHUNK_SIZE, CHUNK_SIZE, 10]
            );
            assert_eq!(chunks.concat(), bytes);
        }
        let memory = OutputCsv::from(bytes.clone());
        assert_eq!(collect(&memory).await.concat(), bytes);
        let empty = OutputCsv::spool(|_| Ok::<_, io::Error>(()))
            .unwrap()
            .unwrap();
        assert!(empty.is_empty());
        assert!(collect(&empty).await.is_empty());
    }

    #[test]
    fn a_failed_write_is_the_writer_s_error() {
        let result = OutputCsv::spool(|_| Err::<(), _>("no")).unwrap();
        assert!(matches!(result, Err("no")));
    }
}
