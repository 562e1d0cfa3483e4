use std::collections::HashMap;
use std::sync::Arc;

use leptos::prelude::*;
use saltscope_core::engine::EngineError;
use saltscope_core::model::output::StateOutput;
use saltscope_core::model::{
    is_state_function, Outcome, PublishInfo, PublishSource, ReturnData, ReturnDoc,
};
use saltscope_core::query::compare::{CompareRequest, RunRef};
use saltscope_core::query::job::{
    add_page, not_a_jid, states_total, FirstOutput, JobDetail, JobStates, MinionsShown,
    MissingMinion, MissingReason,
};
use saltscope_core::query::named::{named_first, NamedMinion};
use saltscope_core::query::scan::ScanProgress;
use saltscope_core::route::{link, StateView};
use saltscope_core::text::line_shown;
use saltscope_core::time::{jid_start_time, utc_timestamp};
use saltscope_core::views;
use wasm_bindgen::JsCast;

use super::error::{ErrorPanel, Notes};
use super::location::use_query_map;
use super::states::{StateTable, SummaryLines};
use super::timeline::Timeline;
use super::use_view;
use super::value::value_tree;
use super::visible::{arguments_view, pre_view, target_view, when_near, ShowMore};
use crate::transport::{now_ms, sleep};
use leptos::task::spawn_local;

/// One job: the publish data, every minion's return, and who never returned.
/// Switching the state output redraws the states, not the page.
#[component]
pub fn JobPage(jid: String) -> impl IntoView {
    let query = use_query_map();
    // A new path draws a new page: the jid is fixed for this one.
    let jid = Signal::stored(jid);
    let view_as = Memo::new(move |_| query.with(|q| StateView::from_query(|k| q.get_str(k))));
    // A link from another view names one minion's return: its data comes
    // with the job, wherever it is among the job's pages of returns.
    let named = super::location::named_id();
    // Only the choice of minions asks again; the states' view redraws.
    let shown = Memo::new(move |_| view_as.get().minions);
    let detail = use_view(
        "job",
        move || (jid.get(), shown.get()),
        move |engine, (jid, shown)| {
            let named = named.clone();
            async move {
                let output = FirstOutput::Named(&named);
                let ctx = engine.context(None);
                views::job(&engine.transport, &ctx, &jid, output, shown).await
            }
        },
    );
    view! {
        <h1>"Job " <span class="jid">{move || line_shown(&jid.get())}</span></h1>
        {move || match (detail.pending(), detail.error(), detail.ok()) {
            (true, _, _) => view! { <p class="loading">"Loading job…"</p> }.into_any(),
            (_, Some(e), _) => view! { <ErrorPanel error=e retry=detail.retry()/> }.into_any(),
            // Nothing under an id that is no jid: why, and nothing else.
            (_, _, Some(job)) => match not_a_jid(&job.jid).filter(|_| job.is_empty()) {
                Some(why) => view! { <p class="notice">{why}</p> }.into_any(),
                None => view! {
                    <StateViewPicker jid=jid view_as=view_as/>
                    <JobView job=job view_as=view_as shown=shown.get_untracked()/>
                }.into_any(),
            },
            _ => ().into_any(),
        }}
    }
}

/// Switches drawn as links, their state kept in the URL: a switch turns on
/// Space, as switches do, besides Enter, as links do. One listener for the
/// picker: its other links (the output modes) keep Space for scrolling.
fn space_switches(ev: leptos::ev::KeyboardEvent) {
    let link = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
        .filter(|l| l.get_attribute("role").as_deref() == Some("switch"));
    if let (" ", Some(link)) = (ev.key().as_str(), link) {
        ev.prevent_default();
        link.click();
    }
}

