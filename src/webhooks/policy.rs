//! Which callback URLs a job may carry, and which addresses a delivery may connect to: the operator's
//! allowlist of hosts (`--webhook-allowed-hosts`), and a refusal of loopback, private, link-local and
//! other non-public addresses unless the operator allows them (`--webhook-allow-private`). A job's
//! URL is checked at submission; the addresses its host resolves to are checked again at each delivery,
//! and the connection goes only to an address that passed (no DNS rebinding between check and use).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use reqwest::Url;

/// Longest callback URL, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

/// One entry of the allowlist: a host name or address, optionally with a port, or `*.` and a domain
/// (any subdomain of it, not the domain itself).
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// This host exactly (lower case), on `port` or on any port.
    Exact { host: String, port: Option<u16> },
    /// Any host ending in `.suffix`, on any port.
    Subdomains { suffix: String },
}

impl HostPattern {
    fn parse(entry: &str) -> Result<HostPattern, String> {
        let entry = entry.trim().to_ascii_lowercase();
        if let Some(suffix) = entry.strip_prefix("*.") {
            if suffix.is_empty() || suffix.contains(['*', ':', '/']) {
                return Err(format!("allowlist entry {entry:?} is not *.domain"));
            }
            return Ok(HostPattern::Subdomains {
                suffix: suffix.to_string(),
            });
        }
        // parse it as the authority of a URL, which handles [v6]:port and rejects junk
        let url = Url::parse(&format!("http://{entry}/"))
            .map_err(|_| format!("allowlist entry {entry:?} is not a host or host:port"))?;
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| format!("allowlist entry {entry:?} has no host"))?;
        if url.path() != "/" || !url.username().is_empty() || url.query().is_some() {
            return Err(format!(
                "allowlist entry {entry:?} is not a host or host:port"
            ));
        }
        let port = if entry.ends_with(":80") {
            Some(80)
        } else {
            url.port()
        };
        Ok(HostPattern::Exact {
            host: host.to_string(),
            port,
        })
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        match self {
            HostPattern::Exact { host: h, port: p } => h == host && p.is_none_or(|p| p == port),
            HostPattern::Subdomains { suffix } => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

/// Why a callback URL is refused (the message names the rule, never the URL).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("this server accepts no callbacks: its operator has allowed no webhook hosts")]
    NotConfigured,
    #[error(
        "the callback url is not an absolute http or https URL of at most {MAX_URL_BYTES} bytes"
    )]
    Malformed,
    #[error("the callback url may not carry a user name, password or fragment")]
    Credentials,
    #[error("the callback url's host is not on the server's webhook allowlist")]
    HostNotAllowed,
    #[error("the callback url's address is private, loopback or otherwise not public")]
    PrivateAddress,
}

/// The operator's rules for callback URLs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallbackPolicy {
    allowed: Vec<HostPattern>,
    allow_private: bool,
}

impl CallbackPolicy {
    /// The rules from the allowlist entries (`host`, `host:port`, `*.domain`) and whether non-public
    /// addresses are allowed. An empty allowlist accepts no callback.
    pub fn new<S: AsRef<str>>(entries: &[S], allow_private: bool) -> Result<Self, String> {
        let allowed = entries
            .iter()
            .map(|e| e.as_ref())
            .filter(|e| !e.trim().is_empty())
            .map(HostPattern::parse)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CallbackPolicy {
            allowed,
            allow_private,
        })
    }

    /// Whether any callback can be accepted.
    pub fn is_enabled(&self) -> bool {
        !self.allowed.is_empty()
    }

    /// Checks a job's callback URL: absolute http(s), no credentials or fragment, a host on the
    /// allowlist and, when the host is an address, a public one (or private ones allowed).
    pub fn check_url(&self, text: &str) -> Result<Url, Refusal> {
        if !self.is_enabled() {
            return Err(Refusal::NotConfigured);
        }
        if text.len() > MAX_URL_BYTES {
            return Err(Refusal::Malformed);
        }
        let url = Url::parse(text).map_err(|_| Refusal::Malformed)?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refusal::Malformed);
        }
        if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
            return Err(Refusal::Credentials);
        }
        let host = url
            .host_str()
            .ok_or(Refusal::Malformed)?
            .to_ascii_lowercase();
        let port = url.port_or_known_default().ok_or(Refusal::Malformed)?;
        if !self.allowed.iter().any(|p| p.matches(&host, port)) {
            return Err(Refusal::HostNotAllowed);
        }
        if let Some(address) = literal_address(&url) {
            if !self.address_allowed(address) {
                return Err(Refusal::PrivateAddress);
            }
        }
        Ok(url)
    }

    /// Whether a delivery may connect to `address`.
    pub fn address_allowed(&self, address: IpAddr) -> bool {
        self.allow_private || is_public(address)
    }
}

/// The address a URL's host names literally, if it does.
pub fn literal_address(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(_) => None,
    }
}

