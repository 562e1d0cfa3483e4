//! What every request needs, in one place: the engine's hosts (the
//! returner's `hosts:` list — a read that fails on one goes to the next, and
//! the one that answered is remembered), a deadline per request, retries
//! of 429, 503 and a node's "another node just left" with jittered
//! exponential backoff honouring `Retry-After`, and the person's
//! credentials. [`Client`] is the `Transport` the app and the native tools
//! use; below it an [`Exchange`] does one HTTP exchange with one URL
//! (fetch in the browser, the export's Web Worker, ureq natively).

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use base64::Engine as _;

use super::{reply, Answer, EngineError, HttpRequest, Transport};

/// How a person signed in; sent as `Authorization` with every request,
/// kept in memory only. Its `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    Basic {
        user: String,
        password: String,
    },
    /// An Elasticsearch/OpenSearch API key: the base64 `id:key` the engine
    /// hands out (or `id:key` itself, encoded here).
    ApiKey(String),
}

impl Credentials {
    pub fn authorization(&self) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        match self {
            Credentials::Basic { user, password } => {
                format!("Basic {}", b64(&format!("{user}:{password}")))
            }
            Credentials::ApiKey(key) if key.contains(':') => format!("ApiKey {}", b64(key)),
            Credentials::ApiKey(key) => format!("ApiKey {key}"),
        }
    }

    /// Who is signed in, for the top bar.
    pub fn who(&self) -> String {
        match self {
            Credentials::Basic { user, .. } => user.clone(),
            Credentials::ApiKey(_) => "API key".into(),
        }
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Basic { user, .. } => write!(f, "Basic({user}, ***)"),
            Credentials::ApiKey(_) => write!(f, "ApiKey(***)"),
        }
    }
}

/// One exchange's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchanged {
    pub status: u16,
    pub body: Vec<u8>,
    /// The `Retry-After` header, if any.
    pub retry_after: Option<String>,
}

/// Why an exchange got no answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ExchangeError {
    /// The network failed (refused, reset, DNS, CORS).
    Network(String),
    /// No answer within the deadline: the exchange was abandoned.
    Deadline,
    /// Stopped from outside (a newer view's request replaced it).
    Aborted,
}

/// One HTTP exchange with one URL, within `timeout_ms`; and the clock the
/// backoff sleeps on.
#[allow(async_fn_in_trait)]
pub trait Exchange {
    async fn exchange(
        &self,
        url: &str,
        request: &HttpRequest,
        headers: &[(&'static str, String)],
        timeout_ms: u64,
    ) -> Result<Exchanged, ExchangeError>;
    async fn sleep(&self, ms: u64);
    /// A number in [0, 1) for the backoff's jitter.
    fn jitter(&self) -> f64;
}

/// What a person should see happening.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent {
    /// A request is sent again after `in_ms` (see [`busy`]).
    Retrying {
        url: String,
        status: u16,
        in_ms: u64,
        attempt: u32,
    },
    /// Another host answered: it is asked first from now on.
    Answered { host: String },
}

/// The client's settings: hosts as config.json lists them.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientSettings {
    pub hosts: Vec<String>,
    pub timeout_ms: u64,
    /// Retries of a busy answer ([`busy`]) after the first try.
    pub retries: u32,
    /// The first backoff; it doubles each retry, jittered, up to `max_backoff_ms`.
    pub backoff_ms: u64,
    pub max_backoff_ms: u64,
}

impl ClientSettings {
    pub fn new(hosts: Vec<String>, timeout_ms: u64) -> ClientSettings {
        ClientSettings {
            hosts,
            timeout_ms,
            retries: 3,
            backoff_ms: 1000,
            max_backoff_ms: 10_000,
        }
    }
}

type Listener = Rc<dyn Fn(&ClientEvent)>;

struct Shared {
    settings: ClientSettings,
    current: Cell<usize>,
    credentials: RefCell<Option<Credentials>>,
    listener: RefCell<Option<Listener>>,
}

/// The one `Transport`: hosts, deadlines, retries and credentials over an
/// [`Exchange`]. Clones share hosts, credentials and listener, so a clone
/// with another exchange (the export's worker, a view's abortable fetch)
/// behaves the same.
pub struct Client<E> {
    exchange: E,
    shared: Rc<Shared>,
}

impl<E: Clone> Clone for Client<E> {
    fn clone(&self) -> Self {
        Client {
            exchange: self.exchange.clone(),
            shared: self.shared.clone(),
        }
    }
}