/// Links that switch Salt's output modes, kept in the URL.
#[component]
fn StateViewPicker(jid: Signal<String>, view_as: Memo<StateView>) -> impl IntoView {
    let href = move |v: StateView| link::job_view(&jid.get(), v);
    let current = |on: bool| if on { "mode current" } else { "mode" };
    let failed_only = move || view_as.get().minions == MinionsShown::Failed;
    view! {
        <nav class="state-view" aria-label="State output" on:keydown=space_switches>
            <span>"state_output: "</span>
            {StateOutput::ALL.iter().map(|mode| {
                let mode = *mode;
                view! {
                    <a href=move || href(StateView { output: mode, ..view_as.get() })
                        class=move || current(view_as.get().output == mode)
                        aria-current=move || (view_as.get().output == mode).then_some("true")>{mode.name()}</a>
                }
            }).collect_view()}
            <a href=move || { let v = view_as.get(); href(StateView { problems_only: !v.problems_only, ..v }) }
                class=move || current(view_as.get().problems_only)
                role="switch" aria-checked=move || view_as.get().problems_only.to_string()>"failures and changes only"</a>
            <a href=move || { let v = view_as.get(); href(StateView { by_sls: !v.by_sls, ..v }) }
                class=move || current(view_as.get().by_sls)
                role="switch" aria-checked=move || view_as.get().by_sls.to_string()>"group by SLS"</a>
            <a href=move || { let v = view_as.get(); href(StateView { minions: v.minions.other(), ..v }) }
                class=move || current(failed_only())
                role="switch" aria-checked=move || failed_only().to_string()>"failed minions only"</a>
        </nav>
    }
}

/// Minion sections drawn at first, and per step when scrolling on.
const SECTIONS_STEP: usize = 50;
/// Up to this many minions on the page, every return's data is fetched at
/// once; beyond, each when its section comes near the screen.
const EAGER_MINIONS: usize = 20;

