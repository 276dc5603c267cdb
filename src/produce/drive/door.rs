//! The door into a subject's network namespace (spec/harness.md, "The
//! sandbox").
//!
//! An HTTP subject in the sandbox listens inside a network namespace of its
//! own, which mcpres's sockets cannot reach. The namespace's init holds a
//! Unix socket in the stage's report directory (on the host's file system,
//! outside every overlay): asked for `IP PORT` (a loopback address), it
//! opens a TCP connection to that address *inside* the namespace, without
//! waiting for it, and hands the socket over (`SCM_RIGHTS`). mcpres then
//! owns an ordinary TCP socket whose peer is the subject: every byte and
//! every close goes between the two ends as it would on the host's
//! loopback; nothing relays, buffers or repairs them. Only the opening of
//! the connection is made by the init.
//!
//! An [`Endpoint`] is where a subject is reached: directly (a server mcpres
//! did not start, or one outside the sandbox) or through its door. A door
//! that is not there (the init not yet started, or gone with the namespace)
//! is a refused connection, as a port nobody listens on is.

use std::io::{Read as _, Write as _};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The door's file name in a stage's report directory.
pub const DOOR_FILE: &str = "door.sock";

/// The longest path a Unix socket address holds (without its NUL).
const SUN_PATH_MAX: usize = 107;

/// Where a subject is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The address the subject listens on (as it sees it).
    pub addr: SocketAddr,
    /// The door of the namespace it listens in (`None`: the caller's own
    /// network namespace).
    door: Option<Arc<Path>>,
}

impl From<SocketAddr> for Endpoint {
    fn from(addr: SocketAddr) -> Endpoint {
        Endpoint::direct(addr)
    }
}

impl From<&Endpoint> for Endpoint {
    fn from(e: &Endpoint) -> Endpoint {
        e.clone()
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.addr.fmt(f)
    }
}

impl Endpoint {
    /// `addr` in this process's own network namespace.
    pub fn direct(addr: SocketAddr) -> Endpoint {
        Endpoint { addr, door: None }
    }

    /// `addr` inside the namespace whose door is `door`.
    pub fn through(addr: SocketAddr, door: &Path) -> Endpoint {
        Endpoint {
            addr,
            door: Some(Arc::from(door)),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn ip(&self) -> IpAddr {
        self.addr.ip()
    }

    /// Is the subject behind a door (in a network namespace of its own)?
    pub fn in_namespace(&self) -> bool {
        self.door.is_some()
    }

    /// The same place on another port.
    pub fn with_port(&self, port: u16) -> Endpoint {
        Endpoint {
            addr: SocketAddr::new(self.addr.ip(), port),
            door: self.door.clone(),
        }
    }

    /// A TCP connection to the subject within `limit`: refused, timed out or
    /// failed as the kernel said.
    pub fn connect(&self, limit: Duration) -> std::io::Result<TcpStream> {
        match &self.door {
            None => TcpStream::connect_timeout(&self.addr, limit),
            Some(door) => knock(door, self.addr, limit),
        }
    }

    /// Does something accept connections there right now (within 200 ms)?
    pub fn accepting(&self) -> bool {
        self.connect(Duration::from_millis(200)).is_ok()
    }
}

fn refused(why: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        format!("connection refused ({why})"),
    )
}

/// Connect a Unix stream socket to `path`, through `/proc/self/fd` when the
/// path is too long for a socket address.
fn unix_connect(path: &Path) -> std::io::Result<std::os::unix::net::UnixStream> {
    use std::os::unix::ffi::OsStrExt as _;
    if path.as_os_str().as_bytes().len() <= SUN_PATH_MAX {
        return std::os::unix::net::UnixStream::connect(path);
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    let name = path.file_name().unwrap_or_default();
    let handle = rustix::fs::open(
        dir,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    let short = PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&handle)
    ))
    .join(name);
    std::os::unix::net::UnixStream::connect(short)
}

