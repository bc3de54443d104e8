//! Which counter a charge goes to: a client address as one key per network (an IPv6 /64 is one
//! subscriber), and the shard a hex key lives in.

use core::net::{IpAddr, Ipv6Addr};

/// The key a client address is counted under: `v4:<address>` for IPv4 (an IPv4-mapped IPv6
/// address included), `v6:<first four groups>` for IPv6, since one subscriber gets a whole /64
/// and can use any address in it. `None` for text that is no address (a request without one,
/// as under `wrangler dev`): such requests are not counted per address.
///
/// ```
/// use stepwise_core::spend::address_key;
/// assert_eq!(address_key("203.0.113.7").as_deref(), Some("v4:203.0.113.7"));
/// assert_eq!(address_key("2001:db8:1:2::1").as_deref(), Some("v6:2001:db8:1:2"));
/// assert_eq!(address_key("2001:0db8:0001:0002:ffff:1:2:3"), address_key("2001:db8:1:2::9"));
/// assert_eq!(address_key("::ffff:203.0.113.7"), address_key("203.0.113.7"));
/// assert_eq!(address_key("unknown"), None);
/// ```
pub fn address_key(address: &str) -> Option<String> {
    match address.trim().parse::<IpAddr>().ok()? {
        IpAddr::V4(v4) => Some(format!("v4:{v4}")),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => Some(format!("v4:{v4}")),
            None => Some(network_64(&v6)),
        },
    }
}

fn network_64(v6: &Ipv6Addr) -> String {
    let [a, b, c, d, ..] = v6.segments();
    format!("v6:{a:x}:{b:x}:{c:x}:{d:x}")
}

/// The shard (`0..shards`) that a key given as hex (a SHA-256, as owner ids are) lives in: its
/// first 8 hex digits modulo `shards`. A key that is not hex goes to shard 0; `shards` of 0
/// counts as 1.
///
/// ```
/// use stepwise_core::spend::shard_of;
/// assert_eq!(shard_of("0000000a77", 64), 10);
/// assert_eq!(shard_of("ffffffff", 1), 0);
/// assert!(shard_of(&"9f".repeat(32), 64) < 64);
/// ```
pub fn shard_of(hex_key: &str, shards: u32) -> u32 {
    let head = hex_key.get(..8).unwrap_or(hex_key);
    let value = u32::from_str_radix(head, 16).unwrap_or(0);
    value % shards.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_address_of_a_64_is_one_key_and_neighbouring_networks_are_not() {
        let key = address_key("2a02:1234:5678:9abc::1").unwrap();
        for other in [
            "2a02:1234:5678:9abc:ffff:ffff:ffff:ffff",
            "2A02:1234:5678:9ABC:0:0:0:42",
        ] {
            assert_eq!(address_key(other).unwrap(), key);
        }
        assert_ne!(address_key("2a02:1234:5678:9abd::1").unwrap(), key);
        assert_ne!(address_key("203.0.113.8"), address_key("203.0.113.7"));
    }

    #[test]
    fn text_that_is_no_address_is_not_counted() {
        for text in ["", "unknown", "203.0.113", "::g", "203.0.113.7:443"] {
            assert_eq!(address_key(text), None, "{text:?}");
        }
    }
}
