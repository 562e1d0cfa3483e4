//! The job page (`get_jid`): every minion's return for one jid, the publish
//! data, and the targeted minions that never returned — all in one
//! `_msearch`.

use serde_json::{json, Value};

use super::{hits, returns_filter, total_hits, FieldMap};
use crate::config::AppConfig;
use crate::engine::{EngineError, SearchRequest};
use crate::model::{HighstateSummary, Outcome, PublishInfo, ReturnData, ReturnDoc};

/// The most returns one request brings back (the engines' default
/// `index.max_result_window`). A larger job says how many it did not show.
pub const MAX_RETURNS: usize = 10_000;

/// A minion the publish event targeted that has no return document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingMinion {
    pub minion: String,
    /// Its `salt/job/<jid>/ret/<minion>` event exists: the minion answered
    /// but the returner lost its document.
    pub returned_to_master: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobDetail {
    pub jid: String,
    /// Sorted by minion id.
    pub returns: Vec<ReturnDoc>,
    /// How many return documents the engine holds for this jid.
    pub total_returns: u64,
    pub publish: Option<PublishInfo>,
    pub missing: Vec<MissingMinion>,
    pub notes: Vec<String>,
}

impl JobDetail {
    /// Totals across minions: (ok, failed) minions and the summed state
    /// summary of state returns.
    pub fn totals(&self) -> (usize, usize, Option<HighstateSummary>) {
        let failed = self
            .returns
            .iter()
            .filter(|r| r.outcome() == Outcome::Failed)
            .count();
        let mut states: Option<HighstateSummary> = None;
        for r in &self.returns {
            if let ReturnData::States(s) = &r.data {
                states
                    .get_or_insert_with(HighstateSummary::default)
                    .add(&HighstateSummary::of(&s.runs));
            }
        }
        (self.returns.len() - failed, failed, states)
    }
}

/// The four searches of the job page, in the order [`parse_job`] reads them.
pub fn job_searches(config: &AppConfig, fields: &FieldMap, jid: &str) -> Vec<SearchRequest> {
    let (mut filter, must_not) = returns_filter(config);
    filter.push(json!({"term": {fields.jid.clone(): jid}}));
    vec![
        SearchRequest::new(
            &config.index_pattern,
            json!({
                "size": MAX_RETURNS,
                "track_total_hits": true,
                "query": {"bool": {"filter": filter, "must_not": must_not}},
                "sort": [{fields.minion.clone(): {"order": "asc", "unmapped_type": "keyword"}}]
            }),
        ),
        SearchRequest::new(
            &config.event_index_pattern,
            json!({"size": 1, "query": {"term": {fields.tag.clone(): format!("salt/job/{jid}/new")}}}),
        ),
        SearchRequest::new(
            &config.event_index_pattern,
            json!({
                "size": MAX_RETURNS,
                "query": {"prefix": {fields.tag.clone(): format!("salt/job/{jid}/ret/")}},
                "_source": ["tag"]
            }),
        ),
        SearchRequest::new(
            &config.job_cache_index,
            json!({"size": 1, "query": {"ids": {"values": [jid]}}}),
        ),
    ]
}

