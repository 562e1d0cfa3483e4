//! The export's requests: sent at once (the fetch starts when the request
//! is made, not when its answer is awaited, so the next page can be asked
//! for while this one becomes CSV), answered as bytes for the core to read
//! in place.
//!
//! Chromium reads a fetch()'s body on the thread that made it. On the
//! page's main thread that reading waits while the app turns the previous
//! page into CSV, so the early request gained little; from a Web Worker
//! (`js/fetch-worker.js`) the next page's bytes arrive meanwhile and come
//! over transferred, not copied. Where no worker starts (a missing file, a
//! CSP without `worker-src 'self'`), the same requests go from the main
//! thread.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Object, Promise, Reflect, Uint8Array};
use saltscope_core::engine::EngineError;
use saltscope_core::export::HttpRequest;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, MessageEvent, RequestInit, Response, Worker};

const WORKER_SCRIPT: &str = "/fetch-worker.js";

type Waiting = Rc<RefCell<HashMap<u32, js_sys::Function>>>;

/// One export's worker; it ends with the export (dropped: terminated,
/// which also stops whatever it was fetching).
pub struct ExportFetcher {
    worker: Worker,
    waiting: Waiting,
    broken: Rc<Cell<bool>>,
    next_id: Cell<u32>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

impl ExportFetcher {
    pub fn new() -> Option<ExportFetcher> {
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
        // The script failed to load or run: every waiting request is sent
        // again from the main thread, and so is every later one.
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
        Some(ExportFetcher {
            worker,
            waiting,
            broken,
            next_id: Cell::new(0),
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    /// Sends `planned` to `url` from the worker.
    pub fn start(&self, url: String, planned: &HttpRequest) -> InFlight {
        if self.broken.get() {
            return InFlight::on_main_thread(&url, planned);
        }
        let id = self.next_id.get();
        self.next_id.set(id.wrapping_add(1));
        let waiting = self.waiting.clone();
        let answer = Promise::new(&mut |resolve, _reject| {
            waiting.borrow_mut().insert(id, resolve);
        });
        let message = Object::new();
        let headers = Object::new();
        let _ = Reflect::set(&headers, &"Accept".into(), &"application/json".into());
        let body = match planned.body.content_type() {
            Some(kind) => {
                let _ = Reflect::set(&headers, &"Content-Type".into(), &kind.into());
                JsValue::from_str(&planned.body.text())
            }
            None => JsValue::NULL,
        };
        for (key, value) in [
            ("id", JsValue::from(id)),
            ("url", JsValue::from_str(&url)),
            ("method", JsValue::from_str(planned.method.as_str())),
            ("headers", headers.into()),
            ("body", body),
        ] {
            let _ = Reflect::set(&message, &key.into(), &value);
        }
        if self.worker.post_message(&message).is_err() {
            self.waiting.borrow_mut().remove(&id);
            return InFlight::on_main_thread(&url, planned);
        }
        InFlight {
            url,
            how: How::Worker {
                answer: JsFuture::from(answer),
                id,
                worker: self.worker.clone(),
                planned: planned.clone(),
            },
        }
    }
}

impl Drop for ExportFetcher {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}

/// A request on its way.
pub struct InFlight {
    url: String,
    how: How,
}

enum How {
    Main {
        response: Result<JsFuture, JsValue>,
        controller: Option<AbortController>,
    },
    Worker {
        answer: JsFuture,
        id: u32,
        worker: Worker,
        /// To send again from the main thread if the worker dies.
        planned: HttpRequest,
    },
}

/// Stops a request from elsewhere (the Cancel button).
#[derive(Clone)]
pub enum Stopper {
    Controller(AbortController),
    Worker(Worker, u32),
}

impl Stopper {
    pub fn stop(&self) {
        match self {
            Stopper::Controller(c) => c.abort(),
            Stopper::Worker(worker, id) => {
                let message = Object::new();
                let _ = Reflect::set(&message, &"abort".into(), &JsValue::from(*id));
                let _ = worker.post_message(&message);
            }
        }
    }
}

impl InFlight {
    pub fn on_main_thread(url: &str, planned: &HttpRequest) -> InFlight {
        let controller = AbortController::new().ok();
        let init = RequestInit::new();
        init.set_method(planned.method.as_str());
        if let Ok(h) = Headers::new() {
            let _ = h.set("Accept", "application/json");
            if let Some(kind) = planned.body.content_type() {
                let _ = h.set("Content-Type", kind);
                init.set_body(&JsValue::from_str(&planned.body.text()));
            }
            init.set_headers(&h);
        }
        if let Some(c) = &controller {
            init.set_signal(Some(&c.signal()));
        }
        let response = web_sys::window()
            .ok_or_else(|| JsValue::from_str("no window"))
            .map(|w| JsFuture::from(w.fetch_with_str_and_init(url, &init)));
        InFlight {
            url: url.to_string(),
            how: How::Main {
                response,
                controller,
            },
        }
    }

    pub fn stopper(&self) -> Option<Stopper> {
        match &self.how {
            How::Main { controller, .. } => controller.clone().map(Stopper::Controller),
            How::Worker { worker, id, .. } => Some(Stopper::Worker(worker.clone(), *id)),
        }
    }

    /// Stops it; its answer is then an error.
    pub fn abort(&self) {
        if let Some(s) = self.stopper() {
            s.stop();
        }
    }

    /// The answer's bytes, or the engine's error (4xx/5xx as for any
    /// search, see `EngineError::from_status`).
    pub async fn answer(self) -> Result<Vec<u8>, EngineError> {
        let url = self.url;
        let failed = |e: JsValue| unreachable(&url, &js_detail(&e));
        match self.how {
            How::Main { response, .. } => {
                let response: Response = response
                    .map_err(failed)?
                    .await
                    .and_then(|r| r.dyn_into())
                    .map_err(failed)?;
                let body = response.array_buffer().map_err(failed)?;
                let body = JsFuture::from(body).await.map_err(failed)?;
                bytes_or_error(&url, response.status(), Uint8Array::new(&body).to_vec())
            }
            How::Worker {
                answer, planned, ..
            } => {
                let data = answer.await.map_err(failed)?;
                if get(&data, "workerFailed").is_truthy() {
                    return Box::pin(InFlight::on_main_thread(&url, &planned).answer()).await;
                }
                if let Some(error) = get(&data, "error").as_string() {
                    return Err(unreachable(&url, &error));
                }
                let status = get(&data, "status").as_f64().unwrap_or(0.0) as u16;
                let bytes = Uint8Array::new(&get(&data, "buffer")).to_vec();
                bytes_or_error(&url, status, bytes)
            }
        }
    }
}

fn bytes_or_error(url: &str, status: u16, bytes: Vec<u8>) -> Result<Vec<u8>, EngineError> {
    if (200..300).contains(&status) {
        Ok(bytes)
    } else {
        Err(EngineError::from_status(
            url,
            status,
            &String::from_utf8_lossy(&bytes),
        ))
    }
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// The engine could not be reached (or would not answer this origin).
pub(crate) fn unreachable(url: &str, detail: &str) -> EngineError {
    EngineError::Unreachable {
        url: url.to_string(),
        detail: format!(
            "{detail} (is the engine running, and does it allow this origin through CORS?)"
        ),
    }
}

fn js_detail(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