impl<E: Exchange> Client<E> {
    pub fn new(exchange: E, settings: ClientSettings) -> Client<E> {
        Client {
            exchange,
            shared: Rc::new(Shared {
                settings,
                current: Cell::new(0),
                credentials: RefCell::new(None),
                listener: RefCell::new(None),
            }),
        }
    }

    /// The same client (hosts, credentials, listener) over another exchange.
    pub fn with_exchange<F: Exchange>(&self, exchange: F) -> Client<F> {
        Client {
            exchange,
            shared: self.shared.clone(),
        }
    }

    pub fn set_credentials(&self, credentials: Option<Credentials>) {
        *self.shared.credentials.borrow_mut() = credentials;
    }

    pub fn credentials(&self) -> Option<Credentials> {
        self.shared.credentials.borrow().clone()
    }

    pub fn listen(&self, listener: impl Fn(&ClientEvent) + 'static) {
        *self.shared.listener.borrow_mut() = Some(Rc::new(listener));
    }

    /// The host asked first: the last that answered.
    pub fn host(&self) -> String {
        let hosts = &self.shared.settings.hosts;
        hosts
            .get(self.shared.current.get())
            .or(hosts.first())
            .cloned()
            .unwrap_or_default()
    }

    pub fn exchange(&self) -> &E {
        &self.exchange
    }

    fn notify(&self, event: ClientEvent) {
        let listener = self.shared.listener.borrow().clone();
        if let Some(l) = listener {
            l(&event);
        }
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![("Accept", "application/json".to_string())];
        if let Some(c) = self.shared.credentials.borrow().as_ref() {
            headers.push(("Authorization", c.authorization()));
        }
        headers
    }

    /// The backoff before retry `attempt` (1, 2, …): `Retry-After` when the
    /// engine says, else exponential with full jitter.
    fn backoff(&self, attempt: u32, retry_after: Option<&str>) -> u64 {
        let s = &self.shared.settings;
        if let Some(secs) = retry_after.and_then(|r| r.trim().parse::<u64>().ok()) {
            // The engine knows best, within reason.
            return (secs * 1000).min(60_000);
        }
        let ceiling = s
            .backoff_ms
            .saturating_mul(1 << (attempt - 1).min(16))
            .min(s.max_backoff_ms);
        // Half fixed, half random: spread, but never a zero wait.
        ceiling / 2 + (self.exchange.jitter() * (ceiling / 2) as f64) as u64
    }
}

/// Whether an answer says "not now" rather than "no": too many requests
/// (429), unavailable (503), or a 500 because a node of the cluster just
/// left, which the cluster's fault detection settles within seconds. A read
/// so answered is sent again after a backoff.
fn busy(x: &Exchanged) -> bool {
    match x.status {
        429 | 503 => true,
        500 => EngineError::from_status("", 500, &String::from_utf8_lossy(&x.body)).is_node_gone(),
        _ => false,
    }
}

/// Statuses after which a read is worth another host: the proxy or the
/// node in between failed, not the request.
fn next_host_status(status: u16) -> bool {
    matches!(status, 502..=504)
}

