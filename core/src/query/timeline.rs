//! A job's events as a timeline: when the master published it, when each
//! minion's return reached the master (time after publish), its progress
//! events — with the slowest minions marked. Read from the job page's
//! own search of the job's events (`salt/job/<jid>/…`), no extra round trip.

use crate::model::EventDoc;
use crate::sort;

/// What one entry of the timeline is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimelineKind {
    /// `salt/job/<jid>/new`: the master published the job.
    Published,
    /// `salt/job/<jid>/publish`: sent to the minions.
    Sent,
    /// `salt/job/<jid>/ret/<minion>`.
    Returned {
        failed: bool,
    },
    /// `salt/job/<jid>/prog/<minion>/…`: a state finished (`state_events`).
    Progress,
    Other,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEntry {
    pub kind: TimelineKind,
    pub tag: String,
    pub minion: Option<String>,
    pub stamp: Option<String>,
    /// Milliseconds after the publish event (the first event when there is none).
    pub after_ms: Option<i64>,
    /// Among the slowest returns of the job.
    pub slowest: bool,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobTimeline {
    pub entries: Vec<TimelineEntry>,
    /// Returns that reached the master.
    pub returned: usize,
    /// The slowest return's time after publish.
    pub slowest_ms: Option<i64>,
    /// The median return's time after publish.
    pub median_ms: Option<i64>,
}

impl JobTimeline {
    /// The timeline of a job's events (any order).
    pub fn of(mut events: Vec<EventDoc>) -> JobTimeline {
        sort::sort_by(&mut events, |a, b| {
            a.stamp_ms.cmp(&b.stamp_ms).then_with(|| a.tag.cmp(&b.tag))
        });
        // A batch's own events (`salt/batch/<jid>/new`, `progress`,
        // `complete`) are others: the job is published by the master.
        let kind = |e: &EventDoc| match e.family {
            "salt/job/*/new" | "salt/run/*/new" => TimelineKind::Published,
            "salt/job/*/publish" => TimelineKind::Sent,
            "salt/job/*/ret/*" => TimelineKind::Returned { failed: e.failed },
            "salt/job/*/prog/*" => TimelineKind::Progress,
            _ => TimelineKind::Other,
        };
        let start = events
            .iter()
            .find(|e| kind(e) == TimelineKind::Published)
            .or(events.first())
            .and_then(|e| e.stamp_ms);
        let mut entries: Vec<TimelineEntry> = events
            .iter()
            .map(|e| TimelineEntry {
                kind: kind(e),
                tag: e.tag.clone(),
                minion: e.minion.clone(),
                stamp: e.stamp.clone(),
                after_ms: e.stamp_ms.zip(start).map(|(at, s)| at - s),
                slowest: false,
            })
            .collect();
        let mut latencies: Vec<(i64, usize)> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e.kind, TimelineKind::Returned { .. }))
            .filter_map(|(i, e)| Some((e.after_ms?, i)))
            .collect();
        sort::sort_by(&mut latencies, |a, b| b.cmp(a));
        let returned = entries
            .iter()
            .filter(|e| matches!(e.kind, TimelineKind::Returned { .. }))
            .count();
        // The slowest tenth, at least one and at most ten, once there are
        // enough returns for "slow" to mean something.
        if latencies.len() >= 3 {
            for &(_, i) in latencies.iter().take((latencies.len() / 10).clamp(1, 10)) {
                entries[i].slowest = true;
            }
        }
        JobTimeline {
            returned,
            slowest_ms: latencies.first().map(|l| l.0),
            median_ms: latencies.get(latencies.len() / 2).map(|l| l.0),
            entries,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(tag: &str, stamp: &str, extra: serde_json::Value) -> EventDoc {
        let mut data = json!({"_stamp": stamp});
        if let (Some(d), Some(x)) = (data.as_object_mut(), extra.as_object()) {
            d.extend(x.clone());
        }
        EventDoc::from_hit(&json!({"_id": tag, "_source": {"tag": tag, "data": data}}))
    }

    #[test]
    fn returns_are_timed_after_publish_and_the_slowest_marked() {
        let j = "salt/job/20261203180841338559";
        let t = JobTimeline::of(vec![
            ev(
                &format!("{j}/ret/db-02"),
                "2026-12-03T18:08:43.815+00:00",
                json!({"success": true, "retcode": 0}),
            ),
            ev(
                &format!("{j}/new"),
                "2026-12-03T18:08:41.338+00:00",
                json!({}),
            ),
            ev(
                &format!("{j}/ret/web01"),
                "2026-12-03T18:08:41.800+00:00",
                json!({"success": true}),
            ),
            ev(
                &format!("{j}/ret/web02"),
                "2026-12-03T18:08:42.000+00:00",
                json!({"success": false, "retcode": 1}),
            ),
            ev(
                &format!("{j}/prog/web01/1"),
                "2026-12-03T18:08:41.700+00:00",
                json!({}),
            ),
        ]);
        let seen: Vec<(&str, Option<i64>, bool)> = t
            .entries
            .iter()
            .map(|e| (e.minion.as_deref().unwrap_or("-"), e.after_ms, e.slowest))
            .collect();
        assert_eq!(
            seen,
            [
                ("-", Some(0), false),
                ("web01", Some(362), false),
                ("web01", Some(462), false),
                ("web02", Some(662), false),
                ("db-02", Some(2477), true),
            ]
        );
        assert_eq!(t.entries[0].kind, TimelineKind::Published);
        assert_eq!(t.entries[1].kind, TimelineKind::Progress);
        assert_eq!(t.entries[3].kind, TimelineKind::Returned { failed: true });
        assert_eq!(
            (t.returned, t.slowest_ms, t.median_ms),
            (3, Some(2477), Some(662))
        );
    }

    #[test]
    fn without_a_publish_event_times_count_from_the_first_event() {
        let t = JobTimeline::of(vec![
            ev("salt/job/1/ret/a", "2026-12-03T10:00:00Z", json!({})),
            ev("salt/job/1/ret/b", "2026-12-03T10:00:01Z", json!({})),
        ]);
        assert_eq!(t.entries[0].after_ms, Some(0));
        assert_eq!(t.entries[1].after_ms, Some(1000));
        assert!(
            !t.entries.iter().any(|e| e.slowest),
            "two returns: no one is slow"
        );
        assert!(JobTimeline::of(Vec::new()).is_empty());
    }

    #[test]
    fn a_runner_is_published_by_its_new_event_and_a_batch_shows_its_progress() {
        let runner = JobTimeline::of(vec![
            ev("salt/run/1/new", "2026-12-03T10:00:00Z", json!({})),
            ev("salt/run/1/ret", "2026-12-03T10:00:02Z", json!({})),
        ]);
        let kinds: Vec<_> = runner.entries.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(kinds, [TimelineKind::Published, TimelineKind::Other]);
        // `salt -b 2`: the batch starts before the master publishes its
        // first sub-job; its progress events are listed, not publishes.
        let batch = JobTimeline::of(vec![
            ev("salt/batch/1/new", "2026-12-03T10:00:00Z", json!({})),
            ev("salt/job/1/new", "2026-12-03T10:00:01Z", json!({})),
            ev("salt/batch/1/progress", "2026-12-03T10:00:03Z", json!({})),
        ]);
        let kinds: Vec<_> = batch.entries.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(
            kinds,
            [
                TimelineKind::Other,
                TimelineKind::Published,
                TimelineKind::Other
            ]
        );
        assert_eq!(batch.entries[2].after_ms, Some(2000));
    }
}
