//! What handlers need from a request URL (the origin, query parameters, a list's page), read
//! from the URL text directly; query strings are decoded by `form_urlencoded`. Parsing the whole
//! URL with the `url` crate would link its IDNA tables (over 100 KB of the bundle) for no gain:
//! the platform has already validated the URL.

use super::error::{AppError, AppResult};

/// `scheme://host[:port]` of an absolute URL (the text before its path, query or fragment).
pub fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let end = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after_scheme + i);
    &url[..end]
}

/// The number of the last event a client of a live turn saw: its `Last-Event-ID` header, else
/// its `after` query parameter (for clients that cannot set headers), else 0 (none).
pub fn seen_event(req: &worker::Request) -> AppResult<u64> {
    let seen = match req.headers().get("last-event-id")? {
        Some(seen) => seen.trim().parse::<u64>().ok(),
        None => query_param(&req.inner().url(), "after").and_then(|v| v.parse().ok()),
    };
    Ok(seen.unwrap_or(0))
}

/// The first value of a query parameter, percent-decoded (`+` is a space). Invalid UTF-8 after
/// decoding is replaced, never an error.
pub fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split('#').next()?.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// Most items a listing answers at once, and the default.
const PAGE_MAX: u64 = 100;
const PAGE_DEFAULT: u64 = 20;

/// A listing's `limit` (1 to 100, default 20) and `cursor` query parameters; 422 for a bad limit.
pub fn page_params(url: &str) -> AppResult<(u64, Option<String>)> {
    let limit = match query_param(url, "limit") {
        None => PAGE_DEFAULT,
        Some(limit) => limit
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=PAGE_MAX).contains(n))
            .ok_or_else(|| AppError::invalid_request("limit must be 1 to 100"))?,
    };
    let cursor = query_param(url, "cursor").filter(|c| !c.is_empty());
    Ok((limit, cursor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_ends_where_the_path_query_or_fragment_starts() {
        assert_eq!(
            origin("http://127.0.0.1:8787/api/research"),
            "http://127.0.0.1:8787"
        );
        assert_eq!(origin("https://a.example?x=1"), "https://a.example");
        assert_eq!(origin("https://a.example"), "https://a.example");
    }

    #[test]
    fn query_parameters_are_found_and_decoded() {
        let url = "http://h/api/research?limit=5&cursor=a%2Bb%3D%3D+c&x#frag";
        assert_eq!(query_param(url, "limit").as_deref(), Some("5"));
        assert_eq!(query_param(url, "cursor").as_deref(), Some("a+b== c"));
        assert_eq!(query_param(url, "x").as_deref(), Some(""));
        assert_eq!(query_param(url, "frag"), None);
        assert_eq!(
            query_param("http://h/?bad=%zz%4", "bad").as_deref(),
            Some("%zz%4")
        );
        assert_eq!(query_param("http://h/", "limit"), None);
    }
}
