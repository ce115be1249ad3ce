//! Lingering close of client connections. The service often answers before it has read a request's body
//! (413 for an oversized body, 401 for a wrong key, 422 for a CSV refused in its first lines) and then
//! closes the connection. Closing a socket whose receive buffer still holds unread bytes makes the kernel
//! send a reset, and a reset can reach the client before it has read the answer: the client then sees
//! "connection reset" instead of the coded error. So a connection that ends is first half-closed (the
//! client sees the end of the answer) and whatever the client still sends is read and discarded, for at
//! most [`LINGER_TIME`] and [`LINGER_BYTES`], before the socket is closed — the way web servers such as
//! nginx close connections (`lingering_close`).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;

/// The longest a closed connection's unread input is drained.
pub const LINGER_TIME: Duration = Duration::from_secs(2);

/// The most bytes drained from a closed connection.
pub const LINGER_BYTES: usize = 16 << 20;

/// A client connection that lingers when dropped; it also holds the connection's slot of the
/// connection cap until the socket is really closed.
#[derive(Debug)]
pub struct LingeringStream {
    stream: Option<TcpStream>,
    permit: Option<OwnedSemaphorePermit>,
}

impl LingeringStream {
    /// Wraps an accepted connection and its slot of the connection cap.
    pub fn new(stream: TcpStream, permit: OwnedSemaphorePermit) -> Self {
        Self {
            stream: Some(stream),
            permit: Some(permit),
        }
    }

    fn stream(&mut self) -> io::Result<&mut TcpStream> {
        self.stream
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }
}

impl AsyncRead for LingeringStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => Pin::new(stream).poll_read(cx, buf),
            Err(error) => Poll::Ready(Err(error)),
        }
    }
}

impl AsyncWrite for LingeringStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.stream() {
            Ok(stream) => Pin::new(stream).poll_write(cx, buf),
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => Pin::new(stream).poll_flush(cx),
            Err(error) => Poll::Ready(Err(error)),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => Pin::new(stream).poll_shutdown(cx),
            Err(error) => Poll::Ready(Err(error)),
        }
    }
}

impl Drop for LingeringStream {
    fn drop(&mut self) {
        let (Some(stream), permit) = (self.stream.take(), self.permit.take()) else {
            return;
        };
        // outside a runtime (the process is ending) the socket simply closes
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                linger(stream).await;
                drop(permit);
            });
        }
    }
}

/// Half-closes `stream`, then reads and discards its input until the client closes its side, or for
/// [`LINGER_TIME`], or [`LINGER_BYTES`], whichever comes first.
async fn linger(mut stream: TcpStream) {
    let _ = stream.shutdown().await;
    let mut scratch = vec![0u8; 64 << 10];
    let mut drained = 0usize;
    let _ = tokio::time::timeout(LINGER_TIME, async {
        while drained < LINGER_BYTES {
            match stream.read(&mut scratch).await {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;
    use tokio::net::TcpListener;
    use tokio::sync::Semaphore;

    /// A server that answers without reading the request, then drops the connection; the client sends
    /// its whole body, as HTTP clients do, and must still read the whole answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_answer_sent_before_the_body_was_read_reaches_the_client() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let permits = Arc::new(Semaphore::new(1));
        let server = {
            let permits = permits.clone();
            tokio::spawn(async move {
                let (stream, _) = listener.accept().await.expect("accept");
                let permit = permits.try_acquire_owned().expect("a slot");
                let mut connection = LingeringStream::new(stream, permit);
                // let the client's first megabytes arrive unread, then answer and close
                tokio::time::sleep(Duration::from_millis(200)).await;
                connection
                    .write_all(b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\n\r\n")
                    .await
                    .expect("answer");
                let _ = connection.shutdown().await;
            })
        };
        let mut client = TcpStream::connect(address).await.expect("connect");
        let chunk = vec![b'x'; 1 << 20];
        client.write_all(&chunk).await.expect("first MiB");
        server.await.expect("server");
        // the server closed its side with unread input; the rest of the body still goes out (without
        // lingering the reset makes these writes fail, and an HTTP client reports that failure)
        tokio::time::sleep(Duration::from_millis(100)).await;
        for _ in 0..2 {
            client
                .write_all(&chunk)
                .await
                .expect("the rest of the body");
        }
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut answer))
            .await
            .expect("the answer within 5 s");
        assert!(read.is_ok(), "the connection was reset: {read:?}");
        assert!(answer.starts_with(b"HTTP/1.1 413"), "{answer:?}");
        // the slot is given back once the lingering ends
        let started = Instant::now();
        while permits.available_permits() == 0 {
            assert!(started.elapsed() < LINGER_TIME + Duration::from_secs(1));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
