//! Pages and components. Each page reads its input from the URL and asks
//! `api` for its data; components draw what they are given.

mod audit;
mod error;
mod export;
mod filter_bar;
mod functions;
mod histogram;
mod job_list;
mod job_page;
mod minions;
pub mod prefs;
mod states;
mod value;

use leptos::prelude::*;
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;
use saltscope_core::engine::EngineError;

use crate::engine::{connect, Engine};

/// The connection to the engine, shared by every page: pages await it
/// before their own requests, so a bad config or a down engine shows on
/// whatever page was opened.
pub type Connection = LocalResource<Result<Engine, EngineError>>;

#[component]
pub fn App() -> impl IntoView {
    let connection: Connection = LocalResource::new(connect);
    provide_context(connection);
    view! {
        <Router>
            <header class="topbar">
                <a href="/" class="brand">"Saltscope"</a>
                <nav>
                    <a href="/">"Jobs"</a>
                    <a href="/minions">"Minions"</a>
                    <a href="/functions">"Functions"</a>
                    <a href="/audit">"Audit"</a>
                </nav>
                <EngineBadge/>
            </header>
            <main>
                <Routes fallback=|| view! { <p class="notice">"No such page."</p> }>
                    <Route path=path!("/") view=job_list::JobListPage/>
                    <Route path=path!("/job/:jid") view=job_page::JobPage/>
                    <Route path=path!("/minions") view=minions::MinionsPage/>
                    <Route path=path!("/minion/:id") view=minions::MinionPage/>
                    <Route path=path!("/functions") view=functions::FunctionsPage/>
                    <Route path=path!("/function/:fun") view=functions::FunctionPage/>
                    <Route path=path!("/audit") view=audit::AuditPage/>
                </Routes>
            </main>
        </Router>
    }
}

/// Which engine answers, or why none does.
#[component]
fn EngineBadge() -> impl IntoView {
    let connection = expect_context::<Connection>();
    move || {
        match connection.get() {
        None => view! { <span class="engine">"connecting…"</span> }.into_any(),
        Some(Ok(engine)) => view! {
            <span class="engine" title=engine.config.engine_url.clone()>{engine.product.label()}</span>
        }
        .into_any(),
        Some(Err(_)) => view! { <span class="engine engine-down">"engine unavailable"</span> }.into_any(),
    }
    }
}

pub fn use_connection() -> Connection {
    expect_context::<Connection>()
}
