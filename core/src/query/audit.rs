//! The audit view: who ran what, on which target, when. Read from the
//! master's publish events (`salt/job/<jid>/new`, and `salt/run/<jid>/new`
//! for runners) in the event cache; where there are none, from the job
//! cache's loads, which keep the publish data only for some jobs.

use serde_json::{json, Value};

use super::filter::{any_of, time_clause, JobFilter, TimeRange};
use super::template::body;
use super::{hits, QueryContext};
use crate::config::AppConfig;
use crate::engine::{EngineError, SearchAnswer, SearchRequest};
use crate::json::At;
use crate::model::{PublishInfo, PublishSource};
use crate::route::param;
use crate::text::{json_text, scalar_text};

pub const AUDIT_PAGE_SIZE: usize = 100;

/// What the audit view is narrowed by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// User names, exact or wildcard (`sudo_*`).
    pub users: Vec<String>,
    pub functions: Vec<String>,
    /// Targets as the jobs spelled them (exactly: `*` is the target `*`).
    pub targets: Vec<String>,
    /// Minions a job reached, whatever its target (`web01*`): the publish
    /// event's `data.minions`, which the job cache does not keep.
    pub minions: Vec<String>,
    pub time: TimeRange,
    /// Only the lines a risk rule flags (decided per page, after the fact).
    pub risky_only: bool,
}

impl AuditFilter {
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (AuditFilter, Vec<String>) {
        let mut problems = Vec::new();
        let list = |name: &str| -> Vec<String> {
            get(name)
                .map(|s| {
                    s.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let time = match get(param::TIME)
            .filter(|t| !t.is_empty())
            .map(TimeRange::parse)
        {
            None => TimeRange::default(),
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                problems.push(e);
                TimeRange::default()
            }
        };
        (
            AuditFilter {
                users: list(param::USER),
                functions: list(param::FUN),
                targets: list(param::TARGET),
                minions: list(param::MINION),
                time,
                risky_only: get(param::RISKY) == Some("1"),
            },
            problems,
        )
    }

    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for (name, values) in [
            (param::USER, &self.users),
            (param::FUN, &self.functions),
            (param::TARGET, &self.targets),
            (param::MINION, &self.minions),
        ] {
            if !values.is_empty() {
                out.push((name, values.join(",")));
            }
        }
        if self.time != TimeRange::default() {
            out.push((param::TIME, self.time.to_param()));
        }
        if self.risky_only {
            out.push((param::RISKY, "1".into()));
        }
        out
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditKind {
    Job,
    Runner,
}

/// One line of the audit trail.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditEntry {
    pub jid: String,
    pub kind: AuditKind,
    /// When the master published it (`_stamp`, UTC).
    pub stamp: Option<String>,
    pub user: Option<String>,
    pub fun: Option<String>,
    pub args: Vec<String>,
    pub target: Option<String>,
    pub target_type: Option<String>,
    /// How many minions the master targeted.
    pub targeted: Option<usize>,
    pub source: PublishSource,
    /// Names of the risk rules it matches.
    pub risks: Vec<String>,
}

/// Where the next audit page starts: the sort values of the last line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditCursor {
    /// Event cache: `_stamp` (epoch ms) and tag of the last line.
    Event { stamp_ms: i64, tag: String },
    /// Job cache: the last jid.
    JobCache { jid: String },
}

impl AuditCursor {
    pub fn parse(text: &str) -> Option<AuditCursor> {
        let (kind, rest) = text.split_once(':')?;
        match kind {
            "e" => {
                let (ms, tag) = rest.split_once(':')?;
                Some(AuditCursor::Event {
                    stamp_ms: ms.parse().ok()?,
                    tag: tag.to_string(),
                })
            }
            "c" => Some(AuditCursor::JobCache {
                jid: rest.to_string(),
            }),
            _ => None,
        }
    }

