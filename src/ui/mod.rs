//! Pages and components. Each page reads its input from the URL, asks the
//! core one question (`saltscope_core::views`) through [`use_view`], and
//! draws the answer; components draw what they are given.

mod audit;
mod choice;
mod compare;
mod credentials;
mod drift;
mod error;
mod events;
mod export;
mod failures;
mod filter_bar;
mod fleet;
mod functions;
mod histogram;
mod job_list;
mod job_page;
mod live_tail;
mod location;
mod minions;
pub mod prefs;
mod scan;
mod sls;
mod states;
mod timeline;
mod value;
mod visible;

use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::Arc;

use js_sys::{Array, Promise};
use leptos::prelude::*;
use leptos::task::spawn_local;
use saltscope_core::engine::{ClientEvent, EngineError};
use saltscope_core::query::QueryContext;
use saltscope_core::route::{page_title, Page};
use saltscope_core::views::{self, Connection};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal};

use crate::transport::{client, load_config, now_ms, scoped, sleep, timer, BrowserTransport};

/// The engine, once start-up has read config.json and asked it what it is.
#[derive(Clone)]
pub struct Engine {
    pub transport: BrowserTransport,
    pub connection: Rc<Connection>,
}

impl Engine {
    /// The context of a view's searches, now: the functions this person
    /// hides as noise (`None`: config.json's list).
    pub fn context(&self, noisy: Option<Vec<String>>) -> QueryContext {
        let noisy = noisy.unwrap_or_else(|| self.connection.config.noisy_functions.clone());
        self.connection.context(noisy, now_ms())
    }

    fn scoped(&self, signal: Option<AbortSignal>) -> Engine {
        Engine {
            transport: scoped(&self.transport, signal),
            connection: self.connection.clone(),
        }
    }
}

/// The app's connection to the engine, shared by every page: pages wait
/// for it, so a bad config or a down engine shows on whatever page was
/// opened; a failed start-up is tried again by itself.
#[derive(Clone, Copy)]
pub struct Session {
    pub startup: RwSignal<Option<Result<Engine, EngineError>>, LocalStorage>,
    /// What the client is doing that a person should see ("retrying in 2 s").
    pub activity: RwSignal<Option<String>>,
    /// The engine host that answers.
    pub host: RwSignal<String>,
    /// Seconds until start-up is tried again, while it is failing.
    pub next_try: RwSignal<Option<u32>>,
    /// Who signed in (the app's own form), if anyone.
    pub signed_in: RwSignal<Option<String>>,
    client: StoredValue<Option<BrowserTransport>, LocalStorage>,
    tries: StoredValue<u32>,
    /// Resolves the promise [`start`] waits on before the first render.
    config_read: StoredValue<Option<js_sys::Function>, LocalStorage>,
}

pub fn use_session() -> Session {
    expect_context::<Session>()
}

impl Session {
    fn new() -> Session {
        Session {
            startup: RwSignal::new_local(None),
            activity: RwSignal::new(None),
            host: RwSignal::new(String::new()),
            next_try: RwSignal::new(None),
            signed_in: RwSignal::new(credentials::remembered().map(|c| c.who())),
            client: StoredValue::new_local(None),
            tries: StoredValue::new(0),
            config_read: StoredValue::new_local(None),
        }
    }

    /// The client, once config.json is read (credentials live in it).
    pub fn client(&self) -> Option<BrowserTransport> {
        self.client.get_value()
    }

    /// (Re)connects: reads config.json (once), asks the engine what it is.
    /// A failure other than missing credentials is tried again after 2, 4,
    /// 8 … 30 s, counting down where a person sees it.
    pub fn connect(self) {
        let attempt = self.tries.get_value() + 1;
        self.tries.set_value(attempt);
        self.next_try.set(None);
        spawn_local(async move {
            let result = self.start().await;
            if self.tries.get_value() != attempt {
                return; // a newer attempt runs
            }
            let retry = match &result {
                Err(EngineError::Status { status: 401, .. }) | Ok(_) => false,
                Err(EngineError::Config(_)) => false,
                Err(_) => true,
            };
            self.startup.set(Some(result));
            if retry {
                let wait = 2u32.saturating_pow(attempt.min(5)).min(30);
                for left in (1..=wait).rev() {
                    if self.tries.get_value() != attempt {
                        return;
                    }
                    self.next_try.set(Some(left));
                    sleep(1000).await;
                }
                if self.tries.get_value() == attempt {
                    self.connect();
                }
            } else {
                self.tries.set_value(0);
            }
        });
    }

