//! The export plan's state machine, driven by hand: the requests it plans
//! for each product and kind, and what it makes of each answer.

use serde_json::{json, Value};

use super::columns::{id, ColumnChoice};
use super::plan::ExportPlan;
use super::spec::*;
use super::testing::*;
use super::ExportKind;
use crate::engine::{EngineError, Method, PitApi, Product};
use crate::query::filter::JobFilter;

#[test]
fn paging_follows_the_engine_and_its_version() {
    use Product::*;
    let p = |pr, v| Paging::for_hits(&product(pr, v));
    assert_eq!(p(Elasticsearch, (7, 9, 3)), Paging::SearchAfter);
    assert_eq!(
        p(Elasticsearch, (7, 10, 2)),
        Paging::Pit(PitApi::Elasticsearch { shard_doc: false })
    );
    assert_eq!(
        p(Elasticsearch, (7, 12, 0)),
        Paging::Pit(PitApi::Elasticsearch { shard_doc: true })
    );
    assert_eq!(
        p(Elasticsearch, (8, 15, 1)),
        Paging::Pit(PitApi::Elasticsearch { shard_doc: true })
    );
    assert_eq!(p(OpenSearch, (1, 3, 19)), Paging::SearchAfter);
    assert_eq!(p(OpenSearch, (2, 3, 0)), Paging::SearchAfter);
    assert_eq!(
        p(OpenSearch, (2, 4, 0)),
        Paging::Pit(PitApi::OpenSearch { shard_doc: false })
    );
    assert_eq!(
        p(OpenSearch, (3, 2, 0)),
        Paging::Pit(PitApi::OpenSearch { shard_doc: false })
    );
    assert_eq!(
        p(OpenSearch, (3, 3, 0)),
        Paging::Pit(PitApi::OpenSearch { shard_doc: true })
    );
}

#[test]
fn without_a_pit_it_falls_back_to_search_after_with_a_unique_sort() {
    // Elasticsearch 7.10 OSS: the version says PIT, the answer says no.
    let mut plan = ExportPlan::new(spec(
        ExportKind::Returns,
        product(Product::Elasticsearch, (7, 10, 2)),
        2,
    ))
    .unwrap();
    let open = plan.next_request().unwrap();
    assert_eq!(open.path, "/salt-*/_pit?keep_alive=2m");
    let oss = EngineError::from_status(
        &open.path,
        400,
        r#"{"error":{"type":"invalid_index_name_exception","reason":"Invalid index name [salt-*], must not contain '*'"},"status":400}"#,
    );
    assert_eq!(plan.handle(Err(oss)).unwrap(), b"");
    assert_eq!(plan.state().paging, Paging::SearchAfter);
    assert!(plan.notes()[0].contains("no point in time"));

    let first = plan.next_request().unwrap();
    assert_eq!(
        first.path,
        "/salt-*/_search?ignore_unavailable=true&allow_no_indices=true"
    );
    let b = body(&first);
    assert_eq!(b["size"], 2);
    assert_eq!(b["track_total_hits"], true);
    assert!(b.get("pit").is_none() && b.get("search_after").is_none());
    assert_eq!(
        b["sort"],
        json!([{"@timestamp": {"order": "desc", "unmapped_type": "date"}},
               {"jid.keyword": {"order": "desc", "unmapped_type": "keyword"}},
               {"minion.keyword": {"order": "asc", "unmapped_type": "keyword"}},
               {"_index": {"order": "asc", "unmapped_type": "keyword"}}])
    );
    assert!(b["query"].to_string().contains("salt-master-job-cache"));
    let mut file = plan
        .handle(ok(page(
            vec![hit("3", "a", 3000, None), hit("3", "b", 2000, None)],
            3,
            None,
        )))
        .unwrap();
    assert_eq!(plan.state().total, Some(3));
    assert_eq!(plan.state().rows_written, 2);
    let second = body(&plan.next_request().unwrap());
    assert_eq!(
        second["search_after"],
        json!([2000, "3", "b", "salt-state_apply-v1"])
    );
    assert_eq!(second["track_total_hits"], false, "the total is asked once");
    file.extend(
        plan.handle(ok(page(vec![hit("2", "a", 1000, None)], 3, None)))
            .unwrap(),
    );
    assert!(plan.is_done());
    assert!(plan.next_request().is_none());
    assert!(plan.close_request().is_none(), "no PIT to close");
    assert_eq!(plan.shortfall(), None);
    let back = read_csv(&file);
    assert_eq!(back.len(), 4, "header once and three rows");
    assert_eq!(back[0][0], "Time (UTC)");
    assert_eq!(
        back[1][..4],
        ["1970-01-01T00:00:03.000Z", "3", "a", "state.apply"]
    );
    assert_eq!(back[3][6..9], ["2", "1", "0"]);
}

