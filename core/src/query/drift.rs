//! States that change every run (`/drift`): over each minion's last N state
//! runs, the states that reported changes in at least k of them (or in
//! every run that ran them, where fewer did: a run of other SLS files says
//! nothing of a state it did not run) — the
//! `cmd.run` without `unless`, the `pkgrepo.managed` that rewrites its file,
//! the `module.run` — ranked by how many minions they do it on.

use crate::json::At;
use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::filter::{split_list, JobFilter};
use super::minions::STATE_RUN_FUNCTIONS;
use super::summary::ComputedFrom;
use super::template::body;
use super::QueryContext;
use crate::engine::{EngineError, SearchAnswer, SearchRequest};
use crate::model::{ReturnDoc, RunSummary, StateIdentity, StateResult, StateRun};
use crate::sort;
use crate::text::scalar_text;

/// Minions per search: each brings its last N runs' `changes`.
pub const DRIFT_PAGE_SIZE: usize = 100;
/// The most runs per minion looked at.
pub const MAX_RUNS: u32 = 20;

/// In the URL: `runs` (N, default 5), `changed` (k, default N), `minion`.
#[derive(Clone, Debug, PartialEq)]
pub struct DriftFilter {
    pub runs: u32,
    pub changed_in: u32,
    pub minions: Vec<String>,
}

impl Default for DriftFilter {
    fn default() -> Self {
        DriftFilter {
            runs: 5,
            changed_in: 5,
            minions: Vec::new(),
        }
    }
}

impl DriftFilter {
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (DriftFilter, Vec<String>) {
        let mut problems = Vec::new();
        let mut number = |name: &str, default: u32| -> Option<u32> {
            let text = get(name).map(str::trim).filter(|s| !s.is_empty())?;
            match text.parse::<u32>() {
                Ok(n) if (1..=MAX_RUNS).contains(&n) => Some(n),
                _ => {
                    problems.push(format!(
                        "{name} `{text}` is not a number from 1 to {MAX_RUNS}: using {default}"
                    ));
                    None
                }
            }
        };
        let runs = number("runs", 5).unwrap_or(5);
        let changed_in = number("changed", runs).unwrap_or(runs).min(runs);
        let minions = get("minion").map(split_list).unwrap_or_default();
        (
            DriftFilter {
                runs,
                changed_in,
                minions,
            },
            problems,
        )
    }

    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![("runs", self.runs.to_string())];
        if self.changed_in != self.runs {
            out.push(("changed", self.changed_in.to_string()));
        }
        if !self.minions.is_empty() {
            out.push(("minion", self.minions.join(",")));
        }
        out
    }
}

/// What drift reads of a run's `data`: each state's `changes` and identity.
const DRIFT_SOURCE: [&str; 10] = [
    "jid",
    "minion",
    "fun",
    "@timestamp",
    "data.*.changes",
    "data.*.result",
    "data.*.__id__",
    "data.*.__sls__",
    "data.*.__run_num__",
    "data.*.name",
];

/// With the summary pipeline's fields: only the states that changed, their
/// `changes` reduced to keys.
const DRIFT_SUMMARY_SOURCE: [&str; 7] = [
    "jid",
    "minion",
    "fun",
    "@timestamp",
    "saltscope.summary_version",
    "saltscope.sls",
    "saltscope.changed",
];

/// A page of minions, each with its last `runs` state runs.
pub fn drift_search(
    ctx: &QueryContext,
    filter: &DriftFilter,
    after: Option<&str>,
    from: &ComputedFrom,
) -> SearchRequest {
    let returns = JobFilter {
        minions: filter.minions.clone(),
        functions: STATE_RUN_FUNCTIONS.iter().map(|f| f.to_string()).collect(),
        time: super::filter::TimeRange::All,
        show_noisy: true,
        ..JobFilter::default()
    };
    let composite = super::minion_composite(&ctx.fields.minion, DRIFT_PAGE_SIZE, after);
    SearchRequest::new(
        &ctx.config.index_pattern,
        body(
            r#"{"size":0,"query":$0,"aggs":{"minions":{"composite":$1,"aggs":{"last_runs":{"top_hits":{"size":$2,"sort":[{"@timestamp":{"order":"desc","unmapped_type":"date"}}],"_source":$3}}}}}}"#,
            &[
                returns.returns_query(ctx),
                composite,
                json!(filter.runs),
                json!(if from.uses_summary() {
                    &DRIFT_SUMMARY_SOURCE[..]
                } else {
                    &DRIFT_SOURCE[..]
                }),
            ],
        ),
    )
}