    async fn start(self) -> Result<Engine, EngineError> {
        let config = load_config().await;
        if let Some(resolve) = self.config_read.try_update_value(Option::take).flatten() {
            // The first render waits in its own task: the engine's first
            // requests, sent below in this one, leave before it.
            let _ = resolve.call0(&JsValue::NULL);
        }
        let config = config?;
        let transport = match self.client.get_value() {
            Some(c) => c,
            None => {
                let c = client(&config);
                c.set_credentials(credentials::remembered());
                let (activity, host) = (self.activity, self.host);
                c.listen(move |event| match event {
                    ClientEvent::Retrying {
                        url, status, in_ms, ..
                    } => {
                        activity.set(Some(format!(
                            "{url} answered {status}: retrying in {} s",
                            in_ms.div_ceil(1000)
                        )));
                    }
                    ClientEvent::Answered { host: h } => host.set(h.clone()),
                });
                self.host.set(c.host());
                self.client.set_value(Some(c.clone()));
                c
            }
        };
        let connection = views::connect(&transport, config).await?;
        self.activity.set(None);
        Ok(Engine {
            transport,
            connection: Rc::new(connection),
        })
    }
}

/// A view's answer, and whether a newer one is on its way (the last answer
/// stays on screen meanwhile: an auto-refresh never blanks the page).
pub struct ViewData<T: Send + Sync + 'static> {
    asking: Asking,
    pub loading: RwSignal<bool>,
    of: PhantomData<fn() -> T>,
}

impl<T: Send + Sync + 'static> Clone for ViewData<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Send + Sync + 'static> Copy for ViewData<T> {}

impl<T: Send + Sync + 'static> ViewData<T> {
    /// Whether no answer has come yet.
    pub fn pending(&self) -> bool {
        self.asking.answer.with(Option::is_none)
    }

    /// The answer when it is not an error.
    pub fn ok(&self) -> Option<Arc<T>> {
        self.asking
            .answer
            .with(|a| a.as_ref().and_then(|r| r.as_ref().ok().cloned()))
            .and_then(|a| a.downcast().ok())
    }

    pub fn error(&self) -> Option<EngineError> {
        self.asking
            .answer
            .with(|a| a.as_ref().and_then(|r| r.as_ref().err().cloned()))
    }

    /// Asks again (the Retry button).
    pub fn retry(&self) -> Callback<()> {
        let again = self.asking.again;
        Callback::new(move |()| again.update(|n| *n += 1))
    }
}

/// A view's answer, whatever its type.
type Answer = Arc<dyn Any + Send + Sync>;

/// What asking the engine for a view does, whatever the view: one copy in
/// the wasm, where it was one per view (13) when it lived in [`use_view`],
/// each with the reactive machinery of its own answer type.
#[derive(Clone, Copy)]
struct Asking {
    session: Session,
    answer: RwSignal<Option<Result<Answer, EngineError>>>,
    loading: RwSignal<bool>,
    again: RwSignal<u32>,
    current: StoredValue<Option<AbortController>, LocalStorage>,
}

impl Asking {
    fn new() -> Asking {
        Asking {
            session: use_session(),
            answer: RwSignal::new(None),
            loading: RwSignal::new(true),
            again: RwSignal::new(0),
            current: StoredValue::new_local(None),
        }
    }

    /// Aborts the request before; once connected, the engine to ask, scoped
    /// to a new abort signal. Tracks the Retry button and the connection.
    fn begin(self) -> Option<(Engine, Option<AbortSignal>)> {
        self.again.track();
        let engine = self.session.startup.get();
        self.abort();
        let engine = match engine? {
            Err(e) => {
                self.answer.set(Some(Err(e)));
                self.loading.set(false);
                return None;
            }
            Ok(engine) => engine,
        };
        let controller = AbortController::new().ok();
        let signal = controller.as_ref().map(AbortController::signal);
        self.current.set_value(controller);
        self.loading.set(true);
        Some((engine.scoped(signal.clone()), signal))
    }

    /// Shows the answer, unless a newer request or the view's end aborted it.
    fn finish(
        self,
        name: &'static str,
        signal: Option<AbortSignal>,
        answer: Result<Answer, EngineError>,
    ) {
        if signal.as_ref().is_some_and(AbortSignal::aborted) {
            return; // superseded, or the view is gone
        }
        self.session.activity.try_set(None);
        mark(&format!("saltscope:answered:{name}"));
        self.answer.try_set(Some(answer));
        self.loading.try_set(false);
        mark_painted(name);
    }

    fn abort(self) {
        if let Some(c) = self.current.try_update_value(Option::take).flatten() {
            c.abort();
        }
    }
}

/// Asks the core `ask(engine, input)` whenever `input` changes. The request
/// before it is aborted (a slow outdated answer never overwrites a newer
/// one), and so is the last one when the view goes away. When an answer is
/// on screen the app marks it (`performance.mark("saltscope:painted:<name>")`,
/// at the next frame), and marks `saltscope:answered:<name>` when the core's
/// answer is in, before drawing: the benchmark reads these marks.
pub fn use_view<I, T, Fut>(
    name: &'static str,
    input: impl Fn() -> I + 'static,
    ask: impl Fn(Engine, I) -> Fut + 'static,
) -> ViewData<T>
where
    I: 'static,
    T: Send + Sync + 'static,
    Fut: Future<Output = Result<T, EngineError>> + 'static,
{
    let asking = Asking::new();
    let ask = Rc::new(ask);
    Effect::new(move |_| {
        let input = input();
        let Some((engine, signal)) = asking.begin() else {
            return;
        };
        let ask = ask.clone();
        spawn_local(async move {
            let answer = ask(engine, input).await;
            asking.finish(name, signal, answer.map(|t| Arc::new(t) as Answer));
        });
    });
    on_cleanup(move || asking.abort());
    ViewData {
        asking,
        loading: asking.loading,
        of: PhantomData,
    }
}

