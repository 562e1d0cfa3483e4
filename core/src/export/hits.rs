//! Returns and states: hits of the returner's indices, paged with a point
//! in time where the engine has one, else `search_after` over the index
//! pattern, always on a unique sort ([`hits_sort`]). A states page with the
//! user column first looks up its jobs' publish data.

use serde_json::{json, Value};

use super::columns::id;
use super::page::{head_total, last_sort_values, read_hits_page, Hit};
use super::plan::{Commit, ExportSource, Pending, PendingWork, Position, Step};
use super::rows::{return_row, state_rows, tallied_return_row, Row};
use super::seen::{IndexSeen, SeenHit};
use super::spec::{After, Paging, STATE_FUNCTIONS};
use super::summary;
use super::ExportKind;
use crate::engine::{
    encode_component, msearch_request, read_msearch, Body, EngineError, HttpRequest, NextPage,
    Reply,
};
use crate::model::{ReturnData, ReturnDoc, ReturnFields, StateTally};
use crate::query::jobs::{attach_publish, publish_searches, soft, JobListPage};
use crate::query::template::body;
use crate::query::FieldMap;
use crate::text::scalar_text;

pub(crate) struct HitsSource;

/// The sort of a hits export: unique, so search_after never skips or
/// repeats a return.
///
/// Under a PIT with `_shard_doc`: `_index`, then `_shard_doc`, then jid and
/// minion. The engine then reads each shard in document order instead of
/// ranking every match again for each page (OpenSearch 3.8, 1M returns:
/// 12-150 ms a page of 5,000 with `_source`, against 290-380 ms with the
/// field sort below). `_shard_doc` alone is not enough there: on OpenSearch
/// 3.8 it is the bare Lucene doc id, equal across shards, and search_after
/// on it alone skipped 172 of 1,000,000 returns (measured); `_index` tells
/// single-shard indices (the returner's) apart, jid and minion the shards of
/// any other. The file is then in index order, as helpers.scan's is.
///
/// Otherwise the field sort, newest first: `[@timestamp desc, jid desc,
/// minion asc, _index asc]` (one return per minion per job per index).
/// `_id` is never sorted on: it needs fielddata Elasticsearch 8 disables.
pub fn hits_sort(paging: Paging, fields: &FieldMap) -> Value {
    if paging.shard_doc() {
        return body(
            r#"[{"_index":{"order":"asc","unmapped_type":"keyword"}},{"_shard_doc":"asc"},{$0:{"order":"asc","unmapped_type":"keyword"}},{$1:{"order":"asc","unmapped_type":"keyword"}}]"#,
            &[json!(fields.jid), json!(fields.minion)],
        );
    }
    // unmapped_type: an index that has no mapping yet (created, every
    // document rejected: salt-grains_items with dynamic mappings) fails a
    // `_index` sort without it.
    body(
        r#"[{"@timestamp":{"order":"desc","unmapped_type":"date"}},{$0:{"order":"desc","unmapped_type":"keyword"}},{$1:{"order":"asc","unmapped_type":"keyword"}},{"_index":{"order":"asc","unmapped_type":"keyword"}}]"#,
        &[json!(fields.jid), json!(fields.minion)],
    )
}

/// The query of returns and states: the view's filter, its outcome taken
/// per return (failed returns, or successful ones), states restricted to
/// the state functions.
pub(crate) fn hits_query(at: &Position) -> Value {
    let spec = at.spec;
    let filter = spec.job_filter();
    let mut query = filter.returns_query_by_return(&spec.context);
    if let Some(clauses) = query
        .pointer_mut("/bool/filter")
        .and_then(Value::as_array_mut)
    {
        if spec.kind == ExportKind::States {
            clauses.push(json!({"terms": {spec.context.fields.fun.clone(): STATE_FUNCTIONS}}));
        }
    }
    query
}

/// `/<index>/_search` for the engines' own paging without a PIT.
pub(crate) fn search_path(index: &str) -> String {
    format!(
        "/{}/_search?ignore_unavailable=true&allow_no_indices=true",
        encode_component(index)
    )
}

/// Hits on the first page. The export reads a page while the next one is
/// fetched, but nothing overlaps the first fetch: a short first page gets
/// the reading going sooner.
const FIRST_PAGE: usize = 1000;