/// Reads the answers of [`job_searches`]. Only the returns search failing is
/// an error; the publish lookups failing leave a note.
pub fn parse_job(
    jid: &str,
    answers: Vec<Result<Value, EngineError>>,
) -> Result<JobDetail, EngineError> {
    let mut answers = answers.into_iter();
    let mut next = || {
        answers.next().unwrap_or_else(|| {
            Err(EngineError::BadResponse {
                url: String::new(),
                detail: "too few answers".into(),
            })
        })
    };
    let returns_answer = next()?;
    let mut notes = Vec::new();
    let mut soft = |what: &str, r: Result<Value, EngineError>| match r {
        Ok(v) => Some(v),
        Err(e) => {
            notes.push(format!("{what} unavailable: {e}"));
            None
        }
    };
    let publish_answer = soft("publish event", next());
    let ret_events_answer = soft("return events", next());
    let job_cache_answer = soft("job cache", next());

    let mut returns: Vec<ReturnDoc> = hits(&returns_answer)
        .iter()
        .map(ReturnDoc::from_hit)
        .collect();
    returns.sort_by(|a, b| a.minion.cmp(&b.minion).then(a.index.cmp(&b.index)));
    let total_returns = total_hits(&returns_answer).unwrap_or(returns.len() as u64);
    if total_returns > returns.len() as u64 {
        notes.push(format!(
            "showing {} of {} returns for this job",
            returns.len(),
            total_returns
        ));
    }

    let event = publish_answer.as_ref().and_then(|a| {
        hits(a)
            .iter()
            .find_map(|h| PublishInfo::from_event(h.get("_source")?))
    });
    let cached = job_cache_answer.as_ref().and_then(|a| {
        hits(a)
            .iter()
            .find_map(|h| PublishInfo::from_job_cache(h.get("_source")?))
    });
    let publish = PublishInfo::merge(event, cached);

    let ret_prefix = format!("salt/job/{jid}/ret/");
    let ret_events: Vec<String> = ret_events_answer
        .as_ref()
        .map(|a| {
            hits(a)
                .iter()
                .filter_map(|h| {
                    h.pointer("/_source/tag")?
                        .as_str()?
                        .strip_prefix(&ret_prefix)
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    let missing = publish
        .as_ref()
        .and_then(|p| p.minions.as_ref())
        .map(|targeted| {
            targeted
                .iter()
                .filter(|m| !returns.iter().any(|r| &r.minion == *m))
                .map(|m| MissingMinion {
                    minion: m.clone(),
                    returned_to_master: ret_events.contains(m),
                })
                .collect()
        })
        .unwrap_or_default();

    Ok(JobDetail {
        jid: jid.to_string(),
        returns,
        total_returns,
        publish,
        missing,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ret(minion: &str, success: bool) -> Value {
        json!({"_index": "salt-state_apply-v1", "_id": minion, "_source": {
            "jid": "7", "minion": minion, "fun": "state.apply", "success": success,
            "retcode": if success { 0 } else { 2 },
            "data": {"test_|-a_|-a_|-nop": {"result": success, "changes": {}, "__run_num__": 0, "duration": 1.0}}
        }})
    }

    #[test]
    fn the_job_searches_filter_on_the_jid_and_ask_for_every_return() {
        let s = job_searches(&AppConfig::default(), &FieldMap::default(), "7");
        assert_eq!(s.len(), 4);
        assert_eq!(
            s[0].body["query"]["bool"]["filter"][1]["term"]["jid.keyword"],
            "7"
        );
        assert_eq!(s[0].body["size"], MAX_RETURNS);
        assert_eq!(s[1].body["query"]["term"]["tag.keyword"], "salt/job/7/new");
        assert_eq!(
            s[2].body["query"]["prefix"]["tag.keyword"],
            "salt/job/7/ret/"
        );
        assert_eq!(s[3].index, "salt-master-job-cache");
    }

    #[test]
    fn targeted_minions_without_returns_are_listed_as_missing_with_why() {
        let answers = vec![
            Ok(
                json!({"hits": {"total": {"value": 2}, "hits": [ret("web01.prod.example.com", true), ret("db-02", false)]}}),
            ),
            Ok(
                json!({"hits": {"hits": [{"_source": {"tag": "salt/job/7/new", "data": {
                "fun": "state.apply", "minions": ["db-02", "web01.prod.example.com", "lost-1", "offline-05"]}}}]}}),
            ),
            Ok(
                json!({"hits": {"hits": [{"_source": {"tag": "salt/job/7/ret/lost-1"}}, {"_source": {"tag": "salt/job/7/ret/db-02"}}]}}),
            ),
            Err(EngineError::Status {
                url: "u".into(),
                status: 404,
                kind: Some("index_not_found_exception".into()),
                reason: "no such index".into(),
            }),
        ];
        let job = parse_job("7", answers).unwrap();
        let minions: Vec<_> = job.returns.iter().map(|r| r.minion.as_str()).collect();
        assert_eq!(minions, ["db-02", "web01.prod.example.com"]);
        assert_eq!(
            job.missing,
            vec![
                MissingMinion {
                    minion: "lost-1".into(),
                    returned_to_master: true
                },
                MissingMinion {
                    minion: "offline-05".into(),
                    returned_to_master: false
                },
            ]
        );
        assert!(job
            .notes
            .iter()
            .any(|n| n.starts_with("job cache unavailable")));
        let (ok, failed, states) = job.totals();
        assert_eq!((ok, failed), (1, 1));
        let states = states.unwrap();
        assert_eq!((states.succeeded, states.failed, states.total), (1, 1, 2));
    }

    #[test]
    fn a_job_larger_than_one_request_says_what_it_did_not_show() {
        let answers = vec![Ok(
            json!({"hits": {"total": {"value": 12000}, "hits": [ret("a", true)]}}),
        )];
        let job = parse_job("7", answers).unwrap();
        assert!(
            job.notes
                .iter()
                .any(|n| n == "showing 1 of 12000 returns for this job"),
            "{:?}",
            job.notes
        );
    }

    #[test]
    fn a_failed_returns_search_is_the_pages_error() {
        let e = EngineError::Status {
            url: "u".into(),
            status: 500,
            kind: None,
            reason: "boom".into(),
        };
        assert_eq!(parse_job("7", vec![Err(e.clone())]).unwrap_err(), e);
    }
}
