//! Export pages and the export plan: any answer is read or refused, an
//! answer that is refused moves nothing, and the file stays a rectangle.

use proptest::collection::vec;
use proptest::prelude::*;
use saltscope_core::engine::{Answer, EngineError, Product, ProductInfo, Reply};
use saltscope_core::export::page::{last_sort_values, read_hits_page};
use saltscope_core::export::spec::{ExportSpec, ViewFilter};
use saltscope_core::export::{CsvOptions, ExportKind, ExportPlan};
use saltscope_core::model::{ReturnFields, StateTally};
use saltscope_core::query::audit::AuditFilter;
use saltscope_core::query::events::EventFilter;
use saltscope_core::query::filter::JobFilter;
use saltscope_core::query::QueryContext;
use serde_json::{json, Value};

use crate::gen::{
    data, hit_around, json, mutate, nest, object, page_bytes, return_hit, return_source, scalar,
    text,
};
use crate::msearch::search_answer;
use crate::rows::{kind_and_columns, records};

fn both_readers(bytes: &[u8], page_size: usize) {
    let _ = read_hits_page::<ReturnFields<Value>>("u", bytes, page_size);
    let _ = read_hits_page::<ReturnFields<StateTally>>("u", bytes, page_size);
    let _ = last_sort_values(bytes);
}

/// A page of return hits as the engine sends it, some odd.
fn page() -> BoxedStrategy<Vec<u8>> {
    (
        vec(return_hit(), 0..5),
        prop_oneof![json(), (0u64..10).prop_map(|n| json!({"value": n}))],
    )
        .prop_map(|(hits, total)| page_bytes(&hits, Some(total)))
        .boxed()
}

fn product() -> BoxedStrategy<ProductInfo> {
    proptest::sample::select(
        &[
            (Product::Elasticsearch, (8, 15, 0)),
            (Product::Elasticsearch, (7, 10, 2)),
            (Product::Elasticsearch, (6, 8, 0)),
            (Product::OpenSearch, (3, 8, 0)),
            (Product::OpenSearch, (2, 11, 0)),
            (Product::OpenSearch, (1, 3, 0)),
        ][..],
    )
    .prop_map(|(product, v)| ProductInfo {
        product,
        version: format!("{}.{}.{}", v.0, v.1, v.2),
        version_parts: v,
        cluster_name: "c".into(),
    })
    .boxed()
}

fn engine_error() -> BoxedStrategy<EngineError> {
    let kind = proptest::option::of(prop_oneof![
        proptest::sample::select(
            &[
                "search_context_missing_exception",
                "index_not_found_exception",
                "query_shard_exception",
                "invalid_index_name_exception",
            ][..]
        )
        .prop_map(str::to_string),
        text(),
    ]);
    prop_oneof![
        (
            100u16..600,
            kind,
            prop_oneof![
                Just("No search context found for id [1]".to_string()),
                text()
            ]
        )
            .prop_map(|(status, kind, reason)| EngineError::Status {
                url: "u".into(),
                status,
                kind,
                reason
            }),
        text().prop_map(|detail| EngineError::BadResponse { url: None, detail }),
        text().prop_map(|detail| EngineError::Unreachable {
            url: "u".into(),
            detail
        }),
    ]
    .boxed()
}

/// What the engine might answer to any of the plan's requests.
fn answer_bytes() -> BoxedStrategy<Vec<u8>> {
    let to_vec = |v: Value| serde_json::to_vec(&v).expect("a Value serializes");
    let valid = prop_oneof![
        3 => page(),
        2 => vec(search_answer(), 0..5).prop_map(move |r| to_vec(object([("responses", Value::Array(r))]))).boxed(),
        1 => (text(), any::<bool>()).prop_map(move |(id, es)| to_vec(if es { json!({"id": id}) } else { json!({"pit_id": id}) })).boxed(),
        1 => vec((json(), 0u64..3), 0..4).prop_map(move |buckets| {
            let buckets: Vec<Value> = buckets
                .into_iter()
                .map(|(jid, failed)| json!({"key": {"jid": jid}, "doc_count": 1, "failed": {"doc_count": failed}}))
                .collect();
            to_vec(json!({"aggregations": {"jobs": {"buckets": buckets}, "job_count": {"value": 3}}}))
        }).boxed(),
        1 => json().prop_map(to_vec).boxed(),
    ]
    .boxed();
    prop_oneof![
        4 => valid.clone(),
        2 => valid.prop_flat_map(mutate).boxed(),
        1 => vec(any::<u8>(), 0..64),
    ]
    .boxed()
}

