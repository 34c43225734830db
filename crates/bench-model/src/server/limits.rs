//! The endpoint's bounds, and the write deadline that holds a client that stops reading.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The bounds of the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The largest request body read (default 32 MiB; claude-code's turns are ~100 KB
    /// and grow with the conversation).
    pub max_body_bytes: usize,
    /// Connections served at once (default 64).
    pub max_connections: usize,
    /// Time for a request's headers to arrive, and for an idle keep-alive connection
    /// to send its next request (default 60 s).
    pub header_timeout: Duration,
    /// Time for a request's body to arrive (default 60 s).
    pub body_timeout: Duration,
    /// Time a write may make no progress before the connection is closed (default 30 s).
    pub write_timeout: Duration,
    /// The longest an answer may take from its start to its last frame (default 10
    /// min): one whose schedule runs longer ends there, cut.
    pub answer_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: 32 << 20,
            max_connections: 64,
            header_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(60),
            write_timeout: Duration::from_secs(30),
            answer_timeout: Duration::from_secs(600),
        }
    }
}

/// A TCP stream whose writes fail after making no progress for a while: a client that
/// stops reading cannot hold a connection (and its answer's timer) for good.
pub(super) struct Deadlined<S = tokio::net::TcpStream> {
    stream: S,
    timeout: Duration,
    stall: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> Deadlined<S> {
    pub(super) fn new(stream: S, timeout: Duration) -> Deadlined<S> {
        Deadlined {
            stream,
            timeout,
            stall: None,
        }
    }

    fn bounded<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        match polled {
            Poll::Ready(result) => {
                self.stall = None;
                Poll::Ready(result)
            }
            Poll::Pending => {
                let timeout = self.timeout;
                let stall = self
                    .stall
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                if stall.as_mut().poll(cx).is_ready() {
                    self.stall = None;
                    Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the client read nothing for the write timeout",
                    )))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Deadlined<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Deadlined<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.bounded(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.bounded(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let polled = Pin::new(&mut self.stream).poll_flush(cx);
        self.bounded(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_until_done(stream: &mut Deadlined<tokio::io::DuplexStream>) -> std::io::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(std::future::poll_fn(|cx| {
            // Writes until one fails; the peer never reads, so the pipe fills.
            loop {
                match Pin::new(&mut *stream).poll_write(cx, &[0; 1024]) {
                    Poll::Ready(Ok(_)) => continue,
                    Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                    Poll::Pending => return Poll::Pending,
                }
            }
        }))
    }

    #[test]
    fn a_write_that_makes_no_progress_fails_with_a_timeout() {
        let (near, _far) = tokio::io::duplex(4096);
        let mut stream = Deadlined::new(near, Duration::from_millis(20));
        let error = write_until_done(&mut stream).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    }

    #[test]
    fn the_defaults_bound_every_wait() {
        let limits = Limits::default();
        assert!(limits.max_connections > 0 && limits.max_body_bytes > 0);
        for wait in [
            limits.header_timeout,
            limits.body_timeout,
            limits.write_timeout,
        ] {
            assert!(
                !wait.is_zero() && wait <= Duration::from_secs(60),
                "{wait:?}"
            );
        }
    }
}
