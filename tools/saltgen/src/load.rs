//! Bulk loading: each worker's bulk request in the making, sent every
//! `--batch` documents or 32 MB, and what the engine answered.

use crate::gen::Doc;
use crate::http::{trunc, Http};
use saltscope_core::engine::{Body, Method};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Default)]
pub struct Stats {
    pub docs: AtomicU64,
    pub returns: AtomicU64,
    pub bytes: AtomicU64,
    pub item_errors: AtomicU64,
    pub abort: AtomicBool,
    pub errors: Mutex<Vec<String>>,
    pub per_index: Mutex<BTreeMap<String, u64>>,
}

impl Stats {
    pub fn error(&self, e: String) {
        let mut v = self.errors.lock().unwrap();
        if v.len() < 10 {
            v.push(e);
        }
    }
}

fn append_bulk(buf: &mut String, d: &Doc) {
    buf.push_str("{\"index\": {\"_index\": \"");
    buf.push_str(&d.index);
    if let Some(id) = &d.id {
        buf.push_str("\", \"_id\": \"");
        buf.push_str(id);
    }
    buf.push_str("\"}}\n");
    d.body.write(buf);
    buf.push('\n');
}

/// A bulk request stays under this many bytes (the engine takes 100 MB at most):
/// a few big documents are sent before `--batch` of them have been gathered.
pub const MAX_BULK_BYTES: usize = 32 << 20;

/// One worker's bulk request in the making: documents are appended as they are
/// made, and sent every `batch` documents or `MAX_BULK_BYTES`.
pub struct Loader<'a> {
    http: Http,
    stats: &'a Stats,
    out_file: Option<&'a Mutex<Box<dyn Write + Send>>>,
    batch: usize,
    /// `<prefix>-master-`: the job cache and the event cache, not returns
    master: String,
    buf: String,
    in_buf: usize,
    returns_in_buf: u64,
    /// documents pushed, per index (alias)
    pub per_index: BTreeMap<String, u64>,
}

impl<'a> Loader<'a> {
    /// A worker's loader: documents go to `http` (its own client), or to
    /// `out_file` with `--dry-run`; `master` is `<prefix>-master-`.
    pub fn new(
        http: Http,
        stats: &'a Stats,
        out_file: Option<&'a Mutex<Box<dyn Write + Send>>>,
        batch: usize,
        master: String,
    ) -> Loader<'a> {
        Loader {
            http,
            stats,
            out_file,
            batch,
            master,
            buf: String::with_capacity(8 << 20),
            in_buf: 0,
            returns_in_buf: 0,
            per_index: BTreeMap::new(),
        }
    }

    pub fn push(&mut self, d: Doc) {
        if self.stats.abort.load(Ordering::Relaxed) {
            return;
        }
        append_bulk(&mut self.buf, &d);
        self.in_buf += 1;
        if !d.index.starts_with(&self.master) {
            self.returns_in_buf += 1;
        }
        *self.per_index.entry(d.index).or_default() += 1;
        if self.in_buf >= self.batch || self.buf.len() >= MAX_BULK_BYTES {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if self.in_buf == 0 {
            return;
        }
        match &self.out_file {
            Some(f) => {
                if let Err(e) = f.lock().unwrap().write_all(self.buf.as_bytes()) {
                    self.stats.error(format!("writing: {e}"));
                    self.stats.abort.store(true, Ordering::Relaxed);
                }
            }
            None => post_bulk(&self.http, &self.buf, self.stats),
        }
        let stats = self.stats;
        stats.docs.fetch_add(self.in_buf as u64, Ordering::Relaxed);
        stats
            .returns
            .fetch_add(self.returns_in_buf, Ordering::Relaxed);
        stats
            .bytes
            .fetch_add(self.buf.len() as u64, Ordering::Relaxed);
        self.buf.clear();
        self.in_buf = 0;
        self.returns_in_buf = 0;
    }
}

fn post_bulk(http: &Http, body: &str, stats: &Stats) {
    let path = "/_bulk?filter_path=errors,items.*.error,items.*.status,items.*._index";
    let mut attempt = 0;
    loop {
        match http.req(Method::Post, path, Body::NdJson(body.to_string())) {
            Ok((429, _)) | Ok((503, _)) if attempt < 8 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(500 << attempt.min(5)));
            }
            Ok((st, text)) if (200..300).contains(&st) => {
                let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                if v.get("errors").and_then(|e| e.as_bool()) != Some(false) {
                    let items = v
                        .get("items")
                        .and_then(|i| i.as_array())
                        .cloned()
                        .unwrap_or_default();
                    let mut n = 0;
                    for it in items {
                        let op = it.get("index").cloned().unwrap_or_default();
                        if let Some(err) = op.get("error") {
                            n += 1;
                            stats.error(format!(
                                "{} (HTTP {}): {}",
                                op.get("_index").and_then(|x| x.as_str()).unwrap_or("?"),
                                op.get("status").unwrap_or(&serde_json::Value::Null),
                                trunc(&err.to_string(), 500)
                            ));
                        }
                    }
                    if n == 0 {
                        n = 1;
                        stats.error(format!(
                            "bulk answered errors!=false: {}",
                            trunc(&text, 500)
                        ));
                    }
                    stats.item_errors.fetch_add(n, Ordering::Relaxed);
                }
                return;
            }
            Ok((st, text)) => {
                stats.error(format!("bulk HTTP {st}: {}", trunc(&text, 500)));
                stats.abort.store(true, Ordering::Relaxed);
                return;
            }
            Err(e) => {
                stats.error(format!("bulk: {e}"));
                stats.abort.store(true, Ordering::Relaxed);
                return;
            }
        }
    }
}
