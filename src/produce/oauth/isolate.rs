//! Network isolation of `mcpres oauth run` (spec/oauth-boundary.md, "Run
//! isolation"): the runner re-executes itself under `unshare -rn` (a new user
//! and network namespace, which an unprivileged user may create where the
//! kernel allows it), brings the namespace's loopback interface up with `ip
//! link set lo up`, and runs there, so the runner, the in-process fixture and
//! every subject it starts share a namespace whose only interface is
//! loopback: a connection to any other address fails with "network is
//! unreachable" instead of leaving the machine.
//!
//! Inside, the namespace is not taken on trust: the interfaces the kernel
//! lists for the process (`/proc/self/net/dev`) must be `lo` alone.
//!
//! Also here: sampling a subject's sockets for remote addresses that are not
//! loopback (what counts as an external request of the subject).

use std::net::{IpAddr, SocketAddr};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::produce::drive::proc;

/// Set (to `1`) in the environment of the runner re-executed inside the
/// namespace; never passed to a subject (subjects get only `--env`).
pub const INSIDE_ENV: &str = "MCPRES_OAUTH_NETNS";

/// The network interfaces of the calling process's network namespace.
pub use crate::produce::drive::proc::interfaces;

/// `name` as an executable file: in `PATH`, else in the system directories
/// (`ip` lives in `/usr/sbin`, often not in an unprivileged user's `PATH`).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::PermissionsExt as _;
                m.is_file() && m.permissions().mode() & 0o111 != 0
            })
        })
}

/// Can this process run in a namespace of its own? Tried for real: `unshare
/// -rn ip link set lo up` must succeed. The `unshare` program, or why not.
pub fn available() -> Result<PathBuf, String> {
    let unshare = find_tool("unshare").ok_or("`unshare` (util-linux) is not installed")?;
    let ip = find_tool("ip").ok_or("`ip` (iproute2) is not installed")?;
    let out = Command::new(&unshare)
        .args(["-rn"])
        .arg(&ip)
        .args(["link", "set", "lo", "up"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", unshare.display()))?;
    if out.status.success() {
        Ok(unshare)
    } else {
        let why = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "`unshare -rn` is refused here ({})",
            why.trim().lines().next().unwrap_or("no reason given")
        ))
    }
}

/// Replace this process with itself (same arguments) under `unshare -rn`,
/// with [`INSIDE_ENV`] set. Returns only when the exec failed. The process
/// id stays the same, so a signal sent to it reaches the runner.
pub fn reexec(unshare: &Path) -> std::io::Error {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return e,
    };
    Command::new(unshare)
        .arg("-rn")
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env(INSIDE_ENV, "1")
        .exec()
}

/// Inside the namespace: bring `lo` up and check that it is the only
/// interface. The interfaces, or why the namespace is not what it must be.
pub fn enter() -> Result<Vec<String>, String> {
    let ip = find_tool("ip").ok_or("`ip` (iproute2) is not installed")?;
    let out = Command::new(&ip)
        .args(["link", "set", "lo", "up"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ip.display()))?;
    if !out.status.success() {
        return Err(format!(
            "`ip link set lo up` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let names = interfaces();
    if names != ["lo"] {
        return Err(format!(
            "{INSIDE_ENV} is set but this process's network namespace has the interfaces {names:?}, not `lo` alone"
        ));
    }
    Ok(names)
}

/// Is `addr` a peer that counts as an external request: neither loopback nor
/// the unspecified address (a listener, or a socket not yet connected)?
pub fn is_external(addr: &SocketAddr) -> bool {
    let ip = match addr.ip() {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    !(ip.is_loopback() || ip.is_unspecified())
}

/// The remote addresses off loopback of the TCP sockets held by process
/// `pid` and its descendants, right now.
pub fn external_peers(pid: u32) -> Vec<SocketAddr> {
    proc::socket_peers(&proc::process_tree(pid))
        .into_iter()
        .map(|(_, remote, _)| remote)
        .filter(is_external)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(bytes: &[u8], port: u16) -> String {
        let words: String = bytes
            .chunks(4)
            .map(|w| format!("{:08X}", u32::from_ne_bytes(w.try_into().unwrap())))
            .collect();
        format!("{words}:{port:04X}")
    }

    #[test]
    fn proc_net_addresses_decode_and_only_off_loopback_peers_are_external() {
        let lo = proc::decode_addr(&field(&[127, 0, 0, 1], 8080)).unwrap();
        assert_eq!(lo, "127.0.0.1:8080".parse().unwrap());
        assert!(!is_external(&lo));
        let net = proc::decode_addr(&field(&[192, 0, 2, 1], 80)).unwrap();
        assert_eq!(net, "192.0.2.1:80".parse().unwrap());
        assert!(is_external(&net));
        let listener = proc::decode_addr(&field(&[0, 0, 0, 0], 0)).unwrap();
        assert!(!is_external(&listener));
        let mut mapped = [0u8; 16];
        mapped[10] = 0xff;
        mapped[11] = 0xff;
        mapped[12..].copy_from_slice(&[127, 0, 0, 1]);
        let v6 = proc::decode_addr(&field(&mapped, 443)).unwrap();
        assert_eq!(v6, "[::ffff:127.0.0.1]:443".parse().unwrap());
        assert!(!is_external(&v6));
        let mut doc = [0u8; 16];
        doc[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        assert!(is_external(&proc::decode_addr(&field(&doc, 443)).unwrap()));
        assert_eq!(proc::decode_addr("0100007F"), None);
        assert_eq!(proc::decode_addr("XYZ:0050"), None);
    }

    #[test]
    fn the_interfaces_of_this_process_are_listed() {
        // Every Linux network namespace has `lo`.
        assert!(interfaces().iter().any(|n| n == "lo"), "{:?}", interfaces());
    }
}