/// `performance.mark("saltscope:painted:<view>")` at the next animation
/// frame: the answer is in the DOM and about to be drawn.
fn mark_painted(view: &'static str) {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let Some(window) = web_sys::window() else {
        return;
    };
    let at_frame = Closure::once_into_js(move || mark(&format!("saltscope:painted:{view}")));
    let _ = window.request_animation_frame(at_frame.unchecked_ref());
}

/// `performance.mark(name)`, now.
fn mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}

/// Starts the app: reads config.json (index.html preloads it) and sends
/// the engine's first requests, then draws the page. Drawn first, the page
/// and the browser's painting of it (~80 ms on a cold start here) came
/// before those requests instead of beside their round trip. The page
/// waits at most 200 ms for config.json, so a slow one shows "connecting…".
pub fn start() {
    // mount_to_body sets Leptos' executor up; start-up's task comes first.
    let _ = any_spawner::Executor::init_wasm_bindgen();
    let session = Session::new();
    let config_read = Promise::new(&mut |resolve, _| session.config_read.set_value(Some(resolve)));
    session.connect();
    spawn_local(async move {
        let _ = JsFuture::from(Promise::race(&Array::of2(&config_read, &timer(200)))).await;
        leptos::mount::mount_to_body(move || view! { <App session/> });
    });
}

#[component]
fn App(session: Session) -> impl IntoView {
    provide_context(session);
    prefs::provide_prefs();
    location::provide_location();
    view! {
        <header class="topbar">
            <a href="/" class="brand">"Saltscope"</a>
            <nav aria-label="Views">
                <a href="/">"Jobs"</a>
                <a href="/fleet">"Fleet"</a>
                <a href="/minions">"Minions"</a>
                <a href="/drift">"Drift"</a>
                <a href="/failures">"Failures"</a>
                <a href="/sls">"SLS"</a>
                <a href="/functions">"Functions"</a>
                <a href="/events">"Events"</a>
                <a href="/audit">"Audit"</a>
            </nav>
            <EngineBadge/>
            <credentials::SignedIn/>
        </header>
        <Activity/>
        <main>
            <Pages/>
        </main>
        <footer class="footer">{move || {
            let host = session.host.get();
            (!host.is_empty()).then(|| format!("Engine at {host}"))
        }}</footer>
    }
}

/// The view the location names (the core's route table, [`Page`]): drawn
/// anew when the path changes, not when only the query does. One match
/// instead of the router's `<Routes>`, whose route tuple cost the wasm a
/// copy of its matching code per route.
#[component]
fn Pages() -> impl IntoView {
    let location = location::use_location();
    let page = Memo::new(move |_| Page::from_path(&location.pathname.get()));
    Effect::new(move |_| document().set_title(&page_title(page.get().as_ref())));
    move || match page.get() {
        Some(Page::Jobs) => view! { <job_list::JobListPage/> }.into_any(),
        Some(Page::Job(jid)) => view! { <job_page::JobPage jid=jid/> }.into_any(),
        Some(Page::Fleet) => view! { <fleet::FleetPage/> }.into_any(),
        Some(Page::Compare) => view! { <compare::ComparePage/> }.into_any(),
        Some(Page::Drift) => view! { <drift::DriftPage/> }.into_any(),
        Some(Page::Failures) => view! { <failures::FailuresPage/> }.into_any(),
        Some(Page::Sls) => view! { <sls::SlsPage/> }.into_any(),
        Some(Page::Minions) => view! { <minions::MinionsPage/> }.into_any(),
        Some(Page::Minion(id)) => view! { <minions::MinionPage id=id/> }.into_any(),
        Some(Page::Functions) => view! { <functions::FunctionsPage/> }.into_any(),
        Some(Page::Function(fun)) => view! { <functions::FunctionPage fun=fun/> }.into_any(),
        Some(Page::Events) => view! { <events::EventsPage/> }.into_any(),
        Some(Page::Audit) => view! { <audit::AuditPage/> }.into_any(),
        None => view! { <p class="notice">"No such page."</p> }.into_any(),
    }
}

/// Which engine answers, or why none does.
#[component]
fn EngineBadge() -> impl IntoView {
    let session = use_session();
    move || match session.startup.get() {
        None => view! { <span class="engine">"connecting…"</span> }.into_any(),
        Some(Ok(engine)) => {
            let label = engine.connection.product.label();
            view! { <span class="engine">{label}</span> }.into_any()
        }
        Some(Err(_)) => {
            view! { <span class="engine engine-down">"engine unavailable"</span> }.into_any()
        }
    }
}

/// What the client is doing that takes time: retrying a busy engine.
#[component]
fn Activity() -> impl IntoView {
    let session = use_session();
    move || {
        session
            .activity
            .get()
            .map(|text| view! { <p class="activity" role="status">{text}</p> })
    }
}
