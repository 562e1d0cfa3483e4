//! CSV export of the view's rows, any size: the core plans the requests
//! (point in time + `search_after`, or the job list's composite) and turns
//! each page into CSV bytes; here each page is appended to a Blob built
//! from parts, so the tab's memory stays flat however many rows there are.

use leptos::prelude::*;
use saltscope_core::engine::EngineError;
use saltscope_core::export::{
    file_name, Column, ColumnChoice, CsvOptions, ExportKind, ExportPlan, ExportSpec, HttpRequest,
    ViewFilter,
};
use web_sys::{Blob, BlobPropertyBag, Url};

use super::error::ErrorPanel;
use super::use_connection;
use crate::engine::Engine;
use crate::fetcher::{ExportFetcher, InFlight, Stopper};

#[derive(Clone, Debug, PartialEq)]
enum Status {
    Idle,
    Running(Progress),
    Failed {
        error: EngineError,
        rows: u64,
    },
    Cancelled {
        rows: u64,
    },
    Done {
        url: String,
        name: String,
        rows: u64,
        notes: Vec<String>,
        timing: String,
    },
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Progress {
    rows: u64,
    docs: u64,
    total: Option<u64>,
    estimate: bool,
    elapsed_ms: f64,
}

impl Progress {
    fn line(&self) -> String {
        let secs = (self.elapsed_ms / 1000.0).max(0.001);
        let rate = self.rows as f64 / secs;
        let of = match self.total {
            Some(t) => format!(
                " of {}{t} {}",
                if self.estimate { "≈" } else { "" },
                "documents"
            ),
            None => String::new(),
        };
        let left = match self.total {
            Some(t) if self.docs > 0 && t > self.docs => {
                let s = (t - self.docs) as f64 / (self.docs as f64 / secs);
                format!(", about {} left", human_secs(s))
            }
            _ => String::new(),
        };
        format!(
            "{} rows written ({} documents read{of}), {:.0} rows/s{left}",
            self.rows, self.docs, rate
        )
    }

    fn fraction(&self) -> f64 {
        match self.total {
            Some(t) if t > 0 => (self.docs as f64 / t as f64).min(1.0),
            _ => 0.0,
        }
    }
}

fn human_secs(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else {
        format!("{:.0} min", s / 60.0)
    }
}

const COLUMNS_KEY: &str = "saltscope.export.columns.";

fn remembered_columns(kind: ExportKind) -> Vec<Column> {
    let saved = web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .and_then(|s| {
            s.get_item(&format!("{COLUMNS_KEY}{}", kind.id()))
                .ok()
                .flatten()
        });
    match saved {
        Some(text) => ColumnChoice::parse(kind, &text).columns,
        None => kind.default_columns(),
    }
}

fn remember_columns(kind: ExportKind, columns: &[Column]) {
    if let Some(s) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) {
        let ids: Vec<&str> = columns.iter().map(|c| c.id).collect();
        let _ = s.set_item(&format!("{COLUMNS_KEY}{}", kind.id()), &ids.join(","));
    }
}