/// A state that changed in at least k of a minion's last N runs.
#[derive(Clone, Debug, PartialEq)]
pub struct DriftingState {
    /// `cmd.run`.
    pub function: String,
    pub state_id: String,
    pub name: String,
    pub sls: Option<String>,
    /// Minions it keeps changing on, with the newest run that changed it.
    pub minions: BTreeMap<String, String>,
    /// Top-level keys of its `changes`, most frequent first (`stdout`,
    /// `diff`, …): what keeps changing.
    pub change_keys: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DriftReport {
    /// Most minions first.
    pub states: Vec<DriftingState>,
    /// Minions looked at, and those with fewer than k runs.
    pub minions: u64,
    pub too_few_runs: u64,
    pub notes: Vec<String>,
    /// Whether the runs were read from the summary fields or `data`.
    pub computed_from: Option<ComputedFrom>,
}

/// Collects per minion as pages come.
#[derive(Default)]
pub struct DriftCounter {
    /// identity → (state, keys seen with counts)
    /// Each drifting state with how often each `changes` key came.
    states: BTreeMap<StateIdentity, (DriftingState, BTreeMap<String, u64>)>,
    minions: u64,
    too_few_runs: u64,
}

impl DriftCounter {
    /// One page's buckets; the minion to continue after, if any.
    pub fn add_page(
        &mut self,
        answer: SearchAnswer,
        filter: &DriftFilter,
    ) -> Result<Option<String>, EngineError> {
        let answer = answer?;
        let buckets = super::buckets(&answer, "minions");
        let mut last = None;
        for bucket in buckets.iter().take(DRIFT_PAGE_SIZE) {
            let minion = bucket
                .at("/key/minion")
                .map(scalar_text)
                .unwrap_or_default();
            let runs = bucket
                .at("/last_runs/hits/hits")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            self.minion(runs, filter);
            last = Some(minion);
        }
        Ok(last.filter(|_| buckets.len() > DRIFT_PAGE_SIZE))
    }

    fn minion(&mut self, runs: &[Value], filter: &DriftFilter) {
        self.minions += 1;
        if (runs.len() as u32) < filter.changed_in {
            self.too_few_runs += 1;
            return;
        }
        // identity → (times changed, newest jid that changed it, the run)
        let mut changed: BTreeMap<StateIdentity, (u32, String)> = BTreeMap::new();
        let mut seen = BTreeMap::new();
        let mut minion = String::new();
        // Each run's SLS files: a run of `state.apply common.time` did not
        // run nginx's states, so it says nothing of whether they change.
        let mut run_sls: Vec<Vec<String>> = Vec::with_capacity(runs.len());
        for hit in runs {
            let doc = ReturnDoc::read_hit(hit);
            minion = doc.minion.clone();
            // The changed states, from the summary fields or from `data`:
            // the same shape either way, counted by the same code.
            let source = hit.get("_source").unwrap_or(&Value::Null);
            let summary = RunSummary::from_pipeline(source)
                .unwrap_or_else(|| RunSummary::of_return(&doc, source.get("data")));
            let changed_states = summary.changed_states();
            run_sls.push(summary.sls);
            let Some(states) = changed_states else {
                continue;
            };
            // A dry run's (`test=True`, result None) changes are what would
            // change: no change happened.
            let happened = |r: &&StateRun| r.changed() && r.result != StateResult::None;
            for run in states.runs.iter().filter(happened) {
                let id = run.identity();
                let e = changed.entry(id.clone()).or_insert((0, doc.jid.clone()));
                e.0 += 1;
                seen.entry(id).or_insert_with(|| run.clone());
            }
        }
        for (id, (n, jid)) in changed {
            let Some(run) = seen.remove(&id) else {
                continue;
            };
            if n < needed_changes(filter.changed_in, runs_including(&run_sls, &run.sls)) {
                continue;
            }
            let (state, keys) = self.states.entry(id).or_insert_with(|| {
                (
                    DriftingState {
                        function: run.function.clone(),
                        state_id: run.id.clone(),
                        name: run.name.clone(),
                        sls: run.sls.clone(),
                        minions: BTreeMap::new(),
                        change_keys: Vec::new(),
                    },
                    BTreeMap::new(),
                )
            });
            state.minions.insert(minion.clone(), jid);
            if let Value::Object(m) = &run.changes {
                for k in m.keys() {
                    *keys.entry(k.clone()).or_default() += 1;
                }
            }
        }
    }

