//! The one road to the engine: every request of every view, of the export
//! and of start-up goes through a [`Transport`]. The web app implements it
//! once over `fetch` (and the export's Web Worker); [`native`](super::native)
//! implements it over ureq for the integration tests, the generator and the
//! benchmarks. Whatever all requests need — credentials, several hosts,
//! deadlines, retries — belongs in a transport and nowhere else.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{EngineError, HttpRequest};

/// A 2xx answer: its body, and the URL that answered (for messages).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub url: String,
    pub body: Vec<u8>,
}

/// A reply, or what went wrong (network, deadline, 4xx/5xx with the engine's
/// reason).
pub type Answer = Result<Reply, EngineError>;

/// Sends a request and hands back the answer's bytes. Not `Send`: the
/// browser's futures live on one thread.
///
/// A request must be on its way once its future has been polled once, and
/// dropping the future abandons it: the export asks for the next page, polls
/// it once, then turns this page into CSV while the engine works.
#[allow(async_fn_in_trait)]
pub trait Transport {
    /// The absolute URL a request goes to, as messages show it.
    fn url(&self, path: &str) -> String;

    async fn send(&self, request: &HttpRequest) -> Answer;

    /// Waits `ms` before the next request (the export, while a cluster
    /// reassigns the shards of a node that left).
    async fn pause(&self, ms: u64);
}

/// Reads an HTTP exchange the way every transport must: a 2xx is the body,
/// anything else the engine's error with its reason.
pub fn reply(url: &str, status: u16, body: Vec<u8>) -> Answer {
    if (200..300).contains(&status) {
        Ok(Reply {
            url: url.to_string(),
            body,
        })
    } else {
        Err(EngineError::from_status(
            url,
            status,
            &String::from_utf8_lossy(&body),
        ))
    }
}

impl Reply {
    /// The body as JSON of type `T`, or a `BadResponse` naming the URL.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, EngineError> {
        serde_json::from_slice(&self.body).map_err(|e| EngineError::BadResponse {
            url: Some(self.url.clone()),
            detail: format!("not the JSON expected ({e})"),
        })
    }
}

/// Sends `request` and reads its answer as JSON.
pub async fn send_json<T: Transport>(t: &T, request: &HttpRequest) -> Result<Value, EngineError> {
    t.send(request).await?.json()
}
