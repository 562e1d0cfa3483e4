//! SLS rollups and slow states (`/sls`): per SLS file (each state's
//! `__sls__`) how many runs applied it, how often it failed or changed
//! something, and how long its states took (p50, p95 of its time per run);
//! then the slowest states of the fleet.

use crate::json::At;
use std::collections::BTreeMap;

use serde_json::Value;

use super::failures::FailureFilter;
use super::scan::{Scan, ScanEnd};
use super::QueryContext;
use crate::model::{ReturnData, ReturnDoc, StateResult};
use crate::sort;

/// State runs read at most (the newest).
pub const SLS_LIMIT: u64 = 50_000;
/// Slowest states listed.
pub const SLOWEST_KEPT: usize = 25;

/// One SLS across the runs read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlsRollup {
    pub sls: String,
    /// Runs that applied at least one of its states.
    pub runs: u64,
    /// Runs in which one of its states failed.
    pub failed_runs: u64,
    /// Runs in which one of its states changed something.
    pub changed_runs: u64,
    pub states: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

impl SlsRollup {
    pub fn failure_rate(&self) -> f64 {
        rate(self.failed_runs, self.runs)
    }
    pub fn change_rate(&self) -> f64 {
        rate(self.changed_runs, self.runs)
    }
}

fn rate(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 / of as f64
    }
}

/// One slow state, where it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct SlowState {
    pub duration_ms: f64,
    pub state_id: String,
    pub function: String,
    pub sls: Option<String>,
    pub minion: String,
    pub jid: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlsReport {
    /// Most runs first.
    pub rollups: Vec<SlsRollup>,
    /// Slowest first.
    pub slowest: Vec<SlowState>,
    pub runs_read: u64,
    pub notes: Vec<String>,
}

/// The returns to read: every state run in the range.
pub fn sls_scan(ctx: &QueryContext, filter: &FailureFilter) -> Scan {
    let mut scan = filter.scan(ctx);
    // Every run, not only failed ones.
    if let Some(f) = scan
        .query
        .pointer_mut("/bool/filter")
        .and_then(Value::as_array_mut)
    {
        f.retain(|c| c.at("/term/success").is_none());
    }
    scan.source = vec![
        "jid",
        "minion",
        "fun",
        "@timestamp",
        "data.*.result",
        "data.*.changes",
        "data.*.__sls__",
        "data.*.__id__",
        "data.*.__run_num__",
        "data.*.duration",
    ];
    scan.limit = SLS_LIMIT;
    scan
}

#[derive(Default)]
struct Tally {
    runs: u64,
    failed_runs: u64,
    changed_runs: u64,
    states: u64,
    durations: Vec<f64>,
}

/// Rolls state runs up per SLS as the scan hands them over.
#[derive(Default)]
pub struct SlsRoller {
    per_sls: BTreeMap<String, Tally>,
    slowest: Vec<SlowState>,
}

impl SlsRoller {
    pub fn add(&mut self, hit: &Value) {
        let doc = ReturnDoc::read_hit(hit);
        let ReturnData::States(states) = &doc.data else {
            return;
        };
        // This run's part of each SLS: failed, changed, time.
        let mut here: BTreeMap<&str, (bool, bool, u64, f64)> = BTreeMap::new();
        for run in &states.runs {
            let sls = run.sls.as_deref().unwrap_or("(no __sls__)");
            let e = here.entry(sls).or_default();
            e.0 |= run.result == StateResult::False;
            e.1 |= run.changed();
            e.2 += 1;
            e.3 += run.duration_ms.unwrap_or(0.0);
            if let Some(ms) = run.duration_ms {
                self.keep_if_slow(SlowState {
                    duration_ms: ms,
                    state_id: run.id.clone(),
                    function: run.function.clone(),
                    sls: run.sls.clone(),
                    minion: doc.minion.clone(),
                    jid: doc.jid.clone(),
                });
            }
        }
        for (sls, (failed, changed, n, ms)) in here {
            let t = self.per_sls.entry(sls.to_string()).or_default();
            t.runs += 1;
            t.failed_runs += u64::from(failed);
            t.changed_runs += u64::from(changed);
            t.states += n;
            t.durations.push(ms);
        }
    }

