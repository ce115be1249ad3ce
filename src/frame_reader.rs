//! A blocking [`io::Read`] over byte frames arriving on a tokio channel, so that the synchronous CSV
//! parser can run on a blocking thread while async code feeds it (an upload's body, a stored dataset's
//! chunks) without the whole input ever being held in memory. End of input when the sender is dropped.

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