    pub fn to_param(&self) -> String {
        match self {
            AuditCursor::Event { stamp_ms, tag } => format!("e:{stamp_ms}:{tag}"),
            AuditCursor::JobCache { jid } => format!("c:{jid}"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    pub source: Option<PublishSource>,
    /// Lines that match the filter, all pages (high-risk or not: the rules
    /// are applied here, not in the engine).
    pub total: Option<u64>,
    /// Lines read for this page: more than `entries` where high-risk only
    /// dropped some.
    pub read: u64,
    pub next: Option<AuditCursor>,
    pub notes: Vec<String>,
}

impl AuditPage {
    /// The page after this one added to it (high-risk only reads on).
    pub fn extend(&mut self, more: AuditPage) {
        self.entries.extend(more.entries);
        self.notes.extend(more.notes);
        self.read += more.read;
        self.next = more.next;
    }
}

const EVENT_SOURCE: [&str; 10] = [
    "tag",
    "data.jid",
    "data.fun",
    "data.arg",
    "data.fun_args",
    "data.tgt",
    "data.tgt_type",
    "data.user",
    "data.minions",
    "data._stamp",
];

crate::search_bundle! {
    /// The audit view's one round trip: the publish events, the job cache
    /// to fall back on when the event cache holds none, and how many jobs
    /// returned in the range (some have no publish record). A page after
    /// the first sends only the search its cursor reads, and the count goes
    /// only where the page can say it.
    pub struct AuditSearches => AuditAnswers {
        events: Option<SearchRequest>,
        job_cache: Option<SearchRequest>,
        returned: Option<SearchRequest>,
    }
}

pub fn audit_searches(
    ctx: &QueryContext,
    filter: &AuditFilter,
    cursor: Option<&AuditCursor>,
) -> AuditSearches {
    let (config, fields) = (&ctx.config, &ctx.fields);
    // Targets are globs themselves: `*` asks for the jobs that targeted `*`.
    let exactly = |field: &str, values: &[String]| -> Option<Value> {
        (!values.is_empty()).then(|| json!({"terms": {field: values}}))
    };
    let bounds = filter.time.bounds(ctx.now_ms);

    let tag = json!(fields.tag);
    let mut event_filter = vec![body(
        r#"{"bool":{"should":[{"wildcard":{$0:{"value":"salt/job/*/new"}}},{"wildcard":{$0:{"value":"salt/run/*/new"}}}],"minimum_should_match":1}}"#,
        std::slice::from_ref(&tag),
    )];
    event_filter.extend(bounds.map(|(a, b)| time_clause("data._stamp", a, b)));
    event_filter.extend(any_of(&fields.event_user, &filter.users));
    event_filter.extend(any_of(&fields.event_fun, &filter.functions));
    event_filter.extend(exactly(&fields.event_target, &filter.targets));
    event_filter.extend(any_of(&fields.event_targets, &filter.minions));
    let mut events = body(
        r#"{"size":$0,"track_total_hits":true,"query":{"bool":{"filter":$1}},"sort":[{"data._stamp":{"order":"desc","unmapped_type":"date"}},{$2:{"order":"desc","unmapped_type":"keyword"}}],"_source":$3}"#,
        &[
            json!(AUDIT_PAGE_SIZE),
            Value::Array(event_filter),
            tag,
            json!(EVENT_SOURCE),
        ],
    );
    if let Some(AuditCursor::Event { stamp_ms, tag }) = cursor {
        events["search_after"] = json!([stamp_ms, tag]);
    }
    let wants = |source: PublishSource| match cursor {
        None => true,
        Some(AuditCursor::Event { .. }) => source == PublishSource::Event,
        Some(AuditCursor::JobCache { .. }) => source == PublishSource::JobCache,
    };

    let mut cache_filter = vec![json!({"exists": {"field": "load.fun"}})];
    cache_filter.extend(bounds.map(|(a, b)| time_clause("load._stamp", a, b)));
    cache_filter.extend(any_of(&fields.cache_user, &filter.users));
    cache_filter.extend(any_of(&fields.cache_fun, &filter.functions));
    cache_filter.extend(exactly(&fields.cache_target, &filter.targets));
    // The job cache's loads name no minions: under a minion filter they
    // cannot say which jobs reached it, so none are listed from them.
    if !filter.minions.is_empty() {
        cache_filter.push(json!({"bool": {"must_not": {"match_all": {}}}}));
    }
    let mut cache = body(
        r#"{"size":$0,"track_total_hits":true,"query":{"bool":{"filter":$1}},"sort":[{$2:{"order":"desc","unmapped_type":"keyword"}}],"_source":["jid","load.fun","load.arg","load.tgt","load.tgt_type","load.user","load._stamp"]}"#,
        &[
            json!(AUDIT_PAGE_SIZE),
            Value::Array(cache_filter),
            json!(fields.jid),
        ],
    );
    if let Some(AuditCursor::JobCache { jid }) = cursor {
        cache["search_after"] = json!([jid]);
    }
    // Every job that returned in the range, noisy or not, by the functions
    // asked for: users and targets are only in the publish records.
    let returned = JobFilter {
        time: filter.time.clone(),
        functions: filter.functions.clone(),
        minions: filter.minions.clone(),
        show_noisy: true,
        ..JobFilter::default()
    };
    let returned = body(
        r#"{"size":0,"query":$0,"aggs":{"jobs":{"cardinality":{"field":$1,"precision_threshold":40000}}}}"#,
        &[returned.returns_query(ctx), json!(fields.jid)],
    );
    AuditSearches {
        events: wants(PublishSource::Event)
            .then(|| SearchRequest::new(&config.event_index_pattern, events)),
        job_cache: wants(PublishSource::JobCache)
            .then(|| SearchRequest::new(&config.job_cache_index, cache)),
        returned: counts_returned(filter, cursor)
            .then(|| SearchRequest::new(&config.index_pattern, returned)),
    }
}

/// The jobs that returned are counted for the first page only, and not
/// under a user or target filter, which the returns do not carry.
fn counts_returned(filter: &AuditFilter, cursor: Option<&AuditCursor>) -> bool {
    cursor.is_none() && filter.users.is_empty() && filter.targets.is_empty()
}

/// Reads [`audit_searches`]: the events when there are any (or when the
/// cursor is theirs), else the job cache, with a note saying which.
pub fn parse_audit(
    config: &AppConfig,
    filter: &AuditFilter,
    cursor: Option<&AuditCursor>,
    answers: AuditAnswers,
) -> Result<AuditPage, EngineError> {
    // A search not sent reads as no hits.
    let sent = |answer: Option<SearchAnswer>| answer.unwrap_or_else(|| Ok(json!({})));
    let AuditAnswers {
        events,
        job_cache: cache,
        returned,
    } = answers;
    let (events, cache) = (sent(events), sent(cache));
    let event_hits = match &events {
        Ok(a) => hits(a).len(),
        _ => 0,
    };
    let use_cache = match cursor {
        Some(AuditCursor::JobCache { .. }) => true,
        Some(AuditCursor::Event { .. }) => false,
        None => event_hits == 0,
    };
    let mut page = AuditPage::default();
    let (answer, source) = if use_cache {
        if let Err(e) = &events {
            page.notes.push(format!("event cache unavailable: {e}"));
        }
        (cache, PublishSource::JobCache)
    } else {
        (events, PublishSource::Event)
    };
    let answer = match answer {
        Ok(a) => a,
        Err(e) if e.is_index_not_found() && source == PublishSource::JobCache => {
            page.notes.push(format!(
                "no publish events in `{}` and no job cache `{}`: turn on `event_return: elasticsearch` (or `master_job_cache: elasticsearch`) on the master",
                config.event_index_pattern, config.job_cache_index
            ));
            return Ok(page);
        }
        Err(e) => return Err(e),
    };
    // Nothing in either: no source to name (the page is of neither).
    let from_neither = source == PublishSource::JobCache && hits(&answer).is_empty();
    if source == PublishSource::JobCache && cursor.is_none() {
        // A missing index answers "no hits" (the searches ignore unavailable
        // indices), so an empty job cache may mean there is none.
        page.notes.push(if from_neither {
            format!(
                "no publish event in `{}` and nothing in the job cache `{}` matches: widen the time range or the filter, or, if the master indexes neither, turn on `event_return: elasticsearch` (or `master_job_cache: elasticsearch`) on the master",
                config.event_index_pattern, config.job_cache_index
            )
        } else {
            format!(
                "no publish events in `{}`: this is the job cache, whose loads a job's returns overwrite, so some lines lack the user, target or arguments",
                config.event_index_pattern
            )
        });
    }
    if source == PublishSource::JobCache && !filter.minions.is_empty() {
        page.notes.push(
            "the job cache names no minions: a Minion filter reads the master's publish events only".into(),
        );
    }
    page.source = (!from_neither).then_some(source);
    page.total = super::total_hits(&answer);
    // A job run by `salt-call` on a minion, or while the master's events
    // were not indexed, has returns and no publish record, so no line here.
    // Which jobs those are needs the two sets of jids joined; the page says
    // how many returned beside how many it lists, and what is left out.
    let returned_jobs = match &returned {
        Some(Ok(r)) if counts_returned(filter, cursor) => {
            r.at("/aggregations/jobs/value").and_then(Value::as_u64)
        }
        _ => None,
    };
    if let (Some(jobs @ 1..), Some(published)) = (returned_jobs, page.total) {
        // Two counts of two sets of jids, not one inside the other: a job
        // may have returns and no publish record, or the reverse.
        let were = if published == 1 { "was" } else { "were" };
        page.notes.push(format!(
            "In this range {} returned and {published} {were} published (a publish record), not always the same jobs. Only the published are listed: a job run by salt-call on a minion, or while the master's events were not indexed, has no publish record and is only in the job list; a job published to minions that did not answer has no return",
            crate::text::counted(jobs, "job")
        ));
    }
    let raw = hits(&answer);
    page.read = raw.len() as u64;
    for hit in raw {
        let Some(src) = hit.get("_source") else {
            continue;
        };
        let entry = match source {
            PublishSource::Event => entry_from_event(src),
            PublishSource::JobCache => {
                PublishInfo::from_job_cache(src).map(|p| entry_from_publish(p, AuditKind::Job))
            }
        };
        match entry {
            Some(mut e) => {
                e.risks =
                    config.risks(e.fun.as_deref().unwrap_or(""), &e.args, e.target.as_deref());
                if !filter.risky_only || !e.risks.is_empty() {
                    page.entries.push(e);
                }
            }
            None => page.notes.push(format!(
                "an audit document could not be read: {}",
                json_text(src)
            )),
        }
    }
    if raw.len() >= AUDIT_PAGE_SIZE {
        page.next = raw.last().and_then(|h| {
            let sort = h.get("sort")?.as_array()?;
            match source {
                PublishSource::Event => Some(AuditCursor::Event {
                    stamp_ms: sort.first()?.as_i64()?,
                    tag: scalar_text(sort.get(1)?),
                }),
                PublishSource::JobCache => Some(AuditCursor::JobCache {
                    jid: scalar_text(sort.first()?),
                }),
            }
        });
    }
    Ok(page)
}

fn entry_from_event(source: &Value) -> Option<AuditEntry> {
    // `salt/job/<jid>/new`, or a runner's `salt/run/<jid>/new`.
    let info = PublishInfo::from_event(source)?;
    let kind = match info.minions {
        None if source.get("tag")?.as_str()?.starts_with("salt/run/") => AuditKind::Runner,
        _ => AuditKind::Job,
    };
    Some(entry_from_publish(info, kind))
}

fn entry_from_publish(p: PublishInfo, kind: AuditKind) -> AuditEntry {
    AuditEntry {
        targeted: p.minions.as_ref().map(Vec::len),
        jid: p.jid,
        kind,
        stamp: p.stamp,
        user: p.user,
        fun: p.fun,
        args: p.args,
        target: p.target,
        target_type: p.target_type,
        source: p.source,
        risks: Vec::new(),
    }
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