    fn keep_if_slow(&mut self, s: SlowState) {
        if self.slowest.len() == SLOWEST_KEPT
            && self
                .slowest
                .last()
                .is_some_and(|l| l.duration_ms >= s.duration_ms)
        {
            return;
        }
        let at = self
            .slowest
            .partition_point(|x| x.duration_ms >= s.duration_ms);
        self.slowest.insert(at, s);
        self.slowest.truncate(SLOWEST_KEPT);
    }

    pub fn report(self, end: ScanEnd) -> SlsReport {
        let mut rollups: Vec<SlsRollup> = self
            .per_sls
            .into_iter()
            .map(|(sls, mut t)| {
                sort::sort_by(&mut t.durations, f64::total_cmp);
                SlsRollup {
                    sls,
                    runs: t.runs,
                    failed_runs: t.failed_runs,
                    changed_runs: t.changed_runs,
                    states: t.states,
                    p50_ms: percentile(&t.durations, 0.50),
                    p95_ms: percentile(&t.durations, 0.95),
                }
            })
            .collect();
        sort::sort_by(&mut rollups, |a, b| {
            b.runs.cmp(&a.runs).then_with(|| a.sls.cmp(&b.sls))
        });
        SlsReport {
            rollups,
            slowest: self.slowest,
            runs_read: end.read,
            notes: end.stopped_short.into_iter().collect(),
        }
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(minion: &str, jid: &str, states: Value) -> Value {
        json!({"_index": "salt-state_apply-v1", "_id": jid, "_source": {
            "jid": jid, "minion": minion, "fun": "state.apply", "@timestamp": "2026-12-03T10:00:00+00:00",
            "data": states}})
    }

    fn st(sls: &str, result: bool, changes: Value, ms: f64, n: u64) -> Value {
        json!({"result": result, "changes": changes, "__sls__": sls, "duration": ms, "__run_num__": n, "__id__": format!("{sls}-{n}")})
    }

    #[test]
    fn each_sls_counts_runs_failures_changes_and_its_time_per_run() {
        let mut r = SlsRoller::default();
        r.add(&run(
            "web01",
            "1",
            json!({
            "pkg_|-a_|-a_|-installed": st("web", true, json!({}), 100.0, 0),
            "file_|-b_|-b_|-managed": st("web", true, json!({"diff": "+"}), 50.0, 1),
            "cmd_|-c_|-c_|-run": st("base", false, json!({}), 4000.0, 2)}),
        ));
        r.add(&run(
            "web02",
            "1",
            json!({
            "pkg_|-a_|-a_|-installed": st("web", true, json!({}), 300.0, 0)}),
        ));
        let report = r.report(ScanEnd {
            read: 2,
            total: Some(2),
            stopped_short: None,
        });
        let web = report.rollups.iter().find(|x| x.sls == "web").unwrap();
        assert_eq!(
            (web.runs, web.failed_runs, web.changed_runs, web.states),
            (2, 0, 1, 3)
        );
        assert_eq!((web.p50_ms, web.p95_ms), (150.0, 300.0));
        let base = report.rollups.iter().find(|x| x.sls == "base").unwrap();
        assert_eq!(base.failure_rate(), 1.0);
        assert_eq!(report.rollups[0].sls, "web", "most runs first");
        assert_eq!(report.slowest[0].state_id, "base-2");
        assert_eq!(report.slowest.len(), 4);
        assert!(report
            .slowest
            .windows(2)
            .all(|w| w[0].duration_ms >= w[1].duration_ms));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.95), 95.0);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
    }
}
