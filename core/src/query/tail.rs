//! The live tail of the events view: polls that show every new event once.
//!
//! The event cache has no ingest time, only `data._stamp` (when the master
//! fired the event), and an event can become searchable after events with a
//! later stamp: the returner's queue, a busy bulk, the engine's refresh
//! interval. So a poll does not ask "after the newest shown", which would
//! lose such late events, but "from [`TAIL_OVERLAP_MS`] before the newest
//! shown, except the ones shown" (`must_not ids`): late events within the
//! overlap come, none comes twice, and a poll that finds more than a batch
//! leaves the rest for the next poll without reading anything twice.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::events::{sort, EventFilter};
use super::template::body;
use super::{hits, QueryContext};
use crate::engine::{EngineError, SearchAnswer, SearchRequest};
use crate::model::EventDoc;
use crate::text::counted;

/// How far back each poll looks before the newest event shown. A minute
/// covers the engine's refresh (1 s), the returner's bulk and a queued
/// minion event; an event indexed later than that is in the list, not the
/// tail.
pub const TAIL_OVERLAP_MS: i64 = 60_000;
/// The most events one poll reads; a fuller bus is read over several polls.
pub const TAIL_BATCH: usize = 500;
/// The most shown events a poll names to leave out. On a bus busier than
/// this per overlap, the overlap shrinks to the newest this many events.
pub const TAIL_SEEN_CAP: usize = 5_000;

/// How often the live tail polls when the last poll found no more waiting.
pub const TAIL_POLL_MS: u32 = 2_000;
/// The rows a live view keeps by default; older ones are let go.
pub const LIVE_KEEP: usize = 1_000;
/// The live view's choices of rows to keep.
pub const LIVE_KEEP_CHOICES: [usize; 3] = [200, 1_000, 5_000];

/// The live tail between polls: where to look from, and the events already
/// shown within the overlap (by `_id`), so none is shown twice.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TailState {
    /// The newest `_stamp` shown (epoch ms).
    pub newest_ms: Option<i64>,
    /// `_id` → `_stamp` of the events shown that are still in the overlap.
    seen: BTreeMap<String, i64>,
    /// Set when the seen list was capped: nothing older is asked for again.
    floor_ms: Option<i64>,
}

impl TailState {
    /// A tail that starts at `from_ms` (nothing shown yet).
    pub fn starting_at(from_ms: i64) -> TailState {
        TailState {
            newest_ms: Some(from_ms),
            ..TailState::default()
        }
    }

    /// A tail that goes on from events already on the screen.
    pub fn after_shown(events: &[EventDoc], now_ms: i64) -> TailState {
        let mut tail = TailState::default();
        tail.take(events.to_vec());
        if tail.newest_ms.is_none() {
            tail.newest_ms = Some(now_ms);
        }
        tail
    }

    /// What the next poll asks from.
    pub fn since_ms(&self) -> Option<i64> {
        let since = self.newest_ms? - TAIL_OVERLAP_MS;
        Some(self.floor_ms.map_or(since, |f| since.max(f)))
    }

    /// Events shown within the overlap.
    pub fn seen(&self) -> usize {
        self.seen.len()
    }

    /// Takes a poll's events (oldest first): the ones not shown yet, in
    /// order; forgets those that left the overlap.
    pub fn take(&mut self, events: Vec<EventDoc>) -> Vec<EventDoc> {
        let mut fresh = Vec::new();
        for e in events {
            let Some(at) = e.stamp_ms else { continue };
            if self.seen.insert(e.id.clone(), at).is_some() {
                continue;
            }
            if self.newest_ms.is_none_or(|n| at > n) {
                self.newest_ms = Some(at);
            }
            fresh.push(e);
        }
        if let Some(since) = self.since_ms() {
            self.seen.retain(|_, at| *at >= since);
        }
        if self.seen.len() > TAIL_SEEN_CAP {
            // Keep the newest whole milliseconds: an id forgotten at a kept
            // millisecond would come again.
            let mut per_ms: BTreeMap<i64, usize> = BTreeMap::new();
            for at in self.seen.values() {
                *per_ms.entry(*at).or_default() += 1;
            }
            let mut kept = 0;
            let floor = per_ms
                .iter()
                .rev()
                .find(|(_, n)| {
                    kept += **n;
                    kept >= TAIL_SEEN_CAP
                })
                .map_or(i64::MIN, |(at, _)| *at);
            self.seen.retain(|_, at| *at >= floor);
            self.floor_ms = Some(floor);
        }
        fresh
    }
}

/// One poll: what came since the overlap began, minus what was shown,
/// oldest first.
pub fn tail_search(ctx: &QueryContext, filter: &EventFilter, state: &TailState) -> SearchRequest {
    let mut query = filter.query(ctx, state.since_ms());
    if !state.seen.is_empty() {
        let ids: Vec<&str> = state.seen.keys().map(String::as_str).collect();
        query["bool"]["must_not"] = json!([{"ids": {"values": ids}}]);
    }
    SearchRequest::new(
        &ctx.config.event_index_pattern,
        body(
            r#"{"size":$0,"query":$1,"sort":$2}"#,
            &[json!(TAIL_BATCH), query, sort(&ctx.fields, "asc")],
        ),
    )
}

