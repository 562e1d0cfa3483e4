//! One HTTP request to the engine, as the core plans it: the method, the
//! path below the engine's base URL, and the body. The transports
//! (`Transport`) add the host, headers and credentials.

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Empty,
    Json(Value),
    /// Newline-delimited JSON: `_msearch` and `_bulk`.
    NdJson(String),
}

impl Body {
    pub fn text(&self) -> String {
        match self {
            Body::Empty => String::new(),
            Body::Json(v) => v.to_string(),
            Body::NdJson(s) => s.clone(),
        }
    }

    pub fn content_type(&self) -> Option<&'static str> {
        match self {
            Body::Empty => None,
            Body::Json(_) => Some("application/json"),
            Body::NdJson(_) => Some("application/x-ndjson"),
        }
    }
}

/// One request; `path` is relative to the engine's base URL and starts with
/// `/` (`/_msearch`, `/salt-*/_search?…`).
#[derive(Clone, Debug, PartialEq)]
pub struct HttpRequest {
    pub method: Method,
    pub path: String,
    pub body: Body,
}

impl HttpRequest {
    pub fn get(path: impl Into<String>) -> HttpRequest {
        HttpRequest {
            method: Method::Get,
            path: path.into(),
            body: Body::Empty,
        }
    }

    pub fn post(path: impl Into<String>, body: Body) -> HttpRequest {
        HttpRequest {
            method: Method::Post,
            path: path.into(),
            body,
        }
    }

    pub fn delete(path: impl Into<String>, body: Body) -> HttpRequest {
        HttpRequest {
            method: Method::Delete,
            path: path.into(),
            body,
        }
    }

    /// Whether sending it twice does no harm: every request Saltscope sends
    /// but `_bulk` (the generator's) reads, so a failed one may go to
    /// another host or be sent again.
    pub fn is_read(&self) -> bool {
        !self.path.contains("_bulk") && self.method != Method::Put
    }
}

/// A path segment or query value percent-encoded for a URL (`salt-*` stays
/// readable: `*` and `,` are left as they are, as the engines expect).
pub fn encode_component(text: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    const KEEP: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b'*')
        .remove(b',')
        .remove(b':');
    utf8_percent_encode(text, KEEP).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_patterns_stay_readable_and_the_rest_is_encoded() {
        assert_eq!(encode_component("salt-*,x"), "salt-*,x");
        assert_eq!(encode_component("a b/é?"), "a%20b%2F%C3%A9%3F");
    }

    #[test]
    fn only_bulk_and_put_are_not_reads() {
        assert!(HttpRequest::post("/_msearch", Body::Empty).is_read());
        assert!(HttpRequest::delete("/_pit", Body::Empty).is_read());
        assert!(!HttpRequest::post("/_bulk", Body::Empty).is_read());
    }
}
