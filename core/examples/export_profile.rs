//! Where a returns export page's time goes, natively (a profile, not a
//! test): reading the JSON one way or another, building rows, encoding CSV.
//! Take a page from the engine, then run it:
//!   curl -s -XPOST "$ES/salt-*/_search" -H 'content-type: application/json' \
//!     -d '{"size":5000,"sort":["_doc"]}' > page.json
//!   cargo run --release -p saltscope-core --example export_profile -- page.json
use std::time::Instant;

use saltscope_core::export::columns::Column;
use saltscope_core::export::page::read_hits_page;
use saltscope_core::export::rows::{return_row, tallied_return_row, Row};
use saltscope_core::export::{CsvEncoder, CsvOptions, ExportKind};
use saltscope_core::model::{ReturnData, ReturnDoc, ReturnFields, StateTally};
use serde_json::Value;

const ROUNDS: u32 = 5;

fn time<T>(f: impl Fn() -> T) -> (f64, T) {
    let mut out = f();
    let t0 = Instant::now();
    for _ in 0..ROUNDS {
        out = std::hint::black_box(f());
    }
    (t0.elapsed().as_secs_f64() * 1000.0 / f64::from(ROUNDS), out)
}

/// What the returns export does with a page (the plan's own row builder).
fn tallied_rows(bytes: &[u8], columns: &[Column]) -> Vec<Row> {
    let (_, hits) = read_hits_page::<ReturnFields<StateTally>>("page", bytes, usize::MAX).unwrap();
    hits.into_iter()
        .map(|h| tallied_return_row(h, columns))
        .collect()
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: export_profile PAGE.json");
    let bytes = std::fs::read(&path).expect("page file");
    let columns = ExportKind::Returns.default_columns();
    if std::env::args().nth(2).as_deref() == Some("--returns-only") {
        // For `perf record`: only what the returns export does.
        for _ in 0..100 {
            let rows = tallied_rows(&bytes, &columns);
            std::hint::black_box(
                CsvEncoder::new(columns.clone(), CsvOptions::default()).encode_page(&rows),
            );
        }
        return;
    }

    let (scan, _) = time(|| serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).unwrap());
    let (value, _) = time(|| serde_json::from_slice::<Value>(&bytes).unwrap());
    let (model, _) = time(|| {
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let hits = v["hits"]["hits"].as_array().unwrap();
        let docs: Vec<ReturnDoc> = hits.iter().map(ReturnDoc::from_hit).collect();
        docs.iter()
            .map(|d| return_row(d, &columns))
            .collect::<Vec<Row>>()
    });
    let (whole, _) = time(|| {
        let (_, hits) = read_hits_page::<ReturnFields<Value>>("page", &bytes, usize::MAX).unwrap();
        hits.into_iter()
            .map(|h| {
                let (mut doc, data) =
                    ReturnDoc::from_fields(h.index, h.id, h.source.unwrap_or_default());
                doc.data = ReturnData::read(&doc.fun, data.as_ref(), &mut doc.notes);
                return_row(&doc, &columns)
            })
            .collect::<Vec<Row>>()
    });
    let (tally, rows) = time(|| tallied_rows(&bytes, &columns));
    let (csv, out) =
        time(|| CsvEncoder::new(columns.clone(), CsvOptions::default()).encode_page(&rows));

    let n = rows.len() as f64;
    println!(
        "{path}: {} returns, {:.1} MB of JSON, {:.1} KB of CSV",
        rows.len(),
        bytes.len() as f64 / 1e6,
        out.len() as f64 / 1e3
    );
    println!("{:<52} {:>9} {:>9}", "stage", "ms/page", "µs/return");
    for (name, ms) in [
        ("JSON scan only, nothing kept (the floor)", scan),
        ("JSON into a serde_json Value", value),
        ("Value + ReturnDoc::from_hit + rows (before)", model),
        ("typed hits, data as Value + rows", whole),
        ("typed hits, data tallied + rows (returns export)", tally),
        ("CSV encoding of the rows", csv),
    ] {
        println!("{name:<52} {ms:>9.1} {:>9.2}", ms * 1000.0 / n);
    }
}