impl<E: Exchange> Transport for Client<E> {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.host())
    }

    async fn pause(&self, ms: u64) {
        self.exchange.sleep(ms).await;
    }

    async fn send(&self, request: &HttpRequest) -> Answer {
        let settings = &self.shared.settings;
        let hosts = settings.hosts.len().max(1);
        let read = request.is_read();
        let headers = self.headers();
        let mut attempt = 0;
        loop {
            let start = self.shared.current.get();
            let mut last: Option<(String, Result<Exchanged, ExchangeError>)> = None;
            for step in 0..hosts {
                let at = (start + step) % hosts;
                let host = settings.hosts.get(at).cloned().unwrap_or_default();
                let url = format!("{host}{}", request.path);
                let result = self
                    .exchange
                    .exchange(&url, request, &headers, settings.timeout_ms)
                    .await;
                let try_next = read
                    && match &result {
                        Ok(x) => next_host_status(x.status),
                        Err(ExchangeError::Network(_) | ExchangeError::Deadline) => true,
                        Err(ExchangeError::Aborted) => false,
                    };
                if !try_next {
                    if result.as_ref().is_ok_and(|x| x.status < 500) && at != start {
                        self.shared.current.set(at);
                        self.notify(ClientEvent::Answered { host });
                    }
                    last = Some((url, result));
                    break;
                }
                last = Some((url, result));
            }
            let Some((url, result)) = last else {
                return Err(EngineError::BadResponse {
                    url: None,
                    detail: "no engine host in config.json".into(),
                });
            };
            let x = match result {
                Ok(x) => x,
                Err(ExchangeError::Network(detail)) => {
                    return Err(EngineError::Unreachable { url, detail })
                }
                Err(ExchangeError::Deadline) => {
                    return Err(EngineError::Timeout {
                        url,
                        after_ms: settings.timeout_ms,
                    })
                }
                Err(ExchangeError::Aborted) => {
                    return Err(EngineError::Unreachable {
                        url,
                        detail: "the request was stopped".into(),
                    })
                }
            };
            if read && busy(&x) && attempt < settings.retries {
                attempt += 1;
                let in_ms = self.backoff(attempt, x.retry_after.as_deref());
                self.notify(ClientEvent::Retrying {
                    url: url.clone(),
                    status: x.status,
                    in_ms,
                    attempt,
                });
                self.exchange.sleep(in_ms).await;
                continue;
            }
            return reply(&url, x.status, x.body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Body, HttpRequest};
    use std::collections::VecDeque;

    /// A URL asked and the headers sent with it.
    type Asked = (String, Vec<(&'static str, String)>);

    /// Answers each exchange from a script, and records what was asked.
    #[derive(Clone, Default)]
    struct Script {
        answers: Rc<RefCell<VecDeque<Result<Exchanged, ExchangeError>>>>,
        asked: Rc<RefCell<Vec<Asked>>>,
        slept: Rc<RefCell<Vec<u64>>>,
    }

    impl Script {
        fn new(answers: Vec<Result<Exchanged, ExchangeError>>) -> Script {
            let s = Script::default();
            s.answers.borrow_mut().extend(answers);
            s
        }
        fn urls(&self) -> Vec<String> {
            self.asked.borrow().iter().map(|(u, _)| u.clone()).collect()
        }
    }

    impl Exchange for Script {
        async fn exchange(
            &self,
            url: &str,
            _request: &HttpRequest,
            headers: &[(&'static str, String)],
            _timeout_ms: u64,
        ) -> Result<Exchanged, ExchangeError> {
            self.asked
                .borrow_mut()
                .push((url.to_string(), headers.to_vec()));
            self.answers
                .borrow_mut()
                .pop_front()
                .unwrap_or(Err(ExchangeError::Network("script ended".into())))
        }
        async fn sleep(&self, ms: u64) {
            self.slept.borrow_mut().push(ms);
        }
        fn jitter(&self) -> f64 {
            0.5
        }
    }

    fn status(s: u16) -> Result<Exchanged, ExchangeError> {
        Ok(Exchanged {
            status: s,
            body: format!("{{\"status\":{s}}}").into_bytes(),
            retry_after: None,
        })
    }

    fn client(hosts: &[&str], script: &Script) -> Client<Script> {
        let settings = ClientSettings::new(hosts.iter().map(|h| h.to_string()).collect(), 30_000);
        Client::new(script.clone(), settings)
    }

    fn run(c: &Client<Script>, request: HttpRequest) -> Answer {
        futures_executor::block_on(c.send(&request))
    }

    fn search() -> HttpRequest {
        HttpRequest::post("/_msearch", Body::NdJson("{}\n{}\n".into()))
    }

    #[test]
    fn a_read_that_a_dead_host_cannot_answer_goes_to_the_next_which_is_then_asked_first() {
        let script = Script::new(vec![
            Err(ExchangeError::Network("connection refused".into())),
            status(200),
            status(200),
        ]);
        let c = client(&["http://a:9", "http://b:9200"], &script);
        let heard = Rc::new(RefCell::new(Vec::new()));
        let h = heard.clone();
        c.listen(move |e| h.borrow_mut().push(e.clone()));
        assert_eq!(run(&c, search()).unwrap().url, "http://b:9200/_msearch");
        assert_eq!(c.host(), "http://b:9200");
        assert_eq!(
            *heard.borrow(),
            [ClientEvent::Answered {
                host: "http://b:9200".into()
            }]
        );
        run(&c, search()).unwrap();
        assert_eq!(
            script.urls(),
            [
                "http://a:9/_msearch",
                "http://b:9200/_msearch",
                "http://b:9200/_msearch"
            ]
        );
    }

    #[test]
    fn gateway_errors_and_deadlines_fail_over_and_the_last_error_is_shown() {
        let script = Script::new(vec![status(502), Err(ExchangeError::Deadline)]);
        let c = client(&["http://a", "http://b"], &script);
        let e = run(&c, search()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no answer from http://b/_msearch within 30 s"
        );
    }

    #[test]
    fn a_bulk_write_is_never_sent_twice() {
        let script = Script::new(vec![Err(ExchangeError::Deadline), status(200)]);
        let c = client(&["http://a", "http://b"], &script);
        let bulk = HttpRequest::post("/_bulk", Body::NdJson(String::new()));
        assert!(run(&c, bulk).is_err());
        assert_eq!(script.urls(), ["http://a/_bulk"]);
    }

    #[test]
    fn busy_answers_are_retried_with_growing_jittered_waits_and_retry_after_wins() {
        let mut busy = status(429).unwrap();
        busy.retry_after = Some("2".into());
        let script = Script::new(vec![status(503), Ok(busy), status(503), status(200)]);
        let c = client(&["http://a"], &script);
        let heard = Rc::new(RefCell::new(Vec::new()));
        let h = heard.clone();
        c.listen(move |e| h.borrow_mut().push(e.clone()));
        assert!(run(&c, search()).is_ok());
        // 1 s ceiling -> 0.5 + 0.25; Retry-After: 2 s; 4 s ceiling -> 2 + 1.
        assert_eq!(*script.slept.borrow(), [750, 2000, 3000]);
        assert_eq!(heard.borrow().len(), 3);
        assert!(matches!(
            heard.borrow()[1],
            ClientEvent::Retrying {
                status: 429,
                in_ms: 2000,
                attempt: 2,
                ..
            }
        ));
    }

    #[test]
    fn after_a_few_retries_the_engines_answer_stands() {
        let script = Script::new(vec![status(503); 5]);
        let c = client(&["http://a"], &script);
        let e = run(&c, search()).unwrap_err();
        assert!(matches!(e, EngineError::Status { status: 503, .. }), "{e}");
        assert_eq!(script.urls().len(), 4, "the first try and three retries");
    }

    #[test]
    fn a_500_because_a_node_just_left_is_retried_and_other_500s_are_not() {
        let node_left = || {
            Ok(Exchanged {
                status: 500,
                body: crate::engine::FETCH_FROM_A_NODE_GONE.into(),
                retry_after: None,
            })
        };
        let script = Script::new(vec![node_left(), node_left(), status(200)]);
        let c = client(&["http://a"], &script);
        assert!(run(&c, search()).is_ok());
        assert_eq!(*script.slept.borrow(), [750, 1500]);

        let script = Script::new(vec![node_left(), node_left()]);
        let c = client(&["http://a"], &script);
        let write = HttpRequest::post("/_bulk", Body::NdJson("{}\n".into()));
        assert!(run(&c, write).unwrap_err().is_node_gone());
        assert_eq!(script.urls().len(), 1, "a write is never sent twice");

        let script = Script::new(vec![status(500), status(200)]);
        let c = client(&["http://a"], &script);
        let e = run(&c, search()).unwrap_err();
        assert!(matches!(e, EngineError::Status { status: 500, .. }), "{e}");
        assert_eq!(script.urls().len(), 1, "a 500 for any other reason stands");
    }

    #[test]
    fn credentials_go_with_every_request_and_never_show_in_debug() {
        let script = Script::new(vec![status(200), status(200)]);
        let c = client(&["http://a"], &script);
        c.set_credentials(Some(Credentials::Basic {
            user: "auditor".into(),
            password: "s3cret".into(),
        }));
        run(&c, search()).unwrap();
        c.set_credentials(Some(Credentials::ApiKey("id1:key1".into())));
        run(&c, HttpRequest::get("/")).unwrap();
        let asked = script.asked.borrow();
        let auth = |i: usize| {
            asked[i]
                .1
                .iter()
                .find(|(k, _)| *k == "Authorization")
                .map(|(_, v)| v.clone())
        };
        assert_eq!(auth(0).as_deref(), Some("Basic YXVkaXRvcjpzM2NyZXQ="));
        assert_eq!(auth(1).as_deref(), Some("ApiKey aWQxOmtleTE="));
        let shown = format!(
            "{:?} {:?}",
            Credentials::Basic {
                user: "auditor".into(),
                password: "s3cret".into()
            },
            Credentials::ApiKey("k".into())
        );
        assert_eq!(shown, "Basic(auditor, ***) ApiKey(***)");
    }
}