#[test]
fn elasticsearch_pages_through_a_pit_with_shard_doc_and_closes_it() {
    let mut plan = ExportPlan::new(spec(
        ExportKind::States,
        product(Product::Elasticsearch, (8, 15, 0)),
        1,
    ))
    .unwrap();
    plan.set_columns(
        ColumnChoice::parse(ExportKind::States, "jid,minion,state_id,changed").columns,
    );
    assert_eq!(
        plan.next_request().unwrap().path,
        "/salt-*/_pit?keep_alive=2m"
    );
    plan.handle(ok(json!({"id": "pit-1"}))).unwrap();
    let req = plan.next_request().unwrap();
    assert_eq!(req.path, "/_search", "a PIT search names no index");
    let b = body(&req);
    assert_eq!(b["pit"], json!({"id": "pit-1", "keep_alive": "2m"}));
    assert_eq!(b["sort"][0]["_index"]["order"], "asc");
    assert_eq!(
        b["sort"][1],
        json!({"_shard_doc": "asc"}),
        "document order: no ranking per page"
    );
    assert_eq!(b["sort"].as_array().unwrap().len(), 4);
    assert!(b["query"]
        .to_string()
        .contains(r#""terms":{"fun.keyword":["state.apply""#));
    let bytes = plan
        .handle(ok(page(vec![hit("9", "m", 5, Some(77))], 1, Some("pit-2"))))
        .unwrap();
    assert_eq!(
        plan.state().pit_id.as_deref(),
        Some("pit-2"),
        "a renewed id is used"
    );
    assert_eq!(plan.state().rows_written, 2, "two states, one return");
    assert_eq!(plan.state().docs_read, 1);
    assert_eq!(read_csv(&bytes)[1], ["9", "m", "a", "no"]);
    let b = body(&plan.next_request().unwrap());
    assert_eq!(b["pit"]["id"], "pit-2");
    assert_eq!(
        b["search_after"],
        json!([5, "9", "m", "salt-state_apply-v1", 77])
    );
    plan.handle(ok(page(vec![], 1, Some("pit-2")))).unwrap();
    assert!(plan.is_done());
    let close = plan.close_request().unwrap();
    assert_eq!(
        (close.method, close.path.as_str()),
        (Method::Delete, "/_pit")
    );
    assert_eq!(body(&close), json!({"id": "pit-2"}));
}

#[test]
fn the_next_page_is_requested_from_the_end_of_the_bytes_and_the_guess_is_checked() {
    let os = product(Product::OpenSearch, (3, 8, 0));
    let mut plan = ExportPlan::new(spec(ExportKind::Returns, os.clone(), 2)).unwrap();
    assert_eq!(
        plan.request_after(b"{}"),
        None,
        "no guess while opening the PIT"
    );
    plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
    let full = serde_json::to_vec(&page(
        vec![hit("2", "a", 20, Some(4)), hit("1", "b", 10, Some(7))],
        5,
        Some("p1"),
    ))
    .unwrap();
    let early = plan
        .request_after(&full)
        .expect("a full page's next request");
    plan.handle(bytes(full)).unwrap();
    assert_eq!(plan.next_request(), Some(early), "the guess held");
    assert_eq!(
        body(&plan.next_request().unwrap())["search_after"],
        json!([10, "1", "b", "salt-state_apply-v1", 7])
    );
    // A renewed PIT id makes the guess wrong: the plan's request wins.
    let renewed = serde_json::to_vec(&page(
        vec![hit("0", "c", 5, Some(1)), hit("0", "d", 5, Some(2))],
        5,
        Some("p2"),
    ))
    .unwrap();
    let early = plan.request_after(&renewed).unwrap();
    plan.handle(bytes(renewed)).unwrap();
    assert_ne!(plan.next_request(), Some(early));
    // The last page, by the total: no guess.
    let last = serde_json::to_vec(&page(vec![hit("0", "e", 1, Some(3))], 5, Some("p2"))).unwrap();
    assert_eq!(plan.request_after(&last), None);
    plan.handle(bytes(last)).unwrap();
    assert!(plan.is_done() && plan.next_request().is_none());

    // States with the user column: the guess outlives the publish lookup.
    let mut plan = ExportPlan::new(spec(ExportKind::States, os, 1)).unwrap();
    plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
    let full = serde_json::to_vec(&page(vec![hit("2", "a", 20, Some(4))], 3, Some("p1"))).unwrap();
    let early = plan.request_after(&full).unwrap();
    plan.handle(bytes(full)).unwrap();
    assert!(
        plan.request_after(b"{\"sort\":[1]}").is_none(),
        "no guess for a lookup"
    );
    assert_ne!(
        plan.next_request().as_ref(),
        Some(&early),
        "the publish lookup first"
    );
    plan.handle(ok(
        json!({"responses": [{"hits": {"hits": []}}, {"hits": {"hits": []}}]}),
    ))
    .unwrap();
    assert_eq!(plan.next_request(), Some(early));
}

#[test]
fn returns_rows_from_tallied_states_equal_the_models() {
    let product = product(Product::OpenSearch, (3, 8, 0));
    let mut hits: Vec<Value> = (0..6)
        .map(|i| hit(&i.to_string(), "m", i, Some(i)))
        .collect();
    hits[1]["_source"]["data"] = json!("plain text");
    hits[2]["_source"]["data"]["x_|-y_|-z_|-w"] =
        json!({"result": false, "changes": {"_orig_key": 1}});
    hits[3]["_source"]["counts"] = json!({"succeeded": 5, "failed": 1});
    hits[4]["_source"].as_object_mut().unwrap().remove("data");
    hits[5]["_source"]["data"] = json!({"return": ["Rendering SLS 'x' failed"]});
    let answer = page(hits, 6, Some("p"));
    let rows = |with_output: bool| {
        let mut plan = ExportPlan::new(spec(ExportKind::Returns, product.clone(), 100)).unwrap();
        let mut columns = ExportKind::Returns.columns().to_vec();
        if !with_output {
            columns.retain(|c| c.id != id::OUTPUT);
        }
        plan.set_columns(columns);
        plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
        read_csv(&plan.handle(ok(answer.clone())).unwrap())
    };
    let (tallied, whole) = (rows(false), rows(true));
    assert_eq!(tallied.len(), 7);
    let output = whole[0].iter().position(|h| h == "Output").unwrap();
    for (t, w) in tallied.iter().zip(&whole) {
        let mut w = w.clone();
        w.remove(output);
        assert_eq!(t, &w);
    }
    let failed = tallied[0]
        .iter()
        .position(|h| h == "States failed")
        .unwrap();
    assert_eq!(tallied[3][failed], "1", "{:?}", tallied[3]);
}

#[test]
fn opensearch_uses_its_own_pit_api() {
    let mut plan = ExportPlan::new(spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (2, 19, 0)),
        10,
    ))
    .unwrap();
    assert!(plan
        .next_request()
        .unwrap()
        .path
        .starts_with("/salt-*/_search/point_in_time?"));
    plan.handle(ok(
        json!({"pit_id": "os-1", "_shards": {"total": 1, "successful": 1, "failed": 0}}),
    ))
    .unwrap();
    let b = body(&plan.next_request().unwrap());
    assert_eq!(b["pit"]["id"], "os-1");
    assert_eq!(
        b["sort"].as_array().unwrap().len(),
        4,
        "no _shard_doc before 3.3"
    );
    plan.handle(ok(page(vec![hit("1", "m", 1, None)], 1, None)))
        .unwrap();
    assert!(plan.is_done());
    assert_eq!(
        body(&plan.close_request().unwrap()),
        json!({"pit_id": ["os-1"]})
    );
}

