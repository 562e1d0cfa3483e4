//! Reading many returns for a view that the engine cannot aggregate: the
//! state IDs of a state run are keys inside `data`, which no index maps.
//! The returns a query selects are read newest first, a page at a time,
//! with only the fields the view needs, up to a bounded window — and the
//! view says how many it read and when it stopped short.

use serde_json::{json, Value};

use super::template::body;
use super::{hits, total_hits, QueryContext};
use crate::engine::{msearch, EngineError, SearchRequest, Transport};

/// Returns per search: a page of state runs with per-state fields.
pub const SCAN_PAGE: usize = 500;

/// What to read.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    pub query: Value,
    /// `_source` paths, e.g. `data.*.result`.
    pub source: Vec<&'static str>,
    /// At most this many returns (the newest).
    pub limit: u64,
}

/// How far a scan has come: for the progress line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanProgress {
    pub read: u64,
    /// Returns the query selects (all of them, not only the window).
    pub total: Option<u64>,
}

impl ScanProgress {
    pub fn line(&self) -> String {
        match self.total {
            Some(t) => format!("Read {} of {t} state runs…", self.read),
            None => format!("Read {} state runs…", self.read),
        }
    }
}

/// How a scan ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScanEnd {
    pub read: u64,
    pub total: Option<u64>,
    /// Stopped before the end: the window was full, or the person
    /// cancelled. Said in the view's notes.
    pub stopped_short: Option<String>,
}

/// Newest first; `jid` and `minion` make the order total, so `search_after`
/// skips and repeats nothing (one return per jid and minion).
fn page_search(
    ctx: &QueryContext,
    scan: &Scan,
    after: Option<&Value>,
    first: bool,
) -> SearchRequest {
    let f = &ctx.fields;
    let mut body = body(
        r#"{"size":$0,"query":$1,"_source":$2,"track_total_hits":$3,"sort":[{"@timestamp":{"order":"desc","unmapped_type":"date"}},{$4:{"order":"asc","unmapped_type":"keyword"}},{$5:{"order":"asc","unmapped_type":"keyword"}}]}"#,
        &[
            json!(SCAN_PAGE),
            scan.query.clone(),
            json!(scan.source),
            json!(first),
            json!(f.jid),
            json!(f.minion),
        ],
    );
    if let Some(after) = after {
        body["search_after"] = after.clone();
    }
    SearchRequest::new(&ctx.config.index_pattern, body)
}

/// Reads `scan`'s returns page by page, handing each hit to `each`.
/// `progress` hears after every page; when it answers `false` the scan
/// stops there (Cancel), and what was read stays usable.
pub async fn scan<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    scan: &Scan,
    each: &mut dyn FnMut(&Value),
    progress: &dyn Fn(ScanProgress) -> bool,
) -> Result<ScanEnd, EngineError> {
    let mut end = ScanEnd::default();
    let mut after: Option<Value> = None;
    loop {
        let answer = msearch(t, &page_search(ctx, scan, after.as_ref(), end.read == 0)).await??;
        if end.read == 0 {
            end.total = total_hits(&answer);
        }
        let page = hits(&answer);
        for hit in page {
            if end.read >= scan.limit {
                break;
            }
            each(hit);
            end.read += 1;
        }
        let more = page.len() == SCAN_PAGE;
        if more && end.read >= scan.limit {
            end.stopped_short = Some(format!(
                "read the newest {} state runs of {}: narrow the time range or the minions for the rest",
                end.read,
                end.total.map(|t| t.to_string()).unwrap_or_else(|| "more".into())
            ));
            return Ok(end);
        }
        let going_on = progress(ScanProgress {
            read: end.read,
            total: end.total,
        });
        if !more {
            return Ok(end);
        }
        if !going_on {
            end.stopped_short = Some(format!(
                "stopped after {} state runs of {}: the figures cover those only",
                end.read,
                end.total
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "more".into())
            ));
            return Ok(end);
        }
        after = page.last().and_then(|h| h.get("sort")).cloned();
        if after.is_none() {
            return Err(EngineError::BadResponse {
                url: None,
                detail: "the last hit has no sort values to continue from".into(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_newest_first_with_a_total_order_and_only_the_fields_asked() {
        let ctx = QueryContext::at(0);
        let scan = Scan {
            query: json!({"match_all": {}}),
            source: vec!["jid", "data.*.result"],
            limit: 10,
        };
        let first = page_search(&ctx, &scan, None, true);
        assert_eq!(first.body["track_total_hits"], true);
        assert_eq!(first.body["sort"][1]["jid.keyword"]["order"], "asc");
        assert_eq!(first.body["_source"], json!(["jid", "data.*.result"]));
        let next = page_search(&ctx, &scan, Some(&json!([1, "j", "m"])), false);
        assert_eq!(next.body["search_after"], json!([1, "j", "m"]));
        assert_eq!(next.body["track_total_hits"], false);
    }
}
