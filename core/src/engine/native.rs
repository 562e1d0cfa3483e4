//! The native exchange over ureq, for everything that runs natively against
//! a real engine: the integration tests, the generator and the benchmarks.
//! Blocking underneath: a request is sent when its future is first polled.

use std::time::Duration;

use super::{Client, ClientSettings, Exchange, ExchangeError, Exchanged, HttpRequest, Method};

#[derive(Clone)]
pub struct NativeExchange {
    agent: ureq::Agent,
}

/// The client the native tools use: one or several hosts, a deadline per
/// request, retries of 429/503.
pub type NativeTransport = Client<NativeExchange>;

/// A client of the engine at `hosts` (`http://127.0.0.1:9200`).
pub fn native_client(hosts: &[&str], timeout: Duration) -> NativeTransport {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let hosts = hosts
        .iter()
        .map(|h| h.trim_end_matches('/').to_string())
        .collect();
    Client::new(
        NativeExchange { agent },
        ClientSettings::new(hosts, timeout.as_millis() as u64),
    )
}

impl NativeExchange {
    fn call(
        &self,
        url: &str,
        request: &HttpRequest,
        headers: &[(&'static str, String)],
        timeout: Duration,
    ) -> Result<Exchanged, ureq::Error> {
        let body = request.body.text();
        let content_type = request.body.content_type().unwrap_or("application/json");
        let mut builder = match request.method {
            Method::Get => ureq::http::Request::get(url),
            Method::Head => ureq::http::Request::head(url),
            Method::Post => ureq::http::Request::post(url),
            Method::Put => ureq::http::Request::put(url),
            Method::Delete => ureq::http::Request::delete(url),
        };
        for (name, value) in headers {
            builder = builder.header(*name, value);
        }
        if request.body.content_type().is_some() {
            builder = builder.header("Content-Type", content_type);
        }
        let http = builder
            .body(body)
            .map_err(|e| ureq::Error::BadUri(e.to_string()))?;
        let http = self
            .agent
            .configure_request(http)
            .timeout_global(Some(timeout))
            .build();
        let mut response = self.agent.run(http)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response
            .body_mut()
            .with_config()
            .limit(1024 * 1024 * 1024)
            .read_to_vec()?;
        Ok(Exchanged {
            status,
            body,
            retry_after,
        })
    }
}

impl Exchange for NativeExchange {
    async fn exchange(
        &self,
        url: &str,
        request: &HttpRequest,
        headers: &[(&'static str, String)],
        timeout_ms: u64,
    ) -> Result<Exchanged, ExchangeError> {
        self.call(url, request, headers, Duration::from_millis(timeout_ms))
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => ExchangeError::Deadline,
                other => ExchangeError::Network(other.to_string()),
            })
    }

    async fn sleep(&self, ms: u64) {
        std::thread::sleep(Duration::from_millis(ms));
    }

    fn jitter(&self) -> f64 {
        // The clock's nanoseconds: enough to keep clients apart.
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| f64::from(d.subsec_nanos()) / 1e9)
            .unwrap_or(0.5)
    }
}

/// Runs a future of the core (a view, an export) to its end on this thread.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    futures_executor::block_on(future)
}
