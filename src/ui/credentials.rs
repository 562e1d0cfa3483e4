//! Per-person sign-in, for an engine (or an authenticating front) that asks
//! for credentials: the app's own form instead of a blank page or the
//! browser's native prompt. The secret stays in memory, in the client that
//! sends every request (the export's worker included); "Remember for this
//! tab" keeps it in sessionStorage, which the tab forgets when it closes.
//! Never localStorage, the URL, config.json or a log.

use leptos::html::Input;
use leptos::prelude::*;
use saltscope_core::engine::Credentials;
use saltscope_core::text::json_text;
use serde_json::json;

use super::{use_session, Session};

const TAB_KEY: &str = "saltscope.credentials";

fn tab_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok()?
}

/// Credentials this tab was asked to remember.
pub fn remembered() -> Option<Credentials> {
    let text = tab_storage()?.get_item(TAB_KEY).ok()??;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    match (
        v["user"].as_str(),
        v["password"].as_str(),
        v["api_key"].as_str(),
    ) {
        (Some(user), Some(password), _) => Some(Credentials::Basic {
            user: user.into(),
            password: password.into(),
        }),
        (_, _, Some(key)) => Some(Credentials::ApiKey(key.into())),
        _ => None,
    }
}

fn remember(credentials: Option<&Credentials>) {
    let Some(s) = tab_storage() else { return };
    let _ = match credentials {
        Some(Credentials::Basic { user, password }) => s.set_item(
            TAB_KEY,
            &json_text(&json!({"user": user, "password": password})),
        ),
        Some(Credentials::ApiKey(key)) => {
            s.set_item(TAB_KEY, &json_text(&json!({ "api_key": key })))
        }
        None => s.remove_item(TAB_KEY),
    };
}

/// Signs in with `credentials` (or out with `None`) and connects again:
/// every view asks again with them.
fn sign(session: Session, credentials: Option<Credentials>, keep: bool) {
    if let Some(client) = session.client() {
        client.set_credentials(credentials.clone());
    }
    remember(if keep { credentials.as_ref() } else { None });
    session.signed_in.set(credentials.map(|c| c.who()));
    session.connect();
}

/// The sign-in form, shown where the engine answered 401.
#[component]
pub fn SignIn(reason: String) -> impl IntoView {
    let session = use_session();
    let with_key = RwSignal::new(false);
    let (user, password, key, keep) = (
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
    );
    let value = |r: NodeRef<Input>| r.get_untracked().map(|e| e.value()).unwrap_or_default();
    let submit = move |ev: web_sys::SubmitEvent| {
        ev.prevent_default();
        let credentials = if with_key.get_untracked() {
            Credentials::ApiKey(value(key).trim().to_string())
        } else {
            Credentials::Basic {
                user: value(user).trim().to_string(),
                password: value(password),
            }
        };
        let remember = keep.get_untracked().is_some_and(|e| e.checked());
        sign(session, Some(credentials), remember);
    };
    let tried = session.signed_in.get_untracked().is_some();
    view! {
        <form class="sign-in" aria-label="Sign in to the engine" on:submit=submit>
            <h2>"Sign in to the engine"</h2>
            <p class="notice">{if tried {
                format!("The engine did not accept these credentials: {reason}")
            } else {
                format!("The engine asks who you are: {reason}")
            }}</p>
            <fieldset>
                <legend>"Sign in with"</legend>
                <label><input type="radio" name="method" prop:checked=move || !with_key.get()
                    on:change=move |_| with_key.set(false)/>" user and password"</label>
                <label><input type="radio" name="method" prop:checked=move || with_key.get()
                    on:change=move |_| with_key.set(true)/>" an API key"</label>
            </fieldset>
            <div class:hidden=move || with_key.get()>
                <label>"User " <input node_ref=user name="username" autocomplete="username"/></label>
                <label>"Password " <input node_ref=password type="password" name="password" autocomplete="current-password"/></label>
            </div>
            <div class:hidden=move || !with_key.get()>
                <label>"API key " <input node_ref=key type="password" name="api-key" autocomplete="off"/></label>
            </div>
            <label><input node_ref=keep type="checkbox" name="remember"/>" Remember for this tab"</label>
            <button type="submit">"Sign in"</button>
        </form>
    }
}

/// Who is signed in, and Sign out, in the top bar.
#[component]
pub fn SignedIn() -> impl IntoView {
    let session = use_session();
    move || {
        session.signed_in.get().map(|who| {
            view! {
                <span class="signed-in">{format!("Signed in: {who} ")}
                    <button type="button" on:click=move |_| sign(session, None, false)>"Sign out"</button>
                </span>
            }
        })
    }
}
