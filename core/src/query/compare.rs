//! Compare two state runs (`/compare?a=<jid>:<minion>&b=<jid>:<minion>`):
//! yesterday's highstate and today's on one minion, or two minions of one
//! job. States are matched by module, ID and name (not by the key's order
//! prefix, which some runs carry and others do not); what
//! differs is said state by state, identical states are only counted.

use std::collections::{HashMap, VecDeque};

use serde_json::json;

use super::minions::STATE_RUN_FUNCTIONS;
use super::QueryContext;
use crate::engine::{EngineError, SearchAnswer, SearchRequest};
use crate::model::{ReturnData, ReturnDoc, StateIdentity, StateResult, StateRun};

/// One side of a comparison: a minion's return of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRef {
    pub jid: String,
    pub minion: String,
}

impl RunRef {
    /// `<jid>:<minion>`; a jid holds no colon, a minion id may.
    pub fn parse(text: &str) -> Result<RunRef, String> {
        let (jid, minion) = text
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("`{text}` is not <jid>:<minion>"))?;
        if jid.is_empty() || minion.is_empty() {
            return Err(format!("`{text}` is not <jid>:<minion>"));
        }
        Ok(RunRef {
            jid: jid.to_string(),
            minion: minion.to_string(),
        })
    }

    /// The run a return is.
    pub fn of(doc: &ReturnDoc) -> RunRef {
        RunRef {
            jid: doc.jid.clone(),
            minion: doc.minion.clone(),
        }
    }

    pub fn to_param(&self) -> String {
        format!("{}:{}", self.jid, self.minion)
    }
}

/// What to compare: `a` with `b`, or without `b` with the previous state
/// run of `a`'s minion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompareRequest {
    pub a: RunRef,
    pub b: Option<RunRef>,
}

impl CompareRequest {
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<CompareRequest, String> {
        let a = get("a")
            .filter(|s| !s.trim().is_empty())
            .ok_or("no run to compare: give a=<jid>:<minion>")?;
        let b = get("b")
            .filter(|s| !s.trim().is_empty())
            .map(RunRef::parse)
            .transpose()?;
        Ok(CompareRequest {
            a: RunRef::parse(a)?,
            b,
        })
    }

    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![("a", self.a.to_param())];
        out.extend(self.b.as_ref().map(|b| ("b", b.to_param())));
        out
    }
}

/// How one state differs between the two runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Difference {
    /// `test.succeed_without_changes` → `test.fail_without_changes`: the
    /// same state (module, ID, name) called another function.
    Function(String, String),
    Result(StateResult, StateResult),
    ChangesAppeared,
    ChangesGone,
    /// Both changed something, not the same.
    ChangesDiffer,
    Comment,
    /// Milliseconds in a and b: only when one took more than twice the
    /// other and a second more.
    Duration(f64, f64),
}

