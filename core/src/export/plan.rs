//! The export as a sequence of HTTP requests, pure: send what
//! [`ExportPlan::next_request`] gives, hand the answer to
//! [`ExportPlan::handle`] and append the bytes it returns to the file, until
//! there is no next request; then (and on cancel) send
//! [`ExportPlan::close_request`] if there is one. [`super::driver`] is that
//! loop over a [`Transport`](crate::engine::Transport).
//!
//! How each kind pages is its source's business ([`super::hits`],
//! [`super::jobs`], [`super::audit`]); here are the phases they share —
//! opening a point in time, a probe that decides how pages are read, a
//! page, a lookup a page needs before its rows can be written, done — and
//! the one rule of the state machine: an answer is read into a
//! `Transition` without touching the plan, and only a transition that was
//! read is applied. A failed answer leaves the plan
//! where it was: send [`ExportPlan::next_request`] again to retry, or keep
//! [`ExportPlan::state`] to resume later.

use super::audit::AuditSource;
use super::encode::CsvEncoder;
use super::events::EventsSource;
use super::hits::HitsSource;
use super::jobs::JobsSource;
use super::rows::Row;
use super::seen::{IndexSeen, SeenHit};
use super::spec::{After, ExportSpec, Paging, PlanError, ResumeState, ViewFilter};
use super::ExportKind;

use serde_json::Value;

use crate::engine::{pit_lost, pit_unavailable, Answer, EngineError, HttpRequest, Reply};
use crate::model::ReturnDoc;
use crate::query::filter::TimeRange;

/// A page's rows, written at once with the cursor moved past them.
#[derive(Debug, Default)]
pub(crate) struct Commit {
    pub rows: Vec<Row>,
    /// Documents looked at (some may give no row).
    pub looked_at: u64,
    pub next: After,
    pub last: bool,
    /// Learnt from the first page.
    pub total: Option<u64>,
    pub total_is_estimate: Option<bool>,
    /// The engine may renew a PIT's id.
    pub pit_id: Option<String>,
    pub notes: Vec<String>,
    /// Under `_shard_doc` paging: the page's hits, in order (see
    /// [`IndexSeen`]).
    pub read: Vec<SeenHit>,
}

/// What a page waits for before its rows can be written: its returns'
/// users (states), its jobs' statistics (jobs).
#[derive(Debug)]
pub(crate) struct Pending {
    pub work: PendingWork,
    pub next: After,
    pub last: bool,
    pub looked_at: u64,
    pub total: Option<u64>,
    pub pit_id: Option<String>,
    /// The page's notes so far, for the commit.
    pub notes: Vec<String>,
    /// See [`Commit::read`].
    pub read: Vec<SeenHit>,
}

#[derive(Debug)]
pub(crate) enum PendingWork {
    Users {
        docs: Vec<ReturnDoc>,
        jids: Vec<String>,
    },
    Details {
        jids: Vec<String>,
    },
}

/// What a source made of a page.
pub(crate) enum Step {
    Commit(Commit),
    Lookup(Pending),
}

/// What an answer moves the plan to.
enum Transition {
    Nothing,
    /// The probe's answer: whether the pages may be read the cheaper way.
    Probed(bool),
    PitOpened(String),
    /// No PIT on this engine: page with `search_after` alone.
    NoPit(String),
    /// The PIT expired: open a new one, continue from the same cursor.
    Reopen(String),
    /// The PIT was lost under `_shard_doc` paging: open a new one and read
    /// the current index again from its start, skipping what is written.
    Restart(String),
    /// Opening a new PIT after a loss failed the way a cluster that is
    /// still losing a node fails (shards not yet reassigned, a 5xx, no
    /// answer): try again after a pause.
    OpenAgain,
    Step(Step),
}

enum Phase {
    /// Asking the engine how to read the pages (see
    /// [`ExportSource::probe_request`]).
    Probe,
    Open,
    Page,
    Lookup(Pending),
    Done,
}