/// The export panel of a view: what to export, its columns, the CSV
/// options, progress, cancel, retry and the download.
#[component]
pub fn ExportPanel(
    kinds: Vec<ExportKind>,
    #[prop(into)] filter: Signal<ViewFilter>,
) -> impl IntoView {
    let connection = use_connection();
    let kind = RwSignal::new(kinds[0]);
    let columns = RwSignal::new(remembered_columns(kinds[0]));
    let bom = RwSignal::new(false);
    let protect = RwSignal::new(true);
    let status = RwSignal::new(Status::Idle);
    let cancel = RwSignal::new(false);
    let plan = StoredValue::new_local(None::<ExportPlan>);
    let blob = StoredValue::new_local(None::<Blob>);
    let in_flight = StoredValue::new_local(Vec::<Stopper>::new());
    let started = StoredValue::new(0.0f64);

    let run = move |fresh: bool| {
        cancel.set(false);
        let kind_now = kind.get_untracked();
        let cols = columns.get_untracked();
        let filter_now = filter.get_untracked();
        let csv = CsvOptions {
            bom: bom.get_untracked(),
            formula_protection: protect.get_untracked(),
            ..CsvOptions::default()
        };
        leptos::task::spawn_local(async move {
            let engine = match connection.await {
                Ok(e) => e,
                Err(error) => {
                    status.set(Status::Failed { error, rows: 0 });
                    return;
                }
            };
            if fresh {
                let now = crate::now_ms();
                let spec = ExportSpec {
                    kind: kind_now,
                    columns: cols,
                    product: engine.product.clone(),
                    config: engine.config.clone(),
                    fields: engine.fields.clone(),
                    filter: filter_now,
                    noisy: engine.noisy(),
                    now_ms: now,
                    csv,
                    page_size: None,
                    keep_alive: "2m".into(),
                };
                match ExportPlan::new(spec) {
                    Ok(p) => plan.set_value(Some(p)),
                    Err(detail) => {
                        let error = EngineError::BadResponse {
                            url: String::new(),
                            detail,
                        };
                        status.set(Status::Failed { error, rows: 0 });
                        return;
                    }
                }
                if let Some(old) = blob.try_update_value(Option::take).flatten() {
                    drop(old);
                }
                started.set_value(js_sys::Date::now());
            }
            drive(&engine, plan, blob, status, cancel, in_flight, started).await;
        });
    };

    let choose_kind = move |id: String| {
        if let Some(k) = ExportKind::parse(&id) {
            kind.set(k);
            columns.set(remembered_columns(k));
            status.set(Status::Idle);
        }
    };
    let toggle_column = move |c: Column| {
        columns.update(|cols| {
            if let Some(i) = cols.iter().position(|x| x.id == c.id) {
                if cols.len() > 1 {
                    cols.remove(i);
                }
            } else {
                // keep the kind's own order
                let order = kind.get_untracked().columns();
                cols.push(c);
                cols.sort_by_key(|x| order.iter().position(|o| o.id == x.id));
            }
        });
        remember_columns(kind.get_untracked(), &columns.get_untracked());
    };
    let running = move || matches!(status.get(), Status::Running(_));

    view! {
        <details class="export">
            <summary>"Export CSV"</summary>
            <div class="export-body" role="group" aria-label="Export CSV">
                <label>"Export "
                    <select name="export-kind" on:change=move |ev| choose_kind(event_target_value(&ev))>
                        {kinds.iter().map(|k| {
                            let k = *k;
                            view! { <option value=k.id() selected=move || kind.get() == k>{k.label()}</option> }
                        }).collect_view()}
                    </select>
                </label>
                <fieldset class="export-columns">
                    <legend>"Columns"</legend>
                    {move || kind.get().columns().iter().map(|c| {
                        let c = *c;
                        view! {
                            <label><input type="checkbox" name="export-column" value=c.id
                                prop:checked=move || columns.get().iter().any(|x| x.id == c.id)
                                on:change=move |_| toggle_column(c)/>{c.header}</label>
                        }
                    }).collect_view()}
                </fieldset>
                <label><input type="checkbox" name="bom" prop:checked=move || bom.get()
                    on:change=move |ev| bom.set(event_target_checked(&ev))/>" Byte order mark (for Excel)"</label>
                <label title="Spreadsheet programs run a cell that starts with =, +, -, @, tab or carriage return as a formula: a document field such as a state comment could then run a command on the auditor's machine (CSV injection). With protection such cells start with a ' instead.">
                    <input type="checkbox" name="formula-protection" prop:checked=move || protect.get()
                        on:change=move |ev| protect.set(event_target_checked(&ev))/>
                    " Protect against formulas (cells starting with = + - @ get a leading ')"
                </label>
                <div class="export-actions">
                    <button type="button" disabled=running on:click=move |_| run(true)>"Start export"</button>
                    {move || running().then(|| view! {
                        <button type="button" on:click=move |_| {
                            cancel.set(true);
                            in_flight.update_value(|v| v.drain(..).for_each(|s| s.stop()));
                        }>"Cancel"</button>
                    })}
                </div>
                {move || match status.get() {
                    Status::Idle => ().into_any(),
                    Status::Running(p) => view! {
                        <progress max="1" value=p.fraction()></progress>
                        <p class="export-progress" aria-live="polite">{p.line()}</p>
                    }.into_any(),
                    Status::Failed { error, rows } => view! {
                        <ErrorPanel error=error/>
                        <p class="export-failed">{format!("The export stopped after {rows} rows. No file was made from them.")}
                            " " <button type="button" on:click=move |_| run(false)>"Retry from where it stopped"</button></p>
                    }.into_any(),
                    Status::Cancelled { rows } => view! {
                        <p class="export-cancelled">{format!("Cancelled after {rows} rows; no file was made.")}</p>
                    }.into_any(),
                    Status::Done { url, name, rows, notes, timing } => view! {
                        <p class="export-done">{format!("{rows} rows. ")}
                            <a href=url download=name.clone() class="download">{format!("Download {name}")}</a></p>
                        <p class="export-timing">{timing}</p>
                        {(!notes.is_empty()).then(|| view! {
                            <ul class="notes">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                        })}
                    }.into_any(),
                }}
            </div>
        </details>
    }
}

