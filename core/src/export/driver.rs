//! The export's loop over a [`Transport`]: sends the plan's requests, hands
//! each page's CSV to a sink, reports progress, stops on Cancel (closing
//! the point in time), and asks for the next page as soon as this one's
//! bytes are in — so the engine searches while this page becomes CSV, and
//! an export takes about the longer of the two, not their sum.

use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

use futures_util::future::{select, Either};

use super::plan::ExportPlan;
use super::spec::ResumeState;
use crate::engine::{Answer, EngineError, HttpRequest, Transport};
use crate::text::fixed;

/// Where the CSV goes, page by page (a Blob in the browser, a file or a
/// buffer natively).
pub trait ExportSink {
    fn append(&mut self, bytes: &[u8]);
}

impl ExportSink for Vec<u8> {
    fn append(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Stops an export from elsewhere (the Cancel button, the panel going
/// away): the request on its way is dropped, the PIT closed.
#[derive(Clone, Default)]
pub struct Cancel(Rc<CancelInner>);

#[derive(Default)]
struct CancelInner {
    cancelled: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Cancel {
    pub fn cancel(&self) {
        self.0.cancelled.set(true);
        if let Some(w) = self.0.waker.borrow_mut().take() {
            w.wake();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.get()
    }

    fn cancelled(&self) -> impl Future<Output = ()> + '_ {
        poll_fn(move |cx| {
            if self.0.cancelled.get() {
                Poll::Ready(())
            } else {
                *self.0.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
    }
}

/// Where an export's time went: how long the tab waited for answers, how
/// long it spent reading them into CSV, how long adding to the file.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    pub elapsed_ms: f64,
    pub waited_ms: f64,
    pub reading_ms: f64,
    pub appending_ms: f64,
}

impl Timing {
    pub fn line(&self) -> String {
        format!(
            "Took {} s: {} s waiting for the engine, {} s reading its answers and writing CSV, {} s adding to the file.",
            fixed(self.elapsed_ms / 1000.0, 2),
            fixed(self.waited_ms / 1000.0, 1),
            fixed(self.reading_ms / 1000.0, 1),
            fixed(self.appending_ms / 1000.0, 1)
        )
    }
}

/// Progress for the bar.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub rows: u64,
    pub docs: u64,
    pub total: Option<u64>,
    pub estimate: bool,
    pub elapsed_ms: f64,
}

impl Progress {
    fn of(state: &ResumeState, elapsed_ms: f64) -> Progress {
        Progress {
            rows: state.rows_written,
            docs: state.docs_read,
            total: state.total,
            estimate: state.total_is_estimate,
            elapsed_ms,
        }
    }

    pub fn line(&self) -> String {
        let secs = (self.elapsed_ms / 1000.0).max(0.001);
        let rate = self.rows as f64 / secs;
        let of = match self.total {
            Some(t) => format!(" of {}{t} documents", if self.estimate { "≈" } else { "" }),
            None => String::new(),
        };
        let left = match self.total {
            Some(t) if self.docs > 0 && t > self.docs => {
                let s = (t - self.docs) as f64 / (self.docs as f64 / secs);
                if s < 90.0 {
                    format!(", about {} s left", fixed(s, 0))
                } else {
                    format!(", about {} min left", fixed(s / 60.0, 0))
                }
            }
            _ => String::new(),
        };
        format!(
            "{} rows written ({} documents read{of}), {} rows/s{left}",
            self.rows,
            self.docs,
            fixed(rate, 0)
        )
    }

    pub fn fraction(&self) -> f64 {
        match self.total {
            Some(t) if t > 0 => (self.docs as f64 / t as f64).min(1.0),
            _ => 0.0,
        }
    }
}

/// How an export run ended. The plan keeps its state: after `Failed`, run
/// it again to continue from where it stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every row is in the sink. The caller sends [`close`] (its answer
    /// needs no waiting for).
    Done {
        rows: u64,
        notes: Vec<String>,
        timing: Timing,
    },
    Failed {
        error: EngineError,
        rows: u64,
    },
    /// The PIT is closed (or was asked to close).
    Cancelled {
        rows: u64,
    },
}

type Sending<'a> = Pin<Box<dyn Future<Output = Answer> + 'a>>;

fn send<T: Transport>(t: &T, request: HttpRequest) -> Sending<'_> {
    Box::pin(async move { t.send(&request).await })
}

/// A request sent before its turn: the next page, asked for while this one
/// is read.
struct Early<'a> {
    request: HttpRequest,
    sending: Sending<'a>,
    answer: Option<Answer>,
}

impl<'a> Early<'a> {
    /// Sends `request` now: its future is polled once, which puts it on
    /// its way.
    async fn start<T: Transport>(t: &'a T, request: HttpRequest) -> Early<'a> {
        let mut early = Early {
            sending: send(t, request.clone()),
            request,
            answer: None,
        };
        poll_fn(|cx| {
            if let Poll::Ready(a) = early.sending.as_mut().poll(cx) {
                early.answer = Some(a);
            }
            Poll::Ready(())
        })
        .await;
        early
    }

    async fn answer(self) -> Answer {
        match self.answer {
            Some(a) => a,
            None => self.sending.await,
        }
    }
}

/// Runs `plan` to its end, a failure, or `cancel`. `now` is a clock in
/// milliseconds; `progress` hears after every page.
pub async fn run<T: Transport>(
    t: &T,
    plan: &mut ExportPlan,
    sink: &mut dyn ExportSink,
    cancel: &Cancel,
    now: &dyn Fn() -> f64,
    progress: &mut dyn FnMut(Progress),
) -> Outcome {
    let started = now();
    let mut timing = Timing::default();
    let mut early: Option<Early<'_>> = None;
    progress(Progress::of(plan.state(), 0.0));
    while let Some(request) = plan.next_request() {
        let pause = plan.pause_ms();
        if pause > 0 {
            if let Either::Right(_) =
                select(Box::pin(t.pause(pause)), Box::pin(cancel.cancelled())).await
            {
                drop(early.take());
                return cancelled(t, plan).await;
            }
        }
        let sending: Sending<'_> = match early.take() {
            Some(e) if e.request == request => Box::pin(e.answer()),
            Some(e) => {
                // A lookup between two pages keeps the guess for after it.
                if !plan.awaits_page() {
                    early = Some(e);
                }
                send(t, request)
            }
            None => send(t, request),
        };
        let t0 = now();
        let answer = match select(sending, Box::pin(cancel.cancelled())).await {
            Either::Left((answer, _)) => answer,
            Either::Right(_) => {
                drop(early.take());
                return cancelled(t, plan).await;
            }
        };
        let t1 = now();
        timing.waited_ms += t1 - t0;
        if let (Ok(reply), None) = (&answer, &early) {
            if let Some(next) = plan.request_after(&reply.body) {
                early = Some(Early::start(t, next).await);
            }
        }
        let handled = plan.handle(answer);
        let t2 = now();
        timing.reading_ms += t2 - t1;
        match handled {
            Ok(bytes) => {
                if !bytes.is_empty() {
                    sink.append(&bytes);
                }
                timing.appending_ms += now() - t2;
            }
            Err(error) => {
                return Outcome::Failed {
                    error,
                    rows: plan.state().rows_written,
                }
            }
        }
        progress(Progress::of(plan.state(), now() - started));
        if cancel.is_cancelled() {
            drop(early.take());
            return cancelled(t, plan).await;
        }
    }
    let mut notes = plan.notes().to_vec();
    if let Some(n) = plan.shortfall() {
        notes.push(format!(
            "the engine counted {n} more documents than it handed over (written while exporting, or lost by a shard): the file is shorter than the count"
        ));
    }
    timing.elapsed_ms = now() - started;
    Outcome::Done {
        rows: plan.state().rows_written,
        notes,
        timing,
    }
}

/// Frees the export's point in time, if it has one; a failure leaves the
/// PIT to expire by itself.
pub async fn close<T: Transport>(t: &T, plan: &ExportPlan) {
    if let Some(request) = plan.close_request() {
        let _ = t.send(&request).await;
    }
}

async fn cancelled<T: Transport>(t: &T, plan: &ExportPlan) -> Outcome {
    close(t, plan).await;
    Outcome::Cancelled {
        rows: plan.state().rows_written,
    }
}
