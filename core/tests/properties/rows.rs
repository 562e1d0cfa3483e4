//! CSV rows: as wide as the header for every kind, every column choice and
//! any document; the returns export counts states alike whether it tallies
//! them from the bytes or builds them.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use saltscope_core::export::columns::Column;
use saltscope_core::export::encode::BOM;
use saltscope_core::export::page::read_hits_page;
use saltscope_core::export::rows::{
    audit_row, event_row, job_row, return_row, state_rows, tallied_return_row, JobRow, Row,
};
use saltscope_core::export::{CsvEncoder, CsvOptions, ExportKind};
use saltscope_core::model::{
    EventDoc, HighstateSummary, PublishInfo, PublishSource, ReturnData, ReturnDoc, ReturnFields,
    StateTally,
};
use saltscope_core::query::audit::{AuditEntry, AuditKind};
use saltscope_core::query::jobs::JobSummary;
use serde_json::Value;

use crate::gen::{data, hit_around, page_bytes, return_hit, return_source, text, time_text};

/// A kind and a choice of its columns: any of them, in any order, repeats
/// allowed (the row builders take any list; the UI's choice has none).
pub fn kind_and_columns() -> BoxedStrategy<(ExportKind, Vec<Column>)> {
    proptest::sample::select(&ExportKind::ALL[..])
        .prop_flat_map(|kind| {
            let all = kind.columns();
            (
                Just(kind),
                vec(proptest::sample::select(all), 0..all.len() + 3),
            )
        })
        .boxed()
}

fn opt_text() -> BoxedStrategy<Option<String>> {
    option::of(text()).boxed()
}

fn publish() -> BoxedStrategy<PublishInfo> {
    (
        text(),
        opt_text(),
        vec(text(), 0..3),
        (opt_text(), opt_text(), opt_text()),
        option::of(vec(text(), 0..3)),
        vec(text(), 0..2),
        option::of(prop_oneof![time_text(), text()]),
        any::<bool>(),
    )
        .prop_map(
            |(jid, fun, args, (target, target_type, user), minions, unknown, stamp, event)| {
                PublishInfo {
                    jid,
                    fun,
                    args,
                    target,
                    target_type,
                    user,
                    minions,
                    unknown_minions: unknown,
                    stamp,
                    source: if event {
                        PublishSource::Event
                    } else {
                        PublishSource::JobCache
                    },
                }
            },
        )
        .boxed()
}

fn summary() -> BoxedStrategy<HighstateSummary> {
    (any::<[u64; 5]>(), any::<f64>())
        .prop_map(
            |([succeeded, unchanged, changed, failed, total], total_ms)| HighstateSummary {
                succeeded,
                unchanged,
                changed,
                failed,
                total,
                total_ms,
            },
        )
        .boxed()
}

fn job_row_value() -> BoxedStrategy<JobRow> {
    (
        (
            text(),
            vec(text(), 0..3),
            option::of(any::<i64>()),
            option::of(any::<i64>()),
        ),
        (any::<u64>(), any::<u64>(), vec(text(), 0..2), any::<bool>()),
        option::of(any::<(u64, u64)>()),
        option::of(publish()),
        option::of(summary()),
    )
        .prop_map(
            |(
                (jid, functions, first, last),
                (returned, failed, failed_minions, runner),
                counts,
                publish,
                states,
            )| JobRow {
                job: JobSummary {
                    jid,
                    functions,
                    first_return_ms: first,
                    last_return_ms: last,
                    returned,
                    failed,
                    failed_minions,
                    runner,
                    state_counts: counts,
                    publish,
                },
                states,
            },
        )
        .boxed()
}

fn audit_entry() -> BoxedStrategy<AuditEntry> {
    (
        (
            text(),
            any::<bool>(),
            option::of(prop_oneof![time_text(), text()]),
        ),
        (opt_text(), opt_text(), vec(text(), 0..3)),
        (opt_text(), opt_text(), option::of(any::<usize>())),
        (any::<bool>(), vec(text(), 0..2)),
    )
        .prop_map(
            |(
                (jid, runner, stamp),
                (user, fun, args),
                (target, target_type, targeted),
                (event, risks),
            )| AuditEntry {
                jid,
                kind: if runner {
                    AuditKind::Runner
                } else {
                    AuditKind::Job
                },
                stamp,
                user,
                fun,
                args,
                target,
                target_type,
                targeted,
                source: if event {
                    PublishSource::Event
                } else {
                    PublishSource::JobCache
                },
                risks,
            },
        )
        .boxed()
}

