//! A blocking [`io::Read`] over byte frames arriving on a tokio channel, so that the synchronous CSV
//! parser can run on a blocking thread while async code feeds it (an upload's body, a stored dataset's
//! chunks) without the whole input ever being held in memory. End of input when the sender is dropped.

use std::future::Future;
use std::io::{self, Read};

use axum::body::Bytes;
use tokio::sync::mpsc;

/// Reads the frames of `receiver` in order. Call only from a blocking thread.
pub struct FrameReader {
    receiver: mpsc::Receiver<Bytes>,
    current: Bytes,
}

impl FrameReader {
    /// A reader over the frames `receiver` will deliver.
    pub fn new(receiver: mpsc::Receiver<Bytes>) -> Self {
        FrameReader {
            receiver,
            current: Bytes::new(),
        }
    }
}

impl Read for FrameReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.receiver.blocking_recv() {
                Some(frame) => self.current = frame,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        let head = self.current.split_to(n);
        buf[..n].copy_from_slice(&head);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_in_order_until_the_sender_is_dropped() {
        let (sender, receiver) = mpsc::channel(4);
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            FrameReader::new(receiver)
                .read_to_string(&mut text)
                .map(|_| text)
        });
        for frame in ["a,b\n", "", "1,", "2\n"] {
            sender.blocking_send(Bytes::from(frame)).unwrap();
        }
        drop(sender);
        assert_eq!(reader.join().unwrap().unwrap(), "a,b\n1,2\n");
    }
}

/// Why stored chunks stopped before the last one.
#[derive(Debug)]
pub enum ChunkGap<E> {
    /// A chunk the count promised is not stored.
    Missing,
    /// Reading a chunk failed.
    Failed(E),
}

/// Parses `chunks` stored chunks with `parse` on a blocking thread as `fetch(seq)` delivers them, at
/// most `in_flight` queued, so the whole input is never held in memory. Returns the parse (`None` when
/// the parser panicked) and, when the chunks stopped early, why: the parse of an incomplete input must
/// then not be trusted.
pub async fn parse_stored_chunks<T, E, Fetch, Fut>(
    chunks: u64,
    in_flight: usize,
    mut fetch: Fetch,
    parse: impl FnOnce(FrameReader) -> T + Send + 'static,
) -> (Option<T>, Option<ChunkGap<E>>)
where
    T: Send + 'static,
    Fetch: FnMut(u64) -> Fut,
    Fut: Future<Output = Result<Option<Vec<u8>>, E>>,
{
    let (sender, receiver) = mpsc::channel::<Bytes>(in_flight);
    let parser = tokio::task::spawn_blocking(move || parse(FrameReader::new(receiver)));
    let mut gap = None;
    for seq in 0..chunks {
        let chunk = match fetch(seq).await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => {
                gap = Some(ChunkGap::Missing);
                break;
            }
            Err(error) => {
                gap = Some(ChunkGap::Failed(error));
                break;
            }
        };
        if sender.send(Bytes::from(chunk)).await.is_err() {
            // the parser stopped early: its result is the answer
            break;
        }
    }
    drop(sender);
    (parser.await.ok(), gap)
}