/// The size of the next page to read: short while nothing is read yet.
/// The page's request and the reading of its answer both ask this, so a
/// full page (one more to come) is told from the last.
fn page_size(at: &Position) -> usize {
    let first = at.state.total.is_none() && at.state.docs_read == 0;
    if first {
        at.page_size().min(FIRST_PAGE)
    } else {
        at.page_size()
    }
}

/// Whether the engine may hold hits after the first `from`, of `total`:
/// always while the total is unknown. It decides only what is asked for
/// ahead: the export still ends on a short page, so a wrong answer (an
/// index growing without a PIT; `docs_read` ahead of the position while a
/// lost PIT's index is read again) costs one page's overlap, never a row.
fn more_after(total: Option<u64>, from: u64) -> bool {
    total.is_none_or(|total| from < total)
}

/// The page after `after` (the first `from` hits of `total`), of `size`
/// hits; `count` asks for the total (the first page). Unless it reaches the
/// total, it names the page after it, so that page can be on its way
/// before this one is read (see [`NextPage`]).
fn page_request_at(
    at: &Position,
    total: Option<u64>,
    after: &After,
    from: u64,
    size: usize,
    count: bool,
) -> HttpRequest {
    let mut request = page_search(at, after, size, count);
    let next_from = from + size as u64;
    if more_after(total, next_from) {
        let next = page_search(at, &After::Sort(NextPage::cursor()), at.page_size(), false);
        // The answer to a page that asks for the total is checked against
        // it before the next is sent ahead; later pages' answers have none.
        let from = count.then_some(next_from);
        request.next_page = Some(Box::new(NextPage::of(&next, from)));
    }
    request
}

fn page_search(at: &Position, after: &After, size: usize, count: bool) -> HttpRequest {
    let spec = at.spec;
    let paging = at.state.paging;
    // The whole `_source`: filtering it makes the engine parse every
    // document again (OpenSearch 3.8, 5,000 state returns: 180-290 ms a
    // page with a field list against 43-60 ms without); the typed reader
    // skips what no column needs.
    let mut body = body(
        r#"{"size":$0,"query":$1,"sort":$2,"track_total_hits":$3}"#,
        &[
            json!(size),
            hits_query(at),
            hits_sort(paging, &spec.context.fields),
            json!(count),
        ],
    );
    if at.state.reads_summary == Some(true) {
        body["_source"] = json!(false);
        // Not even `_id`: it is a stored field, and reading it makes the
        // engine decompress each hit's stored block, `_source` and all
        // (OpenSearch 3.8, 100k summarised returns: 451-766 ms of `took`
        // with `_id`, 334-505 ms without). A lost PIT's re-read then
        // knows a hit by its row instead (`IndexSeen`).
        body["stored_fields"] = json!("_none_");
        body["docvalue_fields"] = summary::DocValueNames::of(&spec.context.fields).request();
    }
    if let After::Sort(values) = after {
        body["search_after"] = Value::Array(values.clone());
    }
    search_at(at, body)
}

/// A search under the export's PIT when it has one, else over the index
/// pattern: pages and the probe alike.
pub(crate) fn search_at(at: &Position, mut body: Value) -> HttpRequest {
    let path = match (at.state.pit_id.as_deref(), at.state.paging.is_pit()) {
        (Some(id), true) => {
            body["pit"] = json!({"id": id, "keep_alive": at.spec.keep_alive});
            "/_search".to_string()
        }
        _ => search_path(&at.spec.context.config.index_pattern),
    };
    HttpRequest::post(path, Body::Json(body))
}

/// A page's hits, read as the chosen columns need them.
enum Hits {
    /// State totals only: the returns export without the output column
    /// (from doc values, no `_source`, where the probe allowed).
    Tallied(Vec<Hit<ReturnFields<StateTally>>>),
    Whole(Vec<Hit<ReturnFields<Value>>>),
}

impl ExportSource for HitsSource {
    fn probe_request(&self, at: &Position) -> Option<HttpRequest> {
        summary::applies(at.spec).then(|| summary::probe_request(at))
    }

    fn read_probe(&self, reply: Reply) -> Result<bool, EngineError> {
        summary::read_probe(reply)
    }

