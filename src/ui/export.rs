//! CSV export of the view's rows, any size: the core plans the requests
//! (point in time + `search_after`, or the job list's composite) and turns
//! each page into CSV bytes; here each page is appended to a Blob built
//! from parts, so the tab's memory stays flat however many rows there are.

use leptos::prelude::*;
use saltscope_core::engine::EngineError;
use saltscope_core::export::{
    file_name, Column, ColumnChoice, CsvOptions, ExportKind, ExportPlan, ExportSpec, ViewFilter,
};
use web_sys::{Blob, BlobPropertyBag, Url};

use super::error::ErrorPanel;
use super::use_connection;
use crate::engine::{Aborter, Engine};

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
    let aborter = StoredValue::new_local(Aborter::default());
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
            drive(&engine, plan, blob, status, cancel, aborter, started).await;
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
                            aborter.update_value(|a| { a.renew(); });
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
                    Status::Done { url, name, rows, notes } => view! {
                        <p class="export-done">{format!("{rows} rows. ")}
                            <a href=url download=name.clone() class="download">{format!("Download {name}")}</a></p>
                        {(!notes.is_empty()).then(|| view! {
                            <ul class="notes">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                        })}
                    }.into_any(),
                }}
            </div>
        </details>
    }
}

/// Sends the plan's requests one after the other until it is done, failed
/// or cancelled; always closes the point in time.
async fn drive(
    engine: &Engine,
    plan: StoredValue<Option<ExportPlan>, LocalStorage>,
    blob: StoredValue<Option<Blob>, LocalStorage>,
    status: RwSignal<Status>,
    cancel: RwSignal<bool>,
    aborter: StoredValue<Aborter, LocalStorage>,
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
    if let Some(p) = plan.with_value(|p| p.as_ref().map(progress)) {
        status.set(Status::Running(p));
    }
    while let Some(request) = plan.with_value(|p| p.as_ref().and_then(ExportPlan::next_request)) {
        let signal = aborter.try_update_value(Aborter::renew).flatten();
        let answer = engine.request(&request, signal.as_ref()).await;
        if cancel.get_untracked() {
            close(engine, plan).await;
            let rows = plan
                .with_value(|p| p.as_ref().map(|p| p.state().rows_written))
                .unwrap_or(0);
            blob.set_value(None);
            status.set(Status::Cancelled { rows });
            return;
        }
        let handled = plan
            .try_update_value(|p| p.as_mut().map(|p| p.handle(answer)))
            .flatten();
        match handled {
            Some(Ok(bytes)) => append(blob, &bytes),
            Some(Err(error)) => {
                let rows = plan
                    .with_value(|p| p.as_ref().map(|p| p.state().rows_written))
                    .unwrap_or(0);
                status.set(Status::Failed { error, rows });
                return;
            }
            None => return,
        }
        if let Some(p) = plan.with_value(|p| p.as_ref().map(progress)) {
            status.set(Status::Running(p));
        }
    }
    close(engine, plan).await;
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
    status.set(Status::Done {
        url,
        name,
        rows,
        notes,
    });
}

async fn close(engine: &Engine, plan: StoredValue<Option<ExportPlan>, LocalStorage>) {
    if let Some(request) = plan.with_value(|p| p.as_ref().and_then(ExportPlan::close_request)) {
        // Nothing to read in the answer; a failure leaves the PIT to expire.
        let _ = engine.request(&request, None).await;
    }
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
    parts.push(&js_sys::Uint8Array::from(bytes));
    let options = BlobPropertyBag::new();
    options.set_type("text/csv;charset=utf-8");
    blob.set_value(Blob::new_with_u8_array_sequence_and_options(&parts, &options).ok());
}