/// The file's records after the BOM, read back leniently (so a ragged row
/// shows as a wrong width, not a reader error).
pub fn records(file: &[u8]) -> Vec<Vec<String>> {
    let file = file.strip_prefix(BOM).unwrap_or(file);
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(file)
        .records()
        .map(|r| {
            r.expect("the file is CSV")
                .iter()
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// Rows built by `kind`'s builders from arbitrary inputs.
fn rows_of(
    kind: ExportKind,
    columns: &[Column],
    hits: &[Value],
    jobs: &[JobRow],
    audit: &[AuditEntry],
) -> Vec<Row> {
    match kind {
        ExportKind::Returns => {
            let mut rows: Vec<Row> = hits
                .iter()
                .map(|h| return_row(&ReturnDoc::from_hit(h), columns))
                .collect();
            // The tallied road, where the engine's bytes read as a page.
            if let Ok((_, typed)) = read_hits_page::<ReturnFields<StateTally>>(
                "u",
                &page_bytes(hits, None),
                hits.len() + 1,
            ) {
                rows.extend(typed.into_iter().map(|h| tallied_return_row(h, columns)));
            }
            rows
        }
        ExportKind::States => hits
            .iter()
            .flat_map(|h| state_rows(&ReturnDoc::from_hit(h), Some("user"), columns))
            .collect(),
        ExportKind::Jobs => jobs.iter().map(|j| job_row(j, columns)).collect(),
        ExportKind::Audit => audit.iter().map(|e| audit_row(e, columns)).collect(),
        ExportKind::Events => hits
            .iter()
            .map(|h| event_row(&EventDoc::from_hit(h), columns))
            .collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_csv_row_is_exactly_as_wide_as_its_header(
        (kind, columns) in kind_and_columns(),
        hits in vec(return_hit(), 0..4),
        jobs in vec(job_row_value(), 0..3),
        audit in vec(audit_entry(), 0..3),
        (bom, formula_protection, max) in (any::<bool>(), any::<bool>(), option::of(0usize..40)),
    ) {
        let rows = rows_of(kind, &columns, &hits, &jobs, &audit);
        for row in &rows {
            prop_assert_eq!(row.len(), columns.len(), "{:?} {:?}", kind, row);
        }
        // And in the file, header included (a file has at least one column).
        if !columns.is_empty() {
            let options = CsvOptions { bom, formula_protection, max_cell_chars: max };
            let mut encoder = CsvEncoder::new(columns.clone(), options);
            let mut file = encoder.encode_page(&rows[..rows.len() / 2]);
            file.extend(encoder.encode_page(&rows[rows.len() / 2..]));
            let back = records(&file);
            prop_assert_eq!(back.len(), rows.len() + 1);
            for record in &back {
                prop_assert_eq!(record.len(), columns.len());
            }
        }
    }

    #[test]
    fn the_returns_export_counts_states_alike_tallied_from_the_bytes_or_built(
        hits in vec(hit_around(return_source(data())), 1..5),
        columns in vec(proptest::sample::select(ExportKind::Returns.columns()), 1..12),
    ) {
        // Without the output column the export only tallies (see `hits.rs`).
        let columns: Vec<Column> = columns.into_iter().filter(|c| c.id != "output").collect();
        let bytes = page_bytes(&hits, None);
        let (_, tallied) = read_hits_page::<ReturnFields<StateTally>>("u", &bytes, hits.len() + 1)
            .expect("an engine's page reads");
        let (_, whole) = read_hits_page::<ReturnFields<Value>>("u", &bytes, hits.len() + 1)
            .expect("an engine's page reads");
        for (t, w) in tallied.into_iter().zip(whole) {
            let (mut doc, data) = ReturnDoc::from_fields(w.index, w.id, w.source.unwrap_or_default());
            doc.data = ReturnData::read(&doc.fun, data.as_ref(), &mut doc.notes);
            prop_assert_eq!(tallied_return_row(t, &columns), return_row(&doc, &columns));
        }
    }
}
