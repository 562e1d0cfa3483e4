//! One HTTP request to the engine, as the core plans it: the method, the
//! path below the engine's base URL, and the body. The transports
//! (`Transport`) add the host, headers and credentials.

use serde_json::Value;

use crate::text::json_text;

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
            Body::Json(v) => json_text(v),
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
    /// A page that knows the page after it: see [`NextPage`].
    pub next_page: Option<Box<NextPage>>,
}

/// The request for the page after a page, but for its cursor: its body has
/// `"search_after":`[`LAST_SORT`], where the last hit's `sort` array of the
/// page's answer goes, as the engine wrote it. An exchange may send that
/// request the moment the answer is in, before the app has read the page
/// (the export's worker does: `js/fetch-worker.js`), and hand its answer
/// over when the app sends that very request. The app still decides what
/// comes next: a request that differs by a byte is sent as usual.
#[derive(Clone, Debug, PartialEq)]
pub struct NextPage {
    pub path: String,
    /// The body's text, [`LAST_SORT`] in it once.
    pub body: String,
    /// How many hits come before this page, when the page before it asks
    /// for the total (the first page): an answer whose total (`hits.total`)
    /// is up to this many has no page after it, and nothing is sent ahead.
    /// `None` after that: the total is known, and the page is named only
    /// when hits are left, so no answer needs reading for it.
    pub from: Option<u64>,
}

/// Where [`NextPage::body`] takes the cursor.
pub const LAST_SORT: &str = r#"["saltscope:last-sort"]"#;

impl NextPage {
    /// `request` as the template of the page after another (see
    /// [`NextPage::from`]): it was built with [`NextPage::cursor`] as its
    /// `search_after`, the one place [`LAST_SORT`] appears in its body.
    pub fn of(request: &HttpRequest, from: Option<u64>) -> NextPage {
        NextPage {
            path: request.path.clone(),
            body: request.body.text(),
            from,
        }
    }

    /// The `search_after` to build a template with: it is written as
    /// [`LAST_SORT`].
    pub fn cursor() -> Vec<serde_json::Value> {
        vec![serde_json::Value::String("saltscope:last-sort".into())]
    }

    /// The body with `sort` (the raw text of the answer's last `sort`
    /// array) as its cursor: what the exchange sends. The worker does this
    /// in JavaScript (`js/fetch-worker.js`); here it states the contract
    /// the tests hold the plan to.
    #[cfg(test)]
    pub(crate) fn body_after(&self, sort: &str) -> String {
        self.body.replacen(LAST_SORT, sort, 1)
    }
}

impl HttpRequest {
    pub fn new(method: Method, path: impl Into<String>, body: Body) -> HttpRequest {
        HttpRequest {
            method,
            path: path.into(),
            body,
            next_page: None,
        }
    }

    pub fn get(path: impl Into<String>) -> HttpRequest {
        HttpRequest::new(Method::Get, path, Body::Empty)
    }

    pub fn post(path: impl Into<String>, body: Body) -> HttpRequest {
        HttpRequest::new(Method::Post, path, body)
    }

    pub fn delete(path: impl Into<String>, body: Body) -> HttpRequest {
        HttpRequest::new(Method::Delete, path, body)
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
    fn the_next_pages_cursor_is_written_as_the_placeholder_the_exchange_fills() {
        let body = Body::Json(serde_json::json!({"search_after": NextPage::cursor(), "size": 2}));
        let request = HttpRequest::post("/_search", body);
        let next = NextPage::of(&request, Some(2));
        assert_eq!(next.body.matches(LAST_SORT).count(), 1);
        assert_eq!(next.from, Some(2));
        assert_eq!(
            next.body_after("[1,\"a\"]"),
            r#"{"search_after":[1,"a"],"size":2}"#
        );
    }

    #[test]
    fn only_bulk_and_put_are_not_reads() {
        assert!(HttpRequest::post("/_msearch", Body::Empty).is_read());
        assert!(HttpRequest::delete("/_pit", Body::Empty).is_read());
        assert!(!HttpRequest::post("/_bulk", Body::Empty).is_read());
    }
}
