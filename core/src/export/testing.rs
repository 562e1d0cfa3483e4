//! What the export's tests share: a spec per kind and product, hits and
//! pages as the engine answers them, and the CSV read back.

use serde_json::{json, Value};

use super::spec::ExportSpec;
use super::spec::ViewFilter;
use super::{CsvOptions, ExportKind};
use crate::engine::{Answer, Body, HttpRequest, Product, ProductInfo, Reply};
use crate::query::audit::AuditFilter;
use crate::query::filter::JobFilter;
use crate::query::QueryContext;

pub const NOW: i64 = 1_796_083_200_000; // 2026-12-01T00:00:00Z

pub fn product(p: Product, v: (u32, u32, u32)) -> ProductInfo {
    ProductInfo {
        product: p,
        version: format!("{}.{}.{}", v.0, v.1, v.2),
        version_parts: v,
        cluster_name: "c".into(),
    }
}

pub fn spec(kind: ExportKind, p: ProductInfo, page: usize) -> ExportSpec {
    ExportSpec {
        kind,
        columns: kind.default_columns(),
        product: p,
        context: QueryContext {
            noisy: vec!["saltutil.*".into()],
            ..QueryContext::at(NOW)
        },
        filter: match kind {
            ExportKind::Audit => ViewFilter::Audit(AuditFilter::default()),
            _ => ViewFilter::Jobs(JobFilter::default()),
        },
        csv: CsvOptions::default(),
        page_size: Some(page),
        keep_alive: "2m".into(),
    }
}

pub fn hit(jid: &str, minion: &str, ms: i64, sort_extra: Option<i64>) -> Value {
    let mut sort = vec![
        json!(ms),
        json!(jid),
        json!(minion),
        json!("salt-state_apply-v1"),
    ];
    sort.extend(sort_extra.map(|s| json!(s)));
    json!({"_index": "salt-state_apply-v1", "_id": format!("{jid}{minion}"), "sort": sort,
           "_source": {"@timestamp": crate::time::iso_millis(ms), "jid": jid, "minion": minion,
                       "fun": "state.apply", "success": true, "retcode": 0,
                       "data": {"test_|-a_|-a_|-nop": {"result": true, "changes": {}, "__run_num__": 0, "__id__": "a"},
                                "test_|-b_|-b_|-nop": {"result": true, "changes": {"x": 1}, "__run_num__": 1, "__id__": "b"}}}})
}

pub fn page(hits: Vec<Value>, total: u64, pit: Option<&str>) -> Value {
    let mut a = json!({"timed_out": false, "_shards": {"total": 2, "successful": 2, "failed": 0},
                       "hits": {"total": {"value": total, "relation": "eq"}, "hits": hits}});
    if let Some(p) = pit {
        a["pit_id"] = json!(p);
    }
    a
}

/// An answer as the engine sends it: bytes.
pub fn ok(answer: Value) -> Answer {
    bytes(serde_json::to_vec(&answer).unwrap())
}

pub fn bytes(body: Vec<u8>) -> Answer {
    Ok(Reply {
        url: "http://h/es/_search".into(),
        body,
    })
}

pub fn body(req: &HttpRequest) -> Value {
    match &req.body {
        Body::Json(v) => v.clone(),
        other => panic!("not JSON: {other:?}"),
    }
}

pub fn read_csv(bytes: &[u8]) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes)
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}