/// True for a globally routable unicast address: not loopback, private (RFC 1918, unique local),
/// link-local, shared (CGNAT), unspecified, broadcast, multicast, documentation, benchmarking or
/// reserved; IPv4 inside IPv6 (mapped, NAT64) is judged as IPv4.
pub fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(a: Ipv4Addr) -> bool {
    let [b0, b1, b2, _] = a.octets();
    !(a.is_private()
        || a.is_loopback()
        || a.is_link_local()
        || a.is_unspecified()
        || a.is_broadcast()
        || a.is_documentation()
        || a.is_multicast()
        || b0 == 0
        || (b0 == 100 && (64..128).contains(&b1))
        || (b0 == 192 && b1 == 0 && b2 == 0)
        || (b0 == 198 && (18..20).contains(&b1))
        || b0 >= 240)
}

fn is_public_v6(a: Ipv6Addr) -> bool {
    if let Some(v4) = a.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let segments = a.segments();
    let embedded = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    // NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_public_v4(embedded(segments[6], segments[7]));
    }
    // 6to4 (2002::/16) carries one in its bits 16–47
    if segments[0] == 0x2002 {
        return is_public_v4(embedded(segments[1], segments[2]));
    }
    !(a.is_loopback()
        || a.is_unspecified()
        || a.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
        || (segments[0] == 0x2001 && segments[1] == 0) // Teredo, which tunnels to IPv4
        || segments[..3] == [0x64, 0xff9b, 1] // local-use NAT64
        || segments[..4] == [0x100, 0, 0, 0] // discard-only
        || segments[..5] == [0, 0, 0, 0, 0] // IPv4-compatible, deprecated
        || segments[..6] == [0, 0, 0, 0, 0xffff, 0]) // IPv4-translated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(entries: &[&str], allow_private: bool) -> CallbackPolicy {
        CallbackPolicy::new(entries, allow_private).expect("valid allowlist")
    }

    #[test]
    fn without_an_allowlist_no_callback_is_accepted() {
        let p = policy(&[], false);
        assert_eq!(
            p.check_url("https://hooks.example.org/x"),
            Err(Refusal::NotConfigured)
        );
    }

    #[test]
    fn hosts_ports_and_subdomains_match_as_listed() {
        let p = policy(
            &[
                "hooks.example.org",
                "*.hospital.test",
                "etl.example.net:8443",
            ],
            false,
        );
        assert!(p.check_url("https://hooks.example.org/a?b=1").is_ok());
        assert!(p.check_url("https://HOOKS.example.org:9000/a").is_ok());
        assert!(p.check_url("https://a.b.hospital.test/").is_ok());
        assert!(p.check_url("https://etl.example.net:8443/").is_ok());
        assert_eq!(
            p.check_url("https://hospital.test/"),
            Err(Refusal::HostNotAllowed)
        );
        assert_eq!(
            p.check_url("https://evilhospital.test/"),
            Err(Refusal::HostNotAllowed)
        );
        assert_eq!(
            p.check_url("https://etl.example.net/"),
            Err(Refusal::HostNotAllowed)
        );
        assert_eq!(
            p.check_url("https://hooks.example.org.evil.test/"),
            Err(Refusal::HostNotAllowed)
        );
    }

    #[test]
    fn malformed_urls_and_credentials_are_refused() {
        let p = policy(&["hooks.example.org"], false);
        for bad in [
            "hooks.example.org/x",
            "ftp://hooks.example.org/",
            "file:///etc/passwd",
            "",
        ] {
            assert_eq!(p.check_url(bad), Err(Refusal::Malformed), "{bad}");
        }
        assert_eq!(
            p.check_url("https://user:pw@hooks.example.org/"),
            Err(Refusal::Credentials)
        );
        let long = format!("https://hooks.example.org/{}", "a".repeat(MAX_URL_BYTES));
        assert_eq!(p.check_url(&long), Err(Refusal::Malformed));
    }

    #[test]
    fn private_addresses_need_the_operators_consent() {
        let strict = policy(&["127.0.0.1", "[::1]", "10.1.2.3:80"], false);
        assert_eq!(
            strict.check_url("http://127.0.0.1:9000/hook"),
            Err(Refusal::PrivateAddress)
        );
        assert_eq!(
            strict.check_url("http://[::1]/hook"),
            Err(Refusal::PrivateAddress)
        );
        assert_eq!(
            strict.check_url("http://10.1.2.3/hook"),
            Err(Refusal::PrivateAddress)
        );
        let lenient = policy(&["127.0.0.1"], true);
        assert!(lenient.check_url("http://127.0.0.1:9000/hook").is_ok());
    }

    #[test]
    fn only_globally_routable_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.0.8",
            "198.18.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "2001:db8::1",
            "2002:a00:1::",
            "2002:7f00:1::1",
            "2001:0:4136:e378::1",
            "64:ff9b:1::a00:1",
            "fec0::1",
            "::ffff:0:a00:1",
            "100::1",
        ] {
            let ip: IpAddr = private.parse().expect("an address");
            assert!(!is_public(ip), "{private} is not public");
        }
        for public in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            let ip: IpAddr = public.parse().expect("an address");
            assert!(is_public(ip), "{public} is public");
        }
    }

    #[test]
    fn bad_allowlist_entries_are_refused_at_start() {
        assert!(CallbackPolicy::new(&["*."], false).is_err());
        assert!(CallbackPolicy::new(&["a.example/path"], false).is_err());
        assert!(CallbackPolicy::new(&["*.a:80"], false).is_err());
    }
}