/// One state of either run.
#[derive(Clone, Debug, PartialEq)]
pub enum StateComparison {
    OnlyIn {
        side: Side,
        run: Box<StateRun>,
    },
    Differs {
        a: Box<StateRun>,
        b: Box<StateRun>,
        differences: Vec<Difference>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// The two runs, state by state.
#[derive(Clone, Debug, PartialEq)]
pub struct RunComparison {
    pub a: ReturnDoc,
    pub b: ReturnDoc,
    /// Differing states in b's run order, then states only in a.
    pub states: Vec<StateComparison>,
    /// States the same in both (result, changes, comment, about the time).
    pub identical: usize,
    pub notes: Vec<String>,
}

impl RunComparison {
    pub fn count(&self, pick: impl Fn(&StateComparison) -> bool) -> usize {
        self.states.iter().filter(|s| pick(s)).count()
    }
}

fn states_of(doc: &ReturnDoc, notes: &mut Vec<String>) -> Vec<StateRun> {
    match &doc.data {
        ReturnData::States(s) => s.runs.clone(),
        ReturnData::StateError(lines) => {
            notes.push(format!(
                "{} on {} ran no state: {}",
                doc.jid,
                doc.minion,
                lines.join(" ")
            ));
            Vec::new()
        }
        _ => {
            notes.push(format!(
                "{} on {} is not a state run (`{}`)",
                doc.jid, doc.minion, doc.fun
            ));
            Vec::new()
        }
    }
}

/// Compares two returns state by state.
pub fn compare_runs(a: ReturnDoc, b: ReturnDoc) -> RunComparison {
    let mut notes = Vec::new();
    let runs_a = states_of(&a, &mut notes);
    let runs_b = states_of(&b, &mut notes);
    // Where each of a's states is, by identity (in run order, should a
    // run hold one twice): one look-up per state of b, not a search.
    let mut where_in_a: HashMap<StateIdentity, VecDeque<usize>> = HashMap::new();
    for (i, run) in runs_a.iter().enumerate() {
        where_in_a.entry(run.identity()).or_default().push_back(i);
    }
    let mut left: Vec<Option<StateRun>> = runs_a.into_iter().map(Some).collect();
    let mut states = Vec::new();
    let mut identical = 0;
    for run_b in runs_b {
        let found = where_in_a
            .get_mut(&run_b.identity())
            .and_then(VecDeque::pop_front)
            .and_then(|i| left[i].take());
        match found {
            None => states.push(StateComparison::OnlyIn {
                side: Side::B,
                run: Box::new(run_b),
            }),
            Some(run_a) => {
                let differences = differences(&run_a, &run_b);
                if differences.is_empty() {
                    identical += 1;
                } else {
                    states.push(StateComparison::Differs {
                        a: Box::new(run_a),
                        b: Box::new(run_b),
                        differences,
                    });
                }
            }
        }
    }
    states.extend(
        left.into_iter()
            .flatten()
            .map(|run| StateComparison::OnlyIn {
                side: Side::A,
                run: Box::new(run),
            }),
    );
    RunComparison {
        a,
        b,
        states,
        identical,
        notes,
    }
}

fn differences(a: &StateRun, b: &StateRun) -> Vec<Difference> {
    let mut out = Vec::new();
    if a.function != b.function {
        out.push(Difference::Function(a.function.clone(), b.function.clone()));
    }
    if a.result != b.result {
        out.push(Difference::Result(a.result, b.result));
    }
    match (a.changed(), b.changed()) {
        (false, true) => out.push(Difference::ChangesAppeared),
        (true, false) => out.push(Difference::ChangesGone),
        (true, true) if a.changes != b.changes => out.push(Difference::ChangesDiffer),
        _ => {}
    }
    if a.comment != b.comment {
        out.push(Difference::Comment);
    }
    if let (Some(x), Some(y)) = (a.duration_ms, b.duration_ms) {
        let (lo, hi) = if x < y { (x, y) } else { (y, x) };
        if hi > 2.0 * lo && hi - lo > 1000.0 {
            out.push(Difference::Duration(x, y));
        }
    }
    out
}

/// The returns of `runs` with their data, in one `_msearch`.
pub fn run_search(ctx: &QueryContext, run: &RunRef) -> SearchRequest {
    let (filter, must_not) = super::returns_filter(&ctx.config);
    let mut filter = filter;
    filter.push(json!({"term": {ctx.fields.jid.clone(): run.jid}}));
    filter.push(json!({"term": {ctx.fields.minion.clone(): run.minion}}));
    SearchRequest::new(
        &ctx.config.index_pattern,
        json!({"size": 1, "query": {"bool": {"filter": filter, "must_not": must_not}}}),
    )
}

/// The state run of `run.minion` just before `before` (`@timestamp`).
pub fn previous_run_search(ctx: &QueryContext, minion: &str, before: &str) -> SearchRequest {
    let (mut filter, must_not) = super::returns_filter(&ctx.config);
    filter.push(json!({"term": {ctx.fields.minion.clone(): minion}}));
    filter.push(json!({"terms": {ctx.fields.fun.clone(): STATE_RUN_FUNCTIONS}}));
    filter.push(json!({"range": {"@timestamp": {"lt": before}}}));
    SearchRequest::new(
        &ctx.config.index_pattern,
        super::template::body(
            r#"{"size":1,"sort":[{"@timestamp":{"order":"desc","unmapped_type":"date"}}],"query":{"bool":{"filter":$0,"must_not":$1}}}"#,
            &[
                serde_json::Value::Array(filter),
                serde_json::Value::Array(must_not),
            ],
        ),
    )
}

/// The one return an answer holds, or why there is none.
pub fn parse_run(
    answer: SearchAnswer,
    missing: impl FnOnce() -> String,
) -> Result<ReturnDoc, EngineError> {
    super::first_hit(answer?)
        .map(ReturnDoc::from_owned_hit)
        .ok_or_else(|| EngineError::NotFound { what: missing() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_run_the_engine_does_not_hold_is_not_found_not_a_bad_answer() {
        let none = Ok(json!({"hits": {"total": {"value": 0}, "hits": []}}));
        let e = parse_run(none, || "no return of job 1 from minion nosuch".into()).unwrap_err();
        assert_eq!(
            e,
            EngineError::NotFound {
                what: "no return of job 1 from minion nosuch".into()
            }
        );
        assert_eq!(e.to_string(), "no return of job 1 from minion nosuch");
    }

    fn doc(jid: &str, minion: &str, data: Value) -> ReturnDoc {
        ReturnDoc::from_hit(
            &json!({"_index": "salt-state_apply-v1", "_id": jid, "_source": {
                "jid": jid, "minion": minion, "fun": "state.apply", "success": true, "retcode": 0,
                "@timestamp": "2026-12-03T10:00:00+00:00", "data": data
            }}),
        )
    }

    fn state(result: Value, changes: Value, comment: &str, ms: f64, n: u64) -> Value {
        json!({"result": result, "changes": changes, "comment": comment, "duration": ms, "__run_num__": n})
    }

    #[test]
    fn states_are_matched_across_order_prefixes_and_each_difference_is_named() {
        let a = doc(
            "1",
            "web01",
            json!({
                "file_|-conf_|-/etc/app.conf_|-managed": state(json!(true), json!({}), "in the correct state", 10.0, 0),
                "pkg_|-nginx_|-nginx_|-installed": state(json!(true), json!({}), "installed", 20.0, 1),
                "cmd_|-migrate_|-migrate.sh_|-run": state(json!(true), json!({"retcode": 0}), "ran", 100.0, 2),
                "service_|-old_|-old_|-dead": state(json!(true), json!({}), "dead", 5.0, 3),
                "test_|-check_|-check_|-succeed_without_changes": state(json!(true), json!({}), "passed", 1.0, 4),
            }),
        );
        let b = doc(
            "2",
            "web01",
            json!({
                "0_|-file_|-conf_|-/etc/app.conf_|-managed": state(json!(true), json!({"diff": "+x"}), "updated", 12.0, 0),
                "1_|-pkg_|-nginx_|-nginx_|-installed": state(json!(true), json!({}), "installed", 25.0, 1),
                "2_|-cmd_|-migrate_|-migrate.sh_|-run": state(json!(false), json!({}), "exit 1", 9000.0, 2),
                "3_|-user_|-deploy_|-deploy_|-present": state(json!(true), json!({}), "present", 5.0, 3),
                "4_|-test_|-check_|-check_|-fail_without_changes": state(json!(false), json!({}), "failed", 1.0, 4),
            }),
        );
        let c = compare_runs(a, b);
        assert_eq!(
            c.identical, 1,
            "pkg.installed: same result, no changes, same comment"
        );
        let described: Vec<String> = c
            .states
            .iter()
            .map(|s| match s {
                StateComparison::OnlyIn { side, run } => format!("{side:?} only {}", run.id),
                StateComparison::Differs { b, differences, .. } => {
                    format!("{} {differences:?}", b.id)
                }
            })
            .collect();
        assert_eq!(
            described,
            [
                "conf [ChangesAppeared, Comment]",
                "migrate [Result(True, False), ChangesGone, Comment, Duration(100.0, 9000.0)]",
                "B only deploy",
                "check [Function(\"test.succeed_without_changes\", \"test.fail_without_changes\"), Result(True, False), Comment]",
                "A only old",
            ]
        );
    }

    #[test]
    fn a_render_error_on_one_side_is_said_not_hidden() {
        let a = doc(
            "1",
            "web01",
            json!({"return": ["Rendering SLS 'base:web' failed"]}),
        );
        let b = doc(
            "2",
            "web01",
            json!({
            "pkg_|-nginx_|-nginx_|-installed": state(json!(true), json!({}), "installed", 20.0, 0)}),
        );
        let c = compare_runs(a, b);
        assert!(c.notes[0].contains("Rendering SLS"), "{:?}", c.notes);
        assert_eq!(
            c.count(|s| matches!(s, StateComparison::OnlyIn { side: Side::B, .. })),
            1
        );
    }

    #[test]
    fn the_request_reads_jid_colon_minion_and_says_what_is_wrong() {
        let r = CompareRequest::from_query(|k| match k {
            "a" => Some("20261203101010101010:web01:blue"),
            _ => None,
        })
        .unwrap();
        assert_eq!(r.a.minion, "web01:blue");
        assert_eq!(r.b, None);
        let back = r.to_query();
        assert_eq!(back, [("a", "20261203101010101010:web01:blue".to_string())]);
        assert!(CompareRequest::from_query(|_| None).is_err());
        assert!(CompareRequest::from_query(|k| (k == "a").then_some("nojid")).is_err());
    }
}