/// Where a source reads the plan: the spec and the state so far.
pub(crate) struct Position<'a> {
    pub spec: &'a ExportSpec,
    pub state: &'a ResumeState,
    pub seen: &'a IndexSeen,
}

impl Position<'_> {
    pub fn page_size(&self) -> usize {
        self.spec.page_size()
    }
}

/// How one kind of export pages and turns answers into rows.
pub(crate) trait ExportSource {
    fn page_request(&self, at: &Position) -> HttpRequest;
    fn read_page(&self, at: &Position, reply: Reply) -> Result<Step, EngineError>;
    /// The lookup a page asked for (only kinds whose pages ask for one).
    fn lookup_request(&self, at: &Position, _pending: &Pending) -> HttpRequest {
        self.page_request(at)
    }
    fn read_lookup(
        &self,
        _at: &Position,
        _pending: &Pending,
        reply: Reply,
    ) -> Result<Commit, EngineError> {
        Err(EngineError::BadResponse {
            url: Some(reply.url),
            detail: "this export needs no lookup".into(),
        })
    }
    /// A question to ask before the first page, when the pages could be
    /// read more cheaply if the answer allows (the returns export: summary
    /// fields instead of whole documents).
    fn probe_request(&self, _at: &Position) -> Option<HttpRequest> {
        None
    }
    /// Whether the pages may be read the cheaper way. The file is the
    /// same either way: only its speed differs.
    fn read_probe(&self, _reply: Reply) -> Result<bool, EngineError> {
        Ok(false)
    }
    /// The page request that will follow this answer's bytes, if it can
    /// be told before they are read (see [`ExportPlan::request_after`]).
    fn request_after(&self, _at: &Position, _answer: &[u8]) -> Option<HttpRequest> {
        None
    }
}

fn source(kind: ExportKind) -> &'static dyn ExportSource {
    match kind {
        ExportKind::Returns | ExportKind::States => &HitsSource,
        ExportKind::Jobs => &JobsSource,
        ExportKind::Audit => &AuditSource,
        ExportKind::Events => &EventsSource,
    }
}

/// PIT losses in a row (no page written between them) before the export
/// gives up: with the pauses of [`ExportPlan::pause_ms`], about 19 s for a
/// cluster to reassign a lost node's shards.
pub const MAX_LOSSES_IN_A_ROW: u32 = 8;

/// Whether a failed PIT open, right after a PIT was lost, is the cluster
/// still settling (a 5xx, shards not yet reassigned, no answer) rather than
/// a refusal.
fn recoverable(e: &EngineError) -> bool {
    pit_lost(e)
        || matches!(
            e,
            EngineError::Unreachable { .. } | EngineError::Timeout { .. }
        )
        || matches!(e, EngineError::Status { status, .. } if *status >= 500 || *status == 429)
}

pub struct ExportPlan {
    spec: ExportSpec,
    state: ResumeState,
    phase: Phase,
    encoder: CsvEncoder,
    /// Points in time lost (or failed to reopen) since the last page was
    /// written: a node leaving takes a few tries while its shards move, but
    /// past [`MAX_LOSSES_IN_A_ROW`] it is an error, not a loop.
    losses: u32,
    notes: Vec<String>,
    seen: IndexSeen,
}

impl ExportPlan {
    /// A new export. A relative time range is fixed against the context's
    /// "now" here, so [`Self::spec`] describes the same rows however late a
    /// retry comes.
    pub fn new(spec: ExportSpec) -> Result<ExportPlan, PlanError> {
        let paging = match spec.kind {
            ExportKind::Jobs => Paging::Composite,
            ExportKind::Audit => Paging::AuditCursor,
            ExportKind::Events => Paging::EventCursor,
            _ => Paging::for_hits(&spec.product),
        };
        let state = ResumeState {
            after: After::Start,
            rows_written: 0,
            docs_read: 0,
            total: None,
            total_is_estimate: matches!(spec.kind, ExportKind::Jobs),
            paging,
            pit_id: None,
            header_written: false,
            done: false,
            reads_summary: None,
        };
        ExportPlan::resume(spec, state)
    }