    fn page_request(&self, at: &Position) -> HttpRequest {
        let total = at.state.total;
        let from = at.state.docs_read;
        page_request_at(
            at,
            total,
            &at.state.after,
            from,
            page_size(at),
            total.is_none(),
        )
    }

    fn request_after(&self, at: &Position, answer: &[u8]) -> Option<HttpRequest> {
        // The page after the one just fetched, not yet read; the first
        // page's answer gives the total before it is read.
        let total = at.state.total.or_else(|| head_total(answer));
        let from = at.state.docs_read + page_size(at) as u64;
        if !more_after(total, from) {
            return None;
        }
        let after = After::Sort(last_sort_values(answer)?);
        // Never the first page, so full; the total is asked for once, on
        // the first page.
        Some(page_request_at(
            at,
            total,
            &after,
            from,
            at.page_size(),
            false,
        ))
    }

    fn read_page(&self, at: &Position, reply: Reply) -> Result<Step, EngineError> {
        let spec = at.spec;
        // The returns export without the output column needs only each
        // return's state totals: tallied from the bytes, no states built.
        let tally = spec.kind == ExportKind::Returns && !spec.wants(id::OUTPUT);
        let size = page_size(at);
        let (page, hits) = if tally {
            let (i, h) = read_hits_page::<ReturnFields<StateTally>>(&reply.url, &reply.body, size)?;
            (i, Hits::Tallied(h))
        } else {
            let (i, h) = read_hits_page::<ReturnFields<Value>>(&reply.url, &reply.body, size)?;
            (i, Hits::Whole(h))
        };
        let (next, last) = match page.next {
            Some(v) => (After::Sort(v), false),
            None => (at.state.after.clone(), true),
        };
        // After a lost PIT the index is read again: what the file has is
        // skipped; under `_shard_doc` paging what is read is remembered.
        let remember = at.state.paging.shard_doc();
        let columns = &spec.columns;
        let commit = |rows: Vec<Row>, notes: Vec<String>, read: Vec<SeenHit>| Commit {
            looked_at: rows.len() as u64,
            rows,
            next: next.clone(),
            last,
            total: page.total,
            total_is_estimate: None,
            pit_id: page.pit_id.clone(),
            notes,
            read,
        };
        // Returns the page reader could not read whole (nested too deep)
        // are in the file as far as they read; the notes name them.
        let mut notes = Vec::new();
        let (docs, read): (Vec<ReturnDoc>, _) = match hits {
            Hits::Tallied(hits) => {
                let doc_values = (at.state.reads_summary == Some(true))
                    .then(|| summary::DocValueNames::of(&spec.context.fields));
                let rows = hits
                    .into_iter()
                    .map(|h| {
                        if !h.notes.is_empty() {
                            let source = h.source.as_ref();
                            let minion = text_of(source.and_then(|s| s.minion.as_ref()));
                            let jid = text_of(source.and_then(|s| s.jid.as_ref()));
                            notes.extend(unread_notes(&h.id, &minion, &jid, &h.notes, false));
                        }
                        // Nothing to copy or hash for paging that never
                        // reads an index again.
                        let index = if remember {
                            h.index.clone()
                        } else {
                            String::new()
                        };
                        // Pages of doc values carry no `_id`: the row is the key.
                        let id_key =
                            (remember && !h.id.is_empty()).then(|| IndexSeen::id_key(&h.id));
                        let row = match &doc_values {
                            Some(names) => summary::summary_return_row(h, names, columns),
                            None => tallied_return_row(h, columns),
                        };
                        let key = match id_key {
                            Some(key) => key,
                            None if remember => IndexSeen::row_key(&row),
                            None => 0,
                        };
                        (index, key, row)
                    })
                    .collect();
                let (rows, read) = at.seen.unwritten(rows, remember);
                return Ok(Step::Commit(commit(rows, notes, read)));
            }
            Hits::Whole(hits) => {
                let keyed = hits
                    .into_iter()
                    .map(|h| {
                        if remember {
                            (h.index.clone(), IndexSeen::id_key(&h.id), h)
                        } else {
                            (String::new(), 0, h)
                        }
                    })
                    .collect();
                let (hits, read) = at.seen.unwritten(keyed, remember);
                let docs = hits
                    .into_iter()
                    .map(|h| {
                        let fields = h.source.unwrap_or_default();
                        let (mut doc, data) = ReturnDoc::from_fields(h.index, h.id, fields);
                        doc.data = ReturnData::read(&doc.fun, data.as_ref(), &mut doc.notes);
                        let no_rows = spec.kind == ExportKind::States
                            && !matches!(
                                doc.data,
                                ReturnData::States(_) | ReturnData::StateError(_)
                            );
                        notes.extend(unread_notes(
                            &doc.id,
                            &doc.minion,
                            &doc.jid,
                            &h.notes,
                            no_rows,
                        ));
                        doc
                    })
                    .collect();
                (docs, read)
            }
        };
        let looked_at = docs.len() as u64;
        if spec.kind == ExportKind::States && spec.wants(id::USER) && !docs.is_empty() {
            let mut jids: Vec<String> = Vec::new();
            for d in &docs {
                if !d.jid.is_empty() && !jids.contains(&d.jid) {
                    jids.push(d.jid.clone());
                }
            }
            return Ok(Step::Lookup(Pending {
                work: PendingWork::Users { docs, jids },
                next,
                last,
                looked_at,
                total: page.total,
                pit_id: page.pit_id,
                notes,
                read,
            }));
        }
        let rows = match spec.kind {
            ExportKind::States => docs
                .iter()
                .flat_map(|d| state_rows(d, None, columns))
                .collect(),
            _ => docs.iter().map(|d| return_row(d, columns)).collect(),
        };
        Ok(Step::Commit(Commit {
            looked_at,
            ..commit(rows, notes, read)
        }))
    }

