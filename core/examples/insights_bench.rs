//! The fleet-wide views' times (a benchmark: prints numbers, asserts
//! nothing), through the same core functions the app calls and the native
//! transport: fleet status and drift over the last 5 runs, each by the
//! summary pipeline's fields where the returns have them and by reading the
//! documents; a run compared with the previous one; failure patterns and
//! SLS rollups (always the documents).
//!
//!   ES_URL=http://127.0.0.1:9250 cargo run --release -p saltscope-core \
//!     --features native --example insights_bench -- saltb1m saltb1mp
//!
//! Each argument is an index prefix (`<prefix>-*`, as scripts/generate.sh
//! loads them; `salt` is the real Salt data). BENCH_RUNS (default 3): the
//! median of that many runs is printed.
use std::time::{Duration, Instant};

use saltscope_core::config::AppConfig;
use saltscope_core::engine::native::{block_on, native_client, NativeTransport};
use saltscope_core::query::compare::{CompareRequest, RunRef};
use saltscope_core::query::drift::DriftFilter;
use saltscope_core::query::failures::FailureFilter;
use saltscope_core::query::filter::TimeRange;
use saltscope_core::query::fleet::FleetFilter;
use saltscope_core::query::summary::ComputedFrom;
use saltscope_core::query::QueryContext;
use saltscope_core::views;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn path(from: &Option<ComputedFrom>) -> &'static str {
    match from {
        Some(ComputedFrom::SummaryFields) => "summary fields",
        Some(ComputedFrom::Documents(_)) => "documents",
        None => "documents (stream)",
    }
}

/// Runs `view` `runs` times; the median ms and what the last run said.
fn timed<T>(runs: usize, view: impl Fn() -> T) -> (f64, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let t0 = Instant::now();
        last = Some(view());
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    (median(times), last.expect("at least one run"))
}

fn context(t: &NativeTransport, url: &str, prefix: &str) -> QueryContext {
    let config = if prefix == "salt" {
        AppConfig::default()
    } else {
        AppConfig {
            index_pattern: format!("{prefix}-*"),
            job_cache_index: format!("{prefix}-master-job-cache"),
            event_index_pattern: format!("{prefix}-master-event-cache*"),
            ..AppConfig::default()
        }
    };
    let config = AppConfig {
        engine_url: vec![url.to_string()],
        ..config
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default();
    block_on(views::connect(t, config))
        .expect("start-up")
        .context(Vec::new(), now)
}

fn main() {
    let url = std::env::var("ES_URL").unwrap_or_else(|_| "http://127.0.0.1:9250".into());
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let prefixes: Vec<String> = std::env::args().skip(1).collect();
    assert!(!prefixes.is_empty(), "usage: insights_bench PREFIX...");
    let t = native_client(&[&url], Duration::from_secs(600));
    println!("median of {runs} runs, native transport to {url}\n");
    println!(
        "{:<10} {:<28} {:<20} {:>9}  answer",
        "data", "view", "computed from", "ms"
    );
    for prefix in &prefixes {
        let ctx = context(&t, &url, prefix);
        let mut documents = ctx.clone();
        documents.fields.summary = false;
        let mut paths = vec![&documents];
        if ctx.fields.summary {
            paths.insert(0, &ctx);
        }
        for c in &paths {
            let (ms, report) = timed(runs, || {
                block_on(views::fleet(&t, c, &FleetFilter::default())).expect("fleet")
            });
            println!(
                "{prefix:<10} {:<28} {:<20} {ms:>9.0}  {} minions",
                "fleet status",
                path(&report.computed_from),
                report.minions.len()
            );
        }
        // The newest state run of the fleet's first minion, against its previous one.
        let fleet = block_on(views::fleet(&t, &ctx, &FleetFilter::default())).expect("fleet");
        if let Some((minion, run)) = fleet
            .minions
            .iter()
            .find_map(|m| Some((m.minion.clone(), m.latest_run.clone()?)))
        {
            let request = CompareRequest {
                a: RunRef {
                    jid: run.jid,
                    minion,
                },
                b: None,
            };
            let (ms, result) = timed(runs, || block_on(views::compare(&t, &ctx, &request)));
            let answer = match result {
                Ok(c) => format!(
                    "{} differing, {} identical states",
                    c.states.len(),
                    c.identical
                ),
                Err(e) => format!("no comparison: {e}"),
            };
            println!(
                "{prefix:<10} {:<28} {:<20} {ms:>9.0}  {answer}",
                "compare with previous run", "documents (two runs)"
            );
        }
        let drift = DriftFilter::default();
        for c in &paths {
            let (ms, report) = timed(runs, || {
                block_on(views::drift(&t, c, &drift)).expect("drift")
            });
            println!(
                "{prefix:<10} {:<28} {:<20} {ms:>9.0}  {} minions, {} drifting states",
                "drift, last 5 runs",
                path(&report.computed_from),
                report.minions,
                report.states.len()
            );
        }
        let range = FailureFilter {
            time: TimeRange::parse("7d").unwrap_or(TimeRange::All),
            ..FailureFilter::default()
        };
        let (ms, report) = timed(runs, || {
            block_on(views::failures(&t, &ctx, &range, &|_| true)).expect("failures")
        });
        println!(
            "{prefix:<10} {:<28} {:<20} {ms:>9.0}  {} patterns of {} failed runs",
            "failure patterns, 7 days",
            path(&None),
            report.patterns.len(),
            report.runs_read
        );
        let (ms, report) = timed(runs, || {
            block_on(views::sls(&t, &ctx, &range, &|_| true)).expect("sls")
        });
        println!(
            "{prefix:<10} {:<28} {:<20} {ms:>9.0}  {} SLS over {} runs{}",
            "SLS rollups, 7 days",
            path(&None),
            report.rollups.len(),
            report.runs_read,
            if report.notes.is_empty() {
                ""
            } else {
                " (with notes)"
            }
        );
    }
}