#[test]
fn a_short_read_is_reported() {
    let mut plan = ExportPlan::new(spec(
        ExportKind::Returns,
        product(Product::Elasticsearch, (7, 9, 0)),
        5,
    ))
    .unwrap();
    plan.handle(ok(page(vec![hit("1", "m", 1, None)], 3, None)))
        .unwrap();
    assert!(plan.is_done());
    assert_eq!(plan.shortfall(), Some(2));
}

#[test]
fn the_states_user_comes_from_the_publish_data_of_the_pages_jobs() {
    let mut plan = ExportPlan::new(spec(
        ExportKind::States,
        product(Product::Elasticsearch, (7, 9, 0)),
        5,
    ))
    .unwrap();
    plan.handle(ok(page(
        vec![
            hit("7", "a", 2, None),
            hit("7", "b", 1, None),
            hit("6", "a", 0, None),
        ],
        3,
        None,
    )))
    .unwrap();
    let lookup = plan.next_request().unwrap();
    assert_eq!(lookup.path, "/_msearch");
    assert_eq!(lookup.body.content_type(), Some("application/x-ndjson"));
    let text = lookup.body.text();
    assert!(
        text.contains(r#"["salt/job/7/new","salt/run/7/new","salt/job/6/new","salt/run/6/new"]"#),
        "{text}"
    );
    assert_eq!(
        plan.state().rows_written,
        0,
        "nothing written before the users are known"
    );
    let answer = json!({"responses": [
        {"hits": {"hits": [{"_source": {"tag": "salt/job/7/new", "data": {"user": "sudo_alice", "fun": "state.apply"}}}]}},
        {"error": {"type": "index_not_found_exception", "reason": "no such index"}, "status": 404}
    ]});
    let rows = read_csv(&plan.handle(ok(answer)).unwrap());
    assert_eq!(rows.len(), 1 + 6);
    assert_eq!(rows[1][4], "sudo_alice");
    assert_eq!(rows[5][4], "", "no publish data for job 6");
    assert!(plan
        .notes()
        .iter()
        .any(|n| n.contains("job cache unavailable")));
    assert!(plan.is_done());
}

#[test]
fn state_functions_are_the_models_and_filters_must_match_their_kind() {
    assert!(STATE_FUNCTIONS
        .iter()
        .all(|f| crate::model::is_state_function(f)));
    let mut s = spec(
        ExportKind::Audit,
        product(Product::OpenSearch, (2, 19, 0)),
        5,
    );
    s.filter = ViewFilter::Jobs(JobFilter::default());
    assert!(ExportPlan::new(s).is_err());
    let mut s = spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (2, 19, 0)),
        50_000,
    );
    s.columns.clear();
    let plan = ExportPlan::new(s).unwrap();
    assert_eq!(plan.page_size(), MAX_PAGE);
    assert_eq!(plan.spec().columns, ExportKind::Returns.default_columns());
}

