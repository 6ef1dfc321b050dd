//! The names and addresses a phone can reach this computer by: what the server certificate names, and the
//! address the pairing link shows.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Where the page can be reached from.
pub struct Reach {
    /// DNS names for the certificate: `localhost`, the host name, and `<host>.local` for mDNS.
    pub names: Vec<String>,
    /// IP addresses for the certificate.
    pub addresses: Vec<IpAddr>,
    /// `host:port` a person opens: the address listened on, or, listening on every interface, the first
    /// address of this computer on a network.
    pub shown: String,
}

pub fn reachable(local: SocketAddr) -> Reach {
    let mut names = vec!["localhost".to_owned()];
    if let Some(host) = host_name() {
        names.push(format!("{host}.local"));
        names.push(host);
    }
    let mut addresses = vec![
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
    ];
    let network = interface_addresses();
    let shown_ip = if local.ip().is_unspecified() {
        addresses.extend(network.iter().copied());
        network
            .iter()
            .find(|a| a.is_ipv4() && !a.is_loopback())
            .copied()
            .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
    } else {
        addresses.push(local.ip());
        local.ip()
    };
    addresses.sort();
    addresses.dedup();
    let shown = match shown_ip {
        IpAddr::V6(v6) => format!("[{v6}]:{}", local.port()),
        IpAddr::V4(v4) => format!("{v4}:{}", local.port()),
    };
    Reach {
        names,
        addresses,
        shown,
    }
}

fn host_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim();
    let fine = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    fine.then(|| name.to_owned())
}

/// This computer's addresses on its network interfaces, loopback left out.
fn interface_addresses() -> Vec<IpAddr> {
    let mut found = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list this function frees below with freeifaddrs; each
    // node's `ifa_addr` is null or points at a sockaddr of the family it states.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return found;
        }
        let mut node = list;
        while !node.is_null() {
            let address = (*node).ifa_addr;
            if !address.is_null() {
                match i32::from((*address).sa_family) {
                    libc::AF_INET => {
                        let v4 = &*(address as *const libc::sockaddr_in);
                        found.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr))));
                    }
                    libc::AF_INET6 => {
                        let v6 = &*(address as *const libc::sockaddr_in6);
                        found.push(IpAddr::V6(std::net::Ipv6Addr::from(v6.sin6_addr.s6_addr)));
                    }
                    _ => {}
                }
            }
            node = (*node).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    found.retain(|a| !a.is_loopback());
    found
}
