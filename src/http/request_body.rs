//! A request body that reports what its reader did with it: the bytes read so far and whether its end
//! was reached. The audit layer records the bytes of every data request; the unread-body layer closes
//! connections whose answer left a body unread.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use http_body::{Frame, SizeHint};

/// What the reader of a watched body has done so far; shared with the layer that wrapped it.
#[derive(Debug, Default)]
pub struct BodyWatch {
    read: AtomicU64,
    ended: AtomicBool,
}

impl BodyWatch {
    /// Wraps `body` so that reading it updates the returned watch.
    pub fn wrap(body: Body) -> (Body, Arc<BodyWatch>) {
        let watch = Arc::new(BodyWatch::default());
        let watched = Body::new(Watched {
            inner: body,
            watch: watch.clone(),
        });
        (watched, watch)
    }

    /// Bytes of data frames read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Whether the body was read to its end (its last frame polled, or its end reported through
    /// `is_end_stream`).
    pub fn ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }
}

struct Watched {
    inner: Body,
    watch: Arc<BodyWatch>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    self.watch
                        .read
                        .fetch_add(data.len() as u64, Ordering::Relaxed);
                }
            }
            Poll::Ready(None) => self.watch.ended.store(true, Ordering::Release),
            _ => {}
        }
        if self.inner.is_end_stream() {
            self.watch.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        // a reader that stops once told the body has ended has read it all
        let ended = self.inner.is_end_stream();
        if ended {
            self.watch.ended.store(true, Ordering::Release);
        }
        ended
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