/// Where an export's time went, shown with the file: how long the tab
/// waited for answers, and how long it spent reading them into CSV.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Timing {
    /// From the Start click to the file offered.
    elapsed_ms: f64,
    waited_ms: f64,
    reading_ms: f64,
    appending_ms: f64,
}

impl Timing {
    fn line(&self) -> String {
        format!(
            "Took {:.2} s: {:.1} s waiting for the engine, {:.1} s reading its answers and writing CSV, {:.1} s adding to the file.",
            self.elapsed_ms / 1000.0,
            self.waited_ms / 1000.0,
            self.reading_ms / 1000.0,
            self.appending_ms / 1000.0
        )
    }
}

/// Sends the plan's requests until it is done, failed or cancelled; always
/// closes the point in time. The next page is asked for as soon as this
/// page's bytes are in (its cursor read off their end), so the engine
/// searches while the tab reads: the export then takes about the longer of
/// the two, not their sum.
async fn drive(
    engine: &Engine,
    plan: StoredValue<Option<ExportPlan>, LocalStorage>,
    blob: StoredValue<Option<Blob>, LocalStorage>,
    status: RwSignal<Status>,
    cancel: RwSignal<bool>,
    in_flight: StoredValue<Vec<Stopper>, LocalStorage>,
    started: StoredValue<f64>,
) {
    let progress = |p: &ExportPlan| {
        let s = p.state();
        Progress {
            rows: s.rows_written,
            docs: s.docs_read,
            total: s.total,
            estimate: s.total_is_estimate,
            elapsed_ms: js_sys::Date::now() - started.get_value(),
        }
    };
    let fetcher = ExportFetcher::new();
    let start = |request: &HttpRequest| {
        let sent = match &fetcher {
            Some(f) => f.start(engine.url_of(request), request),
            None => engine.start(request),
        };
        if let Some(c) = sent.stopper() {
            in_flight.update_value(|v| {
                v.push(c);
                let extra = v.len().saturating_sub(2);
                v.drain(..extra);
            });
        }
        sent
    };
    if let Some(p) = plan.with_value(|p| p.as_ref().map(progress)) {
        status.set(Status::Running(p));
    }
    let mut timing = Timing::default();
    let mut early: Option<(HttpRequest, InFlight)> = None;
    while let Some(request) = plan.with_value(|p| p.as_ref().and_then(ExportPlan::next_request)) {
        let sent = match early.take() {
            Some((guess, sent)) if guess == request => sent,
            Some((guess, sent)) => {
                // A lookup between two pages keeps the guess for after it.
                if plan.with_value(|p| p.as_ref().is_some_and(ExportPlan::awaits_page)) {
                    sent.abort();
                } else {
                    early = Some((guess, sent));
                }
                start(&request)
            }
            None => start(&request),
        };
        let t0 = js_sys::Date::now();
        let answer = sent.answer().await;
        let t1 = js_sys::Date::now();
        timing.waited_ms += t1 - t0;
        if cancel.get_untracked() {
            if let Some((_, sent)) = early.take() {
                sent.abort();
            }
            if let Some(closing) = close(engine, plan) {
                let _ = closing.answer().await;
            }
            let rows = plan
                .with_value(|p| p.as_ref().map(|p| p.state().rows_written))
                .unwrap_or(0);
            blob.set_value(None);
            status.set(Status::Cancelled { rows });
            return;
        }
        if let (Ok(bytes), None) = (&answer, &early) {
            if let Some(next) = plan.with_value(|p| p.as_ref().and_then(|p| p.request_after(bytes)))
            {
                let sent = start(&next);
                early = Some((next, sent));
            }
        }
        let handled = plan
            .try_update_value(|p| p.as_mut().map(|p| p.handle(answer)))
            .flatten();
        let t2 = js_sys::Date::now();
        timing.reading_ms += t2 - t1;
        match handled {
            Some(Ok(bytes)) => append(blob, &bytes),
            Some(Err(error)) => {
                if let Some((_, sent)) = early.take() {
                    sent.abort();
                }
                let rows = plan
                    .with_value(|p| p.as_ref().map(|p| p.state().rows_written))
                    .unwrap_or(0);
                status.set(Status::Failed { error, rows });
                return;
            }
            None => return,
        }
        timing.appending_ms += js_sys::Date::now() - t2;
        if let Some(p) = plan.with_value(|p| p.as_ref().map(progress)) {
            status.set(Status::Running(p));
        }
    }
    // The guess after the last page: nothing to read in it.
    if let Some((_, sent)) = early.take() {
        sent.abort();
    }
    // Started at once, answered whenever: see `close`.
    drop(close(engine, plan));
    let (rows, mut notes, shortfall, name) = plan
        .with_value(|p| {
            p.as_ref().map(|p| {
                let s = p.spec();
                (
                    p.state().rows_written,
                    p.notes().to_vec(),
                    p.shortfall(),
                    file_name(s.kind, s.filter.time(), s.now_ms),
                )
            })
        })
        .unwrap_or_default();
    if let Some(n) = shortfall {
        notes.push(format!(
            "the engine counted {n} more documents than it handed over (written while exporting, or lost by a shard): the file is shorter than the count"
        ));
    }
    if blob.with_value(Option::is_none) {
        append_always(blob, &[]);
    }
    let url = blob
        .with_value(|b| {
            b.as_ref()
                .and_then(|b| Url::create_object_url_with_blob(b).ok())
        })
        .unwrap_or_default();
    timing.elapsed_ms = js_sys::Date::now() - started.get_value();
    status.set(Status::Done {
        url,
        name,
        rows,
        notes,
        timing: timing.line(),
    });
}