/// The job `shown` is the returns the job was asked with.
#[component]
fn JobView(job: Arc<JobDetail>, view_as: Memo<StateView>, shown: MinionsShown) -> impl IntoView {
    let started = jid_start_time(&job.jid).unwrap_or_default();
    // What a young job's live follow updates; the rest stays as it was.
    // The return a link names comes first (the core puts it there), so
    // that nothing drawn later above it pushes it off the screen.
    let named = super::location::named_id();
    let failed_only = shown == MinionsShown::Failed;
    // A link to a minion this page does not list: why, and where it is.
    let all = StateView {
        minions: MinionsShown::All,
        ..view_as.get_untracked()
    };
    let named_note = match job.named_minion(&named, shown) {
        NamedMinion::Unlisted => {
            let href = format!("{}#{named}", link::job_view(&job.jid, all));
            Some(view! { <p class="notice">"The minion the link names is not among the failed: " <a href=href>"see it among every minion"</a>"."</p> }.into_any())
        }
        NamedMinion::NoReturn(id) => Some(view! { <p class="notice">{id}", which the link names, has no return in this job."</p> }.into_any()),
        _ => None,
    };
    let returns = RwSignal::new(job.returns.clone());
    let counts = RwSignal::new((job.total_returns, job.outcomes()));
    let missing = RwSignal::new(job.missing.clone());
    let timeline = RwSignal::new(job.timeline.clone());
    let opened_ms = now_ms();
    let following = RwSignal::new(job.worth_following(opened_ms, opened_ms));
    let empty = RwSignal::new(job.is_empty());
    let more = RwSignal::new(job.more.clone());
    let loading_more = RwSignal::new(false);
    // Each return's data once fetched, by document: the state totals need
    // all. The first came with the job.
    let loaded = RwSignal::new(HashMap::<String, Arc<ReturnDoc>>::from_iter(
        job.first_output
            .iter()
            .map(|doc| (loaded_key(&doc.index, &doc.id), doc.clone())),
    ));
    let sections = RwSignal::new(SECTIONS_STEP);
    // Some of the minions listed: the state totals come from a scan.
    let eager = job.total_returns as usize <= EAGER_MINIONS && !failed_only;
    request_animation_frame(super::location::scroll_to_named);
    let session = super::use_session();
    let jid = job.jid.clone();
    let load_more = {
        let jid = jid.clone();
        Callback::new(move |()| {
            let (Some(after), false) = (more.get_untracked(), loading_more.get_untracked()) else {
                return;
            };
            let Some(Ok(engine)) = session.startup.get_untracked() else {
                return;
            };
            loading_more.set(true);
            let jid = jid.clone();
            spawn_local(async move {
                let ctx = engine.context(None);
                if let Ok(page) =
                    views::job_returns(&engine.transport, &ctx, &jid, &after, shown).await
                {
                    returns.try_update(|r| add_page(r, page.returns));
                    more.try_set(page.more);
                }
                loading_more.try_set(false);
            });
        })
    };
    let job_states = job_states(&job, eager, failed_only, following);
    follow(
        jid.clone(),
        shown,
        following,
        opened_ms,
        move |j: JobDetail| {
            empty.set(j.is_empty());
            // Only the first page is re-read: a job beyond it pages as before.
            if more.get_untracked().is_none() {
                let mut r = j.returns.clone();
                named_first(&mut r, &named);
                returns.set(r);
            }
            counts.set((j.total_returns, j.outcomes()));
            missing.set(j.missing.clone());
            timeline.set(j.timeline.clone());
        },
    );
    let states_line = move || {
        let lines = if eager {
            let total = counts.get().0;
            loaded.with(|l| {
                (l.len() as u64 == total)
                    .then(|| states_total(l.values().map(|d| d.as_ref())))
                    .flatten()
                    .map(|s| s.lines().to_vec())
            })
        } else {
            job_states.get()
        };
        lines.map(|l| view! { <span class="state-totals">{l.join(" · ")}</span> })
    };
    // The chips are redrawn with the sections, read in place (a keyed list
    // of them cost 1.6 KB of wasm); the sections' keyed list takes copies.
    let chips = move || {
        returns.with(|r| {
            r.iter()
                .take(sections.get())
                .map(|r| {
                    let class = format!("chip chip-{}", outcome_name(outcome_of(r, loaded)));
                    let href = format!("#{}", link::minion_anchor(&r.minion));
                    view! { <a class=class href=href>{r.minion.clone()}</a> }
                })
                .collect_view()
        })
    };
    let unshown = move || returns.with(Vec::len).saturating_sub(sections.get());
    let total = move || counts.get().0;
    let succeeded = move || counts.get().1 .0;
    let failed = move || counts.get().1 .1;
    // How many returns the page lists, on all its pages.
    let listed = move || if failed_only { failed() } else { total() };
    let (more_what, load_what) = if failed_only {
        ("failed", "failed minions")
    } else {
        ("returned", "minions")
    };
    let any_failed = move || failed() > 0;
    let jid_shown = job.jid.clone();
    view! {
        <PublishPanel publish=job.publish.clone() started=started/>
        {move || following.get().then(|| view! {
            <p class="following" role="status">
                {move || {
                    let targeted = counts.get().0 + missing.with(Vec::len) as u64;
                    if empty.get() {
                        "Following this job live: waiting for its first documents".to_string()
                    } else {
                        format!("Following this job live: {} of {targeted} minions answered", counts.get().0)
                    }
                }}
                " "<button type="button" on:click=move |_| following.set(false)>"Stop following"</button>
            </p>
        })}
        <section class="totals" aria-label="Totals">
            <span>{move || format!("Minions returned: {}", total())}</span>
            <span class="ok">{move || format!("Succeeded: {}", succeeded())}</span>
            <span class:bad=any_failed>{move || format!("Failed: {}", failed())}</span>
            {move || (!missing.with(Vec::is_empty)).then(|| view! { <span class="bad">{format!("Missing: {}", missing.with(Vec::len))}</span> })}
            {states_line}
        </section>
        <Notes notes=job.notes.clone()/>
        {move || (total() == 0).then(|| {
            let why = not_a_jid(&jid_shown).unwrap_or_else(|| "No return document holds this jid.".into());
            view! { <p class="notice">{why}</p> }
        })}
        {move || (failed_only && total() > 0).then(|| {
            let line = match failed() {
                0 => "No minion failed in this job.".to_string(),
                n => format!("Listing the {n} failed of {} minions that returned.", total()),
            };
            view! { <p class="notice" role="status">{line}</p> }
        })}
        {named_note}
        <Timeline timeline=timeline/>
        <nav class="chips" aria-label="Minions">
            {chips}
            {move || {
                // The chips follow the sections drawn: say how many are not.
                let drawn = returns.with(Vec::len).min(sections.get()) as u64;
                (listed() > drawn).then(|| view! { <span class="chip-more">{format!("and {} more that {more_what}", listed() - drawn)}</span> })
            }}
            {move || missing.with(|m| m.iter().take(SECTIONS_STEP).map(|m| view! { <span class="chip chip-missing">{m.minion.clone()}</span> }).collect_view())}
            {move || missing.with(|m| (m.len() > SECTIONS_STEP).then(|| view! { <span class="chip-more">{format!("and {} more missing", m.len() - SECTIONS_STEP)}</span> }))}
        </nav>
        <MissingList missing=missing following=following/>
        <For each=move || returns.with(|r| r.iter().take(sections.get()).cloned().collect::<Vec<_>>())
            key=|r| (r.index.clone(), r.id.clone()) let(summary)>
            <MinionReturn summary=summary eager=eager view_as=view_as loaded=loaded/>
        </For>
        {move || (unshown() > 0).then(|| view! {
            <ShowMore label=Signal::derive(move || format!("Show {} more minions", unshown().min(SECTIONS_STEP)))
                more=Callback::new(move |()| sections.update(|n| *n += SECTIONS_STEP))/>
        })}
        {move || (unshown() == 0 && more.with(Option::is_some)).then(|| view! {
            <ShowMore label=Signal::derive(move || format!("Load more {load_what} ({} of {} loaded)", returns.with(Vec::len), listed()))
                more=load_more/>
        })}
    }
}

