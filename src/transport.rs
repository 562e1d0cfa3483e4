//! The web app's one road to the engine: the core's `Client` (hosts,
//! deadlines, retries, credentials) over [`BrowserExchange`], whose
//! [`fetch`] is the only place the app calls `fetch()`, unless an export
//! sends it through its Web Worker (`crate::worker`).

use std::future::Future;
use std::rc::Rc;

use futures_util::future::{select, Either};
use js_sys::{Array, Promise, Uint8Array};
use saltscope_core::config::{AppConfig, ConfigError};
use saltscope_core::engine::{
    reply, Client, ClientSettings, EngineError, Exchange, ExchangeError, Exchanged, HttpRequest,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal, Headers, RequestCache, RequestInit, Response};

use crate::worker::ExportWorker;

/// The app's transport: a `Client` over `fetch`.
pub type BrowserTransport = Client<BrowserExchange>;

/// `fetch()`, aborted by `scope` (a view's requests, when its input
/// changes or the view goes away) and when its future is dropped; or an
/// export's worker's. One type for both: the client's code is generic over
/// it, and was in the wasm twice.
#[derive(Clone, Default)]
pub struct BrowserExchange {
    scope: Option<AbortSignal>,
    worker: Option<Rc<ExportWorker>>,
}

impl BrowserExchange {
    /// An export's exchange: through its worker when one started.
    pub fn through(worker: Option<ExportWorker>) -> BrowserExchange {
        BrowserExchange {
            scope: None,
            worker: worker.map(Rc::new),
        }
    }
}

/// The client of the engine(s) config.json names.
pub fn client(config: &AppConfig) -> BrowserTransport {
    let hosts = config.engine_url.iter().map(|u| absolute(u)).collect();
    Client::new(
        BrowserExchange::default(),
        ClientSettings::new(hosts, config.request_timeout_ms),
    )
}

/// The same client, its requests aborted by `signal`.
pub fn scoped(client: &BrowserTransport, signal: Option<AbortSignal>) -> BrowserTransport {
    client.with_exchange(BrowserExchange {
        scope: signal,
        worker: None,
    })
}

impl Exchange for BrowserExchange {
    async fn exchange(
        &self,
        url: &str,
        request: &HttpRequest,
        headers: &[(&'static str, String)],
        timeout_ms: u64,
    ) -> Result<Exchanged, ExchangeError> {
        let sent = async {
            match &self.worker {
                Some(worker) => worker.fetch(url, request, headers).await,
                None => fetch(url, request, headers, self.scope.as_ref()).await,
            }
        };
        within(timeout_ms, sent).await
    }

    async fn sleep(&self, ms: u64) {
        sleep(ms).await
    }

    fn jitter(&self) -> f64 {
        js_sys::Math::random()
    }
}

/// `exchange`, or a deadline error after `ms` (the exchange is dropped,
/// which aborts it).
async fn within(
    ms: u64,
    exchange: impl Future<Output = Result<Exchanged, ExchangeError>>,
) -> Result<Exchanged, ExchangeError> {
    match select(Box::pin(exchange), Box::pin(sleep(ms))).await {
        Either::Left((answer, _)) => answer,
        Either::Right(_) => Err(ExchangeError::Deadline),
    }
}

/// Resolves after `ms` milliseconds.
pub async fn sleep(ms: u64) {
    let _ = JsFuture::from(timer(ms)).await;
}

/// A promise that resolves after `ms` milliseconds.
pub fn timer(ms: u64) -> Promise {
    Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(
                &resolve,
                ms.min(i32::MAX as u64) as i32,
            );
        }
    })
}

/// Aborts its controller when dropped: a request whose future is dropped
/// (a deadline, a cancelled export) stops.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The one `fetch()` of the app: the request with the client's headers,
/// aborted by `scope` or by dropping it.
pub async fn fetch(
    url: &str,
    request: &HttpRequest,
    headers: &[(&'static str, String)],
    scope: Option<&AbortSignal>,
) -> Result<Exchanged, ExchangeError> {
    let failed = |e: JsValue| network(&e);
    let own = AbortOnDrop(AbortController::new().map_err(failed)?);
    let signal = match scope {
        Some(s) => AbortSignal::any(&Array::of2(s, &own.0.signal())),
        None => own.0.signal(),
    };
    let init = RequestInit::new();
    init.set_method(request.method.as_str());
    init.set_cache(RequestCache::NoStore);
    let h = Headers::new().map_err(failed)?;
    for (name, value) in headers {
        h.set(name, value).map_err(failed)?;
    }
    if let Some(kind) = request.body.content_type() {
        h.set("Content-Type", kind).map_err(failed)?;
        init.set_body(&JsValue::from_str(&request.body.text()));
    }
    init.set_headers(&h);
    init.set_signal(Some(&signal));
    let window = web_sys::window().ok_or(ExchangeError::Network("no window".into()))?;
    let answer = async {
        let response: Response = JsFuture::from(window.fetch_with_str_and_init(url, &init))
            .await?
            .dyn_into()?;
        let body = JsFuture::from(response.array_buffer()?).await?;
        Ok::<_, JsValue>((response, body))
    }
    .await;
    let (response, body) = answer.map_err(|e| {
        if signal.aborted() {
            ExchangeError::Aborted
        } else {
            failed(e)
        }
    })?;
    Ok(Exchanged {
        status: response.status(),
        body: Uint8Array::new(&body).to_vec(),
        retry_after: response.headers().get("Retry-After").ok().flatten(),
    })
}

/// A failed `fetch()`: the engine is down, or does not allow this origin.
fn network(e: &JsValue) -> ExchangeError {
    ExchangeError::Network(format!(
        "{} (is the engine running, and does it allow this origin through CORS?)",
        js_detail(e)
    ))
}

/// Reads `config.json` (never cached: operators edit it in place).
pub async fn load_config() -> Result<AppConfig, EngineError> {
    let url = absolute("/config.json");
    let request = HttpRequest::get("/config.json");
    let answer = within(30_000, fetch(&url, &request, &[], None))
        .await
        .map_err(|e| match e {
            ExchangeError::Network(detail) => EngineError::Unreachable {
                url: url.clone(),
                detail,
            },
            _ => EngineError::Timeout {
                url: url.clone(),
                after_ms: 30_000,
            },
        })?;
    let reply = reply(&url, answer.status, answer.body).map_err(|e| match e {
        EngineError::Status { status, .. } => {
            EngineError::Config(ConfigError(format!("{url} answered {status}")))
        }
        other => other,
    })?;
    Ok(AppConfig::parse(&String::from_utf8_lossy(&reply.body))?)
}

pub fn js_detail(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// URLs are kept absolute, so messages say which host (`/es/_msearch` is
/// `http://host/es/_msearch`) and the worker resolves them as the page does.
pub fn absolute(url: &str) -> String {
    if url.starts_with('/') {
        let origin = web_sys::window()
            .and_then(|w| w.location().origin().ok())
            .unwrap_or_default();
        format!("{origin}{url}")
    } else {
        url.to_string()
    }
}

/// Now, in epoch milliseconds.
pub fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}