    /// Continues an export from `state` (the file so far keeps its header).
    pub fn resume(mut spec: ExportSpec, state: ResumeState) -> Result<ExportPlan, PlanError> {
        match (&spec.filter, spec.kind) {
            (ViewFilter::Audit(_), ExportKind::Audit) => {}
            (ViewFilter::Events(_), ExportKind::Events) => {}
            (ViewFilter::Jobs(_), ExportKind::Jobs | ExportKind::Returns | ExportKind::States) => {}
            (_, kind) => {
                return Err(PlanError::WrongFilter {
                    kind: kind.id(),
                    wanted: match kind {
                        ExportKind::Audit => "audit",
                        ExportKind::Events => "events",
                        _ => "job",
                    },
                })
            }
        }
        if spec.columns.is_empty() {
            spec.columns = spec.kind.default_columns();
        }
        if let Some((from_ms, to_ms)) = spec.filter.time().bounds(spec.context.now_ms) {
            *spec.filter.time_mut() = TimeRange::Absolute { from_ms, to_ms };
        }
        let encoder = if state.header_written {
            CsvEncoder::continuing(spec.columns.clone(), spec.csv)
        } else {
            CsvEncoder::new(spec.columns.clone(), spec.csv)
        };
        let mut plan = ExportPlan {
            spec,
            state,
            phase: Phase::Done,
            encoder,
            losses: 0,
            notes: Vec::new(),
            seen: IndexSeen::default(),
        };
        plan.phase = if plan.state.done {
            Phase::Done
        } else {
            plan.next_phase()
        };
        Ok(plan)
    }

    /// Before a page: the PIT opened if it pages under one, then the probe
    /// asked (under that PIT, so it sees exactly the documents the pages
    /// will), once.
    fn next_phase(&self) -> Phase {
        if self.state.paging.is_pit() && self.state.pit_id.is_none() {
            Phase::Open
        } else if self.state.reads_summary.is_none()
            && self.source().probe_request(&self.at()).is_some()
        {
            Phase::Probe
        } else {
            Phase::Page
        }
    }

    pub fn spec(&self) -> &ExportSpec {
        &self.spec
    }

    /// Rows written, documents read, the total, the cursor: progress for
    /// the bar, and what a retry starts from.
    pub fn state(&self) -> &ResumeState {
        &self.state
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// What the reader should know about the file (fallbacks, columns left
    /// empty and why, a short read).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Documents the engine counted but the export did not read, once done
    /// (`Some(missing)` only when the total is exact): with a PIT this is an
    /// error, without one documents may have been deleted meanwhile.
    pub fn shortfall(&self) -> Option<u64> {
        let total = self.state.total?;
        (self.is_done() && !self.state.total_is_estimate && self.state.docs_read < total)
            .then(|| total - self.state.docs_read)
    }

    pub fn page_size(&self) -> usize {
        self.spec.page_size()
    }

    fn at(&self) -> Position<'_> {
        Position {
            spec: &self.spec,
            state: &self.state,
            seen: &self.seen,
        }
    }