/// While `following`, asks for the job again every [`FOLLOW_EVERY_MS`] and
/// hands each answer to `update`; stops when the job is done (every
/// targeted minion answered, or too old to wait for), when nothing of it
/// came within [`WAIT_FOR_NEW_MS`] of opening, or when the page goes.
fn follow(
    jid: String,
    shown: MinionsShown,
    following: RwSignal<bool>,
    opened_ms: i64,
    update: impl Fn(JobDetail) + Clone + 'static,
) {
    let session = super::use_session();
    let generation = StoredValue::new(0u32);
    Effect::new(move |_| {
        let Some(run) = generation.try_update_value(|g| {
            *g += 1;
            *g
        }) else {
            return;
        };
        if !following.get() {
            return;
        }
        let (jid, update) = (jid.clone(), update.clone());
        spawn_local(async move {
            let current = move || generation.try_get_value() == Some(run);
            while current() {
                sleep(FOLLOW_EVERY_MS).await;
                let Some(Ok(engine)) = session.startup.get_untracked() else {
                    return;
                };
                let output = FirstOutput::Nothing;
                let ctx = engine.context(None);
                let answer = views::job(&engine.transport, &ctx, &jid, output, shown).await;
                if !current() {
                    return;
                }
                if let Ok(j) = answer {
                    let running = j.worth_following(now_ms(), opened_ms);
                    update(j);
                    if !running {
                        following.set(false);
                    }
                }
            }
        });
    });
    on_cleanup(move || {
        generation.try_update_value(|g| *g += 1);
    });
}

/// How often a young job is asked for again.
const FOLLOW_EVERY_MS: u64 = 2_000;

/// The summary lines of a job with more minions than the page reads the
/// outputs of at once: every state run counted in the engine once the job
/// is done, with the progress meanwhile. `None` for a job of no states.
/// Listing some minions (`failed_only`), those listed may hold no states
/// (none failed) while the job's do: the scan tells.
fn job_states(
    job: &JobDetail,
    eager: bool,
    failed_only: bool,
    following: RwSignal<bool>,
) -> Signal<Option<Vec<String>>> {
    let states = RwSignal::new(None::<Result<JobStates, EngineError>>);
    let progress = RwSignal::new(None::<ScanProgress>);
    let of_states = failed_only || job.returns.iter().any(|r| is_state_function(&r.fun));
    let started = StoredValue::new(eager || !of_states);
    let session = super::use_session();
    let jid = job.jid.clone();
    Effect::new(move |_| {
        if following.get() || started.get_value() {
            return;
        }
        let Some(Ok(engine)) = session.startup.get_untracked() else {
            return;
        };
        started.set_value(true);
        progress.set(Some(ScanProgress::default()));
        let jid = jid.clone();
        spawn_local(async move {
            // Gone with the page: the scan stops.
            let on = |p: ScanProgress| progress.try_set(Some(p)).is_none();
            let answer =
                views::job_states(&engine.transport, &engine.context(None), &jid, &on).await;
            states.try_set(Some(answer));
        });
    });
    Signal::derive(move || match states.get() {
        Some(Ok(s)) => s.lines(),
        Some(Err(e)) => Some(vec![format!("State totals unavailable: {e}")]),
        None => progress.get().map(|p| {
            let of = p.total.map(|t| format!(" of {t}")).unwrap_or_default();
            vec![format!(
                "Counting the states… read {}{of} state runs",
                p.read
            )]
        }),
    })
}

