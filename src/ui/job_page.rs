use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use saltscope_core::model::output::StateOutput;
use saltscope_core::model::{Outcome, PublishInfo, PublishSource, ReturnData, ReturnDoc};
use saltscope_core::query::filter::encode_query;
use saltscope_core::query::job::{JobDetail, MissingMinion};
use saltscope_core::text::{jid_start_time, utc_timestamp};

use super::error::{ErrorPanel, Notes};
use super::states::{StateTable, StateView, SummaryLines};
use super::use_connection;
use super::value::value_tree;
use crate::engine::Aborter;

/// One job: the publish data, every minion's return, and who never returned.
#[component]
pub fn JobPage() -> impl IntoView {
    let connection = use_connection();
    let params = use_params_map();
    let query = use_query_map();
    let jid = Memo::new(move |_| params.read().get("jid").unwrap_or_default());
    let view_as = Memo::new(move |_| {
        query.with(|q| StateView {
            output: StateOutput::parse(q.get_str("output").unwrap_or("")),
            problems_only: q.get_str("only") == Some("problems"),
            by_sls: q.get_str("group") == Some("sls"),
        })
    });
    let aborter = StoredValue::new_local(Aborter::default());
    let detail = LocalResource::new(move || {
        let jid = jid.get();
        let signal = aborter.try_update_value(Aborter::renew).flatten();
        async move {
            let engine = connection.await?;
            crate::api::job(&engine, &jid, signal.as_ref()).await
        }
    });
    view! {
        <h1>"Job " <span class="jid">{move || jid.get()}</span></h1>
        <StateViewPicker jid=jid view_as=view_as/>
        {move || match detail.get() {
            None => view! { <p class="loading">"Loading job…"</p> }.into_any(),
            Some(Err(e)) => view! { <ErrorPanel error=e/> }.into_any(),
            Some(Ok(job)) => job_view(job, view_as.get()).into_any(),
        }}
    }
}

/// Links that switch Salt's output modes, kept in the URL.
#[component]
fn StateViewPicker(jid: Memo<String>, view_as: Memo<StateView>) -> impl IntoView {
    let href = move |v: StateView| {
        let mut pairs = Vec::new();
        if v.output != StateOutput::Full {
            pairs.push(("output", v.output.name().to_string()));
        }
        if v.problems_only {
            pairs.push(("only", "problems".to_string()));
        }
        if v.by_sls {
            pairs.push(("group", "sls".to_string()));
        }
        format!("/job/{}{}", jid.get(), encode_query(&pairs))
    };
    view! {
        <nav class="state-view" aria-label="State output">
            <span>"state_output: "</span>
            {StateOutput::ALL.iter().map(|mode| {
                let mode = *mode;
                view! {
                    <a href=move || href(StateView { output: mode, ..view_as.get() })
                        class=move || if view_as.get().output == mode { "mode current" } else { "mode" }>{mode.name()}</a>
                }
            }).collect_view()}
            <a href=move || { let v = view_as.get(); href(StateView { problems_only: !v.problems_only, ..v }) }
                class=move || if view_as.get().problems_only { "mode current" } else { "mode" }>"failures and changes only"</a>
            <a href=move || { let v = view_as.get(); href(StateView { by_sls: !v.by_sls, ..v }) }
                class=move || if view_as.get().by_sls { "mode current" } else { "mode" }>"group by SLS"</a>
        </nav>
    }
}

