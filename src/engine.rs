//! HTTP to Elasticsearch/OpenSearch. Every request goes through
//! [`Engine::send`], so auth headers and host failover have one home.

use gloo_net::http::{Request, RequestBuilder};
use saltscope_core::config::AppConfig;
use saltscope_core::engine::{
    msearch_body, split_msearch, EngineError, ProductInfo, SearchRequest,
};
use saltscope_core::export::HttpRequest;
use saltscope_core::query::FieldMap;
use serde_json::Value;
use web_sys::{AbortController, AbortSignal, RequestCache};

use crate::fetcher::InFlight;

/// A connected engine: where it is, what it is, and how its fields are mapped.
#[derive(Clone, Debug)]
pub struct Engine {
    pub config: AppConfig,
    pub product: ProductInfo,
    pub fields: FieldMap,
}

/// Reads `config.json` (never cached: operators edit it in place), then asks
/// the engine what it is and how the Salt fields are mapped.
pub async fn connect() -> Result<Engine, EngineError> {
    let url = absolute("/config.json");
    let response = Request::get("/config.json")
        .cache(RequestCache::NoStore)
        .send()
        .await
        .map_err(|e| unreachable(&url, e))?;
    let text = response.text().await.map_err(|e| unreachable(&url, e))?;
    if !response.ok() {
        return Err(EngineError::Config(format!(
            "{url} answered {}",
            response.status()
        )));
    }
    let config = AppConfig::parse(&text)?;
    let root_url = format!("{}/", config.engine_url);
    let root = get_json(&root_url, None).await?;
    let product = ProductInfo::from_root(&absolute(&root_url), &root)?;
    let caps_url = format!(
        "{}/{},{},{}/_field_caps?fields={}&ignore_unavailable=true&allow_no_indices=true",
        config.engine_url,
        config.index_pattern,
        config.event_index_pattern,
        config.job_cache_index,
        FieldMap::caps_fields()
    );
    let fields = FieldMap::from_field_caps(&get_json(&caps_url, None).await?);
    Ok(Engine {
        config,
        product,
        fields,
    })
}

impl Engine {
    /// The noisy functions this browser hides: the person's own list if
    /// they changed it, else config.json's.
    pub fn noisy(&self) -> Vec<String> {
        crate::ui::prefs::noisy_functions().unwrap_or_else(|| self.config.noisy_functions.clone())
    }

    /// Why a view may find nothing: Salt's fields are not in the mapping.
    pub fn mapping_notes(&self) -> Vec<String> {
        let missing = self.fields.returns_unmapped();
        if missing.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "the indices matching `{}` have no field {}: no Salt return has been indexed there yet",
            self.config.index_pattern,
            missing
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )]
    }

    /// One `_msearch` round trip; each search's answer or error, in order.
    pub async fn msearch(
        &self,
        searches: &[SearchRequest],
        signal: Option<&AbortSignal>,
    ) -> Result<Vec<Result<Value, EngineError>>, EngineError> {
        let url = format!("{}/_msearch", self.config.engine_url);
        let request = Request::post(&url)
            .header("Content-Type", "application/x-ndjson")
            .abort_signal(signal)
            .body(msearch_body(searches))
            .map_err(|e| unreachable(&url, e))?;
        let answer = send(&url, request.send()).await?;
        Ok(split_msearch(&absolute(&url), &answer, searches.len()))
    }
}

impl Engine {
    /// Sends a request the core planned (the export's point-in-time open,
    /// pages and close) from this thread, at once: see [`crate::fetcher`].
    pub fn start(&self, planned: &HttpRequest) -> InFlight {
        InFlight::on_main_thread(&self.url_of(planned), planned)
    }

    /// The absolute URL of a planned request (the worker resolves relative
    /// URLs against its own script's).
    pub fn url_of(&self, planned: &HttpRequest) -> String {
        absolute(&format!("{}{}", self.config.engine_url, planned.path))
    }
}

async fn get_json(url: &str, signal: Option<&AbortSignal>) -> Result<Value, EngineError> {
    send(
        url,
        with_defaults(Request::get(url)).abort_signal(signal).send(),
    )
    .await
}

fn with_defaults(builder: RequestBuilder) -> RequestBuilder {
    builder.header("Accept", "application/json")
}

async fn send(
    url: &str,
    pending: impl std::future::Future<Output = Result<gloo_net::http::Response, gloo_net::Error>>,
) -> Result<Value, EngineError> {
    let shown = absolute(url);
    let response = pending.await.map_err(|e| unreachable(&shown, e))?;
    let body = response.text().await.map_err(|e| unreachable(&shown, e))?;
    // gloo-net does not fail on 4xx/5xx: the status decides.
    if !response.ok() {
        return Err(EngineError::from_status(&shown, response.status(), &body));
    }
    serde_json::from_str(&body).map_err(|e| EngineError::BadResponse {
        url: shown,
        detail: format!("not JSON ({e})"),
    })
}

fn unreachable(url: &str, error: gloo_net::Error) -> EngineError {
    crate::fetcher::unreachable(url, &error.to_string())
}

/// URLs in messages are shown absolute, so `/es/_msearch` says which host.
pub(crate) fn absolute(url: &str) -> String {
    if url.starts_with('/') {
        let origin = web_sys::window()
            .and_then(|w| w.location().origin().ok())
            .unwrap_or_default();
        format!("{origin}{url}")
    } else {
        url.to_string()
    }
}

/// Aborts the previous request of a view when its input changes, so a slow
/// outdated answer never overwrites a newer one.
#[derive(Default)]
pub struct Aborter(Option<AbortController>);

impl Aborter {
    pub fn renew(&mut self) -> Option<AbortSignal> {
        if let Some(old) = self.0.take() {
            old.abort();
        }
        let controller = AbortController::new().ok()?;
        let signal = controller.signal();
        self.0 = Some(controller);
        Some(signal)
    }
}