#[component]
fn PublishPanel(publish: Option<PublishInfo>, started: String) -> impl IntoView {
    let Some(p) = publish else {
        return view! {
            <dl class="publish">
                <dt>"Started"</dt><dd>{started}</dd>
                <dt>"Published"</dt><dd>"no publish event or job-cache load for this job (salt-call, or event_return off)"</dd>
            </dl>
        }
        .into_any();
    };
    let source = match p.source {
        PublishSource::Event => "publish event",
        PublishSource::JobCache => "job cache",
    };
    view! {
        <dl class="publish" aria-label="Publish data">
            <dt>"Function"</dt><dd>{p.fun.clone().unwrap_or_default()}</dd>
            <dt>"Arguments"</dt><dd>{arguments_view(&p.args)}</dd>
            <dt>"Target"</dt><dd>{target_view(p.target.as_deref(), p.target_type.as_deref())}</dd>
            <dt>"User"</dt><dd>{p.user.clone().unwrap_or_default()}</dd>
            <dt>"Started"</dt><dd>{started}</dd>
            <dt>"Source"</dt><dd>{source}</dd>
        </dl>
    }
    .into_any()
}

#[component]
fn MissingList(missing: RwSignal<Vec<MissingMinion>>, following: RwSignal<bool>) -> impl IntoView {
    move || {
        (!missing.with(Vec::is_empty)).then(|| {
            let waiting = following.get();
            view! {
                <section class="missing" aria-label="Missing minions">
                    <h2>{if waiting { "Targeted, not answered yet" } else { "Targeted, no return" }}</h2>
                    <ul>
                        {missing.get().into_iter().map(|m| {
                            let why = if waiting && m.reason != MissingReason::UnknownToMaster {
                                "still running, or not answering"
                            } else {
                                m.reason.explain()
                            };
                            // A link naming a missing minion leads here.
                            let anchor = link::minion_anchor(&m.minion);
                            view! { <li id=anchor><strong>{m.minion}</strong>" — "{why}</li> }
                        }).collect_view()}
                    </ul>
                </section>
            }
        })
    }
}

/// One minion's return: its heading from the summary at once, its data
/// fetched on its own (at once on a small job, else when near the screen).
#[component]
fn MinionReturn(
    summary: ReturnDoc,
    eager: bool,
    view_as: Memo<StateView>,
    loaded: RwSignal<HashMap<String, Arc<ReturnDoc>>>,
) -> impl IntoView {
    let outcome = outcome_of(&summary, loaded);
    let retcode = summary
        .retcode
        .map(|c| format!("retcode {c}"))
        .unwrap_or_else(|| "no retcode".into());
    let when = summary
        .timestamp
        .as_deref()
        .map(utc_timestamp)
        .unwrap_or_default();
    let load = RwSignal::new(eager);
    let node = NodeRef::<leptos::html::Div>::new();
    // Setting it again would draw the body anew and fetch the output twice.
    if !eager {
        when_near(node, move || {
            load.set(true);
            false
        });
    }
    let (index, id) = (summary.index.clone(), summary.id.clone());
    view! {
        <section class=format!("minion minion-{}", outcome_name(outcome)) id=link::minion_anchor(&summary.minion) aria-label=summary.minion.clone()>
            <h2>
                <span class="minion-id">{summary.minion.clone()}</span>
                <span class=format!("outcome outcome-{}", outcome_name(outcome))>{outcome_label(outcome)}</span>
                <span class="meta">{format!("{} · {retcode} · {when}", summary.fun)}</span>
            </h2>
            {is_state_function(&summary.fun).then(|| {
                let previous = CompareRequest {
                    a: RunRef::of(&summary),
                    b: None,
                };
                view! { <p class="compare-link"><a href=link::compare(&previous)>"Compare with the previous run"</a></p> }
            })}
            <Notes notes=summary.notes.clone()/>
            <div node_ref=node>
                {move || if load.get() {
                    view! { <ReturnBody index=index.clone() id=id.clone() view_as=view_as loaded=loaded/> }.into_any()
                } else {
                    view! { <button type="button" on:click=move |_| load.set(true)>"Show output"</button> }.into_any()
                }}
            </div>
        </section>
    }
}

