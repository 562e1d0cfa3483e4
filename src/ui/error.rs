use leptos::prelude::*;
use saltscope_core::engine::EngineError;

use super::credentials::SignIn;
use super::use_session;

/// The one place errors are shown: what failed, where, the engine's words,
/// and what to do — sign in where the engine asks who you are, try again
/// where it did not answer.
#[component]
pub fn ErrorPanel(
    error: EngineError,
    /// Asks again (a view's Retry); start-up errors retry start-up.
    #[prop(optional, into)]
    retry: Option<Callback<()>>,
) -> impl IntoView {
    let session = use_session();
    if let EngineError::Status {
        status: 401,
        reason,
        ..
    } = &error
    {
        return view! { <SignIn reason=reason.clone()/> }.into_any();
    }
    let bad_search = error.is_bad_search();
    let title = match &error {
        _ if bad_search => "The search text does not parse",
        EngineError::Unreachable { .. } => "The engine cannot be reached",
        EngineError::Timeout { .. } => "The engine did not answer in time",
        EngineError::Status {
            status: 403,
            kind: Some(k),
            ..
        } if k == "saltscope_proxy_refused" => "Saltscope's proxy refused this request",
        EngineError::Status { status: 403, .. } => "The engine refused this user",
        EngineError::Status { .. } => "The engine answered with an error",
        EngineError::BadResponse { .. } => "The engine's answer could not be read",
        EngineError::NotFound { .. } => "Not in the engine",
        EngineError::Config(_) => "config.json is not valid",
    };
    let at_startup = session
        .startup
        .with_untracked(|s| matches!(s, Some(Err(e)) if *e == error));
    let again = move |_| match (at_startup, retry) {
        (true, _) => session.connect(),
        (false, Some(r)) => r.run(()),
        (false, None) => {}
    };
    let can_retry = (at_startup || retry.is_some()) && !bad_search;
    let countdown = move || {
        at_startup
            .then(|| session.next_try.get())
            .flatten()
            .map(|s| format!("Trying again in {s} s. "))
    };
    view! {
        <div class="error-panel" role="alert">
            <strong>{title}</strong>
            <p class="error-detail">{error.to_string()}</p>
            {error.advice().map(|a| view! { <p class="error-advice">{a}</p> })}
            {can_retry.then(|| view! {
                <p>{countdown}<button type="button" on:click=again>{if at_startup { "Retry now" } else { "Retry" }}</button></p>
            })}
        </div>
    }
    .into_any()
}

/// Notes about data that was odd or incomplete: shown, never swallowed.
#[component]
pub fn Notes(notes: Vec<String>) -> impl IntoView {
    (!notes.is_empty()).then(|| {
        view! {
            <ul class="notes" aria-label="Notes">
                {notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
            </ul>
        }
    })
}
