//! CSV export of the view's rows, any size. The core plans the requests
//! and runs them (`saltscope_core::export::driver`); here are the panel —
//! what to export, its columns, progress, cancel, retry, the download — and
//! the file ([`blob::BlobFile`]). The export belongs to its panel: leaving
//! the page cancels it and closes its point in time, and the file's URL is
//! revoked when the next export starts or the panel goes.

mod blob;

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use saltscope_core::engine::EngineError;
use saltscope_core::export::driver::{self, Cancel, Outcome, Progress};
use saltscope_core::export::{
    file_name, Column, CsvOptions, ExportKind, ExportPlan, ExportSpec, ViewFilter,
};
use saltscope_core::sort;
use saltscope_core::text::{counted, fixed};

use super::error::ErrorPanel;
use super::prefs::use_prefs;
use super::use_session;
use crate::worker::worker_transport;
use blob::BlobFile;

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

/// An export that stopped on an error: its plan and its file so far, to
/// continue from.
struct Stopped {
    plan: ExportPlan,
    file: BlobFile,
}

/// The export panel of a view.
#[component]
pub fn ExportPanel(
    kinds: Vec<ExportKind>,
    #[prop(into)] filter: Signal<ViewFilter>,
) -> impl IntoView {
    let session = use_session();
    let prefs = use_prefs();
    let kind = RwSignal::new(kinds[0]);
    let columns = Memo::new(move |_| prefs.columns(kind.get()));
    let bom = RwSignal::new(false);
    let protect = RwSignal::new(true);
    let status = RwSignal::new(Status::Idle);
    // The view's filter the file is of: the view may move on meanwhile.
    let exported_filter = StoredValue::new(None::<ViewFilter>);
    let stopped = StoredValue::new_local(None::<Stopped>);
    let offered = StoredValue::new_local(None::<BlobFile>);
    let cancel = StoredValue::new_local(None::<Cancel>);
    on_cleanup(move || {
        if let Some(c) = cancel.try_update_value(Option::take).flatten() {
            c.cancel();
        }
        drop(offered.try_update_value(Option::take).flatten());
    });

    let run = move |fresh: bool| {
        let (kind_now, cols, filter_now) = (
            kind.get_untracked(),
            columns.get_untracked(),
            filter.get_untracked(),
        );
        let csv = CsvOptions {
            bom: bom.get_untracked(),
            formula_protection: protect.get_untracked(),
            ..CsvOptions::default()
        };
        // The file offered before is let go: its URL revoked.
        drop(offered.try_update_value(Option::take).flatten());
        spawn_local(async move {
            let engine = match session.startup.get_untracked() {
                Some(Ok(e)) => e,
                Some(Err(error)) => {
                    status.try_set(Status::Failed { error, rows: 0 });
                    return;
                }
                None => return, // not connected yet: the button does nothing
            };
            let resumed = if fresh {
                None
            } else {
                stopped.try_update_value(Option::take).flatten()
            };
            let Stopped { mut plan, mut file } = match resumed {
                Some(s) => s,
                None => {
                    let noisy = prefs.noisy.get_untracked();
                    exported_filter.try_set_value(Some(filter_now.clone()));
                    let spec = ExportSpec {
                        kind: kind_now,
                        columns: cols,
                        product: engine.connection.product.clone(),
                        context: engine.context(noisy),
                        filter: filter_now,
                        csv,
                        page_size: None,
                        keep_alive: "2m".into(),
                    };
                    match ExportPlan::new(spec) {
                        Ok(plan) => Stopped {
                            plan,
                            file: BlobFile::default(),
                        },
                        Err(e) => {
                            let error = EngineError::BadResponse {
                                url: None,
                                detail: e.to_string(),
                            };
                            status.try_set(Status::Failed { error, rows: 0 });
                            return;
                        }
                    }
                }
            };
            let stop = Cancel::default();
            cancel.try_set_value(Some(stop.clone()));
            let transport = Rc::new(worker_transport(&engine.transport));
            let now = js_sys::Date::now;
            let mut progress = |p: Progress| {
                status.try_set(Status::Running(p));
            };
            let outcome = driver::run(
                &*transport,
                &mut plan,
                &mut file,
                &stop,
                &now,
                &mut progress,
            )
            .await;
            cancel.try_set_value(None);
            match outcome {
                Outcome::Done {
                    rows,
                    notes,
                    timing,
                } => {
                    let spec = plan.spec();
                    let name = file_name(spec.kind, spec.filter.time(), spec.context.now_ms);
                    let url = file.url();
                    offered.try_set_value(Some(file));
                    status.try_set(Status::Done {
                        url,
                        name,
                        rows,
                        notes,
                        timing: timing.line(),
                    });
                    // The file is offered first: the close needs no waiting.
                    driver::close(&*transport, &plan).await;
                }
                Outcome::Failed { error, rows } => {
                    stopped.try_set_value(Some(Stopped { plan, file }));
                    status.try_set(Status::Failed { error, rows });
                }
                Outcome::Cancelled { rows } => {
                    status.try_set(Status::Cancelled { rows });
                }
            }
        });
    };

    let choose_kind = move |id: String| {
        if let Some(k) = ExportKind::parse(&id) {
            kind.set(k);
            status.set(Status::Idle);
        }
    };
    let toggle_column = move |c: Column| {
        let k = kind.get_untracked();
        let mut cols = columns.get_untracked();
        if let Some(i) = cols.iter().position(|x| x.id == c.id) {
            if cols.len() > 1 {
                cols.remove(i);
            }
        } else {
            // keep the kind's own order
            let order = k.columns();
            cols.push(c);
            sort::sort_by_key(&mut cols, |x| order.iter().position(|o| o.id == x.id));
        }
        prefs.set_columns(k, &cols);
    };
    let running = move || matches!(status.get(), Status::Running(_));
    super::location::warn_before_leaving(move || {
        running()
            .then_some("An export is running: leaving this page cancels it, and its file is lost.")
    });

    view! {
        <details class="export">
            <summary>"Export CSV"</summary>
            <div class="export-body" role="group" aria-label="Export CSV">
                <label>"Export "
                    <select name="export-kind" aria-label="Export" on:change=move |ev| choose_kind(event_target_value(&ev))>
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
                <label title="Spreadsheet programs run a cell that starts with =, +, -, @, tab or carriage return (also behind spaces, and the full-width ＝ ＋ － ＠) as a formula: a document field such as a state comment could then run a command on the auditor's machine (CSV injection). With protection such cells start with a ' instead.">
                    <input type="checkbox" name="formula-protection" prop:checked=move || protect.get()
                        on:change=move |ev| protect.set(event_target_checked(&ev))/>
                    " Protect against formulas (cells starting with = + - @ get a leading ')"
                </label>
                <div class="export-actions">
                    <button type="button" disabled=running on:click=move |_| run(true)>"Start export"</button>
                    {move || running().then(|| view! {
                        <button type="button" on:click=move |_| {
                            cancel.with_value(|c| if let Some(c) = c { c.cancel() });
                        }>"Cancel"</button>
                    })}
                </div>
                {move || match status.get() {
                    Status::Idle => ().into_any(),
                    Status::Running(p) => view! {
                        <progress max="1" value=fixed(p.fraction(), 4) aria-label="Export progress"></progress>
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
                        <p class="export-done">{format!("{}. ", counted(rows, "row"))}
                            <a href=url download=name.clone() class="download">{format!("Download {name}")}</a></p>
                        <p class="export-timing">{timing}</p>
                        {(!notes.is_empty()).then(|| view! {
                            <ul class="notes">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                        })}
                    }.into_any(),
                }}
                {move || {
                    let kept = matches!(status.get(), Status::Running(_) | Status::Done { .. } | Status::Failed { .. });
                    // Read as the status changes: set as it starts.
                    let moved = filter.with(|now| exported_filter.with_value(|f| f.as_ref().is_some_and(|f| f != now)));
                    (kept && moved).then(|| view! {
                        <p class="notice">"The view's filter changed after this export started: the file holds what the filter matched then. Start the export again for the view as it is now."</p>
                    })
                }}
            </div>
        </details>
    }
}
