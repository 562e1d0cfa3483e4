use super::filter_bar::TimeSelect;
use leptos::callback::UnsyncCallback;
use leptos::html::Input;
use leptos::prelude::*;
use saltscope_core::export::{ExportKind, ViewFilter};
use saltscope_core::model::PublishSource;
use saltscope_core::query::audit::{AuditCursor, AuditEntry, AuditFilter, AuditKind};
use saltscope_core::route::{link, param};
use saltscope_core::text::counted;
use saltscope_core::time::{jid_start_time, utc_timestamp};
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::export::ExportPanel;
use super::location::{use_navigate, use_query_map, NavigateOptions};
use super::use_view;
use super::visible::{arguments_view, target_view};

/// Who ran what, on which target, when.
#[component]
pub fn AuditPage() -> impl IntoView {
    let query = use_query_map();
    let navigate = use_navigate();
    let filter = Memo::new(move |_| query.with(|q| AuditFilter::from_query(|k| q.get_str(k))));
    let cursor = Memo::new(move |_| {
        query.with(|q| q.get(param::AFTER).and_then(|a| AuditCursor::parse(&a)))
    });
    let page = use_view(
        "audit",
        move || (filter.get().0, cursor.get()),
        |engine, (filter, cursor)| async move {
            let ctx = engine.context(None);
            views::audit(&engine.transport, &ctx, &filter, cursor.as_ref()).await
        },
    );
    let (user, fun, target, minion, risky) = (
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
    );
    let time = NodeRef::<leptos::html::Select>::new();
    let apply = UnsyncCallback::new(move |()| {
        let v = |r: NodeRef<Input>| r.get_untracked().map(|e| e.value()).unwrap_or_default();
        let pairs = [
            (param::USER, v(user)),
            (param::FUN, v(fun)),
            (param::TARGET, v(target)),
            (param::MINION, v(minion)),
            (
                param::TIME,
                time.get_untracked().map(|s| s.value()).unwrap_or_default(),
            ),
            (
                param::RISKY,
                if risky.get_untracked().is_some_and(|e| e.checked()) {
                    "1".into()
                } else {
                    String::new()
                },
            ),
        ];
        let (next, _) = AuditFilter::from_query(|k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty())
        });
        navigate(
            &link::audit(&next, None),
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    });
    let current = move || filter.get().0;
    let next_link = move |c: AuditCursor| link::audit(&current(), Some(&c));
    view! {
        <h1>"Audit"</h1>
        <form class="filter-bar" role="search" aria-label="Filter" on:submit=move |ev| { ev.prevent_default(); apply.run(()); }>
            <label>"User " <input node_ref=user name="user" placeholder="sudo_alice, root" prop:value=move || current().users.join(",")/></label>
            <label>"Function " <input node_ref=fun name="fun" placeholder="cmd.*" prop:value=move || current().functions.join(",")/></label>
            <label>"Target " <input node_ref=target name="target" placeholder="*" prop:value=move || current().targets.join(",")/></label>
            <label title="Jobs that reached these minions, whatever their target">"Minion " <input node_ref=minion name="minion" placeholder="web01*, db-02" prop:value=move || current().minions.join(",")/></label>
            <TimeSelect select=time current=Signal::derive(move || current().time.to_param()) apply=apply/>
            <label><input node_ref=risky type="checkbox" name="risky" on:change=move |_| apply.run(()) prop:checked=move || current().risky_only/>" High-risk only"</label>
            <button type="submit">"Apply"</button>
        </form>
        {move || (!filter.get().1.is_empty()).then(|| view! { <Notes notes=filter.get().1/> })}
        <ExportPanel kinds=vec![ExportKind::Audit] filter=Signal::derive(move || ViewFilter::Audit(filter.get().0))/>
        {move || match (page.error(), page.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=page.retry()/> }.into_any(),
            (_, None) => view! { <p class="loading">"Loading the audit trail…"</p> }.into_any(),
            (_, Some(p)) => {
                let source = match p.source {
                    Some(PublishSource::Event) => "from the master's publish events",
                    Some(PublishSource::JobCache) => "from the master job cache",
                    None => "",
                };
                let risky_only = current().risky_only;
                let count = match (p.total, risky_only) {
                    (Some(t), false) => format!("{} {source}", counted(t, "published job")),
                    // The rules are applied here, to the lines read: the
                    // engine's total counts them all.
                    (Some(t), true) => {
                        let part = if p.read < t { format!("{} of ", p.read) } else { String::new() };
                        format!("{} high-risk among {part}the {} {source}", p.entries.len(), counted(t, "published job"))
                    }
                    (None, _) => String::new(),
                };
                let next = p.next.clone();
                let empty = match (p.entries.is_empty(), risky_only && next.is_some()) {
                    (false, _) => None,
                    (true, true) => Some("No high-risk job among these; \"Older\" reads on."),
                    (true, false) => Some("Nothing matches."),
                };
                view! {
                    <p class="count">{count}</p>
                    <Notes notes=p.notes.clone()/>
                    {empty.map(|text| view! { <p class="notice">{text}</p> })}
                    <table class="audit" aria-label="Audit trail">
                        <thead><tr><th>"When"</th><th>"User"</th><th>"Function"</th><th>"Arguments"</th><th>"Target"</th><th>"Minions"</th><th>"Job"</th><th>"Risk"</th></tr></thead>
                        <tbody>{p.entries.iter().map(audit_row).collect_view()}</tbody>
                    </table>
                    <nav class="pager" aria-label="Pages">{next.map(|c| view! { <a href=next_link(c)>"Older"</a> })}</nav>
                }.into_any()
            }
        }}
    }
}

fn audit_row(e: &AuditEntry) -> impl IntoView {
    let when = e
        .stamp
        .as_deref()
        .map(utc_timestamp)
        .or_else(|| jid_start_time(&e.jid))
        .unwrap_or_default();
    let risky = !e.risks.is_empty();
    // A runner's return is the master's: its job page shows it as any other.
    let runner = (e.kind == AuditKind::Runner).then_some(" (runner)");
    let job = view! { <a href=link::job(&e.jid)>{e.jid.clone()}</a>{runner} };
    view! {
        <tr class="audit-line" class:risky=risky>
            <td>{when}</td>
            <td>{e.user.clone().unwrap_or_default()}</td>
            <td>{e.fun.clone().unwrap_or_default()}</td>
            <td class="args">{arguments_view(&e.args)}</td>
            <td class="target">{target_view(e.target.as_deref(), e.target_type.as_deref())}</td>
            <td>{e.targeted.map(|n| n.to_string()).unwrap_or_default()}</td>
            <td>{job}</td>
            <td class="risk">{e.risks.join(", ")}</td>
        </tr>
    }
}