    pub fn report(self) -> DriftReport {
        let mut states: Vec<DriftingState> = self
            .states
            .into_values()
            .map(|(mut s, keys)| {
                let mut keys: Vec<(String, u64)> = keys.into_iter().collect();
                sort::sort_by(&mut keys, |a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                s.change_keys = keys.into_iter().map(|(k, _)| k).collect();
                s
            })
            .collect();
        sort::sort_by(&mut states, |a, b| {
            b.minions
                .len()
                .cmp(&a.minions.len())
                .then_with(|| a.state_id.cmp(&b.state_id))
        });
        DriftReport {
            states,
            minions: self.minions,
            too_few_runs: self.too_few_runs,
            notes: Vec::new(),
            computed_from: None,
        }
    }
}

/// The runs, of those read, that included a state of `sls`: every run
/// where the state names no SLS file or a run names none.
fn runs_including(run_sls: &[Vec<String>], sls: &Option<String>) -> u32 {
    run_sls
        .iter()
        .filter(|files| match sls {
            Some(s) => files.is_empty() || files.iter().any(|f| f == s),
            None => true,
        })
        .count() as u32
}

/// How many changes make a state drift: k, or every run that included it
/// where fewer did — but one change alone is no pattern.
fn needed_changes(k: u32, including: u32) -> u32 {
    k.min(including.max(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(minion: &str, jid: &str, states: Value) -> Value {
        json!({"_index": "salt-state_sls-v1", "_id": jid, "_source": {
            "jid": jid, "minion": minion, "fun": "state.sls", "@timestamp": "2026-12-03T10:00:00+00:00",
            "data": states}})
    }

    fn states(every: bool, idempotent: bool, n: u64) -> Value {
        let ch = |c: bool| {
            if c {
                json!({"stdout": "x", "pid": n})
            } else {
                json!({})
            }
        };
        json!({
            format!("{n}_|-cmd_|-drift.every_run_|-date_|-run"): {"result": true, "changes": ch(every), "__id__": "drift.every_run", "__run_num__": 0},
            "file_|-drift.idempotent_|-/x_|-managed": {"result": true, "changes": if idempotent { json!({"diff": "New file"}) } else { json!({}) }, "__id__": "drift.idempotent", "__run_num__": 1}
        })
    }

    fn page(buckets: Vec<(&str, Vec<Value>)>) -> SearchAnswer {
        let b: Vec<Value> = buckets
            .into_iter()
            .map(|(m, runs)| json!({"key": {"minion": m}, "last_runs": {"hits": {"hits": runs}}}))
            .collect();
        Ok(json!({"aggregations": {"minions": {"buckets": b}}}))
    }

    #[test]
    fn a_state_changed_on_every_run_is_listed_an_idempotent_one_is_not() {
        let filter = DriftFilter {
            runs: 3,
            changed_in: 3,
            minions: Vec::new(),
        };
        let mut c = DriftCounter::default();
        let next = c
            .add_page(
                page(vec![
                    (
                        "a",
                        vec![
                            run("a", "3", states(true, false, 3)),
                            run("a", "2", states(true, false, 2)),
                            run("a", "1", states(true, true, 1)),
                        ],
                    ),
                    (
                        "b",
                        vec![
                            run("b", "6", states(true, false, 6)),
                            run("b", "5", states(true, false, 5)),
                            run("b", "4", states(true, true, 4)),
                        ],
                    ),
                    ("new", vec![run("new", "7", states(true, true, 7))]),
                ]),
                &filter,
            )
            .unwrap();
        assert_eq!(next, None);
        let r = c.report();
        assert_eq!(r.states.len(), 1, "{:?}", r.states);
        let every = &r.states[0];
        assert_eq!(every.state_id, "drift.every_run");
        assert_eq!(
            every.minions.get("a").map(String::as_str),
            Some("3"),
            "the newest run"
        );
        assert_eq!(every.minions.len(), 2);
        assert_eq!(every.change_keys, ["pid", "stdout"]);
        assert_eq!((r.minions, r.too_few_runs), (3, 1));
    }

    #[test]
    fn runs_that_did_not_include_a_state_neither_count_for_nor_against_it() {
        // Two highstates that ran `web` (its cmd.run changing both times, its
        // file once), between two `state.apply common.time` runs.
        let state = |id: &str, sls: &str, changes: Value| json!({"result": true, "changes": changes, "__id__": id, "__sls__": sls, "__run_num__": 0});
        let highstate = |file_changed: bool| {
            json!({
                "cmd_|-web.configtest_|-nginx -t_|-run": state("web.configtest", "web", json!({"pid": 1})),
                "file_|-web.conf_|-/etc/web_|-managed": state("web.conf", "web",
                    if file_changed { json!({"diff": "+x"}) } else { json!({}) }),
                "pkg_|-time.ntp_|-ntp_|-installed": state("time.ntp", "common.time", json!({})),
            })
        };
        let time_only = || json!({"pkg_|-time.ntp_|-ntp_|-installed": state("time.ntp", "common.time", json!({}))});
        let filter = DriftFilter {
            runs: 4,
            changed_in: 4,
            minions: Vec::new(),
        };
        // Newest first: a time-only run, a highstate, another time-only run,
        // and the oldest highstate as given.
        let report = |oldest: Value| {
            let mut c = DriftCounter::default();
            let runs = vec![
                run("a", "4", time_only()),
                run("a", "3", highstate(true)),
                run("a", "2", time_only()),
                run("a", "1", oldest),
            ];
            c.add_page(page(vec![("a", runs)]), &filter).unwrap();
            c.report()
        };
        let r = report(highstate(false));
        let ids: Vec<&str> = r.states.iter().map(|s| s.state_id.as_str()).collect();
        assert_eq!(ids, ["web.configtest"], "changed in both runs that ran it");
        assert_eq!(r.states[0].minions.get("a").map(String::as_str), Some("3"));
        // The same runs with the second highstate a dry run (`test=True`):
        // what it would change is no change, so one change in two runs.
        let dry = |mut states: Value| {
            for state in states
                .as_object_mut()
                .into_iter()
                .flat_map(|m| m.values_mut())
            {
                state["result"] = Value::Null;
            }
            states
        };
        assert!(
            report(dry(highstate(false))).states.is_empty(),
            "a dry run's changes drift nothing"
        );
        assert_eq!(needed_changes(4, 1), 2, "one change alone is no pattern");
        assert_eq!(needed_changes(1, 1), 1, "unless one is asked for");
        assert_eq!(needed_changes(3, 5), 3);
    }

    #[test]
    fn the_filter_reads_n_and_k_and_keeps_k_within_n() {
        let (f, problems) = DriftFilter::from_query(|k| match k {
            "runs" => Some("3"),
            "changed" => Some("9"),
            _ => None,
        });
        assert_eq!((f.runs, f.changed_in), (3, 3));
        assert!(problems.is_empty());
        let (f, problems) = DriftFilter::from_query(|k| (k == "runs").then_some("lots"));
        assert_eq!((f.runs, f.changed_in), (5, 5));
        assert!(problems[0].contains("lots"));
        assert_eq!(
            DriftFilter {
                runs: 3,
                changed_in: 2,
                minions: vec!["web*".into()]
            }
            .to_query(),
            [
                ("runs", "3".to_string()),
                ("changed", "2".to_string()),
                ("minion", "web*".to_string())
            ]
        );
    }
}