    fn lookup_request(&self, at: &Position, pending: &Pending) -> HttpRequest {
        msearch_request(&publish_searches(&at.spec.context, pending_jids(pending)))
    }

    fn read_lookup(
        &self,
        at: &Position,
        pending: &Pending,
        reply: Reply,
    ) -> Result<Commit, EngineError> {
        let jids = pending_jids(pending);
        let answers = read_msearch(&publish_searches(&at.spec.context, jids), &reply)?;
        let mut notes = Vec::new();
        let events = soft(answers.events, "publish events", &mut notes);
        let cache = soft(answers.cache, "job cache", &mut notes);
        for note in &mut notes {
            note.push_str(" (the user column is left empty where it had the user)");
        }
        let mut page = JobListPage::of_jids(jids);
        attach_publish(&mut page, events.as_ref(), cache.as_ref());
        let user_of = |jid: &str| {
            page.jobs
                .iter()
                .find(|j| j.jid == jid)
                .and_then(|j| j.publish.as_ref()?.user.as_deref())
        };
        let docs = match &pending.work {
            PendingWork::Users { docs, .. } => docs.as_slice(),
            PendingWork::Details { .. } => &[],
        };
        let rows: Vec<Row> = docs
            .iter()
            .flat_map(|d| state_rows(d, user_of(&d.jid), &at.spec.columns))
            .collect();
        Ok(Commit {
            rows,
            looked_at: pending.looked_at,
            next: pending.next.clone(),
            last: pending.last,
            total: pending.total,
            total_is_estimate: None,
            pit_id: pending.pit_id.clone(),
            notes: pending.notes.iter().cloned().chain(notes).collect(),
            read: pending.read.clone(),
        })
    }
}

/// A scalar field as text (`jid` and `minion` for a note).
fn text_of(value: Option<&Value>) -> String {
    value.map(scalar_text).unwrap_or_default()
}

/// The file's notes on a return the page reader could not read whole
/// (none for a return that read).
fn unread_notes<'a>(
    id: &'a str,
    minion: &'a str,
    jid: &'a str,
    notes: &'a [String],
    no_rows: bool,
) -> impl Iterator<Item = String> + 'a {
    let rows = if no_rows {
        "; it has no rows in this file"
    } else {
        ""
    };
    notes
        .iter()
        .map(move |n| format!("the return `{id}` (minion `{minion}`, jid {jid}): {n}{rows}"))
}

fn pending_jids(pending: &Pending) -> &[String] {
    match &pending.work {
        PendingWork::Users { jids, .. } | PendingWork::Details { jids } => jids,
    }
}