/// A poll's events, and whether the batch was full (poll again at once).
pub fn parse_tail(answer: SearchAnswer) -> Result<(Vec<EventDoc>, bool), EngineError> {
    let answer: Value = answer?;
    let found = hits(&answer);
    Ok((
        found.iter().map(EventDoc::from_hit).collect(),
        found.len() >= TAIL_BATCH,
    ))
}

/// The events a live view shows: newest first, at most `keep`, the older
/// ones let go (and counted) as new ones come.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveList {
    pub rows: Vec<EventDoc>,
    pub keep: usize,
    /// Events shown and then let go to keep the list short.
    pub let_go: u64,
}

impl LiveList {
    /// The list from a page of events, newest first.
    pub fn new(mut rows: Vec<EventDoc>, keep: usize) -> LiveList {
        rows.reverse();
        let mut list = LiveList {
            rows: Vec::new(),
            keep,
            let_go: 0,
        };
        list.add(rows);
        list
    }

    /// Adds events, oldest first (as a poll reads them): each takes its
    /// place by time, so a late one lands below the newer ones shown.
    pub fn add(&mut self, mut fresh: Vec<EventDoc>) {
        fresh.reverse();
        let old = std::mem::take(&mut self.rows);
        let mut merged = Vec::with_capacity(old.len() + fresh.len());
        let (mut a, mut b) = (old.into_iter().peekable(), fresh.into_iter().peekable());
        loop {
            let take_fresh = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => y.stamp_ms > x.stamp_ms,
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (None, None) => break,
            };
            merged.extend(if take_fresh { b.next() } else { a.next() });
        }
        if merged.len() > self.keep {
            self.let_go += (merged.len() - self.keep) as u64;
            merged.truncate(self.keep);
        }
        self.rows = merged;
    }

    pub fn set_keep(&mut self, keep: usize) {
        self.keep = keep;
        self.add(Vec::new());
    }
}

/// Events per second over the last ten seconds of polls, and how many the
/// tail has read in all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventRate {
    /// (when, how many) per poll that found events.
    arrivals: Vec<(i64, usize)>,
    started_ms: Option<i64>,
    received: u64,
}

const RATE_WINDOW_MS: i64 = 10_000;

impl EventRate {
    pub fn record(&mut self, now_ms: i64, count: usize) {
        self.started_ms.get_or_insert(now_ms);
        self.received += count as u64;
        if count > 0 {
            self.arrivals.push((now_ms, count));
        }
        self.arrivals.retain(|(at, _)| now_ms - at < RATE_WINDOW_MS);
    }

    /// Events read since the tail began.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Events per second: over the window, or since the tail began when
    /// that is shorter (at least a second, so a first batch is no spike).
    pub fn per_second(&self, now_ms: i64) -> f64 {
        let Some(start) = self.started_ms else {
            return 0.0;
        };
        let span = (now_ms - start).clamp(1_000, RATE_WINDOW_MS) as f64 / 1000.0;
        let n: usize = self
            .arrivals
            .iter()
            .filter(|(at, _)| now_ms - at < RATE_WINDOW_MS)
            .map(|(_, n)| n)
            .sum();
        n as f64 / span
    }
}

/// How many of a poll's events arrived after the page opened: those
/// stamped after the newest it showed (`opened_ms`). The first polls also
/// bring older matching events that lay beyond the first page; the page's
/// own count has those already, and they are no sign of the bus's rate.
pub fn arrived(fresh: &[EventDoc], opened_ms: i64) -> usize {
    fresh
        .iter()
        .filter(|e| e.stamp_ms.is_some_and(|at| at > opened_ms))
        .count()
}

