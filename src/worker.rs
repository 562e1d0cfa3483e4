//! The export's requests, sent from a Web Worker (`js/fetch-worker.js`):
//! the way the app's one exchange (`BrowserExchange`) sends them for an
//! export, under the same `Client` as every other request (hosts,
//! deadlines, retries, credentials). Chromium reads a `fetch()` body on
//! the thread that made it: on the page's main thread that reading waits
//! while the app turns the previous page into CSV, so the next page, asked
//! for early, gained little; from the worker its bytes arrive meanwhile and
//! come over transferred, not copied. A page that names the page after it
//! (`NextPage`) has that page sent by the worker as soon as its answer is
//! in, before the app has read it. Where no worker starts (a missing
//! file, a CSP without `worker-src 'self'`), the same requests go from the
//! main thread.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Object, Promise, Reflect, Uint8Array};
use saltscope_core::engine::{ExchangeError, Exchanged, HttpRequest, LAST_SORT};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, Worker};

use crate::transport::{fetch, js_detail, BrowserExchange, BrowserTransport};

const WORKER_SCRIPT: &str = "/fetch-worker.js";

type Waiting = Rc<RefCell<HashMap<u32, js_sys::Function>>>;

struct Shared {
    worker: Worker,
    waiting: Waiting,
    broken: Rc<Cell<bool>>,
    next_id: Cell<u32>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Stops whatever it was still fetching.
        self.worker.terminate();
    }
}

/// One export's worker; it ends with the export.
pub struct ExportWorker {
    shared: Rc<Shared>,
}

/// The app's client, its requests sent from a new worker, or from the main
/// thread where none starts. The same client type as every view's (one
/// copy of its code in the wasm).
pub fn worker_transport(client: &BrowserTransport) -> BrowserTransport {
    let worker = start_worker().map(|shared| ExportWorker {
        shared: Rc::new(shared),
    });
    client.with_exchange(BrowserExchange::through(worker))
}

fn start_worker() -> Option<Shared> {
    let worker = Worker::new(WORKER_SCRIPT).ok()?;
    let waiting: Waiting = Rc::default();
    let broken = Rc::new(Cell::new(false));
    let on_message = {
        let waiting = waiting.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let data = event.data();
            let id = get(&data, "id").as_f64().map(|id| id as u32);
            if let Some(resolve) = id.and_then(|id| waiting.borrow_mut().remove(&id)) {
                let _ = resolve.call1(&JsValue::NULL, &data);
            }
        })
    };
    // The script failed to load or run: every waiting request is sent again
    // from the main thread, and so is every later one.
    let on_error = {
        let (waiting, broken) = (waiting.clone(), broken.clone());
        Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
            event.prevent_default();
            broken.set(true);
            let failed = Object::new();
            let _ = Reflect::set(&failed, &"workerFailed".into(), &JsValue::TRUE);
            for (_, resolve) in waiting.borrow_mut().drain() {
                let _ = resolve.call1(&JsValue::NULL, &failed);
            }
        })
    };
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Some(Shared {
        worker,
        waiting,
        broken,
        next_id: Cell::new(0),
        _on_message: on_message,
        _on_error: on_error,
    })
}

/// Tells the worker to stop a request whose future was dropped.
struct AbortInWorker {
    shared: Rc<Shared>,
    id: u32,
    done: bool,
}

impl Drop for AbortInWorker {
    fn drop(&mut self) {
        if !self.done {
            self.shared.waiting.borrow_mut().remove(&self.id);
            let message = Object::new();
            let _ = Reflect::set(&message, &"abort".into(), &JsValue::from(self.id));
            let _ = self.shared.worker.post_message(&message);
        }
    }
}

impl ExportWorker {
    /// `fetch()` in the worker; from the main thread once the worker broke.
    pub async fn fetch(
        &self,
        url: &str,
        request: &HttpRequest,
        headers: &[(&'static str, String)],
    ) -> Result<Exchanged, ExchangeError> {
        if self.shared.broken.get() {
            return fetch(url, request, headers, None).await;
        }
        let shared = self.shared.clone();
        let id = shared.next_id.get();
        shared.next_id.set(id.wrapping_add(1));
        let answer = {
            let waiting = shared.waiting.clone();
            Promise::new(&mut |resolve, _reject| {
                waiting.borrow_mut().insert(id, resolve);
            })
        };
        let h = Object::new();
        for (name, value) in headers {
            let _ = Reflect::set(&h, &(*name).into(), &value.into());
        }
        let body = match request.body.content_type() {
            Some(kind) => {
                let _ = Reflect::set(&h, &"Content-Type".into(), &kind.into());
                JsValue::from_str(&request.body.text())
            }
            None => JsValue::NULL,
        };
        let message = Object::new();
        for (key, value) in [
            ("id", JsValue::from(id)),
            ("url", JsValue::from_str(url)),
            ("method", JsValue::from_str(request.method.as_str())),
            ("headers", h.into()),
            ("body", body),
            ("next", next_page(url, request)),
        ] {
            let _ = Reflect::set(&message, &key.into(), &value);
        }
        if shared.worker.post_message(&message).is_err() {
            shared.waiting.borrow_mut().remove(&id);
            return fetch(url, request, headers, None).await;
        }
        let mut guard = AbortInWorker {
            shared,
            id,
            done: false,
        };
        let data = JsFuture::from(answer).await;
        guard.done = true;
        let data = data.map_err(|e| ExchangeError::Network(js_detail(&e)))?;
        if get(&data, "workerFailed").is_truthy() {
            return fetch(url, request, headers, None).await;
        }
        if let Some(error) = get(&data, "error").as_string() {
            return Err(ExchangeError::Network(format!(
                "{error} (is the engine running, and does it allow this origin through CORS?)"
            )));
        }
        Ok(Exchanged {
            status: get(&data, "status").as_f64().unwrap_or(0.0) as u16,
            body: Uint8Array::new(&get(&data, "buffer")).to_vec(),
            retry_after: get(&data, "retryAfter").as_string(),
        })
    }
}

/// The page after this one, for the worker to send as soon as this answer
/// is in (`NextPage`): its URL on the same host, its body with the cursor
/// left out, how many hits come before it when this answer gives the
/// total; `undefined` for any other request.
fn next_page(url: &str, request: &HttpRequest) -> JsValue {
    let (Some(next), Some(host)) = (&request.next_page, url.strip_suffix(&request.path)) else {
        return JsValue::UNDEFINED;
    };
    let message = Object::new();
    for (key, value) in [
        ("url", format!("{host}{}", next.path)),
        ("body", next.body.clone()),
        ("cursor", LAST_SORT.to_string()),
    ] {
        let _ = Reflect::set(&message, &key.into(), &JsValue::from_str(&value));
    }
    if let Some(from) = next.from {
        let _ = Reflect::set(&message, &"from".into(), &JsValue::from_f64(from as f64));
    }
    message.into()
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap_or(JsValue::UNDEFINED)
}