/// A page whose second hit's `data` is nested 200 levels deep, as bytes.
fn page_with_a_deep_return() -> Vec<u8> {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let mut hits = vec![
        hit("3", "a", 30, None),
        hit("3", "deep-01", 30, None),
        hit("3", "c", 30, None),
    ];
    hits[1]["_source"]["data"] = json!("DEEP");
    serde_json::to_string(&page(hits, 3, Some("p")))
        .unwrap()
        .replace(r#""DEEP""#, &deep)
        .into_bytes()
}

#[test]
fn a_return_nested_too_deep_to_read_is_in_the_file_with_a_note_naming_it() {
    // It failed the page, so the export, retry after retry.
    let os = product(Product::OpenSearch, (3, 8, 0));
    let note = "the return `3deep-01` (minion `deep-01`, jid 3): field `data` is nested deeper than 128 levels: read as its raw JSON text";
    for with_output in [false, true] {
        let mut plan = ExportPlan::new(spec(ExportKind::Returns, os.clone(), 100)).unwrap();
        let mut columns = ExportKind::Returns.columns().to_vec();
        if !with_output {
            columns.retain(|c| c.id != id::OUTPUT);
        }
        plan.set_columns(columns);
        plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
        let rows = read_csv(&plan.handle(bytes(page_with_a_deep_return())).unwrap());
        assert_eq!(rows.len(), 4, "header and every return");
        assert_eq!(rows[2][2], "deep-01");
        assert_eq!(rows[2][6], "", "a list holds no states");
        assert_eq!(rows[1][6], "2");
        if with_output {
            assert!(rows[2][11].starts_with("[[[["), "{}", rows[2][11]);
            assert_eq!(plan.notes(), [note]);
        } else {
            // Tallying skips what is not a state unread, however deep.
            assert!(plan.notes().is_empty(), "{:?}", plan.notes());
        }
        assert!(plan.is_done());
    }
    // The states export: the others' states, and the note says it has none.
    let mut plan = ExportPlan::new(spec(ExportKind::States, os, 100)).unwrap();
    plan.set_columns(ColumnChoice::parse(ExportKind::States, "minion,state_id").columns);
    plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
    let rows = read_csv(&plan.handle(bytes(page_with_a_deep_return())).unwrap());
    let minions: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(minions, ["a", "a", "c", "c"]);
    assert_eq!(
        plan.notes(),
        [format!("{note}; it has no rows in this file")]
    );
}

/// The raw text of the last `sort` array in an answer, as an exchange
/// reads it to fill `NextPage::body` (`js/fetch-worker.js`).
fn raw_last_sort(answer: &[u8]) -> String {
    const KEY: &[u8] = b"\"sort\":[";
    let at = answer.windows(KEY.len()).rposition(|w| w == KEY).unwrap() + KEY.len() - 1;
    serde_json::Deserializer::from_slice(&answer[at..])
        .into_iter::<&serde_json::value::RawValue>()
        .next()
        .unwrap()
        .unwrap()
        .get()
        .to_string()
}

#[test]
fn each_page_names_the_next_and_the_answer_fills_it_in_byte_for_byte() {
    for (engine, version) in [
        (Product::OpenSearch, (3, 8, 0)),
        (Product::Elasticsearch, (8, 15, 0)),
        (Product::Elasticsearch, (7, 9, 0)),
    ] {
        let mut plan =
            ExportPlan::new(spec(ExportKind::Returns, product(engine, version), 2)).unwrap();
        if plan.state().paging.is_pit() {
            plan.handle(ok(json!({"pit_id": "p1", "id": "p1"})))
                .unwrap();
        }
        let mut sent = plan.next_request().unwrap();
        for (i, minion) in ["a", "é\"\\/ü", "c"].iter().enumerate() {
            let hits = vec![
                hit("2", "z", 20 - i as i64, Some(4)),
                hit("1", minion, 10 - i as i64, Some(1 << 40)),
            ];
            let answer = serde_json::to_vec(&page(hits, 9, Some("p1"))).unwrap();
            let next_page = sent.next_page.clone().expect("a page names the next");
            plan.handle(bytes(answer.clone())).unwrap();
            let next = plan.next_request().unwrap();
            assert_eq!(next_page.path, next.path);
            assert_eq!(
                next_page.body_after(&raw_last_sort(&answer)),
                next.body.text(),
                "{engine:?} page {i}: what an exchange sends ahead is what the plan sends"
            );
            sent = next;
        }
    }
}

#[test]
fn the_first_page_is_short_and_the_rest_full() {
    let os = product(Product::OpenSearch, (3, 8, 0));
    let mut plan = ExportPlan::new(spec(ExportKind::Returns, os, 10_000)).unwrap();
    plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
    let first = plan.next_request().unwrap();
    assert_eq!(body(&first)["size"], 1000);
    assert!(first.next_page.unwrap().body.contains(r#""size":10000"#));
    let hits: Vec<Value> = (0..1000)
        .map(|i| hit(&format!("{i}"), "m", 5000 - i, None))
        .collect();
    let full = serde_json::to_vec(&page(hits, 20_000, Some("p1"))).unwrap();
    let early = plan.request_after(&full).unwrap();
    plan.handle(bytes(full)).unwrap();
    assert!(
        !plan.is_done(),
        "1,000 hits fill the first page: more to come"
    );
    let second = plan.next_request().unwrap();
    assert_eq!(body(&second)["size"], 10_000);
    assert_eq!(Some(&second), Some(&early), "the guess held");
    // A second page of 1,000 is short: the last.
    let hits: Vec<Value> = (0..1000)
        .map(|i| hit(&format!("{i}"), "n", 3000 - i, None))
        .collect();
    plan.handle(ok(page(hits, 20_000, Some("p1")))).unwrap();
    assert!(plan.is_done());
}

#[test]
fn no_page_is_sent_ahead_past_the_total() {
    let os = product(Product::OpenSearch, (3, 8, 0));
    let mut plan = ExportPlan::new(spec(ExportKind::Returns, os, 2)).unwrap();
    plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
    let pages = [
        vec![hit("5", "a", 50, Some(1)), hit("4", "a", 40, Some(2))],
        vec![hit("3", "a", 30, Some(3)), hit("2", "a", 20, Some(4))],
        vec![hit("1", "a", 10, Some(5))],
    ];
    // 5 returns in pages of 2: hits 0-1, 2-3 and 4.
    let mut sent = plan.next_request().unwrap();
    for (i, hits) in pages.into_iter().enumerate() {
        let last = i == 2;
        assert_eq!(
            sent.next_page.is_some(),
            !last,
            "page {i}: a page names the next unless it reaches the total"
        );
        // Only the first page's answer (it asks for the total) is checked
        // for one: after it, the total is known when the next is named.
        if let Some(next_page) = &sent.next_page {
            assert_eq!(next_page.from, (i == 0).then_some(2), "page {i}");
        }
        let answer = serde_json::to_vec(&page(hits, 5, Some("p1"))).unwrap();
        // The total is known once the first page is read.
        let early = plan.request_after(&answer);
        assert_eq!(early.is_some(), i < 2, "page {i}: a page asked for early");
        plan.handle(bytes(answer)).unwrap();
        assert_eq!(plan.is_done(), last);
        if let Some(next) = plan.next_request() {
            if let Some(early) = early {
                assert_eq!(next, early, "page {i}: the guess held");
            }
            sent = next;
        }
    }
    assert_eq!(plan.state().rows_written, 5);
}

#[test]
fn an_export_that_fits_its_first_page_asks_for_nothing_after_it() {
    let os = product(Product::OpenSearch, (3, 8, 0));
    // 2 returns in pages of 2 (a full first page), and 1 (a short one).
    for n in [2, 1] {
        let mut plan = ExportPlan::new(spec(ExportKind::Returns, os.clone(), 2)).unwrap();
        plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
        let first = plan.next_request().unwrap();
        // The total is not known when the first page is asked for: it
        // names the next, with how many hits come before it, for the
        // exchange to drop once the answer gives the total.
        let named = first.next_page.expect("the first page names the next");
        assert_eq!(named.from, Some(2));
        let hits = (0..n)
            .map(|i| hit(&format!("{i}"), "a", 50 - i, Some(i)))
            .collect();
        let answer = serde_json::to_vec(&page(hits, n as u64, Some("p1"))).unwrap();
        assert_eq!(plan.request_after(&answer), None, "{n} returns");
        plan.handle(bytes(answer)).unwrap();
        assert_eq!(plan.state().rows_written, n as u64);
        // A full page is not the last until a short one says so (a total
        // can be wrong), but that page names none after it.
        match plan.next_request() {
            None => assert_eq!(n, 1),
            Some(last) => assert_eq!((n, last.next_page), (2, None)),
        }
    }
}