/// Sends the request that frees the PIT. Nothing needs reading in its
/// answer (a failure leaves the PIT to expire), so after the last page the
/// file is offered without waiting for it; a cancel waits, so that "Cancelled"
/// means the engine has let go.
fn close(engine: &Engine, plan: StoredValue<Option<ExportPlan>, LocalStorage>) -> Option<InFlight> {
    let request = plan.with_value(|p| p.as_ref().and_then(ExportPlan::close_request))?;
    Some(engine.start(&request))
}

fn append(blob: StoredValue<Option<Blob>, LocalStorage>, bytes: &[u8]) {
    if !bytes.is_empty() {
        append_always(blob, bytes);
    }
}

/// The file so far and one more page, as a new Blob of two parts: the
/// bytes leave wasm and the JS heap at once, into the browser's blob store.
fn append_always(blob: StoredValue<Option<Blob>, LocalStorage>, bytes: &[u8]) {
    let parts = js_sys::Array::new();
    if let Some(previous) = blob.get_value() {
        parts.push(&previous);
    }
    let options = BlobPropertyBag::new();
    options.set_type("text/csv;charset=utf-8");
    // A view of the bytes in wasm memory, not a copy on the JS heap: the
    // Blob copies them at once, so a copy per page would only be garbage
    // (15 MB/s of it at 75k rows/s, which peaked the tab's heap at 75 MB).
    // SAFETY: nothing allocates in wasm between the view and Blob::new, so
    // the memory it views can neither move nor change.
    let view = unsafe { js_sys::Uint8Array::view(bytes) };
    parts.push(&view);
    let made = Blob::new_with_u8_array_sequence_and_options(&parts, &options).ok();
    drop(view);
    blob.set_value(made);
}
