//! The engine, through the core's native client, and the few questions the
//! loader asks it.

use saltscope_core::engine::native::{block_on, native_client, NativeTransport};
use saltscope_core::engine::{Body, EngineError, HttpRequest, Method, Transport};
use std::time::Duration;

/// The engine, through the core's native client: the one road to the
/// engine the app, the tests and the benchmarks take too.
pub struct Http {
    client: NativeTransport,
}

impl Http {
    pub fn new(base: &str) -> Http {
        Http {
            client: native_client(&[base], Duration::from_secs(600)),
        }
    }

    /// Sends `method path` with a JSON or NDJSON body; the status and the
    /// answer's text, whatever the status (a network failure is an error).
    pub fn req(&self, method: Method, path: &str, body: Body) -> Result<(u16, String), String> {
        let request = HttpRequest::new(method, path, body);
        match block_on(self.client.send(&request)) {
            Ok(reply) => Ok((200, String::from_utf8_lossy(&reply.body).into_owned())),
            Err(EngineError::Status { status, reason, .. }) => Ok((status, reason)),
            Err(e) => Err(format!("{} {path}: {e}", method.as_str())),
        }
    }

    pub fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<&str>,
    ) -> Result<(u16, serde_json::Value), String> {
        let body = body.map_or(Body::Empty, |b| {
            Body::Json(serde_json::from_str(b).unwrap_or(serde_json::Value::String(b.into())))
        });
        let (st, text) = self.req(method, path, body)?;
        let v = serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text));
        Ok((st, v))
    }

    pub fn ok(
        &self,
        method: Method,
        path: &str,
        body: Option<&str>,
    ) -> Result<serde_json::Value, String> {
        let (st, v) = self.json(method, path, body)?;
        if !(200..300).contains(&st) {
            return Err(format!(
                "{} {path}: HTTP {st}: {}",
                method.as_str(),
                trunc(&v.to_string(), 600)
            ));
        }
        Ok(v)
    }
}

pub fn trunc(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        let mut end = n;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

/// Indices `<prefix>-*` and their doc counts / store sizes.
pub fn cat_indices(http: &Http, prefix: &str) -> Result<Vec<(String, u64, u64)>, String> {
    let v = http.ok(
        Method::Get,
        &format!("/_cat/indices/{prefix}-*?format=json&bytes=b&h=index,docs.count,store.size"),
        None,
    )?;
    let mut out = Vec::new();
    for row in v.as_array().cloned().unwrap_or_default() {
        let g = |k: &str| {
            row.get(k)
                .and_then(|x| x.as_str())
                .unwrap_or("0")
                .to_string()
        };
        let name = g("index");
        if name.starts_with(&format!("{prefix}-")) {
            out.push((
                name,
                g("docs.count").parse().unwrap_or(0),
                g("store.size").parse().unwrap_or(0),
            ));
        }
    }
    out.sort();
    Ok(out)
}
