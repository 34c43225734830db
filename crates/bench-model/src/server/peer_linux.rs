//! Who holds the other end of a loopback connection: the uid that owns the client's
//! socket, asked of the kernel with one exact sock_diag lookup (the interface `ss` uses),
//! so the endpoint can serve only the trial's uid. A neighbour then cannot play the
//! trial's turns even with the token, nor hold a connection slot: its connections are
//! closed before a byte of them is read.

use rustix::net::{AddressFamily, SocketFlags, SocketType, netlink, sockopt};
use std::net::SocketAddrV4;
use std::time::Duration;

/// `SOCK_DIAG_BY_FAMILY`, the netlink message type of a sock_diag request and answer.
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `NLMSG_ERROR`: the kernel's answer when no socket matched (or the request was bad).
const NLMSG_ERROR: u16 = 2;
/// `NLM_F_REQUEST`.
const NLM_F_REQUEST: u16 = 1;
/// The length of `struct nlmsghdr`.
const HEADER: usize = 16;
/// Where `idiag_uid` sits in an answer: after the netlink header, the four bytes of
/// family, state, timer and retransmits, the 48-byte socket id, and expires, rqueue and
/// wqueue.
const UID_AT: usize = HEADER + 4 + 48 + 12;
/// How long the kernel may take to answer (it answers at once; a bound all the same).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(1);

/// The sock_diag request for the TCP socket whose local end is `client` and whose
/// remote end is `server`: the client's own socket, and so its owner.
pub(super) fn request(client: SocketAddrV4, server: SocketAddrV4) -> [u8; 72] {
    let mut message = [0u8; 72];
    message[0..4].copy_from_slice(&72u32.to_ne_bytes());
    message[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    message[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    // struct inet_diag_req_v2: family, protocol, extensions, padding, states.
    message[16] = libc::AF_INET as u8;
    message[17] = libc::IPPROTO_TCP as u8;
    message[20..24].copy_from_slice(&u32::MAX.to_ne_bytes());
    // struct inet_diag_sockid: ports and addresses in network order, no interface,
    // and INET_DIAG_NOCOOKIE (all ones): look the socket up by its addresses.
    message[24..26].copy_from_slice(&client.port().to_be_bytes());
    message[26..28].copy_from_slice(&server.port().to_be_bytes());
    message[28..32].copy_from_slice(&client.ip().octets());
    message[44..48].copy_from_slice(&server.ip().octets());
    message[64..72].copy_from_slice(&[0xff; 8]);
    message
}

/// The owner's uid in the kernel's answer; `None` when no socket matched.
pub(super) fn parse_answer(answer: &[u8]) -> Option<u32> {
    let kind = u16::from_ne_bytes(answer.get(4..6)?.try_into().ok()?);
    if kind != SOCK_DIAG_BY_FAMILY || kind == NLMSG_ERROR {
        return None;
    }
    Some(u32::from_ne_bytes(
        answer.get(UID_AT..UID_AT + 4)?.try_into().ok()?,
    ))
}

/// The uid that owns the client end of the loopback connection `client` -> `server`;
/// `None` when the kernel knows no such socket (it closed already) or cannot be asked.
pub(super) fn client_uid(client: SocketAddrV4, server: SocketAddrV4) -> Option<u32> {
    let socket = rustix::net::socket_with(
        AddressFamily::NETLINK,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        Some(netlink::SOCK_DIAG),
    )
    .ok()?;
    sockopt::set_socket_timeout(&socket, sockopt::Timeout::Recv, Some(ANSWER_TIMEOUT)).ok()?;
    // An unconnected netlink socket sends to the kernel.
    rustix::net::send(
        &socket,
        &request(client, server),
        rustix::net::SendFlags::empty(),
    )
    .ok()?;
    let mut answer = [0u8; 512];
    let (length, _) =
        rustix::net::recv(&socket, &mut answer, rustix::net::RecvFlags::empty()).ok()?;
    parse_answer(answer.get(..length)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener, TcpStream};

    #[test]
    fn the_request_names_the_client_socket_by_its_addresses() {
        let client = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0x1234);
        let server = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0x5678);
        let message = request(client, server);
        assert_eq!(&message[24..28], &[0x12, 0x34, 0x56, 0x78]);
        assert_eq!(&message[28..32], &[127, 0, 0, 1]);
        assert_eq!(&message[44..48], &[127, 0, 0, 1]);
    }

    #[test]
    fn an_error_answer_names_no_owner() {
        let mut answer = [0u8; 36];
        answer[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        assert_eq!(parse_answer(&answer), None);
        assert_eq!(parse_answer(&[0u8; 3]), None);
    }

    #[test]
    fn the_owner_of_our_own_connection_is_us() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let (std::net::SocketAddr::V4(from), std::net::SocketAddr::V4(to)) = (
            accepted.peer_addr().unwrap(),
            accepted.local_addr().unwrap(),
        ) else {
            panic!("not IPv4");
        };
        assert_eq!(
            client_uid(from, to),
            Some(rustix::process::geteuid().as_raw())
        );
        drop(client);
    }
}