/// Ask the door at `door` for a connection to `addr` and wait for it to
/// open.
fn knock(door: &Path, addr: SocketAddr, limit: Duration) -> std::io::Result<TcpStream> {
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, recvmsg};
    let until = Instant::now() + limit;
    let mut unix = match unix_connect(door) {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(refused("the subject's network namespace has no open door"));
        }
        Err(e) => return Err(e),
    };
    unix.set_read_timeout(Some(limit.max(Duration::from_millis(1))))?;
    unix.write_all(format!("{} {}\n", addr.ip(), addr.port()).as_bytes())?;
    let mut said = [0u8; 64];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = recvmsg(
        &unix,
        &mut [std::io::IoSliceMut::new(&mut said)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(std::io::Error::from)?;
    let mut socket = None;
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                socket.get_or_insert(fd);
            }
        }
    }
    let text = String::from_utf8_lossy(&said[..got.bytes.min(said.len())]).to_string();
    let Some(fd) = socket else {
        // "errno N": the kernel's answer to the connect inside.
        if let Some(n) = text
            .trim()
            .strip_prefix("errno ")
            .and_then(|n| n.parse().ok())
        {
            return Err(std::io::Error::from_raw_os_error(n));
        }
        if got.bytes == 0 {
            // Read the rest to tell a timeout from a close.
            let _ = unix.read(&mut said);
            return Err(refused("the subject's network namespace closed its door"));
        }
        return Err(std::io::Error::other(format!(
            "the door of the subject's network namespace said {text:?}"
        )));
    };
    let stream = TcpStream::from(fd);
    // Opened without waiting: wait here, as a connect with a limit does.
    let left = until.saturating_duration_since(Instant::now());
    let timeout = rustix::event::Timespec {
        tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(left.subsec_nanos()),
    };
    let mut fds = [rustix::event::PollFd::new(
        &stream,
        rustix::event::PollFlags::OUT,
    )];
    loop {
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "connection timed out",
                ));
            }
            Ok(_) => break,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(e) = stream.take_error()? {
        return Err(e);
    }
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// The door's side, run by the namespace's init on a thread of its own:
/// every request on `listener` (`IP PORT`, a loopback address) gets a TCP
/// socket connecting to that address in this namespace, or `errno N`.
/// Requests are served one at a time; none waits for a connection to open.
pub fn serve(listener: std::os::unix::net::UnixListener) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            continue;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while line.len() < 80 {
            match stream.read(&mut byte) {
                Ok(1) if byte[0] != b'\n' => line.push(byte[0]),
                _ => break,
            }
        }
        let asked = std::str::from_utf8(&line).ok().and_then(|l| {
            let (ip, port) = l.split_once(' ')?;
            Some(SocketAddr::new(ip.parse().ok()?, port.parse().ok()?))
        });
        match asked.map(open) {
            Some(Ok(socket)) => hand(&stream, &socket),
            Some(Err(errno)) => {
                let _ = stream.write_all(format!("errno {}", errno.raw_os_error()).as_bytes());
            }
            None => {
                let _ = stream.write_all(b"bad request");
            }
        }
    }
}

/// A TCP socket connecting to `addr` (loopback only), not waited for.
fn open(addr: SocketAddr) -> Result<rustix::fd::OwnedFd, rustix::io::Errno> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType, socket_with};
    if !addr.ip().to_canonical().is_loopback() {
        return Err(rustix::io::Errno::ACCESS);
    }
    let family = if addr.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let fd = socket_with(
        family,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    let _ = rustix::net::sockopt::set_tcp_nodelay(&fd, true);
    match rustix::net::connect(&fd, &addr) {
        Ok(()) | Err(rustix::io::Errno::INPROGRESS) => Ok(fd),
        Err(e) => Err(e),
    }
}

/// Send `socket` over `stream`.
fn hand(stream: &std::os::unix::net::UnixStream, socket: &rustix::fd::OwnedFd) {
    use rustix::fd::AsFd as _;
    use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags, sendmsg};
    let fds = [socket.as_fd()];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if control.push(SendAncillaryMessage::ScmRights(&fds)) {
        let _ = sendmsg(
            stream,
            &[std::io::IoSlice::new(b"ok")],
            &mut control,
            SendFlags::NOSIGNAL,
        );
    }
}

/// Bind the door at `dir/DOOR_FILE` (through the directory itself when the
/// path is too long for a socket address; the caller is single-threaded).
pub fn bind(dir: &Path) -> std::io::Result<std::os::unix::net::UnixListener> {
    use std::os::unix::ffi::OsStrExt as _;
    let path = dir.join(DOOR_FILE);
    if path.as_os_str().as_bytes().len() <= SUN_PATH_MAX {
        return std::os::unix::net::UnixListener::bind(path);
    }
    let back = std::env::current_dir()?;
    std::env::set_current_dir(dir)?;
    let bound = std::os::unix::net::UnixListener::bind(DOOR_FILE);
    std::env::set_current_dir(back)?;
    bound
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The door in this process's own namespace: a connection it opens is
    /// an ordinary one to the listener; a port nobody listens on is refused;
    /// an address beyond loopback is refused by the door itself; a missing
    /// door is a refusal.
    #[test]
    fn a_door_hands_over_real_connections() {
        let dir = tempfile::tempdir().unwrap();
        let listener = bind(dir.path()).unwrap();
        std::thread::spawn(move || serve(listener));
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = tcp.local_addr().unwrap();
        let end = Endpoint::through(addr, &dir.path().join(DOOR_FILE));
        let mut client = end.connect(Duration::from_secs(2)).unwrap();
        let (mut server, peer) = tcp.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        client.write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        server.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
        drop(tcp);
        let refused = end.connect(Duration::from_secs(2)).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
        let outside =
            Endpoint::through("192.0.2.1:80".parse().unwrap(), &dir.path().join(DOOR_FILE));
        assert_eq!(
            outside.connect(Duration::from_secs(2)).unwrap_err().kind(),
            std::io::ErrorKind::PermissionDenied
        );
        let nowhere = Endpoint::through(addr, &dir.path().join("none.sock"));
        assert_eq!(
            nowhere.connect(Duration::from_secs(1)).unwrap_err().kind(),
            std::io::ErrorKind::ConnectionRefused
        );
        assert!(!nowhere.accepting());
    }

    /// A door whose path is longer than a socket address holds is bound
    /// and reached all the same.
    #[test]
    fn a_long_path_is_reached_through_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("d".repeat(60)).join("e".repeat(60));
        std::fs::create_dir_all(&deep).unwrap();
        let listener = bind(&deep).unwrap();
        std::thread::spawn(move || serve(listener));
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let end = Endpoint::through(tcp.local_addr().unwrap(), &deep.join(DOOR_FILE));
        assert!(end.accepting());
    }
}