fn answer() -> BoxedStrategy<Answer> {
    prop_oneof![
        4 => answer_bytes().prop_map(|body| Ok(Reply { url: "http://h/es/x".into(), body })),
        1 => engine_error().prop_map(Err),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_bytes_are_a_page_or_an_error(bytes in vec(any::<u8>(), 0..300), page_size in 1usize..5) {
        both_readers(&bytes, page_size);
    }

    #[test]
    fn a_nearly_valid_page_is_a_page_or_an_error(bytes in page().prop_flat_map(mutate), page_size in 1usize..5) {
        both_readers(&bytes, page_size);
    }

    #[test]
    fn an_engines_page_reads_every_hit_and_continues_from_the_last_ones_sort(
        hits in vec(hit_around(return_source(data())), 0..6),
        page_size in 1usize..6,
    ) {
        let bytes = page_bytes(&hits, Some(json!({"value": hits.len(), "relation": "eq"})));
        let last_sort = hits.last().and_then(|h| h.get("sort")).and_then(Value::as_array).cloned();
        // Floats as read back from the bytes.
        let last_sort: Option<Vec<Value>> = last_sort
            .map(|s| serde_json::from_slice(&serde_json::to_vec(&s).expect("serializes")).expect("JSON"));
        if last_sort.is_some() {
            prop_assert_eq!(last_sort_values(&bytes), last_sort.clone());
        }
        let read = read_hits_page::<ReturnFields<StateTally>>("u", &bytes, page_size);
        match (hits.len() >= page_size, &last_sort, read) {
            (false, _, Ok((info, read))) => {
                prop_assert_eq!(read.len(), hits.len());
                prop_assert_eq!(info.next, None);
                prop_assert_eq!(info.total, Some(hits.len() as u64));
            }
            (true, Some(sort), Ok((info, read))) => {
                prop_assert_eq!(read.len(), hits.len());
                prop_assert_eq!(info.next.as_ref(), Some(sort));
            }
            (true, None, Err(e)) => prop_assert!(e.to_string().contains("no sort values"), "{e}"),
            (full, sort, read) => prop_assert!(false, "full {full}, sort {sort:?}: {read:?}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_export_plan_takes_any_answer_moving_only_on_success_and_writes_a_rectangle(
        (kind, columns) in kind_and_columns(),
        product in product(),
        page_size in 1usize..4,
        bom in any::<bool>(),
        answers in vec(answer(), 1..8),
    ) {
        let spec = ExportSpec {
            kind,
            columns,
            product,
            context: QueryContext::at(1_796_083_200_000),
            filter: match kind {
                ExportKind::Audit => ViewFilter::Audit(AuditFilter::default()),
                ExportKind::Events => ViewFilter::Events(EventFilter::default()),
                _ => ViewFilter::Jobs(JobFilter::default()),
            },
            csv: CsvOptions { bom, ..CsvOptions::default() },
            page_size: Some(page_size),
            keep_alive: "2m".into(),
        };
        let mut plan = ExportPlan::new(spec).expect("the filter fits the kind");
        let width = plan.spec().columns.len();
        let mut file = Vec::new();
        for answer in answers {
            if let Ok(reply) = &answer {
                let _ = plan.request_after(&reply.body);
            }
            let _ = plan.next_request();
            let before = plan.state().clone();
            match plan.handle(answer) {
                Ok(bytes) => file.extend(bytes),
                Err(_) => prop_assert_eq!(plan.state(), &before, "a refused answer moved the plan"),
            }
            let _ = (plan.close_request(), plan.shortfall(), plan.notes());
        }
        for record in records(&file) {
            prop_assert_eq!(record.len(), width);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_page_holding_a_return_nested_at_any_depth_reads_every_return(
        depth in 0usize..400,
        objects in any::<bool>(),
        leaf in scalar(),
        which in 0usize..3,
        in_a_result in any::<bool>(),
    ) {
        let hits: Vec<Value> = (0..3)
            .map(|i| {
                let mut hit = json!({"_index": "salt-state_apply-v1", "_id": i.to_string(), "sort": [i],
                    "_source": {"jid": "1", "minion": format!("m{i}"), "fun": "state.apply", "retcode": 0,
                                "data": {"a_|-b_|-c_|-d": {"result": true, "changes": {}}}}});
                if i == which {
                    let deep = nest(depth, leaf.clone(), objects);
                    if in_a_result {
                        hit["_source"]["data"]["a_|-b_|-c_|-d"]["result"] = deep;
                    } else {
                        hit["_source"]["data"] = deep;
                    }
                }
                hit
            })
            .collect();
        let bytes = page_bytes(&hits, None);
        let whole = read_hits_page::<ReturnFields<Value>>("u", &bytes, 3).expect("the page reads");
        let tallied = read_hits_page::<ReturnFields<StateTally>>("u", &bytes, 3).expect("the page reads");
        prop_assert_eq!(whole.0.next, Some(vec![json!(2)]));
        prop_assert_eq!(tallied.0.next, Some(vec![json!(2)]));
        for (i, (w, t)) in whole.1.iter().zip(&tallied.1).enumerate() {
            let id = i.to_string();
            prop_assert_eq!((&w.id, &t.id), (&id, &id));
            let minion = Some(json!(format!("m{i}")));
            prop_assert_eq!(&w.source.as_ref().expect("a source").minion, &minion);
            prop_assert_eq!(&t.source.as_ref().expect("a source").minion, &minion);
            if i != which {
                prop_assert!(w.notes.is_empty() && t.notes.is_empty());
            }
        }
    }
}
