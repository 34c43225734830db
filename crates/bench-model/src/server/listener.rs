//! Accepting connections within the bounds: a connection slot each, 503 past them,
//! closed unanswered past twice as many.

use super::handle::{handle, overloaded};
use super::limits::Deadlined;
use super::peer_linux::client_uid;
use super::state::State;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub(super) async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(_) => return,
    };
    loop {
        let accepted = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, peer)) = accepted else {
            // EMFILE and the like: wait a little rather than spin.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        if let Some(uid) = state.peer_uid
            && !owned_by(&stream, peer, uid)
        {
            // Dropped: closed before a byte is read or a slot is taken.
            continue;
        }
        // Latency matters more than packet count: every chunk goes out at once.
        let _ = stream.set_nodelay(true);
        let io = hyper_util::rt::TokioIo::new(Deadlined::new(stream, state.limits.write_timeout));
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(state.limits.header_timeout);
        match state.connections.clone().try_acquire_owned() {
            Ok(permit) => {
                let state = state.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(&state, request).await) }
                    });
                    let _ = builder.serve_connection(io, service).await;
                    drop(permit);
                });
            }
            Err(_) => {
                // Over the bound: answer 503 and close, unless even the rejections are
                // at their bound, then close at once.
                let Ok(permit) = state.rejections.clone().try_acquire_owned() else {
                    continue;
                };
                let state = state.clone();
                builder
                    .keep_alive(false)
                    .header_read_timeout(Duration::from_secs(2));
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(overloaded(&state, request)) }
                    });
                    let _ = builder.serve_connection(io, service).await;
                    drop(permit);
                });
            }
        }
    }
}

/// Whether `uid` owns the client end of `stream`, which came from `peer`.
fn owned_by(stream: &tokio::net::TcpStream, peer: SocketAddr, uid: u32) -> bool {
    match (peer, stream.local_addr()) {
        (SocketAddr::V4(client), Ok(SocketAddr::V4(server))) => {
            client_uid(client, server) == Some(uid)
        }
        // The endpoint listens on 127.0.0.1 only; anything else is not ours to serve.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Endpoint, Limits, Settings};
    use crate::script::Script;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    #[test]
    fn past_twice_the_bound_a_connection_is_closed_unanswered() {
        let script = Script::from_toml("[[turns]]\ntext = \"hi\"\n", "s").unwrap();
        let endpoint = Endpoint::start(Settings {
            port: 0,
            script: script.compile().unwrap(),
            limits: Limits {
                max_connections: 1,
                ..Limits::default()
            },
            path_token: None,
            peer_uid: None,
        })
        .unwrap();
        // The first holds the one slot, the second the one rejection slot; both idle.
        let _served = TcpStream::connect(endpoint.address()).unwrap();
        let mut rejected = TcpStream::connect(endpoint.address()).unwrap();
        let mut dropped = TcpStream::connect(endpoint.address()).unwrap();
        let mut reply = Vec::new();
        dropped.read_to_end(&mut reply).unwrap();
        assert!(reply.is_empty(), "{}", String::from_utf8_lossy(&reply));
        // The rejected one is still answered, with 503.
        rejected
            .write_all(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
            .unwrap();
        let mut reply = String::new();
        rejected.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
        endpoint.stop();
    }
}