/// A return's data: states as Salt prints them, text, a tree.
#[component]
fn ReturnBody(
    index: String,
    id: String,
    view_as: Memo<StateView>,
    loaded: RwSignal<HashMap<String, Arc<ReturnDoc>>>,
) -> impl IntoView {
    let key = loaded_key(&index, &id);
    // Came with the job (or was drawn before): nothing to ask.
    let known = loaded.with_untracked(|l| l.get(&key).cloned());
    let data = use_view(
        "job-return",
        move || (),
        move |engine, ()| {
            let (index, id, known) = (index.clone(), id.clone(), known.clone());
            async move {
                match known {
                    Some(ret) => Ok(ret),
                    None => views::job_return(&engine.transport, &index, &id)
                        .await
                        .map(Arc::new),
                }
            }
        },
    );
    Effect::new(move |_| {
        if let Some(doc) = data.ok() {
            loaded.update(|l| {
                l.insert(key.clone(), Arc::clone(&doc));
            });
        }
    });
    move || match (data.error(), data.ok()) {
        (Some(e), _) => view! { <ErrorPanel error=e retry=data.retry()/> }.into_any(),
        (_, None) => view! { <p class="loading">"Loading the output…"</p> }.into_any(),
        (_, Some(ret)) => return_body(Arc::clone(&ret), view_as).into_any(),
    }
}

/// A return's outcome: a runner's verdict is its `data.success`, which
/// the job's first output brings (a runner's job has the master's one
/// return); the rest read it without their data.
fn outcome_of(summary: &ReturnDoc, loaded: RwSignal<HashMap<String, Arc<ReturnDoc>>>) -> Outcome {
    let with_data = || {
        let key = loaded_key(&summary.index, &summary.id);
        loaded.with_untracked(|l| l.get(&key).map(|d| d.outcome()))
    };
    match summary.is_runner() {
        true => with_data().unwrap_or(summary.outcome()),
        false => summary.outcome(),
    }
}

/// A return's place in the job page's `loaded`.
fn loaded_key(index: &str, id: &str) -> String {
    format!("{index}/{id}")
}

fn return_body(ret: Arc<ReturnDoc>, view_as: Memo<StateView>) -> impl IntoView {
    let body = match &ret.data {
        ReturnData::States(_) => view! {
            <SummaryLines ret=ret.clone()/>
            <StateTable ret=ret.clone() view_as=view_as/>
        }
        .into_any(),
        ReturnData::StateError(lines) => view! {
            <div class="state-error"><strong>"The state run did not start:"</strong><pre class="text">{lines.join("\n")}</pre></div>
        }
        .into_any(),
        ReturnData::Text(text) => pre_view(text, "text return-text"),
        ReturnData::Structured(value) => view! { <div class="return-tree">{value_tree(value.clone())}</div> }.into_any(),
        ReturnData::Missing => view! { <p class="notice">"This return holds no data."</p> }.into_any(),
        ReturnData::Unread => view! { <p class="loading">"Loading the output…"</p> }.into_any(),
    };
    let raw_open = RwSignal::new(false);
    let raw_ret = ret.clone();
    // Pretty-printed only when opened: a return can be megabytes.
    let raw = move || {
        raw_open.get().then(|| {
            let text = serde_json::to_string_pretty(&raw_ret.source).unwrap_or_default();
            pre_view(&text, "text")
        })
    };
    view! {
        <Notes notes=ret.notes.clone()/>
        {body}
        <details class="raw" on:toggle=move |ev| raw_open.set(event_target::<web_sys::HtmlDetailsElement>(&ev).open())>
            <summary>"Raw document"</summary>
            {raw}
        </details>
    }
}

fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Succeeded => "succeeded",
        Outcome::Failed => "failed",
        Outcome::Runner => "runner",
    }
}

fn outcome_label(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Succeeded => "Succeeded",
        Outcome::Failed => "Failed",
        Outcome::Runner => "Runner",
    }
}