/// The count over a followed list: the page's search counted what matched
/// when it opened, and the tail reads each later event once, so the two
/// add up to what has matched since. Both are said: the search's count
/// alone would stay as it was while the list grows.
pub fn match_count(total: u64, received: u64) -> String {
    if received == 0 {
        let verb = if total == 1 { "matches" } else { "match" };
        format!("{} {verb}", counted(total, "event"))
    } else {
        format!(
            "{} events match: {total} when the page opened, {received} since",
            total + received
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(id: &str, ms: i64) -> EventDoc {
        EventDoc::from_hit(&json!({"_id": id, "_source": {"tag": "salt/auth",
            "data": {"_stamp": crate::time::iso_millis(ms)}}}))
    }

    #[test]
    fn the_tail_shows_each_event_once_and_late_ones_within_the_overlap() {
        let mut tail = TailState::starting_at(100_000);
        assert_eq!(tail.since_ms(), Some(100_000 - TAIL_OVERLAP_MS));
        let first = tail.take(vec![ev("a", 100_500), ev("b", 101_000)]);
        assert_eq!(first.len(), 2);
        assert_eq!(tail.newest_ms, Some(101_000));
        // The next poll leaves a and b out by id.
        let s = tail_search(&QueryContext::at(0), &EventFilter::default(), &tail);
        assert_eq!(
            s.body["query"]["bool"]["must_not"][0]["ids"]["values"],
            json!(["a", "b"])
        );
        assert_eq!(s.body["sort"][0]["data._stamp"]["order"], "asc");
        // Were they answered again anyway, they would not show twice; d,
        // indexed late with a stamp older than b, does show.
        let next = tail.take(vec![
            ev("d", 99_000),
            ev("a", 100_500),
            ev("b", 101_000),
            ev("c", 102_000),
        ]);
        let ids: Vec<&str> = next.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["d", "c"], "each once, the late one too");
        assert_eq!(tail.newest_ms, Some(102_000));
        // Far later: what left the overlap is forgotten, and not asked for.
        tail.take(vec![ev("z", 102_000 + 2 * TAIL_OVERLAP_MS)]);
        assert_eq!(tail.seen(), 1);
        assert_eq!(tail.since_ms(), Some(102_000 + TAIL_OVERLAP_MS));
    }

    #[test]
    fn a_bus_busier_than_the_cap_narrows_the_overlap_to_whole_milliseconds() {
        let mut tail = TailState::starting_at(0);
        // 6,000 events, two per millisecond, within one overlap.
        let events: Vec<EventDoc> = (0..TAIL_SEEN_CAP + 1000)
            .map(|i| ev(&format!("e{i}"), 1_000 + (i / 2) as i64))
            .collect();
        assert_eq!(tail.take(events.clone()).len(), events.len());
        assert!(tail.seen() <= TAIL_SEEN_CAP + 1);
        let since = tail.since_ms().unwrap();
        // Everything at or after `since` is still known, so a poll from
        // there cannot show one of them twice.
        let again: Vec<EventDoc> = events
            .into_iter()
            .filter(|e| e.stamp_ms.unwrap() >= since)
            .collect();
        assert!(!again.is_empty());
        assert!(tail.take(again).is_empty());
    }

    #[test]
    fn the_live_list_keeps_time_order_and_lets_the_oldest_go() {
        let mut list = LiveList::new(vec![ev("b", 2_000), ev("a", 1_000)], 3);
        list.add(vec![ev("late", 1_500), ev("c", 3_000), ev("d", 4_000)]);
        let ids: Vec<&str> = list.rows.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["d", "c", "b"]);
        assert_eq!(list.let_go, 2, "late and a");
        list.set_keep(2);
        assert_eq!((list.rows.len(), list.let_go), (2, 3));
    }

    #[test]
    fn the_rate_counts_the_last_ten_seconds() {
        let mut rate = EventRate::default();
        rate.record(0, 0);
        rate.record(2_000, 10);
        assert_eq!(rate.per_second(2_000), 5.0);
        rate.record(12_000, 30);
        // The first 10 left the window; 30 over 10 s.
        assert_eq!(rate.per_second(12_000), 3.0);
        assert_eq!(EventRate::default().per_second(5), 0.0);
    }

    #[test]
    fn only_events_after_the_page_opened_count_as_arrived() {
        // The page showed up to 1_000; a poll brings an older event beyond
        // its first page, one at the same millisecond and two after.
        let fresh = [
            ev("old", 400),
            ev("tie", 1_000),
            ev("a", 1_001),
            ev("b", 3_000),
        ];
        assert_eq!(arrived(&fresh, 1_000), 2);
        let opened = TailState::after_shown(&[ev("shown", 1_000)], 5_000);
        assert_eq!(opened.newest_ms, Some(1_000));
    }

    #[test]
    fn the_count_adds_what_the_tail_read() {
        let mut rate = EventRate::default();
        assert_eq!(match_count(145, rate.received()), "145 events match");
        assert_eq!(match_count(1, 0), "1 event matches");
        rate.record(0, 0);
        rate.record(2_000, 10);
        rate.record(12_000, 30);
        // Out of the rate's window, not out of the count.
        assert_eq!(rate.received(), 40);
        assert_eq!(
            match_count(145, rate.received()),
            "185 events match: 145 when the page opened, 40 since"
        );
    }

    #[test]
    fn a_tail_goes_on_from_the_events_on_screen() {
        let tail = TailState::after_shown(&[ev("a", 5_000), ev("b", 7_000)], 9_000);
        assert_eq!(tail.newest_ms, Some(7_000));
        assert_eq!(tail.seen(), 2);
        assert_eq!(TailState::after_shown(&[], 9_000).newest_ms, Some(9_000));
        let full = json!({"hits": {"hits": (0..TAIL_BATCH).map(|i| json!({"_id": i.to_string()})).collect::<Vec<_>>()}});
        assert!(parse_tail(Ok(full)).unwrap().1, "a full batch: poll again");
    }
}