fn job_view(job: JobDetail, view_as: StateView) -> impl IntoView {
    let (ok, failed, states) = job.totals();
    let empty = job.returns.is_empty();
    let started = jid_start_time(&job.jid).unwrap_or_default();
    view! {
        <PublishPanel publish=job.publish.clone() started=started/>
        <section class="totals" aria-label="Totals">
            <span>{format!("Minions returned: {}", job.returns.len())}</span>
            <span class="ok">{format!("Succeeded: {ok}")}</span>
            <span class:bad={failed > 0}>{format!("Failed: {failed}")}</span>
            {(!job.missing.is_empty()).then(|| view! { <span class="bad">{format!("Missing: {}", job.missing.len())}</span> })}
            {states.map(|s| view! { <span class="state-totals">{s.lines().join(" · ")}</span> })}
        </section>
        <Notes notes=job.notes.clone()/>
        {empty.then(|| view! { <p class="notice">"No return document holds this jid."</p> })}
        <nav class="chips" aria-label="Minions">
            {job.returns.iter().map(|r| {
                let class = format!("chip chip-{}", outcome_name(r.outcome()));
                let href = format!("#minion-{}", anchor(&r.minion));
                view! { <a class=class href=href>{r.minion.clone()}</a> }
            }).collect_view()}
            {job.missing.iter().map(|m| view! { <span class="chip chip-missing">{m.minion.clone()}</span> }).collect_view()}
        </nav>
        <MissingList missing=job.missing.clone()/>
        {job.returns.into_iter().map(|r| view! { <MinionReturn ret=r view_as=view_as/> }).collect_view()}
    }
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
    let target = match (&p.target, &p.target_type) {
        (Some(t), Some(tt)) => format!("{t} ({tt})"),
        (Some(t), None) => t.clone(),
        _ => String::new(),
    };
    view! {
        <dl class="publish" aria-label="Publish data">
            <dt>"Function"</dt><dd>{p.fun.clone().unwrap_or_default()}</dd>
            <dt>"Arguments"</dt><dd>{p.args.join(" ")}</dd>
            <dt>"Target"</dt><dd>{target}</dd>
            <dt>"User"</dt><dd>{p.user.clone().unwrap_or_default()}</dd>
            <dt>"Started"</dt><dd>{started}</dd>
            <dt>"Source"</dt><dd>{source}</dd>
        </dl>
    }
    .into_any()
}

#[component]
fn MissingList(missing: Vec<MissingMinion>) -> impl IntoView {
    (!missing.is_empty()).then(|| {
        view! {
            <section class="missing" aria-label="Missing minions">
                <h2>"Targeted, no return"</h2>
                <ul>
                    {missing.into_iter().map(|m| {
                        let why = if m.returned_to_master {
                            "returned to the master, but its return document was not written (the returner lost it)"
                        } else {
                            "no return: the minion did not answer, or its return was never sent"
                        };
                        view! { <li><strong>{m.minion}</strong>" — "{why}</li> }
                    }).collect_view()}
                </ul>
            </section>
        }
    })
}

#[component]
fn MinionReturn(ret: ReturnDoc, view_as: StateView) -> impl IntoView {
    let outcome = ret.outcome();
    let raw = serde_json::to_string_pretty(&ret.source).unwrap_or_default();
    let retcode = ret
        .retcode
        .map(|c| format!("retcode {c}"))
        .unwrap_or_else(|| "no retcode".into());
    let when = ret
        .timestamp
        .as_deref()
        .map(utc_timestamp)
        .unwrap_or_default();
    let body = match ret.data {
        ReturnData::States(states) => view! {
            <SummaryLines runs=states.runs.clone()/>
            <StateTable runs=states.runs view_as=view_as/>
        }
        .into_any(),
        ReturnData::StateError(lines) => view! {
            <div class="state-error"><strong>"The state run did not start:"</strong><pre class="text">{lines.join("\n")}</pre></div>
        }
        .into_any(),
        ReturnData::Text(text) => view! { <pre class="text return-text">{text}</pre> }.into_any(),
        ReturnData::Structured(value) => view! { <div class="return-tree">{value_tree(&value)}</div> }.into_any(),
        ReturnData::Missing => view! { <p class="notice">"This return holds no data."</p> }.into_any(),
    };
    view! {
        <section class=format!("minion minion-{}", outcome_name(outcome)) id=format!("minion-{}", anchor(&ret.minion)) aria-label=ret.minion.clone()>
            <h2>
                <span class="minion-id">{ret.minion.clone()}</span>
                <span class=format!("outcome outcome-{}", outcome_name(outcome))>{outcome_label(outcome)}</span>
                <span class="meta">{format!("{} · {retcode} · {when}", ret.fun)}</span>
            </h2>
            <Notes notes=ret.notes.clone()/>
            {body}
            <details class="raw"><summary>"Raw document"</summary><pre class="text">{raw}</pre></details>
        </section>
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

/// Minion ids hold dots; element ids keep letters, digits, dashes and dots
/// (valid in HTML ids) and replace the rest.
fn anchor(minion: &str) -> String {
    minion
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