    fn source(&self) -> &'static dyn ExportSource {
        source(self.spec.kind)
    }

    /// How long to wait before [`Self::next_request`]: nothing normally;
    /// after a PIT was lost twice in a row, a growing pause (0.5 s, 1 s, 2 s,
    /// then 4 s) so the cluster can reassign the shards of a node that left.
    pub fn pause_ms(&self) -> u64 {
        match (&self.phase, self.losses) {
            (Phase::Open, n) if n >= 2 => (500u64 << (n - 2).min(3)).min(4000),
            _ => 0,
        }
    }

    /// Whether the next request is a page (not opening the PIT or a
    /// lookup for the page just read).
    pub fn awaits_page(&self) -> bool {
        matches!(self.phase, Phase::Page)
    }

    /// The next request to send; `None` once done.
    pub fn next_request(&self) -> Option<HttpRequest> {
        match &self.phase {
            Phase::Done => None,
            Phase::Probe => self.source().probe_request(&self.at()),
            Phase::Open => self.state.paging.pit().map(|pit| {
                pit.open_request(
                    &self.spec.context.config.index_pattern,
                    &self.spec.keep_alive,
                )
            }),
            Phase::Page => Some(self.source().page_request(&self.at())),
            Phase::Lookup(pending) => Some(self.source().lookup_request(&self.at(), pending)),
        }
    }

    /// The page request that will follow `answer` (to the current page
    /// request) if it is a full page: its cursor read off the end of the
    /// bytes, before the page is parsed. Sent at once, the engine works on
    /// the next page while this one becomes CSV. A guess: after
    /// [`Self::handle`], use the early answer only if
    /// [`Self::next_request`] equals this request (else drop it).
    pub fn request_after(&self, answer: &[u8]) -> Option<HttpRequest> {
        match self.phase {
            Phase::Page => self.source().request_after(&self.at(), answer),
            _ => None,
        }
    }

    /// The request that frees the PIT: after the last page, on cancel, or
    /// when giving up after a failure. Its answer needs no reading (a PIT
    /// already gone answers 404).
    pub fn close_request(&self) -> Option<HttpRequest> {
        let pit = self.state.paging.pit()?;
        Some(pit.close_request(self.state.pit_id.as_deref()?))
    }

    /// Reads the answer to [`Self::next_request`] (an HTTP error as the
    /// engine's error, see `EngineError::from_status`) and returns the bytes
    /// to append to the file (possibly none). On an error nothing moves.
    pub fn handle(&mut self, answer: Answer) -> Result<Vec<u8>, EngineError> {
        let transition = self.read(answer)?;
        Ok(self.apply(transition))
    }

    /// What `answer` moves the plan to; the plan itself is not touched.
    fn read(&self, answer: Answer) -> Result<Transition, EngineError> {
        match &self.phase {
            Phase::Done => Ok(Transition::Nothing),
            // A probe that fails costs the cheaper reading, never the export.
            Phase::Probe => Ok(Transition::Probed(
                answer
                    .and_then(|r| self.source().read_probe(r))
                    .unwrap_or(false),
            )),
            Phase::Open => {
                let Some(pit) = self.state.paging.pit() else {
                    return Ok(Transition::Nothing);
                };
                let opened = answer.and_then(|r| pit.read_open(&r.url, &r.json()?));
                match opened {
                    Ok(id) => Ok(Transition::PitOpened(id)),
                    Err(e) if self.losses > 0 && recoverable(&e) => {
                        if self.losses >= MAX_LOSSES_IN_A_ROW {
                            Err(e)
                        } else {
                            Ok(Transition::OpenAgain)
                        }
                    }
                    Err(e) if pit_unavailable(&e) => Ok(Transition::NoPit(format!(
                        "no point in time on this engine ({e}): paging with search_after alone, so documents written during the export may or may not be included"
                    ))),
                    Err(e) => Err(e),
                }
            }
            Phase::Page => {
                let read = answer.and_then(|r| self.source().read_page(&self.at(), r));
                match read {
                    Ok(step) => Ok(Transition::Step(step)),
                    Err(e) if pit_lost(&e) && self.losses >= MAX_LOSSES_IN_A_ROW => Err(e),
                    Err(e) if pit_lost(&e) && self.state.paging.shard_doc() => {
                        if self.state.after != After::Start && self.seen.index.is_empty() {
                            // Resumed from a plain state: what this index
                            // already gave is not known here.
                            return Err(with_reason(e, " (the point in time is gone: the export cannot continue exactly where it stopped; start it again)"));
                        }
                        Ok(Transition::Restart(format!(
                            "the point in time was lost ({e}); opened a new one and read `{}` again, skipping what the file has",
                            self.seen.index
                        )))
                    }
                    Err(e) if pit_lost(&e) && self.state.pit_id.is_some() => {
                        // The field sort is unique: a new PIT continues from
                        // the same sort values, skipping and repeating nothing.
                        Ok(Transition::Reopen(format!(
                            "the point in time was lost ({e}); opened a new one"
                        )))
                    }
                    Err(e) => Err(e),
                }
            }
            Phase::Lookup(pending) => {
                let commit = self.source().read_lookup(&self.at(), pending, answer?)?;
                Ok(Transition::Step(Step::Commit(commit)))
            }
        }
    }

    fn apply(&mut self, transition: Transition) -> Vec<u8> {
        match transition {
            Transition::Nothing => Vec::new(),
            Transition::Probed(cheaper) => {
                self.state.reads_summary = Some(cheaper);
                self.phase = self.next_phase();
                Vec::new()
            }
            Transition::PitOpened(id) => {
                self.state.pit_id = Some(id);
                self.phase = self.next_phase();
                Vec::new()
            }
            Transition::NoPit(note) => {
                self.notes.push(note);
                let had_shard_doc = self.state.paging.shard_doc();
                self.state.paging = Paging::SearchAfter;
                self.state.pit_id = None;
                if let (true, After::Sort(values)) = (had_shard_doc, &mut self.state.after) {
                    values.truncate(4);
                }
                self.phase = self.next_phase();
                Vec::new()
            }
            Transition::OpenAgain => {
                self.losses += 1;
                Vec::new()
            }
            Transition::Reopen(note) => {
                self.note_loss(note);
                self.state.pit_id = None;
                self.phase = Phase::Open;
                Vec::new()
            }
            Transition::Restart(note) => {
                self.note_loss(note);
                self.state.pit_id = None;
                if !self.seen.index.is_empty() {
                    // Just before the index's first document: `_shard_doc`
                    // values are never negative.
                    let index = Value::String(self.seen.index.clone());
                    self.state.after =
                        After::Sort(vec![index, Value::from(-1), "".into(), "".into()]);
                    self.seen.replay();
                }
                self.phase = Phase::Open;
                Vec::new()
            }
            Transition::Step(Step::Lookup(pending)) => {
                self.learn(pending.total, None, pending.pit_id.clone());
                self.phase = Phase::Lookup(pending);
                Vec::new()
            }
            Transition::Step(Step::Commit(commit)) => self.commit(commit),
        }
    }

    /// Counts a lost PIT; the file's notes say it once per run of losses.
    fn note_loss(&mut self, note: String) {
        if self.losses == 0 {
            self.notes.push(note);
        }
        self.losses += 1;
    }

    /// Writes a page's rows and moves the cursor past them, all at once.
    fn commit(&mut self, c: Commit) -> Vec<u8> {
        self.losses = 0;
        self.seen.add(&c.read);
        self.learn(c.total, c.total_is_estimate, c.pit_id);
        for note in c.notes {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        let bytes = self.encoder.encode_page(&c.rows);
        self.state.header_written = true;
        self.state.rows_written += c.rows.len() as u64;
        self.state.docs_read += c.looked_at;
        self.state.after = c.next;
        if c.last {
            self.state.done = true;
            self.phase = Phase::Done;
        } else {
            self.phase = Phase::Page;
        }
        bytes
    }

    /// What a page says besides its rows: the total (kept from the first
    /// page that gives one) and the PIT id (the engine may renew it).
    fn learn(&mut self, total: Option<u64>, estimate: Option<bool>, pit_id: Option<String>) {
        if let Some(id) = pit_id.filter(|_| self.state.paging.is_pit()) {
            self.state.pit_id = Some(id);
        }
        if self.state.total.is_none() {
            self.state.total = total;
            if let Some(estimate) = estimate {
                self.state.total_is_estimate = estimate;
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn set_columns(&mut self, columns: Vec<super::columns::Column>) {
        self.encoder = CsvEncoder::new(columns.clone(), self.spec.csv);
        self.spec.columns = columns;
    }
}

fn with_reason(e: EngineError, more: &str) -> EngineError {
    match e {
        EngineError::Status {
            url,
            status,
            kind,
            reason,
        } => EngineError::Status {
            url,
            status,
            kind,
            reason: format!("{reason}{more}"),
        },
        other => other,
    }
}
